//! The harness: spawns workers, SIGKILLs them at random moments, restarts them until each thread's
//! run completes, then checks every thread against the promises of its durability mode.

use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use mnemograph_core::checkpoint::{CheckpointConfig, ListOptions, WRITES_IDX_MAP};
use mnemograph_core::CompiledGraph;
use rand::rngs::StdRng;
use rand::SeedableRng;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, BufReader};
use tokio::process::Command;

use crate::aim::Kill;
use crate::backend::{Backend, Harness, Sessions};
use crate::checks::{self, Observation, Violation};
use crate::coverage::{Bucket, Coverage};
use crate::error::{Error, Result};
use crate::journal;
use crate::mode::Mode;
use crate::pace::Pace;
use crate::plan::Plan;
use crate::reference::Reference;
use crate::worker::{self, WorkerSpec, DONE, READY};
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
    /// The durability every thread ran with.
    pub mode: Mode,
    /// The run's seed.
    pub seed: u64,
    /// Threads run (the first one of each pace without kills, to time a whole run).
    pub threads: usize,
    /// How long an uninterrupted worker run took, per pace (in the order of [`Pace::ALL`]);
    /// kills are drawn below it.
    pub windows: [Duration; Pace::ALL.len()],
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
            "{} {}: seed {} (rerun with CRASH_SEED={}), {} threads in {:.1} s, uninterrupted run {} ms with {}, {} ms with {}; {}; {} violations",
            self.backend,
            self.mode,
            self.seed,
            self.seed,
            self.threads,
            self.elapsed.as_secs_f64(),
            self.windows[0].as_millis(),
            Pace::ALL[0].name(),
            self.windows[1].as_millis(),
            Pace::ALL[1].name(),
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

impl Summary {
    /// The buckets of the run's mode that no kill landed in.
    pub fn missing(&self) -> Vec<Bucket> {
        self.coverage.missing(self.mode)
    }
}

/// Runs the crash test of `backend` in `mode` with the worker binary `exe`.
///
/// # Errors
/// [`Error::Unreachable`] when the server is down (the caller skips); any failure of a worker or
/// of the harness itself. Violations are not errors: they are in the [`Summary`].
pub async fn run(exe: &Path, backend: Backend, mode: Mode, plan: &Plan) -> Result<Summary> {
    let started = Instant::now();
    let harness = backend.connect_harness().await?;
    let graph = workload::graph(&Instrument::none())?.with_shared_checkpointer(harness.saver.clone());
    let run_id = mnemograph_core::checkpoint::backend::uuid6(0);
    let dir = std::env::temp_dir().join(format!("crash-{}-{mode}-{run_id}", backend.name()));
    std::fs::create_dir_all(&dir).map_err(Error::io(&dir))?;
    let reference = Reference::run(&dir.join("reference.log")).await?;
    let driver =
        Driver { exe, backend, mode, harness: &harness, graph: &graph, dir: &dir, plan, run_id: &run_id };

    let mut summary = Summary {
        backend: driver.backend.name(),
        mode,
        seed: plan.seed,
        threads: 0,
        windows: [Duration::ZERO; Pace::ALL.len()],
        coverage: Coverage::default(),
        violations: Vec::new(),
        elapsed: Duration::ZERO,
        journals: dir.clone(),
    };
    let mut threads = Vec::new();
    // The first thread of each pace runs without kills: it times an uninterrupted run (the kill
    // window of its pace) and checks the harness itself on a thread nothing happened to.
    let mut windows: [Option<Duration>; Pace::ALL.len()] = [None; Pace::ALL.len()];
    // A kill drawn after the worker finished is no kill, so some threads end without one: more
    // of them when the timing thread ran slower than the rest (the machine was busier then). Up
    // to four threads per kill asked for reach the count whatever the spread; the bound only
    // stops a harness whose kills never land. Past the count, threads are added while a bucket
    // of the mode has no kill, up to `plan.max_kills`: the rarest buckets are hit in most runs
    // within the count, and the few runs that miss one get it from a few more threads, instead of
    // every run paying for kills enough that none misses.
    let wanted =
        |c: &Coverage| c.kills < plan.kills || (c.kills < plan.max_kills && !c.missing(mode).is_empty());
    while wanted(&summary.coverage) && threads.len() <= 4 * plan.max_kills {
        let index = threads.len();
        let pace = Pace::of_thread(index);
        let window = &mut windows[pace.index()];
        let outcome = driver.thread(index, pace, *window, &reference).await?;
        window.get_or_insert(outcome.uninterrupted.max(Duration::from_millis(1)));
        summary.coverage.merge(&outcome.coverage);
        let seed = outcome.seed;
        summary
            .violations
            .extend(outcome.violations.into_iter().map(|v| (outcome.thread_id.clone(), seed, v)));
        threads.push(outcome.thread_id);
    }
    summary.threads = threads.len();
    summary.windows = windows.map(Option::unwrap_or_default);
    if summary.violations.is_empty() {
        for thread in &threads {
            harness.saver.delete_thread(thread).await?;
        }
        std::fs::remove_dir_all(&dir).map_err(Error::io(&dir))?;
    }
    summary.elapsed = started.elapsed();
    Ok(summary)
}

/// One thread's run and findings.
struct ThreadOutcome {
    thread_id: String,
    seed: u64,
    /// Time from ready to `done` of the thread's last worker.
    uninterrupted: Duration,
    coverage: Coverage,
    violations: Vec<Violation>,
}

