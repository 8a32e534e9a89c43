//! Several connections, and several processes, writing different threads of one file at once:
//! every checkpoint each acknowledged is there, chained to its parent, and the file is sound.

mod support;

use std::process::Command;

use mnemograph_checkpoint::checkpoint::backend::{checkpoint_id, next_version, now_iso};
use mnemograph_checkpoint::checkpoint::{
    ChainLink, Checkpoint, CheckpointConfig, CheckpointMetadata, CheckpointSource, Checkpointer, Commit,
    ExpectParent, ListOptions, WriteBatch,
};
use mnemograph_checkpoint::value::ChannelValue;
use mnemograph_checkpoint_sqlite::{SqliteCheckpointer, SqliteStore};
use support::fresh_path;

/// Checkpoints each writer stores.
const STEPS: i64 = 25;

/// Writes `STEPS` checkpoints on `thread`, each committed expecting its parent to be the latest
/// and carrying a pending write for it, as the engine stores a run.
async fn write_thread(saver: &SqliteCheckpointer, thread: &str) {
    let mut parent = CheckpointConfig::thread(thread);
    for step in 0..STEPS {
        let mut cp = Checkpoint { v: 4, id: checkpoint_id(step), ts: now_iso(), ..Checkpoint::default() };
        let log: Vec<String> = (0..=step).map(|i| format!("{thread}:{i}")).collect();
        cp.channel_values.insert("log".into(), ChannelValue::new(log));
        cp.channel_versions.insert("log".into(), next_version(None).into());
        let new_versions = cp.channel_versions.clone();
        let mut link =
            ChainLink::new(cp, CheckpointMetadata::new(CheckpointSource::Loop, step), new_versions);
        if parent.checkpoint_id.is_some() {
            let writes = vec![("log".to_owned(), ChannelValue::new(vec![format!("{thread}:{step}")]))];
            link = link.with_writes(WriteBatch {
                task_id: format!("task-{step}"),
                task_path: String::new(),
                writes,
            });
        }
        let commit = Commit::new(parent.clone(), vec![link], ExpectParent::Latest);
        parent = saver.commit(commit).await.unwrap_or_else(|e| panic!("{thread} step {step}: {e:?}"));
    }
}

/// What every writer must have left: `STEPS` checkpoints, newest first, each the child of the
/// next, each but the first with its parent's pending write.
async fn check_thread(saver: &SqliteCheckpointer, thread: &str) {
    let history = saver.list(Some(&CheckpointConfig::thread(thread)), ListOptions::new()).await.unwrap();
    assert_eq!(history.len(), STEPS as usize, "{thread}");
    for (newer, older) in history.iter().zip(&history[1..]) {
        assert_eq!(newer.parent_config.as_ref(), Some(&older.config), "{thread}");
        assert_eq!(newer.metadata.step, older.metadata.step + 1);
    }
    let latest = &history[0].checkpoint.channel_values["log"];
    assert_eq!(latest.decode::<Vec<String>>().unwrap().len(), STEPS as usize);
    let with_writes = history.iter().filter(|t| t.pending_writes.len() == 1).count();
    assert_eq!(with_writes, STEPS as usize - 1, "{thread}: the pending writes of every parent");
}

async fn integrity(saver: &SqliteCheckpointer) -> String {
    sqlx::query_scalar("PRAGMA integrity_check").fetch_one(saver.pool()).await.unwrap()
}

/// Savers and stores opened and dropped over and over on new files by several tasks at once, as
/// short-lived processes do. SQLite refuses some of these opens at once instead of waiting (a
/// new file switching to WAL, the last connection of a pool folding the log back into the file),
/// which opening absorbs: every one opens and finds the tables.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn savers_open_and_close_one_file_at_once() {
    for file in 0..12 {
        let path = fresh_path(&format!("open-at-once-{file}"));
        let target = path.to_str().expect("a UTF-8 path").to_owned();
        let workers: Vec<_> =
            (0..6).map(|worker| tokio::spawn(open_and_close(target.clone(), worker))).collect();
        for worker in workers {
            let opened = worker.await.expect("the worker ran");
            opened.unwrap_or_else(|e| panic!("file {file}: {e:?}"));
        }
    }
}

/// Opens `target` and drops it five times: a store for worker 0, savers that list for the others.
async fn open_and_close(target: String, worker: usize) -> mnemograph_checkpoint_sqlite::Result<()> {
    for _ in 0..5 {
        if worker == 0 {
            drop(SqliteStore::builder().connect(&target).await?);
        } else {
            let saver = SqliteCheckpointer::connect(&target).await?;
            let listed = saver.list(None, ListOptions::default()).await;
            assert!(listed.expect("list on a just-opened file").is_empty());
        }
    }
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn connections_write_one_file_at_once() {
    let path = fresh_path("connections");
    let mut writers = Vec::new();
    for i in 0..6 {
        // A pool of its own for each writer, as separate services would have.
        let saver = SqliteCheckpointer::connect(path.to_str().unwrap()).await.unwrap();
        writers.push(tokio::spawn(async move { write_thread(&saver, &format!("conn-{i}")).await }));
    }
    for writer in writers {
        writer.await.expect("a writer panicked");
    }
    let saver = SqliteCheckpointer::connect(path.to_str().unwrap()).await.unwrap();
    for i in 0..6 {
        check_thread(&saver, &format!("conn-{i}")).await;
    }
    assert_eq!(integrity(&saver).await, "ok");
}

#[test]
fn processes_write_one_file_at_once() {
    let path = fresh_path("processes");
    let exe = std::env::current_exe().expect("the test binary");
    let children: Vec<_> = (0..4)
        .map(|i| {
            Command::new(&exe)
                .args(["child_writer", "--exact", "--ignored", "--test-threads=1"])
                .env("SQLITE_CHILD_PATH", &path)
                .env("SQLITE_CHILD_THREAD", format!("proc-{i}"))
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .expect("start a child process")
        })
        .collect();
    for child in children {
        let out = child.wait_with_output().expect("wait for a child");
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "a child failed:\n{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
        assert!(stdout.contains("1 passed"), "the child ran its writer:\n{stdout}");
    }
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    runtime.block_on(async {
        let saver = SqliteCheckpointer::connect(path.to_str().unwrap()).await.unwrap();
        for i in 0..4 {
            check_thread(&saver, &format!("proc-{i}")).await;
        }
        assert_eq!(integrity(&saver).await, "ok");
    });
}

/// One writer process of [`processes_write_one_file_at_once`], which starts it with the file and
/// the thread in its environment.
#[tokio::test]
#[ignore = "a child process of processes_write_one_file_at_once"]
async fn child_writer() {
    let path = std::env::var("SQLITE_CHILD_PATH").expect("started by processes_write_one_file_at_once");
    let thread = std::env::var("SQLITE_CHILD_THREAD").expect("a thread to write");
    let saver = SqliteCheckpointer::connect(&path).await.unwrap();
    write_thread(&saver, &thread).await;
}
