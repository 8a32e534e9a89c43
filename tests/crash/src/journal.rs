//! The side journal: one line per node execution, written by the node itself, independent of the
//! saver under test.
//!
//! The journal is what lets the harness tell "the task ran" from "the saver knows the task ran".
//! A record is appended at the end of a node body, before the node returns, so a record exists
//! exactly for the executions that reached their end, whether or not the engine then managed to
//! save their writes before the process was killed.
//!
//! Durability: each record is one `write(2)` on a file opened with `O_APPEND`. The failure being
//! tested is the death of the process (SIGKILL), not of the machine: a `write` that returned is in
//! the kernel's page cache and survives the process, so no `fsync` is needed (and none is paid for
//! on every record). `O_APPEND` makes each record land whole at the end of the file even though
//! every incarnation of a thread appends to the same file.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use crate::error::{Error, Result};

/// One execution of a node body that reached its end.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    /// Which process of the thread ran it (0 = the first, then one more per restart).
    pub incarnation: u32,
    /// The superstep.
    pub step: i64,
    /// The task id (derived from the step's input checkpoint id, so stable across restarts).
    pub task_id: String,
    /// The node, with the item for mapped tasks (`map#2`).
    pub node: String,
}

impl Record {
    /// The record as the journal line it is written as.
    fn line(&self) -> String {
        format!("exec {} {} {} {}\n", self.incarnation, self.step, self.task_id, self.node)
    }

    /// Parses one journal line (without its newline).
    fn parse(text: &str) -> Option<Self> {
        let mut parts = text.split(' ');
        let (Some("exec"), Some(inc), Some(step), Some(task), Some(node), None) =
            (parts.next(), parts.next(), parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return None;
        };
        Some(Self {
            incarnation: inc.parse().ok()?,
            step: step.parse().ok()?,
            task_id: task.to_owned(),
            node: node.to_owned(),
        })
    }
}

/// An open journal a worker appends to.
#[derive(Debug)]
pub struct Journal {
    /// Where it is.
    path: PathBuf,
    /// The file, opened for appending. The lock keeps one record per `write` call even when
    /// parallel tasks of a step record at the same moment; it is never held across an `.await`.
    file: Mutex<File>,
}

impl Journal {
    /// Opens (creating if needed) the journal at `path` for appending.
    ///
    /// # Errors
    /// [`Error::Io`] when the file cannot be opened.
    pub fn open(path: &Path) -> Result<Self> {
        let file = OpenOptions::new().create(true).append(true).open(path).map_err(Error::io(path))?;
        Ok(Self { path: path.to_owned(), file: Mutex::new(file) })
    }

    /// Appends `record` with a single `write`.
    ///
    /// # Errors
    /// [`Error::Io`] when the write fails.
    pub fn append(&self, record: &Record) -> Result<()> {
        let line = record.line();
        // A poisoned lock only means another task panicked mid-append; the file itself is fine.
        let mut file = self.file.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        file.write_all(line.as_bytes()).map_err(Error::io(&self.path))
    }
}

/// Every record of the journal at `path`, in the order they were appended; none when the file does
/// not exist yet (no node of the thread reached its end).
///
/// # Errors
/// [`Error::Io`] when the file cannot be read, [`Error::Journal`] for a line that is not a record
/// (including a torn last line, which a whole-record `write` never leaves).
pub fn read(path: &Path) -> Result<Vec<Record>> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(Error::io(path)(e)),
    };
    let mut records = Vec::new();
    let mut rest = text.as_str();
    let mut line = 0;
    while !rest.is_empty() {
        line += 1;
        let malformed = |text: &str| Error::Journal { path: path.to_owned(), line, text: text.to_owned() };
        let Some((head, tail)) = rest.split_once('\n') else { return Err(malformed(rest)) };
        records.push(Record::parse(head).ok_or_else(|| malformed(head))?);
        rest = tail;
    }
    Ok(records)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_round_trip_and_torn_lines_are_refused() {
        let dir = std::env::temp_dir().join(format!("crash-journal-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("t.log");
        let _ = std::fs::remove_file(&path);
        assert!(read(&path).unwrap().is_empty());
        let a = Record { incarnation: 0, step: 2, task_id: "t-1".into(), node: "map#3".into() };
        let b = Record { incarnation: 1, step: -1, task_id: "t-2".into(), node: "a".into() };
        let journal = Journal::open(&path).unwrap();
        journal.append(&a).unwrap();
        // A second opener (the next incarnation) appends after the first one's records.
        Journal::open(&path).unwrap().append(&b).unwrap();
        assert_eq!(read(&path).unwrap(), [a, b]);
        std::fs::OpenOptions::new().append(true).open(&path).unwrap().write_all(b"exec 2 3").unwrap();
        assert!(matches!(read(&path), Err(Error::Journal { line: 3, .. })));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
