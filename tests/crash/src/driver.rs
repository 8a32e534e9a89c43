//! The harness: spawns workers, SIGKILLs them at random moments, restarts them until each thread's
//! run completes, then checks every thread.

use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use graph_core::checkpoint::{CheckpointConfig, InMemoryCheckpointer, ListOptions, WRITES_IDX_MAP};
use graph_core::{CompiledGraph, StateSnapshot};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, BufReader};
use tokio::process::Command;

use crate::backend::{Backend, Harness, Sessions};
use crate::checks::{self, Coverage, Observation, Violation};
use crate::error::{Error, Result};
use crate::journal;
use crate::plan::Plan;
use crate::worker::{self, WorkerSpec, READY};
use crate::workload::{self, Instrument, Work};

/// How long a worker may take to connect and say it is ready.
const READY_TIMEOUT: Duration = Duration::from_secs(30);
/// How long a killed worker's sessions may take to close.
const SESSIONS_TIMEOUT: Duration = Duration::from_secs(10);
/// SIGKILL's number: a worker the harness killed reports it as its terminating signal.
const SIGKILL: i32 = 9;

/// What one saver's crash run found.
#[derive(Debug)]
pub struct Summary {
    /// `mysql` or `redis`.
    pub backend: &'static str,
    /// The run's seed.
    pub seed: u64,
    /// Threads run (the first one without kills, to time a whole run).
    pub threads: usize,
    /// How long an uninterrupted worker run took; kills are drawn uniformly below it.
    pub window: Duration,
    /// Where the kills landed.
    pub coverage: Coverage,
    /// Every violation, with its thread and that thread's seed.
    pub violations: Vec<(String, u64, Violation)>,
    /// Wall time of the whole run.
    pub elapsed: Duration,
    /// The journals' directory (kept when something was violated).
    pub journals: PathBuf,
}

impl std::fmt::Display for Summary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}: seed {} (rerun with CRASH_SEED={}), {} threads in {:.1} s, uninterrupted run {} ms; {}; {} violations",
            self.backend,
            self.seed,
            self.seed,
            self.threads,
            self.elapsed.as_secs_f64(),
            self.window.as_millis(),
            self.coverage,
            self.violations.len()
        )?;
        for (thread, seed, v) in self.violations.iter().take(20) {
            write!(f, "\n  thread {thread} (thread seed {seed}): {v:?}")?;
        }
        if !self.violations.is_empty() {
            write!(f, "\n  journals kept in {}", self.journals.display())?;
        }
        Ok(())
    }
}

/// Runs the crash test of `backend` with the worker binary `exe`.
///
/// # Errors
/// [`Error::Unreachable`] when the server is down (the caller skips); any failure of a worker or
/// of the harness itself. Violations are not errors: they are in the [`Summary`].
pub async fn run(exe: &Path, backend: Backend, plan: &Plan) -> Result<Summary> {
    let started = Instant::now();
    let harness = backend.connect_harness().await?;
    let graph = workload::graph(&Instrument::none())?.with_shared_checkpointer(harness.saver.clone());
    let reference = reference_history().await?;
    let run_id = graph_core::checkpoint::uuid6(0);
    let dir = std::env::temp_dir().join(format!("crash-{}-{run_id}", backend.name()));
    std::fs::create_dir_all(&dir).map_err(Error::io(&dir))?;
    let driver = Driver { exe, backend, harness: &harness, graph: &graph, dir: &dir, plan, run_id: &run_id };

    let mut summary = Summary {
        backend: driver.backend.name(),
        seed: plan.seed,
        threads: 0,
        window: Duration::ZERO,
        coverage: Coverage::default(),
        violations: Vec::new(),
        elapsed: Duration::ZERO,
        journals: dir.clone(),
    };
    let mut threads = Vec::new();
    // Thread 0 runs without kills: it times an uninterrupted run (the kill window) and checks
    // the harness itself on a thread nothing happened to.
    let mut window = None;
    // A kill drawn after the worker finished is no kill, so some threads end without one: more
    // of them when thread 0 ran slower than the rest (the machine was busier then). Up to four
    // threads per kill asked for reach the count whatever the spread; the bound only stops a
    // harness whose kills never land.
    while summary.coverage.kills < plan.kills && threads.len() <= 4 * plan.kills {
        let index = threads.len();
        let outcome = driver.thread(index, window, &reference).await?;
        window = window.or(Some(outcome.uninterrupted.max(Duration::from_millis(1))));
        summary.coverage.merge(&outcome.coverage);
        let seed = outcome.seed;
        summary
            .violations
            .extend(outcome.violations.into_iter().map(|v| (outcome.thread_id.clone(), seed, v)));
        threads.push(outcome.thread_id);
    }
    summary.threads = threads.len();
    summary.window = window.unwrap_or_default();
    if summary.violations.is_empty() {
        for thread in &threads {
            harness.saver.delete_thread(thread).await?;
        }
        std::fs::remove_dir_all(&dir).map_err(Error::io(&dir))?;
    }
    summary.elapsed = started.elapsed();
    Ok(summary)
}

