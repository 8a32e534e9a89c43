//! The builder: what the program says, what the environment says, checked before anything is
//! installed.

use std::io::IsTerminal;

use opentelemetry::metrics::MeterProvider as _;
use opentelemetry::trace::TracerProvider as _;
use opentelemetry::KeyValue;
use opentelemetry_sdk::resource::{EnvResourceDetector, ResourceDetector, TelemetryResourceDetector};
use opentelemetry_sdk::Resource;
use tracing_subscriber::filter::{filter_fn, EnvFilter};
use tracing_subscriber::fmt::writer::BoxMakeWriter;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::Layer;

use crate::config::{self, Explicit, Target};
use crate::error::{Error, Result};
use crate::guard::TelemetryGuard;
use crate::metrics::{is_measured, SpanMetrics};
use crate::{export, Protocol};

/// The variable that overrides which spans are exported (directives as in `RUST_LOG`).
pub const EXPORT_FILTER_VAR: &str = "MNEMOGRAPH_OTEL_FILTER";

/// The instrumentation scope the tracer and meter report.
const SCOPE: &str = "mnemograph";

/// Where the human-readable log lines go.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum LogWriter {
    /// Standard error: a command's output stays clean for pipes.
    #[default]
    Stderr,
    /// Standard output, for a service whose supervisor collects stdout.
    Stdout,
}

/// Configures the subscriber; [`Telemetry::builder`] makes one.
#[derive(Clone, Debug)]
pub struct TelemetryBuilder {
    service_name: Option<String>,
    service_version: Option<String>,
    default_filter: String,
    export_filter: String,
    explicit: Explicit,
    writer: LogWriter,
    ansi: Option<bool>,
}

impl Default for TelemetryBuilder {
    fn default() -> Self {
        Self {
            service_name: None,
            service_version: None,
            default_filter: "warn".to_owned(),
            export_filter: "info".to_owned(),
            explicit: Explicit::default(),
            writer: LogWriter::Stderr,
            ansi: None,
        }
    }
}

impl TelemetryBuilder {
    /// The resource's `service.name` unless `OTEL_SERVICE_NAME` (or a `service.name` in
    /// `OTEL_RESOURCE_ATTRIBUTES`) says otherwise; `unknown_service` when neither is given.
    pub fn service_name(mut self, name: impl Into<String>) -> Self {
        self.service_name = Some(name.into());
        self
    }

    /// The resource's `service.version`, typically `env!("CARGO_PKG_VERSION")`.
    pub fn service_version(mut self, version: impl Into<String>) -> Self {
        self.service_version = Some(version.into());
        self
    }

    /// The log lines' filter when `RUST_LOG` is unset, in `RUST_LOG`'s syntax (`"warn"`,
    /// `"info,mnemograph_core=debug"`); `"warn"` unless set.
    pub fn default_filter(mut self, directives: impl Into<String>) -> Self {
        self.default_filter = directives.into();
        self
    }

    /// Which spans and events are exported over OTLP when [`EXPORT_FILTER_VAR`] is unset;
    /// `"info"` unless set, the level that tells the story of a run. Separate from the log
    /// filter, so a quiet terminal still exports whole traces.
    pub fn export_filter(mut self, directives: impl Into<String>) -> Self {
        self.export_filter = directives.into();
        self
    }

    /// The OTLP endpoint for traces and metrics, instead of `OTEL_EXPORTER_OTLP_ENDPOINT` and its
    /// per-signal forms. A base URL: under HTTP, `/v1/traces` and `/v1/metrics` are appended.
    pub fn endpoint(mut self, endpoint: impl Into<String>) -> Self {
        self.explicit.endpoint = Some(endpoint.into());
        self
    }

    /// The OTLP transport, instead of `OTEL_EXPORTER_OTLP_PROTOCOL` and its per-signal forms.
    pub fn protocol(mut self, protocol: Protocol) -> Self {
        self.explicit.protocol = Some(protocol);
        self
    }

    /// Where log lines go; standard error unless set.
    pub fn log_writer(mut self, writer: LogWriter) -> Self {
        self.writer = writer;
        self
    }

    /// Colours in log lines; on when the chosen stream is a terminal unless set.
    pub fn ansi(mut self, ansi: bool) -> Self {
        self.ansi = Some(ansi);
        self
    }

    /// Reads the environment and checks everything: filters, endpoints, protocols. Nothing is
    /// installed yet.
    pub fn build(self) -> Result<Telemetry> {
        let env = |name: &str| std::env::var(name).ok().filter(|v| !v.trim().is_empty());
        let log_filter = match env("RUST_LOG") {
            Some(directives) => parse_filter(directives, "RUST_LOG")?,
            None => parse_filter(self.default_filter, "the builder's default filter")?,
        };
        let export_filter = match env(EXPORT_FILTER_VAR) {
            Some(directives) => parse_filter(directives, EXPORT_FILTER_VAR)?,
            None => parse_filter(self.export_filter, "the builder's export filter")?,
        };
        let traces = config::resolve(config::TRACES, &self.explicit, &env)?;
        let metrics = config::resolve(config::METRICS, &self.explicit, &env)?;
        let resource = resource(
            self.service_name.as_deref().unwrap_or("unknown_service"),
            self.service_version.as_deref(),
            env("OTEL_SERVICE_NAME"),
        );
        let ansi = self.ansi.unwrap_or_else(|| match self.writer {
            LogWriter::Stderr => std::io::stderr().is_terminal(),
            LogWriter::Stdout => std::io::stdout().is_terminal(),
        });
        Ok(Telemetry { log_filter, export_filter, traces, metrics, resource, writer: self.writer, ansi })
    }
}

