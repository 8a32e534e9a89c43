//! A TCP proxy in front of MariaDB that makes a transaction's `COMMIT` fail on demand, for the
//! tests of a round whose archive transaction does not commit after its snapshot did.
//!
//! The fault is a real one on the real link: the proxy reads the client's packets (the MySQL
//! protocol frames each one with a 3-byte length and a sequence id), and when it sees a
//! `COM_QUERY` whose text is `COMMIT` while a fault is armed, it cuts the connection, either
//! before the `COMMIT` reaches the server (the server rolls the transaction back when the link
//! drops) or after the server answered it (the transaction is committed, and the client never
//! learns it). Every other packet passes untouched both ways. The app connects with TLS off so
//! the proxy can read the packets.

use std::sync::{Arc, Mutex, PoisonError};

use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;

use super::mysql_url_of;

/// The `COM_QUERY` command byte: a text query follows.
const COM_QUERY: u8 = 0x03;
/// The payload length of a packet that a continuation packet follows.
const MAX_PAYLOAD: usize = 0xFF_FFFF;

/// How an armed fault fails a `COMMIT`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CommitFault {
    /// The link drops before the `COMMIT` reaches the server: nothing is committed.
    Cut,
    /// The server commits and answers, and the link drops before the answer reaches the
    /// client: committed, but the client sees a failure.
    LoseReply,
}

/// What is armed, and how many faults fired.
#[derive(Debug, Default)]
struct Faults {
    /// The fault and how many more `COMMIT`s it fails.
    armed: Option<(CommitFault, usize)>,
    /// `COMMIT`s failed so far.
    fired: usize,
}

impl Faults {
    /// The fault for the `COMMIT` being sent, counting it, if one is armed.
    fn take(&mut self) -> Option<CommitFault> {
        let (fault, left) = self.armed.as_mut()?;
        let fault = *fault;
        *left -= 1;
        if *left == 0 {
            self.armed = None;
        }
        self.fired += 1;
        Some(fault)
    }
}

/// The proxy, listening on loopback; stops accepting when dropped.
#[derive(Debug)]
pub struct CommitFaultProxy {
    /// The address it listens on.
    port: u16,
    /// Shared with every relayed connection.
    faults: Arc<Mutex<Faults>>,
    /// The accepting task.
    task: JoinHandle<()>,
}

impl CommitFaultProxy {
    /// A proxy to the MariaDB of `MYSQL_URL`. Whether that server is up shows when the app
    /// connects through the proxy.
    pub async fn start() -> Self {
        let url = mysql_url_of("x");
        let authority = url.split_once("://").and_then(|(_, rest)| rest.split('/').next()).expect("a URL");
        let upstream = authority.rsplit_once('@').map_or(authority, |(_, host)| host).to_owned();
        let upstream = if upstream.contains(':') { upstream } else { format!("{upstream}:3306") };
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind the proxy");
        let port = listener.local_addr().expect("the proxy's address").port();
        let faults = Arc::new(Mutex::new(Faults::default()));
        let shared = Arc::clone(&faults);
        let task = tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                let Ok(server) = TcpStream::connect(&upstream).await else { continue };
                tokio::spawn(relay(client, server, Arc::clone(&shared)));
            }
        });
        Self { port, faults, task }
    }

    /// `MYSQL_URL` pointed at `database` through the proxy, with TLS off.
    pub fn url(&self, database: &str) -> String {
        let direct = mysql_url_of(database);
        let (scheme, rest) = direct.split_once("://").expect("a URL");
        let (authority, path) = rest.split_once('/').unwrap_or((rest, ""));
        let user = authority.rsplit_once('@').map(|(user, _)| format!("{user}@")).unwrap_or_default();
        let separator = if path.contains('?') { '&' } else { '?' };
        format!("{scheme}://{user}127.0.0.1:{}/{path}{separator}ssl-mode=disabled", self.port)
    }

    /// Fails the next `times` `COMMIT`s with `fault` (`usize::MAX`: until [`heal`](Self::heal)).
    pub fn arm(&self, fault: CommitFault, times: usize) {
        self.lock().armed = (times > 0).then_some((fault, times));
    }

    /// Lets every `COMMIT` through again.
    pub fn heal(&self) {
        self.lock().armed = None;
    }

    /// How many `COMMIT`s the proxy failed.
    pub fn fired(&self) -> usize {
        self.lock().fired
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Faults> {
        self.faults.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Drop for CommitFaultProxy {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Whether `payload` (one whole packet's) is the text query `COMMIT`.
fn is_commit(payload: &[u8]) -> bool {
    payload.first() == Some(&COM_QUERY)
        && std::str::from_utf8(&payload[1..])
            .is_ok_and(|sql| sql.trim().trim_end_matches(';').eq_ignore_ascii_case("COMMIT"))
}

/// Relays one connection both ways until either side closes or a fault cuts it.
async fn relay(mut client: TcpStream, mut server: TcpStream, faults: Arc<Mutex<Faults>>) {
    let (mut from_client, mut from_server) = (Vec::new(), vec![0_u8; 64 * 1024]);
    // Whether the packet being read continues the previous one (which was MAX_PAYLOAD long).
    let mut continuation = false;
    loop {
        tokio::select! {
            read = client.read_buf(&mut from_client) => {
                if !matches!(read, Ok(n) if n > 0) {
                    return;
                }
                while from_client.len() >= 4 {
                    let len = usize::from(from_client[0])
                        | usize::from(from_client[1]) << 8
                        | usize::from(from_client[2]) << 16;
                    if from_client.len() < 4 + len {
                        break;
                    }
                    let packet: Vec<u8> = from_client.drain(..4 + len).collect();
                    let fault = if !continuation && is_commit(&packet[4..]) {
                        faults.lock().unwrap_or_else(PoisonError::into_inner).take()
                    } else {
                        None
                    };
                    continuation = len == MAX_PAYLOAD;
                    match fault {
                        None => {
                            if server.write_all(&packet).await.is_err() {
                                return;
                            }
                        }
                        // Dropping both sockets cuts the link.
                        Some(CommitFault::Cut) => return,
                        Some(CommitFault::LoseReply) => {
                            if server.write_all(&packet).await.is_ok() {
                                // The server's answer to the COMMIT: it committed.
                                let _ = server.read(&mut from_server).await;
                            }
                            return;
                        }
                    }
                }
            }
            read = server.read(&mut from_server) => {
                match read {
                    Ok(n) if n > 0 => {
                        if client.write_all(&from_server[..n]).await.is_err() {
                            return;
                        }
                    }
                    _ => return,
                }
            }
        }
    }
}
