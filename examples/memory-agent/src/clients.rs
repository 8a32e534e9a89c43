//! The server clients and the OpenAI client, each compiled in by its cargo feature. In a build
//! without it, each constructor is an [`Error::NotBuilt`](crate::Error::NotBuilt) naming the
//! feature, so a setting never silently falls back to something else.

use std::sync::Arc;

use mnemograph_core::checkpoint::DynCheckpointer;
use mnemograph_core::store::DynEmbeddings;
use mnemograph_memory::RerankConfig;
use mnemograph_models::SharedChatModel;

use crate::endpoint::OpenAiEndpoint;
use crate::error::Result;
use crate::memory::AgentMemory;

/// The chat model at `endpoint`.
pub(crate) fn chat_model(endpoint: &OpenAiEndpoint) -> Result<SharedChatModel> {
    #[cfg(feature = "openai")]
    {
        use mnemograph_models::{ChatModelExt, OpenAiChatModel};
        Ok(OpenAiChatModel::new(endpoint.client_config())?.shared())
    }
    #[cfg(not(feature = "openai"))]
    {
        let _ = endpoint;
        Err(crate::Feature::OpenAi.missing("OPENAI_API_KEY"))
    }
}

/// A Milvus collection as long-term memory, created when missing; strong reads, so a session-2
/// question sees what session 1 wrote a moment ago.
pub(crate) async fn milvus_memory(
    url: &str,
    token: Option<&str>,
    collection: &str,
    embedder: Arc<dyn DynEmbeddings>,
    rerank: RerankConfig,
) -> Result<AgentMemory> {
    #[cfg(feature = "milvus")]
    {
        use mnemograph_memory_milvus::{Consistency, MilvusConfig, MilvusMemory};

        use crate::connect::{Service, MILVUS_HINT};
        let svc = Service { name: "Milvus", url, default_port: 19530, hint: MILVUS_HINT };
        svc.probe().await?;
        let mut c =
            MilvusConfig::new(url).collection(collection).consistency(Consistency::Strong).rerank(rerank);
        if let Some(t) = token {
            c = c.token(t);
        }
        let memory = svc.timed(MilvusMemory::connect(c, embedder)).await?;
        Ok(memory.into())
    }
    #[cfg(not(feature = "milvus"))]
    {
        let _ = (url, token, collection, embedder, rerank);
        Err(crate::Feature::Milvus.missing("MILVUS_URL"))
    }
}

/// LangGraph's Postgres tables at `url`, migrated when needed.
pub(crate) async fn postgres(url: &str) -> Result<Arc<dyn DynCheckpointer>> {
    #[cfg(feature = "postgres")]
    {
        use mnemograph_checkpoint_postgres::PostgresCheckpointer;

        use crate::connect::{Service, POSTGRES_HINT};
        let svc = Service { name: "Postgres", url, default_port: 5432, hint: POSTGRES_HINT };
        svc.probe().await?;
        let saver = svc.timed(PostgresCheckpointer::connect(url)).await?;
        svc.timed(saver.setup()).await?;
        Ok(Arc::new(saver))
    }
    #[cfg(not(feature = "postgres"))]
    {
        let _ = url;
        Err(crate::Feature::Postgres.missing("DATABASE_URL"))
    }
}

/// LangGraph's MySQL tables at `url`; the database is created when missing.
pub(crate) async fn mysql(url: &str) -> Result<Arc<dyn DynCheckpointer>> {
    #[cfg(feature = "mysql")]
    {
        use mnemograph_checkpoint_mysql::MySqlCheckpointer;

        use crate::connect::{create_database, Service, MYSQL_HINT};
        let svc = Service { name: "MySQL", url, default_port: 3306, hint: MYSQL_HINT };
        svc.probe().await?;
        svc.timed(create_database(url)).await?;
        let saver = svc.timed(MySqlCheckpointer::connect(url)).await?;
        svc.timed(saver.setup()).await?;
        Ok(Arc::new(saver))
    }
    #[cfg(not(feature = "mysql"))]
    {
        let _ = url;
        Err(crate::Feature::MySql.missing("MYSQL_URL"))
    }
}

/// Plain Redis at `url`, keys under `prefix`.
pub(crate) async fn redis(url: &str, prefix: &str) -> Result<Arc<dyn DynCheckpointer>> {
    #[cfg(feature = "redis")]
    {
        use mnemograph_checkpoint_redis::RedisCheckpointer;

        use crate::connect::{Service, REDIS_HINT};
        let svc = Service { name: "Redis", url, default_port: 6379, hint: REDIS_HINT };
        svc.probe().await?;
        let saver = svc.timed(RedisCheckpointer::builder().key_prefix(prefix).connect(url)).await?;
        Ok(Arc::new(saver))
    }
    #[cfg(not(feature = "redis"))]
    {
        let _ = (url, prefix);
        Err(crate::Feature::Redis.missing("REDIS_URL"))
    }
}
