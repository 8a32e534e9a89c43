//! The conformance suite against a real 3-primary Redis Cluster.
//!
//! With `REDIS_CLUSTER_URLS` set (comma-separated node URLs) the test uses that cluster.
//! Otherwise it starts its own: three `redis-server --cluster-enabled yes` on free loopback ports
//! from 7101 up, each in its own temporary directory with persistence off, joined by
//! `redis-cli --cluster create … --cluster-replicas 0 --cluster-yes`. The servers are killed and
//! the directories removed when the test ends, also when it fails; every wait is bounded.
//! Without `redis-server`/`redis-cli` the test is skipped with a printed reason, unless `CI` is
//! set.

use std::io::Write as _;
use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use mnemograph_checkpoint::checkpoint::DynCheckpointer;
use mnemograph_checkpoint_redis::RedisCheckpointer;

/// Servers started by this test; killed and cleaned up on drop.
struct LocalCluster {
    /// The `redis-server` processes.
    servers: Vec<Child>,
    /// Their working directory (one sub-directory per server).
    dir: PathBuf,
    /// Their ports.
    ports: Vec<u16>,
}

impl Drop for LocalCluster {
    fn drop(&mut self) {
        for server in &mut self.servers {
            let _ = server.kill();
            let _ = server.wait();
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Whether `port` and its cluster-bus port (`port + 10000`) are free on loopback.
fn free(port: u16) -> bool {
    [port, port + 10_000].iter().all(|p| TcpListener::bind(("127.0.0.1", *p)).is_ok())
}

fn redis_cli(args: &[&str]) -> Option<String> {
    let out = Command::new("redis-cli").args(args).stderr(Stdio::null()).output().ok()?;
    out.status.success().then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Polls `ready` every 100 ms for up to `limit`.
fn wait_until(limit: Duration, what: &str, mut ready: impl FnMut() -> bool) {
    let start = Instant::now();
    while !ready() {
        assert!(start.elapsed() < limit, "{what} not ready after {limit:?}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

impl LocalCluster {
    /// Starts and joins three primaries.
    fn start() -> Self {
        let ports: Vec<u16> = (7101..7400).filter(|p| free(*p)).take(3).collect();
        assert_eq!(ports.len(), 3, "no three free ports in 7101..7400");
        let dir = std::env::temp_dir().join(format!("graph-rs-redis-cluster-{}", std::process::id()));
        let mut cluster = Self { servers: Vec::new(), dir, ports };
        for port in cluster.ports.clone() {
            let node_dir = cluster.dir.join(port.to_string());
            std::fs::create_dir_all(&node_dir).expect("temp dir");
            let server = Command::new("redis-server")
                .args(["--port", &port.to_string(), "--bind", "127.0.0.1", "--cluster-enabled", "yes"])
                .args(["--cluster-config-file", "nodes.conf", "--cluster-node-timeout", "5000"])
                .args(["--save", "", "--appendonly", "no", "--protected-mode", "no"])
                .arg("--dir")
                .arg(&node_dir)
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("start redis-server");
            cluster.servers.push(server);
        }
        for port in &cluster.ports {
            let port = port.to_string();
            wait_until(Duration::from_secs(10), "redis-server", || {
                redis_cli(&["-p", &port, "ping"]).is_some_and(|o| o.trim() == "PONG")
            });
        }
        let nodes: Vec<String> = cluster.ports.iter().map(|p| format!("127.0.0.1:{p}")).collect();
        let mut args: Vec<&str> = vec!["--cluster", "create"];
        args.extend(nodes.iter().map(String::as_str));
        args.extend(["--cluster-replicas", "0", "--cluster-yes"]);
        redis_cli(&args).expect("redis-cli --cluster create");
        for port in &cluster.ports {
            let port = port.to_string();
            wait_until(Duration::from_secs(20), "cluster state", || {
                redis_cli(&["-p", &port, "cluster", "info"]).is_some_and(|o| o.contains("cluster_state:ok"))
            });
        }
        cluster
    }

    fn urls(&self) -> Vec<String> {
        self.ports.iter().map(|p| format!("redis://127.0.0.1:{p}/")).collect()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conformance_on_a_three_primary_cluster() {
    let (local, urls) = match std::env::var("REDIS_CLUSTER_URLS") {
        Ok(urls) => (None, urls.split(',').map(str::to_owned).collect::<Vec<_>>()),
        Err(_) => {
            if redis_cli(&["--version"]).is_none()
                || Command::new("redis-server").arg("--version").output().is_err()
            {
                let reason = "redis-server/redis-cli not installed";
                assert!(std::env::var_os("CI").is_none(), "{reason} (CI is set, so this fails)");
                // Straight to stderr: the test harness captures `eprintln!`, and a skip must be seen.
                let _ = writeln!(std::io::stderr(), "SKIPPED: {reason}");
                return;
            }
            let local = tokio::task::spawn_blocking(LocalCluster::start).await.expect("cluster start");
            let urls = local.urls();
            (Some(local), urls)
        }
    };
    let builder = RedisCheckpointer::builder().key_prefix("graph-test:cluster").ttl(Duration::from_secs(600));
    let saver = builder.connect_cluster(&urls).await.expect("connect to the cluster");
    let saver: &dyn DynCheckpointer = &saver;
    let started = Instant::now();
    let suite = mnemograph_test::conformance::run_all(saver);
    // Bounded: a hung cluster fails the test (and the servers are still cleaned up).
    let ran =
        tokio::time::timeout(Duration::from_secs(120), suite).await.expect("the suite finishes within 120 s");
    eprintln!("cluster conformance: {ran} functions in {:?}", started.elapsed());
    if let Some(local) = &local {
        // The suite's threads spread over all three primaries (so `list` over all threads did
        // have to scan each of them).
        for port in &local.ports {
            let keys = redis_cli(&["-p", &port.to_string(), "dbsize"]).expect("dbsize");
            assert!(keys.trim().parse::<u64>().expect("a count") > 0, "no keys on node {port}");
        }
    }
}
