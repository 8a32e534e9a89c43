//! A MariaDB and a Redis of a test's own, on ports of their own with their data under a
//! directory of the test's, so that the test may kill them (`SIGKILL`) and start them again on the
//! same data without touching the shared servers other tests use.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use sqlx::Connection;

/// How long a server may take to answer after it was started.
const START_TIMEOUT: Duration = Duration::from_secs(60);

/// `name` on the `PATH` or in the system's `sbin` directories, where Debian installs `mariadbd`.
fn binary(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(["/usr/sbin", "/usr/local/sbin", "/sbin"].map(PathBuf::from))
        .map(|dir| dir.join(name))
        .find(|candidate| candidate.is_file())
}

/// The binaries `names`, or `None` (after saying why) when one is missing and `CI` is not set.
fn binaries<const N: usize>(names: [&str; N]) -> Option<[PathBuf; N]> {
    let found = names.map(binary);
    if found.iter().all(Option::is_some) {
        return Some(found.map(|b| b.expect("checked above")));
    }
    let missing: Vec<&str> = names.iter().zip(&found).filter(|(_, b)| b.is_none()).map(|(n, _)| *n).collect();
    let why = format!("{} not found on the PATH or in /usr/sbin", missing.join(", "));
    assert!(std::env::var_os("CI").is_none_or(|v| v.is_empty()), "{why} (CI is set, so this fails)");
    eprintln!("SKIPPED: {why}");
    None
}

/// A port nothing listens on now.
pub(crate) fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").expect("a free port").local_addr().expect("its address").port()
}

/// Whether this process runs as root, which `mariadbd` refuses unless told `--user=root`.
fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines().find_map(|l| l.strip_prefix("Uid:").map(|u| u.split_whitespace().next() == Some("0")))
        })
        .unwrap_or(false)
}

/// Appends a child's output to `log`.
fn logged(command: &mut Command, log: &Path) -> Child {
    let out = std::fs::OpenOptions::new().create(true).append(true).open(log).expect("a log file");
    let err = out.try_clone().expect("a log file");
    command.stdin(Stdio::null()).stdout(out).stderr(err).spawn().expect("start a server")
}

/// Kills `child` with `SIGKILL` and reaps it.
fn kill(child: &mut Option<Child>) {
    if let Some(mut c) = child.take() {
        // An error here means it already exited, which is what is asked.
        let _ = c.kill();
        let _ = c.wait();
    }
}

/// A MariaDB server whose `root` has no password, listening on 127.0.0.1 only.
pub(crate) struct OwnMariaDb {
    binary: PathBuf,
    dir: PathBuf,
    port: u16,
    child: Option<Child>,
}

impl OwnMariaDb {
    /// Makes a data directory in `dir/mariadb` and starts the server on it; `None` (after saying
    /// why) when `mariadbd` or `mariadb-install-db` is missing and `CI` is not set.
    pub(crate) async fn start(dir: &Path) -> Option<Self> {
        let [install, binary] = binaries(["mariadb-install-db", "mariadbd"])?;
        let dir = dir.join("mariadb");
        std::fs::create_dir_all(&dir).expect("a directory for MariaDB");
        let mut command = Command::new(install);
        command
            .arg("--no-defaults")
            .arg(format!("--datadir={}", dir.join("data").display()))
            .arg("--auth-root-authentication-method=normal")
            .arg("--skip-test-db")
            .args(Self::sizes());
        if is_root() {
            command.arg("--user=root");
        }
        let installed = logged(&mut command, &dir.join("install.log")).wait().expect("mariadb-install-db");
        assert!(installed.success(), "mariadb-install-db failed: see {}", dir.join("install.log").display());
        let mut db = Self { binary, dir, port: free_port(), child: None };
        db.restart().await;
        Some(db)
    }

    /// Small buffers and logs: the test's data is small, and a smaller redo log recovers faster.
    fn sizes() -> [&'static str; 2] {
        ["--innodb-buffer-pool-size=32M", "--innodb-log-file-size=16M"]
    }

