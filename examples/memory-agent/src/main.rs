//! `memory-agent`: an agent that remembers across sessions.
//!
//! Needs no services: `cargo run -p memory-agent` plays a scripted conversation with an offline
//! model, in process. `--interactive` chats on stdin and keeps checkpoints and memories in SQLite
//! files under the data directory, so the next run remembers; `compact` summarizes users' ended
//! sessions there. `OPENAI_API_KEY`, `MILVUS_URL`, `DATABASE_URL`, `MYSQL_URL` and `REDIS_URL`
//! switch in servers; `--ephemeral` keeps everything in process.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use memory_agent::{
    build_graph, render_checkpoint, render_compaction, render_recalled, render_window, run_demo, thread_id,
    Agent, CheckpointerChoice, CheckpointerKind, CompactPolicy, Config, Error, MemoryChoice, ModelChoice,
    Result, Settings, OFFLINE_NOTICE,
};
use mnemograph_core::prelude::*;

const USAGE: &str = "\
usage: memory-agent [--interactive] [--user ID] [--session ID] [--checkpointer KIND]
                    [--data-dir DIR | --ephemeral]
       memory-agent compact --user ID [--user ID ...] [--older-than-days N] [--max-exchanges N]
       memory-agent --mermaid

  (default)          play a scripted conversation in process: two sessions of one user, then
                     another user, then compaction of the sessions idle 5+ days and a question
                     about one (its clock jumps days ahead, so it keeps nothing)
  --interactive      chat on stdin; commands: /user ID, /session ID, /size, /compact, /quit
  --user ID          interactive user (default `me`)
  --session ID       interactive session (default `default`); thread = USER:SESSION
  --checkpointer K   sqlite (the data directory), postgres, mysql or redis when several URLs
                     are set, or memory
  --data-dir DIR     keep checkpoints and memories in DIR (default: the data directory below)
  --ephemeral        keep them in process: the next run starts empty
  --mermaid          print the graph as a Mermaid diagram and exit

  compact            summarize the named users' ended and long sessions with the configured
                     model, retiring the exchanges each summary replaces
  --user ID          a user to compact (repeat for more)
  --older-than-days N  a session idle N days has ended: all of it is summarized (default 7)
  --max-exchanges N  a session with more exchanges is long: all but its newest 4 (default 20)

data directory (what no server holds): $XDG_DATA_HOME/memory-agent, else
  ~/.local/share/memory-agent (macOS: ~/Library/Application Support/memory-agent), with
  checkpoints.sqlite and memories.sqlite

environment (each server is used only when its variable is set):
  OPENAI_API_KEY, OPENAI_BASE_URL, OPENAI_MODEL   real OpenAI-compatible model (else offline)
  MILVUS_URL, MILVUS_TOKEN, MILVUS_COLLECTION     long-term memory in Milvus (else the data directory)
  DATABASE_URL=postgres://… | MYSQL_URL | REDIS_URL   checkpoints on that server (else the data directory)
  MEMORY_MAX_CONTEXT_TOKENS                       token budget of each model request (default 2000)
  MEMORY_COMPACT_AFTER_DAYS                       --interactive compacts sessions idle this long";

/// What the command line asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// The scripted demo (no flag).
    Demo,
    /// `--interactive`: chat on stdin.
    Interactive,
    /// `--mermaid`: print the graph and exit.
    Mermaid,
    /// `compact`: compact the named users' sessions and exit.
    Compact,
}

/// Parsed command line.
#[derive(Debug)]
struct Args {
    /// What to do.
    mode: Mode,
    /// `--user`, for the interactive mode.
    user: String,
    /// `--session`, for the interactive mode.
    session: String,
    /// `--checkpointer`, when given.
    checkpointer: Option<CheckpointerKind>,
    /// `--data-dir`, when given.
    data_dir: Option<PathBuf>,
    /// `--ephemeral`.
    ephemeral: bool,
    /// Every `--user` of `compact`.
    users: Vec<String>,
    /// `compact --older-than-days`.
    older_than_days: Option<u32>,
    /// `compact --max-exchanges`.
    max_exchanges: Option<usize>,
}

