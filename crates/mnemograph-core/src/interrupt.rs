//! Interrupts: a run that stops to wait for a human is an outcome, not an error.

use std::ops::{Deref, DerefMut};

use mnemograph_checkpoint::__private as serde_ext;

/// A pending interrupt (LangGraph's `Interrupt(value, id)`).
///
/// In JSON it is the map `{"value", "id"}`. In a checkpoint's msgpack it is what Python writes:
/// the `langgraph.types.Interrupt` dataclass as ext 2 with the keyword arguments `value`, `id`
/// and `response_schema` (always `None` here), so Python reads it back as an `Interrupt` object.
#[derive(Debug, Clone, PartialEq, serde::Deserialize)]
pub struct Interrupt {
    /// What the node asked for.
    pub value: serde_json::Value,
    /// Stable id, used to resume this interrupt specifically.
    pub id: String,
}

impl serde::Serialize for Interrupt {
    fn serialize<Ser: serde::Serializer>(&self, serializer: Ser) -> Result<Ser::Ok, Ser::Error> {
        use serde::ser::{Error as _, SerializeStruct};
        if serializer.is_human_readable() {
            let mut map = serializer.serialize_struct("Interrupt", 2)?;
            map.serialize_field("value", &self.value)?;
            map.serialize_field("id", &self.id)?;
            return map.end();
        }
        /// Python's dataclass fields, in declaration order.
        #[derive(serde::Serialize)]
        struct Kwargs<'a> {
            value: &'a serde_json::Value,
            id: &'a str,
            response_schema: (),
        }
        let kwargs = Kwargs { value: &self.value, id: &self.id, response_schema: () };
        let payload = serde_ext::langgraph_dataclass("Interrupt", &kwargs).map_err(Ser::Error::custom)?;
        serde_ext::ExtRef { code: serde_ext::EXT_CONSTRUCTOR_KW_ARGS, data: &payload }.serialize(serializer)
    }
}

/// A static breakpoint the run stopped at (`interrupt_before` / `interrupt_after`).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Breakpoint {
    /// Stopped before these nodes ran; resuming runs them.
    Before(Vec<String>),
    /// Stopped after these nodes ran; resuming continues with their successors.
    After(Vec<String>),
}

/// The result of a run: the final state, plus the interrupt or breakpoint it stopped at (none when
/// the run completed). Derefs to the state.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct RunOutcome<S> {
    /// The state when the run returned.
    pub state: S,
    /// Interrupts that stopped the run; empty when it ran to completion.
    pub interrupts: Vec<Interrupt>,
    /// The static breakpoint that stopped the run, if any.
    pub breakpoint: Option<Breakpoint>,
    /// The fields LangGraph would read as the run's output (a subgraph writes only these back).
    pub(crate) available: crate::state::FieldSet,
}

impl<S: crate::State> RunOutcome<S> {
    pub(crate) fn done(state: S) -> Self {
        let mut available = crate::state::FieldSet::EMPTY;
        (0..S::FIELDS.len()).for_each(|f| available.insert(f));
        Self { state, interrupts: Vec::new(), breakpoint: None, available }
    }
    /// Whether the run stopped early, at an interrupt or a breakpoint.
    pub fn is_interrupted(&self) -> bool {
        !self.interrupts.is_empty() || self.breakpoint.is_some()
    }
    /// The state, dropping the interrupts.
    pub fn into_state(self) -> S {
        self.state
    }
}

impl<S> Deref for RunOutcome<S> {
    type Target = S;
    fn deref(&self) -> &S {
        &self.state
    }
}

impl<S> DerefMut for RunOutcome<S> {
    fn deref_mut(&mut self) -> &mut S {
        &mut self.state
    }
}

/// A resume value for a run stopped at [`Runtime::interrupt`](crate::Runtime::interrupt)
/// (LangGraph's `Command(resume=...)`).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Resume {
    /// One value for the single pending interrupt.
    Value(serde_json::Value),
    /// Values by interrupt id, for several pending interrupts.
    ById(std::collections::BTreeMap<String, serde_json::Value>),
}

