//! Strategies for `fuzz_decode`: valid values of many shapes, their encodings, and structural
//! mutations of those encodings.

use std::collections::BTreeMap;

use mnemograph_core::checkpoint::serde::dumps_typed;
use mnemograph_core::messages::{Message, ToolCall};
use mnemograph_core::value::ChannelValue;
use proptest::prelude::*;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value as Json};

/// A user struct exercising options, enums, maps with integer keys, bytes and nested messages.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Record {
    name: String,
    count: i64,
    ratio: f64,
    tags: Vec<String>,
    scores: BTreeMap<i32, String>,
    mode: Mode,
    history: Option<Vec<Message>>,
    blob: Vec<u8>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) enum Mode {
    Off,
    Level(u8),
    Pair { a: i32, b: String },
}

// ---------------------------------------------------------------------------------------------
// Strategies: valid values
// ---------------------------------------------------------------------------------------------

/// Arbitrary JSON (finite numbers, any Unicode), nested a few levels.
pub(crate) fn arb_json() -> impl Strategy<Value = Json> {
    let leaf = prop_oneof![
        Just(Json::Null),
        any::<bool>().prop_map(Json::from),
        any::<i64>().prop_map(Json::from),
        any::<u64>().prop_map(Json::from),
        any::<f64>().prop_filter("finite", |f| f.is_finite()).prop_map(Json::from),
        any::<String>().prop_map(Json::from),
        "[a-z\"\\\\%_' ]{0,12}".prop_map(Json::from),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Json::Array),
            prop::collection::btree_map(any::<String>(), inner, 0..6)
                .prop_map(|m| Json::Object(m.into_iter().collect())),
        ]
    })
}

/// Arbitrary LangChain messages of every kind the codec writes.
pub(crate) fn arb_message() -> impl Strategy<Value = Message> {
    let text = any::<String>();
    let id = prop::option::of("[a-zA-Z0-9-]{1,12}");
    (0..5_u8, text, id, "[a-z_]{1,8}", prop::collection::vec(("[a-z]{1,6}", arb_json()), 0..3)).prop_map(
        |(kind, text, id, name, calls)| {
            let message = match kind {
                0 => Message::human(text),
                1 => Message::system(text),
                2 => Message::tool(text, name),
                3 => Message::ai(text).with_tool_calls(
                    calls
                        .into_iter()
                        .enumerate()
                        .map(|(i, (n, args))| ToolCall::new(n, json!({ "v": args }), format!("call{i}")))
                        .collect(),
                ),
                _ => Message::ai(text).with_name(name),
            };
            match id {
                Some(id) => message.with_id(id),
                None => message,
            }
        },
    )
}

pub(crate) fn arb_record() -> impl Strategy<Value = Record> {
    let mode = prop_oneof![
        Just(Mode::Off),
        any::<u8>().prop_map(Mode::Level),
        (any::<i32>(), any::<String>()).prop_map(|(a, b)| Mode::Pair { a, b }),
    ];
    (
        any::<String>(),
        any::<i64>(),
        any::<f64>().prop_filter("finite", |f| f.is_finite()),
        prop::collection::vec(any::<String>(), 0..4),
        prop::collection::btree_map(any::<i32>(), any::<String>(), 0..4),
        mode,
        prop::option::of(prop::collection::vec(arb_message(), 0..3)),
        prop::collection::vec(any::<u8>(), 0..40),
    )
        .prop_map(|(name, count, ratio, tags, scores, mode, history, blob)| Record {
            name,
            count,
            ratio,
            tags,
            scores,
            mode,
            history,
            blob,
        })
}

/// Valid encodings of many shapes: what savers actually store.
pub(crate) fn arb_encoding() -> impl Strategy<Value = Vec<u8>> {
    let encode = |v: ChannelValue| dumps_typed(&v).map(|(_, b)| b).unwrap_or_default();
    prop_oneof![
        arb_json().prop_map(move |j| encode(ChannelValue::new(j))),
        prop::collection::vec(arb_message(), 0..4).prop_map(move |m| encode(ChannelValue::new(m))),
        arb_record().prop_map(move |r| encode(ChannelValue::new(r))),
        arb_json().prop_map(move |j| encode(ChannelValue::Overwrite(Box::new(ChannelValue::new(j))))),
    ]
}

