//! Authentication and authorization: who may call the server, and what each caller sees. Two users
//! (`alice`, `bob`) of a static token table drive it through the official Python SDK with bearer
//! headers (`tests/python/auth_flows.py`), in one process and in a cluster; the rest checks what the
//! SDK cannot see: hooks and nodes learn the caller, a public listener needs auth, streams are
//! capped per caller.

mod support;

use std::sync::{Arc, Mutex};

use mnemograph_core::prelude::*;
use mnemograph_core::store::{
    InMemoryStore, Item, ListNamespaces, SearchItem, SearchQuery, Store, StoreError,
};
use mnemograph_core::{BoxError, BoxFuture};
use mnemograph_server::auth::{Access, Action, Auth, BearerTokens, Grant, Identity, Parts, Resource};
use mnemograph_server::{Limits, RunContext, RunHooks, Server, ServerError};
use reqwest::StatusCode;
use serde_json::{json, Value};
use support::graphs::{chain, Log};

const TOKENS: &str = "alice:token-a,bob:token-b";

/// How often the flows' servers look for due crons: the flows' crons fire every second.
const CRON_POLL: std::time::Duration = std::time::Duration::from_millis(100);

fn tokens() -> BearerTokens {
    BearerTokens::parse(TOKENS).expect("a valid token table")
}

async fn serve(server: Server) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(server.serve(listener));
    url
}

/// A request as `token`'s user (no `Authorization` header for `None`).
fn call(method: reqwest::Method, url: String, token: Option<&str>) -> reqwest::RequestBuilder {
    let request = support::http_client().request(method, url);
    match token {
        Some(t) => request.bearer_auth(t),
        None => request,
    }
}

async fn post(url: String, token: &str, body: Value) -> (StatusCode, Value) {
    let response = call(reqwest::Method::POST, url, Some(token)).json(&body).send().await.unwrap();
    let status = response.status();
    (status, response.json().await.unwrap_or(Value::Null))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_users_of_the_python_sdk_see_only_their_own() {
    let Some(python) = support::python::python() else { return };
    let server = support::graphs::server().with_auth(tokens()).with_cron_poll_interval(CRON_POLL);
    let url = serve(server).await;
    tokio::task::spawn_blocking(move || support::python::run_script(&python, "auth_flows.py", &url))
        .await
        .unwrap_or_else(|e| std::panic::resume_unwind(e.into_panic()));
}

#[tokio::test]
async fn a_request_without_a_known_token_is_refused_with_a_challenge_but_ok_answers() {
    let url = serve(support::graphs::server().with_auth(tokens())).await;
    for token in [None, Some("token-c")] {
        let response = call(reqwest::Method::POST, format!("{url}/threads/search"), token)
            .json(&json!({}))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::UNAUTHORIZED, "{token:?}");
        assert_eq!(response.headers()["www-authenticate"], "Bearer");
        let body: Value = response.json().await.unwrap();
        assert!(body["detail"].as_str().unwrap().contains("not authenticated"), "{body}");
    }
    let ok = call(reqwest::Method::GET, format!("{url}/ok"), None).send().await.unwrap();
    assert_eq!(ok.status(), StatusCode::OK);
}

/// Who a hook was told started a run, and the run's `owner` metadata.
type Learned = (Option<String>, Value);

/// Records what hooks learn of each run.
#[derive(Default, Clone)]
struct Seen(Arc<Mutex<Vec<Learned>>>);

impl RunHooks<Log> for Seen {
    fn before_run<'a>(
        &'a self,
        _: &'a CompiledGraph<Log>,
        run: &'a RunContext,
        _: &'a mut RunConfig,
    ) -> BoxFuture<'a, Result<(), BoxError>> {
        let who = run.identity.as_ref().map(|u| u.identity.clone());
        self.0.lock().unwrap().push((who, run.metadata.get("owner").cloned().unwrap_or(Value::Null)));
        Box::pin(async { Ok(()) })
    }
}

