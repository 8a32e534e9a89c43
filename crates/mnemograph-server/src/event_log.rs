//! [`EventLog`]: the events a run keeps for clients that join its stream late or reconnect with
//! `Last-Event-ID`, bounded so that a long reply does not hold every token's copy of it.
//!
//! Every event gets the next number of the run's sequence as its id, kept or not, so ids only
//! increase and a client's `Last-Event-ID` stays meaningful after entries are dropped. What stays:
//! - of each message (by its id), only the latest `messages/partial` or `messages/complete`: each
//!   carries the whole message so far, so the latest one stands in for all before it;
//! - while the kept events weigh more than the log's byte limit, the oldest *droppable* entries
//!   go first: `updates`, `custom`, `messages` (tuple chunks), `tasks`, `checkpoints`, `debug`,
//!   any other event name, and every `values` but the newest;
//! - never dropped by the limit: `metadata`, `messages/metadata`, `error`, each message's latest
//!   partial or complete, and the newest `values`. Their weight grows with what the run produced,
//!   not with how many tokens it took to produce it.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

use axum::body::Bytes;
use serde_json::Value;

/// One kept event: its id in the run's sequence, name and data.
///
/// The data is kept as the JSON text it is sent as, encoded once for every reader: a JSON value
/// held as a tree takes several times the memory of its text, so the limit, which counts text,
/// would not bound the memory a log holds.
#[derive(Debug, PartialEq)]
pub(crate) struct Entry {
    pub(crate) seq: u64,
    pub(crate) event: String,
    /// The data as JSON text.
    pub(crate) data: Bytes,
    /// Its weight against the limit: the name's and the JSON data's lengths.
    bytes: usize,
}

impl Entry {
    /// Its weight: the name's and the JSON data's lengths.
    pub(crate) fn weight(&self) -> usize {
        self.bytes
    }
}

/// A run's kept events, by id.
#[derive(Debug)]
pub(crate) struct EventLog {
    entries: BTreeMap<u64, Arc<Entry>>,
    /// The id the next event gets.
    next: u64,
    /// The kept entries' weight.
    bytes: usize,
    /// Above this weight, droppable entries go, oldest first.
    limit: usize,
    /// Message id → the id of its latest partial or complete.
    latest_message: HashMap<String, u64>,
    /// The id of the newest `values`.
    latest_values: Option<u64>,
    /// The ids the limit may drop.
    droppable: BTreeSet<u64>,
    /// The greatest id the limit dropped: a reader that had not read it lost an event no later
    /// entry stands in for.
    dropped_through: Option<u64>,
}

/// How an event is kept.
enum Kind {
    /// A message's latest state, superseding the one kept before under the same id.
    Message(String),
    /// The newest state, superseding the previous `values` for the limit.
    Values,
    /// Kept until the log is forgotten.
    Pinned,
    /// Kept while the log is under its limit.
    Droppable,
}

fn kind_of(event: &str, data: &Value) -> Kind {
    match event {
        "messages/partial" | "messages/complete" => {
            match data.get(0).and_then(|m| m.get("id")).and_then(Value::as_str) {
                Some(id) => Kind::Message(id.to_owned()),
                // Without an id, nothing later can stand in for it.
                None => Kind::Pinned,
            }
        }
        "values" => Kind::Values,
        "metadata" | "messages/metadata" | "error" => Kind::Pinned,
        _ => Kind::Droppable,
    }
}

impl EventLog {
    /// An empty log that drops droppable entries above `limit` bytes.
    pub(crate) fn new(limit: usize) -> Self {
        Self {
            entries: BTreeMap::new(),
            next: 0,
            bytes: 0,
            limit,
            latest_message: HashMap::new(),
            latest_values: None,
            droppable: BTreeSet::new(),
            dropped_through: None,
        }
    }

    /// Numbers an event, keeps it by the rules above, and returns it.
    pub(crate) fn push(&mut self, event: String, data: &Value) -> Arc<Entry> {
        let seq = self.next;
        self.next += 1;
        match kind_of(&event, data) {
            Kind::Message(id) => {
                if let Some(old) = self.latest_message.insert(id, seq) {
                    self.remove(old);
                }
            }
            Kind::Values => {
                if let Some(old) = self.latest_values.replace(seq) {
                    self.droppable.insert(old);
                }
            }
            Kind::Pinned => {}
            Kind::Droppable => {
                self.droppable.insert(seq);
            }
        }
        let data = Bytes::from(data.to_string());
        let bytes = event.len() + data.len();
        let entry = Arc::new(Entry { seq, event, data, bytes });
        self.entries.insert(seq, entry.clone());
        self.bytes += bytes;
        while self.bytes > self.limit {
            let Some(oldest) = self.droppable.pop_first() else { break };
            self.remove(oldest);
            self.dropped_through = Some(oldest);
        }
        entry
    }

    fn remove(&mut self, seq: u64) {
        self.droppable.remove(&seq);
        if let Some(e) = self.entries.remove(&seq) {
            self.bytes -= e.bytes;
        }
    }

