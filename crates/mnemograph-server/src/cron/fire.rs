//! A tick's run: made from the cron's payload through the same path as a client's run request
//! (`App::create_run`), as the cron's maker, so that authorization, the assistant's configuration,
//! the multitask strategy and the webhook apply as they do to any run.

use serde_json::Value;

use super::payload::run_request;
use super::record::CronRecord;
use crate::app::App;
use crate::auth::{Action, Authenticator, Caller, Resource};
use crate::error::Result;
use crate::handle::RunRef;

/// Makes the run of one tick of `cron`; a run that cannot be made (its thread deleted, its
/// maker no longer allowed, its thread busy under `reject`) is logged and the tick is spent, as
/// LangGraph's scheduler spends it.
pub(super) async fn fire(app: &App, auth: &Authenticator, cron: CronRecord) {
    match run(app, auth, &cron).await {
        Ok(run) => tracing::debug!(cron_id = %cron.cron_id, run = %run.path(), "a cron's run was made"),
        Err(e) => tracing::warn!(cron_id = %cron.cron_id, error = %e, "a cron's run was not made"),
    }
}

async fn run(app: &App, auth: &Authenticator, cron: &CronRecord) -> Result<RunRef> {
    let request = run_request(cron)?;
    let caller = Caller::scheduled(cron.user.clone(), auth.clone());
    let thread_id = cron.thread_id.as_deref();
    let value = || {
        let mut value = Value::Object(cron.payload.clone());
        if let (Value::Object(map), Some(id)) = (&mut value, thread_id) {
            map.insert("thread_id".into(), id.into());
        }
        value
    };
    let grant = caller.grant(Resource::Threads, Action::CreateRun, value).await?;
    app.create_run(thread_id, &request, &grant, &caller).await
}