fn parse_filter(directives: String, from: &'static str) -> Result<EnvFilter> {
    EnvFilter::try_new(&directives).map_err(|source| Error::InvalidFilter { directives, from, source })
}

/// `service.name` and `service.version` from the program, overridden by
/// `OTEL_RESOURCE_ATTRIBUTES`, with `OTEL_SERVICE_NAME` over all, as the specification orders
/// them; plus the SDK's `telemetry.sdk.*`.
fn resource(name: &str, version: Option<&str>, env_name: Option<String>) -> Resource {
    let mut builder = Resource::builder_empty().with_service_name(name.to_owned());
    if let Some(version) = version {
        builder = builder.with_attribute(KeyValue::new("service.version", version.to_owned()));
    }
    let detectors: [Box<dyn ResourceDetector>; 2] =
        [Box::new(TelemetryResourceDetector), Box::new(EnvResourceDetector::new())];
    builder = builder.with_detectors(&detectors);
    if let Some(name) = env_name {
        builder = builder.with_service_name(name);
    }
    builder.build()
}

/// A checked configuration, ready to [`install`](Self::install).
#[derive(Debug)]
pub struct Telemetry {
    log_filter: EnvFilter,
    export_filter: EnvFilter,
    traces: Option<Target>,
    metrics: Option<Target>,
    resource: Resource,
    writer: LogWriter,
    ansi: bool,
}

impl Telemetry {
    /// A builder with the defaults: logs at `warn` to standard error, OTLP only when an
    /// endpoint is configured.
    pub fn builder() -> TelemetryBuilder {
        TelemetryBuilder::default()
    }

    /// Where spans go, or `None` when nothing is exported.
    pub fn traces_target(&self) -> Option<&Target> {
        self.traces.as_ref()
    }

    /// Where metrics go, or `None` when nothing is exported.
    pub fn metrics_target(&self) -> Option<&Target> {
        self.metrics.as_ref()
    }

    /// The resource every span and metric carries (`service.name`, ...).
    pub fn resource(&self) -> &Resource {
        &self.resource
    }

    /// Installs the global subscriber: the log lines, and, for each signal with a target, its
    /// OTLP exporter. Call it once, early in `main`, inside the Tokio runtime when gRPC is used;
    /// keep the guard until the program ends.
    pub fn install(self) -> Result<TelemetryGuard> {
        let tracer_provider =
            self.traces.as_ref().map(|t| export::tracer_provider(t, self.resource.clone())).transpose()?;
        let meter_provider = self.metrics.as_ref().map(|t| export::meter_provider(t, self.resource.clone()));
        // On any failure from here on, dropping the guard stops what was started.
        let guard = TelemetryGuard::new(tracer_provider.clone());
        let meter_provider = meter_provider.transpose()?;
        let guard = guard.with_meter(meter_provider.clone());

        let writer = match self.writer {
            LogWriter::Stderr => BoxMakeWriter::new(std::io::stderr),
            LogWriter::Stdout => BoxMakeWriter::new(std::io::stdout),
        };
        let logs = tracing_subscriber::fmt::layer()
            .with_writer(writer)
            .with_ansi(self.ansi)
            .with_filter(self.log_filter);
        let traces = tracer_provider.map(|provider| {
            tracing_opentelemetry::layer().with_tracer(provider.tracer(SCOPE)).with_filter(self.export_filter)
        });
        let metrics = meter_provider
            .map(|provider| SpanMetrics::new(&provider.meter(SCOPE)).with_filter(filter_fn(is_measured)));
        tracing_subscriber::registry()
            .with(logs)
            .with(traces)
            .with(metrics)
            .try_init()
            .map_err(Error::AlreadyInstalled)?;
        Ok(guard)
    }
}

/// Installs the telemetry for `service_name` with `default_filter` for the log lines when
/// `RUST_LOG` is unset; OTLP export follows the standard environment variables. The same as
/// `Telemetry::builder().service_name(..).default_filter(..).build()?.install()`.
pub fn init(service_name: &str, default_filter: &str) -> Result<TelemetryGuard> {
    Telemetry::builder().service_name(service_name).default_filter(default_filter).build()?.install()
}

#[cfg(test)]
mod tests {
    use opentelemetry::{Key, Value};

    use super::*;

    fn get(resource: &Resource, key: &'static str) -> Option<Value> {
        resource.get(&Key::from_static_str(key))
    }

    #[test]
    fn the_program_names_the_service_unless_the_environment_does() {
        let named = resource("agent", Some("1.2.3"), None);
        assert_eq!(get(&named, "service.name"), Some("agent".into()));
        assert_eq!(get(&named, "service.version"), Some("1.2.3".into()));
        assert!(get(&named, "telemetry.sdk.name").is_some());
        let renamed = resource("agent", None, Some("from-env".to_owned()));
        assert_eq!(get(&renamed, "service.name"), Some("from-env".into()));
    }

    #[test]
    fn a_bad_filter_is_an_error_naming_its_source() {
        let err = Telemetry::builder().export_filter("info,[").build().unwrap_err();
        assert!(matches!(err, Error::InvalidFilter { from: "the builder's export filter", .. }), "{err}");
    }
}
