//! `copy_thread`: every checkpoint of every namespace, with metadata, parents, values and
//! pending writes, under the same ids in another thread; the source unchanged.

// The suite's shared helpers (`Ctx`, `cp`, `ver`, ...) and imports.
use super::*;

impl Ctx<'_> {
    /// Saves `n` checkpoints in each of `namespaces` of `config`'s thread, each the child of the
    /// one before, the channel `a` new at each and `kept` (a list, stored once) unchanged after
    /// the first; returns their configs in order.
    async fn chains(&self, config: &CheckpointConfig, n: i64, namespaces: &[&str]) -> Vec<CheckpointConfig> {
        let mut out = Vec::new();
        for ns in namespaces {
            let mut parent = config.clone().with_ns(*ns);
            for step in 0..n {
                let mut c = cp(step).set("a", step as u64 + 1, int(step));
                c = match step {
                    0 => c.set("kept", 1, one(&format!("kept in `{ns}`"))),
                    _ => c.keep("kept", 1),
                };
                let mut m = meta(step);
                m.extra.insert("k".into(), json!({"ns": ns, "step": step}));
                parent = self.put_meta(&parent, c, m).await;
                out.push(parent.clone());
            }
        }
        out
    }

    async fn copy(&self, source: &CheckpointConfig, target: &CheckpointConfig) {
        let copied = self.saver.copy_thread(&source.thread_id, &target.thread_id).await;
        copied.expect("copy_thread failed");
    }
}

/// What a copied checkpoint must share with its original: everything but the thread id.
fn content(
    t: &CheckpointTuple,
) -> (String, String, Option<String>, Value, BTreeMap<String, Value>, Vec<Write>) {
    let values = t.checkpoint.channel_values.iter();
    let values = values.map(|(c, v)| (c.to_string(), v.decode::<Value>().expect("decode"))).collect();
    let versions = t.checkpoint.channel_versions.iter();
    let versions: BTreeMap<String, String> = versions.map(|(c, v)| (c.to_string(), v.to_string())).collect();
    let shape = json!({"metadata": t.metadata.to_json(), "versions": versions, "ts": t.checkpoint.ts});
    let parent = t.parent_config.as_ref().and_then(|p| p.checkpoint_id.clone());
    (t.config.checkpoint_ns.clone(), t.checkpoint.id.clone(), parent, shape, values, writes(t))
}

/// Every checkpoint is copied, not just the latest, with the same values, versions, metadata and
/// parents, in the same order.
pub async fn copy_thread_copies_every_checkpoint(saver: &dyn DynCheckpointer) {
    let s = Ctx::new(saver);
    let (src, dst) = (s.thread("src"), s.thread("dst"));
    s.chains(&src, 4, &[""]).await;
    s.copy(&src, &dst).await;
    let (source, target) = (s.list(&src, all()).await, s.list(&dst, all()).await);
    assert_eq!(target.len(), 4, "copied checkpoints");
    assert_eq!(ids(&target), ids(&source), "the same ids, newest first");
    for (s_tuple, d_tuple) in source.iter().zip(&target) {
        assert_eq!(content(d_tuple), content(s_tuple));
        assert_eq!(d_tuple.config.thread_id, dst.thread_id);
        let parent = d_tuple.parent_config.as_ref();
        assert!(parent.is_none_or(|p| p.thread_id == dst.thread_id), "the parent is in the target");
    }
}

/// The copies carry their metadata, user keys included.
pub async fn copy_thread_keeps_metadata(saver: &dyn DynCheckpointer) {
    let s = Ctx::new(saver);
    let (src, dst) = (s.thread("src"), s.thread("dst"));
    s.chains(&src, 2, &[""]).await;
    s.copy(&src, &dst).await;
    let metadata = |tuples: Vec<CheckpointTuple>| -> Vec<CheckpointMetadata> {
        tuples.into_iter().map(|t| t.metadata).collect()
    };
    let target = metadata(s.list(&dst, all()).await);
    assert_eq!(target, metadata(s.list(&src, all()).await));
    assert_eq!(target[0].extra["k"], json!({"ns": "", "step": 1}));
}

