//! [`WebhookPolicy`]: which addresses a run's `webhook` may name, and how hard a delivery tries.

use std::time::Duration;

use reqwest::Url;

use crate::error::{Result, ServerError};

/// The longest webhook URL taken, as LangGraph's server caps it: a URL is stored with the run.
const MAX_URL_LEN: usize = 4096;

/// Which targets the runs of a server may name as their `webhook`, and how each delivery is
/// made. Given to [`Server::with_webhooks`](crate::Server::with_webhooks).
///
/// A target is allowed when its host is one of [`allow_host`](Self::allow_host)'s, or when the
/// whole URL starts with one of [`allow_prefix`](Self::allow_prefix)'s; nothing else is, so a
/// client cannot point the server at an address inside the deployer's network. A run naming any
/// other target is refused with 422 when it is created, and nothing is sent there.
///
/// ```
/// use std::time::Duration;
/// use mnemograph_server::WebhookPolicy;
///
/// let policy = WebhookPolicy::new()
///     .allow_host("hooks.example.com")
///     .allow_host("*.internal.example.com")
///     .allow_prefix("https://api.example.org/langgraph/")
///     .timeout(Duration::from_secs(10));
/// # let _ = policy;
/// ```
#[derive(Debug, Clone)]
pub struct WebhookPolicy {
    hosts: Vec<String>,
    prefixes: Vec<String>,
    timeout: Duration,
    attempts: u32,
    backoff: Duration,
}

impl Default for WebhookPolicy {
    fn default() -> Self {
        Self::new()
    }
}

impl WebhookPolicy {
    /// How long one attempt may take, by default: LangGraph's server gives a webhook 30 seconds.
    pub const TIMEOUT: Duration = Duration::from_secs(30);
    /// How many attempts a delivery makes, by default, as LangGraph's server makes.
    pub const ATTEMPTS: u32 = 3;
    /// The wait after the first failed attempt, by default; it doubles after each.
    pub const BACKOFF: Duration = Duration::from_secs(1);

    /// A policy allowing no target yet, with the default timeout, attempts and backoff.
    pub fn new() -> Self {
        Self {
            hosts: Vec::new(),
            prefixes: Vec::new(),
            timeout: Self::TIMEOUT,
            attempts: Self::ATTEMPTS,
            backoff: Self::BACKOFF,
        }
    }

    /// Allows `http` and `https` URLs on `host`: a name (`hooks.example.com`), an IP address
    /// (`10.0.0.7`, `[fd00::7]`), or `*.example.com` for every name under `example.com` (not
    /// `example.com` itself). With a port (`hooks.example.com:8443`) only that port is allowed;
    /// without one, any port.
    #[must_use]
    pub fn allow_host(mut self, host: impl Into<String>) -> Self {
        self.hosts.push(host.into());
        self
    }

    /// Allows the URLs that start with `prefix`, an absolute `http` or `https` URL compared
    /// after normalisation (`https://Hooks.example.com` covers `https://hooks.example.com/…`). A
    /// prefix ending in `/` covers the paths under it; one without covers every path that
    /// starts with its text.
    #[must_use]
    pub fn allow_prefix(mut self, prefix: impl Into<String>) -> Self {
        self.prefixes.push(prefix.into());
        self
    }

    /// Gives each attempt at most `timeout`, from connecting to the response's status
    /// ([`TIMEOUT`](Self::TIMEOUT) by default). An attempt that runs out is retried.
    #[must_use]
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Makes at most `attempts` attempts per delivery ([`ATTEMPTS`](Self::ATTEMPTS) by default).
    /// An attempt is retried when it cannot connect, its connection breaks, it times out, or the
    /// receiver answers 429 or a 5xx; any other answer ends the delivery.
    #[must_use]
    pub fn attempts(mut self, attempts: u32) -> Self {
        self.attempts = attempts;
        self
    }

    /// Waits `backoff` after the first failed attempt, twice as long after the second, and so on
    /// ([`BACKOFF`](Self::BACKOFF) by default).
    #[must_use]
    pub fn backoff(mut self, backoff: Duration) -> Self {
        self.backoff = backoff;
        self
    }

