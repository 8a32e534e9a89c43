//! A burst of requests on one conversation does not hold up the others: the burst's rounds queue
//! inside the process, holding one lock connection between them, so another conversation's
//! round gets a lock connection at once and finishes while the burst is still in its first
//! rounds.

mod support;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use mnemograph_core::messages::Message;
use mnemograph_models::{ChatModel, ChatModelExt, ChatRequest, ChunkStream, Result};
use mysql_chat::OfflineModel;
use tokio::sync::Notify;

/// The offline model, answering after a pause, and counting the calls it started.
#[derive(Clone)]
struct SlowModel {
    /// The pause before each answer.
    delay: Duration,
    /// Calls started so far.
    started: Arc<AtomicUsize>,
    /// Signalled when a call starts.
    call: Arc<Notify>,
}

impl SlowModel {
    async fn pause(&self) {
        self.started.fetch_add(1, Ordering::SeqCst);
        self.call.notify_waiters();
        tokio::time::sleep(self.delay).await;
    }
}

impl ChatModel for SlowModel {
    async fn invoke(&self, request: ChatRequest) -> Result<Message> {
        self.pause().await;
        OfflineModel.invoke(request).await
    }

    async fn stream(&self, request: ChatRequest) -> Result<ChunkStream> {
        self.pause().await;
        OfflineModel.stream(request).await
    }
}

/// More than the lock pool's 16 connections.
const BURST: usize = 24;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_burst_on_one_conversation_does_not_starve_another() {
    let model = SlowModel {
        delay: Duration::from_millis(400),
        started: Arc::new(AtomicUsize::new(0)),
        call: Arc::new(Notify::new()),
    };
    let Some(app) = support::start_with(support::DATABASE, model.clone().shared(), &support::config()).await
    else {
        return;
    };
    let app = Arc::new(app);
    let busy = support::new_conversation_id();
    let other = support::new_conversation_id();

    // Completion order, as (conversation, answer); the burst's requests all go out at once.
    let finished = Arc::new(std::sync::Mutex::new(Vec::<&'static str>::new()));
    let first_call = model.call.notified();
    let burst: Vec<_> = (0..BURST)
        .map(|i| {
            let (app, busy, finished) = (Arc::clone(&app), busy.clone(), Arc::clone(&finished));
            tokio::spawn(async move {
                app.chat(&busy, &format!("burst message {i}")).await;
                finished.lock().unwrap().push("burst");
            })
        })
        .collect();
    // Once the burst's first round is with the model, every burst request has had time to
    // reach the service and queue (they went out together, before the slow call).
    first_call.await;
    tokio::time::sleep(Duration::from_millis(100)).await;
    let answer = app.chat(&other, "Hi, my name is Eve.").await;
    finished.lock().unwrap().push("other");
    assert_eq!(answer["answer"], "[offline] Nice to meet you, Eve! I will remember your name.");
    for request in burst {
        request.await.unwrap();
    }

    let order = finished.lock().unwrap().clone();
    let before_other = order.iter().position(|c| *c == "other").unwrap();
    // The other conversation waited for no burst round but the one holding the model when it
    // arrived (at most); a starved lock pool would have made it wait for many.
    assert!(before_other <= 1, "{before_other} burst rounds finished first: {order:?}");
    assert_eq!(order.len(), BURST + 1);
    assert_eq!(model.started.load(Ordering::SeqCst), BURST + 1);
}
