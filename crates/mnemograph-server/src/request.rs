//! The body of a run request (`RunCreate`), and what it asks of the engine.

use mnemograph_core::{Durability, RunConfig, END, START};
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

use crate::assistant::AssistantRecord;
use crate::auth::{is_reserved, Identity};
use crate::error::ServerError;
use crate::events::ApiModes;
use crate::records::{now, RunRecord};
use crate::run_options::{self, durability_name, durability_of, RunOptions};
use crate::served::{GotoInput, ResumeInput, RunInput, ServedGraph};

/// `POST /threads/{id}/runs` and its `stream` and `wait` forms. Fields the server does not use
/// are accepted and ignored; `feedback_keys` (LangSmith's) is only kept in the run's record.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(default)]
pub struct RunCreate {
    /// The assistant (or graph id) the run names.
    pub assistant_id: String,
    pub(crate) input: Option<Value>,
    pub(crate) command: Option<CommandBody>,
    pub(crate) stream_mode: Option<Value>,
    /// The run's metadata.
    pub metadata: Option<Map<String, Value>>,
    pub(crate) config: Option<ConfigBody>,
    /// The run's static context (LangGraph's `context`), the mirror of `config.configurable`.
    pub(crate) context: Option<Map<String, Value>>,
    pub(crate) checkpoint_id: Option<String>,
    pub(crate) checkpoint: Option<CheckpointBody>,
    pub(crate) interrupt_before: Option<Value>,
    pub(crate) interrupt_after: Option<Value>,
    pub(crate) multitask_strategy: Option<String>,
    /// What to do when the thread does not exist: `create` or `reject`.
    pub if_not_exists: Option<String>,
    pub(crate) on_disconnect: Option<String>,
    pub(crate) on_completion: Option<String>,
    pub(crate) durability: Option<String>,
    /// LangGraph's older form of `durability`: `false` checkpoints only at the run's end.
    pub(crate) checkpoint_during: Option<Value>,
    /// Seconds the run waits, `pending`, before it may start.
    pub(crate) after_seconds: Option<Value>,
    /// Whether the stream carries the events of subgraphs (see [`RunCreate::options`]).
    pub(crate) stream_subgraphs: Option<Value>,
    /// Whether the run's events are kept for clients that reconnect.
    pub(crate) stream_resumable: Option<Value>,
    /// Where the run's final record is posted when it ends.
    pub(crate) webhook: Option<String>,
    /// LangSmith feedback keys: recorded in the run's `kwargs`, as LangGraph records them.
    pub(crate) feedback_keys: Option<Value>,
}

/// `command`: LangGraph's `Command`.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(default)]
pub(crate) struct CommandBody {
    pub(crate) resume: Option<Value>,
    pub(crate) goto: Option<Value>,
    pub(crate) update: Option<Value>,
}

/// `config`: the parts of a `RunnableConfig` a run uses.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(default)]
pub(crate) struct ConfigBody {
    pub(crate) configurable: Option<Map<String, Value>>,
    pub(crate) recursion_limit: Option<usize>,
}

/// `checkpoint`: a checkpoint's address.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(default)]
pub(crate) struct CheckpointBody {
    pub(crate) checkpoint_id: Option<String>,
}

/// How a run request arriving on a busy thread is handled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Multitask {
    /// Refused with 409.
    Reject,
    /// Queued after the runs in progress (the default).
    Enqueue,
    /// The runs in progress stop, their checkpoints kept.
    Interrupt,
    /// The runs in progress stop and their checkpoints are deleted.
    Rollback,
}

impl Multitask {
    pub(crate) fn parse(s: Option<&str>) -> Result<Self, ServerError> {
        Ok(match s.unwrap_or("enqueue") {
            "reject" => Self::Reject,
            "enqueue" => Self::Enqueue,
            "interrupt" => Self::Interrupt,
            "rollback" => Self::Rollback,
            other => return Err(ServerError::Unprocessable(format!("unknown multitask_strategy `{other}`"))),
        })
    }

    pub(crate) fn name(self) -> &'static str {
        match self {
            Self::Reject => "reject",
            Self::Enqueue => "enqueue",
            Self::Interrupt => "interrupt",
            Self::Rollback => "rollback",
        }
    }
}

