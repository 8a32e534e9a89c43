//! [`CronRecord`]: a cron as the API shows it (LangGraph's `Cron`), and the caller it runs as.

use serde_json::{json, Map, Value};

use crate::auth::Identity;

/// The fields of a cron's JSON, which a search may `select`, as LangGraph names them.
pub(crate) const CRON_FIELDS: [&str; 14] = [
    "cron_id",
    "assistant_id",
    "thread_id",
    "on_run_completed",
    "end_time",
    "schedule",
    "timezone",
    "created_at",
    "updated_at",
    "user_id",
    "payload",
    "next_run_date",
    "metadata",
    "enabled",
];

/// A scheduled run: what it runs (`payload`, the run request), on which thread (a new one each
/// tick when `None`), when (`schedule` in `timezone`, next at `next_run_date`, never after
/// `end_time`), and as whom. Timestamps are the API's fixed-width UTC text.
#[derive(Debug, Clone, PartialEq)]
pub struct CronRecord {
    /// The cron's id.
    pub cron_id: String,
    /// The assistant each run runs, its UUID.
    pub assistant_id: String,
    /// The thread each run runs on; a stateless cron's runs each get a new thread.
    pub thread_id: Option<String>,
    /// The caller that made the cron, whom its runs run as (`langgraph_auth_user`); `None` on a
    /// server without authentication.
    pub user: Option<Identity>,
    /// The request each run is made from, as `POST /runs` takes it.
    pub payload: Map<String, Value>,
    /// The cron schedule, five fields or six with seconds last.
    pub schedule: String,
    /// The IANA zone the schedule is read in; UTC when `None`.
    pub timezone: Option<String>,
    /// When it fires next.
    pub next_run_date: String,
    /// After this it fires no more.
    pub end_time: Option<String>,
    /// Its metadata, which searches and grants match.
    pub metadata: Map<String, Value>,
    /// What a stateless cron's runs do with their thread when they end: `delete` or `keep`;
    /// `None` for a cron on a thread.
    pub on_run_completed: Option<String>,
    /// A disabled cron does not fire.
    pub enabled: bool,
    /// When it was created (RFC 3339).
    pub created_at: String,
    /// When it was last changed (RFC 3339).
    pub updated_at: String,
}

impl CronRecord {
    /// The cron as the API answers it.
    pub(crate) fn to_json(&self) -> Value {
        json!({
            "cron_id": self.cron_id,
            "assistant_id": self.assistant_id,
            "thread_id": self.thread_id,
            "user_id": self.user.as_ref().map(|u| u.identity.clone()),
            "payload": self.payload,
            "schedule": self.schedule,
            "timezone": self.timezone,
            "next_run_date": self.next_run_date,
            "end_time": self.end_time,
            "metadata": self.metadata,
            "on_run_completed": self.on_run_completed,
            "enabled": self.enabled,
            "created_at": self.created_at,
            "updated_at": self.updated_at,
        })
    }

    /// Only the `fields` of the cron's JSON (all of them when `None`).
    pub(crate) fn selected(&self, fields: Option<&[String]>) -> Value {
        match (self.to_json(), fields) {
            (Value::Object(map), Some(fields)) => {
                Value::Object(map.into_iter().filter(|(k, _)| fields.contains(k)).collect())
            }
            (cron, _) => cron,
        }
    }

    /// Whether the cron fires at `now` (a timestamp): enabled, due, and not past its end.
    pub(crate) fn is_due(&self, now: &str) -> bool {
        self.enabled
            && self.next_run_date.as_str() <= now
            && self.end_time.as_deref().is_none_or(|end| end >= now)
    }
}
