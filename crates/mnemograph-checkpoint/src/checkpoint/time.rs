//! Timestamps in LangGraph's format, without a date-time dependency.

use std::time::{SystemTime, UNIX_EPOCH};

/// Now, as `datetime.now(timezone.utc).isoformat()` prints it: `2026-11-30T04:52:35.819352+00:00`.
pub fn now_iso() -> String {
    let d = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
    format_iso(d.as_secs() as i64, d.subsec_micros())
}

/// Formats seconds since the Unix epoch plus microseconds as ISO-8601 UTC.
pub fn format_iso(secs: i64, micros: u32) -> String {
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let (y, m, d) = civil_from_days(days);
    if !(0..=9999).contains(&y) || micros > 999_999 {
        return format!(
            "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{micros:06}+00:00",
            rem / 3600,
            rem % 3600 / 60,
            rem % 60
        );
    }
    // Written digit by digit into one buffer, validated once: `format!` with seven padded fields
    // cost more than the rest of a checkpoint's bookkeeping, and every checkpoint is stamped.
    let mut buf = *b"0000-00-00T00:00:00.000000+00:00";
    let rem = rem as u32;
    let fields = [
        (0, 4, y as u32),
        (5, 2, m),
        (8, 2, d),
        (11, 2, rem / 3600),
        (14, 2, rem % 3600 / 60),
        (17, 2, rem % 60),
        (20, 6, micros),
    ];
    for (at, width, value) in fields {
        super::version::write_digits(&mut buf[at..at + width], u64::from(value));
    }
    String::from(std::str::from_utf8(&buf).expect("ASCII digits"))
}

/// The date (year, month, day) of a day counted from 1970-01-01, in the proleptic Gregorian
/// calendar (Howard Hinnant's algorithm): the inverse of [`days_from_civil`].
pub fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// The day, counted from 1970-01-01, of a date in the proleptic Gregorian calendar (Howard
/// Hinnant's algorithm). Eras of 400 years start on March 1, so February's length falls at the
/// end of a year; out-of-range months and days count on past the month's end.
pub fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let (m, d) = (i64::from(m), i64::from(d));
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let mp = if m > 2 { m - 3 } else { m + 9 };
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_like_python_isoformat() {
        assert_eq!(format_iso(0, 0), "1970-01-01T00:00:00.000000+00:00");
        // 2026-11-30T04:52:35.819352+00:00
        assert_eq!(format_iso(1_796_014_355, 819_352), "2026-11-30T04:52:35.819352+00:00");
        assert_eq!(format_iso(951_782_400, 1), "2000-02-29T00:00:00.000001+00:00");
        assert_eq!(format_iso(253_402_300_799, 999_999), "9999-12-31T23:59:59.999999+00:00");
    }

    #[test]
    fn days_and_dates_are_inverse() {
        assert_eq!(days_from_civil(1970, 1, 1), 0);
        assert_eq!(civil_from_days(-1), (1969, 12, 31));
        assert_eq!(civil_from_days(days_from_civil(2024, 3, 1) - 1), (2024, 2, 29));
        assert_eq!(civil_from_days(days_from_civil(2023, 3, 1) - 1), (2023, 2, 28));
        assert_eq!(civil_from_days(days_from_civil(2000, 3, 1) - 1), (2000, 2, 29));
        assert_eq!(civil_from_days(days_from_civil(1900, 3, 1) - 1), (1900, 2, 28));
        for day in (-800_000..800_000).step_by(97) {
            let (y, m, d) = civil_from_days(day);
            assert_eq!(days_from_civil(y, m, d), day);
        }
    }

    #[test]
    fn values_outside_the_fixed_layout_are_still_written_whole() {
        // Past year 9999, and a microsecond count no clock produces: `format!` writes every digit.
        assert_eq!(format_iso(253_402_300_800, 0), "10000-01-01T00:00:00.000000+00:00");
        assert_eq!(format_iso(0, 1_000_000), "1970-01-01T00:00:00.1000000+00:00");
    }
}
