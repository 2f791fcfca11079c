//! The two backends' migrations stay in step: the same migrations, under the same names.

use std::collections::BTreeSet;

fn names(backend: &str) -> BTreeSet<String> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("migrations")
        .join(backend);
    std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| {
            let path = entry.unwrap().path();
            assert!(
                path.join("up.sql").is_file() && path.join("down.sql").is_file(),
                "{} lacks up.sql or down.sql",
                path.display()
            );
            path.file_name().unwrap().to_string_lossy().into_owned()
        })
        .collect()
}

#[test]
fn both_backends_have_the_same_migrations() {
    let sqlite = names("sqlite");
    assert!(!sqlite.is_empty());
    assert_eq!(sqlite, names("postgres"));
}
