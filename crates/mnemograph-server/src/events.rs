//! The events of a run as the API streams them: [`Emitted`] items from the engine, turned into
//! the event names and payloads of the stream modes a request asked for.

use std::collections::HashMap;

use mnemograph_core::{StreamMode, StreamModes, TaskEvent};
use serde_json::{json, Map, Value};

use crate::error::ServerError;

/// How long a finished run's events stay readable, by default.
pub const EVENT_RETENTION: std::time::Duration = std::time::Duration::from_secs(60);

/// One event of a run: its name and its JSON payload.
#[derive(Debug, Clone, PartialEq)]
pub struct Emitted {
    /// `values`, `updates`, `messages`, `custom`, `tasks`, `checkpoints`, `error` (engine-level).
    pub(crate) event: String,
    /// The payload.
    pub(crate) data: Value,
    /// The step of a task or checkpoint event, for the `debug` form.
    step: Option<i64>,
}

impl Emitted {
    pub(crate) fn new(event: &str, data: Value) -> Self {
        Self { event: event.to_owned(), data, step: None }
    }

    pub(crate) fn message(chunk: &Value, metadata: &Value) -> Self {
        Self::new("messages", json!([chunk, metadata]))
    }

    pub(crate) fn task(task: TaskEvent) -> Self {
        match task {
            TaskEvent::Start { id, name, triggers, step } => Self {
                event: "tasks".to_owned(),
                data: json!({ "id": id, "name": name, "input": null, "triggers": triggers }),
                step: Some(step),
            },
            TaskEvent::Result { id, name, error, step } => Self {
                event: "tasks".to_owned(),
                data: json!({ "id": id, "name": name, "error": error, "result": null, "interrupts": [] }),
                step: Some(step),
            },
            _ => Self::new("tasks", Value::Null),
        }
    }

    pub(crate) fn checkpoint(
        thread_id: &str,
        checkpoint_id: &str,
        step: i64,
        next: &[String],
        values: &Value,
    ) -> Self {
        let address = json!({ "thread_id": thread_id, "checkpoint_ns": "", "checkpoint_id": checkpoint_id });
        Self {
            event: "checkpoints".to_owned(),
            data: json!({
                "config": { "configurable": address },
                "values": values,
                "metadata": { "step": step },
                "next": next,
                "checkpoint": address,
            }),
            step: Some(step),
        }
    }
}

/// The stream modes of a request, by their API names.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ApiModes {
    values: bool,
    updates: bool,
    messages: bool,
    messages_tuple: bool,
    custom: bool,
    tasks: bool,
    checkpoints: bool,
    debug: bool,
}

impl ApiModes {
    /// Parses `stream_mode`: a name or a list of names; `values` when absent.
    pub(crate) fn parse(value: Option<&Value>) -> Result<Self, ServerError> {
        let names: Vec<&str> = match value {
            None | Some(Value::Null) => vec!["values"],
            Some(Value::String(s)) => vec![s.as_str()],
            Some(Value::Array(list)) => list
                .iter()
                .map(|v| {
                    v.as_str().ok_or_else(|| ServerError::BadRequest("stream_mode holds a non-string".into()))
                })
                .collect::<Result<_, _>>()?,
            Some(other) => return Err(ServerError::BadRequest(format!("invalid stream_mode: {other}"))),
        };
        let mut modes = Self::default();
        for name in names {
            match name {
                "values" => modes.values = true,
                "updates" => modes.updates = true,
                "messages" => modes.messages = true,
                "messages-tuple" => modes.messages_tuple = true,
                "custom" => modes.custom = true,
                "tasks" => modes.tasks = true,
                "checkpoints" => modes.checkpoints = true,
                "debug" => modes.debug = true,
                other => {
                    return Err(ServerError::Unprocessable(format!(
                        "stream_mode `{other}` is not supported (supported: values, updates, messages, \
                         messages-tuple, custom, tasks, checkpoints, debug)"
                    )))
                }
            }
        }
        Ok(modes)
    }

    /// The modes to ask the engine for.
    pub(crate) fn engine(self) -> StreamModes {
        let mut m = StreamModes::NONE;
        // Values are always needed: a checkpoint event and an interrupt carry the latest state.
        m = m.with(StreamMode::Values);
        if self.updates {
            m = m.with(StreamMode::Updates);
        }
        if self.messages || self.messages_tuple {
            m = m.with(StreamMode::Messages);
        }
        if self.custom {
            m = m.with(StreamMode::Custom);
        }
        if self.tasks || self.debug {
            m = m.with(StreamMode::Tasks);
        }
        if self.checkpoints || self.debug {
            m = m.with(StreamMode::Checkpoints);
        }
        m
    }

