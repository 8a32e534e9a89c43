//! Running a compiled graph: `invoke` and `stream`.

use std::pin::Pin;
use std::task::{Context, Poll};

use futures_core::Stream;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use super::compiled::CompiledGraph;
use crate::checkpoint::CheckpointError;
use crate::command::Input;
use crate::config::RunConfig;
use crate::error::{Error, Result};
use crate::interrupt::RunOutcome;
use crate::pregel::run::{run, run_from, Sink};
use crate::stream::{StreamEvent, StreamMode, StreamModes};
use crate::State;

impl<S: State> From<Option<S::Update>> for Input<S> {
    fn from(u: Option<S::Update>) -> Self {
        u.map_or(Input::Resume, Input::Update)
    }
}

impl<S: State, C: Send + Sync + 'static> CompiledGraph<S, C> {
    /// Runs the graph on `input` until it finishes or stops at an interrupt.
    ///
    /// With a checkpointer, `config` must name a thread; the run continues that thread's state.
    ///
    /// # Errors
    /// A node failure (after retries), a rejected update, the recursion limit, or a checkpointer
    /// failure. Writes of tasks that finished are saved first, so [`Input::Resume`] re-runs only
    /// what failed.
    pub async fn invoke(&self, input: S::Update, config: &RunConfig) -> Result<RunOutcome<S>> {
        run(&self.pregel, Input::Update(input), config, None).await
    }

    /// Like [`invoke`](Self::invoke), with an explicit [`Input`] (e.g. [`Input::Resume`]).
    ///
    /// # Errors
    /// As [`invoke`](Self::invoke).
    pub async fn invoke_input(&self, input: Input<S>, config: &RunConfig) -> Result<RunOutcome<S>> {
        run(&self.pregel, input, config, None).await
    }

    /// Like [`invoke`](Self::invoke), but when another writer commits to the thread before this
    /// run's first checkpoint ([`Error::is_conflict`](crate::Error::is_conflict)), runs `input`
    /// again on the thread's new latest state, up to `max_retries` more times.
    ///
    /// Without it, two workers invoking one thread at once never fork it: the one that commits
    /// second fails with the conflict and nothing of that step is kept. With it, a refused run
    /// that had committed nothing applies its input after the winner's, as if the calls had been
    /// queued. A run refused at a later step is not retried, because its input checkpoint is
    /// already part of the thread and a retry could apply the input twice: its error is
    /// returned. To make every run all-or-nothing, and so always retryable, run it with
    /// [`Durability::Exit`](crate::Durability::Exit): it then commits once, at its end. The nodes
    /// of a refused attempt ran (except under `Durability::Sync` when the input checkpoint itself
    /// was refused), so their side effects, such as model or tool calls, happen again on the
    /// retry. A config with a `checkpoint_id` (time travel) is not retried.
    ///
    /// # Example
    /// ```
    /// use mnemograph_core::prelude::*;
    ///
    /// async fn reply(s: MessagesState) -> Result<MessagesStateUpdate> {
    ///     let text = format!("seen {}", s.messages.len());
    ///     Ok(MessagesStateUpdate::messages(vec![Message::ai(text)]))
    /// }
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<()> {
    /// let graph = StateGraph::<MessagesState>::new()
    ///     .add_node("reply", reply)
    ///     .add_edge(START, "reply")
    ///     .compile_with(InMemoryCheckpointer::new())?;
    /// let config = RunConfig::thread("t1");
    /// let input = MessagesStateUpdate::messages(vec![Message::human("hi")]);
    /// let out = graph.invoke_retrying_conflicts(input, &config, 3).await?;
    /// assert_eq!(out.messages.len(), 2);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    /// As [`invoke`](Self::invoke); a conflict at a later step, or once the retries are used up.
    pub async fn invoke_retrying_conflicts(
        &self,
        input: S::Update,
        config: &RunConfig,
        max_retries: usize,
    ) -> Result<RunOutcome<S>> {
        let mut attempt = 0;
        loop {
            let mut started_at = None;
            // Cloned per attempt: a refused attempt consumed its copy.
            let result =
                run_from(&self.pregel, Input::Update(input.clone()), config, None, &mut started_at).await;
            match result {
                Err(Error::Checkpoint(CheckpointError::Conflict { expected, .. }))
                    if expected == started_at && attempt < max_retries && config.checkpoint_id.is_none() =>
                {
                    attempt += 1;
                    tracing::debug!(attempt, "another writer committed first; running the input again");
                    tokio::time::sleep(conflict_backoff(attempt)).await;
                }
                other => return other,
            }
        }
    }

    /// Continues the thread of `config` from its checkpoint without new input (LangGraph's
    /// `invoke(None, config)`).
    ///
    /// # Errors
    /// As [`invoke`](Self::invoke).
    pub async fn resume(&self, config: &RunConfig) -> Result<RunOutcome<S>> {
        run(&self.pregel, Input::Resume, config, None).await
    }

    /// Streams a run. The run starts when the stream is first polled and is cancelled when the
    /// stream is dropped. Choose modes with [`GraphStream::modes`] (default: values).
    pub fn stream(&self, input: impl Into<Input<S>>, config: &RunConfig) -> GraphStream<S> {
        GraphStream {
            start: Some(Box::new(StartArgs {
                graph: self.clone_erased(),
                input: input.into(),
                config: config.clone(),
            })),
            modes: StreamModes::from(StreamMode::Values),
            rx: None,
            handle: None,
        }
    }

    fn clone_erased(&self) -> Box<dyn Runner<S>> {
        Box::new(self.clone())
    }
}

