//! Creating and re-attaching the allocation structures: formatting new files and new
//! file space (growth), reading the file headers and the boot page at open, and
//! rebuilding the in-memory caches from IAM chains and PFS.

use super::*;
use crate::buffer::BufferPool;
use crate::file::{DataFile, DataFiles, FileSpec};
use crate::io::FileSystem;
use std::collections::HashSet;
use std::hash::{BuildHasher, Hasher};
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

fn invalid(msg: impl Into<String>) -> StorageError {
    StorageError::Invalid(msg.into())
}

fn now_us() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_micros() as u64).unwrap_or(0)
}

/// A fresh binding id: random (std's per-process random hash keys) mixed with the time,
/// so files of two databases are never mistaken for one another.
fn new_binding_id() -> u64 {
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u64(now_us());
    h.write_u32(std::process::id());
    h.finish() | 1
}

/// Validates CREATE DATABASE file specs and applies the minimum file size.
pub(crate) fn prepare_specs(name: &str, mut files: Vec<FileSpec>) -> Result<Vec<FileSpec>> {
    check_str("the database name", name, NAME_CAP).map_err(invalid)?;
    let Some(first) = files.first() else {
        return Err(invalid("a database needs a primary data file"));
    };
    if first.file_id != 1 {
        return Err(invalid(format!("the primary data file must have file id 1, not {}", first.file_id)));
    }
    let mut ids = HashSet::new();
    let mut names = HashSet::new();
    let mut paths = HashSet::new();
    for f in files.iter_mut() {
        if f.file_id == 0 || f.file_id == 2 || !ids.insert(f.file_id) {
            return Err(invalid(format!(
                "file id {} is reserved or used twice (0 is invalid, 2 is the log)",
                f.file_id
            )));
        }
        check_str("a logical file name", &f.name, NAME_CAP).map_err(invalid)?;
        if !names.insert(f.name.to_lowercase()) {
            return Err(invalid(format!("the logical file name '{}' is used twice", f.name)));
        }
        if f.path.to_str().is_none() || !paths.insert(f.path.clone()) {
            return Err(invalid(format!("file path '{}' is not UTF-8 or used twice", f.path.display())));
        }
        // Smaller files are rounded up to MIN_FILE_PAGES (see there).
        f.size_pages = f.size_pages.max(MIN_FILE_PAGES);
        if let Some(max) = f.max_pages {
            if max < f.size_pages {
                return Err(invalid(format!("MAXSIZE of file '{}' is smaller than its SIZE", f.name)));
            }
        }
    }
    Ok(files)
}

/// The primary file's list entries: paths under the primary's directory are stored
/// relative to it, so a database directory can be moved as a whole.
fn file_list(specs: &[FileSpec]) -> Result<Vec<FileListEntry>> {
    let dir = specs.first().and_then(|s| s.path.parent()).unwrap_or(Path::new(""));
    specs
        .iter()
        .map(|s| {
            let (path, relative) = match s.path.strip_prefix(dir) {
                Ok(rel) if !dir.as_os_str().is_empty() || s.path.is_relative() => (rel.to_str(), true),
                _ => (s.path.to_str(), false),
            };
            let path =
                path.ok_or_else(|| invalid(format!("file path '{}' is not UTF-8", s.path.display())))?.to_string();
            Ok(FileListEntry {
                file_id: s.file_id,
                name: s.name.clone(),
                path,
                relative,
                growth: s.growth,
                size_pages: s.size_pages,
                max_pages: s.max_pages,
            })
        })
        .collect()
}

