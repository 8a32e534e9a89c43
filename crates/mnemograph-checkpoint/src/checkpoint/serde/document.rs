//! The checkpoint document LangGraph's SQL savers store in their `checkpoint` JSON column, and
//! the split of channel values into inline primitives and blobs.

use std::collections::BTreeMap;
use std::sync::Arc;

use rmpv::Value as Mp;
use serde_json::{Map, Value as Json};

use super::{convert, msgpack, text, JsonObject, SerdeError};
use crate::checkpoint::{ChannelVersions, Checkpoint};
use crate::value::ChannelValue;

/// A channel value that goes to the blob table: `(channel, version, value)`.
pub type Blob = (Arc<str>, Arc<str>, ChannelValue);

/// Splits a checkpoint the way LangGraph's SQL savers (MySQL, Postgres) do: the JSON document
/// for the `checkpoint` column, with primitive channel values inline, and the other values to
/// store as blobs keyed by `(channel, version)`.
///
/// The document is `{"v", "ts", "id", "channel_values", "channel_versions", "versions_seen",
/// "updated_channels"}`, a [`JsonObject`] whose keys serialize in that order (Python's) whatever
/// serde_json's features; the objects inside are keyed by channel or node, sorted. A value is inline when Python would inline it
/// (`None`, `str`, `int`, `float`, `bool`): [`ChannelValue::Null`], a JSON scalar, a live value
/// whose serde form is a scalar, or stored bytes that decode to one. Non-finite floats have no
/// JSON form and become blobs.
///
/// Savers store blobs only for channels in `new_versions`; like Python they should also write an
/// `("empty", NULL)` blob row for a channel in `new_versions` that has no value.
///
/// # Errors
/// [`SerdeError::Document`] when a channel has a value but no version;
/// [`SerdeError::Msgpack`] / [`SerdeError::Json`] when stored bytes are malformed.
pub fn checkpoint_to_json(cp: &Checkpoint) -> Result<(JsonObject, Vec<Blob>), SerdeError> {
    let mut inline = Map::new();
    let mut blobs = Vec::new();
    for (channel, value) in &cp.channel_values {
        match inline_value(value)? {
            Some(json) => {
                inline.insert(channel.to_string(), json);
            }
            None => {
                let version = cp.channel_versions.get(channel).ok_or_else(|| {
                    SerdeError::Document(format!("channel `{channel}` has a value but no version"))
                })?;
                blobs.push((Arc::clone(channel), Arc::clone(version), value.clone()));
            }
        }
    }
    let versions = |v: &ChannelVersions| -> Json {
        Json::Object(v.iter().map(|(k, v)| (k.to_string(), Json::from(&**v))).collect())
    };
    let mut doc = JsonObject::new();
    doc.insert("v", cp.v.into());
    doc.insert("ts", cp.ts.as_str().into());
    doc.insert("id", cp.id.as_str().into());
    doc.insert("channel_values", Json::Object(inline));
    doc.insert("channel_versions", versions(&cp.channel_versions));
    let seen = cp.versions_seen.iter().map(|(node, v)| (node.to_string(), versions(v))).collect();
    doc.insert("versions_seen", Json::Object(seen));
    let updated = cp.updated_channels.as_ref().map(|u| u.iter().map(|c| Json::from(&**c)).collect());
    doc.insert("updated_channels", updated.map_or(Json::Null, Json::Array));
    Ok((doc, blobs))
}

/// The JSON to inline for a value, or `None` when it belongs in a blob.
fn inline_value(value: &ChannelValue) -> Result<Option<Json>, SerdeError> {
    Ok(match value {
        ChannelValue::Null => Some(Json::Null),
        ChannelValue::Json(json) => is_scalar(json).then(|| (**json).clone()),
        ChannelValue::Live(live) => live.to_json_scalar(),
        ChannelValue::Encoded(e) => match &*e.kind {
            "null" => Some(Json::Null),
            "msgpack" => msgpack_scalar(&msgpack::read(&e.bytes)?),
            "json" => {
                let json = text::parse(&e.bytes)?;
                is_scalar(&json).then_some(json)
            }
            _ => None,
        },
        ChannelValue::Overwrite(_) => None,
    })
}

