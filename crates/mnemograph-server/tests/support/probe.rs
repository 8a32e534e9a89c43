//! The SDK probes (`tests/python/probe.py`, `tests/js/probe.mjs`): each calls every method of its
//! client once and reports the shape of each answer. Here the reports of two servers are
//! compared, and their differences checked against the reviewed list kept next to the probe.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One place where two servers answer a method with a different shape: at `path` (jq-style, `.`
/// is the whole answer, `[]` an array's first element) the answer is of one kind here and of
/// another on `langgraph dev`. Kinds are JSON types, `absent`, `empty array`, or how the
/// call failed.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub(crate) struct Difference {
    /// The client method, `sub_client.method`.
    pub(crate) method: String,
    /// Where in the answer.
    pub(crate) path: String,
    /// The kind of value this server answers there.
    pub(crate) ours: String,
    /// The kind of value `langgraph dev` answers there.
    pub(crate) langgraph: String,
}

impl fmt::Display for Difference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}: ours {}, langgraph {}", self.method, self.path, self.ours, self.langgraph)
    }
}

/// A difference of a reviewed list, and why it is accepted.
#[derive(Debug, Deserialize, Serialize)]
struct Listed {
    #[serde(flatten)]
    difference: Difference,
    reason: String,
}

/// A method of a reviewed list that neither server serves, and why.
#[derive(Debug, Deserialize)]
struct Unserved {
    method: String,
    reason: String,
}

/// A reviewed list, `probe_differences.json`.
#[derive(Debug, Deserialize)]
struct Reviewed {
    /// Methods that fail on both servers, the same way.
    unserved: Vec<Unserved>,
    /// Every other difference.
    differences: Vec<Listed>,
}

/// A probe's report: per method, `ok` and the answer's shape, or `ok: false` and the error.
pub(crate) struct Report {
    methods: BTreeMap<String, Value>,
    /// Where the report was read from, for messages.
    origin: String,
}

impl Report {
    /// Reads the report a probe wrote to `path`.
    pub(crate) fn read(path: &Path) -> Self {
        let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let json: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let methods = json["methods"].as_object().expect("a report lists its methods");
        Self {
            methods: methods.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
            origin: path.display().to_string(),
        }
    }

    /// The methods the probe called.
    pub(crate) fn methods(&self) -> usize {
        self.methods.len()
    }

    /// The methods that failed, each with its error.
    fn failures(&self) -> BTreeMap<&str, String> {
        self.methods
            .iter()
            .filter(|(_, outcome)| outcome["ok"] != Value::Bool(true))
            .map(|(name, outcome)| (name.as_str(), outcome["error"].to_string()))
            .collect()
    }

    /// The shape a method answered, or the kind of its failure (`fails with HTTP 405`).
    fn outcome(&self, method: &str) -> Option<Value> {
        let outcome = self.methods.get(method)?;
        if outcome["ok"] == Value::Bool(true) {
            return Some(outcome["shape"].clone());
        }
        Some(Value::String(match outcome["status"].as_u64() {
            Some(status) => format!("fails with HTTP {status}"),
            None => "fails".to_owned(),
        }))
    }

    /// Where this report's shapes differ from `langgraph`'s.
    fn differences(&self, langgraph: &Report) -> BTreeSet<Difference> {
        let names: BTreeSet<&String> = self.methods.keys().chain(langgraph.methods.keys()).collect();
        let mut found = BTreeSet::new();
        for method in names {
            let (ours, theirs) = (self.outcome(method), langgraph.outcome(method));
            compare(method, ".", ours.as_ref(), theirs.as_ref(), &mut found);
        }
        found
    }
}

/// The kind of a shape: a scalar's JSON type, or what holds the rest.
fn kind(shape: Option<&Value>) -> String {
    match shape {
        None => "absent".to_owned(),
        Some(Value::String(scalar)) => scalar.clone(),
        Some(Value::Array(a)) if a.is_empty() => "empty array".to_owned(),
        Some(Value::Array(_)) => "array".to_owned(),
        Some(Value::Object(_)) => "object".to_owned(),
        Some(other) => panic!("not a shape: {other}"),
    }
}

