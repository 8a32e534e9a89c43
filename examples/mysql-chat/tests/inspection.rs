//! The SQL of `docs/sql-inspection.md` runs against live tables and returns what the page shows.
//!
//! The queries are read from the page itself, so the page cannot rot: the test replays the
//! page's conversation (same legacy rows, same two rounds) on a fresh database, runs every
//! ```` ```sql ```` block and compares the result with the table printed after it. Columns that
//! differ from run to run (checkpoint and task ids, timestamps, the random part of versions) are
//! compared by shape only; everything else must match exactly on MariaDB. On MySQL, where JSON
//! key order and collations differ, only the columns and the row counts are compared.

mod support;

use sqlx::mysql::{MySqlDatabaseError, MySqlRow};
use sqlx::{Column as _, Row as _};

const DOC: &str = include_str!("../../../docs/sql-inspection.md");
/// The page's conversation.
const CONVERSATION_ID: &str = "0aec2add-0d09-4777-9c71-7a1f695294b5";
/// Queries whose `ORDER BY` leaves ties (the writes query orders by checkpoint only):
/// their rows are compared in any order.
const PARTLY_ORDERED: [&str; 1] = ["chat_checkpoint_writes"];

/// One ```` ```sql ```` block of the page and the ```` ```text ```` block after it.
#[derive(Debug)]
struct DocQuery {
    /// From its `-- name:` line.
    name: String,
    /// The statement, with the `{conversation_id}` placeholder.
    sql: String,
    /// The printed result.
    expected: Expected,
}

/// What the page printed for a query.
#[derive(Debug)]
enum Expected {
    /// A `mariadb -t` table.
    Table { columns: Vec<String>, rows: Vec<Vec<String>> },
    /// `ERROR <code> …`: the statement fails on MariaDB.
    Error { code: u16 },
}

/// Every query of the page, in order.
fn doc_queries() -> Vec<DocQuery> {
    let blocks = |fence: &str| -> Vec<(usize, String)> {
        let mut found = Vec::new();
        let mut rest = DOC;
        while let Some(start) = rest.find(fence) {
            let body_start = start + fence.len();
            let len = rest[body_start..].find("\n```").expect("an unclosed block");
            let offset = DOC.len() - rest.len();
            found.push((offset + start, rest[body_start..body_start + len].to_owned()));
            rest = &rest[body_start + len + 4..];
        }
        found
    };
    let outputs = blocks("```text\n");
    blocks("```sql\n")
        .into_iter()
        .map(|(at, sql)| {
            let name = sql.lines().next().and_then(|l| l.strip_prefix("-- name: ")).expect("a -- name: line");
            let output = &outputs.iter().find(|(o, _)| *o > at).expect("an output block after the query").1;
            DocQuery { name: name.to_owned(), sql: sql.clone(), expected: parse_output(output) }
        })
        .collect()
}

/// A `mariadb -t` table or an `ERROR` line.
fn parse_output(text: &str) -> Expected {
    if let Some(rest) = text.strip_prefix("ERROR ") {
        let code = rest.split_whitespace().next().and_then(|c| c.parse().ok()).expect("an error code");
        return Expected::Error { code };
    }
    let mut lines = text.lines().filter(|l| l.starts_with('|')).map(|l| {
        let cells: Vec<&str> = l.split('|').collect();
        cells[1..cells.len() - 1].iter().map(|c| c.trim().to_owned()).collect::<Vec<String>>()
    });
    let columns = lines.next().expect("a header row");
    Expected::Table { columns, rows: lines.collect() }
}

/// A cell as the `mariadb` client prints it, with the run-specific part masked.
fn normalize(column: &str, value: Option<String>) -> String {
    let Some(value) = value else { return "NULL".to_owned() };
    match column {
        "checkpoint_id" | "parent_checkpoint_id" | "task_id" => "<id>".to_owned(),
        "timestamp" | "ts" => "<ts>".to_owned(),
        // `{counter:032}.{random}`: the counter is deterministic.
        "version" => value.split('.').next().unwrap_or_default().to_owned(),
        _ => value,
    }
}

/// The rows of a live result, normalized.
fn live_table(rows: &[MySqlRow]) -> (Vec<String>, Vec<Vec<String>>) {
    let Some(first) = rows.first() else { return (Vec::new(), Vec::new()) };
    let columns: Vec<String> = first.columns().iter().map(|c| c.name().to_owned()).collect();
    let cells = rows
        .iter()
        .map(|row| {
            // `raw_sql` uses the text protocol: every value arrives as text, as the client shows it.
            let text = |i: usize| row.try_get_unchecked::<Option<String>, _>(i).expect("a text value");
            columns.iter().enumerate().map(|(i, c)| normalize(c, text(i))).collect()
        })
        .collect();
    (columns, cells)
}

