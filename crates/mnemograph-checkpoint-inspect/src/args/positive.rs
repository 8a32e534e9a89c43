//! `--limit`'s value: a whole number above zero.

use std::ffi::OsStr;

use clap::builder::TypedValueParser;
use clap::error::ErrorKind;
use clap::{Arg, Command};

/// Parses a positive `usize`; anything else is a usage error saying what was expected and what
/// was given (`` `--limit` expects a positive number, got `0` ``).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Positive;

impl TypedValueParser for Positive {
    type Value = usize;

    fn parse_ref(&self, cmd: &Command, arg: Option<&Arg>, value: &OsStr) -> Result<usize, clap::Error> {
        let text = value.to_string_lossy();
        match text.parse::<usize>() {
            Ok(n) if n > 0 => Ok(n),
            _ => {
                let option = arg
                    .and_then(Arg::get_long)
                    .map_or_else(|| "the value".to_owned(), |l| format!("`--{l}`"));
                // Formatted against the command, so the message ends with its usage and `--help`.
                let message = format!("{option} expects a positive number, got `{text}`");
                Err(cmd.clone().error(ErrorKind::ValueValidation, message))
            }
        }
    }
}
