//! Channel versions in LangGraph's string form: `{n:032}.{random float}`.
//!
//! The engine compares versions as strings (`max` when applying writes, `>` when deciding which
//! nodes are triggered), which is only sound because the counter is zero-padded to 32 digits. The
//! random suffix is kept so versions written by this crate and by Python LangGraph are
//! indistinguishable in a shared database.

/// The version after `current`: the counter before the first `.` plus one, zero-padded to 32
/// digits, then `.` and a random float in `[0, 1)` as Python prints one (LangGraph's
/// `f"{n+1:032}.{random.random():016}"`).
///
/// The random part is written as `0.` and 16 random digits: a text Python's `repr` prints for
/// floats in `[0, 1)`, produced without float formatting, since the engine makes a version for
/// every new version of every channel it saves. Nothing ever parses that part: versions are
/// compared as strings, and the counter decides.
///
/// `None` (and, leniently, a version without a numeric prefix) counts as 0.
///
/// # Example
/// ```
/// # use mnemograph_checkpoint::checkpoint::backend::{next_version, version_number};
/// let v1 = next_version(None);
/// assert!(v1.starts_with("00000000000000000000000000000001.0."));
/// let v2 = next_version(Some(&v1));
/// assert_eq!(version_number(&v2), Some(2));
/// assert!(v2 > v1);
/// ```
pub fn next_version(current: Option<&str>) -> String {
    version_text(current.and_then(version_number).unwrap_or(0).saturating_add(1))
}

/// Bytes in a version text: 32 digits of counter (a `u64` has at most 20), `.0.`, 16 digits.
pub const VERSION_TEXT_LEN: usize = 32 + 3 + 16;

/// The text of version `n` with a fresh random suffix: what [`next_version`] returns for the
/// version before `n`, without writing and parsing that one.
pub(crate) fn version_text(n: u64) -> String {
    String::from(write_version_text(&mut [0; VERSION_TEXT_LEN], n))
}

/// Writes the text of version `n` with a fresh random suffix into `buf` and returns it. Digit by digit into one buffer,
/// validated once: the engine writes a text for every new version of every channel.
pub fn write_version_text(buf: &mut [u8; VERSION_TEXT_LEN], n: u64) -> &str {
    // 16 digits; `repr` never ends a fraction with 0, so neither do we.
    let mut fraction = rand::random::<u64>() % 10_000_000_000_000_000;
    if fraction.is_multiple_of(10) {
        fraction += 1;
    }
    buf.fill(b'0');
    let (counter, rest) = buf.split_at_mut(32);
    write_digits(counter, n);
    rest[..3].copy_from_slice(b".0.");
    write_digits(&mut rest[3..], fraction);
    std::str::from_utf8(buf).expect("ASCII digits")
}

/// Writes `value` in decimal at the end of `out`, which holds zeros (`b'0'`) already: the padding
/// is not written again (the leading digits are cut when `value` has more digits than `out` has
/// room for; callers size `out` for their values).
pub(crate) fn write_digits(out: &mut [u8], mut value: u64) {
    for digit in out.iter_mut().rev() {
        *digit = b'0' + (value % 10) as u8;
        value /= 10;
        if value == 0 {
            break;
        }
    }
}

/// The counter of a version: the integer before the first `.` (the whole string when there is no
/// `.`, as for plain integer versions); `None` when that part is not a non-negative integer.
///
/// # Example
/// ```
/// # use mnemograph_checkpoint::checkpoint::backend::version_number;
/// assert_eq!(version_number("00000000000000000000000000000007.0.25"), Some(7));
/// assert_eq!(version_number("3"), Some(3));
/// assert_eq!(version_number("x.1"), None);
/// ```
pub fn version_number(v: &str) -> Option<u64> {
    let prefix = v.split_once('.').map_or(v, |(n, _)| n);
    // `u64::from_str` accepts a leading `+`, which no saver ever writes; reject it.
    if prefix.is_empty() || !prefix.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    prefix.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_version_is_one() {
        let v = next_version(None);
        assert_eq!(&v[..33], "00000000000000000000000000000001.");
        assert_eq!(version_number(&v), Some(1));
    }

    #[test]
    fn counter_increments_from_the_prefix_only() {
        let v = next_version(Some("00000000000000000000000000000041.0.9"));
        assert_eq!(version_number(&v), Some(42));
        assert_eq!(version_number(&next_version(Some("7"))), Some(8));
        assert_eq!(version_number(&next_version(Some("not a version"))), Some(1));
    }

    #[test]
    fn suffix_is_a_float_in_unit_interval_at_least_16_wide() {
        for _ in 0..1_000 {
            let v = next_version(None);
            let suffix = &v[33..];
            assert!(suffix.len() >= 16, "{v}");
            let x: f64 = suffix.parse().unwrap_or_else(|e| panic!("{v}: {e}"));
            assert!((0.0..1.0).contains(&x), "{v}");
        }
    }

    #[test]
    fn versions_sort_by_counter_as_strings() {
        let mut v = next_version(None);
        for _ in 0..200 {
            let next = next_version(Some(&v));
            assert!(next > v, "{next} <= {v}");
            v = next;
        }
        assert_eq!(version_number(&v), Some(201));
    }

    #[test]
    fn suffix_reads_as_a_python_float_in_unit_interval() {
        for _ in 0..200 {
            let v = next_version(Some("00000000000000000000000000000009.0.5"));
            let (counter, fraction) = v.split_once('.').unwrap();
            assert_eq!(counter, format!("{:032}", 10));
            assert!(fraction.starts_with("0.") && fraction.len() == 18, "{v}");
            let x: f64 = fraction.parse().unwrap();
            assert!((0.0..1.0).contains(&x), "{v}");
            assert!(!fraction.ends_with('0'), "repr never ends a fraction with 0: {v}");
        }
    }

    #[test]
    fn padding_matches_python_format() {
        let padded = |n: u64, width| {
            let mut out = vec![b'0'; width];
            write_digits(&mut out, n);
            String::from_utf8(out).unwrap()
        };
        assert_eq!(padded(42, 32), format!("{:032}", 42));
        assert_eq!(padded(0, 16), "0000000000000000");
        assert_eq!(padded(u64::MAX, 32), format!("{:032}", u64::MAX));
        let v = version_text(u64::MAX);
        assert_eq!(v.len(), VERSION_TEXT_LEN);
        assert_eq!(version_number(&v), Some(u64::MAX), "the largest counter fits: {v}");
    }

    #[test]
    fn version_number_rejects_non_integers() {
        assert_eq!(version_number(""), None);
        assert_eq!(version_number(".5"), None);
        assert_eq!(version_number("+5.1"), None);
        assert_eq!(version_number("-1"), None);
        assert_eq!(version_number("00000000000000000000000000000012.0.5"), Some(12));
    }
}
