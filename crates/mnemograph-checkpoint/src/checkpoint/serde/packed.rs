//! The whole checkpoint as one msgpack value, channel values inside: what LangGraph's SQLite
//! saver stores in its `checkpoint` column (`serde.dumps_typed(checkpoint)`), type `msgpack`.

use std::collections::BTreeMap;
use std::sync::Arc;

use rmpv::Value as Mp;
use serde_json::Value as Json;

use super::convert::to_json;
use super::{ext, msgpack, to_tree, SerdeError};
use crate::checkpoint::{ChannelVersions, Checkpoint};
use crate::value::ChannelValue;

/// Levels the document adds above a channel value (the document map, then `channel_values`), so
/// a value as deep as [`loads_typed`](super::loads_typed) accepts on its own is accepted inside.
const DOCUMENT_LEVELS: usize = 2;

/// Encodes a checkpoint as Python's serializer encodes the checkpoint dict: a map with `v`, `ts`,
/// `id`, `channel_values`, `channel_versions`, `versions_seen` and `updated_channels`, in that
/// order, each channel value written as [`dumps_typed`](super::dumps_typed) writes it (a value of
/// [`ChannelValue::Null`] as msgpack `nil`). Maps keyed by channel or node are sorted.
///
/// # Errors
/// As [`dumps_typed`](super::dumps_typed) for a channel value that cannot be encoded.
pub fn checkpoint_to_msgpack(cp: &Checkpoint) -> Result<Vec<u8>, SerdeError> {
    let mut values = Vec::with_capacity(cp.channel_values.len());
    for (channel, value) in &cp.channel_values {
        values.push((Mp::from(&**channel), to_tree(value)?));
    }
    let versions = |v: &ChannelVersions| {
        Mp::Map(v.iter().map(|(channel, version)| (Mp::from(&**channel), Mp::from(&**version))).collect())
    };
    let seen = cp.versions_seen.iter().map(|(node, v)| (Mp::from(&**node), versions(v))).collect();
    let updated = match &cp.updated_channels {
        Some(channels) => Mp::Array(channels.iter().map(|c| Mp::from(&**c)).collect()),
        None => Mp::Nil,
    };
    let doc = Mp::Map(vec![
        (Mp::from("v"), Mp::from(cp.v)),
        (Mp::from("ts"), Mp::from(cp.ts.as_str())),
        (Mp::from("id"), Mp::from(cp.id.as_str())),
        (Mp::from("channel_values"), Mp::Map(values)),
        (Mp::from("channel_versions"), versions(&cp.channel_versions)),
        (Mp::from("versions_seen"), Mp::Map(seen)),
        (Mp::from("updated_channels"), updated),
    ]);
    msgpack::write(&doc)
}

/// Decodes what [`checkpoint_to_msgpack`] (or Python's serializer) wrote. Each channel value is
/// kept as the bytes Python would store for it alone (`nil` becomes [`ChannelValue::Null`], an
/// `Overwrite` a [`ChannelValue::Overwrite`]), so writing the checkpoint back gives the same
/// bytes. Unknown keys are ignored; `channel_values` and `updated_channels` may be absent or
/// `nil`; integer versions (older savers) are kept as their text.
///
/// # Errors
/// [`SerdeError::Msgpack`] for malformed or too deeply nested bytes, [`SerdeError::Document`]
/// when a required key is missing or has the wrong shape.
pub fn checkpoint_from_msgpack(bytes: &[u8]) -> Result<Checkpoint, SerdeError> {
    let depth = msgpack::MAX_DEPTH + DOCUMENT_LEVELS;
    let tree = msgpack::read_with_depth(bytes, depth)?;
    ext::validate(&tree, depth)?;
    let Mp::Map(entries) = tree else { return Err(bad("the document is not a map")) };
    let field = |key: &str| entries.iter().find(|(k, _)| k.as_str() == Some(key)).map(|(_, v)| v);
    let required =
        |key: &str| field(key).filter(|v| !v.is_nil()).ok_or_else(|| bad(&format!("missing `{key}`")));
    let text = |key: &str| {
        required(key)?.as_str().map(str::to_owned).ok_or_else(|| bad(&format!("`{key}` is not a string")))
    };
    let v = required("v")?
        .as_u64()
        .and_then(|v| u32::try_from(v).ok())
        .ok_or_else(|| bad("`v` is not a version number"))?;
    let mut channel_values = BTreeMap::new();
    if let Some(values) = field("channel_values").filter(|v| !v.is_nil()) {
        let Mp::Map(values) = values else { return Err(bad("`channel_values` is not a map")) };
        for (channel, value) in values {
            let channel = channel.as_str().ok_or_else(|| bad("a channel name is not a string"))?;
            channel_values.insert(Arc::from(channel), channel_value(value)?);
        }
    }
    let Mp::Map(seen) = required("versions_seen")? else { return Err(bad("`versions_seen` is not a map")) };
    let versions_seen = seen
        .iter()
        .map(|(node, v)| {
            let node = node.as_str().ok_or_else(|| bad("a node name is not a string"))?;
            Ok((Arc::from(node), versions(v, "versions_seen")?))
        })
        .collect::<Result<_, SerdeError>>()?;
    let updated_channels = match field("updated_channels") {
        None | Some(Mp::Nil) => None,
        Some(Mp::Array(items)) => Some(
            items
                .iter()
                .map(|c| {
                    c.as_str().map(Arc::from).ok_or_else(|| bad("`updated_channels` holds a non-string"))
                })
                .collect::<Result<_, _>>()?,
        ),
        Some(_) => return Err(bad("`updated_channels` is not a list")),
    };
    Ok(Checkpoint {
        v,
        id: text("id")?,
        ts: text("ts")?,
        channel_values,
        channel_versions: versions(required("channel_versions")?, "channel_versions")?,
        versions_seen,
        updated_channels,
    })
}

