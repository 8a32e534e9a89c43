//! The instants a cron deals in (`next_run_date`, `end_time`) as the API writes them: fixed-width
//! UTC text with microseconds, the format of every other timestamp the server answers, so that
//! comparing two of them as text compares their times, in memory and in a cluster's database.

use chrono::{DateTime, NaiveDateTime, SecondsFormat, Utc};

use crate::error::{Result, ServerError};

/// Now, in UTC.
pub fn utc_now() -> DateTime<Utc> {
    DateTime::from(std::time::SystemTime::now())
}

/// `at` in the API's format (`2024-07-25T17:04:00.000000+00:00`).
pub fn stamp(at: DateTime<Utc>) -> String {
    at.to_rfc3339_opts(SecondsFormat::Micros, false)
}

/// An instant a client sent (`end_time`): RFC 3339 with an offset, or a date and time without
/// one, read as UTC as LangGraph's server reads a naive `datetime`; anything else is unprocessable.
pub(crate) fn parse_instant(field: &str, text: &str) -> Result<DateTime<Utc>> {
    if let Ok(at) = DateTime::parse_from_rfc3339(text) {
        return Ok(at.with_timezone(&Utc));
    }
    for format in ["%Y-%m-%dT%H:%M:%S%.f", "%Y-%m-%d %H:%M:%S%.f"] {
        if let Ok(naive) = NaiveDateTime::parse_from_str(text, format) {
            return Ok(naive.and_utc());
        }
    }
    Err(ServerError::Unprocessable(format!(
        "Invalid {field}: '{text}'. Expected an ISO 8601 date-time such as 2030-01-01T00:00:00+00:00"
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stamps_are_fixed_width_utc_and_read_back() {
        let at = parse_instant("end_time", "2030-01-02T03:04:05+02:00").expect("an instant");
        assert_eq!(stamp(at), "2030-01-02T01:04:05.000000+00:00");
        let naive = parse_instant("end_time", "2030-01-02T03:04:05.5").expect("a naive instant");
        assert_eq!(stamp(naive), "2030-01-02T03:04:05.500000+00:00");
        assert!(parse_instant("end_time", "tomorrow").is_err());
    }
}
