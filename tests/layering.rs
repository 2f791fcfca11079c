//! The layers stay apart, and no two modules import each other. Read from the sources (like
//! `rules_purity.rs`, a single-crate stand-in for a dependency gate):
//!
//! * no import circle anywhere: between the folders of `src/`, or among the files of a folder
//!   (a folder's `mod.rs` counts as one of them, so its children never import it);
//! * the use cases stand on floors (`service::model`, then `service::views`, then
//!   `service::effects`), and no use case imports another;
//! * the composition root (`app`) is on top: nothing imports it but `main.rs`, and `http/`, which
//!   both faces stand on, imports neither face;
//! * HTTP stays out of storage, the services, mail, credentials and the background loops, and
//!   storage knows nothing of the use cases.

#[path = "layering/imports.rs"]
mod imports;
mod scan;

use imports::{Graph, Module, show};

/// What only the faces (`api/`, `web/`), `http/` and the composition root may reach.
const HTTP: &[&str] = &[
    "actix",
    "actix_web",
    "tracing_actix_web",
    "crate::api",
    "crate::web",
    "crate::http",
    "crate::app",
    "HttpResponse",
    "ApiError",
    "ResponseError",
];

/// The parts that know nothing of HTTP or of how the server is put together (the face of mail
/// replies among them).
const BELOW_HTTP: &[&str] = &[
    "src/db",
    "src/service",
    "src/mail",
    "src/webhook",
    "src/app/background.rs",
    "src/auth",
    "src/by_mail",
];

/// The floors of `service/`, lowest first; every other module of `service/` is a use case, above
/// all of them.
const SERVICE_FLOORS: [&str; 3] = ["model", "views", "effects"];

fn module(path: &str) -> Module {
    path.split("::").map(str::to_owned).collect()
}

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
fn no_module_reaches_back_to_itself() {
    let graph = Graph::of_crate();
    let mut report = Vec::new();
    for folder in graph.folders() {
        for circle in graph.circles_in(&folder) {
            report.push(format!(
                "in {}: {}",
                show(&folder),
                graph.describe(&folder, &circle)
            ));
        }
    }
    let names: usize = graph.edges.values().map(|to| to.len()).sum();
    println!(
        "{} modules in {} folders, {names} names of one module in another, {} circles",
        graph.edges.len(),
        graph.folders().len(),
        report.len()
    );
    assert!(report.is_empty(), "import circles:\n{}", report.join("\n"));
}

#[test]
fn use_cases_stand_on_the_floors_and_never_on_each_other() {
    let graph = Graph::of_crate();
    let service = module("service");
    // Where a module of `service/` stands: its floor's rank, or a use case's name.
    let place = |m: &Module| -> Option<Result<usize, String>> {
        let child = m.strip_prefix(service.as_slice())?.first()?;
        Some(
            SERVICE_FLOORS
                .iter()
                .position(|floor| floor == child)
                .ok_or_else(|| child.clone()),
        )
    };
    let mut use_cases = std::collections::BTreeSet::new();
    let mut offences = Vec::new();
    for (from, tos) in &graph.edges {
        let Some(here) = place(from) else { continue };
        if let Err(name) = &here {
            use_cases.insert(name.clone());
        }
        for to in tos {
            let Some(there) = place(to) else { continue };
            let wrong = match (&here, &there) {
                (Ok(a), Ok(b)) => b > a,
                (Ok(_), Err(_)) => true,
                (Err(_), Ok(_)) => false,
                (Err(a), Err(b)) => a != b,
            };
            if wrong {
                offences.push(format!("{} names {}", show(from), show(to)));
            }
        }
    }
    println!(
        "floors {SERVICE_FLOORS:?}; {} use cases: {}",
        use_cases.len(),
        use_cases.into_iter().collect::<Vec<_>>().join(", ")
    );
    assert!(
        offences.is_empty(),
        "a floor reaches up, or a use case reaches another:\n{}",
        offences.join("\n")
    );
}

#[test]
fn the_composition_root_is_on_top_and_http_under_both_faces() {
    let graph = Graph::of_crate();
    let app = module("app");
    let mut offences = Vec::new();
    for (from, tos) in &graph.edges {
        for to in tos {
            let into_root = to.starts_with(&app) && !from.starts_with(&app);
            let http_into_face = from.first().map(String::as_str) == Some("http")
                && matches!(to.first().map(String::as_str), Some("api" | "web"));
            if into_root || http_into_face {
                offences.push(format!("{} names {}", show(from), show(to)));
            }
        }
    }
    assert!(offences.is_empty(), "{}", offences.join("\n"));
}

#[test]
fn the_check_sees_paths_in_groups_and_skips_comments() {
    let lines = scan::expanded_lines(
        "use crate::{\n    api::problem::ApiError,\n    db::{self, api},\n};\n// crate::app\n",
    );
    let hits = |word: &str| -> Vec<usize> {
        (0..lines.len())
            .filter(|&i| scan::mentions(&lines[i], word))
            .collect()
    };
    assert_eq!(hits("crate::api"), [1]);
    assert_eq!(hits("crate::db"), [2]);
    assert_eq!(hits("ApiError"), [1]);
    assert!(hits("crate::app").is_empty());
    assert!(scan::mentions(
        "use tracing_actix_web::X;",
        "tracing_actix_web"
    ));
    assert!(!scan::mentions("fn transaction()", "actix"));
}

/// The graph reader on a small made-up crate: what it must see, and what it must not count.
#[test]
fn the_import_graph_sees_every_way_a_module_names_another() {
    let sources = [
        // A folder's own file naming its child, the child naming the folder back: a circle.
        ("games", "mod board; pub use board::Board; pub struct Side;"),
        ("games::board", "use super::Side; pub struct Board(Side);"),
        // Visibility and comments are not imports; an inline test module's `super` is its file.
        (
            "clock",
            "pub(super) fn f() {} // crate::games\n#[cfg(test)] mod tests { use super::*; }",
        ),
        // A path in an attribute, and one through a name a `use` brought in.
        (
            "views",
            "use crate::clock; #[schema(value_type = crate::games::Side)] struct V; fn g() { clock::f() }",
        ),
    ];
    let graph = Graph::of_sources(
        sources
            .iter()
            .map(|(m, text)| (module(m), (format!("{m}.rs"), (*text).to_owned())))
            .collect(),
    );
    let named = |from: &str| -> Vec<String> {
        graph.edges[&module(from)].iter().map(|m| show(m)).collect()
    };
    assert_eq!(named("games"), ["games::board"]);
    assert_eq!(named("games::board"), ["games"]);
    assert!(named("clock").is_empty());
    assert_eq!(named("views"), ["clock", "games"]);
    let circles = graph.circles_in(&module("games"));
    assert_eq!(circles.len(), 1);
    assert_eq!(
        graph.describe(&module("games"), &circles[0]),
        "games → games::board (games names `board::Board`) → games (games::board names `super::Side`)"
    );
    assert!(graph.circles_in(&[]).is_empty());
}
