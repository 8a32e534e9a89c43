//! The timestamps of the `store` table: SQLite's `CURRENT_TIMESTAMP` layout (`2026-12-06
//! 22:00:18`) with microseconds, which sorts as text among the rows either language writes and
//! which Python's `datetime.fromisoformat` reads.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use mnemograph_checkpoint::checkpoint::backend::{days_from_civil, format_iso};

/// The last stamp this process handed out, in microseconds since the epoch.
static LAST_STAMP: AtomicU64 = AtomicU64::new(0);

/// Now, strictly later than every earlier stamp of this process, so that "newest write first"
/// has no ties among this process's writes even within one microsecond.
pub(super) fn unique_now() -> SystemTime {
    let now = micros(SystemTime::now());
    let mut last = LAST_STAMP.load(Ordering::Relaxed);
    loop {
        let next = now.max(last + 1);
        match LAST_STAMP.compare_exchange_weak(last, next, Ordering::Relaxed, Ordering::Relaxed) {
            Ok(_) => return UNIX_EPOCH + Duration::from_micros(next),
            Err(seen) => last = seen,
        }
    }
}

fn micros(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_micros() as u64)
}

/// `t` as `YYYY-MM-DD HH:MM:SS.ffffff` (UTC).
pub(super) fn format(t: SystemTime) -> String {
    let d = t.duration_since(UNIX_EPOCH).unwrap_or_default();
    let iso = format_iso(d.as_secs() as i64, d.subsec_micros());
    iso.trim_end_matches("+00:00").replacen('T', " ", 1)
}

/// Reads what either language writes: `YYYY-MM-DD HH:MM:SS`, with or without a fraction, a `T`
/// for the space, and a `Z` or `+00:00` offset (other offsets are applied). `None` for anything
/// else.
pub(super) fn parse(text: &str) -> Option<SystemTime> {
    let b = text.as_bytes();
    let num = |range: std::ops::Range<usize>| -> Option<i64> {
        let digits = text.get(range)?;
        digits.bytes().all(|c| c.is_ascii_digit()).then(|| digits.parse().ok())?
    };
    if b.len() < 19 || b[4] != b'-' || b[7] != b'-' || !matches!(b[10], b' ' | b'T') || b[13] != b':' {
        return None;
    }
    let (year, month, day) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (hour, minute, second) = (num(11..13)?, num(14..16)?, num(17..19)?);
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) || hour > 23 || minute > 59 || second > 60 {
        return None;
    }
    let mut rest = &text[19..];
    let mut nanos = 0u32;
    if let Some(frac) = rest.strip_prefix('.') {
        let digits = frac.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 {
            return None;
        }
        let kept = &frac[..digits.min(9)];
        nanos = kept.parse::<u32>().ok()? * 10u32.pow(9 - kept.len() as u32);
        rest = &frac[digits..];
    }
    let offset = match rest {
        "" | "Z" => 0,
        _ => {
            let sign = match rest.as_bytes()[0] {
                b'+' => 1,
                b'-' => -1,
                _ => return None,
            };
            let (h, m) = rest[1..].split_once(':')?;
            if h.len() != 2 || m.len() != 2 {
                return None;
            }
            sign * (h.parse::<i64>().ok()? * 3600 + m.parse::<i64>().ok()? * 60)
        }
    };
    // In range: both were checked above.
    let secs = days_from_civil(year, month as u32, day as u32) * 86_400 + hour * 3600 + minute * 60 + second
        - offset;
    let secs = u64::try_from(secs).ok()?;
    Some(UNIX_EPOCH + Duration::new(secs, nanos))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_languages_stamps_read_back() {
        let t = UNIX_EPOCH + Duration::new(1_796_014_355, 819_352_000);
        assert_eq!(format(t), "2026-11-30 04:52:35.819352");
        assert_eq!(parse(&format(t)), Some(t));
        // SQLite's CURRENT_TIMESTAMP, Python's datetime adapter, and an ISO `T` with `Z`.
        assert_eq!(parse("2026-11-30 04:52:35"), Some(UNIX_EPOCH + Duration::from_secs(1_796_014_355)));
        assert_eq!(parse("2026-11-30 04:52:35.819352+00:00"), Some(t));
        assert_eq!(parse("2026-11-30T06:52:35.819352+02:00"), Some(t));
        assert_eq!(parse("2000-02-29T00:00:00Z"), Some(UNIX_EPOCH + Duration::from_secs(951_782_400)));
    }

    #[test]
    fn malformed_stamps_are_refused() {
        for bad in [
            "",
            "2026-11-30",
            "2026-13-01 00:00:00",
            "2026-11-30 04:52:35.",
            "2026-11-30 04:52:35+0000",
            "yesterday at noon!!",
        ] {
            assert_eq!(parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn stamps_of_one_process_never_repeat() {
        let stamps: Vec<SystemTime> = (0..1000).map(|_| unique_now()).collect();
        assert!(stamps.windows(2).all(|w| w[0] < w[1]));
    }
}
