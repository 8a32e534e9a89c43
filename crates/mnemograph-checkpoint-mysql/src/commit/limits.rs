//! The lengths of the `VARCHAR` columns, checked before anything is sent (see [`fits`]).

use mnemograph_checkpoint::checkpoint::{CheckpointConfig, CheckpointError};

/// Length of the `VARCHAR(150)` columns: ids, channels, versions, type tags.
pub(crate) const ID_LEN: usize = 150;
/// Length of the `VARCHAR(2000)` columns: `checkpoint_ns`, `task_path`.
pub(crate) const NS_LEN: usize = 2000;

/// `Err(Invalid)` naming `column` when `value` is longer than the column holds.
///
/// The savers write with `INSERT IGNORE`, under which MySQL truncates an overlong value with a
/// warning even in strict mode; a truncated id would silently address another row, so it is
/// refused before anything is sent.
pub(crate) fn fits(column: &str, value: &str, max_chars: usize) -> Result<(), CheckpointError> {
    // UTF-8 has at least one byte per character: short strings need no counting.
    if value.len() <= max_chars {
        return Ok(());
    }
    let chars = value.chars().count();
    if chars <= max_chars {
        return Ok(());
    }
    Err(CheckpointError::Invalid(format!(
        "`{column}` is {chars} characters long; the MySQL column holds at most {max_chars}"
    )))
}

/// Checks the thread id and namespace of an address.
pub(crate) fn check_address(config: &CheckpointConfig) -> Result<(), CheckpointError> {
    fits("thread_id", &config.thread_id, ID_LEN)?;
    fits("checkpoint_ns", &config.checkpoint_ns, NS_LEN)?;
    if let Some(parent) = &config.checkpoint_id {
        fits("parent_checkpoint_id", parent, ID_LEN)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overlong_values_are_refused_by_column() {
        assert!(fits("thread_id", &"x".repeat(150), ID_LEN).is_ok());
        // 150 characters of 3 bytes each still fit: the limit is in characters.
        assert!(fits("thread_id", &"线".repeat(150), ID_LEN).is_ok());
        let err = fits("thread_id", &"线".repeat(151), ID_LEN).unwrap_err();
        assert!(
            matches!(&err, CheckpointError::Invalid(m) if m.contains("`thread_id`") && m.contains("151")),
            "{err}"
        );
    }
}
