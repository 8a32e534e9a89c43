//! Metadata filters: whether a thing's metadata holds every key and value a filter names, by JSON
//! containment — the rule MySQL's `JSON_CONTAINS` and Postgres's `@>` apply, so a filter reads the
//! same in one process and in a cluster's database.

use serde_json::{Map, Value};

/// Whether `metadata` holds every key of `filter` with a value that contains the filter's.
pub(crate) fn holds(metadata: &Map<String, Value>, filter: &Map<String, Value>) -> bool {
    filter.iter().all(|(k, want)| metadata.get(k).is_some_and(|have| contains(have, want)))
}

/// JSON containment: an object contains another when it holds each of its keys with a value
/// that contains the other's; an array contains another when it contains each of its elements
/// (and contains a scalar it has as an element); numbers compare by value; other scalars are
/// equal.
fn contains(have: &Value, want: &Value) -> bool {
    match (have, want) {
        (Value::Object(have), Value::Object(want)) => holds(have, want),
        (Value::Array(have), Value::Array(want)) => want.iter().all(|w| have.iter().any(|h| contains(h, w))),
        (Value::Array(have), want) => have.iter().any(|h| contains(h, want)),
        (Value::Number(a), Value::Number(b)) => {
            a == b || a.as_f64().zip(b.as_f64()).is_some_and(|(a, b)| a == b)
        }
        (have, want) => have == want,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn obj(v: Value) -> Map<String, Value> {
        match v {
            Value::Object(map) => map,
            _ => Map::new(),
        }
    }

    #[test]
    fn scalars_match_by_value_and_containers_by_containment() {
        let m = obj(json!({"owner": "alice", "n": 1, "tags": ["a", "b"], "doc": {"lang": "en", "v": 2}}));
        assert!(holds(&m, &obj(json!({}))));
        assert!(holds(&m, &obj(json!({"owner": "alice", "n": 1.0}))));
        assert!(holds(&m, &obj(json!({"tags": ["b"], "doc": {"lang": "en"}}))));
        assert!(holds(&m, &obj(json!({"tags": "a"}))));
        assert!(!holds(&m, &obj(json!({"owner": "bob"}))));
        assert!(!holds(&m, &obj(json!({"missing": null}))));
        assert!(!holds(&m, &obj(json!({"tags": ["c"]}))));
        assert!(!holds(&m, &obj(json!({"doc": {"lang": "de"}}))));
    }
}
