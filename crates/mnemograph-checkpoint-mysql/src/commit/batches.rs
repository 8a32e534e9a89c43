//! Splitting rows into multi-row statements that the server accepts.

/// Rows per multi-row statement at most: MySQL allows 65,535 placeholders per statement.
pub(crate) const MAX_PLACEHOLDERS: usize = 65_535;
/// Bytes of blob data per statement at most, well under the servers' default `max_allowed_packet`
/// (16 MiB on MariaDB 10.11, 64 MiB on MySQL 8), so a large batch becomes several statements.
const BATCH_BYTES: usize = 4 << 20;

/// Splits `items` into runs of at most `max_rows` items and, unless a single item is larger,
/// at most [`BATCH_BYTES`] of payload.
pub(crate) fn batches<'a, T>(
    items: &'a [T],
    size: impl Fn(&T) -> usize + 'a,
    max_rows: usize,
) -> impl Iterator<Item = &'a [T]> + 'a {
    let mut rest = items;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let mut bytes = 0;
        let mut n = 0;
        while n < rest.len() && n < max_rows {
            let next = size(&rest[n]);
            if n > 0 && bytes + next > BATCH_BYTES {
                break;
            }
            bytes += next;
            n += 1;
        }
        let (batch, tail) = rest.split_at(n);
        rest = tail;
        Some(batch)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batches_split_by_rows_and_bytes() {
        let sizes = [1, 2, 3, 4, 5];
        let by_rows: Vec<usize> = batches(&sizes, |_| 0, 2).map(<[_]>::len).collect();
        assert_eq!(by_rows, [2, 2, 1]);
        let big = [BATCH_BYTES, 1, BATCH_BYTES - 1, 2];
        let by_bytes: Vec<usize> = batches(&big, |s| *s, 100).map(<[_]>::len).collect();
        assert_eq!(by_bytes, [1, 2, 1]);
        assert_eq!(batches(&[] as &[usize], |s| *s, 1).count(), 0);
    }
}
