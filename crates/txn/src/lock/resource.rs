//! Lockable resources, named and shown as SQL Server shows them.
//!
//! Three spellings of a resource exist in SQL Server and all three are here:
//!
//! | resource | resource_description (the locks DMV) | wait_resource / waitresource (`Display`) |
//! |----------|------------------------------------------|------------------------------------------|
//! | DATABASE | (empty)                                  | `DATABASE: 5`                            |
//! | OBJECT   | (empty; the id is resource_associated_entity_id) | `OBJECT: 5:245575913:0`          |
//! | HOBT     | (empty; the id is resource_associated_entity_id) | `HOBT: 5:72057594038779904`      |
//! | EXTENT   | `1:264`                                  | `EXTENT: 5:1:264`                        |
//! | PAGE     | `1:264`                                  | `PAGE: 5:1:264`                          |
//! | KEY      | `(8194443284a0)`                         | `KEY: 5:72057594038779904 (8194443284a0)` |
//! | RID      | `1:264:3`                                | `RID: 5:1:264:3`                         |
//!
//! resource_description only holds what the other columns don't (database id and
//! associated entity id have their own columns), and the third number of an OBJECT
//! wait resource is the lock partition, always 0 here (locks are not partitioned).

use std::fmt;

/// Key hashes are 48 bits, as SQL Server's (shown as 12 hex digits). Two keys whose
/// hashes agree in these bits share one lock, exactly as in SQL Server.
pub const KEY_HASH_MASK: u64 = (1 << 48) - 1;

/// A lockable resource. Database ids, file ids and slots are `u16` as in the storage
/// layer; object ids are SQL Server's `int`, HoBT ids its `bigint`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum LockResource {
    /// The whole database (every session using a database holds S on it).
    Database { db: u16 },
    /// A table, view, procedure... by object_id.
    Object { db: u16, object_id: i32 },
    /// A heap or B-tree (a partition of an index), by hobt_id.
    Hobt { db: u16, hobt_id: i64 },
    /// An extent, named by its first page.
    Extent { db: u16, file: u16, page: u32 },
    /// A page.
    Page { db: u16, file: u16, page: u32 },
    /// A key in an index (row lock in a B-tree): the HoBT and the 48-bit hash of the
    /// key. Build it with [`LockResource::key`] or [`LockResource::key_from_bytes`] so
    /// the hash is masked to 48 bits.
    Key { db: u16, hobt_id: i64, hash: u64 },
    /// A row in a heap: file, page, slot.
    Rid { db: u16, file: u16, page: u32, slot: u16 },
}

impl LockResource {
    pub const fn database(db: u16) -> Self {
        LockResource::Database { db }
    }

    pub const fn object(db: u16, object_id: i32) -> Self {
        LockResource::Object { db, object_id }
    }

    pub const fn hobt(db: u16, hobt_id: i64) -> Self {
        LockResource::Hobt { db, hobt_id }
    }

    pub const fn extent(db: u16, file: u16, page: u32) -> Self {
        LockResource::Extent { db, file, page }
    }

    pub const fn page(db: u16, file: u16, page: u32) -> Self {
        LockResource::Page { db, file, page }
    }

    /// A key lock; `hash` is masked to SQL Server's 48 bits.
    pub const fn key(db: u16, hobt_id: i64, hash: u64) -> Self {
        LockResource::Key { db, hobt_id, hash: hash & KEY_HASH_MASK }
    }

    /// A key lock for a key given as its bytes (the index key in its comparable,
    /// collation-normalised form, so that keys equal under the collation share a lock).
    pub fn key_from_bytes(db: u16, hobt_id: i64, key: &[u8]) -> Self {
        Self::key(db, hobt_id, key_hash(key))
    }

    pub const fn rid(db: u16, file: u16, page: u32, slot: u16) -> Self {
        LockResource::Rid { db, file, page, slot }
    }

