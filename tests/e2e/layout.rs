//! The shape of the source tree: no import cycle between the top-level modules of any crate
//! (the engine's and the runner's), so that each layer can be read, tested and changed with
//! only the layers below it in mind; no source file past 800 lines and no function past 100
//! outside tests.
//!
//! A module refers to another by `crate::other` or by enough `super::` to reach the crate root;
//! test code (`tests.rs` files and `#[cfg(test)] mod tests` blocks) may reach anywhere.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The crates' source roots, relative to the workspace root.
const CRATES: &[&str] = &["src", "crates/engine/src"];

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// A file's module path below the crate root (`a/b.rs` and `a/b/mod.rs` are `[a, b]`).
fn module_path(root: &Path, file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(root).unwrap().with_extension("");
    let mut parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if parts.last().is_some_and(|p| p == "mod") {
        parts.pop();
    }
    if parts.len() == 1 && (parts[0] == "lib" || parts[0] == "main") {
        parts.clear();
    }
    parts
}

/// The code of a file without its test module.
fn non_test_code(text: &str) -> &str {
    match text.find("#[cfg(test)]\nmod tests {") {
        Some(i) => &text[..i],
        None => text,
    }
}

fn ident_at(text: &str, from: usize) -> &str {
    let rest = &text[from..];
    let end = rest
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(rest.len());
    &rest[..end]
}

/// The top-level modules the code of the module at `path` names.
fn references(code: &str, path: &[String], tops: &BTreeSet<String>) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let bytes = code.as_bytes();
    let starts_path = |i: usize| {
        i == 0
            || !(bytes[i - 1].is_ascii_alphanumeric()
                || bytes[i - 1] == b'_'
                || bytes[i - 1] == b':')
    };
    for (i, _) in code.match_indices("crate::") {
        if starts_path(i) {
            out.insert(ident_at(code, i + "crate::".len()).to_string());
        }
    }
    let mut i = 0;
    while let Some(at) = code[i..].find("super::") {
        let start = i + at;
        let mut end = start;
        let mut ups = 0;
        while code[end..].starts_with("super::") {
            ups += 1;
            end += "super::".len();
        }
        if starts_path(start) && ups == path.len() {
            out.insert(ident_at(code, end).to_string());
        }
        i = end;
    }
    out.retain(|m| tops.contains(m) && Some(m) != path.first());
    out
}

/// The strongly connected components of more than one module (each is a cycle).
fn cycles(edges: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    // Two modules are in one cycle when each reaches the other.
    let reach = |from: &String| {
        let mut seen = BTreeSet::new();
        let mut todo = vec![from.clone()];
        while let Some(m) = todo.pop() {
            for n in edges.get(&m).into_iter().flatten() {
                if seen.insert(n.clone()) {
                    todo.push(n.clone());
                }
            }
        }
        seen
    };
    let reached: BTreeMap<&String, BTreeSet<String>> =
        edges.keys().map(|m| (m, reach(m))).collect();
    let mut out: Vec<Vec<String>> = Vec::new();
    for (m, r) in &reached {
        if !r.contains(*m) || out.iter().any(|c| c.contains(m)) {
            continue;
        }
        let cycle: Vec<String> = reached
            .iter()
            .filter(|(n, nr)| r.contains(**n) && nr.contains(*m))
            .map(|(n, _)| (*n).clone())
            .collect();
        out.push(cycle);
    }
    out
}

fn module_graph(root: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let mut files = Vec::new();
    rust_files(root, &mut files);
    let tops: BTreeSet<String> = files
        .iter()
        .filter_map(|f| module_path(root, f).first().cloned())
        .collect();
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for file in &files {
        let path = module_path(root, file);
        if path.is_empty() || path.last().is_some_and(|p| p == "tests") {
            continue;
        }
        let text = std::fs::read_to_string(file).unwrap();
        edges.entry(path[0].clone()).or_default().extend(references(
            non_test_code(&text),
            &path,
            &tops,
        ));
    }
    edges
}

