//! The serve examples' settings from the environment: retention, hosts and origins,
//! authentication.

use std::time::Duration;

use mnemograph_server::auth::BearerTokens;
use mnemograph_server::Server;

/// A duration of whole seconds from the environment variable `name`, if set.
fn seconds(name: &str) -> std::result::Result<Option<Duration>, Box<dyn std::error::Error>> {
    match std::env::var(name) {
        Ok(s) => Ok(Some(Duration::from_secs(s.parse().map_err(|e| format!("{name}={s}: {e}"))?))),
        Err(_) => Ok(None),
    }
}

/// The retention, sweep interval and event log size of `RUN_RETENTION_SECS`,
/// `EVENT_RETENTION_SECS`, `SWEEP_SECS` and `EVENT_LOG_BYTES`, where set.
fn retained(mut server: Server) -> std::result::Result<Server, Box<dyn std::error::Error>> {
    if let Some(d) = seconds("RUN_RETENTION_SECS")? {
        server = server.with_run_retention(d);
    }
    if let Some(d) = seconds("EVENT_RETENTION_SECS")? {
        server = server.with_event_retention(d);
    }
    if let Some(d) = seconds("SWEEP_SECS")? {
        server = server.with_sweep_interval(d);
    }
    if let Ok(b) = std::env::var("EVENT_LOG_BYTES") {
        server = server.with_event_log_bytes(b.parse().map_err(|e| format!("EVENT_LOG_BYTES={b}: {e}"))?);
    }
    Ok(server)
}

/// The hosts and origins of `ALLOWED_HOSTS` and `CORS_ORIGINS`.
fn guarded(server: Server) -> Server {
    let list = |name: &str| -> Vec<String> {
        let value = std::env::var(name).unwrap_or_default();
        value.split(',').map(str::trim).filter(|s| !s.is_empty()).map(str::to_owned).collect()
    };
    let hosts = list("ALLOWED_HOSTS");
    let server =
        if hosts.iter().any(|h| h == "*") { server.allow_any_host() } else { server.allowed_hosts(hosts) };
    server.cors_origins(list("CORS_ORIGINS"))
}

/// Authenticates with the token table of `AUTH_TOKENS`, if set; serves without when told
/// `--no-auth`.
fn authenticated(server: Server, no_auth: bool) -> std::result::Result<Server, Box<dyn std::error::Error>> {
    let server = if no_auth { server.allow_unauthenticated() } else { server };
    match std::env::var("AUTH_TOKENS") {
        Ok(table) => Ok(server.with_auth(BearerTokens::parse(&table)?)),
        Err(_) => Ok(server),
    }
}

/// `server` with every setting of the environment, serving beyond loopback without
/// authentication when told `no_auth`.
pub(crate) fn configured(
    server: Server,
    no_auth: bool,
) -> std::result::Result<Server, Box<dyn std::error::Error>> {
    authenticated(guarded(retained(server)?), no_auth)
}
