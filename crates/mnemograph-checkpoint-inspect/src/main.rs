//! `checkpoint-inspect <URL> <command>`: see `--help` and the crate's README.

use std::error::Error as _;
use std::io::Write as _;
use std::process::ExitCode;

use mnemograph_checkpoint_inspect::args::{parse, Parsed};
use mnemograph_checkpoint_inspect::{completions, Error};

fn main() -> ExitCode {
    let parsed = match parse(std::env::args_os().skip(1)) {
        Ok(parsed) => parsed,
        Err(e) => return fail(&e),
    };
    let args = match parsed {
        Parsed::Run(args) => args,
        Parsed::Print(text) => return print(&text),
        Parsed::Completions(shell) => {
            let mut stdout = std::io::stdout().lock();
            return match completions::write(shell, &mut stdout).and_then(|()| Ok(stdout.flush()?)) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => fail(&e),
            };
        }
    };
    // One command, a few queries in sequence: the current-thread runtime is enough.
    let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let mut stdout = std::io::stdout().lock();
    match runtime.block_on(mnemograph_checkpoint_inspect::run(&args, &mut stdout)) {
        Ok(()) => stdout.flush().map_or(ExitCode::FAILURE, |()| ExitCode::SUCCESS),
        Err(e) => fail(&e),
    }
}

fn print(text: &str) -> ExitCode {
    let mut stdout = std::io::stdout().lock();
    match stdout.write_all(text.as_bytes()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(_) => ExitCode::FAILURE,
    }
}

/// Prints the error with its chain of causes; usage errors add a pointer to `--help`.
fn fail(e: &Error) -> ExitCode {
    eprintln!("error: {e}");
    let mut source = e.source();
    let mut previous = String::new();
    while let Some(cause) = source {
        // Some drivers repeat their source in their own message; say it once.
        let text = cause.to_string();
        if !previous.contains(&text) {
            eprintln!("  caused by: {text}");
        }
        previous = text;
        source = cause.source();
    }
    // clap's messages end with their own pointer.
    if e.is_usage() && !matches!(e, Error::CommandLine(_)) {
        eprintln!("run `checkpoint-inspect --help` for usage");
    }
    ExitCode::from(u8::try_from(e.exit_code()).unwrap_or(1))
}
