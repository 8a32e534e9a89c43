//! Time-ordered checkpoint ids: LangGraph's `uuid6` (`langgraph.checkpoint.base.id`).
//!
//! Savers sort checkpoints by comparing id *strings* (`ORDER BY checkpoint_id DESC`,
//! `checkpoint_id < before`), so the layout below is chosen so that string order is creation order.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

/// 100 ns intervals between the Gregorian epoch of UUIDs (1582-10-15) and the Unix epoch.
const GREGORIAN_OFFSET: u64 = 0x01B2_1DD2_1381_4000;

/// The last timestamp handed out, so that ids made in the same 100 ns tick (or after the wall clock
/// steps back) still increase. An atomic rather than a mutex: ids are made once per superstep on the
/// engine's hot path, and a compare-and-swap never blocks.
static LAST_TIMESTAMP: AtomicU64 = AtomicU64::new(0);

/// A LangGraph-compatible version-6 UUID whose clock sequence is `clock_seq & 0x3FFF`.
///
/// The 60-bit timestamp (100 ns units since 1582-10-15) is laid out most significant bits first,
/// so the hyphenated lowercase string of a later id always sorts after an earlier one made by this
/// process; ids are strictly increasing even when the clock does not advance. The 48 node bits are
/// random. The fourth group is the RFC variant plus the clock sequence: `8000` for 0, `8001` for
/// 1, `bfff` for -1.
///
/// # Example
/// ```
/// # use mnemograph_checkpoint::checkpoint::backend::uuid6;
/// let a = uuid6(-1);
/// let b = uuid6(0);
/// assert!(a < b);
/// assert_eq!(&a[19..23], "bfff");
/// assert_eq!(&b[14..15], "6");
/// ```
pub fn uuid6(clock_seq: i64) -> String {
    let timestamp = next_timestamp();
    let node = rand::random::<u64>() & 0xFFFF_FFFF_FFFF;
    // Two's complement masking is what Python's `clock_seq & 0x3FFF` does for negative steps.
    let clock_seq = (clock_seq & 0x3FFF) as u128;

    let time_high_and_mid = u128::from((timestamp >> 12) & 0xFFFF_FFFF_FFFF);
    let time_low = u128::from(timestamp & 0x0FFF);
    let value = (time_high_and_mid << 80)
        | (0x6 << 76) // version 6
        | (time_low << 64)
        | ((0x8000 | clock_seq) << 48) // RFC 4122 variant `10` in the top bits
        | u128::from(node);

    uuid::Uuid::from_u128(value).hyphenated().encode_lower(&mut uuid::Uuid::encode_buffer()).to_owned()
}

/// The id of a checkpoint written at `step`: [`uuid6`] with the step as clock sequence.
///
/// # Example
/// ```
/// # use mnemograph_checkpoint::checkpoint::backend::checkpoint_id;
/// assert_eq!(&checkpoint_id(1)[19..23], "8001");
/// ```
pub fn checkpoint_id(step: i64) -> String {
    uuid6(step)
}

/// The current time as a UUID timestamp, bumped past the last one handed out.
fn next_timestamp() -> u64 {
    // A clock before 1970 is a broken host; fall back to the epoch and rely on the bump.
    let nanos = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_nanos());
    let now = (nanos / 100) as u64 + GREGORIAN_OFFSET;
    let mut last = LAST_TIMESTAMP.load(Ordering::Relaxed);
    loop {
        let next = if now > last { now } else { last + 1 };
        // Relaxed is enough: only this one counter is ordered, and the CAS is atomic on it.
        match LAST_TIMESTAMP.compare_exchange_weak(last, next, Ordering::Relaxed, Ordering::Relaxed) {
            Ok(_) => return next,
            Err(seen) => last = seen,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn is_lower_hex(s: &str) -> bool {
        s.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    }

    #[test]
    fn has_the_uuid_layout_version_and_variant() {
        let id = uuid6(0);
        assert_eq!(id.len(), 36, "{id}");
        let groups: Vec<&str> = id.split('-').collect();
        assert_eq!(groups.iter().map(|g| g.len()).collect::<Vec<_>>(), [8, 4, 4, 4, 12], "{id}");
        assert!(groups.iter().all(|g| is_lower_hex(g)), "{id}");
        assert_eq!(&groups[2][..1], "6", "version nibble of {id}");
        let parsed = uuid::Uuid::parse_str(&id).unwrap();
        assert_eq!(parsed.get_version_num(), 6);
        assert_eq!(parsed.get_variant(), uuid::Variant::RFC4122);
    }

    #[test]
    fn string_order_is_creation_order() {
        let ids: Vec<String> = (0..10_000).map(|i| uuid6(i % 7 - 1)).collect();
        for pair in ids.windows(2) {
            assert!(pair[0] < pair[1], "{} !< {}", pair[0], pair[1]);
        }
    }

    #[test]
    fn ids_from_many_threads_are_unique() {
        let handles: Vec<_> =
            (0..4).map(|_| std::thread::spawn(|| (0..2_000).map(|_| uuid6(0)).collect::<Vec<_>>())).collect();
        let mut all: Vec<String> = handles.into_iter().flat_map(|h| h.join().unwrap()).collect();
        let n = all.len();
        all.sort();
        all.dedup();
        assert_eq!(all.len(), n);
    }

    #[test]
    fn clock_sequence_encodes_the_step() {
        for (step, group) in
            [(-1, "bfff"), (0, "8000"), (1, "8001"), (5, "8005"), (0x3FFF, "bfff"), (0x4000, "8000")]
        {
            let id = checkpoint_id(step);
            assert_eq!(&id[19..23], group, "step {step}: {id}");
        }
    }

    #[test]
    fn timestamp_is_the_current_time() {
        let id = uuid::Uuid::parse_str(&uuid6(0)).unwrap();
        let bits = id.as_u128();
        let high = ((bits >> 80) as u64) & 0xFFFF_FFFF_FFFF;
        let low = ((bits >> 64) as u64) & 0x0FFF;
        let timestamp = (high << 12) | low;
        let now =
            SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_nanos() as u64 / 100 + GREGORIAN_OFFSET;
        // Within one minute: the bump can only push the timestamp ahead by the number of ids made.
        assert!(timestamp.abs_diff(now) < 600_000_000, "timestamp {timestamp}, now {now}");
    }

    #[test]
    fn node_bits_are_random() {
        let a = uuid6(0);
        let b = uuid6(0);
        assert_ne!(a[24..], b[24..]);
    }
}
