//! Run events in Redis: one stream per run (`XADD`), read by any process with blocking `XREAD`
//! from any entry id, so a client may stream a run from a process that does not run it and
//! resume with `Last-Event-ID`; the stream's last entry marks the run's end and carries its
//! output. Pub/sub channels wake the processes: one when a run is queued or a thread is freed,
//! one when a run is asked to stop, and one carries the threads' state updates to every
//! process's thread streams.
//!
//! Each stream keeps about its latest `max_len` entries (`XADD MAXLEN ~`): a client resuming
//! from an id that was trimmed away gets the entries still kept, from the oldest, as LangGraph's
//! server answers a `Last-Event-ID` it no longer has.
//!
//! A reader waits on the stream itself; the run's record in MySQL is read only when the stream
//! stays silent — at the first silence, for a run that ended before its stream was read (or
//! whose stream expired), then once per [`RECORD_CHECK`] — to end the stream of a run whose end
//! entry never came (its worker died after recording the end, or Redis lost the entry).
//!
//! A reader whose reads fail, Redis or MySQL being away, tries again for as long as its client
//! stays: a stream ends only with its run, since a client takes a stream that ends for a run
//! that ended. A waiter for a run's output does the same, and while Redis is away learns the
//! run's end from its record.

use std::time::{Duration, Instant};

use futures_util::StreamExt;
use redis::aio::{ConnectionManager, MultiplexedConnection};
use redis::streams::StreamReadReply;
use redis::AsyncConnectionConfig;
use serde_json::{json, Value};
use sqlx::mysql::MySqlPool;

use super::tables;
use mnemograph_server::__cluster::Stop;
use mnemograph_server::__cluster::ThreadUpdate;
use mnemograph_server::__cluster::{Frame, Frames};
use mnemograph_server::{Result, ServerError};

/// The name of the entry that ends a run's stream.
const END: &str = "__end__";
/// How long one blocking read waits before the reader looks at the run's record.
const BLOCK: Duration = Duration::from_secs(4);
/// How many entries one read takes.
const BATCH: usize = 256;
/// How long a silent stream waits between readings of its run's record.
const RECORD_CHECK: Duration = Duration::from_secs(30);
/// The wait after a reader's first failed read; doubled after each.
const READ_BACKOFF: Duration = Duration::from_millis(200);
/// The longest wait between a reader's tries.
const MAX_READ_BACKOFF: Duration = Duration::from_secs(2);

pub(super) fn redis_error(e: redis::RedisError) -> ServerError {
    ServerError::Queue(Box::new(e))
}

/// The Redis side of a cluster.
#[derive(Clone)]
pub(super) struct Events {
    client: redis::Client,
    conn: ConnectionManager,
    prefix: String,
    /// How long a finished run's stream stays.
    retention: Duration,
    /// About how many entries a run's stream keeps.
    max_len: usize,
}

/// What a wake-up channel carries.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Signal {
    /// A run may start: one was queued, or a thread was freed.
    Wake,
    /// A run is asked to stop.
    Stop(String, Stop),
    /// A thread's state was updated through the API.
    StateUpdate(ThreadUpdate),
}

/// One read of a run's stream.
struct Batch {
    frames: Vec<Frame>,
    /// The end entry's data, when the read reached it.
    end: Option<Value>,
}

impl Events {
    pub(super) async fn connect(url: &str, prefix: String, retention: Duration) -> Result<Self> {
        let client = redis::Client::open(url).map_err(redis_error)?;
        let conn = ConnectionManager::new(client.clone()).await.map_err(redis_error)?;
        Ok(Self { client, conn, prefix, retention, max_len: super::STREAM_MAX_LEN })
    }

    /// About how many entries a run's stream keeps.
    pub(super) fn max_len(&self) -> usize {
        self.max_len
    }

    pub(super) fn set_max_len(&mut self, max_len: usize) {
        self.max_len = max_len.max(1);
    }

    pub(super) fn set_retention(&mut self, retention: Duration) {
        self.retention = retention;
    }

    pub(super) fn set_prefix(&mut self, prefix: String) {
        self.prefix = prefix;
    }

    fn key(&self, run_id: &str) -> String {
        format!("{}run:{run_id}", self.prefix)
    }

