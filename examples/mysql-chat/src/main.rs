//! The `mysql-chat` server. Needs MariaDB/MySQL at `MYSQL_URL`; see the README.

use mnemograph_telemetry::{LogWriter, Telemetry};
use mysql_chat::{config::redact, model_from_env, ChatService, Config};

#[tokio::main]
async fn main() {
    // Log lines at `info` (or `RUST_LOG`) on stdout; spans and metrics over OTLP when
    // `OTEL_EXPORTER_OTLP_ENDPOINT` is set.
    let telemetry = Telemetry::builder()
        .service_name("mysql-chat")
        .service_version(env!("CARGO_PKG_VERSION"))
        .default_filter("info")
        .log_writer(LogWriter::Stdout)
        .build()
        .and_then(Telemetry::install);
    let telemetry = match telemetry {
        Ok(guard) => guard,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(1);
        }
    };
    if let Err(e) = run().await {
        tracing::error!(error = %e.chain(), "mysql-chat stopped");
        // `exit` skips destructors: the guard exports the last spans (this error's run) first.
        drop(telemetry);
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
