//! The binary against SQLite files: threads written by `SqliteCheckpointer` from a real graph
//! run, read through `sqlite://` and `sqlite:` URLs; and files that are not a saver's, each
//! refused with its own error and left as they were.

mod support;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::SystemTime;

use mnemograph_checkpoint::checkpoint::serde::{checkpoint_from_msgpack, checkpoint_to_msgpack};
use mnemograph_checkpoint::value::ChannelValue;
use mnemograph_checkpoint_sqlite::SqliteCheckpointer;
use sqlx::{Connection, SqliteConnection};

use support::*;

/// LangChain's message ext code (pydantic v2) holding the single byte `0xc1`, as `fixext1`.
const DAMAGED: [u8; 3] = [0xd4, 0x05, 0xc1];

/// A path for a new file, unique in this test run (nothing there yet).
fn fresh_path(name: &str) -> PathBuf {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("inspect-sqlite");
    std::fs::create_dir_all(&dir).expect("create the test directory");
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let path = dir.join(format!("{name}-{}-{n}.db", std::process::id()));
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
    }
    path
}

/// A saver on a new file, and the file's `sqlite://` URL.
async fn saver(name: &str) -> (SqliteCheckpointer, String) {
    let path = fresh_path(name);
    let path = path.to_str().expect("a UTF-8 path");
    let saver = SqliteCheckpointer::connect(path).await.expect("open");
    (saver, format!("sqlite://{path}"))
}

#[tokio::test]
async fn a_real_thread_reads_back_decoded() {
    let (saver, url) = saver("real").await;
    check_real_thread(saver.clone(), &url, "sqlite").await;
    // The URL form without `//` names the same file.
    let thread = unique("sqlite-short-url");
    populate(saver, &thread).await;
    let short = format!("sqlite:{}", url.trim_start_matches("sqlite://"));
    let listed = inspect_json(&[&short, "threads"]);
    assert!(listed.as_array().unwrap().iter().any(|t| t["thread_id"] == thread.as_str()), "{listed}");
}

#[tokio::test]
async fn corrupt_values_are_shown_next_to_the_rest() {
    let (saver, url) = saver("corrupt").await;
    let reader = SqliteCheckpointer::from_pool(saver.pool().clone());
    let pool = saver.pool().clone();
    check_corrupt_sql_thread(saver, &reader, &url, "sqlite-corrupt", async |thread: &str| {
        // Every document of the thread holds its own copy of `retrieved`.
        let rows: Vec<(String, Vec<u8>)> =
            sqlx::query_as("SELECT checkpoint_id, checkpoint FROM checkpoints WHERE thread_id = ?")
                .bind(thread)
                .fetch_all(&pool)
                .await
                .unwrap();
        for (id, document) in rows {
            let mut checkpoint = checkpoint_from_msgpack(&document).unwrap();
            if !checkpoint.channel_values.contains_key("retrieved") {
                continue;
            }
            checkpoint
                .channel_values
                .insert("retrieved".into(), ChannelValue::encoded("msgpack", DAMAGED.to_vec()));
            sqlx::query("UPDATE checkpoints SET checkpoint = ? WHERE thread_id = ? AND checkpoint_id = ?")
                .bind(checkpoint_to_msgpack(&checkpoint).unwrap())
                .bind(thread)
                .bind(id)
                .execute(&pool)
                .await
                .unwrap();
        }
        sqlx::query(
            "UPDATE writes SET value = x'91d42a07' WHERE thread_id = ? AND channel = '__interrupt__'",
        )
        .bind(thread)
        .execute(&pool)
        .await
        .unwrap();
        DAMAGED.to_vec()
    })
    .await;
}

