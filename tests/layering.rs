//! The layers stay apart, and no two import each other: HTTP (actix, `crate::api`, the problem
//! documents) and the composition root (`crate::startup`) are reached from nowhere below them,
//! and storage knows nothing of the use cases. (Like `rules_purity.rs`, a single-crate stand-in
//! for a dependency gate.)

mod scan;

/// What only `api/` and `startup.rs` may reach.
const HTTP: &[&str] = &[
    "actix",
    "actix_web",
    "tracing_actix_web",
    "crate::api",
    "crate::startup",
    "HttpResponse",
    "ApiError",
    "ResponseError",
];

/// The parts that know nothing of HTTP or of how the server is put together.
const BELOW_HTTP: &[&str] = &[
    "src/db",
    "src/service",
    "src/mail",
    "src/webhook",
    "src/background.rs",
    "src/auth.rs",
    "src/pat.rs",
    "src/scopes.rs",
];

fn check(roots: &[&str], forbidden: &[&str]) -> Vec<String> {
    let files: Vec<_> = roots.iter().flat_map(|root| scan::sources(root)).collect();
    scan::offences(&files, forbidden)
}

#[test]
fn services_storage_mail_and_background_work_know_nothing_of_http() {
    let offences = check(BELOW_HTTP, HTTP);
    assert!(
        offences.is_empty(),
        "HTTP or the composition root reached from below:\n{}",
        offences.join("\n")
    );
}

#[test]
fn storage_knows_nothing_of_the_use_cases() {
    let offences = check(&["src/db"], &["crate::service", "crate::auth"]);
    assert!(
        offences.is_empty(),
        "storage reaches the services:\n{}",
        offences.join("\n")
    );
}

#[test]
fn the_check_sees_paths_in_groups_and_skips_comments() {
    let lines = scan::expanded_lines(
        "use crate::{\n    api::problem::ApiError,\n    db::{self, api},\n};\n// crate::startup\n",
    );
    let hits = |word: &str| -> Vec<usize> {
        (0..lines.len())
            .filter(|&i| scan::mentions(&lines[i], word))
            .collect()
    };
    assert_eq!(hits("crate::api"), [1]);
    assert_eq!(hits("crate::db"), [2]);
    assert_eq!(hits("ApiError"), [1]);
    assert!(hits("crate::startup").is_empty());
    assert!(scan::mentions(
        "use tracing_actix_web::X;",
        "tracing_actix_web"
    ));
    assert!(!scan::mentions("fn transaction()", "actix"));
}
