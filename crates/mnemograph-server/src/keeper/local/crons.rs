//! [`LocalCrons`]: the crons of this process, in memory.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard, PoisonError};

use futures_util::future::BoxFuture;

use crate::auth::Grant;
use crate::cron::{utc_now, CronChange, CronRecord, CronSearch};
use crate::error::{cron_not_found, Result};
use crate::keeper::{CronKeeper, CronsOf};

/// The crons of one process, by id.
#[derive(Default)]
pub(crate) struct LocalCrons(Mutex<HashMap<String, CronRecord>>);

impl LocalCrons {
    fn crons(&self) -> MutexGuard<'_, HashMap<String, CronRecord>> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The cron `grant` reaches in `crons`.
fn reached<'a>(
    crons: &'a mut HashMap<String, CronRecord>,
    cron_id: &str,
    grant: &Grant,
) -> Result<&'a mut CronRecord> {
    crons.get_mut(cron_id).filter(|c| grant.admits(&c.metadata)).ok_or_else(|| cron_not_found(cron_id))
}

impl CronKeeper for LocalCrons {
    fn create(&self, record: CronRecord) -> BoxFuture<'_, Result<CronRecord>> {
        Box::pin(async move {
            self.crons().insert(record.cron_id.clone(), record.clone());
            Ok(record)
        })
    }

    fn get<'a>(&'a self, cron_id: &'a str, grant: &'a Grant) -> BoxFuture<'a, Result<CronRecord>> {
        Box::pin(async move { reached(&mut self.crons(), cron_id, grant).cloned() })
    }

    fn update<'a>(
        &'a self,
        cron_id: &'a str,
        change: &'a CronChange,
        grant: &'a Grant,
    ) -> BoxFuture<'a, Result<CronRecord>> {
        Box::pin(async move {
            let mut crons = self.crons();
            let cron = reached(&mut crons, cron_id, grant)?;
            let mut changed = change.apply(cron, utc_now())?;
            grant.stamp(&mut changed.metadata);
            *cron = changed.clone();
            Ok(changed)
        })
    }

    fn delete<'a>(&'a self, cron_id: &'a str, grant: &'a Grant) -> BoxFuture<'a, Result<()>> {
        Box::pin(async move {
            let mut crons = self.crons();
            reached(&mut crons, cron_id, grant)?;
            crons.remove(cron_id);
            Ok(())
        })
    }

    fn forget<'a>(&'a self, of: CronsOf<'a>) -> BoxFuture<'a, Result<()>> {
        Box::pin(async move {
            self.crons().retain(|_, c| match of {
                CronsOf::Thread(id) => c.thread_id.as_deref() != Some(id),
                CronsOf::Assistant(id) => c.assistant_id != id,
            });
            Ok(())
        })
    }

    fn search<'a>(&'a self, q: &'a CronSearch) -> BoxFuture<'a, Result<(Vec<CronRecord>, bool)>> {
        Box::pin(async move {
            let crons = self.crons();
            let mut found: Vec<&CronRecord> = crons.values().filter(|c| q.keeps(c)).collect();
            found.sort_by(|a, b| q.order(a, b));
            let more = found.len() > q.offset.saturating_add(q.limit);
            Ok((found.into_iter().skip(q.offset).take(q.limit).cloned().collect(), more))
        })
    }

    fn count<'a>(&'a self, q: &'a CronSearch) -> BoxFuture<'a, Result<usize>> {
        Box::pin(async move { Ok(self.crons().values().filter(|c| q.keeps(c)).count()) })
    }

    fn due<'a>(&'a self, now: &'a str) -> BoxFuture<'a, Result<Vec<CronRecord>>> {
        Box::pin(async move {
            let mut due: Vec<CronRecord> = self.crons().values().filter(|c| c.is_due(now)).cloned().collect();
            due.sort_by(|a, b| a.next_run_date.cmp(&b.next_run_date));
            Ok(due)
        })
    }

    fn claim<'a>(&'a self, cron_id: &'a str, seen: &'a str, next: &'a str) -> BoxFuture<'a, Result<bool>> {
        Box::pin(async move {
            let mut crons = self.crons();
            match crons.get_mut(cron_id) {
                Some(cron) if cron.next_run_date == seen => {
                    cron.next_run_date = next.to_owned();
                    Ok(true)
                }
                _ => Ok(false),
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_local_keeper_keeps_crons_as_langgraph_does() {
        crate::keeper::cron_conformance::cron_keeper_semantics(&LocalCrons::default()).await;
    }
}
