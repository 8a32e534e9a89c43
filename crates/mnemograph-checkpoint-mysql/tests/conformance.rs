//! The checkpointer conformance suite against MySQL/MariaDB (`MYSQL_URL`).
//!
//! Every test shares one migrated database; the suite gives each test its own thread ids. Without
//! a reachable server each test prints that MySQL was skipped and returns; with `CI` set it fails.

mod support;

use mnemograph_checkpoint_mysql::MySqlCheckpointer;
async fn saver() -> Option<MySqlCheckpointer> {
    support::saver().await
}

mnemograph_test::checkpointer_conformance!(optional saver);
