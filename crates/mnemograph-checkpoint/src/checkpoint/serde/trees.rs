//! Msgpack trees of the engine's own channels, written as Python's serializer writes them: the
//! state fields of a `Send` argument or of the `__start__` input, a `Send`, a Python `set`, and a
//! tree as an encoded channel value. Public only through `crate::__private`.

use super::{ext, msgpack, to_tree, SerdeError};
use crate::value::ChannelValue;

/// A map of state fields, each value encoded as [`dumps_typed`](super::dumps_typed) would (so
/// messages stay ext 5): the form of a `Send` argument and of the `__start__` channel's input.
pub fn fields_tree<'a>(
    fields: impl IntoIterator<Item = (&'a str, ChannelValue)>,
) -> Result<rmpv::Value, SerdeError> {
    let mut map = Vec::new();
    for (name, value) in fields {
        map.push((rmpv::Value::from(name), to_tree(&value)?));
    }
    Ok(rmpv::Value::Map(map))
}

/// LangGraph's `Send(node, arg)` as Python stores it in the tasks channel: ext 1
/// `["langgraph.types", "Send", [node, arg]]`.
pub fn send_value(node: &str, arg: rmpv::Value) -> Result<rmpv::Value, SerdeError> {
    let args = rmpv::Value::Array(vec![rmpv::Value::from(node), arg]);
    ext::constructor(ext::EXT_CONSTRUCTOR_POS_ARGS, "langgraph.types", "Send", args)
}

/// Python's `set(items)` as its serializer writes it: ext 0 `["builtins", "set", [items]]`.
pub fn set_value(items: Vec<rmpv::Value>) -> Result<rmpv::Value, SerdeError> {
    ext::constructor(ext::EXT_CONSTRUCTOR_SINGLE_ARG, "builtins", "set", rmpv::Value::Array(items))
}

/// A msgpack tree as an encoded channel value, written as [`dumps_typed`](super::dumps_typed) would write it.
pub fn tree_value(tree: &rmpv::Value) -> Result<ChannelValue, SerdeError> {
    Ok(ChannelValue::encoded("msgpack", msgpack::write(tree)?))
}