    /// The policy with its rules parsed: an `Err` names a rule that is not a host or not an
    /// absolute `http(s)` URL, or a zero timeout or attempt count.
    pub(crate) fn compile(self) -> Result<Rules> {
        let bad = |what: String| ServerError::Misconfigured(format!("webhook policy: {what}"));
        if self.attempts == 0 {
            return Err(bad("`attempts` must be at least 1".into()));
        }
        if self.timeout.is_zero() {
            return Err(bad("`timeout` must be more than zero".into()));
        }
        let hosts = self
            .hosts
            .iter()
            .map(|h| HostRule::parse(h).ok_or_else(|| bad(format!("`{h}` is not a host"))))
            .collect::<Result<_>>()?;
        let prefixes = self
            .prefixes
            .iter()
            .map(|p| match Url::parse(p) {
                Ok(url) if is_web(&url) => Ok(url),
                _ => Err(bad(format!("`{p}` is not an absolute http or https URL"))),
            })
            .collect::<Result<_>>()?;
        Ok(Rules { hosts, prefixes, timeout: self.timeout, attempts: self.attempts, backoff: self.backoff })
    }
}

/// A [`WebhookPolicy`] with its rules parsed, as deliveries use it.
#[derive(Debug, Clone)]
pub(crate) struct Rules {
    hosts: Vec<HostRule>,
    prefixes: Vec<Url>,
    pub(crate) timeout: Duration,
    pub(crate) attempts: u32,
    pub(crate) backoff: Duration,
}

impl Rules {
    /// `target` parsed, when the policy allows it; otherwise why not.
    pub(crate) fn admit(&self, target: &str) -> std::result::Result<Url, String> {
        if target.len() > MAX_URL_LEN {
            return Err(format!("it is longer than {MAX_URL_LEN} characters"));
        }
        let url = Url::parse(target).map_err(|e| format!("it is not an absolute URL ({e})"))?;
        if !is_web(&url) {
            return Err("only http and https URLs with a host are sent to".into());
        }
        if self.allows(&url) {
            Ok(url)
        } else {
            Err("its address is not one the server's webhook policy allows".into())
        }
    }

    /// Whether `url` (an `http(s)` URL with a host) is on the allow-list.
    pub(crate) fn allows(&self, url: &Url) -> bool {
        let (Some(host), Some(port)) = (url.host_str(), url.port_or_known_default()) else { return false };
        self.hosts.iter().any(|rule| rule.matches(host, port))
            || self.prefixes.iter().any(|p| same_origin(p, url) && url.as_str().starts_with(p.as_str()))
    }
}

/// An `http` or `https` URL with a host.
fn is_web(url: &Url) -> bool {
    matches!(url.scheme(), "http" | "https") && url.host_str().is_some_and(|h| !h.is_empty())
}

/// Whether two URLs have the same scheme, host and port: a prefix's text alone could be matched
/// by a longer host name (`https://a.example` and `https://a.example.evil`) were it not ended by
/// the path normalisation adds.
fn same_origin(a: &Url, b: &Url) -> bool {
    a.scheme() == b.scheme()
        && a.host_str() == b.host_str()
        && a.port_or_known_default() == b.port_or_known_default()
}

/// One allowed host, with its port when one was given.
#[derive(Debug, Clone)]
struct HostRule {
    /// The host, lowercase; for `*.example.com`, `.example.com`.
    host: String,
    wildcard: bool,
    port: Option<u16>,
}

impl HostRule {
    /// `host`, `host:port`, `*.domain`, `[v6]` or `[v6]:port`; `None` when it is none of these.
    fn parse(rule: &str) -> Option<Self> {
        let rule = rule.trim().to_ascii_lowercase();
        let (host, port) = match rule.strip_prefix('[') {
            Some(v6) => {
                let (addr, rest) = v6.split_once(']')?;
                let port = match rest {
                    "" => None,
                    _ => Some(rest.strip_prefix(':')?.parse().ok()?),
                };
                (format!("[{addr}]"), port)
            }
            None => match rule.rsplit_once(':') {
                Some((host, port)) => (host.to_owned(), Some(port.parse().ok()?)),
                None => (rule.clone(), None),
            },
        };
        let (wildcard, name) = match host.strip_prefix("*.") {
            Some(base) => (true, base.to_owned()),
            None => (false, host),
        };
        // The host must read back as itself once parsed as a URL's host: no paths, no user info,
        // no stray wildcards.
        let parsed = Url::parse(&format!("http://{name}/")).ok()?;
        if parsed.host_str()? != name || name.contains('*') {
            return None;
        }
        Some(Self { host: if wildcard { format!(".{name}") } else { name }, wildcard, port })
    }

