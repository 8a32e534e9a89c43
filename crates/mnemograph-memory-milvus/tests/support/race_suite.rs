//! Concurrent retire, restore and delete on the same memories through clones of one memory value:
//! the per-user lock must make them behave as if run one after the other (tests/retire_race.rs
//! runs these on both backends, on a multi-threaded runtime).

use std::collections::HashMap;

use mnemograph_memory::{Memory, MemoryRecord, NewMemory, Retire, Retirement};
use tokio::task::JoinHandle;

/// Concurrent callers per memory.
const CALLERS: i64 = 6;
/// The `superseded_by` of caller `k` is `BASE + k`, so a trail tells which caller wrote it.
const BASE: i64 = 9_000;

fn retirement(id: i64, k: i64) -> Retirement {
    Retirement::new(id, BASE + k, 1_000 + k, format!("job {k}"))
}

/// `n` memories of `user` in `session`, oldest first.
async fn seed<M: Memory>(m: &M, user: &str, session: &str, n: usize) -> Vec<i64> {
    let turns = (0..n)
        .map(|i| NewMemory::turn(user, session, &format!("fact number {i}"), "Noted.").created_at(1_000))
        .collect();
    m.save(turns).await.expect("save")
}

/// Every memory of the session by id, retired or not.
async fn by_id<M: Memory>(m: &M, user: &str, session: &str) -> HashMap<i64, MemoryRecord> {
    let records = m.session_records(user, session).await.expect("session records");
    records.into_iter().map(|r| (r.id, r)).collect()
}

/// Spawns `retire` of memory `id` by caller `k` on a clone.
fn spawn_retire<M: Retire + Clone>(m: &M, id: i64, k: i64) -> JoinHandle<(i64, Vec<i64>)> {
    let m = m.clone();
    tokio::spawn(async move { (k, m.retire("ann", &[retirement(id, k)]).await.expect("retire")) })
}

/// Asserts that the memory carries exactly caller `k`'s trail.
fn assert_trail(record: &MemoryRecord, k: i64) {
    assert_eq!(record.superseded_by(), Some(BASE + k), "{record:?}");
    assert_eq!(record.metadata["superseded_reason"], format!("job {k}"), "{record:?}");
    assert_eq!(record.metadata["superseded_at"], 1_000 + k, "{record:?}");
    assert_eq!(record.metadata["type"], "dialogue_turn", "own metadata kept: {record:?}");
}

/// Several callers retire the same memory at once, each with another `superseded_by`: exactly one
/// is told it retired the memory, and the memory carries that caller's trail, whole. Without the
/// lock, callers that read the memory before any of them wrote all report success and the last
/// write silently replaces the others' trails.
pub async fn concurrent_retirements_keep_exactly_one_trail<M: Retire + Clone>(m: &M, memories: usize) {
    let ids = seed(m, "ann", "race", memories).await;
    let mut tasks = Vec::new();
    for &id in &ids {
        for k in 0..CALLERS {
            tasks.push((id, spawn_retire(m, id, k)));
        }
    }
    let mut winners: HashMap<i64, Vec<i64>> = HashMap::new();
    for (id, task) in tasks {
        let (k, done) = task.await.expect("task");
        assert!(done.is_empty() || done == [id], "{done:?}");
        if !done.is_empty() {
            winners.entry(id).or_default().push(k);
        }
    }
    let stored = by_id(m, "ann", "race").await;
    for id in ids {
        let won = winners.get(&id).cloned().unwrap_or_default();
        assert_eq!(won.len(), 1, "memory {id}: callers {won:?} were all told they retired it");
        assert_trail(&stored[&id], won[0]);
    }
}

/// A restore races two retirements of a memory retired before: the end state is one that running
/// the three calls in some order gives. The restore always finds the memory retired; at most one
/// retirement wins, after it, and the memory then carries that trail; otherwise it is live again.
pub async fn a_restore_racing_retirements_ends_consistent<M: Retire + Clone>(m: &M, memories: usize) {
    let ids = seed(m, "ann", "restore", memories).await;
    let first: Vec<Retirement> = ids.iter().map(|&id| Retirement::new(id, 1, 1, "before")).collect();
    assert_eq!(m.retire("ann", &first).await.unwrap(), ids);
    let mut tasks = Vec::new();
    for &id in &ids {
        let clone = m.clone();
        let restore = tokio::spawn(async move { clone.restore("ann", &[id]).await.expect("restore") });
        tasks.push((id, restore, [spawn_retire(m, id, 1), spawn_retire(m, id, 2)]));
    }
    let mut outcome = Vec::new();
    for (id, restore, retires) in tasks {
        let restored = restore.await.expect("task");
        let mut won = Vec::new();
        for task in retires {
            let (k, done) = task.await.expect("task");
            if !done.is_empty() {
                won.push(k);
            }
        }
        outcome.push((id, restored, won));
    }
    let stored = by_id(m, "ann", "restore").await;
    for (id, restored, won) in outcome {
        assert_eq!(restored, [id], "the only restore always finds the memory retired");
        match won.as_slice() {
            [] => {
                assert!(!stored[&id].is_retired(), "nobody retired it after the restore: {:?}", stored[&id])
            }
            [k] => assert_trail(&stored[&id], *k),
            _ => panic!("memory {id}: retirements {won:?} both won"),
        }
    }
}

/// A delete racing retirements is never undone: afterwards the memory is gone, whatever ran
/// first. Without the lock, a retirement that read the memory before the delete writes it back.
pub async fn a_delete_racing_retirements_is_never_undone<M: Retire + Clone>(m: &M, memories: usize) {
    let ids = seed(m, "ann", "delete", memories).await;
    let mut tasks = Vec::new();
    for &id in &ids {
        let clone = m.clone();
        let delete = tokio::spawn(async move { clone.delete("ann", &[id]).await.expect("delete") });
        tasks.push((delete, [spawn_retire(m, id, 1), spawn_retire(m, id, 2)]));
    }
    for (delete, retires) in tasks {
        delete.await.expect("task");
        for task in retires {
            task.await.expect("task");
        }
    }
    let left = by_id(m, "ann", "delete").await;
    assert!(left.is_empty(), "deleted memories came back: {:?}", left.keys().collect::<Vec<_>>());
}
