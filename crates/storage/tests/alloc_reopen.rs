//! Allocation on disk: GAM, PFS, IAM chains, the allocation-unit directory and the boot
//! page survive a close and reopen; growth by FILEGROWTH and error 1105 when the files
//! cannot grow; random allocate/free/drop/reopen sequences against a model; damaged
//! allocation pages are reported by `check_allocation` and never cause a panic.

use proptest::prelude::*;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use storage::alloc::layout::{self, BOOT_PAGE, PFS_ALLOCATED};
use storage::alloc::LogFileInfo;
use storage::file::{FileGrowth, FileSpec};
use storage::io::{FileSystem, MemFs, OsFs};
use storage::page::HEADER_SIZE;
use storage::{AllocUnit, AllocUnitKind, BufferPool, Database, PageId, PageOp, PageType, StorageError};

const DB: u16 = 5;

/// A directory under the system temp dir, removed on drop (no tempfile crate).
struct TempDir(PathBuf);

impl TempDir {
    fn new(tag: &str) -> TempDir {
        let nanos =
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0);
        let p = std::env::temp_dir().join(format!("mesquite-alloc-{tag}-{}-{nanos}", std::process::id()));
        std::fs::create_dir_all(&p).unwrap();
        TempDir(p)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn spec(
    file_id: u16,
    name: &str,
    path: PathBuf,
    size_pages: u32,
    growth: FileGrowth,
    max_pages: Option<u32>,
) -> FileSpec {
    FileSpec { file_id, name: name.into(), path, size_pages, growth, max_pages }
}

/// Allocates a page and formats it as a data page of the unit, as heap code would.
fn alloc_data(db: &Database, au: &AllocUnit, near: Option<PageId>) -> Result<PageId, StorageError> {
    let mut g = db.allocate_page(au.id, near)?;
    let id = g.page_id();
    db.change(
        &mut g,
        &PageOp::Format {
            page_type: PageType::Data,
            level: 0,
            index_id: au.index_id,
            object_id: au.object_id,
            alloc_unit_id: au.id,
        },
    )?;
    Ok(id)
}

/// Directory and page lists: what must be identical across a reopen.
fn snapshot(db: &Database) -> (Vec<AllocUnit>, BTreeMap<u64, Vec<PageId>>) {
    let units = db.alloc_units();
    let pages = units.iter().map(|u| (u.id, db.alloc_unit_pages(u.id).unwrap())).collect();
    (units, pages)
}

fn assert_consistent(db: &Database) {
    let problems = db.check_allocation().unwrap();
    assert!(problems.is_empty(), "allocation problems:\n{}", problems.join("\n"));
}

#[test]
fn two_files_thousands_of_pages_survive_reopen() {
    let dir = TempDir::new("reopen");
    let fs = OsFs;
    let primary = dir.0.join("db.mdf");
    let files = vec![
        spec(1, "db_data", primary.clone(), 64, FileGrowth::Pages(256), None),
        spec(3, "db_data2", dir.0.join("sub").join("db2.ndf"), 64, FileGrowth::Percent(50), None),
    ];
    let pool = BufferPool::new(512);
    let db = Database::create(pool.clone(), &fs, DB, "Sales", files).unwrap();
    assert_eq!(db.name(), "Sales");
    assert_consistent(&db);

    let kinds = [AllocUnitKind::InRowData, AllocUnitKind::LobData, AllocUnitKind::RowOverflowData];
    let units: Vec<AllocUnit> =
        (0..6).map(|i| db.create_alloc_unit(kinds[i % 3], 100 + i as u32, (i % 2) as u16).unwrap()).collect();
    let ids: BTreeSet<u64> = units.iter().map(|u| u.id).collect();
    assert_eq!(ids.len(), 6, "unit ids are unique");

    // 3,000 pages: no `near` for most (round-robin over the files), `near` for some.
    let mut pages: BTreeMap<u64, Vec<PageId>> = BTreeMap::new();
    for i in 0..3000usize {
        let u = &units[i % units.len()];
        let near = if i % 5 == 0 { pages.get(&u.id).and_then(|v| v.last().copied()) } else { None };
        let id = alloc_data(&db, u, near).unwrap();
        pages.entry(u.id).or_default().push(id);
    }
    let all: BTreeSet<PageId> = pages.values().flatten().copied().collect();
    assert_eq!(all.len(), 3000, "no page handed out twice");
    assert!(all.iter().any(|p| p.file_id == 1) && all.iter().any(|p| p.file_id == 3), "both files are used");
    assert!(
        db.files().get(1).unwrap().size_pages() > 64 && db.files().get(3).unwrap().size_pages() > 64,
        "both files grew"
    );

    // Free every seventh page, drop one unit, move some roots.
    let mut freed = BTreeSet::new();
    for (au, v) in pages.iter_mut() {
        let mut kept = Vec::new();
        for (i, p) in v.iter().enumerate() {
            if i % 7 == 3 {
                db.free_page(*au, *p).unwrap();
                freed.insert(*p);
            } else {
                kept.push(*p);
            }
        }
        *v = kept;
    }
    db.drop_alloc_unit(units[2].id).unwrap();
    pages.remove(&units[2].id);
    db.set_alloc_unit_root(units[1].id, pages[&units[1].id][5], pages[&units[1].id][0]).unwrap();
    for u in &units[3..] {
        db.note_free_space(u.id, pages[&u.id][0], 1000).unwrap();
    }
    for (au, v) in &pages {
        let mut v = v.clone();
        v.sort();
        assert_eq!(db.alloc_unit_pages(*au).unwrap(), v);
        for p in v.iter().step_by(97) {
            assert_eq!(db.page_owner(*p).unwrap(), Some(*au));
        }
    }
    assert!(db.alloc_unit(units[2].id).is_err());
    assert_consistent(&db);

    let before = snapshot(&db);
    let sizes = (db.files().get(1).unwrap().size_pages(), db.files().get(3).unwrap().size_pages());
    db.close().unwrap();
    drop(db);

    // A new pool: nothing is left in memory.
    let pool = BufferPool::new(256);
    let db = Database::open(pool.clone(), &fs, DB, &primary).unwrap();
    assert_eq!(db.name(), "Sales");
    assert_eq!(snapshot(&db), before);
    assert_eq!((db.files().get(1).unwrap().size_pages(), db.files().get(3).unwrap().size_pages()), sizes);
    assert_consistent(&db);
    let list = db.file_list().unwrap();
    assert_eq!(
        list.iter().map(|e| (e.file_id, e.name.as_str(), e.relative)).collect::<Vec<_>>(),
        vec![(1, "db_data", true), (3, "db_data2", true)]
    );
    assert_eq!(db.files().get(3).unwrap().spec.read().growth, FileGrowth::Percent(50));
    let boot = db.boot_info().unwrap();
    assert_eq!((boot.name.as_str(), boot.db_id), ("Sales", DB));

    // The reopened database keeps allocating: freed pages are reused, ids continue.
    let u = db.create_alloc_unit(AllocUnitKind::InRowData, 999, 0).unwrap();
    assert!(u.id > units.iter().map(|u| u.id).max().unwrap());
    for _ in 0..100 {
        alloc_data(&db, &u, None).unwrap();
    }
    let again = alloc_data(&db, &units[0], None).unwrap();
    assert!(freed.contains(&again), "a freed page of the unit's own extents is reused first");
    assert_consistent(&db);
    db.close().unwrap();
}

#[test]
fn filegroup_full_without_growth_and_still_usable() {
    let fs = MemFs::new();
    let primary = PathBuf::from("/full/db.mdf");
    // 40 pages = 5 extents: 2 system, 1 for the directory, 2 for data.
    let pool = BufferPool::new(64);
    let db = Database::create(
        pool.clone(),
        &fs,
        DB,
        "full",
        vec![spec(1, "d", primary.clone(), 40, FileGrowth::None, None)],
    )
    .unwrap();
    let a = db.create_alloc_unit(AllocUnitKind::InRowData, 1, 0).unwrap();
    let mut got = Vec::new();
    let err = loop {
        match alloc_data(&db, &a, None) {
            Ok(p) => got.push(p),
            Err(e) => break e,
        }
    };
    assert!(matches!(err, StorageError::FilegroupFull { db: DB }), "{err}");
    assert_eq!(err.number(), 1105);
    // Two extents of 8 pages, minus the IAM page in the first.
    assert_eq!(got.len(), 15);
    assert_eq!(db.files().get(1).unwrap().size_pages(), 40, "no growth");
    assert_consistent(&db);

    // Still usable: free space is reused, units can be created and dropped.
    db.free_page(a.id, got[4]).unwrap();
    assert_eq!(alloc_data(&db, &a, None).unwrap(), got[4]);
    let b = db.create_alloc_unit(AllocUnitKind::LobData, 2, 0).unwrap();
    assert!(matches!(alloc_data(&db, &b, None), Err(StorageError::FilegroupFull { .. })));
    db.drop_alloc_unit(a.id).unwrap();
    let p = alloc_data(&db, &b, None).unwrap();
    assert_eq!(db.page_owner(p).unwrap(), Some(b.id));
    assert_consistent(&db);
    db.close().unwrap();
    let db = Database::open(pool, &fs, DB, &primary).unwrap();
    assert_eq!(db.alloc_unit_pages(b.id).unwrap(), vec![p]);
    assert_consistent(&db);
}

#[test]
fn maxsize_caps_growth() {
    let fs = MemFs::new();
    let primary = PathBuf::from("/max/db.mdf");
    let pool = BufferPool::new(64);
    let db = Database::create(pool, &fs, DB, "max", vec![spec(1, "d", primary, 8, FileGrowth::Pages(16), Some(64))])
        .unwrap();
    assert_eq!(db.files().get(1).unwrap().size_pages(), 32, "rounded up to the minimum");
    let a = db.create_alloc_unit(AllocUnitKind::InRowData, 1, 0).unwrap();
    let mut n = 0;
    while alloc_data(&db, &a, None).is_ok() {
        n += 1;
    }
    assert_eq!(db.files().get(1).unwrap().size_pages(), 64);
    // 8 extents, 2 system, 1 directory: 5 for data, one page of them the IAM page.
    assert_eq!(n, 39);
    assert_consistent(&db);
}

#[test]
fn near_keeps_locality_and_round_robin_spreads() {
    let fs = MemFs::new();
    let pool = BufferPool::new(256);
    let files = vec![
        spec(1, "a", PathBuf::from("/rr/a.mdf"), 256, FileGrowth::None, None),
        spec(3, "b", PathBuf::from("/rr/b.ndf"), 256, FileGrowth::None, None),
        spec(4, "c", PathBuf::from("/rr/c.ndf"), 256, FileGrowth::None, None),
    ];
    let db = Database::create(pool, &fs, DB, "rr", files).unwrap();
    let a = db.create_alloc_unit(AllocUnitKind::InRowData, 1, 1).unwrap();
    // Without near, new extents go to the files in turn; the first extent of the unit in
    // each file starts with its IAM page, so 7 data pages per file fill three extents.
    let mut per_file: BTreeMap<u16, usize> = BTreeMap::new();
    for _ in 0..21 {
        *per_file.entry(alloc_data(&db, &a, None).unwrap().file_id).or_default() += 1;
    }
    assert_eq!(per_file, BTreeMap::from([(1, 7), (3, 7), (4, 7)]));
    // With near in file 4, new extents come from file 4.
    let mut near = db.alloc_unit_pages(a.id).unwrap().into_iter().find(|p| p.file_id == 4).unwrap();
    for _ in 0..40 {
        let p = alloc_data(&db, &a, Some(near)).unwrap();
        assert_eq!(p.file_id, 4);
        near = p;
    }
    assert_consistent(&db);
}

#[test]
fn boot_page_fields_round_trip() {
    let fs = MemFs::new();
    let primary = PathBuf::from("/boot/db.mdf");
    let pool = BufferPool::new(64);
    let db = Database::create(
        pool.clone(),
        &fs,
        42,
        "Bööt",
        vec![spec(1, "d", primary.clone(), 32, FileGrowth::DEFAULT_DATA, None)],
    )
    .unwrap();
    let b = db.boot_info().unwrap();
    assert_eq!((b.name.as_str(), b.db_id, b.checkpoint_lsn, b.dbcc_last_known_good_us), ("Bööt", 42, 0, 0));
    assert!(b.create_time_us > 1_600_000_000_000_000);
    assert!(b.create_lsn > 0);
    assert_eq!(b.log, None);
    assert_eq!(b.directory.id, 1);
    assert!(!b.directory.first_iam.is_null() && !b.directory.first_page.is_null());
    assert_eq!(db.file_header(1).unwrap().binding_id, b.binding_id);

    let log = LogFileInfo {
        file_id: 2,
        name: "boot_log".into(),
        path: "db_log.ldf".into(),
        size_pages: 1024,
        growth: FileGrowth::Percent(10),
        max_pages: Some(1 << 20),
        reserved: 0,
    };
    db.set_checkpoint_lsn(12345).unwrap();
    db.set_dbcc_last_known_good(1_700_000_000_000_000).unwrap();
    db.set_log_file_info(&log).unwrap();
    db.set_boot_txn_reserved(8, &[1, 2, 3]).unwrap();
    assert!(db.set_boot_txn_reserved(62, &[1, 2, 3]).is_err());
    let lsn_before = db.read(PageId::new(1, BOOT_PAGE)).unwrap().lsn();
    db.set_checkpoint_lsn(12346).unwrap();
    assert!(
        db.read(PageId::new(1, BOOT_PAGE)).unwrap().lsn() > lsn_before,
        "boot changes go through the page-change context"
    );
    db.close().unwrap();

    let db = Database::open(pool, &fs, 7, &primary).unwrap();
    assert_eq!(db.id, 7);
    assert_eq!(db.name(), "Bööt");
    let b2 = db.boot_info().unwrap();
    assert_eq!(b2.db_id, 42, "the boot page keeps the creation id");
    assert_eq!(b2.checkpoint_lsn, 12346);
    assert_eq!(b2.dbcc_last_known_good_us, 1_700_000_000_000_000);
    assert_eq!(b2.log, Some(log));
    assert_eq!(&b2.txn_reserved[8..11], &[1, 2, 3]);
    assert_eq!((b2.create_time_us, b2.create_lsn, b2.binding_id), (b.create_time_us, b.create_lsn, b.binding_id));
}

#[test]
fn free_space_buckets_drive_find_page_with_space() {
    let fs = MemFs::new();
    let primary = PathBuf::from("/space/db.mdf");
    let pool = BufferPool::new(128);
    let db = Database::create(
        pool.clone(),
        &fs,
        DB,
        "space",
        vec![spec(1, "d", primary.clone(), 128, FileGrowth::None, None)],
    )
    .unwrap();
    let heap = db.create_alloc_unit(AllocUnitKind::InRowData, 10, 0).unwrap();
    let pages: Vec<PageId> = (0..10).map(|_| alloc_data(&db, &heap, None).unwrap()).collect();
    for p in &pages {
        db.note_free_space(heap.id, *p, 10).unwrap(); // full
    }
    assert_eq!(db.find_page_with_space(heap.id, 100).unwrap(), None);
    db.note_free_space(heap.id, pages[3], 5000).unwrap(); // bucket 1: >= 4048 free
    db.note_free_space(heap.id, pages[6], 1700).unwrap(); // bucket 2: >= 1620 free
    assert_eq!(db.find_page_with_space(heap.id, 4000).unwrap(), Some(pages[3]));
    assert_eq!(db.find_page_with_space(heap.id, 1000).unwrap(), Some(pages[6]), "the fuller page that still fits");
    assert_eq!(db.find_page_with_space(heap.id, 5000).unwrap(), None, "bucket 1 guarantees only 4048 bytes");
    // The PFS byte carries the bucket.
    let pfs = db.read(PageId::new(1, 1)).unwrap();
    assert_eq!(pfs.body()[pages[3].page_no as usize], PFS_ALLOCATED | 1);
    assert_eq!(pfs.body()[pages[0].page_no as usize], PFS_ALLOCATED | 4);
    drop(pfs);
    // Noting the same bucket again changes nothing (no logged change).
    let lsn = db.read(PageId::new(1, 1)).unwrap().lsn();
    db.note_free_space(heap.id, pages[3], 4900).unwrap();
    assert_eq!(db.read(PageId::new(1, 1)).unwrap().lsn(), lsn);
    // A freed page is refused when its PFS byte is consulted (a bucket change).
    db.free_page(heap.id, pages[9]).unwrap();
    assert!(matches!(db.note_free_space(heap.id, pages[9], 5000), Err(StorageError::Corrupt { .. })));
    assert!(db.note_free_space(heap.id, PageId::new(1, 1), 5000).is_err(), "a PFS page is no data page");
    db.close().unwrap();

    let db = Database::open(pool, &fs, DB, &primary).unwrap();
    assert_eq!(db.find_page_with_space(heap.id, 4000).unwrap(), Some(pages[3]));
    assert_eq!(db.find_page_with_space(heap.id, 1000).unwrap(), Some(pages[6]));
    // A B-tree unit keeps no hints but is answered from PFS.
    let idx = db.create_alloc_unit(AllocUnitKind::InRowData, 10, 1).unwrap();
    let p = alloc_data(&db, &idx, None).unwrap();
    assert_eq!(db.find_page_with_space(idx.id, 8000).unwrap(), Some(p));
    db.note_free_space(idx.id, p, 0).unwrap();
    assert_eq!(db.find_page_with_space(idx.id, 1).unwrap(), None);
}

#[test]
fn misuse_is_refused_without_damage() {
    let fs = MemFs::new();
    let pool = BufferPool::new(64);
    let db = Database::create(
        pool,
        &fs,
        DB,
        "misuse",
        vec![spec(1, "d", PathBuf::from("/m/db.mdf"), 64, FileGrowth::None, None)],
    )
    .unwrap();
    let a = db.create_alloc_unit(AllocUnitKind::InRowData, 1, 0).unwrap();
    let b = db.create_alloc_unit(AllocUnitKind::InRowData, 2, 0).unwrap();
    let pa = alloc_data(&db, &a, None).unwrap();
    let corrupt = |r: Result<(), StorageError>| matches!(r, Err(StorageError::Corrupt { .. }));
    assert!(corrupt(db.free_page(b.id, pa)), "another unit's page");
    assert!(corrupt(db.free_page(a.id, PageId::new(1, 9))), "the boot page");
    assert!(corrupt(db.free_page(a.id, PageId::new(1, 60_000))), "beyond the file");
    let iam = db.alloc_unit(a.id).unwrap().first_iam;
    assert!(corrupt(db.free_page(a.id, iam)), "an IAM page");
    db.free_page(a.id, pa).unwrap();
    // The extent is still owned (it holds the IAM page), so a double free is caught by PFS.
    assert!(corrupt(db.free_page(a.id, pa)), "a double free");
    assert!(matches!(db.allocate_page(1, None), Err(StorageError::Invalid(_))));
    assert!(matches!(db.allocate_page(77, None), Err(StorageError::Invalid(_))));
    assert!(db.drop_alloc_unit(1).is_err());
    assert!(db.drop_alloc_unit(77).is_err());
    assert!(db.set_alloc_unit_root(77, PageId::NULL, PageId::NULL).is_err());
    assert!(db.alloc_unit_pages(77).is_err());
    assert_eq!(db.page_owner(PageId::new(9, 9)).unwrap(), None);
    assert_eq!(db.page_owner(iam).unwrap(), Some(a.id));
    assert_consistent(&db);
    // Creating over existing files, bad ids and names are refused.
    let fs2 = MemFs::new();
    let bad = |files: Vec<FileSpec>| Database::create(BufferPool::new(32), &fs2, 9, "x", files).is_err();
    assert!(bad(vec![]));
    assert!(bad(vec![spec(3, "d", PathBuf::from("/b/1.mdf"), 64, FileGrowth::None, None)]));
    assert!(bad(vec![
        spec(1, "d", PathBuf::from("/b/1.mdf"), 64, FileGrowth::None, None),
        spec(2, "e", PathBuf::from("/b/2.ndf"), 64, FileGrowth::None, None)
    ]));
    assert!(bad(vec![
        spec(1, "d", PathBuf::from("/b/1.mdf"), 64, FileGrowth::None, None),
        spec(3, "D", PathBuf::from("/b/2.ndf"), 64, FileGrowth::None, None)
    ]));
    assert!(Database::create(
        BufferPool::new(32),
        &fs,
        9,
        "x",
        vec![spec(1, "d", PathBuf::from("/m/db.mdf"), 64, FileGrowth::None, None)]
    )
    .is_err());
}

#[test]
fn concurrent_units_allocate_free_and_note() {
    let fs = MemFs::new();
    let primary = PathBuf::from("/conc/db.mdf");
    let files = vec![
        spec(1, "a", primary.clone(), 64, FileGrowth::Pages(64), None),
        spec(3, "b", PathBuf::from("/conc/b.ndf"), 64, FileGrowth::Pages(64), None),
    ];
    // A small pool: allocation pages are evicted and read back while threads work.
    let pool = BufferPool::new(48);
    let db = Database::create(pool.clone(), &fs, DB, "conc", files).unwrap();
    let results: Vec<(u64, Vec<PageId>)> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..4u32)
            .map(|t| {
                let db = &db;
                s.spawn(move || {
                    let u = db.create_alloc_unit(AllocUnitKind::InRowData, t, 0).unwrap();
                    let mut mine = Vec::new();
                    for i in 0..400usize {
                        let near = if i % 2 == 0 { mine.last().copied() } else { None };
                        let p = alloc_data(db, &u, near).unwrap();
                        db.note_free_space(u.id, p, (i * 37) % 8096).unwrap();
                        mine.push(p);
                        if i % 3 == 2 {
                            let victim = mine.remove(i % mine.len());
                            db.free_page(u.id, victim).unwrap();
                        }
                        if i % 50 == 0 {
                            if let Some(p) = db.find_page_with_space(u.id, 2000).unwrap() {
                                assert_eq!(db.page_owner(p).unwrap(), Some(u.id));
                            }
                        }
                    }
                    mine.sort();
                    (u.id, mine)
                })
            })
            .collect();
        // Meanwhile: the consistency check pauses allocation and must always pass.
        for _ in 0..5 {
            assert_consistent(&db);
        }
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let mut seen = BTreeSet::new();
    for (au, pages) in &results {
        assert_eq!(&db.alloc_unit_pages(*au).unwrap(), pages);
        for p in pages {
            assert!(seen.insert(*p), "page {p} owned twice");
        }
    }
    assert_consistent(&db);
    db.close().unwrap();
    let db = Database::open(pool, &fs, DB, &primary).unwrap();
    for (au, pages) in &results {
        assert_eq!(&db.alloc_unit_pages(*au).unwrap(), pages);
    }
    assert_consistent(&db);
}

