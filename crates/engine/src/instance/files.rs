//! A database's files: creating, opening and removing them under the data directory,
//! the file records of CREATE DATABASE's ON / LOG ON specs (names, sizes, growth), and
//! the list sys.database_files and sys.master_files show. CREATE / ALTER DATABASE and,
//! to come, BACKUP and RESTORE share it.

use super::*;

impl Instance {
    pub(super) fn path_of(&self, rel: &str) -> PathBuf {
        self.data_dir.join(rel)
    }

    pub(super) fn remove_files(&self, r: &DbRecord) {
        for f in &r.files {
            let p = self.path_of(&f.path);
            if self.fs.exists(&p) {
                let _ = self.fs.remove(&p);
            }
        }
    }

    /// Creates a database's files, its system table and catalog index, and takes a
    /// checkpoint so it stands on its own.
    pub(super) fn create_files(&self, r: &DbRecord) -> Result<Arc<DbHandle>> {
        let id = u16::try_from(r.id).map_err(|_| EngineError::NotSupported(format!("database id {}", r.id)))?;
        let mut specs = Vec::new();
        for f in r.data_files() {
            specs.push(FileSpec {
                file_id: f.file_id,
                name: f.logical_name.clone(),
                path: self.path_of(&f.path),
                size_pages: f.size_pages,
                growth: growth_of(f),
                max_pages: (f.max_size_pages >= 0).then(|| f.max_size_pages.min(u32::MAX as i64) as u32),
            });
        }
        let log = r.log_file().ok_or_else(|| EngineError::CorruptSystemTable {
            db: MASTER,
            detail: format!("database '{}' has no log file", r.name),
        })?;
        let log_spec = LogSpec {
            path: self.path_of(&log.path),
            // At least 1 MB: room for a few VLFs.
            size_bytes: u64::from(log.size_pages.max(MB)) * 8192,
            growth: growth_of(log),
            max_bytes: (log.max_size_pages >= 0).then(|| (log.max_size_pages as u64).max(u64::from(MB)) * 8192),
        };
        let t =
            TxnDb::create(self.pool.clone(), self.fs.clone(), id, &r.name, specs, log_spec, self.log_config.clone())?;
        let made = (|| -> Result<Arc<DbHandle>> {
            let system = BTree::create(&t.db, SYSTEM_TABLE_OBJECT_ID, 1, BTreeOptions { unique: true })?;
            let catalog = BTree::create(&t.db, CATALOG_OBJECT_ID, 1, BTreeOptions { unique: true })?;
            t.checkpoint(txn::checkpoint::CheckpointKind::Internal)?;
            Ok(DbHandle::new(r, t.clone(), system, catalog.alloc_unit_id()))
        })();
        if made.is_err() {
            let _ = t.close();
            self.remove_files(r);
        }
        made
    }

    /// Opens a database with recovery and finds its system table and catalog index.
    pub(super) fn open_files(&self, r: &DbRecord) -> Result<Arc<DbHandle>> {
        let id = u16::try_from(r.id).map_err(|_| EngineError::NotSupported(format!("database id {}", r.id)))?;
        let log = r.log_file().ok_or_else(|| EngineError::CorruptSystemTable {
            db: MASTER,
            detail: format!("database '{}' has no log file", r.name),
        })?;
        // Recovery writes "Starting up database" and its own progress lines.
        let (t, _report) = TxnDb::open_named(
            self.pool.clone(),
            self.fs.clone(),
            id,
            &r.name,
            &self.path_of(&log.path),
            self.log_config.clone(),
        )?;
        let find = |object_id: u32| {
            t.db.alloc_units()
                .into_iter()
                .find(|u| u.kind == storage::AllocUnitKind::InRowData && u.object_id == object_id && u.index_id == 1)
                .map(|u| u.id)
                .ok_or_else(|| EngineError::CorruptSystemTable {
                    db: r.id,
                    detail: format!("allocation unit of system object {object_id} is missing"),
                })
        };
        let made = (|| -> Result<Arc<DbHandle>> {
            let system = BTree::open(&t.db, find(SYSTEM_TABLE_OBJECT_ID)?, BTreeOptions { unique: true })?;
            let catalog_hobt = find(CATALOG_OBJECT_ID)?;
            Ok(DbHandle::new(r, t.clone(), system, catalog_hobt))
        })();
        if made.is_err() {
            let _ = t.close();
        }
        made
    }

