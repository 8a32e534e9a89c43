//! Pending writes: idempotent per `(task_id, idx)`, special channels upserted, kept per checkpoint and returned in LangGraph's order.

// The suite's shared helpers (`Ctx`, `cp`, `ver`, ...) and imports.
use super::*;

/// Saving the same `(task_id, idx)` again keeps the first value.
pub async fn put_writes_is_idempotent(saver: &dyn DynCheckpointer) {
    let s = Ctx::new(saver);
    let c = s.put(&s.thread("t"), cp(0).set("a", 1, int(1))).await;
    s.write(&c, "task-1", &[("a", json!(1)), ("b", json!(2))]).await;
    s.write(&c, "task-1", &[("a", json!(10)), ("b", json!(20))]).await;
    s.write(&c, "task-1", &[("a", json!(100))]).await;
    s.write(&c, "task-2", &[("a", json!(3))]).await;
    let expected = [w("task-1", "a", json!(1)), w("task-1", "b", json!(2)), w("task-2", "a", json!(3))];
    assert_eq!(s.writes(&c).await, expected);
}

/// `__error__` and `__interrupt__` writes round-trip, and a second write replaces the first.
pub async fn special_channel_writes_upsert(saver: &dyn DynCheckpointer) {
    let s = Ctx::new(saver);
    let c = s.put(&s.thread("t"), cp(0).set("a", 1, int(1))).await;
    for (round, error) in [(1, "boom"), (2, "boom again")] {
        let interrupt = json!([{"value": "approve?", "id": "abc", "round": round}]);
        s.write(&c, "task", &[("__error__", json!(error))]).await;
        s.write(&c, "task", &[("__interrupt__", interrupt.clone())]).await;
        // `(task_id, idx)` order: `__interrupt__` is idx -3, `__error__` -1.
        let expected = [w("task", "__interrupt__", interrupt), w("task", "__error__", json!(error))];
        assert_eq!(s.writes(&c).await, expected, "round {round}");
    }
}

/// Writes are attached to the checkpoint id they were saved against, not to its successors.
pub async fn writes_belong_to_one_checkpoint(saver: &dyn DynCheckpointer) {
    let s = Ctx::new(saver);
    let config = s.thread("t");
    let c1 = s.put(&config, cp(0).set("a", 1, int(1))).await;
    s.write(&c1, "task", &[("a", json!("w1"))]).await;
    let c2 = s.put(&c1, cp(1).set("a", 2, int(2))).await;
    assert_eq!(s.writes(&config).await, [], "the new checkpoint has no writes");
    s.write(&c2, "task", &[("a", json!("w2")), ("b", json!("w2b"))]).await;
    assert_eq!(s.writes(&c1).await, [w("task", "a", json!("w1"))]);
    let expected = [w("task", "a", json!("w2")), w("task", "b", json!("w2b"))];
    assert_eq!(s.writes(&c2).await, expected);
}

/// Pending writes come back ordered by `(task_id, idx)`; special channels have negative indexes.
pub async fn pending_writes_ordered_by_task_and_idx(saver: &dyn DynCheckpointer) {
    let s = Ctx::new(saver);
    let c = s.put(&s.thread("t"), cp(0).set("a", 1, int(1))).await;
    let b_writes = [("x", json!(1)), ("y", json!(2)), ("z", json!(3))];
    s.write(&c, "task-b", &b_writes).await;
    s.write(&c, "task-a", &[("x", json!(4))]).await;
    s.write(&c, "task-a", &[("__error__", json!("e"))]).await;
    let expected = [
        w("task-a", "__error__", json!("e")),
        w("task-a", "x", json!(4)),
        w("task-b", "x", json!(1)),
        w("task-b", "y", json!(2)),
        w("task-b", "z", json!(3)),
    ];
    assert_eq!(s.writes(&c).await, expected);
}
