//! # mnemograph-checkpoint
//!
//! What a saver, a memory backend or a binding needs from mnemograph, without the engine:
//! LangGraph's v4 checkpoint model and the [`Checkpointer`](checkpoint::Checkpointer) trait, the
//! [`InMemoryCheckpointer`](checkpoint::InMemoryCheckpointer), LangGraph's serializer
//! ([`checkpoint::serde`]), the [`ChannelValue`](value::ChannelValue)s a checkpoint holds, the
//! long-term [`Store`](store::Store) and the chat [`Message`](messages::Message)s with
//! [`add_messages`](messages::add_messages). `mnemograph-core`, the graph engine, builds on this
//! crate and re-exports it at the same paths (`mnemograph_core::checkpoint`, ...).
//!
//! ```
//! use mnemograph_checkpoint::checkpoint::backend::{checkpoint_id, next_version};
//! use mnemograph_checkpoint::checkpoint::{
//!     Checkpoint, CheckpointConfig, CheckpointMetadata, CheckpointSource, Checkpointer,
//!     InMemoryCheckpointer,
//! };
//! use mnemograph_checkpoint::messages::Message;
//! use mnemograph_checkpoint::value::ChannelValue;
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let saver = InMemoryCheckpointer::new();
//! let mut checkpoint = Checkpoint { v: 4, id: checkpoint_id(0), ..Checkpoint::default() };
//! checkpoint.channel_values.insert("messages".into(), ChannelValue::new(vec![Message::human("hi")]));
//! checkpoint.channel_versions.insert("messages".into(), next_version(None).into());
//! let new_versions = checkpoint.channel_versions.clone();
//!
//! let config = CheckpointConfig::thread("t1");
//! let metadata = CheckpointMetadata::new(CheckpointSource::Loop, 0);
//! let saved = saver.put(&config, checkpoint, metadata, new_versions).await?;
//!
//! let tuple = saver.get_tuple(&config).await?.expect("the checkpoint just saved");
//! assert_eq!(tuple.config, saved);
//! let messages: Vec<Message> = tuple.checkpoint.channel_values["messages"].decode()?;
//! assert_eq!(messages[0].text(), "hi");
//! # Ok(())
//! # }
//! ```

#![cfg_attr(docsrs, feature(doc_cfg))]

pub mod checkpoint;
pub mod messages;
pub mod store;
pub mod value;

#[doc(hidden)]
#[path = "private.rs"]
pub mod __private;

pub use checkpoint::error::BoxError;
pub use checkpoint::saver::BoxFuture;
