//! The OpenAI client's TLS: rustls with ring, found without a process-wide crypto provider.
//!
//! The workspace compiles one rustls provider (ring) and reqwest gets `rustls-no-provider`, so a
//! client that relied on reqwest's own default would panic for want of a provider. The server here
//! is a plain TCP listener on loopback that records the first bytes a client sends: a TLS record
//! (`0x16 0x03`, a ClientHello) shows the TLS config was built and used, and the handshake then
//! fails as an ordinary transport error because the listener closes the connection.

use std::time::Duration;

use mnemograph_core::messages::Message;
use mnemograph_models::{ChatModel, ChatRequest, Error, OpenAiChatModel, OpenAiConfig, OpenAiEmbeddings};
use tokio::io::AsyncReadExt;
use tokio::net::TcpListener;

/// Accepts one connection, returns its first bytes (up to 5), then closes it.
async fn first_bytes(listener: TcpListener) -> Vec<u8> {
    let (mut socket, _) = listener.accept().await.unwrap();
    let mut buf = vec![0u8; 5];
    let mut read = 0;
    while read < buf.len() {
        match tokio::time::timeout(Duration::from_secs(10), socket.read(&mut buf[read..])).await {
            Ok(Ok(n)) if n > 0 => read += n,
            _ => break,
        }
    }
    buf.truncate(read);
    buf
}

#[tokio::test]
async fn https_starts_a_tls_handshake_without_an_installed_provider() {
    assert!(
        rustls::crypto::CryptoProvider::get_default().is_none(),
        "nothing installs a provider in this test"
    );

    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let server = tokio::spawn(first_bytes(listener));

    let config =
        OpenAiConfig::new("m").with_base_url(format!("https://127.0.0.1:{port}/v1")).with_max_retries(0);
    // Building the client builds its TLS config: no panic, no provider installed.
    let model = OpenAiChatModel::new(config.clone()).unwrap();
    OpenAiEmbeddings::new(config, 8).unwrap();

    let err = model.invoke(ChatRequest::new(vec![Message::human("hi")])).await.unwrap_err();
    assert!(matches!(err, Error::Transport { .. }), "{err:?}");

    let hello = server.await.unwrap();
    assert_eq!(hello.get(..2), Some(&[0x16, 0x03][..]), "not a TLS handshake record: {hello:02x?}");
    // The client named ring itself; the process default is still the application's to choose.
    assert!(rustls::crypto::CryptoProvider::get_default().is_none());
}
