//! The request guard and the limits, over HTTP: what a browser page of another origin or a
//! re-pointed domain may not do, and how large a request may be.

mod support;

use mnemograph_server::{Limits, Server};
use reqwest::header::{HeaderMap, HeaderValue};
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

/// A served `server` on loopback: its URL and the task serving it.
async fn serve(server: Server) -> (String, tokio::task::JoinHandle<mnemograph_server::Result<()>>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    (url, tokio::spawn(server.serve(listener)))
}

/// The status and the `detail` of a refusal, which must be a JSON body.
async fn refusal(response: reqwest::Response) -> (StatusCode, String) {
    let status = response.status();
    let content_type = response.headers().get("content-type").cloned();
    let body: Value = response.json().await.unwrap_or_else(|e| panic!("{status}: not JSON ({e})"));
    assert_eq!(content_type.as_ref().map(|v| v.to_str().unwrap()), Some("application/json"), "{status}");
    let detail = body["detail"].as_str().unwrap_or_else(|| panic!("{status}: no detail in {body}"));
    (status, detail.to_owned())
}

async fn new_thread(http: &reqwest::Client, url: &str) -> String {
    let thread: Value =
        http.post(format!("{url}/threads")).json(&json!({})).send().await.unwrap().json().await.unwrap();
    thread["thread_id"].as_str().unwrap().to_owned()
}

/// Every thread the server keeps.
async fn threads(http: &reqwest::Client, url: &str) -> Vec<Value> {
    http.post(format!("{url}/threads/search")).json(&json!({})).send().await.unwrap().json().await.unwrap()
}

async fn runs_of(http: &reqwest::Client, url: &str, thread: &str) -> Vec<Value> {
    http.get(format!("{url}/threads/{thread}/runs")).send().await.unwrap().json().await.unwrap()
}

#[tokio::test]
async fn a_text_plain_post_that_would_start_a_run_is_refused_and_starts_none() {
    let (url, serving) = serve(support::graphs::server()).await;
    let http = support::http_client();
    let thread = new_thread(&http, &url).await;
    let run = json!({ "assistant_id": "chain", "input": { "log": [] } }).to_string();
    for path in ["runs", "runs/wait", "runs/stream"] {
        let sent = http
            .post(format!("{url}/threads/{thread}/{path}"))
            .header("content-type", "text/plain;charset=UTF-8")
            .body(run.clone())
            .send()
            .await
            .unwrap();
        let (status, detail) = refusal(sent).await;
        assert_eq!(status, StatusCode::UNSUPPORTED_MEDIA_TYPE, "{path}: {detail}");
        assert!(detail.contains("application/json"), "{detail}");
    }
    let untyped =
        http.post(format!("{url}/threads/{thread}/runs/wait")).body(run.clone()).send().await.unwrap();
    assert_eq!(untyped.status(), StatusCode::UNSUPPORTED_MEDIA_TYPE, "a body without a Content-Type");
    assert_eq!(runs_of(&http, &url, &thread).await, Vec::<Value>::new(), "no run started");
    let json_typed = http
        .post(format!("{url}/threads/{thread}/runs/wait"))
        .header("content-type", "Application/JSON; charset=utf-8")
        .body(run)
        .send()
        .await
        .unwrap();
    assert_eq!(json_typed.status(), StatusCode::OK, "JSON with parameters, in any case, passes");
    serving.abort();
}

#[tokio::test]
async fn empty_bodies_need_no_content_type() {
    let (url, serving) = serve(support::graphs::server()).await;
    let http = support::http_client();
    let created = http.post(format!("{url}/threads")).send().await.unwrap();
    assert_eq!(created.status(), StatusCode::OK);
    let found =
        http.post(format!("{url}/threads/search")).header("content-type", "text/plain").send().await.unwrap();
    assert_eq!(found.status(), StatusCode::OK);
    serving.abort();
}

