//! How [`MilvusStore`](super::MilvusStore) lays items out in Milvus: field names, the namespace
//! and primary-key encoding, and conversions between rows and [`Item`]s.
//!
//! Labels are stored *encoded*: ASCII letters, digits and `-` stay as they are, every other byte of
//! the UTF-8 text becomes `~XX` (two upper-case hex digits). The encoded text therefore never holds
//! `"`, `\`, control characters (which would need escapes inside a Milvus string literal), nor `%`
//! and `_` (wildcards of `like`), nor `.`, which joins labels. So a namespace prefix becomes an exact
//! `like "<prefix>.%"` pattern with nothing to escape, and the encoding is injective: two different
//! namespaces can never share a stored value or a primary key.

use std::sync::atomic::{AtomicI64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use milvus::v2::prelude::ResultRow;
use mnemograph_checkpoint::store::Item;

use mnemograph_memory::Error as MemoryError;

use crate::error::Error;

/// Field names of a store collection.
pub(crate) mod fields {
    /// VARCHAR primary key: `<namespace>/<key>#<part>`, all encoded.
    pub(crate) const ID: &str = "id";
    /// INT64: which embedded field this row carries (0 also carries items with no vector).
    pub(crate) const PART: &str = "part";
    /// VARCHAR encoded namespace, labels joined with `.`.
    pub(crate) const NAMESPACE: &str = "namespace";
    /// VARCHAR key, as given.
    pub(crate) const KEY: &str = "key";
    /// JSON document.
    pub(crate) const VALUE: &str = "value";
    /// INT64 milliseconds since the epoch.
    pub(crate) const CREATED_AT: &str = "created_at";
    /// INT64 milliseconds since the epoch.
    pub(crate) const UPDATED_AT: &str = "updated_at";
    /// INT64 milliseconds since the epoch; `i64::MAX` for items that never expire.
    pub(crate) const EXPIRES_AT: &str = "expires_at";
    /// INT64 time to live in milliseconds, reapplied by refreshing reads; 0 for none.
    pub(crate) const TTL_MS: &str = "ttl_ms";
    /// BOOL: whether `embedding` is a real vector (false: a placeholder, never searched).
    pub(crate) const HAS_VECTOR: &str = "has_vector";
    /// FLOAT_VECTOR.
    pub(crate) const EMBEDDING: &str = "embedding";
}

/// Fields that make up an [`Item`].
pub(crate) const ITEM_FIELDS: [&str; 6] =
    [fields::ID, fields::NAMESPACE, fields::KEY, fields::VALUE, fields::CREATED_AT, fields::UPDATED_AT];

/// Every field of a row, to rewrite it (a refreshing read).
pub(crate) const ALL_FIELDS: [&str; 11] = [
    fields::ID,
    fields::PART,
    fields::NAMESPACE,
    fields::KEY,
    fields::VALUE,
    fields::CREATED_AT,
    fields::UPDATED_AT,
    fields::EXPIRES_AT,
    fields::TTL_MS,
    fields::HAS_VECTOR,
    fields::EMBEDDING,
];

/// Appends the encoding of `label` to `out` (see the module docs).
fn encode_into(label: &str, out: &mut String) {
    for b in label.bytes() {
        if b.is_ascii_alphanumeric() || b == b'-' {
            out.push(char::from(b));
        } else {
            out.push('~');
            out.push_str(&hex::encode_upper([b]));
        }
    }
}

/// One label, encoded.
pub(crate) fn encode_label(label: &str) -> String {
    let mut out = String::with_capacity(label.len());
    encode_into(label, &mut out);
    out
}

/// A namespace, encoded: labels encoded and joined with `.`.
pub(crate) fn encode_namespace(namespace: &[String]) -> String {
    namespace.iter().map(|l| encode_label(l)).collect::<Vec<_>>().join(".")
}

/// The inverse of [`encode_namespace`].
pub(crate) fn decode_namespace(encoded: &str) -> Result<Vec<String>, Error> {
    if encoded.is_empty() {
        return Ok(Vec::new());
    }
    encoded.split('.').map(decode_label).collect()
}

fn decode_label(encoded: &str) -> Result<String, Error> {
    let bad = || {
        Error::from(MemoryError::Response { detail: format!("malformed stored namespace label {encoded:?}") })
    };
    let mut bytes = Vec::with_capacity(encoded.len());
    let mut rest = encoded.as_bytes();
    while let Some((&b, tail)) = rest.split_first() {
        if b == b'~' {
            let mut byte = [0u8];
            hex::decode_to_slice(tail.get(..2).ok_or_else(bad)?, &mut byte).map_err(|_| bad())?;
            bytes.push(byte[0]);
            rest = &tail[2..];
        } else {
            bytes.push(b);
            rest = tail;
        }
    }
    String::from_utf8(bytes).map_err(|_| bad())
}

/// The item id shared by all rows of an item: `<namespace>/<key>`, both encoded. `/` never occurs
/// in an encoded text, so the split is unambiguous.
pub(crate) fn item_id(encoded_namespace: &str, key: &str) -> String {
    let mut out = String::with_capacity(encoded_namespace.len() + key.len() + 1);
    out.push_str(encoded_namespace);
    out.push('/');
    encode_into(key, &mut out);
    out
}

/// The primary key of one row of an item.
pub(crate) fn row_id(item_id: &str, part: usize) -> String {
    format!("{item_id}#{part}")
}

/// The item id of a row's primary key.
pub(crate) fn item_of(row_id: &str) -> &str {
    row_id.rsplit_once('#').map_or(row_id, |(item, _)| item)
}

/// Milliseconds since the epoch (0 before it, saturating far after it).
pub(crate) fn millis(t: SystemTime) -> i64 {
    t.duration_since(UNIX_EPOCH).map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

/// A duration in milliseconds, saturating.
pub(crate) fn duration_millis(d: Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
}

fn time_of(ms: i64) -> SystemTime {
    UNIX_EPOCH + Duration::from_millis(u64::try_from(ms).unwrap_or(0))
}

/// A wall clock in milliseconds whose readings strictly increase, shared by clones of a store.
///
/// "Newest first" ordering needs distinct `updated_at`s, and consecutive writes often land in the
/// same millisecond; bumping a tie by 1 ms keeps the write order (as `InMemoryStore`'s sequence
/// number does) at the price of timestamps up to a few ms ahead under bursts.
#[derive(Debug, Default)]
pub(crate) struct Clock {
    /// The last reading handed out.
    last: AtomicI64,
}

impl Clock {
    /// The next reading: now, or one past the previous reading if that is not earlier.
    pub(crate) fn tick(&self) -> i64 {
        let now = millis(SystemTime::now());
        let prev = self.last.fetch_max(now, Ordering::SeqCst);
        if prev < now {
            return now;
        }
        // Someone already used `now` (or later): take the next free millisecond.
        self.last.fetch_add(1, Ordering::SeqCst) + 1
    }
}

/// The [`Item`] of a query or search row that has [`ITEM_FIELDS`].
pub(crate) fn to_item(row: &ResultRow<'_>) -> Result<Item, Error> {
    Ok(Item {
        namespace: decode_namespace(row.get_str(fields::NAMESPACE)?)?,
        key: row.get_str(fields::KEY)?.to_owned(),
        value: row.get_json(fields::VALUE)?.clone(),
        created_at: time_of(row.get_i64(fields::CREATED_AT)?),
        updated_at: time_of(row.get_i64(fields::UPDATED_AT)?),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_round_trip_and_avoid_special_characters() {
        let labels =
            ["plain", "user-42", "a\"b", "back\\slash", "100%", "a_c", "用户", "🦀", "\n\t", "~7E", "*"];
        for l in labels {
            let e = encode_label(l);
            assert!(e.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'~'), "{e}");
            assert_eq!(decode_label(&e).unwrap(), l);
        }
        let ns: Vec<String> = labels.iter().map(|s| (*s).to_owned()).collect();
        assert_eq!(decode_namespace(&encode_namespace(&ns)).unwrap(), ns);
        assert_eq!(encode_namespace(&["memories".into(), "u1".into()]), "memories.u1");
        assert_eq!(encode_label("a b/é"), "a~20b~2F~C3~A9");
        assert_eq!(decode_label("a~20b~2f~c3~a9").unwrap(), "a b/é");
    }

    #[test]
    fn encoding_is_injective_where_naive_joins_are_not() {
        // A naive `.`/`/` join would map these pairs to the same text.
        assert_ne!(encode_label("~"), encode_label("~7E"));
        assert_ne!(item_id(&encode_namespace(&["a/b".into()]), "c"), item_id("a", "b/c"));
        assert_eq!(item_of(&row_id(&item_id("a", "k#1"), 3)), item_id("a", "k#1"));
    }

    #[test]
    fn malformed_labels_are_errors() {
        for bad in ["~", "~4", "~ZZ", "~FF", "~+1", "~é"] {
            assert!(decode_label(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn clock_strictly_increases() {
        let c = Clock::default();
        let mut prev = c.tick();
        for _ in 0..1000 {
            let t = c.tick();
            assert!(t > prev);
            prev = t;
        }
    }
}