// ---------------------------------------------------------------------------------------
// Damage

/// Applies `f` to a page's raw bytes through the buffer pool (as a disk error or a bug
/// would), bypassing the page-change context, and marks it dirty so a flush writes it.
fn damage(db: &Database, id: PageId, f: impl FnOnce(&mut [u8])) {
    let mut g = db.write(id).unwrap();
    let lsn = g.lsn() + 1;
    f(&mut g.page_mut().as_bytes_mut()[..]);
    g.mark_dirty(lsn);
}

fn gam_byte(ext: u32) -> usize {
    HEADER_SIZE + layout::gam_bit_of(ext) / 8
}

fn small_db(fs: &MemFs, path: &Path) -> (Arc<Database>, AllocUnit, AllocUnit) {
    let pool = BufferPool::new(128);
    let db = Database::create(pool, fs, DB, "dmg", vec![spec(1, "d", path.to_path_buf(), 128, FileGrowth::None, None)])
        .unwrap();
    let a = db.create_alloc_unit(AllocUnitKind::InRowData, 1, 0).unwrap();
    let b = db.create_alloc_unit(AllocUnitKind::InRowData, 2, 0).unwrap();
    for _ in 0..20 {
        alloc_data(&db, &a, None).unwrap();
        alloc_data(&db, &b, None).unwrap();
    }
    (db, a, b)
}

