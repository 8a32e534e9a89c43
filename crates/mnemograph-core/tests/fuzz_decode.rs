//! Fuzzing every public decoding entry point of the checkpoint wire codec with proptest.
//!
//! Inputs are arbitrary bytes and structurally mutated valid encodings: truncations, flipped and
//! inserted bytes, wrong type markers, declared lengths far beyond the input, deep nesting (plain
//! and through ext payloads), unknown ext codes, ext payloads of the wrong shape, invalid UTF-8 in
//! strings, and checkpoint documents whose fields have the wrong JSON type. The entry points are
//! [`loads_typed`], [`ChannelValue::decode`] (into many Rust types), [`ChannelValue::to_json`],
//! [`dumps_typed`] of read-back values, [`checkpoint_from_json`] / [`checkpoint_to_json`],
//! [`CheckpointMetadata::from_json`], and a compiled graph that reads a checkpoint and pending writes with
//! such values (`get_state`, resume). The property: never a panic, always a typed error or a
//! value; a value accepted once can be written back and read again. Valid values round-trip.
//!
//! Case counts and the seed are fixed (see [`CASES`] and [`config`]) so the file runs in seconds
//! and tests the same inputs every time; set `PROPTEST_CASES` and `PROPTEST_RNG_SEED` to
//! explore. Strategies and mutations are in `fuzz_decode/strategies.rs`, the graph-level property
//! in `fuzz_decode/graph.rs`.

#[path = "fuzz_decode/graph.rs"]
mod graph;
#[path = "fuzz_decode/strategies.rs"]
mod strategies;

use std::collections::{BTreeMap, HashMap};

use mnemograph_core::checkpoint::serde::{
    checkpoint_from_json, checkpoint_to_json, dumps_typed, loads_typed, parse_json, SerdeError,
};
use mnemograph_core::checkpoint::{
    ChannelVersions, Checkpoint, CheckpointError, CheckpointMetadata, CheckpointSource,
};
use mnemograph_core::messages::Message;
use mnemograph_core::value::ChannelValue;
use mnemograph_core::Interrupt;
use proptest::prelude::*;
use proptest::test_runner::{RngSeed, TestRunner};
use serde::Serialize;
use serde_json::Value as Json;
use strategies::{
    apply, arb_encoding, arb_json, arb_message, arb_mutation, arb_record, ext_header, Mode, Record,
};

/// Cases per property for the decoding properties.
const CASES: u32 = 768;
/// Cases for arbitrary bytes, the cheapest property.
const BYTES_CASES: u32 = 4096;

/// The serializer type tags a saver may hand to `loads_typed`, plus ones it must refuse.
const KINDS: [&str; 8] = ["msgpack", "json", "bytes", "bytearray", "null", "empty", "pickle", ""];

/// Decodes `value` into every target type and as JSON; each call must return, not panic.
/// Returns how many decodes succeeded (so the work cannot be optimised away).
fn exercise(value: &ChannelValue) -> usize {
    let results = [
        value.decode::<Json>().is_ok(),
        value.decode::<Vec<Message>>().is_ok(),
        value.decode::<Message>().is_ok(),
        value.decode::<String>().is_ok(),
        value.decode::<i64>().is_ok(),
        value.decode::<u64>().is_ok(),
        value.decode::<f64>().is_ok(),
        value.decode::<bool>().is_ok(),
        value.decode::<Vec<u8>>().is_ok(),
        value.decode::<Option<String>>().is_ok(),
        value.decode::<HashMap<String, Json>>().is_ok(),
        value.decode::<Record>().is_ok(),
        value.decode::<Mode>().is_ok(),
        value.decode::<(i32, String)>().is_ok(),
        value.decode::<Vec<Interrupt>>().is_ok(),
        value.decode::<()>().is_ok(),
        value.to_json().is_ok(),
    ];
    results.iter().filter(|ok| **ok).count()
}

