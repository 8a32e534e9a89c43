//! Shell completion scripts, generated from the command line's definition so they never fall
//! behind it: `checkpoint-inspect completions bash > /etc/bash_completion.d/checkpoint-inspect`.

use std::io::Write;

pub use clap_complete::Shell;

use crate::args::{command, BIN};
use crate::error::Result;

/// Writes the completion script of `shell` for `checkpoint-inspect` to `out`.
///
/// # Errors
/// [`Error::Output`](crate::Error::Output) when `out` fails.
///
/// # Example
/// ```
/// use mnemograph_checkpoint_inspect::completions::{write, Shell};
///
/// let mut script = Vec::new();
/// write(Shell::Fish, &mut script)?;
/// assert!(String::from_utf8_lossy(&script).contains("complete -c checkpoint-inspect"));
/// # Ok::<(), mnemograph_checkpoint_inspect::Error>(())
/// ```
pub fn write(shell: Shell, out: &mut dyn Write) -> Result<()> {
    // Generated into memory first: clap_complete panics when its writer fails, and a closed
    // pipe is an error to report, not a crash.
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut command(), BIN, &mut script);
    if shell == Shell::Bash {
        script = respell_bash_states(&script).into_bytes();
    }
    out.write_all(&script)?;
    Ok(())
}

/// The bash script with its `case` arms spelled as its loop spells the states they match.
///
/// clap_complete spells the hyphen of a program name two ways in bash (clap-rs/clap#6421): the
/// loop that finds the subcommand sets `checkpoint__inspect__subcmd__history`, the arm for it
/// reads `checkpoint__subcmd__inspect__subcmd__history`, so no option of a subcommand would
/// ever complete.
fn respell_bash_states(script: &[u8]) -> String {
    let text = String::from_utf8_lossy(script);
    text.replace(&BIN.replace('-', "__subcmd__"), &BIN.replace('-', "__"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn script(shell: Shell) -> String {
        let mut out = Vec::new();
        write(shell, &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn bash_completes_every_command_and_option() {
        let bash = script(Shell::Bash);
        for word in
            ["threads", "history", "show", "graph", "completions", "--json", "--limit", "--checkpoint"]
        {
            assert!(bash.contains(word), "bash script lacks {word}");
        }
        assert!(bash.contains("-o default checkpoint-inspect"), "{bash}");
        assert!(bash.contains("checkpoint__inspect__subcmd__history)"), "{bash}");
        assert!(!bash.contains("checkpoint__subcmd__inspect"), "{bash}");
    }

    /// What bash offers for the words typed so far, the last one being completed.
    fn complete_in_bash(script: &str, words: &[&str]) -> Option<String> {
        let words: Vec<String> = words.iter().map(|w| format!("'{w}'")).collect();
        let program = format!(
            "{script}\nCOMP_WORDS=({words}); COMP_CWORD=$(( ${{#COMP_WORDS[@]}} - 1 ))\n\
             f=$(complete -p checkpoint-inspect | grep -o -- '-F [^ ]*' | cut -c4-)\n\
             \"$f\" checkpoint-inspect \"${{COMP_WORDS[COMP_CWORD]}}\" \"${{COMP_WORDS[COMP_CWORD-1]}}\"\n\
             echo \"${{COMPREPLY[*]}}\"",
            words = words.join(" ")
        );
        let out = std::process::Command::new("bash").arg("-c").arg(program).output().ok()?;
        Some(String::from_utf8_lossy(&out.stdout).trim().to_owned())
    }

    #[test]
    fn bash_completes_commands_after_the_url_and_their_options() {
        let bash = script(Shell::Bash);
        let Some(commands) = complete_in_bash(&bash, &["checkpoint-inspect", "mysql://h/db", "hi"]) else {
            println!("SKIPPED: no bash to run the completion script");
            return;
        };
        assert_eq!(commands, "history");
        let options = complete_in_bash(&bash, &["checkpoint-inspect", "mysql://h/db", "history", "t", "--"]);
        assert_eq!(options.as_deref(), Some("--ns --limit --graph --json --help"));
        let shells = complete_in_bash(&bash, &["checkpoint-inspect", "completions", "p"]);
        assert_eq!(shells.as_deref(), Some("powershell"));
    }

    #[test]
    fn every_shell_gets_a_script() {
        for shell in [Shell::Bash, Shell::Zsh, Shell::Fish, Shell::PowerShell, Shell::Elvish] {
            let text = script(shell);
            assert!(text.contains("checkpoint-inspect") && text.contains("history"), "{shell}: {text}");
            assert!(text.contains("ns") && text.contains("powershell"), "{shell}: {text}");
        }
    }
}
