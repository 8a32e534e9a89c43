//! Unit tests of the serializer. Hex fixtures were produced by Python's `JsonPlusSerializer`
//! (langgraph 1.2.24, langgraph-checkpoint 4.3.2, langchain-core 1.8.3).

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::json;

use super::decode::msgpack_to_json;
use super::trees::{fields_tree, send_value, set_value};
use super::*;
use crate::checkpoint::{Checkpoint, CheckpointMetadata, CheckpointSource};
use crate::messages::{Message, MessageType, ToolCall, ToolStatus, UsageMetadata};

/// `HumanMessage("hi", id="h1")`, the 140-byte example of the reference.
const HUMAN_HI: &str =
    "c7890594bd6c616e67636861696e5f636f72652e6d657373616765732e68756d616eac48756d616e4d657373616765\
86a7636f6e74656e74a26869b16164646974696f6e616c5f6b776172677380b1726573706f6e73655f6d65746164617461\
80a474797065a568756d616ea46e616d65c0a26964a26831b36d6f64656c5f76616c69646174655f6a736f6e";
/// `AIMessage("", id="a1", tool_calls=[{"name": "t", "args": {"q": 1}, "id": "c1"}],
/// usage_metadata={"input_tokens": 1, "output_tokens": 2, "total_tokens": 3})`.
const AI_TOOL_CALL: &str =
    "c7ff0594ba6c616e67636861696e5f636f72652e6d657373616765732e6169a941494d65737361676589\
a7636f6e74656e74a0b16164646974696f6e616c5f6b776172677380b1726573706f6e73655f6d6574616461746180a474\
797065a26169a46e616d65c0a26964a26131aa746f6f6c5f63616c6c739184a46e616d65a174a46172677381a17101a269\
64a26331a474797065a9746f6f6c5f63616c6cb2696e76616c69645f746f6f6c5f63616c6c7390ae75736167655f6d6574\
616461746183ac696e7075745f746f6b656e7301ad6f75747075745f746f6b656e7302ac746f74616c5f746f6b656e7303\
b36d6f64656c5f76616c69646174655f6a736f6e";
/// `ToolMessage("r", tool_call_id="c1", id="t1", status="error")`.
const TOOL_ERROR: &str =
    "c7ac0594bc6c616e67636861696e5f636f72652e6d657373616765732e746f6f6cab546f6f6c4d6573736167\
6589a7636f6e74656e74a172b16164646974696f6e616c5f6b776172677380b1726573706f6e73655f6d6574616461746180\
a474797065a4746f6f6ca46e616d65c0a26964a27431ac746f6f6c5f63616c6c5f6964a26331a86172746966616374c0a673\
7461747573a56572726f72b36d6f64656c5f76616c69646174655f6a736f6e";
/// `RemoveMessage(id="x")`.
const REMOVE_X: &str =
    "c78c0594d9206c616e67636861696e5f636f72652e6d657373616765732e6d6f646966696572ad52656d6f76\
654d65737361676586a7636f6e74656e74a0b16164646974696f6e616c5f6b776172677380b1726573706f6e73655f6d6574\
616461746180a474797065a672656d6f7665a46e616d65c0a26964a178b36d6f64656c5f76616c69646174655f6a736f6e";
/// `Overwrite([1])`.
const OVERWRITE_1: &str =
    "c7370293af6c616e6767726170682e7479706573a94f766572777269746582a576616c75659101a474797065\
ad5f5f6f76657277726974655f5f";
/// `{"count": 3, "name": "x", "nested": {"a": [1, 2.5, None, True]}}`.
const PLAIN_DICT: &str = "83a5636f756e7403a46e616d65a178a66e657374656481a1619401cb4004000000000000c0c3";
/// `[AIMessageChunk(content="x", id="k1")]`.
const CHUNK_LIST: &str =
    "91c7e20594ba6c616e67636861696e5f636f72652e6d657373616765732e6169ae41494d6573736167654368\
756e6b8ba7636f6e74656e74a178b16164646974696f6e616c5f6b776172677380b1726573706f6e73655f6d65746164617461\
80a474797065ae41494d6573736167654368756e6ba46e616d65c0a26964a26b31aa746f6f6c5f63616c6c7390b2696e7661\
6c69645f746f6f6c5f63616c6c7390ae75736167655f6d65746164617461c0b0746f6f6c5f63616c6c5f6368756e6b7390ae\
6368756e6b5f706f736974696f6ec0b36d6f64656c5f76616c69646174655f6a736f6e";
/// `Send("n", {"a": 1})`.
const SEND: &str = "c71d0193af6c616e6767726170682e7479706573a453656e6492a16e81a16101";
/// `Interrupt(value="q", id="i1")`.
const INTERRUPT: &str =
    "c73b0293af6c616e6767726170682e7479706573a9496e7465727275707483a576616c7565a171a26964a26931\
af726573706f6e73655f736368656d61c0";
/// `UUID(int=5)`.
const UUID_5: &str =
    "c72d0093a475756964a455554944d9203030303030303030303030303030303030303030303030303030303030303035";