/// A decoded msgpack value as JSON when Python would have inlined it.
fn msgpack_scalar(tree: &Mp) -> Option<Json> {
    match tree {
        Mp::Nil | Mp::Boolean(_) | Mp::Integer(_) => Some(convert::to_json(tree)),
        // `to_json` maps non-finite floats to null; those are not inline primitives.
        Mp::F32(_) | Mp::F64(_) => Some(convert::to_json(tree)).filter(|j| !j.is_null()),
        Mp::String(s) => s.as_str().map(Json::from),
        _ => None,
    }
}

fn is_scalar(json: &Json) -> bool {
    !matches!(json, Json::Array(_) | Json::Object(_))
}

/// Rebuilds a checkpoint from its JSON document and the blobs read for it, the way LangGraph's
/// SQL savers do: inline values first, then every blob on top (blobs of type `empty` are
/// skipped). Inline `null` becomes [`ChannelValue::Null`], other inline values
/// [`ChannelValue::Json`].
///
/// Unknown keys are ignored. `channel_values` and `updated_channels` may be absent (or `null`);
/// versions may be strings or integers (older savers).
///
/// # Errors
/// [`SerdeError::Document`] when `v`, `id`, `ts`, `channel_versions` or `versions_seen` is
/// missing or has the wrong shape.
pub fn checkpoint_from_json(
    doc: &Json,
    blobs: Vec<(Arc<str>, ChannelValue)>,
) -> Result<Checkpoint, SerdeError> {
    let doc = doc.as_object().ok_or_else(|| bad("the document is not a JSON object"))?;
    let field =
        |key: &str| doc.get(key).filter(|v| !v.is_null()).ok_or_else(|| bad(&format!("missing `{key}`")));
    let text = |key: &str| {
        field(key)?.as_str().map(str::to_owned).ok_or_else(|| bad(&format!("`{key}` is not a string")))
    };
    let v = field("v")?
        .as_u64()
        .and_then(|v| u32::try_from(v).ok())
        .ok_or_else(|| bad("`v` is not a version number"))?;
    let mut channel_values = BTreeMap::new();
    if let Some(values) = doc.get("channel_values").filter(|v| !v.is_null()) {
        let values = values.as_object().ok_or_else(|| bad("`channel_values` is not an object"))?;
        for (channel, value) in values {
            let value = match value {
                Json::Null => ChannelValue::Null,
                other => ChannelValue::Json(Arc::new(other.clone())),
            };
            channel_values.insert(channel.as_str().into(), value);
        }
    }
    for (channel, value) in blobs {
        if !matches!(&value, ChannelValue::Encoded(e) if &*e.kind == "empty") {
            channel_values.insert(channel, value);
        }
    }
    let versions_seen = field("versions_seen")?
        .as_object()
        .ok_or_else(|| bad("`versions_seen` is not an object"))?
        .iter()
        .map(|(node, seen)| Ok((node.as_str().into(), versions(seen, &format!("versions_seen.{node}"))?)))
        .collect::<Result<_, SerdeError>>()?;
    let updated_channels = match doc.get("updated_channels") {
        None | Some(Json::Null) => None,
        Some(Json::Array(items)) => Some(
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
        channel_versions: versions(field("channel_versions")?, "channel_versions")?,
        versions_seen,
        updated_channels,
    })
}

/// A `{channel: version}` object; integer versions (older savers) are kept as their text.
fn versions(json: &Json, what: &str) -> Result<ChannelVersions, SerdeError> {
    let map = json.as_object().ok_or_else(|| bad(&format!("`{what}` is not an object")))?;
    map.iter()
        .map(|(channel, version)| match version {
            Json::String(s) => Ok((channel.as_str().into(), s.as_str().into())),
            Json::Number(n) => Ok((channel.as_str().into(), n.to_string().into())),
            _ => Err(bad(&format!("`{what}.{channel}` is not a version"))),
        })
        .collect()
}

fn bad(what: &str) -> SerdeError {
    SerdeError::Document(what.to_owned())
}
