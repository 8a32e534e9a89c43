//! A JSON object whose keys keep the order they were inserted in.
//!
//! `serde_json::Map` sorts its keys unless the application enables serde_json's
//! `preserve_order` feature, and a library cannot know which: the feature is shared by every
//! crate of the program. The documents mnemograph writes for LangGraph (the checkpoint document,
//! the metadata) are built as a [`JsonObject`] instead, so their top-level keys come out in
//! Python's order whatever the features.

use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::Value as Json;

/// A JSON object that serializes its entries in insertion order.
///
/// Values nested inside are ordinary [`serde_json::Value`]s: their objects follow
/// `serde_json::Map`'s order (sorted by key, or insertion order under `preserve_order`).
///
/// ```
/// use mnemograph_checkpoint::checkpoint::serde::JsonObject;
///
/// let mut doc = JsonObject::new();
/// doc.insert("v", 4.into());
/// doc.insert("ts", "2024-01-01".into());
/// doc.insert("id", "x".into());
/// assert_eq!(serde_json::to_string(&doc)?, r#"{"v":4,"ts":"2024-01-01","id":"x"}"#);
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Debug, Clone, Default, PartialEq)]
pub struct JsonObject {
    entries: Vec<(String, Json)>,
}

impl JsonObject {
    /// An empty object.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets `key` to `value`: in place when the key is already present (like a Python dict),
    /// otherwise at the end. Returns the value it replaced.
    pub fn insert(&mut self, key: impl Into<String>, value: Json) -> Option<Json> {
        let key = key.into();
        match self.entries.iter_mut().find(|(k, _)| *k == key) {
            Some((_, slot)) => Some(std::mem::replace(slot, value)),
            None => {
                self.entries.push((key, value));
                None
            }
        }
    }

    /// The value of `key`.
    pub fn get(&self, key: &str) -> Option<&Json> {
        self.entries.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    /// The entries as a `serde_json::Map` (whose order depends on serde_json's features).
    pub fn into_map(self) -> serde_json::Map<String, Json> {
        self.entries.into_iter().collect()
    }

    /// Removes `key`, keeping the order of the other entries, and returns its value.
    pub fn remove(&mut self, key: &str) -> Option<Json> {
        let at = self.entries.iter().position(|(k, _)| k == key)?;
        Some(self.entries.remove(at).1)
    }

    /// The entries in order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Json)> {
        self.entries.iter().map(|(k, v)| (k.as_str(), v))
    }

    /// How many entries there are.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether there are no entries.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The object as a [`serde_json::Value`]; its key order is then `serde_json::Map`'s.
    pub fn into_value(self) -> Json {
        Json::Object(self.entries.into_iter().collect())
    }
}

impl FromIterator<(String, Json)> for JsonObject {
    /// Later duplicates replace earlier values in place, as [`JsonObject::insert`] does.
    fn from_iter<I: IntoIterator<Item = (String, Json)>>(iter: I) -> Self {
        let mut object = Self::new();
        for (k, v) in iter {
            object.insert(k, v);
        }
        object
    }
}

impl From<JsonObject> for Json {
    fn from(object: JsonObject) -> Self {
        object.into_value()
    }
}

impl Serialize for JsonObject {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.entries.len()))?;
        for (k, v) in &self.entries {
            map.serialize_entry(k, v)?;
        }
        map.end()
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn keys_serialize_in_insertion_order_whatever_serde_json_does() {
        let mut object = JsonObject::new();
        for key in ["zeta", "alpha", "mid"] {
            object.insert(key, json!(key.len()));
        }
        assert_eq!(serde_json::to_string(&object).unwrap(), r#"{"zeta":4,"alpha":5,"mid":3}"#);
        // A present key keeps its place; a removed one leaves the others in order.
        assert_eq!(object.insert("alpha", json!(0)), Some(json!(5)));
        assert_eq!(object.remove("zeta"), Some(json!(4)));
        assert_eq!(serde_json::to_string(&object).unwrap(), r#"{"alpha":0,"mid":3}"#);
        assert_eq!((object.get("mid"), object.len()), (Some(&json!(3)), 2));
        assert_eq!(object.into_value(), json!({"alpha": 0, "mid": 3}));
    }
}
