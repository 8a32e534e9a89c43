//! A put transaction whose statements travel together: `BEGIN` with the first read, and every
//! write with the `COMMIT`.
//!
//! A prepared statement costs a round trip of its own, and a chat turn's two transactions hold
//! many statements (`BEGIN`, the parent check's two reads, an insert per kind of row, `COMMIT`):
//! sent one by one they cost more time on a fast network than the server spends on the rows. Here statements whose results
//! nobody waits for are queued, as text ([`Statement::render_into`]), and sent as one
//! multi-statement script when a result is needed: `BEGIN` goes with the parent check, and the
//! inserts go with `COMMIT`. A statement carrying large values (a long conversation's messages)
//! still runs prepared, in a round trip of its own: the server reads a script's text far slower
//! than it copies a bound value. The server runs a script's statements in order and stops at the
//! first that fails, so the transaction means what the separate statements meant.
//!
//! On a connection the saver keeps for puts ([`super::connections`]) autocommit is off: no
//! `BEGIN` is sent, the large statements that nothing queued reads (blobs, pending writes) run
//! first, and the parent check is queued as a statement that fails when it does not hold
//! ([`super::check_with_commit`]), so it travels with the inserts and the `COMMIT`: a put is two
//! round trips, or one.
//!
//! The transaction is begun and ended by text rather than by sqlx's `Transaction`, which does not
//! know about it. So a `Tx` that is dropped while the server may hold it open (its future was
//! cancelled, or a `ROLLBACK` failed) marks its connection to be closed instead of pooled: the
//! server rolls back a session's transaction when the session ends.

use mnemograph_checkpoint::checkpoint::backend::record_io;
use sqlx::mysql::{MySqlDatabaseError, MySqlRow};
use sqlx::MySqlConnection;

use super::connections::Lease;
use crate::script::{prepared, prepared_each, run_script, script};
use crate::statement::Statement;

/// A statement whose values carry more than this runs prepared, in binary, instead of being
/// queued. The server lexes a script's text byte by byte, while a bound value is copied as it
/// is; around this size a literal starts to cost as much as a round trip on loopback.
const INLINE_PAYLOAD: usize = 2 << 10;

/// A queued script is sent before it grows past this many bytes.
const SCRIPT_BYTES: usize = 4 << 20;

/// Put transactions on one connection, one after the other (see the module documentation).
pub(crate) struct Tx {
    /// The connection; closed rather than reused when a transaction may be left open. `None`
    /// once handed back.
    conn: Option<Lease>,
    /// Statements not sent yet, `;`-separated, starting with `BEGIN` unless `implicit`.
    script: String,
    /// How many statements `script` holds.
    queued: usize,
    /// Whether a statement has been sent and no `COMMIT` or `ROLLBACK` has succeeded since: the
    /// server may hold the transaction open.
    open: bool,
    /// The connection runs with autocommit off (a kept write connection, see
    /// [`super::connections`]): a transaction begins with its first statement, so no `BEGIN` is
    /// sent, and [`execute_unordered`](Self::execute_unordered) can run ahead of the queue.
    implicit: bool,
    /// Whether the parent check is queued to travel with the `COMMIT` (autocommit off, and the
    /// caller has not asked to wait for it instead).
    defer_checks: bool,
    /// The positions in `script` of the statements queued by [`queue_marked`](Self::queue_marked).
    marks: Vec<(usize, Mark)>,
    /// The marked statement that failed in this transaction, and the server's error number.
    failed: Option<(Mark, u16)>,
    /// Bytes sent to the server in this transaction (scripts' text, prepared statements' SQL
    /// and values), and the round trips that carried them: what its saver span reports.
    sent: (usize, usize),
}

/// A queued statement whose failure means something to the caller ([`Tx::failed_mark`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mark {
    /// The check that the expected parent, locked, is the latest checkpoint.
    ParentCheck,
    /// The check of the saver's [`Fence`](crate::Fence).
    Fence,
}

