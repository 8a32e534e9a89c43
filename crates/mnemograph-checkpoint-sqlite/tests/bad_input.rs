//! Bad input: hostile ids and filter keys, huge values, and rows that do not decode. Each gets a
//! clear result, and nothing stored is lost or spoils another thread.

mod support;

use mnemograph_checkpoint::checkpoint::{CheckpointConfig, CheckpointError, Checkpointer, ListOptions};
use mnemograph_checkpoint::value::ChannelValue;
use mnemograph_checkpoint_sqlite::{Error, SqliteCheckpointer};
use serde_json::json;
use support::{fresh_saver, latest_log, put_log};

/// Ids made to break SQL built by concatenation, or the JSON path of a filter, are plain data.
#[tokio::test]
async fn hostile_ids_are_stored_verbatim() {
    let (_path, saver) = fresh_saver("hostile").await;
    let hostile =
        ["'; DROP TABLE checkpoints; --", "\" OR 1=1 --", "a\0b", "$.run_id') OR ('1'='1", "线程 🌏", ""];
    for id in hostile {
        let config = CheckpointConfig::thread(id).with_ns(id);
        let saved = put_log(&saver, &config, 0, ChannelValue::new(vec![id])).await.expect("put");
        saver
            .put_writes(&saved, vec![(id.to_owned(), ChannelValue::new(id))], id, id)
            .await
            .expect("put_writes");
        let tuple = saver.get_tuple(&config).await.unwrap().expect("stored");
        assert_eq!(tuple.config, saved);
        assert_eq!(tuple.pending_writes[0].channel, id);
        assert_eq!(latest_log(&saver, &config).await, [id]);
    }
    // `a\0b` is not `a`: the NUL byte is part of the id, not its end.
    assert!(saver.get_tuple(&CheckpointConfig::thread("a").with_ns("a\0b")).await.unwrap().is_none());
    let all = saver.list(None, ListOptions::new()).await.unwrap();
    assert_eq!(all.len(), hostile.len(), "every thread is there, none dropped");
    for id in hostile {
        saver.delete_thread(id).await.unwrap();
    }
    assert!(saver.list(None, ListOptions::new()).await.unwrap().is_empty());
}

/// A filter key that would become part of a JSON path outside LangGraph's accepted characters is
/// refused, as LangGraph refuses it; a hostile filter value is only compared.
#[tokio::test]
async fn hostile_filters_are_refused_or_compared() {
    let (_path, saver) = fresh_saver("filters").await;
    let config = CheckpointConfig::thread("t");
    put_log(&saver, &config, 0, ChannelValue::new(vec!["x"])).await.unwrap();
    let key = "source') IS NOT NULL OR ('";
    let filter = json!({ key: "loop" }).as_object().unwrap().clone();
    let refused = saver.list(Some(&config), ListOptions::new().filter(filter)).await;
    assert!(matches!(refused, Err(CheckpointError::Invalid(_))), "{refused:?}");
    let filter = json!({"source": "loop' OR '1'='1"}).as_object().unwrap().clone();
    assert!(saver.list(Some(&config), ListOptions::new().filter(filter)).await.unwrap().is_empty());
    let filter = json!({"source": "loop"}).as_object().unwrap().clone();
    assert_eq!(saver.list(Some(&config), ListOptions::new().filter(filter)).await.unwrap().len(), 1);
}

/// A value of tens of megabytes is stored and read back whole.
#[tokio::test]
async fn huge_values_round_trip() {
    let (_path, saver) = fresh_saver("huge").await;
    let config = CheckpointConfig::thread("big");
    let item = "x".repeat(1 << 20);
    let log: Vec<String> = (0..24).map(|i| format!("{i}{item}")).collect();
    let saved = put_log(&saver, &config, 0, ChannelValue::new(log.clone())).await.unwrap();
    saver.put_writes(&saved, vec![("log".into(), ChannelValue::new(log.clone()))], "task", "").await.unwrap();
    let tuple = saver.get_tuple(&config).await.unwrap().unwrap();
    assert_eq!(tuple.checkpoint.channel_values["log"].decode::<Vec<String>>().unwrap(), log);
    assert_eq!(tuple.pending_writes[0].value.decode::<Vec<String>>().unwrap(), log);
}