/// The history of an uninterrupted in-process run on the in-memory saver, newest first.
async fn reference_history() -> Result<Vec<StateSnapshot<Work>>> {
    let graph = workload::graph(&Instrument::none())?.with_checkpointer(InMemoryCheckpointer::new());
    let cfg = worker::run_config("reference");
    graph.invoke(workload::input(), &cfg).await?;
    Ok(graph.get_state_history(&cfg, ListOptions::new()).await?)
}

/// One thread's run and findings.
struct ThreadOutcome {
    thread_id: String,
    seed: u64,
    /// Time from ready to exit of the thread's first worker when it was not killed.
    uninterrupted: Duration,
    coverage: Coverage,
    violations: Vec<Violation>,
}

/// What the harness shares between threads.
struct Driver<'a> {
    exe: &'a Path,
    backend: Backend,
    harness: &'a Harness,
    /// The workload on the harness's saver, to read threads with.
    graph: &'a CompiledGraph<Work>,
    dir: &'a Path,
    plan: &'a Plan,
    /// Makes thread ids unique to this run.
    run_id: &'a str,
}

impl Driver<'_> {
    /// Runs thread `index` to completion, killing its workers at random points in `window` (none
    /// when `window` is `None`), then checks it.
    async fn thread(
        &self,
        index: usize,
        window: Option<Duration>,
        reference: &[StateSnapshot<Work>],
    ) -> Result<ThreadOutcome> {
        let seed = self.plan.thread_seed(index);
        let mut rng = StdRng::seed_from_u64(seed);
        let thread_id = format!("crash-{}-{index}", self.run_id);
        let journal = self.dir.join(format!("{index}.log"));
        let mut observations = Vec::new();
        let mut uninterrupted = Duration::ZERO;
        for incarnation in 0.. {
            let kill_after = match window {
                Some(w) if observations.len() < self.plan.max_kills_per_thread => {
                    // One kill in eight aims at the first twentieth of the window, where the input
                    // checkpoint and the first steps are saved, which a uniform draw rarely hits.
                    let micros = w.as_micros().max(20) as u64;
                    let upper = if rng.gen_ratio(1, 8) { micros / 20 } else { micros };
                    Some(Duration::from_micros(rng.gen_range(0..upper)))
                }
                _ => None,
            };
            let spec = WorkerSpec {
                backend: self.backend.clone(),
                thread_id: thread_id.clone(),
                incarnation,
                journal: journal.clone(),
                seed,
                node_delay: self.plan.node_delay,
            };
            match self.incarnation(&spec, kill_after).await? {
                Ended::Killed => observations.push(self.observe(&thread_id, incarnation).await?),
                Ended::Completed(took) => {
                    uninterrupted = took;
                    break;
                }
            }
        }
        let cfg = worker::run_config(&thread_id);
        let history = self.graph.get_state_history(&cfg, ListOptions::new()).await?;
        let latest = self.harness.saver.get_tuple(&CheckpointConfig::thread(thread_id.clone())).await?;
        let latest_id = latest.and_then(|t| t.config.checkpoint_id);
        let mut violations = checks::check_history(&history, latest_id.as_deref(), reference);
        let records = journal::read(&journal)?;
        let (found, coverage) = checks::check_executions(&history, &records, &observations);
        violations.extend(found);
        Ok(ThreadOutcome { thread_id, seed, uninterrupted, coverage, violations })
    }

    /// Runs one worker process; kills it after `kill_after` (counted from its ready line) unless
    /// it completed first. Returns once the server has closed the worker's sessions.
    async fn incarnation(&self, spec: &WorkerSpec, kill_after: Option<Duration>) -> Result<Ended> {
        let mut child = Command::new(self.exe)
            .args(spec.to_args())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .map_err(Error::io(self.exe))?;
        let stderr = child.stderr.take().map(|mut pipe| {
            tokio::spawn(async move {
                let mut text = String::new();
                let _ = pipe.read_to_string(&mut text).await;
                text
            })
        });
        let Some(stdout) = child.stdout.take() else {
            return Err(Error::io(self.exe)(std::io::Error::other("worker stdout not captured")));
        };
        let mut lines = BufReader::new(stdout).lines();
        let timeout = |what, seconds: Duration| Error::WorkerTimeout {
            thread_id: spec.thread_id.clone(),
            incarnation: spec.incarnation,
            what,
            seconds: seconds.as_secs(),
        };
        let ready = tokio::time::timeout(READY_TIMEOUT, lines.next_line())
            .await
            .map_err(|_| timeout("ready line", READY_TIMEOUT))?
            .map_err(Error::io(self.exe))?;
        let sessions =
            ready.as_deref().and_then(|l| l.strip_prefix(READY)).map(|s| s.trim().parse::<Sessions>());
        let Some(Ok(sessions)) = sessions else {
            // No ready line: the worker failed before connecting; report how it ended.
            let status = child.wait().await.map_err(Error::io(self.exe))?;
            return Err(self.failed(spec, status, stderr).await);
        };
        let ready_at = Instant::now();
        let limit = self.plan.worker_timeout;
        let finished = match kill_after {
            Some(delay) => tokio::select! {
                status = child.wait() => Some(status),
                () = tokio::time::sleep(delay) => None,
            },
            None => {
                Some(tokio::time::timeout(limit, child.wait()).await.map_err(|_| timeout("exit", limit))?)
            }
        };
        let took = ready_at.elapsed();
        let status = match finished {
            Some(status) => status,
            None => {
                // SIGKILL (tokio's `start_kill` on Unix); a worker that exited meanwhile is only reaped.
                let _ = child.start_kill();
                child.wait().await
            }
        }
        .map_err(Error::io(self.exe))?;
        // Drain stdout so the pipe never blocks a worker, and close it.
        while let Ok(Some(_)) = lines.next_line().await {}
        let ended = if status.success() {
            Ended::Completed(took)
        } else if kill_after.is_some() && status.signal() == Some(SIGKILL) {
            Ended::Killed
        } else {
            return Err(self.failed(spec, status, stderr).await);
        };
        self.harness.wait_closed(&sessions, SESSIONS_TIMEOUT).await?;
        Ok(ended)
    }

    async fn failed(
        &self,
        spec: &WorkerSpec,
        status: std::process::ExitStatus,
        stderr: Option<tokio::task::JoinHandle<String>>,
    ) -> Error {
        let stderr = match stderr {
            Some(task) => task.await.unwrap_or_default(),
            None => String::new(),
        };
        Error::WorkerFailed {
            thread_id: spec.thread_id.clone(),
            incarnation: spec.incarnation,
            status,
            stderr,
        }
    }

    /// What the saver holds for the thread now that worker `incarnation` is dead.
    async fn observe(&self, thread_id: &str, incarnation: u32) -> Result<Observation> {
        let tuple = self.harness.saver.get_tuple(&CheckpointConfig::thread(thread_id)).await?;
        let Some(t) = tuple else {
            return Ok(Observation { incarnation, latest: None, saved: Default::default(), tasks: 0 });
        };
        let regular = |channel: &str| !WRITES_IDX_MAP.iter().any(|(special, _)| *special == channel);
        let saved =
            t.pending_writes.iter().filter(|w| regular(&w.channel)).map(|w| w.task_id.clone()).collect();
        let id = t.checkpoint.id.clone();
        // Read at that id, so the snapshot lists every task of the next step, done or not.
        let at = worker::run_config(thread_id).checkpoint_id(id.clone());
        let tasks = self.graph.get_state(&at).await?.tasks.len();
        Ok(Observation { incarnation, latest: Some((id, t.metadata.step)), saved, tasks })
    }
}

/// How a worker process ended.
enum Ended {
    /// It returned from its run, after this long since its ready line.
    Completed(Duration),
    /// The harness killed it.
    Killed,
}
