//! [`ChannelVersions`]: a checkpoint's `channel → version` map, shared rather than copied.

use std::fmt;
use std::ops::Index;
use std::sync::Arc;

/// One `(channel, version)` entry.
type Entry = (Arc<str>, Arc<str>);

/// Channel name → version string, sorted by channel.
///
/// A map with `BTreeMap`'s interface (`get`, `insert`, `remove`, `iter`, `collect`, indexing by
/// `&str`) over one shared, exact-size array. The engine writes a checkpoint after every superstep
/// and most of a checkpoint's maps are the previous one's — in a chain, only the node that just
/// ran has a new `versions_seen` entry — so a clone is one reference-count increment and the
/// unchanged maps of consecutive checkpoints are the same memory. A `BTreeMap` allocated a
/// ~400-byte leaf for every map, one per node per checkpoint.
///
/// Build a map with `collect` or `from`; [`insert`](Self::insert) copies the entries when the
/// array is shared, which costs little at the few dozen channels a graph has. Names and versions
/// are `Arc<str>`s too: look entries up with a `&str` (`versions.get("messages")`), build them with
/// `.into()` from a `&str` or `String`.
///
/// ```
/// use mnemograph_checkpoint::checkpoint::ChannelVersions;
///
/// let mut versions: ChannelVersions = [("b".into(), "2".into()), ("a".into(), "1".into())].into();
/// let copy = versions.clone();
/// versions.insert("c".into(), "1".into());
/// assert_eq!(versions.keys().map(|k| &**k).collect::<Vec<_>>(), ["a", "b", "c"]);
/// assert_eq!(&*versions["b"], "2");
/// assert_eq!(copy.len(), 2, "a clone is not changed by inserts into the original");
/// ```
#[derive(Clone, Default, PartialEq, Eq, Hash)]
pub struct ChannelVersions {
    /// Sorted by channel, each channel once; `None` when empty, so an empty map allocates nothing.
    entries: Option<Arc<[Entry]>>,
}

impl ChannelVersions {
    /// An empty map.
    pub const fn new() -> Self {
        Self { entries: None }
    }

    /// The entries, sorted by channel.
    pub fn as_slice(&self) -> &[(Arc<str>, Arc<str>)] {
        self.entries.as_deref().unwrap_or(&[])
    }

    /// The number of channels.
    pub fn len(&self) -> usize {
        self.as_slice().len()
    }

    /// Whether there are no channels.
    pub fn is_empty(&self) -> bool {
        self.entries.is_none()
    }

    /// Where `channel` is, or would be inserted.
    fn find(&self, channel: &str) -> Result<usize, usize> {
        self.as_slice().binary_search_by(|(c, _)| (**c).cmp(channel))
    }

    /// The version of `channel`.
    pub fn get(&self, channel: &str) -> Option<&Arc<str>> {
        let i = self.find(channel).ok()?;
        Some(&self.as_slice()[i].1)
    }

    /// Whether `channel` has a version.
    pub fn contains_key(&self, channel: &str) -> bool {
        self.find(channel).is_ok()
    }

    /// Sets the version of `channel`, returning the one it replaces.
    pub fn insert(&mut self, channel: Arc<str>, version: Arc<str>) -> Option<Arc<str>> {
        match self.find(&channel) {
            Ok(i) => {
                if let Some(entries) = self.entries.as_mut().and_then(Arc::get_mut) {
                    return Some(std::mem::replace(&mut entries[i].1, version));
                }
                let mut entries = self.as_slice().to_vec();
                let old = std::mem::replace(&mut entries[i].1, version);
                self.entries = Some(entries.into());
                Some(old)
            }
            Err(i) => {
                let mut entries = Vec::with_capacity(self.len() + 1);
                entries.extend_from_slice(&self.as_slice()[..i]);
                entries.push((channel, version));
                entries.extend_from_slice(&self.as_slice()[i..]);
                self.entries = Some(entries.into());
                None
            }
        }
    }

    /// Removes `channel`, returning its version.
    pub fn remove(&mut self, channel: &str) -> Option<Arc<str>> {
        let i = self.find(channel).ok()?;
        let mut entries = self.as_slice().to_vec();
        let (_, old) = entries.remove(i);
        self.entries = (!entries.is_empty()).then(|| entries.into());
        Some(old)
    }

