//! An [`Item`] from a row of LangGraph's `store` table. Every SQL store reads the same columns
//! (`prefix`, `key`, `value`, `created_at`, `updated_at`) and applies the same rules to them, so
//! that a row one backend refuses is refused alike by every other; only the way a driver
//! returns a timestamp differs, and the caller turns that into a time.

use std::time::SystemTime;

use serde_json::Value;

use super::Item;

/// A `store` row that does not hold an item: its value is not a JSON object, or a timestamp is
/// NULL or unreadable. Each store reports it as its own error, naming the item.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CorruptRow {
    /// The item's namespace, as the `prefix` column holds it (labels joined by `.`).
    pub namespace: String,
    /// The item's key.
    pub key: String,
    /// What does not decode.
    pub reason: String,
}

/// The item of one `store` row: its `prefix` (labels joined by `.`), `key`, `value` (JSON text) and
/// the two timestamps as the driver returns them, which `stamp` reads; `stamp`'s error completes
/// the sentence "`created_at` …", e.g. `is out of range`.
///
/// ```
/// use std::time::{Duration, UNIX_EPOCH};
/// use mnemograph_checkpoint::store::item_from_row;
///
/// let micros = |m: i64| Ok(UNIX_EPOCH + Duration::from_micros(m as u64));
/// let item = item_from_row("memories.u42", "pref".into(), br#"{"a":1}"#, Some(1), Some(2), micros)
///     .unwrap();
/// assert_eq!(item.namespace, ["memories", "u42"]);
/// let bad = item_from_row("m", "k".into(), b"[1]", Some(1), None, micros).unwrap_err();
/// assert_eq!(bad.reason, "value is not a JSON object");
/// ```
///
/// # Errors
/// [`CorruptRow`] when the value is not a JSON object, or a timestamp is NULL or `stamp` refuses it.
pub fn item_from_row<T>(
    prefix: &str,
    key: String,
    value: &[u8],
    created_at: Option<T>,
    updated_at: Option<T>,
    stamp: impl Fn(T) -> Result<SystemTime, String>,
) -> Result<Item, CorruptRow> {
    let corrupt = |reason: String| CorruptRow { namespace: prefix.to_owned(), key: key.clone(), reason };
    let value: Value =
        serde_json::from_slice(value).map_err(|e| corrupt(format!("value is not JSON: {e}")))?;
    if !value.is_object() {
        return Err(corrupt("value is not a JSON object".to_owned()));
    }
    let time = |what: &str, raw: Option<T>| {
        let raw = raw.ok_or_else(|| corrupt(format!("{what} is NULL")))?;
        stamp(raw).map_err(|problem| corrupt(format!("{what} {problem}")))
    };
    Ok(Item {
        created_at: time("created_at", created_at)?,
        updated_at: time("updated_at", updated_at)?,
        namespace: prefix.split('.').map(str::to_owned).collect(),
        value,
        key,
    })
}
