//! [`GraphSchemas`]: the JSON Schemas `/assistants/{id}/schemas` serves for a graph, derived from
//! its Rust types.

use schemars::JsonSchema;
use serde_json::{json, Map, Value};

/// The JSON Schemas of a served graph, LangGraph's `input_schema`, `output_schema`,
/// `state_schema`, `config_schema` and `context_schema`, derived from Rust types by
/// [`schemars`]; given to [`Server::with_schemas`](crate::Server::with_schemas).
///
/// A graph served without them still answers, with its state's fields as open properties (any
/// JSON value) and no config or context schema: a Rust state type carries no JSON Schema unless
/// it derives one.
///
/// ```
/// use mnemograph_server::GraphSchemas;
/// use schemars::JsonSchema;
///
/// #[derive(JsonSchema)]
/// struct Chat {
///     messages: Vec<String>,
/// }
/// #[derive(JsonSchema)]
/// struct Settings {
///     model: String,
/// }
/// let schemas = GraphSchemas::of_state::<Chat>().with_context::<Settings>();
/// let json = schemas.to_json();
/// assert_eq!(json["state_schema"]["properties"]["messages"]["type"], "array");
/// assert_eq!(json["state_schema"]["properties"]["messages"]["title"], "Messages");
/// assert_eq!(json["input_schema"]["required"], serde_json::json!(["messages"]));
/// assert!(json["state_schema"]["properties"]["messages"]["default"].is_null());
/// assert_eq!(json["context_schema"]["properties"]["model"]["type"], "string");
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct GraphSchemas {
    input: Value,
    output: Value,
    state: Value,
    config: Value,
    context: Value,
}

impl GraphSchemas {
    /// The schemas of a graph whose state is `S`: the state's schema is also its input's and its
    /// output's, as for a LangGraph graph built on one state schema. The state schema is shaped
    /// as LangGraph builds its own from a graph's channels: no field required, each defaulting
    /// to `null`, no description.
    pub fn of_state<S: JsonSchema>() -> Self {
        let schema = schema::<S>();
        let mut state = schema.clone();
        if let Value::Object(map) = &mut state {
            map.remove("required");
            map.remove("description");
            if let Some(Value::Object(properties)) = map.get_mut("properties") {
                for property in properties.values_mut().filter_map(Value::as_object_mut) {
                    property.entry("default").or_insert(Value::Null);
                }
            }
        }
        Self { input: schema.clone(), output: schema, state, config: json!({}), context: Value::Null }
    }

    /// With the schema of what a run's input may hold, when it is less than the whole state.
    #[must_use]
    pub fn with_input<I: JsonSchema>(mut self) -> Self {
        self.input = schema::<I>();
        self
    }

    /// With the schema of what a run returns, when it is less than the whole state.
    #[must_use]
    pub fn with_output<O: JsonSchema>(mut self) -> Self {
        self.output = schema::<O>();
        self
    }

    /// With the schema of the `config.configurable` values the graph's nodes read
    /// ([`Runtime::configurable`](mnemograph_core::Runtime::configurable)).
    #[must_use]
    pub fn with_config<K: JsonSchema>(mut self) -> Self {
        self.config = schema::<K>();
        self
    }

    /// With the schema of the run's `context`, which the server hands the nodes with the
    /// configurable values.
    #[must_use]
    pub fn with_context<C: JsonSchema>(mut self) -> Self {
        self.context = schema::<C>();
        self
    }

    /// The schemas of a graph served without any: an object of the state's `fields`, each any
    /// JSON value, titled `title`.
    pub(crate) fn open(title: &str, fields: &[&str]) -> Self {
        let mut properties: Map<String, Value> =
            fields.iter().map(|f| ((*f).to_owned(), json!({}))).collect();
        titled(&mut properties);
        let state = json!({ "title": title, "type": "object", "properties": properties });
        Self { input: state.clone(), output: state.clone(), state, config: json!({}), context: Value::Null }
    }

    /// The schemas as LangGraph's server answers them: `{"input_schema", "output_schema",
    /// "state_schema", "config_schema", "context_schema"}`.
    pub fn to_json(&self) -> Value {
        json!({
            "input_schema": self.input,
            "output_schema": self.output,
            "state_schema": self.state,
            "config_schema": self.config,
            "context_schema": self.context,
        })
    }
}

/// `T`'s JSON Schema as a JSON value, shaped as LangGraph serves pydantic's: no `$schema` (the
/// schema is a value in a response, not a document) and each property titled.
fn schema<T: JsonSchema>() -> Value {
    let mut schema = schemars::schema_for!(T).to_value();
    if let Value::Object(map) = &mut schema {
        map.remove("$schema");
        if let Some(Value::Object(properties)) = map.get_mut("properties") {
            titled(properties);
        }
    }
    schema
}

/// Gives each property without a title pydantic's: its name with `_` as spaces, each word
/// capitalised (`user_name`: `User Name`).
fn titled(properties: &mut Map<String, Value>) {
    for (name, property) in properties.iter_mut() {
        if let Value::Object(property) = property {
            property.entry("title").or_insert_with(|| title_of(name).into());
        }
    }
}

fn title_of(name: &str) -> String {
    name.split('_')
        .filter(|w| !w.is_empty())
        .map(|word| {
            let mut chars = word.chars();
            chars.next().map_or_else(String::new, |first| {
                first.to_uppercase().chain(chars.flat_map(char::to_lowercase)).collect()
            })
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn properties_are_titled_as_pydantic_titles_them() {
        assert_eq!(title_of("log"), "Log");
        assert_eq!(title_of("user_name"), "User Name");
        assert_eq!(title_of("HTTP_code"), "Http Code");
        let open = GraphSchemas::open("g", &["last_seen"]).to_json();
        assert_eq!(open["state_schema"]["properties"]["last_seen"]["title"], "Last Seen");
    }
}
