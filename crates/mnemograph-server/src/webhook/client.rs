//! The HTTP client webhooks are sent with: rustls on ring with the platform's certificate
//! verifier, and redirects followed only within the allow-list and the target's own host and
//! port.

use std::sync::Arc;
use std::time::Duration;

use reqwest::redirect;

use super::policy::Rules;
use crate::error::{Result, ServerError};

/// The most redirects one attempt follows.
const MAX_REDIRECTS: usize = 5;
/// The longest wait for a connection, within an attempt's timeout.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// A client for `rules`' targets.
pub(crate) fn client(rules: &Arc<Rules>) -> Result<reqwest::Client> {
    let fail = |e: &dyn std::fmt::Display| ServerError::Misconfigured(format!("webhook HTTP client: {e}"));
    let rules = rules.clone();
    let connect = CONNECT_TIMEOUT.min(rules.timeout);
    // A receiver may move its endpoint on its own host and port, never to another address: a
    // redirect would let an allowed receiver point the server at a service the deployer did not
    // allow, even one on the same machine.
    let redirects = redirect::Policy::custom(move |attempt| {
        let (first, next) = (attempt.previous().first(), attempt.url());
        let same_host = first.is_some_and(|f| {
            f.host_str() == next.host_str() && f.port_or_known_default() == next.port_or_known_default()
        });
        if attempt.previous().len() > MAX_REDIRECTS || !same_host || !rules.allows(attempt.url()) {
            attempt.stop()
        } else {
            attempt.follow()
        }
    });
    reqwest::Client::builder()
        .tls_backend_preconfigured(tls_config().map_err(|e| fail(&e))?)
        .connect_timeout(connect)
        .redirect(redirects)
        .user_agent(concat!("mnemograph-server/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|e| fail(&e))
}

/// The process-wide rustls crypto provider when the application installed one, else ring (never
/// installed as the process default: that is the application's choice), with the platform's
/// certificate verifier.
fn tls_config() -> std::result::Result<rustls::ClientConfig, rustls::Error> {
    use rustls_platform_verifier::BuilderVerifierExt;

    let provider = rustls::crypto::CryptoProvider::get_default()
        .cloned()
        .unwrap_or_else(|| Arc::new(rustls::crypto::ring::default_provider()));
    let mut config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()?
        .with_platform_verifier()?
        .with_no_client_auth();
    // What reqwest offers when it builds the config itself without HTTP/2.
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(config)
}
