//! The bodies of `POST /runs/crons`, `POST /threads/{id}/runs/crons` and
//! `PATCH /runs/crons/{id}`: the cron's own fields, checked before anything is stored.

use chrono::{DateTime, Utc};
use serde::Deserialize;
use serde_json::{Map, Value};

use super::change::{never_fires, CronChange, EndTime};
use super::schedule::Schedule;
use super::time::{parse_instant, stamp};
use crate::error::{Result, ServerError};

/// The fields of a cron request that are the cron's, not its runs'.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct CronFields {
    assistant_id: Option<String>,
    schedule: Option<String>,
    timezone: Option<String>,
    end_time: Option<String>,
    on_run_completed: Option<String>,
    enabled: Option<bool>,
    metadata: Option<Map<String, Value>>,
}

impl CronFields {
    fn of(body: &Map<String, Value>) -> Result<Self> {
        serde_json::from_value(Value::Object(body.clone()))
            .map_err(|e| ServerError::Unprocessable(format!("invalid request body: {e}")))
    }
}

/// A new cron's fields, checked.
#[derive(Debug)]
pub(crate) struct NewCron {
    pub(crate) schedule: String,
    pub(crate) timezone: Option<String>,
    /// When it first fires.
    pub(crate) next_run_date: String,
    pub(crate) end_time: Option<String>,
    /// `delete` (the default) or `keep`.
    pub(crate) on_run_completed: String,
    pub(crate) enabled: bool,
    pub(crate) metadata: Map<String, Value>,
}

impl NewCron {
    /// The cron `body` asks for at `now`. A missing assistant or schedule, a schedule or zone that
    /// does not read or never fires, an end time that does not read or is past, or an
    /// `on_run_completed` other than `delete` and `keep` is unprocessable.
    pub(crate) fn check(body: &Map<String, Value>, now: DateTime<Utc>) -> Result<Self> {
        let fields = CronFields::of(body)?;
        if fields.assistant_id.is_none_or(|a| a.is_empty()) {
            return Err(ServerError::Unprocessable("`assistant_id` is required".into()));
        }
        let schedule =
            fields.schedule.ok_or_else(|| ServerError::Unprocessable("`schedule` is required".into()))?;
        let next = Schedule::parse(&schedule, fields.timezone.as_deref())?
            .next_after(now)
            .ok_or_else(|| never_fires(&schedule))?;
        let end_time = fields.end_time.as_deref().map(|end| future_end(end, now)).transpose()?;
        let on_run_completed = fields.on_run_completed.unwrap_or_else(|| "delete".to_owned());
        check_on_run_completed(&on_run_completed)?;
        Ok(Self {
            schedule,
            timezone: fields.timezone,
            next_run_date: stamp(next),
            end_time,
            on_run_completed,
            enabled: fields.enabled.unwrap_or(true),
            metadata: fields.metadata.unwrap_or_default(),
        })
    }
}

/// The change `body` asks of a cron at `now`, checked as a new cron's fields are. An empty body
/// is a bad request (400), as LangGraph answers it. `"end_time": null` clears the end time; an
/// absent one leaves it.
pub(crate) fn check_change(body: &Map<String, Value>, now: DateTime<Utc>) -> Result<CronChange> {
    if body.is_empty() {
        return Err(ServerError::BadRequest("Request body cannot be empty".into()));
    }
    let fields = CronFields::of(body)?;
    if let Some(schedule) = &fields.schedule {
        Schedule::parse(schedule, fields.timezone.as_deref())?;
    } else if let Some(timezone) = &fields.timezone {
        Schedule::parse("* * * * *", Some(timezone))?;
    }
    let end_time = match body.get("end_time") {
        None => EndTime::Keep,
        Some(Value::Null) => EndTime::Clear,
        Some(_) => EndTime::Set(future_end(fields.end_time.as_deref().unwrap_or_default(), now)?),
    };
    if let Some(on_run_completed) = &fields.on_run_completed {
        check_on_run_completed(on_run_completed)?;
    }
    Ok(CronChange {
        schedule: fields.schedule,
        timezone: fields.timezone,
        end_time,
        enabled: fields.enabled,
        on_run_completed: fields.on_run_completed,
        metadata: fields.metadata,
        payload: body.clone(),
    })
}

/// An end time that reads and is still to come, as a timestamp. One already past would make a
/// cron that never fires, which is refused rather than stored.
fn future_end(text: &str, now: DateTime<Utc>) -> Result<String> {
    let end = parse_instant("end_time", text)?;
    if end <= now {
        return Err(ServerError::Unprocessable(format!(
            "end_time {text} is in the past: the cron would never run"
        )));
    }
    Ok(stamp(end))
}

fn check_on_run_completed(value: &str) -> Result<()> {
    match value {
        "delete" | "keep" => Ok(()),
        other => Err(ServerError::Unprocessable(format!(
            "Invalid on_run_completed: '{other}'. Must be one of 'delete' or 'keep'"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn body(v: Value) -> Map<String, Value> {
        match v {
            Value::Object(map) => map,
            _ => Map::new(),
        }
    }

    fn status<T: std::fmt::Debug>(r: Result<T>) -> u16 {
        r.err().map_or(200, |e| e.status().as_u16())
    }

    #[test]
    fn bad_cron_requests_are_refused_with_a_clear_status() {
        let now = crate::cron::utc_now();
        let ok = json!({"assistant_id": "chain", "schedule": "* * * * *"});
        assert_eq!(status(NewCron::check(&body(ok), now)), 200);
        for (bad, want) in [
            (json!({"schedule": "* * * * *"}), 422),
            (json!({"assistant_id": "chain"}), 422),
            (json!({"assistant_id": "chain", "schedule": "not a schedule"}), 422),
            (json!({"assistant_id": "chain", "schedule": 5}), 422),
            (json!({"assistant_id": "chain", "schedule": "0 0 30 2 *"}), 422),
            (
                json!({"assistant_id": "chain", "schedule": "* * * * *", "end_time": "2001-01-01T00:00:00Z"}),
                422,
            ),
            (json!({"assistant_id": "chain", "schedule": "* * * * *", "end_time": "soon"}), 422),
            (json!({"assistant_id": "chain", "schedule": "* * * * *", "on_run_completed": "archive"}), 422),
            (json!({"assistant_id": "chain", "schedule": "* * * * *", "timezone": "Nowhere/Land"}), 422),
        ] {
            assert_eq!(status(NewCron::check(&body(bad.clone()), now)), want, "{bad}");
        }
        assert_eq!(status(check_change(&Map::new(), now)), 400);
        assert_eq!(status(check_change(&body(json!({"schedule": "nope"})), now)), 422);
        let cleared = check_change(&body(json!({"end_time": null})), now).expect("a change");
        assert_eq!(cleared.end_time, EndTime::Clear);
    }
}