/// A channel value of a document: its channel, and the value as read.
pub(crate) type PackedValue = (String, Mp);

/// The document [`checkpoint_from_msgpack`] reads, split for a reader that shows what is stored
/// rather than refusing it: everything but `channel_values` as JSON, and each channel value in
/// stored order, as read ([`value_bytes`] gives its bytes). The values are left unchecked, so one
/// that does not decode is still handed over on its own.
///
/// # Errors
/// [`SerdeError::Msgpack`] for malformed or too deeply nested bytes, [`SerdeError::Document`]
/// when the document is not a map or `channel_values` is neither a map nor absent.
pub(crate) fn split_document(bytes: &[u8]) -> Result<(Json, Vec<PackedValue>), SerdeError> {
    let tree = msgpack::read_with_depth(bytes, msgpack::MAX_DEPTH + DOCUMENT_LEVELS)?;
    let Mp::Map(entries) = tree else { return Err(bad("the document is not a map")) };
    let mut values = Vec::new();
    let mut rest = Vec::with_capacity(entries.len());
    for (key, value) in entries {
        if key.as_str() != Some("channel_values") {
            rest.push((key, value));
            continue;
        }
        match value {
            Mp::Nil => {}
            Mp::Map(channels) => {
                for (channel, value) in channels {
                    let name = match channel.as_str() {
                        Some(name) => name.to_owned(),
                        None => to_json(&channel).to_string(),
                    };
                    values.push((name, value));
                }
            }
            _ => return Err(bad("`channel_values` is not a map")),
        }
    }
    Ok((to_json(&Mp::Map(rest)), values))
}

/// A channel value of [`split_document`] as the msgpack bytes Python stores for that value
/// alone; `None` for `nil`.
///
/// # Errors
/// [`SerdeError::Encode`] for a value msgpack cannot hold.
pub(crate) fn value_bytes(value: &Mp) -> Result<Option<Vec<u8>>, SerdeError> {
    if value.is_nil() {
        return Ok(None);
    }
    msgpack::write(value).map(Some)
}

/// One channel value of the document, as `loads_typed` would return its bytes.
fn channel_value(value: &Mp) -> Result<ChannelValue, SerdeError> {
    if value.is_nil() {
        return Ok(ChannelValue::Null);
    }
    if let Some(inner) = ext::as_overwrite(value)? {
        let inner = match inner {
            Mp::Nil => ChannelValue::Null,
            other => ChannelValue::encoded("msgpack", msgpack::write(&other)?),
        };
        return Ok(ChannelValue::Overwrite(Box::new(inner)));
    }
    Ok(ChannelValue::encoded("msgpack", msgpack::write(value)?))
}

/// A `{channel: version}` map.
fn versions(value: &Mp, what: &str) -> Result<ChannelVersions, SerdeError> {
    let Mp::Map(entries) = value else { return Err(bad(&format!("`{what}` is not a map"))) };
    entries
        .iter()
        .map(|(channel, version)| {
            let channel = channel.as_str().ok_or_else(|| bad(&format!("`{what}` has a non-string key")))?;
            let version: Arc<str> = match version {
                Mp::String(s) => s.as_str().ok_or_else(|| bad("a version is not UTF-8"))?.into(),
                Mp::Integer(n) => n.to_string().into(),
                Mp::F64(f) => f.to_string().into(),
                _ => return Err(bad(&format!("`{what}.{channel}` is not a version"))),
            };
            Ok((channel.into(), version))
        })
        .collect()
}

