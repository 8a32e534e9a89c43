//! An environment for unit tests: settings are read through a lookup function, so tests hand
//! one over a fixed list instead of touching the process environment.

/// A lookup answering from `pairs` (the first pair named `k` wins), like `std::env::var(k).ok()`.
pub(crate) fn lookup(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
    let pairs: Vec<(String, String)> =
        pairs.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect();
    move |k| pairs.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone())
}