/// What the harness shares between threads.
struct Driver<'a> {
    exe: &'a Path,
    backend: Backend,
    mode: Mode,
    harness: &'a Harness,
    /// The workload on the harness's saver, to read threads with.
    graph: &'a CompiledGraph<Work>,
    dir: &'a Path,
    plan: &'a Plan,
    /// Makes thread ids unique to this run.
    run_id: &'a str,
}

impl Driver<'_> {
    /// Runs thread `index` at `pace` to completion, killing its workers at points drawn from
    /// `window` (none when `window` is `None`), then checks it.
    async fn thread(
        &self,
        index: usize,
        pace: Pace,
        window: Option<Duration>,
        reference: &Reference,
    ) -> Result<ThreadOutcome> {
        let seed = self.plan.thread_seed(index);
        let mut rng = StdRng::seed_from_u64(seed);
        let thread_id = format!("crash-{}-{index}", self.run_id);
        let journal = self.dir.join(format!("{index}.log"));
        let mut observations = Vec::new();
        let mut uninterrupted = Duration::ZERO;
        for incarnation in 0.. {
            let kill = match window {
                Some(w) if observations.len() < self.plan.max_kills_per_thread => {
                    Some(Kill::draw(&mut rng, w))
                }
                _ => None,
            };
            let spec = WorkerSpec {
                backend: self.backend.clone(),
                mode: self.mode,
                thread_id: thread_id.clone(),
                incarnation,
                journal: journal.clone(),
                seed,
                node_delay: pace.node_delay(self.plan.node_delay),
                save_delay: pace.save_delay(self.plan.node_delay),
            };
            match self.incarnation(&spec, kill).await? {
                Ended::Killed => observations.push(self.observe(&thread_id, incarnation).await?),
                Ended::Completed(took) => {
                    uninterrupted = took;
                    break;
                }
            }
        }
        let cfg = worker::run_config(&thread_id, self.mode);
        let history = self.graph.get_state_history(&cfg, ListOptions::new()).await?;
        let latest = self.harness.saver.get_tuple(&CheckpointConfig::thread(thread_id.clone())).await?;
        let latest_id = latest.and_then(|t| t.config.checkpoint_id);
        let records = journal::read(&journal)?;
        let (violations, coverage) = checks::check_thread(
            self.mode,
            &history,
            latest_id.as_deref(),
            reference,
            &records,
            &observations,
        );
        Ok(ThreadOutcome { thread_id, seed, uninterrupted, coverage, violations })
    }

    /// Runs one worker process; kills it as `kill` says unless it completed first. Returns once
    /// the server has closed the worker's sessions.
    async fn incarnation(&self, spec: &WorkerSpec, kill: Option<Kill>) -> Result<Ended> {
        let mut child = Command::new(self.exe)
            .args(spec.to_args())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .map_err(Error::io(self.exe))?;
        // Held open while the worker runs: closing it lets a worker that said `done` exit.
        let stdin = child.stdin.take();
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
        // Whether the worker said `done` (false: its stdout closed without it), or `None` when
        // the kill timer went off first.
        let said_done = async {
            loop {
                match lines.next_line().await {
                    Ok(Some(line)) if line == DONE => return true,
                    Ok(Some(_)) => {}
                    Ok(None) | Err(_) => return false,
                }
            }
        };
        let timer = async {
            match kill {
                // A thread's sleep, not tokio's: tokio's timer rounds up to whole milliseconds,
                // longer than a fast saver takes to store a run's first checkpoint.
                Some(Kill::After(delay)) => {
                    let _ = tokio::task::spawn_blocking(move || std::thread::sleep(delay)).await;
                }
                Some(Kill::AtDone) | None => std::future::pending().await,
            }
        };
        let done = tokio::select! {
            done = tokio::time::timeout(limit, said_done) => Some(done.map_err(|_| timeout("done line", limit))?),
            () = timer => None,
        };
        let took = ready_at.elapsed();
        let killed = match done {
            Some(true) if kill != Some(Kill::AtDone) => {
                drop(stdin);
                false
            }
            Some(false) => false,
            // SIGKILL (tokio's `start_kill` on Unix); a worker that exited meanwhile is only reaped.
            _ => child.start_kill().is_ok(),
        };
        let status = child.wait().await.map_err(Error::io(self.exe))?;
        // Drain stdout so the pipe never blocks a worker, and close it.
        while let Ok(Some(_)) = lines.next_line().await {}
        let ended = if status.success() {
            Ended::Completed(took)
        } else if killed && status.signal() == Some(SIGKILL) {
            Ended::Killed
        } else {
            return Err(self.failed(spec, status, stderr).await);
        };
        self.harness.wait_closed(&sessions, SESSIONS_TIMEOUT).await?;
        self.harness.check_file().await?;
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
            return Ok(Observation {
                incarnation,
                latest: None,
                saved: Default::default(),
                tasks: Default::default(),
            });
        };
        let regular = |channel: &str| !WRITES_IDX_MAP.iter().any(|(special, _)| *special == channel);
        let saved =
            t.pending_writes.iter().filter(|w| regular(&w.channel)).map(|w| w.task_id.clone()).collect();
        let id = t.checkpoint.id.clone();
        // Read at that id, so the snapshot lists every task of the next step, done or not.
        let at = worker::run_config(thread_id, self.mode).checkpoint_id(id.clone());
        let tasks = self.graph.get_state(&at).await?.tasks.into_iter().map(|t| t.id).collect();
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
