//! The blog assistant service: SSE chat over a Redis checkpointer with a MySQL archive and cold-start recovery
//!
//! Needs Redis and MySQL/MariaDB. `cargo run -p blog-assistant`, then open
//! <http://127.0.0.1:8000>. Settings come from the environment: `REDIS_URL`, `MYSQL_URL`,
//! `BIND`, and `OPENAI_API_KEY` / `OPENAI_BASE_URL` / `OPENAI_MODEL` for a real model (without a
//! key the offline model answers). See the README.

use mnemograph_telemetry::{LogWriter, Telemetry};

#[tokio::main]
async fn main() -> std::process::ExitCode {
    // Log lines at `info` (or `RUST_LOG`) on stdout; spans and metrics over OTLP when
    // `OTEL_EXPORTER_OTLP_ENDPOINT` is set. Held to the end: dropping it exports the last spans.
    let telemetry = Telemetry::builder()
        .service_name("blog-assistant")
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
        blog_assistant::serve(&config).await
    };
    match run.await {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            tracing::error!("{}", e.chain());
            std::process::ExitCode::FAILURE
        }
    }
}
