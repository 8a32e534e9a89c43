//! Connection URLs made safe to print.
//!
//! The one copy of this for the workspace: `checkpoint-inspect`, `memory-agent` and `mysql-chat`
//! all depend on this crate, and the `url` parser it uses is already in this crate's tree (sqlx
//! parses connection URLs with it), so it costs them nothing.

/// `url` with the password of its user-info part replaced by `***`, for messages and logs; the
/// user, host, path and query are kept.
///
/// A URL the parser refuses (say, a bad port) may still carry a password, so there the whole
/// user info is hidden instead; text without one is returned as it is.
///
/// ```
/// use mnemograph_checkpoint_mysql::redact;
///
/// assert_eq!(redact("mysql://root:s3cret@db:3306/app"), "mysql://root:***@db:3306/app");
/// assert_eq!(redact("redis://127.0.0.1:6379/"), "redis://127.0.0.1:6379/");
/// ```
pub fn redact(url: &str) -> String {
    let Ok(mut parsed) = url::Url::parse(url) else { return hide_user_info(url) };
    if parsed.password().is_none() {
        return url.to_owned();
    }
    // Only URLs without a host refuse a password, and a URL with a password has a host.
    match parsed.set_password(Some("***")) {
        Ok(()) => parsed.into(),
        Err(()) => hide_user_info(url),
    }
}

/// `url` with everything between `://` and the last `@` of the authority replaced by `***`.
fn hide_user_info(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else { return url.to_owned() };
    // The authority ends at the path, query or fragment; a password may itself contain `@`.
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    match rest[..authority_end].rfind('@') {
        Some(at) => format!("{scheme}://***{}", &rest[at..]),
        None => url.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::redact;

    #[test]
    fn only_the_password_is_hidden() {
        assert_eq!(redact("mysql://app:s3cret@db:3306/chat"), "mysql://app:***@db:3306/chat");
        assert_eq!(redact("mysql://root:s3cr@t@db:3306/app"), "mysql://root:***@db:3306/app");
        assert_eq!(redact("redis://:pw@127.0.0.1:6379/0"), "redis://:***@127.0.0.1:6379/0");
        assert_eq!(redact("rediss://u:p%40ss@h/0?key-prefix=a%3Ab"), "rediss://u:***@h/0?key-prefix=a%3Ab");
        assert_eq!(redact("mysql://root@127.0.0.1/app"), "mysql://root@127.0.0.1/app");
        assert_eq!(redact("redis://127.0.0.1/?a=b@c"), "redis://127.0.0.1/?a=b@c");
        assert_eq!(redact("http://localhost:19530"), "http://localhost:19530");
        assert_eq!(redact("not a url"), "not a url");
    }

    #[test]
    fn an_unparseable_url_loses_its_whole_user_info() {
        assert_eq!(redact("mysql://root:s3cret@db:port/app"), "mysql://***@db:port/app");
        assert_eq!(redact("mysql://db:port/app"), "mysql://db:port/app");
    }
}
