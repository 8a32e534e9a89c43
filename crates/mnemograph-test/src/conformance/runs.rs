//! `delete_for_runs`: the checkpoints whose metadata `run_id` is listed go, with their writes,
//! in every thread and namespace; other runs' checkpoints stay.

// The suite's shared helpers (`Ctx`, `cp`, `ver`, ...) and imports.
use super::*;

impl Ctx<'_> {
    /// Saves a checkpoint of run `run` at `config` (its parent when it has a checkpoint id).
    async fn put_run(&self, config: &CheckpointConfig, step: i64, run: &str) -> CheckpointConfig {
        let mut m = meta(step);
        m.extra.insert("run_id".into(), json!(run));
        self.put_meta(config, cp(step).set("a", step as u64 + 2, one(&format!("{run}-{step}"))), m).await
    }

    /// Deletes the checkpoints of `runs`.
    async fn delete_runs(&self, runs: &[&str]) {
        let runs: Vec<String> = runs.iter().map(|r| (*r).to_owned()).collect();
        self.saver.delete_for_runs(&runs).await.expect("delete_for_runs failed");
    }

    /// The run ids of the checkpoints listed at `config`.
    async fn runs(&self, config: &CheckpointConfig) -> BTreeSet<String> {
        let listed = self.list(config, all()).await;
        listed.iter().filter_map(|t| t.metadata.run_id().map(str::to_owned)).collect()
    }

    /// A run id no other test uses.
    fn run(&self, label: &str) -> String {
        format!("{}-run-{label}", self.prefix)
    }
}

/// The set of `runs`, owned.
fn set(runs: &[&str]) -> BTreeSet<String> {
    runs.iter().map(|r| (*r).to_owned()).collect()
}

/// Deleting one run removes its checkpoint and leaves the other run's.
pub async fn delete_for_runs_removes_one_run(saver: &dyn DynCheckpointer) {
    let s = Ctx::new(saver);
    let config = s.thread("t");
    let (run1, run2) = (s.run("1"), s.run("2"));
    let first = s.put_run(&config, 0, &run1).await;
    s.put_run(&first, 1, &run2).await;
    assert_eq!(s.runs(&config).await, set(&[&run1, &run2]), "before the delete");
    s.delete_runs(&[&run1]).await;
    assert_eq!(s.runs(&config).await, set(&[&run2]));
}

/// Deleting several runs at once removes the checkpoints of each.
pub async fn delete_for_runs_removes_several_runs(saver: &dyn DynCheckpointer) {
    let s = Ctx::new(saver);
    let config = s.thread("t");
    let (run1, run2, run3) = (s.run("1"), s.run("2"), s.run("3"));
    let c1 = s.put_run(&config, 0, &run1).await;
    let c2 = s.put_run(&c1, 1, &run2).await;
    s.put_run(&c2, 2, &run3).await;
    assert_eq!(s.runs(&config).await, set(&[&run1, &run2, &run3]), "before the delete");
    s.delete_runs(&[&run1, &run2]).await;
    assert_eq!(s.runs(&config).await, set(&[&run3]));
}

/// A run not named is untouched, whichever checkpoint is the latest.
pub async fn delete_for_runs_leaves_other_runs(saver: &dyn DynCheckpointer) {
    let s = Ctx::new(saver);
    let config = s.thread("t");
    let (keep, doomed) = (s.run("keep"), s.run("delete"));
    let kept = s.put_run(&config, 0, &keep).await;
    s.put_run(&config, 1, &doomed).await;
    assert_eq!(s.runs(&config).await, set(&[&keep, &doomed]), "before the delete");
    s.delete_runs(&[&doomed]).await;
    assert_eq!(s.runs(&config).await, set(&[&keep]));
    // The deleted checkpoint was the latest: the one before is the latest now, with its values.
    let latest = s.get(&config).await;
    assert_eq!(latest.config, kept);
    assert_eq!(item(&latest, "a"), format!("{keep}-0"));
}

/// A deleted checkpoint's pending writes go with it.
pub async fn delete_for_runs_removes_writes(saver: &dyn DynCheckpointer) {
    let s = Ctx::new(saver);
    let config = s.thread("t");
    let run = s.run("1");
    let stored = s.put_run(&config, 0, &run).await;
    s.write(&stored, "task", &[("ch", json!("val"))]).await;
    assert_eq!(s.writes(&stored).await.len(), 1, "before the delete");
    s.delete_runs(&[&run]).await;
    assert!(s.find(&stored).await.is_none());
    assert!(s.find(&config).await.is_none());
    // A checkpoint saved again under the same id starts without the old writes.
    let again = cp(0).with_id(&id(&stored)).set("a", 9, one("again"));
    let stored = s.put(&config, again).await;
    assert_eq!(s.writes(&stored).await, []);
}

/// An empty list of runs is no error and deletes nothing.
pub async fn delete_for_runs_of_no_runs_is_a_no_op(saver: &dyn DynCheckpointer) {
    let s = Ctx::new(saver);
    let config = s.thread("t");
    let run = s.run("1");
    s.put_run(&config, 0, &run).await;
    s.delete_runs(&[]).await;
    assert_eq!(s.runs(&config).await, set(&[&run]));
}

/// Run ids no checkpoint carries are no error.
pub async fn delete_for_runs_of_unknown_runs_is_a_no_op(saver: &dyn DynCheckpointer) {
    let s = Ctx::new(saver);
    let config = s.thread("t");
    let run = s.run("1");
    s.put_run(&config, 0, &run).await;
    s.delete_runs(&[&s.run("missing")]).await;
    assert_eq!(s.runs(&config).await, set(&[&run]));
}

/// A run's checkpoints go from every namespace and every thread it wrote to.
pub async fn delete_for_runs_covers_every_namespace(saver: &dyn DynCheckpointer) {
    let s = Ctx::new(saver);
    let root = s.thread("t");
    let child = root.clone().with_ns("child:1");
    let other = s.thread("u");
    let (run, keep) = (s.run("1"), s.run("keep"));
    for config in [&root, &child, &other] {
        s.put_run(config, 0, &run).await;
        assert_eq!(s.runs(config).await, set(&[&run]), "before the delete");
    }
    s.put_run(&child, 1, &keep).await;
    s.delete_runs(&[&run]).await;
    assert_eq!(s.runs(&root).await, set(&[]));
    assert_eq!(s.runs(&child).await, set(&[&keep]));
    assert_eq!(s.runs(&other).await, set(&[]));
}
