//! The checks a cron's run request meets when a tick makes its run, met when the cron is made
//! or changed: a cron that could never make its run is refused rather than stored.

use crate::app::App;
use crate::assistant::AssistantRecord;
use crate::auth::Caller;
use crate::error::Result;
use crate::request::{Multitask, RunCreate};

/// The assistant `run` names, if `caller` may run it and the server would take `run` on it now:
/// the assistant's configuration merges under the run's, and the input, stream modes, multitask
/// strategy, recursion limit and webhook are ones a run takes.
pub(crate) async fn check_runnable(app: &App, caller: &Caller, run: &RunCreate) -> Result<AssistantRecord> {
    let (assistant, graph) = app.run_assistant(&run.assistant_id, caller).await?;
    let merged = run.under(&assistant)?;
    merged.modes()?;
    merged.run_input(&graph.graph.nodes())?;
    Multitask::parse(merged.multitask_strategy.as_deref())?;
    app.limits.check_recursion_limit(merged.config.as_ref().and_then(|c| c.recursion_limit))?;
    app.webhooks.check(merged.webhook.as_deref())?;
    Ok(assistant)
}
