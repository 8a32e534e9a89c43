//! Where each signal goes: the endpoint and protocol from the builder or from the standard
//! `OTEL_*` environment variables, resolved and checked before anything is built.

use std::fmt;

use crate::error::{Error, Result};

/// The OTLP transport.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Protocol {
    /// OTLP over gRPC (`grpc`), usually on port 4317; the default, as the specification says.
    Grpc,
    /// OTLP over HTTP with protobuf bodies (`http/protobuf`), usually on port 4318.
    HttpProtobuf,
}

impl Protocol {
    /// The value `OTEL_EXPORTER_OTLP_PROTOCOL` uses for it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Grpc => "grpc",
            Self::HttpProtobuf => "http/protobuf",
        }
    }

    /// Reads an `OTEL_EXPORTER_OTLP_PROTOCOL` value; `from` names where it came from, for the
    /// error.
    pub(crate) fn parse(value: &str, from: &'static str) -> Result<Self> {
        match value.trim() {
            "grpc" => Ok(Self::Grpc),
            "http/protobuf" => Ok(Self::HttpProtobuf),
            _ => Err(Error::UnknownProtocol { value: value.to_owned(), from }),
        }
    }

    /// Fails when the transport's feature is off in this build.
    fn ensure_enabled(self) -> Result<Self> {
        let (enabled, feature) = match self {
            Self::Grpc => (cfg!(feature = "grpc"), "grpc"),
            Self::HttpProtobuf => (cfg!(feature = "http"), "http"),
        };
        if enabled {
            Ok(self)
        } else {
            Err(Error::ProtocolNotEnabled { protocol: self, feature })
        }
    }
}

impl fmt::Display for Protocol {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One telemetry signal and the names of its variables.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Signal {
    endpoint_var: &'static str,
    protocol_var: &'static str,
    exporter_var: &'static str,
    /// Appended to a base endpoint for HTTP, as the specification says.
    http_path: &'static str,
}

pub(crate) const TRACES: Signal = Signal {
    endpoint_var: "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
    protocol_var: "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL",
    exporter_var: "OTEL_TRACES_EXPORTER",
    http_path: "v1/traces",
};

pub(crate) const METRICS: Signal = Signal {
    endpoint_var: "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT",
    protocol_var: "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL",
    exporter_var: "OTEL_METRICS_EXPORTER",
    http_path: "v1/metrics",
};

const ENDPOINT_VAR: &str = "OTEL_EXPORTER_OTLP_ENDPOINT";
const PROTOCOL_VAR: &str = "OTEL_EXPORTER_OTLP_PROTOCOL";
const SDK_DISABLED_VAR: &str = "OTEL_SDK_DISABLED";

/// Where one signal is sent.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Target {
    /// The full URL the exporter is given: for HTTP, with the signal's path.
    pub endpoint: String,
    /// The transport.
    pub protocol: Protocol,
}

/// What the builder was told, before the environment is consulted.
#[derive(Clone, Debug, Default)]
pub(crate) struct Explicit {
    pub(crate) endpoint: Option<String>,
    pub(crate) protocol: Option<Protocol>,
}

