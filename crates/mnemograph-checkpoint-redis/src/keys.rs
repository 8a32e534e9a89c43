//! The key layout: which Redis keys and hash fields hold a thread.
//!
//! Every thread lives in exactly [`ThreadKeys::COUNT`] keys that share one hash tag, so on a
//! Redis Cluster they all sit in one slot: a Lua script may touch all of them, and a thread can
//! be expired, pinned or deleted as a whole. The number of keys does not grow with the number of
//! checkpoints (records are hash fields and sorted-set members), which is what lets every write
//! refresh the expiry of the *whole* thread in constant time.
//!
//! | key | type | content |
//! |---|---|---|
//! | `<prefix>:{t<hex thread>}:idx` | sorted set, score 0 | `<hex ns>:<checkpoint id>`, one per checkpoint |
//! | `…:cp` | hash | same member → checkpoint record (JSON: checkpoint, metadata, parent id) |
//! | `…:ref` | hash | same member → the blob fields the checkpoint reads, space separated |
//! | `…:blob` | hash | `<hex ns>:<hex channel>:<hex version>` → msgpack `[type, payload]` |
//! | `…:wr` | hash | `<hex ns>:<hex checkpoint id>:<hex task id>:<idx>` → msgpack `[channel, task_path, type, payload]` |
//! | `…:wi` | sorted set, score 0 | the `wr` fields, so one checkpoint's writes are a `ZRANGEBYLEX` |
//! | `…:meta` | hash | `layout` (format version), `pinned` when the thread never expires |
//!
//! Why hex: thread ids, namespaces, channels and versions are arbitrary strings. Hex uses only
//! `0-9a-f`, so it can never contain the `:` separator, a `{`/`}` that would change the hash
//! tag, or a space that would split a `ref` list; two different ids can never map to the same
//! key; and hex preserves byte order, which the lexicographic ranges rely on. Checkpoint ids stay
//! readable in `idx`/`cp` (they are the last component there, so a `:` inside one is harmless) but
//! are hex in write fields, where a prefix range must stop exactly at one checkpoint.

/// Lowercase hex of `bytes`.
pub(crate) fn hex(bytes: &[u8]) -> String {
    // Into a buffer rather than `hex::encode`, which collects `char`s one at a time and takes about
    // three times as long: this runs for several fields of every call.
    let mut out = vec![0; bytes.len() * 2];
    ::hex::encode_to_slice(bytes, &mut out).expect("the buffer holds two digits per byte");
    String::from_utf8(out).expect("hex digits are ASCII")
}

/// The string whose UTF-8 bytes are hex-encoded (lowercase or uppercase) in `s`; `None` when `s`
/// is not hex or the bytes are not UTF-8.
pub(crate) fn unhex_str(s: &str) -> Option<String> {
    String::from_utf8(::hex::decode(s).ok()?).ok()
}

/// The names of the keys of one thread, and of the fields inside them.
///
/// Public so operators and tests can inspect a thread with `redis-cli`; the saver is the only
/// writer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ThreadKeys {
    /// Sorted set of every checkpoint of the thread (all namespaces).
    pub index: String,
    /// Hash of checkpoint records.
    pub checkpoints: String,
    /// Hash of the blob fields each checkpoint reads.
    pub refs: String,
    /// Hash of channel values, one field per (namespace, channel, version).
    pub blobs: String,
    /// Hash of pending writes.
    pub writes: String,
    /// Sorted set of the pending-write fields.
    pub write_index: String,
    /// Hash of per-thread settings (`pinned`).
    pub meta: String,
}

impl ThreadKeys {
    /// How many keys one thread has.
    pub const COUNT: usize = 7;

    /// The keys of `thread_id` under `prefix`.
    pub fn new(prefix: &str, thread_id: &str) -> Self {
        // The `t` keeps the tag non-empty for an empty thread id: Redis hashes the whole key
        // when the braces are empty, which would scatter the thread over several slots.
        let base = format!("{prefix}:{{t{}}}", hex(thread_id.as_bytes()));
        let key = |suffix: &str| format!("{base}:{suffix}");
        Self {
            index: key("idx"),
            checkpoints: key("cp"),
            refs: key("ref"),
            blobs: key("blob"),
            writes: key("wr"),
            write_index: key("wi"),
            meta: key("meta"),
        }
    }

    /// The keys in the order the Lua scripts expect them (`KEYS[1]` … `KEYS[7]`).
    pub fn all(&self) -> [&str; Self::COUNT] {
        [&self.index, &self.checkpoints, &self.refs, &self.blobs, &self.writes, &self.write_index, &self.meta]
    }

    /// The `SCAN` pattern matching the index key of every thread under `prefix`.
    pub(crate) fn index_pattern(prefix: &str) -> String {
        let mut pattern = String::with_capacity(prefix.len() + 12);
        for c in prefix.chars() {
            // Glob metacharacters in the prefix must match literally.
            if matches!(c, '*' | '?' | '[' | ']' | '\\') {
                pattern.push('\\');
            }
            pattern.push(c);
        }
        pattern.push_str(":{t*}:idx");
        pattern
    }

