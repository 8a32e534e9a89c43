//! The span of one chat call, with OpenTelemetry's GenAI semantic conventions (`gen_ai.*`), so a
//! tracing backend shows each model call with its model, token usage and finish reason the way it
//! shows a Python LangChain call. Message content is never recorded: it is the user's data.

use mnemograph_core::messages::UsageMetadata;
use serde_json::{Map, Value};
use tracing::field::Empty;
use tracing::Span;

use crate::error::Error;

/// An `info` span named `chat` (`otel.name` `chat {model}`) for a call to `model`; the response
/// fields are empty until [`record_response`] or [`record_error`] fill them.
pub(crate) fn chat_span(model: &str, streaming: bool) -> Span {
    tracing::info_span!(
        "chat",
        otel.name = %format_args!("chat {model}"),
        otel.kind = "client",
        gen_ai.operation.name = "chat",
        gen_ai.system = "openai",
        gen_ai.request.model = %model,
        gen_ai.request.stream = streaming,
        gen_ai.response.model = Empty,
        gen_ai.response.id = Empty,
        gen_ai.response.finish_reasons = Empty,
        gen_ai.usage.input_tokens = Empty,
        gen_ai.usage.output_tokens = Empty,
        error.type = Empty,
    )
}

/// Records what a reply (or a stream chunk) says about the response: the model that answered,
/// its id, the finish reason and the token usage, each when present.
pub(crate) fn record_response(span: &Span, metadata: &Map<String, Value>, usage: Option<&UsageMetadata>) {
    let text = |key: &str| metadata.get(key).and_then(Value::as_str);
    if let Some(model) = text("model_name") {
        span.record("gen_ai.response.model", model);
    }
    if let Some(id) = text("id") {
        span.record("gen_ai.response.id", id);
    }
    if let Some(reason) = text("finish_reason") {
        span.record("gen_ai.response.finish_reasons", reason);
    }
    if let Some(usage) = usage {
        span.record("gen_ai.usage.input_tokens", usage.input_tokens);
        span.record("gen_ai.usage.output_tokens", usage.output_tokens);
    }
}

/// Records a failed call: `error.type` is the HTTP status for an API error, else the kind of
/// failure.
pub(crate) fn record_error(span: &Span, error: &Error) {
    let kind = match error {
        Error::Api { status, .. } => {
            span.record("error.type", status.to_string());
            return;
        }
        Error::StreamEvent { .. } => "stream_event",
        Error::Transport { .. } => "transport",
        Error::Stream { .. } => "stream",
        Error::StreamIncomplete => "stream_incomplete",
        Error::Decode { .. } | Error::MissingField(_) => "decode",
        _ => "client",
    };
    span.record("error.type", kind);
}
