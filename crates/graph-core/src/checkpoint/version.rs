//! Channel versions in LangGraph's string form: `{n:032}.{random float}`.
//!
//! The engine compares versions as strings (`max` when applying writes, `>` when deciding which
//! nodes are triggered), which is only sound because the counter is zero-padded to 32 digits. The
//! random suffix is kept so versions written by this crate and by Python LangGraph are
//! indistinguishable in a shared database.

/// The version after `current`: the counter before the first `.` plus one, zero-padded to 32
/// digits, then `.` and a random float in `[0, 1)` written like Python's `repr` and zero-padded on
/// the left to 16 characters (LangGraph's `f"{n+1:032}.{random.random():016}"`).
///
/// `None` (and, leniently, a version without a numeric prefix) counts as 0.
///
/// # Example
/// ```
/// # use graph_core::checkpoint::{next_version, version_number};
/// let v1 = next_version(None);
/// assert!(v1.starts_with("00000000000000000000000000000001."));
/// let v2 = next_version(Some(&v1));
/// assert_eq!(version_number(&v2), Some(2));
/// assert!(v2 > v1);
/// ```
pub fn next_version(current: Option<&str>) -> String {
    let n = current.and_then(version_number).unwrap_or(0).saturating_add(1);
    let counter = n.to_string();
    let suffix = python_float_repr(rand::random::<f64>());
    // Padded by hand: `format!("{n:032}")` pads one `write_char` call at a time, which made this
    // function several times slower, and it runs once per superstep.
    let mut out = String::with_capacity(33 + suffix.len().max(16));
    push_zero_padded(&mut out, &counter, 32);
    out.push('.');
    push_zero_padded(&mut out, &suffix, 16);
    out
}

/// Appends `s` left-padded with zeros to `width` characters (ASCII input).
fn push_zero_padded(out: &mut String, s: &str, width: usize) {
    out.extend(std::iter::repeat_n('0', width.saturating_sub(s.len())));
    out.push_str(s);
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

/// Python's `repr` of a float in `[0, 1)`.
///
/// Both Rust and Python print the shortest digits that round-trip; they differ only in notation:
/// Python switches to scientific form below `1e-4` (`1.5e-05`, exponent at least two digits) and
/// always keeps a fractional part (`0.0`).
fn python_float_repr(x: f64) -> String {
    if x == 0.0 {
        return "0.0".to_owned();
    }
    if x >= 1e-4 {
        return x.to_string();
    }
    // `{:e}` gives the same shortest digits as `{}`, as `d.ddde-N`.
    let sci = format!("{x:e}");
    let (mantissa, exponent) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exponent: i32 = exponent.parse().unwrap_or(0);
    let sign = if exponent < 0 { '-' } else { '+' };
    format!("{mantissa}e{sign}{:02}", exponent.unsigned_abs())
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
    fn float_repr_matches_python() {
        assert_eq!(python_float_repr(0.0), "0.0");
        assert_eq!(python_float_repr(0.5), "0.5");
        assert_eq!(python_float_repr(0.1), "0.1");
        assert_eq!(python_float_repr(0.123_456_789_012_345_68), "0.12345678901234568");
        assert_eq!(python_float_repr(0.0001), "0.0001");
        assert_eq!(python_float_repr(0.000_012_5), "1.25e-05");
        assert_eq!(python_float_repr(1e-5), "1e-05");
        assert_eq!(python_float_repr(1.5e-10), "1.5e-10");
        assert_eq!(python_float_repr(2.0_f64.powi(-53)), "1.1102230246251565e-16");
        assert_eq!(python_float_repr(1e-100), "1e-100");
    }

    #[test]
    fn padding_matches_python_format() {
        let padded = |s: &str, width| {
            let mut out = String::new();
            push_zero_padded(&mut out, s, width);
            out
        };
        // Python: f"{0.5:016}" == "00000000000000.5", f"{1e-05:016}" == "000000000001e-05".
        assert_eq!(padded(&python_float_repr(0.5), 16), "00000000000000.5");
        assert_eq!(padded(&python_float_repr(1e-5), 16), "000000000001e-05");
        assert_eq!(padded(&python_float_repr(0.123_456_789_012_345_68), 16), "0.12345678901234568");
        assert_eq!(padded("42", 32), format!("{:032}", 42));
        assert_eq!(padded(&u64::MAX.to_string(), 32), format!("{:032}", u64::MAX));
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
