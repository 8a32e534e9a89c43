//! The [`Message`] type: LangChain's `SystemMessage`, `HumanMessage`, `AIMessage`,
//! `ToolMessage` and `RemoveMessage` in one cheaply clonable value.

use std::fmt;
use std::ops::Deref;
use std::sync::{Arc, OnceLock};

use serde_json::{Map, Value};

use super::content::Content;
use super::kind::MessageType;
use super::tool::{InvalidToolCall, ToolCall, ToolStatus, UsageMetadata};
use super::REMOVE_ALL_MESSAGES;

/// One chat message, or a [`RemoveMessage`](MessageType::Remove) instruction.
///
/// The data sits behind an [`Arc`]: the engine clones the whole `Vec<Message>` of a
/// state every superstep, so a clone is one reference-count increment. Setters copy the
/// data only if it is shared (`Arc::make_mut`).
///
/// Kind-specific fields follow LangChain: only AI messages carry tool calls and usage,
/// only tool messages carry `tool_call_id`, `artifact` and `status`. The builders for
/// those fields do nothing on other kinds, and the accessors return empty values, so a
/// message always serializes to what its LangChain class would.
///
/// Serde uses LangChain's `model_dump()` map (see the module docs), so provider extras
/// in `additional_kwargs` and unknown top-level keys survive a round trip.
///
/// # Example
///
/// ```
/// # use mnemograph_checkpoint::messages::{Message, MessageType, ToolCall};
/// let ai = Message::ai("")
///     .with_id("a1")
///     .with_tool_calls(vec![ToolCall::new("search", serde_json::json!({"q": "rust"}), "c1")]);
/// let answer = Message::tool("3 results", "c1");
/// assert_eq!(ai.kind(), MessageType::Ai);
/// assert_eq!(ai.tool_calls()[0].name, "search");
/// assert_eq!(answer.tool_call_id(), Some("c1"));
/// ```
#[derive(Clone)]
pub struct Message {
    /// Shared, copy-on-write payload.
    inner: Arc<Shared>,
}

/// What clones of a message share: its fields, and their msgpack encoding once it is made.
///
/// A saver writing a conversation encodes the whole list at every new version of the channel,
/// so each message would be encoded again at every step of every later turn (hundreds of times
/// in a long thread). The fields never change behind a `Message` (every edit goes through
/// [`Message::data_mut`], which forgets the encoding), so the bytes are made once and copied after.
pub(super) struct Shared {
    /// The fields.
    data: MessageData,
    /// LangGraph's ext 5 payload of `data`, once encoded.
    packed: OnceLock<Box<[u8]>>,
}

impl Clone for Shared {
    /// Clones only the fields: a copy is made to be edited, which makes a new encoding.
    fn clone(&self) -> Self {
        Self { data: self.data.clone(), packed: OnceLock::new() }
    }
}

impl Deref for Shared {
    type Target = MessageData;
    fn deref(&self) -> &MessageData {
        &self.data
    }
}

/// The fields of a [`Message`]; kind-specific ones stay at their defaults for other kinds.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct MessageData {
    /// Which LangChain class this is.
    pub(super) kind: MessageType,
    /// `content`.
    pub(super) content: Content,
    /// `additional_kwargs`: provider extras such as `reasoning_content`.
    pub(super) additional_kwargs: Map<String, Value>,
    /// `response_metadata`: model name, finish reason, headers...
    pub(super) response_metadata: Map<String, Value>,
    /// `name`: optional participant name.
    pub(super) name: Option<String>,
    /// `id`: assigned by `add_messages` when missing.
    pub(super) id: Option<String>,
    /// AI only: parsed tool calls.
    pub(super) tool_calls: Vec<ToolCall>,
    /// AI only: tool calls that failed to parse.
    pub(super) invalid_tool_calls: Vec<InvalidToolCall>,
    /// AI only: token usage.
    pub(super) usage_metadata: Option<UsageMetadata>,
    /// Tool only: the id of the call this answers (`None` only if decoded without one).
    pub(super) tool_call_id: Option<String>,
    /// Tool only: output kept for the application but not sent to the model.
    pub(super) artifact: Value,
    /// Tool only: whether the tool succeeded.
    pub(super) status: ToolStatus,
    /// Top-level keys this crate does not model, kept so they are written back.
    pub(super) extra: Map<String, Value>,
}

