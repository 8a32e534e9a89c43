//! Running a compiled graph: `invoke` and `stream`.

use std::pin::Pin;
use std::task::{Context, Poll};

use futures_core::Stream;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use super::compiled::CompiledGraph;
use crate::config::RunConfig;
use crate::error::Result;
use crate::interrupt::RunOutcome;
use crate::pregel::run::{run, Input, Sink};
use crate::state::State;
use crate::stream::{StreamEvent, StreamMode, StreamModes};

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
        run(self, Input::Update(input), config, None).await
    }

    /// Like [`invoke`](Self::invoke), with an explicit [`Input`] (e.g. [`Input::Resume`]).
    ///
    /// # Errors
    /// As [`invoke`](Self::invoke).
    pub async fn invoke_input(&self, input: Input<S>, config: &RunConfig) -> Result<RunOutcome<S>> {
        run(self, input, config, None).await
    }

    /// Continues the thread of `config` from its checkpoint without new input (LangGraph's
    /// `invoke(None, config)`).
    ///
    /// # Errors
    /// As [`invoke`](Self::invoke).
    pub async fn resume(&self, config: &RunConfig) -> Result<RunOutcome<S>> {
        run(self, Input::Resume, config, None).await
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

/// A graph whose context type is erased, so [`GraphStream`] has one type parameter.
trait Runner<S: State>: Send {
    fn spawn(self: Box<Self>, input: Input<S>, config: RunConfig, sink: Sink<S>) -> JoinHandle<()>;
}

impl<S: State, C: Send + Sync + 'static> Runner<S> for CompiledGraph<S, C> {
    fn spawn(self: Box<Self>, input: Input<S>, config: RunConfig, sink: Sink<S>) -> JoinHandle<()> {
        tokio::spawn(async move {
            match run(&self, input, &config, Some(&sink)).await {
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