impl Database {
    /// Formats the system pages of a new database: file headers, PFS/GAM/SGAM of every
    /// file, the boot page and the first directory page. Ends with a flush, so the new
    /// database can be opened even if nothing else is ever written.
    pub(crate) fn format_new(&self, specs: &[FileSpec]) -> Result<()> {
        let binding = new_binding_id();
        let list = file_list(specs)?;
        let mut st = self.alloc.state.lock();
        for s in specs {
            let h = FileHeader {
                file_id: s.file_id,
                binding_id: binding,
                db_id: self.id,
                primary: s.file_id == 1,
                growth: s.growth,
                size_pages: s.size_pages,
                max_pages: s.max_pages,
                name: s.name.clone(),
                files: if s.file_id == 1 { list.clone() } else { Vec::new() },
            };
            let body = h.encode().map_err(invalid)?;
            let mut g = self.sys_format(
                PageId::new(s.file_id, FILE_HEADER_PAGE),
                PageType::FileHeader,
                0,
                SYSTEM_OBJECT_ID,
                0,
            )?;
            self.body_write(&mut g, 0, &body)?;
        }
        for s in specs {
            self.format_range(s.file_id, 0, s.size_pages)?;
            st.files.insert(s.file_id, FileAlloc { formatted: s.size_pages, hint: 0 });
        }
        let dir = AllocUnit {
            id: DIRECTORY_AU,
            kind: AllocUnitKind::InRowData,
            object_id: DIRECTORY_OBJECT_ID,
            index_id: 0,
            first_iam: PageId::NULL,
            root: PageId::NULL,
            first_page: PageId::NULL,
        };
        {
            let mut g = self.sys_format(PageId::new(1, BOOT_PAGE), PageType::Boot, 0, SYSTEM_OBJECT_ID, 0)?;
            let boot = BootInfo {
                version: BOOT_VERSION,
                db_id: self.id,
                binding_id: binding,
                name: self.name(),
                create_time_us: now_us(),
                create_lsn: g.lsn(),
                next_alloc_unit_id: FIRST_USER_AU,
                checkpoint_lsn: 0,
                dbcc_last_known_good_us: 0,
                txn_reserved: [0; TXN_RESERVED_LEN],
                log: None,
                directory: dir.clone(),
            };
            self.body_write(&mut g, 0, &boot.encode().map_err(invalid)?)?;
        }
        st.next_au = FIRST_USER_AU;
        st.units.insert(DIRECTORY_AU, UnitAlloc::default());
        self.alloc.units.write().insert(DIRECTORY_AU, dir);
        // The directory gets its first page now, so a new database is complete on disk.
        self.dir_add_page(&mut st)?;
        drop(st);
        self.flush()?;
        Ok(())
    }

    /// Formats pages `[old, new)` of a file for allocation: the PFS, GAM and SGAM pages
    /// that fall in the range, their PFS bytes, the GAM bits of the new full extents, and
    /// the size in the file header. Used at creation (`old` = 0) and after growth.
    pub(super) fn format_range(&self, file: u16, old: u32, new: u32) -> Result<()> {
        let mut sys: Vec<u32> = Vec::new();
        if old == 0 {
            sys.push(FILE_HEADER_PAGE);
        }
        if file == 1 && old <= BOOT_PAGE && BOOT_PAGE < new {
            sys.push(BOOT_PAGE);
        }
        // PFS pages first: every change below records something in them.
        let mut p = if old <= FIRST_PFS_PAGE {
            FIRST_PFS_PAGE as u64
        } else {
            (old as u64).div_ceil(PFS_INTERVAL as u64) * PFS_INTERVAL as u64
        };
        while p < new as u64 {
            let id = PageId::new(file, p as u32);
            self.sys_format(id, PageType::Pfs, 0, SYSTEM_OBJECT_ID, 0)?;
            sys.push(p as u32);
            p = if p == FIRST_PFS_PAGE as u64 { PFS_INTERVAL as u64 } else { p + PFS_INTERVAL as u64 };
        }
        for k in 0..intervals_in(new) {
            for (pg, ty) in [(gam_page_of_interval(k), PageType::Gam), (sgam_page_of_interval(k), PageType::Sgam)] {
                if old <= pg && pg < new {
                    self.sys_format(PageId::new(file, pg), ty, 0, SYSTEM_OBJECT_ID, 0)?;
                    sys.push(pg);
                }
            }
        }
        for p in sys {
            self.pfs_set(PageId::new(file, p), PFS_ALLOCATED)?;
        }
        let exts: Vec<u32> = (full_extents(old)..full_extents(new)).filter(|&e| !is_system_extent(e)).collect();
        self.gam_set_many(file, &exts, true)?;
        if old > 0 {
            let mut g = self.sys_write(PageId::new(file, FILE_HEADER_PAGE), PageType::FileHeader)?;
            self.body_write(&mut g, fh::SIZE, &new.to_le_bytes())?;
        }
        Ok(())
    }

