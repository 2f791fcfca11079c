//! Reading the crate's own sources as text, for the tests that keep its layers apart
//! (`rules_purity.rs`, `layering.rs`). Comments are left out; a word counts only as a whole word.

use std::path::{Path, PathBuf};

/// The file or folder at `relative` (from the crate's root), as the `.rs` files in it.
pub fn sources(relative: &str) -> Vec<PathBuf> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(relative);
    let mut out = Vec::new();
    collect(&path, &mut out);
    assert!(!out.is_empty(), "no Rust sources at {}", path.display());
    out.sort();
    out
}

fn collect(path: &Path, out: &mut Vec<PathBuf>) {
    if path.is_dir() {
        for entry in std::fs::read_dir(path).unwrap() {
            collect(&entry.unwrap().path(), out);
        }
    } else if path.extension().is_some_and(|e| e == "rs") {
        out.push(path.to_owned());
    }
}

/// The line without its comment.
pub fn code(line: &str) -> &str {
    line.split("//").next().unwrap_or("")
}

/// Whether `code` holds `word` on its own: not inside a longer name (a word ending in `!` or `:`
/// may be followed by anything).
pub fn mentions(code: &str, word: &str) -> bool {
    let boundary = |c: Option<char>| c.is_none_or(|c| !(c.is_alphanumeric() || c == '_'));
    code.match_indices(word).any(|(at, _)| {
        let before = code[..at].chars().next_back();
        let after = code[at + word.len()..].chars().next();
        boundary(before) && (boundary(after) || word.ends_with(['!', ':']))
    })
}

/// The lines of `text` without their comments, each followed by the full paths of the names it
/// lists in a `crate::{…}` group (so that `use crate::{api, db};` mentions `crate::api`).
pub fn expanded_lines(text: &str) -> Vec<String> {
    // Inside a `crate::{…}` group: how deep in braces, and whether the next name starts an item.
    let mut depth = 0usize;
    let mut item_start = false;
    text.lines()
        .map(|line| {
            let code = code(line);
            let mut expanded = code.to_owned();
            let mut rest = code;
            while !rest.is_empty() {
                if depth == 0 {
                    match rest.find("crate::{") {
                        Some(at) => {
                            rest = &rest[at + "crate::{".len()..];
                            depth = 1;
                            item_start = true;
                        }
                        None => break,
                    }
                    continue;
                }
                let c = rest.chars().next().unwrap();
                let name_len = rest
                    .find(|c: char| !(c.is_alphanumeric() || c == '_'))
                    .unwrap_or(rest.len());
                if name_len > 0 {
                    if depth == 1 && item_start {
                        expanded.push_str(&format!(" crate::{}", &rest[..name_len]));
                    }
                    item_start = false;
                    rest = &rest[name_len..];
                    continue;
                }
                match c {
                    '{' => depth += 1,
                    '}' => depth -= 1,
                    ',' => item_start = depth == 1,
                    _ => {}
                }
                rest = &rest[c.len_utf8()..];
            }
            expanded
        })
        .collect()
}

/// Every mention of a `forbidden` word in `files`, as `file:line: `word` in <the line>`.
pub fn offences(files: &[PathBuf], forbidden: &[&str]) -> Vec<String> {
    let mut found = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(file).unwrap();
        for (number, (line, code)) in text.lines().zip(expanded_lines(&text)).enumerate() {
            for word in forbidden {
                if mentions(&code, word) {
                    let relative = file
                        .strip_prefix(env!("CARGO_MANIFEST_DIR"))
                        .unwrap_or(file);
                    found.push(format!(
                        "{}:{}: `{word}` in {}",
                        relative.display(),
                        number + 1,
                        line.trim()
                    ));
                }
            }
        }
    }
    found
}