impl Args {
    /// The backends: the environment's, kept in `--data-dir` or in process as asked. `checkpointer`
    /// overrides `--checkpointer`.
    fn config(&self, checkpointer: Option<CheckpointerKind>) -> Result<Config> {
        let kind = checkpointer.or(self.checkpointer);
        let mut config = Config::from_env(kind)?;
        if let Some(dir) = &self.data_dir {
            config = config.in_data_dir(dir);
            if kind == Some(CheckpointerKind::Memory) {
                config = config.with_checkpointer(CheckpointerChoice::InMemory);
            }
        }
        Ok(if self.ephemeral { config.ephemeral() } else { config })
    }

    /// The policy of `compact`: the defaults, overridden by its flags.
    fn compact_policy(&self) -> CompactPolicy {
        let mut policy = CompactPolicy::default();
        if let Some(days) = self.older_than_days {
            policy = policy.after_days(days);
        }
        if let Some(n) = self.max_exchanges {
            policy = policy.max_exchanges(n);
        }
        policy
    }
}

fn parse_args(mut args: impl Iterator<Item = String>) -> Result<Option<Args>> {
    let mut a = Args {
        mode: Mode::Demo,
        user: "me".to_owned(),
        session: "default".to_owned(),
        checkpointer: None,
        data_dir: None,
        ephemeral: false,
        users: Vec::new(),
        older_than_days: None,
        max_exchanges: None,
    };
    let mut first = true;
    while let Some(arg) = args.next() {
        let mut value = |what: &'static str| {
            args.next().ok_or(Error::Invalid { what, reason: "needs a value".to_owned() })
        };
        let number = |what: &'static str, v: String| {
            v.parse::<u32>()
                .map_err(|_| Error::Invalid { what, reason: format!("`{v}` is not a whole number") })
        };
        match arg.as_str() {
            "compact" if first => a.mode = Mode::Compact,
            "--interactive" | "-i" => a.mode = Mode::Interactive,
            "--mermaid" => a.mode = Mode::Mermaid,
            "--user" if a.mode == Mode::Compact => a.users.push(value("--user")?),
            "--user" => a.user = value("--user")?,
            "--session" => a.session = value("--session")?,
            "--checkpointer" => a.checkpointer = Some(value("--checkpointer")?.parse()?),
            "--data-dir" => a.data_dir = Some(PathBuf::from(value("--data-dir")?)),
            "--ephemeral" => a.ephemeral = true,
            "--older-than-days" if a.mode == Mode::Compact => {
                a.older_than_days = Some(number("--older-than-days", value("--older-than-days")?)?);
            }
            "--max-exchanges" if a.mode == Mode::Compact => {
                a.max_exchanges = Some(number("--max-exchanges", value("--max-exchanges")?)? as usize);
            }
            "--help" | "-h" => return Ok(None),
            other => {
                return Err(Error::Invalid {
                    what: "argument",
                    reason: format!("unknown `{other}`; see --help"),
                })
            }
        }
        first = false;
    }
    if a.ephemeral && a.data_dir.is_some() {
        return Err(Error::Invalid {
            what: "arguments",
            reason: "--ephemeral keeps nothing, so it takes no --data-dir".to_owned(),
        });
    }
    Ok(Some(a))
}