#[test]
fn corrupt_gam_bits_are_reported() {
    let fs = MemFs::new();
    let (db, a, _b) = small_db(&fs, Path::new("/dmg/gam.mdf"));
    assert_consistent(&db);
    let owned = layout::extent_of(db.alloc_unit_pages(a.id).unwrap()[0].page_no);
    let free = layout::full_extents(128) - 1;
    let (ob, fb) = (gam_byte(owned), gam_byte(free));
    let (obit, fbit) = (layout::gam_bit_of(owned) % 8, layout::gam_bit_of(free) % 8);
    // An owned extent marked free, and a free extent marked allocated.
    damage(&db, PageId::new(1, 2), |b| {
        b[ob] |= 1 << obit;
        b[fb] &= !(1 << fbit);
    });
    let problems = db.check_allocation().unwrap();
    assert_eq!(problems.len(), 2, "{problems:#?}");
    assert!(
        problems.iter().any(|p| p.contains(&format!("(1:{})", owned * 8)) && p.contains("marked free in the GAM")),
        "{problems:#?}"
    );
    assert!(
        problems.iter().any(|p| p.contains(&format!("(1:{})", free * 8)) && p.contains("no IAM has allocated it")),
        "{problems:#?}"
    );
    // A system extent marked free.
    damage(&db, PageId::new(1, 2), |b| b[HEADER_SIZE] |= 1);
    assert!(db.check_allocation().unwrap().iter().any(|p| p.contains("system extent (1:0)")));
}

