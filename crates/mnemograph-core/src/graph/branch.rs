//! Conditional edges: a routing function over the state, and an optional path map.

use std::any::TypeId;

pub(crate) use crate::pregel::plan::PathFn;

/// The path map of a conditional edge: routing keys → node names. `()` means "no map: the routing
/// function returns node names, and any node may be named".
pub trait IntoPathMap {
    /// `None` for "any node".
    fn into_path_map(self) -> Option<Vec<(String, String)>>;
}

impl IntoPathMap for () {
    fn into_path_map(self) -> Option<Vec<(String, String)>> {
        None
    }
}
impl<const N: usize> IntoPathMap for [(&str, &str); N] {
    fn into_path_map(self) -> Option<Vec<(String, String)>> {
        Some(self.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect())
    }
}
/// A list of possible destinations, each mapped to itself.
impl<const N: usize> IntoPathMap for [&str; N] {
    fn into_path_map(self) -> Option<Vec<(String, String)>> {
        Some(self.iter().map(|k| ((*k).to_owned(), (*k).to_owned())).collect())
    }
}
impl IntoPathMap for Vec<(String, String)> {
    fn into_path_map(self) -> Option<Vec<(String, String)>> {
        Some(self)
    }
}
impl IntoPathMap for Vec<String> {
    fn into_path_map(self) -> Option<Vec<(String, String)>> {
        Some(self.into_iter().map(|k| (k.clone(), k)).collect())
    }
}

/// What a routing function can return, read from its return type (the function itself is opaque
/// until it runs). `compile()`'s flow checks rely on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RouteShape {
    /// Exactly one name (`&str`, `String`): control always goes somewhere.
    One,
    /// Zero or more names (`Vec<&str>`, `Vec<String>`): possibly nowhere, never a push.
    Names,
    /// Anything, pushes included (`Route`, `Push`, `Vec<Goto>`, ...): a push may name any node,
    /// whatever the path map says.
    Any,
}

impl RouteShape {
    /// The shape of a routing function's return type `R`.
    pub(crate) fn of<R: 'static>() -> Self {
        let r = TypeId::of::<R>();
        if r == TypeId::of::<&'static str>() || r == TypeId::of::<String>() {
            Self::One
        } else if r == TypeId::of::<Vec<&'static str>>() || r == TypeId::of::<Vec<String>>() {
            Self::Names
        } else {
            Self::Any
        }
    }
}

/// A conditional edge as the builder stores it.
pub(crate) struct BranchSpec<S> {
    pub(crate) source: String,
    pub(crate) path: PathFn<S>,
    pub(crate) path_map: Option<Vec<(String, String)>>,
    pub(crate) shape: RouteShape,
}
