//! The `memory-agent` binary itself, as a user runs it.

mod support;

use std::path::Path;

use memory_agent::OFFLINE_NOTICE;
use support::{binary as agent, binary_in, fresh_dir};

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
    // The compaction step and the Sunday answer from the summary.
    assert!(stdout.contains("compacted ada:monday (idle 6.0 days): 3 exchanges -> 1 summary"), "{stdout}");
    let sunday = stdout.split("thread ada:sunday").nth(1).expect("sunday session printed");
    assert!(sunday.contains("ai> You told me in session monday: \"I'm allergic to peanuts.\""), "{stdout}");
}

#[test]
fn an_unreachable_server_is_a_clear_error() {
    // Port 1 refuses connections: nothing listens there.
    let out = agent().env("MYSQL_URL", "mysql://root:secret@127.0.0.1:1/app").output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    if !cfg!(feature = "mysql") {
        // A build without the client says which feature brings it, before anything runs.
        assert!(stderr.contains("error: MYSQL_URL is set, but this build has no mysql client"), "{stderr}");
        assert!(stderr.contains("--features mysql"), "{stderr}");
        assert!(out.stdout.is_empty(), "{}", String::from_utf8_lossy(&out.stdout));
        return;
    }
    assert!(stderr.contains("error: cannot reach MySQL at mysql://root:***@127.0.0.1:1/app"), "{stderr}");
    assert!(stderr.contains("unset MYSQL_URL"), "{stderr}");
    assert!(!stderr.contains("secret") && !stderr.contains("panicked"), "{stderr}");
}

#[test]
fn a_bad_telemetry_setting_stops_the_command_before_it_runs() {
    let out = agent()
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:1")
        .env("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(stderr.contains("unknown OTLP protocol \"http/json\""), "{stderr}");
    assert!(out.stdout.is_empty(), "nothing ran: {}", String::from_utf8_lossy(&out.stdout));
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
    // notice is printed, and the failed call is reported, not panicked on. A build without the
    // client refuses the key before anything runs.
    let out = agent()
        .env("OPENAI_API_KEY", "sk-test-not-a-key")
        .env("OPENAI_BASE_URL", "http://127.0.0.1:1/v1")
        .env("OPENAI_MODEL", "tiny")
        .output()
        .unwrap();
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(!out.status.success());
    assert!(!stderr.contains("sk-test") && !stderr.contains("panicked"), "{stderr}");
    if !cfg!(feature = "openai") {
        assert!(stderr.contains("OPENAI_API_KEY is set, but this build has no openai client"), "{stderr}");
        assert!(stdout.is_empty(), "nothing ran: {stdout}");
        return;
    }
    assert!(stdout.contains("model:       tiny at http://127.0.0.1:1/v1"), "{stdout}");
    // Importance and summaries follow the model.
    assert!(stdout.contains("importance:  the chat model scores"), "{stdout}");
    assert!(stdout.contains("summaries:   the chat model summarizes"), "{stdout}");
    assert!(!stdout.contains(OFFLINE_NOTICE), "{stdout}");
    assert!(stderr.contains("node `call_model` failed"), "{stderr}");
    assert!(stderr.contains("cannot reach the model api"), "{stderr}");
    assert!(!stderr.contains("sk-test") && !stderr.contains("panicked"), "{stderr}");
}

/// Runs the interactive mode on `script` with extra environment; returns stdout.
fn interactive(env: &[(&str, &str)], script: &str) -> String {
    use std::io::Write;
    let mut cmd = agent();
    cmd.args(["--interactive", "--user", "ada", "--session", "s1"]);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child =
        cmd.stdin(std::process::Stdio::piped()).stdout(std::process::Stdio::piped()).spawn().unwrap();
    child.stdin.take().unwrap().write_all(script.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "{stdout}");
    stdout
}

