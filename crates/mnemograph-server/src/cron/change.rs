//! [`CronChange`]: what `PATCH /runs/crons/{id}` changes of a cron, applied as LangGraph's server
//! applies it.

use chrono::{DateTime, Utc};
use serde_json::{Map, Value};

use super::payload;
use super::record::CronRecord;
use super::schedule::Schedule;
use super::time::stamp;
use crate::error::{Result, ServerError};

/// An update of a cron's end time: left as it is, cleared (`"end_time": null`), or set.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) enum EndTime {
    #[default]
    Keep,
    Clear,
    Set(String),
}

/// The fields an update names; the others stay. Checked when made: the schedule and zone read,
/// the end time in the future.
#[derive(Debug, Clone, Default)]
pub struct CronChange {
    pub(crate) schedule: Option<String>,
    pub(crate) timezone: Option<String>,
    pub(crate) end_time: EndTime,
    pub(crate) enabled: Option<bool>,
    pub(crate) on_run_completed: Option<String>,
    /// Merged into the cron's metadata, key by key.
    pub(crate) metadata: Option<Map<String, Value>>,
    /// The request's own fields, merged over the cron's payload field by field (its assistant
    /// and its `cron_id` stay).
    pub(crate) payload: Map<String, Value>,
}

impl CronChange {
    /// `current` with the change made at `now`. A new schedule or zone sets the next run date
    /// anew from `now`, as LangGraph's server does; otherwise it stays.
    pub fn apply(&self, current: &CronRecord, now: DateTime<Utc>) -> Result<CronRecord> {
        let mut cron = current.clone();
        if let Some(timezone) = &self.timezone {
            cron.timezone = Some(timezone.clone());
        }
        if let Some(schedule) = &self.schedule {
            cron.schedule = schedule.clone();
        }
        if self.schedule.is_some() || self.timezone.is_some() {
            let schedule = Schedule::parse(&cron.schedule, cron.timezone.as_deref())?;
            let next = schedule.next_after(now).ok_or_else(|| never_fires(&cron.schedule))?;
            cron.next_run_date = stamp(next);
        }
        match &self.end_time {
            EndTime::Keep => {}
            EndTime::Clear => cron.end_time = None,
            EndTime::Set(end) => cron.end_time = Some(end.clone()),
        }
        if let Some(enabled) = self.enabled {
            cron.enabled = enabled;
        }
        if let Some(on_run_completed) = &self.on_run_completed {
            cron.on_run_completed = Some(on_run_completed.clone());
        }
        if let Some(metadata) = &self.metadata {
            cron.metadata.extend(metadata.clone());
        }
        cron.payload = payload::merged(&current.payload, &self.payload, &cron.cron_id)?;
        cron.updated_at = stamp(now);
        Ok(cron)
    }
}

/// A schedule with no time left to fire at.
pub(crate) fn never_fires(schedule: &str) -> ServerError {
    ServerError::Unprocessable(format!("Invalid cron schedule: '{schedule}' never fires again"))
}