impl MessageData {
    /// Empty data of the given kind, the defaults LangChain's constructors use.
    pub(super) fn new(kind: MessageType, content: Content) -> Self {
        Self {
            kind,
            content,
            additional_kwargs: Map::new(),
            response_metadata: Map::new(),
            name: None,
            id: None,
            tool_calls: Vec::new(),
            invalid_tool_calls: Vec::new(),
            usage_metadata: None,
            tool_call_id: None,
            artifact: Value::Null,
            status: ToolStatus::Success,
            extra: Map::new(),
        }
    }
}

impl Message {
    /// Wraps finished data.
    pub(super) fn from_data(data: MessageData) -> Self {
        Self { inner: Arc::new(Shared { data, packed: OnceLock::new() }) }
    }

    /// Read access to the fields, for the serializer.
    pub(super) fn data(&self) -> &MessageData {
        &self.inner.data
    }

    /// The msgpack payload `encode` makes of this message, made on the first call and remembered
    /// by every clone until one is edited.
    pub(super) fn packed<E>(&self, encode: impl FnOnce() -> Result<Vec<u8>, E>) -> Result<&[u8], E> {
        if let Some(bytes) = self.inner.packed.get() {
            return Ok(bytes);
        }
        let bytes = encode()?.into_boxed_slice();
        // Two threads may encode at once; both made the same bytes, and the first is kept.
        Ok(self.inner.packed.get_or_init(|| bytes))
    }

    /// This message with `payload`, the ext 5 payload it was decoded from, as its encoding.
    ///
    /// Python writes the maps inside a message (`response_metadata`, content blocks, tool call
    /// arguments) in their insertion order, which `serde_json::Map` does not keep unless the
    /// program enables serde_json's `preserve_order`. Writing back the bytes read keeps a message
    /// that was read and not edited exactly as Python stored it; the first edit forgets them like
    /// any encoding. Does nothing when the message is shared or already encoded.
    pub(crate) fn with_payload(mut self, payload: Vec<u8>) -> Self {
        if let Some(shared) = Arc::get_mut(&mut self.inner) {
            let _ = shared.packed.set(payload.into_boxed_slice());
        }
        self
    }

    /// Write access; copies the data first if another clone shares it, and forgets the encoding.
    fn data_mut(&mut self) -> &mut MessageData {
        let shared = Arc::make_mut(&mut self.inner);
        shared.packed.take();
        &mut shared.data
    }

    /// Applies `edit` when the message is of `kind`, otherwise leaves it unchanged.
    fn edit_if(mut self, kind: MessageType, edit: impl FnOnce(&mut MessageData)) -> Self {
        if self.inner.kind == kind {
            edit(self.data_mut());
        }
        self
    }

    /// A `SystemMessage`.
    pub fn system(content: impl Into<Content>) -> Self {
        Self::from_data(MessageData::new(MessageType::System, content.into()))
    }

    /// A `HumanMessage`.
    pub fn human(content: impl Into<Content>) -> Self {
        Self::from_data(MessageData::new(MessageType::Human, content.into()))
    }

    /// An `AIMessage`; add tool calls with [`with_tool_calls`](Self::with_tool_calls).
    pub fn ai(content: impl Into<Content>) -> Self {
        Self::from_data(MessageData::new(MessageType::Ai, content.into()))
    }

    /// A `ToolMessage` answering the tool call with id `tool_call_id`.
    pub fn tool(content: impl Into<Content>, tool_call_id: impl Into<String>) -> Self {
        let mut data = MessageData::new(MessageType::Tool, content.into());
        data.tool_call_id = Some(tool_call_id.into());
        Self::from_data(data)
    }

    /// A `RemoveMessage`: passed to [`add_messages`](crate::messages::add_messages), it
    /// deletes the message with this id.
    pub fn remove(id: impl Into<String>) -> Self {
        let mut data = MessageData::new(MessageType::Remove, Content::default());
        data.id = Some(id.into());
        Self::from_data(data)
    }

    /// `RemoveMessage(id=REMOVE_ALL_MESSAGES)`: passed to
    /// [`add_messages`](crate::messages::add_messages), it drops every earlier message,
    /// so `[Message::remove_all(), kept..]` replaces the whole history.
    pub fn remove_all() -> Self {
        Self::remove(REMOVE_ALL_MESSAGES)
    }

    /// Sets the id.
    #[must_use]
    pub fn with_id(mut self, id: impl Into<String>) -> Self {
        self.data_mut().id = Some(id.into());
        self
    }

    /// Sets the participant `name`.
    #[must_use]
    pub fn with_name(mut self, name: impl Into<String>) -> Self {
        self.data_mut().name = Some(name.into());
        self
    }