impl Resume {
    /// A value for the single pending interrupt.
    pub fn value(v: impl serde::Serialize) -> Self {
        Self::Value(serde_json::to_value(v).unwrap_or(serde_json::Value::Null))
    }
    /// Values by interrupt id.
    pub fn by_id<I, K, V>(pairs: I) -> Self
    where
        I: IntoIterator<Item = (K, V)>,
        K: Into<String>,
        V: serde::Serialize,
    {
        Self::ById(
            pairs
                .into_iter()
                .map(|(k, v)| (k.into(), serde_json::to_value(v).unwrap_or(serde_json::Value::Null)))
                .collect(),
        )
    }
}

/// What [`Runtime::interrupt`](crate::Runtime::interrupt) returns instead of a value: propagate it
/// with `?` so the run stops there. The engine turns [`NodeInterrupt::Pending`] into an interrupted
/// [`RunOutcome`], not an error.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum NodeInterrupt {
    /// The node asks for input; the run stops and reports this interrupt.
    #[error("node interrupted (id {})", .0.id)]
    Pending(Interrupt),
    /// A subgraph run as this node stopped at these interrupts.
    #[error("subgraph interrupted ({} interrupts)", .0.len())]
    Subgraph(Vec<Interrupt>),
    /// A resume value was given but is not of the type the node asked for.
    #[error("resume value for interrupt {id} does not fit: {reason}")]
    InvalidResume {
        /// The interrupt.
        id: String,
        /// Why it does not decode.
        reason: String,
    },
}

/// The run's answer to a single pending interrupt (LangGraph's null resume): taken by the first
/// task whose `interrupt()` call has no answer of its own, and shared by every task of the run.
pub(crate) type NullResume = std::sync::Arc<parking_lot::Mutex<Option<serde_json::Value>>>;

/// Per-task interrupt bookkeeping (LangGraph's scratchpad): the answers this task has received,
/// the run's unclaimed answer, and how many `interrupt()` calls it made in this attempt.
#[derive(Debug)]
pub(crate) struct Scratchpad {
    /// The namespace of the graph running the task.
    pub(crate) parent_ns: std::sync::Arc<str>,
    pub(crate) node: std::sync::Arc<str>,
    pub(crate) task_id: std::sync::Arc<str>,
    /// Answers to this task's `interrupt()` calls, in call order.
    pub(crate) resume: Vec<serde_json::Value>,
    /// The run's answer that no task has taken yet.
    pub(crate) null_resume: NullResume,
    /// The run's answers by interrupt id, handed down to subgraphs.
    pub(crate) resume_map: Option<std::sync::Arc<std::collections::BTreeMap<String, serde_json::Value>>>,
    pub(crate) counter: usize,
    /// How many of `resume` the task has used: what its `__resume__` write records.
    pub(crate) used: usize,
}

impl Scratchpad {
    /// The task's namespace, `"<node>:<task_id>"` (below `parent|` in a subgraph): the input of
    /// interrupt ids and a subgraph's own namespace. Built on demand: most tasks never need it.
    pub(crate) fn task_ns(&self) -> String {
        crate::stream::task_namespace(&self.parent_ns, &self.node, &self.task_id)
    }

    /// The k-th `interrupt()` call of the task: its own answer, else the run's unclaimed answer,
    /// else a new interrupt.
    pub(crate) fn next(&mut self, value: serde_json::Value) -> Result<serde_json::Value, Interrupt> {
        let k = self.counter;
        self.counter += 1;
        if let Some(v) = self.resume.get(k) {
            self.used = self.used.max(k + 1);
            return Ok(v.clone());
        }
        if let Some(v) = self.null_resume.lock().take() {
            self.resume.push(v.clone());
            self.used = self.resume.len();
            return Ok(v);
        }
        // LangGraph keys the id by how many answers the task already has.
        Err(Interrupt { value, id: interrupt_id(&self.task_ns(), self.resume.len()) })
    }

