//! The game engines stay pure: nothing under `src/rules/` may reach the web framework, the
//! database, the clock, randomness or any I/O. (Our single-crate stand-in for a dependency gate.)

mod scan;

const FORBIDDEN: &[&str] = &[
    "actix",
    "diesel",
    "crate::db",
    "crate::api",
    "crate::service",
    "crate::auth",
    "crate::app::startup",
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

#[test]
fn rules_use_nothing_but_std_serde_and_themselves() {
    let files = scan::sources("src/rules");
    let offences = scan::offences(&files, FORBIDDEN);
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        for line in text.lines().filter(|l| l.trim_start().starts_with("use ")) {
            let path = line.trim_start().trim_start_matches("use ").trim();
            let allowed = [
                "std::",
                "core::",
                "serde",
                "serde_json",
                "super::",
                "crate::rules",
                // A macro's own path to the rules, wherever it is expanded.
                "$crate::rules",
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

/// The tournament arithmetic (standings, Swiss pairings, leagues) is as pure as the rules: the
/// events' use cases hand it their games and store what it answers. Beside std it uses
/// petgraph's matching, itself pure.
#[test]
fn tournament_arithmetic_uses_nothing_but_std_petgraph_and_itself() {
    let files = scan::sources("src/tournament");
    assert!(!files.is_empty(), "src/tournament has sources");
    let mut offences = scan::offences(&files, FORBIDDEN);
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        for line in text.lines().filter(|l| l.trim_start().starts_with("use ")) {
            let path = line.trim_start().trim_start_matches("use ").trim();
            let allowed = [
                "std::",
                "core::",
                "super::",
                "self::",
                "petgraph::",
                "proptest",
            ];
            if !allowed.iter().any(|prefix| path.starts_with(prefix)) {
                offences.push(format!("{}: `{}`", file.display(), line.trim()));
            }
        }
    }
    assert!(
        offences.is_empty(),
        "impure tournament code:\n{}",
        offences.join("\n")
    );
}
