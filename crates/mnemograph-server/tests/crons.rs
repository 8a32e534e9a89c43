//! Crons: the official Python client's cron flows (`tests/python/cron_flows.py`) against the
//! server and against Python's own server (`langgraph dev`) serving the twin graphs, so both
//! answer `client.crons` the same way and both run the graph on schedule; and what the client
//! cannot see: refusals that store nothing, and a tick's run posting its webhook.
//!
//! The SDK flows need `LANGGRAPH_PYTHON`, a Python with `langgraph-sdk` and
//! `langgraph-cli[inmem]` (`scripts/python-peer.sh` makes one); without it they print why and
//! pass, unless `CI` is set.

mod support;

use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{json, Value};

/// How often the servers of these tests look for due crons: the flows' crons fire every second.
const POLL: Duration = Duration::from_millis(100);

async fn serve(server: mnemograph_server::Server) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(server.serve(listener));
    url
}

async fn call(method: reqwest::Method, url: String, body: Option<Value>) -> (StatusCode, Value) {
    let request = support::http_client().request(method, url);
    let request = match body {
        Some(body) => request.json(&body),
        None => request,
    };
    let response = request.send().await.unwrap();
    let status = response.status();
    (status, response.json().await.unwrap_or(Value::Null))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_python_sdk_cron_flows_pass_against_the_server() {
    let Some(python) = support::python::python() else { return };
    let url = serve(support::graphs::server().with_cron_poll_interval(POLL)).await;
    tokio::task::spawn_blocking(move || support::python::run_script(&python, "cron_flows.py", &url))
        .await
        .unwrap_or_else(|e| std::panic::resume_unwind(e.into_panic()));
}

#[test]
fn the_same_cron_flows_pass_against_pythons_own_server() {
    let Some(python) = support::python::python() else { return };
    // Its scheduler looks every second (LangGraph's `CRON_SCHEDULER_SLEEP_TIME`, five by default).
    let server = support::langgraph_dev::LanggraphDev::start(&python, &[("CRON_SCHEDULER_SLEEP_TIME", "1")]);
    support::python::run_script(&python, "cron_flows.py", &server.url);
}

/// Each schedule's next run date is the one LangGraph's scheduler computes with `croniter` from
/// the same moment (the cron's `created_at`), asked of the Python peer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn schedules_fire_when_croniter_says_they_do() {
    let Some(python) = support::python::python() else { return };
    let url = serve(support::graphs::server()).await;
    let schedules = [
        ("*/5 * * * *", None),
        ("27 15 * * *", None),
        ("0 9 * * MON", None),
        ("0 0 15 * FRI", None),
        ("0 12 1-7 * 1", None),
        ("5,10-20/5 * * * *", None),
        ("0-59/7 * * * 7", None),
        ("0 0 29 2 *", None),
        ("0 0 * * 5#2", None),
        ("* * L * *", None),
        ("* * * * * */10", None),
        ("* * * * * 15", None),
        ("@hourly", None),
        ("@midnight", None),
        ("0 9 * * *", Some("America/New_York")),
        ("30 2 * * *", Some("Asia/Kolkata")),
    ];
    let mut asked = Vec::new();
    let mut ours = Vec::new();
    for (schedule, timezone) in schedules {
        let body =
            json!({"assistant_id": "chain", "schedule": schedule, "timezone": timezone, "enabled": false});
        let (status, cron) = call(reqwest::Method::POST, format!("{url}/runs/crons"), Some(body)).await;
        assert_eq!(status, StatusCode::OK, "{schedule}: {cron}");
        asked.push(json!({"schedule": schedule, "timezone": timezone, "base": cron["created_at"]}));
        ours.push(cron["next_run_date"].as_str().unwrap().to_owned());
    }
    let theirs = tokio::task::spawn_blocking(move || croniter_next(&python, &Value::Array(asked)))
        .await
        .unwrap_or_else(|e| std::panic::resume_unwind(e.into_panic()));
    for ((schedule, _), (ours, theirs)) in schedules.iter().zip(ours.iter().zip(&theirs)) {
        let parse = |t: &str| chrono::DateTime::parse_from_rfc3339(t).unwrap();
        assert_eq!(parse(ours), parse(theirs), "{schedule}: ours {ours}, croniter {theirs}");
    }
}