#[tokio::test]
async fn a_foreign_host_is_refused_with_421_on_get_and_post() {
    let (url, serving) = serve(support::graphs::server()).await;
    let http = support::http_client();
    let ok = http.get(format!("{url}/ok")).header("host", "evil.example").send().await.unwrap();
    let (status, detail) = refusal(ok).await;
    assert_eq!(status, StatusCode::MISDIRECTED_REQUEST);
    assert!(detail.contains("evil.example"), "{detail}");
    let create = http
        .post(format!("{url}/threads"))
        .header("host", "evil.example:2024")
        .json(&json!({ "metadata": { "from": "evil" } }))
        .send()
        .await
        .unwrap();
    assert_eq!(refusal(create).await.0, StatusCode::MISDIRECTED_REQUEST);
    let found = threads(&http, &url).await;
    assert!(found.is_empty(), "the refused request created nothing: {found:?}");
    for loopback in ["localhost", "LOCALHOST:9", "api.localhost:3000", "[::1]:2024", "127.0.0.1"] {
        let ok = http.get(format!("{url}/ok")).header("host", loopback).send().await.unwrap();
        assert_eq!(ok.status(), StatusCode::OK, "{loopback}");
    }
    serving.abort();
}

#[tokio::test]
async fn allowed_hosts_admit_the_listed_names_and_allow_any_host_admits_all() {
    let listed = support::graphs::server().allowed_hosts(["agents.example.com", "10.0.0.5:2024"]);
    let (url, serving) = serve(listed).await;
    let http = support::http_client();
    let status = |host: &'static str| {
        let (http, url) = (http.clone(), url.clone());
        async move { http.get(format!("{url}/ok")).header("host", host).send().await.unwrap().status() }
    };
    assert_eq!(status("agents.example.com").await, StatusCode::OK);
    assert_eq!(status("Agents.Example.com:8443").await, StatusCode::OK, "any port when none is listed");
    assert_eq!(status("10.0.0.5:2024").await, StatusCode::OK);
    assert_eq!(status("10.0.0.5:2025").await, StatusCode::MISDIRECTED_REQUEST, "only the port listed");
    assert_eq!(status("localhost:2024").await, StatusCode::OK, "loopback stays answered");
    assert_eq!(status("evil.example").await, StatusCode::MISDIRECTED_REQUEST);
    serving.abort();

    let (url, serving) = serve(support::graphs::server().allow_any_host()).await;
    for method in [Method::GET, Method::POST] {
        let path = if method == Method::GET { "ok" } else { "threads" };
        let sent =
            http.request(method.clone(), format!("{url}/{path}")).header("host", "evil.example").send();
        assert_eq!(sent.await.unwrap().status(), StatusCode::OK, "{method}");
    }
    serving.abort();
}

fn preflight_headers(origin: &'static str) -> HeaderMap {
    let mut headers = HeaderMap::new();
    headers.insert("origin", HeaderValue::from_static(origin));
    headers.insert("access-control-request-method", HeaderValue::from_static("POST"));
    headers.insert("access-control-request-headers", HeaderValue::from_static("content-type,x-api-key"));
    headers
}

#[tokio::test]
async fn a_cors_preflight_from_an_allowed_origin_is_answered_and_a_foreign_one_is_not() {
    let server = support::graphs::server().cors_origins(["http://localhost:3000"]);
    let (url, serving) = serve(server).await;
    let http = support::http_client();
    let preflight = |origin: &'static str| {
        let (http, url) = (http.clone(), url.clone());
        async move {
            http.request(Method::OPTIONS, format!("{url}/threads/search"))
                .headers(preflight_headers(origin))
                .send()
                .await
                .unwrap()
        }
    };
    let allowed = preflight("http://localhost:3000").await;
    assert_eq!(allowed.status(), StatusCode::NO_CONTENT);
    let h = allowed.headers();
    assert_eq!(h["access-control-allow-origin"], "http://localhost:3000");
    assert!(h.get_all("vary").iter().any(|v| v.to_str().unwrap().eq_ignore_ascii_case("origin")));
    let methods = h["access-control-allow-methods"].to_str().unwrap();
    for m in ["GET", "POST", "PUT", "PATCH", "DELETE"] {
        assert!(methods.contains(m), "{methods}");
    }
    let headers = h["access-control-allow-headers"].to_str().unwrap();
    for name in ["authorization", "content-type", "x-api-key", "last-event-id", "accept", "prefer"] {
        assert!(headers.contains(name), "{headers}");
    }
    assert!(h["access-control-max-age"].to_str().unwrap().parse::<u32>().unwrap() > 0);

    let foreign = preflight("http://evil.example").await;
    assert!(!foreign.status().is_success(), "{}", foreign.status());
    assert!(
        foreign.headers().keys().all(|k| !k.as_str().starts_with("access-control-")),
        "no CORS headers for a foreign origin: {:?}",
        foreign.headers()
    );

    let simple = http
        .post(format!("{url}/threads/search"))
        .header("origin", "http://localhost:3000")
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    assert_eq!(simple.status(), StatusCode::OK);
    assert_eq!(simple.headers()["access-control-allow-origin"], "http://localhost:3000");
    let exposed = simple.headers()["access-control-expose-headers"].to_str().unwrap();
    assert!(exposed.contains("content-location") && exposed.contains("location"), "{exposed}");
    let read = http.get(format!("{url}/ok")).header("origin", "http://evil.example").send().await.unwrap();
    assert_eq!(read.status(), StatusCode::OK);
    assert!(read.headers().get("access-control-allow-origin").is_none(), "not for a foreign origin");
    serving.abort();
}

