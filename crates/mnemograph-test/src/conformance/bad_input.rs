//! Hostile input every saver must survive: ids and namespaces made of what means something to
//! SQL, `LIKE`, JSON paths, Redis keys and globs, ids that differ only in case or accents, long
//! multi-byte ids, odd channel names and multi-megabyte values. A saver may refuse an input with a
//! typed error (and then must store nothing); what it accepts must read back exactly, and a
//! bystander thread must read exactly as before, whatever happened to the thread under attack.

// The suite's shared helpers (`Ctx`, `cp`, `ver`, ...) and imports.
use super::*;

/// Strings that mean something to SQL, `LIKE`, JSON paths, Redis keys and hash tags, globs or C.
const HOSTILE: [&str; 18] = [
    "it's",
    "\"quoted\"",
    "back\\slash",
    "100%",
    "%",
    "_",
    "'; DROP TABLE checkpoints; --",
    "nul\0byte",
    "`backtick`",
    "$.channel_versions",
    "*",
    "[a-z]?",
    "{tag}",
    "a:b:c",
    "with space",
    "tab\tand\nnewline",
    "混合 text ✓",
    "🦀",
];

/// A thread whose reads must not change while others are attacked: two steps saved by
/// [`save_step`], read back right after saving.
///
/// `S` is what the backend stores for it as a test reads it behind the saver's back (row counts,
/// raw keys): [`Bystander::storing`] remembers it and [`Bystander::finish`] compares it, because a
/// saver can damage stored data that still reads back the same.
#[derive(Debug)]
pub struct Bystander<S = ()> {
    /// Its address.
    pub config: CheckpointConfig,
    /// What it read right after it was saved.
    seen: StepView,
    /// What the backend stored for it right after it was saved.
    stored: S,
}

impl Bystander {
    /// Saves a two-step bystander thread under `label`.
    pub async fn new(saver: &dyn DynCheckpointer, label: &str) -> Self {
        Self::storing(saver, label, async |_| ()).await
    }
}

impl<S: PartialEq + std::fmt::Debug> Bystander<S> {
    /// Saves a two-step bystander thread under `label` and remembers what `read_stored` reads of
    /// its thread id.
    pub async fn storing(
        saver: &dyn DynCheckpointer,
        label: &str,
        read_stored: impl AsyncFn(&str) -> S,
    ) -> Self {
        let config = CheckpointConfig::thread(format!("{label}-bystander-{}", uuid6(0)));
        let first = save_step(saver, &config, 0, "mine").await.expect("the bystander saves");
        save_step(saver, &first, 1, "still mine").await.expect("the bystander saves");
        let seen = step_view(&saver.get_tuple(&config).await.expect("read").expect("saved"));
        let stored = read_stored(&config.thread_id).await;
        Self { config, seen, stored }
    }

    /// Panics when the bystander no longer reads as it did.
    pub async fn check(&self, saver: &dyn DynCheckpointer, after: &str) {
        let now =
            saver.get_tuple(&self.config).await.expect("the bystander reads").expect("the bystander exists");
        assert_eq!(step_view(&now), self.seen, "the bystander changed after {after}");
        let listed = saver.list(Some(&self.config), ListOptions::new()).await.expect("list");
        assert_eq!(listed.len(), 2, "the bystander lost checkpoints after {after}");
    }

    /// Panics when the bystander no longer reads as it did, or when `read_stored` reads otherwise
    /// than [`Bystander::storing`] did; then deletes the bystander's thread, so a test sharing a
    /// database leaves nothing behind.
    pub async fn finish(
        self,
        saver: &dyn DynCheckpointer,
        after: &str,
        read_stored: impl AsyncFn(&str) -> S,
    ) {
        self.check(saver, after).await;
        let now = read_stored(&self.config.thread_id).await;
        assert_eq!(now, self.stored, "the bystander's stored data changed after {after}");
        saver.delete_thread(&self.config.thread_id).await.expect("delete the bystander");
    }
}

/// What a reader sees of one saved step: its address, parent, `text` value, `count` and pending
/// writes (decoded).
#[derive(Debug, Clone, PartialEq)]
pub struct StepView {
    /// The checkpoint's address.
    pub config: CheckpointConfig,
    /// Its parent's address.
    pub parent: Option<CheckpointConfig>,
    /// The `text` channel (a blob on savers that keep lists apart).
    pub text: Vec<String>,
    /// The `count` channel (inline on SQL savers).
    pub count: i64,
    /// `(channel, value)` of each pending write.
    pub writes: Vec<(String, Vec<String>)>,
}

/// The [`StepView`] of a tuple.
pub fn step_view(t: &CheckpointTuple) -> StepView {
    let values = &t.checkpoint.channel_values;
    StepView {
        config: t.config.clone(),
        parent: t.parent_config.clone(),
        text: values["text"].decode().expect("the text channel decodes"),
        count: values["count"].decode().expect("the count channel decodes"),
        writes: t
            .pending_writes
            .iter()
            .map(|w| (w.channel.clone(), w.value.decode().expect("a write decodes")))
            .collect(),
    }
}

