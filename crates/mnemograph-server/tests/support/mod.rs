//! Shared by the server's tests.

pub(crate) mod graphs;