// ---------------------------------------------------------------------------------------------
// Strategies: mutations
// ---------------------------------------------------------------------------------------------

/// One structural change to a valid encoding.
#[derive(Debug, Clone)]
pub(crate) enum Mutation {
    Truncate(prop::sample::Index),
    Flip(prop::sample::Index, u8),
    Insert(prop::sample::Index, u8),
    Delete(prop::sample::Index),
    /// Overwrites a byte with a type marker (wrong tag for what follows).
    Marker(prop::sample::Index, u8),
    /// Inserts a header that declares far more items or bytes than the input has.
    HugeLength(prop::sample::Index, usize),
    /// Wraps the value in `n` one-element arrays / one-entry maps / ext 7 payloads.
    Nest(usize, u8),
    /// Inserts an extension value with an arbitrary code and payload.
    Ext(prop::sample::Index, i8, Vec<u8>),
    /// Inserts a string whose bytes are not UTF-8.
    BadUtf8(prop::sample::Index, usize),
    /// Replaces the whole value with a LangGraph ext whose payload has the wrong shape.
    WrongShapeExt(i8, usize, Vec<u8>),
}

const MARKERS: [u8; 24] = [
    0xc0, 0xc1, 0xc2, 0xc4, 0xc5, 0xc6, 0xc7, 0xc8, 0xc9, 0xca, 0xcb, 0xcf, 0xd3, 0xd4, 0xd8, 0xd9, 0xdb,
    0xdc, 0xdd, 0xde, 0xdf, 0x9f, 0x8f, 0xbf,
];

const HUGE: [&[u8]; 9] = [
    &[0xdd, 0xff, 0xff, 0xff, 0xff],
    &[0xdf, 0xff, 0xff, 0xff, 0xff],
    &[0xdb, 0xff, 0xff, 0xff, 0xff],
    &[0xc6, 0xff, 0xff, 0xff, 0xff],
    &[0xc9, 0xff, 0xff, 0xff, 0xff, 0x05],
    &[0xc9, 0x7f, 0xff, 0xff, 0xff, 0x02],
    &[0xdc, 0xff, 0xff],
    &[0xde, 0xff, 0xff],
    &[0xc8, 0xff, 0xff, 0x07],
];

const BAD_UTF8: [&[u8]; 6] =
    [&[0xff], &[0xc0, 0x80], &[0xed, 0xa0, 0x80], &[0xe4, 0xbd], &[0xf8, 0x88, 0x80, 0x80], &[0x80]];

/// Module/class pairs the ext decoder special-cases, and one it does not know.
const CLASSES: [(&str, &str); 5] = [
    ("langchain_core.messages.human", "HumanMessage"),
    ("langchain_core.messages.ai", "AIMessageChunk"),
    ("langgraph.types", "Send"),
    ("langgraph.types", "Overwrite"),
    ("x", "Unknown"),
];

pub(crate) fn arb_mutation() -> impl Strategy<Value = Mutation> {
    let ix = any::<prop::sample::Index>;
    prop_oneof![
        ix().prop_map(Mutation::Truncate),
        (ix(), 1..=255_u8).prop_map(|(i, m)| Mutation::Flip(i, m)),
        (ix(), any::<u8>()).prop_map(|(i, b)| Mutation::Insert(i, b)),
        ix().prop_map(Mutation::Delete),
        (ix(), prop::sample::select(MARKERS.to_vec())).prop_map(|(i, m)| Mutation::Marker(i, m)),
        (ix(), 0..HUGE.len()).prop_map(|(i, h)| Mutation::HugeLength(i, h)),
        (prop_oneof![1..300_usize, 300..20_000_usize], 0..3_u8).prop_map(|(n, k)| Mutation::Nest(n, k)),
        (ix(), any::<i8>(), prop::collection::vec(any::<u8>(), 0..40))
            .prop_map(|(i, c, p)| Mutation::Ext(i, c, p)),
        (ix(), 0..BAD_UTF8.len()).prop_map(|(i, b)| Mutation::BadUtf8(i, b)),
        (0..=8_i8, 0..CLASSES.len(), arb_encoding()).prop_map(|(c, k, p)| Mutation::WrongShapeExt(c, k, p)),
    ]
}