    /// The kept entries with an id of `from` or more, in order.
    pub(crate) fn from(&self, from: u64) -> Vec<Arc<Entry>> {
        self.entries.range(from..).map(|(_, e)| e.clone()).collect()
    }

    /// Whether the limit dropped an event with an id of `from` or more: a reader going on from
    /// `from` through the kept entries misses it. Superseded partials do not count: the latest,
    /// which stands in for them, is kept.
    pub(crate) fn dropped_from(&self, from: u64) -> bool {
        self.dropped_through.is_some_and(|dropped| dropped >= from)
    }

    /// Drops every kept entry; ids go on from where they were.
    pub(crate) fn forget(&mut self) {
        let next = self.next;
        *self = Self::new(self.limit);
        self.next = next;
    }

    /// How many entries are kept.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.entries.len()
    }

    /// The kept entries' weight.
    #[cfg(test)]
    pub(crate) fn bytes(&self) -> usize {
        self.bytes
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn partial(id: &str, text: &str) -> Value {
        json!([{ "id": id, "type": "AIMessageChunk", "content": text }])
    }

    /// An entry's data, read back from its text.
    fn data(entry: &Entry) -> Value {
        serde_json::from_slice(&entry.data).expect("an entry's data is JSON text")
    }

    #[test]
    fn a_later_partial_of_the_same_message_replaces_the_earlier_one() {
        let mut log = EventLog::new(usize::MAX);
        log.push("metadata".into(), &json!({"run_id": "r"}));
        log.push("messages/metadata".into(), &json!({"m1": {}}));
        let mut reply = String::new();
        for i in 0..2000 {
            reply.push_str(&format!("tok{i} "));
            log.push("messages/partial".into(), &partial("m1", &reply));
        }
        assert_eq!(log.len(), 3, "metadata, messages/metadata, the latest partial");
        let kept = log.from(0);
        assert_eq!(data(&kept[2]), partial("m1", &reply));
        assert_eq!(kept[2].seq, 2001, "ids count every event, kept or not");
        assert!(
            log.bytes() < 2 * reply.len() + 500,
            "{} bytes for a {}-byte reply",
            log.bytes(),
            reply.len()
        );
    }

    #[test]
    fn a_complete_message_replaces_its_partials_and_other_messages_stay() {
        let mut log = EventLog::new(usize::MAX);
        log.push("messages/partial".into(), &partial("a", "he"));
        log.push("messages/partial".into(), &partial("b", "x"));
        log.push("messages/partial".into(), &partial("a", "hello"));
        log.push("messages/complete".into(), &partial("a", "hello!"));
        let kept: Vec<(u64, Value)> = log.from(0).iter().map(|e| (e.seq, data(e))).collect();
        assert_eq!(kept, vec![(1, partial("b", "x")), (3, partial("a", "hello!"))]);
    }

    #[test]
    fn over_the_limit_the_oldest_droppable_entries_go_first() {
        let mut log = EventLog::new(300);
        log.push("metadata".into(), &json!({"run_id": "r"}));
        for i in 0..50 {
            log.push("updates".into(), &json!({ "node": { "step": i } }));
            log.push("values".into(), &json!({ "step": i }));
        }
        assert!(log.bytes() <= 300, "{}", log.bytes());
        let kept = log.from(0);
        assert_eq!(kept[0].event, "metadata", "the metadata event stays");
        let last = kept.last().expect("entries are kept");
        assert_eq!(
            (last.event.as_str(), data(last)),
            ("values", json!({ "step": 49 })),
            "the newest values stays"
        );
        let seqs: Vec<u64> = kept.iter().map(|e| e.seq).collect();
        assert!(seqs.windows(2).all(|w| w[0] < w[1]), "ids increase: {seqs:?}");
        assert_eq!(
            seqs[1..],
            (seqs[1]..=100).collect::<Vec<_>>()[..],
            "the newest entries stay, without gaps"
        );
    }

    #[test]
    fn an_entry_keeps_its_data_as_the_json_text_it_weighs() {
        let mut log = EventLog::new(usize::MAX);
        let value = json!([{ "id": "m", "content": "t0 " }, { "langgraph_node": "talk" }]);
        let entry = log.push("messages".into(), &value);
        assert_eq!(&entry.data[..], value.to_string().as_bytes());
        assert_eq!(log.bytes(), "messages".len() + value.to_string().len());
    }

    #[test]
    fn entries_the_limit_never_drops_stay_over_it() {
        let mut log = EventLog::new(10);
        log.push("metadata".into(), &json!({"run_id": "r"}));
        log.push("messages/metadata".into(), &json!({"a": {}}));
        log.push("messages/partial".into(), &partial("a", "a long enough message"));
        log.push("error".into(), &json!({"error": "E", "message": "m"}));
        assert_eq!(log.len(), 4);
    }

    #[test]
    fn a_forgotten_log_numbers_on_from_where_it_was() {
        let mut log = EventLog::new(usize::MAX);
        log.push("values".into(), &json!({}));
        log.push("values".into(), &json!({}));
        log.forget();
        assert!(log.from(0).is_empty());
        assert_eq!(log.push("values".into(), &json!({})).seq, 2);
    }
}