    fn channel(&self, name: &str) -> String {
        format!("{}{name}", self.prefix)
    }

    /// Appends events to a run's stream, in one round trip, all of them or none.
    pub(super) async fn append(&self, run_id: &str, events: &[(String, Value)]) -> Result<()> {
        if events.is_empty() {
            return Ok(());
        }
        let key = self.key(run_id);
        let mut pipe = redis::pipe();
        pipe.atomic();
        for (event, data) in events {
            pipe.cmd("XADD")
                .arg(&key)
                .arg("MAXLEN")
                .arg("~")
                .arg(self.max_len)
                .arg("*")
                .arg("e")
                .arg(event)
                .arg("d")
                .arg(data.to_string())
                .ignore();
        }
        let mut conn = self.conn.clone();
        pipe.query_async::<()>(&mut conn).await.map_err(redis_error)
    }

    /// Ends a run's stream with its status and output; the stream expires after the retention.
    pub(super) async fn end(&self, run_id: &str, status: &str, output: &Value) -> Result<()> {
        let key = self.key(run_id);
        let data = json!({ "status": status, "output": output }).to_string();
        let mut conn = self.conn.clone();
        redis::pipe()
            .cmd("XADD")
            .arg(&key)
            .arg("MAXLEN")
            .arg("~")
            .arg(self.max_len)
            .arg("*")
            .arg("e")
            .arg(END)
            .arg("d")
            .arg(data)
            .ignore()
            .cmd("PEXPIRE")
            .arg(&key)
            .arg((self.retention.as_millis() as u64).max(1))
            .ignore()
            .query_async::<()>(&mut conn)
            .await
            .map_err(redis_error)
    }

    /// Tells every process that a run may start.
    pub(super) async fn wake(&self) {
        let mut conn = self.conn.clone();
        let sent: redis::RedisResult<i64> =
            redis::cmd("PUBLISH").arg(self.channel("wake")).arg("").query_async(&mut conn).await;
        if let Err(e) = sent {
            tracing::warn!(error = %e, "waking the cluster's workers failed; they look again within a second");
        }
    }

    /// Tells every process that `run_id` is asked to stop.
    pub(super) async fn stop(&self, run_id: &str, how: Stop) {
        let mut conn = self.conn.clone();
        let message = format!("{} {run_id}", tables::stop_name(how));
        let sent: redis::RedisResult<i64> =
            redis::cmd("PUBLISH").arg(self.channel("stop")).arg(message).query_async(&mut conn).await;
        if let Err(e) = sent {
            tracing::warn!(run_id, error = %e, "publishing a stop request failed; the run's worker sees it at its next lease renewal");
        }
    }

    /// Tells every process that a thread's state was updated: `<thread_id> <event data>`.
    /// Returns whether Redis took the message.
    pub(super) async fn state_update(&self, update: &ThreadUpdate) -> bool {
        let mut conn = self.conn.clone();
        let mut message = Vec::with_capacity(update.thread_id.len() + 1 + update.data.len());
        message.extend_from_slice(update.thread_id.as_bytes());
        message.push(b' ');
        message.extend_from_slice(&update.data);
        let sent: redis::RedisResult<i64> =
            redis::cmd("PUBLISH").arg(self.channel("state")).arg(message).query_async(&mut conn).await;
        if let Err(e) = &sent {
            tracing::warn!(thread_id = %update.thread_id, error = %e, "publishing a thread's state update failed");
        }
        sent.is_ok()
    }

