//! `rediss://` without a hand-installed crypto provider.
//!
//! redis' `tls-rustls` builds its TLS config with `rustls::ClientConfig::builder()`, which takes
//! the process-wide provider, or else the one provider compiled into rustls, and panics when there
//! are two (ring and aws-lc-rs) and none was installed. The workspace compiles ring alone, so
//! nothing needs installing. These tests check it in-process and through the binary, against a
//! plain TCP listener on loopback that records what the client sends first: a TLS record
//! (`0x16 0x03`, a ClientHello) shows the config was built and used.

use std::io::Read;
use std::net::TcpListener;
use std::sync::mpsc;
use std::time::Duration;

use rustls::crypto::CryptoProvider;

#[test]
fn rustls_finds_its_one_provider_without_an_installed_one() {
    assert!(CryptoProvider::get_default().is_none(), "nothing in this test binary installs a provider");
    // What redis does for a `rediss://` URL; it panics when several providers are compiled in.
    let config = rustls::ClientConfig::builder()
        .with_root_certificates(rustls::RootCertStore::empty())
        .with_no_client_auth();
    let ring = rustls::crypto::ring::default_provider();
    let suites = |p: &CryptoProvider| p.cipher_suites.iter().map(|s| s.suite()).collect::<Vec<_>>();
    assert_eq!(suites(config.crypto_provider()), suites(&ring), "the provider rustls picked is ring's");
}

#[test]
fn a_rediss_url_reaches_the_tls_handshake_without_panicking() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let (first_bytes, received) = mpsc::channel();
    // Records the first bytes of each connection (the client may retry), then closes it.
    std::thread::spawn(move || {
        for socket in listener.incoming() {
            let Ok(mut socket) = socket else { continue };
            socket.set_read_timeout(Some(Duration::from_secs(10))).ok();
            let mut buf = [0u8; 5];
            let n = socket.read(&mut buf).unwrap_or(0);
            let _ = first_bytes.send(buf[..n].to_vec());
        }
    });

    let out = std::process::Command::new(env!("CARGO_BIN_EXE_checkpoint-inspect"))
        .args([&format!("rediss://127.0.0.1:{port}/"), "threads"])
        .output()
        .expect("the checkpoint-inspect binary runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(out.status.code(), Some(1), "a failed connection, not a crash: {stderr}");

    let hello = received.recv_timeout(Duration::from_secs(5)).expect("the binary connected");
    assert_eq!(hello.get(..2), Some(&[0x16, 0x03][..]), "not a TLS handshake record: {hello:02x?}");
}