    /// the locks DMV's resource_type.
    pub const fn resource_type(&self) -> &'static str {
        match self {
            LockResource::Database { .. } => "DATABASE",
            LockResource::Object { .. } => "OBJECT",
            LockResource::Hobt { .. } => "HOBT",
            LockResource::Extent { .. } => "EXTENT",
            LockResource::Page { .. } => "PAGE",
            LockResource::Key { .. } => "KEY",
            LockResource::Rid { .. } => "RID",
        }
    }

    /// the locks DMV's resource_database_id.
    pub const fn database_id(&self) -> u16 {
        match *self {
            LockResource::Database { db }
            | LockResource::Object { db, .. }
            | LockResource::Hobt { db, .. }
            | LockResource::Extent { db, .. }
            | LockResource::Page { db, .. }
            | LockResource::Key { db, .. }
            | LockResource::Rid { db, .. } => db,
        }
    }

    /// the locks DMV's resource_associated_entity_id: the object id for OBJECT, the
    /// HoBT id for HOBT and KEY; 0 where this layer doesn't know it (PAGE, RID and
    /// EXTENT show their HoBT in SQL Server, which the caller knows and we don't).
    pub const fn associated_entity_id(&self) -> i64 {
        match *self {
            LockResource::Object { object_id, .. } => object_id as i64,
            LockResource::Hobt { hobt_id, .. } | LockResource::Key { hobt_id, .. } => hobt_id,
            _ => 0,
        }
    }

    /// the locks DMV's resource_description.
    pub fn description(&self) -> String {
        match *self {
            LockResource::Database { .. } | LockResource::Object { .. } | LockResource::Hobt { .. } => String::new(),
            LockResource::Extent { file, page, .. } | LockResource::Page { file, page, .. } => {
                format!("{file}:{page}")
            }
            LockResource::Key { hash, .. } => format!("({:012x})", hash & KEY_HASH_MASK),
            LockResource::Rid { file, page, slot, .. } => format!("{file}:{page}:{slot}"),
        }
    }
}

/// The waitresource spelling (sys.dm_exec_requests.wait_resource, the deadlock graph).
impl fmt::Display for LockResource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            LockResource::Database { db } => write!(f, "DATABASE: {db}"),
            LockResource::Object { db, object_id } => write!(f, "OBJECT: {db}:{object_id}:0"),
            LockResource::Hobt { db, hobt_id } => write!(f, "HOBT: {db}:{hobt_id}"),
            LockResource::Extent { db, file, page } => write!(f, "EXTENT: {db}:{file}:{page}"),
            LockResource::Page { db, file, page } => write!(f, "PAGE: {db}:{file}:{page}"),
            LockResource::Key { db, hobt_id, hash } => {
                write!(f, "KEY: {db}:{hobt_id} ({:012x})", hash & KEY_HASH_MASK)
            }
            LockResource::Rid { db, file, page, slot } => write!(f, "RID: {db}:{file}:{page}:{slot}"),
        }
    }
}

/// A 48-bit hash of key bytes (FNV-1a 64 with a final mix, then masked). Stable across
/// runs and platforms, so a key's lock resource is the same in every process.
pub fn key_hash(key: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in key {
        h ^= b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    // FNV's low bits are weak for short inputs: finish with a 64-bit avalanche.
    h ^= h >> 33;
    h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
    h ^= h >> 33;
    h & KEY_HASH_MASK
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spellings() {
        let k = LockResource::key(5, 72057594038779904, 0x8194443284a0);
        assert_eq!(k.resource_type(), "KEY");
        assert_eq!(k.description(), "(8194443284a0)");
        assert_eq!(k.to_string(), "KEY: 5:72057594038779904 (8194443284a0)");
        assert_eq!(k.associated_entity_id(), 72057594038779904);
        let p = LockResource::page(5, 1, 264);
        assert_eq!((p.description().as_str(), p.to_string().as_str()), ("1:264", "PAGE: 5:1:264"));
        let r = LockResource::rid(5, 1, 264, 3);
        assert_eq!((r.description().as_str(), r.to_string().as_str()), ("1:264:3", "RID: 5:1:264:3"));
        let o = LockResource::object(5, 245575913);
        assert_eq!((o.description().as_str(), o.to_string().as_str()), ("", "OBJECT: 5:245575913:0"));
        assert_eq!(o.associated_entity_id(), 245575913);
        assert_eq!(LockResource::database(7).to_string(), "DATABASE: 7");
        assert_eq!(LockResource::database(7).database_id(), 7);
        // Small hashes keep their leading zeros, as SQL Server prints them.
        assert_eq!(LockResource::key(1, 1, 0xabc).description(), "(000000000abc)");
        // Hashes are 48 bits.
        assert_eq!(LockResource::key(1, 1, u64::MAX), LockResource::key(1, 1, KEY_HASH_MASK));
    }

    #[test]
    fn key_hash_is_stable_and_spread() {
        assert_eq!(key_hash(b"abc"), key_hash(b"abc"));
        assert_ne!(key_hash(b"abc"), key_hash(b"abd"));
        assert!(key_hash(b"") <= KEY_HASH_MASK);
        let mut seen = std::collections::HashSet::new();
        for i in 0u32..10_000 {
            assert!(seen.insert(key_hash(&i.to_be_bytes())));
        }
    }
}
