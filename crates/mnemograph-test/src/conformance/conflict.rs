//! Conformance of [`commit`](mnemograph_core::checkpoint::Checkpointer::commit) expecting the latest
//! parent: a checkpoint built on a parent that is no longer the latest is refused, atomically,
//! while a plain `put` on an older parent (time travel) still forks.

use futures_util::future::join_all;
use mnemograph_core::checkpoint::{ChainLink, CheckpointError, Commit, DynCheckpointer, ExpectParent};

use super::{all, cp, id, int, meta, one, Config, Cp, Ctx};

impl Ctx<'_> {
    /// A commit of `cp` on `parent`, expecting it to be the latest, as the saver answered.
    async fn commit_expecting(&self, parent: &Config, cp: Cp) -> Result<Config, CheckpointError> {
        let link = ChainLink::new(cp.checkpoint, meta(cp.step), cp.new_versions);
        self.saver.commit(Commit::new(parent.clone(), vec![link], ExpectParent::Latest)).await
    }
}

/// Asserts `result` is a conflict at `parent` that found `found` as the latest.
fn assert_conflict(result: Result<Config, CheckpointError>, parent: &Config, found: Option<&Config>) {
    match result {
        Err(CheckpointError::Conflict { thread_id, checkpoint_ns, expected, found: latest }) => {
            assert_eq!((&thread_id, &checkpoint_ns), (&parent.thread_id, &parent.checkpoint_ns));
            assert_eq!(expected, parent.checkpoint_id, "expected parent");
            assert_eq!(latest, found.and_then(|f| f.checkpoint_id.clone()), "latest found");
        }
        other => panic!("expected a conflict at {parent:?}, got {other:?}"),
    }
}

/// A checkpoint whose parent is no longer the latest is refused with a typed conflict, and
/// nothing of it is stored; one on the latest is saved. Namespaces are checked separately.
pub async fn commit_expecting_latest_refuses_a_moved_parent(saver: &dyn DynCheckpointer) {
    let s = Ctx::new(saver);
    let config = s.thread("t");
    let first = s.commit_expecting(&config, cp(-1).set("a", 1, one("first"))).await.expect("empty thread");
    let second = s.put(&first, cp(0).set("a", 2, one("second"))).await;
    // Built on `first`, which `second` has replaced as the latest.
    let stale = cp(1).set("a", 3, one("stale")).set("b", 1, int(7));
    let stale_id = stale.id();
    assert_conflict(s.commit_expecting(&first, stale).await, &first, Some(&second));
    // An empty parent on a thread that has checkpoints is stale too.
    assert_conflict(s.commit_expecting(&config, cp(1).set("a", 3, one("x"))).await, &config, Some(&second));
    assert!(s.find(&config.clone().with_checkpoint_id(&stale_id)).await.is_none(), "refused, yet stored");
    let latest = s.get(&config).await;
    assert_eq!(latest.config, second);
    assert_eq!(super::item(&latest, "a"), "second");
    assert!(!latest.checkpoint.channel_values.contains_key("b"));
    assert_eq!(s.count(&config, all()).await, 2);
    // On the latest parent it is saved, and the thread stays one chain.
    let third = s.commit_expecting(&second, cp(1).keep("a", 2)).await.expect("parent is the latest");
    assert_eq!(s.get(&config).await.parent_config, Some(second));
    // Another namespace of the thread has its own latest: empty here.
    let child = config.clone().with_ns("child:1");
    s.commit_expecting(&child, cp(0).set("c", 1, int(1))).await.expect("empty namespace");
    assert_eq!(s.get(&config).await.config, third);
}

/// Time travel: a plain `put` on an older checkpoint forks without a conflict, and the fork
/// becomes the parent that a commit expecting the latest requires.
pub async fn put_on_an_older_parent_forks_without_conflict(saver: &dyn DynCheckpointer) {
    let s = Ctx::new(saver);
    let config = s.thread("t");
    let first = s.put(&config, cp(-1).set("a", 1, one("first"))).await;
    let second = s.put(&first, cp(0).set("a", 2, one("second"))).await;
    let fork = s.put(&first, cp(0).set("a", 3, one("fork"))).await;
    let latest = s.get(&config).await;
    assert_eq!((&latest.config, &latest.parent_config), (&fork, &Some(first.clone())));
    assert_eq!(super::item(&latest, "a"), "fork");
    assert_conflict(s.commit_expecting(&second, cp(1).keep("a", 2)).await, &second, Some(&fork));
    let next = s.commit_expecting(&fork, cp(1).keep("a", 3)).await.expect("the fork is the latest");
    assert_eq!(s.get(&config).await.config, next);
    let ids: Vec<String> = s.ids(&config, all()).await;
    assert_eq!(ids, [id(&next), id(&fork), id(&second), id(&first)]);
}

/// Several writers racing to put the first checkpoint of a new thread, then to put on the same
/// latest checkpoint: each time exactly one wins, the others get a conflict, and the value read
/// back is the winner's (the racers write the same channel version, so a loser's value stored
/// under the winner's would show).
pub async fn racing_commits_exactly_one_wins(saver: &dyn DynCheckpointer) {
    let s = Ctx::new(saver);
    let config = s.thread("t");
    let mut parent = config.clone();
    for round in 0..3_i64 {
        // Reads as many at once as there are racers first: a pooled backend then holds a
        // connection for each, and the racers really run at once instead of the first finishing
        // while the others are still connecting.
        join_all((0..8).map(|_| s.find(&parent))).await;
        let racers: Vec<Cp> =
            (0..8).map(|n| cp(round).set("a", round as u64 + 1, one(&format!("w{n}")))).collect();
        let ids: Vec<String> = racers.iter().map(Cp::id).collect();
        let results = join_all(racers.into_iter().map(|c| s.commit_expecting(&parent, c))).await;
        let mut winners = Vec::new();
        for result in results {
            match result {
                Ok(saved) => winners.push(saved),
                Err(CheckpointError::Conflict { expected, .. }) => assert_eq!(expected, parent.checkpoint_id),
                Err(e) => panic!("round {round}: {e:?}"),
            }
        }
        assert_eq!(winners.len(), 1, "round {round}: {winners:?}");
        let winner = winners.pop().expect("one winner");
        let latest = s.get(&config).await;
        assert_eq!(latest.config, winner);
        assert_eq!(latest.parent_config, parent.checkpoint_id.is_some().then(|| parent.clone()));
        let n = ids.iter().position(|i| *i == id(&winner)).expect("a racer's id");
        assert_eq!(super::item(&latest, "a"), format!("w{n}"));
        parent = winner;
    }
    assert_eq!(s.count(&config, all()).await, 3);
}
