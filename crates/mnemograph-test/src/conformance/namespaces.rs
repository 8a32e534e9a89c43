//! Namespaces (subgraphs) of one thread: their checkpoints, writes and listings stay apart.

// The suite's shared helpers (`Ctx`, `cp`, `ver`, ...) and imports.
use super::*;

/// The same checkpoint id and channel version in two namespaces are two separate checkpoints.
pub async fn namespaces_isolate_checkpoints(saver: &dyn DynCheckpointer) {
    let s = Ctx::new(saver);
    let root = s.thread("t");
    let child = root.clone().with_ns("child:1");
    let shared = cp(0);
    let shared_id = shared.id();
    s.put(&root, shared.set("a", 1, one("root"))).await;
    let child_cp = cp(0).with_id(&shared_id).set("a", 1, one("child"));
    s.put(&child, child_cp).await;
    let newer_child = s.put(&child, cp(1).set("a", 2, one("child2"))).await;

    let r = s.get(&root).await;
    assert_eq!(r.config, root.clone().with_checkpoint_id(&shared_id));
    assert_eq!(item(&r, "a"), "root");
    let c = s.get(&child.clone().with_checkpoint_id(shared_id)).await;
    assert_eq!(c.config.checkpoint_ns, "child:1");
    assert_eq!(item(&c, "a"), "child");
    assert_eq!(s.get(&child).await.config, newer_child);
    assert!(s.find(&newer_child.with_ns("")).await.is_none());
    assert_eq!(s.count(&root, all()).await, 1);
}

/// Writes saved against a checkpoint id in one namespace are invisible in another.
pub async fn namespaces_isolate_writes(saver: &dyn DynCheckpointer) {
    let s = Ctx::new(saver);
    let root = s.thread("t");
    let c = cp(0);
    let child_cp = cp(0).with_id(&c.id()).set("a", 1, int(2));
    let rs = s.put(&root, c.set("a", 1, int(1))).await;
    let cs = s.put(&root.with_ns("child:1"), child_cp).await;
    s.write(&rs, "task", &[("a", json!("root"))]).await;
    let child_writes = [("a", json!("child")), ("b", json!("child b"))];
    s.write(&cs, "task", &child_writes).await;
    assert_eq!(s.writes(&rs).await, [w("task", "a", json!("root"))]);
    let expected = child_writes.map(|(c, v)| w("task", c, v));
    assert_eq!(s.writes(&cs).await, expected);
}

/// `list` returns only the checkpoints of the namespace in the config.
pub async fn list_by_namespace(saver: &dyn DynCheckpointer) {
    let s = Ctx::new(saver);
    let root = s.thread("t");
    let child = root.clone().with_ns("child:1");
    let mut root_saved = vec![s.put(&root, cp(0).set("a", 1, int(1))).await];
    root_saved.push(s.put(&root, cp(1).set("a", 2, int(2))).await);
    let mut child_saved = Vec::new();
    for step in 0..3 {
        child_saved.push(s.put(&child, cp(step).set("b", 1, int(step))).await);
    }
    root_saved.reverse();
    child_saved.reverse();
    assert_eq!(s.listed(&root, all()).await, root_saved);
    assert_eq!(s.listed(&child, all()).await, child_saved);
}
