//! Shared by the server's tests.

#[allow(dead_code, reason = "each test file uses a different subset")]
pub(crate) mod graphs;
#[cfg(feature = "mysql")]
#[allow(dead_code, reason = "each test file uses a different subset")]
pub(crate) mod mysql;
