//! The write path: everything that changes rows.
//!
//! A put goes down through these modules, and none of them calls back into one above it:
//!
//! 1. [`put`] (full layout) or [`shallow_put`] checks and encodes what is stored: the column
//!    [`limits`], the [`blobs`] and [`pending_writes`] rows, gathered as [`full_rows::Rows`] or
//!    [`shallow_rows::ShallowRows`];
//! 2. [`transaction`] runs one put transaction for them: it takes a connection
//!    ([`connections`], or the pool's for a namespace's first checkpoint, under its
//!    [`first_lock`]), runs the [`parent_check`] when the put expects its parent to be the
//!    latest (on a kept connection queued to travel with the `COMMIT`: [`check_with_commit`];
//!    a conflict names the [`newest`] checkpoint), then has the rows written
//!    ([`full_rows`], [`shallow_rows`]) and commits; after a deadlock it runs again ([`retry`]);
//! 3. the statements travel on a [`tx::Tx`], which queues them and sends them as scripts
//!    ([`crate::script`]) on the connection.
//!
//! `put_writes` ([`pending_writes`]) and `delete_thread` ([`delete`]) are transactions of their
//! own on the pool; [`batches`] splits the rows of every multi-row statement.

pub(crate) mod batches;
pub(crate) mod blobs;
pub(crate) mod check_with_commit;
pub(crate) mod connections;
pub(crate) mod delete;
pub(crate) mod first_lock;
pub(crate) mod full_rows;
pub(crate) mod limits;
pub(crate) mod newest;
pub(crate) mod parent_check;
pub(crate) mod pending_writes;
pub(crate) mod put;
pub(crate) mod retry;
pub(crate) mod shallow_put;
pub(crate) mod shallow_rows;
pub(crate) mod transaction;
pub(crate) mod tx;
