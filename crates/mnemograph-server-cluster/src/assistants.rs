//! [`ClusterAssistants`]: the [`AssistantKeeper`] of a cluster, its assistants and their versions
//! in the shared database, filtered, ordered and paged there.

use futures_util::future::BoxFuture;
use sqlx::mysql::MySqlPool;
use sqlx::Row;
use tokio::sync::OnceCell;

use super::assistant_rows::{self as rows, assistant_of, ASSISTANT_COLUMNS, VERSION_COLUMNS};
use super::conditions::Conditions;
use crate::queue::mysql::db;
use mnemograph_server::__cluster::now;
use mnemograph_server::__cluster::AssistantChange;
use mnemograph_server::__cluster::AssistantKeeper;
use mnemograph_server::__cluster::AssistantRecord;
use mnemograph_server::__cluster::GrantRules;
use mnemograph_server::__cluster::{assistant_exists, assistant_not_found, version_not_found};
use mnemograph_server::__cluster::{AssistantSearch, VersionSearch};
use mnemograph_server::auth::Grant;
use mnemograph_server::Result;

/// A cluster's assistants, as this process reaches them.
pub(crate) struct ClusterAssistants {
    pool: MySqlPool,
    /// The registered graphs' system assistants, stored before the first call.
    system: Vec<AssistantRecord>,
    /// Set once the tables and the system assistants are in place; a failure is tried again by
    /// the next call.
    ready: OnceCell<()>,
}

impl ClusterAssistants {
    /// The assistants in the database of `pool`, the `system` ones among them.
    pub(crate) fn new(pool: MySqlPool, system: Vec<AssistantRecord>) -> Self {
        Self { pool, system, ready: OnceCell::new() }
    }

    /// Makes the tables when missing and stores each system assistant whose id is free, as
    /// LangGraph's server does when it starts: one that exists keeps its versions.
    async fn ready(&self) -> Result<&MySqlPool> {
        self.ready
            .get_or_try_init(|| async {
                for sql in rows::SETUP {
                    sqlx::query(sql).execute(&self.pool).await.map_err(db)?;
                }
                for record in &self.system {
                    in_tx!(&self.pool, |tx| {
                        if rows::insert_assistant(tx, record).await? {
                            rows::insert_version(tx, record).await?;
                        }
                        Ok(Ok(()))
                    })?;
                }
                Ok::<_, mnemograph_server::ServerError>(())
            })
            .await?;
        Ok(&self.pool)
    }
}

/// The condition of a search of assistants and the values it binds.
fn conditions(q: &AssistantSearch) -> Conditions {
    let mut found = Conditions::new();
    if let Some(graph_id) = &q.graph_id {
        found.and("graph_id = ?", graph_id.clone());
    }
    if let Some(name) = &q.name {
        // LOCATE, not LIKE: a name with `%` or `_` matches only itself.
        found.and("LOCATE(LOWER(?), LOWER(name)) > 0", name.clone());
    }
    found.contains(&q.metadata);
    found.contains(&q.within);
    found
}

/// The assistant, if `grant` reaches it.
fn reached(found: Option<AssistantRecord>, assistant_id: &str, grant: &Grant) -> Result<AssistantRecord> {
    found.filter(|a| grant.admits(&a.metadata)).ok_or_else(|| assistant_not_found(assistant_id))
}

