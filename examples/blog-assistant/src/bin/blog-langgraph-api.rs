//! The blog assistant over LangGraph's HTTP API: the official SDK clients and chat UIs use it as
//! they use a Python deployment. Same settings as the service (`REDIS_URL`, `MYSQL_URL`, the
//! model's `OPENAI_*`), listening on `LANGGRAPH_API_BIND` (default `127.0.0.1:2024`, the port
//! `langgraph dev` uses). With `AUTH_TOKENS="alice:token-a,bob:token-b"` every request needs
//! `Authorization: Bearer <token>` and each user reaches only its own threads and archive;
//! without it the server serves one local user and refuses to listen beyond loopback. Threads
//! name their session in their metadata: `{"session_id": ...}`.

#[tokio::main]
async fn main() -> std::process::ExitCode {
    blog_assistant::run_main("blog-langgraph-api", async {
        let config = blog_assistant::Config::from_env()?;
        let bind = std::env::var("LANGGRAPH_API_BIND").unwrap_or_else(|_| "127.0.0.1:2024".to_owned());
        let listener = tokio::net::TcpListener::bind(&bind).await?;
        tracing::info!("blog assistant on LangGraph's API at http://{}", listener.local_addr()?);
        blog_assistant::api::server(&config).await?.serve(listener).await?;
        Ok(())
    })
    .await
}
