//! [`FinalRecord`]: what a webhook receives when its run ends, in the shape LangGraph's server
//! sends: the run's record, its timings, the thread's values after it, and its error.

use serde_json::{json, Value};

use crate::exec::{Outcome, Settled};
use crate::records::{now, RunRecord};
use crate::run::Stop;

/// A run that ended, as its webhook is told.
#[derive(Debug, Clone)]
#[cfg_attr(
    not(feature = "webhooks"),
    allow(dead_code, reason = "a build without webhooks only names the run of a record it cannot send")
)]
pub struct FinalRecord {
    /// The run's record with its final status.
    run: RunRecord,
    started_at: String,
    ended_at: String,
    /// The thread's values after the run; `null` for a run rolled back.
    values: Value,
    /// `{"error", "message"}` for a run that failed or was cancelled, as LangGraph serializes the
    /// exception that ended it; `null` otherwise.
    error: Value,
}

impl FinalRecord {
    /// The final record of `run` (its status is set from `settled`), started at `started_at` and
    /// ending now.
    pub fn new(mut run: RunRecord, outcome: &Outcome, settled: &Settled, started_at: String) -> Self {
        let ended_at = now();
        run.status = settled.status;
        run.updated_at.clone_from(&ended_at);
        let (values, error) = match outcome {
            _ if !settled.error.is_null() => (settled.values.clone(), settled.error.clone()),
            Outcome::Stopped(Stop::Rollback) => (
                Value::Null,
                json!({"error": "UserRollback", "message": "User requested rollback of the run"}),
            ),
            Outcome::Stopped(Stop::Interrupt) => (
                settled.values.clone(),
                json!({"error": "UserInterrupt", "message": "User interrupted the run"}),
            ),
            Outcome::Done | Outcome::Failed(_) => (settled.values.clone(), Value::Null),
        };
        Self { run, started_at, ended_at, values, error }
    }

    /// The body of the webhook's request, sent at `sent_at`.
    #[cfg_attr(not(feature = "webhooks"), allow(dead_code, reason = "only a build with webhooks sends it"))]
    pub(crate) fn to_json(&self, sent_at: &str) -> Value {
        let mut body = self.run.to_json();
        if let Value::Object(map) = &mut body {
            map.insert("run_started_at".into(), self.started_at.clone().into());
            map.insert("run_ended_at".into(), self.ended_at.clone().into());
            map.insert("webhook_sent_at".into(), sent_at.into());
            map.insert("values".into(), self.values.clone());
            if !self.error.is_null() {
                map.insert("error".into(), self.error.clone());
            }
        }
        body
    }

    /// The run's id, for the logs.
    pub(crate) fn run_id(&self) -> &str {
        &self.run.run_id
    }
}

/// The webhook `run`'s request named, kept in its `kwargs` as LangGraph keeps it.
pub fn webhook_of(run: &RunRecord) -> Option<&str> {
    run.kwargs.get("webhook")?.as_str().filter(|w| !w.is_empty())
}

#[cfg(test)]
mod tests {
    use serde_json::Map;

    use super::*;

    fn record() -> RunRecord {
        RunRecord {
            run_id: "r".into(),
            thread_id: "t".into(),
            assistant_id: "a".into(),
            metadata: Map::new(),
            status: "running",
            kwargs: json!({"webhook": "https://h.example/x"}),
            multitask_strategy: "reject".into(),
            created_at: "c".into(),
            updated_at: "u".into(),
        }
    }

    fn settled(status: &'static str, values: Value, error: Value) -> Settled {
        Settled {
            values,
            interrupts: Map::new(),
            thread_status: "idle",
            output: Value::Null,
            error,
            status,
            state_known: true,
        }
    }

    #[test]
    fn a_success_carries_the_values_and_no_error() {
        let s = settled("success", json!({"log": ["a"]}), Value::Null);
        let body = FinalRecord::new(record(), &Outcome::Done, &s, "s".into()).to_json("w");
        assert_eq!(body["status"], "success");
        assert_eq!(body["values"], json!({"log": ["a"]}));
        assert_eq!(body["run_started_at"], "s");
        assert_eq!(body["webhook_sent_at"], "w");
        assert_eq!(body["kwargs"]["webhook"], "https://h.example/x");
        assert!(body.get("error").is_none());
    }

    #[test]
    fn a_failure_and_a_cancel_carry_their_error() {
        let e = json!({"error": "Node", "message": "boom"});
        let s = settled("error", json!({}), e.clone());
        let body = FinalRecord::new(record(), &Outcome::Failed(e.clone()), &s, "s".into()).to_json("w");
        assert_eq!((body["status"].clone(), body["error"].clone()), (json!("error"), e));
        let s = settled("interrupted", json!({"log": []}), Value::Null);
        let body =
            FinalRecord::new(record(), &Outcome::Stopped(Stop::Interrupt), &s, "s".into()).to_json("w");
        assert_eq!(body["error"]["error"], "UserInterrupt");
        assert_eq!(body["values"], json!({"log": []}));
        let body = FinalRecord::new(record(), &Outcome::Stopped(Stop::Rollback), &s, "s".into()).to_json("w");
        assert_eq!(
            (body["error"]["error"].clone(), body["values"].clone()),
            (json!("UserRollback"), Value::Null)
        );
    }
}