/// `croniter`'s next times for `asked` (`tests/python/croniter_next.py`).
fn croniter_next(python: &str, asked: &Value) -> Vec<String> {
    use std::io::Write;
    let mut child = std::process::Command::new(python)
        .arg(support::python::dir().join("croniter_next.py"))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("python starts");
    child.stdin.take().unwrap().write_all(asked.to_string().as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "croniter_next.py failed");
    serde_json::from_slice(&out.stdout).expect("a JSON list of times")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cron_that_could_never_run_is_refused_and_nothing_is_stored() {
    let url = serve(support::graphs::server().with_cron_poll_interval(POLL)).await;
    let post = |path: &str, body: Value| call(reqwest::Method::POST, format!("{url}{path}"), Some(body));
    let (_, thread) = post("/threads", json!({})).await;
    let tid = thread["thread_id"].as_str().unwrap().to_owned();
    let marked = json!({"refused": true});
    let base = json!({"assistant_id": "chain", "schedule": "* * * * *", "metadata": marked});
    let with = |extra: Value| {
        let mut body = base.clone();
        body.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
        body
    };
    for (body, want) in [
        (with(json!({"end_time": "2001-01-01T00:00:00+00:00"})), 422),
        (with(json!({"end_time": "next week"})), 422),
        (with(json!({"schedule": "0 0 30 2 *"})), 422),
        (with(json!({"schedule": "* * * * * * 2030"})), 422),
        (with(json!({"on_run_completed": "archive"})), 422),
        (with(json!({"input": "not an object"})), 422),
        (with(json!({"stream_mode": "nonsense"})), 422),
        (with(json!({"multitask_strategy": "sometimes"})), 422),
        (with(json!({"config": {"configurable": {"a": 1}}, "context": {"b": 2}})), 400),
        (with(json!({"assistant_id": "no-such-graph"})), 422),
        (with(json!({"assistant_id": "00000000-0000-0000-0000-000000000001"})), 404),
        (with(json!({"webhook": "http://127.0.0.1:9/hook"})), 422),
    ] {
        let (status, answer) = post("/runs/crons", body.clone()).await;
        assert_eq!(status.as_u16(), want, "{body}: {answer}");
        assert!(answer["detail"].as_str().is_some_and(|d| !d.is_empty()), "{answer}");
        let (status, _) = post(&format!("/threads/{tid}/runs/crons"), body.clone()).await;
        assert_eq!(status.as_u16(), want, "on a thread: {body}");
    }
    let (status, _) = post("/runs/crons", json!([1, 2])).await;
    assert_eq!(status.as_u16(), 422);
    let (_, count) = post("/runs/crons/count", json!({"metadata": marked})).await;
    assert_eq!(count, json!(0), "nothing was stored");

    // An update that would leave a cron unable to run changes nothing.
    let (status, cron) =
        post(&format!("/threads/{tid}/runs/crons"), with(json!({"schedule": "0 0 1 1 *"}))).await;
    assert_eq!(status, StatusCode::OK, "{cron}");
    let cron_url = format!("{url}/runs/crons/{}", cron["cron_id"].as_str().unwrap());
    for (change, want) in [
        (json!({"input": [1]}), 422),
        (json!({"context": {"x": 1}, "config": {"configurable": {"y": 2}}}), 400),
        (json!({"end_time": "2001-01-01T00:00:00Z"}), 422),
        (json!({"webhook": "http://127.0.0.1:9/hook"}), 422),
        (json!({"schedule": "* * *"}), 422),
        (json!({}), 400),
    ] {
        let (status, answer) = call(reqwest::Method::PATCH, cron_url.clone(), Some(change.clone())).await;
        assert_eq!(status.as_u16(), want, "{change}: {answer}");
    }
    let (_, kept) = call(reqwest::Method::GET, cron_url.clone(), None).await;
    assert_eq!(kept, cron, "refused updates changed nothing");
    let (status, _) = call(reqwest::Method::GET, format!("{url}/runs/crons/not-a-uuid"), None).await;
    assert_eq!(status.as_u16(), 422);
    let (status, _) = post("/runs/crons/search", json!({"assistant_id": "chain"})).await;
    assert_eq!(status.as_u16(), 422, "a search names assistants by UUID, as LangGraph's does");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crons_tick_runs_as_a_run_with_the_crons_metadata_and_id() {
    let url = serve(support::graphs::server().with_cron_poll_interval(POLL)).await;
    let post = |path: &str, body: Value| call(reqwest::Method::POST, format!("{url}{path}"), Some(body));
    let (_, thread) = post("/threads", json!({})).await;
    let tid = thread["thread_id"].as_str().unwrap().to_owned();
    let body = json!({
        "assistant_id": "configured", "schedule": "* * * * * *", "input": {"log": []},
        "metadata": {"from": "cron", "shared": "cron"},
        "context": {"greeting": "scheduled"},
    });
    let (status, cron) = post(&format!("/threads/{tid}/runs/crons"), body).await;
    assert_eq!(status, StatusCode::OK, "{cron}");
    let cron_id = cron["cron_id"].as_str().unwrap().to_owned();
    let mut runs = Value::Null;
    for _ in 0..100 {
        (_, runs) = call(reqwest::Method::GET, format!("{url}/threads/{tid}/runs"), None).await;
        if runs.as_array().is_some_and(|r| r.iter().any(|r| r["status"] == "success")) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    call(reqwest::Method::DELETE, format!("{url}/runs/crons/{cron_id}"), None).await;
    let run = runs.as_array().and_then(|r| r.iter().find(|r| r["status"] == "success")).cloned();
    let run = run.unwrap_or_else(|| panic!("no tick ran: {runs}"));
    assert_eq!(run["metadata"]["from"], "cron", "{run}");
    assert_eq!(run["kwargs"]["config"]["configurable"]["cron_id"], json!(cron_id), "{run}");
    let (_, state) = call(reqwest::Method::GET, format!("{url}/threads/{tid}/state"), None).await;
    assert_eq!(
        state["values"]["log"][0], "greeting:scheduled",
        "the cron's context reached the node: {state}"
    );
}

#[cfg(feature = "webhooks")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stateless_crons_run_posts_its_webhook_and_its_thread_is_deleted() {
    use support::receiver::Receiver;
    let hooks = Receiver::start(Vec::new()).await;
    let policy = mnemograph_server::WebhookPolicy::new().allow_host(hooks.host());
    let server = support::graphs::server().with_webhooks(policy).unwrap().with_cron_poll_interval(POLL);
    let url = serve(server).await;
    let body = json!({"assistant_id": "chain", "schedule": "* * * * * *", "input": {"log": []}, "webhook": hooks.url});
    let (status, cron) = call(reqwest::Method::POST, format!("{url}/runs/crons"), Some(body)).await;
    assert_eq!(status, StatusCode::OK, "{cron}");
    let delivered = hooks.wait_delivered(1).await;
    call(reqwest::Method::DELETE, format!("{url}/runs/crons/{}", cron["cron_id"].as_str().unwrap()), None)
        .await;
    assert_eq!(delivered[0]["status"], "success", "{delivered:?}");
    assert_eq!(delivered[0]["values"]["log"], json!(["a", "b"]), "{delivered:?}");
    // A stateless cron deletes each tick's thread when its run ends (`on_run_completed: delete`).
    let thread = format!("{url}/threads/{}", delivered[0]["thread_id"].as_str().unwrap());
    let mut status = StatusCode::OK;
    for _ in 0..50 {
        (status, _) = call(reqwest::Method::GET, thread.clone(), None).await;
        if status == StatusCode::NOT_FOUND {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(status, StatusCode::NOT_FOUND, "the tick's thread was deleted");
}
