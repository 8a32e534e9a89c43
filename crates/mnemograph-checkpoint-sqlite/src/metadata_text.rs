//! Metadata as the bytes LangGraph's SQLite saver stores: `json.dumps(metadata,
//! ensure_ascii=False)` in UTF-8, and back.

use mnemograph_checkpoint::__private::python_json;
use mnemograph_checkpoint::checkpoint::serde::parse_json;
use mnemograph_checkpoint::checkpoint::CheckpointMetadata;

use crate::error::{Error, Result};

/// The metadata column of a checkpoint: keys in LangGraph's order, items separated by `", "` and
/// `": "`, non-ASCII text written as it is, floats as Python's `repr` prints them.
pub(crate) fn encode(metadata: &CheckpointMetadata) -> Result<Vec<u8>> {
    let text = python_json::dumps(&metadata.to_json(), false).map_err(|e| {
        Error::Codec(mnemograph_checkpoint::checkpoint::serde::SerdeError::Encode(e.to_string()))
    })?;
    Ok(text.into_bytes())
}

/// Reads the metadata column (JSON text in UTF-8, whichever side wrote it).
pub(crate) fn decode(bytes: &[u8]) -> std::result::Result<CheckpointMetadata, String> {
    let json = parse_json(bytes).map_err(|e| e.to_string())?;
    CheckpointMetadata::from_json(&json).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use mnemograph_checkpoint::checkpoint::CheckpointSource;
    use serde_json::json;

    use super::*;

    #[test]
    fn layout_matches_python_json_dumps_without_ascii_escapes() {
        let mut metadata = CheckpointMetadata::new(CheckpointSource::Loop, 0);
        metadata.extra.insert("user".into(), json!("张三 \"q\"\n\u{7f}"));
        metadata.extra.insert("score".into(), json!(1e-5));
        // `json.dumps({..}, ensure_ascii=False)` in CPython 3.11; user keys first, then LangGraph's.
        let expected = "{\"score\": 1e-05, \"user\": \"张三 \\\"q\\\"\\n\u{7f}\", \"source\": \"loop\", \
                        \"step\": 0, \"parents\": {}}";
        assert_eq!(String::from_utf8(encode(&metadata).unwrap()).unwrap(), expected);
        assert_eq!(decode(expected.as_bytes()).unwrap(), metadata);
    }
}
