//! Runs that start from the checkpoint this saver stored last, without reading it back
//! (`Checkpointer::remembered_latest`): a turn then costs no read, and whatever another process
//! or a repair changed meanwhile is still what the turn builds on.

mod support;

use mnemograph_checkpoint::checkpoint::{CheckpointConfig, Checkpointer, ListOptions};
use mnemograph_checkpoint_mysql::MySqlCheckpointer;
use mnemograph_core::prelude::*;
use mnemograph_test::echo::{echo_chat, say};
use sqlx::mysql::MySqlPoolOptions;
use sqlx::Row as _;

/// A second saver on the same database with nothing remembered: what another process writes with.
fn elsewhere(saver: &MySqlCheckpointer) -> MySqlCheckpointer {
    MySqlCheckpointer::from_pool(saver.pool().clone())
}

fn texts(state: &MessagesState) -> Vec<String> {
    state.messages.iter().map(Message::text).collect()
}

/// The thread's checkpoints, each the parent of the one before (one chain, no fork); how many.
async fn one_chain(saver: &MySqlCheckpointer, thread: &str) -> usize {
    let history =
        elsewhere(saver).list(Some(&CheckpointConfig::thread(thread)), ListOptions::new()).await.unwrap();
    for pair in history.windows(2) {
        assert_eq!(pair[0].parent_config.as_ref(), Some(&pair[1].config), "the thread forked");
    }
    history.len()
}

#[tokio::test]
async fn a_turn_after_another_process_wrote_builds_on_its_checkpoint() {
    let Some(saver) = support::saver().await else { return };
    let thread = support::unique("remembered-other");
    let config = RunConfig::thread(&thread);
    let mine = echo_chat(saver.clone());
    // The second turn's read is answered from memory, which tells the saver this server keeps
    // the texts it stores: from then on, turns start from memory.
    for text in ["one", "two"] {
        mine.invoke(say(text), &config).await.unwrap();
    }
    assert!(saver.remembered_latest(&CheckpointConfig::thread(&thread)).is_some());
    echo_chat(elsewhere(&saver)).invoke(say("theirs"), &config).await.unwrap();
    let out = mine.invoke(say("three"), &config).await.unwrap();
    let expected = ["one", "echo: one", "two", "echo: two", "theirs", "echo: theirs", "three", "echo: three"];
    assert_eq!(texts(&out.state), expected);
    assert_eq!(one_chain(&saver, &thread).await, 12);
    saver.delete_thread(&thread).await.unwrap();
}

/// Messages and a counter stored inline in the checkpoint document.
#[derive(State, Clone, Default, Debug)]
struct Counted {
    #[reducer(add_messages)]
    messages: Vec<Message>,
    turns: i64,
}

async fn count(s: Counted) -> Result<CountedUpdate> {
    Ok(CountedUpdate::turns(s.turns + 1))
}

#[tokio::test]
async fn a_checkpoint_repaired_in_place_is_where_the_next_turn_starts() {
    let Some(saver) = support::saver().await else { return };
    let thread = support::unique("remembered-repair");
    let config = RunConfig::thread(&thread);
    let graph = StateGraph::<Counted>::new()
        .add_node("count", count)
        .add_edge(START, "count")
        .compile_with(saver.clone())
        .unwrap();
    let turn = |text: &str| CountedUpdate::messages(vec![Message::human(text)]);
    for text in ["one", "two"] {
        graph.invoke(turn(text), &config).await.unwrap();
    }
    assert!(saver.remembered_latest(&CheckpointConfig::thread(&thread)).is_some());
    // A repair sets the counter of the latest checkpoint by hand, under the same id.
    let latest = saver.get_tuple(&CheckpointConfig::thread(&thread)).await.unwrap().unwrap();
    let repaired = sqlx::query(
        "UPDATE checkpoints SET checkpoint = JSON_SET(checkpoint, '$.channel_values.turns', 100) \
         WHERE BINARY thread_id = ? AND checkpoint_id = ?",
    )
    .bind(&thread)
    .bind(&latest.checkpoint.id)
    .execute(saver.pool())
    .await
    .unwrap();
    assert_eq!(repaired.rows_affected(), 1);
    let out = graph.invoke(turn("three"), &config).await.unwrap();
    assert_eq!(out.state.turns, 101, "the turn started from the repaired row, not from memory");
    assert_eq!(one_chain(&saver, &thread).await, 9);
    saver.delete_thread(&thread).await.unwrap();
}

#[tokio::test]
async fn a_turn_started_from_memory_reads_nothing_back() {
    let Some(shared) = support::saver().await else { return };
    // One connection, and no kept write connections beside it, so that its session counters are
    // the turns' statements.
    let pool = MySqlPoolOptions::new()
        .max_connections(1)
        .connect_with(support::options(&support::default_database()))
        .await
        .unwrap();
    let saver = MySqlCheckpointer::from_pool(pool.clone()).with_write_connections(0);
    let thread = support::unique("remembered-reads");
    let config = RunConfig::thread(&thread);
    let graph = echo_chat(saver.clone());
    let selects = || async {
        let row = sqlx::query("SHOW SESSION STATUS LIKE 'Com_select'").fetch_one(&pool).await.unwrap();
        row.try_get::<String, _>(1).unwrap().parse::<u64>().unwrap()
    };
    for text in ["one", "two"] {
        graph.invoke(say(text), &config).await.unwrap();
    }
    let before = selects().await;
    graph.invoke(say("three"), &config).await.unwrap();
    let with_memory = selects().await - before;
    // The same turn on a saver that must read its thread first (it remembers nothing).
    let cold = MySqlCheckpointer::from_pool(pool.clone()).with_write_connections(0);
    let before = selects().await;
    echo_chat(cold).invoke(say("four"), &config).await.unwrap();
    let with_read = selects().await - before;
    // Each of the turn's two transactions checks its parent with one read; the read of the
    // thread is one more (a full read, here) or two (a remembered one).
    assert_eq!(with_memory, 2, "a turn from memory sends only its transactions' checks");
    assert!(with_read > with_memory, "{with_read} selects with a read");
    assert_eq!(one_chain(&saver, &thread).await, 12);
    shared.delete_thread(&thread).await.unwrap();
}