    /// The files of a new database from its ON / LOG ON specs (defaults: `<name>.mdf` and
    /// `<name>_log.ldf`, 8 MB each, growing by 64 MB, as SQL Server's model gives).
    pub(super) fn file_records(&self, db: &str, data: &[AstFileSpec], log: &[AstFileSpec]) -> Result<Vec<FileRecord>> {
        if log.len() > 1 {
            return Err(EngineError::NotSupported("More than one log file".into()));
        }
        let mut out = Vec::new();
        let stem = safe_file_stem(db);
        let defaults = |id: u16, t: u8| -> FileRecord {
            let (logical, file) = if t == 1 {
                (format!("{db}_log"), format!("{stem}_log.ldf"))
            } else {
                (db.to_string(), format!("{stem}.mdf"))
            };
            file_record(id, t, &logical, &file, 8 * MB, i64::from(64 * MB), false)
        };
        let mut next_id = 3u16;
        for (i, spec) in data.iter().enumerate() {
            let id = if i == 0 {
                1
            } else {
                next_id += 1;
                next_id - 1
            };
            out.push(self.file_from_spec(spec, defaults(id, 0), if i == 0 { "mdf" } else { "ndf" })?);
        }
        if data.is_empty() {
            out.push(defaults(1, 0));
        }
        match log.first() {
            Some(spec) => out.push(self.file_from_spec(spec, defaults(2, 1), "ldf")?),
            None => {
                let mut l = defaults(2, 1);
                // Without LOG ON, SQL Server names the log after the primary file's logical name.
                if let Some(primary) = out.first() {
                    if data.first().and_then(|s| s.name.as_ref()).is_some() {
                        l.logical_name = format!("{}_log", primary.logical_name);
                        l.path = format!("{}_log.ldf", safe_file_stem(&primary.logical_name));
                    }
                }
                out.push(l);
            }
        }
        let mut names: Vec<String> = Vec::new();
        for f in &out {
            if names.iter().any(|n| n.eq_ignore_ascii_case(&f.logical_name)) {
                return Err(EngineError::LogicalNameInUse(f.logical_name.clone()));
            }
            names.push(f.logical_name.clone());
        }
        let mut paths: Vec<&str> = Vec::new();
        for f in &out {
            if paths.contains(&f.path.as_str()) {
                return Err(EngineError::FileExists(self.path_of(&f.path).display().to_string()));
            }
            paths.push(&f.path);
        }
        Ok(out)
    }

    pub(super) fn file_from_spec(&self, spec: &AstFileSpec, mut f: FileRecord, ext: &str) -> Result<FileRecord> {
        if let Some(n) = spec.name.as_ref().and_then(|e| e.as_name()) {
            f.logical_name = n.to_string();
            f.path = format!("{}.{ext}", safe_file_stem(n));
        }
        if let Some(p) = spec.filename.as_ref().and_then(|e| e.as_name()) {
            f.path = base_name(p).ok_or_else(|| {
                EngineError::Sql(types::SqlError::new(
                    5105,
                    16,
                    2,
                    format!("A file activation error occurred. The physical file name '{p}' may be incorrect."),
                ))
            })?;
        }
        if let Some(s) = &spec.size {
            f.size_pages = size_pages(s)?;
        }
        if let Some(m) = &spec.max_size {
            f.max_size_pages = match m {
                MaxSize::Unlimited => -1,
                MaxSize::Size(s) => i64::from(size_pages(s)?),
            };
        }
        if let Some(g) = &spec.file_growth {
            let (growth, pct) = growth_value(g)?;
            f.growth = growth;
            f.growth_is_percent = pct;
        }
        if f.max_size_pages >= 0 && f.max_size_pages < i64::from(f.size_pages) {
            return Err(EngineError::Sql(types::SqlError::new(
                1836,
                16,
                1,
                format!("The MAXSIZE of file '{}' is smaller than its SIZE.", f.logical_name),
            )));
        }
        Ok(f)
    }
}

