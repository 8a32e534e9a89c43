//! [`Count`]: a `limit` or `offset` as a client sent it, read leniently so that a bad one is
//! refused with a clear 422 rather than as an unreadable body or query.

use std::fmt;

use serde::de::{self, Deserializer, Visitor};
use serde::Deserialize;

use crate::error::{Result, ServerError};

/// A count a list takes: absent, a non-negative integer (a JSON number, or the text of a query
/// parameter), or anything else, kept as text to say what was refused.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) enum Count {
    #[default]
    Absent,
    Given(usize),
    Invalid(String),
}

impl Count {
    /// The count, `None` when absent; an invalid one is refused with 422 naming `field`.
    pub(crate) fn get(&self, field: &str) -> Result<Option<usize>> {
        match self {
            Self::Absent => Ok(None),
            Self::Given(n) => Ok(Some(*n)),
            Self::Invalid(text) => Err(ServerError::Unprocessable(format!(
                "`{field}` must be a non-negative integer, got {text}"
            ))),
        }
    }
}

struct CountVisitor;

impl<'de> Visitor<'de> for CountVisitor {
    type Value = Count;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a non-negative integer")
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Count, E> {
        Ok(usize::try_from(v).map_or_else(|_| Count::Invalid(v.to_string()), Count::Given))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Count, E> {
        Ok(usize::try_from(v).map_or_else(|_| Count::Invalid(v.to_string()), Count::Given))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Count, E> {
        Ok(Count::Invalid(v.to_string()))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Count, E> {
        Ok(v.trim().parse().map_or_else(|_| Count::Invalid(format!("{v:?}")), Count::Given))
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Count, E> {
        Ok(Count::Invalid(v.to_string()))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Count, E> {
        Ok(Count::Absent)
    }

    fn visit_none<E: de::Error>(self) -> Result<Count, E> {
        Ok(Count::Absent)
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Count, D::Error> {
        d.deserialize_any(CountVisitor)
    }

    fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<Count, A::Error> {
        while seq.next_element::<de::IgnoredAny>()?.is_some() {}
        Ok(Count::Invalid("a list".into()))
    }

    fn visit_map<A: de::MapAccess<'de>>(self, mut map: A) -> Result<Count, A::Error> {
        while map.next_entry::<de::IgnoredAny, de::IgnoredAny>()?.is_some() {}
        Ok(Count::Invalid("an object".into()))
    }
}

impl<'de> Deserialize<'de> for Count {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(CountVisitor)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn counts_read_numbers_and_query_text_and_keep_the_rest_as_invalid() {
        let read = |v: serde_json::Value| serde_json::from_value::<Count>(v).unwrap();
        assert_eq!(read(json!(7)), Count::Given(7));
        assert_eq!(read(json!("12")), Count::Given(12));
        assert_eq!(read(json!(null)), Count::Absent);
        for bad in [json!(-1), json!(1.5), json!("ten"), json!(true), json!([1]), json!({"n": 1})] {
            assert!(matches!(read(bad.clone()), Count::Invalid(_)), "{bad}");
        }
    }

    #[test]
    fn query_strings_read_into_counts() {
        #[derive(Deserialize)]
        struct Q {
            #[serde(default)]
            limit: Count,
        }
        let q: Q = serde_urlencoded_like("limit=-3");
        assert!(matches!(q.limit, Count::Invalid(_)));
        let q: Q = serde_urlencoded_like("limit=25");
        assert_eq!(q.limit, Count::Given(25));
    }

    /// Reads a query string as axum's `Query` does.
    fn serde_urlencoded_like<T: serde::de::DeserializeOwned>(query: &str) -> T {
        let uri: axum::http::Uri = format!("/?{query}").parse().unwrap();
        axum::extract::Query::<T>::try_from_uri(&uri).unwrap().0
    }
}
