//! [`LocalAssistants`]: the assistants of this process and every version of each, in memory.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard, PoisonError};

use futures_util::future::BoxFuture;

use crate::assistant::AssistantRecord;
use crate::assistant_change::AssistantChange;
use crate::assistant_search::{AssistantSearch, VersionSearch};
use crate::auth::Grant;
use crate::error::{assistant_exists, assistant_not_found, version_not_found, Result};
use crate::filter::holds;
use crate::keeper::AssistantKeeper;
use crate::records::now;

/// The assistants of one process.
pub(crate) struct LocalAssistants(Mutex<Book>);

#[derive(Default)]
struct Book {
    /// Each assistant at its latest version.
    latest: HashMap<String, AssistantRecord>,
    /// Each assistant's versions, in the order they were made.
    versions: HashMap<String, Vec<AssistantRecord>>,
}

impl LocalAssistants {
    /// A keeper holding the registered graphs' `system` assistants.
    pub(crate) fn new(system: Vec<AssistantRecord>) -> Self {
        let mut book = Book::default();
        for record in system {
            book.insert(record);
        }
        Self(Mutex::new(book))
    }

    fn book(&self) -> MutexGuard<'_, Book> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Book {
    fn insert(&mut self, record: AssistantRecord) {
        self.versions.insert(record.assistant_id.clone(), vec![record.clone()]);
        self.latest.insert(record.assistant_id.clone(), record);
    }

    /// The assistant `grant` reaches.
    fn reached(&mut self, assistant_id: &str, grant: &Grant) -> Result<&mut AssistantRecord> {
        self.latest
            .get_mut(assistant_id)
            .filter(|a| grant.admits(&a.metadata))
            .ok_or_else(|| assistant_not_found(assistant_id))
    }
}

impl AssistantKeeper for LocalAssistants {
    fn create<'a>(
        &'a self,
        record: AssistantRecord,
        do_nothing: bool,
        grant: &'a Grant,
    ) -> BoxFuture<'a, Result<AssistantRecord>> {
        Box::pin(async move {
            let mut book = self.book();
            if let Some(existing) = book.latest.get(&record.assistant_id) {
                return match do_nothing && grant.admits(&existing.metadata) {
                    true => Ok(existing.clone()),
                    false => Err(assistant_exists(&record.assistant_id)),
                };
            }
            book.insert(record.clone());
            Ok(record)
        })
    }

    fn get<'a>(&'a self, assistant_id: &'a str, grant: &'a Grant) -> BoxFuture<'a, Result<AssistantRecord>> {
        Box::pin(async move { self.book().reached(assistant_id, grant).cloned() })
    }

    fn update<'a>(
        &'a self,
        assistant_id: &'a str,
        change: &'a AssistantChange,
        grant: &'a Grant,
    ) -> BoxFuture<'a, Result<AssistantRecord>> {
        Box::pin(async move {
            let mut book = self.book();
            let current = book.reached(assistant_id, grant)?.clone();
            let versions = book.versions.entry(assistant_id.to_owned()).or_default();
            let next = versions.iter().map(|v| v.version).max().unwrap_or(0) + 1;
            let mut version = change.apply(&current, next);
            grant.stamp(&mut version.metadata);
            versions.push(version.clone());
            let latest = AssistantRecord { created_at: current.created_at, ..version };
            book.latest.insert(assistant_id.to_owned(), latest.clone());
            Ok(latest)
        })
    }

    fn delete<'a>(&'a self, assistant_id: &'a str, grant: &'a Grant) -> BoxFuture<'a, Result<()>> {
        Box::pin(async move {
            let mut book = self.book();
            book.reached(assistant_id, grant)?;
            book.latest.remove(assistant_id);
            book.versions.remove(assistant_id);
            Ok(())
        })
    }

    fn search<'a>(&'a self, q: &'a AssistantSearch) -> BoxFuture<'a, Result<(Vec<AssistantRecord>, bool)>> {
        Box::pin(async move {
            let book = self.book();
            let mut found: Vec<&AssistantRecord> = book.latest.values().filter(|a| q.keeps(a)).collect();
            found.sort_by(|a, b| q.order(a, b));
            let more = found.len() > q.offset.saturating_add(q.limit);
            Ok((found.into_iter().skip(q.offset).take(q.limit).cloned().collect(), more))
        })
    }

    fn count<'a>(&'a self, q: &'a AssistantSearch) -> BoxFuture<'a, Result<usize>> {
        Box::pin(async move { Ok(self.book().latest.values().filter(|a| q.keeps(a)).count()) })
    }

    fn versions<'a>(
        &'a self,
        assistant_id: &'a str,
        q: &'a VersionSearch,
        grant: &'a Grant,
    ) -> BoxFuture<'a, Result<Vec<AssistantRecord>>> {
        Box::pin(async move {
            let mut book = self.book();
            book.reached(assistant_id, grant)?;
            let mut found: Vec<AssistantRecord> = book
                .versions
                .get(assistant_id)
                .into_iter()
                .flatten()
                .filter(|v| holds(&v.metadata, &q.metadata) && grant.admits(&v.metadata))
                .cloned()
                .collect();
            found.sort_by_key(|v| std::cmp::Reverse(v.version));
            Ok(found.into_iter().skip(q.offset).take(q.limit).collect())
        })
    }

    fn set_latest<'a>(
        &'a self,
        assistant_id: &'a str,
        version: i64,
        grant: &'a Grant,
    ) -> BoxFuture<'a, Result<AssistantRecord>> {
        Box::pin(async move {
            let mut book = self.book();
            let created_at = book.reached(assistant_id, grant)?.created_at.clone();
            let chosen = book
                .versions
                .get(assistant_id)
                .and_then(|vs| vs.iter().find(|v| v.version == version))
                .cloned()
                .ok_or_else(|| version_not_found(assistant_id, version))?;
            let latest = AssistantRecord { created_at, updated_at: now(), ..chosen };
            book.latest.insert(assistant_id.to_owned(), latest.clone());
            Ok(latest)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_local_keeper_keeps_assistants_as_langgraph_does() {
        let keeper = LocalAssistants::new(vec![AssistantRecord::system("chain")]);
        crate::keeper::conformance::assistant_keeper_semantics(&keeper).await;
    }
}