#[tokio::test]
async fn hooks_learn_the_caller_and_metadata_cannot_name_another() {
    let seen = Seen::default();
    let server = Server::new(InMemoryCheckpointer::new())
        .graph_with_hooks("chain", chain().compile().unwrap(), seen.clone())
        .unwrap()
        .with_auth(tokens());
    let url = serve(server).await;
    let body = json!({"assistant_id": "chain", "input": {"log": []}, "metadata": {"owner": "bob"}});
    let (status, out) = post(format!("{url}/runs/wait"), "token-a", body).await;
    assert_eq!(status, StatusCode::OK, "{out}");
    assert_eq!(*seen.0.lock().unwrap(), [(Some("alice".to_owned()), json!("alice"))]);
}

/// A policy of one's own: a read-only user may search but not create.
struct ReadOnly;

impl Auth for ReadOnly {
    fn authenticate<'a>(&'a self, _: &'a Parts) -> BoxFuture<'a, mnemograph_server::Result<Identity>> {
        Box::pin(async { Ok(Identity::new("viewer").permissions(["read"])) })
    }

    fn authorize<'a>(
        &'a self,
        user: &'a Identity,
        access: &'a Access<'a>,
    ) -> BoxFuture<'a, mnemograph_server::Result<Grant>> {
        Box::pin(async move {
            match (access.resource, access.action) {
                (Resource::Threads, Action::Read | Action::Search) => Ok(Grant::all()),
                _ => Err(ServerError::Forbidden(format!("{} may only read threads", user.identity))),
            }
        })
    }
}

#[tokio::test]
async fn a_policy_that_refuses_answers_403_and_changes_nothing() {
    let url = serve(support::graphs::server().with_auth(ReadOnly)).await;
    let (status, body) = post(format!("{url}/threads"), "any", json!({})).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    assert!(body["detail"].as_str().unwrap().contains("viewer may only read threads"), "{body}");
    let (status, found) = post(format!("{url}/threads/search"), "any", json!({})).await;
    assert_eq!((status, found), (StatusCode::OK, json!([])));
    let (status, _) = post(format!("{url}/store/items/search"), "any", json!({})).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
}

/// The static token table's users, each owning what it makes, but for one resource, where every
/// caller gets `grant(caller)` instead.
struct OwnersBut {
    tokens: BearerTokens,
    resource: Resource,
    grant: fn(&Identity) -> Grant,
}

impl Auth for OwnersBut {
    fn authenticate<'a>(&'a self, parts: &'a Parts) -> BoxFuture<'a, mnemograph_server::Result<Identity>> {
        self.tokens.authenticate(parts)
    }

    fn authorize<'a>(
        &'a self,
        user: &'a Identity,
        access: &'a Access<'a>,
    ) -> BoxFuture<'a, mnemograph_server::Result<Grant>> {
        Box::pin(async move {
            if access.resource == self.resource {
                Ok((self.grant)(user))
            } else {
                mnemograph_server::auth::owner_grant(user, access)
            }
        })
    }
}

/// Assistants private to their owner: reads and searches of assistants are filtered by owner as
/// everything else is.
fn private_assistants() -> OwnersBut {
    OwnersBut {
        tokens: tokens(),
        resource: Resource::Assistants,
        grant: |user| Grant::all().metadata("owner", user.identity.clone()),
    }
}

async fn get(url: String, token: &str) -> (StatusCode, Value) {
    let response = call(reqwest::Method::GET, url, Some(token)).send().await.unwrap();
    let status = response.status();
    (status, response.json().await.unwrap_or(Value::Null))
}

