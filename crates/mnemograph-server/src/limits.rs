//! [`Limits`]: how much one request may ask of the server.

use crate::error::{Result, ServerError};
use crate::page::Count;

/// Caps on what one request may ask of the server, so that no client can make it buffer, list,
/// loop or queue without bound. Each cap answers with its own status and a `{"detail"}` body
/// that names it.
///
/// ```
/// use mnemograph_server::Limits;
/// let limits = Limits::default().max_body_bytes(1 << 20).max_queue_per_thread(10);
/// assert_eq!(limits.max_page, Limits::DEFAULT_MAX_PAGE);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Limits {
    /// The largest request body, in bytes; a larger one is refused with 413.
    pub max_body_bytes: usize,
    /// The largest `limit` of a list or search (threads, runs, history, assistants, store items
    /// and namespaces); a larger one is refused with 422.
    pub max_page: usize,
    /// The largest `config.recursion_limit` a run may ask for; a larger one is refused with 422.
    pub max_recursion_limit: usize,
    /// How many runs may wait on one thread behind the one it is running (`multitask_strategy`
    /// `enqueue`); one more is refused with 429 and nothing is queued.
    pub max_queue_per_thread: usize,
    /// How many run event streams (`stream` and `join_stream`) one authenticated caller may have
    /// open at once; one more is refused with 429. Without authentication, streams are not
    /// counted.
    pub max_streams_per_user: usize,
    /// How many store items one authenticated caller may keep under its namespace through
    /// `/store` (0 turns the store's writes off); a put of one more new item is refused with
    /// 429. Replacing an item is always allowed, and nodes' writes through their runtime are
    /// not refused, though they count. Without authentication, items are not counted.
    pub max_store_items_per_user: usize,
    /// How many bytes of a run's events (JSON text) one live stream may have sent to it and not
    /// read yet, in one process. A slower client's stream goes on from the run's kept events;
    /// when those lack an event it had not read, it gets an `error` event (`StreamLagged`) and
    /// ends. A cluster's streams read from Redis at their own pace instead.
    pub max_unread_event_bytes: usize,
}

impl Limits {
    /// The default [`Limits::max_body_bytes`]: 10 MiB, room for a long conversation's state.
    pub const DEFAULT_MAX_BODY_BYTES: usize = 10 * 1024 * 1024;
    /// The default [`Limits::max_page`]: 1000 records.
    pub const DEFAULT_MAX_PAGE: usize = 1000;
    /// The default [`Limits::max_recursion_limit`]: 1000 supersteps, forty times LangGraph's
    /// default recursion limit of 25.
    pub const DEFAULT_MAX_RECURSION_LIMIT: usize = 1000;
    /// The default [`Limits::max_queue_per_thread`]: 100 waiting runs.
    pub const DEFAULT_MAX_QUEUE_PER_THREAD: usize = 100;

    /// The default [`Limits::max_streams_per_user`]: 100 open streams.
    pub const DEFAULT_MAX_STREAMS_PER_USER: usize = 100;

    /// The default [`Limits::max_store_items_per_user`]: 10,000 items.
    pub const DEFAULT_MAX_STORE_ITEMS_PER_USER: usize = 10_000;

    /// The default [`Limits::max_unread_event_bytes`]: 1 MiB per stream, as much as a run keeps
    /// for late readers by default, so a slow reader holds no more than a late one reads.
    pub const DEFAULT_MAX_UNREAD_EVENT_BYTES: usize = 1024 * 1024;

    /// Gives up on a live stream's queue beyond `bytes` of unread events.
    #[must_use]
    pub fn max_unread_event_bytes(mut self, bytes: usize) -> Self {
        self.max_unread_event_bytes = bytes;
        self
    }

    /// Refuses request bodies larger than `bytes`.
    #[must_use]
    pub fn max_body_bytes(mut self, bytes: usize) -> Self {
        self.max_body_bytes = bytes;
        self
    }

    /// Refuses a list or search `limit` larger than `records`.
    #[must_use]
    pub fn max_page(mut self, records: usize) -> Self {
        self.max_page = records;
        self
    }

    /// Refuses a run's `config.recursion_limit` larger than `steps`.
    #[must_use]
    pub fn max_recursion_limit(mut self, steps: usize) -> Self {
        self.max_recursion_limit = steps;
        self
    }

    /// Refuses a run that would wait on a thread behind `runs` waiting runs already.
    #[must_use]
    pub fn max_queue_per_thread(mut self, runs: usize) -> Self {
        self.max_queue_per_thread = runs;
        self
    }