/// The root namespace and the subgraphs' are all copied, each to its own namespace.
pub async fn copy_thread_keeps_namespaces(saver: &dyn DynCheckpointer) {
    let s = Ctx::new(saver);
    let (src, dst) = (s.thread("src"), s.thread("dst"));
    s.chains(&src, 1, &["", "child:1", "child:1|grandchild:2"]).await;
    s.copy(&src, &dst).await;
    for ns in ["", "child:1", "child:1|grandchild:2"] {
        let (source, target) = (src.clone().with_ns(ns), dst.clone().with_ns(ns));
        let copied = s.list(&target, all()).await;
        assert_eq!(copied.len(), 1, "checkpoints in namespace `{ns}`");
        assert_eq!(content(&copied[0]), content(&s.get(&source).await));
        assert_eq!(item(&copied[0], "kept"), format!("kept in `{ns}`"));
    }
}

/// Pending writes are copied with their checkpoint, of the latest and of older ones.
pub async fn copy_thread_keeps_pending_writes(saver: &dyn DynCheckpointer) {
    let s = Ctx::new(saver);
    let (src, dst) = (s.thread("src"), s.thread("dst"));
    let saved = s.chains(&src, 2, &["", "child:1"]).await;
    s.write(&saved[1], "task", &[("ch", json!("write_val"))]).await;
    s.write(&saved[0], "task-0", &[("__error__", json!("boom")), ("x", json!(1))]).await;
    s.write(&saved[3], "task", &[("ch", json!("child"))]).await;
    s.copy(&src, &dst).await;
    assert_eq!(s.writes(&dst).await, [w("task", "ch", json!("write_val"))]);
    let older = dst.clone().with_checkpoint_id(id(&saved[0]));
    assert_eq!(s.writes(&older).await, [w("task-0", "__error__", json!("boom")), w("task-0", "x", json!(1))]);
    assert_eq!(s.writes(&dst.clone().with_ns("child:1")).await, [w("task", "ch", json!("child"))]);
}

/// The source lists the same checkpoints after the copy, and a checkpoint added to the copy does
/// not appear in it.
pub async fn copy_thread_leaves_the_source_unchanged(saver: &dyn DynCheckpointer) {
    let s = Ctx::new(saver);
    let (src, dst) = (s.thread("src"), s.thread("dst"));
    s.chains(&src, 2, &[""]).await;
    let before: Vec<_> = s.list(&src, all()).await.iter().map(content).collect();
    s.copy(&src, &dst).await;
    let latest = s.get(&dst).await.config;
    let next = s.put(&latest, cp(2).set("a", 3, int(2)).keep("kept", 1)).await;
    assert_eq!(s.get(&dst).await.config, next, "the copy goes on from its latest");
    assert_eq!(item(&s.get(&dst).await, "kept"), "kept in ``");
    let after: Vec<_> = s.list(&src, all()).await.iter().map(content).collect();
    assert_eq!(after, before);
}

/// A source thread with no checkpoint leaves the target empty.
pub async fn copy_thread_of_a_missing_source_copies_nothing(saver: &dyn DynCheckpointer) {
    let s = Ctx::new(saver);
    let (src, dst) = (s.thread("src"), s.thread("dst"));
    s.copy(&src, &dst).await;
    assert_eq!(s.count(&dst, all()).await, 0);
    assert!(s.find(&dst).await.is_none());
}

/// A target that has checkpoints is refused with `Invalid`, and neither thread changes.
pub async fn copy_thread_onto_a_thread_with_checkpoints_is_refused(saver: &dyn DynCheckpointer) {
    let s = Ctx::new(saver);
    let (src, dst) = (s.thread("src"), s.thread("dst"));
    s.chains(&src, 2, &[""]).await;
    s.chains(&dst, 1, &["child:1"]).await;
    let snapshot = |tuples: Vec<CheckpointTuple>| tuples.iter().map(content).collect::<Vec<_>>();
    let source = snapshot(s.list(&src, all()).await);
    let target = snapshot(s.list(&dst.clone().with_ns("child:1"), all()).await);
    for (from, to) in [(&src, &dst), (&src, &src)] {
        let refused = s.saver.copy_thread(&from.thread_id, &to.thread_id).await;
        let err = refused.expect_err("a copy onto a thread with checkpoints");
        assert!(matches!(err, CheckpointError::Invalid(_)), "{err}");
    }
    assert_eq!(snapshot(s.list(&src, all()).await), source);
    assert_eq!(s.count(&dst, all()).await, 0, "nothing copied into the target's root");
    assert_eq!(snapshot(s.list(&dst.clone().with_ns("child:1"), all()).await), target);
}