#[test]
fn no_crate_has_an_import_cycle_between_its_top_level_modules() {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR"));
    for krate in CRATES {
        let graph = module_graph(&workspace.join(krate));
        assert!(graph.len() > 5, "{krate}: too few modules read: {graph:?}");
        let found = cycles(&graph);
        assert!(
            found.is_empty(),
            "{krate}: modules that import each other: {found:?}\nthe graph: {graph:#?}"
        );
    }
}

/// Most lines a source file may have.
const MAX_FILE_LINES: usize = 800;
/// Most lines a function may have, its signature and closing brace included.
const MAX_FUNCTION_LINES: usize = 100;

/// The functions of a file's code longer than `MAX_FUNCTION_LINES`: (name, first line, lines).
/// A function ends at the first line holding only a closing brace at its own indentation.
fn long_functions(code: &str) -> Vec<(String, usize, usize)> {
    let lines: Vec<&str> = code.lines().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        let indent = line.len() - line.trim_start().len();
        let rest = line.trim_start();
        let rest = rest
            .strip_prefix("pub(crate) ")
            .or_else(|| rest.strip_prefix("pub(super) "))
            .or_else(|| rest.strip_prefix("pub "))
            .unwrap_or(rest);
        let rest = rest.strip_prefix("async ").unwrap_or(rest);
        let rest = rest.strip_prefix("const ").unwrap_or(rest);
        let Some(name) = rest.strip_prefix("fn ") else {
            i += 1;
            continue;
        };
        let name: String = name
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        let close = format!("{}}}", " ".repeat(indent));
        let end = (i + 1..lines.len())
            .find(|&j| lines[j].trim_end() == close)
            .unwrap_or(i);
        if end + 1 - i > MAX_FUNCTION_LINES {
            out.push((name, i + 1, end + 1 - i));
        }
        i += 1;
    }
    out
}

#[test]
fn no_file_or_function_is_past_its_size() {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut found = Vec::new();
    for krate in CRATES {
        let mut files = Vec::new();
        rust_files(&workspace.join(krate), &mut files);
        for file in files {
            let text = std::fs::read_to_string(&file).unwrap();
            let shown = file.strip_prefix(workspace).unwrap().display().to_string();
            let lines = text.lines().count();
            if lines > MAX_FILE_LINES {
                found.push(format!("{shown}: {lines} lines"));
            }
            if file.file_name().is_some_and(|n| n == "tests.rs") {
                continue;
            }
            for (name, at, n) in long_functions(non_test_code(&text)) {
                found.push(format!("{shown}:{at}: fn {name} has {n} lines"));
            }
        }
    }
    assert!(
        found.is_empty(),
        "past {MAX_FILE_LINES} lines a file, or {MAX_FUNCTION_LINES} a function: split them\n{}",
        found.join("\n")
    );
}

#[test]
fn the_size_check_measures_functions() {
    let body = "    let x = 1;\n".repeat(MAX_FUNCTION_LINES);
    let code = format!("fn short() {{\n}}\n\npub(crate) fn long() {{\n{body}}}\n");
    assert_eq!(
        long_functions(&code),
        vec![("long".to_string(), 4, MAX_FUNCTION_LINES + 2)]
    );
}

#[test]
fn the_cycle_check_finds_cycles() {
    let edges: BTreeMap<String, BTreeSet<String>> = [
        ("a", vec!["b"]),
        ("b", vec!["c"]),
        ("c", vec!["a"]),
        ("d", vec!["a"]),
    ]
    .into_iter()
    .map(|(m, to)| (m.to_string(), to.into_iter().map(String::from).collect()))
    .collect();
    assert_eq!(cycles(&edges), vec![vec!["a", "b", "c"]]);
    let tops: BTreeSet<String> = ["track", "rally", "ops"].map(String::from).into();
    let code = "use crate::rally::Front;\nfn f() { super::super::ops::x(); my_crate::track::y(); }";
    let path = ["track".to_string(), "load".to_string()];
    assert_eq!(
        references(code, &path, &tops),
        ["ops", "rally"].map(String::from).into()
    );
}
