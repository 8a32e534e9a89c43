//! Checkpoints between Python and Rust.
//!
//! The Python package serializes channel values with its own serializer (`serde.dumps_typed`)
//! and hands over `(type, bytes)` pairs, which the savers store byte for byte; reads hand the
//! pairs back for `serde.loads_typed`. Only Python's inline primitives (`None`, `bool`, `int`,
//! `float`, `str`) cross as values, because the SQL layout stores them inside the checkpoint
//! document. The tuples exchanged here are private to the package; its Python classes turn them
//! into LangGraph's dictionaries.

use std::collections::BTreeMap;
use std::sync::Arc;

use mnemograph_checkpoint::checkpoint::serde::dumps_typed;
use mnemograph_checkpoint::checkpoint::{
    ChannelVersions, Checkpoint, CheckpointConfig, CheckpointMetadata, CheckpointTuple,
};
use mnemograph_checkpoint::value::ChannelValue;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use serde_json::Value as Json;

use crate::error::BindingError;

/// A checkpoint as the Python package hands it over:
/// `(v, id, ts, values, versions, versions_seen, updated_channels)`, where `values` holds
/// `(channel, type, bytes)` for serialized values and `(channel, None, primitive)` for inline
/// ones, and versions are strings.
pub(crate) type CheckpointIn<'py> = (
    u32,
    String,
    String,
    Vec<(String, Option<String>, Bound<'py, PyAny>)>,
    Vec<(String, String)>,
    Vec<(String, Vec<(String, String)>)>,
    Option<Vec<String>>,
);

/// Builds the Rust checkpoint.
pub(crate) fn checkpoint(input: CheckpointIn<'_>) -> Result<Checkpoint, BindingError> {
    let (v, id, ts, values, versions, seen, updated) = input;
    let mut channel_values = BTreeMap::new();
    for (channel, kind, payload) in values {
        let value = channel_value(kind, &payload)
            .map_err(|e| BindingError::Input(format!("channel `{channel}`: {e}")))?;
        channel_values.insert(Arc::from(channel), value);
    }
    Ok(Checkpoint {
        v,
        id,
        ts,
        channel_values,
        channel_versions: versions_map(versions),
        versions_seen: seen.into_iter().map(|(node, v)| (Arc::from(node), versions_map(v))).collect(),
        updated_channels: updated.map(|u| u.into_iter().map(Arc::from).collect()),
    })
}

/// A channel map from `(channel, version)` pairs.
pub(crate) fn versions_map(pairs: Vec<(String, String)>) -> ChannelVersions {
    pairs.into_iter().map(|(c, v)| (Arc::from(c), Arc::from(v))).collect()
}

/// One value: serialized bytes under their type, or an inline primitive.
pub(crate) fn channel_value(
    kind: Option<String>,
    payload: &Bound<'_, PyAny>,
) -> Result<ChannelValue, String> {
    match kind {
        Some(kind) => {
            let bytes = match payload.cast::<PyBytes>() {
                Ok(bytes) => bytes.as_bytes().to_vec(),
                Err(_) if payload.is_none() => Vec::new(),
                Err(_) => return Err(format!("the payload of a `{kind}` value is not bytes")),
            };
            Ok(ChannelValue::encoded(kind, bytes))
        }
        None => primitive(payload).map(|json| match json {
            Json::Null => ChannelValue::Null,
            json => ChannelValue::Json(Arc::new(json)),
        }),
    }
}

/// Python's inline primitives as JSON.
fn primitive(value: &Bound<'_, PyAny>) -> Result<Json, String> {
    if value.is_none() {
        Ok(Json::Null)
    } else if let Ok(b) = value.cast::<PyBool>() {
        Ok(Json::Bool(b.is_true()))
    } else if value.is_instance_of::<PyInt>() {
        if let Ok(i) = value.extract::<i64>() {
            Ok(Json::from(i))
        } else if let Ok(u) = value.extract::<u64>() {
            Ok(Json::from(u))
        } else {
            Err("an integer outside 64 bits cannot be stored inline".to_owned())
        }
    } else if let Ok(f) = value.cast::<PyFloat>() {
        serde_json::Number::from_f64(f.value())
            .map(Json::Number)
            .ok_or_else(|| "a non-finite float cannot be stored inline".to_owned())
    } else if let Ok(s) = value.cast::<PyString>() {
        Ok(Json::String(s.to_str().map_err(|e| e.to_string())?.to_owned()))
    } else {
        let type_name = value.get_type().name().map_or_else(|_| "?".to_owned(), |n| n.to_string());
        Err(format!("a `{type_name}` is not an inline primitive; serialize it first"))
    }
}

/// Parses the metadata JSON the package hands over (`json.dumps` of LangGraph's metadata).
pub(crate) fn metadata(json: &str) -> Result<CheckpointMetadata, BindingError> {
    let value: Json =
        serde_json::from_str(json).map_err(|e| BindingError::Input(format!("metadata: {e}")))?;
    CheckpointMetadata::from_json(&value).map_err(|e| BindingError::Input(format!("metadata: {e}")))
}