/// Records where `ours` and `theirs` differ under `path`; below a difference nothing more is
/// recorded, so a key one side lacks is one difference, not one per key inside it.
fn compare(
    method: &str,
    path: &str,
    ours: Option<&Value>,
    theirs: Option<&Value>,
    found: &mut BTreeSet<Difference>,
) {
    let (k_ours, k_theirs) = (kind(ours), kind(theirs));
    if k_ours != k_theirs {
        found.insert(Difference {
            method: method.to_owned(),
            path: path.to_owned(),
            ours: k_ours,
            langgraph: k_theirs,
        });
        return;
    }
    let join = |key: &str| if path == "." { format!(".{key}") } else { format!("{path}.{key}") };
    match (ours, theirs) {
        (Some(Value::Object(a)), Some(Value::Object(b))) => {
            let keys: BTreeSet<&String> = a.keys().chain(b.keys()).collect();
            for key in keys {
                compare(method, &join(key), a.get(key), b.get(key), found);
            }
        }
        (Some(Value::Array(a)), Some(Value::Array(b))) => {
            let element = if path == "." { ".[]".to_owned() } else { format!("{path}[]") };
            compare(method, &element, a.first(), b.first(), found);
        }
        _ => {}
    }
}

/// Checks `ours` against `langgraph` and the reviewed list in `list`: every method succeeds on
/// ours but those the list says neither server serves (which must fail on both, the same way) or
/// whose failure here is a listed difference; and every difference is listed and every listed one
/// found, so the list stays true. Returns what is wrong, with the differences the list lacks ready
/// to paste (with a reason to write).
pub(crate) fn check(list: &Path, server: &str, ours: &Report, langgraph: &Report) -> Result<(), String> {
    let text = std::fs::read_to_string(list).unwrap_or_else(|e| panic!("{}: {e}", list.display()));
    let reviewed: Reviewed =
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", list.display()));
    let mut problems = String::new();
    let reasons = reviewed.unserved.iter().map(|u| (&u.method, &u.reason));
    for (what, reason) in
        reasons.chain(reviewed.differences.iter().map(|l| (&l.difference.method, &l.reason)))
    {
        if reason.trim().is_empty() {
            problems += &format!("{}: an entry for {what} gives no reason\n", list.display());
        }
    }
    let found = ours.differences(langgraph);
    let listed: BTreeSet<Difference> = reviewed.differences.into_iter().map(|l| l.difference).collect();
    let unserved: BTreeSet<&str> = reviewed.unserved.iter().map(|u| u.method.as_str()).collect();
    let (failed, failed_there) = (ours.failures(), langgraph.failures());
    for (method, error) in &failed {
        let listed_failure =
            listed.iter().any(|d| d.method == *method && d.path == "." && d.ours.starts_with("fails"));
        if !unserved.contains(method) && !listed_failure {
            problems += &format!("{method} failed on {server} ({}): {error}\n", ours.origin);
        }
    }
    for method in &unserved {
        let same = failed.contains_key(method)
            && failed_there.contains_key(method)
            && !found.iter().any(|d| d.method == *method && d.path == ".");
        if !same {
            problems += &format!("{method} is listed as served by neither server, but not so on {server}\n");
        }
    }
    let new: Vec<Listed> = found
        .difference(&listed)
        .map(|d| Listed { difference: d.clone(), reason: "TODO: why".to_owned() })
        .collect();
    if !new.is_empty() {
        let lines: Vec<String> = new.iter().map(|l| serde_json::to_string(l).expect("JSON")).collect();
        problems += &format!(
            "differences on {server} not in {}: fix them or list them\n{}\n",
            list.display(),
            lines.join(",\n")
        );
    }
    let gone: Vec<String> = listed.difference(&found).map(ToString::to_string).collect();
    if !gone.is_empty() {
        problems += &format!(
            "listed in {} but not found on {server}: remove them\n{}\n",
            list.display(),
            gone.join("\n")
        );
    }
    if problems.is_empty() {
        return Ok(());
    }
    Err(problems)
}

