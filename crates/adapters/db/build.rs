//! `embed_migrations!` reads the migration trees at compile time; a new migration directory
//! must rebuild the crate.

fn main() {
    println!("cargo:rerun-if-changed=../../../migrations");
}
