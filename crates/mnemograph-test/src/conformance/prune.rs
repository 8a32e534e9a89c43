//! `prune`: `KeepLatest` keeps the latest checkpoint of each namespace with its writes and
//! values; `Delete` removes the thread; threads not listed are untouched.

// The suite's shared helpers (`Ctx`, `cp`, `ver`, ...) and imports.
use super::*;

impl Ctx<'_> {
    /// Saves `n` checkpoints at `config`, each the child of the one before, `a` new at each and
    /// `kept` (a list, stored once) unchanged after the first; returns their configs in order.
    async fn steps(&self, config: &CheckpointConfig, n: i64) -> Vec<CheckpointConfig> {
        let mut out: Vec<CheckpointConfig> = Vec::new();
        for step in 0..n {
            let c = cp(step).set("a", step as u64 + 1, one(&format!("a{step}")));
            let c = if step == 0 { c.set("kept", 1, one("kept")) } else { c.keep("kept", 1) };
            out.push(self.put(out.last().unwrap_or(config), c).await);
        }
        out
    }

    async fn prune(&self, threads: &[&CheckpointConfig], strategy: PruneStrategy) {
        let threads: Vec<String> = threads.iter().map(|c| c.thread_id.clone()).collect();
        self.saver.prune(&threads, strategy).await.expect("prune failed");
    }
}

/// Only the latest checkpoint survives, with every value it reads, including one an older
/// checkpoint stored.
pub async fn prune_keep_latest_keeps_only_the_latest(saver: &dyn DynCheckpointer) {
    let s = Ctx::new(saver);
    let config = s.thread("t");
    let saved = s.steps(&config, 4).await;
    s.prune(&[&config], PruneStrategy::KeepLatest).await;
    let listed = s.list(&config, all()).await;
    assert_eq!(ids(&listed), [id(&saved[3])]);
    let latest = s.get(&config).await;
    assert_eq!(latest.config, saved[3]);
    assert_eq!(item(&latest, "a"), "a3");
    assert_eq!(item(&latest, "kept"), "kept", "a value stored by a pruned checkpoint");
    assert!(s.find(&saved[0]).await.is_none());
}

/// Each thread listed keeps its own latest.
pub async fn prune_keep_latest_on_several_threads(saver: &dyn DynCheckpointer) {
    let s = Ctx::new(saver);
    let (t1, t2) = (s.thread("t1"), s.thread("t2"));
    let (c1, c2) = (s.steps(&t1, 3).await, s.steps(&t2, 2).await);
    s.prune(&[&t1, &t2], PruneStrategy::KeepLatest).await;
    assert_eq!(s.listed(&t1, all()).await, [c1[2].clone()]);
    assert_eq!(s.listed(&t2, all()).await, [c2[1].clone()]);
}

/// The latest of every namespace is kept.
pub async fn prune_keep_latest_keeps_the_latest_of_each_namespace(saver: &dyn DynCheckpointer) {
    let s = Ctx::new(saver);
    let root = s.thread("t");
    let child = root.clone().with_ns("child:1");
    let (r, c) = (s.steps(&root, 3).await, s.steps(&child, 2).await);
    s.prune(&[&root], PruneStrategy::KeepLatest).await;
    assert_eq!(s.listed(&root, all()).await, [r[2].clone()]);
    assert_eq!(s.listed(&child, all()).await, [c[1].clone()]);
    assert_eq!(item(&s.get(&child).await, "kept"), "kept");
}

/// The latest checkpoint's pending writes are kept, so an interrupted run can resume.
pub async fn prune_keep_latest_keeps_the_latest_writes(saver: &dyn DynCheckpointer) {
    let s = Ctx::new(saver);
    let config = s.thread("t");
    let saved = s.steps(&config, 3).await;
    s.write(&saved[1], "task", &[("old", json!("gone"))]).await;
    s.write(&saved[2], "task", &[("ch", json!("val"))]).await;
    s.prune(&[&config], PruneStrategy::KeepLatest).await;
    assert_eq!(s.writes(&config).await, [w("task", "ch", json!("val"))]);
}

/// `Delete` removes every checkpoint of the thread.
pub async fn prune_delete_removes_everything(saver: &dyn DynCheckpointer) {
    let s = Ctx::new(saver);
    let config = s.thread("t");
    let saved = s.steps(&config, 3).await;
    s.steps(&config.clone().with_ns("child:1"), 1).await;
    s.write(&saved[2], "task", &[("ch", json!("val"))]).await;
    s.prune(&[&config], PruneStrategy::Delete).await;
    assert_eq!(s.count(&config, all()).await, 0);
    assert_eq!(s.count(&config.clone().with_ns("child:1"), all()).await, 0);
    assert!(s.find(&config).await.is_none());
    // Saved again under the same id, the checkpoint has none of the old writes.
    let again = s.put(&config, cp(0).with_id(&id(&saved[2])).set("a", 1, one("again"))).await;
    assert_eq!(s.writes(&again).await, []);
}

/// A thread not listed keeps every checkpoint.
pub async fn prune_leaves_other_threads(saver: &dyn DynCheckpointer) {
    let s = Ctx::new(saver);
    let (t1, t2) = (s.thread("t1"), s.thread("t2"));
    s.steps(&t1, 3).await;
    s.steps(&t2, 2).await;
    let before = s.ids(&t2, all()).await;
    s.prune(&[&t1], PruneStrategy::KeepLatest).await;
    s.prune(&[&t1], PruneStrategy::Delete).await;
    assert_eq!(s.ids(&t2, all()).await, before);
}

/// An empty list of threads is no error.
pub async fn prune_of_no_threads_is_a_no_op(saver: &dyn DynCheckpointer) {
    let s = Ctx::new(saver);
    let config = s.thread("t");
    s.steps(&config, 2).await;
    s.prune(&[], PruneStrategy::KeepLatest).await;
    s.prune(&[], PruneStrategy::Delete).await;
    assert_eq!(s.count(&config, all()).await, 2);
}

/// Threads that do not exist are no error, and are not created.
pub async fn prune_of_missing_threads_is_a_no_op(saver: &dyn DynCheckpointer) {
    let s = Ctx::new(saver);
    let config = s.thread("missing");
    s.prune(&[&config], PruneStrategy::KeepLatest).await;
    s.prune(&[&config], PruneStrategy::Delete).await;
    assert!(s.find(&config).await.is_none());
}