    /// The URL of `database` on this server.
    pub(crate) fn url(&self, database: &str) -> String {
        format!("mysql://root@127.0.0.1:{}/{database}", self.port)
    }

    /// Kills the server with `SIGKILL`: no shutdown, InnoDB recovers from its redo log on the
    /// next start.
    pub(crate) fn kill(&mut self) {
        kill(&mut self.child);
    }

    /// Starts the server on its data directory and port, and waits until it answers.
    pub(crate) async fn restart(&mut self) {
        kill(&mut self.child);
        let mut command = Command::new(&self.binary);
        command
            .arg("--no-defaults")
            .arg(format!("--datadir={}", self.dir.join("data").display()))
            .arg(format!("--port={}", self.port))
            .arg("--bind-address=127.0.0.1")
            .arg(format!("--socket={}", self.dir.join("mysqld.sock").display()))
            .arg(format!("--pid-file={}", self.dir.join("mysqld.pid").display()))
            .arg("--skip-log-bin")
            .arg("--skip-name-resolve")
            .arg("--max-connections=500")
            .args(Self::sizes());
        if is_root() {
            command.arg("--user=root");
        }
        self.child = Some(logged(&mut command, &self.dir.join("mariadbd.log")));
        let deadline = Instant::now() + START_TIMEOUT;
        loop {
            if let Ok(conn) = sqlx::MySqlConnection::connect(&self.url("information_schema")).await {
                conn.close().await.expect("close a connection");
                return;
            }
            assert!(Instant::now() < deadline, "MariaDB did not answer: see {}", self.dir.display());
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

impl Drop for OwnMariaDb {
    fn drop(&mut self) {
        kill(&mut self.child);
    }
}

/// A Redis server that appends every write to its log on disk before answering
/// (`appendfsync always`), so a write it acknowledged survives `SIGKILL`.
pub(crate) struct OwnRedis {
    binary: PathBuf,
    dir: PathBuf,
    port: u16,
    child: Option<Child>,
}

impl OwnRedis {
    /// Starts a server keeping its data in `dir/redis`; `None` (after saying why) when
    /// `redis-server` is missing and `CI` is not set.
    pub(crate) async fn start(dir: &Path) -> Option<Self> {
        let [binary] = binaries(["redis-server"])?;
        let dir = dir.join("redis");
        std::fs::create_dir_all(&dir).expect("a directory for Redis");
        let mut redis = Self { binary, dir, port: free_port(), child: None };
        redis.restart().await;
        Some(redis)
    }

    /// The server's URL.
    pub(crate) fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
    }

    /// Kills the server with `SIGKILL`.
    pub(crate) fn kill(&mut self) {
        kill(&mut self.child);
    }

    /// Starts the server on its directory and port, and waits until it answers `PING`.
    pub(crate) async fn restart(&mut self) {
        kill(&mut self.child);
        let mut command = Command::new(&self.binary);
        command
            .arg("--port")
            .arg(self.port.to_string())
            .arg("--bind")
            .arg("127.0.0.1")
            .arg("--dir")
            .arg(&self.dir)
            .arg("--appendonly")
            .arg("yes")
            .arg("--appendfsync")
            .arg("always")
            .arg("--save")
            .arg("");
        self.child = Some(logged(&mut command, &self.dir.join("redis.log")));
        let deadline = Instant::now() + START_TIMEOUT;
        while !self.pongs() {
            assert!(Instant::now() < deadline, "Redis did not answer: see {}", self.dir.display());
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Whether the server answers `PING` (and has loaded its data: it answers `-LOADING` before).
    fn pongs(&self) -> bool {
        let Ok(mut conn) = std::net::TcpStream::connect(("127.0.0.1", self.port)) else { return false };
        let timeout = Some(Duration::from_secs(1));
        if conn.set_read_timeout(timeout).is_err() || conn.write_all(b"PING\r\n").is_err() {
            return false;
        }
        let mut answer = [0_u8; 7];
        conn.read_exact(&mut answer).is_ok() && &answer == b"+PONG\r\n"
    }
}

impl Drop for OwnRedis {
    fn drop(&mut self) {
        kill(&mut self.child);
    }
}
