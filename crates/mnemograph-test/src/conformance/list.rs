//! `list`: order, full tuples, `before`, `limit`, metadata filters, all threads, a pinned id.

// The suite's shared helpers (`Ctx`, `cp`, `ver`, ...) and imports.
use super::*;

/// `list` returns newest first by id, whatever the put order.
pub async fn list_newest_first(saver: &dyn DynCheckpointer) {
    let s = Ctx::new(saver);
    let config = s.thread("t");
    let mut slots: Vec<Option<Cp>> = (0..5).map(|step| Some(cp(step))).collect();
    let mut expected: Vec<String> = slots.iter().flatten().map(Cp::id).collect();
    expected.reverse();
    for step in [2, 0, 4, 1, 3] {
        let c = slots[step].take().expect("each checkpoint is saved once");
        s.put(&config, c.set("a", step as u64 + 1, int(step as i64))).await;
    }
    let listed = s.list(&config, all()).await;
    assert_eq!(ids(&listed), expected);
    let steps: Vec<i64> = listed.iter().map(|t| t.metadata.step).collect();
    assert_eq!(steps, [4, 3, 2, 1, 0]);
    let addressed = |t: &CheckpointTuple| t.config.checkpoint_id == Some(t.checkpoint.id.clone());
    assert!(listed.iter().all(addressed));
}

/// Listed tuples are complete: config, values, metadata, parent and pending writes.
pub async fn list_returns_full_tuples(saver: &dyn DynCheckpointer) {
    let s = Ctx::new(saver);
    let config = s.thread("t");
    let c1 = s.put(&config, cp(0).set("a", 1, one("a1"))).await;
    let mut m = meta(1);
    m.extra.insert("k".into(), json!("v"));
    let second = cp(1).keep("a", 1).set("b", 1, one("b1"));
    let c2 = s.put_meta(&c1, second, m.clone()).await;
    s.write(&c2, "task", &[("a", json!("w"))]).await;
    let listed = s.list(&config, all()).await;
    assert_eq!(listed.len(), 2);
    let (newest, oldest) = (&listed[0], &listed[1]);
    assert_eq!(newest.config, c2);
    assert_eq!(newest.parent_config, Some(c1.clone()));
    assert_eq!(newest.metadata, m);
    assert_eq!([item(newest, "a"), item(newest, "b")], ["a1", "b1"]);
    assert_eq!(writes(newest), [w("task", "a", json!("w"))]);
    assert_eq!((&oldest.config, &oldest.parent_config), (&c1, &None));
    assert_eq!(oldest.metadata, meta(0));
    assert_eq!(channels(oldest), ["a"]);
    assert_eq!(writes(oldest), []);
}

/// `before` keeps only ids strictly smaller than the given one.
pub async fn list_before(saver: &dyn DynCheckpointer) {
    let s = Ctx::new(saver);
    let config = s.thread("t");
    let h = s.history(&config).await;
    let listed = s.listed(&config, all().before(id(&h[2]))).await;
    assert_eq!(listed, [h[1].clone(), h[0].clone()]);
}

/// `limit` returns the newest `limit` checkpoints; 0 returns none.
pub async fn list_limit(saver: &dyn DynCheckpointer) {
    let s = Ctx::new(saver);
    let config = s.thread("t");
    let h = s.history(&config).await;
    let listed = s.listed(&config, all().limit(2)).await;
    assert_eq!(listed, [h[4].clone(), h[3].clone()]);
    assert_eq!(s.count(&config, all().limit(10)).await, 5);
    assert_eq!(s.count(&config, all().limit(0)).await, 0);
}

/// `limit` applies after `before`.
pub async fn list_limit_and_before(saver: &dyn DynCheckpointer) {
    let s = Ctx::new(saver);
    let config = s.thread("t");
    let h = s.history(&config).await;
    let listed = s.listed(&config, all().before(id(&h[3])).limit(2)).await;
    assert_eq!(listed, [h[2].clone(), h[1].clone()]);
}

/// A filter on `source` keeps only matching checkpoints.
pub async fn list_filter_one_key(saver: &dyn DynCheckpointer) {
    let s = Ctx::new(saver);
    let config = s.thread("t");
    let h = s.history(&config).await;
    let inputs = s.list(&config, filter(json!({"source": "input"}))).await;
    assert_eq!(ids(&inputs), [id(&h[0])]);
    assert_eq!(inputs[0].metadata.source, Input);
    let loops = s.ids(&config, filter(json!({"source": "loop"}))).await;
    assert_eq!(loops, [id(&h[4]), id(&h[3]), id(&h[2]), id(&h[1])]);
}