/// The page's conversation: the legacy rows, a round through `/api/chat` (which migrates), a
/// streamed round.
async fn replay(app: &support::App) {
    sqlx::query("INSERT INTO conversations (id, title) VALUES (?, 'Trip planning')")
        .bind(CONVERSATION_ID)
        .execute(&app.pool)
        .await
        .unwrap();
    for (role, content) in [
        ("user", "Hi, my name is Alice. I want to visit Hangzhou."),
        ("assistant", "Hangzhou is lovely in spring. West Lake is a must."),
    ] {
        sqlx::query("INSERT INTO messages (conversation_id, role, content) VALUES (?, ?, ?)")
            .bind(CONVERSATION_ID)
            .bind(role)
            .bind(content)
            .execute(&app.pool)
            .await
            .unwrap();
    }
    let first = app.chat(CONVERSATION_ID, "What is my name?").await;
    assert_eq!(first["migrated"], true);
    let events = app.chat_stream(CONVERSATION_ID, "我想坐高铁去，要多久？").await;
    assert_eq!(events.last().map(|e| e.0.as_str()), Some("done"));
}

#[tokio::test]
async fn doc_queries_return_the_documented_rows() {
    let queries = doc_queries();
    let names: Vec<&str> = queries.iter().map(|q| q.name.as_str()).collect();
    for name in ["chat_checkpoint_history", "chat_checkpoint_writes", "chat_message_blobs"] {
        assert!(names.contains(&name), "the page lost the query {name}: {names:?}");
    }

    // A database of its own: the legacy row ids (`legacy-1`, `legacy-2`) end up in the message
    // blobs, so their sizes match the page's only when the tables start empty. It is left behind
    // when the test fails, for a look.
    let database = format!("{}_docs_{}", support::DATABASE, std::process::id());
    support::drop_database(&database).await;
    let Some(app) = support::start_on(&database).await else { return };
    replay(&app).await;
    let version: String = sqlx::query_scalar("SELECT VERSION()").fetch_one(&app.pool).await.unwrap();
    let mariadb = version.contains("MariaDB");

    for query in &queries {
        let sql = query.sql.replace("{conversation_id}", CONVERSATION_ID);
        let result = sqlx::raw_sql(&sql).fetch_all(&app.pool).await;
        match (&query.expected, result) {
            (Expected::Error { code }, Err(e)) if mariadb => {
                let number = e.as_database_error().and_then(|d| d.try_downcast_ref::<MySqlDatabaseError>());
                assert_eq!(number.map(MySqlDatabaseError::number), Some(*code), "{}: {e}", query.name);
            }
            // MySQL-only syntax works on MySQL.
            (Expected::Error { .. }, Ok(_)) if !mariadb => {}
            (Expected::Table { columns, rows }, Ok(live)) => {
                let (live_columns, live_rows) = live_table(&live);
                assert_eq!(&live_columns, columns, "{}: columns", query.name);
                assert_eq!(live_rows.len(), rows.len(), "{}: row count", query.name);
                if mariadb {
                    let mut documented: Vec<Vec<String>> = rows
                        .iter()
                        .map(|r| r.iter().zip(columns).map(|(v, c)| normalize(c, doc_cell(v))).collect())
                        .collect();
                    let mut live_rows = live_rows;
                    if PARTLY_ORDERED.contains(&query.name.as_str()) {
                        documented.sort();
                        live_rows.sort();
                    }
                    assert_eq!(
                        live_rows, documented,
                        "{}: the page's rows differ from the live ones",
                        query.name
                    );
                }
            }
            (expected, got) => panic!("{}: expected {expected:?}, got {got:?}", query.name),
        }
    }

    // Beyond the printed values: the history is one chain, oldest first, on this thread only.
    let history = queries.iter().find(|q| q.name == "chat_checkpoint_history").unwrap();
    let rows = sqlx::raw_sql(&history.sql.replace("{conversation_id}", CONVERSATION_ID))
        .fetch_all(&app.pool)
        .await
        .unwrap();
    let mut previous: Option<String> = None;
    for row in &rows {
        let id: String = row.try_get("checkpoint_id").unwrap();
        assert_eq!(row.try_get::<Option<String>, _>("parent_checkpoint_id").unwrap(), previous);
        let ts: String = row.try_get_unchecked("timestamp").unwrap();
        assert!(ts.starts_with("\"20") && ts.ends_with("+00:00\""), "{ts}");
        previous = Some(id);
    }
    support::drop_database(&database).await;
}

/// A printed cell as a value: the client prints SQL `NULL` as `NULL`.
fn doc_cell(printed: &str) -> Option<String> {
    (printed != "NULL").then(|| printed.to_owned())
}
