//! The official JavaScript client (`@langchain/langgraph-sdk`, pinned in `tests/js/package.json`
//! and its lockfile), installed into `tests/js/node_modules` for the scripts there.
//!
//! Needs Node.js 20 or newer and npm. [`ready`] installs the pinned packages with `npm ci` when
//! they are missing or another version, and reuses them afterwards without the network.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The package the scripts import; its installed version must be the one `package.json` pins.
const SDK: &str = "@langchain/langgraph-sdk";

/// The server's `tests/js`, where the scripts and their packages are; named from the crate's
/// folder so that the cluster crate's tests, which include this file, run the same scripts.
pub(crate) fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../mnemograph-server/tests/js")
}

fn ci() -> bool {
    std::env::var_os("CI").is_some_and(|v| !v.is_empty())
}

/// Says why the JavaScript SDK is unavailable, or fails when `CI` is set.
fn skip(why: &str) {
    assert!(!ci(), "the JavaScript SDK is required when CI is set: {why}");
    eprintln!("SKIPPED: @langchain/langgraph-sdk unavailable ({why})");
}

/// What a command printed, stdout then stderr.
pub(crate) fn report(out: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))
}

/// The major version of `node` on `PATH`, or why there is none.
fn node_major() -> Result<u32, String> {
    let out = Command::new("node").arg("--version").output().map_err(|e| format!("node: {e}"))?;
    let version = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    version
        .strip_prefix('v')
        .and_then(|v| v.split('.').next())
        .and_then(|major| major.parse().ok())
        .ok_or_else(|| format!("`node --version` printed {version:?}"))
}

/// The `version` field of the JSON file at `path`, or the version `package.json` pins for `SDK`.
fn version_in(path: &Path, pinned: bool) -> Option<String> {
    let json: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(path).ok()?).ok()?;
    let version = if pinned { &json["dependencies"][SDK] } else { &json["version"] };
    version.as_str().map(str::to_owned)
}

/// Installs the locked packages unless the pinned SDK is already there; returns why it could not.
fn install() -> Result<(), String> {
    let dir = dir();
    let pinned = version_in(&dir.join("package.json"), true).expect("package.json pins the SDK");
    let installed = dir.join("node_modules").join(SDK).join("package.json");
    if version_in(&installed, false).as_deref() == Some(pinned.as_str()) {
        return Ok(());
    }
    // `ci` installs exactly the lockfile and fails rather than change it.
    let out = Command::new("npm")
        .args(["ci", "--no-audit", "--no-fund"])
        .current_dir(&dir)
        .output()
        .map_err(|e| format!("npm: {e}"))?;
    if !out.status.success() {
        return Err(format!("`npm ci` in {} failed:\n{}", dir.display(), report(&out)));
    }
    match version_in(&installed, false) {
        Some(v) if v == pinned => Ok(()),
        other => Err(format!("`npm ci` installed {SDK} {other:?}, not the pinned {pinned}")),
    }
}

/// Whether node runs the pinned SDK, installing it when needed; `false` (after saying why) when
/// it cannot and `CI` is not set.
pub(crate) fn ready() -> bool {
    match node_major() {
        // The pinned SDK's dependencies need Node.js 20.
        Ok(major) if major >= 20 => {}
        Ok(major) => {
            skip(&format!("node {major} is older than 20"));
            return false;
        }
        Err(why) => {
            skip(&why);
            return false;
        }
    }
    match install() {
        Ok(()) => true,
        Err(why) => {
            skip(&why);
            false
        }
    }
}
