//! The `mesquite` binary.
fn main() {}
