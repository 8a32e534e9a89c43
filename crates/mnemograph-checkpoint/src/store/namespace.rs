//! Namespace construction and LangGraph's validation rules.

use super::StoreError;

/// Builds a namespace from labels: `namespace(["memories", user_id])`.
pub fn namespace<I, S>(labels: I) -> Vec<String>
where
    I: IntoIterator<Item = S>,
    S: Into<String>,
{
    labels.into_iter().map(Into::into).collect()
}

/// Checks a namespace the way LangGraph's `_validate_namespace` does before a `put`.
///
/// A namespace must have at least one label; labels must be non-empty and contain no `.` (LangGraph
/// joins labels with `.` in SQL backends, so a dot would change the tuple) and no NUL; the root
/// label `langgraph` is reserved.
///
/// # Errors
/// [`StoreError::InvalidNamespace`] naming the rule that is broken.
///
/// ```
/// use mnemograph_checkpoint::store::{namespace, validate_namespace};
///
/// assert!(validate_namespace(&namespace(["users", "u1"])).is_ok());
/// assert!(validate_namespace(&namespace(["users", "a.b"])).is_err());
/// assert!(validate_namespace(&namespace(["langgraph"])).is_err());
/// ```
pub fn validate_namespace(namespace: &[String]) -> Result<(), StoreError> {
    let fail = |reason| Err(StoreError::InvalidNamespace { namespace: namespace.to_vec(), reason });
    if namespace.is_empty() {
        return fail("namespace cannot be empty");
    }
    for label in namespace {
        if label.is_empty() {
            return fail("namespace labels cannot be empty strings");
        }
        if label.contains('.') {
            return fail("namespace labels cannot contain periods ('.')");
        }
        if label.contains('\0') {
            return fail("namespace labels cannot contain NUL characters");
        }
    }
    if namespace[0] == "langgraph" {
        return fail("root label for namespace cannot be \"langgraph\"");
    }
    Ok(())
}
