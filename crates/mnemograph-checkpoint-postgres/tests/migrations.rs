//! `setup()`: LangGraph's migrations v0..v9, idempotent, safe to race, the schema LangGraph's own
//! `PostgresSaver.setup()` makes, and each side accepting a database the other migrated. Each
//! test migrates its own fresh database.

mod support;

use mnemograph_checkpoint::checkpoint::{
    CheckpointConfig, CheckpointMetadata, CheckpointSource, Checkpointer,
};
use mnemograph_checkpoint::value::ChannelValue;
use mnemograph_checkpoint_postgres::PostgresCheckpointer;

/// `SELECT v FROM checkpoint_migrations`, ascending.
async fn versions(saver: &PostgresCheckpointer) -> Vec<i32> {
    sqlx::query_scalar("SELECT v FROM checkpoint_migrations ORDER BY v")
        .fetch_all(saver.pool())
        .await
        .unwrap()
}

/// Every column of the three tables, `table.column type nullable default`, and every index
/// definition.
async fn schema(saver: &PostgresCheckpointer) -> Vec<String> {
    let columns: Vec<(String, String, String, String, Option<String>)> = sqlx::query_as(
        "SELECT table_name::text, column_name::text, data_type::text, is_nullable::text, column_default::text \
         FROM information_schema.columns WHERE table_schema = 'public' \
         ORDER BY table_name, ordinal_position",
    )
    .fetch_all(saver.pool())
    .await
    .unwrap();
    let indexes: Vec<String> =
        sqlx::query_scalar("SELECT indexdef FROM pg_indexes WHERE schemaname = 'public' ORDER BY indexname")
            .fetch_all(saver.pool())
            .await
            .unwrap();
    let columns =
        columns.into_iter().map(|(t, c, ty, null, default)| format!("{t}.{c} {ty} {null} {default:?}"));
    columns.chain(indexes).collect()
}

#[tokio::test]
async fn fresh_setup_applies_every_migration_once() {
    let Some((db, saver)) = support::fresh_database("fresh").await else { return };
    assert_eq!(saver.setup().await.unwrap(), 10);
    let after = schema(&saver).await;
    assert!(
        after.iter().any(|c| c == "checkpoint_writes.task_path text NO Some(\"''::text\")"),
        "{after:#?}"
    );
    assert!(after.iter().any(|c| c.contains("checkpoint_writes_thread_id_idx")), "{after:#?}");
    assert_eq!(saver.setup().await.unwrap(), 0);
    assert_eq!(versions(&saver).await, (0..10).collect::<Vec<_>>());
    assert_eq!(schema(&saver).await, after, "the second setup changed the schema");
    support::drop_database(&db).await;
}

#[tokio::test]
async fn concurrent_setups_all_succeed() {
    let Some((db, first)) = support::fresh_database("race").await else { return };
    // Separate pools, as separate processes would have.
    let second = support::saver_on(&db).await.unwrap();
    let third = support::saver_on(&db).await.unwrap();
    let (a, b, c) = tokio::join!(first.setup(), second.setup(), third.setup());
    let applied = [a.unwrap(), b.unwrap(), c.unwrap()];
    assert_eq!(applied.iter().sum::<usize>(), 10, "{applied:?}");
    assert_eq!(versions(&first).await, (0..10).collect::<Vec<_>>());
    support::drop_database(&db).await;
}

#[tokio::test]
async fn setup_resumes_after_an_applied_but_unrecorded_migration() {
    let Some((db, saver)) = support::fresh_database("resume").await else { return };
    saver.setup().await.unwrap();
    let schema_before = schema(&saver).await;
    // As if the process had died after applying v4.. but before recording them.
    sqlx::query("DELETE FROM checkpoint_migrations WHERE v >= 4").execute(saver.pool()).await.unwrap();
    assert_eq!(saver.setup().await.unwrap(), 6);
    assert_eq!(versions(&saver).await, (0..10).collect::<Vec<_>>());
    assert_eq!(schema(&saver).await, schema_before);
    support::drop_database(&db).await;
}

#[tokio::test]
async fn a_newer_schema_is_refused() {
    let Some((db, saver)) = support::fresh_database("newer").await else { return };
    saver.setup().await.unwrap();
    sqlx::query("INSERT INTO checkpoint_migrations (v) VALUES (10)").execute(saver.pool()).await.unwrap();
    let err = saver.setup().await.unwrap_err();
    assert!(
        matches!(err, mnemograph_checkpoint_postgres::Error::SchemaTooNew { found: 10, known: 9 }),
        "{err:?}"
    );
    support::drop_database(&db).await;
}

#[tokio::test]
async fn python_and_rust_accept_each_others_migrations() {
    let test = "python_and_rust_accept_each_others_migrations";
    // Python first: ours finds nothing to do, and the schema is the one ours makes.
    let Some((by_python, ours)) = support::fresh_database("bypython").await else { return };
    if support::python(test, &by_python, &["setup"]).is_none() {
        support::drop_database(&by_python).await;
        return;
    }
    assert_eq!(ours.setup().await.unwrap(), 0, "Python's setup left migrations to apply");
    assert_eq!(versions(&ours).await, (0..10).collect::<Vec<_>>());
    let (by_rust, rust_migrated) = support::fresh_database("byrust").await.unwrap();
    rust_migrated.setup().await.unwrap();
    assert_eq!(schema(&ours).await, schema(&rust_migrated).await);

    // Ours first: Python's setup records nothing more, and both read what the other stored.
    support::python(test, &by_rust, &["setup"]).unwrap();
    assert_eq!(versions(&rust_migrated).await, (0..10).collect::<Vec<_>>());
    let thread = support::unique("migrated");
    let written = support::python(test, &by_rust, &["put", &thread]).unwrap();
    let tuple =
        rust_migrated.get_tuple(&CheckpointConfig::thread(&thread)).await.unwrap().expect("Python's put");
    assert_eq!(Some(written["checkpoint_id"].as_str().unwrap()), tuple.config.checkpoint_id.as_deref());
    let log: Vec<String> = tuple.checkpoint.channel_values["log"].decode().unwrap();
    assert_eq!(log, ["from python"]);
    assert_eq!(tuple.pending_writes.len(), 1);

    // And Python reads what ours stores in the database Python migrated.
    let (cp, versions) = support::checkpoint(0, &[("log", ChannelValue::new(vec!["from rust"]))]);
    let metadata = CheckpointMetadata::new(CheckpointSource::Loop, 0);
    let saved = ours.put(&CheckpointConfig::thread(&thread), cp, metadata, versions).await.unwrap();
    let read = support::python(test, &by_python, &["read", &thread]).unwrap();
    assert_eq!(read["checkpoint_id"].as_str(), saved.checkpoint_id.as_deref());
    assert_eq!(read["values"]["log"], serde_json::json!(["from rust"]));
    support::drop_database(&by_python).await;
    support::drop_database(&by_rust).await;
}