    /// Makes more of a file available for allocation: formats space the file already
    /// has beyond its header's size (growth interrupted by a crash), else grows it by
    /// FILEGROWTH. `false` when the file may not grow.
    pub(super) fn grow_file(&self, st: &mut State, file: u16) -> Result<bool> {
        let df = self.files().get(file)?;
        let Some(old) = st.files.get(&file).map(|f| f.formatted) else {
            return Ok(false);
        };
        let mut size = df.size_pages();
        if size <= old {
            // At least two extents, so one usable extent appears even next to a system one.
            match df.grow(2 * EXTENT_PAGES)? {
                Some(n) => size = n,
                None => return Ok(false),
            }
        }
        if size <= old {
            return Ok(false);
        }
        self.format_range(file, old, size)?;
        if let Some(f) = st.files.get_mut(&file) {
            f.formatted = size;
        }
        Ok(true)
    }

    /// Allocates, formats and registers a new (empty) directory page.
    pub(super) fn dir_add_page(&self, st: &mut State) -> Result<PageId> {
        let near = st.dir_pages.last().copied();
        let mut g = self.allocate_locked(st, DIRECTORY_AU, near, true)?;
        let page = g.page_id();
        let fmt = PageOp::Format {
            page_type: PageType::Data,
            level: 0,
            index_id: 0,
            object_id: DIRECTORY_OBJECT_ID,
            alloc_unit_id: DIRECTORY_AU,
        };
        self.change(&mut g, &fmt)?;
        drop(g);
        let at = st.dir_pages.partition_point(|p| *p < page);
        st.dir_pages.insert(at, page);
        st.dir_room.insert(page);
        let mut dir = self.alloc.get(DIRECTORY_AU).ok_or_else(|| no_unit(DIRECTORY_AU))?;
        if dir.first_page.is_null() {
            dir.first_page = page;
            self.store_unit(st, &dir)?;
        }
        Ok(page)
    }

    /// Rebuilds the allocation state of an opened database from its pages: the
    /// directory (through unit 1's IAM chain), then every unit's IAM chain and PFS bytes.
    /// The new state is built aside and swapped in whole, so readers of the unit
    /// descriptors never see a half-built map.
    pub(crate) fn load_allocation(&self, boot: &BootInfo, sizes: &[(u16, u32)]) -> Result<()> {
        let mut st = State::default();
        let mut units_map: HashMap<u64, AllocUnit> = HashMap::new();
        let mut space_map: HashMap<u64, SpaceHints> = HashMap::new();
        for &(f, s) in sizes {
            st.files.insert(f, FileAlloc { formatted: s, hint: 0 });
        }
        st.next_au = boot.next_alloc_unit_id.max(FIRST_USER_AU);
        let dir = boot.directory.clone();
        let boot_id = PageId::new(1, BOOT_PAGE);
        if dir.id != DIRECTORY_AU {
            return Err(corrupt(
                boot_id,
                format!("the directory descriptor names unit {}, not {DIRECTORY_AU}", dir.id),
            ));
        }
        let (ua, _) = self.load_unit(&st, &dir)?;
        let chain = ua.chain.clone();
        st.units.insert(DIRECTORY_AU, ua);
        units_map.insert(DIRECTORY_AU, dir);
        let mut units = Vec::new();
        for (page, _) in self.chain_pages(DIRECTORY_AU, &chain)? {
            let g = self.sys_read(page, PageType::Data)?;
            if g.alloc_unit_id() != DIRECTORY_AU {
                return Err(corrupt(page, "a page of the allocation-unit directory belongs to another unit"));
            }
            g.check_structure().map_err(|e| corrupt(page, format!("directory page: {e}")))?;
            for (slot, rec) in g.records() {
                let u = decode_unit(rec).map_err(|d| corrupt(page, format!("directory slot {slot}: {d}")))?;
                if u.id == DIRECTORY_AU || st.dir_loc.insert(u.id, (page, slot)).is_some() {
                    return Err(corrupt(
                        page,
                        format!("directory slot {slot}: allocation unit {} is listed twice", u.id),
                    ));
                }
                units.push(u);
            }
            st.dir_pages.push(page);
            // Pages are checked for room when used; all are candidates after open.
            st.dir_room.insert(page);
        }
        for u in units {
            let (ua, space) = self.load_unit(&st, &u)?;
            st.next_au = st.next_au.max(u.id + 1);
            st.units.insert(u.id, ua);
            if let Some(sp) = space {
                space_map.insert(u.id, sp);
            }
            units_map.insert(u.id, u);
        }
        let mut cur = self.alloc.state.lock();
        *cur = st;
        *self.alloc.units.write() = units_map;
        *self.alloc.space.lock() = space_map;
        Ok(())
    }