    /// Refuses an authenticated caller's stream beyond `streams` open ones.
    #[must_use]
    pub fn max_streams_per_user(mut self, streams: usize) -> Self {
        self.max_streams_per_user = streams;
        self
    }

    /// Refuses an authenticated caller's put of a new store item beyond `items` under its
    /// namespace; 0 refuses every put through `/store`.
    #[must_use]
    pub fn max_store_items_per_user(mut self, items: usize) -> Self {
        self.max_store_items_per_user = items;
        self
    }

    /// Refuses a new store item when `held` are already kept under the caller's namespace.
    pub(crate) fn check_store_items(&self, held: usize) -> Result<()> {
        let max = self.max_store_items_per_user;
        if held < max {
            return Ok(());
        }
        Err(ServerError::TooManyRequests(format!(
            "{held} store items are kept under your namespace, this server's maximum of {max}; delete some first"
        )))
    }

    /// The page a list asks for: its size (`default` when it names none) within
    /// [`Limits::max_page`], and its offset (0 when it names none).
    pub(crate) fn page(&self, limit: &Count, offset: &Count, default: usize) -> Result<(usize, usize)> {
        Ok((self.page_limit(limit, default)?, Self::page_offset(offset)?))
    }

    /// The page size a list asks for (`default` when it names none), within [`Limits::max_page`].
    pub(crate) fn page_limit(&self, limit: &Count, default: usize) -> Result<usize> {
        let max = self.max_page;
        match limit.get("limit")? {
            None => Ok(default.min(max)),
            Some(n) if n <= max => Ok(n),
            Some(n) => Err(ServerError::Unprocessable(format!(
                "`limit` is {n}, above this server's maximum page of {max}"
            ))),
        }
    }

    /// The offset a list asks for (0 when it names none).
    fn page_offset(offset: &Count) -> Result<usize> {
        Ok(offset.get("offset")?.unwrap_or(0))
    }

    /// Refuses a run's `config.recursion_limit` of 0 or above [`Limits::max_recursion_limit`].
    pub(crate) fn check_recursion_limit(&self, asked: Option<usize>) -> Result<()> {
        let max = self.max_recursion_limit;
        match asked {
            Some(0) => Err(ServerError::Unprocessable("`config.recursion_limit` must be at least 1".into())),
            Some(n) if n > max => Err(ServerError::Unprocessable(format!(
                "`config.recursion_limit` is {n}, above this server's maximum of {max}"
            ))),
            _ => Ok(()),
        }
    }

    /// Refuses a run that would wait behind `waiting` runs on its thread.
    pub(crate) fn check_queue(&self, waiting: usize) -> Result<()> {
        let max = self.max_queue_per_thread;
        if waiting < max {
            return Ok(());
        }
        Err(ServerError::TooManyRequests(format!(
            "{waiting} runs already wait on this thread, this server's maximum; wait for them to \
             finish or choose a different multitask strategy"
        )))
    }
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_body_bytes: Self::DEFAULT_MAX_BODY_BYTES,
            max_page: Self::DEFAULT_MAX_PAGE,
            max_recursion_limit: Self::DEFAULT_MAX_RECURSION_LIMIT,
            max_queue_per_thread: Self::DEFAULT_MAX_QUEUE_PER_THREAD,
            max_streams_per_user: Self::DEFAULT_MAX_STREAMS_PER_USER,
            max_store_items_per_user: Self::DEFAULT_MAX_STORE_ITEMS_PER_USER,
            max_unread_event_bytes: Self::DEFAULT_MAX_UNREAD_EVENT_BYTES,
        }
    }
}

#[cfg(test)]
mod tests {
    use axum::http::StatusCode;

    use super::*;

    #[test]
    fn a_queue_at_its_cap_refuses_with_429() {
        let limits = Limits::default().max_queue_per_thread(2);
        assert!(limits.check_queue(1).is_ok());
        let refused = limits.check_queue(2).err().map(|e| e.status());
        assert_eq!(refused, Some(StatusCode::TOO_MANY_REQUESTS));
    }

    #[test]
    fn a_recursion_limit_of_zero_or_above_the_cap_is_unprocessable() {
        let limits = Limits::default().max_recursion_limit(50);
        assert!(limits.check_recursion_limit(None).is_ok());
        assert!(limits.check_recursion_limit(Some(50)).is_ok());
        for bad in [0, 51] {
            let status = limits.check_recursion_limit(Some(bad)).err().map(|e| e.status());
            assert_eq!(status, Some(StatusCode::UNPROCESSABLE_ENTITY), "{bad}");
        }
    }
}