/// Every key of a filter must match.
pub async fn list_filter_several_keys(saver: &dyn DynCheckpointer) {
    let s = Ctx::new(saver);
    let config = s.thread("t");
    let h = s.history(&config).await;
    let second = json!({"source": "loop", "step": 1, "run": "second"});
    assert_eq!(s.ids(&config, filter(second)).await, [id(&h[2])]);
    let first = json!({"source": "loop", "run": "first"});
    assert_eq!(s.ids(&config, filter(first)).await, [id(&h[1])]);
    let none = json!({"source": "input", "step": 1});
    assert_eq!(s.count(&config, filter(none)).await, 0);
}

/// A filter on a user key works like one on a built-in key, and combines with `limit`.
pub async fn list_filter_custom_key(saver: &dyn DynCheckpointer) {
    let s = Ctx::new(saver);
    let config = s.thread("t");
    let h = s.history(&config).await;
    let second = s.ids(&config, filter(json!({"run": "second"}))).await;
    assert_eq!(second, [id(&h[4]), id(&h[3]), id(&h[2])]);
    let first = s.ids(&config, filter(json!({"run": "first"})).limit(1)).await;
    assert_eq!(first, [id(&h[1])]);
    let third = filter(json!({"run": "third"}));
    assert_eq!(s.count(&config, third).await, 0);
}

/// A filter on `step` matches the step number, including -1.
pub async fn list_filter_step(saver: &dyn DynCheckpointer) {
    let s = Ctx::new(saver);
    let config = s.thread("t");
    let h = s.history(&config).await;
    for (saved, step) in h.iter().zip(-1_i64..) {
        let listed = s.list(&config, filter(json!({ "step": step }))).await;
        assert_eq!(ids(&listed), [id(saved)], "step {step}");
        assert_eq!(listed[0].metadata.step, step);
    }
}

/// Unknown threads and namespaces, unmatched filters and a `before` at the oldest id list nothing.
pub async fn list_empty_results(saver: &dyn DynCheckpointer) {
    let s = Ctx::new(saver);
    let config = s.thread("t");
    assert_eq!(s.count(&config, all()).await, 0);
    let h = s.history(&config).await;
    assert_eq!(s.count(&s.thread("other"), all()).await, 0);
    assert_eq!(s.count(&config.clone().with_ns("child:1"), all()).await, 0);
    assert_eq!(s.count(&config, filter(json!({"step": 99}))).await, 0);
    assert_eq!(s.count(&config, filter(json!({"source": "fork"}))).await, 0);
    assert_eq!(s.count(&config, all().before(id(&h[0]))).await, 0);
}

/// `list(None, ..)` returns the checkpoints of every thread and namespace, newest first.
pub async fn list_all_threads(saver: &dyn DynCheckpointer) {
    let s = Ctx::new(saver);
    let a = s.put(&s.thread("a"), cp(0).set("x", 1, int(1))).await;
    let b = s.put(&s.thread("b"), cp(0).set("x", 1, int(2))).await;
    let a_child = s.thread("a").with_ns("child:1");
    let a_child = s.put(&a_child, cp(1).set("x", 1, int(3))).await;
    let listed = s.list_at(None, all()).await;
    // A shared server may hold other tests' threads: look only at this test's.
    let mine = listed.iter().filter(|t| t.config.thread_id.starts_with(&s.prefix));
    let mine: Vec<CheckpointConfig> = mine.map(|t| t.config.clone()).collect();
    assert_eq!(mine, [a_child, b, a]);
    let listed = ids(&listed);
    let newest_first = listed.windows(2).all(|pair| pair[0] >= pair[1]);
    assert!(newest_first, "not newest first: {listed:?}");
}

/// A config pinned to a checkpoint id lists only that checkpoint.
pub async fn list_pinned_checkpoint_id(saver: &dyn DynCheckpointer) {
    let s = Ctx::new(saver);
    let h = s.history(&s.thread("t")).await;
    assert_eq!(s.listed(&h[2], all()).await, [h[2].clone()]);
}
