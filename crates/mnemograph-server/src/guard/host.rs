//! [`Hosts`]: the host names the server answers for. A page on an attacker's domain that the
//! attacker re-points at the loopback address (DNS rebinding) reaches the server with its own
//! name in `Host`; refusing names the server was not given keeps such a page out.

use axum::extract::Request;
use axum::http::header;

use crate::error::{Result, ServerError};

/// Which `Host` values the server answers.
#[derive(Debug, Clone, Default)]
pub(crate) enum Hosts {
    /// The loopback names only.
    #[default]
    Loopback,
    /// The loopback names and the listed ones.
    Listed(Vec<Authority>),
    /// Every host: something in front of the server checks them.
    Any,
}

/// A host and maybe a port, lowercased, without a trailing dot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Authority {
    host: String,
    port: Option<String>,
}

impl Authority {
    /// Splits `host[:port]`, `[v6]` or `[v6]:port`.
    pub(crate) fn parse(text: &str) -> Self {
        let text = text.trim().to_ascii_lowercase();
        let (host, port) = match text.rsplit_once(':') {
            Some((host, port))
                if !port.is_empty()
                    && port.bytes().all(|b| b.is_ascii_digit())
                    && (!host.contains(':') || host.ends_with(']')) =>
            {
                (host.to_owned(), Some(port.to_owned()))
            }
            _ => (text, None),
        };
        let host = host.strip_suffix('.').map_or_else(|| host.clone(), str::to_owned);
        Self { host, port }
    }

    /// Whether it names this machine's loopback interface: `localhost` and the names under it
    /// (which browsers resolve to loopback themselves, never through DNS), `127.0.0.1` and
    /// `[::1]`.
    fn is_loopback(&self) -> bool {
        let h = self.host.as_str();
        h == "localhost" || h.ends_with(".localhost") || h == "127.0.0.1" || h == "[::1]"
    }

    /// Whether an allowed entry (`self`) admits `asked`: the same host, and the same port when
    /// the entry names one.
    fn admits(&self, asked: &Self) -> bool {
        self.host == asked.host && self.port.as_ref().is_none_or(|p| asked.port.as_ref() == Some(p))
    }

    /// The `host[:port]` text, as compared with an `Origin`'s.
    pub(crate) fn text(&self) -> String {
        match &self.port {
            Some(port) => format!("{}:{port}", self.host),
            None => self.host.clone(),
        }
    }
}

/// The authority a request is addressed to: the URI's (HTTP/2's `:authority`, or an absolute
/// request target), else the `Host` header.
pub(crate) fn authority_of(req: &Request) -> Option<Authority> {
    if let Some(a) = req.uri().authority() {
        return Some(Authority::parse(a.as_str()));
    }
    let host = req.headers().get(header::HOST)?.to_str().ok()?;
    (!host.trim().is_empty()).then(|| Authority::parse(host))
}

impl Hosts {
    /// Refuses, with 421, a request addressed to a host the server does not answer for.
    pub(crate) fn check(&self, asked: Option<&Authority>) -> Result<()> {
        if matches!(self, Self::Any) {
            return Ok(());
        }
        let Some(asked) = asked else {
            return Err(ServerError::MisdirectedRequest("the request names no host (`Host`)".into()));
        };
        let listed = match self {
            Self::Listed(list) => list.iter().any(|a| a.admits(asked)),
            _ => false,
        };
        if asked.is_loopback() || listed {
            return Ok(());
        }
        Err(ServerError::MisdirectedRequest(format!(
            "this server does not answer for host `{}`; its operator allows hosts with \
             `Server::allowed_hosts`",
            asked.text()
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn allowed(hosts: &Hosts, asked: &str) -> bool {
        hosts.check(Some(&Authority::parse(asked))).is_ok()
    }

    #[test]
    fn loopback_names_pass_at_any_port_and_others_do_not() {
        let hosts = Hosts::Loopback;
        for ok in
            ["localhost", "LOCALHOST:2024", "127.0.0.1:8123", "[::1]:80", "api.localhost:3000", "localhost."]
        {
            assert!(allowed(&hosts, ok), "{ok}");
        }
        for bad in ["evil.example", "127.0.0.1.evil.example", "localhost.evil.example", "10.0.0.1", "[::2]"] {
            assert!(!allowed(&hosts, bad), "{bad}");
        }
        assert!(hosts.check(None).is_err(), "no host");
    }

    #[test]
    fn listed_hosts_pass_with_any_port_or_the_one_listed() {
        let hosts =
            Hosts::Listed(vec![Authority::parse("Agents.Example.com"), Authority::parse("10.0.0.5:2024")]);
        assert!(allowed(&hosts, "agents.example.com"));
        assert!(allowed(&hosts, "agents.example.com:443"));
        assert!(allowed(&hosts, "10.0.0.5:2024"));
        assert!(allowed(&hosts, "localhost:2024"));
        assert!(!allowed(&hosts, "10.0.0.5:2025"));
        assert!(!allowed(&hosts, "10.0.0.5"));
        assert!(!allowed(&hosts, "example.com"));
    }

    #[test]
    fn any_host_passes_even_none() {
        assert!(allowed(&Hosts::Any, "evil.example"));
        assert!(Hosts::Any.check(None).is_ok());
    }
}
