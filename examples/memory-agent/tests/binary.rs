//! The `memory-agent` binary itself, as a user runs it.

use std::process::Command;

use memory_agent::OFFLINE_NOTICE;

/// The binary with every backend variable removed: the embedded defaults.
fn agent() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_memory-agent"));
    for var in ["OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_MODEL", "MILVUS_URL", "MYSQL_URL", "REDIS_URL"] {
        cmd.env_remove(var);
    }
    cmd
}

#[test]
fn runs_offline_with_no_environment() {
    let out = agent().output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains(OFFLINE_NOTICE), "{stdout}");
    // Ada's Friday question, on a new thread, is answered from Monday's memory.
    let friday = stdout.split("thread ada:friday").nth(1).expect("friday session printed");
    assert!(
        friday.contains("ai> You told me in session monday: \"Hi, I'm Ada. My dog is called Biscuit.\""),
        "{stdout}"
    );
    assert!(stdout.contains("bytes ("), "checkpoint size printed: {stdout}");
    assert!(stdout.contains("isolation: 0 recalled memories"), "{stdout}");
}

#[test]
fn an_unreachable_server_is_a_clear_error() {
    // Port 1 refuses connections: nothing listens there.
    let out = agent().env("MYSQL_URL", "mysql://root:secret@127.0.0.1:1/app").output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(stderr.contains("error: cannot reach MySQL at mysql://root:***@127.0.0.1:1/app"), "{stderr}");
    assert!(stderr.contains("unset MYSQL_URL"), "{stderr}");
    assert!(!stderr.contains("secret") && !stderr.contains("panicked"), "{stderr}");
}

#[test]
fn interactive_mode_chats_on_stdin() {
    use std::io::Write;
    let mut child = agent()
        .args(["--interactive", "--user", "ada", "--session", "s1"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let script = "My cat is called Miso.\n/session s2\nWhat is my cat called?\n/size\n/quit\n";
    child.stdin.take().unwrap().write_all(script.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    assert!(stdout.contains("ai> You told me in session s1: \"My cat is called Miso.\""), "{stdout}");
    assert!(stdout.contains("thread ada:s2 holds 2 messages"), "{stdout}");
}

#[test]
fn an_api_key_switches_to_the_openai_client() {
    // A real OpenAI-compatible client, pointed at a closed port: the banner names it, no offline
    // notice is printed, and the failed call is reported, not panicked on.
    let out = agent()
        .env("OPENAI_API_KEY", "sk-test-not-a-key")
        .env("OPENAI_BASE_URL", "http://127.0.0.1:1/v1")
        .env("OPENAI_MODEL", "tiny")
        .output()
        .unwrap();
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(!out.status.success());
    assert!(stdout.contains("model:       tiny at http://127.0.0.1:1/v1"), "{stdout}");
    assert!(!stdout.contains(OFFLINE_NOTICE), "{stdout}");
    assert!(stderr.contains("node `call_model` failed"), "{stderr}");
    assert!(stderr.contains("cannot reach the model api"), "{stderr}");
    assert!(!stderr.contains("sk-test") && !stderr.contains("panicked"), "{stderr}");
}