    /// Rebuilds the allocation caches from the pages, as at open: after page changes were
    /// undone underneath them (a system transaction rolled back at run time, physical undo
    /// applied by the transaction layer). Takes the allocation mutex.
    pub fn reload_allocation(&self) -> Result<()> {
        let _gate = self.lock_allocation();
        let boot = self.boot_info()?;
        let files: Vec<u16> = self.alloc.state.lock().files.keys().copied().collect();
        let mut sizes = Vec::with_capacity(files.len());
        for f in files {
            sizes.push((f, self.file_header(f)?.size_pages));
        }
        self.load_allocation(&boot, &sizes)
    }
}

fn read_header(pool: &BufferPool, db_id: u16, file: u16) -> Result<FileHeader> {
    let id = PageId::new(file, FILE_HEADER_PAGE);
    let g = pool.read(db_id, id)?;
    if g.page_type() != Some(PageType::FileHeader) {
        return Err(corrupt(id, format!("expected a file header page, found page type {}", g.page_type_raw())));
    }
    FileHeader::decode(g.body()).map_err(|d| corrupt(id, d))
}

/// Checks a file against its header and takes its settings from it. Returns the size
/// formatted for allocation.
fn adopt_header(f: &DataFile, h: &FileHeader) -> Result<u32> {
    let id = PageId::new(h.file_id, FILE_HEADER_PAGE);
    if f.size_pages() < h.size_pages {
        return Err(corrupt(
            id,
            format!(
                "file '{}' has {} pages but its header records {}: the file was truncated",
                f.path(),
                f.size_pages(),
                h.size_pages
            ),
        ));
    }
    if h.size_pages < MIN_FILE_PAGES {
        return Err(corrupt(id, format!("the header records a size of {} pages", h.size_pages)));
    }
    let mut s = f.spec.write();
    s.name = h.name.clone();
    s.growth = h.growth;
    s.max_pages = h.max_pages;
    s.size_pages = f.size_pages();
    Ok(h.size_pages)
}

