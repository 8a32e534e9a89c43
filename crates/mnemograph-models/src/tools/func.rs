//! Tools made from async closures.

use std::fmt;
use std::future::Future;
use std::sync::Arc;

use mnemograph_core::BoxError;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::{Tool, ToolOutput, ToolSpec};
use mnemograph_core::BoxFuture;

/// The erased body of a [`FnTool`].
type Body = Arc<dyn Fn(Value) -> BoxFuture<'static, Result<ToolOutput, BoxError>> + Send + Sync>;

/// A tool whose body is an async closure; made by [`tool`] or [`tool_with_schema`].
#[derive(Clone)]
pub struct FnTool {
    /// Name, description, schema.
    spec: ToolSpec,
    /// The closure, taking the raw arguments.
    body: Body,
}

impl fmt::Debug for FnTool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FnTool").field("spec", &self.spec).finish_non_exhaustive()
    }
}

impl Tool for FnTool {
    fn spec(&self) -> ToolSpec {
        self.spec.clone()
    }
    fn call(&self, args: Value) -> impl Future<Output = Result<ToolOutput, BoxError>> + Send {
        (self.body)(args)
    }
}

/// A tool from an async fn of typed arguments; the JSON schema the model sees is derived from
/// `A` with `schemars` (doc comments on fields become descriptions).
///
/// Arguments that do not deserialize into `A` are an error the model is shown, like any other.
///
/// ```
/// use mnemograph_models::{tool, Tool};
///
/// #[derive(serde::Deserialize, schemars::JsonSchema)]
/// struct Weather {
///     /// City name.
///     city: String,
/// }
///
/// let weather = tool("weather", "Current weather of a city", |args: Weather| async move {
///     Ok::<_, std::convert::Infallible>(format!("sunny in {}", args.city))
/// });
/// let spec = weather.spec();
/// assert_eq!(spec.parameters["properties"]["city"]["type"], "string");
/// assert_eq!(spec.parameters["required"][0], "city");
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let out = weather.call(serde_json::json!({"city": "Paris"})).await.unwrap();
/// assert_eq!(out.content.as_str(), Some("sunny in Paris"));
/// # });
/// ```
pub fn tool<A, F, Fut, O, E>(name: impl Into<String>, description: impl Into<String>, f: F) -> FnTool
where
    A: DeserializeOwned + JsonSchema + Send + 'static,
    F: Fn(A) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<O, E>> + Send + 'static,
    O: Into<ToolOutput>,
    E: Into<BoxError>,
{
    let parameters = schema_of::<A>();
    let f = Arc::new(f);
    let body: Body = Arc::new(move |args: Value| {
        let f = Arc::clone(&f);
        Box::pin(async move {
            let args: A = serde_json::from_value(args).map_err(|e| format!("invalid arguments: {e}"))?;
            f(args).await.map(Into::into).map_err(Into::into)
        })
    });
    FnTool { spec: ToolSpec::new(name, description, parameters), body }
}

/// A tool from an async fn of raw JSON arguments, with an explicit JSON schema.
///
/// ```
/// use mnemograph_models::{tool_with_schema, Tool};
/// use serde_json::{json, Value};
///
/// let add = tool_with_schema(
///     "add",
///     "Adds two integers",
///     json!({"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}}),
///     |args: Value| async move {
///         let sum = args["a"].as_i64().unwrap_or(0) + args["b"].as_i64().unwrap_or(0);
///         Ok::<_, std::convert::Infallible>(json!(sum))
///     },
/// );
/// assert_eq!(add.spec().name, "add");
/// ```
pub fn tool_with_schema<F, Fut, O, E>(
    name: impl Into<String>,
    description: impl Into<String>,
    parameters: Value,
    f: F,
) -> FnTool
where
    F: Fn(Value) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<O, E>> + Send + 'static,
    O: Into<ToolOutput>,
    E: Into<BoxError>,
{
    let body: Body = Arc::new(move |args: Value| {
        let fut = f(args);
        Box::pin(async move { fut.await.map(Into::into).map_err(Into::into) })
    });
    FnTool { spec: ToolSpec::new(name, description, parameters), body }
}

/// The argument schema of `A`, shaped for function calling: subschemas inlined (some
/// OpenAI-compatible servers do not resolve `$ref`), and the `$schema`/`title` keys dropped
/// (the tool's name and description already say it).
fn schema_of<A: JsonSchema>() -> Value {
    let generator = schemars::generate::SchemaSettings::draft2020_12()
        .with(|s| s.inline_subschemas = true)
        .into_generator();
    let mut schema = generator.into_root_schema_for::<A>().to_value();
    if let Value::Object(map) = &mut schema {
        map.remove("$schema");
        map.remove("title");
    }
    schema
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[derive(serde::Deserialize, JsonSchema)]
    #[allow(dead_code)]
    struct Search {
        /// What to look for.
        query: String,
        /// How many results.
        limit: Option<u32>,
        filter: Filter,
    }

    #[derive(serde::Deserialize, JsonSchema)]
    #[allow(dead_code)]
    struct Filter {
        lang: String,
    }

    #[test]
    fn derived_schema_is_inline_and_untitled() {
        let schema = schema_of::<Search>();
        assert_eq!(schema["type"], "object");
        assert!(schema.get("$schema").is_none() && schema.get("title").is_none());
        assert_eq!(schema["properties"]["query"]["description"], "What to look for.");
        assert_eq!(schema["properties"]["filter"]["properties"]["lang"]["type"], "string");
        assert!(!schema.to_string().contains("$ref"), "{schema}");
        assert_eq!(schema["required"], json!(["query", "filter"]));
    }

    #[tokio::test]
    async fn bad_arguments_are_an_error_not_a_panic() {
        let t =
            tool("search", "search", |a: Search| async move { Ok::<_, std::convert::Infallible>(a.query) });
        let err = t.call(json!({"query": 3})).await.unwrap_err();
        assert!(err.to_string().starts_with("invalid arguments"), "{err}");
    }
}
