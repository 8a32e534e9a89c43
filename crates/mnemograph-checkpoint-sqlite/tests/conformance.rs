//! The checkpointer conformance suite on one database file shared by every test of the run (the
//! suite gives each test its own thread ids, so the tests also write the file at the same time
//! through their own pools), and on an in-memory database per test.

mod support;

use std::path::PathBuf;
use std::sync::OnceLock;

use mnemograph_checkpoint_sqlite::SqliteCheckpointer;

/// The file the file-backed suite shares.
fn shared_file() -> &'static PathBuf {
    static PATH: OnceLock<PathBuf> = OnceLock::new();
    PATH.get_or_init(|| support::fresh_path("conformance"))
}

async fn saver() -> SqliteCheckpointer {
    SqliteCheckpointer::connect(shared_file().to_str().expect("a UTF-8 path"))
        .await
        .expect("open the shared file")
}

mnemograph_test::checkpointer_conformance!(saver);

/// The same suite on an in-memory database.
mod in_memory {
    use super::SqliteCheckpointer;

    async fn saver() -> SqliteCheckpointer {
        SqliteCheckpointer::connect(":memory:").await.expect("open an in-memory database")
    }

    mnemograph_test::checkpointer_conformance!(saver);
}
