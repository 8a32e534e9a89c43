//! [`Sorted`]: the small ordered map every level of the in-memory saver is made of.

use std::borrow::Borrow;

/// A map kept as a `Vec` of entries sorted by key.
///
/// What the saver stores under a thread is small (a few namespaces and channels) or grows at its
/// end (checkpoint ids and versions increase with time), and one thread per run is the common
/// case. A `BTreeMap` allocates a leaf with room for eleven entries for its first one, and splits
/// into three nodes at twelve, so a chain of a dozen channels takes three nodes per map, and a
/// thread holds several maps. Here a map is one exact-as-grown array, lookups are binary searches,
/// and an insert at the end (the usual one) is a push.
#[derive(Debug, Clone)]
pub(super) struct Sorted<K, V>(Vec<(K, V)>);

impl<K, V> Default for Sorted<K, V> {
    fn default() -> Self {
        Self(Vec::new())
    }
}

impl<K: Ord, V> Sorted<K, V> {
    /// Where `key` is, or would go.
    fn find<Q: Ord + ?Sized>(&self, key: &Q) -> Result<usize, usize>
    where
        K: Borrow<Q>,
    {
        // The newest key is the one most often asked for: try the end first.
        match self.0.last() {
            Some((last, _)) if last.borrow() == key => Ok(self.0.len() - 1),
            Some((last, _)) if last.borrow() < key => Err(self.0.len()),
            _ => self.0.binary_search_by(|(k, _)| k.borrow().cmp(key)),
        }
    }

    /// The value of `key`.
    pub(super) fn get<Q: Ord + ?Sized>(&self, key: &Q) -> Option<&V>
    where
        K: Borrow<Q>,
    {
        self.find(key).ok().map(|i| &self.0[i].1)
    }

    /// The stored key equal to `key` and its value: the key is shared (an `Arc`) by other maps.
    pub(super) fn get_key_value<Q: Ord + ?Sized>(&self, key: &Q) -> Option<(&K, &V)>
    where
        K: Borrow<Q>,
    {
        self.find(key).ok().map(|i| (&self.0[i].0, &self.0[i].1))
    }

    /// The value of `key`, inserted first from `new_key()` and `V::default()` when missing; the
    /// key is built only then.
    pub(super) fn get_or_insert<Q: Ord + ?Sized>(&mut self, key: &Q, new_key: impl FnOnce() -> K) -> &mut V
    where
        K: Borrow<Q>,
        V: Default,
    {
        let i = match self.find(key) {
            Ok(i) => i,
            Err(i) => {
                self.grow();
                self.0.insert(i, (new_key(), V::default()));
                i
            }
        };
        &mut self.0[i].1
    }

    /// Sets the value of `key`.
    pub(super) fn insert(&mut self, key: K, value: V) {
        match self.find(&key) {
            Ok(i) => self.0[i].1 = value,
            Err(i) => {
                self.grow();
                self.0.insert(i, (key, value));
            }
        }
    }

    /// Makes room for one more entry, growing by half rather than doubling from four.
    ///
    /// Most of these maps stay at one or two entries (a channel written once or twice in a
    /// thread), and `Vec`'s first allocation holds four, which would leave half to three quarters
    /// of each of them empty, in maps a thread holds many of. Growing by half from one still makes
    /// appends amortized O(1).
    fn grow(&mut self) {
        if self.0.len() == self.0.capacity() {
            self.0.reserve_exact(self.0.len() / 2 + 1);
        }
    }

    /// The entries whose key is below `bound` (all of them for `None`), in key order.
    pub(super) fn before<Q: Ord + ?Sized>(&self, bound: Option<&Q>) -> &[(K, V)]
    where
        K: Borrow<Q>,
    {
        match bound {
            Some(bound) => &self.0[..self.0.partition_point(|(k, _)| k.borrow() < bound)],
            None => &self.0,
        }
    }

    /// The entry with the greatest key.
    pub(super) fn last(&self) -> Option<(&K, &V)> {
        self.0.last().map(|(k, v)| (k, v))
    }

    /// All entries in key order.
    pub(super) fn iter(&self) -> impl DoubleEndedIterator<Item = (&K, &V)> {
        self.0.iter().map(|(k, v)| (k, v))
    }

    /// All values, mutably, in key order.
    pub(super) fn values_mut(&mut self) -> impl Iterator<Item = &mut V> {
        self.0.iter_mut().map(|(_, v)| v)
    }

    /// The number of entries.
    pub(super) fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether there are no entries.
    pub(super) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Keeps the entries for which `keep` says so.
    pub(super) fn retain(&mut self, mut keep: impl FnMut(&K, &mut V) -> bool) {
        self.0.retain_mut(|(k, v)| keep(k, v));
    }

    /// Removes the `n` entries with the smallest keys.
    pub(super) fn drop_first(&mut self, n: usize) {
        self.0.drain(..n.min(self.0.len()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(keys: &[u32]) -> Sorted<u32, u32> {
        let mut m = Sorted::default();
        for k in keys {
            m.insert(*k, k * 10);
        }
        m
    }

    #[test]
    fn inserts_in_any_order_keep_the_keys_sorted() {
        let m = map(&[5, 1, 9, 3, 9]);
        assert_eq!(m.iter().map(|(k, _)| *k).collect::<Vec<_>>(), [1, 3, 5, 9]);
        assert_eq!(m.get(&3), Some(&30));
        assert_eq!(m.get(&4), None);
        assert_eq!(m.last(), Some((&9, &90)));
    }

    #[test]
    fn before_is_the_entries_below_the_bound() {
        let m = map(&[1, 3, 5]);
        let keys = |s: &[(u32, u32)]| s.iter().map(|(k, _)| *k).collect::<Vec<_>>();
        assert_eq!(keys(m.before(Some(&3))), [1]);
        assert_eq!(keys(m.before(Some(&4))), [1, 3]);
        assert_eq!(keys(m.before(None)), [1, 3, 5]);
    }

    #[test]
    fn get_or_insert_builds_the_key_only_when_missing() {
        let mut m: Sorted<String, u32> = Sorted::default();
        *m.get_or_insert("b", || "b".to_owned()) += 1;
        *m.get_or_insert("a", || "a".to_owned()) += 1;
        *m.get_or_insert("b", || unreachable!("present")) += 1;
        assert_eq!(m.get("b"), Some(&2));
        assert_eq!(m.get_key_value("a"), Some((&"a".to_owned(), &1)));
    }

    #[test]
    fn growth_leaves_little_slack() {
        let mut m: Sorted<u32, u32> = Sorted::default();
        m.insert(1, 1);
        assert_eq!(m.0.capacity(), 1, "a map of one entry holds one");
        for k in 2..=100 {
            m.insert(k, k);
            assert!(m.0.capacity() <= m.len() * 3 / 2 + 1, "{} for {}", m.0.capacity(), m.len());
        }
    }

    #[test]
    fn retain_and_drop_first() {
        let mut m = map(&[1, 2, 3, 4, 5]);
        m.retain(|k, _| *k != 2);
        m.retain(|k, _| *k != 4);
        m.drop_first(1);
        assert_eq!(m.iter().map(|(k, _)| *k).collect::<Vec<_>>(), [3, 5]);
        m.drop_first(10);
        assert!(m.is_empty());
        assert_eq!(m.len(), 0);
    }
}
