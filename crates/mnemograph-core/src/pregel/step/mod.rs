//! The pure step algorithm over a channel table: which tasks a step runs
//! ([`prepare`]), and what their writes do to the channels ([`apply`]). No IO: the loop in
//! [`run`](super::run) drives it.

mod apply;
mod prepare;
