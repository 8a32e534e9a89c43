//! [`Schedule`]: a cron's `schedule` and `timezone`, read as LangGraph's server reads them, and
//! the next time it fires.
//!
//! LangGraph's server reads schedules with Python's `croniter`: standard five-field cron syntax
//! (minute, hour, day of month, month, day of week; lists, ranges, steps, month and weekday
//! names, `7` for Sunday, and the `@hourly` … `@yearly` shorthands), a day that names both a day
//! of month and a day of week firing on either (Vixie cron's rule), and an optional sixth field of
//! seconds written *last*. It evaluates a schedule in UTC unless the cron names an IANA
//! `timezone`, and stores the next run date in UTC. The expression is parsed here by the `croner`
//! crate, which follows the same POSIX/Vixie rules (days of month and of week are or-ed) but
//! writes seconds *first*, so a six-field schedule's last field is moved to the front before
//! `croner` reads it: `* * * * * */10` fires every ten seconds, as it does in LangGraph. Seven
//! fields (`croniter`'s year) are refused.

use chrono::{DateTime, Utc};
use chrono_tz::Tz;
use croner::parser::{CronParser, Seconds, Year};
use croner::Cron;

use crate::error::{Result, ServerError};

/// A parsed schedule in its time zone.
#[derive(Debug, Clone)]
pub(crate) struct Schedule {
    cron: Cron,
    /// The IANA zone the schedule is read in; UTC when `None`.
    zone: Option<Tz>,
}

impl Schedule {
    /// Reads `expression` in `timezone` (UTC when `None`); a schedule or zone LangGraph would
    /// refuse is unprocessable, with LangGraph's message.
    pub(crate) fn parse(expression: &str, timezone: Option<&str>) -> Result<Self> {
        let zone = timezone.map(zone).transpose()?;
        let fields: Vec<&str> = expression.split_whitespace().collect();
        let (pattern, seconds) = match fields.len() {
            // `croniter` also reads `@midnight`, which `croner` names `@daily`.
            1 if expression.trim().eq_ignore_ascii_case("@midnight") => {
                ("@daily".to_owned(), Seconds::Disallowed)
            }
            1 if expression.trim_start().starts_with('@') => {
                (expression.trim().to_owned(), Seconds::Disallowed)
            }
            5 => (fields.join(" "), Seconds::Disallowed),
            6 => {
                let (seconds, rest) = fields.split_last().unwrap_or((&"0", &[]));
                (format!("{seconds} {}", rest.join(" ")), Seconds::Required)
            }
            _ => return Err(invalid(expression)),
        };
        let parser = CronParser::builder().seconds(seconds).year(Year::Disallowed).build();
        let cron = parser.parse(&pattern).map_err(|_| invalid(expression))?;
        Ok(Self { cron, zone })
    }

    /// The first time after `at` that the schedule fires, in UTC; `None` when it never fires
    /// again (the 30th of February).
    pub(crate) fn next_after(&self, at: DateTime<Utc>) -> Option<DateTime<Utc>> {
        match self.zone {
            Some(zone) => {
                let local = at.with_timezone(&zone);
                self.cron.find_next_occurrence(&local, false).ok().map(|t| t.with_timezone(&Utc))
            }
            None => self.cron.find_next_occurrence(&at, false).ok(),
        }
    }
}

/// The IANA zone `name`; an unknown one is unprocessable, as LangGraph answers it.
fn zone(name: &str) -> Result<Tz> {
    name.parse::<Tz>().map_err(|_| {
        ServerError::Unprocessable(format!(
            "Invalid timezone: '{name}'. Use IANA timezone format (e.g. 'America/New_York')."
        ))
    })
}

/// LangGraph's answer to a schedule it cannot read.
fn invalid(expression: &str) -> ServerError {
    ServerError::Unprocessable(format!(
        "Invalid cron schedule: '{expression}'. Reason: Invalid cron schedule. Ensure the schedule uses \
         the standard cron format (minute hour day_of_month month day_of_week). Example: '*/5 * * * *' \
         for every 5 minutes."
    ))
}