#[tokio::test]
async fn an_assistant_the_caller_may_not_read_answers_as_a_missing_one() {
    let url = serve(support::graphs::server().with_auth(private_assistants())).await;
    let (status, mine) =
        post(format!("{url}/assistants"), "token-a", json!({"graph_id": "configured"})).await;
    assert_eq!(status, StatusCode::OK, "{mine}");
    let id = mine["assistant_id"].as_str().expect("an id").to_owned();
    let missing = "00000000-0000-4000-8000-000000000000";
    for (mine, none) in [
        (format!("{url}/assistants/{id}"), format!("{url}/assistants/{missing}")),
        (format!("{url}/assistants/{id}/schemas"), format!("{url}/assistants/{missing}/schemas")),
        (format!("{url}/assistants/{id}/graph"), format!("{url}/assistants/{missing}/graph")),
    ] {
        let (status, body) = get(mine, "token-b").await;
        let (_, absent) = get(none, "token-b").await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
        assert_eq!(
            body["detail"].as_str().map(|d| d.replace(&id, missing)),
            absent["detail"].as_str().map(str::to_owned)
        );
    }
    let (status, _) = post(format!("{url}/assistants/{id}/versions"), "token-b", json!({})).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let run = json!({"assistant_id": id, "input": {"log": []}});
    let (status, body) = post(format!("{url}/runs/wait"), "token-b", run.clone()).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
    let (_, found) =
        post(format!("{url}/assistants/search"), "token-b", json!({"graph_id": "configured"})).await;
    assert_eq!(found, json!([]));
    let (_, counted) = post(format!("{url}/assistants/count"), "token-b", json!({})).await;
    assert_eq!(counted, json!(0));
    // Its owner reads and runs it; a graph's system assistant runs for every caller, as in
    // LangGraph, whatever the read grant says of it.
    assert_eq!(get(format!("{url}/assistants/{id}"), "token-a").await.0, StatusCode::OK);
    let (status, out) = post(format!("{url}/runs/wait"), "token-a", run).await;
    assert_eq!((status, out["log"].clone()), (StatusCode::OK, json!(["greeting:none"])));
    let system = json!({"assistant_id": "chain", "input": {"log": []}});
    assert_eq!(post(format!("{url}/runs/wait"), "token-b", system).await.0, StatusCode::OK);
}

/// Crons everyone may see, threads private to their owner.
fn shared_crons() -> OwnersBut {
    OwnersBut { tokens: tokens(), resource: Resource::Crons, grant: |_| Grant::all() }
}

#[tokio::test]
async fn crons_on_threads_the_caller_may_not_read_are_left_out_of_search_and_count() {
    let url = serve(support::graphs::server().with_auth(shared_crons())).await;
    let (_, thread) = post(format!("{url}/threads"), "token-a", json!({})).await;
    let tid = thread["thread_id"].as_str().expect("a thread id").to_owned();
    let yearly = json!({"assistant_id": "chain", "schedule": "0 0 1 1 *", "metadata": {"flow": "shared"}});
    let (status, on_thread) =
        post(format!("{url}/threads/{tid}/runs/crons"), "token-a", yearly.clone()).await;
    assert_eq!(status, StatusCode::OK, "{on_thread}");
    let (status, stateless) = post(format!("{url}/runs/crons"), "token-a", yearly).await;
    assert_eq!(status, StatusCode::OK, "{stateless}");
    let ids = |found: &Value| -> Vec<String> {
        let mut ids: Vec<String> = found
            .as_array()
            .into_iter()
            .flatten()
            .map(|c| c["cron_id"].as_str().unwrap_or("").to_owned())
            .collect();
        ids.sort();
        ids
    };
    let filter = json!({"metadata": {"flow": "shared"}});
    let mut both = vec![
        on_thread["cron_id"].as_str().unwrap().to_owned(),
        stateless["cron_id"].as_str().unwrap().to_owned(),
    ];
    both.sort();
    // Its maker sees both; the other user only the cron on no thread, in search, pages and count.
    assert_eq!(ids(&post(format!("{url}/runs/crons/search"), "token-a", filter.clone()).await.1), both);
    assert_eq!(post(format!("{url}/runs/crons/count"), "token-a", filter.clone()).await.1, json!(2));
    let (status, seen) = post(format!("{url}/runs/crons/search"), "token-b", filter.clone()).await;
    assert_eq!(status, StatusCode::OK, "{seen}");
    assert_eq!(ids(&seen), [stateless["cron_id"].as_str().unwrap()]);
    assert_eq!(post(format!("{url}/runs/crons/count"), "token-b", filter.clone()).await.1, json!(1));
    let page = json!({"metadata": {"flow": "shared"}, "limit": 1, "offset": 1});
    assert_eq!(post(format!("{url}/runs/crons/search"), "token-b", page).await.1, json!([]));
    // Asked for by its thread: as if the thread had no crons.
    let by_thread = json!({"thread_id": tid});
    let (status, none) = post(format!("{url}/runs/crons/search"), "token-b", by_thread.clone()).await;
    assert_eq!((status, none), (StatusCode::OK, json!([])));
    assert_eq!(post(format!("{url}/runs/crons/count"), "token-b", by_thread.clone()).await.1, json!(0));
    assert_eq!(
        ids(&post(format!("{url}/runs/crons/search"), "token-a", by_thread).await.1),
        [on_thread["cron_id"].as_str().unwrap()]
    );
}