/// Saves step `step` at `at`: `text` = `[text]` and `count` = `step` at new versions, metadata
/// key `text`, and a pending write `reply` = `["re: <text>"]`. Returns the saved address.
///
/// # Errors
/// Whatever the saver returns.
pub async fn save_step(
    saver: &dyn DynCheckpointer,
    at: &CheckpointConfig,
    step: i64,
    text: &str,
) -> Result<CheckpointConfig, CheckpointError> {
    let n = u64::try_from(step + 2).unwrap_or(1);
    let c = cp(step).set("text", n, one(text)).set("count", n, int(step));
    let mut m = meta(step);
    m.extra.insert("text".into(), json!(text));
    let saved = saver.put(at, c.checkpoint, m, c.new_versions).await?;
    let reply = ("reply".to_owned(), ChannelValue::new(vec![format!("re: {text}")]));
    saver.put_writes(&saved, vec![reply], "task-1", "").await?;
    Ok(saved)
}

/// Saves two steps of `s` ([`save_step`]) at `config`, then checks everything a reader can see of
/// them: both read back exactly, list newest first and only in this thread and namespace, and a
/// metadata filter on `s` finds exactly them.
///
/// # Errors
/// The saver's error when it refused the first step (it then must have stored nothing).
///
/// # Panics
/// When anything read back differs from what was saved.
pub async fn round_trip_two_steps(
    saver: &dyn DynCheckpointer,
    config: &CheckpointConfig,
    s: &str,
) -> Result<(), CheckpointError> {
    let first = match save_step(saver, config, 0, s).await {
        Ok(first) => first,
        Err(e) => {
            let stored = saver.get_tuple(config).await;
            assert!(matches!(stored, Ok(None) | Err(_)), "{s:?}: refused ({e}) but stored");
            return Err(e);
        }
    };
    let saved = save_step(saver, &first, 1, s).await.expect("the second step saves like the first");
    let view = step_view(&saver.get_tuple(config).await.expect("read").expect("saved"));
    let expected = StepView {
        config: saved.clone(),
        parent: Some(first.clone()),
        text: vec![s.to_owned()],
        count: 1,
        writes: vec![("reply".to_owned(), vec![format!("re: {s}")])],
    };
    assert_eq!(view, expected, "{s:?}: read back otherwise than saved");
    let listed = saver.list(Some(config), ListOptions::new()).await.expect("list");
    assert_eq!(
        ids(&listed),
        [saved.checkpoint_id.clone().unwrap(), first.checkpoint_id.clone().unwrap()],
        "{s:?}"
    );
    assert!(
        listed.iter().all(|t| t.config.thread_id == config.thread_id && t.config.checkpoint_ns == config.checkpoint_ns),
        "{s:?}: list matched another thread or namespace"
    );
    // The same string as a metadata filter value matches exactly these checkpoints.
    let filter =
        |text: String| ListOptions::new().filter([("text".to_owned(), json!(text))].into_iter().collect());
    let found = saver.list(Some(config), filter(s.to_owned())).await.expect("list");
    assert_eq!(found.len(), 2, "{s:?}: the metadata filter missed");
    let found = saver.list(Some(config), filter(format!("{s}x"))).await.expect("list");
    assert!(found.is_empty(), "{s:?}: the metadata filter matched another value");
    Ok(())
}

/// Refusing is allowed only with a typed error: invalid input, or the backend's own refusal.
fn assert_typed_refusal(s: &str, e: &CheckpointError) {
    assert!(matches!(e, CheckpointError::Invalid(_) | CheckpointError::Backend(_)), "{s:?}: {e:?}");
}

/// Thread ids and namespaces made of separators, quotes, wildcards, hash tags, control characters
/// and emoji read back exactly, list and filter only themselves, and delete only themselves.
pub async fn hostile_thread_ids_and_namespaces_round_trip_exactly(saver: &dyn DynCheckpointer) {
    let bystander = Bystander::new(saver, "hostile").await;
    let run = format!("conf-{}", uuid6(0));
    for s in HOSTILE {
        // Named so that `LIKE '<run>-%'`, a glob or a prefix scan of `<run>-` would also match
        // the bystander's neighbours.
        let thread = format!("{run}-{s}");
        for config in [CheckpointConfig::thread(&thread), CheckpointConfig::thread(&thread).with_ns(s)] {
            if let Err(e) = round_trip_two_steps(saver, &config, s).await {
                assert_typed_refusal(s, &e);
            }
        }
        saver.delete_thread(&thread).await.expect("delete_thread");
        assert!(saver.get_tuple(&CheckpointConfig::thread(&thread)).await.expect("read").is_none(), "{s:?}");
        bystander.check(saver, &format!("thread {s:?}")).await;
    }
}

