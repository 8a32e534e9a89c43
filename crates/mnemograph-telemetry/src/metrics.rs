//! Metrics derived from spans: when a measured span closes, its duration (and a chat's token
//! counts) go to OpenTelemetry histograms. The spans already carry what the metrics need, so the
//! crates that emit them know nothing of metrics, and a span nobody emits costs nothing.

use std::time::Instant;

use opentelemetry::metrics::{Histogram, Meter};
use opentelemetry::KeyValue;
use tracing::field::{Field, Visit};
use tracing::span::{self, Id, Record};
use tracing::{Metadata, Subscriber};
use tracing_subscriber::layer::Context;
use tracing_subscriber::registry::LookupSpan;
use tracing_subscriber::Layer;

/// `mnemograph.graph.run.duration`: one `graph.run` span, a whole invocation.
pub const GRAPH_RUN_DURATION: &str = "mnemograph.graph.run.duration";
/// `mnemograph.graph.node.duration`: one `graph.node` span, one task of a superstep.
pub const GRAPH_NODE_DURATION: &str = "mnemograph.graph.node.duration";
/// `gen_ai.client.operation.duration`: one `chat` span, one model call.
pub const GEN_AI_OPERATION_DURATION: &str = "gen_ai.client.operation.duration";
/// `gen_ai.client.token.usage`: a `chat` span's input and output tokens.
pub const GEN_AI_TOKEN_USAGE: &str = "gen_ai.client.token.usage";
/// `mnemograph.checkpoint.duration`: one `checkpoint.*` span, one saver call.
pub const CHECKPOINT_DURATION: &str = "mnemograph.checkpoint.duration";
/// `mnemograph.memory.duration`: one `memory.*` span, one long-term memory call.
pub const MEMORY_DURATION: &str = "mnemograph.memory.duration";

/// Bucket bounds in seconds for every duration: OpenTelemetry's GenAI conventions' advice
/// (10 ms doubling to 82 s), which spans a saver call as well as a slow model call.
const DURATION_BOUNDS: [f64; 14] =
    [0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92];

/// Bucket bounds for token counts: the GenAI conventions' advice, powers of four up to 64 Mi.
const TOKEN_BOUNDS: [f64; 14] = [
    1.0, 4.0, 16.0, 64.0, 256.0, 1024.0, 4096.0, 16384.0, 65536.0, 262144.0, 1048576.0, 4194304.0,
    16777216.0, 67108864.0,
];

/// Which histogram a span feeds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Run,
    Node,
    Chat,
    Checkpoint,
    Memory,
}

impl Kind {
    fn of(name: &str) -> Option<Self> {
        match name {
            "graph.run" => Some(Self::Run),
            "graph.node" => Some(Self::Node),
            "chat" => Some(Self::Chat),
            _ if name.starts_with("checkpoint.") => Some(Self::Checkpoint),
            _ if name.starts_with("memory.") => Some(Self::Memory),
            _ => None,
        }
    }
}

/// Whether a callsite is a span this layer measures; the layer's filter, so every other span
/// and every event skip it.
pub(crate) fn is_measured(metadata: &Metadata<'_>) -> bool {
    metadata.is_span() && Kind::of(metadata.name()).is_some()
}

/// The fields of a measured span that become metric attributes (low-cardinality ones only: no
/// run, thread or task ids).
#[derive(Debug, Default)]
struct Fields {
    node: Option<String>,
    outcome: Option<String>,
    operation: Option<String>,
    system: Option<String>,
    request_model: Option<String>,
    response_model: Option<String>,
    error_type: Option<String>,
    db_system: Option<String>,
    input_tokens: Option<u64>,
    output_tokens: Option<u64>,
}

impl Fields {
    fn slot(&mut self, field: &Field) -> Option<&mut Option<String>> {
        Some(match field.name() {
            "node" => &mut self.node,
            "outcome" => &mut self.outcome,
            "gen_ai.operation.name" => &mut self.operation,
            "gen_ai.system" => &mut self.system,
            "gen_ai.request.model" => &mut self.request_model,
            "gen_ai.response.model" => &mut self.response_model,
            "error.type" => &mut self.error_type,
            "db.system" => &mut self.db_system,
            _ => return None,
        })
    }

    fn count(&mut self, field: &Field, value: u64) {
        match field.name() {
            "gen_ai.usage.input_tokens" => self.input_tokens = Some(value),
            "gen_ai.usage.output_tokens" => self.output_tokens = Some(value),
            _ => {}
        }
    }
}

impl Visit for Fields {
    fn record_str(&mut self, field: &Field, value: &str) {
        if let Some(slot) = self.slot(field) {
            *slot = Some(value.to_owned());
        }
    }

    fn record_u64(&mut self, field: &Field, value: u64) {
        self.count(field, value);
    }

    fn record_i64(&mut self, field: &Field, value: i64) {
        if let Ok(value) = u64::try_from(value) {
            self.count(field, value);
        }
    }

    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        // `%value` fields arrive here; their `Debug` is the `Display` text.
        if let Some(slot) = self.slot(field) {
            *slot = Some(format!("{value:?}"));
        }
    }
}