impl Tx {
    /// Transactions on `conn`; none is begun yet.
    pub(crate) fn new(conn: Lease) -> Self {
        let implicit = matches!(conn, Lease::Kept(..));
        Self {
            conn: Some(conn),
            script: String::new(),
            queued: 0,
            open: false,
            implicit,
            defer_checks: implicit,
            marks: Vec::new(),
            failed: None,
            sent: (0, 0),
        }
    }

    /// Begins a transaction: `BEGIN` is queued, to be sent with the first statement that needs
    /// a result (with autocommit off, the first statement begins it).
    pub(crate) fn begin(&mut self) {
        self.script.clear();
        self.queued = 0;
        self.marks.clear();
        self.failed = None;
        self.sent = (0, 0);
        if !self.implicit {
            self.script.push_str("BEGIN");
            self.queued = 1;
        }
    }

    /// Whether the parent check may be queued to travel with the `COMMIT`: autocommit is off, so
    /// statements that run prepared can go first ([`execute_unordered`](Self::execute_unordered)),
    /// and [`wait_for_checks`](Self::wait_for_checks) was not called.
    pub(crate) fn defers_checks(&self) -> bool {
        self.defer_checks
    }

    /// From the next transaction on, the parent check is read back before anything else is sent.
    pub(crate) fn wait_for_checks(&mut self) {
        self.defer_checks = false;
    }

    /// Queues `statement`, a small one, remembering it as `mark`: when it fails,
    /// [`failed_mark`](Self::failed_mark) says so.
    pub(crate) async fn queue_marked(
        &mut self,
        statement: &Statement<'_>,
        mark: Mark,
    ) -> Result<(), sqlx::Error> {
        self.execute(statement).await?;
        if let Some(at) = self.queued.checked_sub(1) {
            self.marks.push((at, mark));
        }
        Ok(())
    }

    /// The statement queued by [`queue_marked`](Self::queue_marked) that failed in this
    /// transaction, with the server's error number.
    pub(crate) fn failed_mark(&self) -> Option<(Mark, u16)> {
        self.failed
    }

    /// The connection back, for the next user; `None` when a transaction may still be open on
    /// it (it is closed then).
    pub(crate) fn into_connection(mut self) -> Option<Lease> {
        if self.open {
            return None;
        }
        self.conn.take()
    }

    /// The connection, for statements sent as they are.
    fn conn(&mut self) -> Result<&mut MySqlConnection, sqlx::Error> {
        match self.conn.as_mut() {
            Some(conn) => Ok(&mut **conn),
            None => Err(sqlx::Error::PoolClosed),
        }
    }

    /// Queues `statement`, or, when its values are large, sends the queue and runs it prepared.
    pub(crate) async fn execute(&mut self, statement: &Statement<'_>) -> Result<(), sqlx::Error> {
        if statement.payload() <= INLINE_PAYLOAD {
            if self.script.len() + 2 * statement.payload() + statement.sql.len() > SCRIPT_BYTES {
                self.flush().await?;
            }
            let len = self.script.len();
            if !self.script.is_empty() {
                self.script.push(';');
            }
            if statement.render_into(&mut self.script) {
                self.queued += 1;
                return Ok(());
            }
            self.script.truncate(len);
        }
        self.count(statement.sql.len() + statement.payload());
        let conn = self.connection().await?;
        prepared(conn, statement).await.map(drop)
    }

    /// [`execute`](Self::execute) for a statement that nothing queued reads (a blob or a pending
    /// write): when autocommit is off and its values are large, it runs prepared ahead of the
    /// queue, so that the queue (the parent check, the checkpoint rows) can wait for the `COMMIT`.
    pub(crate) async fn execute_unordered(&mut self, statement: &Statement<'_>) -> Result<(), sqlx::Error> {
        if !self.implicit || statement.payload() <= INLINE_PAYLOAD {
            return self.execute(statement).await;
        }
        // The statement begins the transaction if nothing has yet.
        self.open = true;
        self.count(statement.sql.len() + statement.payload());
        prepared(self.conn()?, statement).await.map(drop)
    }

