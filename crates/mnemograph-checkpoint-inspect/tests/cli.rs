//! Command-line behaviour that needs no server: usage errors exit with 2, connection errors
//! with 1, passwords never reach the output, and `completions` prints a shell's script.

mod support;

use support::inspect;

fn stderr(args: &[&str]) -> (Option<i32>, String) {
    let out = inspect(args);
    (out.status.code(), String::from_utf8_lossy(&out.stderr).into_owned())
}

#[test]
fn usage_errors_exit_with_two() {
    let (code, err) = stderr(&[]);
    assert_eq!(code, Some(2));
    assert!(err.contains("error: missing <URL> argument") && err.contains("--help"), "{err}");
    let (code, err) = stderr(&["mongodb://h/db", "threads"]);
    assert_eq!(code, Some(2));
    assert!(err.contains("unsupported URL `mongodb://h/db`"), "{err}");
    let (code, err) = stderr(&["mysql://h/db", "history", "t", "--limit", "-3"]);
    assert_eq!(code, Some(2));
    assert!(err.contains("`--limit` expects a positive number"), "{err}");
}

#[test]
fn help_goes_to_stdout() {
    let out = inspect(&["--help"]);
    assert_eq!(out.status.code(), Some(0));
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("checkpoint-inspect [--json] <URL> history <thread>")
    );
}

#[test]
fn unreachable_servers_exit_with_one_and_hide_the_password() {
    // Port 1 refuses connections at once.
    let (code, err) = stderr(&["mysql://root:s3cret@127.0.0.1:1/app", "threads"]);
    assert_eq!(code, Some(1));
    assert!(err.contains("cannot connect to mysql://root:***@127.0.0.1:1/app"), "{err}");
    assert!(err.contains("caused by:") && !err.contains("s3cret"), "{err}");
    let (code, err) = stderr(&["redis://:s3cret@127.0.0.1:1/", "threads"]);
    assert_eq!(code, Some(1));
    assert!(err.contains("cannot connect to redis://:***@127.0.0.1:1/") && !err.contains("s3cret"), "{err}");
}

#[test]
fn a_missing_drawing_fails_before_connecting() {
    let (code, err) = stderr(&["mysql://127.0.0.1:1/app", "history", "t", "--graph", "/nonexistent/g.mmd"]);
    assert_eq!(code, Some(1));
    assert!(err.contains("cannot read `/nonexistent/g.mmd`"), "{err}");
}

#[test]
fn completions_print_a_script_for_the_shell_named() {
    let out = inspect(&["completions", "bash"]);
    assert_eq!(out.status.code(), Some(0));
    let script = String::from_utf8_lossy(&out.stdout);
    for command in ["threads", "history", "show", "graph", "--checkpoint"] {
        assert!(script.contains(command), "the bash script lacks {command}");
    }
    let (code, err) = stderr(&["completions", "tcsh"]);
    assert_eq!(code, Some(2));
    assert!(err.contains("invalid value 'tcsh'") && err.contains("possible values: bash"), "{err}");
}