#[test]
fn corrupt_iam_and_pfs_are_reported() {
    let fs = MemFs::new();
    let (db, a, b) = small_db(&fs, Path::new("/dmg/iam.mdf"));
    let ea = layout::extent_of(db.alloc_unit_pages(a.id).unwrap()[0].page_no);
    let iam_b = db.alloc_unit(b.id).unwrap().first_iam;
    // Unit b's IAM also claims an extent of unit a.
    damage(&db, iam_b, |x| x[HEADER_SIZE + layout::iam::BITMAP + layout::gam_bit_of(ea) / 8] |= 1 << (ea % 8));
    let problems = db.check_allocation().unwrap();
    assert!(problems.iter().any(|p| p.contains("allocated by more than one allocation object")), "{problems:#?}");
    // Repair by hand, then break PFS: the IAM page of unit a loses its IAM bit, and a page
    // in a free extent is marked allocated.
    damage(&db, iam_b, |x| x[HEADER_SIZE + layout::iam::BITMAP + layout::gam_bit_of(ea) / 8] &= !(1 << (ea % 8)));
    assert_consistent(&db);
    let iam_a = db.alloc_unit(a.id).unwrap().first_iam;
    let stray = 127u32 - 8;
    damage(&db, PageId::new(1, 1), |x| {
        x[HEADER_SIZE + iam_a.page_no as usize] = PFS_ALLOCATED;
        x[HEADER_SIZE + stray as usize] = PFS_ALLOCATED;
    });
    let problems = db.check_allocation().unwrap();
    assert!(problems.iter().any(|p| p.contains(&format!("IAM page ({iam_a})")) && p.contains("PFS")), "{problems:#?}");
    assert!(
        problems.iter().any(|p| p.contains(&format!("Page (1:{stray})")) && p.contains("not allocated in any IAM")),
        "{problems:#?}"
    );
}