/// What a measured span carries in its extensions until it closes.
#[derive(Debug)]
struct Timing {
    kind: Kind,
    start: Instant,
    fields: Fields,
}

/// The histograms, created once from the meter.
#[derive(Debug, Clone)]
struct Instruments {
    run: Histogram<f64>,
    node: Histogram<f64>,
    chat: Histogram<f64>,
    tokens: Histogram<u64>,
    checkpoint: Histogram<f64>,
    memory: Histogram<f64>,
}

/// The layer that turns closing spans into metrics.
#[derive(Debug, Clone)]
pub(crate) struct SpanMetrics {
    instruments: Instruments,
}

impl SpanMetrics {
    pub(crate) fn new(meter: &Meter) -> Self {
        let seconds = |name: &'static str, description: &'static str| {
            meter
                .f64_histogram(name)
                .with_unit("s")
                .with_description(description)
                .with_boundaries(DURATION_BOUNDS.to_vec())
                .build()
        };
        Self {
            instruments: Instruments {
                run: seconds(GRAPH_RUN_DURATION, "Duration of a graph run"),
                node: seconds(GRAPH_NODE_DURATION, "Duration of one node task"),
                chat: seconds(GEN_AI_OPERATION_DURATION, "GenAI operation duration"),
                tokens: meter
                    .u64_histogram(GEN_AI_TOKEN_USAGE)
                    .with_unit("{token}")
                    .with_description("Number of input and output tokens used")
                    .with_boundaries(TOKEN_BOUNDS.to_vec())
                    .build(),
                checkpoint: seconds(CHECKPOINT_DURATION, "Duration of a checkpoint saver call"),
                memory: seconds(MEMORY_DURATION, "Duration of a long-term memory call"),
            },
        }
    }

    fn record(&self, name: &'static str, timing: Timing) {
        let seconds = timing.start.elapsed().as_secs_f64();
        let Timing { kind, fields, .. } = timing;
        let mut attributes = Attributes::default();
        let instruments = &self.instruments;
        match kind {
            Kind::Run => {
                attributes.put("outcome", fields.outcome);
                instruments.run.record(seconds, &attributes.0);
            }
            Kind::Node => {
                attributes.put("node", fields.node);
                attributes.put("outcome", fields.outcome);
                instruments.node.record(seconds, &attributes.0);
            }
            Kind::Chat => {
                attributes.put("gen_ai.operation.name", fields.operation);
                attributes.put("gen_ai.system", fields.system);
                attributes.put("gen_ai.request.model", fields.request_model);
                attributes.put("gen_ai.response.model", fields.response_model);
                for (kind, count) in [("input", fields.input_tokens), ("output", fields.output_tokens)] {
                    if let Some(count) = count {
                        let mut typed = attributes.0.clone();
                        typed.push(KeyValue::new("gen_ai.token.type", kind));
                        instruments.tokens.record(count, &typed);
                    }
                }
                attributes.put("error.type", fields.error_type);
                instruments.chat.record(seconds, &attributes.0);
            }
            Kind::Checkpoint | Kind::Memory => {
                let operation = name.split_once('.').map_or(name, |(_, op)| op);
                attributes.0.push(KeyValue::new("operation", operation));
                attributes.put("db.system", fields.db_system);
                attributes.put("outcome", fields.outcome);
                attributes.put("error.type", fields.error_type);
                let histogram =
                    if kind == Kind::Checkpoint { &instruments.checkpoint } else { &instruments.memory };
                histogram.record(seconds, &attributes.0);
            }
        }
    }
}

/// A metric's attributes, each present only when the span recorded it.
#[derive(Default)]
struct Attributes(Vec<KeyValue>);

impl Attributes {
    fn put(&mut self, key: &'static str, value: Option<String>) {
        if let Some(value) = value {
            self.0.push(KeyValue::new(key, value));
        }
    }
}

