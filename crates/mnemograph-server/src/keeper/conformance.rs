//! The semantics every [`AssistantKeeper`] keeps, LangGraph's server's: one suite run against the
//! keeper of one process and against a cluster's.

use serde_json::{json, Map, Value};

use super::AssistantKeeper;
use crate::assistant::{assistant_id, AssistantRecord};
use crate::assistant_change::AssistantChange;
use crate::assistant_search::{AssistantSearch, SortBy, VersionSearch};
use crate::auth::Grant;

const A: &str = "00000000-0000-4000-8000-00000000000a";
const B: &str = "00000000-0000-4000-8000-00000000000b";

fn object(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}

fn new(id: &str, name: &str, metadata: Value, context: Value) -> AssistantRecord {
    AssistantChange::new(None, None, Some(object(context)), Some(object(metadata)), Some(name.into()), None)
        .expect("a valid create")
        .create(id.to_owned(), "chain".to_owned())
}

fn renamed(name: &str, metadata: Value) -> AssistantChange {
    AssistantChange::new(None, None, None, Some(object(metadata)), Some(name.into()), None)
        .expect("a valid update")
}

fn status<T: std::fmt::Debug>(r: crate::error::Result<T>) -> u16 {
    r.err().map_or(200, |e| e.status().as_u16())
}

fn search() -> AssistantSearch {
    AssistantSearch { limit: 10, descending: true, ..AssistantSearch::default() }
}

