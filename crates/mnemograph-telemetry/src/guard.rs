//! The guard that keeps the providers alive and flushes them at the end.

use opentelemetry_sdk::metrics::SdkMeterProvider;
use opentelemetry_sdk::trace::SdkTracerProvider;

use crate::error::{Error, Result};

/// Keeps the OpenTelemetry providers alive; dropping it (or [`shutdown`](Self::shutdown)) exports
/// what is still buffered and stops them, so the last spans of a short command reach the
/// collector. Hold it in `main` until the program ends.
///
/// With the gRPC exporter, drop it on a multi-thread Tokio runtime (`#[tokio::main]`'s default):
/// the flush waits for the export, and the export's connection runs on the runtime's other
/// threads.
#[derive(Debug, Default)]
#[must_use = "dropping the guard shuts the telemetry down"]
pub struct TelemetryGuard {
    tracer: Option<SdkTracerProvider>,
    meter: Option<SdkMeterProvider>,
}

impl TelemetryGuard {
    pub(crate) fn new(tracer: Option<SdkTracerProvider>) -> Self {
        Self { tracer, meter: None }
    }

    pub(crate) fn with_meter(mut self, meter: Option<SdkMeterProvider>) -> Self {
        self.meter = meter;
        self
    }

    /// Whether spans are exported (an OTLP endpoint was configured).
    pub fn exports_traces(&self) -> bool {
        self.tracer.is_some()
    }

    /// Whether metrics are exported.
    pub fn exports_metrics(&self) -> bool {
        self.meter.is_some()
    }

    /// Exports what is buffered without stopping; for a long-running program at a quiet moment.
    pub fn flush(&self) -> Result<()> {
        let traces = self.tracer.as_ref().map(SdkTracerProvider::force_flush).transpose();
        let metrics = self.meter.as_ref().map(SdkMeterProvider::force_flush).transpose();
        traces.map_err(|source| Error::Shutdown { signal: "traces", source })?;
        metrics.map_err(|source| Error::Shutdown { signal: "metrics", source })?;
        Ok(())
    }

    /// Exports what is buffered and stops both providers, reporting the first failure. Spans
    /// still open are not exported.
    pub fn shutdown(mut self) -> Result<()> {
        self.stop()
    }

    fn stop(&mut self) -> Result<()> {
        // Traces first: the metrics derived from the last spans are recorded when they close,
        // before either provider stops.
        let traces = self.tracer.take().map(|p| p.shutdown()).transpose();
        let metrics = self.meter.take().map(|p| p.shutdown()).transpose();
        traces.map_err(|source| Error::Shutdown { signal: "traces", source })?;
        metrics.map_err(|source| Error::Shutdown { signal: "metrics", source })?;
        Ok(())
    }
}

impl Drop for TelemetryGuard {
    fn drop(&mut self) {
        if let Err(e) = self.stop() {
            // The subscriber may be the thing that failed; stderr is the one channel left.
            eprintln!("mnemograph-telemetry: {e}");
        }
    }
}