#[tokio::test]
async fn cors_is_off_unless_origins_are_listed() {
    let (url, serving) = serve(support::graphs::server()).await;
    let http = support::http_client();
    let sent = http
        .request(Method::OPTIONS, format!("{url}/threads/search"))
        .headers(preflight_headers("http://localhost:3000"))
        .send()
        .await
        .unwrap();
    assert!(!sent.status().is_success(), "{}", sent.status());
    assert!(sent.headers().keys().all(|k| !k.as_str().starts_with("access-control-")));
    serving.abort();
}

#[tokio::test]
async fn a_cross_origin_change_without_a_body_is_refused_and_the_servers_own_pages_pass() {
    let (url, serving) = serve(support::graphs::server()).await;
    let http = support::http_client();
    let forged =
        http.post(format!("{url}/threads")).header("origin", "http://evil.example").send().await.unwrap();
    let (status, detail) = refusal(forged).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    assert!(detail.contains("http://evil.example"), "{detail}");
    let found = threads(&http, &url).await;
    assert!(found.is_empty(), "the forged request created nothing: {found:?}");
    let own_origin = url.clone();
    let own = http.post(format!("{url}/threads")).header("origin", own_origin).send().await.unwrap();
    assert_eq!(own.status(), StatusCode::OK, "a page of the server's own origin");
    let same = http
        .post(format!("{url}/threads"))
        .header("origin", "https://agents.example.com")
        .header("sec-fetch-site", "same-origin")
        .send()
        .await
        .unwrap();
    assert_eq!(same.status(), StatusCode::OK, "a page the browser calls same-origin");
    serving.abort();
}

#[tokio::test]
async fn a_body_over_the_limit_is_refused_with_413_json() {
    let limits = Limits::default().max_body_bytes(1024);
    let (url, serving) = serve(support::graphs::server().with_limits(limits)).await;
    let http = support::http_client();
    let body = |n: usize| json!({ "metadata": { "pad": "x".repeat(n) } }).to_string();
    let under = body(900);
    assert!(under.len() <= 1024);
    let ok = http.post(format!("{url}/threads")).header("content-type", "application/json").body(under);
    assert_eq!(ok.send().await.unwrap().status(), StatusCode::OK);
    let over =
        http.post(format!("{url}/threads")).header("content-type", "application/json").body(body(3000));
    let (status, detail) = refusal(over.send().await.unwrap()).await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE);
    assert!(detail.contains("1024"), "{detail}");
    serving.abort();
}

#[tokio::test]
async fn the_default_body_limit_takes_bodies_above_axums_own_default() {
    assert_eq!(Limits::default().max_body_bytes, 10 * 1024 * 1024);
    let (url, serving) = serve(support::graphs::server()).await;
    let http = support::http_client();
    // Three MiB: above the two axum takes by default, below the server's ten.
    let body = json!({ "metadata": { "pad": "x".repeat(3 << 20) } });
    let sent = http.post(format!("{url}/threads")).json(&body).send().await.unwrap();
    assert_eq!(sent.status(), StatusCode::OK);
    serving.abort();
}

