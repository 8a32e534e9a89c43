//! The MySQL archive, `chat_messages`: every completed round's question and answer (with its
//! citations), kept for good. It feeds `GET /history` and cold-start recovery. Tool results are
//! deliberately not stored (they live only in the Redis checkpoint); which tools a round
//! called, and how that went, is audited next to it ([`crate::tool_audit`]), and which snapshot
//! checkpoint each round was committed as is noted in [`crate::archived_rounds`].

use std::str::FromStr;
use std::time::Duration;

use serde::Serialize;
use sqlx::mysql::{MySqlConnectOptions, MySqlPoolOptions};
use sqlx::{Connection, MySql, MySqlConnection, MySqlPool, Row, Transaction};

use crate::corpus::Citation;
use crate::error::{Error, Result};
use crate::pending::{Conversation, StagedRound};
use crate::{archived_rounds, tool_audit};

/// The table, created at start-up. `role` is only ever `human` or `ai`; `citations` is a JSON
/// array on AI rows and NULL on human rows. Times are UTC with milliseconds.
const CREATE_TABLE: &str = "CREATE TABLE IF NOT EXISTS chat_messages (
    id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY,
    user_id VARCHAR(64) NOT NULL,
    session_id VARCHAR(64) NOT NULL,
    role ENUM('human', 'ai') NOT NULL,
    content MEDIUMTEXT NOT NULL,
    citations JSON NULL,
    created_at DATETIME(3) NOT NULL,
    KEY chat_messages_thread (user_id, session_id, id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci";

/// Columns read back. `CAST(... AS CHAR)` because MySQL 8 reports JSON columns with a type the
/// driver will not decode as text (MariaDB stores JSON as text anyway).
const COLUMNS: &str = "id, role, content, CAST(citations AS CHAR) AS citations, \
    DATE_FORMAT(created_at, '%Y-%m-%dT%H:%i:%s.%fZ') AS created_at";

/// Who wrote an archived message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The user.
    Human,
    /// The assistant's final answer.
    Ai,
}

/// One archived message: a chat bubble.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ArchivedMessage {
    /// Row id; increases with time within a thread.
    pub id: u64,
    /// `human` or `ai`.
    pub role: Role,
    /// The text.
    pub content: String,
    /// The sources of an AI answer (`None` on human rows).
    pub citations: Option<Vec<Citation>>,
    /// When it was written, ISO 8601 UTC.
    pub created_at: String,
}

/// The archive's connection pool.
#[derive(Debug, Clone)]
pub struct Archive {
    /// The pool.
    pool: MySqlPool,
}

