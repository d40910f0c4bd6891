//! Storage benchmark (not written yet).
fn main() {}
