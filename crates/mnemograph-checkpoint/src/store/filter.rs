//! LangGraph's store filters: equality and `$eq $ne $gt $gte $lt $lte` on document fields.

use std::cmp::Ordering;

use serde_json::{Map, Value};

use super::StoreError;

const OPERATORS: [&str; 6] = ["$eq", "$ne", "$gt", "$gte", "$lt", "$lte"];

/// Checks that every condition of `filter` uses a known operator, so a typo fails loudly even
/// when nothing is stored yet.
///
/// # Errors
/// [`StoreError::InvalidFilter`] for an unknown `$` operator or a mix of operators and plain keys.
pub fn validate_filter(filter: &Map<String, Value>) -> Result<(), StoreError> {
    for (field, condition) in filter {
        if let Value::Object(ops) = condition {
            if ops.keys().any(|k| k.starts_with('$')) {
                for op in ops.keys() {
                    if !OPERATORS.contains(&op.as_str()) {
                        return Err(invalid(field, format!("unsupported operator `{op}`")));
                    }
                }
            } else {
                validate_filter(ops)?;
            }
        }
    }
    Ok(())
}

/// Whether the document `value` meets every condition of `filter`.
///
/// - `{"field": v}` is equality (numbers compare by value, so `1` equals `1.0`);
/// - `{"field": {"$gte": 3, "$lt": 5}}` applies each operator: `$eq $ne $gt $gte $lt $lte`;
///   ordering compares numbers with numbers and strings with strings, and is false otherwise
///   (including a missing field), while `$ne` is true for a missing field, as in LangGraph;
/// - `{"field": {"sub": v}}` without `$` keys matches nested objects recursively;
/// - `"a.b"` as a field name reads the nested field `b` of `a` when no key `"a.b"` exists.
///
/// # Errors
/// As [`validate_filter`].
///
/// ```
/// use mnemograph_checkpoint::store::matches_filter;
/// use serde_json::json;
///
/// let doc = json!({"kind": "fact", "stars": 4, "meta": {"lang": "zh"}});
/// let f = |v: serde_json::Value| matches_filter(&doc, v.as_object().unwrap()).unwrap();
/// assert!(f(json!({"kind": "fact", "stars": {"$gte": 4}})));
/// assert!(f(json!({"meta.lang": "zh"})));
/// assert!(!f(json!({"stars": {"$ne": 4}})));
/// ```
pub fn matches_filter(value: &Value, filter: &Map<String, Value>) -> Result<bool, StoreError> {
    for (field, condition) in filter {
        let actual = lookup(value, field);
        let ok = match condition {
            Value::Object(ops) if ops.keys().any(|k| k.starts_with('$')) => {
                let mut all = true;
                for (op, operand) in ops {
                    all &= apply(field, op, actual, operand)?;
                }
                all
            }
            Value::Object(nested) => match actual {
                Some(inner @ Value::Object(_)) => matches_filter(inner, nested)?,
                _ => false,
            },
            expected => actual.is_some_and(|a| json_eq(a, expected)),
        };
        if !ok {
            return Ok(false);
        }
    }
    Ok(true)
}

fn invalid(field: &str, reason: String) -> StoreError {
    StoreError::InvalidFilter { field: field.to_owned(), reason }
}

fn apply(field: &str, op: &str, actual: Option<&Value>, operand: &Value) -> Result<bool, StoreError> {
    let ord = || actual.and_then(|a| compare(a, operand));
    Ok(match op {
        "$eq" => actual.is_some_and(|a| json_eq(a, operand)),
        "$ne" => !actual.is_some_and(|a| json_eq(a, operand)),
        "$gt" => ord() == Some(Ordering::Greater),
        "$gte" => matches!(ord(), Some(Ordering::Greater | Ordering::Equal)),
        "$lt" => ord() == Some(Ordering::Less),
        "$lte" => matches!(ord(), Some(Ordering::Less | Ordering::Equal)),
        other => return Err(invalid(field, format!("unsupported operator `{other}`"))),
    })
}

/// The field at `path`: the literal key first, then the dotted path.
fn lookup<'a>(value: &'a Value, path: &str) -> Option<&'a Value> {
    let obj = value.as_object()?;
    if let Some(v) = obj.get(path) {
        return Some(v);
    }
    let mut cur = value;
    for part in path.split('.') {
        cur = cur.as_object()?.get(part)?;
    }
    Some(cur)
}

/// JSON equality where numbers compare by value (serde_json says `1 != 1.0`; Python says equal).
fn json_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        _ => a == b,
    }
}

fn compare(a: &Value, b: &Value) -> Option<Ordering> {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64()?.partial_cmp(&y.as_f64()?),
        (Value::String(x), Value::String(y)) => Some(x.cmp(y)),
        _ => None,
    }
}
