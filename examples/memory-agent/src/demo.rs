//! The scripted conversation `cargo run -p memory-agent` plays, and how turns are printed.

use std::io::Write;

use mnemograph_memory::MemoryHit;

use crate::agent::{Agent, CheckpointSize, Turn};
use crate::compact::{render_compaction, CompactPolicy, SessionCompaction};
use crate::error::Result;
use crate::state::thread_id;
use crate::when::TimeWindow;

/// The script: `(user, session, message)`. Ada tells three facts on Monday and asks one back in
/// the same session (short-term memory); on Friday, a new session and so a new thread, she asks
/// two back (long-term memory) and tells that she moved, which retires Monday's address (the
/// update path); on Saturday she asks where she lives and only the new address is recalled. Bob
/// has his own dog; his Friday question must recall his memory and none of Ada's.
pub const SCRIPT: &[(&str, &str, &str)] = &[
    ("ada", "monday", "Hi, I'm Ada. My dog is called Biscuit."),
    ("ada", "monday", "I'm allergic to peanuts."),
    ("ada", "monday", "I live in Beijing."),
    ("ada", "monday", "What is my dog called?"),
    ("ada", "friday", "What's my dog's name?"),
    ("ada", "friday", "Am I allergic to anything?"),
    ("ada", "friday", "I live in Shanghai now."),
    ("ada", "saturday", "Where do I live?"),
    ("bob", "monday", "My dog is called Rex."),
    ("bob", "friday", "What's my dog's name?"),
];

/// Sessions idle this many days are compacted by the demo's background step. It runs on Sunday,
/// when both Monday sessions are six days old and the later ones are not.
pub const DEMO_COMPACT_AFTER_DAYS: u32 = 5;

/// Played after the compaction step: Ada asks about a fact of her compacted Monday session, which
/// is now recalled from its summary.
pub const AFTER_COMPACTION: &[(&str, &str, &str)] = &[("ada", "sunday", "Am I allergic to anything?")];

/// The day of the week each session of the script is played on, counted from Monday: the demo
/// sets the agent's [`Clock`](crate::Clock) to it, so a week plays in a second.
pub fn session_day(session: &str) -> i64 {
    const DAYS: [&str; 7] = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"];
    DAYS.iter().position(|d| session.starts_with(d)).map_or(0, |d| d as i64)
}

/// Seconds in a day.
const DAY: i64 = 86_400;

/// One session of the script: its turns and the size of its thread's checkpoint afterwards.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionReport {
    /// The user.
    pub user_id: String,
    /// The session.
    pub session_id: String,
    /// Its turns, in order.
    pub turns: Vec<Turn>,
    /// The thread's latest checkpoint after the last turn.
    pub checkpoint: Option<CheckpointSize>,
}

/// Everything the scripted demo did.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct DemoReport {
    /// Sessions in script order, then those of [`AFTER_COMPACTION`].
    pub sessions: Vec<SessionReport>,
    /// What the compaction step did.
    pub compaction: Vec<SessionCompaction>,
}

impl DemoReport {
    /// The session of `user_id` whose id starts with `session_prefix`.
    pub fn session(&self, user_id: &str, session_prefix: &str) -> Option<&SessionReport> {
        self.sessions.iter().find(|s| s.user_id == user_id && s.session_id.starts_with(session_prefix))
    }

    /// Recalled memories that belong to someone other than the user who asked: must be zero.
    pub fn cross_user_recalls(&self) -> usize {
        let turns = self.sessions.iter().flat_map(|s| &s.turns);
        turns.map(|t| t.recalled.iter().filter(|r| r.record.user_id != t.user_id).count()).sum()
    }
}

/// Plays [`SCRIPT`], printing the transcript to `out` as it goes; then, as the background job
/// would on Sunday, compacts the sessions idle for [`DEMO_COMPACT_AFTER_DAYS`], and plays
/// [`AFTER_COMPACTION`]. Session ids get `suffix` appended (tests use it to keep runs on shared
/// servers apart). Each session runs with the agent's clock on its [day](session_day); the clock
/// is reset afterwards.
///
/// # Errors
/// A failed turn, compaction or checkpoint read; a failed write to `out` is
/// [`Error::Io`](crate::Error::Io).
pub async fn run_demo(agent: &Agent, suffix: &str, mut out: impl Write) -> Result<DemoReport> {
    let mut report = DemoReport::default();
    play(agent, SCRIPT, suffix, &mut report, &mut out).await?;

    agent.context().clock.set_offset(session_day("sunday") * DAY);
    writeln!(out, "\n== background job · sunday · compact sessions idle {DEMO_COMPACT_AFTER_DAYS}+ days ==")?;
    let mut users: Vec<String> = SCRIPT.iter().map(|(user, _, _)| (*user).to_owned()).collect();
    users.dedup();
    let policy = CompactPolicy::default().after_days(DEMO_COMPACT_AFTER_DAYS);
    report.compaction = agent.compact(&users, &policy).await?;
    write!(out, "{}", render_compaction(&report.compaction))?;

    play(agent, AFTER_COMPACTION, suffix, &mut report, &mut out).await?;
    agent.context().clock.set_offset(0);
    writeln!(out, "\nisolation: {} recalled memories belonged to another user", report.cross_user_recalls())?;
    Ok(report)
}