fn bad(what: &str) -> SerdeError {
    SerdeError::Document(what.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::messages::Message;

    fn sample() -> Checkpoint {
        let mut cp = Checkpoint {
            v: 4,
            id: "1f1f1a2d-1ade-63cd-8000-72ae092e9d96".into(),
            ts: "2026-12-06T18:28:23.002589+00:00".into(),
            ..Checkpoint::default()
        };
        let version: Arc<str> = "00000000000000000000000000000002.0.7728806389671482".into();
        for (channel, value) in [
            ("branch:to:node", ChannelValue::Null),
            ("count", ChannelValue::new(0_i64)),
            ("log", ChannelValue::new(vec!["i"])),
            ("messages", ChannelValue::new(vec![Message::human("hi").with_id("h1")])),
        ] {
            cp.channel_values.insert(channel.into(), value);
            cp.channel_versions.insert(channel.into(), Arc::clone(&version));
        }
        cp.versions_seen.insert("__input__".into(), ChannelVersions::default());
        let mut seen = ChannelVersions::default();
        seen.insert("branch:to:node".into(), Arc::clone(&version));
        cp.versions_seen.insert("node".into(), seen);
        cp.updated_channels = Some(vec!["count".into(), "log".into()]);
        cp
    }

    /// [`sample`] as LangGraph 1.2's `JsonPlusSerializer().dumps_typed(checkpoint)` writes it
    /// (the same dict, channels in sorted order, `HumanMessage("hi", id="h1")`).
    const PYTHON_BYTES: &str = concat!(
        "87a17604a27473d920323032362d31322d30365431383a32383a32332e3030323538392b30303a3030a26964d9243166",
        "3166316132642d316164652d363363642d383030302d373261653039326539643936ae6368616e6e656c5f76616c7565",
        "7384ae6272616e63683a746f3a6e6f6465c0a5636f756e7400a36c6f6791a169a86d6573736167657391c7890594bd6c",
        "616e67636861696e5f636f72652e6d657373616765732e68756d616eac48756d616e4d65737361676586a7636f6e7465",
        "6e74a26869b16164646974696f6e616c5f6b776172677380b1726573706f6e73655f6d6574616461746180a474797065",
        "a568756d616ea46e616d65c0a26964a26831b36d6f64656c5f76616c69646174655f6a736f6eb06368616e6e656c5f76",
        "657273696f6e7384ae6272616e63683a746f3a6e6f6465d9333030303030303030303030303030303030303030303030",
        "3030303030303030322e302e37373238383036333839363731343832a5636f756e74d933303030303030303030303030",
        "30303030303030303030303030303030303030322e302e37373238383036333839363731343832a36c6f67d933303030",
        "30303030303030303030303030303030303030303030303030303030322e302e37373238383036333839363731343832",
        "a86d65737361676573d93330303030303030303030303030303030303030303030303030303030303030322e302e3737",
        "3238383036333839363731343832ad76657273696f6e735f7365656e82a95f5f696e7075745f5f80a46e6f646581ae62",
        "72616e63683a746f3a6e6f6465d93330303030303030303030303030303030303030303030303030303030303030322e",
        "302e37373238383036333839363731343832b0757064617465645f6368616e6e656c7392a5636f756e74a36c6f67",
    );

    fn unhex(text: &str) -> Vec<u8> {
        (0..text.len()).step_by(2).map(|i| u8::from_str_radix(&text[i..i + 2], 16).unwrap()).collect()
    }

    #[test]
    fn the_document_is_the_bytes_python_writes() {
        assert_eq!(checkpoint_to_msgpack(&sample()).unwrap(), unhex(PYTHON_BYTES));
        let back = checkpoint_from_msgpack(&unhex(PYTHON_BYTES)).unwrap();
        assert_eq!(checkpoint_to_msgpack(&back).unwrap(), unhex(PYTHON_BYTES), "Python's bytes written back");
    }

    #[test]
    fn a_checkpoint_survives_the_round_trip_byte_for_byte() {
        let cp = sample();
        let bytes = checkpoint_to_msgpack(&cp).unwrap();
        let back = checkpoint_from_msgpack(&bytes).unwrap();
        assert_eq!(back.id, cp.id);
        assert_eq!(back.ts, cp.ts);
        assert_eq!(back.channel_versions, cp.channel_versions);
        assert_eq!(back.updated_channels, cp.updated_channels);
        assert!(matches!(back.channel_values["branch:to:node"], ChannelValue::Null));
        assert_eq!(back.channel_values["log"].decode::<Vec<String>>().unwrap(), ["i"]);
        let messages = back.channel_values["messages"].decode::<Vec<Message>>().unwrap();
        assert_eq!(messages[0].id(), Some("h1"));
        assert_eq!(checkpoint_to_msgpack(&back).unwrap(), bytes, "written back unchanged");
    }

    #[test]
    fn malformed_documents_are_typed_errors() {
        assert!(matches!(checkpoint_from_msgpack(&[0xc1]), Err(SerdeError::Msgpack(_))));
        assert!(matches!(checkpoint_from_msgpack(&[0x90]), Err(SerdeError::Document(_))));
        let no_id = Mp::Map(vec![(Mp::from("v"), Mp::from(4))]);
        let bytes = msgpack::write(&no_id).unwrap();
        assert!(matches!(checkpoint_from_msgpack(&bytes), Err(SerdeError::Document(_))));
        let mut truncated = checkpoint_to_msgpack(&sample()).unwrap();
        truncated.truncate(truncated.len() / 2);
        assert!(matches!(checkpoint_from_msgpack(&truncated), Err(SerdeError::Msgpack(_))));
    }
}