/// `datetime(2024, 1, 2, 3, 4, 5, tzinfo=timezone.utc)`.
const DATETIME: &str =
    "c73b0394a86461746574696d65a86461746574696d65b9323032342d30312d30325430333a30343a30352b30303a\
3030ad66726f6d69736f666f726d6174";
/// `{1}` (a set): a 16-byte payload, so `ormsgpack` writes `fixext16`.
const SET_1: &str = "d80093a86275696c74696e73a37365749101";

fn unhex(hex: &str) -> Vec<u8> {
    (0..hex.len()).step_by(2).map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap()).collect()
}

fn msgpack_of(value: &ChannelValue) -> Vec<u8> {
    let (kind, bytes) = dumps_typed(value).unwrap();
    assert_eq!(kind, "msgpack");
    bytes
}

fn loads(hex: &str) -> ChannelValue {
    loads_typed("msgpack", &unhex(hex)).unwrap()
}

fn python_messages() -> [(Message, &'static str); 4] {
    [
        (Message::human("hi").with_id("h1"), HUMAN_HI),
        (
            Message::ai("")
                .with_id("a1")
                .with_tool_calls(vec![ToolCall::new("t", json!({"q": 1}), "c1")])
                .with_usage(UsageMetadata::new(1, 2)),
            AI_TOOL_CALL,
        ),
        (Message::tool("r", "c1").with_id("t1").with_status(ToolStatus::Error), TOOL_ERROR),
        (Message::remove("x"), REMOVE_X),
    ]
}

#[test]
fn messages_encode_to_pythons_exact_bytes() {
    assert_eq!(unhex(HUMAN_HI).len(), 140);
    for (message, hex) in python_messages() {
        assert_eq!(msgpack_of(&ChannelValue::new(message.clone())), unhex(hex), "{message:?}");
        let list = msgpack_of(&ChannelValue::new(vec![message]));
        assert_eq!(list[0], 0x91);
        assert_eq!(list[1..], unhex(hex)[..]);
    }
}

#[test]
fn python_messages_decode_to_equal_messages() {
    for (message, hex) in python_messages() {
        assert_eq!(loads(hex).decode::<Message>().unwrap(), message);
    }
    let list = format!("94{HUMAN_HI}{AI_TOOL_CALL}{TOOL_ERROR}{REMOVE_X}");
    let decoded: Vec<Message> = loads(&list).decode().unwrap();
    assert_eq!(decoded, python_messages().map(|(m, _)| m));
}

#[test]
fn chunk_classes_decode_as_their_message_kind() {
    let decoded: Vec<Message> = loads(CHUNK_LIST).decode().unwrap();
    assert_eq!(decoded[0].kind(), MessageType::Ai);
    assert_eq!(decoded[0].id(), Some("k1"));
    // Chunk-only fields are kept, not dropped.
    assert!(decoded[0].extra().contains_key("tool_call_chunks"));
}

#[test]
fn plain_values_match_python_bytes() {
    let json = json!({"count": 3, "name": "x", "nested": {"a": [1, 2.5, null, true]}});
    assert_eq!(msgpack_of(&ChannelValue::Json(Arc::new(json.clone()))), unhex(PLAIN_DICT));

    #[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
    struct Nested {
        a: Vec<serde_json::Value>,
    }
    #[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
    struct Plain {
        count: i64,
        name: String,
        nested: Nested,
    }
    let plain = Plain {
        count: 3,
        name: "x".into(),
        nested: Nested { a: vec![json!(1), json!(2.5), json!(null), json!(true)] },
    };
    assert_eq!(msgpack_of(&ChannelValue::new(plain.clone())), unhex(PLAIN_DICT));
    assert_eq!(loads(PLAIN_DICT).decode::<Plain>().unwrap(), plain);
    assert_eq!(loads(PLAIN_DICT).to_json().unwrap(), json);
}

#[test]
fn overwrite_matches_python_and_round_trips() {
    let value = ChannelValue::Overwrite(Box::new(ChannelValue::new(vec![1_i64])));
    assert_eq!(msgpack_of(&value), unhex(OVERWRITE_1));
    let ChannelValue::Overwrite(inner) = loads(OVERWRITE_1) else { panic!("not an overwrite") };
    assert_eq!(inner.decode::<Vec<i64>>().unwrap(), vec![1]);
    assert_eq!(
        ChannelValue::Overwrite(inner).to_json().unwrap(),
        json!({"value": [1], "type": "__overwrite__"})
    );
}

#[test]
fn null_values_and_encoded_pass_through() {
    for value in
        [ChannelValue::Null, ChannelValue::new(None::<i64>), ChannelValue::Json(Arc::new(json!(null)))]
    {
        assert_eq!(dumps_typed(&value).unwrap(), ("null".to_owned(), Vec::new()));
    }
    let stored = ChannelValue::encoded("bytes", vec![1, 2, 3]);
    assert_eq!(dumps_typed(&stored).unwrap(), ("bytes".to_owned(), vec![1, 2, 3]));
    assert!(loads_typed("null", b"").unwrap().is_null());
    assert!(loads_typed("empty", b"").unwrap().is_null());
    let bytes = loads_typed("bytes", &[1, 2, 3]).unwrap();
    assert_eq!(bytes.decode::<Vec<u8>>().unwrap(), vec![1, 2, 3]);
    assert_eq!(bytes.to_json().unwrap(), json!([1, 2, 3]));
}

#[test]
fn python_ext_values_decode_to_their_payload() {
    let send = loads(SEND).to_json().unwrap();
    assert_eq!(send, json!({"node": "n", "arg": {"a": 1}}));
    let interrupt = loads(INTERRUPT).to_json().unwrap();
    assert_eq!(interrupt, json!({"value": "q", "id": "i1", "response_schema": null}));
    assert_eq!(loads(UUID_5).decode::<String>().unwrap(), "00000000000000000000000000000005");
    assert_eq!(loads(DATETIME).decode::<String>().unwrap(), "2024-01-02T03:04:05+00:00");
    assert_eq!(loads(SET_1).decode::<Vec<i64>>().unwrap(), vec![1]);
    // Delta snapshot (ext 7) of `[1, 2]`, and an unknown code that keeps its bytes.
    assert_eq!(loads("c70307920102").decode::<Vec<i64>>().unwrap(), vec![1, 2]);
    assert_eq!(loads("92d4097f01").to_json().unwrap(), json!([{"__ext__": 9, "data": [127]}, 1]));
}

#[test]
fn unknown_kinds_and_malformed_bytes_are_typed_errors() {
    // A Python serializer's own type is kept as written, and refused only when decoded.
    let pickle = loads_typed("pickle", b"x").unwrap();
    assert_eq!(dumps_typed(&pickle).unwrap(), ("pickle".to_owned(), b"x".to_vec()));
    assert_eq!(pickle.decode::<u64>().unwrap_err(), crate::value::ValueError::UnknownType("pickle".into()));
    assert_eq!(loads_typed("", b"x").unwrap_err(), SerdeError::UnknownType(String::new()));
    for bad in [&[][..], &[0x92, 0x01], &[0xc1], &[0x01, 0x02]] {
        assert!(matches!(loads_typed("msgpack", bad), Err(SerdeError::Msgpack(_))), "{bad:?}");
    }
    // A message ext whose payload is cut short: the outer value parses, the payload does not.
    let mut broken = unhex(HUMAN_HI);
    broken[1] = 0x10;
    broken.truncate(19);
    assert!(matches!(loads_typed("msgpack", &broken), Err(SerdeError::Msgpack(_))));
    assert!(matches!(loads_typed("json", b"{"), Err(SerdeError::Json(_))));
    let err = ChannelValue::encoded("msgpack", broken).decode::<Vec<Message>>().unwrap_err();
    assert!(err.to_string().contains("malformed msgpack"), "{err}");
}

#[test]
fn legacy_json_with_lc_envelopes_decodes() {
    let doc = json!([
        {"lc": 1, "type": "constructor", "id": ["langchain", "schema", "messages", "HumanMessage"],
         "kwargs": {"content": "hi", "id": "h1"}},
        {"lc": 1, "type": "constructor", "id": ["langchain_core", "messages", "ai", "AIMessage"],
         "kwargs": {"content": "yo", "tool_calls": [{"name": "t", "args": {}, "id": "c1"}]}},
    ]);
    let value = loads_typed("json", doc.to_string().as_bytes()).unwrap();
    let decoded: Vec<Message> = value.decode().unwrap();
    assert_eq!(decoded[0], Message::human("hi").with_id("h1"));
    assert_eq!(decoded[1].tool_calls()[0].id.as_deref(), Some("c1"));
    assert_eq!(value.to_json().unwrap()[0]["type"], json!("human"));
}

#[test]
fn messages_are_found_anywhere_and_maps_are_never_guessed() {
    #[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
    struct State {
        history: Vec<Message>,
        by_name: BTreeMap<String, Message>,
        last: Option<Message>,
        lookalike: serde_json::Value,
    }
    let state = State {
        history: vec![Message::human("你好").with_id("1"), Message::ai("嗨").with_id("2")],
        by_name: BTreeMap::from([("s".to_owned(), Message::system("sys").with_id("3"))]),
        last: Some(Message::tool("ok", "c").with_id("4")),
        lookalike: json!({"content": "x", "type": "human"}),
    };
    let bytes = msgpack_of(&ChannelValue::new(state.clone()));
    let tree = msgpack::read(&bytes).unwrap();
    let rmpv::Value::Map(fields) = &tree else { panic!("not a map") };
    assert!(matches!(&fields[0].1, rmpv::Value::Array(items) if matches!(items[0], rmpv::Value::Ext(5, _))));
    assert!(matches!(&fields[3].1, rmpv::Value::Map(_)), "a message-shaped map stays a map");
    let back: State = loads_typed("msgpack", &bytes).unwrap().decode().unwrap();
    assert_eq!(back, state);
}

#[test]
fn message_serde_forms_per_format() {
    let msg = Message::human("hi").with_id("h1");
    // JSON keeps the plain LangChain map.
    assert_eq!(serde_json::to_value(&msg).unwrap()["type"], json!("human"));
    // rmp-serde alone round-trips through ext 5.
    let bytes = rmp_serde::to_vec_named(&msg).unwrap();
    assert_eq!(bytes, unhex(HUMAN_HI));
    assert_eq!(rmp_serde::from_slice::<Message>(&bytes).unwrap(), msg);
    assert_eq!(
        rmp_serde::from_slice::<Message>(&rmp_serde::to_vec_named(&json!("hey")).unwrap()).unwrap(),
        Message::human("hey")
    );
}

#[test]
fn rust_only_forms_round_trip() {
    #[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
    enum Mode {
        Fast,
        Slow { by: u32 },
    }
    #[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
    struct S {
        mode: Mode,
        other: Mode,
        ratio: f32,
        by_id: HashMap<i64, String>,
        nan: f64,
    }
    let s = S {
        mode: Mode::Fast,
        other: Mode::Slow { by: 2 },
        ratio: 0.5,
        by_id: HashMap::from([(7, "x".into())]),
        nan: f64::NAN,
    };
    let bytes = msgpack_of(&ChannelValue::new(s.clone()));
    assert!(!bytes.contains(&0xca), "f32 is written as float64");
    let back: S = loads_typed("msgpack", &bytes).unwrap().decode().unwrap();
    assert_eq!((back.mode, back.other, back.ratio, back.by_id), (s.mode, s.other, s.ratio, s.by_id));
    assert!(back.nan.is_nan());
}

fn sample_checkpoint() -> Checkpoint {
    let versions = |pairs: &[(&str, &str)]| pairs.iter().map(|(k, v)| ((*k).into(), (*v).into())).collect();
    Checkpoint {
        v: 4,
        id: "1f1ec79d-c684-6681-8000-584e5eeaf542".into(),
        ts: "2026-11-30T04:52:35.819352+00:00".into(),
        channel_values: BTreeMap::from([
            ("count".into(), ChannelValue::new(0_i64)),
            ("branch:to:bot".into(), ChannelValue::Null),
            ("messages".into(), ChannelValue::new(vec![Message::human("hi").with_id("h1")])),
            ("join:a+b:c".into(), ChannelValue::Json(Arc::new(json!(["a"])))),
            ("name".into(), ChannelValue::Json(Arc::new(json!("x")))),
        ]),
        channel_versions: versions(&[
            ("count", "02.1"),
            ("branch:to:bot", "02.1"),
            ("messages", "02.1"),
            ("join:a+b:c", "01.5"),
            ("name", "01.5"),
        ]),
        versions_seen: BTreeMap::from([
            ("__input__".into(), versions(&[])),
            ("bot".into(), versions(&[("branch:to:bot", "01.3")])),
        ]),
        updated_channels: Some(vec!["branch:to:bot".into(), "count".into(), "messages".into()]),
    }
}

#[test]
fn checkpoint_document_inlines_primitives_like_python() {
    let cp = sample_checkpoint();
    let (doc, blobs) = checkpoint_to_json(&cp).unwrap();
    let keys: Vec<&str> = doc.iter().map(|(k, _)| k).collect();
    assert_eq!(
        keys,
        ["v", "ts", "id", "channel_values", "channel_versions", "versions_seen", "updated_channels"]
    );
    // Python's key order in the text too, whatever serde_json's features.
    assert!(serde_json::to_string(&doc).unwrap().starts_with(r#"{"v":4,"ts":"#));
    assert_eq!(doc.get("channel_values"), Some(&json!({"branch:to:bot": null, "count": 0, "name": "x"})));
    assert_eq!(doc.get("versions_seen"), Some(&json!({"__input__": {}, "bot": {"branch:to:bot": "01.3"}})));
    let blob_keys: Vec<(&str, &str)> = blobs.iter().map(|(c, v, _)| (&**c, &**v)).collect();
    assert_eq!(blob_keys, [("join:a+b:c", "01.5"), ("messages", "02.1")]);

    let stored: Vec<(Arc<str>, ChannelValue)> = blobs
        .iter()
        .map(|(c, _, v)| {
            let (kind, bytes) = dumps_typed(v).unwrap();
            (c.clone(), loads_typed(&kind, &bytes).unwrap())
        })
        .chain([("gone".into(), ChannelValue::encoded("empty", Vec::new()))])
        .collect();
    let back = checkpoint_from_json(&doc.into_value(), stored).unwrap();
    assert_eq!((back.v, &back.id, &back.ts), (4, &cp.id, &cp.ts));
    assert_eq!(back.channel_versions, cp.channel_versions);
    assert_eq!(back.versions_seen, cp.versions_seen);
    assert_eq!(back.updated_channels, cp.updated_channels);
    assert_eq!(back.channel_values.len(), 5, "the `empty` blob is skipped");
    assert!(matches!(back.channel_values["branch:to:bot"], ChannelValue::Null));
    assert_eq!(back.channel_values["count"].decode::<i64>().unwrap(), 0);
    assert_eq!(back.channel_values["messages"].decode::<Vec<Message>>().unwrap()[0].id(), Some("h1"));
    assert_eq!(back.channel_values["join:a+b:c"].decode::<Vec<String>>().unwrap(), ["a"]);
}

#[test]
fn checkpoint_documents_are_read_leniently_but_need_their_keys() {
    let doc = json!({"v": 4, "id": "x", "ts": "t", "channel_versions": {"a": 3}, "versions_seen": {},
                     "pending_sends": [], "future_key": 1});
    let cp = checkpoint_from_json(&doc, Vec::new()).unwrap();
    assert_eq!(&*cp.channel_versions["a"], "3");
    assert!(cp.channel_values.is_empty() && cp.updated_channels.is_none());
    for key in ["v", "id", "ts", "channel_versions", "versions_seen"] {
        let mut doc = doc.clone();
        doc.as_object_mut().unwrap().remove(key);
        let err = checkpoint_from_json(&doc, Vec::new()).unwrap_err();
        assert!(matches!(&err, SerdeError::Document(m) if m.contains(key)), "{err}");
    }
    assert!(checkpoint_from_json(&json!([]), Vec::new()).is_err());

    let mut cp = sample_checkpoint();
    cp.channel_versions.remove("messages");
    assert!(matches!(checkpoint_to_json(&cp), Err(SerdeError::Document(_))));
}

#[test]
fn encoded_scalars_are_inlined_and_nan_is_not() {
    let mut cp = sample_checkpoint();
    cp.channel_values = BTreeMap::from([
        ("a".into(), ChannelValue::encoded("msgpack", vec![0xa1, b'z'])),
        ("b".into(), ChannelValue::encoded("json", b"2.5".to_vec())),
        ("count".into(), ChannelValue::new(f64::NAN)),
    ]);
    cp.channel_versions.extend([("a".into(), "1".into()), ("b".into(), "1".into())]);
    let (doc, blobs) = checkpoint_to_json(&cp).unwrap();
    assert_eq!(doc.get("channel_values"), Some(&json!({"a": "z", "b": 2.5})));
    assert_eq!(blobs.len(), 1);
}

#[test]
fn metadata_round_trips() {
    let mut md = CheckpointMetadata::new(CheckpointSource::Loop, 2);
    md.extra.insert("run_id".into(), json!("r1"));
    let json = md.to_json();
    assert_eq!(json.get("source"), Some(&json!("loop")));
    assert_eq!(CheckpointMetadata::from_json(&json.into_value()).unwrap(), md);
    assert!(matches!(CheckpointMetadata::from_json(&json!({"step": 1})), Err(SerdeError::Metadata(_))));
    assert!(matches!(CheckpointMetadata::from_json(&json!(3)), Err(SerdeError::Metadata(_))));
}

#[test]
fn metadata_keys_come_in_pythons_order() {
    let mut md = CheckpointMetadata::new(CheckpointSource::Input, -1);
    md.extra.insert("run_id".into(), json!("r1"));
    md.parents.insert(String::new(), "p".into());
    let text = serde_json::to_string(&md.to_json()).unwrap();
    assert_eq!(text, r#"{"run_id":"r1","source":"input","step":-1,"parents":{"":"p"}}"#);
}

#[test]
fn inline_floats_survive_the_document_text_bit_for_bit() {
    // Doubles whose shortest text serde_json without `float_roundtrip` reads one bit off.
    let hard: [f64; 3] =
        [3.026_199_944_157_320_3e-52, -1.603_964_615_428_183e143, 1.071_566_039_146_582_6e-75];
    let mut cp = sample_checkpoint();
    cp.channel_values =
        hard.iter().enumerate().map(|(i, f)| (format!("f{i}").into(), ChannelValue::new(*f))).collect();
    cp.channel_versions = (0..hard.len()).map(|i| (format!("f{i}").into(), "1".into())).collect();
    let (doc, blobs) = checkpoint_to_json(&cp).unwrap();
    assert!(blobs.is_empty(), "finite floats are inline");
    let text = serde_json::to_vec(&doc).unwrap();
    let back = checkpoint_from_json(&parse_json(&text).unwrap(), Vec::new()).unwrap();
    for (i, f) in hard.iter().enumerate() {
        let read = back.channel_values[format!("f{i}").as_str()].decode::<f64>().unwrap();
        assert_eq!(read.to_bits(), f.to_bits(), "{f:e} read back as {read:e}");
    }
}

/// `[AIMessage]` as Python writes it, its inner maps in insertion order (not sorted): content
/// blocks `{"type", "text"}`, `response_metadata` `{"model_name", "finish_reason"}` and tool call
/// arguments `{"days", "city"}`.
fn python_ordered_history() -> Vec<u8> {
    use rmpv::Value as Mp;
    let map =
        |entries: Vec<(&str, Mp)>| Mp::Map(entries.into_iter().map(|(k, v)| (Mp::from(k), v)).collect());
    let call = map(vec![
        ("name", Mp::from("weather")),
        ("args", map(vec![("days", Mp::from(3)), ("city", Mp::from("北京"))])),
        ("id", Mp::from("c1")),
        ("type", Mp::from("tool_call")),
    ]);
    let kwargs = map(vec![
        ("content", Mp::Array(vec![map(vec![("type", Mp::from("text")), ("text", Mp::from("查一下"))])])),
        ("additional_kwargs", map(vec![])),
        ("response_metadata", map(vec![("model_name", Mp::from("m")), ("finish_reason", Mp::from("stop"))])),
        ("type", Mp::from("ai")),
        ("name", Mp::Nil),
        ("id", Mp::from("a1")),
        ("tool_calls", Mp::Array(vec![call])),
        ("invalid_tool_calls", Mp::Array(vec![])),
        ("usage_metadata", Mp::Nil),
    ]);
    let payload = Mp::Array(vec![
        Mp::from("langchain_core.messages.ai"),
        Mp::from("AIMessage"),
        kwargs,
        Mp::from(PYDANTIC_V2_METHOD),
    ]);
    let payload = msgpack::write(&payload).unwrap();
    msgpack::write(&Mp::Array(vec![Mp::Ext(EXT_PYDANTIC_V2, payload)])).unwrap()
}

#[test]
fn messages_read_from_python_are_written_back_in_pythons_key_order() {
    let stored = python_ordered_history();
    let history: Vec<Message> = loads_typed("msgpack", &stored).unwrap().decode().unwrap();
    assert_eq!(history[0].tool_calls()[0].args["days"], json!(3));
    assert_eq!(history[0].response_metadata()["finish_reason"], json!("stop"));
    // Unchanged messages, in a list that grew, come back as the bytes Python wrote.
    let mut grown = history.clone();
    grown.push(Message::human("ok").with_id("h2"));
    let (_, bytes) = dumps_typed(&ChannelValue::new(grown.clone())).unwrap();
    let (_, alone) = dumps_typed(&ChannelValue::new(vec![grown[1].clone()])).unwrap();
    assert_eq!(bytes, [&[0x92][..], &stored[1..], &alone[1..]].concat());
    // An edited message is encoded afresh from its fields.
    let edited = vec![history[0].clone().with_id("a2")];
    let (_, bytes) = dumps_typed(&ChannelValue::new(edited.clone())).unwrap();
    assert_ne!(bytes[..], stored[..]);
    let back: Vec<Message> = loads_typed("msgpack", &bytes).unwrap().decode().unwrap();
    assert_eq!(back, edited);
}

#[test]
fn sends_and_sets_match_python_bytes() {
    // `Send("n", {"a": 1})`.
    let arg = fields_tree([("a", ChannelValue::new(1))]).unwrap();
    let send = send_value("n", arg).unwrap();
    assert_eq!(
        msgpack::write(&send).unwrap(),
        unhex("c71d0193af6c616e6767726170682e7479706573a453656e6492a16e81a16101")
    );
    assert_eq!(
        msgpack_to_json(&msgpack::write(&send).unwrap()).unwrap(),
        json!({"node": "n", "arg": {"a": 1}})
    );
    // `{"a", "b"}` (a set's order is its hash order in Python; any order reads back).
    let set = set_value(vec!["a".into(), "b".into()]).unwrap();
    assert_eq!(msgpack::write(&set).unwrap(), unhex("c7130093a86275696c74696e73a373657492a161a162"));
    assert_eq!(msgpack_to_json(&msgpack::write(&set).unwrap()).unwrap(), json!(["a", "b"]));
}