/// Runs the suite on `keeper`, which holds the system assistant of `chain` and nothing else.
pub async fn assistant_keeper_semantics(keeper: &dyn AssistantKeeper) {
    let all = Grant::all();
    let system = keeper.get(&assistant_id("chain"), &all).await.expect("the system assistant");
    assert!(system.is_system() && system.version == 1 && system.name == "chain", "{system:?}");

    // Create, then the same id again: raise, or the existing one as it is.
    let a = keeper
        .create(new(A, "Support Bot", json!({"team": "x"}), json!({"model": "small"})), false, &all)
        .await;
    let a = a.expect("a new assistant");
    assert_eq!((a.version, a.config.clone()), (1, object(json!({"configurable": {"model": "small"}}))));
    let again = new(A, "other", json!({}), json!({}));
    assert_eq!(status(keeper.create(again.clone(), false, &all).await), 409);
    let kept = keeper.create(again.clone(), true, &all).await.expect("do_nothing answers the existing one");
    assert_eq!((kept.name.as_str(), kept.version), ("Support Bot", 1));
    let alices = Grant::all().metadata("owner", "alice");
    assert_eq!(status(keeper.create(again, true, &alices).await), 409, "do_nothing on one it cannot see");

    // Each update makes the next version the latest; the assistant keeps its creation time.
    let v2 = keeper.update(A, &renamed("v2", json!({"step": 2})), &all).await.expect("update");
    let v3 = keeper.update(A, &renamed("v3", json!({"step": 3})), &all).await.expect("update");
    assert_eq!((v2.version, v3.version), (2, 3));
    assert_eq!(v3.created_at, a.created_at);
    assert!(v3.updated_at >= v2.updated_at);
    assert_eq!(Value::Object(v3.metadata.clone()), json!({"team": "x", "step": 3}));
    assert_eq!(v3.context, a.context, "an update that names no context keeps it");
    assert_eq!(keeper.get(A, &all).await.expect("get").version, 3);
    assert_eq!(status(keeper.update(B, &renamed("x", json!({})), &all).await), 404);

    // Versions: newest first, paged, filtered by metadata.
    let page = VersionSearch { limit: 10, ..VersionSearch::default() };
    let versions = keeper.versions(A, &page, &all).await.expect("versions");
    let numbers: Vec<i64> = versions.iter().map(|v| v.version).collect();
    assert_eq!(numbers, [3, 2, 1]);
    assert_eq!(versions[2].name, "Support Bot");
    let paged = VersionSearch { limit: 1, offset: 1, ..VersionSearch::default() };
    assert_eq!(keeper.versions(A, &paged, &all).await.expect("versions")[0].version, 2);
    let filtered = VersionSearch { metadata: object(json!({"step": 2})), limit: 10, offset: 0 };
    let only: Vec<i64> =
        keeper.versions(A, &filtered, &all).await.expect("versions").iter().map(|v| v.version).collect();
    assert_eq!(only, [2]);
    assert_eq!(status(keeper.versions(B, &page, &all).await), 404);

    // Setting an older version latest brings its fields back; the next update is past the highest.
    let back = keeper.set_latest(A, 1, &all).await.expect("set_latest");
    assert_eq!(
        (back.version, back.name.as_str(), back.created_at.as_str()),
        (1, "Support Bot", a.created_at.as_str())
    );
    assert_eq!(keeper.get(A, &all).await.expect("get").metadata, a.metadata);
    assert_eq!(status(keeper.set_latest(A, 9, &all).await), 404);
    let v4 = keeper.update(A, &renamed("v4", json!({})), &all).await.expect("update");
    assert_eq!(v4.version, 4);
    assert_eq!(Value::Object(v4.metadata), json!({"team": "x"}), "merged into version 1's metadata");

    // Search: filters, order, page, the count whatever the page.
    let b = new(B, "alpha helper", json!({"owner": "alice"}), json!({}));
    keeper.create(b, false, &all).await.expect("another");
    let (found, more) = keeper.search(&search()).await.expect("search");
    assert_eq!(found.len(), 3);
    assert!(!more);
    let by_name = AssistantSearch { sort_by: SortBy::Name, descending: false, ..search() };
    let names: Vec<String> =
        keeper.search(&by_name).await.expect("search").0.into_iter().map(|a| a.name).collect();
    assert_eq!(names, ["alpha helper", "chain", "v4"]);
    let first = AssistantSearch { limit: 1, ..by_name.clone() };
    let (one, more) = keeper.search(&first).await.expect("search");
    assert_eq!((one.len(), more), (1, true));
    let second = AssistantSearch { limit: 1, offset: 1, ..by_name.clone() };
    assert_eq!(keeper.search(&second).await.expect("search").0[0].name, "chain");
    let helpers = AssistantSearch { name: Some("HELP".into()), ..search() };
    assert_eq!(keeper.search(&helpers).await.expect("search").0.len(), 1);
    let team = AssistantSearch { metadata: object(json!({"team": "x"})), ..search() };
    assert_eq!(keeper.count(&team).await.expect("count"), 1);
    let other_graph = AssistantSearch { graph_id: Some("nope".into()), ..search() };
    assert_eq!(keeper.count(&other_graph).await.expect("count"), 0);
    assert_eq!(keeper.count(&AssistantSearch { limit: 1, ..search() }).await.expect("count"), 3);

    // A grant reaches only what its metadata holds; the rest is not found.
    assert_eq!(status(keeper.get(A, &alices).await), 404);
    assert_eq!(status(keeper.update(A, &renamed("x", json!({})), &alices).await), 404);
    assert_eq!(status(keeper.set_latest(A, 2, &alices).await), 404);
    assert_eq!(status(keeper.versions(A, &page, &alices).await), 404);
    assert_eq!(status(keeper.delete(A, &alices).await), 404);
    let mine = AssistantSearch { within: alices.filter().clone(), ..search() };
    let ids: Vec<String> =
        keeper.search(&mine).await.expect("search").0.into_iter().map(|a| a.assistant_id).collect();
    assert_eq!(ids, [B]);
    assert_eq!(keeper.count(&mine).await.expect("count"), 1);
    let stamped = keeper.update(B, &renamed("b2", json!({"owner": "bob"})), &alices).await.expect("update");
    assert_eq!(stamped.metadata.get("owner"), Some(&json!("alice")), "the grant's metadata is stamped over");

    // Delete takes every version with it.
    keeper.delete(A, &all).await.expect("delete");
    assert_eq!(status(keeper.get(A, &all).await), 404);
    assert_eq!(status(keeper.versions(A, &page, &all).await), 404);
    assert_eq!(status(keeper.delete(A, &all).await), 404);
    let fresh = keeper
        .create(new(A, "again", json!({}), json!({})), false, &all)
        .await
        .expect("the id is free again");
    assert_eq!(fresh.version, 1);
    assert_eq!(keeper.versions(A, &page, &all).await.expect("versions").len(), 1);
}
