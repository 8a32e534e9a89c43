//! The OTLP exporters and the SDK providers around them. Spans go through a batch processor and
//! metrics through a periodic reader, each on its own background thread, so exporting never
//! runs on the program's tasks; the guard's shutdown flushes both.

use opentelemetry_sdk::metrics::SdkMeterProvider;
use opentelemetry_sdk::trace::SdkTracerProvider;
use opentelemetry_sdk::Resource;

use crate::config::Target;
#[cfg(any(feature = "grpc", feature = "http"))]
use crate::error::Error;
#[cfg(not(all(feature = "grpc", feature = "http")))]
use crate::error::Error as NotEnabled;
use crate::error::Result;
#[cfg(not(all(feature = "grpc", feature = "http")))]
use crate::Protocol;

/// A tracer provider exporting to `target` in batches.
#[cfg(any(feature = "grpc", feature = "http"))]
pub(crate) fn tracer_provider(target: &Target, resource: Resource) -> Result<SdkTracerProvider> {
    let exporter = span_exporter(target)?;
    Ok(SdkTracerProvider::builder().with_resource(resource).with_batch_exporter(exporter).build())
}

/// A meter provider exporting to `target` on the SDK's period (`OTEL_METRIC_EXPORT_INTERVAL`,
/// 60 s by default) and at shutdown.
#[cfg(any(feature = "grpc", feature = "http"))]
pub(crate) fn meter_provider(target: &Target, resource: Resource) -> Result<SdkMeterProvider> {
    let exporter = metric_exporter(target)?;
    Ok(SdkMeterProvider::builder().with_resource(resource).with_periodic_exporter(exporter).build())
}

/// Without a transport compiled in, configuration already refuses every target.
#[cfg(not(any(feature = "grpc", feature = "http")))]
pub(crate) fn tracer_provider(target: &Target, _: Resource) -> Result<SdkTracerProvider> {
    Err(not_enabled(target.protocol))
}

#[cfg(not(any(feature = "grpc", feature = "http")))]
pub(crate) fn meter_provider(target: &Target, _: Resource) -> Result<SdkMeterProvider> {
    Err(not_enabled(target.protocol))
}

/// The OTLP exporter of one signal for `target`. The SDK's span and metric exporters have
/// builders with the same methods but no trait in common, so one macro builds either.
#[cfg(any(feature = "grpc", feature = "http"))]
macro_rules! otlp_exporter {
    ($exporter:ident, $signal:literal, $target:expr) => {{
        #[cfg(feature = "http")]
        use opentelemetry_otlp::WithHttpConfig;
        use opentelemetry_otlp::{$exporter, WithExportConfig};
        let target: &Target = $target;
        let built = match target.protocol {
            #[cfg(feature = "grpc")]
            crate::Protocol::Grpc => {
                ensure_runtime()?;
                $exporter::builder().with_tonic().with_endpoint(&target.endpoint).build()
            }
            #[cfg(feature = "http")]
            crate::Protocol::HttpProtobuf => $exporter::builder()
                .with_http()
                .with_http_client(
                    http_client().map_err(|source| Error::Exporter { signal: $signal, source })?,
                )
                .with_protocol(opentelemetry_otlp::Protocol::HttpBinary)
                .with_endpoint(&target.endpoint)
                .build(),
            #[cfg(not(feature = "grpc"))]
            Protocol::Grpc => return Err(not_enabled(Protocol::Grpc)),
            #[cfg(not(feature = "http"))]
            Protocol::HttpProtobuf => return Err(not_enabled(Protocol::HttpProtobuf)),
        };
        built.map_err(|e| Error::Exporter { signal: $signal, source: Box::new(e) })
    }};
}

#[cfg(any(feature = "grpc", feature = "http"))]
fn span_exporter(target: &Target) -> Result<opentelemetry_otlp::SpanExporter> {
    otlp_exporter!(SpanExporter, "traces", target)
}

#[cfg(any(feature = "grpc", feature = "http"))]
fn metric_exporter(target: &Target) -> Result<opentelemetry_otlp::MetricExporter> {
    otlp_exporter!(MetricExporter, "metrics", target)
}

#[cfg(not(all(feature = "grpc", feature = "http")))]
fn not_enabled(protocol: Protocol) -> NotEnabled {
    let feature = match protocol {
        Protocol::Grpc => "grpc",
        Protocol::HttpProtobuf => "http",
    };
    NotEnabled::ProtocolNotEnabled { protocol, feature }
}

/// tonic's channel spawns its connection task on the current Tokio runtime and panics without
/// one; this turns that into an error.
#[cfg(feature = "grpc")]
fn ensure_runtime() -> Result<()> {
    tokio::runtime::Handle::try_current().map(drop).map_err(|_| Error::NoTokioRuntime)
}

/// How long one HTTP export may take: the OTLP exporters' default (`OTEL_EXPORTER_OTLP_TIMEOUT`).
#[cfg(feature = "http")]
const HTTP_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

#[cfg(feature = "http")]
type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// The HTTP exporter's client: blocking (the batch processor exports from its own thread),
/// with rustls on the process-wide crypto provider when the program installed one, else ring.
/// Built on a thread of its own: reqwest's blocking client starts a runtime, which may not be
/// done from inside the program's.
#[cfg(feature = "http")]
fn http_client() -> Result<reqwest::blocking::Client, BoxError> {
    use rustls_platform_verifier::BuilderVerifierExt;
    use std::sync::Arc;

    let build = || -> Result<reqwest::blocking::Client, BoxError> {
        let provider = rustls::crypto::CryptoProvider::get_default()
            .cloned()
            .unwrap_or_else(|| Arc::new(rustls::crypto::ring::default_provider()));
        let tls = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()?
            .with_platform_verifier()?
            .with_no_client_auth();
        Ok(reqwest::blocking::Client::builder()
            .timeout(HTTP_TIMEOUT)
            .tls_backend_preconfigured(tls)
            .build()?)
    };
    std::thread::spawn(build).join().map_err(|_| BoxError::from("building the HTTP client panicked"))?
}
