//! End-to-end scenarios that span crates; the tests live in `tests/`.
//!
//! `tests/savers.rs` runs the engine's persistence behaviours — interrupts and resume, pending
//! writes after a failure, time travel, subgraphs, durability modes, a multi-turn conversation —
//! against every saver: in memory, MySQL/MariaDB (`MYSQL_URL`) and Redis (`REDIS_URL`).