/// Parses a metadata filter (a JSON object).
pub(crate) fn filter(json: &str) -> Result<serde_json::Map<String, Json>, BindingError> {
    match serde_json::from_str(json) {
        Ok(Json::Object(map)) => Ok(map),
        Ok(_) => Err(BindingError::Input("filter: not an object".to_owned())),
        Err(e) => Err(BindingError::Input(format!("filter: {e}"))),
    }
}

/// A checkpoint address.
pub(crate) fn config(
    thread_id: String,
    checkpoint_ns: String,
    checkpoint_id: Option<String>,
) -> CheckpointConfig {
    CheckpointConfig { thread_id, checkpoint_ns, checkpoint_id }
}

/// A tuple read from a saver, as the package reads it:
/// `(thread_id, checkpoint_ns, checkpoint_id, parent_id, checkpoint, metadata_json, writes)`, the
/// checkpoint as [`CheckpointIn`] (versions as dicts) and each write `(task_id, channel, type,
/// payload)`.
pub(crate) fn tuple_to_py<'py>(py: Python<'py>, tuple: CheckpointTuple) -> PyResult<Bound<'py, PyTuple>> {
    let CheckpointTuple { config, checkpoint, metadata, parent_config, pending_writes } = tuple;
    let cp = checkpoint_to_py(py, checkpoint)?;
    let metadata = metadata.to_json().into_value().to_string();
    let writes = PyList::empty(py);
    for w in pending_writes {
        let (kind, payload) = value_to_py(py, &w.value)?;
        writes.append((w.task_id, w.channel, kind, payload))?;
    }
    let parent = parent_config.and_then(|p| p.checkpoint_id);
    (config.thread_id, config.checkpoint_ns, config.checkpoint_id, parent, cp, metadata, writes)
        .into_pyobject(py)
}

fn checkpoint_to_py<'py>(py: Python<'py>, cp: Checkpoint) -> PyResult<Bound<'py, PyTuple>> {
    let values = PyList::empty(py);
    for (channel, value) in &cp.channel_values {
        let (kind, payload) = value_to_py(py, value)?;
        values.append((&**channel, kind, payload))?;
    }
    let seen = PyDict::new(py);
    for (node, versions) in &cp.versions_seen {
        seen.set_item(&**node, versions_to_py(py, versions)?)?;
    }
    let updated = cp.updated_channels.map(|u| u.iter().map(|c| c.to_string()).collect::<Vec<_>>());
    (cp.v, cp.id, cp.ts, values, versions_to_py(py, &cp.channel_versions)?, seen, updated).into_pyobject(py)
}

fn versions_to_py<'py>(py: Python<'py>, versions: &ChannelVersions) -> PyResult<Bound<'py, PyDict>> {
    let dict = PyDict::new(py);
    for (channel, version) in versions {
        dict.set_item(&**channel, &**version)?;
    }
    Ok(dict)
}

/// A stored value for Python: `(type, bytes)` to deserialize, or `(None, value)` for an inline
/// primitive.
fn value_to_py<'py>(py: Python<'py>, value: &ChannelValue) -> PyResult<(Option<String>, Bound<'py, PyAny>)> {
    Ok(match value {
        ChannelValue::Null => (None, py.None().into_bound(py)),
        ChannelValue::Json(json) => (None, json_to_py(py, json)?),
        ChannelValue::Encoded(e) => (Some(e.kind.to_string()), PyBytes::new(py, &e.bytes).into_any()),
        other => {
            let (kind, bytes) = dumps_typed(other).map_err(|e| BindingError::Input(e.to_string()))?;
            (Some(kind), PyBytes::new(py, &bytes).into_any())
        }
    })
}

/// JSON as Python objects.
pub(crate) fn json_to_py<'py>(py: Python<'py>, json: &Json) -> PyResult<Bound<'py, PyAny>> {
    Ok(match json {
        Json::Null => py.None().into_bound(py),
        Json::Bool(b) => PyBool::new(py, *b).to_owned().into_any(),
        Json::Number(n) => match (n.as_i64(), n.as_u64()) {
            (Some(i), _) => i.into_pyobject(py)?.into_any(),
            (None, Some(u)) => u.into_pyobject(py)?.into_any(),
            _ => n.as_f64().unwrap_or(f64::NAN).into_pyobject(py)?.into_any(),
        },
        Json::String(s) => PyString::new(py, s).into_any(),
        Json::Array(items) => {
            let list = PyList::empty(py);
            for item in items {
                list.append(json_to_py(py, item)?)?;
            }
            list.into_any()
        }
        Json::Object(map) => {
            let dict = PyDict::new(py);
            for (k, v) in map {
                dict.set_item(k, json_to_py(py, v)?)?;
            }
            dict.into_any()
        }
    })
}
