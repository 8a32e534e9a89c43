//! Conformance of [`commit`](mnemograph_core::checkpoint::Checkpointer::commit): checkpoints, each the
//! child of the one before, and the pending writes each carries for its parent, saved by one call,
//! read back exactly as if `put_writes` and `put` had been called in turn.

use mnemograph_core::checkpoint::{
    ChainLink, CheckpointError, Commit, DynCheckpointer, ExpectParent, WriteBatch,
};
use mnemograph_core::value::ChannelValue;
use serde_json::{json, Value};

use super::{cp, id, int, meta, one, w, Config, Cp, Ctx};

/// A link of `cp`, carrying `task`'s `items` as writes for its parent (none when `task` is empty).
fn link(task: &str, items: &[(&str, Value)], cp: Cp) -> ChainLink {
    let writes = (!task.is_empty()).then(|| WriteBatch {
        task_id: task.to_owned(),
        task_path: format!("~__pregel_pull, {task}"),
        writes: items.iter().map(|(c, v)| ((*c).to_owned(), ChannelValue::new(v.clone()))).collect(),
    });
    ChainLink { writes, metadata: meta(cp.step), checkpoint: cp.checkpoint, new_versions: cp.new_versions }
}

impl Ctx<'_> {
    async fn chain(
        &self,
        parent: &Config,
        links: Vec<ChainLink>,
        expect: bool,
    ) -> Result<Config, CheckpointError> {
        let expect = if expect { ExpectParent::Latest } else { ExpectParent::Any };
        self.saver.commit(Commit::new(parent.clone(), links, expect)).await
    }
}

/// One link: the writes land on the parent, after any written before them, and the checkpoint
/// becomes the latest with the parent as its parent; with and without the parent check.
pub async fn commit_stores_writes_then_checkpoint(saver: &dyn DynCheckpointer) {
    let s = Ctx::new(saver);
    for expect_latest in [false, true] {
        let config = s.thread(&format!("t-{expect_latest}"));
        let first = s.put(&config, cp(-1).set("a", 1, one("first"))).await;
        s.write(&first, "task-a", &[("a", json!("early"))]).await;
        let second = cp(0).set("a", 2, one("second")).set("b", 1, int(5));
        let second_id = second.id();
        let items = [("a", json!("last")), ("b", json!(5))];
        let saved =
            s.chain(&first, vec![link("task-b", &items, second)], expect_latest).await.expect("commit");
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

/// Two links on an empty thread (an input checkpoint and the step that routes it): each is the
/// parent of the next, the second's writes are the first's pending writes, and values carried
/// over from the first are read back in the second.
pub async fn commit_links_each_checkpoint_to_the_one_before(saver: &dyn DynCheckpointer) {
    let s = Ctx::new(saver);
    let config = s.thread("t");
    let input = cp(-1).set("__start__", 1, one("hi"));
    let input_id = input.id();
    let routed = cp(0).set("a", 1, one("hi")).same("__start__", 1, one("hi"));
    let routed_id = routed.id();
    let chain = vec![link("", &[], input), link("start-task", &[("a", json!("hi"))], routed)];
    let saved = s.chain(&config, chain, true).await.expect("empty thread");
    assert_eq!(id(&saved), routed_id);
    let first = config.clone().with_checkpoint_id(&input_id);
    assert_eq!(s.get(&first).await.parent_config, None);
    assert_eq!(s.writes(&first).await, [w("start-task", "a", json!("hi"))]);
    let latest = s.get(&config).await;
    assert_eq!((&latest.config, &latest.parent_config), (&saved, &Some(first)));
    assert_eq!(super::item(&latest, "a"), "hi");
    assert_eq!(super::item(&latest, "__start__"), "hi", "a value kept from the first link");
    assert_eq!(s.ids(&config, super::all()).await, [routed_id, input_id]);
    assert!(s.chain(&config, Vec::new(), false).await.is_err(), "an empty chain is invalid");
}

/// Built on a parent that is no longer the latest, with the parent check: a typed conflict, and
/// no checkpoint of the chain is stored.
pub async fn commit_on_a_moved_parent_conflicts(saver: &dyn DynCheckpointer) {
    let s = Ctx::new(saver);
    let config = s.thread("t");
    let first = s.put(&config, cp(-1).set("a", 1, one("first"))).await;
    let second = s.put(&first, cp(0).set("a", 2, one("second"))).await;
    let (stale, staler) = (cp(1).set("a", 3, one("stale")), cp(2).set("a", 4, one("staler")));
    let ids = [stale.id(), staler.id()];
    let chain = vec![link("task", &[("a", json!("w"))], stale), link("", &[], staler)];
    let refused = s.chain(&first, chain, true).await;
    assert!(matches!(refused, Err(CheckpointError::Conflict { .. })), "{refused:?}");
    for id in ids {
        assert!(s.find(&config.clone().with_checkpoint_id(&id)).await.is_none(), "refused, yet stored");
    }
    assert_eq!(s.get(&config).await.config, second);
}

/// Ids, names and values made of SQL's and key syntaxes' special characters (quotes, backslash,
/// `?`, `;`, comment openers, a NUL) are stored and read back as they are, through a commit
/// with and without the parent check: a saver that writes values into statement text must not
/// let one of them be read as syntax.
pub async fn commit_keeps_special_characters_verbatim(saver: &dyn DynCheckpointer) {
    let s = Ctx::new(saver);
    let nasty = "q'uo\"te`s \\ ? ; -- /* */ %_ \0 end";
    for expect_latest in [false, true] {
        let config = s.thread(&format!("{nasty}-{expect_latest}")).with_ns(format!("ns:{nasty}"));
        let first = s.put(&config, cp(-1).set(nasty, 1, one(nasty))).await;
        let items = [(nasty, json!(nasty)), ("b", json!({ nasty: [nasty] }))];
        let second = cp(0).set(nasty, 2, one(&format!("{nasty}-2"))).set("b", 1, int(7));
        let saved = s.chain(&first, vec![link(nasty, &items, second)], expect_latest).await.expect("commit");
        let latest = s.get(&config).await;
        assert_eq!((&latest.config, &latest.parent_config), (&saved, &Some(first.clone())));
        assert_eq!(super::item(&latest, nasty), format!("{nasty}-2"), "expect_latest = {expect_latest}");
        let expected = [w(nasty, nasty, json!(nasty)), w(nasty, "b", json!({ nasty: [nasty] }))];
        assert_eq!(s.writes(&first).await, expected, "expect_latest = {expect_latest}");
        assert_eq!(s.listed(&config, super::all()).await, [saved, first]);
    }
}