/// A thread LangGraph's own SqliteSaver wrote (`tests/python/sqlite_thread.py`, run by the
/// interpreter of `LANGGRAPH_PYTHON`): a human message, a list, and an interrupt left pending.
#[test]
fn a_thread_python_wrote_reads_back_decoded() {
    let Some(python) = std::env::var("LANGGRAPH_PYTHON").ok().filter(|p| !p.is_empty()).or_else(|| {
        unavailable("the Python peer (LANGGRAPH_PYTHON, made by scripts/python-peer.sh)", "not set")
    }) else {
        return;
    };
    let path = fresh_path("python");
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/python/sqlite_thread.py");
    let out = std::process::Command::new(python).arg(script).arg(&path).arg("py-thread").output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let url = format!("sqlite://{}", path.display());

    let listed = inspect_json(&[&url, "threads"]);
    let entry = &listed[0];
    assert_eq!(entry["thread_id"], "py-thread", "{listed}");
    assert_eq!((entry["checkpoints"].as_u64(), entry["latest_step"].as_i64()), (Some(2), Some(0)), "{entry}");
    let history = inspect_ok(&[&url, "history", "py-thread"]);
    assert_eq!(steps(&history), [0, -1], "{history}");
    let latest = line_of(&history, 0);
    assert!(latest.contains("interrupt: question=\"保存吗？\"") && latest.ends_with("next: ask"), "{latest}");
    let cp = inspect_json(&[&url, "show", "py-thread"]);
    assert_eq!(cp["channel_values"]["messages"][0]["content"], "你好，Python", "{cp}");
    assert_eq!(cp["channel_values"]["log"], serde_json::json!(["py-input"]), "{cp}");
    assert_eq!(cp["pending_writes"][0]["channel"], "__interrupt__", "{cp}");
    assert_eq!(cp["pending_writes"][0]["value"][0]["value"]["question"], "保存吗？", "{cp}");
}

/// A file's size and modification time.
fn stamp(path: &Path) -> (u64, SystemTime) {
    let meta = std::fs::metadata(path).expect("the file exists");
    (meta.len(), meta.modified().expect("an mtime"))
}

/// Runs `threads` on `url`, which must fail with exit code 1 and a message containing `expected`.
fn refused(url: &str, expected: &str) {
    let out = inspect(&[url, "threads"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains(expected), "{stderr}");
    assert!(out.stdout.is_empty(), "{}", String::from_utf8_lossy(&out.stdout));
}

#[test]
fn a_missing_file_is_an_error_and_is_not_created() {
    let path = fresh_path("missing");
    for url in [format!("sqlite://{}", path.display()), format!("sqlite:{}?mode=rwc", path.display())] {
        refused(&url, &format!("no SQLite database at `{}`", path.display()));
        assert!(!path.exists(), "{url} created the file");
    }
}

#[test]
fn a_file_that_is_not_sqlite_is_an_error_and_left_as_it_was() {
    let path = fresh_path("text");
    std::fs::write(&path, "thread_id,checkpoint_id\nt,1\n".repeat(64)).unwrap();
    let before = stamp(&path);
    refused(
        &format!("sqlite://{}", path.display()),
        &format!("`{}` is not a SQLite database", path.display()),
    );
    assert_eq!(stamp(&path), before);
}

#[tokio::test]
async fn a_sqlite_file_without_the_tables_is_an_error_and_left_as_it_was() {
    let path = fresh_path("other");
    let mut conn = SqliteConnection::connect(&format!("sqlite://{}?mode=rwc", path.display())).await.unwrap();
    sqlx::query("CREATE TABLE notes (body TEXT)").execute(&mut conn).await.unwrap();
    conn.close().await.unwrap();
    let before = stamp(&path);
    refused(&format!("sqlite://{}", path.display()), "has no checkpoint tables");
    assert_eq!(stamp(&path), before);
    let mut conn = SqliteConnection::connect(&format!("sqlite://{}?mode=ro", path.display())).await.unwrap();
    let tables: Vec<String> = sqlx::query_scalar("SELECT name FROM sqlite_master WHERE type = 'table'")
        .fetch_all(&mut conn)
        .await
        .unwrap();
    assert_eq!(tables, ["notes"], "nothing was created");
}
