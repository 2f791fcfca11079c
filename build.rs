//! `embed_migrations!` reads the migration folders while the crate compiles, but cargo does not
//! know they are inputs: without this, a new migration was left out of the binary until some
//! source file changed.
fn main() {
    println!("cargo:rerun-if-changed=migrations");
}
