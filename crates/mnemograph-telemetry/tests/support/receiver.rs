//! In-process OTLP receivers on loopback, built from the official protobuf definitions
//! (opentelemetry-proto): gRPC through its tonic services, HTTP by decoding the protobuf
//! bodies. Both keep every export request for the test to read.

use std::net::SocketAddr;
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

/// What a receiver got.
#[derive(Clone, Default)]
pub struct Received {
    traces: Arc<Mutex<Vec<ExportTraceServiceRequest>>>,
    metrics: Arc<Mutex<Vec<ExportMetricsServiceRequest>>>,
}

impl Received {
    pub fn traces(&self) -> Vec<ExportTraceServiceRequest> {
        self.traces.lock().clone()
    }

    pub fn metrics(&self) -> Vec<ExportMetricsServiceRequest> {
        self.metrics.lock().clone()
    }
}

/// A running receiver: its address and what it got.
pub struct Receiver {
    pub addr: SocketAddr,
    pub received: Received,
}

impl Receiver {
    /// The endpoint to configure the exporter with.
    pub fn endpoint(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// An OTLP/gRPC receiver: the `TraceService` and `MetricsService` on one tonic server.
    pub async fn grpc() -> Self {
        let received = Received::default();
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
        self.traces.lock().push(request.into_inner());
        Ok(GrpcResponse::new(ExportTraceServiceResponse { partial_success: None }))
    }
}

#[tonic::async_trait]
impl MetricsService for Received {
    async fn export(
        &self,
        request: Request<ExportMetricsServiceRequest>,
    ) -> Result<GrpcResponse<ExportMetricsServiceResponse>, Status> {
        self.metrics.lock().push(request.into_inner());
        Ok(GrpcResponse::new(ExportMetricsServiceResponse { partial_success: None }))
    }
}

fn protobuf(message: &impl prost::Message) -> Response {
    ([(header::CONTENT_TYPE, "application/x-protobuf")], message.encode_to_vec()).into_response()
}

async fn http_traces(State(received): State<Received>, body: Bytes) -> Response {
    match ExportTraceServiceRequest::decode(body) {
        Ok(request) => {
            received.traces.lock().push(request);
            protobuf(&ExportTraceServiceResponse { partial_success: None })
        }
        Err(e) => (StatusCode::BAD_REQUEST, e.to_string()).into_response(),
    }
}

async fn http_metrics(State(received): State<Received>, body: Bytes) -> Response {
    match ExportMetricsServiceRequest::decode(body) {
        Ok(request) => {
            received.metrics.lock().push(request);
            protobuf(&ExportMetricsServiceResponse { partial_success: None })
        }
        Err(e) => (StatusCode::BAD_REQUEST, e.to_string()).into_response(),
    }
}