/// The whole read path for one stored `(type, bytes)` pair: `loads_typed`, then every decode of
/// the result, then writing it back (what a saver does with values it read) and reading that.
fn check_stored(kind: &str, bytes: &[u8]) -> Result<bool, TestCaseError> {
    let accepted = match loads_typed(kind, bytes) {
        Ok(value) => {
            exercise(&value);
            // Whatever was accepted is written back as valid bytes that read again.
            let (kind2, bytes2) = dumps_typed(&value).map_err(|e| fail(format!("re-encode: {e}")))?;
            let again = loads_typed(&kind2, &bytes2).map_err(|e| fail(format!("re-read: {e}")))?;
            prop_assert_eq!(again.to_json().ok(), value.to_json().ok());
            true
        }
        Err(e) => {
            // The error says what is wrong, in the variant that matches the tag.
            let typed = matches!(
                (kind, &e),
                ("msgpack", SerdeError::Msgpack(_))
                    | ("json", SerdeError::Json(_))
                    | ("", SerdeError::UnknownType(_))
            );
            prop_assert!(typed, "{kind}: unexpected error variant {e:?}");
            prop_assert!(!e.to_string().is_empty());
            // Through the saver trait a decode failure is "corrupt", never a backend failure.
            let converted = matches!(CheckpointError::from(e), CheckpointError::Corrupt(_));
            prop_assert!(converted);
            false
        }
    };
    // Values a saver constructs without validation must not panic either.
    exercise(&ChannelValue::encoded(kind, bytes.to_vec()));
    let _ = dumps_typed(&ChannelValue::Overwrite(Box::new(ChannelValue::encoded(kind, bytes.to_vec()))));
    Ok(accepted)
}

/// Runs `check` on `cases` inputs from `strategy`, counting accepted and rejected inputs; prints
/// the counts and the time, and checks that both outcomes occurred (a generator that only ever
/// produces garbage, or never does, would test half the decoder).
fn run_counting<S: Strategy>(
    name: &str,
    cases: u32,
    strategy: S,
    check: impl Fn(S::Value) -> Result<Vec<bool>, TestCaseError>,
) {
    let started = std::time::Instant::now();
    let counts = std::cell::Cell::new([0_u32; 2]);
    let mut runner = TestRunner::new(config(cases));
    let result = runner.run(&strategy, |input| {
        for accepted in check(input)? {
            let mut c = counts.get();
            c[usize::from(accepted)] += 1;
            counts.set(c);
        }
        Ok(())
    });
    if let Err(e) = result {
        panic!("{name}: {e}");
    }
    let [rejected, accepted] = counts.get();
    eprintln!(
        "{name}: {cases} cases, {accepted} decodes accepted, {rejected} rejected, {:?}",
        started.elapsed()
    );
    assert!(accepted > 0 && rejected > 0, "{name}: only one outcome was exercised");
}

/// `cases` cases (`PROPTEST_CASES` overrides), from a fixed seed unless `PROPTEST_RNG_SEED` sets
/// another, so every run tests the same inputs and a failure is reproducible; no regression files
/// are written into the source tree (a failure prints its minimal input).
pub(crate) fn config(cases: u32) -> ProptestConfig {
    let base = ProptestConfig::default();
    let cases = std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(cases);
    let rng_seed = match base.rng_seed {
        RngSeed::Random => RngSeed::Fixed(0x00f0_22de_c0de),
        chosen @ RngSeed::Fixed(_) => chosen,
    };
    ProptestConfig { cases, rng_seed, failure_persistence: None, ..base }
}

/// Equality, except that floats may differ by two ulps: values that went through JSON text may,
/// because serde_json (built without its `float_roundtrip` feature) does not always read a float
/// back exactly; see `json_text_floats_round_trip_exactly`.
fn json_close(a: &Json, b: &Json) -> bool {
    match (a, b) {
        (Json::Number(x), Json::Number(y)) if x.is_f64() && y.is_f64() => {
            let (x, y) = (x.as_f64().unwrap_or_default(), y.as_f64().unwrap_or_default());
            x.to_bits().abs_diff(y.to_bits()) <= 2
        }
        (Json::Array(x), Json::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| json_close(x, y))
        }
        (Json::Object(x), Json::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| json_close(v, w)))
        }
        _ => a == b,
    }
}

fn fail(msg: String) -> TestCaseError {
    TestCaseError::fail(msg)
}

// ---------------------------------------------------------------------------------------------
// Properties: stored values
// ---------------------------------------------------------------------------------------------

/// Arbitrary bytes under every type tag.
#[test]
fn arbitrary_bytes_never_panic() {
    let input = (prop::sample::select(KINDS.to_vec()), prop::collection::vec(any::<u8>(), 0..256));
    run_counting("arbitrary bytes", BYTES_CASES, input, |(kind, bytes)| {
        Ok(vec![check_stored(kind, &bytes)?])
    });
}

