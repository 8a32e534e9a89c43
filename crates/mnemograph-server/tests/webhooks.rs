//! Webhooks: a run naming a `webhook` gets its final record POSTed there when it ends — after
//! success, failure, an interrupt or a cancel, whichever way it was created — retried after a
//! receiver's 5xx or broken connection, never holding up the run, and never sent to a target the
//! server's policy does not allow. The receivers are real HTTP servers on loopback ports.

mod support;

use std::time::{Duration, Instant};

use mnemograph_server::{Server, WebhookPolicy};
use serde_json::{json, Value};
use support::receiver::{Answer, Receiver};

/// A policy allowing `receivers`, with quick retries.
fn policy(receivers: &[&Receiver]) -> WebhookPolicy {
    receivers
        .iter()
        .fold(WebhookPolicy::new(), |p, r| p.allow_host(r.host()))
        .backoff(Duration::from_millis(50))
}

/// Serves `server` on a free port; its URL.
async fn serve(server: Server) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(server.serve(listener));
    url
}

/// The test graphs (`support::graphs`) with webhooks to `policy`'s targets.
async fn server(policy: WebhookPolicy) -> String {
    serve(support::graphs::server().with_webhooks(policy).expect("a valid policy")).await
}

/// The status and JSON body of a POST.
async fn post_raw(url: &str, body: Value) -> (u16, Value) {
    let response = support::http_client().post(url).json(&body).send().await.unwrap();
    let status = response.status().as_u16();
    (status, response.json().await.unwrap_or(Value::Null))
}

async fn post(url: &str, body: Value) -> Value {
    let (status, body) = post_raw(url, body).await;
    assert!((200..300).contains(&status), "{url}: {status} {body}");
    body
}

async fn get(url: &str) -> Value {
    support::http_client().get(url).send().await.unwrap().json().await.unwrap()
}

async fn thread(url: &str) -> String {
    post(&format!("{url}/threads"), json!({})).await["thread_id"].as_str().unwrap().to_owned()
}

