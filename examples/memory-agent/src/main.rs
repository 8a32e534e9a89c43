//! `memory-agent`: an agent that remembers across sessions (design seed 003).
//!
//! Needs no services: `cargo run -p memory-agent` plays a scripted conversation with an offline
//! model, embedded long-term memory and in-memory checkpoints. `OPENAI_API_KEY`, `MILVUS_URL`,
//! `MYSQL_URL` and `REDIS_URL` switch in the real thing; `--interactive` chats on stdin.

use std::io::Write;
use std::process::ExitCode;

use graph_core::prelude::*;
use memory_agent::{
    build_graph, render_checkpoint, render_recalled, run_demo, thread_id, Agent, CheckpointerKind, Config,
    Error, ModelChoice, Result, OFFLINE_NOTICE,
};

const USAGE: &str = "\
usage: memory-agent [--interactive] [--user ID] [--session ID] [--checkpointer memory|mysql|redis]
       memory-agent --mermaid

  (default)          play a scripted conversation: two sessions of one user, then another user
  --interactive      chat on stdin; commands: /user ID, /session ID, /size, /quit
  --user ID          interactive user (default `me`)
  --session ID       interactive session (default `default`); thread = USER:SESSION
  --checkpointer K   which checkpointer when both MYSQL_URL and REDIS_URL are set, or `memory`
  --mermaid          print the graph as a Mermaid diagram and exit

environment (each server is used only when its variable is set):
  OPENAI_API_KEY, OPENAI_BASE_URL, OPENAI_MODEL   real OpenAI-compatible model (else offline)
  MILVUS_URL, MILVUS_TOKEN, MILVUS_COLLECTION     long-term memory in Milvus (else in process)
  MYSQL_URL | REDIS_URL                           checkpoints in MySQL or Redis (else in memory)";

/// Parsed command line.
#[derive(Debug)]
struct Args {
    /// `--interactive`: chat on stdin instead of the script.
    interactive: bool,
    /// `--mermaid`: print the graph and exit.
    mermaid: bool,
    /// `--user`, for the interactive mode.
    user: String,
    /// `--session`, for the interactive mode.
    session: String,
    /// `--checkpointer`, when given.
    checkpointer: Option<CheckpointerKind>,
}

fn parse_args(mut args: impl Iterator<Item = String>) -> Result<Option<Args>> {
    let mut a = Args {
        interactive: false,
        mermaid: false,
        user: "me".to_owned(),
        session: "default".to_owned(),
        checkpointer: None,
    };
    while let Some(arg) = args.next() {
        let mut value = |what: &'static str| {
            args.next().ok_or(Error::Invalid { what, reason: "needs a value".to_owned() })
        };
        match arg.as_str() {
            "--interactive" | "-i" => a.interactive = true,
            "--mermaid" => a.mermaid = true,
            "--user" => a.user = value("--user")?,
            "--session" => a.session = value("--session")?,
            "--checkpointer" => a.checkpointer = Some(value("--checkpointer")?.parse()?),
            "--help" | "-h" => return Ok(None),
            other => {
                return Err(Error::Invalid {
                    what: "argument",
                    reason: format!("unknown `{other}`; see --help"),
                })
            }
        }
    }
    Ok(Some(a))
}

#[tokio::main]
async fn main() -> ExitCode {
    match run().await {
        Ok(()) => ExitCode::SUCCESS,
        // `memory-agent | head`: the reader left; that is not a failure of the agent.
        Err(Error::Io(e)) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            let mut source = std::error::Error::source(&e);
            while let Some(cause) = source {
                eprintln!("  caused by: {cause}");
                source = cause.source();
            }
            ExitCode::FAILURE
        }
    }
}