/// Valid encodings with one to three structural mutations, read as msgpack and as json.
#[test]
fn mutated_encodings_never_panic() {
    let input = (arb_encoding(), prop::collection::vec(arb_mutation(), 1..4));
    run_counting("mutated encodings", CASES, input, |(bytes, mutations)| {
        let mutated = mutations.iter().fold(bytes, apply);
        Ok(vec![check_stored("msgpack", &mutated)?, check_stored("json", &mutated)?])
    });
}

proptest! {
    #![proptest_config(config(CASES))]

    /// JSON text that is almost valid: a valid value's text with bytes flipped or cut.
    #[test]
    fn mutated_json_blobs_never_panic(value in arb_json(), mutation in arb_mutation()) {
        let text = serde_json::to_vec(&value).expect("JSON values serialize");
        check_stored("json", &apply(text, &mutation))?;
    }
}

// ---------------------------------------------------------------------------------------------
// Properties: round trips of valid values
// ---------------------------------------------------------------------------------------------

/// Writes `value` as a saver would and reads it back.
fn stored<T: Serialize + Send + Sync + std::fmt::Debug + 'static>(value: T) -> ChannelValue {
    let (kind, bytes) = dumps_typed(&ChannelValue::new(value)).expect("valid values encode");
    loads_typed(&kind, &bytes).expect("what dumps_typed writes, loads_typed reads")
}

proptest! {
    #![proptest_config(config(CASES))]

    #[test]
    fn json_values_round_trip(value in arb_json()) {
        prop_assert_eq!(stored(value.clone()).decode::<Json>().ok(), Some(value.clone()));
        prop_assert_eq!(stored(value.clone()).to_json().ok(), Some(value.clone()));
        // Legacy `json` blobs hold the same value.
        let legacy = ChannelValue::encoded("json", serde_json::to_vec(&value).expect("serializes"));
        let read = legacy.decode::<Json>().map_err(|e| fail(e.to_string()))?;
        prop_assert!(json_close(&read, &value), "{read} != {value}");
    }

    #[test]
    fn messages_round_trip(messages in prop::collection::vec(arb_message(), 0..5)) {
        prop_assert_eq!(stored(messages.clone()).decode::<Vec<Message>>().ok(), Some(messages.clone()));
        // And as a reducer `Overwrite`, the wrapper survives and holds the same messages.
        let over = ChannelValue::Overwrite(Box::new(ChannelValue::new(messages.clone())));
        let (kind, bytes) = dumps_typed(&over).expect("encodes");
        let back = loads_typed(&kind, &bytes).expect("reads");
        prop_assert!(matches!(back, ChannelValue::Overwrite(_)), "{back:?}");
        prop_assert_eq!(back.decode::<Vec<Message>>().ok(), Some(messages));
    }

    #[test]
    fn user_structs_round_trip(record in arb_record()) {
        prop_assert_eq!(stored(record.clone()).decode::<Record>().ok(), Some(record));
    }
}

// ---------------------------------------------------------------------------------------------
// Properties: checkpoint documents and metadata
// ---------------------------------------------------------------------------------------------

/// A checkpoint with inline scalars, blob values and nulls, every valued channel versioned.
fn arb_checkpoint() -> impl Strategy<Value = Checkpoint> {
    let value = prop_oneof![
        Just(ChannelValue::Null),
        arb_json().prop_map(ChannelValue::new),
        prop::collection::vec(arb_message(), 0..3).prop_map(ChannelValue::new),
        any::<String>().prop_map(ChannelValue::new),
    ];
    (
        prop::collection::btree_map("[a-z_:]{1,10}", value, 0..6),
        "[0-9a-f-]{1,36}",
        prop::collection::btree_map(
            "[a-z]{1,6}",
            prop::collection::btree_map("[a-z_]{1,6}", "[0-9.]{1,8}", 0..3),
            0..3,
        ),
        prop::option::of(prop::collection::vec("[a-z]{1,6}", 0..3)),
    )
        .prop_map(|(values, id, seen, updated)| {
            let versions =
                values.keys().map(|k| (k.as_str().into(), format!("{:032}.0", k.len()).into())).collect();
            let shared =
                |m: BTreeMap<String, String>| m.into_iter().map(|(k, v)| (k.into(), v.into())).collect();
            Checkpoint {
                v: 4,
                id,
                ts: "2026-01-01T00:00:00+00:00".to_owned(),
                channel_values: values.into_iter().map(|(k, v)| (k.into(), v)).collect(),
                channel_versions: versions,
                versions_seen: seen.into_iter().map(|(k, v)| (k.into(), shared(v))).collect(),
                updated_channels: updated.map(|u| u.into_iter().map(Into::into).collect()),
            }
        })
}

