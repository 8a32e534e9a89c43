//! Drawings of graphs whose node names and path-map keys are hostile to the formats.

use mnemograph_core::prelude::*;

use crate::support::*;

/// Node names that break a format written without escaping: quotes, brackets, markup, entities,
/// line breaks, keywords, ids that collide once sanitized, a trailing backslash, unicode.
const NAMES: &[&str] = &[
    "he said \"hi\"",
    "a[b](c){d}",
    "<b>bold</b> & <script>alert(1)</script>",
    "line\nbreak\r\ttab",
    "#35; not an entity",
    "semi;colon",
    "日本語 ✓",
    "end",
    "style-x",
    "a b",
    "a_b",
    "a--b",
    "`**md**`",
    "back\\slash\\",
    "&amp;",
    "\\N",
];

/// Path-map keys that break a format written without escaping.
const KEYS: &[&str] = &["x|y", "k: v", "\"quoted\"", ".->", "end", "go left", "x\ny"];

/// Every hostile name chained from START to END, and a conditional edge from the first one with
/// every hostile key.
fn hostile() -> CompiledGraph<S> {
    let mut g = StateGraph::<S>::new();
    for name in NAMES {
        g = g.add_node(*name, update);
    }
    g = g.add_edge(START, NAMES[0]).add_edge(NAMES[NAMES.len() - 1], END);
    for pair in NAMES.windows(2) {
        g = g.add_edge(pair[0], pair[1]);
    }
    let map: Vec<(String, String)> =
        KEYS.iter().zip(NAMES.iter().skip(1)).map(|(k, n)| ((*k).to_owned(), (*n).to_owned())).collect();
    g.add_conditional_edges(NAMES[0], |_s: &S| END, map).compile().unwrap()
}

#[test]
fn mermaid_writes_dotted_middleware_names_unquoted() {
    // Agent middleware nodes are named `<middleware>.<hook>`: LangGraph shows them as they are.
    let g = StateGraph::<S>::new()
        .add_node("trimming.before_model", update)
        .add_edge(START, "trimming.before_model")
        .compile()
        .unwrap();
    let m = g.draw_mermaid();
    assert!(m.contains("\ttrimming_before_model(trimming.before_model)\n"), "{m}");
    assert!(m.contains("\t__start__ --> trimming_before_model;\n"), "{m}");
}

#[test]
fn mermaid_shows_plain_and_conditional_edges() {
    let g = StateGraph::<S>::new()
        .add_node("model", update)
        .add_node("tools", update)
        .add_edge(START, "model")
        .add_conditional_edges("model", |_s: &S| END, [("call", "tools"), ("__end__", END)])
        .add_edge("tools", "model")
        .compile()
        .unwrap();
    let m = g.draw_mermaid();
    assert!(m.contains("\tmodel(model)\n"), "{m}");
    assert!(m.contains("\t__start__ --> model;\n"), "{m}");
    assert!(m.contains("\tmodel -. &nbsp;call&nbsp; .-> tools;\n"), "{m}");
    assert!(m.contains("\tmodel -.-> __end__;\n"), "{m}");
    assert!(m.contains("\ttools --> model;\n"), "{m}");
    assert!(m.contains("\t__end__([<p>__end__</p>]):::last\n"), "{m}");
    let dot = g.draw_dot();
    assert!(dot.contains("  \"model\" -> \"tools\" [style=dashed, label=\"call\"];\n"), "{dot}");
    assert!(dot.contains("  \"model\" [label=\"model\", shape=box];\n"), "{dot}");
}

/// One Mermaid statement, as far as the drawing uses the grammar.
#[derive(Debug, PartialEq)]
enum Statement {
    Node { id: String, label: String },
    Edge { from: String, to: String, label: Option<String> },
    Other,
}

