//! Crons: runs made on a schedule, as LangGraph's server makes them.
//!
//! A cron holds a run request (its `payload`), a cron `schedule` read as LangGraph reads it
//! ([`schedule`]), and the next time it fires. The scheduler ([`scheduler`]) looks every poll
//! interval for crons that are due, takes each due tick by moving the cron's next run date on
//! only if no one else moved it first, and makes the tick's run through the same path as a
//! client's `POST /threads/{id}/runs` or `POST /runs`, as the cron's maker. In a cluster every
//! process's scheduler looks, and each tick is taken by exactly one.

mod change;
mod fire;
mod payload;
mod record;
mod request;
mod runnable;
mod schedule;
pub(crate) mod scheduler;
mod search;
mod time;

use std::time::Duration;

pub use change::CronChange;
pub(crate) use change::EndTime;
pub(crate) use payload::{run_request, stored as stored_payload};
pub use record::CronRecord;
pub(crate) use record::CRON_FIELDS;
pub(crate) use request::{check_change, NewCron};
pub(crate) use runnable::check_runnable;
pub use search::{CronSearch, CronSort};
pub use time::{stamp, utc_now};

/// How often the scheduler looks for crons that are due, by default: LangGraph's server's
/// `CRON_SCHEDULER_SLEEP_TIME`. A tick fires up to this late.
pub const CRON_POLL_INTERVAL: Duration = Duration::from_secs(5);