impl RunCreate {
    /// What the run starts from. A `command.goto` naming no node of the graph (`nodes`) is refused
    /// here, before the run is created.
    pub fn run_input(&self, nodes: &[String]) -> Result<RunInput, ServerError> {
        let input = self.input.as_ref().filter(|v| !v.is_null());
        match (input, &self.command) {
            (Some(_), Some(_)) => {
                Err(ServerError::Unprocessable("a run takes `input` or `command`, not both".into()))
            }
            (Some(Value::Object(map)), None) => Ok(RunInput::Values(map.clone())),
            (Some(other), None) => Err(ServerError::Unprocessable(format!(
                "`input` must be an object of state fields, got {other}"
            ))),
            (None, Some(c)) => {
                let resume = c.resume.clone().map(resume_input);
                let update = command_update(c.update.as_ref())?;
                let goto = command_goto(c.goto.as_ref())?;
                for g in &goto {
                    let (GotoInput::Node(node) | GotoInput::Send { node, .. }) = g;
                    if node != END && !nodes.iter().any(|n| n == node) {
                        return Err(ServerError::Unprocessable(format!(
                            "`command.goto`: no node `{node}` in the graph"
                        )));
                    }
                }
                if update.is_empty() && goto.is_empty() {
                    return Ok(match resume {
                        Some(ResumeInput::ById(map)) => RunInput::ResumeById(map),
                        Some(ResumeInput::Value(value)) => RunInput::Resume(value),
                        None => RunInput::Continue,
                    });
                }
                Ok(RunInput::Command { update, goto, resume })
            }
            (None, None) => Ok(RunInput::Continue),
        }
    }

    /// The record of a new run of this request, `pending`, with `metadata` (see
    /// [`run_metadata`](Self::run_metadata)), in its record and its config as LangGraph keeps it.
    pub fn run_record(
        &self,
        run_id: &str,
        thread_id: &str,
        assistant_id: &str,
        metadata: Map<String, Value>,
        modes: ApiModes,
        strategy: Multitask,
    ) -> RunRecord {
        let command =
            self.command.as_ref().map(|c| json!({"resume": c.resume, "goto": c.goto, "update": c.update}));
        let mut configurable: Map<String, Value> = self
            .config
            .as_ref()
            .and_then(|c| c.configurable.clone())
            .unwrap_or_default()
            .into_iter()
            .filter(|(k, _)| !is_reserved(k))
            .collect();
        configurable.insert("thread_id".into(), thread_id.into());
        configurable.insert("run_id".into(), run_id.into());
        // Recorded as the run takes it, as LangGraph records it: the request's durability, else
        // what its `checkpoint_during` means, else the default. A refused one never gets here.
        let durability = durability_of(self.durability.as_deref(), self.checkpoint_during.as_ref())
            .ok()
            .flatten()
            .unwrap_or(RunConfig::default().durability);
        let kwargs = json!({
            "input": self.input,
            "command": command,
            "config": { "configurable": configurable, "metadata": metadata },
            "context": self.context,
            "stream_mode": modes.names(),
            "interrupt_before": self.interrupt_before,
            "interrupt_after": self.interrupt_after,
            "webhook": self.webhook,
            "feedback_keys": self.feedback_keys,
            "subgraphs": self.stream_subgraphs.as_ref().and_then(Value::as_bool).unwrap_or(false),
            "resumable": self.stream_resumable.as_ref().and_then(Value::as_bool).unwrap_or(false),
            "durability": durability_name(durability),
            "checkpoint_during": durability != Durability::Exit,
            // Whether the run's thread goes when it ends; the keeper that makes the thread knows.
            "temporary": false,
        });
        RunRecord {
            run_id: run_id.to_owned(),
            thread_id: thread_id.to_owned(),
            assistant_id: assistant_id.to_owned(),
            metadata,
            status: "pending",
            kwargs,
            multitask_strategy: strategy.name().to_owned(),
            created_at: now(),
            updated_at: now(),
        }
    }

    /// The run's metadata, merged as LangGraph merges it: its assistant's, under its thread's,
    /// under the request's, with `assistant_id` always the assistant's, so that no request
    /// passes for another assistant's run. The run's checkpoints carry it with the run's id.
    pub fn run_metadata(
        &self,
        assistant: &AssistantRecord,
        thread: &Map<String, Value>,
    ) -> Map<String, Value> {
        let mut metadata = assistant.metadata.clone();
        metadata.extend(thread.clone());
        metadata.extend(self.metadata.clone().unwrap_or_default());
        metadata.insert("assistant_id".into(), assistant.assistant_id.clone().into());
        metadata
    }