#[test]
fn damaged_allocation_pages_fail_open_cleanly() {
    // An IAM chain that loops, a boot page with a bad magic, a directory record of an
    // unknown kind: open reports corruption (error 605), never panics.
    type Breaker = fn(&Database, &AllocUnit) -> PageId;
    let breakers: [(&str, Breaker); 4] = [
        ("iam loop", |db, a| {
            let iam = db.alloc_unit(a.id).unwrap().first_iam;
            damage(db, iam, |x| {
                x[34..38].copy_from_slice(&iam.page_no.to_le_bytes());
                x[38..40].copy_from_slice(&iam.file_id.to_le_bytes());
            });
            iam
        }),
        ("boot magic", |db, _| {
            damage(db, PageId::new(1, BOOT_PAGE), |x| x[HEADER_SIZE] ^= 0xFF);
            PageId::new(1, BOOT_PAGE)
        }),
        ("directory kind", |db, _| {
            let p = db.alloc_unit(1).unwrap().first_page;
            // The first record starts right after the header.
            damage(db, p, |x| x[HEADER_SIZE + 1] = 99);
            p
        }),
        ("file header geometry", |db, _| {
            damage(db, PageId::new(1, 0), |x| x[HEADER_SIZE + 32] ^= 1);
            PageId::new(1, 0)
        }),
    ];
    for (what, brk) in breakers {
        let fs = MemFs::new();
        let path = PathBuf::from("/dmg/open.mdf");
        let (db, a, _) = small_db(&fs, &path);
        brk(&db, &a);
        db.close().unwrap();
        let pool = db.pool().clone();
        drop(db);
        match Database::open(pool.clone(), &fs, DB, &path) {
            Ok(_) => panic!("{what}: opened a damaged database"),
            Err(e) => assert_eq!(e.number(), 605, "{what}: {e}"),
        }
        // The failed open left nothing attached: a clean database opens in the same pool.
        let fs2 = MemFs::new();
        let (db2, _, _) = small_db(&fs2, &path);
        db2.close().unwrap();
        assert!(Database::open(pool, &fs2, DB, &path).is_ok(), "{what}");
    }
}

