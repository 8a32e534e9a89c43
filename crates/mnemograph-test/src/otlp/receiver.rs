//! In-process OTLP receivers on loopback, built from the official protobuf definitions
//! (opentelemetry-proto): gRPC through its tonic services, HTTP by decoding the protobuf
//! bodies. Both count the spans they get and, unless told to discard them, keep every export
//! request for the test to read.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::Router;
use opentelemetry_proto::tonic::collector::metrics::v1::metrics_service_server::{
    MetricsService, MetricsServiceServer,
};
use opentelemetry_proto::tonic::collector::metrics::v1::{
    ExportMetricsServiceRequest, ExportMetricsServiceResponse,
};
use opentelemetry_proto::tonic::collector::trace::v1::trace_service_server::{
    TraceService, TraceServiceServer,
};
use opentelemetry_proto::tonic::collector::trace::v1::{
    ExportTraceServiceRequest, ExportTraceServiceResponse,
};
use parking_lot::Mutex;
use prost::Message as _;
use tonic::{Request, Response as GrpcResponse, Status};

/// What a receiver got. Clones share it.
#[derive(Debug, Clone, Default)]
pub struct Received {
    traces: Arc<Mutex<Vec<ExportTraceServiceRequest>>>,
    metrics: Arc<Mutex<Vec<ExportMetricsServiceRequest>>>,
    span_count: Arc<AtomicU64>,
    discard: bool,
}

impl Received {
    /// Every trace export request so far, in arrival order (none when discarding).
    pub fn traces(&self) -> Vec<ExportTraceServiceRequest> {
        self.traces.lock().clone()
    }

    /// Every metric export request so far, in arrival order (none when discarding).
    pub fn metrics(&self) -> Vec<ExportMetricsServiceRequest> {
        self.metrics.lock().clone()
    }

    /// How many spans arrived, kept or not.
    pub fn span_count(&self) -> u64 {
        self.span_count.load(Ordering::Relaxed)
    }

    fn take_traces(&self, request: ExportTraceServiceRequest) {
        let spans = request.resource_spans.iter().flat_map(|rs| &rs.scope_spans).map(|ss| ss.spans.len());
        self.span_count.fetch_add(spans.sum::<usize>() as u64, Ordering::Relaxed);
        if !self.discard {
            self.traces.lock().push(request);
        }
    }

    fn take_metrics(&self, request: ExportMetricsServiceRequest) {
        if !self.discard {
            self.metrics.lock().push(request);
        }
    }
}

/// A running receiver: its address and what it got. It serves on the Tokio runtime it was
/// started on until that runtime shuts down.
#[derive(Debug)]
pub struct Receiver {
    /// The loopback address it listens on.
    pub addr: SocketAddr,
    /// What it got.
    pub received: Received,
}

impl Receiver {
    /// The endpoint to configure the exporter with (`OTEL_EXPORTER_OTLP_ENDPOINT`).
    pub fn endpoint(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// An OTLP/gRPC receiver: the `TraceService` and `MetricsService` on one tonic server.
    ///
    /// # Panics
    /// When no loopback port can be bound.
    pub async fn grpc() -> Self {
        Self::grpc_with(Received::default()).await
    }

    /// An OTLP/gRPC receiver that only counts the spans it gets: a sink for measuring what
    /// exporting costs the exporting process, without the receiver's memory growing.
    ///
    /// # Panics
    /// When no loopback port can be bound.
    pub async fn grpc_discarding() -> Self {
        Self::grpc_with(Received { discard: true, ..Received::default() }).await
    }

    async fn grpc_with(received: Received) -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let server = tonic::transport::Server::builder()
            .add_service(TraceServiceServer::new(received.clone()))
            .add_service(MetricsServiceServer::new(received.clone()));
        let incoming = tonic::transport::server::TcpIncoming::from(listener);
        tokio::spawn(async move { server.serve_with_incoming(incoming).await.unwrap() });
        Self { addr, received }
    }

    /// An OTLP/HTTP receiver: protobuf bodies on `/v1/traces` and `/v1/metrics`.
    ///
    /// # Panics
    /// When no loopback port can be bound.
    pub async fn http() -> Self {
        let received = Received::default();
        let app = Router::new()
            .route("/v1/traces", post(http_traces))
            .route("/v1/metrics", post(http_metrics))
            .with_state(received.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        Self { addr, received }
    }
}

#[tonic::async_trait]
impl TraceService for Received {
    async fn export(
        &self,
        request: Request<ExportTraceServiceRequest>,
    ) -> Result<GrpcResponse<ExportTraceServiceResponse>, Status> {
        self.take_traces(request.into_inner());
        Ok(GrpcResponse::new(ExportTraceServiceResponse { partial_success: None }))
    }
}

#[tonic::async_trait]
impl MetricsService for Received {
    async fn export(
        &self,
        request: Request<ExportMetricsServiceRequest>,
    ) -> Result<GrpcResponse<ExportMetricsServiceResponse>, Status> {
        self.take_metrics(request.into_inner());
        Ok(GrpcResponse::new(ExportMetricsServiceResponse { partial_success: None }))
    }
}

fn protobuf(message: &impl prost::Message) -> Response {
    ([(header::CONTENT_TYPE, "application/x-protobuf")], message.encode_to_vec()).into_response()
}

async fn http_traces(State(received): State<Received>, body: Bytes) -> Response {
    match ExportTraceServiceRequest::decode(body) {
        Ok(request) => {
            received.take_traces(request);
            protobuf(&ExportTraceServiceResponse { partial_success: None })
        }
        Err(e) => (StatusCode::BAD_REQUEST, e.to_string()).into_response(),
    }
}

async fn http_metrics(State(received): State<Received>, body: Bytes) -> Response {
    match ExportMetricsServiceRequest::decode(body) {
        Ok(request) => {
            received.take_metrics(request);
            protobuf(&ExportMetricsServiceResponse { partial_success: None })
        }
        Err(e) => (StatusCode::BAD_REQUEST, e.to_string()).into_response(),
    }
}
