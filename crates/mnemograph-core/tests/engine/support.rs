//! Shared states and helpers.

use std::sync::{Arc, Mutex};

use mnemograph_core::prelude::*;

/// A state with one plain field, one append field and one custom reducer.
#[derive(State, Clone, Default, Debug, PartialEq)]
pub struct S {
    pub hello: String,
    #[reducer(append)]
    pub log: Vec<String>,
    #[reducer(sum)]
    pub total: i64,
}

pub(crate) fn sum(acc: &mut i64, v: i64) {
    *acc += v;
}

/// Records the order nodes ran in (shared across tasks).
#[derive(Clone, Default, Debug)]
pub(crate) struct Trace(pub(crate) Arc<Mutex<Vec<String>>>);

impl Trace {
    pub(crate) fn push(&self, s: &str) {
        self.0.lock().unwrap().push(s.to_owned());
    }
    pub(crate) fn take(&self) -> Vec<String> {
        std::mem::take(&mut *self.0.lock().unwrap())
    }
}

/// A node that appends its name to `log`.
pub(crate) fn logger(
    name: &'static str,
) -> impl Fn(S) -> std::future::Ready<Result<SUpdate>> + Send + Sync + 'static {
    move |_s: S| std::future::ready(Ok(SUpdate::log(vec![name.to_owned()])))
}
