//! [`SpanLog`]: the spans a test's code closed, as lines of text, to check what it traced.

use std::io::Write;
use std::sync::{Arc, Mutex, PoisonError};

use tracing::subscriber::DefaultGuard;
use tracing_subscriber::fmt::format::FmtSpan;
use tracing_subscriber::fmt::MakeWriter;

/// Collects one line per closed span (its name and fields) on the current thread, from
/// [`install`](Self::install) until the guard it returns is dropped.
///
/// `tracing` remembers per call site whether anything listens, across threads: a test that
/// checks spans should run in a binary (or a `current_thread` runtime) where no other test
/// installs a different subscriber at the same time.
///
/// ```
/// let (log, _guard) = mnemograph_test::SpanLog::install();
/// tracing::info_span!("work", items = 3).in_scope(|| {});
/// assert_eq!(log.closed("work").len(), 1);
/// assert!(log.closed("work")[0].contains("items=3"));
/// tracing::info_span!("outer").in_scope(|| tracing::debug_span!("inner").in_scope(|| {}));
/// assert_eq!((log.closed("outer").len(), log.closed("inner").len()), (1, 1));
/// ```
#[derive(Debug, Clone, Default)]
pub struct SpanLog(Arc<Mutex<Vec<u8>>>);

impl SpanLog {
    /// A log receiving every span closed on this thread, at every level, while the guard lives.
    pub fn install() -> (Self, DefaultGuard) {
        let log = Self::default();
        let subscriber = tracing_subscriber::fmt()
            .with_writer(log.clone())
            .with_span_events(FmtSpan::CLOSE)
            .with_max_level(tracing::Level::TRACE)
            .with_target(false)
            .without_time()
            .with_ansi(false)
            .finish();
        (log, tracing::subscriber::set_default(subscriber))
    }

    /// Everything written so far.
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock().unwrap_or_else(PoisonError::into_inner)).into_owned()
    }

    /// The lines of the spans named `name` that closed, in order; each reads
    /// `LEVEL outer{...}:name{field=value ...}: close time.busy=...`.
    pub fn closed(&self, name: &str) -> Vec<String> {
        self.text().lines().filter(|l| innermost(l) == Some(name)).map(str::to_owned).collect()
    }
}

/// The name of the span a `close` line is about: the last of its chain of spans.
fn innermost(line: &str) -> Option<&str> {
    let chain = &line[..line.rfind(": close")?];
    let end = if chain.ends_with('}') {
        // Back to the `{` that opens the innermost span's fields.
        let mut depth = 0;
        let mut open = None;
        for (i, c) in chain.char_indices().rev() {
            match c {
                '}' => depth += 1,
                '{' => {
                    depth -= 1;
                    if depth == 0 {
                        open = Some(i);
                        break;
                    }
                }
                _ => {}
            }
        }
        open?
    } else {
        chain.len()
    };
    let start = chain[..end].rfind([':', ' ']).map_or(0, |i| i + 1);
    Some(&chain[start..end])
}

impl Write for SpanLog {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).extend_from_slice(bytes);
        Ok(bytes.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl<'a> MakeWriter<'a> for SpanLog {
    type Writer = Self;
    fn make_writer(&'a self) -> Self {
        self.clone()
    }
}