    /// The answers the task used, as LangGraph records them in its `__resume__` write; `None`
    /// when it used none.
    pub(crate) fn resume_write(&self) -> Option<Vec<serde_json::Value>> {
        (self.used > 0).then(|| self.resume[..self.used].to_vec())
    }
}

/// LangGraph's interrupt id: xxh3-128 of the task namespace for the first call of a task, and of
/// `"{task_ns}|{k}"` for the k-th later one, as 32 hex digits.
pub(crate) fn interrupt_id(task_ns: &str, k: usize) -> String {
    let h = if k == 0 {
        xxhash_rust::xxh3::xxh3_128(task_ns.as_bytes())
    } else {
        xxhash_rust::xxh3::xxh3_128(format!("{task_ns}|{k}").as_bytes())
    };
    format!("{h:032x}")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `[Interrupt(value={"q": 1}, id="abc")]`, as Python stores a node's `__interrupt__` write.
    const INTERRUPT_LIST: &str =
        "91c73e0293af6c616e6767726170682e7479706573a9496e7465727275707483a576616c756581a17101\
a26964a3616263af726573706f6e73655f736368656d61c0";

    #[test]
    fn interrupts_encode_as_pythons_interrupt_objects() {
        use crate::checkpoint::serde::{dumps_typed, loads_typed};
        use crate::value::ChannelValue;

        let stored: Vec<u8> = (0..INTERRUPT_LIST.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&INTERRUPT_LIST[i..i + 2], 16).unwrap())
            .collect();
        let list = vec![Interrupt { value: serde_json::json!({"q": 1}), id: "abc".to_owned() }];
        assert_eq!(
            dumps_typed(&ChannelValue::new(list.clone())).unwrap(),
            ("msgpack".to_owned(), stored.clone())
        );
        let back: Vec<Interrupt> = loads_typed("msgpack", &stored).unwrap().decode().unwrap();
        assert_eq!(back, list);
        // In JSON an interrupt stays the plain map.
        assert_eq!(
            serde_json::to_value(&list[0]).unwrap(),
            serde_json::json!({"value": {"q": 1}, "id": "abc"})
        );
    }

    #[test]
    fn scratchpad_returns_resumes_in_order_then_interrupts() {
        let mut sp = Scratchpad {
            parent_ns: "".into(),
            node: "ask".into(),
            task_id: "abc".into(),
            resume: vec![1.into()],
            null_resume: NullResume::default(),
            resume_map: None,
            counter: 0,
            used: 0,
        };
        assert_eq!(sp.task_ns(), "ask:abc");
        assert_eq!(sp.resume_write(), None);
        assert_eq!(sp.next("q1".into()), Ok(1.into()));
        assert_eq!(sp.resume_write(), Some(vec![1.into()]));
        let i = sp.next("q2".into()).unwrap_err();
        assert_eq!(i.value, "q2");
        assert_eq!(i.id, interrupt_id("ask:abc", 1));
        // The run's unclaimed answer goes to the first call that has none, once.
        *sp.null_resume.lock() = Some(2.into());
        sp.counter = 1;
        assert_eq!(sp.next("q2".into()), Ok(2.into()));
        assert_eq!(sp.resume_write(), Some(vec![1.into(), 2.into()]));
        assert!(sp.next("q3".into()).is_err());
        assert_ne!(interrupt_id("ask:abc", 0), interrupt_id("ask:abc", 1));
        // Computed with Python's `xxhash.xxh3_128_hexdigest`.
        assert_eq!(interrupt_id("ask:abc", 0), "846aba86b79cd20e959e8b03c195dfbd");
        assert_eq!(interrupt_id("ask:abc", 1), "97111a6ac14643f60b29bc8450abd1a4");
    }
}
