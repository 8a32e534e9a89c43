//! Running statements as one script: several statements sent as text in one round trip, each
//! one's rows collected, or prepared one by one when a statement cannot be written out.
//!
//! The reads of the read cache and of a failed parent check send their statements this way, and
//! so does [`Tx`](crate::commit::tx::Tx) with what it queued.

use futures_util::TryStreamExt as _;
use sqlx::mysql::MySqlRow;
use sqlx::{Either, MySqlConnection};

use crate::statement::Statement;

/// Runs `statements` as one script, in one round trip, and returns the rows of each; outside a
/// transaction (each statement is its own). A statement that cannot be written out runs
/// prepared instead, each in turn, and the driver reports what is wrong with it.
pub(crate) async fn fetch_together(
    conn: &mut MySqlConnection,
    statements: &[Statement<'_>],
) -> Result<Vec<Vec<MySqlRow>>, sqlx::Error> {
    let mut text = String::new();
    for statement in statements {
        if !text.is_empty() {
            text.push(';');
        }
        if !statement.render_into(&mut text) {
            return prepared_each(conn, statements).await;
        }
    }
    script(conn, &text, statements.len()).await
}

/// Runs each of `statements` prepared, in turn, and returns the rows of each: for statements that
/// cannot be written into a script, where the driver then reports what is wrong with them.
pub(crate) async fn prepared_each(
    conn: &mut MySqlConnection,
    statements: &[Statement<'_>],
) -> Result<Vec<Vec<MySqlRow>>, sqlx::Error> {
    let mut all = Vec::with_capacity(statements.len());
    for statement in statements {
        all.push(prepared(&mut *conn, statement).await?);
    }
    Ok(all)
}

/// Runs `text`, a script of `statements` statements, and collects the rows of each; a reply with
/// another number of results is a protocol error.
///
/// Boxed, here and in [`prepared`], so that the driver's futures are `Send` where they are made:
/// awaited inside the higher-ranked put bodies, rustc cannot prove it for sqlx's executor
/// lifetimes.
pub(crate) async fn script(
    conn: &mut MySqlConnection,
    text: &str,
    statements: usize,
) -> Result<Vec<Vec<MySqlRow>>, sqlx::Error> {
    run_script(conn, text, statements).await.map_err(|(_, e)| e)
}

/// How a script failed: how many of its statements had completed (the position of the one that
/// failed, since the server stops there), and the error.
pub(crate) type Stopped = (usize, sqlx::Error);

/// [`script`], telling on failure where it stopped.
pub(crate) async fn run_script(
    conn: &mut MySqlConnection,
    text: &str,
    statements: usize,
) -> Result<Vec<Vec<MySqlRow>>, Stopped> {
    {
        let mut results = Vec::new();
        let mut rows = Vec::new();
        let mut stream = sqlx::raw_sql(text).fetch_many(conn);
        while let Some(item) = stream.try_next().await.map_err(|e| (results.len(), e))? {
            match item {
                Either::Right(row) => rows.push(row),
                // Every statement's result ends with one of these, rows or not.
                Either::Left(_) => results.push(std::mem::take(&mut rows)),
            }
        }
        if results.len() != statements {
            let error = sqlx::Error::Protocol(format!(
                "a script of {statements} statements returned {} results",
                results.len()
            ));
            return Err((results.len(), error));
        }
        Ok(results)
    }
}

/// Runs `statement` prepared, its values in binary, and returns its rows.
pub(crate) async fn prepared(
    conn: &mut MySqlConnection,
    statement: &Statement<'_>,
) -> Result<Vec<MySqlRow>, sqlx::Error> {
    statement.query().fetch_all(conn).await
}
