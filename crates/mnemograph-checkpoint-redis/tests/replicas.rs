//! A primary and a replica of the test's own (two `redis-server` processes on free ports), and
//! what a failover keeps of an acknowledged checkpoint with and without
//! `RedisCheckpointerBuilder::wait_for_replicas`.
//!
//! Needs `redis-server` on `PATH`; without it the tests print `SKIPPED` and pass, unless `CI` is
//! set: then they fail.

use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use mnemograph_checkpoint::checkpoint::backend::{checkpoint_id, next_version, now_iso};
use mnemograph_checkpoint::checkpoint::{
    Checkpoint, CheckpointConfig, CheckpointError, CheckpointMetadata, CheckpointSource, Checkpointer,
};
use mnemograph_checkpoint::value::ChannelValue;
use mnemograph_checkpoint_redis::{RedisCheckpointer, RedisSaverError};

/// One `redis-server` process, killed when dropped.
struct Server {
    child: Child,
    port: u16,
    _dir: PathBuf,
}

impl Server {
    /// A server on a free port, replicating `primary` when given; `None` (after saying why) when
    /// there is no `redis-server` to run.
    fn start(name: &str, primary: Option<u16>) -> Option<Self> {
        let port = TcpListener::bind("127.0.0.1:0").ok()?.local_addr().ok()?.port();
        let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("replicas-{name}-{port}"));
        std::fs::create_dir_all(&dir).unwrap();
        let mut cmd = Command::new("redis-server");
        cmd.args(["--port", &port.to_string(), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"])
            .arg("--dir")
            .arg(&dir)
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        if let Some(primary) = primary {
            cmd.args(["--replicaof", "127.0.0.1", &primary.to_string()]);
        }
        let child = match cmd.spawn() {
            Ok(child) => child,
            Err(e) => {
                let ci = std::env::var_os("CI").is_some_and(|v| !v.is_empty());
                assert!(!ci, "redis-server is required when CI is set: {e}");
                eprintln!("SKIPPED: cannot run redis-server: {e}");
                return None;
            }
        };
        let server = Self { child, port, _dir: dir };
        server.until(|info| !info.is_empty(), "answers");
        Some(server)
    }

    fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
    }

    /// A command's reply, or `None` when the server does not answer.
    fn query(&self, args: &[&str]) -> Option<redis::Value> {
        let mut conn = redis::Client::open(self.url()).ok()?.get_connection().ok()?;
        let mut cmd = redis::cmd(args[0]);
        for arg in &args[1..] {
            cmd.arg(*arg);
        }
        cmd.query(&mut conn).ok()
    }

    fn info_replication(&self) -> String {
        match self.query(&["INFO", "replication"]) {
            Some(v) => redis::from_redis_value::<String>(v).unwrap_or_default(),
            None => String::new(),
        }
    }

