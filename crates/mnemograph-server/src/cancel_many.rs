//! `POST /runs/cancel`: cancelling several runs at once — the runs of one thread named by id, or
//! every run `pending`, `running` or both — as LangGraph's server cancels them; and the runs of
//! an assistant being deleted.

use serde::Deserialize;
use serde_json::Value;
use uuid::Uuid;

use crate::app::App;
use crate::auth::Grant;
use crate::error::{Result, ServerError};
use crate::records::RunRecord;
use crate::run::Stop;

/// The body of `POST /runs/cancel`: `status`, or `thread_id` with `run_ids`.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct CancelMany {
    status: Option<String>,
    thread_id: Option<String>,
    run_ids: Option<Vec<String>>,
}

/// Which runs a cancellation names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Selection {
    /// Every run in one of these statuses, on any thread the caller reaches.
    Status(Vec<&'static str>),
    /// These runs of one thread.
    Runs { thread_id: String, run_ids: Vec<String> },
    /// Every run pending or running on this assistant, on any thread the caller reaches; none
    /// left is no error (the assistant is being deleted).
    Assistant(String),
}

impl CancelMany {
    /// The runs the body names; unprocessable (422) when it names them both ways, neither way, or
    /// with ids that are not UUIDs, with LangGraph's messages.
    pub(crate) fn selection(self) -> Result<Selection> {
        if let Some(status) = self.status {
            let statuses = match status.to_lowercase().as_str() {
                "pending" => vec!["pending"],
                "running" => vec!["running"],
                "all" => vec!["pending", "running"],
                _ => {
                    return Err(ServerError::Unprocessable(
                        "Invalid status: must be 'pending', 'running', or 'all'".into(),
                    ))
                }
            };
            if self.thread_id.is_some() || self.run_ids.is_some() {
                return Err(ServerError::Unprocessable(
                    "When providing a 'status', 'thread_id' and 'run_ids' must be omitted. The 'status' \
                     parameter cancels all runs with the given status, regardless of thread or run ID."
                        .into(),
                ));
            }
            return Ok(Selection::Status(statuses));
        }
        let (Some(thread_id), Some(run_ids)) = (self.thread_id, self.run_ids) else {
            return Err(ServerError::Unprocessable(
                "Must provide either a status, or both 'thread_id' and 'run_ids'".into(),
            ));
        };
        uuid(&thread_id, "Invalid thread ID: must be a UUID")?;
        for id in &run_ids {
            uuid(id, "Invalid run ID: must be a UUID")?;
        }
        Ok(Selection::Runs { thread_id, run_ids })
    }
}

fn uuid(id: &str, message: &str) -> Result<()> {
    Uuid::parse_str(id).map(|_| ()).map_err(|_| ServerError::Unprocessable(message.to_owned()))
}

/// Cancels the runs `selection` names on the threads `grant` reaches, pending ones before running
/// ones (so that no pending run starts when a running one stops). Named runs that already ended
/// are left as they are. None found, none the caller reaches, or none left to cancel: not found
/// (404), with LangGraph's messages, but for an assistant's runs, where none is no error.
pub(crate) async fn cancel_many(app: &App, selection: Selection, how: Stop, grant: &Grant) -> Result<()> {
    let mut runs: Vec<RunRecord> = match selection {
        Selection::Status(statuses) => app.open_runs(&statuses, grant).await?,
        Selection::Assistant(id) => {
            let mut runs = app.open_runs(&["pending", "running"], grant).await?;
            runs.retain(|r| r.assistant_id == id);
            if runs.is_empty() {
                return Ok(());
            }
            runs
        }
        Selection::Runs { thread_id, run_ids } => match app.runs_of(&thread_id, grant).await {
            Ok(runs) => runs.into_iter().filter(|r| run_ids.contains(&r.run_id)).collect(),
            Err(ServerError::NotFound(_)) => Vec::new(),
            Err(e) => return Err(e),
        },
    };
    if runs.is_empty() {
        return Err(ServerError::NotFound("No runs found to cancel.".into()));
    }
    runs.retain(|r| !r.is_finished());
    if runs.is_empty() {
        return Err(ServerError::NotFound(
            "No matching runs to cancel. Please verify the thread ID and run IDs are correct, and the runs \
             haven't been deleted or completed."
                .into(),
        ));
    }
    runs.sort_by_key(|r| r.status != "pending");
    for run in &runs {
        match app.cancel(&run.thread_id, &run.run_id, how, grant).await {
            // Ended and swept, or deleted with its thread, meanwhile.
            Ok(_) | Err(ServerError::NotFound(_)) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// What the authorization sees of a cancellation: the thread, the action and the selection, as
/// LangGraph hands its `threads.update` handler.
pub(crate) fn access_value(selection: &Selection, action: &str) -> Value {
    match selection {
        Selection::Status(statuses) => serde_json::json!({
            "thread_id": null, "action": action, "metadata": { "run_ids": null, "status": statuses },
        }),
        Selection::Runs { thread_id, run_ids } => serde_json::json!({
            "thread_id": thread_id, "action": action, "metadata": { "run_ids": run_ids, "status": null },
        }),
        Selection::Assistant(_) => serde_json::json!({
            "thread_id": null, "action": action, "metadata": { "run_ids": null, "status": null },
        }),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn selection(body: Value) -> Result<Selection> {
        serde_json::from_value::<CancelMany>(body).unwrap().selection()
    }

    #[test]
    fn status_refuses_thread_and_run_ids_alongside_it() {
        let tid = Uuid::now_v7().to_string();
        let err = selection(json!({"status": "all", "thread_id": tid})).unwrap_err();
        assert!(matches!(err, ServerError::Unprocessable(m) if m.contains("must be omitted")));
        assert_eq!(
            selection(json!({"status": "ALL"})).unwrap(),
            Selection::Status(vec!["pending", "running"])
        );
        assert!(matches!(selection(json!({"status": "done"})), Err(ServerError::Unprocessable(_))));
    }

    #[test]
    fn ids_need_both_a_thread_and_uuids() {
        assert!(matches!(selection(json!({})), Err(ServerError::Unprocessable(_))));
        assert!(matches!(selection(json!({"run_ids": []})), Err(ServerError::Unprocessable(_))));
        let tid = Uuid::now_v7().to_string();
        let err = selection(json!({"thread_id": tid, "run_ids": ["nope"]})).unwrap_err();
        assert!(matches!(err, ServerError::Unprocessable(m) if m.contains("run ID")));
    }
}