/// Checks the fields LangGraph's server sends with every final record.
fn assert_final_record(record: &Value, run_id: &str, thread_id: &str, status: &str, hook: &str) {
    assert_eq!(record["run_id"], run_id, "{record}");
    assert_eq!(record["thread_id"], thread_id, "{record}");
    assert_eq!(record["status"], status, "{record}");
    assert_eq!(record["kwargs"]["webhook"], hook, "{record}");
    for field in
        ["assistant_id", "created_at", "updated_at", "run_started_at", "run_ended_at", "webhook_sent_at"]
    {
        assert!(record[field].is_string(), "`{field}` in {record}");
    }
    assert!(record["metadata"].is_object() && record.get("values").is_some(), "{record}");
    assert!(record["run_started_at"].as_str() <= record["run_ended_at"].as_str(), "{record}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_that_succeeds_posts_its_final_record_however_it_was_created() {
    let hooks = Receiver::start(Vec::new()).await;
    let url = server(policy(&[&hooks])).await;
    let hook = hooks.url.clone();

    // runs.wait on a thread.
    let tid = thread(&url).await;
    let body = json!({"assistant_id": "chain", "input": {"log": []}, "webhook": hook});
    let out = post(&format!("{url}/threads/{tid}/runs/wait"), body.clone()).await;
    assert_eq!(out["log"], json!(["a", "b"]));
    let record = hooks.wait_delivered(1).await.remove(0);
    let runs = get(&format!("{url}/threads/{tid}/runs")).await;
    assert_final_record(&record, runs[0]["run_id"].as_str().unwrap(), &tid, "success", &hook);
    assert_eq!(record["values"], json!({"log": ["a", "b"]}));
    assert!(record.get("error").is_none(), "no error on a success: {record}");
    assert_eq!(hooks.requests()[0].content_type, "application/json");

    // runs.stream on a thread: the stream ends, then the record arrives.
    let stream = support::http_client()
        .post(format!("{url}/threads/{tid}/runs/stream"))
        .json(
            &json!({"assistant_id": "chain", "input": {"log": []}, "webhook": hook, "stream_mode": "values"}),
        )
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(stream.contains("event: values"), "{stream}");
    let record = hooks.wait_delivered(2).await.remove(1);
    assert_eq!(record["values"], json!({"log": ["a", "b", "a", "b"]}));

    // A stateless run, waited on and created in the background: its thread is gone after, its
    // record still reaches the webhook.
    let out = post(&format!("{url}/runs/wait"), body.clone()).await;
    assert_eq!(out["log"], json!(["a", "b"]));
    let record = hooks.wait_delivered(3).await.remove(2);
    assert_eq!(
        (record["status"].clone(), record["values"].clone()),
        (json!("success"), json!({"log": ["a", "b"]}))
    );
    let run = post(&format!("{url}/runs"), body).await;
    let record = hooks.wait_delivered(4).await.remove(3);
    assert_eq!(record["run_id"], run["run_id"]);
    assert_eq!(hooks.requests().len(), 4, "one request per run");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_run_posts_its_error() {
    let hooks = Receiver::start(Vec::new()).await;
    let url = server(policy(&[&hooks])).await;
    let tid = thread(&url).await;
    let body = json!({"assistant_id": "failing", "input": {"log": []}, "webhook": hooks.url});
    let run = post(&format!("{url}/threads/{tid}/runs"), body).await;
    let run_id = run["run_id"].as_str().unwrap();
    let out = get(&format!("{url}/threads/{tid}/runs/{run_id}/join")).await;
    assert!(out["__error__"].is_object(), "{out}");
    let record = hooks.wait_delivered(1).await.remove(0);
    assert_final_record(&record, run_id, &tid, "error", &hooks.url);
    assert!(record["error"]["message"].as_str().unwrap().contains("boom happened"), "{record}");
    assert!(record["error"]["error"].is_string(), "{record}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_stopped_at_an_interrupt_posts_success_with_the_values_so_far() {
    let hooks = Receiver::start(Vec::new()).await;
    let url = server(policy(&[&hooks])).await;
    let tid = thread(&url).await;
    let body = json!({"assistant_id": "approve", "input": {"log": []}, "webhook": hooks.url});
    post(&format!("{url}/threads/{tid}/runs/wait"), body).await;
    let record = hooks.wait_delivered(1).await.remove(0);
    // As LangGraph's server reports it: the run succeeded, its thread waits on the interrupt.
    assert_eq!(record["status"], "success", "{record}");
    assert_eq!(record["values"], json!({"log": ["a"]}));
    assert_eq!(get(&format!("{url}/threads/{tid}")).await["status"], "interrupted");

    // The resuming run has a webhook of its own.
    let resume = json!({"assistant_id": "approve", "command": {"resume": "yes"}, "webhook": hooks.url});
    post(&format!("{url}/threads/{tid}/runs/wait"), resume).await;
    let record = hooks.wait_delivered(2).await.remove(1);
    assert_eq!(record["values"], json!({"log": ["a", "ask:yes", "b"]}));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_run_posts_interrupted() {
    let hooks = Receiver::start(Vec::new()).await;
    let url = server(policy(&[&hooks])).await;
    let tid = thread(&url).await;
    let body = json!({"assistant_id": "sleepy", "input": {"log": []}, "webhook": hooks.url});
    let run = post(&format!("{url}/threads/{tid}/runs"), body).await;
    let run_id = run["run_id"].as_str().unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    let (status, _) = post_raw(&format!("{url}/threads/{tid}/runs/{run_id}/cancel"), json!({})).await;
    assert!((200..300).contains(&status), "cancel: {status}");
    let record = hooks.wait_delivered(1).await.remove(0);
    assert_final_record(&record, run_id, &tid, "interrupted", &hooks.url);
    assert_eq!(record["error"]["error"], "UserInterrupt", "{record}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_receiver_that_fails_first_gets_the_record_once_after_retries() {
    let hooks = Receiver::start(vec![Answer::Status(503), Answer::Close]).await;
    let url = server(policy(&[&hooks])).await;
    let tid = thread(&url).await;
    let body = json!({"assistant_id": "chain", "input": {"log": []}, "webhook": hooks.url});
    post(&format!("{url}/threads/{tid}/runs/wait"), body).await;
    let delivered = hooks.wait_delivered(1).await;
    // Time for a wrong extra attempt to arrive.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let requests = hooks.requests();
    assert_eq!(requests.len(), 3, "503, a closed connection, then the delivery: {requests:?}");
    assert_eq!(hooks.delivered().len(), 1, "delivered once");
    assert!(requests.iter().all(|r| r.body["run_id"] == delivered[0]["run_id"]), "the same run each time");
    assert_eq!(delivered[0]["status"], "success");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_receiver_refusing_for_good_or_never_answering_gets_bounded_attempts() {
    // A 4xx is the receiver's answer: not retried.
    let refusing = Receiver::start(vec![Answer::Status(400)]).await;
    // Never answers: each attempt times out, and the attempts stop at the policy's count.
    let silent = Receiver::start(vec![Answer::Hang, Answer::Hang, Answer::Hang]).await;
    let policy = policy(&[&refusing, &silent]).timeout(Duration::from_millis(300)).attempts(2);
    let url = server(policy).await;
    let tid = thread(&url).await;
    for hook in [&refusing.url, &silent.url] {
        let body = json!({"assistant_id": "chain", "input": {"log": []}, "webhook": hook});
        post(&format!("{url}/threads/{tid}/runs/wait"), body).await;
    }
    silent.wait_requests(2).await;
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert_eq!(refusing.requests().len(), 1, "a 400 is not retried");
    assert_eq!(silent.requests().len(), 2, "two attempts, each timed out");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_receiver_that_hangs_does_not_delay_the_run() {
    let hooks = Receiver::start(vec![Answer::Hang]).await;
    let url = server(policy(&[&hooks]).timeout(Duration::from_secs(120))).await;
    let tid = thread(&url).await;
    let body = json!({"assistant_id": "chain", "input": {"log": []}, "webhook": hooks.url});
    let started = Instant::now();
    post(&format!("{url}/threads/{tid}/runs/wait"), body.clone()).await;
    hooks.wait_requests(1).await;
    // The next run on the thread starts and ends while the first's webhook is still unanswered.
    let out = post(&format!("{url}/threads/{tid}/runs/wait"), body).await;
    assert_eq!(out["log"], json!(["a", "b", "a", "b"]));
    assert_eq!(get(&format!("{url}/threads/{tid}")).await["status"], "idle");
    assert!(started.elapsed() < Duration::from_secs(60), "the runs waited on the webhook");
    hooks.wait_delivered(1).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_target_the_policy_does_not_allow_is_refused_and_never_contacted() {
    let allowed = Receiver::start(Vec::new()).await;
    let other = Receiver::start(Vec::new()).await;
    let url = server(policy(&[&allowed])).await;
    let tid = thread(&url).await;
    for (path, hook) in [
        (format!("{url}/threads/{tid}/runs"), other.url.clone()),
        (format!("{url}/threads/{tid}/runs/wait"), other.url.clone()),
        (format!("{url}/threads/{tid}/runs/stream"), other.url.clone()),
        (format!("{url}/runs/wait"), other.url.clone()),
        (format!("{url}/runs"), "/threads".to_owned()),
        (format!("{url}/runs"), "file:///etc/passwd".to_owned()),
    ] {
        let body = json!({"assistant_id": "chain", "input": {"log": []}, "webhook": hook});
        let (status, answer) = post_raw(&path, body).await;
        assert_eq!(status, 422, "{path} with webhook {hook}: {answer}");
        assert!(answer["detail"].as_str().unwrap().contains("not allowed"), "{answer}");
    }
    assert_eq!(get(&format!("{url}/threads/{tid}/runs")).await, json!([]), "no run was created");

    // An allowed receiver that redirects to another address is not followed there, even to one
    // the policy allows on the same machine.
    let redirecting = Receiver::start(vec![Answer::Redirect(other.url.clone())]).await;
    let url = server(policy(&[&redirecting, &other])).await;
    let body = json!({"assistant_id": "chain", "input": {"log": []}, "webhook": redirecting.url});
    post(&format!("{url}/runs/wait"), body).await;
    redirecting.wait_requests(1).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(other.requests().is_empty(), "nothing reached the other address: {:?}", other.requests());
    assert_eq!(redirecting.requests().len(), 1, "a redirect is the receiver's answer, not retried");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_redirect_on_the_receivers_own_address_is_followed() {
    let hooks = Receiver::start(vec![Answer::Redirect("/hook/moved".into())]).await;
    let url = server(policy(&[&hooks])).await;
    let body = json!({"assistant_id": "chain", "input": {"log": []}, "webhook": hooks.url});
    post(&format!("{url}/runs/wait"), body).await;
    let delivered = hooks.wait_delivered(1).await;
    assert_eq!(delivered[0]["status"], "success");
    assert_eq!(hooks.requests().len(), 2, "the redirect, then the record at the new path");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_policy_every_webhook_is_refused() {
    let hooks = Receiver::start(Vec::new()).await;
    let url = serve(support::graphs::server()).await;
    let body = json!({"assistant_id": "chain", "input": {"log": []}, "webhook": hooks.url});
    let (status, answer) = post_raw(&format!("{url}/runs/wait"), body).await;
    assert_eq!(status, 422, "{answer}");
    assert!(answer["detail"].as_str().unwrap().contains("webhooks are off"), "{answer}");
    // A run without one runs as before.
    let out = post(&format!("{url}/runs/wait"), json!({"assistant_id": "chain", "input": {"log": []}})).await;
    assert_eq!(out["log"], json!(["a", "b"]));
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(hooks.requests().is_empty());
}

#[test]
fn a_malformed_policy_is_an_error_when_given_to_the_server() {
    let bad = support::graphs::server().with_webhooks(WebhookPolicy::new().allow_host("not a host/"));
    assert!(bad.is_err());
}
