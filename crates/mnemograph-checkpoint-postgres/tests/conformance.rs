//! The checkpointer conformance suite against PostgreSQL (`DATABASE_URL`).
//!
//! Every test shares one migrated database; the suite gives each test its own thread ids. Without
//! a reachable server each test prints that Postgres was skipped and returns; with `CI` set it
//! fails.

mod support;

use mnemograph_checkpoint_postgres::PostgresCheckpointer;

async fn saver() -> Option<PostgresCheckpointer> {
    support::saver().await
}

mnemograph_test::checkpointer_conformance!(optional saver);