#[tokio::test]
async fn a_page_limit_above_the_maximum_is_refused_on_every_list_endpoint() {
    let (url, serving) = serve(support::graphs::server()).await;
    let http = support::http_client();
    let thread = new_thread(&http, &url).await;
    let wait = json!({ "assistant_id": "chain", "input": { "log": [] } });
    let ran = http.post(format!("{url}/threads/{thread}/runs/wait")).json(&wait).send().await.unwrap();
    assert_eq!(ran.status(), StatusCode::OK);
    let posts = [
        "/threads/search".to_owned(),
        format!("/threads/{thread}/history"),
        "/assistants/search".to_owned(),
        "/store/items/search".to_owned(),
        "/store/namespaces".to_owned(),
    ];
    let gets = [format!("/threads/{thread}/runs"), format!("/threads/{thread}/history")];
    for limit in [json!(1000), json!(1001), json!(-1), json!(2.5), json!("ten")] {
        let accepted = limit == json!(1000);
        for path in &posts {
            let body = json!({ "limit": limit });
            let sent = http.post(format!("{url}{path}")).json(&body).send().await.unwrap();
            if accepted {
                assert_eq!(sent.status(), StatusCode::OK, "POST {path} {body}");
            } else {
                let (status, detail) = refusal(sent).await;
                assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "POST {path} {body}: {detail}");
                assert!(detail.contains("limit"), "{detail}");
            }
        }
        let query = match &limit {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        for path in &gets {
            let sent = http.get(format!("{url}{path}?limit={query}")).send().await.unwrap();
            if accepted {
                assert_eq!(sent.status(), StatusCode::OK, "GET {path}?limit={query}");
            } else {
                let (status, detail) = refusal(sent).await;
                assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "GET {path}?limit={query}: {detail}");
            }
        }
    }
    let negative_offset = http.post(format!("{url}/threads/search")).json(&json!({ "offset": -5 })).send();
    assert_eq!(refusal(negative_offset.await.unwrap()).await.0, StatusCode::UNPROCESSABLE_ENTITY);
    serving.abort();
}

#[tokio::test]
async fn max_page_is_configurable() {
    let (url, serving) = serve(support::graphs::server().with_limits(Limits::default().max_page(5))).await;
    let http = support::http_client();
    let search =
        |limit: u32| http.post(format!("{url}/assistants/search")).json(&json!({ "limit": limit })).send();
    assert_eq!(search(5).await.unwrap().status(), StatusCode::OK);
    assert_eq!(search(6).await.unwrap().status(), StatusCode::UNPROCESSABLE_ENTITY);
    serving.abort();
}

#[tokio::test]
async fn a_recursion_limit_above_the_maximum_is_refused_and_starts_no_run() {
    let (url, serving) = serve(support::graphs::server()).await;
    let http = support::http_client();
    let thread = new_thread(&http, &url).await;
    let run = |limit: usize| json!({ "assistant_id": "chain", "input": { "log": [] }, "config": { "recursion_limit": limit } });
    for path in ["runs", "runs/wait", "runs/stream"] {
        let sent = http.post(format!("{url}/threads/{thread}/{path}")).json(&run(1001)).send().await.unwrap();
        let (status, detail) = refusal(sent).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{path}");
        assert!(detail.contains("recursion_limit") && detail.contains("1000"), "{detail}");
    }
    let stateless = http.post(format!("{url}/runs/wait")).json(&run(1001)).send().await.unwrap();
    assert_eq!(refusal(stateless).await.0, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(runs_of(&http, &url, &thread).await, Vec::<Value>::new(), "no run started");
    let at_max =
        http.post(format!("{url}/threads/{thread}/runs/wait")).json(&run(1000)).send().await.unwrap();
    assert_eq!(at_max.status(), StatusCode::OK);
    serving.abort();
}

#[tokio::test]
async fn a_full_thread_queue_refuses_with_429_and_queues_nothing() {
    let limits = Limits::default().max_queue_per_thread(1);
    let (url, serving) = serve(support::graphs::server().with_limits(limits)).await;
    let http = support::http_client();
    let thread = new_thread(&http, &url).await;
    let sleepy = json!({ "assistant_id": "sleepy", "input": { "log": [] }, "multitask_strategy": "enqueue" });
    let create = || http.post(format!("{url}/threads/{thread}/runs")).json(&sleepy).send();
    assert_eq!(create().await.unwrap().status(), StatusCode::OK, "runs at once");
    assert_eq!(create().await.unwrap().status(), StatusCode::OK, "waits behind the first");
    let (status, detail) = refusal(create().await.unwrap()).await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS, "{detail}");
    let runs = runs_of(&http, &url, &thread).await;
    assert_eq!(runs.len(), 2, "nothing queued: {runs:?}");
    // Other strategies replace the queue rather than grow it.
    let interrupt =
        json!({ "assistant_id": "chain", "input": { "log": [] }, "multitask_strategy": "interrupt" });
    let replaced = http.post(format!("{url}/threads/{thread}/runs")).json(&interrupt).send().await.unwrap();
    assert_eq!(replaced.status(), StatusCode::OK);
    serving.abort();
}