    /// The entries in channel order.
    pub fn iter(&self) -> Iter<'_> {
        Iter(self.as_slice().iter())
    }

    /// The channels, in order.
    pub fn keys(&self) -> impl DoubleEndedIterator<Item = &Arc<str>> + ExactSizeIterator {
        self.as_slice().iter().map(|(c, _)| c)
    }

    /// The versions, in channel order.
    pub fn values(&self) -> impl DoubleEndedIterator<Item = &Arc<str>> + ExactSizeIterator {
        self.as_slice().iter().map(|(_, v)| v)
    }

    /// Whether both are the same shared array (or both empty): then they are equal without a
    /// comparison of their entries.
    pub fn ptr_eq(&self, other: &Self) -> bool {
        match (&self.entries, &other.entries) {
            (Some(a), Some(b)) => Arc::ptr_eq(a, b),
            (None, None) => true,
            _ => false,
        }
    }

    /// A map of entries already sorted by channel with no channel twice, as the engine builds
    /// them; `debug_assert`ed, since a wrong order would make lookups miss.
    ///
    /// An iterator over a slice (`slice.iter().map(..)`) has a known length, so the array is
    /// allocated once, at its size, and written in place.
    pub(crate) fn from_sorted<I>(entries: I) -> Self
    where
        I: IntoIterator<Item = Entry>,
        I::IntoIter: ExactSizeIterator,
    {
        let entries = entries.into_iter();
        if entries.len() == 0 {
            return Self::new();
        }
        let entries: Arc<[Entry]> = entries.collect();
        debug_assert!(entries.windows(2).all(|w| w[0].0 < w[1].0), "entries not sorted: {entries:?}");
        Self { entries: Some(entries) }
    }
}

/// `a.cmp(b)`, answering `Equal` without reading the texts when both are the same `Arc` — as the
/// names and versions the engine hands a saver mostly are (they are shared, not copied).
pub(crate) fn cmp_shared(a: &Arc<str>, b: &Arc<str>) -> std::cmp::Ordering {
    if Arc::ptr_eq(a, b) {
        std::cmp::Ordering::Equal
    } else {
        a.cmp(b)
    }
}

impl fmt::Debug for ChannelVersions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

impl Index<&str> for ChannelVersions {
    type Output = Arc<str>;

    /// The version of `channel`; panics when it has none, as `BTreeMap`'s indexing does.
    fn index(&self, channel: &str) -> &Arc<str> {
        self.get(channel).unwrap_or_else(|| panic!("no version for channel {channel:?}"))
    }
}

impl FromIterator<Entry> for ChannelVersions {
    /// Collects entries in any order; of two entries for one channel the later wins, as with
    /// repeated `insert`s.
    fn from_iter<I: IntoIterator<Item = Entry>>(iter: I) -> Self {
        let mut entries: Vec<Entry> = iter.into_iter().collect();
        if !entries.windows(2).all(|w| w[0].0 < w[1].0) {
            // Stable, so equal channels keep their order and the last one can be kept.
            entries.sort_by(|a, b| a.0.cmp(&b.0));
            let mut kept: Vec<Entry> = Vec::with_capacity(entries.len());
            for entry in entries {
                match kept.last_mut() {
                    Some(last) if last.0 == entry.0 => *last = entry,
                    _ => kept.push(entry),
                }
            }
            entries = kept;
        }
        Self { entries: (!entries.is_empty()).then(|| entries.into()) }
    }
}

impl<const N: usize> From<[Entry; N]> for ChannelVersions {
    fn from(entries: [Entry; N]) -> Self {
        entries.into_iter().collect()
    }
}

impl Extend<Entry> for ChannelVersions {
    fn extend<I: IntoIterator<Item = Entry>>(&mut self, iter: I) {
        let old = self.as_slice().iter().cloned();
        *self = old.chain(iter).collect();
    }
}

impl serde::Serialize for ChannelVersions {
    /// As a map `{channel: version}`, the way a `BTreeMap` serializes.
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_map(self.iter().map(|(c, v)| (&**c, &**v)))
    }
}

impl<'de> serde::Deserialize<'de> for ChannelVersions {
    /// From a map `{channel: version}`.
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let map = std::collections::BTreeMap::<String, String>::deserialize(deserializer)?;
        Ok(map.into_iter().map(|(c, v)| (c.into(), v.into())).collect())
    }
}

/// The entries of a [`ChannelVersions`] by reference, in channel order.
#[derive(Clone, Debug)]
pub struct Iter<'a>(std::slice::Iter<'a, Entry>);

