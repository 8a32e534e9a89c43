//! The blog assistant service: SSE chat over a Redis checkpointer with a MySQL archive and cold-start recovery
//!
//! Needs Redis and MySQL/MariaDB. `cargo run -p blog-assistant`, then open
//! <http://127.0.0.1:8000>. Settings come from the environment: `REDIS_URL`, `MYSQL_URL`,
//! `BIND`, and `OPENAI_API_KEY` / `OPENAI_BASE_URL` / `OPENAI_MODEL` for a real model (without a
//! key the offline model answers). See the README.

#[tokio::main]
async fn main() -> std::process::ExitCode {
    blog_assistant::run_main("blog-assistant", async {
        let config = blog_assistant::Config::from_env()?;
        blog_assistant::serve(&config).await
    })
    .await
}