/// Thread ids that differ only in letter case, accents, width or trailing spaces are different
/// threads: none reads, lists or deletes another.
pub async fn thread_ids_are_compared_exactly(saver: &dyn DynCheckpointer) {
    let s = Ctx::new(saver);
    let variants = ["user", "USER", "user ", "üser", "ｕｓｅｒ", "user\u{301}"];
    let configs: Vec<CheckpointConfig> = variants.iter().map(|v| s.thread(v)).collect();
    for (config, v) in configs.iter().zip(variants) {
        save_step(saver, config, 0, v).await.expect("save");
    }
    for (config, v) in configs.iter().zip(variants) {
        let view = step_view(&s.get(config).await);
        assert_eq!(view.config.thread_id, config.thread_id, "read another user's thread");
        assert_eq!(view.text, [v], "{v:?}");
        assert_eq!(s.count(config, ListOptions::new()).await, 1, "{v:?}: list matched another thread");
    }
    s.delete(&configs[1]).await;
    assert!(s.find(&configs[1]).await.is_none());
    for (config, v) in configs.iter().zip(variants).filter(|(c, _)| **c != configs[1]) {
        assert!(s.find(config).await.is_some(), "deleting {:?} removed {v:?}", variants[1]);
    }
}

/// Thread ids of 150 characters (the length LangGraph's SQL savers' columns hold), in ASCII,
/// Chinese and emoji, round-trip; so do namespaces of 100 Chinese characters.
pub async fn long_multi_byte_thread_ids_round_trip(saver: &dyn DynCheckpointer) {
    let bystander = Bystander::new(saver, "long").await;
    let unique = uuid6(0);
    let fill = |c: char| -> String { unique.chars().chain(std::iter::repeat(c)).take(150).collect() };
    for thread in [fill('a'), fill('线'), fill('🦀')] {
        assert_eq!(thread.chars().count(), 150);
        let root = CheckpointConfig::thread(&thread);
        round_trip_two_steps(saver, &root, "你好").await.expect("a 150-character thread id is accepted");
        let nested = root.clone().with_ns("命".repeat(100));
        round_trip_two_steps(saver, &nested, "嵌套").await.expect("a 100-character namespace is accepted");
        saver.delete_thread(&thread).await.expect("delete_thread");
        assert!(saver.get_tuple(&root).await.expect("read").is_none());
        bystander.check(saver, "a long thread id").await;
    }
}

/// Channel names become keys of documents, JSON paths, hash fields and columns: names with dots,
/// quotes, brackets, wildcards, spaces and non-ASCII keep their values, inline and as blobs.
pub async fn odd_channel_names_keep_their_values(saver: &dyn DynCheckpointer) {
    let s = Ctx::new(saver);
    let names = [
        "it's",
        "dot.ted",
        "$root",
        "sp ace",
        "[0]",
        "*",
        "100%",
        "a\"b",
        "back\\slash",
        "中文",
        "é",
        "a:b",
        "{x}",
    ];
    let config = s.thread("channels");
    let mut c = cp(0);
    for (i, name) in names.iter().enumerate() {
        let n = i as u64 + 1;
        c = c.set(name, n, one(&format!("value of {name}"))).set(&format!("{name}#n"), n, int(i as i64));
    }
    let saved = s.put(&config, c).await;
    let tuple = s.get(&saved).await;
    for (i, name) in names.iter().enumerate() {
        let value = tuple.checkpoint.channel_values.get(*name).map(|v| v.decode::<Vec<String>>());
        assert_eq!(value.and_then(Result::ok), Some(vec![format!("value of {name}")]), "channel {name:?}");
        let inline = tuple.checkpoint.channel_values.get(&*format!("{name}#n")).map(|v| v.decode::<i64>());
        assert_eq!(inline.and_then(Result::ok), Some(i as i64), "channel {name:?}#n");
    }
}

/// A 4 MiB message (multi-byte text) round-trips in a checkpoint and in a pending write, and a
/// thread saved beside it is untouched.
pub async fn multi_megabyte_values_round_trip(saver: &dyn DynCheckpointer) {
    let bystander = Bystander::new(saver, "big").await;
    let s = Ctx::new(saver);
    let big = "大".repeat((4 << 20) / 3);
    let config = s.thread("big");
    let saved = s.put(&config, cp(0).set("text", 1, one(&big))).await;
    s.write(&saved, "task-1", &[("reply", json!([big]))]).await;
    let tuple = s.get(&config).await;
    assert_eq!(
        decoded!(tuple, "text", Vec<String>),
        std::slice::from_ref(&big),
        "the checkpoint value came back otherwise"
    );
    let writes = tuple.pending_writes.iter().map(|w| w.value.decode::<Vec<String>>().expect("decodes"));
    assert_eq!(writes.collect::<Vec<_>>(), [vec![big]], "the pending write came back otherwise");
    bystander.check(saver, "a 4 MiB value").await;
}
