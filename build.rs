//! What the compiler cannot see for itself.
//!
//! * `embed_migrations!` reads the migration folders while the crate compiles, but cargo does not
//!   know they are inputs: without the `rerun-if-changed`, a new migration was left out of the
//!   binary until some source file changed.
//! * A board picture's tag is made from what it shows, so that a request for one already sent is
//!   answered without drawing it again; the drawing code and its font are part of what it shows.
//!   `KURYR_DRAWING` is a digest of them, so that a build that draws differently tags its
//!   pictures differently and no cache keeps an old drawing.

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};

/// What a picture's look depends on: the drawings, the engines they read, and the font.
const DRAWING_INPUTS: [&str; 3] = ["src/board", "src/rules", "assets/fonts"];

fn main() {
    println!("cargo:rerun-if-changed=migrations");
    let mut files = Vec::new();
    for input in DRAWING_INPUTS {
        println!("cargo:rerun-if-changed={input}");
        collect(Path::new(input), &mut files);
    }
    files.sort();
    let mut digest = DefaultHasher::new();
    for file in &files {
        file.hash(&mut digest);
        std::fs::read(file)
            .unwrap_or_else(|e| panic!("cannot read {}: {e}", file.display()))
            .hash(&mut digest);
    }
    println!("cargo:rustc-env=KURYR_DRAWING={:016x}", digest.finish());
}

fn collect(path: &Path, out: &mut Vec<PathBuf>) {
    if path.is_dir() {
        for entry in std::fs::read_dir(path).expect("a readable folder") {
            collect(&entry.expect("a readable entry").path(), out);
        }
    } else {
        out.push(path.to_owned());
    }
}
