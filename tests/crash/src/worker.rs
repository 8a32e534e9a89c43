//! The worker: one process that runs (or resumes) one thread of the workload on a saver, until the
//! run completes or the harness kills it.
//!
//! Protocol on stdout: `ready <session ids>` once connected (the harness starts its kill timer
//! there, so kills land in the run rather than in process start-up), then `done` after the run
//! returned. After `done` the worker stays alive until its stdin closes ([`linger`]), so the
//! harness can kill it after the run's last commit, a moment a random kill rarely hits. Errors go
//! to stderr with a non-zero exit status.

use std::collections::HashMap;
use std::io::{Read, Write};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use mnemograph_core::checkpoint::CheckpointConfig;
use mnemograph_core::prelude::*;

use crate::backend::Backend;
use crate::error::{Error, Result};
use crate::journal::Journal;
use crate::mode::Mode;
use crate::slow_saves::SlowSaves;
use crate::workload::{self, Instrument};

/// The first word of the worker's ready line.
pub const READY: &str = "ready";
/// The worker's last line after a completed run.
pub const DONE: &str = "done";

/// Everything one worker process needs to know.
#[derive(Debug, Clone)]
pub struct WorkerSpec {
    /// The saver.
    pub backend: Backend,
    /// The durability of every run of the thread.
    pub mode: Mode,
    /// The thread to run or resume.
    pub thread_id: String,
    /// Which process of the thread this is (0 = the first).
    pub incarnation: u32,
    /// The thread's journal.
    pub journal: PathBuf,
    /// Seeds the node delays.
    pub seed: u64,
    /// Upper bound of a node's delay.
    pub node_delay: Duration,
    /// Upper bound of the delay before each checkpoint save; zero for none (see
    /// [`SlowSaves`]).
    pub save_delay: Duration,
}

impl WorkerSpec {
    /// The spec as `key=value` command-line arguments.
    pub fn to_args(&self) -> Vec<String> {
        let mut args = self.backend.args();
        args.push(format!("durability={}", self.mode));
        args.push(format!("thread={}", self.thread_id));
        args.push(format!("incarnation={}", self.incarnation));
        args.push(format!("journal={}", self.journal.display()));
        args.push(format!("seed={}", self.seed));
        args.push(format!("node_delay_us={}", self.node_delay.as_micros()));
        args.push(format!("save_delay_us={}", self.save_delay.as_micros()));
        args
    }

    /// Reads a spec from `key=value` arguments.
    ///
    /// # Errors
    /// [`Error::Argument`] for a missing or malformed argument.
    pub fn from_args(args: impl IntoIterator<Item = String>) -> Result<Self> {
        let map: HashMap<String, String> = args
            .into_iter()
            .filter_map(|a| a.split_once('=').map(|(k, v)| (k.to_owned(), v.to_owned())))
            .collect();
        let get =
            |name: &'static str| map.get(name).cloned().ok_or(Error::Argument { name, problem: "missing" });
        let number = |name: &'static str| -> Result<u64> {
            get(name)?.parse().map_err(|_| Error::Argument { name, problem: "not a non-negative integer" })
        };
        Ok(Self {
            backend: Backend::from_args(get)?,
            mode: Mode::parse(&get("durability")?).ok_or(Error::Argument {
                name: "durability",
                problem: "must be `sync`, `async` or `exit`",
            })?,
            thread_id: get("thread")?,
            incarnation: u32::try_from(number("incarnation")?)
                .map_err(|_| Error::Argument { name: "incarnation", problem: "too large" })?,
            journal: PathBuf::from(get("journal")?),
            seed: number("seed")?,
            node_delay: Duration::from_micros(number("node_delay_us")?),
            save_delay: Duration::from_micros(number("save_delay_us")?),
        })
    }
}

/// The run config of every worker of a thread run in `mode` (and of the harness, to read it).
pub fn run_config(thread_id: &str, mode: Mode) -> RunConfig {
    RunConfig::thread(thread_id).durability(mode.durability())
}

/// The worker's whole job: connect, announce, then start the thread (when the saver has no
/// checkpoint of it yet) or resume it from its latest checkpoint, and run to the end.
///
/// # Errors
/// Any failure; the process then exits non-zero and the harness fails the test with it.
pub async fn run(spec: &WorkerSpec) -> Result<()> {
    let (mut saver, sessions) = spec.backend.connect_worker().await?;
    if !spec.save_delay.is_zero() {
        let seed = format!("{}:{}", spec.seed, spec.incarnation);
        saver = Arc::new(SlowSaves::new(saver, seed, spec.save_delay));
    }
    let journal = Journal::open(&spec.journal)?;
    let instrument = Instrument::new(journal, spec.seed, spec.incarnation, spec.node_delay);
    let graph = workload::graph(&instrument)?.with_shared_checkpointer(saver.clone());
    let cfg = run_config(&spec.thread_id, spec.mode);
    say(&format!("{READY} {sessions}"))?;
    // Nothing of the thread stored (killed before its first save; under `exit`, before the end):
    // start the run again. Otherwise continue from the latest checkpoint, re-running only tasks
    // whose writes are missing.
    let thread = CheckpointConfig::thread(spec.thread_id.clone());
    if saver.get_tuple(&thread).await?.is_some() {
        graph.resume(&cfg).await?;
    } else {
        graph.invoke(workload::input(), &cfg).await?;
    }
    say(DONE)
}

/// Waits until stdin closes: the harness closes it to let a worker that said `done` exit, or
/// kills the worker instead.
///
/// # Errors
/// [`Error::Io`] when stdin cannot be read.
pub fn linger() -> Result<()> {
    std::io::stdin().lock().read_to_end(&mut Vec::new()).map(drop).map_err(Error::io("<stdin>"))
}

/// Prints one protocol line and flushes it, so the harness sees it now, not at exit.
fn say(line: &str) -> Result<()> {
    let mut out = std::io::stdout().lock();
    writeln!(out, "{line}").and_then(|()| out.flush()).map_err(Error::io("<stdout>"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_round_trip_through_arguments() {
        let spec = WorkerSpec {
            backend: Backend::MySql {
                url: "mysql://root@h:3306/x?a=b".into(),
                database: "crash_test".into(),
            },
            mode: Mode::Async,
            thread_id: "t-1".into(),
            incarnation: 3,
            journal: "/tmp/j.log".into(),
            seed: 42,
            node_delay: Duration::from_micros(1500),
            save_delay: Duration::from_micros(6000),
        };
        let back = WorkerSpec::from_args(spec.to_args()).unwrap();
        assert_eq!(back.to_args(), spec.to_args());
        let missing = WorkerSpec::from_args(vec!["backend=redis".to_owned()]);
        assert!(matches!(missing, Err(Error::Argument { name: "url", .. })));
        let bad =
            spec.to_args().into_iter().map(|a| if a.starts_with("seed=") { "seed=x".into() } else { a });
        assert!(matches!(WorkerSpec::from_args(bad), Err(Error::Argument { name: "seed", .. })));
    }
}
