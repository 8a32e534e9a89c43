//! Checks of a thread's stored history.

use mnemograph_core::checkpoint::{CheckpointConfig, CheckpointTuple, DynCheckpointer, ListOptions};
use mnemograph_core::messages::Message;

/// Reads every checkpoint of `thread`'s root namespace, oldest first (values and pending writes
/// included, so each must decode), and checks that they form one chain: each checkpoint's parent
/// is the one before it, the first has none, and the latest that `get_tuple` finds is the last.
///
/// # Panics
/// When a checkpoint cannot be read or the history has forked.
pub async fn history(saver: &dyn DynCheckpointer, thread: &str) -> Vec<CheckpointTuple> {
    let config = CheckpointConfig::thread(thread);
    let mut all = saver.list(Some(&config), ListOptions::new()).await.expect("history reads back");
    all.reverse();
    let mut parent: Option<String> = None;
    for tuple in &all {
        let id = tuple.config.checkpoint_id.clone();
        let got = tuple.parent_config.as_ref().and_then(|p| p.checkpoint_id.clone());
        assert_eq!(got, parent, "thread {thread}: checkpoint {id:?} forks the history");
        assert_eq!(Some(&tuple.checkpoint.id), id.as_ref(), "thread {thread}: address and document disagree");
        parent = id;
    }
    let latest = saver.get_tuple(&config).await.expect("latest reads back");
    let latest = latest.and_then(|t| t.config.checkpoint_id);
    assert_eq!(latest, parent, "thread {thread}: the latest checkpoint is not the end of the chain");
    all
}

/// [`history`], returning only how many checkpoints it has.
///
/// # Panics
/// As [`history`].
pub async fn single_chain(saver: &dyn DynCheckpointer, thread: &str) -> usize {
    history(saver, thread).await.len()
}

/// Checks that along `history` (oldest first) the conversation only grows: each checkpoint's
/// messages start with its parent's. A checkpoint stored without the value of a channel version
/// it names (a half-written one) reads back with fewer messages and fails this.
///
/// # Panics
/// When a checkpoint's messages do not extend its parent's, or cannot be decoded.
pub fn messages_only_grow(thread: &str, history: &[CheckpointTuple]) {
    let mut before: Vec<String> = Vec::new();
    for tuple in history {
        let messages = match tuple.checkpoint.channel_values.get("messages") {
            Some(value) => value.decode::<Vec<Message>>().expect("messages decode"),
            // Only the first (input) checkpoint of a thread has no conversation yet.
            None => Vec::new(),
        };
        let texts: Vec<String> = messages.iter().map(Message::text).collect();
        assert!(
            texts.starts_with(&before),
            "thread {thread}: checkpoint {} has {} messages, not an extension of its parent's {}",
            tuple.checkpoint.id,
            texts.len(),
            before.len()
        );
        before = texts;
    }
}

/// Whether `texts` holds the three messages of turn `text` one after another.
pub fn has_turn(texts: &[String], text: &str) -> bool {
    let turn = crate::chat::turn(text);
    texts.windows(3).any(|w| w == turn)
}
