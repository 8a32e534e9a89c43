//! A search or count of crons as a caller sees it: crons on threads the caller may not read are
//! left out, as LangGraph leaves them out, so a cron does not tell of a thread the caller cannot
//! see. Crons without a thread stay.

use crate::app::App;
use crate::auth::Grant;
use crate::cron::{CronRecord, CronSearch};
use crate::error::{Result, ServerError};

/// The page of crons `search` finds on threads `threads` reaches, and whether more follow it.
pub(crate) async fn search_visible(
    app: &App,
    search: &CronSearch,
    threads: &Grant,
) -> Result<(Vec<CronRecord>, bool)> {
    if threads.filter().is_empty() {
        return app.crons.search(search).await;
    }
    let visible = every_visible(app, search, threads).await?;
    let more = visible.len() > search.offset.saturating_add(search.limit);
    Ok((visible.into_iter().skip(search.offset).take(search.limit).collect(), more))
}

/// How many crons `search` finds on threads `threads` reaches.
pub(crate) async fn count_visible(app: &App, search: &CronSearch, threads: &Grant) -> Result<usize> {
    if threads.filter().is_empty() {
        return app.crons.count(search).await;
    }
    Ok(every_visible(app, search, threads).await?.len())
}

/// Every cron `search` finds, in its order, on threads `threads` reaches. The thread's record
/// decides, so the keeper's page cannot be cut before it: the page is cut here instead.
async fn every_visible(app: &App, search: &CronSearch, threads: &Grant) -> Result<Vec<CronRecord>> {
    let all = CronSearch { limit: usize::MAX / 2, offset: 0, ..search.clone() };
    let (found, _) = app.crons.search(&all).await?;
    let mut visible = Vec::with_capacity(found.len());
    for cron in found {
        let readable = match cron.thread_id.as_deref() {
            None => true,
            Some(thread_id) => match app.thread(thread_id, threads).await {
                Ok(_) => true,
                // Not there or not the caller's: hidden alike.
                Err(ServerError::NotFound(_)) => false,
                Err(e) => return Err(e),
            },
        };
        if readable {
            visible.push(cron);
        }
    }
    Ok(visible)
}
