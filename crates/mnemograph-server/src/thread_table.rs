//! [`ThreadTable`]: the thread records of one process, with an index by creation so that a search
//! walks them newest first and copies only the page it answers.

use std::collections::{BTreeSet, HashMap};

use crate::records::{ThreadRecord, ThreadSearch};

/// Thread records by id, and their ids by `(created_at, thread_id)`.
///
/// A record's `created_at` never changes once it is inserted, which keeps the index true;
/// `get_mut` hands out the record for every other field.
#[derive(Debug, Default)]
pub(crate) struct ThreadTable {
    by_id: HashMap<String, ThreadRecord>,
    /// Timestamps are fixed-width UTC, so their text sorts as their times do; v7 ids break ties
    /// in creation order.
    by_created: BTreeSet<(String, String)>,
}

impl ThreadTable {
    pub(crate) fn get(&self, thread_id: &str) -> Option<&ThreadRecord> {
        self.by_id.get(thread_id)
    }

    pub(crate) fn get_mut(&mut self, thread_id: &str) -> Option<&mut ThreadRecord> {
        self.by_id.get_mut(thread_id)
    }

    /// Inserts or replaces the record under `thread_id`.
    pub(crate) fn insert(&mut self, thread_id: String, record: ThreadRecord) {
        self.remove(&thread_id);
        self.by_created.insert((record.created_at.clone(), thread_id.clone()));
        self.by_id.insert(thread_id, record);
    }

    pub(crate) fn remove(&mut self, thread_id: &str) -> Option<ThreadRecord> {
        let (key, old) = self.by_id.remove_entry(thread_id)?;
        self.by_created.remove(&(old.created_at.clone(), key));
        Some(old)
    }

    /// Every record, in no particular order.
    pub(crate) fn values(&self) -> impl Iterator<Item = &ThreadRecord> {
        self.by_id.values()
    }

    /// How many threads `q` finds, all pages together.
    pub(crate) fn count(&self, q: &ThreadSearch) -> usize {
        match &q.ids {
            Some(ids) => {
                let mut ids: Vec<&String> = ids.iter().collect();
                ids.sort();
                ids.dedup();
                ids.into_iter().filter_map(|id| self.by_id.get(id)).filter(|t| q.keeps(t)).count()
            }
            None => self.by_id.values().filter(|t| q.keeps(t)).count(),
        }
    }

    /// The page of threads `q` asks for, newest first, copying only the page's records.
    pub(crate) fn search(&self, q: &ThreadSearch) -> Vec<ThreadRecord> {
        let (limit, offset) = q.page();
        match &q.ids {
            // A few ids: look them up rather than walk every thread.
            Some(ids) => {
                let mut found: Vec<&ThreadRecord> =
                    ids.iter().filter_map(|id| self.by_id.get(id)).filter(|t| q.keeps(t)).collect();
                found.sort_by(|a, b| (&b.created_at, &b.thread_id).cmp(&(&a.created_at, &a.thread_id)));
                found.dedup_by(|a, b| a.thread_id == b.thread_id);
                found.into_iter().skip(offset).take(limit).cloned().collect()
            }
            None => self
                .by_created
                .iter()
                .rev()
                .filter_map(|(_, id)| self.by_id.get(id))
                .filter(|t| q.keeps(t))
                .skip(offset)
                .take(limit)
                .cloned()
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{json, Map, Value};

    use super::*;

    fn thread(id: &str, created_at: &str, kind: &str) -> ThreadRecord {
        let mut t =
            ThreadRecord::new(id.to_owned(), Map::from_iter([("kind".to_owned(), Value::from(kind))]));
        t.created_at = created_at.to_owned();
        t
    }

    fn ids(found: &[ThreadRecord]) -> Vec<&str> {
        found.iter().map(|t| t.thread_id.as_str()).collect()
    }

    #[test]
    fn a_thread_search_pages_newest_first_through_the_filter() {
        let mut table = ThreadTable::default();
        for (i, kind) in ["a", "b", "a", "a", "b", "a"].iter().enumerate() {
            let id = format!("t{i}");
            table.insert(id.clone(), thread(&id, &format!("2026-01-01T00:00:0{i}.000000+00:00"), kind));
        }
        let q: ThreadSearch =
            serde_json::from_value(json!({"metadata": {"kind": "a"}, "limit": 2, "offset": 1})).unwrap();
        assert_eq!(ids(&table.search(&q)), ["t3", "t2"]);
        let q: ThreadSearch = serde_json::from_value(json!({"ids": ["t0", "t4", "t5", "zz"]})).unwrap();
        assert_eq!(ids(&table.search(&q)), ["t5", "t4", "t0"]);
        table.remove("t5");
        let q = ThreadSearch::default();
        assert_eq!(ids(&table.search(&q)), ["t4", "t3", "t2", "t1", "t0"]);
    }
}