/// Plays `script` into `report`, one session after the other.
async fn play(
    agent: &Agent,
    script: &[(&str, &str, &str)],
    suffix: &str,
    report: &mut DemoReport,
    out: &mut impl Write,
) -> Result<()> {
    let first = report.sessions.len();
    for &(user, session, text) in script {
        let session = format!("{session}{suffix}");
        let is_new =
            report.sessions[first..].last().is_none_or(|s| s.user_id != user || s.session_id != session);
        if is_new {
            finish_session(agent, &mut report.sessions[first..], out).await?;
            agent.context().clock.set_offset(session_day(&session) * DAY);
            writeln!(out, "\n== {user} · session {session} · thread {} ==", thread_id(user, &session))?;
            report.sessions.push(SessionReport {
                user_id: user.to_owned(),
                session_id: session.clone(),
                turns: Vec::new(),
                checkpoint: None,
            });
        }
        let turn = agent.chat(user, &session, text).await?;
        write!(out, "{}", render_turn(&turn))?;
        if let Some(s) = report.sessions.last_mut() {
            s.turns.push(turn);
        }
    }
    finish_session(agent, &mut report.sessions[first..], out).await
}

/// Measures the checkpoint of the last of `sessions` and prints it.
async fn finish_session(agent: &Agent, sessions: &mut [SessionReport], out: &mut impl Write) -> Result<()> {
    let Some(s) = sessions.last_mut() else { return Ok(()) };
    s.checkpoint = agent.checkpoint_size(&s.user_id, &s.session_id).await?;
    let messages = s.turns.last().map_or(0, |t| t.thread_messages);
    writeln!(
        out,
        "{}",
        render_checkpoint(&thread_id(&s.user_id, &s.session_id), messages, s.checkpoint.as_ref())
    )?;
    Ok(())
}

/// A turn as the transcript shows it: the message, what was recalled with scores, the reply.
pub fn render_turn(turn: &Turn) -> String {
    let mut s = format!("{}> {}\n", turn.user_id, turn.question);
    s.push_str(&render_window(turn.recall_window.as_ref(), turn.window_fallback));
    s.push_str(&render_recalled(&turn.recalled));
    s.push_str(&format!("  ai> {}\n", turn.answer));
    for reason in &turn.retired {
        s.push_str(&format!("     superseded an older memory, now retired ({reason})\n"));
    }
    s
}

/// The time window recall was narrowed to, one line, or nothing when the question named no time.
pub fn render_window(window: Option<&TimeWindow>, fallback: bool) -> String {
    match window {
        None => String::new(),
        Some(w) if fallback => {
            format!("     time: {}, when nothing was saved; recalled from any time\n", w.describe())
        }
        Some(w) => format!("     time: recalling from {}\n", w.describe()),
    }
}

/// The recalled memories, one line each: score, relevance, session and the start of the text.
pub fn render_recalled(recalled: &[MemoryHit]) -> String {
    if recalled.is_empty() {
        return "     recalled: nothing from long-term memory\n".to_owned();
    }
    let mut s = format!("     recalled {} from long-term memory (score / relevance):\n", recalled.len());
    for r in recalled {
        let text = r.record.content.replace('\n', " | ");
        s.push_str(&format!(
            "       {:.3} / {:.3}  [{}] {}\n",
            r.score,
            r.relevance,
            r.record.session_id,
            shorten(&text, 72)
        ));
    }
    s
}

/// The short-term memory line printed after a session.
pub fn render_checkpoint(thread: &str, messages: usize, size: Option<&CheckpointSize>) -> String {
    match size {
        Some(c) => format!(
            "   short-term: thread {thread} holds {messages} messages; its latest checkpoint (step {}) is {} bytes ({} JSON + {} msgpack)",
            c.step,
            c.bytes(),
            c.document_bytes,
            c.blob_bytes
        ),
        None => format!("   short-term: thread {thread} has no checkpoint"),
    }
}

/// `text` cut to `max` characters with an ellipsis.
fn shorten(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let mut s: String = text.chars().take(max - 1).collect();
    s.push('…');
    s
}
