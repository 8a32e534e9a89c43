//! [`AgentMemory`]: the long-term memory backend chosen at start-up.

/// The agent's long-term memory: the embedded store or a Milvus collection, picked from the
/// environment at run time behind one type (mnemograph-memory's [`SharedMemory`]). Reach the backend
/// itself with [`SharedMemory::downcast_ref`].
///
/// [`SharedMemory`]: mnemograph_memory::SharedMemory
/// [`SharedMemory::downcast_ref`]: mnemograph_memory::SharedMemory::downcast_ref
pub type AgentMemory = mnemograph_memory::SharedMemory;
