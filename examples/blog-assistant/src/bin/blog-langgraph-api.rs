//! The blog assistant over LangGraph's HTTP API: the official SDK clients and chat UIs use it as
//! they use a Python deployment. Same settings as the service (`REDIS_URL`, `MYSQL_URL`, the
//! model's `OPENAI_*`), listening on `LANGGRAPH_API_BIND` (default `127.0.0.1:2024`, the port
//! `langgraph dev` uses). Threads name their conversation in their metadata:
//! `{"user_id": ..., "session_id": ...}`.

use mnemograph_telemetry::{LogWriter, Telemetry};

#[tokio::main]
async fn main() -> std::process::ExitCode {
    let telemetry = Telemetry::builder()
        .service_name("blog-langgraph-api")
        .service_version(env!("CARGO_PKG_VERSION"))
        .default_filter("info")
        .log_writer(LogWriter::Stdout)
        .build()
        .and_then(Telemetry::install);
    let _telemetry = match telemetry {
        Ok(guard) => guard,
        Err(e) => {
            eprintln!("error: {e}");
            return std::process::ExitCode::FAILURE;
        }
    };
    let run = async {
        let config = blog_assistant::Config::from_env()?;
        let bind = std::env::var("LANGGRAPH_API_BIND").unwrap_or_else(|_| "127.0.0.1:2024".to_owned());
        let listener = tokio::net::TcpListener::bind(&bind).await?;
        tracing::info!("blog assistant on LangGraph's API at http://{}", listener.local_addr()?);
        blog_assistant::api::server(&config).await?.serve(listener).await?;
        Ok::<_, blog_assistant::Error>(())
    };
    match run.await {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            tracing::error!("{}", e.chain());
            std::process::ExitCode::FAILURE
        }
    }
}