impl AssistantKeeper for ClusterAssistants {
    fn create<'a>(
        &'a self,
        record: AssistantRecord,
        do_nothing: bool,
        grant: &'a Grant,
    ) -> BoxFuture<'a, Result<AssistantRecord>> {
        Box::pin(async move {
            let pool = self.ready().await?;
            in_tx!(pool, |tx| {
                if rows::insert_assistant(tx, &record).await? {
                    rows::insert_version(tx, &record).await?;
                    return Ok(Ok(record.clone()));
                }
                if !do_nothing {
                    return Ok(Err(assistant_exists(&record.assistant_id)));
                }
                Ok(match rows::locked(tx, &record.assistant_id).await? {
                    Some(existing) if grant.admits(&existing.metadata) => Ok(existing),
                    _ => Err(assistant_exists(&record.assistant_id)),
                })
            })
        })
    }

    fn get<'a>(&'a self, assistant_id: &'a str, grant: &'a Grant) -> BoxFuture<'a, Result<AssistantRecord>> {
        Box::pin(async move {
            let pool = self.ready().await?;
            let sql = format!("SELECT {ASSISTANT_COLUMNS} FROM server_assistants WHERE assistant_id = ?");
            let row = sqlx::query(&sql).bind(assistant_id).fetch_optional(pool).await.map_err(db)?;
            let found = row.as_ref().map(assistant_of).transpose().map_err(db)?;
            reached(found, assistant_id, grant)
        })
    }

    fn update<'a>(
        &'a self,
        assistant_id: &'a str,
        change: &'a AssistantChange,
        grant: &'a Grant,
    ) -> BoxFuture<'a, Result<AssistantRecord>> {
        Box::pin(async move {
            let pool = self.ready().await?;
            in_tx!(pool, |tx| {
                let current = match reached(rows::locked(tx, assistant_id).await?, assistant_id, grant) {
                    Ok(current) => current,
                    Err(missing) => return Ok(Err(missing)),
                };
                let highest: Option<i64> = sqlx::query(
                    "SELECT MAX(version) AS v FROM server_assistant_versions WHERE assistant_id = ?",
                )
                .bind(assistant_id)
                .fetch_one(&mut **tx)
                .await?
                .try_get("v")?;
                let mut version = change.apply(&current, highest.unwrap_or(0) + 1);
                grant.stamp(&mut version.metadata);
                rows::insert_version(tx, &version).await?;
                let latest = AssistantRecord { created_at: current.created_at.clone(), ..version };
                rows::write_latest(tx, &latest).await?;
                Ok(Ok(latest))
            })
        })
    }

    fn delete<'a>(&'a self, assistant_id: &'a str, grant: &'a Grant) -> BoxFuture<'a, Result<()>> {
        Box::pin(async move {
            let pool = self.ready().await?;
            in_tx!(pool, |tx| {
                if let Err(missing) = reached(rows::locked(tx, assistant_id).await?, assistant_id, grant) {
                    return Ok(Err(missing));
                }
                for table in ["server_assistant_versions", "server_assistants"] {
                    sqlx::query(&format!("DELETE FROM {table} WHERE assistant_id = ?"))
                        .bind(assistant_id)
                        .execute(&mut **tx)
                        .await?;
                }
                Ok(Ok(()))
            })
        })
    }

    fn search<'a>(&'a self, q: &'a AssistantSearch) -> BoxFuture<'a, Result<(Vec<AssistantRecord>, bool)>> {
        Box::pin(async move {
            let pool = self.ready().await?;
            let found = conditions(q);
            let order = if q.descending { "DESC" } else { "ASC" };
            // One row past the page tells whether more follow it.
            let sql = format!(
                "SELECT {ASSISTANT_COLUMNS} FROM server_assistants WHERE {} \
                 ORDER BY {} {order}, assistant_id {order} LIMIT {} OFFSET {}",
                found.sql,
                rows::sort_column(q.sort_by),
                q.limit.saturating_add(1),
                q.offset
            );
            let rows = found.bind(sqlx::query(&sql)).fetch_all(pool).await.map_err(db)?;
            let mut page: Vec<AssistantRecord> =
                rows.iter().map(assistant_of).collect::<sqlx::Result<_>>().map_err(db)?;
            let more = page.len() > q.limit;
            page.truncate(q.limit);
            Ok((page, more))
        })
    }

    fn count<'a>(&'a self, q: &'a AssistantSearch) -> BoxFuture<'a, Result<usize>> {
        Box::pin(async move {
            let pool = self.ready().await?;
            let found = conditions(q);
            let sql = format!("SELECT COUNT(*) AS n FROM server_assistants WHERE {}", found.sql);
            let row = found.bind(sqlx::query(&sql)).fetch_one(pool).await.map_err(db)?;
            let n: i64 = row.try_get("n").map_err(db)?;
            Ok(usize::try_from(n).unwrap_or(0))
        })
    }

    fn versions<'a>(
        &'a self,
        assistant_id: &'a str,
        q: &'a VersionSearch,
        grant: &'a Grant,
    ) -> BoxFuture<'a, Result<Vec<AssistantRecord>>> {
        Box::pin(async move {
            self.get(assistant_id, grant).await?;
            let pool = self.ready().await?;
            let mut found = Conditions::new();
            found.and("assistant_id = ?", assistant_id);
            found.contains(&q.metadata);
            found.contains(grant.filter());
            let sql = format!(
                "SELECT {VERSION_COLUMNS} FROM server_assistant_versions WHERE {} \
                 ORDER BY version DESC LIMIT {} OFFSET {}",
                found.sql, q.limit, q.offset
            );
            let rows = found.bind(sqlx::query(&sql)).fetch_all(pool).await.map_err(db)?;
            rows.iter().map(assistant_of).collect::<sqlx::Result<_>>().map_err(db)
        })
    }

    fn set_latest<'a>(
        &'a self,
        assistant_id: &'a str,
        version: i64,
        grant: &'a Grant,
    ) -> BoxFuture<'a, Result<AssistantRecord>> {
        Box::pin(async move {
            let pool = self.ready().await?;
            in_tx!(pool, |tx| {
                let current = match reached(rows::locked(tx, assistant_id).await?, assistant_id, grant) {
                    Ok(current) => current,
                    Err(missing) => return Ok(Err(missing)),
                };
                let sql = format!(
                    "SELECT {VERSION_COLUMNS} FROM server_assistant_versions WHERE assistant_id = ? AND version = ?"
                );
                let row =
                    sqlx::query(&sql).bind(assistant_id).bind(version).fetch_optional(&mut **tx).await?;
                let Some(chosen) = row.as_ref().map(assistant_of).transpose()? else {
                    return Ok(Err(version_not_found(assistant_id, version)));
                };
                let latest =
                    AssistantRecord { created_at: current.created_at.clone(), updated_at: now(), ..chosen };
                rows::write_latest(tx, &latest).await?;
                Ok(Ok(latest))
            })
        })
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    /// The server of `MYSQL_URL` with a new, empty database; `None` (after saying why) when it
    /// is unreachable and `CI` is not set.
    pub(crate) async fn fresh_pool() -> Option<MySqlPool> {
        use sqlx::Connection;
        let url =
            std::env::var("MYSQL_URL").unwrap_or_else(|_| "mysql://root@127.0.0.1:3306/graph_test".into());
        let server = url.rsplit_once('/').map_or(url.clone(), |(s, _)| s.to_owned());
        let connect = sqlx::MySqlConnection::connect(&format!("{server}/information_schema"));
        let mut conn = match tokio::time::timeout(std::time::Duration::from_secs(5), connect).await {
            Ok(Ok(c)) => c,
            other => {
                let why = format!("MySQL at {server} is unreachable: {:?}", other.map(|r| r.err()));
                assert!(
                    std::env::var_os("CI").is_none_or(|v| v.is_empty()),
                    "{why} (CI is set, so this fails)"
                );
                eprintln!("SKIPPED: {why}");
                return None;
            }
        };
        let name = format!("server_assistants_{}", &uuid::Uuid::new_v4().simple().to_string()[..8]);
        sqlx::raw_sql(&format!("CREATE DATABASE `{name}` CHARACTER SET utf8mb4"))
            .execute(&mut conn)
            .await
            .expect("CREATE DATABASE");
        Some(MySqlPool::connect(&format!("{server}/{name}")).await.expect("connect to the new database"))
    }

    #[tokio::test]
    async fn the_cluster_keeper_keeps_assistants_as_langgraph_does() {
        let Some(pool) = fresh_pool().await else { return };
        let keeper = ClusterAssistants::new(pool.clone(), vec![AssistantRecord::system("chain")]);
        mnemograph_server::__cluster::conformance::assistant_keeper_semantics(&keeper).await;
        // Another process starting on the same database keeps the versions the first one made.
        let system = mnemograph_server::__cluster::assistant_id("chain");
        let all = Grant::all();
        let change = AssistantChange { name: Some("renamed".into()), ..AssistantChange::default() };
        keeper.update(&system, &change, &all).await.expect("update the system assistant");
        let restarted = ClusterAssistants::new(pool.clone(), vec![AssistantRecord::system("chain")]);
        let kept = restarted.get(&system, &all).await.expect("the system assistant");
        assert_eq!((kept.name.as_str(), kept.version), ("renamed", 2));
        let name: String = sqlx::query_scalar("SELECT DATABASE()").fetch_one(&pool).await.expect("its name");
        sqlx::raw_sql(&format!("DROP DATABASE `{name}`")).execute(&pool).await.expect("DROP DATABASE");
    }
}
