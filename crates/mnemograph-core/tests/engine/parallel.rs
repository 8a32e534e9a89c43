//! The tasks of one superstep run in parallel on a multi-thread runtime's workers (LangGraph runs
//! a step's sync nodes in a thread pool), with the guarantees of a step kept: writes in task-path
//! order, each result handled as it arrives, interrupts, errors and panics as in place, and a
//! dropped run stops its tasks. Nodes marked `blocking` run on the blocking pool.
//!
//! Waits that would hang if the behaviour broke end at a deadline instead, so a failure fails.

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::ThreadId;
use std::time::{Duration, Instant};

use mnemograph_core::prelude::*;
use mnemograph_core::BoxError;

use crate::support::*;

/// How long a test waits for something that happens at once when the behaviour holds.
const PATIENCE: Duration = Duration::from_secs(10);

/// Blocks the calling thread until `arrived` reaches `n` or [`PATIENCE`] runs out; `Err` then.
/// Two tasks that each wait here for the other finish only when they run on two threads at once.
fn rendezvous(arrived: &AtomicUsize, n: usize) -> std::result::Result<(), BoxError> {
    arrived.fetch_add(1, Ordering::SeqCst);
    let deadline = Instant::now() + PATIENCE;
    while arrived.load(Ordering::SeqCst) < n {
        if Instant::now() > deadline {
            return Err("the other task never ran alongside this one".into());
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    Ok(())
}

/// Blocks the calling thread until `flag` is set or [`PATIENCE`] runs out; `Err` then.
fn wait_for(flag: &AtomicBool) -> std::result::Result<(), BoxError> {
    let deadline = Instant::now() + PATIENCE;
    while !flag.load(Ordering::SeqCst) {
        if Instant::now() > deadline {
            return Err("the flag was never set: the sibling did not run".into());
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    Ok(())
}

/// Waits (asynchronously) until `done` holds or [`PATIENCE`] runs out.
async fn eventually(done: impl Fn() -> bool) -> bool {
    let deadline = Instant::now() + PATIENCE;
    while !done() {
        if Instant::now() > deadline {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    true
}

/// `START -> a, b` (one step of two tasks); both wait for each other, blocking their thread, and
/// note the thread they ran on.
fn two_that_meet() -> (StateGraph<S>, Arc<Mutex<Vec<ThreadId>>>) {
    let arrived = Arc::new(AtomicUsize::new(0));
    let threads = Arc::new(Mutex::new(Vec::new()));
    let node = |name: &'static str| {
        let (arrived, threads) = (Arc::clone(&arrived), Arc::clone(&threads));
        move |_s: S| {
            let (arrived, threads) = (Arc::clone(&arrived), Arc::clone(&threads));
            async move {
                threads.lock().unwrap().push(std::thread::current().id());
                rendezvous(&arrived, 2)?;
                Ok::<_, BoxError>(SUpdate::log(vec![name.to_owned()]))
            }
        }
    };
    let g = StateGraph::<S>::new()
        .add_node("a", node("a"))
        .add_node("b", node("b"))
        .add_edge(START, "a")
        .add_edge(START, "b");
    (g, threads)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn test_tasks_of_one_step_run_in_parallel_on_a_multi_thread_runtime() {
    let (g, threads) = two_that_meet();
    let g = g.compile().unwrap();
    let out = tokio::time::timeout(2 * PATIENCE, g.invoke(SUpdate::default(), &RunConfig::new()))
        .await
        .expect("the run hangs")
        .expect("both tasks met: they ran at the same time");
    assert_eq!(out.log, ["a", "b"]);
    let threads = threads.lock().unwrap();
    assert_ne!(threads[0], threads[1], "each task ran on a worker of its own");
}

/// `with_spawned_tasks(false)` keeps the tasks in the run's future: polled on the caller's thread.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn test_a_graph_that_spawns_no_tasks_runs_them_on_the_callers_thread() {
    let threads = Arc::new(Mutex::new(Vec::new()));
    let node = |name: &'static str| {
        let threads = Arc::clone(&threads);
        move |_s: S| {
            threads.lock().unwrap().push(std::thread::current().id());
            std::future::ready(Ok::<_, Error>(SUpdate::log(vec![name.to_owned()])))
        }
    };
    let g = StateGraph::<S>::new()
        .add_node("a", node("a"))
        .add_node("b", node("b"))
        .add_node("c", node("c"))
        .add_edge(START, "a")
        .add_edge(START, "b")
        .add_edge(START, "c")
        .compile()
        .unwrap()
        .with_spawned_tasks(false);
    let out = g.invoke(SUpdate::default(), &RunConfig::new()).await.unwrap();
    assert_eq!(out.log, ["a", "b", "c"]);
    let caller = std::thread::current().id();
    assert!(threads.lock().unwrap().iter().all(|t| *t == caller), "{threads:?} vs {caller:?}");
}

/// On a current-thread runtime the tasks of a step are polled concurrently in the run's future:
/// two that await each other finish.
#[tokio::test(flavor = "current_thread")]
async fn test_tasks_of_one_step_run_concurrently_on_a_current_thread_runtime() {
    let barrier = Arc::new(tokio::sync::Barrier::new(2));
    let threads = Arc::new(Mutex::new(HashSet::new()));
    let node = |name: &'static str| {
        let (barrier, threads) = (Arc::clone(&barrier), Arc::clone(&threads));
        move |_s: S| {
            let (barrier, threads) = (Arc::clone(&barrier), Arc::clone(&threads));
            async move {
                threads.lock().unwrap().insert(std::thread::current().id());
                barrier.wait().await;
                Ok::<_, Error>(SUpdate::log(vec![name.to_owned()]))
            }
        }
    };
    let g = StateGraph::<S>::new()
        .add_node("a", node("a"))
        .add_node("b", node("b"))
        .add_edge(START, "a")
        .add_edge(START, "b")
        .compile()
        .unwrap();
    let out = tokio::time::timeout(PATIENCE, g.invoke(SUpdate::default(), &RunConfig::new()))
        .await
        .expect("the tasks are polled concurrently")
        .unwrap();
    assert_eq!(out.log, ["a", "b"]);
    let threads = threads.lock().unwrap();
    assert_eq!(*threads, HashSet::from([std::thread::current().id()]), "in place, on the caller's thread");
}

/// Eight tasks finishing in a random order: their writes land in task-path order every time.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn test_writes_apply_in_task_path_order_whatever_order_tasks_finish_in() {
    let finished = Arc::new(Mutex::new(Vec::new()));
    let names: Vec<String> = (0..8).map(|i| format!("n{i}")).collect();
    let mut g = StateGraph::<S>::new();
    for name in &names {
        let (own, finished) = (name.clone(), Arc::clone(&finished));
        let node = move |_s: S| {
            let (name, finished) = (own.clone(), Arc::clone(&finished));
            async move {
                // A blocking wait of a random length, so the workers finish tasks out of order.
                std::thread::sleep(Duration::from_micros(rand::random::<u64>() % 3000));
                finished.lock().unwrap().push(name.clone());
                Ok::<_, Error>(SUpdate::log(vec![name]))
            }
        };
        g = g.add_node(name.clone(), node).add_edge(START, name.clone());
    }
    let g = g.compile().unwrap();
    let mut out_of_order = 0;
    for _ in 0..20 {
        let out = g.invoke(SUpdate::default(), &RunConfig::new()).await.unwrap();
        assert_eq!(out.log, names, "writes in task-path order");
        let order = std::mem::take(&mut *finished.lock().unwrap());
        out_of_order += usize::from(order != names);
    }
    assert!(out_of_order > 0, "the tasks never finished out of order: the test shows nothing");
}

/// Sets its flag when dropped: tells that a node's future was dropped.
struct DropFlag(Arc<AtomicUsize>);

impl Drop for DropFlag {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

/// `START -> a, b`: both note that they started, then wait forever (on timers, so an abort stops
/// them); each notes when its future is dropped. `b` is `blocking` when asked.
fn two_that_never_finish(b_blocking: bool) -> (CompiledGraph<S>, Arc<AtomicUsize>, Arc<AtomicUsize>) {
    let started = Arc::new(AtomicUsize::new(0));
    let dropped = Arc::new(AtomicUsize::new(0));
    let node = || {
        let (started, dropped) = (Arc::clone(&started), Arc::clone(&dropped));
        move |_s: S| {
            let (started, dropped) = (Arc::clone(&started), Arc::clone(&dropped));
            async move {
                let _flag = DropFlag(dropped);
                started.fetch_add(1, Ordering::SeqCst);
                loop {
                    tokio::time::sleep(Duration::from_millis(1)).await;
                }
                #[allow(unreachable_code)]
                Ok::<_, Error>(SUpdate::default())
            }
        }
    };
    let options = if b_blocking { NodeOptions::new().blocking() } else { NodeOptions::new() };
    let g = StateGraph::<S>::new()
        .add_node("a", node())
        .add_node_with("b", node(), options)
        .add_edge(START, "a")
        .add_edge(START, "b")
        .compile()
        .unwrap();
    (g, started, dropped)
}

/// Dropping the run's future aborts its spawned tasks (and stops a blocking one at its next
/// await): nothing of the run keeps running.
async fn dropping_the_run_stops_its_tasks(b_blocking: bool) {
    let (g, started, dropped) = two_that_never_finish(b_blocking);
    let run = tokio::spawn(async move { g.invoke(SUpdate::default(), &RunConfig::new()).await });
    assert!(eventually(|| started.load(Ordering::SeqCst) == 2).await, "both tasks start");
    assert_eq!(dropped.load(Ordering::SeqCst), 0);
    run.abort();
    assert!(run.await.unwrap_err().is_cancelled());
    assert!(eventually(|| dropped.load(Ordering::SeqCst) == 2).await, "both tasks were stopped");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn test_dropping_a_run_aborts_its_spawned_tasks() {
    dropping_the_run_stops_its_tasks(false).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn test_dropping_a_run_stops_its_blocking_node() {
    dropping_the_run_stops_its_tasks(true).await;
}

#[tokio::test(flavor = "current_thread")]
async fn test_dropping_a_run_stops_its_blocking_node_on_a_current_thread_runtime() {
    dropping_the_run_stops_its_tasks(true).await;
}

/// `START -> a, b, c` in one step, `b` calling `interrupt()`: the run stops with `b`'s interrupt,
/// `a`'s and `c`'s writes are saved, and resuming runs `b` alone.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn test_an_interrupt_in_one_parallel_task_keeps_the_others_writes() {
    let runs: Arc<[AtomicU32; 3]> = Arc::new(Default::default());
    let node = |k: usize, name: &'static str| {
        let runs = Arc::clone(&runs);
        move |_s: S, rt: Runtime| {
            runs[k].fetch_add(1, Ordering::SeqCst);
            async move {
                if name == "b" {
                    let answer: String = rt.interrupt("b?")?;
                    return Ok::<_, Error>(SUpdate::log(vec![format!("b:{answer}")]));
                }
                Ok(SUpdate::log(vec![name.to_owned()]))
            }
        }
    };
    let g = StateGraph::<S>::new()
        .add_node("a", node(0, "a"))
        .add_node("b", node(1, "b"))
        .add_node("c", node(2, "c"))
        .add_edge(START, "a")
        .add_edge(START, "b")
        .add_edge(START, "c")
        .compile_with(InMemoryCheckpointer::new())
        .unwrap();
    let cfg = RunConfig::thread("t");
    let out = g.invoke(SUpdate::default(), &cfg).await.unwrap();
    assert!(out.is_interrupted());
    assert_eq!(out.interrupts.len(), 1);
    assert_eq!(out.interrupts[0].value, "b?");
    assert_eq!(g.get_state(&cfg).await.unwrap().next, ["b"]);

    let out = g.invoke_input(Input::resume("yes"), &cfg).await.unwrap();
    assert!(!out.is_interrupted());
    assert_eq!(out.log, ["a", "b:yes", "c"]);
    let counts: Vec<u32> = runs.iter().map(|r| r.load(Ordering::SeqCst)).collect();
    assert_eq!(counts, [1, 2, 1], "resuming re-runs the interrupted task only");
}

/// `START -> a, b, c` in one step, `a` failing on its first run: the run fails naming `a`, the
/// others' writes are saved, and resuming runs `a` alone.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn test_an_error_in_one_parallel_task_fails_the_run_and_keeps_the_others_writes() {
    let runs: Arc<[AtomicU32; 3]> = Arc::new(Default::default());
    let node = |k: usize, name: &'static str| {
        let runs = Arc::clone(&runs);
        move |_s: S| {
            let first = runs[k].fetch_add(1, Ordering::SeqCst) == 0;
            async move {
                if name == "a" && first {
                    return Err::<SUpdate, BoxError>("a broke".into());
                }
                Ok(SUpdate::log(vec![name.to_owned()]))
            }
        }
    };
    let g = StateGraph::<S>::new()
        .add_node("a", node(0, "a"))
        .add_node("b", node(1, "b"))
        .add_node("c", node(2, "c"))
        .add_edge(START, "a")
        .add_edge(START, "b")
        .add_edge(START, "c")
        .compile_with(InMemoryCheckpointer::new())
        .unwrap();
    let cfg = RunConfig::thread("t");
    let err = g.invoke(SUpdate::default(), &cfg).await.unwrap_err();
    assert!(matches!(&err, Error::Node { node, .. } if node == "a"), "{err:?}");

    let out = g.resume(&cfg).await.unwrap();
    assert_eq!(out.log, ["a", "b", "c"]);
    let counts: Vec<u32> = runs.iter().map(|r| r.load(Ordering::SeqCst)).collect();
    assert_eq!(counts, [2, 1, 1], "resuming re-runs the failed task only");
}

/// `START -> a, b`: `a` panics. Polled in place, the panic unwinds out of the run to whoever
/// polls it; spawned, the same happens: the run resumes the task's panic, with its payload.
async fn a_panicking_task_panics_the_run() {
    let g = StateGraph::<S>::new()
        .add_node("a", |_s: S| async {
            if true {
                panic!("node a panicked");
            }
            Ok::<_, Error>(SUpdate::default())
        })
        .add_node("b", logger("b"))
        .add_edge(START, "a")
        .add_edge(START, "b")
        .compile()
        .unwrap();
    let run = tokio::spawn(async move { g.invoke(SUpdate::default(), &RunConfig::new()).await });
    let err = tokio::time::timeout(PATIENCE, run).await.expect("a panic must not hang the run").unwrap_err();
    assert!(err.is_panic(), "{err:?}");
    let payload = err.into_panic();
    assert_eq!(payload.downcast_ref::<&str>(), Some(&"node a panicked"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn test_a_panicking_parallel_task_panics_the_run() {
    a_panicking_task_panics_the_run().await;
}

#[tokio::test(flavor = "current_thread")]
async fn test_a_panicking_task_panics_the_run_on_a_current_thread_runtime() {
    a_panicking_task_panics_the_run().await;
}

/// `START -> blocker, helper`: `blocker` (a `blocking` node) blocks its thread until `helper`, an
/// ordinary async node that first awaits a timer, has run. Possible only if `blocker` leaves the
/// runtime's threads to `helper`.
fn blocker_and_helper() -> CompiledGraph<S> {
    let flag = Arc::new(AtomicBool::new(false));
    let waiting = Arc::clone(&flag);
    let blocker = move |_s: S| {
        let flag = Arc::clone(&waiting);
        async move {
            wait_for(&flag)?;
            // Timers still work on the blocking thread.
            tokio::time::sleep(Duration::from_millis(1)).await;
            Ok::<_, BoxError>(SUpdate::log(vec!["blocker".to_owned()]))
        }
    };
    let helper = move |_s: S| {
        let flag = Arc::clone(&flag);
        async move {
            tokio::time::sleep(Duration::from_millis(5)).await;
            flag.store(true, Ordering::SeqCst);
            Ok::<_, Error>(SUpdate::log(vec!["helper".to_owned()]))
        }
    };
    StateGraph::<S>::new()
        .add_node_with("blocker", blocker, NodeOptions::new().blocking())
        .add_node("helper", helper)
        .add_edge(START, "blocker")
        .add_edge(START, "helper")
        .compile()
        .unwrap()
}

#[tokio::test(flavor = "current_thread")]
async fn test_a_blocking_node_leaves_a_current_thread_runtime_to_its_siblings() {
    let g = blocker_and_helper();
    let out = tokio::time::timeout(2 * PATIENCE, g.invoke(SUpdate::default(), &RunConfig::new()))
        .await
        .expect("no deadlock")
        .expect("the blocker saw the helper run");
    assert_eq!(out.log, ["blocker", "helper"]);
}

/// One worker: were the blocker on it, the helper could not run.
#[tokio::test(flavor = "multi_thread", worker_threads = 1)]
async fn test_a_blocking_node_leaves_the_runtime_workers_to_its_siblings() {
    let g = blocker_and_helper();
    let out = tokio::time::timeout(2 * PATIENCE, g.invoke(SUpdate::default(), &RunConfig::new()))
        .await
        .expect("no deadlock")
        .expect("the blocker saw the helper run");
    assert_eq!(out.log, ["blocker", "helper"]);
}

/// A `blocking` node alone in its step (no siblings, so nothing else is spawned) runs off the
/// runtime's thread too, awaiting timers there, on a current-thread runtime as well.
#[tokio::test(flavor = "current_thread")]
async fn test_a_blocking_node_alone_in_its_step_runs_off_the_runtime_thread() {
    let caller = std::thread::current().id();
    let g = StateGraph::<S>::new()
        .add_node_with(
            "alone",
            move |_s: S| async move {
                tokio::time::sleep(Duration::from_millis(1)).await;
                let elsewhere = std::thread::current().id() != caller;
                Ok::<_, Error>(SUpdate::log(vec![format!("elsewhere={elsewhere}")]))
            },
            NodeOptions::new().blocking(),
        )
        .add_edge(START, "alone")
        .compile()
        .unwrap();
    let out = tokio::time::timeout(PATIENCE, g.invoke(SUpdate::default(), &RunConfig::new()))
        .await
        .expect("no deadlock")
        .unwrap();
    assert_eq!(out.log, ["elsewhere=true"]);
}

/// Outside any tokio runtime a `blocking` node, like every task, runs in place.
#[test]
fn test_a_blocking_node_runs_in_place_outside_a_tokio_runtime() {
    let g = StateGraph::<S>::new()
        .add_node_with("x", logger("x"), NodeOptions::new().blocking())
        .add_node("y", logger("y"))
        .add_edge(START, "x")
        .add_edge(START, "y")
        .compile()
        .unwrap();
    let out = futures_executor_block_on(g.invoke(SUpdate::default(), &RunConfig::new())).unwrap();
    assert_eq!(out.log, ["x", "y"]);
}

/// A minimal executor that is not tokio: polls `fut` on this thread, parking between wakes.
fn futures_executor_block_on<F: std::future::Future>(fut: F) -> F::Output {
    use std::task::{Context, Poll, Wake, Waker};
    struct Unpark(std::thread::Thread);
    impl Wake for Unpark {
        fn wake(self: Arc<Self>) {
            self.0.unpark();
        }
    }
    let waker = Waker::from(Arc::new(Unpark(std::thread::current())));
    let mut cx = Context::from_waker(&waker);
    let mut fut = std::pin::pin!(fut);
    loop {
        if let Poll::Ready(out) = fut.as_mut().poll(&mut cx) {
            return out;
        }
        std::thread::park();
    }
}
