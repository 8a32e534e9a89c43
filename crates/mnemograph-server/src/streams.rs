//! [`Streams`]: how many event streams each caller has open, so that one caller cannot hold an
//! unbounded number of connections and their buffers.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use crate::auth::Caller;
use crate::error::{Result, ServerError};

/// How many streams each caller has open, by identity.
type Counts = Arc<Mutex<HashMap<String, usize>>>;

/// The open streams of each authenticated caller, capped at `max` each.
#[derive(Debug)]
pub(crate) struct Streams {
    max: usize,
    open: Counts,
}

/// One open stream, counted until it is dropped (the response ended or the client went away).
#[derive(Debug)]
pub(crate) struct Slot(Option<(Counts, String)>);

impl Streams {
    pub(crate) fn new(max: usize) -> Self {
        Self { max, open: Arc::default() }
    }

    /// A slot for one more stream of `caller`, or 429 when it has `max` open. Callers of a server
    /// without authentication are not counted: there is no one to tell apart.
    pub(crate) fn open(&self, caller: &Caller) -> Result<Slot> {
        let Some(user) = caller.user() else { return Ok(Slot(None)) };
        let mut open = self.open.lock().unwrap_or_else(PoisonError::into_inner);
        let count = open.entry(user.identity.clone()).or_default();
        if *count >= self.max {
            return Err(ServerError::TooManyRequests(format!(
                "{} has {count} streams open, this server's maximum per caller; close one first",
                user.identity
            )));
        }
        *count += 1;
        Ok(Slot(Some((self.open.clone(), user.identity.clone()))))
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let Some((open, identity)) = self.0.take() else { return };
        let mut open = open.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(count) = open.get_mut(&identity) {
            *count = count.saturating_sub(1);
            if *count == 0 {
                open.remove(&identity);
            }
        }
    }
}
