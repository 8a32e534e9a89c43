//! Exact comparison of the text columns that address rows.
//!
//! LangGraph's tables declare `thread_id`, `channel`, ... as plain `VARCHAR`, so they take the
//! database's default collation, which is usually case-, accent- and trailing-space-insensitive
//! (`utf8mb4_general_ci`, `utf8mb4_unicode_ci`, MySQL's `utf8mb4_0900_ai_ci` for accents and
//! case). Compared with `=` alone, `user-1`, `USER-1`, `user-1 ` and `üser-1` are one thread: each
//! would read, list, prune and delete the others' checkpoints. The schema must stay LangGraph's
//! (Python's `setup()` must find nothing to do), so the statements compare twice instead:
//!
//! - `column = ?` under the column's collation, which the primary key and indexes serve, so the
//!   lookup stays an index range scan;
//! - and the UTF-8 bytes of both sides, which keeps only the exact match among the few rows the
//!   index found. `CONVERT(… USING utf8mb4)` first, so the bytes compared are UTF-8 whatever the
//!   column's character set; binary strings have no pad attribute, so trailing spaces count.
//!
//! The value is therefore bound twice, once per comparison.
//!
//! Namespaces need none of this: they are addressed by `checkpoint_ns_hash`, the MD5 of their
//! UTF-8 bytes, which is exact already.

/// `<column> = ? AND <the bytes of column> = <the bytes of ?>`: bind the value twice.
macro_rules! same {
    ($column:literal) => {
        concat!($column, " = ? AND CAST(CONVERT(", $column, " USING utf8mb4) AS BINARY) = CAST(? AS BINARY)")
    };
}

/// `<a> = <b>` for two columns, under the collation (for the index) and byte for byte.
macro_rules! same_columns {
    ($a:literal, $b:literal) => {
        concat!(
            $a,
            " = ",
            $b,
            " AND CAST(CONVERT(",
            $a,
            " USING utf8mb4) AS BINARY) = CAST(CONVERT(",
            $b,
            " USING utf8mb4) AS BINARY)"
        )
    };
}

pub(crate) use {same, same_columns};

#[cfg(test)]
mod tests {
    #[test]
    fn both_comparisons_are_spelled_out() {
        assert_eq!(
            same!("thread_id"),
            "thread_id = ? AND CAST(CONVERT(thread_id USING utf8mb4) AS BINARY) = CAST(? AS BINARY)"
        );
        const JOINED: &str = concat!("ON ", same_columns!("a.t", "b.t"));
        assert_eq!(
            JOINED,
            "ON a.t = b.t AND CAST(CONVERT(a.t USING utf8mb4) AS BINARY) = \
             CAST(CONVERT(b.t USING utf8mb4) AS BINARY)"
        );
    }
}
