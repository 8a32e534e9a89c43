//! Python's half of a hand-off: `tests/python/parity.py --serve` processes, each kept between
//! operations, because starting Python and importing LangGraph cost more than most operations.
//! Tests run in parallel, so idle processes wait in a pool and a busy test starts another.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::Mutex;

use serde_json::{json, Value};

use crate::handoff::Peer;

/// A serving process of one interpreter.
struct Server {
    /// The interpreter it runs on.
    python: String,
    /// Kept so the process is not left behind: it ends when its stdin closes.
    _child: Child,
    /// Where requests go, one JSON object a line.
    requests: ChildStdin,
    /// Where answers come from, one JSON object a line.
    answers: BufReader<ChildStdout>,
}

/// The processes not serving an operation right now.
static IDLE: Mutex<Vec<Server>> = Mutex::new(Vec::new());

/// An idle process of `python`, or a new one.
fn take(python: &str) -> Server {
    let mut idle = IDLE.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some(at) = idle.iter().position(|s| s.python == python) {
        return idle.swap_remove(at);
    }
    drop(idle);
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/python/parity.py");
    let mut child = Command::new(python)
        .arg(script)
        .arg("--serve")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("start python");
    let requests = child.stdin.take().expect("piped stdin");
    let answers = BufReader::new(child.stdout.take().expect("piped stdout"));
    Server { python: python.to_owned(), _child: child, requests, answers }
}

/// Python's view of `thread` after performing `op` (or only reading, for `Value::Null`).
pub(crate) fn python(peer: &Peer, thread: &str, case: &str, op: &Value) -> Value {
    let mut server = take(&peer.python);
    let request = json!({"url": peer.url, "thread": thread, "case": case, "op": op});
    writeln!(server.requests, "{request}").expect("send the request to python");
    let mut line = String::new();
    server.answers.read_line(&mut line).expect("read python's answer");
    assert!(!line.is_empty(), "python exited on {op} (its stderr is above)");
    let mut answer: Value = serde_json::from_str(&line).expect("python printed JSON");
    if let Some(error) = answer.get("error") {
        panic!("python failed on {op}:\n{}", error.as_str().unwrap_or_default());
    }
    IDLE.lock().unwrap_or_else(std::sync::PoisonError::into_inner).push(server);
    answer["view"].take()
}