    /// The run's options, checked for a run of `graph`; a malformed one is unprocessable (422).
    ///
    /// `stream_subgraphs` is taken for a graph without subgraphs, whose stream is then what
    /// LangGraph streams with it, and refused for one with subgraphs: the engine's stream does
    /// not carry a subgraph's own events. `stream_resumable` is taken as a flag: every run's
    /// events are kept for reconnecting clients here, resumable or not.
    pub(crate) fn options(&self, graph: &dyn ServedGraph) -> Result<RunOptions, ServerError> {
        if run_options::flag(self.stream_subgraphs.as_ref(), "stream_subgraphs")? && graph.has_subgraphs() {
            return Err(ServerError::Unprocessable(
                "`stream_subgraphs` is not supported for a graph with subgraphs: the engine does not stream \
                 a subgraph's own events"
                    .into(),
            ));
        }
        run_options::flag(self.stream_resumable.as_ref(), "stream_resumable")?;
        durability_of(self.durability.as_deref(), self.checkpoint_during.as_ref())?;
        Ok(RunOptions {
            delay: run_options::delay(self.after_seconds.as_ref())?,
            delete_on_completion: run_options::delete_on_completion(self.on_completion.as_deref())?,
        })
    }

    /// The stream modes it asks for; 422 for one the server does not stream.
    pub fn modes(&self) -> Result<ApiModes, ServerError> {
        ApiModes::parse(self.stream_mode.as_ref())
    }

    /// The engine's configuration of the run: the thread, the checkpoint to start from, limits,
    /// breakpoints, and `metadata` merged into every checkpoint's metadata.
    ///
    /// The request's `config.configurable` values reach the nodes
    /// ([`Runtime::configurable`](mnemograph_core::Runtime::configurable)), but for the thread and
    /// checkpoint, which the run's address sets, and the caller's keys, which only `user` sets.
    pub fn run_config(
        &self,
        thread_id: &str,
        metadata: &Map<String, Value>,
        nodes: &[String],
        user: Option<&Identity>,
    ) -> Result<RunConfig, ServerError> {
        let mut config = RunConfig::thread(thread_id);
        config.metadata.clone_from(metadata);
        let configurable = self.config.as_ref().and_then(|c| c.configurable.as_ref());
        for (k, v) in configurable.into_iter().flatten() {
            if !matches!(k.as_str(), "thread_id" | "checkpoint_id" | "checkpoint_ns" | "run_id")
                && !is_reserved(k)
            {
                config.configurable.insert(k.clone(), v.clone());
            }
        }
        if let Some(user) = user {
            user.configure(&mut config.configurable);
        }
        let checkpoint_id = self
            .checkpoint_id
            .clone()
            .or_else(|| self.checkpoint.as_ref().and_then(|c| c.checkpoint_id.clone()))
            .or_else(|| configurable.and_then(|c| c.get("checkpoint_id")?.as_str().map(str::to_owned)));
        if let Some(id) = checkpoint_id {
            config = config.checkpoint_id(id);
        }
        if let Some(limit) = self.config.as_ref().and_then(|c| c.recursion_limit) {
            config = config.recursion_limit(limit);
        }
        config = config.interrupt_before(node_list(self.interrupt_before.as_ref(), nodes)?);
        config = config.interrupt_after(node_list(self.interrupt_after.as_ref(), nodes)?);
        if let Some(d) = durability_of(self.durability.as_deref(), self.checkpoint_during.as_ref())? {
            config = config.durability(d);
        }
        Ok(config)
    }
}

/// `interrupt_before`/`interrupt_after`: a list of nodes, or `"*"` for all of the graph's own
/// nodes (not `__start__`, which LangGraph hides from `"*"`).
fn node_list(value: Option<&Value>, nodes: &[String]) -> Result<Vec<String>, ServerError> {
    match value {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::String(s)) if s == "*" => {
            Ok(nodes.iter().filter(|n| n.as_str() != START && n.as_str() != END).cloned().collect())
        }
        Some(Value::Array(list)) => list
            .iter()
            .map(|v| {
                let name =
                    v.as_str().ok_or_else(|| ServerError::Unprocessable(format!("not a node name: {v}")))?;
                if nodes.iter().any(|n| n == name) {
                    Ok(name.to_owned())
                } else {
                    Err(ServerError::Unprocessable(format!("no node `{name}` in the graph")))
                }
            })
            .collect(),
        Some(other) => Err(ServerError::Unprocessable(format!("invalid breakpoint list: {other}"))),
    }
}

/// `command.resume`: answers by interrupt id when it is an object keyed by interrupt ids (as
/// LangGraph tells them apart), one value otherwise.
fn resume_input(value: Value) -> ResumeInput {
    match value {
        Value::Object(map) if !map.is_empty() && map.keys().all(|k| is_interrupt_id(k)) => {
            ResumeInput::ById(map)
        }
        value => ResumeInput::Value(value),
    }
}