/// How long to wait before retry `attempt` (1, 2, ...) after a conflict: a random time up to
/// 5 ms × 2^attempt, at most 320 ms. Random so that several losers do not retry in lockstep, and
/// growing so that the winner, which usually has more steps to commit, gets to finish its run
/// first: a retry that commits its input mid-way through the winner's run makes the winner's
/// next commit conflict.
fn conflict_backoff(attempt: usize) -> std::time::Duration {
    let cap_ms = 5u64 << attempt.min(6);
    std::time::Duration::from_micros(rand::random::<u64>() % (cap_ms * 1000 + 1))
}

/// A graph whose context type is erased, so [`GraphStream`] has one type parameter.
trait Runner<S: State>: Send {
    fn spawn(self: Box<Self>, input: Input<S>, config: RunConfig, sink: Sink<S>) -> JoinHandle<()>;
}

impl<S: State, C: Send + Sync + 'static> Runner<S> for CompiledGraph<S, C> {
    fn spawn(self: Box<Self>, input: Input<S>, config: RunConfig, sink: Sink<S>) -> JoinHandle<()> {
        tokio::spawn(async move {
            match run(&self.pregel, input, &config, Some(&sink)).await {
                Ok(outcome) if outcome.is_interrupted() => {
                    let _ = sink.tx.send(Ok(StreamEvent::Interrupt(outcome.interrupts, outcome.breakpoint)));
                }
                Ok(_) => {}
                Err(e) => {
                    let _ = sink.tx.send(Err(e));
                }
            }
        })
    }
}

struct StartArgs<S: State> {
    graph: Box<dyn Runner<S>>,
    input: Input<S>,
    config: RunConfig,
}

/// The stream of a run: `Result<StreamEvent<S>>` items, then the end. An `Err` item is the run's
/// failure and is the last item.
pub struct GraphStream<S: State> {
    start: Option<Box<StartArgs<S>>>,
    modes: StreamModes,
    rx: Option<mpsc::UnboundedReceiver<Result<StreamEvent<S>>>>,
    handle: Option<JoinHandle<()>>,
}

impl<S: State> std::fmt::Debug for GraphStream<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GraphStream")
            .field("modes", &self.modes)
            .field("started", &self.start.is_none())
            .finish()
    }
}

impl<S: State> GraphStream<S> {
    /// Sets the stream modes (before the first poll).
    #[must_use]
    pub fn modes(mut self, modes: impl Into<StreamModes>) -> Self {
        self.modes = modes.into();
        self
    }
}

impl<S: State> Stream for GraphStream<S> {
    type Item = Result<StreamEvent<S>>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        if let Some(args) = this.start.take() {
            let (tx, rx) = mpsc::unbounded_channel();
            let StartArgs { graph, input, config } = *args;
            this.handle = Some(graph.spawn(input, config, Sink { tx, modes: this.modes }));
            this.rx = Some(rx);
        }
        match this.rx.as_mut() {
            Some(rx) => rx.poll_recv(cx),
            None => Poll::Ready(None),
        }
    }
}

impl<S: State> Drop for GraphStream<S> {
    fn drop(&mut self) {
        // A consumer that goes away (a client that disconnected) cancels the run.
        if let Some(h) = self.handle.take() {
            h.abort();
        }
    }
}
