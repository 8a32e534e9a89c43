//! The uninterrupted run every thread is compared with: made once, in process, on the in-memory
//! saver, with `sync` durability so that every checkpoint of the run is kept.

use std::path::Path;
use std::time::Duration;

use mnemograph_core::checkpoint::{InMemoryCheckpointer, ListOptions};
use mnemograph_core::StateSnapshot;

use crate::error::Result;
use crate::journal::{self, Journal, Record};
use crate::mode::Mode;
use crate::worker::run_config;
use crate::workload::{self, Instrument, Work};

/// An uninterrupted run's history and executions.
#[derive(Debug, Clone)]
pub struct Reference {
    /// Every checkpoint, newest first (as `get_state_history` returns them).
    pub history: Vec<StateSnapshot<Work>>,
    /// Every execution's `(step, node)`, sorted.
    pub executions: Vec<(i64, String)>,
}

impl Reference {
    /// Runs the workload once, journaling into `journal` (a file that must not exist yet).
    ///
    /// # Errors
    /// A failure of the run or of the journal.
    pub async fn run(journal: &Path) -> Result<Self> {
        let instrument = Instrument::new(Journal::open(journal)?, 0, 0, Duration::ZERO);
        let graph = workload::graph(&instrument)?.with_checkpointer(InMemoryCheckpointer::new());
        let cfg = run_config("reference", Mode::Sync);
        graph.invoke(workload::input(), &cfg).await?;
        let history = graph.get_state_history(&cfg, ListOptions::new()).await?;
        Ok(Self::new(history, &journal::read(journal)?))
    }

    /// The reference of a run with this `history` and these journal `records`.
    pub fn new(history: Vec<StateSnapshot<Work>>, records: &[Record]) -> Self {
        let mut executions: Vec<(i64, String)> = records.iter().map(|r| (r.step, r.node.clone())).collect();
        executions.sort();
        Self { history, executions }
    }
}