/// Writes a checkpoint the way the SQL savers do (document + blobs) and reads it back.
fn document_round_trip(cp: &Checkpoint) -> Result<(Json, Checkpoint), SerdeError> {
    let (doc, blobs) = checkpoint_to_json(cp)?;
    let mut stored = Vec::new();
    for (channel, _version, value) in blobs {
        let (kind, bytes) = dumps_typed(&value)?;
        stored.push((channel, loads_typed(&kind, &bytes)?));
    }
    let text = serde_json::to_vec(&doc).map_err(|e| SerdeError::Json(e.to_string()))?;
    // As the savers read it: floats correctly rounded whatever serde_json's features.
    let parsed = parse_json(&text)?;
    Ok((doc.into_value(), checkpoint_from_json(&parsed, stored)?))
}

/// Replaces or removes the value at a random path of a JSON document.
fn corrupt_json(doc: &mut Json, path: &[prop::sample::Index], replacement: Option<Json>) {
    let Some((first, rest)) = path.split_first() else { return };
    match doc {
        Json::Object(map) if !map.is_empty() => {
            let key = map.keys().nth(first.index(map.len())).cloned().unwrap_or_default();
            if rest.is_empty() || !matches!(map.get(&key), Some(Json::Object(_) | Json::Array(_))) {
                match &replacement {
                    Some(r) => map.insert(key, r.clone()),
                    None => map.remove(&key),
                };
            } else if let Some(child) = map.get_mut(&key) {
                corrupt_json(child, rest, replacement);
            }
        }
        Json::Array(items) if !items.is_empty() => {
            let i = first.index(items.len());
            match (&replacement, rest.is_empty()) {
                (Some(r), true) => items[i] = r.clone(),
                (None, true) => drop(items.remove(i)),
                (_, false) => corrupt_json(&mut items[i], rest, replacement),
            }
        }
        other => {
            if let Some(r) = replacement {
                *other = r;
            }
        }
    }
}

proptest! {
    #![proptest_config(config(CASES))]

    #[test]
    fn checkpoint_documents_round_trip(cp in arb_checkpoint()) {
        let (_, back) = document_round_trip(&cp).map_err(|e| fail(e.to_string()))?;
        prop_assert_eq!((&back.id, &back.ts, back.v), (&cp.id, &cp.ts, cp.v));
        prop_assert_eq!(&back.channel_versions, &cp.channel_versions);
        prop_assert_eq!(&back.versions_seen, &cp.versions_seen);
        prop_assert_eq!(&back.updated_channels, &cp.updated_channels);
        prop_assert_eq!(back.channel_values.len(), cp.channel_values.len());
        for (channel, value) in &cp.channel_values {
            // Inline floats went through JSON text; blobs are exact.
            let read = back.channel_values.get(channel).map(ChannelValue::to_json);
            let read = read.ok_or_else(|| fail(format!("{channel} lost")))?.map_err(|e| fail(e.to_string()))?;
            let expected = value.to_json().map_err(|e| fail(e.to_string()))?;
            prop_assert!(json_close(&read, &expected), "{channel}: {read} != {expected}");
        }
    }

    /// Documents with a field removed or replaced by a value of the wrong type, at any depth,
    /// with blobs that may be garbage: a typed error or a checkpoint, never a panic.
    #[test]
    fn corrupted_checkpoint_documents_never_panic(
        cp in arb_checkpoint(),
        path in prop::collection::vec(any::<prop::sample::Index>(), 1..4),
        replacement in prop::option::of(arb_json()),
        garbage in prop::collection::vec(("[a-z_:]{1,10}", prop::sample::select(KINDS.to_vec()),
                                         prop::collection::vec(any::<u8>(), 0..24)), 0..3),
    ) {
        let (doc, _) = checkpoint_to_json(&cp).map_err(|e| fail(e.to_string()))?;
        let mut doc = doc.into_value();
        corrupt_json(&mut doc, &path, replacement);
        let blobs: Vec<(std::sync::Arc<str>, ChannelValue)> =
            garbage.into_iter().map(|(c, k, b)| (c.into(), ChannelValue::encoded(k, b))).collect();
        match checkpoint_from_json(&doc, blobs) {
            Ok(read) => {
                read.channel_values.values().for_each(|v| { exercise(v); });
                // A checkpoint that was read can be written again, or says why not.
                let _ = checkpoint_to_json(&read);
            }
            Err(e) => prop_assert!(matches!(e, SerdeError::Document(_)), "{e:?}"),
        }
    }

    #[test]
    fn metadata_never_panics(meta in arb_json(), step in any::<i64>(),
                             path in prop::collection::vec(any::<prop::sample::Index>(), 1..3),
                             replacement in prop::option::of(arb_json())) {
        // Arbitrary JSON, and valid metadata with one field broken.
        if let Err(e) = CheckpointMetadata::from_json(&meta) {
            prop_assert!(matches!(e, SerdeError::Metadata(_)), "{e:?}");
        }
        let mut valid = CheckpointMetadata::new(CheckpointSource::Loop, step).to_json().into_value();
        valid["writes"] = meta;
        corrupt_json(&mut valid, &path, replacement);
        if let Err(e) = CheckpointMetadata::from_json(&valid) {
            prop_assert!(matches!(e, SerdeError::Metadata(_)), "{e:?}");
        }
    }
}