    /// Sets the tool calls of an AI message; does nothing on other kinds.
    #[must_use]
    pub fn with_tool_calls(self, tool_calls: Vec<ToolCall>) -> Self {
        self.edit_if(MessageType::Ai, |d| d.tool_calls = tool_calls)
    }

    /// Sets the invalid tool calls of an AI message; does nothing on other kinds.
    #[must_use]
    pub fn with_invalid_tool_calls(self, invalid: Vec<InvalidToolCall>) -> Self {
        self.edit_if(MessageType::Ai, |d| d.invalid_tool_calls = invalid)
    }

    /// Sets the token usage of an AI message; does nothing on other kinds.
    #[must_use]
    pub fn with_usage(self, usage: UsageMetadata) -> Self {
        self.edit_if(MessageType::Ai, |d| d.usage_metadata = Some(usage))
    }

    /// Sets the status of a tool message; does nothing on other kinds.
    #[must_use]
    pub fn with_status(self, status: ToolStatus) -> Self {
        self.edit_if(MessageType::Tool, |d| d.status = status)
    }

    /// Sets the artifact of a tool message; does nothing on other kinds.
    #[must_use]
    pub fn with_artifact(self, artifact: Value) -> Self {
        self.edit_if(MessageType::Tool, |d| d.artifact = artifact)
    }

    /// Replaces `additional_kwargs` (provider extras such as `reasoning_content`).
    #[must_use]
    pub fn with_additional_kwargs(mut self, kwargs: Map<String, Value>) -> Self {
        self.data_mut().additional_kwargs = kwargs;
        self
    }

    /// Replaces `response_metadata`.
    #[must_use]
    pub fn with_response_metadata(mut self, metadata: Map<String, Value>) -> Self {
        self.data_mut().response_metadata = metadata;
        self
    }

    /// Which LangChain class this is.
    pub fn kind(&self) -> MessageType {
        self.inner.kind
    }

    /// The Python `(module, class)` LangChain serializes this message as, e.g.
    /// `("langchain_core.messages.human", "HumanMessage")`.
    pub fn lc_class(&self) -> (&'static str, &'static str) {
        self.inner.kind.lc_class()
    }

    /// The id, if assigned.
    pub fn id(&self) -> Option<&str> {
        self.inner.id.as_deref()
    }

    /// Sets the id in place (copying the data first if it is shared).
    pub fn set_id(&mut self, id: String) {
        self.data_mut().id = Some(id);
    }

    /// The content.
    pub fn content(&self) -> &Content {
        &self.inner.content
    }

    /// The textual part of the content; see [`Content::text`].
    pub fn text(&self) -> String {
        self.inner.content.text()
    }

    /// The participant name.
    pub fn name(&self) -> Option<&str> {
        self.inner.name.as_deref()
    }

    /// Tool calls requested by an AI message; empty for other kinds.
    pub fn tool_calls(&self) -> &[ToolCall] {
        &self.inner.tool_calls
    }

    /// Tool calls that failed to parse; empty except on AI messages.
    pub fn invalid_tool_calls(&self) -> &[InvalidToolCall] {
        &self.inner.invalid_tool_calls
    }

    /// The id of the call a tool message answers; `None` for other kinds.
    pub fn tool_call_id(&self) -> Option<&str> {
        self.inner.tool_call_id.as_deref()
    }

    /// The status of a tool message; `None` for other kinds.
    pub fn status(&self) -> Option<ToolStatus> {
        (self.inner.kind == MessageType::Tool).then_some(self.inner.status)
    }

    /// The artifact of a tool message, if it is not `null`.
    pub fn artifact(&self) -> Option<&Value> {
        Some(&self.inner.artifact).filter(|artifact| !artifact.is_null())
    }

    /// Token usage of an AI message, if reported.
    pub fn usage(&self) -> Option<&UsageMetadata> {
        self.inner.usage_metadata.as_ref()
    }

    /// `additional_kwargs`.
    pub fn additional_kwargs(&self) -> &Map<String, Value> {
        &self.inner.additional_kwargs
    }

    /// `response_metadata`.
    pub fn response_metadata(&self) -> &Map<String, Value> {
        &self.inner.response_metadata
    }

    /// Top-level keys read from serialized data that this crate does not model; they
    /// are written back after the known keys.
    pub fn extra(&self) -> &Map<String, Value> {
        &self.inner.extra
    }

    /// `true` for `RemoveMessage(id=REMOVE_ALL_MESSAGES)`.
    pub fn is_remove_all(&self) -> bool {
        self.inner.kind == MessageType::Remove && self.id() == Some(REMOVE_ALL_MESSAGES)
    }
}

