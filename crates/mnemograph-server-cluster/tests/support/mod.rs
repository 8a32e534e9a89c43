//! Shared by the cluster's tests; the graphs, the SDK scripts and their helpers are the server's
//! own test support, included from its folder.

#[allow(dead_code, reason = "each test file uses a different subset")]
#[path = "../../../mnemograph-server/tests/support/graphs.rs"]
pub(crate) mod graphs;
#[allow(dead_code, reason = "each test file uses a different subset")]
#[path = "../../../mnemograph-server/tests/support/langgraph_dev.rs"]
pub(crate) mod langgraph_dev;
#[allow(dead_code, reason = "each test file uses a different subset")]
pub(crate) mod mysql;
#[allow(dead_code, reason = "each test file uses a different subset")]
#[path = "../../../mnemograph-server/tests/support/node.rs"]
pub(crate) mod node;
#[allow(dead_code, reason = "each test file uses a different subset")]
pub(crate) mod pair;
#[allow(dead_code, reason = "each test file uses a different subset")]
#[path = "../../../mnemograph-server/tests/support/probe.rs"]
pub(crate) mod probe;
#[allow(dead_code, reason = "each test file uses a different subset")]
#[path = "../../../mnemograph-server/tests/support/python.rs"]
pub(crate) mod python;
#[allow(dead_code, reason = "each test file uses a different subset")]
#[path = "../../../mnemograph-server/tests/support/receiver.rs"]
pub(crate) mod receiver;
#[allow(dead_code, reason = "each test file uses a different subset")]
pub(crate) mod services;
#[allow(dead_code, reason = "each test file uses a different subset")]
pub(crate) mod steps;

/// A plain-HTTP client for the tests. Its TLS config names ring explicitly: in a workspace build
/// reqwest's rustls comes without a crypto provider and would refuse to build a client.
#[allow(dead_code, reason = "each test file uses a different subset")]
pub(crate) fn http_client() -> reqwest::Client {
    let tls = rustls::ClientConfig::builder_with_provider(std::sync::Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .expect("TLS versions")
    .with_root_certificates(rustls::RootCertStore::empty())
    .with_no_client_auth();
    reqwest::Client::builder().tls_backend_preconfigured(tls).build().expect("HTTP client")
}
