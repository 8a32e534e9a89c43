//! The body of a run request (`RunCreate`), and what it asks of the engine.

use mnemograph_core::{Durability, RunConfig};
use serde::Deserialize;
use serde_json::{Map, Value};

use crate::error::ServerError;
use crate::events::ApiModes;
use crate::served::RunInput;

/// `POST /threads/{id}/runs` and its `stream` and `wait` forms. Fields the server does not use
/// (webhooks, feedback keys, ...) are accepted and ignored.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub(crate) struct RunCreate {
    pub(crate) assistant_id: String,
    pub(crate) input: Option<Value>,
    pub(crate) command: Option<CommandBody>,
    pub(crate) stream_mode: Option<Value>,
    pub(crate) metadata: Option<Map<String, Value>>,
    pub(crate) config: Option<ConfigBody>,
    pub(crate) checkpoint_id: Option<String>,
    pub(crate) checkpoint: Option<CheckpointBody>,
    pub(crate) interrupt_before: Option<Value>,
    pub(crate) interrupt_after: Option<Value>,
    pub(crate) multitask_strategy: Option<String>,
    pub(crate) if_not_exists: Option<String>,
    pub(crate) on_disconnect: Option<String>,
    pub(crate) on_completion: Option<String>,
    pub(crate) durability: Option<String>,
}

/// `command`: LangGraph's `Command`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub(crate) struct CommandBody {
    pub(crate) resume: Option<Value>,
    pub(crate) goto: Option<Value>,
    pub(crate) update: Option<Value>,
}

/// `config`: the parts of a `RunnableConfig` a run uses.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub(crate) struct ConfigBody {
    pub(crate) configurable: Option<Map<String, Value>>,
    pub(crate) recursion_limit: Option<usize>,
}

/// `checkpoint`: a checkpoint's address.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub(crate) struct CheckpointBody {
    pub(crate) checkpoint_id: Option<String>,
}

/// How a run request arriving on a busy thread is handled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Multitask {
    Reject,
    Enqueue,
    Interrupt,
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
    /// What the run starts from.
    pub(crate) fn run_input(&self) -> Result<RunInput, ServerError> {
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
                if c.goto.as_ref().is_some_and(|v| !v.is_null())
                    || c.update.as_ref().is_some_and(|v| !v.is_null())
                {
                    return Err(ServerError::Unprocessable(
                        "`command.goto` and `command.update` are not supported as run input; use \
                         `command.resume`, or update the state first (POST /threads/{id}/state)"
                            .into(),
                    ));
                }
                match c.resume.clone() {
                    Some(Value::Object(map)) if !map.is_empty() && map.keys().all(|k| is_interrupt_id(k)) => {
                        Ok(RunInput::ResumeById(map))
                    }
                    Some(value) => Ok(RunInput::Resume(value)),
                    None => Ok(RunInput::Continue),
                }
            }
            (None, None) => Ok(RunInput::Continue),
        }
    }

    /// The stream modes asked for.
    pub(crate) fn modes(&self) -> Result<ApiModes, ServerError> {
        ApiModes::parse(self.stream_mode.as_ref())
    }

    /// The engine's configuration of the run: the thread, the checkpoint to start from, limits,
    /// breakpoints, and `metadata` merged into every checkpoint's metadata.
    pub(crate) fn run_config(
        &self,
        thread_id: &str,
        metadata: &Map<String, Value>,
        nodes: &[String],
    ) -> Result<RunConfig, ServerError> {
        let mut config = RunConfig::thread(thread_id);
        for (k, v) in metadata {
            config = config.metadata(k.clone(), v.clone());
        }
        let configurable = self.config.as_ref().and_then(|c| c.configurable.as_ref());
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
        if let Some(d) = &self.durability {
            config = config.durability(match d.as_str() {
                "sync" => Durability::Sync,
                "async" => Durability::Async,
                "exit" => Durability::Exit,
                other => return Err(ServerError::Unprocessable(format!("unknown durability `{other}`"))),
            });
        }
        Ok(config)
    }
}

/// `interrupt_before`/`interrupt_after`: a list of nodes, or `"*"` for all.
fn node_list(value: Option<&Value>, nodes: &[String]) -> Result<Vec<String>, ServerError> {
    match value {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::String(s)) if s == "*" => Ok(nodes.to_vec()),
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

/// LangGraph's interrupt ids: 32 lowercase hex digits.
fn is_interrupt_id(s: &str) -> bool {
    s.len() == 32 && s.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}