    /// The wake-up and stop signals, for as long as the connection lasts.
    pub(super) async fn signals(&self) -> Result<futures_util::stream::BoxStream<'static, Signal>> {
        let mut pubsub = self.client.get_async_pubsub().await.map_err(redis_error)?;
        let (wake, stop, state) = (self.channel("wake"), self.channel("stop"), self.channel("state"));
        pubsub.subscribe(&wake).await.map_err(redis_error)?;
        pubsub.subscribe(&stop).await.map_err(redis_error)?;
        pubsub.subscribe(&state).await.map_err(redis_error)?;
        Ok(pubsub
            .into_on_message()
            .filter_map(move |msg| {
                let signal = if msg.get_channel_name() == wake {
                    Some(Signal::Wake)
                } else if msg.get_channel_name() == state {
                    let bytes: Vec<u8> = msg.get_payload().unwrap_or_default();
                    bytes.iter().position(|b| *b == b' ').map(|at| {
                        let thread_id = String::from_utf8_lossy(&bytes[..at]).into_owned();
                        let data = axum::body::Bytes::copy_from_slice(&bytes[at + 1..]);
                        Signal::StateUpdate(ThreadUpdate { thread_id, data })
                    })
                } else {
                    let text: String = msg.get_payload().unwrap_or_default();
                    text.split_once(' ').map(|(how, run)| {
                        Signal::Stop(run.to_owned(), tables::stop_of(Some(how)).unwrap_or(Stop::Interrupt))
                    })
                };
                futures_util::future::ready(signal)
            })
            .boxed())
    }

    /// A connection of its own for a reader's blocking reads.
    async fn reader(&self) -> Result<MultiplexedConnection> {
        let config = AsyncConnectionConfig::new().set_response_timeout(Some(BLOCK + Duration::from_secs(5)));
        self.client.get_multiplexed_async_connection_with_config(&config).await.map_err(redis_error)
    }

    /// Reads a run's stream after entry `after`, waiting up to `block` for an entry when given.
    async fn read(
        &self,
        conn: &mut MultiplexedConnection,
        run_id: &str,
        after: &str,
        block: Option<Duration>,
    ) -> Result<Batch> {
        let mut cmd = redis::cmd("XREAD");
        cmd.arg("COUNT").arg(BATCH);
        if let Some(block) = block {
            cmd.arg("BLOCK").arg(block.as_millis() as u64);
        }
        cmd.arg("STREAMS").arg(self.key(run_id)).arg(after);
        let reply: Option<StreamReadReply> = cmd.query_async(conn).await.map_err(redis_error)?;
        let mut batch = Batch { frames: Vec::new(), end: None };
        for entry in reply.into_iter().flat_map(|r| r.keys).flat_map(|k| k.ids) {
            let event: String = entry.get("e").unwrap_or_default();
            let data: String = entry.get("d").unwrap_or_default();
            if event == END {
                batch.end = Some(serde_json::from_str(&data).unwrap_or(Value::Null));
                break;
            }
            batch.frames.push(Frame { id: entry.id, event, data: data.into() });
        }
        Ok(batch)
    }

    /// A run's events after entry `after`, ending with the run; from the first when `after` is
    /// `None` or no entry id (`-`, LangGraph's "every event", or an id of another server).
    pub(super) fn frames(&self, pool: MySqlPool, run_id: String, after: Option<String>) -> Frames {
        struct Tail {
            events: Events,
            pool: MySqlPool,
            run_id: String,
            after: String,
            conn: Option<MultiplexedConnection>,
            checked: Option<Instant>,
            done: bool,
        }
        let tail = Tail {
            events: self.clone(),
            pool,
            run_id,
            // `XREAD` refuses an id that is not an entry's, and a reader retries a refused read
            // for as long as its client stays.
            after: after.filter(|id| is_entry_id(id)).unwrap_or_else(|| "0-0".to_owned()),
            conn: None,
            checked: None,
            done: false,
        };
        futures_util::stream::unfold(tail, |mut t| async move {
            let mut backoff = READ_BACKOFF;
            while !t.done {
                match t.events.next_batch(&t.pool, &t.run_id, &t.after, &mut t.conn, &mut t.checked).await {
                    Ok(batch) => {
                        t.done = batch.end.is_some();
                        if let Some(last) = batch.frames.last() {
                            t.after = last.id.clone();
                            return Some((futures_util::stream::iter(batch.frames), t));
                        }
                        backoff = READ_BACKOFF;
                    }
                    // The stream ends only with the run: a client takes an ended stream for an
                    // ended run, and would not come back for the events still to come. So a
                    // reader waits out Redis or MySQL being away, for as long as its client stays.
                    Err(e) => {
                        tracing::warn!(run_id = %t.run_id, error = %e, "reading a run's events failed; retrying");
                        t.conn = None;
                        tokio::time::sleep(backoff).await;
                        backoff = (backoff * 2).min(MAX_READ_BACKOFF);
                    }
                }
            }
            None
        })
        .flatten()
        .boxed()
    }

    /// The run's next events after `after`; `end` is set once the run is over, read from its end
    /// entry or, when the stream has none (its worker died after recording the end, or the stream
    /// expired), from its record, read at the first silence and then once per [`RECORD_CHECK`]
    /// (`checked` says when it was last read).
    async fn next_batch(
        &self,
        pool: &MySqlPool,
        run_id: &str,
        after: &str,
        conn: &mut Option<MultiplexedConnection>,
        checked: &mut Option<Instant>,
    ) -> Result<Batch> {
        let conn = match conn {
            Some(c) => c,
            None => conn.insert(self.reader().await?),
        };
        let batch = self.read(conn, run_id, after, Some(BLOCK)).await?;
        if !batch.frames.is_empty() || batch.end.is_some() {
            return Ok(batch);
        }
        // Nothing for a while: the run may be over without an end entry.
        if checked.is_some_and(|at| at.elapsed() < RECORD_CHECK) {
            return Ok(batch);
        }
        // A reading that fails is tried again at the next silence, not a whole check later.
        let outcome = tables::outcome(pool, run_id).await?;
        *checked = Some(Instant::now());
        match outcome {
            Some((status, _)) if matches!(status.as_str(), "pending" | "running") => Ok(batch),
            finished => {
                // Every event of a finished run was written before its record: one more read
                // takes what is left.
                let mut rest = self.read(conn, run_id, after, None).await?;
                if rest.end.is_none() {
                    let (status, output) = finished.unwrap_or_else(|| ("interrupted".into(), Value::Null));
                    rest.end = Some(json!({ "status": status, "output": output }));
                }
                Ok(rest)
            }
        }
    }

    /// Waits for the run to end and returns its output.
    pub(super) async fn output(&self, pool: &MySqlPool, run_id: &str) -> Result<Value> {
        if let Some(output) = ended(pool, run_id).await? {
            return Ok(output);
        }
        let (mut conn, mut after, mut backoff, mut checked) = (None, "0-0".to_owned(), READ_BACKOFF, None);
        loop {
            match self.next_batch(pool, run_id, &after, &mut conn, &mut checked).await {
                Ok(batch) => {
                    if let Some(end) = batch.end {
                        return Ok(end.get("output").cloned().unwrap_or(Value::Null));
                    }
                    if let Some(last) = batch.frames.last() {
                        after = last.id.clone();
                    }
                    backoff = READ_BACKOFF;
                }
                // A waiter waits out Redis or MySQL being away, as a stream's reader does; while
                // Redis is away, the run's record says when the run ended.
                Err(e) => {
                    tracing::warn!(run_id, error = %e, "waiting for a run failed; retrying");
                    conn = None;
                    tokio::time::sleep(backoff).await;
                    backoff = (backoff * 2).min(MAX_READ_BACKOFF);
                    // A record that cannot be read either is read again after the next failure.
                    if let Ok(Some(output)) = ended(pool, run_id).await {
                        return Ok(output);
                    }
                }
            }
        }
    }
}

/// Whether `id` is a stream entry's id as `XREAD` takes it: `<ms>-<seq>` or `<ms>`.
fn is_entry_id(id: &str) -> bool {
    let number = |part: &str| part.bytes().all(|b| b.is_ascii_digit()) && part.parse::<u64>().is_ok();
    match id.split_once('-') {
        Some((ms, seq)) => number(ms) && number(seq),
        None => number(id),
    }
}

/// The output of a run whose record says it ended; `None` while it is pending or running, or
/// when it has no record.
async fn ended(pool: &MySqlPool, run_id: &str) -> Result<Option<Value>> {
    Ok(tables::outcome(pool, run_id)
        .await?
        .filter(|(status, _)| !matches!(status.as_str(), "pending" | "running"))
        .map(|(_, output)| output))
}

#[cfg(test)]
mod tests {
    use super::is_entry_id;

    #[test]
    fn only_stream_entry_ids_are_read_from() {
        for id in ["0-0", "1700000000000-3", "1700000000000"] {
            assert!(is_entry_id(id), "{id}");
        }
        for id in ["-", "", "-1", "1-", "+1-0", "a-1", "1-2-3", "99999999999999999999-0"] {
            assert!(!is_entry_id(id), "{id}");
        }
    }
}