#[test]
fn the_schedule_compacts_a_session_when_the_user_leaves_it() {
    let script =
        "My cat is called Miso.\nI'm allergic to peanuts.\n/session s2\nWhat is my cat called?\n/quit\n";
    // Idle for 0 days is enough: leaving s1 compacts it.
    let stdout = interactive(&[("MEMORY_COMPACT_AFTER_DAYS", "0")], script);
    assert!(stdout.contains("sessions idle 0+ days are compacted"), "{stdout}");
    assert!(stdout.contains("compacted ada:s1 (idle 0.0 days): 2 exchanges -> 1 summary"), "{stdout}");
    let after = stdout.split("compacted ada:s1").nth(1).unwrap();
    assert!(after.contains("[s1] Summary of 2 exchanges: | User: My cat is called Miso."), "{stdout}");
    assert!(after.contains("ai> You told me in session s1: \"My cat is called Miso.\""), "{stdout}");

    // Without the schedule nothing is compacted until asked, and /compact keeps to the default
    // age (7 days).
    let stdout = interactive(&[], "My cat is called Miso.\nI like tea.\n/session s2\n/compact\n/quit\n");
    assert!(!stdout.contains("compacted ada:"), "{stdout}");
    assert!(stdout.contains("compaction: no session to compact"), "{stdout}");
}

#[test]
fn compact_needs_users_and_milvus_and_settings_are_checked() {
    let run = |args: &[&str], env: &[(&str, &str)]| {
        let mut cmd = agent();
        cmd.args(args);
        for (k, v) in env {
            cmd.env(k, v);
        }
        let out = cmd.output().unwrap();
        assert!(!out.status.success());
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let stderr = run(&["compact"], &[]);
    assert!(stderr.contains("error: invalid compact: name the users to compact with --user ID"), "{stderr}");
    let stderr = run(&["compact", "--user", "ada", "--ephemeral"], &[]);
    assert!(stderr.contains("it needs memories that outlive a process"), "{stderr}");
    let stderr = run(&[], &[("MEMORY_MAX_CONTEXT_TOKENS", "lots")]);
    assert!(
        stderr.contains("invalid MEMORY_MAX_CONTEXT_TOKENS: `lots` is not a positive number"),
        "{stderr}"
    );
}

/// The interactive mode with its data under `data_home`, as `user`, on `script`; returns stdout.
fn chat_in(data_home: &Path, args: &[&str], script: &str) -> String {
    use std::io::Write;
    let mut child = binary_in(data_home)
        .arg("--interactive")
        .args(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(script.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    stdout
}

#[test]
fn a_second_run_remembers_the_first_and_compact_reaches_it() {
    let home = fresh_dir("remember");
    let data = home.join("memory-agent");
    let first = chat_in(
        &home,
        &["--session", "monday"],
        "My ticket number is WX-48213.\nI'm allergic to peanuts.\n/quit\n",
    );
    assert!(first.contains(&format!("data:        {}", data.display())), "{first}");
    assert!(
        data.join(memory_agent::CHECKPOINTS_FILE).is_file()
            && data.join(memory_agent::MEMORIES_FILE).is_file()
    );

    // A new process, a new session: the ticket comes from long-term memory on disk.
    let second = chat_in(&home, &["--session", "friday"], "What was my ticket number?\n/quit\n");
    assert!(
        second.contains("ai> You told me in session monday: \"My ticket number is WX-48213.\""),
        "{second}"
    );
    // And Monday's thread itself was checkpointed to disk.
    let size = chat_in(&home, &["--session", "monday"], "/size\n/quit\n");
    assert!(size.contains("thread me:monday holds 4 messages"), "{size}");

    // `compact`, a third process, summarizes the first run's session.
    let out = binary_in(&home).args(["compact", "--user", "me", "--older-than-days", "0"]).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains("compacted me:monday (idle 0.0 days): 2 exchanges -> 1 summary"), "{stdout}");
    let after = chat_in(&home, &["--session", "sunday"], "What was my ticket number?\n/quit\n");
    assert!(after.contains("Summary of 2 exchanges") && after.contains("WX-48213"), "{after}");

    // `--ephemeral` neither reads nor writes the files.
    let ephemeral = chat_in(&home, &["--ephemeral", "--session", "x"], "What was my ticket number?\n/quit\n");
    assert!(ephemeral.contains("data:        in process") && !ephemeral.contains("WX-48213"), "{ephemeral}");
    // `--data-dir` puts them elsewhere.
    let elsewhere = fresh_dir("elsewhere");
    let moved =
        chat_in(&home, &["--data-dir", elsewhere.to_str().unwrap()], "What was my ticket number?\n/quit\n");
    assert!(!moved.contains("WX-48213"), "{moved}");
    assert!(elsewhere.join(memory_agent::MEMORIES_FILE).is_file());
}
