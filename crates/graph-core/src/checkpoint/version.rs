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
/// floats in `[0, 1)`, produced without float formatting, which made this function the most
/// expensive step of saving a checkpoint. Nothing ever parses that part: versions are compared
/// as strings, and the counter decides.
///
/// `None` (and, leniently, a version without a numeric prefix) counts as 0.
///
/// # Example
/// ```
/// # use graph_core::checkpoint::{next_version, version_number};
/// let v1 = next_version(None);
/// assert!(v1.starts_with("00000000000000000000000000000001.0."));
/// let v2 = next_version(Some(&v1));
/// assert_eq!(version_number(&v2), Some(2));
/// assert!(v2 > v1);
/// ```
pub fn next_version(current: Option<&str>) -> String {
    version_text(current.and_then(version_number).unwrap_or(0).saturating_add(1))
}

/// The text of version `n` with a fresh random suffix: what [`next_version`] returns for the
/// version before `n`, without writing and parsing that one.
pub(crate) fn version_text(n: u64) -> String {
    let mut out = String::with_capacity(32 + 3 + 16);
    push_version_text(&mut out, n);
    out
}

/// Appends [`version_text`]`(n)` to `out`.
pub(crate) fn push_version_text(out: &mut String, n: u64) {
    // 16 digits; `repr` never ends a fraction with 0, so neither do we.
    let mut fraction = rand::random::<u64>() % 10_000_000_000_000_000;
    if fraction % 10 == 0 {
        fraction += 1;
    }
    push_zero_padded(out, n, 32);
    out.push_str(".0.");
    push_zero_padded(out, fraction, 16);
}

/// Appends `value` in decimal, left-padded with zeros to `width` digits.
pub(crate) fn push_zero_padded(out: &mut String, mut value: u64, width: usize) {
    // Digits are written right to left into a small buffer, then the padding is appended as one
    // slice of zeros and the digits as another: a 32-byte buffer of padding and digits cost a
    // 32-byte UTF-8 validation per version and timestamp field.
    const ZEROS: &str = "00000000000000000000000000000000";
    let mut digits = [0_u8; 20]; // u64::MAX has 20 digits
    let mut start = digits.len();
    loop {
        start -= 1;
        digits[start] = b'0' + (value % 10) as u8;
        value /= 10;
        if value == 0 {
            break;
        }
    }
    let mut pad = width.saturating_sub(digits.len() - start);
    while pad > 0 {
        let n = pad.min(ZEROS.len());
        out.push_str(&ZEROS[..n]);
        pad -= n;
    }
    out.push_str(std::str::from_utf8(&digits[start..]).expect("ASCII digits"));
}

/// The counter of a version: the integer before the first `.` (the whole string when there is no
/// `.`, as for plain integer versions); `None` when that part is not a non-negative integer.
///
/// # Example
/// ```
/// # use graph_core::checkpoint::version_number;
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
            let mut out = String::new();
            push_zero_padded(&mut out, n, width);
            out
        };
        assert_eq!(padded(42, 32), format!("{:032}", 42));
        assert_eq!(padded(0, 16), "0000000000000000");
        assert_eq!(padded(u64::MAX, 32), format!("{:032}", u64::MAX));
        assert_eq!(padded(123, 2), "123", "never truncates");
        assert_eq!(padded(7, 40), format!("{:040}", 7), "wider than the buffer");
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
