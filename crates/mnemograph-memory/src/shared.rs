//! [`SharedMemory`]: any backend behind one type, for a backend chosen at run time.
//!
//! [`Memory`], [`Retire`] and [`Sessions`] return `impl Future`, so they cannot be trait objects.
//! [`DynMemory`] is their object-safe form, implemented for every backend that has all three;
//! [`SharedMemory`] holds one behind an `Arc` and implements the three traits again, so code
//! written against them takes it unchanged.

use std::any::Any;
use std::fmt;
use std::sync::Arc;

use mnemograph_checkpoint::BoxFuture;

use crate::error::Result;
use crate::memory::Memory;
use crate::record::{MemoryHit, MemoryRecord, NewMemory, RetrieveQuery};
use crate::retire::{Retire, Retirement};
use crate::sessions::{SessionInfo, Sessions};

/// The object-safe form of [`Memory`], [`Retire`] and [`Sessions`]; every backend implementing
/// the three has it. Each method behaves as the trait method of the same name.
pub trait DynMemory: Send + Sync + 'static {
    /// [`Memory::save`].
    fn save(&self, memories: Vec<NewMemory>) -> BoxFuture<'_, Result<Vec<i64>>>;
    /// [`Memory::save_turn`].
    fn save_turn(&self, turn: NewMemory) -> BoxFuture<'_, Result<i64>>;
    /// [`Memory::retrieve`].
    fn retrieve(&self, query: RetrieveQuery) -> BoxFuture<'_, Result<Vec<MemoryHit>>>;
    /// [`Memory::session_records`].
    fn session_records<'a>(
        &'a self,
        user_id: &'a str,
        session_id: &'a str,
    ) -> BoxFuture<'a, Result<Vec<MemoryRecord>>>;
    /// [`Memory::delete`].
    fn delete<'a>(&'a self, user_id: &'a str, ids: &'a [i64]) -> BoxFuture<'a, Result<()>>;
    /// [`Retire::retire`].
    fn retire<'a>(
        &'a self,
        user_id: &'a str,
        retirements: &'a [Retirement],
    ) -> BoxFuture<'a, Result<Vec<i64>>>;
    /// [`Retire::restore`].
    fn restore<'a>(&'a self, user_id: &'a str, ids: &'a [i64]) -> BoxFuture<'a, Result<Vec<i64>>>;
    /// [`Sessions::sessions`].
    fn sessions<'a>(&'a self, user_id: &'a str) -> BoxFuture<'a, Result<Vec<SessionInfo>>>;
    /// The backend itself, to reach what only it has (a Milvus collection's name, say).
    fn as_any(&self) -> &dyn Any;
}

impl<T: Memory + Retire + Sessions> DynMemory for T {
    fn save(&self, memories: Vec<NewMemory>) -> BoxFuture<'_, Result<Vec<i64>>> {
        Box::pin(Memory::save(self, memories))
    }
    fn save_turn(&self, turn: NewMemory) -> BoxFuture<'_, Result<i64>> {
        Box::pin(Memory::save_turn(self, turn))
    }
    fn retrieve(&self, query: RetrieveQuery) -> BoxFuture<'_, Result<Vec<MemoryHit>>> {
        Box::pin(Memory::retrieve(self, query))
    }
    fn session_records<'a>(
        &'a self,
        user_id: &'a str,
        session_id: &'a str,
    ) -> BoxFuture<'a, Result<Vec<MemoryRecord>>> {
        Box::pin(Memory::session_records(self, user_id, session_id))
    }
    fn delete<'a>(&'a self, user_id: &'a str, ids: &'a [i64]) -> BoxFuture<'a, Result<()>> {
        Box::pin(Memory::delete(self, user_id, ids))
    }
    fn retire<'a>(
        &'a self,
        user_id: &'a str,
        retirements: &'a [Retirement],
    ) -> BoxFuture<'a, Result<Vec<i64>>> {
        Box::pin(Retire::retire(self, user_id, retirements))
    }
    fn restore<'a>(&'a self, user_id: &'a str, ids: &'a [i64]) -> BoxFuture<'a, Result<Vec<i64>>> {
        Box::pin(Retire::restore(self, user_id, ids))
    }
    fn sessions<'a>(&'a self, user_id: &'a str) -> BoxFuture<'a, Result<Vec<SessionInfo>>> {
        Box::pin(Sessions::sessions(self, user_id))
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// A memory backend chosen at run time, behind one cheap-to-clone type that is itself a
/// [`Memory`], [`Retire`] and [`Sessions`].
///
/// ```
/// use mnemograph_checkpoint::store::HashingEmbeddings;
/// use mnemograph_memory::{EmbeddedMemory, Memory, NewMemory, RetrieveQuery, SharedMemory};
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> mnemograph_memory::Result<()> {
/// let memory = SharedMemory::new(EmbeddedMemory::new(HashingEmbeddings::new(384)));
/// memory.save_turn(NewMemory::turn("u1", "s1", "My dog is called Rex.", "Noted.")).await?;
/// let hits = memory.retrieve(RetrieveQuery::new("u1", "What is my dog called?")).await?;
/// assert!(hits[0].record.content.contains("Rex"));
/// assert!(memory.downcast_ref::<EmbeddedMemory>().is_some());
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct SharedMemory(Arc<dyn DynMemory>);

impl SharedMemory {
    /// Shares `memory`.
    pub fn new(memory: impl Retire + Sessions) -> Self {
        Self(Arc::new(memory))
    }

    /// Shares a backend already behind an `Arc`.
    pub fn from_arc(memory: Arc<dyn DynMemory>) -> Self {
        Self(memory)
    }

    /// The backend, if it is a `T`.
    pub fn downcast_ref<T: 'static>(&self) -> Option<&T> {
        self.0.as_any().downcast_ref::<T>()
    }
}

impl<S: mnemograph_checkpoint::store::Store> From<crate::EmbeddedMemory<S>> for SharedMemory {
    fn from(memory: crate::EmbeddedMemory<S>) -> Self {
        Self::new(memory)
    }
}

impl fmt::Debug for SharedMemory {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SharedMemory").finish_non_exhaustive()
    }
}

impl Memory for SharedMemory {
    async fn save(&self, memories: Vec<NewMemory>) -> Result<Vec<i64>> {
        self.0.save(memories).await
    }
    async fn save_turn(&self, turn: NewMemory) -> Result<i64> {
        self.0.save_turn(turn).await
    }
    async fn retrieve(&self, query: RetrieveQuery) -> Result<Vec<MemoryHit>> {
        self.0.retrieve(query).await
    }
    async fn session_records(&self, user_id: &str, session_id: &str) -> Result<Vec<MemoryRecord>> {
        self.0.session_records(user_id, session_id).await
    }
    async fn delete(&self, user_id: &str, ids: &[i64]) -> Result<()> {
        self.0.delete(user_id, ids).await
    }
}

impl Retire for SharedMemory {
    async fn retire(&self, user_id: &str, retirements: &[Retirement]) -> Result<Vec<i64>> {
        self.0.retire(user_id, retirements).await
    }
    async fn restore(&self, user_id: &str, ids: &[i64]) -> Result<Vec<i64>> {
        self.0.restore(user_id, ids).await
    }
}

impl Sessions for SharedMemory {
    async fn sessions(&self, user_id: &str) -> Result<Vec<SessionInfo>> {
        self.0.sessions(user_id).await
    }
}
