//! bench-diag: what one recorded wait, latch wait, file I/O or counter update costs, alone
//! and with two threads on the same row. The measurement itself lives beside the crate it
//! measures (crates/diag/examples/wait_cost.rs, runnable with `cargo run --release -p diag
//! --example wait_cost`); this package runs the same file so `bench/` holds every
//! benchmark.

#[path = "../../../crates/diag/examples/wait_cost.rs"]
mod wait_cost;

fn main() {
    wait_cost::main();
}