/// One probe: the program that runs it, its script, and the reviewed list of its differences.
pub(crate) struct Probe {
    sdk: &'static str,
    program: String,
    script: PathBuf,
    differences: PathBuf,
}

impl Probe {
    /// Runs the probe against `url`, writing its report under `reports`, and reads the report;
    /// panics with what the probe printed when it wrote none (a method without a recipe).
    fn run(&self, url: &str, server: &str, reports: &Path) -> Report {
        let path = reports.join(format!("{}-{}.json", self.sdk, server.replace(' ', "-")));
        let dir = self.script.parent().expect("the probe's folder");
        let out = Command::new(&self.program).arg(&self.script).arg(url).arg(&path).current_dir(dir).output();
        let out = out.expect("the probe starts");
        let printed =
            format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        println!("== {} probe on {server}\n{printed}", self.sdk);
        assert!(path.exists(), "the {} probe wrote no report on {server} ({url}):\n{printed}", self.sdk);
        Report::read(&path)
    }
}

/// Runs every probe against every server at once, then checks each of our servers' reports.
pub(crate) async fn probe_all(probes: Vec<Probe>, ours: Vec<(&'static str, String)>, langgraph: String) {
    let reports = std::env::temp_dir().join(format!("mnemograph-probe-{}", std::process::id()));
    std::fs::create_dir_all(&reports).expect("a folder for the reports");
    let probes: Vec<std::sync::Arc<Probe>> = probes.into_iter().map(std::sync::Arc::new).collect();
    let targets: Vec<(&'static str, String)> =
        ours.iter().cloned().chain([("langgraph dev", langgraph)]).collect();
    let mut runs = Vec::new();
    for probe in &probes {
        for (server, url) in &targets {
            let (probe, server, url, reports) = (probe.clone(), *server, url.clone(), reports.clone());
            runs.push(tokio::task::spawn_blocking(move || probe.run(&url, server, &reports)));
        }
    }
    let mut results = Vec::new();
    for run in runs {
        results.push(run.await.unwrap_or_else(|e| std::panic::resume_unwind(e.into_panic())));
    }
    let mut results = results.into_iter();
    let mut problems = String::new();
    for probe in &probes {
        let mine: Vec<Report> = ours.iter().map(|_| results.next().expect("a report per server")).collect();
        let langgraph = results.next().expect("langgraph dev's report");
        for ((server, _), report) in ours.iter().zip(&mine) {
            let name = format!("{server} ({} probe)", probe.sdk);
            assert_eq!(report.methods(), langgraph.methods(), "both servers were called the same methods");
            println!("{} probe: {} methods called on {server}", probe.sdk, report.methods());
            let checked = check(&probe.differences, &name, report, &langgraph);
            problems += &checked.err().unwrap_or_default();
        }
    }
    // Kept when the test fails, for a look at what each server answered.
    assert!(problems.is_empty(), "{problems}\nthe reports are in {}", reports.display());
    let _ = std::fs::remove_dir_all(&reports);
}

/// The Python probe run by `python`, and the JavaScript one when Node.js and its packages are
/// there.
pub(crate) fn probes(python: &str) -> Vec<Probe> {
    let mut probes = vec![Probe {
        sdk: "python",
        program: python.to_owned(),
        script: super::python::dir().join("probe.py"),
        differences: super::python::dir().join("probe_differences.json"),
    }];
    if super::node::ready() {
        probes.push(Probe {
            sdk: "js",
            program: "node".to_owned(),
            script: super::node::dir().join("probe.mjs"),
            differences: super::node::dir().join("probe_differences.json"),
        });
    }
    probes
}
