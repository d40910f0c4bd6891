//! Allocation: which pages belong to whom.
//!
//! PLACEHOLDER implementation (being replaced by GAM/PFS/IAM on disk): pages are handed
//! out by bumping a counter, allocation units live in memory only, and nothing survives a
//! reopen. The public API below is the one heaps, B+trees and DBCC build on; it stays.

use crate::database::Database;
use crate::error::{Result, StorageError};
use crate::io::FileSystem;
use crate::page::PageId;
use parking_lot::{Mutex, RwLock};
use std::collections::{BTreeMap, HashMap};

/// What an allocation unit stores (sys.allocation_units.type).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum AllocUnitKind {
    InRowData = 1,
    LobData = 2,
    RowOverflowData = 3,
}

/// An allocation unit: the pages of one heap, index, or LOB column of a partition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AllocUnit {
    pub id: u64,
    pub kind: AllocUnitKind,
    pub object_id: u32,
    pub index_id: u16,
    /// First IAM page of the unit's IAM chain.
    pub first_iam: PageId,
    /// B+tree root (NULL for heaps and LOB units).
    pub root: PageId,
    /// First page (leftmost leaf of a B+tree, first page of a heap).
    pub first_page: PageId,
}

#[derive(Default)]
pub(crate) struct Allocator {
    units: RwLock<HashMap<u64, AllocUnit>>,
    next_au: Mutex<u64>,
    next_page: Mutex<u32>,
    /// Pages per allocation unit, with their last known free bytes (the PFS role).
    pages: RwLock<HashMap<u64, BTreeMap<PageId, u16>>>,
    free: Mutex<Vec<PageId>>,
}

impl Allocator {
    pub(crate) fn new() -> Allocator {
        Allocator { next_au: Mutex::new(1000), next_page: Mutex::new(16), ..Default::default() }
    }

    pub(crate) fn format_new_database(_db: &Database) -> Result<()> {
        Ok(())
    }

    pub(crate) fn open_existing(_db: &Database, _fs: &dyn FileSystem) -> Result<String> {
        Err(StorageError::Invalid("reopening a database is not implemented by the placeholder allocator".into()))
    }

    pub(crate) fn get(&self, au: u64) -> Option<AllocUnit> {
        self.units.read().get(&au).cloned()
    }

    pub(crate) fn create_alloc_unit(db: &Database, kind: AllocUnitKind, object_id: u32, index_id: u16) -> Result<AllocUnit> {
        let a = &db.alloc;
        let id = {
            let mut n = a.next_au.lock();
            *n += 1;
            *n
        };
        let au = AllocUnit { id, kind, object_id, index_id, first_iam: PageId::NULL, root: PageId::NULL, first_page: PageId::NULL };
        a.units.write().insert(id, au.clone());
        a.pages.write().insert(id, BTreeMap::new());
        Ok(au)
    }

    pub(crate) fn set_root(db: &Database, au: u64, root: PageId, first_page: PageId) -> Result<()> {
        let mut u = db.alloc.units.write();
        let e = u.get_mut(&au).ok_or_else(|| StorageError::Invalid(format!("allocation unit {au} does not exist")))?;
        e.root = root;
        e.first_page = first_page;
        Ok(())
    }

    pub(crate) fn allocate_page(db: &Database, au: u64, _near: Option<PageId>) -> Result<PageId> {
        let a = &db.alloc;
        if !a.units.read().contains_key(&au) {
            return Err(StorageError::Invalid(format!("allocation unit {au} does not exist")));
        }
        let id = match a.free.lock().pop() {
            Some(id) => id,
            None => {
                let mut n = a.next_page.lock();
                let file = db.files().get(1)?;
                if *n >= file.size_pages() && file.grow(*n + 1 - file.size_pages())?.is_none() {
                    return Err(StorageError::FilegroupFull { db: db.id });
                }
                let id = PageId::new(1, *n);
                *n += 1;
                id
            }
        };
        a.pages.write().entry(au).or_default().insert(id, 0);
        Ok(id)
    }

    pub(crate) fn free_page(db: &Database, au: u64, id: PageId) -> Result<()> {
        let a = &db.alloc;
        let removed = a.pages.write().get_mut(&au).and_then(|m| m.remove(&id));
        if removed.is_none() {
            return Err(StorageError::corrupt(format!("page ({id})"), format!("is not allocated to allocation unit {au}")));
        }
        a.free.lock().push(id);
        Ok(())
    }

    pub(crate) fn drop_alloc_unit(db: &Database, au: u64) -> Result<()> {
        let a = &db.alloc;
        let pages = a.pages.write().remove(&au).unwrap_or_default();
        a.free.lock().extend(pages.keys());
        a.units.write().remove(&au);
        Ok(())
    }
}

impl Database {
    /// Every page of an allocation unit, in allocation (file, page) order: the order a
    /// heap scan and DBCC read them.
    pub fn alloc_unit_pages(&self, au: u64) -> Result<Vec<PageId>> {
        Ok(self.alloc.pages.read().get(&au).map(|m| m.keys().copied().collect()).unwrap_or_default())
    }

    /// Records how full a page is (the PFS free-space byte), so inserts can find room.
    pub fn note_free_space(&self, au: u64, id: PageId, free_bytes: usize) -> Result<()> {
        if let Some(m) = self.alloc.pages.write().get_mut(&au) {
            if let Some(f) = m.get_mut(&id) {
                *f = free_bytes.min(u16::MAX as usize) as u16;
            }
        }
        Ok(())
    }

    /// A page of the unit that had at least `needed` free bytes when last noted.
    pub fn find_page_with_space(&self, au: u64, needed: usize) -> Result<Option<PageId>> {
        Ok(self
            .alloc
            .pages
            .read()
            .get(&au)
            .and_then(|m| m.iter().rev().find(|(_, &f)| f as usize >= needed).map(|(&id, _)| id)))
    }

    /// The allocation unit owning a page, if any (DBCC cross-checks).
    pub fn page_owner(&self, id: PageId) -> Result<Option<u64>> {
        Ok(self.alloc.pages.read().iter().find(|(_, m)| m.contains_key(&id)).map(|(&au, _)| au))
    }
}