/// Resolves one signal's target: `None` when nothing names an endpoint for it, when
/// `OTEL_{SIGNAL}_EXPORTER=none`, or when `OTEL_SDK_DISABLED=true`. `env` reads a variable
/// (empty counts as unset), so tests resolve without touching the process environment.
pub(crate) fn resolve(
    signal: Signal,
    explicit: &Explicit,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Option<Target>> {
    let var = |name: &str| env(name).filter(|v| !v.trim().is_empty());
    if var(SDK_DISABLED_VAR).is_some_and(|v| v.trim().eq_ignore_ascii_case("true")) {
        return Ok(None);
    }
    if var(signal.exporter_var).is_some_and(|v| v.trim() == "none") {
        return Ok(None);
    }
    // A base endpoint gets the signal's path under HTTP; a signal's own endpoint is used as is.
    let (endpoint, from, base) = if let Some(endpoint) = &explicit.endpoint {
        (endpoint.clone(), "the builder", true)
    } else if let Some(endpoint) = var(signal.endpoint_var) {
        (endpoint, signal.endpoint_var, false)
    } else if let Some(endpoint) = var(ENDPOINT_VAR) {
        (endpoint, ENDPOINT_VAR, true)
    } else {
        return Ok(None);
    };
    let protocol = match explicit.protocol {
        Some(protocol) => protocol,
        None => match (var(signal.protocol_var), var(PROTOCOL_VAR)) {
            (Some(value), _) => Protocol::parse(&value, signal.protocol_var)?,
            (None, Some(value)) => Protocol::parse(&value, PROTOCOL_VAR)?,
            (None, None) => Protocol::Grpc,
        },
    };
    let protocol = protocol.ensure_enabled()?;
    let endpoint = endpoint.trim();
    check_url(endpoint, from)?;
    let endpoint = match protocol {
        Protocol::HttpProtobuf if base => format!("{}/{}", endpoint.trim_end_matches('/'), signal.http_path),
        _ => endpoint.to_owned(),
    };
    Ok(Some(Target { endpoint, protocol }))
}

/// An endpoint is an absolute `http` or `https` URL with a host.
fn check_url(endpoint: &str, from: &'static str) -> Result<()> {
    let refuse = |reason: String| Error::InvalidEndpoint { endpoint: endpoint.to_owned(), from, reason };
    let url = url::Url::parse(endpoint).map_err(|e| refuse(e.to_string()))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(refuse(format!("the scheme is `{}`; expected `http` or `https`", url.scheme())));
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err(refuse("no host".to_owned()));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env<'a>(vars: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |name| vars.iter().find(|(k, _)| *k == name).map(|(_, v)| (*v).to_owned())
    }

    #[test]
    fn nothing_is_exported_without_an_endpoint() {
        let none = resolve(TRACES, &Explicit::default(), &env(&[])).unwrap();
        assert_eq!(none, None);
        let empty = resolve(TRACES, &Explicit::default(), &env(&[(ENDPOINT_VAR, " ")])).unwrap();
        assert_eq!(empty, None);
    }

    #[test]
    fn grpc_is_the_default_and_keeps_the_endpoint_as_given() {
        let vars = [(ENDPOINT_VAR, "http://127.0.0.1:4317")];
        let target = resolve(TRACES, &Explicit::default(), &env(&vars)).unwrap().unwrap();
        assert_eq!(target, Target { endpoint: "http://127.0.0.1:4317".into(), protocol: Protocol::Grpc });
    }

    #[test]
    fn http_appends_the_signal_path_to_a_base_endpoint_only() {
        let vars = [
            (ENDPOINT_VAR, "http://collector:4318/"),
            (PROTOCOL_VAR, "http/protobuf"),
            ("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", "http://other:4318/custom"),
        ];
        let traces = resolve(TRACES, &Explicit::default(), &env(&vars)).unwrap().unwrap();
        assert_eq!(traces.endpoint, "http://collector:4318/v1/traces");
        let metrics = resolve(METRICS, &Explicit::default(), &env(&vars)).unwrap().unwrap();
        assert_eq!(metrics.endpoint, "http://other:4318/custom");
    }

    #[test]
    fn the_builder_overrides_the_environment() {
        let vars = [(ENDPOINT_VAR, "http://env:4317"), (PROTOCOL_VAR, "bogus")];
        let explicit =
            Explicit { endpoint: Some("http://builder:4318".into()), protocol: Some(Protocol::HttpProtobuf) };
        let target = resolve(METRICS, &explicit, &env(&vars)).unwrap().unwrap();
        assert_eq!(target.endpoint, "http://builder:4318/v1/metrics");
    }

    #[test]
    fn a_signal_specific_protocol_wins_over_the_general_one() {
        let vars = [
            (ENDPOINT_VAR, "http://c:4317"),
            (PROTOCOL_VAR, "http/protobuf"),
            ("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "grpc"),
        ];
        let traces = resolve(TRACES, &Explicit::default(), &env(&vars)).unwrap().unwrap();
        assert_eq!(traces.protocol, Protocol::Grpc);
        let metrics = resolve(METRICS, &Explicit::default(), &env(&vars)).unwrap().unwrap();
        assert_eq!(metrics.protocol, Protocol::HttpProtobuf);
    }

    #[test]
    fn unknown_protocols_and_bad_urls_are_typed_errors() {
        let vars = [(ENDPOINT_VAR, "http://c:4317"), (PROTOCOL_VAR, "http/json")];
        let err = resolve(TRACES, &Explicit::default(), &env(&vars)).unwrap_err();
        assert!(
            matches!(err, Error::UnknownProtocol { ref value, from: PROTOCOL_VAR } if value == "http/json"),
            "{err}"
        );
        for bad in ["localhost:4317", "ftp://c:21", "not a url", "http://"] {
            let vars = [(ENDPOINT_VAR, bad)];
            let err = resolve(TRACES, &Explicit::default(), &env(&vars)).unwrap_err();
            assert!(matches!(err, Error::InvalidEndpoint { from: ENDPOINT_VAR, .. }), "{bad}: {err}");
        }
    }

    #[test]
    fn the_standard_switches_turn_signals_off() {
        let vars = [(ENDPOINT_VAR, "http://c:4317"), ("OTEL_METRICS_EXPORTER", "none")];
        assert!(resolve(TRACES, &Explicit::default(), &env(&vars)).unwrap().is_some());
        assert_eq!(resolve(METRICS, &Explicit::default(), &env(&vars)).unwrap(), None);
        let vars = [(ENDPOINT_VAR, "http://c:4317"), (SDK_DISABLED_VAR, "TRUE")];
        assert_eq!(resolve(TRACES, &Explicit::default(), &env(&vars)).unwrap(), None);
    }
}
