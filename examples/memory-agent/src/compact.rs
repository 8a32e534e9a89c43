//! Compaction, the background job: a session that has ended (or grown long) is replaced in
//! long-term memory by summaries, so recall stops paying for many small exchanges. The exchanges
//! are retired in favour of their summary, not deleted.

use mnemograph_memory::{compact_and_retire, CompactOptions, Sessions};

use crate::error::Result;
use crate::nodes::AgentContext;
use crate::state::thread_id;

/// Seconds in a day.
const DAY: i64 = 86_400;

/// Which sessions [`compact_user`] compacts, and how.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct CompactPolicy {
    /// A session whose newest memory is at least this old (seconds) has ended: all its live
    /// exchanges are summarized, when there are at least two. `None`: age never triggers.
    pub older_than_secs: Option<i64>,
    /// A session with more live exchanges than this is long: all but the newest
    /// [`keep_recent`](Self::keep_recent) are summarized, whatever its age.
    pub max_exchanges: usize,
    /// Exchanges a long session keeps as they are: they are still its live context.
    pub keep_recent: usize,
    /// Exchanges per summary.
    pub chunk_size: usize,
}

impl Default for CompactPolicy {
    /// Sessions idle for 7 days, or longer than 20 exchanges (keeping the newest 4); 10 exchanges
    /// per summary.
    fn default() -> Self {
        Self { older_than_secs: Some(7 * DAY), max_exchanges: 20, keep_recent: 4, chunk_size: 10 }
    }
}

impl CompactPolicy {
    /// Sessions count as ended after `days` without a new memory.
    #[must_use]
    pub fn after_days(mut self, days: u32) -> Self {
        self.older_than_secs = Some(i64::from(days) * DAY);
        self
    }

    /// Sessions are long beyond `n` live exchanges.
    #[must_use]
    pub fn max_exchanges(mut self, n: usize) -> Self {
        self.max_exchanges = n;
        self
    }

    /// Why this policy compacts a session with `exchanges` live exchanges, the newest saved at
    /// `last_at`, at time `now`; `None` to leave it.
    pub fn reason(&self, exchanges: usize, last_at: i64, now: i64) -> Option<CompactReason> {
        let idle_secs = now - last_at;
        if self.older_than_secs.is_some_and(|age| idle_secs >= age) && exchanges >= 2 {
            Some(CompactReason::Ended { idle_secs })
        } else if exchanges > self.max_exchanges && exchanges > self.keep_recent {
            Some(CompactReason::Long { exchanges })
        } else {
            None
        }
    }

    /// mnemograph-memory's options for a session compacted for `reason`.
    fn options(&self, reason: CompactReason) -> CompactOptions {
        let keep_recent = match reason {
            CompactReason::Ended { .. } => 0,
            CompactReason::Long { .. } => self.keep_recent,
        };
        CompactOptions::default().min_records(2).keep_recent(keep_recent).chunk_size(self.chunk_size)
    }
}

/// Why a session was compacted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CompactReason {
    /// It has ended: no new memory for this long (seconds).
    Ended {
        /// Seconds since its newest memory.
        idle_secs: i64,
    },
    /// It is long: this many live exchanges.
    Long {
        /// Its live exchanges before compaction.
        exchanges: usize,
    },
}

/// What compaction did to one session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionCompaction {
    /// The user.
    pub user_id: String,
    /// The session.
    pub session_id: String,
    /// Why it was compacted.
    pub reason: CompactReason,
    /// Exchanges replaced by a summary (and retired).
    pub compacted: usize,
    /// Ids of the summaries written.
    pub summary_ids: Vec<i64>,
}

/// Compacts the sessions of `user_id` that `policy` picks, at the context's clock: each is
/// summarized with the context's summarizer and its summarized exchanges are retired in favour
/// of the summary (mnemograph-memory's [`compact_and_retire`]), so retrieval returns the summary
/// instead. Returns the sessions where something was compacted.
///
/// # Errors
/// [`Error::Memory`](crate::Error::Memory): an invalid user id, a backend failure, or the
/// summarizer's failure (the sessions before it stay compacted).
pub async fn compact_user(
    ctx: &AgentContext,
    user_id: &str,
    policy: &CompactPolicy,
) -> Result<Vec<SessionCompaction>> {
    let now = ctx.clock.now();
    let mut done = Vec::new();
    for session in ctx.memory.sessions(user_id).await? {
        let Some(reason) = policy.reason(session.exchanges, session.last_at, now) else { continue };
        let report = compact_and_retire(
            &ctx.memory,
            &ctx.summarizer,
            user_id,
            &session.session_id,
            policy.options(reason),
        )
        .await?;
        if report.compacted > 0 {
            done.push(SessionCompaction {
                user_id: user_id.to_owned(),
                session_id: session.session_id,
                reason,
                compacted: report.compacted,
                summary_ids: report.summary_ids,
            });
        }
    }
    Ok(done)
}

/// [`compact_user`] for each of `users`, in order.
///
/// # Errors
/// As [`compact_user`]; the users before the failing one stay compacted.
pub async fn compact_users(
    ctx: &AgentContext,
    users: &[String],
    policy: &CompactPolicy,
) -> Result<Vec<SessionCompaction>> {
    let mut done = Vec::new();
    for user in users {
        done.extend(compact_user(ctx, user, policy).await?);
    }
    Ok(done)
}

/// One line per compacted session, as the transcript and the `compact` command print them.
pub fn render_compaction(done: &[SessionCompaction]) -> String {
    if done.is_empty() {
        return "   compaction: no session to compact\n".to_owned();
    }
    let mut s = String::new();
    for c in done {
        let why = match c.reason {
            CompactReason::Ended { idle_secs } => format!("idle {:.1} days", idle_secs as f64 / DAY as f64),
            CompactReason::Long { exchanges } => format!("{exchanges} exchanges"),
        };
        let summaries = if c.summary_ids.len() == 1 { "summary" } else { "summaries" };
        s.push_str(&format!(
            "   compacted {} ({why}): {} exchanges -> {} {summaries}; the exchanges are retired\n",
            thread_id(&c.user_id, &c.session_id),
            c.compacted,
            c.summary_ids.len(),
        ));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_policy_picks_ended_and_long_sessions() {
        let policy = CompactPolicy::default().after_days(5).max_exchanges(20);
        let now = 100 * DAY;
        // Ended: idle long enough and more than one exchange.
        assert_eq!(policy.reason(3, now - 6 * DAY, now), Some(CompactReason::Ended { idle_secs: 6 * DAY }));
        assert_eq!(policy.reason(1, now - 6 * DAY, now), None, "one exchange is its own summary");
        assert_eq!(policy.reason(3, now - 4 * DAY, now), None, "still active");
        // Long: over the threshold whatever its age.
        assert_eq!(policy.reason(21, now, now), Some(CompactReason::Long { exchanges: 21 }));
        assert_eq!(policy.reason(20, now, now), None);
        let no_age = CompactPolicy { older_than_secs: None, ..policy };
        assert_eq!(no_age.reason(3, 0, now), None);
        // An ended session is summarized whole, a long one keeps its newest exchanges.
        assert_eq!(policy.options(CompactReason::Ended { idle_secs: 0 }).keep_recent, 0);
        assert_eq!(policy.options(CompactReason::Long { exchanges: 21 }).keep_recent, 4);
    }
}
