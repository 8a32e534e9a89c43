//! The semantics every [`CronKeeper`] keeps, LangGraph's server's: one suite run against the
//! keeper of one process and against a cluster's.

use serde_json::{json, Map, Value};

use super::{CronKeeper, CronsOf};
use crate::auth::{Grant, Identity};
use crate::cron::{CronChange, CronRecord, CronSearch, CronSort};

const A: &str = "00000000-0000-7000-8000-00000000000a";
const B: &str = "00000000-0000-7000-8000-00000000000b";
const C: &str = "00000000-0000-7000-8000-00000000000c";
const THREAD: &str = "00000000-0000-7000-8000-0000000000f1";
const HELPER: &str = "00000000-0000-4000-8000-0000000000a1";
const OTHER: &str = "00000000-0000-4000-8000-0000000000a2";

fn object(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}

fn status<T: std::fmt::Debug>(r: crate::error::Result<T>) -> u16 {
    r.err().map_or(200, |e| e.status().as_u16())
}

fn stamp(minute: u32) -> String {
    format!("2020-01-01T10:{minute:02}:00.000000+00:00")
}

fn cron(id: &str, assistant: &str, thread: Option<&str>, metadata: Value, minute: u32) -> CronRecord {
    CronRecord {
        cron_id: id.to_owned(),
        assistant_id: assistant.to_owned(),
        thread_id: thread.map(str::to_owned),
        user: Some(Identity::new("alice").permissions(["crons"])),
        payload: object(
            json!({"assistant_id": assistant, "input": {"log": []}, "config": {"configurable": {"cron_id": id}}}),
        ),
        schedule: "*/5 * * * *".to_owned(),
        timezone: None,
        next_run_date: stamp(minute + 30),
        end_time: None,
        metadata: object(metadata),
        on_run_completed: thread.is_none().then(|| "delete".to_owned()),
        enabled: true,
        created_at: stamp(minute),
        updated_at: stamp(minute),
    }
}

/// A stateless cron that fires every second.
pub fn every_second(id: &str) -> CronRecord {
    let mut every = cron(id, HELPER, None, json!({}), 0);
    every.schedule = "* * * * * *".to_owned();
    every
}

fn search() -> CronSearch {
    CronSearch { limit: 10, descending: true, ..CronSearch::default() }
}

async fn ids(keeper: &dyn CronKeeper, q: &CronSearch) -> Vec<String> {
    keeper.search(q).await.expect("search").0.into_iter().map(|c| c.cron_id).collect()
}

