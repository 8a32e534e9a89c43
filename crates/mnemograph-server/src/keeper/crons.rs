//! [`CronKeeper`]: where crons are kept, behind one contract with two keepers: `LocalCrons` in
//! this process, and a cluster's in its shared database, where every process's scheduler claims
//! the same ticks.

use futures_util::future::BoxFuture;

use crate::auth::Grant;
use crate::cron::{CronChange, CronRecord, CronSearch};
use crate::error::Result;

/// The crons a deletion of a thread or an assistant takes with it, as LangGraph's server deletes
/// them.
#[derive(Debug, Clone, Copy)]
pub enum CronsOf<'a> {
    /// The crons that run on this thread.
    Thread(&'a str),
    /// The crons that run this assistant.
    Assistant(&'a str),
}

/// Keeps crons. Every call a client makes is scoped by a [`Grant`]: a cron it does not reach is
/// not found, exactly as one that does not exist. The scheduler's calls ([`CronKeeper::due`],
/// [`CronKeeper::claim`]) see every cron.
pub trait CronKeeper: Send + Sync {
    /// Stores a new cron.
    fn create(&self, record: CronRecord) -> BoxFuture<'_, Result<CronRecord>>;

    /// The cron `grant` reaches.
    fn get<'a>(&'a self, cron_id: &'a str, grant: &'a Grant) -> BoxFuture<'a, Result<CronRecord>>;

    /// Makes `change` of the cron now, `grant`'s metadata stamped over its metadata.
    fn update<'a>(
        &'a self,
        cron_id: &'a str,
        change: &'a CronChange,
        grant: &'a Grant,
    ) -> BoxFuture<'a, Result<CronRecord>>;

    /// Deletes the cron.
    fn delete<'a>(&'a self, cron_id: &'a str, grant: &'a Grant) -> BoxFuture<'a, Result<()>>;

    /// Deletes the crons of a thread or of an assistant, whoever made them.
    fn forget<'a>(&'a self, of: CronsOf<'a>) -> BoxFuture<'a, Result<()>>;

    /// The crons a search asks for (its grant's filter included), in its order and page, and
    /// whether more follow the page.
    fn search<'a>(&'a self, q: &'a CronSearch) -> BoxFuture<'a, Result<(Vec<CronRecord>, bool)>>;

    /// How many crons a search finds, whatever its page.
    fn count<'a>(&'a self, q: &'a CronSearch) -> BoxFuture<'a, Result<usize>>;

    /// The crons that fire at `now` (a timestamp): enabled, with a next run date at or before it,
    /// and an end time, if any, not before it.
    fn due<'a>(&'a self, now: &'a str) -> BoxFuture<'a, Result<Vec<CronRecord>>>;

    /// Takes one tick of a cron: moves its next run date from `seen` (what [`CronKeeper::due`]
    /// answered) to `next`, only if it is still `seen`. `true` for the one caller that moved it,
    /// which then makes the tick's run; `false` when another took the tick, or the cron is gone.
    fn claim<'a>(&'a self, cron_id: &'a str, seen: &'a str, next: &'a str) -> BoxFuture<'a, Result<bool>>;
}