/// A msgpack ext header for a payload of `len` bytes.
pub(crate) fn ext_header(code: i8, len: usize) -> Vec<u8> {
    let mut out = match len {
        0..=255 => vec![0xc7, len as u8],
        256..=65_535 => vec![0xc8, (len >> 8) as u8, len as u8],
        _ => {
            let n = u32::try_from(len).expect("test payloads are small");
            let mut h = vec![0xc9];
            h.extend_from_slice(&n.to_be_bytes());
            h
        }
    };
    out.push(code as u8);
    out
}

/// A short msgpack string (fixstr).
fn fixstr(s: &str) -> Vec<u8> {
    let mut out = vec![0xa0 | s.len() as u8];
    out.extend_from_slice(s.as_bytes());
    out
}

pub(crate) fn apply(mut bytes: Vec<u8>, mutation: &Mutation) -> Vec<u8> {
    let at = |i: &prop::sample::Index, len: usize| i.index(len + 1);
    match mutation {
        Mutation::Truncate(i) => bytes.truncate(at(i, bytes.len())),
        Mutation::Flip(i, mask) if !bytes.is_empty() => {
            let i = i.index(bytes.len());
            bytes[i] ^= mask;
        }
        Mutation::Insert(i, b) => bytes.insert(at(i, bytes.len()), *b),
        Mutation::Delete(i) if !bytes.is_empty() => {
            bytes.remove(i.index(bytes.len()));
        }
        Mutation::Marker(i, m) if !bytes.is_empty() => {
            let i = i.index(bytes.len());
            bytes[i] = *m;
        }
        Mutation::HugeLength(i, h) => {
            let pos = at(i, bytes.len());
            bytes.splice(pos..pos, HUGE[*h].iter().copied());
        }
        Mutation::Nest(n, kind) => {
            let mut out = Vec::with_capacity(bytes.len() + n * 8);
            match kind {
                0 => out.extend(std::iter::repeat_n(0x91, *n)),
                1 => (0..*n).for_each(|_| out.extend_from_slice(&[0x81, 0xc0])),
                _ => {
                    // Ext 7 (delta snapshot) payloads are decoded recursively.
                    let mut inner = bytes;
                    for _ in 0..(*n).min(2_000) {
                        let mut wrapped = ext_header(7, inner.len());
                        wrapped.extend_from_slice(&inner);
                        inner = wrapped;
                    }
                    return inner;
                }
            }
            out.extend_from_slice(&bytes);
            return out;
        }
        Mutation::Ext(i, code, payload) => {
            let pos = at(i, bytes.len());
            let mut ext = ext_header(*code, payload.len());
            ext.extend_from_slice(payload);
            bytes.splice(pos..pos, ext);
        }
        Mutation::BadUtf8(i, b) => {
            let pos = at(i, bytes.len());
            let bad = BAD_UTF8[*b];
            let mut s = vec![0xa0 | (bad.len() as u8 + 1), b'x'];
            s.extend_from_slice(bad);
            bytes.splice(pos..pos, s);
        }
        Mutation::WrongShapeExt(code, class, arg) => {
            // `[module, class, <arbitrary msgpack>]`, the layout of LangGraph's ext 0-5.
            let (module, class) = CLASSES[*class];
            let mut payload = vec![0x93];
            payload.extend(fixstr(module).into_iter().chain(fixstr(class)));
            payload.extend_from_slice(if arg.is_empty() { &[0xc0] } else { arg });
            let mut out = ext_header(*code, payload.len());
            out.extend(payload);
            return out;
        }
        // Byte-level mutations of an empty input leave it empty (still a valid test input).
        _ => {}
    }
    bytes
}