/// Opens the data files of a database from its primary file (already in `df` as file 1
/// and attached to the pool), checking that every file belongs to it, and reads the boot
/// page. Returns the boot page and the formatted size of each file.
pub(crate) fn attach_files(
    pool: &BufferPool,
    fs: &dyn FileSystem,
    db_id: u16,
    df: &DataFiles,
    primary: &Path,
) -> Result<(BootInfo, Vec<(u16, u32)>)> {
    let ph = read_header(pool, db_id, 1)?;
    let hid = PageId::new(1, FILE_HEADER_PAGE);
    if ph.file_id != 1 || !ph.primary {
        return Err(corrupt(
            hid,
            format!("'{}' is not a primary data file (file id {})", primary.display(), ph.file_id),
        ));
    }
    let mut sizes = vec![(1, adopt_header(&*df.get(1)?, &ph)?)];
    let dir = primary.parent().unwrap_or(Path::new(""));
    let mut seen = HashSet::from([1u16]);
    for e in ph.files.iter().filter(|e| e.file_id != 1) {
        if e.file_id == 0 || e.file_id == 2 || !seen.insert(e.file_id) {
            return Err(corrupt(hid, format!("the file list names file id {} twice or a reserved id", e.file_id)));
        }
        let path = if e.relative { dir.join(&e.path) } else { PathBuf::from(&e.path) };
        let spec = FileSpec {
            file_id: e.file_id,
            name: e.name.clone(),
            path,
            size_pages: 0,
            growth: e.growth,
            max_pages: e.max_pages,
        };
        let f = df.add(DataFile::open(fs, db_id, spec, false)?);
        let h = read_header(pool, db_id, e.file_id)?;
        if h.file_id != e.file_id || h.primary || h.binding_id != ph.binding_id {
            return Err(corrupt(
                PageId::new(e.file_id, FILE_HEADER_PAGE),
                format!(
                    "file '{}' does not belong to this database (file id {}, binding {:#x})",
                    f.path(),
                    h.file_id,
                    h.binding_id
                ),
            ));
        }
        sizes.push((e.file_id, adopt_header(&f, &h)?));
    }
    let bid = PageId::new(1, BOOT_PAGE);
    let boot = {
        let g = pool.read(db_id, bid)?;
        if g.page_type() != Some(PageType::Boot) {
            return Err(corrupt(bid, format!("expected the boot page, found page type {}", g.page_type_raw())));
        }
        BootInfo::decode(g.body()).map_err(|d| corrupt(bid, d))?
    };
    if boot.binding_id != ph.binding_id {
        return Err(corrupt(bid, "the boot page belongs to another database than the primary file's header"));
    }
    Ok((boot, sizes))
}

// ---------------------------------------------------------------------------------------
// Boot page fields

impl Database {
    /// The boot page's fields (name, ids, creation, the transaction layer's fields, the
    /// directory descriptor).
    pub fn boot_info(&self) -> Result<BootInfo> {
        let id = PageId::new(1, BOOT_PAGE);
        let g = self.sys_read(id, PageType::Boot)?;
        BootInfo::decode(g.body()).map_err(|d| corrupt(id, d))
    }

    fn boot_write(&self, at: usize, bytes: &[u8]) -> Result<()> {
        let mut g = self.sys_write(PageId::new(1, BOOT_PAGE), PageType::Boot)?;
        self.body_write(&mut g, at, bytes)
    }

    /// Records the LSN of the last checkpoint (dbi_checkptLSN) in the boot page.
    pub fn set_checkpoint_lsn(&self, lsn: u64) -> Result<()> {
        self.boot_write(boot::CHECKPOINT_LSN, &lsn.to_le_bytes())
    }

    /// Records the time (µs since the Unix epoch) of the last CHECKDB without errors.
    pub fn set_dbcc_last_known_good(&self, time_us: u64) -> Result<()> {
        self.boot_write(boot::DBCC_LAST_KNOWN_GOOD, &time_us.to_le_bytes())
    }

    /// Records the log file in the boot page.
    pub fn set_log_file_info(&self, log: &LogFileInfo) -> Result<()> {
        let (fixed, strings) = layout::encode_log(log).map_err(invalid)?;
        let mut g = self.sys_write(PageId::new(1, BOOT_PAGE), PageType::Boot)?;
        self.body_write(&mut g, boot::LOG, &fixed)?;
        self.body_write(&mut g, boot::LOG_NAME, &strings)
    }

    /// Writes into the 64 bytes the boot page reserves for the transaction layer
    /// (`at + bytes.len()` <= 64), so it can define fields without a format change here.
    pub fn set_boot_txn_reserved(&self, at: usize, bytes: &[u8]) -> Result<()> {
        if at.checked_add(bytes.len()).map_or(true, |end| end > TXN_RESERVED_LEN) {
            return Err(invalid(format!("the boot page reserves {TXN_RESERVED_LEN} bytes for the transaction layer")));
        }
        self.boot_write(boot::TXN_RESERVED + at, bytes)
    }

    /// The data files as the primary file's header lists them.
    pub fn file_list(&self) -> Result<Vec<FileListEntry>> {
        Ok(read_header(self.pool(), self.id, 1)?.files)
    }

    /// A data file's header page.
    pub fn file_header(&self, file_id: u16) -> Result<FileHeader> {
        read_header(self.pool(), self.id, file_id)
    }
}
