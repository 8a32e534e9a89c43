//! The parameters of a connection URL's query, percent-decoded as sqlx decodes its own.

/// The `key=value` pairs of `url`'s query, in order, percent-decoded (`a%3Ab` is `a:b`, `+` a
/// space); a key without `=` has an empty value.
///
/// # Errors
/// [`sqlx::Error::Configuration`] when `url` is not a URL. The message leaves the URL out: it may
/// hold a password.
pub(crate) fn url_params(url: &str) -> Result<Vec<(String, String)>, sqlx::Error> {
    let parsed = url::Url::parse(url)
        .map_err(|e| sqlx::Error::Configuration(format!("invalid connection URL: {e}").into()))?;
    Ok(parsed.query_pairs().map(|(key, value)| (key.into_owned(), value.into_owned())).collect())
}

#[cfg(test)]
mod tests {
    use super::url_params;

    #[test]
    fn values_are_percent_decoded() {
        let params = url_params("mysql://u:p@h/db?delta-channels=a%3Ab,c&flag&x=1+2#frag").unwrap();
        let expected = [("delta-channels", "a:b,c"), ("flag", ""), ("x", "1 2")];
        assert_eq!(params, expected.map(|(k, v)| (k.to_owned(), v.to_owned())));
        assert!(url_params("mysql://h/db").unwrap().is_empty());
        let err = url_params("mysql://root:s3cret@h:port/db").unwrap_err();
        assert!(!err.to_string().contains("s3cret"), "{err}");
    }
}