impl<'a> Iterator for Iter<'a> {
    type Item = (&'a Arc<str>, &'a Arc<str>);

    fn next(&mut self) -> Option<Self::Item> {
        self.0.next().map(|(c, v)| (c, v))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.0.size_hint()
    }
}

impl DoubleEndedIterator for Iter<'_> {
    fn next_back(&mut self) -> Option<Self::Item> {
        self.0.next_back().map(|(c, v)| (c, v))
    }
}

impl ExactSizeIterator for Iter<'_> {}

impl<'a> IntoIterator for &'a ChannelVersions {
    type Item = (&'a Arc<str>, &'a Arc<str>);
    type IntoIter = Iter<'a>;

    fn into_iter(self) -> Iter<'a> {
        self.iter()
    }
}

impl IntoIterator for ChannelVersions {
    type Item = Entry;
    type IntoIter = std::vec::IntoIter<Entry>;

    /// The entries by value: `Arc` clones of the names and versions (the array may be shared).
    fn into_iter(self) -> Self::IntoIter {
        self.as_slice().to_vec().into_iter()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(pairs: &[(&str, &str)]) -> ChannelVersions {
        pairs.iter().map(|(c, v)| ((*c).into(), (*v).into())).collect()
    }

    fn pairs(versions: &ChannelVersions) -> Vec<(&str, &str)> {
        versions.iter().map(|(c, v)| (&**c, &**v)).collect()
    }

    #[test]
    fn collect_sorts_and_the_later_of_two_entries_wins() {
        let versions = map(&[("b", "1"), ("a", "1"), ("b", "2"), ("c", "1"), ("a", "3")]);
        assert_eq!(pairs(&versions), [("a", "3"), ("b", "2"), ("c", "1")]);
    }

    #[test]
    fn insert_and_remove_do_not_change_a_clone() {
        let mut versions = map(&[("a", "1"), ("c", "1")]);
        let copy = versions.clone();
        assert!(versions.ptr_eq(&copy));
        assert_eq!(versions.insert("b".into(), "1".into()), None);
        assert_eq!(versions.insert("a".into(), "2".into()).as_deref(), Some("1"));
        assert_eq!(pairs(&versions), [("a", "2"), ("b", "1"), ("c", "1")]);
        assert_eq!(versions.remove("c").as_deref(), Some("1"));
        assert_eq!(versions.remove("missing"), None);
        assert_eq!(pairs(&versions), [("a", "2"), ("b", "1")]);
        assert_eq!(pairs(&copy), [("a", "1"), ("c", "1")]);
    }

    #[test]
    fn an_emptied_map_equals_a_new_one() {
        let mut versions = map(&[("a", "1")]);
        versions.remove("a");
        assert!(versions.is_empty());
        assert_eq!(versions, ChannelVersions::new());
        assert!(versions.ptr_eq(&ChannelVersions::default()));
    }

    #[test]
    fn lookups_find_every_entry_and_nothing_else() {
        let versions = map(&[("x", "3"), ("a", "1"), ("m", "2")]);
        assert_eq!(versions.get("m").map(|v| &**v), Some("2"));
        assert_eq!(&*versions["x"], "3");
        assert!(versions.contains_key("a") && !versions.contains_key("b"));
        assert_eq!(versions.len(), 3);
        let owned: Vec<Entry> = versions.clone().into_iter().collect();
        assert_eq!(owned.len(), 3);
        assert_eq!(format!("{versions:?}"), r#"{"a": "1", "m": "2", "x": "3"}"#);
        let json = serde_json::to_string(&versions).unwrap();
        assert_eq!(json, r#"{"a":"1","m":"2","x":"3"}"#);
        assert_eq!(serde_json::from_str::<ChannelVersions>(&json).unwrap(), versions);
    }

    #[test]
    fn maps_with_equal_entries_are_equal_whoever_built_them() {
        let mut inserted = ChannelVersions::new();
        inserted.insert("b".into(), "2".into());
        inserted.insert("a".into(), "1".into());
        assert_eq!(inserted, map(&[("a", "1"), ("b", "2")]));
        assert_ne!(inserted, map(&[("a", "1"), ("b", "3")]));
        let mut extended = map(&[("a", "0")]);
        extended.extend([("b".into(), "2".into()), ("a".into(), "1".into())]);
        assert_eq!(extended, inserted);
    }
}