impl fmt::Debug for Message {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Print the payload directly: the `Arc` wrapper is an implementation detail.
        fmt::Debug::fmt(&self.inner.data, f)
    }
}

impl PartialEq for Message {
    fn eq(&self, other: &Self) -> bool {
        // Clones share their allocation, so the pointer check settles most comparisons
        // of engine state without walking the content.
        Arc::ptr_eq(&self.inner, &other.inner) || self.inner.data == other.inner.data
    }
}

impl From<&str> for Message {
    /// A human message, like LangChain's coercion of a bare string.
    fn from(text: &str) -> Self {
        Self::human(text)
    }
}

impl From<String> for Message {
    /// A human message, like LangChain's coercion of a bare string.
    fn from(text: String) -> Self {
        Self::human(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn constructors_set_kind_and_defaults() {
        assert_eq!(Message::system("s").kind(), MessageType::System);
        assert_eq!(Message::human("h").kind(), MessageType::Human);
        assert_eq!(Message::ai("a").kind(), MessageType::Ai);
        let tool = Message::tool("r", "c1");
        assert_eq!(tool.kind(), MessageType::Tool);
        assert_eq!(tool.tool_call_id(), Some("c1"));
        assert_eq!(tool.status(), Some(ToolStatus::Success));
        let remove = Message::remove("m1");
        assert_eq!((remove.kind(), remove.id()), (MessageType::Remove, Some("m1")));
        assert_eq!(remove.content(), &Content::Text(String::new()));
        assert!(!remove.is_remove_all());
        assert!(Message::remove_all().is_remove_all());
        assert!(!Message::human("x").with_id(REMOVE_ALL_MESSAGES).is_remove_all());
        assert_eq!(Message::from("hi"), Message::human("hi"));
        assert_eq!(Message::tool("", "c").lc_class().1, "ToolMessage");
    }

    #[test]
    fn kind_specific_builders_ignore_other_kinds() {
        let call = ToolCall::new("t", json!({}), "c1");
        let human = Message::human("h")
            .with_tool_calls(vec![call.clone()])
            .with_usage(UsageMetadata::new(1, 2))
            .with_status(ToolStatus::Error)
            .with_artifact(json!(1));
        assert_eq!(human, Message::human("h"));
        assert_eq!(human.status(), None);

        let ai = Message::ai("a").with_tool_calls(vec![call.clone()]).with_usage(UsageMetadata::new(1, 2));
        assert_eq!(ai.tool_calls(), &[call]);
        assert_eq!(ai.usage().map(|u| u.total_tokens), Some(3));

        let tool = Message::tool("r", "c1").with_status(ToolStatus::Error).with_artifact(json!({"rows": 3}));
        assert_eq!(tool.status(), Some(ToolStatus::Error));
        assert_eq!(tool.artifact(), Some(&json!({"rows": 3})));
    }

    #[test]
    fn clone_is_shared_until_written() {
        let original = Message::human("hello").with_id("1");
        let mut copy = original.clone();
        assert!(Arc::ptr_eq(&original.inner, &copy.inner));
        copy.set_id("2".to_owned());
        assert!(!Arc::ptr_eq(&original.inner, &copy.inner));
        assert_eq!(original.id(), Some("1"));
        assert_eq!(copy.id(), Some("2"));
        assert_ne!(original, copy);
    }

    #[test]
    fn an_encoding_is_shared_by_clones_and_made_anew_after_an_edit() {
        use crate::checkpoint::serde::dumps_typed;
        use crate::value::ChannelValue;
        let encode = |m: &Message| dumps_typed(&ChannelValue::new(vec![m.clone()])).expect("encodes").1;
        let original = Message::human("hello").with_id("1");
        let first = encode(&original);
        let copy = original.clone();
        assert!(copy.inner.packed.get().is_some(), "clones share the encoding");
        assert_eq!(encode(&copy), first);
        let mut edited = copy.clone();
        edited.set_id("2".to_owned());
        assert!(edited.inner.packed.get().is_none());
        let fresh = Message::human("hello").with_id("2");
        assert_eq!(encode(&edited), encode(&fresh));
        assert_ne!(encode(&edited), first);
        // Edited in place, without another clone sharing it, the encoding is forgotten too.
        let mut alone = Message::human("hello").with_id("1");
        assert_eq!(encode(&alone), first);
        alone.set_id("2".to_owned());
        assert_eq!(encode(&alone), encode(&fresh));
        assert_eq!(encode(&original), first);
    }

    #[test]
    fn message_is_send_sync() {
        fn assert_send_sync<T: Send + Sync + 'static>() {}
        assert_send_sync::<Message>();
    }
}