    /// Polls `INFO replication` until `ready` holds, for up to 20 s.
    fn until(&self, ready: impl Fn(&str) -> bool, what: &str) {
        let deadline = Instant::now() + Duration::from_secs(20);
        while !ready(&self.info_replication()) {
            assert!(Instant::now() < deadline, "the server on port {} never {what}", self.port);
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn signal(&self, signal: &str) {
        let status = Command::new("kill").args([signal, &self.child.id().to_string()]).status().unwrap();
        assert!(status.success(), "kill {signal}");
    }

    /// Makes this replica a primary, as a failover does.
    fn promote(&self) {
        self.until(|_| self.query(&["REPLICAOF", "NO", "ONE"]).is_some(), "took REPLICAOF NO ONE");
        self.until(|info| info.contains("role:master"), "became a primary");
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A primary and a replica in sync with it.
fn pair(name: &str) -> Option<(Server, Server)> {
    let primary = Server::start(&format!("{name}-primary"), None)?;
    let replica = Server::start(&format!("{name}-replica"), Some(primary.port))?;
    replica.until(|info| info.contains("master_link_status:up"), "caught up with its primary");
    Some((primary, replica))
}

async fn saver(server: &Server, wait: bool) -> RedisCheckpointer {
    let mut builder = RedisCheckpointer::builder().read_cache(0);
    if wait {
        builder = builder.wait_for_replicas(1, Duration::from_millis(500));
    }
    builder.connect(&server.url()).await.unwrap()
}

async fn save(saver: &RedisCheckpointer, thread: &str) -> Result<CheckpointConfig, CheckpointError> {
    let mut cp = Checkpoint { v: 4, id: checkpoint_id(0), ts: now_iso(), ..Checkpoint::default() };
    cp.channel_values.insert("log".into(), ChannelValue::new(vec![thread.to_owned()]));
    cp.channel_versions.insert("log".into(), next_version(None).into());
    let versions = cp.channel_versions.clone();
    let metadata = CheckpointMetadata::new(CheckpointSource::Loop, 0);
    saver.put(&CheckpointConfig::thread(thread), cp, metadata, versions).await
}

async fn kept(saver: &RedisCheckpointer, thread: &str) -> bool {
    saver.get_tuple(&CheckpointConfig::thread(thread)).await.unwrap().is_some()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_waiting_an_acknowledged_checkpoint_survives_the_primarys_loss() {
    let Some((primary, replica)) = pair("survives") else { return };
    let waiting = saver(&primary, true).await;
    save(&waiting, "kept").await.expect("the replica acknowledges");
    // The primary dies the moment it answered: the replica already has the write.
    primary.signal("-KILL");
    replica.promote();
    assert!(
        kept(&saver(&replica, false).await, "kept").await,
        "the acknowledged checkpoint is on the new primary"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_waiting_a_failover_loses_an_acknowledged_checkpoint_silently() {
    let Some((primary, replica)) = pair("lost") else { return };
    let plain = saver(&primary, false).await;
    let waiting = saver(&primary, true).await;
    // Written with the wait: on the replica before the next step.
    save(&waiting, "before").await.unwrap();
    // Replication stops: the replica freezes and the primary drops its link, so what is written
    // next reaches no replica.
    replica.signal("-STOP");
    primary.query(&["CLIENT", "KILL", "TYPE", "replica"]).expect("drop the replica's link");

    // Without the option the write is acknowledged; with it the writer is told.
    save(&plain, "acknowledged").await.expect("the primary alone acknowledges");
    let err = save(&waiting, "refused").await.unwrap_err();
    let CheckpointError::Backend(source) = &err else { panic!("{err:?}") };
    let ours = source.downcast_ref::<RedisSaverError>().expect("the saver's error");
    assert!(matches!(ours, RedisSaverError::NotReplicated { wanted: 1, acknowledged: 0, .. }), "{ours}");
    assert!(kept(&plain, "refused").await, "it is on the primary, as the error says");

    primary.signal("-KILL");
    replica.signal("-CONT");
    replica.promote();
    let survivor = saver(&replica, false).await;
    assert!(kept(&survivor, "before").await, "what was replicated before survives");
    assert!(!kept(&survivor, "acknowledged").await, "the acknowledged checkpoint is gone");
    assert!(!kept(&survivor, "refused").await, "so is the refused one, whose writer was told");
}

#[tokio::test]
async fn the_option_is_checked() {
    let Some(server) = Server::start("options", None) else { return };
    for builder in [
        RedisCheckpointer::builder().wait_for_replicas(0, Duration::from_secs(1)),
        RedisCheckpointer::builder().wait_for_replicas(1, Duration::ZERO),
    ] {
        let err = builder.connect(&server.url()).await.unwrap_err();
        assert!(matches!(err, RedisSaverError::Invalid(_)), "{err}");
    }
    // A server without replicas cannot satisfy one: every write says so, none hangs.
    let lonely = RedisCheckpointer::builder().wait_for_replicas(1, Duration::from_millis(50));
    let saver = lonely.connect(&server.url()).await.unwrap();
    assert!(save(&saver, "alone").await.is_err());
}
