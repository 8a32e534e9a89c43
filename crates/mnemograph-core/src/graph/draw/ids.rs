//! Mermaid node ids.
//!
//! A Mermaid id is a bare word, so a node name that is a safe word is its own id (as in
//! LangGraph's drawings) and any other name gets a sanitized id, made unique against every other
//! id of the drawing. The name itself stays readable in the node's label.

use std::collections::{HashMap, HashSet};

/// Words Mermaid's flowchart lexer reads as keywords where an id may stand, alone or before a `-`
/// (its rules end them with `\b` or whitespace).
const KEYWORDS: &[&str] = &[
    "end",
    "style",
    "class",
    "classDef",
    "linkStyle",
    "interpolate",
    "graph",
    "flowchart",
    "subgraph",
    "click",
    "call",
    "href",
    "swimlane",
    "_self",
    "_blank",
    "_parent",
    "_top",
];

/// Whether `name` can be written as a Mermaid id as it is: ASCII letters, digits, `_`, and `-`
/// never doubled (`--` starts an edge), not led by a keyword.
fn is_plain(name: &str) -> bool {
    !name.is_empty()
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
        && !name.contains("--")
        && !name.split('-').next().is_some_and(|word| KEYWORDS.contains(&word))
}

/// The ids of one drawing, by name.
#[derive(Debug, Default)]
pub(super) struct MermaidIds {
    ids: HashMap<String, String>,
}

impl MermaidIds {
    /// Ids for `names`: plain names keep theirs, the others get their name with every unsafe
    /// character as `_`, suffixed with `_<n>` when that is taken or still not plain.
    pub(super) fn new<'a>(names: impl IntoIterator<Item = &'a str> + Clone) -> Self {
        let mut taken: HashSet<String> =
            names.clone().into_iter().filter(|n| is_plain(n)).map(str::to_owned).collect();
        let mut ids = HashMap::new();
        for name in names {
            if ids.contains_key(name) {
                continue;
            }
            let id = if is_plain(name) {
                name.to_owned()
            } else {
                let base: String = name
                    .chars()
                    .map(|c| if c.is_ascii_alphanumeric() || c == '_' { c } else { '_' })
                    .collect();
                let base = if base.is_empty() { "node".to_owned() } else { base };
                let mut id = base.clone();
                let mut n = 1;
                while !is_plain(&id) || taken.contains(&id) {
                    id = format!("{base}_{n}");
                    n += 1;
                }
                taken.insert(id.clone());
                id
            };
            ids.insert(name.to_owned(), id);
        }
        Self { ids }
    }

    /// The id of `name`, one of the names the ids were made for.
    pub(super) fn get<'a>(&'a self, name: &'a str) -> &'a str {
        self.ids.get(name).map_or(name, String::as_str)
    }
}
