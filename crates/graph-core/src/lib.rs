//! graph-core (work in progress)
pub mod checkpoint;
pub mod messages;
pub mod state;
pub mod value;