impl<S> Layer<S> for SpanMetrics
where
    S: Subscriber + for<'a> LookupSpan<'a>,
{
    fn on_new_span(&self, attrs: &span::Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        let Some(kind) = Kind::of(attrs.metadata().name()) else { return };
        let Some(span) = ctx.span(id) else { return };
        let mut fields = Fields::default();
        attrs.record(&mut fields);
        span.extensions_mut().insert(Timing { kind, start: Instant::now(), fields });
    }

    fn on_record(&self, id: &Id, values: &Record<'_>, ctx: Context<'_, S>) {
        let Some(span) = ctx.span(id) else { return };
        let mut extensions = span.extensions_mut();
        if let Some(timing) = extensions.get_mut::<Timing>() {
            values.record(&mut timing.fields);
        }
    }

    fn on_close(&self, id: Id, ctx: Context<'_, S>) {
        let Some(span) = ctx.span(&id) else { return };
        let timing = span.extensions_mut().remove::<Timing>();
        if let Some(timing) = timing {
            self.record(span.metadata().name(), timing);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use opentelemetry::metrics::MeterProvider as _;
    use opentelemetry_sdk::metrics::data::{AggregatedMetrics, MetricData};
    use opentelemetry_sdk::metrics::{InMemoryMetricExporter, SdkMeterProvider};
    use tracing_subscriber::filter::filter_fn;
    use tracing_subscriber::layer::SubscriberExt;

    use super::*;

    /// Every histogram data point as (metric, attributes, count, sum).
    type Point = (String, BTreeMap<String, String>, u64, f64);

    fn points(exporter: &InMemoryMetricExporter) -> Vec<Point> {
        let mut out = Vec::new();
        for resource in exporter.get_finished_metrics().unwrap() {
            for metric in resource.scope_metrics().flat_map(|s| s.metrics()) {
                let attrs = |kvs: &mut dyn Iterator<Item = &KeyValue>| -> BTreeMap<String, String> {
                    kvs.map(|kv| (kv.key.to_string(), kv.value.to_string())).collect()
                };
                match metric.data() {
                    AggregatedMetrics::F64(MetricData::Histogram(h)) => {
                        out.extend(h.data_points().map(|p| {
                            (metric.name().to_owned(), attrs(&mut p.attributes()), p.count(), p.sum())
                        }))
                    }
                    AggregatedMetrics::U64(MetricData::Histogram(h)) => {
                        out.extend(h.data_points().map(|p| {
                            (metric.name().to_owned(), attrs(&mut p.attributes()), p.count(), p.sum() as f64)
                        }))
                    }
                    other => panic!("{} is not a histogram: {other:?}", metric.name()),
                }
            }
        }
        out
    }

    #[test]
    fn closing_spans_feed_their_histograms_with_low_cardinality_attributes() {
        let exporter = InMemoryMetricExporter::default();
        let provider = SdkMeterProvider::builder().with_periodic_exporter(exporter.clone()).build();
        let layer = SpanMetrics::new(&provider.meter("test")).with_filter(filter_fn(is_measured));
        tracing::subscriber::with_default(tracing_subscriber::registry().with(layer), || {
            tracing::debug_span!("checkpoint.commit", db.system = "mysql", thread_id = "t1").in_scope(|| {});
            let memory = tracing::info_span!("memory.retrieve", outcome = tracing::field::Empty);
            memory.record("outcome", "ok");
            drop(memory);
            let chat = tracing::info_span!(
                "chat",
                gen_ai.operation.name = "chat",
                gen_ai.request.model = %"m1",
                gen_ai.usage.input_tokens = tracing::field::Empty,
                gen_ai.usage.output_tokens = tracing::field::Empty,
            );
            chat.record("gen_ai.usage.input_tokens", 12_u64).record("gen_ai.usage.output_tokens", 3_i64);
            drop(chat);
            tracing::info_span!("graph.node", node = %"model", task_id = "x").in_scope(|| {});
            tracing::info_span!("superstep").in_scope(|| {});
        });
        provider.force_flush().unwrap();
        let points = points(&exporter);
        let find = |name: &str| -> Vec<&Point> { points.iter().filter(|p| p.0 == name).collect() };
        let map = |pairs: &[(&str, &str)]| -> BTreeMap<String, String> {
            pairs.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect()
        };

        let saver = find(CHECKPOINT_DURATION);
        assert_eq!(saver.len(), 1, "{points:?}");
        assert_eq!(saver[0].1, map(&[("operation", "commit"), ("db.system", "mysql")]));
        let memory = find(MEMORY_DURATION);
        assert_eq!(memory[0].1, map(&[("operation", "retrieve"), ("outcome", "ok")]));
        let node = find(GRAPH_NODE_DURATION);
        assert_eq!(node[0].1, map(&[("node", "model")]), "no task id");
        let chat = find(GEN_AI_OPERATION_DURATION);
        assert_eq!(chat[0].1, map(&[("gen_ai.operation.name", "chat"), ("gen_ai.request.model", "m1")]));
        let mut tokens: Vec<(String, f64)> =
            find(GEN_AI_TOKEN_USAGE).iter().map(|p| (p.1["gen_ai.token.type"].clone(), p.3)).collect();
        tokens.sort_by(|a, b| a.0.cmp(&b.0));
        assert_eq!(tokens, [("input".to_owned(), 12.0), ("output".to_owned(), 3.0)]);
        assert!(find(GRAPH_RUN_DURATION).is_empty(), "no run span, no run metric");
        assert_eq!(points.len(), 6, "superstep is not measured: {points:?}");
    }

    #[test]
    fn spans_are_measured_by_name() {
        assert_eq!(Kind::of("graph.run"), Some(Kind::Run));
        assert_eq!(Kind::of("graph.node"), Some(Kind::Node));
        assert_eq!(Kind::of("chat"), Some(Kind::Chat));
        assert_eq!(Kind::of("checkpoint.commit"), Some(Kind::Checkpoint));
        assert_eq!(Kind::of("memory.retrieve"), Some(Kind::Memory));
        for other in ["superstep", "execute_tool", "checkpoint", "chats", "graph.runs"] {
            assert_eq!(Kind::of(other), None, "{other}");
        }
    }
}