#[test]
fn foreign_file_is_refused() {
    let fs = MemFs::new();
    let pool = BufferPool::new(64);
    let mk = |name: &str| {
        let files = vec![
            spec(1, "d", PathBuf::from(format!("/{name}/d.mdf")), 32, FileGrowth::None, None),
            spec(3, "e", PathBuf::from(format!("/{name}/e.ndf")), 32, FileGrowth::None, None),
        ];
        let db = Database::create(pool.clone(), &fs, DB, name, files).unwrap();
        db.close().unwrap();
    };
    mk("one");
    mk("two");
    // Replace one's secondary file with two's.
    let theirs = fs.open(Path::new("/two/e.ndf"), false).unwrap();
    let mut bytes = vec![0u8; theirs.len().unwrap() as usize];
    theirs.read_at(0, &mut bytes).unwrap();
    fs.open(Path::new("/one/e.ndf"), false).unwrap().write_at(0, &bytes).unwrap();
    let err = Database::open(pool.clone(), &fs, DB, Path::new("/one/d.mdf")).err().expect("must refuse");
    assert!(err.to_string().contains("does not belong"), "{err}");
    assert!(Database::open(pool, &fs, DB, Path::new("/two/d.mdf")).is_ok());
}

// ---------------------------------------------------------------------------------------
// Random sequences against a model

