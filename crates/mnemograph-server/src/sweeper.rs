//! The one task per server that frees what outlived its retention (see [`App::sweep`]), for as
//! long as the server's state is alive.

use std::sync::Weak;
use std::time::Duration;

use mnemograph_core::store::InMemoryStore;
use tokio::time::MissedTickBehavior;

use crate::app::App;

/// Sweeps `app` every `every`, and drops the expired items of `store` (the server's own in-memory
/// store, whose writes alone sweep it otherwise). Ends when the server's state is dropped.
pub(crate) fn start(app: Weak<App>, every: Duration, store: Option<InMemoryStore>) {
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(every.max(Duration::from_millis(1)));
        tick.set_missed_tick_behavior(MissedTickBehavior::Delay);
        // The first tick is at once; nothing has expired yet.
        tick.tick().await;
        loop {
            tick.tick().await;
            let Some(app) = app.upgrade() else { return };
            app.sweep().await;
            if let Some(store) = &store {
                store.sweep_expired();
            }
        }
    });
}