impl Archive {
    /// Connects to `url`, creating its database when missing and the tables (`chat_messages`,
    /// `tool_invocations`, `archived_rounds`) when missing.
    ///
    /// # Errors
    /// [`Error::Config`] for a URL without a usable database name, [`Error::Archive`] when the
    /// server cannot be reached or refuses the DDL.
    pub async fn connect(url: &str) -> Result<Self> {
        let options = MySqlConnectOptions::from_str(url)?;
        let database = options.get_database().unwrap_or_default().to_owned();
        // The name goes into DDL unquoted-safe only if it is plain: refuse anything else.
        if database.is_empty() || !database.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return Err(Error::Config {
                name: "MYSQL_URL",
                reason: "must name a database of letters, digits and `_` (e.g. /blog_assistant)".to_owned(),
            });
        }
        // `information_schema` always exists, so this works before the database does.
        let mut server =
            MySqlConnection::connect_with(&options.clone().database("information_schema")).await?;
        let create = format!("CREATE DATABASE IF NOT EXISTS `{database}` CHARACTER SET utf8mb4");
        sqlx::raw_sql(&create).execute(&mut server).await?;
        server.close().await?;
        let pool = MySqlPoolOptions::new()
            .max_connections(8)
            .acquire_timeout(Duration::from_secs(10))
            .connect_with(options)
            .await?;
        sqlx::raw_sql(CREATE_TABLE).execute(&pool).await?;
        sqlx::raw_sql(tool_audit::CREATE_TABLE).execute(&pool).await?;
        sqlx::raw_sql(archived_rounds::CREATE_TABLE).execute(&pool).await?;
        Ok(Self { pool })
    }

    /// Appends one completed round without tool calls or snapshot checkpoint, question and
    /// answer, in one transaction: both rows or neither.
    ///
    /// # Errors
    /// [`Error::Archive`]; nothing is written then.
    pub async fn save_round(
        &self,
        user_id: &str,
        session_id: &str,
        question: &str,
        answer: &str,
        citations: &[Citation],
    ) -> Result<()> {
        let conversation = Conversation { user_id: user_id.to_owned(), session_id: session_id.to_owned() };
        let round = StagedRound {
            thread_id: crate::routes::thread_id(user_id, session_id),
            conversation,
            question: question.to_owned(),
            answer: answer.to_owned(),
            citations: citations.to_vec(),
            tools: Vec::new(),
        };
        self.begin_round(&round, None).await?.commit().await?;
        Ok(())
    }

    /// Writes `round` (question, answer, tool calls, and the snapshot checkpoint it is committed
    /// as, if any) in a transaction it leaves open: the caller commits it once the snapshot is
    /// stored, or drops it to roll it back.
    ///
    /// # Errors
    /// [`Error::Archive`], a duplicate key when `checkpoint_id`'s round is archived already
    /// ([`archived_rounds::is_duplicate`]); the transaction is rolled back then.
    pub async fn begin_round(
        &self,
        round: &StagedRound,
        checkpoint_id: Option<&str>,
    ) -> Result<Transaction<'static, MySql>> {
        let citations = serde_json::to_string(&round.citations).unwrap_or_else(|_| "[]".to_owned());
        let insert = "INSERT INTO chat_messages (user_id, session_id, role, content, citations, created_at) \
                      VALUES (?, ?, ?, ?, ?, UTC_TIMESTAMP(3))";
        let Conversation { user_id, session_id } = &round.conversation;
        let mut tx = self.pool.begin().await?;
        sqlx::query(insert)
            .bind(user_id)
            .bind(session_id)
            .bind("human")
            .bind(&round.question)
            .bind(None::<String>)
            .execute(&mut *tx)
            .await?;
        let answer = sqlx::query(insert)
            .bind(user_id)
            .bind(session_id)
            .bind("ai")
            .bind(&round.answer)
            .bind(citations)
            .execute(&mut *tx)
            .await?;
        tool_audit::insert(&mut tx, answer.last_insert_id(), &round.thread_id, &round.tools).await?;
        if let Some(checkpoint_id) = checkpoint_id {
            archived_rounds::insert(&mut tx, &round.thread_id, checkpoint_id, answer.last_insert_id())
                .await?;
        }
        Ok(tx)
    }

    /// Archives `round`, committed to the snapshot as `checkpoint_id`, unless it is archived
    /// already; `true` when this call wrote it. Safe to repeat, and to run on two processes at
    /// once: one of them writes the round, the other finds it written.
    ///
    /// # Errors
    /// [`Error::Archive`]; nothing is written then.
    pub async fn archive_round(&self, round: &StagedRound, checkpoint_id: &str) -> Result<bool> {
        if self.is_archived(&round.thread_id, checkpoint_id).await? {
            return Ok(false);
        }
        let written =
            async { self.begin_round(round, Some(checkpoint_id)).await?.commit().await.map_err(Error::from) };
        match written.await {
            Ok(()) => Ok(true),
            Err(e) if archived_rounds::is_duplicate(&e) => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// Whether the round committed to the snapshot as `checkpoint_id` of `thread_id` is
    /// archived.
    ///
    /// # Errors
    /// [`Error::Archive`].
    pub async fn is_archived(&self, thread_id: &str, checkpoint_id: &str) -> Result<bool> {
        archived_rounds::contains(&self.pool, thread_id, checkpoint_id).await
    }

    /// The last `limit` messages of a thread, oldest first: what cold-start recovery reseeds.
    ///
    /// # Errors
    /// [`Error::Archive`].
    pub async fn recent(&self, user_id: &str, session_id: &str, limit: u32) -> Result<Vec<ArchivedMessage>> {
        let sql = format!(
            "SELECT {COLUMNS} FROM chat_messages WHERE user_id = ? AND session_id = ? ORDER BY id DESC LIMIT ?"
        );
        let rows = sqlx::query(&sql).bind(user_id).bind(session_id).bind(limit).fetch_all(&self.pool).await?;
        let mut out = rows.iter().map(decode).collect::<Result<Vec<_>>>()?;
        out.reverse();
        Ok(out)
    }

    /// Every message of a thread, oldest first: the bubbles of `GET /history`.
    ///
    /// # Errors
    /// [`Error::Archive`].
    pub async fn history(&self, user_id: &str, session_id: &str) -> Result<Vec<ArchivedMessage>> {
        let sql =
            format!("SELECT {COLUMNS} FROM chat_messages WHERE user_id = ? AND session_id = ? ORDER BY id");
        let rows = sqlx::query(&sql).bind(user_id).bind(session_id).fetch_all(&self.pool).await?;
        rows.iter().map(decode).collect()
    }

    /// The pool, for inspection (tests count rows with it).
    pub fn pool(&self) -> &MySqlPool {
        &self.pool
    }
}

/// One row as an [`ArchivedMessage`].
fn decode(row: &sqlx::mysql::MySqlRow) -> Result<ArchivedMessage> {
    let role: String = row.try_get("role")?;
    let citations: Option<String> = row.try_get("citations")?;
    Ok(ArchivedMessage {
        id: row.try_get("id")?,
        role: if role == "human" { Role::Human } else { Role::Ai },
        content: row.try_get("content")?,
        // A row written by hand with bad JSON shows without citations rather than failing the
        // whole history.
        citations: citations.map(|c| serde_json::from_str(&c).unwrap_or_default()),
        created_at: row.try_get("created_at")?,
    })
}
