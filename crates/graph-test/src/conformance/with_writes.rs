//! Conformance of [`put_with_writes`](graph_core::checkpoint::Checkpointer::put_with_writes): a
//! step's last pending writes and the checkpoint after the step, saved by one call, read back
//! exactly as if `put_writes` and `put` had been called in turn.

use graph_core::checkpoint::{ChannelValue, CheckpointError, DynCheckpointer, WriteBatch};
use serde_json::{json, Value};

use super::{cp, id, int, meta, one, w, Config, Cp, Ctx};

impl Ctx<'_> {
    /// `put_with_writes` of `task`'s `items` against `parent` and of `cp` after it.
    async fn put_with(
        &self,
        parent: &Config,
        task: &str,
        items: &[(&str, Value)],
        cp: Cp,
        expect_latest: bool,
    ) -> Result<Config, CheckpointError> {
        let writes = items.iter().map(|(c, v)| ((*c).to_owned(), ChannelValue::new(v.clone()))).collect();
        let batch =
            WriteBatch { task_id: task.to_owned(), task_path: format!("~__pregel_pull, {task}"), writes };
        let metadata = meta(cp.step);
        self.saver
            .put_with_writes(parent, batch, cp.checkpoint, metadata, cp.new_versions, expect_latest)
            .await
    }
}

/// The writes land on the parent, after any written before them, and the checkpoint becomes the
/// latest with the parent as its parent; with and without the parent check.
pub async fn put_with_writes_stores_both(saver: &dyn DynCheckpointer) {
    let s = Ctx::new(saver);
    for expect_latest in [false, true] {
        let config = s.thread(&format!("t-{expect_latest}"));
        let first = s.put(&config, cp(-1).set("a", 1, one("first"))).await;
        s.write(&first, "task-a", &[("a", json!("early"))]).await;
        let second = cp(0).set("a", 2, one("second")).set("b", 1, int(5));
        let second_id = second.id();
        let saved = s
            .put_with(&first, "task-b", &[("a", json!("last")), ("b", json!(5))], second, expect_latest)
            .await
            .expect("put_with_writes");
        assert_eq!(id(&saved), second_id, "returns the new checkpoint's address");
        let expected =
            [w("task-a", "a", json!("early")), w("task-b", "a", json!("last")), w("task-b", "b", json!(5))];
        assert_eq!(s.writes(&first).await, expected, "expect_latest = {expect_latest}");
        let latest = s.get(&config).await;
        assert_eq!((&latest.config, &latest.parent_config), (&saved, &Some(first.clone())));
        assert_eq!(super::item(&latest, "a"), "second");
        assert_eq!(s.writes(&saved).await, [], "the new checkpoint has no writes");
    }
}

/// Built on a parent that is no longer the latest, with the parent check: a typed conflict, and
/// the checkpoint is not stored.
pub async fn put_with_writes_on_a_moved_parent_conflicts(saver: &dyn DynCheckpointer) {
    let s = Ctx::new(saver);
    let config = s.thread("t");
    let first = s.put(&config, cp(-1).set("a", 1, one("first"))).await;
    let second = s.put(&first, cp(0).set("a", 2, one("second"))).await;
    let stale = cp(1).set("a", 3, one("stale"));
    let stale_id = stale.id();
    let refused = s.put_with(&first, "task", &[("a", json!("w"))], stale, true).await;
    assert!(matches!(refused, Err(CheckpointError::Conflict { .. })), "{refused:?}");
    assert!(s.find(&config.clone().with_checkpoint_id(&stale_id)).await.is_none(), "refused, yet stored");
    assert_eq!(s.get(&config).await.config, second);
}
