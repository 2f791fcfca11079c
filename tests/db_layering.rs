//! Storage stays below the use cases: nothing under `src/db/` may reach the services, the HTTP
//! layer, its errors or the web framework. The services call `db`, never the other way round.

use std::path::Path;

const FORBIDDEN: &[&str] = &[
    "crate::service",
    "crate::api",
    "crate::error",
    "crate::startup",
    "crate::auth",
    "actix",
];

#[test]
fn storage_knows_nothing_of_the_layers_above_it() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/db");
    let mut pending = vec![dir];
    let mut offences = Vec::new();
    let mut read = 0;
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                pending.push(path);
                continue;
            }
            if path.extension().is_none_or(|e| e != "rs") {
                continue;
            }
            read += 1;
            let text = std::fs::read_to_string(&path).unwrap();
            // Comments may name the services a query serves; only code counts.
            let code_lines = text
                .lines()
                .enumerate()
                .map(|(n, line)| (n + 1, line.split("//").next().unwrap_or("")));
            for (number, code) in code_lines {
                if let Some(word) = FORBIDDEN.iter().find(|word| code.contains(*word)) {
                    offences.push(format!("{}:{number}: `{word}`", path.display()));
                }
            }
        }
    }
    assert!(read > 0, "no sources under src/db");
    assert!(
        offences.is_empty(),
        "storage reaches above itself:\n{}",
        offences.join("\n")
    );
}