    /// The modes' API names, as a run records them.
    pub(crate) fn names(self) -> Vec<&'static str> {
        let all = [
            (self.values, "values"),
            (self.updates, "updates"),
            (self.messages, "messages"),
            (self.messages_tuple, "messages-tuple"),
            (self.custom, "custom"),
            (self.tasks, "tasks"),
            (self.checkpoints, "checkpoints"),
            (self.debug, "debug"),
        ];
        all.iter().filter(|(on, _)| *on).map(|(_, n)| *n).collect()
    }
}

/// Turns engine-level events into the events of the requested modes.
#[derive(Debug, Default)]
pub(crate) struct Translator {
    modes: ApiModes,
    /// Message id → the message accumulated from its chunks (the `messages` mode sends the whole
    /// message so far with each chunk).
    partial: HashMap<String, Value>,
}

impl Translator {
    pub(crate) fn new(modes: ApiModes) -> Self {
        Self { modes, partial: HashMap::new() }
    }

    /// The API events for one engine event, in order.
    pub(crate) fn translate(&mut self, e: Emitted, timestamp: &str) -> Vec<(String, Value)> {
        let m = self.modes;
        let mut out = Vec::new();
        match e.event.as_str() {
            "values" if m.values => out.push(("values".to_owned(), e.data)),
            "updates" if m.updates => out.push(("updates".to_owned(), e.data)),
            "custom" if m.custom => out.push(("custom".to_owned(), e.data)),
            "error" => out.push(("error".to_owned(), e.data)),
            "messages" => {
                if m.messages_tuple {
                    out.push(("messages".to_owned(), as_chunk(e.data.clone())));
                }
                if m.messages {
                    out.extend(self.partial_message(e.data));
                }
            }
            "tasks" | "checkpoints" => {
                let is_task = e.event == "tasks";
                if (is_task && m.tasks) || (!is_task && m.checkpoints) {
                    out.push((e.event.clone(), e.data.clone()));
                }
                if m.debug {
                    let kind = match (is_task, e.data.get("error").is_some()) {
                        (false, _) => "checkpoint",
                        (true, false) => "task",
                        (true, true) => "task_result",
                    };
                    out.push((
                        "debug".to_owned(),
                        json!({ "step": e.step, "timestamp": timestamp, "type": kind, "payload": e.data }),
                    ));
                }
            }
            _ => {}
        }
        out
    }

    fn partial_message(&mut self, tuple: Value) -> Vec<(String, Value)> {
        let Value::Array(mut pair) = tuple else { return Vec::new() };
        let metadata = pair.pop().unwrap_or(Value::Null);
        let chunk = pair.pop().unwrap_or(Value::Null);
        let id = chunk.get("id").and_then(Value::as_str).unwrap_or_default().to_owned();
        let mut out = Vec::new();
        let whole = match self.partial.get_mut(&id) {
            Some(acc) => {
                append_content(acc, &chunk);
                acc.clone()
            }
            None => {
                let mut meta = Map::new();
                meta.insert(id.clone(), json!({ "metadata": metadata }));
                out.push(("messages/metadata".to_owned(), Value::Object(meta)));
                self.partial.insert(id, chunk.clone());
                chunk
            }
        };
        out.push(("messages/partial".to_owned(), json!([whole])));
        out
    }
}

/// A `[message, metadata]` pair of the `messages-tuple` mode with its AI message typed as the
/// chunk it is (`AIMessageChunk`, with its `tool_call_chunks`), as LangGraph sends a model's
/// tokens; the `messages` mode's partial messages keep the whole message's type.
fn as_chunk(mut pair: Value) -> Value {
    if let Some(Value::Object(chunk)) = pair.get_mut(0) {
        if chunk.get("type").and_then(Value::as_str) == Some("ai") {
            chunk.insert("type".to_owned(), "AIMessageChunk".into());
            chunk.entry("tool_call_chunks").or_insert_with(|| Value::Array(Vec::new()));
        }
    }
    pair
}

/// Appends a chunk's text to the accumulated message's.
fn append_content(acc: &mut Value, chunk: &Value) {
    let add = chunk.get("content").and_then(Value::as_str).unwrap_or_default();
    if let Some(Value::String(text)) = acc.get_mut("content") {
        text.push_str(add);
    }
}
