//! [`AgentMemory`]: the long-term memory backend chosen at start-up, behind one concrete type.

use memory_milvus::{
    EmbeddedMemory, Memory, MemoryHit, MemoryRecord, MilvusMemory, NewMemory, Result, Retire, Retirement,
    RetrieveQuery, SessionInfo, Sessions,
};

/// Either memory-milvus backend.
///
/// [`Memory`] uses `impl Future` methods, so it cannot be a trait object; an enum keeps the agent's
/// context one concrete type while the backend is picked from the environment at run time.
#[derive(Debug, Clone)]
pub enum AgentMemory {
    /// In process (a graph-core `InMemoryStore`), no server: the default.
    Embedded(EmbeddedMemory),
    /// A Milvus collection (`MILVUS_URL`), boxed: its client is several times the size of the
    /// embedded store.
    Milvus(Box<MilvusMemory>),
}

impl AgentMemory {
    /// A short description for the start-up banner.
    pub fn describe(&self) -> String {
        match self {
            Self::Embedded(_) => "embedded (in process, no server)".to_owned(),
            Self::Milvus(m) => format!("Milvus collection `{}`", m.config().collection),
        }
    }
}

impl From<EmbeddedMemory> for AgentMemory {
    fn from(m: EmbeddedMemory) -> Self {
        Self::Embedded(m)
    }
}

impl From<MilvusMemory> for AgentMemory {
    fn from(m: MilvusMemory) -> Self {
        Self::Milvus(Box::new(m))
    }
}

impl Memory for AgentMemory {
    async fn save(&self, memories: Vec<NewMemory>) -> Result<Vec<i64>> {
        match self {
            Self::Embedded(m) => m.save(memories).await,
            Self::Milvus(m) => m.save(memories).await,
        }
    }

    async fn retrieve(&self, query: RetrieveQuery) -> Result<Vec<MemoryHit>> {
        match self {
            Self::Embedded(m) => m.retrieve(query).await,
            Self::Milvus(m) => m.retrieve(query).await,
        }
    }

    async fn session_records(&self, user_id: &str, session_id: &str) -> Result<Vec<MemoryRecord>> {
        match self {
            Self::Embedded(m) => m.session_records(user_id, session_id).await,
            Self::Milvus(m) => m.session_records(user_id, session_id).await,
        }
    }

    async fn delete(&self, user_id: &str, ids: &[i64]) -> Result<()> {
        match self {
            Self::Embedded(m) => m.delete(user_id, ids).await,
            Self::Milvus(m) => m.delete(user_id, ids).await,
        }
    }
}

impl Retire for AgentMemory {
    async fn retire(&self, user_id: &str, retirements: &[Retirement]) -> Result<Vec<i64>> {
        match self {
            Self::Embedded(m) => m.retire(user_id, retirements).await,
            Self::Milvus(m) => m.retire(user_id, retirements).await,
        }
    }

    async fn restore(&self, user_id: &str, ids: &[i64]) -> Result<Vec<i64>> {
        match self {
            Self::Embedded(m) => m.restore(user_id, ids).await,
            Self::Milvus(m) => m.restore(user_id, ids).await,
        }
    }
}

impl Sessions for AgentMemory {
    async fn sessions(&self, user_id: &str) -> Result<Vec<SessionInfo>> {
        match self {
            Self::Embedded(m) => m.sessions(user_id).await,
            Self::Milvus(m) => m.sessions(user_id).await,
        }
    }
}