pub(super) fn file_record(
    file_id: u16,
    type_code: u8,
    logical: &str,
    path: &str,
    size_pages: u32,
    growth: i64,
    pct: bool,
) -> FileRecord {
    FileRecord {
        file_id,
        type_code,
        logical_name: logical.to_string(),
        path: path.to_string(),
        size_pages,
        max_size_pages: -1,
        growth,
        growth_is_percent: pct,
    }
}

pub(super) fn growth_of(f: &FileRecord) -> FileGrowth {
    match (f.growth, f.growth_is_percent) {
        (0, _) => FileGrowth::None,
        (g, true) => FileGrowth::Percent(g.clamp(1, u32::MAX as i64) as u32),
        (g, false) => FileGrowth::Pages(g.clamp(1, u32::MAX as i64) as u32),
    }
}

/// The current size of a file in pages.
pub(super) fn current_size_pages(db: &DbHandle, f: &FileRecord) -> u64 {
    if f.type_code == 1 {
        db.txn.log.space().size_bytes / 8192
    } else {
        db.txn.db.files().get(f.file_id).map(|d| u64::from(d.size_pages())).unwrap_or(0)
    }
}

fn file_infos(db: &DbHandle, data_dir: &Path) -> Vec<FileInfo> {
    let r = db.record.read();
    r.files
        .iter()
        .map(|f| FileInfo {
            db: db.id,
            file_id: i32::from(f.file_id),
            type_code: f.type_code,
            logical_name: f.logical_name.clone(),
            physical_name: data_dir.join(&f.path).display().to_string(),
            size_pages: current_size_pages(db, f) as i64,
            max_size_pages: f.max_size_pages,
            growth: f.growth,
            growth_is_percent: f.growth_is_percent,
        })
        .collect()
}

impl Instance {
    pub(crate) fn database_files(&self, id: DbId) -> Vec<FileInfo> {
        match self.dbs.read().get(&id) {
            Some(db) => file_infos(db, &self.data_dir),
            None => Vec::new(),
        }
    }
}

/// A database or logical file name made safe as a file name under the data directory:
/// path separators and characters Windows forbids become `_`, so `[../x]` stays inside.
pub(super) fn safe_file_stem(name: &str) -> String {
    let s: String =
        name.chars()
            .map(|c| {
                if c.is_control() || matches!(c, '/' | '\\' | ':' | '*' | '?' | '"' | '<' | '>' | '|') {
                    '_'
                } else {
                    c
                }
            })
            .collect();
    if s.trim_start_matches('.').is_empty() {
        "_".repeat(s.len().max(1))
    } else {
        s
    }
}

/// `x.mdf` from `C:\Program Files\...\x.mdf` or `/var/x.mdf`.
pub(super) fn base_name(path: &str) -> Option<String> {
    let b = path.rsplit(['\\', '/']).next()?.trim();
    (!b.is_empty() && b != "." && b != "..").then(|| b.to_string())
}

pub(super) fn size_error(s: &Size) -> EngineError {
    EngineError::Sql(types::SqlError::new(
        5040,
        16,
        1,
        format!("The size {} is not valid for a database file.", s.value),
    ))
}

/// A SIZE / MAXSIZE in pages (no unit: MB), rounded up to whole pages.
pub(super) fn size_pages(s: &Size) -> Result<u32> {
    let kb = match s.unit {
        None | Some(SizeUnit::Mb) => s.value.checked_mul(1024),
        Some(SizeUnit::Kb) => Some(s.value),
        Some(SizeUnit::Gb) => s.value.checked_mul(1024 * 1024),
        Some(SizeUnit::Tb) => s.value.checked_mul(1024 * 1024 * 1024),
        Some(SizeUnit::Percent) => None,
    }
    .ok_or_else(|| size_error(s))?;
    u32::try_from(kb.div_ceil(8)).map_err(|_| size_error(s))
}

/// FILEGROWTH: pages, or a percentage.
pub(super) fn growth_value(s: &Size) -> Result<(i64, bool)> {
    match s.unit {
        Some(SizeUnit::Percent) => Ok((s.value.min(i32::MAX as u64) as i64, true)),
        _ => Ok((i64::from(size_pages(s)?), false)),
    }
}
