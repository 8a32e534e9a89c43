//! The `mysql-chat` server. Needs MariaDB/MySQL at `MYSQL_URL`; see the README.

use mysql_chat::{config::redact, model_from_env, ChatService, Config};
use tracing_subscriber::EnvFilter;

#[tokio::main]
async fn main() {
    tracing_subscriber::fmt()
        .with_env_filter(EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info")))
        .init();
    if let Err(e) = run().await {
        tracing::error!(error = %e.chain(), "mysql-chat stopped");
        std::process::exit(1);
    }
}

async fn run() -> mysql_chat::Result<()> {
    let config = Config::from_env()?;
    let (model, choice) = model_from_env()?;
    tracing::info!(mysql = %redact(&config.mysql_url), ?choice, "starting");
    let service = ChatService::connect(&config, model).await?;
    let listener = tokio::net::TcpListener::bind(config.bind).await?;
    tracing::info!(addr = %listener.local_addr()?, "listening");
    mysql_chat::serve(listener, service, async {
        // Without a signal handler the server simply runs until killed.
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
    })
    .await
}