/// A row whose bytes were damaged is a typed error naming it; the other threads, and the older
/// checkpoints of its own thread, read and write as before.
#[tokio::test]
async fn a_corrupt_row_is_a_typed_error_and_spoils_nothing_else() {
    let (_path, saver) = fresh_saver("corrupt").await;
    let (bad, good) = (CheckpointConfig::thread("bad"), CheckpointConfig::thread("good"));
    let first = put_log(&saver, &bad, 0, ChannelValue::new(vec!["kept"])).await.unwrap();
    let second = put_log(&saver, &first, 1, ChannelValue::new(vec!["damaged"])).await.unwrap();
    let good_first = put_log(&saver, &good, 0, ChannelValue::new(vec!["fine"])).await.unwrap();
    let id = second.checkpoint_id.clone().unwrap();
    for (column, bytes) in [("checkpoint", &b"\xc1 not msgpack"[..]), ("metadata", &b"{not json"[..])] {
        // Damage one column at a time, the other restored from a fresh copy of the row.
        let fresh = put_log(&saver, &first, 1, ChannelValue::new(vec!["damaged"])).await.unwrap();
        sqlx::query(&format!(
            "UPDATE checkpoints SET {column} = ? WHERE thread_id = 'bad' AND checkpoint_id = ?"
        ))
        .bind(bytes)
        .bind(fresh.checkpoint_id.as_deref())
        .execute(saver.pool())
        .await
        .unwrap();
        sqlx::query("DELETE FROM checkpoints WHERE thread_id = 'bad' AND checkpoint_id = ?")
            .bind(&id)
            .execute(saver.pool())
            .await
            .unwrap();
        let err = saver.get_tuple(&bad).await.expect_err("the damaged row does not decode");
        let CheckpointError::Corrupt(message) = &err else { panic!("{err:?}") };
        assert!(message.contains("thread `bad`"), "{message}");
        assert!(saver.list(Some(&bad), ListOptions::new()).await.is_err(), "listing meets the row too");
        // The older checkpoint, another thread, a filter over all threads and new writes work.
        assert_eq!(latest_log(&saver, &first).await, ["kept"]);
        assert_eq!(latest_log(&saver, &good_first).await, ["fine"]);
        let filter = json!({"step": 0}).as_object().unwrap().clone();
        let listed = saver.list(Some(&good), ListOptions::new().filter(filter)).await.unwrap();
        assert_eq!(listed.len(), 1);
        saver.delete_for_runs(&["r".to_owned()]).await.expect("a scan over every row's metadata");
        put_log(&saver, &good, 1, ChannelValue::new(vec!["more"])).await.unwrap();
        sqlx::query("DELETE FROM checkpoints WHERE thread_id = 'bad' AND checkpoint_id = ?")
            .bind(fresh.checkpoint_id.as_deref())
            .execute(saver.pool())
            .await
            .unwrap();
    }
    // A damaged pending write is reported with the task that wrote it.
    saver.put_writes(&first, vec![("log".into(), ChannelValue::new("w"))], "task-7", "").await.unwrap();
    sqlx::query("UPDATE writes SET value = x'c1' WHERE thread_id = 'bad'")
        .execute(saver.pool())
        .await
        .unwrap();
    let err = saver.get_tuple(&first).await.expect_err("the damaged write does not decode");
    assert!(matches!(&err, CheckpointError::Corrupt(m) if m.contains("task-7")), "{err:?}");
    assert_eq!(latest_log(&saver, &good).await, ["more"]);
}

/// Pending writes against no checkpoint are refused before anything is stored.
#[tokio::test]
async fn writes_without_a_checkpoint_are_refused() {
    let (_path, saver) = fresh_saver("orphan").await;
    let err = saver
        .put_writes(&CheckpointConfig::thread("t"), vec![("a".into(), ChannelValue::new(1_i64))], "task", "")
        .await
        .expect_err("no checkpoint id");
    assert!(matches!(err, CheckpointError::Invalid(_)), "{err:?}");
    let count: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM writes").fetch_one(saver.pool()).await.unwrap();
    assert_eq!(count, 0);
}

/// A database opened read-only (`mode=ro`) reads as usual; a write is a driver error naming the
/// operation, and changes nothing.
#[tokio::test]
async fn a_read_only_database_reads_and_refuses_writes() {
    let (path, saver) = fresh_saver("read-only").await;
    let config = CheckpointConfig::thread("t");
    let saved = put_log(&saver, &config, 0, ChannelValue::new(vec!["kept"])).await.unwrap();
    let url = format!("sqlite://{}?mode=ro", path.display());
    let reader = SqliteCheckpointer::connect(&url).await.expect("open read-only");
    assert_eq!(latest_log(&reader, &config).await, ["kept"]);
    let err = put_log(&reader, &saved, 1, ChannelValue::new(vec!["new"])).await.expect_err("read-only");
    let CheckpointError::Backend(source) = &err else { panic!("{err:?}") };
    let ours = source.downcast_ref::<Error>().expect("this crate's error");
    assert!(matches!(ours, Error::Sqlx { operation: "put", .. }), "{ours:?}");
    assert_eq!(latest_log(&saver, &config).await, ["kept"]);
}
