//! A fast hasher for in-memory tables keyed by short, engine-built values (lock
//! resources, hash join and GROUP BY keys), where std's SipHash (resistant to chosen
//! keys) costs more than the rest of a lookup.

use std::hash::{BuildHasher, Hasher};

/// A fast, good-enough hasher for short keys (a few machine words): multiply-rotate per
/// word and a folded 128-bit multiply to finish, so every bit range is well mixed (the
/// lock table's shard, a map's buckets and its control bytes each use their own bits).
#[derive(Default, Clone, Copy)]
pub struct FxBuild;

/// The hasher [`FxBuild`] builds.
pub struct FxHasher(u64);

const K: u64 = 0x9e37_79b9_7f4a_7c15;

impl Hasher for FxHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut w = [0u8; 8];
            w[..chunk.len()].copy_from_slice(chunk);
            self.write_u64(u64::from_le_bytes(w));
        }
    }
    #[inline]
    fn write_u8(&mut self, i: u8) {
        self.write_u64(i as u64)
    }
    #[inline]
    fn write_u16(&mut self, i: u16) {
        self.write_u64(i as u64)
    }
    #[inline]
    fn write_u32(&mut self, i: u32) {
        self.write_u64(i as u64)
    }
    #[inline]
    fn write_i32(&mut self, i: i32) {
        self.write_u64(i as u32 as u64)
    }
    #[inline]
    fn write_i64(&mut self, i: i64) {
        self.write_u64(i as u64)
    }
    #[inline]
    fn write_isize(&mut self, i: isize) {
        self.write_u64(i as u64)
    }
    #[inline]
    fn write_usize(&mut self, i: usize) {
        self.write_u64(i as u64)
    }
    #[inline]
    fn write_u64(&mut self, i: u64) {
        self.0 = (self.0.rotate_left(5) ^ i).wrapping_mul(K);
    }
    #[inline]
    fn finish(&self) -> u64 {
        let m = (self.0 as u128).wrapping_mul(0x2d35_8dcc_aa6c_78a5_u128);
        (m as u64) ^ ((m >> 64) as u64)
    }
}

impl BuildHasher for FxBuild {
    type Hasher = FxHasher;
    #[inline]
    fn build_hasher(&self) -> FxHasher {
        FxHasher(0)
    }
}