/// Parses a line of `draw_mermaid`'s output, or says why it is not one well-formed statement.
fn statement(line: &str) -> Result<Statement, String> {
    let body = line.strip_prefix('\t').ok_or("no indent")?;
    if body.starts_with("classDef ")
        || ["__start__([<p>__start__</p>]):::first", "__end__([<p>__end__</p>]):::last"].contains(&body)
    {
        return Ok(Statement::Other);
    }
    let (id, rest) = take_id(body)?;
    if let Some(inner) = rest.strip_prefix('(').and_then(|r| r.strip_suffix(')')) {
        let label = match inner.strip_prefix('"').and_then(|r| r.strip_suffix('"')) {
            Some(quoted) => unescape_mermaid(quoted)?,
            // LangGraph's dotted middleware names stay bare when their id is the name with `_`s.
            None if inner == id || (inner.contains('.') && inner.replace('.', "_") == id) => inner.to_owned(),
            None => return Err(format!("unquoted label {inner:?} is not the id")),
        };
        return Ok(Statement::Node { id, label });
    }
    let rest = rest.strip_prefix(' ').ok_or("no space after the source")?;
    let (label, rest) = if let Some(r) = rest.strip_prefix("-. &nbsp;") {
        let (text, r) = r.split_once("&nbsp; .-> ").ok_or("unterminated dotted label")?;
        if !text.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == ' ') {
            return Err(format!("unquoted edge label {text:?}"));
        }
        (Some(text.to_owned()), r)
    } else {
        let r = rest.strip_prefix("-.->").or_else(|| rest.strip_prefix("-->")).ok_or("no arrow")?;
        match r.strip_prefix("|\"") {
            Some(r) => {
                let (quoted, r) = r.split_once("\"| ").ok_or("unterminated edge label")?;
                (Some(unescape_mermaid(quoted)?), r)
            }
            None => (None, r.strip_prefix(' ').ok_or("no space after the arrow")?),
        }
    };
    let (to, rest) = take_id(rest)?;
    if rest != ";" {
        return Err(format!("trailing {rest:?}"));
    }
    Ok(Statement::Edge { from: id, to, label })
}

/// A leading Mermaid id: ASCII letters, digits, `_` and single `-`s, not a keyword.
fn take_id(s: &str) -> Result<(String, &str), String> {
    let end = s.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-')).unwrap_or(s.len());
    let id = &s[..end];
    let keyword = ["end", "style", "class", "graph", "subgraph", "click", "call"]
        .contains(&id.split('-').next().unwrap_or(""));
    if id.is_empty() || id.contains("--") || keyword {
        return Err(format!("bad id {id:?}"));
    }
    Ok((id.to_owned(), &s[end..]))
}

/// Decodes a quoted label, which may hold no quote, markup or line break, only `#<n>;` entities.
fn unescape_mermaid(s: &str) -> Result<String, String> {
    let mut out = String::new();
    let mut rest = s;
    while let Some(i) = rest.find(|c: char| "#\"<>&;\n\r`".contains(c)) {
        out.push_str(&rest[..i]);
        let (code, r) = rest[i..]
            .strip_prefix('#')
            .and_then(|r| r.split_once(';'))
            .ok_or_else(|| format!("raw {:?} in label {s:?}", &rest[i..i + 1]))?;
        let code: u32 = code.parse().map_err(|_| format!("bad entity #{code}; in {s:?}"))?;
        out.push(char::from_u32(code).ok_or("bad code point")?);
        rest = r;
    }
    out.push_str(rest);
    Ok(out)
}

#[test]
fn mermaid_escapes_hostile_labels() {
    let m = hostile().draw_mermaid();
    let body = m.split_once("graph TD;\n").expect("a flowchart").1;
    let mut nodes: Vec<(String, String)> = Vec::new();
    let mut edges: Vec<(String, String, Option<String>)> = Vec::new();
    for line in body.lines() {
        match statement(line).map_err(|e| format!("{e} in line {line:?} of\n{m}")).unwrap() {
            Statement::Node { id, label } => nodes.push((id, label)),
            Statement::Edge { from, to, label } => edges.push((from, to, label)),
            Statement::Other => {}
        }
    }
    // Every name comes back from its label, under an id of its own.
    let labels: Vec<&str> = nodes.iter().map(|(_, l)| l.as_str()).collect();
    assert_eq!(labels, NAMES, "{m}");
    let mut ids: Vec<&str> = nodes.iter().map(|(id, _)| id.as_str()).collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), NAMES.len(), "ids collide:\n{m}");
    let id_of = |name: &str| nodes.iter().find(|(_, l)| l == name).map(|(id, _)| id.clone()).unwrap();
    // The chain of plain edges, and every key on its conditional edge.
    for pair in NAMES.windows(2) {
        assert!(edges.contains(&(id_of(pair[0]), id_of(pair[1]), None)), "{pair:?} missing:\n{m}");
    }
    for (key, to) in KEYS.iter().zip(NAMES.iter().skip(1)) {
        assert!(
            edges.contains(&(id_of(NAMES[0]), id_of(to), Some((*key).to_owned()))),
            "{key:?} missing:\n{m}"
        );
    }
}

