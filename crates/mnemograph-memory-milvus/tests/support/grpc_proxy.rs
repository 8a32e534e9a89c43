//! A gRPC proxy on loopback in front of the test server: it counts the requests of each method,
//! and can answer one method `Unimplemented` as a server without that method does.

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::sync::{Arc, Mutex};

use http_body_util::{combinators::BoxBody, BodyExt, Empty};
use hyper::body::{Bytes, Incoming};
use hyper::{Request, Response};
use hyper_util::rt::{TokioExecutor, TokioIo};
use tokio::net::{TcpListener, TcpStream};

/// Requests per method name (`Search`, `HybridSearch`, ...).
pub type Calls = BTreeMap<String, usize>;

/// The proxy: point a client at [`url`](Self::url).
#[derive(Clone)]
pub struct GrpcProxy {
    /// `http://127.0.0.1:PORT` of the proxy.
    pub url: String,
    calls: Arc<Mutex<Calls>>,
    refused: Arc<Mutex<Option<String>>>,
}

impl GrpcProxy {
    /// Listens on a free loopback port and forwards to `upstream` (`http://host:port`), one
    /// upstream connection per client connection; runs until the test's runtime ends.
    pub async fn start(upstream: &str) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind the proxy");
        let proxy = Self {
            url: format!("http://{}", listener.local_addr().expect("proxy address")),
            calls: Arc::default(),
            refused: Arc::default(),
        };
        let upstream = upstream.trim_start_matches("http://").trim_end_matches('/').to_owned();
        let state = proxy.clone();
        tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                let Ok(server) = TcpStream::connect(&upstream).await else { return };
                let handshake =
                    hyper::client::conn::http2::handshake(TokioExecutor::new(), TokioIo::new(server)).await;
                let Ok((sender, connection)) = handshake else { return };
                tokio::spawn(connection);
                let state = state.clone();
                let service = hyper::service::service_fn(move |req: Request<Incoming>| {
                    let (state, mut sender) = (state.clone(), sender.clone());
                    async move { state.forward(req, &mut sender).await }
                });
                tokio::spawn(async move {
                    let served = hyper::server::conn::http2::Builder::new(TokioExecutor::new())
                        .serve_connection(TokioIo::new(client), service)
                        .await;
                    drop(served);
                });
            }
        });
        proxy
    }

    async fn forward(
        &self,
        req: Request<Incoming>,
        sender: &mut hyper::client::conn::http2::SendRequest<Incoming>,
    ) -> Result<Response<BoxBody<Bytes, hyper::Error>>, hyper::Error> {
        let method = req.uri().path().rsplit('/').next().unwrap_or_default().to_owned();
        *self.calls.lock().unwrap().entry(method.clone()).or_default() += 1;
        if self.refused.lock().unwrap().as_deref() == Some(method.as_str()) {
            // A trailers-only answer, as a gRPC server gives for a method it does not have.
            let empty = Empty::<Bytes>::new().map_err(|never: Infallible| match never {}).boxed();
            let refusal = Response::builder()
                .header("content-type", "application/grpc")
                .header("grpc-status", "12")
                .header("grpc-message", "Method not implemented!")
                .body(empty)
                .expect("a valid response");
            return Ok(refusal);
        }
        let response = sender.send_request(req).await?;
        Ok(response.map(BodyExt::boxed))
    }

    /// The requests since the last call (and forgets them).
    pub fn take_calls(&self) -> Calls {
        std::mem::take(&mut *self.calls.lock().unwrap())
    }

    /// Answers `method` with `Unimplemented` from now on.
    pub fn refuse(&self, method: &str) {
        *self.refused.lock().unwrap() = Some(method.to_owned());
    }
}
