//! Milvus boolean expressions for [`MilvusStore`](super::MilvusStore): namespace scoping, expiry,
//! and the part of a LangGraph filter Milvus can evaluate.
//!
//! Namespaces reach an expression only in their encoded form (see [`codec`](super::codec)), which
//! has no character that needs escaping or that `like` treats as a wildcard. Filter values go
//! through [`quote`], the crate's escaping of string literals.

use serde_json::{Map, Value};

use super::codec::{fields, item_id};
use crate::filter::quote;

/// Clauses joined with `and`.
#[derive(Debug, Default, Clone)]
pub(crate) struct Expr {
    /// Rendered clauses, each safe on its own and parenthesised where it contains `or`.
    clauses: Vec<String>,
}

impl Expr {
    /// Rows that have not expired at `now_ms`.
    pub(crate) fn live(now_ms: i64) -> Self {
        Self { clauses: vec![format!("{} > {now_ms}", fields::EXPIRES_AT)] }
    }

    /// Adds a rendered clause.
    pub(crate) fn and(mut self, clause: String) -> Self {
        self.clauses.push(clause);
        self
    }

    /// The expression to send.
    pub(crate) fn render(&self) -> String {
        self.clauses.join(" and ")
    }
}

/// Rows of namespaces that start with the (encoded) `prefix`, label by label; `None` for the
/// empty prefix, which matches everything.
pub(crate) fn namespace_prefix(encoded_prefix: &str) -> Option<String> {
    if encoded_prefix.is_empty() {
        return None;
    }
    // The exact namespace, or a deeper one: "a.b" must not match "a.bc", hence the `.` before `%`.
    Some(format!(r#"({ns} == "{p}" or {ns} like "{p}.%")"#, ns = fields::NAMESPACE, p = encoded_prefix))
}

/// Every row (part) of one item.
pub(crate) fn item_rows(encoded_namespace: &str, key: &str) -> String {
    // The item id holds no `%` or `_`, so it is matched literally.
    format!(r#"{} like "{}#%""#, fields::ID, item_id(encoded_namespace, key))
}

/// The part of `filter` Milvus can evaluate, as clauses on the JSON `value` field; `None` when
/// nothing can be pushed down.
///
/// The result selects a *superset* of the matching items: a condition is pushed down only when
/// Milvus never rejects a document that `matches_filter` accepts (equality and ordering with a
/// scalar, nested objects), and skipped otherwise (`$ne`, which LangGraph makes true for a missing
/// field; dotted names, which may be a literal key or a path; unusual keys). Callers re-check
/// every row with `matches_filter`, which also removes Milvus's extra matches (it equates `1` with
/// `true`).
pub(crate) fn pushdown(filter: &Map<String, Value>) -> Option<String> {
    let mut clauses = Vec::new();
    conditions(fields::VALUE, filter, &mut clauses);
    (!clauses.is_empty()).then(|| clauses.join(" and "))
}

fn conditions(path: &str, filter: &Map<String, Value>, out: &mut Vec<String>) {
    for (field, condition) in filter {
        let Some(path) = json_path(path, field) else { continue };
        match condition {
            Value::Object(ops) if ops.keys().any(|k| k.starts_with('$')) => {
                for (op, operand) in ops {
                    let sym = match op.as_str() {
                        "$eq" => "==",
                        "$gt" => ">",
                        "$gte" => ">=",
                        "$lt" => "<",
                        "$lte" => "<=",
                        _ => continue,
                    };
                    if let Some(lit) = literal(operand, sym == "==") {
                        out.push(format!("{path} {sym} {lit}"));
                    }
                }
            }
            Value::Object(nested) => conditions(&path, nested, out),
            scalar => {
                if let Some(lit) = literal(scalar, true) {
                    out.push(format!("{path} == {lit}"));
                }
            }
        }
    }
}

/// `path["field"]`, or `None` for a field that is not a plain key.
fn json_path(path: &str, field: &str) -> Option<String> {
    // A dotted name means "the key, else the nested path" to matches_filter: not one Milvus path.
    let plain =
        !field.is_empty() && !field.contains(['.', '"', '\\']) && !field.chars().any(char::is_control);
    plain.then(|| format!(r#"{path}["{field}"]"#))
}

/// A Milvus literal equal to `value`: strings, numbers written without exponent, and booleans
/// when `allow_bool` (ordering on booleans is false in LangGraph, and undefined in Milvus).
fn literal(value: &Value, allow_bool: bool) -> Option<String> {
    match value {
        Value::String(s) => quote(s).ok(),
        Value::Bool(b) if allow_bool => Some(b.to_string()),
        Value::Number(n) => {
            let text = n.to_string();
            // `1e300` and friends: not every Milvus parser reads exponents the same way.
            text.bytes().all(|b| b.is_ascii_digit() || b == b'-' || b == b'.').then_some(text)
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn push(v: &Value) -> Option<String> {
        pushdown(v.as_object().unwrap())
    }

    #[test]
    fn scalar_conditions_are_pushed_down() {
        assert_eq!(push(&json!({"n": 2})).unwrap(), r#"value["n"] == 2"#);
        assert_eq!(
            push(&json!({"n": {"$gte": 1, "$lt": 2.5}, "s": "a\"b"})).unwrap(),
            r#"value["n"] >= 1 and value["n"] < 2.5 and value["s"] == "a\"b""#
        );
        assert_eq!(push(&json!({"m": {"lang": "zh"}})).unwrap(), r#"value["m"]["lang"] == "zh""#);
        assert_eq!(push(&json!({"b": true})).unwrap(), r#"value["b"] == true"#);
    }

    #[test]
    fn unsafe_conditions_stay_client_side() {
        for f in [
            json!({"n": {"$ne": 2}}),
            json!({"a.b": 1}),
            json!({"a\"b": 1}),
            json!({"n": null}),
            json!({"n": [1]}),
            json!({"n": 1e300}),
            json!({"b": {"$gt": true}}),
            json!({"s": "line\nbreak"}),
        ] {
            assert_eq!(push(&f), None, "{f}");
        }
    }

    #[test]
    fn prefixes_match_whole_labels() {
        assert_eq!(namespace_prefix(""), None);
        assert_eq!(namespace_prefix("a.b").unwrap(), r#"(namespace == "a.b" or namespace like "a.b.%")"#);
        assert_eq!(item_rows("a", "k"), r#"id like "a/k#%""#);
    }
}