/// Decodes a DOT quoted string as Graphviz reads a label: `\"` and `\\`, escString's `\n`, and
/// character entities. Anything else after a backslash, a raw line break or an unescaped quote is
/// an error.
fn unescape_dot(s: &str) -> Result<String, String> {
    let mut out = String::new();
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some('\\') => out.push('\\'),
                Some('"') => out.push('"'),
                Some('n') => out.push('\n'),
                other => return Err(format!("escape \\{other:?} in {s:?}")),
            },
            '"' | '\n' | '\r' => return Err(format!("raw {c:?} in {s:?}")),
            '&' => {
                let rest = chars.as_str();
                let (entity, r) = rest.split_once(';').ok_or_else(|| format!("raw & in {s:?}"))?;
                out.push(match entity {
                    "amp" => '&',
                    _ => entity
                        .strip_prefix('#')
                        .and_then(|n| n.parse().ok())
                        .and_then(char::from_u32)
                        .ok_or_else(|| format!("raw & in {s:?}"))?,
                });
                chars = r.chars();
            }
            c => out.push(c),
        }
    }
    Ok(out)
}

/// Splits a DOT line into its quoted strings (still escaped) and the text between them.
fn quoted_strings(line: &str) -> Result<(Vec<&str>, String), String> {
    let mut strings = Vec::new();
    let mut between = String::new();
    let mut rest = line;
    while let Some(open) = rest.find('"') {
        between.push_str(&rest[..open]);
        let body = &rest[open + 1..];
        let mut end = None;
        let mut escaped = false;
        for (i, c) in body.char_indices() {
            match (escaped, c) {
                (false, '\\') => escaped = true,
                (false, '"') => {
                    end = Some(i);
                    break;
                }
                _ => escaped = false,
            }
        }
        let end = end.ok_or_else(|| format!("unbalanced quotes in {line:?}"))?;
        strings.push(&body[..end]);
        between.push('S');
        rest = &body[end + 1..];
    }
    between.push_str(rest);
    Ok((strings, between))
}

#[test]
fn dot_escapes_hostile_labels() {
    let dot = hostile().draw_dot();
    let lines: Vec<&str> = dot.lines().collect();
    assert_eq!(lines.first(), Some(&"digraph G {"), "{dot}");
    assert_eq!(lines.last(), Some(&"}"), "{dot}");
    let mut labels = Vec::new();
    let mut edges = Vec::new();
    for line in &lines[1..lines.len() - 1] {
        let (strings, shape) = quoted_strings(line).unwrap();
        let decoded: Vec<String> = strings.iter().map(|s| unescape_dot(s).unwrap()).collect();
        match shape.trim() {
            "S [label=S, shape=box];" | "S [label=S, shape=oval];" => {
                assert_eq!(decoded[0], decoded[1], "id and label differ in {line:?}");
                labels.push(decoded[1].clone());
            }
            "S -> S;" => edges.push((decoded[0].clone(), decoded[1].clone(), None)),
            "S -> S [style=dashed, label=S];" => {
                edges.push((decoded[0].clone(), decoded[1].clone(), Some(decoded[2].clone())))
            }
            "S -> S [style=dashed];" => {}
            other => panic!("not one statement: {other:?} from {line:?} in\n{dot}"),
        }
    }
    let expected: Vec<&str> = [START].into_iter().chain(NAMES.iter().copied()).chain([END]).collect();
    assert_eq!(labels, expected, "{dot}");
    for pair in NAMES.windows(2) {
        assert!(edges.contains(&(pair[0].to_owned(), pair[1].to_owned(), None)), "{pair:?} missing:\n{dot}");
    }
    for (key, to) in KEYS.iter().zip(NAMES.iter().skip(1)) {
        let edge = (NAMES[0].to_owned(), (*to).to_owned(), Some((*key).to_owned()));
        assert!(edges.contains(&edge), "{key:?} missing:\n{dot}");
    }
}
