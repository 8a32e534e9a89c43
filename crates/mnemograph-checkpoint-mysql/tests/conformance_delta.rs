//! The checkpointer conformance suite against MySQL/MariaDB (`MYSQL_URL`) in delta mode: the
//! suite's list channels stored as deltas on top of periodic snapshots, so copying, pruning and
//! deleting runs must keep every remaining checkpoint's chain readable.
//!
//! Shares the migrated test database with the plain suite; every test uses its own thread ids.
//! Without a reachable server each test prints that MySQL was skipped and returns; with `CI` set
//! it fails.

mod support;

use mnemograph_checkpoint_mysql::{DeltaChannels, MySqlCheckpointer};

async fn saver() -> Option<MySqlCheckpointer> {
    // Snapshots every other version, so the suite's short threads hold deltas on snapshots.
    let delta = DeltaChannels::new(["a", "kept", "messages"]).snapshot_every(2);
    Some(support::saver().await?.with_delta(delta))
}

mnemograph_test::checkpointer_conformance!(optional saver);
