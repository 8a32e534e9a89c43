//! The spans of a set of trace export requests, with the lookups a test of a span tree needs:
//! by name, by parent, up to the root.

use std::collections::HashMap;

use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::any_value::Value;
use opentelemetry_proto::tonic::common::v1::KeyValue;
use opentelemetry_proto::tonic::trace::v1::Span;

/// Key-value attributes as text: strings as they are, numbers and booleans printed, anything
/// else in its debug form.
pub fn attributes(kvs: &[KeyValue]) -> HashMap<String, String> {
    kvs.iter().filter_map(|kv| Some((kv.key.clone(), text(kv.value.as_ref()?.value.as_ref()?)))).collect()
}

fn text(value: &Value) -> String {
    match value {
        Value::StringValue(s) => s.clone(),
        Value::IntValue(i) => i.to_string(),
        Value::BoolValue(b) => b.to_string(),
        Value::DoubleValue(d) => d.to_string(),
        other => format!("{other:?}"),
    }
}

/// Every span of some export requests, with the resource each came with.
#[derive(Debug, Clone, Default)]
pub struct Spans {
    spans: Vec<Span>,
    resources: Vec<HashMap<String, String>>,
    by_id: HashMap<Vec<u8>, usize>,
}

impl Spans {
    /// The spans of `requests`, in the order they arrived.
    pub fn from_requests(requests: &[ExportTraceServiceRequest]) -> Self {
        let mut all = Self::default();
        for rs in requests.iter().flat_map(|r| &r.resource_spans) {
            all.resources.push(rs.resource.as_ref().map(|r| attributes(&r.attributes)).unwrap_or_default());
            for span in rs.scope_spans.iter().flat_map(|ss| &ss.spans) {
                all.by_id.insert(span.span_id.clone(), all.spans.len());
                all.spans.push(span.clone());
            }
        }
        all
    }

    /// Every span.
    pub fn all(&self) -> &[Span] {
        &self.spans
    }

    /// The attributes of every resource the spans came with, one map per resource block.
    pub fn resources(&self) -> &[HashMap<String, String>] {
        &self.resources
    }

    /// Every span's name, in arrival order: handy in assertion messages.
    pub fn names(&self) -> Vec<&str> {
        self.spans.iter().map(|s| s.name.as_str()).collect()
    }

    /// The spans called `name`, in arrival order (a span arrives when it ends).
    pub fn named<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a Span> + 'a {
        self.spans.iter().filter(move |s| s.name == name)
    }

    /// The span's parent, when it has one and it was exported.
    pub fn parent(&self, span: &Span) -> Option<&Span> {
        self.by_id.get(&span.parent_span_id).map(|&i| &self.spans[i])
    }

    /// The span's exported ancestors, nearest first.
    pub fn ancestors(&self, span: &Span) -> Vec<&Span> {
        std::iter::successors(self.parent(span), |s| self.parent(s)).collect()
    }

    /// The spans that name a parent that was not exported: empty for a complete tree.
    pub fn orphans(&self) -> Vec<&Span> {
        self.spans.iter().filter(|s| !s.parent_span_id.is_empty() && self.parent(s).is_none()).collect()
    }

    /// The spans whose parent is `span` and whose name is `name`.
    pub fn children_named<'a>(
        &'a self,
        span: &'a Span,
        name: &'a str,
    ) -> impl Iterator<Item = &'a Span> + 'a {
        self.named(name).filter(move |c| c.parent_span_id == span.span_id)
    }

    /// The spans under `span`, at any depth, whose name is `name`.
    pub fn descendants_named<'a>(&'a self, span: &Span, name: &'a str) -> Vec<&'a Span> {
        self.named(name).filter(|d| self.ancestors(d).iter().any(|a| a.span_id == span.span_id)).collect()
    }

    /// The attributes of `span`, as text (see [`attributes`]).
    pub fn attributes(span: &Span) -> HashMap<String, String> {
        attributes(&span.attributes)
    }
}