#[tokio::main]
async fn main() -> ExitCode {
    // Held to the end of `main`: dropping it exports the last spans.
    let _telemetry = match init_telemetry() {
        Ok(guard) => guard,
        Err(e) => {
            eprintln!("error: {e}");
            if matches!(e, mnemograph_telemetry::Error::ProtocolNotEnabled { .. }) {
                eprintln!("  memory-agent exports spans in builds with `--features otlp`");
            }
            return ExitCode::FAILURE;
        }
    };
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

/// Warnings (e.g. an importance score that fell back to the rule) go to stderr; `RUST_LOG`
/// overrides the level. With `OTEL_EXPORTER_OTLP_ENDPOINT` set, the runs' spans and metrics go
/// to that collector as well.
fn init_telemetry() -> mnemograph_telemetry::Result<mnemograph_telemetry::TelemetryGuard> {
    mnemograph_telemetry::Telemetry::builder()
        .service_name("memory-agent")
        .service_version(env!("CARGO_PKG_VERSION"))
        .default_filter("warn")
        .build()?
        .install()
}

async fn run() -> Result<()> {
    let Some(args) = parse_args(std::env::args().skip(1))? else {
        println!("{USAGE}");
        return Ok(());
    };
    if args.mode == Mode::Mermaid {
        print!("{}", build_graph()?.draw_mermaid());
        return Ok(());
    }
    let settings = Settings::from_env()?;
    if args.mode == Mode::Compact {
        return compact(&args).await;
    }
    let mut config = args.config(None)?;
    if args.mode == Mode::Demo {
        // The script sets the agent's clock days ahead: what it saves must not outlive it.
        config = config.ephemeral();
    }
    let agent = Agent::connect_with(&config, &settings).await?;
    let [model, memory, checkpointer] = config.describe();
    println!("memory-agent: START → retrieve → call_model → save_memory → END");
    match (&config.data_dir, args.mode) {
        (Some(dir), _) => println!("  data:        {} (--ephemeral keeps nothing)", dir.display()),
        (None, Mode::Demo) => println!(
            "  data:        in process: the scripted demo keeps nothing (--interactive keeps what you say)"
        ),
        (None, _) => println!("  data:        in process: nothing is kept after this run"),
    }
    println!("  model:       {model}");
    println!("  long-term:   {memory}");
    println!("  short-term:  {checkpointer}");
    println!("  update path: {}", agent.context().consolidator.describe());
    println!("  importance:  {}", agent.context().importance.describe());
    println!("  summaries:   {}", agent.context().summarizer.describe());
    println!("  tuning:      {}", settings.describe());
    if matches!(config.model, ModelChoice::Offline) {
        println!("{OFFLINE_NOTICE}");
    }
    if args.mode == Mode::Interactive {
        interactive(&agent, &settings, args.user, args.session).await
    } else {
        run_demo(&agent, "", std::io::stdout().lock()).await.map(drop)
    }
}

/// `memory-agent compact`: one pass over the named users, then exit.
async fn compact(args: &Args) -> Result<()> {
    if args.users.is_empty() {
        return Err(Error::Invalid {
            what: "compact",
            reason: "name the users to compact with --user ID (repeat for more)".to_owned(),
        });
    }
    // Compaction reads and writes long-term memory only: no checkpointer server is needed.
    let config = args.config(Some(CheckpointerKind::Memory))?;
    if matches!(config.memory, MemoryChoice::Embedded) {
        return Err(Error::Invalid {
            what: "compact",
            reason: "it needs memories that outlive a process: drop --ephemeral (they are kept in the \
                     data directory), or set MILVUS_URL"
                .to_owned(),
        });
    }
    let agent = Agent::connect(&config).await?;
    println!("compacting with: {}", agent.context().summarizer.describe());
    let done = agent.compact(&args.users, &args.compact_policy()).await?;
    print!("{}", render_compaction(&done));
    Ok(())
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

/// The compaction schedule of the interactive mode: the user's sessions idle for
/// `MEMORY_COMPACT_AFTER_DAYS` are compacted; nothing when it is unset. A failure is reported and
/// the chat goes on.
async fn scheduled_compaction(agent: &Agent, settings: &Settings, user: &str) {
    let Some(policy) = settings.compact_schedule() else { return };
    match agent.compact(&[user.to_owned()], &policy).await {
        Ok(done) if done.is_empty() => {}
        Ok(done) => print!("{}", render_compaction(&done)),
        Err(e) => println!("error: compaction failed: {e}"),
    }
}

async fn interactive(
    agent: &Agent,
    settings: &Settings,
    mut user: String,
    mut session: String,
) -> Result<()> {
    println!("type a message, or /user ID, /session ID, /size, /compact, /quit");
    scheduled_compaction(agent, settings, &user).await;
    loop {
        print!("\n{user}@{session}> ");
        std::io::stdout().flush()?;
        let Some(line) = read_line().await? else { break };
        let line = line.trim();
        match line.split_once(' ').unwrap_or((line, "")) {
            ("", _) => continue,
            ("/quit" | "/exit", _) => break,
            // A switch ends the current session: the schedule may compact it (once it is idle long
            // enough) and the user's older ones.
            ("/user", id) if !id.trim().is_empty() => {
                user = id.trim().to_owned();
                scheduled_compaction(agent, settings, &user).await;
            }
            ("/session", id) if !id.trim().is_empty() => {
                session = id.trim().to_owned();
                scheduled_compaction(agent, settings, &user).await;
            }
            ("/compact", _) => {
                let policy = settings.compact_schedule().unwrap_or_default();
                match agent.compact(&[user.clone()], &policy).await {
                    Ok(done) => print!("{}", render_compaction(&done)),
                    Err(e) => println!("error: {e}"),
                }
            }
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
                for update in updates {
                    let window = update.recall_window.flatten();
                    print!("{}", render_window(window.as_ref(), update.window_fallback.unwrap_or(false)));
                    if let Some(recalled) = update.retrieved_history {
                        print!("{}", render_recalled(&recalled));
                    }
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
        assert_eq!(a.mode, Mode::Interactive);
        assert_eq!((a.user.as_str(), a.session.as_str()), ("ada", "s1"));
        assert_eq!(a.checkpointer, Some(CheckpointerKind::Redis));
        assert!(parse(&["--help"]).unwrap().is_none());
        assert!(parse(&["--user"]).unwrap_err().to_string().contains("--user"));
        assert!(parse(&["--checkpointer", "pg"]).unwrap_err().to_string().contains("pg"));
        assert!(parse(&["--verbose"]).unwrap_err().to_string().contains("--verbose"));
        let a = parse(&["--data-dir", "/tmp/a"]).unwrap().unwrap();
        assert_eq!(a.data_dir, Some(PathBuf::from("/tmp/a")));
        assert!(parse(&["--ephemeral"]).unwrap().unwrap().ephemeral);
        let err = parse(&["--ephemeral", "--data-dir", "/tmp/a"]).unwrap_err().to_string();
        assert!(err.contains("--ephemeral"), "{err}");
    }

    #[test]
    fn compact_takes_users_and_thresholds() {
        let a = parse(&[
            "compact",
            "--user",
            "ada",
            "--user",
            "bob",
            "--older-than-days",
            "3",
            "--max-exchanges",
            "8",
        ])
        .unwrap()
        .unwrap();
        assert_eq!(a.mode, Mode::Compact);
        assert_eq!(a.users, ["ada", "bob"]);
        let policy = a.compact_policy();
        assert_eq!((policy.older_than_secs, policy.max_exchanges), (Some(3 * 86_400), 8));
        assert_eq!(parse(&["compact"]).unwrap().unwrap().compact_policy(), CompactPolicy::default());
        let err = parse(&["compact", "--older-than-days", "soon"]).unwrap_err().to_string();
        assert!(err.contains("--older-than-days") && err.contains("soon"), "{err}");
        // The thresholds belong to `compact`, and `compact` is a command, not an argument.
        assert!(parse(&["--older-than-days", "3"]).is_err());
        assert!(parse(&["-i", "compact"]).is_err());
    }
}
