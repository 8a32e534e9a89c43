//! [`Fence`]: a condition that every write of a fenced saver checks inside its own transaction.
//!
//! A writer that may lose what it writes to (a run that another worker takes over once its lease
//! runs out) cannot check its claim before writing and then write: between the two, the claim
//! can pass to another writer, and the stale write lands over the new owner's. Checked in the
//! write's transaction with a locking read, the claim's row cannot change until the write commits
//! or rolls back: a takeover waits for the write, and a write after the takeover sees it.
//!
//! The check travels with the rest of the transaction (see [`crate::commit::tx`]), so it must
//! *fail* when the condition does not hold rather than return something to look at: as the
//! parent check does ([`crate::commit::check_with_commit`]), it adds whether the count is zero to
//! the largest `BIGINT UNSIGNED`, which overflows (error 1690) when it is.

use mnemograph_checkpoint::checkpoint::CheckpointError;

use crate::statement::{Bind, Statement};

/// A condition checked inside the transaction of every checkpoint and pending-write write of a
/// [`MySqlCheckpointer::fenced`](crate::MySqlCheckpointer::fenced) saver: the write is refused
/// with [`CheckpointError::Fenced`], and nothing of it is stored, unless the condition's query
/// counts at least one row.
///
/// The query is a `SELECT` whose single value is a count, with `?` placeholders for the values
/// bound in order. It should read with a lock (`LOCK IN SHARE MODE`, or `FOR SHARE` on MySQL 8)
/// so that the rows it counts cannot change until the write commits: without one, a change
/// committed after the check but before the write's `COMMIT` goes unseen.
///
/// ```
/// use mnemograph_checkpoint_mysql::Fence;
///
/// let fence = Fence::new(
///     "SELECT COUNT(*) FROM leases WHERE name = ? AND holder = ? AND token = ? LOCK IN SHARE MODE",
/// )
/// .bind("thread-7")
/// .bind("worker-a")
/// .bind_int(3);
/// # let _ = fence;
/// ```
#[derive(Debug, Clone)]
pub struct Fence {
    /// The user's query, for messages.
    query: String,
    /// The statement that fails when the query counts nothing.
    check: String,
    /// One value per placeholder of `query`.
    values: Vec<Value>,
}

/// A value bound to one placeholder of a [`Fence`]'s query.
#[derive(Debug, Clone)]
enum Value {
    Text(String),
    Int(i64),
}

impl Fence {
    /// A fence that lets a write go ahead while `query` counts at least one row.
    pub fn new(query: impl Into<String>) -> Self {
        let query = query.into();
        let check = format!("SELECT 18446744073709551615 + (({query}) = 0) INTO @mnemograph_fence");
        Self { query, check, values: Vec::new() }
    }

    /// Binds text to the query's next placeholder.
    #[must_use]
    pub fn bind(mut self, value: impl Into<String>) -> Self {
        self.values.push(Value::Text(value.into()));
        self
    }

    /// Binds an integer to the query's next placeholder.
    #[must_use]
    pub fn bind_int(mut self, value: i64) -> Self {
        self.values.push(Value::Int(value));
        self
    }

    /// The statement that checks the fence, failing with error 1690 when it does not hold.
    pub(crate) fn statement(&self) -> Statement<'_> {
        let mut statement = Statement::with_capacity(self.check.as_str(), self.values.len());
        for value in &self.values {
            statement.push(match value {
                Value::Text(text) => Bind::Text(text),
                Value::Int(n) => Bind::Int(*n),
            });
        }
        statement
    }

    /// The error of a write this fence refused. It names the query, never its values, which may
    /// be private.
    pub(crate) fn refused(&self) -> CheckpointError {
        let query = self.query.split_whitespace().collect::<Vec<_>>().join(" ");
        CheckpointError::Fenced(format!("`{query}` counted no row"))
    }
}