    fn matches(&self, host: &str, port: u16) -> bool {
        let host_ok = match self.wildcard {
            true => host.ends_with(&self.host),
            false => host == self.host,
        };
        host_ok && self.port.is_none_or(|p| p == port)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules(policy: WebhookPolicy) -> Rules {
        policy.compile().expect("a valid policy")
    }

    #[test]
    fn a_policy_allows_nothing_until_told() {
        let none = rules(WebhookPolicy::new());
        assert!(none.admit("https://hooks.example.com/x").is_err());
    }

    #[test]
    fn hosts_match_by_name_port_and_wildcard() {
        let r = rules(
            WebhookPolicy::new()
                .allow_host("Hooks.Example.com")
                .allow_host("*.corp.example")
                .allow_host("127.0.0.1:9000")
                .allow_host("[::1]:9001"),
        );
        for ok in [
            "https://hooks.example.com/a",
            "http://hooks.example.com:8080/a",
            "https://a.corp.example/",
            "https://b.a.corp.example/",
            "http://127.0.0.1:9000/hook",
            "http://[::1]:9001/hook",
        ] {
            assert!(r.admit(ok).is_ok(), "{ok} is allowed");
        }
        for refused in [
            "https://corp.example/",
            "https://evilcorp.example/",
            "https://hooks.example.com.evil.org/",
            "http://127.0.0.1:9001/hook",
            "http://127.0.0.1/hook",
            "http://[::1]:9000/hook",
            "ftp://hooks.example.com/",
            "/internal/route",
            "https://evil.org@127.0.0.2:9000/",
        ] {
            assert!(r.admit(refused).is_err(), "{refused} is refused");
        }
    }

    #[test]
    fn prefixes_match_whole_origins_and_path_starts() {
        let r = rules(WebhookPolicy::new().allow_prefix("https://api.example.org/hooks/"));
        assert!(r.admit("https://API.example.org/hooks/run-ended").is_ok());
        assert!(r.admit("https://api.example.org:443/hooks/x").is_ok());
        assert!(r.admit("https://api.example.org/other").is_err());
        assert!(r.admit("http://api.example.org/hooks/x").is_err());
        assert!(r.admit("https://api.example.org.evil/hooks/x").is_err());
        let bare = rules(WebhookPolicy::new().allow_prefix("https://api.example.org"));
        assert!(bare.admit("https://api.example.org.evil/").is_err());
        assert!(bare.admit("https://api.example.org/anything").is_ok());
    }

    #[test]
    fn malformed_rules_and_settings_are_errors_when_compiled() {
        for bad in [
            WebhookPolicy::new().allow_host(""),
            WebhookPolicy::new().allow_host("a.example/path"),
            WebhookPolicy::new().allow_host("a.*.example"),
            WebhookPolicy::new().allow_host("a.example:port"),
            WebhookPolicy::new().allow_host("user@a.example"),
            WebhookPolicy::new().allow_prefix("/relative"),
            WebhookPolicy::new().allow_prefix("ftp://a.example/"),
            WebhookPolicy::new().attempts(0),
            WebhookPolicy::new().timeout(Duration::ZERO),
        ] {
            assert!(bad.clone().compile().is_err(), "{bad:?} is refused");
        }
    }

    #[test]
    fn overlong_urls_are_refused() {
        let r = rules(WebhookPolicy::new().allow_host("a.example"));
        let long = format!("https://a.example/{}", "x".repeat(MAX_URL_LEN));
        assert!(r.admit(&long).is_err());
    }
}
