//! messages (being written)