#[derive(Debug, Clone)]
enum Op {
    Create(u8),
    Alloc { unit: usize, count: u8, near: bool },
    Free { unit: usize, pick: usize },
    Drop(usize),
    Note { unit: usize, pick: usize, free: u16 },
    Reopen,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        2 => (0u8..3).prop_map(Op::Create),
        6 => (any::<usize>(), 1u8..40, any::<bool>()).prop_map(|(unit, count, near)| Op::Alloc { unit, count, near }),
        4 => (any::<usize>(), any::<usize>()).prop_map(|(unit, pick)| Op::Free { unit, pick }),
        1 => any::<usize>().prop_map(Op::Drop),
        2 => (any::<usize>(), any::<usize>(), 0u16..8200).prop_map(|(unit, pick, free)| Op::Note { unit, pick, free }),
        1 => Just(Op::Reopen),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// The allocator agrees with a model of which unit owns which page, through any
    /// sequence of allocations, frees, drops and reopens, and the structures stay
    /// consistent after every step.
    #[test]
    fn random_sequences_match_model(ops in proptest::collection::vec(op(), 1..40)) {
        let fs = MemFs::new();
        let primary = PathBuf::from("/model/db.mdf");
        let files = vec![
            spec(1, "m1", primary.clone(), 24, FileGrowth::Pages(24), Some(400)),
            spec(3, "m3", PathBuf::from("/model/db3.ndf"), 40, FileGrowth::Percent(50), None),
        ];
        let pool = BufferPool::new(96);
        let mut db = Database::create(pool.clone(), &fs, DB, "model", files).unwrap();
        let mut model: BTreeMap<PageId, u64> = BTreeMap::new();
        let mut units: Vec<AllocUnit> = Vec::new();
        let kinds = [AllocUnitKind::InRowData, AllocUnitKind::LobData, AllocUnitKind::RowOverflowData];
        for op in ops {
            match op {
                Op::Create(k) => units.push(db.create_alloc_unit(kinds[k as usize], 7, 0).unwrap()),
                Op::Alloc { unit, count, near } if !units.is_empty() => {
                    let u = units[unit % units.len()].clone();
                    for _ in 0..count {
                        let near = if near { model.iter().rev().find(|(_, &o)| o == u.id).map(|(&p, _)| p) } else { None };
                        let p = alloc_data(&db, &u, near).unwrap();
                        prop_assert!(model.insert(p, u.id).is_none(), "page {} handed out twice", p);
                    }
                }
                Op::Free { unit, pick } if !units.is_empty() => {
                    let u = &units[unit % units.len()];
                    let mine: Vec<PageId> = model.iter().filter(|(_, &o)| o == u.id).map(|(&p, _)| p).collect();
                    if !mine.is_empty() {
                        let p = mine[pick % mine.len()];
                        db.free_page(u.id, p).unwrap();
                        model.remove(&p);
                    }
                }
                Op::Drop(unit) if !units.is_empty() => {
                    let u = units.remove(unit % units.len());
                    db.drop_alloc_unit(u.id).unwrap();
                    model.retain(|_, o| *o != u.id);
                }
                Op::Note { unit, pick, free } if !units.is_empty() => {
                    let u = &units[unit % units.len()];
                    let mine: Vec<PageId> = model.iter().filter(|(_, &o)| o == u.id).map(|(&p, _)| p).collect();
                    if !mine.is_empty() {
                        db.note_free_space(u.id, mine[pick % mine.len()], free as usize).unwrap();
                    }
                }
                Op::Reopen => {
                    db.close().unwrap();
                    drop(db);
                    db = Database::open(pool.clone(), &fs, DB, &primary).unwrap();
                }
                _ => {}
            }
            let problems = db.check_allocation().unwrap();
            prop_assert!(problems.is_empty(), "after {:?}:\n{}", op, problems.join("\n"));
            let ids = |v: &[AllocUnit]| v.iter().map(|u| (u.id, u.kind, u.object_id)).collect::<Vec<_>>();
            prop_assert_eq!(ids(&db.alloc_units()), ids(&units));
            for u in &units {
                let want: Vec<PageId> = model.iter().filter(|(_, &o)| o == u.id).map(|(&p, _)| p).collect();
                prop_assert_eq!(db.alloc_unit_pages(u.id).unwrap(), want);
            }
            if let Some((&p, &o)) = model.iter().next() {
                prop_assert_eq!(db.page_owner(p).unwrap(), Some(o));
            }
        }
    }

