//! Connection URLs made safe to print: every saver and tool that names a server in a message
//! shares this one rule.

/// `url` with the password of its user info replaced by `***`, for messages and logs; the
/// scheme, user, host, path and query are kept as written.
///
/// The user info is what lies between `://` and the last `@` of the authority (a password may
/// itself hold `@`); the password is what follows its first `:`. Text without a password is
/// returned as it is.
///
/// ```
/// use mnemograph_checkpoint::checkpoint::backend::redact;
///
/// assert_eq!(redact("mysql://root:s3cret@db:3306/app"), "mysql://root:***@db:3306/app");
/// assert_eq!(redact("redis://127.0.0.1:6379/"), "redis://127.0.0.1:6379/");
/// ```
pub fn redact(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else { return url.to_owned() };
    // The authority ends at the path, query or fragment.
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let Some(at) = rest[..authority_end].rfind('@') else { return url.to_owned() };
    let Some(colon) = rest[..at].find(':') else { return url.to_owned() };
    format!("{scheme}://{}:***{}", &rest[..colon], &rest[at..])
}

#[cfg(test)]
mod tests {
    use super::redact;

    #[test]
    fn only_the_password_is_hidden() {
        assert_eq!(redact("mysql://app:s3cret@db:3306/chat"), "mysql://app:***@db:3306/chat");
        assert_eq!(redact("mysql://root:s3cr@t@db:3306/app"), "mysql://root:***@db:3306/app");
        assert_eq!(redact("mysql://root:a:b@db/app"), "mysql://root:***@db/app");
        assert_eq!(redact("redis://:pw@127.0.0.1:6379/0"), "redis://:***@127.0.0.1:6379/0");
        assert_eq!(redact("rediss://u:p%40ss@h/0?key-prefix=a%3Ab"), "rediss://u:***@h/0?key-prefix=a%3Ab");
        assert_eq!(redact("postgres://u:pw@db:port/app"), "postgres://u:***@db:port/app");
        assert_eq!(redact("mysql://root@127.0.0.1/app"), "mysql://root@127.0.0.1/app");
        assert_eq!(redact("redis://127.0.0.1/?a=b@c"), "redis://127.0.0.1/?a=b@c");
        assert_eq!(redact("redis://127.0.0.1/?a=b:x@c"), "redis://127.0.0.1/?a=b:x@c");
        assert_eq!(redact("http://localhost:19530"), "http://localhost:19530");
        assert_eq!(redact("not a url"), "not a url");
        assert_eq!(redact("u:pw@host"), "u:pw@host", "no scheme, no authority to read");
    }
}
