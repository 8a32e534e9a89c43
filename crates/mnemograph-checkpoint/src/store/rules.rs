//! The rules every [`Store`](super::Store) backend applies the same way, so that a document
//! stored in one backend is accepted, and embedded, alike in every other: what a `put` may store,
//! and which texts of a document are embedded.

use serde_json::Value;

use super::{validate_namespace, StoreError};

/// Checks a `put` before it touches anything: the namespace is valid (see
/// [`validate_namespace`]) and the value is a JSON object, as LangGraph's `BaseStore` requires.
///
/// # Errors
/// [`StoreError::InvalidNamespace`] or [`StoreError::InvalidValue`] (naming the JSON kind given).
pub fn validate_put(namespace: &[String], value: &Value) -> Result<(), StoreError> {
    validate_namespace(namespace)?;
    if value.is_object() {
        Ok(())
    } else {
        Err(StoreError::InvalidValue { kind: json_kind(value) })
    }
}

/// The texts to embed for `value`: one per field of `fields` that is present and not null, in
/// the order of `fields`. `"$"` is the whole document as JSON text, `"a.b"` a nested field; a
/// string is embedded as it is, any other value as its JSON text (LangGraph's index `fields`).
pub fn texts_to_embed(fields: &[String], value: &Value) -> Vec<String> {
    fields
        .iter()
        .filter_map(|f| {
            let v = if f == "$" { Some(value) } else { f.split('.').try_fold(value, |v, p| v.get(p)) };
            match v? {
                Value::Null => None,
                Value::String(s) => Some(s.clone()),
                other => Some(other.to_string()),
            }
        })
        .collect()
}

/// The name of a JSON value's kind, for [`StoreError::InvalidValue`].
fn json_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn texts_follow_the_index_fields_in_order() {
        let doc = json!({"text": "hi", "n": 2, "gone": null, "a": {"b": "deep"}});
        let fields: Vec<String> = ["n", "missing", "gone", "text", "a.b"].map(String::from).to_vec();
        assert_eq!(texts_to_embed(&fields, &doc), ["2", "hi", "deep"]);
        assert_eq!(texts_to_embed(&["$".to_owned()], &doc), [doc.to_string()]);
    }

    #[test]
    fn a_put_needs_a_valid_namespace_and_an_object() {
        let ns = vec!["users".to_owned()];
        assert!(validate_put(&ns, &json!({"a": 1})).is_ok());
        assert!(matches!(validate_put(&ns, &json!([1])), Err(StoreError::InvalidValue { kind: "array" })));
        assert!(matches!(validate_put(&ns, &json!("x")), Err(StoreError::InvalidValue { kind: "string" })));
        assert!(matches!(validate_put(&[], &json!({})), Err(StoreError::InvalidNamespace { .. })));
    }
}