/// Floats that serde_json's default parser reads back one or two ulps off (found by the properties
/// above). Python's `json` reads them exactly, so a float kept inline in a checkpoint document or
/// in a legacy `json` blob changes on every save/load cycle.
#[test]
fn json_text_floats_round_trip_exactly() {
    for f in [7.312_123_171_735_8e144_f64, -2.375_986_119_610_185_2e300, 9.159_869_570_810_225e198] {
        let legacy = ChannelValue::encoded("json", serde_json::to_vec(&f).expect("serializes"));
        assert_eq!(legacy.decode::<f64>().ok(), Some(f), "legacy json blob");
        let cp = Checkpoint {
            v: 4,
            id: "c".to_owned(),
            ts: "2026-01-01T00:00:00+00:00".to_owned(),
            channel_values: BTreeMap::from([("x".into(), ChannelValue::new(f))]),
            channel_versions: ChannelVersions::from([("x".into(), "1".into())]),
            versions_seen: BTreeMap::new(),
            updated_channels: None,
        };
        let (_, back) = document_round_trip(&cp).expect("round trip");
        assert_eq!(back.channel_values["x"].decode::<f64>().ok(), Some(f), "inline document value");
    }
}

/// The inputs the properties generate at random, pinned: each is a `Msgpack` error, at once.
#[test]
fn hostile_inputs_are_typed_errors() {
    let mut deep_ext = vec![0x01];
    for _ in 0..400 {
        let mut wrapped = ext_header(7, deep_ext.len());
        wrapped.extend_from_slice(&deep_ext);
        deep_ext = wrapped;
    }
    let cases: [(&str, Vec<u8>); 9] = [
        ("empty input", vec![]),
        ("truncated array", vec![0x92, 0x01]),
        ("reserved marker", vec![0xc1]),
        ("4 GiB array declared", vec![0xdd, 0xff, 0xff, 0xff, 0xff]),
        ("4 GiB ext declared", vec![0xc9, 0xff, 0xff, 0xff, 0xff, 0x05]),
        ("invalid UTF-8 string", vec![0xa2, 0xed, 0xa0]),
        ("100k nested arrays", vec![0x91; 100_000]),
        ("400 nested ext 7 payloads", deep_ext),
        ("trailing bytes", vec![0xc0, 0xc0]),
    ];
    for (what, bytes) in cases {
        let started = std::time::Instant::now();
        let err = loads_typed("msgpack", &bytes).expect_err(what);
        assert!(matches!(err, SerdeError::Msgpack(_)), "{what}: {err:?}");
        let err = ChannelValue::encoded("msgpack", bytes).decode::<Json>().expect_err(what);
        assert!(!err.to_string().is_empty());
        assert!(started.elapsed() < std::time::Duration::from_secs(1), "{what} took {:?}", started.elapsed());
    }
}