async fn run() -> Result<()> {
    let Some(args) = parse_args(std::env::args().skip(1))? else {
        println!("{USAGE}");
        return Ok(());
    };
    if args.mermaid {
        print!("{}", build_graph()?.draw_mermaid());
        return Ok(());
    }
    let config = Config::from_env(args.checkpointer)?;
    let agent = Agent::connect(&config).await?;
    let [model, memory, checkpointer] = config.describe();
    println!("memory-agent: START → retrieve → call_model → save_memory → END");
    println!("  model:       {model}");
    println!("  long-term:   {memory}");
    println!("  short-term:  {checkpointer}");
    println!("  update path: {}", agent.context().consolidator.describe());
    if matches!(config.model, ModelChoice::Offline) {
        println!("{OFFLINE_NOTICE}");
    }
    if args.interactive {
        interactive(&agent, args.user, args.session).await
    } else {
        run_demo(&agent, "", std::io::stdout().lock()).await.map(drop)
    }
}

/// Reads one line from stdin without blocking the runtime; `None` at end of input.
async fn read_line() -> Result<Option<String>> {
    let line = tokio::task::spawn_blocking(|| {
        let mut buf = String::new();
        std::io::stdin().read_line(&mut buf).map(|n| (n > 0).then_some(buf))
    })
    .await
    .map_err(std::io::Error::other)??;
    Ok(line.map(|l| l.trim_end_matches(['\r', '\n']).to_owned()))
}

async fn interactive(agent: &Agent, mut user: String, mut session: String) -> Result<()> {
    println!("type a message, or /user ID, /session ID, /size, /quit");
    loop {
        print!("\n{user}@{session}> ");
        std::io::stdout().flush()?;
        let Some(line) = read_line().await? else { break };
        let line = line.trim();
        match line.split_once(' ').unwrap_or((line, "")) {
            ("", _) => continue,
            ("/quit" | "/exit", _) => break,
            ("/user", id) if !id.trim().is_empty() => user = id.trim().to_owned(),
            ("/session", id) if !id.trim().is_empty() => session = id.trim().to_owned(),
            ("/size", _) => {
                let size = agent.checkpoint_size(&user, &session).await?;
                let messages = agent.graph().get_state(&Agent::run_config(&user, &session)).await?;
                println!(
                    "{}",
                    render_checkpoint(
                        &thread_id(&user, &session),
                        messages.values.messages.len(),
                        size.as_ref()
                    )
                );
            }
            _ => {
                // A bad message (e.g. an invalid id) is reported and the chat goes on.
                if let Err(e) = chat_once(agent, &user, &session, line).await {
                    println!("error: {e}");
                }
            }
        }
    }
    Ok(())
}

/// One streamed turn: recalled memories when `retrieve` finishes, then the reply token by token.
async fn chat_once(agent: &Agent, user: &str, session: &str, text: &str) -> Result<()> {
    let mut events = agent.chat_stream(user, session, text)?;
    let mut replying = false;
    while let Some(event) = events.next().await {
        match event? {
            StreamEvent::Updates { node, updates } if node == "retrieve" => {
                for recalled in updates.into_iter().filter_map(|u| u.retrieved_history) {
                    print!("{}", render_recalled(&recalled));
                }
            }
            StreamEvent::Messages { chunk, .. } => {
                if !replying {
                    print!("  ai> ");
                    replying = true;
                }
                print!("{}", chunk.text());
                std::io::stdout().flush()?;
            }
            _ => {}
        }
    }
    println!();
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<Option<Args>> {
        parse_args(args.iter().map(|s| (*s).to_owned()))
    }

    #[test]
    fn flags_are_parsed_and_mistakes_reported() {
        let a =
            parse(&["-i", "--user", "ada", "--session", "s1", "--checkpointer", "redis"]).unwrap().unwrap();
        assert!(a.interactive && !a.mermaid);
        assert_eq!((a.user.as_str(), a.session.as_str()), ("ada", "s1"));
        assert_eq!(a.checkpointer, Some(CheckpointerKind::Redis));
        assert!(parse(&["--help"]).unwrap().is_none());
        assert!(parse(&["--user"]).unwrap_err().to_string().contains("--user"));
        assert!(parse(&["--checkpointer", "pg"]).unwrap_err().to_string().contains("pg"));
        assert!(parse(&["--verbose"]).unwrap_err().to_string().contains("--verbose"));
    }
}
