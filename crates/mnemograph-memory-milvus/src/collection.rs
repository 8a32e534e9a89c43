//! What [`MilvusMemory`](crate::MilvusMemory) and [`MilvusStore`](crate::MilvusStore) do alike with
//! their collection: connecting, creating it when absent (another process may win the race),
//! loading, flushing and dropping it, and the configuration setters that name it.

use milvus::v2::prelude::*;

use crate::error::Result;

/// A client for the server at `url`, authenticated with `token` when one is given.
pub(crate) async fn connect(url: &str, token: Option<&str>) -> Result<ClientV2> {
    let mut connect = ConnectConfig::new().uri(url.to_owned());
    if let Some(token) = token {
        connect = connect.token(token.to_owned());
    }
    Ok(ClientV2::new(&connect).await?)
}

/// One named collection on a server.
#[derive(Clone, Copy)]
pub(crate) struct Collection<'a> {
    /// The server's client.
    pub(crate) client: &'a ClientV2,
    /// The collection's name.
    pub(crate) name: &'a str,
}

impl Collection<'_> {
    /// Whether the collection exists.
    pub(crate) async fn exists(&self) -> Result<bool> {
        let req = HasCollectionRequest::builder().collection_name(self.name).build()?;
        Ok(self.client.has_collection(req).await?.exists())
    }

    /// Creates the collection as `request` describes; a collection that exists by the time the
    /// server refuses (another process created it first) counts as created.
    pub(crate) async fn create(&self, request: CreateCollectionRequest) -> Result<()> {
        match self.client.create_collection(request).await {
            Ok(_) => Ok(()),
            Err(_) if self.exists().await? => Ok(()),
            Err(e) => Err(e.into()),
        }
    }

    /// Loads the collection into memory, as searches and queries need.
    pub(crate) async fn load(&self) -> Result<()> {
        let req = LoadCollectionRequest::builder().collection_name(self.name).build()?;
        self.client.load_collection(req).await?;
        Ok(())
    }

    /// Drops the collection and everything in it.
    pub(crate) async fn drop(&self) -> Result<()> {
        let req = DropCollectionRequest::builder().collection_name(self.name).build()?;
        self.client.drop_collection(req).await?;
        Ok(())
    }

    /// Seals the rows written so far into indexed segments.
    pub(crate) async fn flush(&self) -> Result<()> {
        let req = FlushRequest::builder().collection_names([self.name]).build()?;
        self.client.flush(req).await?;
        Ok(())
    }
}

/// The setters of a configuration's `collection`, `token` and `consistency` fields, the same in
/// every configuration that names a collection.
macro_rules! target_setters {
    ($config:ty) => {
        impl $config {
            /// Sets the collection.
            #[must_use]
            pub fn collection(mut self, name: impl Into<String>) -> Self {
                self.collection = name.into();
                self
            }
            /// Sets the token.
            #[must_use]
            pub fn token(mut self, token: impl Into<String>) -> Self {
                self.token = Some(token.into());
                self
            }
            /// Sets the read consistency.
            #[must_use]
            pub fn consistency(mut self, consistency: $crate::Consistency) -> Self {
                self.consistency = consistency;
                self
            }
        }
    };
}
pub(crate) use target_setters;