/// `command.update`: an object of state fields, or a list of `[field, value]` pairs (LangGraph's
/// `Command._update_as_tuples`), as `(field, value)` pairs in the order given.
fn command_update(update: Option<&Value>) -> Result<Vec<(String, Value)>, ServerError> {
    match update {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Object(map)) => Ok(map.iter().map(|(k, v)| (k.clone(), v.clone())).collect()),
        Some(Value::Array(pairs)) => pairs
            .iter()
            .map(|pair| match pair.as_array().map(Vec::as_slice) {
                Some([Value::String(k), v]) => Ok((k.clone(), v.clone())),
                _ => Err(ServerError::Unprocessable(format!(
                    "`command.update` as a list takes [field, value] pairs, got {pair}"
                ))),
            })
            .collect(),
        Some(other) => Err(ServerError::Unprocessable(format!(
            "`command.update` must be an object of state fields or a list of [field, value] pairs, got {other}"
        ))),
    }
}

/// `command.goto`: a node name, a `{"node", "input"}` object (a `Send`), or a list of them.
fn command_goto(goto: Option<&Value>) -> Result<Vec<GotoInput>, ServerError> {
    let one = |v: &Value| {
        match v {
        Value::String(node) => Ok(GotoInput::Node(node.clone())),
        Value::Object(send) => match (send.get("node"), send.get("input")) {
            (Some(Value::String(node)), Some(Value::Object(input))) => {
                Ok(GotoInput::Send { node: node.clone(), input: input.clone() })
            }
            _ => Err(ServerError::Unprocessable(format!(
                "a `Send` in `command.goto` takes a `node` name and an `input` object of state fields, got {v}"
            ))),
        },
        other => Err(ServerError::Unprocessable(format!(
            "`command.goto` takes node names and {{\"node\", \"input\"}} objects, got {other}"
        ))),
    }
    };
    match goto {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(list)) => list.iter().map(one).collect(),
        Some(v) => Ok(vec![one(v)?]),
    }
}

/// LangGraph's interrupt ids: 32 lowercase hex digits.
fn is_interrupt_id(s: &str) -> bool {
    s.len() == 32 && s.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn input(command: &Value) -> Result<RunInput, ServerError> {
        let body: RunCreate =
            serde_json::from_value(json!({"assistant_id": "a", "command": command})).unwrap();
        body.run_input(&["a".to_owned(), "b".to_owned()])
    }

    #[test]
    fn command_update_goto_and_resume_map_to_a_command_input() {
        let Ok(RunInput::Command { update, goto, resume }) =
            input(&json!({"update": {"log": ["x"], "n": 1}, "goto": "b", "resume": "yes"}))
        else {
            panic!("a command input");
        };
        assert_eq!(update, [("log".to_owned(), json!(["x"])), ("n".to_owned(), json!(1))]);
        assert!(matches!(&goto[..], [GotoInput::Node(n)] if n == "b"));
        assert!(matches!(resume, Some(ResumeInput::Value(v)) if v == "yes"));
    }

    #[test]
    fn command_update_pairs_and_sends() {
        let Ok(RunInput::Command { update, goto, resume: None }) = input(&json!({
            "update": [["log", ["p1"]], ["log", ["p2"]]],
            "goto": ["a", {"node": "b", "input": {"log": ["s"]}}],
        })) else {
            panic!("a command input");
        };
        assert_eq!(update, [("log".to_owned(), json!(["p1"])), ("log".to_owned(), json!(["p2"]))]);
        assert!(matches!(&goto[..], [GotoInput::Node(a), GotoInput::Send { node, input }]
            if a == "a" && node == "b" && input["log"] == json!(["s"])));
    }

    #[test]
    fn a_command_with_only_resume_stays_a_resume() {
        assert!(matches!(input(&json!({"resume": 1})), Ok(RunInput::Resume(_))));
        assert!(matches!(input(&json!({})), Ok(RunInput::Continue)));
    }

    #[test]
    fn malformed_commands_are_unprocessable() {
        for bad in [
            json!({"update": 3}),
            json!({"update": [["log"]]}),
            json!({"goto": 5}),
            json!({"goto": {"node": "b"}}),
            json!({"goto": "nowhere"}),
            json!({"goto": [{"node": "nowhere", "input": {}}]}),
        ] {
            let err = input(&bad).err().unwrap_or_else(|| panic!("{bad} is refused"));
            assert_eq!(err.status(), axum::http::StatusCode::UNPROCESSABLE_ENTITY, "{bad}: {err}");
        }
    }
}