    /// The thread id of an index key found by [`Self::index_pattern`].
    pub(crate) fn thread_of_index(prefix: &str, key: &str) -> Option<String> {
        let tag = key.strip_prefix(prefix)?.strip_prefix(":{t")?.strip_suffix("}:idx")?;
        unhex_str(tag)
    }
}

/// A namespace's encoded form and the members and fields derived from it.
#[derive(Debug, Clone)]
pub(crate) struct Ns {
    /// Hex of the namespace.
    hex: String,
}

impl Ns {
    pub(crate) fn new(checkpoint_ns: &str) -> Self {
        Self { hex: hex(checkpoint_ns.as_bytes()) }
    }

    /// The `idx`/`cp`/`ref` member of checkpoint `id`.
    pub(crate) fn member(&self, id: &str) -> String {
        format!("{}:{id}", self.hex)
    }

    /// Inclusive lower `ZRANGEBYLEX` bound of this namespace's members.
    pub(crate) fn lex_min(&self) -> String {
        format!("[{}:", self.hex)
    }

    /// Exclusive upper bound: `;` is the byte after `:`, and hex never contains either.
    pub(crate) fn lex_max(&self) -> String {
        format!("({};", self.hex)
    }

    /// Exclusive upper bound for ids smaller than `before`.
    pub(crate) fn lex_before(&self, before: &str) -> String {
        format!("({}:{before}", self.hex)
    }

    /// The `blob` field of `channel` at `version`.
    pub(crate) fn blob_field(&self, channel: &str, version: &str) -> String {
        format!("{}:{}:{}", self.hex, hex(channel.as_bytes()), hex(version.as_bytes()))
    }

    /// The prefix shared by every write field of checkpoint `id`.
    pub(crate) fn writes_prefix(&self, id: &str) -> String {
        format!("{}:{}:", self.hex, hex(id.as_bytes()))
    }

    /// The `wr`/`wi` field of one write.
    pub(crate) fn write_field(&self, id: &str, task_id: &str, idx: i64) -> String {
        format!("{}{}:{idx}", self.writes_prefix(id), hex(task_id.as_bytes()))
    }
}

/// The channel named in a blob field.
pub(crate) fn channel_of_blob_field(field: &str) -> Option<String> {
    let mut parts = field.split(':');
    let (_ns, channel, _version) = (parts.next()?, parts.next()?, parts.next()?);
    unhex_str(channel)
}

/// The `(task_id, idx)` named in a write field.
pub(crate) fn task_of_write_field(field: &str) -> Option<(String, i64)> {
    let mut parts = field.rsplitn(3, ':');
    let idx = parts.next()?.parse().ok()?;
    let task = unhex_str(parts.next()?)?;
    Some((task, idx))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_round_trips_and_keeps_order() {
        for s in ["", "a", "线程:{x}", "user:42 session"] {
            assert_eq!(unhex_str(&hex(s.as_bytes())).as_deref(), Some(s));
        }
        assert!(hex(b"ab") < hex(b"abc") && hex(b"abc") < hex(b"b"));
        assert_eq!(hex("線".as_bytes()), "e7b79a");
        assert_eq!(unhex_str("E7B79A").as_deref(), Some("線"));
        assert_eq!(unhex_str("abc"), None);
        assert_eq!(unhex_str("zz"), None);
        assert_eq!(unhex_str("+a"), None);
        assert_eq!(unhex_str("ff"), None);
    }

    #[test]
    fn every_key_of_a_thread_shares_one_non_empty_tag() {
        for thread in ["", "{}", "a}b{c", "u:1:s:2", "线程"] {
            let keys = ThreadKeys::new("p", thread);
            let tag = |k: &str| {
                let open = k.find('{').unwrap();
                let close = open + k[open..].find('}').unwrap();
                k[open + 1..close].to_owned()
            };
            let first = tag(&keys.index);
            assert!(!first.is_empty());
            assert!(keys.all().iter().all(|k| tag(k) == first), "{thread:?}");
            assert_eq!(ThreadKeys::thread_of_index("p", &keys.index).as_deref(), Some(thread));
        }
        assert_ne!(ThreadKeys::new("p", "a:b").index, ThreadKeys::new("p:a", "b").index);
    }

    #[test]
    fn namespace_ranges_do_not_overlap() {
        let (a, ab) = (Ns::new("a"), Ns::new("a\u{1}"));
        let m = ab.member("1");
        assert!(!(a.lex_min()[1..] <= m[..] && m[..] < a.lex_max()[1..]));
    }

    #[test]
    fn fields_decode() {
        let ns = Ns::new("child:1");
        assert_eq!(
            channel_of_blob_field(&ns.blob_field("branch:to:x", "1.0")).as_deref(),
            Some("branch:to:x")
        );
        let f = ns.write_field("id:1", "task:9", -3);
        assert!(f.starts_with(&ns.writes_prefix("id:1")));
        assert_eq!(task_of_write_field(&f), Some(("task:9".to_owned(), -3)));
    }

    #[test]
    fn scan_pattern_escapes_globs() {
        assert_eq!(ThreadKeys::index_pattern("a*b"), "a\\*b:{t*}:idx");
    }
}
