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
/// assert_eq!(json["input_schema"], json["state_schema"], "a run's input is the state's fields");
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
    /// output's, as for a LangGraph graph built on one state schema.
    pub fn of_state<S: JsonSchema>() -> Self {
        let state = schema::<S>();
        Self { input: state.clone(), output: state.clone(), state, config: json!({}), context: Value::Null }
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
        let properties: Map<String, Value> = fields.iter().map(|f| ((*f).to_owned(), json!({}))).collect();
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

/// `T`'s JSON Schema as a JSON value.
fn schema<T: JsonSchema>() -> Value {
    schemars::schema_for!(T).to_value()
}
