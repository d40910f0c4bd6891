//! The executor's stack guard.
//!
//! The parser bounds how deeply one batch's text may nest (Msg 191, `parser::MAX_DEPTH`),
//! but binding and running a statement can nest further than its text: a view is expanded
//! into the query that reads it, a function or procedure runs its body inside the
//! caller's expression or statement, dynamic SQL runs a batch inside a statement. Each of
//! those passes recurses, and a thread that runs out of stack aborts the whole process.
//! So the recursive steps of the binder, planner and executor first ask [`check`] whether
//! the thread still has [`reserve`] bytes of stack left; if not, the statement fails with
//! SQL Server's Msg 8631 and the session goes on. The limit is the thread's real stack
//! (read once per thread), so the same guard holds on an 8 MB request thread, a test's
//! 2 MB thread, and in debug builds, whose frames are several times larger.

use std::cell::Cell;

use types::SqlError;

thread_local! {
    /// The lowest stack address the guard lets a recursive step start below; 0 until
    /// computed, 1 when the thread's stack could not be read (no guard).
    static LIMIT: Cell<usize> = const { Cell::new(0) };
}

/// Stack kept free below the last check: room for the work a step does before it reaches
/// the next check (evaluating expressions, converting values, a storage call).
pub fn reserve(stack_size: usize) -> usize {
    (stack_size / 4).clamp(256 << 10, 1 << 20)
}

#[cfg(target_os = "linux")]
fn thread_stack() -> Option<(usize, usize)> {
    // SAFETY: pthread_getattr_np fills `attr` for the calling thread; it is destroyed
    // after the stack bounds are read from it.
    unsafe {
        let mut attr = std::mem::MaybeUninit::<libc::pthread_attr_t>::zeroed();
        if libc::pthread_getattr_np(libc::pthread_self(), attr.as_mut_ptr()) != 0 {
            return None;
        }
        let mut addr: *mut libc::c_void = std::ptr::null_mut();
        let mut size: libc::size_t = 0;
        let r = libc::pthread_attr_getstack(attr.as_ptr(), &mut addr, &mut size);
        libc::pthread_attr_destroy(attr.as_mut_ptr());
        (r == 0 && !addr.is_null()).then_some((addr as usize, size))
    }
}

#[cfg(not(target_os = "linux"))]
fn thread_stack() -> Option<(usize, usize)> {
    None
}

/// The thread's limit, read from the system the first time (kept out of the checks'
/// inlined fast path, which is a thread-local load and a compare).
#[cold]
#[inline(never)]
fn init_limit() -> usize {
    let limit = match thread_stack() {
        Some((low, size)) => low + reserve(size),
        None => 1,
    };
    LIMIT.with(|l| l.set(limit));
    limit
}

/// Whether the calling thread has its reserve of stack left.
#[inline]
pub fn enough() -> bool {
    let here = 0u8;
    let at = std::hint::black_box(&here as *const u8 as usize);
    let limit = match LIMIT.with(Cell::get) {
        0 => init_limit(),
        l => l,
    };
    at > limit
}

/// Msg 8631 unless the thread has its reserve of stack left.
#[inline]
pub fn check() -> Result<(), SqlError> {
    if enough() {
        Ok(())
    } else {
        Err(stack_limit())
    }
}

#[cold]
#[inline(never)]
pub fn stack_limit() -> SqlError {
    SqlError::new(
        8631,
        17,
        1,
        "Internal error: Server stack limit has been reached. Please look for potentially deep nesting in your query, and try to simplify it.",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn depth(n: u64) -> Result<u64, SqlError> {
        check()?;
        let pad = std::hint::black_box([n; 64]);
        Ok(depth(n + 1)? + pad[0] % 2)
    }

    #[test]
    fn unbounded_recursion_stops_with_8631_on_a_small_stack() {
        let e = std::thread::Builder::new()
            .stack_size(1 << 20)
            .spawn(|| depth(0).unwrap_err())
            .expect("spawn")
            .join()
            .expect("no overflow");
        assert_eq!((e.number, e.severity), (8631, 17));
    }
}
