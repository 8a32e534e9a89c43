//! [`Webhooks`]: checks a run's `webhook` against the policy when the run is created, and sends
//! the run's final record there when it ends, in the background, retried with backoff.

use std::sync::Arc;

use reqwest::header::CONTENT_TYPE;
use reqwest::{StatusCode, Url};

use super::client::client;
use super::policy::{Rules, WebhookPolicy};
use super::record::FinalRecord;
use crate::error::{Result, ServerError};
use crate::records::now;

/// The server's webhooks: off (every `webhook` refused) unless given a policy.
#[derive(Clone, Default)]
pub struct Webhooks(Option<Arc<Sender>>);

impl std::fmt::Debug for Webhooks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Webhooks").field("on", &self.0.is_some()).finish()
    }
}

struct Sender {
    rules: Arc<Rules>,
    client: reqwest::Client,
}

impl Webhooks {
    /// Webhooks to the targets `policy` allows.
    pub(crate) fn new(policy: WebhookPolicy) -> Result<Self> {
        let rules = Arc::new(policy.compile()?);
        let client = client(&rules)?;
        Ok(Self(Some(Arc::new(Sender { rules, client }))))
    }

    /// Refuses a run request whose `webhook` is not allowed (422), before anything is created.
    pub(crate) fn check(&self, webhook: Option<&str>) -> Result<()> {
        let Some(target) = webhook else { return Ok(()) };
        let Some(sender) = &self.0 else {
            return Err(ServerError::Unprocessable(
                "webhooks are off on this server: its deployer allows targets with Server::with_webhooks"
                    .into(),
            ));
        };
        match sender.rules.admit(target) {
            Ok(_) => Ok(()),
            Err(why) => Err(ServerError::Unprocessable(format!("webhook `{target}` is not allowed: {why}"))),
        }
    }

    /// Sends `record` to `target` in the background; the caller goes on at once. The target is
    /// checked again, so a run created under an older policy (by another process of a cluster)
    /// reaches only what this process allows.
    pub fn deliver(&self, target: &str, record: FinalRecord) {
        let Some(sender) = self.0.clone() else {
            tracing::warn!(
                run_id = record.run_id(),
                "a run names a webhook but webhooks are off here; not sent"
            );
            return;
        };
        let url = match sender.rules.admit(target) {
            Ok(url) => url,
            Err(why) => {
                tracing::warn!(run_id = record.run_id(), webhook = target, "webhook not sent: {why}");
                return;
            }
        };
        tokio::spawn(async move { sender.send(url, record).await });
    }
}

impl Sender {
    /// Posts `record` until the receiver accepts it, refuses it for good, or the attempts run out.
    async fn send(&self, url: Url, record: FinalRecord) {
        let mut backoff = self.rules.backoff;
        for attempt in 1..=self.rules.attempts {
            let body = record.to_json(&now()).to_string();
            let sent = self
                .client
                .post(url.clone())
                .header(CONTENT_TYPE, "application/json")
                .body(body)
                .timeout(self.rules.timeout)
                .send()
                .await;
            let why = match sent {
                Ok(response) if response.status().is_success() => {
                    tracing::debug!(run_id = record.run_id(), webhook = %url, attempt, "webhook delivered");
                    return;
                }
                Ok(response) if retried(response.status()) => format!("answered {}", response.status()),
                Ok(response) => {
                    tracing::warn!(run_id = record.run_id(), webhook = %url, status = %response.status(),
                        "the webhook's receiver refused the run's record; not retried");
                    return;
                }
                Err(e) => error_chain(&e),
            };
            if attempt == self.rules.attempts {
                tracing::warn!(run_id = record.run_id(), webhook = %url, attempt, "webhook not delivered, giving up: {why}");
                return;
            }
            tracing::info!(run_id = record.run_id(), webhook = %url, attempt, "webhook attempt failed, retrying: {why}");
            tokio::time::sleep(backoff).await;
            backoff = backoff.saturating_mul(2);
        }
    }
}

/// Whether an answer is worth another attempt: the receiver is overloaded or broken for now.
fn retried(status: StatusCode) -> bool {
    status.is_server_error() || status == StatusCode::TOO_MANY_REQUESTS
}

/// An error and its sources, which say what broke (refused, reset, timed out).
fn error_chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        text = format!("{text}: {s}");
        source = s.source();
    }
    text
}
