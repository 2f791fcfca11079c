//! The game engines stay pure: nothing under `src/rules/` may reach the web framework, the
//! database, the clock, randomness or any I/O. (Our single-crate stand-in for a dependency gate.)

use std::path::Path;

const FORBIDDEN: &[&str] = &[
    "actix",
    "diesel",
    "crate::db",
    "crate::api",
    "crate::service",
    "crate::auth",
    "crate::startup",
    "tokio",
    "rand",
    "chrono",
    "std::fs",
    "std::net",
    "std::io",
    "std::process",
    "std::env",
    "std::time",
    "std::thread",
    "SystemTime",
    "Instant",
    "tracing",
    "println!",
    "eprintln!",
];

fn sources(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn rules_use_nothing_but_std_serde_and_themselves() {
    let mut files = Vec::new();
    sources(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("src/rules"),
        &mut files,
    );
    assert!(!files.is_empty());
    let mut offences = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        for (number, line) in text.lines().enumerate() {
            let code = line.split("//").next().unwrap_or("");
            for word in FORBIDDEN {
                let hit = code.match_indices(word).any(|(at, _)| {
                    let before = code[..at].chars().next_back();
                    let after = code[at + word.len()..].chars().next();
                    let boundary =
                        |c: Option<char>| c.is_none_or(|c| !(c.is_alphanumeric() || c == '_'));
                    boundary(before) && (boundary(after) || word.ends_with(['!', ':']))
                });
                if hit {
                    offences.push(format!(
                        "{}:{}: `{word}` in {}",
                        file.display(),
                        number + 1,
                        line.trim()
                    ));
                }
            }
        }
        for line in text.lines().filter(|l| l.trim_start().starts_with("use ")) {
            let path = line.trim_start().trim_start_matches("use ").trim();
            let allowed = [
                "std::",
                "core::",
                "serde",
                "serde_json",
                "super::",
                "crate::rules",
                "self::",
                "proptest",
            ];
            assert!(
                allowed.iter().any(|prefix| path.starts_with(prefix)),
                "{}: `{}` reaches outside the rules",
                file.display(),
                line.trim()
            );
        }
    }
    assert!(
        offences.is_empty(),
        "impure rules code:\n{}",
        offences.join("\n")
    );
}