    /// Garbage written into any allocation page never makes open, allocation or the
    /// consistency check panic: it is an error or a reported problem.
    #[test]
    fn garbage_in_allocation_pages_never_panics(
        which in 0usize..6,
        at in 0usize..8096,
        bytes in proptest::collection::vec(any::<u8>(), 1..64),
    ) {
        let fs = MemFs::new();
        let path = PathBuf::from("/fuzz/db.mdf");
        let (db, a, _) = small_db(&fs, &path);
        let target = match which {
            0 => PageId::new(1, 0),
            1 => PageId::new(1, 1),
            2 => PageId::new(1, 2),
            3 => PageId::new(1, BOOT_PAGE),
            4 => db.alloc_unit(a.id).unwrap().first_iam,
            _ => db.alloc_unit(1).unwrap().first_page,
        };
        damage(&db, target, |x| {
            let start = HEADER_SIZE + at.min(8096 - 1);
            let n = bytes.len().min(x.len() - start);
            x[start..start + n].copy_from_slice(&bytes[..n]);
        });
        let _ = db.check_allocation();
        let _ = alloc_data(&db, &a, None);
        let _ = db.alloc_unit_pages(a.id);
        db.close().unwrap();
        let pool = db.pool().clone();
        drop(db);
        if let Ok(db) = Database::open(pool, &fs, DB, &path) {
            let _ = db.check_allocation();
            let _ = alloc_data(&db, &a, None);
            let _ = db.find_page_with_space(a.id, 100);
            for u in db.alloc_units() {
                let _ = db.alloc_unit_pages(u.id);
                let _ = db.drop_alloc_unit(u.id);
            }
        }
    }
}