/// Runs the suite on `keeper`, which holds no cron.
pub async fn cron_keeper_semantics(keeper: &dyn CronKeeper) {
    let all = Grant::all();
    let alices = Grant::all().metadata("owner", "alice");

    // Create and read back, field for field.
    let a = cron(A, HELPER, None, json!({"team": "x"}), 1);
    let b = cron(B, OTHER, Some(THREAD), json!({"owner": "alice"}), 2);
    let mut c = cron(C, HELPER, None, json!({"team": "y"}), 3);
    c.enabled = false;
    c.timezone = Some("Europe/Paris".into());
    c.end_time = Some(stamp(59));
    for record in [&a, &b, &c] {
        assert_eq!(&keeper.create(record.clone()).await.expect("create"), record);
    }
    assert_eq!(keeper.get(A, &all).await.expect("get"), a);
    assert_eq!(keeper.get(C, &all).await.expect("get"), c);
    assert_eq!(keeper.get(B, &alices).await.expect("get"), b);
    assert_eq!(status(keeper.get(A, &alices).await), 404, "a cron the grant does not reach");
    assert_eq!(status(keeper.get("00000000-0000-7000-8000-000000000000", &all).await), 404);

    // Search: order, filters, page, the grant; count whatever the page.
    assert_eq!(ids(keeper, &search()).await, [C, B, A], "newest first by default");
    let by_next = CronSearch { sort_by: CronSort::NextRunDate, descending: false, ..search() };
    assert_eq!(ids(keeper, &by_next).await, [A, B, C]);
    let by_thread = CronSearch { sort_by: CronSort::ThreadId, descending: false, ..search() };
    assert_eq!(ids(keeper, &by_thread).await.last().map(String::as_str), Some(B), "no thread sorts first");
    let helper = CronSearch { assistant_id: Some(HELPER.into()), ..search() };
    assert_eq!(ids(keeper, &helper).await, [C, A]);
    let on_thread = CronSearch { thread_id: Some(THREAD.into()), ..search() };
    assert_eq!(ids(keeper, &on_thread).await, [B]);
    let enabled = CronSearch { enabled: Some(true), ..search() };
    assert_eq!(ids(keeper, &enabled).await, [B, A]);
    let team = CronSearch { metadata: object(json!({"team": "x"})), ..search() };
    assert_eq!(ids(keeper, &team).await, [A]);
    let mine = CronSearch { within: alices.filter().clone(), ..search() };
    assert_eq!(ids(keeper, &mine).await, [B]);
    assert_eq!(keeper.count(&mine).await.expect("count"), 1);
    let first = CronSearch { limit: 1, ..search() };
    let (page, more) = keeper.search(&first).await.expect("search");
    assert_eq!((page.len(), more), (1, true));
    let last = CronSearch { limit: 2, offset: 1, ..search() };
    let (page, more) = keeper.search(&last).await.expect("search");
    assert_eq!((page.len(), more), (2, false));
    assert_eq!(keeper.count(&CronSearch { limit: 1, ..search() }).await.expect("count"), 3);

    // Update: the fields named change, metadata merges, the grant is stamped over it.
    let change = CronChange {
        schedule: Some("0 0 1 1 *".into()),
        metadata: Some(object(json!({"step": 2, "owner": "bob"}))),
        enabled: Some(false),
        payload: object(json!({"input": {"log": ["changed"]}, "assistant_id": "ignored"})),
        ..CronChange::default()
    };
    let changed = keeper.update(B, &change, &alices).await.expect("update");
    assert_eq!(changed.metadata, object(json!({"owner": "alice", "step": 2})), "{changed:?}");
    assert_eq!((changed.schedule.as_str(), changed.enabled), ("0 0 1 1 *", false));
    assert!(changed.next_run_date.contains("-01-01T00:00:00"), "{changed:?}");
    assert!(changed.updated_at > b.updated_at && changed.created_at == b.created_at);
    assert_eq!(changed.payload["input"], json!({"log": ["changed"]}));
    assert_eq!(changed.payload["assistant_id"], json!(OTHER));
    assert_eq!(keeper.get(B, &all).await.expect("get"), changed);
    assert_eq!(status(keeper.update(A, &change, &alices).await), 404);
    assert_eq!(status(keeper.update("00000000-0000-7000-8000-000000000000", &change, &all).await), 404);
    let clear = CronChange { end_time: crate::cron::EndTime::Clear, ..CronChange::default() };
    assert_eq!(keeper.update(C, &clear, &all).await.expect("update").end_time, None);

    // Due crons and the compare-and-set that takes a tick: one taker per seen date.
    let due: Vec<String> =
        keeper.due(&stamp(40)).await.expect("due").into_iter().map(|c| c.cron_id).collect();
    assert_eq!(due, [A], "enabled and due; the disabled ones wait");
    assert_eq!(keeper.due(&stamp(31)).await.expect("due").len(), 1, "due at its very date");
    assert!(keeper.due(&stamp(30)).await.expect("due").is_empty());
    assert!(keeper.claim(A, &a.next_run_date, &stamp(45)).await.expect("claim"));
    assert!(!keeper.claim(A, &a.next_run_date, &stamp(50)).await.expect("claim"), "the tick is taken");
    assert_eq!(keeper.get(A, &all).await.expect("get").next_run_date, stamp(45));
    assert!(!keeper
        .claim("00000000-0000-7000-8000-000000000000", &stamp(1), &stamp(2))
        .await
        .expect("claim"));
    let mut ended = cron("00000000-0000-7000-8000-0000000000e1", HELPER, None, json!({}), 4);
    ended.end_time = Some(stamp(35));
    keeper.create(ended.clone()).await.expect("create");
    assert!(keeper.due(&stamp(36)).await.expect("due").is_empty(), "past its end time");
    keeper.delete(&ended.cron_id, &all).await.expect("delete");

    // A thread's or an assistant's deletion takes their crons.
    keeper.forget(CronsOf::Thread(THREAD)).await.expect("forget");
    assert_eq!(status(keeper.get(B, &all).await), 404);
    keeper.forget(CronsOf::Assistant(HELPER)).await.expect("forget");
    assert_eq!(keeper.count(&search()).await.expect("count"), 0);

    // Delete: what the grant does not reach is not found.
    keeper.create(a.clone()).await.expect("create again");
    assert_eq!(status(keeper.delete(A, &alices).await), 404);
    keeper.delete(A, &all).await.expect("delete");
    assert_eq!(status(keeper.get(A, &all).await), 404);
    assert_eq!(status(keeper.delete(A, &all).await), 404);
}