#[tokio::test]
async fn a_server_on_a_public_address_refuses_to_start_without_auth() {
    let listener = tokio::net::TcpListener::bind("0.0.0.0:0").await.unwrap();
    let refused = support::graphs::server().serve(listener).await;
    assert!(
        matches!(&refused, Err(ServerError::Misconfigured(why)) if why.contains("without authentication")),
        "{refused:?}"
    );

    for server in
        [support::graphs::server().allow_unauthenticated(), support::graphs::server().with_auth(tokens())]
    {
        let listener = tokio::net::TcpListener::bind("0.0.0.0:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let serving = tokio::spawn(server.serve(listener));
        let ok = support::http_client().get(format!("http://127.0.0.1:{port}/ok")).send().await.unwrap();
        assert_eq!(ok.status(), StatusCode::OK);
        serving.abort();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_caller_may_hold_only_so_many_streams_open() {
    let server =
        support::graphs::server().with_auth(tokens()).with_limits(Limits::default().max_streams_per_user(1));
    let url = serve(server).await;
    let run = json!({"assistant_id": "sleepy", "input": {"log": []}, "stream_mode": "values"});
    let first = call(reqwest::Method::POST, format!("{url}/runs/stream"), Some("token-a"))
        .json(&run)
        .send()
        .await
        .unwrap();
    assert_eq!(first.status(), StatusCode::OK);
    let (status, body) = post(format!("{url}/runs/stream"), "token-a", run.clone()).await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS, "{body}");
    // The cap is alice's: bob streams.
    let bobs = call(reqwest::Method::POST, format!("{url}/runs/stream"), Some("token-b"))
        .json(&run)
        .send()
        .await
        .unwrap();
    assert_eq!(bobs.status(), StatusCode::OK);
    // Once her stream ends, alice may open another.
    let text = first.text().await.unwrap();
    assert!(text.contains("event: values"), "{text}");
    let again = call(reqwest::Method::POST, format!("{url}/runs/stream"), Some("token-a"))
        .json(&run)
        .send()
        .await
        .unwrap();
    assert_eq!(again.status(), StatusCode::OK);
    drop((bobs, again));
}

/// An in-memory store whose calls take a moment, as a remote store's do: puts at once then
/// interleave between a quota's count and its put.
struct SlowStore(InMemoryStore);

impl Store for SlowStore {
    async fn get(&self, namespace: &[String], key: &str) -> Result<Option<Item>, StoreError> {
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        self.0.get(namespace, key).await
    }

    async fn put(
        &self,
        namespace: &[String],
        key: &str,
        value: serde_json::Value,
        ttl: Option<std::time::Duration>,
    ) -> Result<(), StoreError> {
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        self.0.put(namespace, key, value, ttl).await
    }

    async fn delete(&self, namespace: &[String], key: &str) -> Result<(), StoreError> {
        self.0.delete(namespace, key).await
    }

    async fn search(&self, prefix: &[String], query: SearchQuery) -> Result<Vec<SearchItem>, StoreError> {
        self.0.search(prefix, query).await
    }

    async fn list_namespaces(&self, options: ListNamespaces) -> Result<Vec<Vec<String>>, StoreError> {
        self.0.list_namespaces(options).await
    }

    async fn count(&self, prefix: &[String]) -> Result<usize, StoreError> {
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        self.0.count(prefix).await
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_callers_puts_at_once_do_not_pass_the_store_cap() {
    let server = support::graphs::server()
        .with_store(SlowStore(InMemoryStore::new()))
        .with_auth(tokens())
        .with_limits(Limits::default().max_store_items_per_user(5));
    let url = serve(server).await;
    let puts = (0..40).map(|i| {
        let body = json!({"namespace": ["alice", "notes"], "key": format!("k{i}"), "value": {"v": i}});
        let put =
            call(reqwest::Method::PUT, format!("{url}/store/items"), Some("token-a")).json(&body).send();
        async move { put.await.unwrap().status() }
    });
    let statuses = futures_util::future::join_all(puts).await;
    let stored = statuses.iter().filter(|s| **s == StatusCode::NO_CONTENT).count();
    let refused = statuses.iter().filter(|s| **s == StatusCode::TOO_MANY_REQUESTS).count();
    assert_eq!((stored, refused), (5, 35), "{statuses:?}");
    let search = json!({"namespace_prefix": ["alice"], "limit": 100});
    let found = call(reqwest::Method::POST, format!("{url}/store/items/search"), Some("token-a"))
        .json(&search)
        .send()
        .await
        .unwrap();
    let found: serde_json::Value = found.json().await.unwrap();
    assert_eq!(found["items"].as_array().map(Vec::len), Some(5), "{found}");
}

#[tokio::test]
async fn a_callers_store_items_are_capped_and_the_cap_is_its_own() {
    let server = support::graphs::server()
        .with_auth(tokens())
        .with_limits(Limits::default().max_store_items_per_user(2));
    let url = serve(server).await;
    let put = |token: &'static str, ns: &'static str, key: &'static str| {
        let url = format!("{url}/store/items");
        async move {
            let body = json!({"namespace": [ns, "notes"], "key": key, "value": {"v": 1}});
            call(reqwest::Method::PUT, url, Some(token)).json(&body).send().await.unwrap().status()
        }
    };
    assert_eq!(put("token-a", "alice", "one").await, StatusCode::NO_CONTENT);
    assert_eq!(put("token-a", "alice", "two").await, StatusCode::NO_CONTENT);
    assert_eq!(put("token-a", "alice", "three").await, StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(put("token-a", "alice", "two").await, StatusCode::NO_CONTENT, "a replace is not a new item");
    assert_eq!(put("token-b", "bob", "one").await, StatusCode::NO_CONTENT, "bob's count is his own");
    let gone = json!({"namespace": ["alice", "notes"], "key": "one"});
    let deleted =
        call(reqwest::Method::DELETE, format!("{url}/store/items"), Some("token-a")).json(&gone).send();
    assert_eq!(deleted.await.unwrap().status(), StatusCode::NO_CONTENT);
    assert_eq!(put("token-a", "alice", "three").await, StatusCode::NO_CONTENT);

    let off = support::graphs::server()
        .with_auth(tokens())
        .with_limits(Limits::default().max_store_items_per_user(0));
    let url = serve(off).await;
    let body = json!({"namespace": ["alice"], "key": "k", "value": {}});
    let refused =
        call(reqwest::Method::PUT, format!("{url}/store/items"), Some("token-a")).json(&body).send();
    assert_eq!(
        refused.await.unwrap().status(),
        StatusCode::TOO_MANY_REQUESTS,
        "a store with no room takes no puts"
    );
}