    /// Sends what is queued followed by `statements`, and returns the rows of each of
    /// `statements`.
    pub(crate) async fn fetch(
        &mut self,
        statements: &[Statement<'_>],
    ) -> Result<Vec<Vec<MySqlRow>>, sqlx::Error> {
        let (skip, len) = (self.queued, self.script.len());
        for statement in statements {
            if !self.script.is_empty() {
                self.script.push(';');
            }
            if !statement.render_into(&mut self.script) {
                // Not expected of the crate's fixed statements; run each on its own, prepared,
                // and let the driver report what is wrong.
                self.script.truncate(len);
                self.queued = skip;
                let conn = self.connection().await?;
                return prepared_each(conn, statements).await;
            }
            self.queued += 1;
        }
        let results = self.send().await?;
        Ok(results.into_iter().skip(skip).collect())
    }

    /// The connection, with everything queued sent first: for statements that must run prepared
    /// or whose outcome is needed at once.
    pub(crate) async fn connection(&mut self) -> Result<&mut MySqlConnection, sqlx::Error> {
        self.flush().await?;
        // What the caller sends begins the transaction when autocommit is off.
        self.open = true;
        self.conn()
    }

    /// Sends what is queued, with `COMMIT`.
    pub(crate) async fn commit(&mut self) -> Result<(), sqlx::Error> {
        if !self.open && self.queued <= usize::from(!self.implicit) {
            // Nothing was sent, and nothing but `BEGIN` queued: there is no transaction to end.
            self.queued = 0;
            self.script.clear();
            return Ok(());
        }
        if !self.script.is_empty() {
            self.script.push(';');
        }
        self.script.push_str("COMMIT");
        self.queued += 1;
        self.send().await?;
        self.open = false;
        record_io("mysql", self.sent.0, self.sent.1);
        Ok(())
    }

    /// Ends the transaction without keeping anything, now rather than when the connection is next
    /// used, so its locks go at once. When the server cannot be told, the connection is closed
    /// instead (see [`Drop`]).
    pub(crate) async fn rollback(&mut self) {
        self.script.clear();
        self.queued = 0;
        if !self.open {
            return;
        }
        let rolled_back = match self.conn() {
            Ok(conn) => script(conn, "ROLLBACK", 1).await.map(drop),
            Err(e) => Err(e),
        };
        match rolled_back {
            Ok(_) => self.open = false,
            Err(e) => tracing::warn!(error = %e, "ROLLBACK failed; closing the connection"),
        }
    }

    /// Sends what is queued, if anything.
    async fn flush(&mut self) -> Result<(), sqlx::Error> {
        if self.queued > 0 {
            self.send().await?;
        }
        Ok(())
    }

    /// Sends the queued script and collects the rows of each of its statements.
    async fn send(&mut self) -> Result<Vec<Vec<MySqlRow>>, sqlx::Error> {
        let text = std::mem::take(&mut self.script);
        let statements = std::mem::take(&mut self.queued);
        // From here the server may have begun the transaction, whatever happens to the reply.
        self.open = true;
        let marks = std::mem::take(&mut self.marks);
        self.count(text.len());
        let results = run_script(self.conn()?, &text, statements).await;
        // The buffer is kept for the next script.
        self.script = text;
        self.script.clear();
        results.map_err(|(at, e)| {
            let number = e.as_database_error().and_then(|e| e.try_downcast_ref::<MySqlDatabaseError>());
            let mark = marks.iter().find(|(position, _)| *position == at).map(|(_, mark)| *mark);
            if let (Some(mark), Some(error)) = (mark, number) {
                self.failed = Some((mark, error.number()));
            }
            e
        })
    }
}

impl Tx {
    /// Counts one round trip carrying `bytes`.
    fn count(&mut self, bytes: usize) {
        self.sent.0 += bytes;
        self.sent.1 += 1;
    }
}

impl Drop for Tx {
    fn drop(&mut self) {
        if let (true, Some(conn)) = (self.open, self.conn.as_mut()) {
            // The server may still hold the transaction and its locks: end the session rather
            // than hand the connection to the next user (a kept one is closed with the Tx).
            conn.close_on_drop();
        }
    }
}