#[cfg(test)]
mod tests {
    use chrono::TimeZone;

    use super::*;

    fn at(y: i32, mo: u32, d: u32, h: u32, mi: u32, s: u32) -> DateTime<Utc> {
        Utc.with_ymd_and_hms(y, mo, d, h, mi, s).single().expect("a valid time")
    }

    fn next(expression: &str, timezone: Option<&str>, from: DateTime<Utc>) -> DateTime<Utc> {
        Schedule::parse(expression, timezone)
            .expect("a valid schedule")
            .next_after(from)
            .expect("a next time")
    }

    #[test]
    fn a_five_field_schedule_fires_at_the_next_matching_minute_in_utc() {
        let from = at(2030, 1, 1, 10, 7, 30);
        assert_eq!(next("*/5 * * * *", None, from), at(2030, 1, 1, 10, 10, 0));
        assert_eq!(next("27 15 * * *", None, from), at(2030, 1, 1, 15, 27, 0));
        // Strictly after: a schedule matching the very instant fires at its next match.
        assert_eq!(next("0 12 * * *", None, at(2030, 1, 1, 12, 0, 0)), at(2030, 1, 2, 12, 0, 0));
        assert_eq!(next("@hourly", None, from), at(2030, 1, 1, 11, 0, 0));
        assert_eq!(next("0 9 * * MON", None, from), at(2030, 1, 7, 9, 0, 0));
    }

    #[test]
    fn a_day_of_month_and_a_day_of_week_fire_on_either_as_croniter_does() {
        // 2030-01-01 is a Tuesday: the 15th or any Friday, whichever comes first.
        assert_eq!(next("0 0 15 * FRI", None, at(2030, 1, 1, 0, 0, 0)), at(2030, 1, 4, 0, 0, 0));
    }

    #[test]
    fn a_sixth_field_is_seconds_written_last_as_croniter_reads_it() {
        let from = at(2030, 1, 1, 10, 7, 31);
        assert_eq!(next("* * * * * */10", None, from), at(2030, 1, 1, 10, 7, 40));
        assert_eq!(next("* * * * * 15", None, from), at(2030, 1, 1, 10, 8, 15));
    }

    #[test]
    fn a_timezone_moves_the_schedule_and_the_next_run_date_stays_utc() {
        // 09:00 in New York in January is 14:00 UTC.
        assert_eq!(
            next("0 9 * * *", Some("America/New_York"), at(2030, 1, 1, 0, 0, 0)),
            at(2030, 1, 1, 14, 0, 0)
        );
    }

    #[test]
    fn croniters_midnight_is_daily() {
        assert_eq!(next("@midnight", None, at(2030, 1, 1, 10, 0, 0)), at(2030, 1, 2, 0, 0, 0));
    }

    #[test]
    fn odd_schedules_are_read_or_refused_without_panicking() {
        let from = at(2030, 1, 1, 0, 0, 0);
        for odd in [
            "*/0 * * * *",
            "59-0 * * * *",
            "L * * * *",
            "* * L * *",
            "* * * * 5#9",
            "* * 31 2 *",
            "0 0 29 2 *",
            "* * * * * 60",
            "*/61 * * * *",
            "0-59/7 * * * 7",
            "@reboot",
        ] {
            if let Ok(schedule) = Schedule::parse(odd, None) {
                let _ = schedule.next_after(from);
            }
        }
        assert_eq!(next("0 0 29 2 *", None, from), at(2032, 2, 29, 0, 0, 0));
        assert_eq!(Schedule::parse("* * 31 2 *", None).map(|s| s.next_after(from)).ok(), Some(None));
    }

    #[test]
    fn bad_schedules_and_zones_are_unprocessable() {
        for bad in ["", "* * * *", "61 * * * *", "* * * * * * 2030", "every minute", "@sometimes"] {
            let status = Schedule::parse(bad, None).err().map(|e| e.status().as_u16());
            assert_eq!(status, Some(422), "{bad:?}");
        }
        let status = Schedule::parse("* * * * *", Some("Mars/Olympus")).err().map(|e| e.status().as_u16());
        assert_eq!(status, Some(422));
    }
}
