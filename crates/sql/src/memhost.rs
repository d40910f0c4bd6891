//! An in-memory [`Host`]: ordered maps per index and an undo list per transaction. It is
//! how the executor is tested without storage (DESIGN.md: "This keeps the executor
//! testable on an in-memory implementation"), with the semantics the engine's host has:
//! duplicate keys, rollback, savepoints, databases with catalogs. It takes no locks: one
//! session at a time.

use std::collections::{BTreeMap, HashMap};
use std::ops::Bound;
use std::sync::Arc;

use types::{SqlError, Value};

use crate::ast::{AlterDatabase, CreateDatabase};
use crate::catalog::{catalog_index_columns, Catalog, SharedCatalog};
use crate::host::*;

type Tree = BTreeMap<Vec<u8>, Vec<Value>>;

enum Undo {
    /// Restore `row` (None: remove the key) in the index.
    Row {
        index: (DbId, u64),
        key: Vec<u8>,
        row: Option<Vec<Value>>,
    },
    CreatedIndex((DbId, u64)),
    DroppedIndex((DbId, u64), Tree),
    Savepoint(String),
}

struct MemDb {
    info: DatabaseInfo,
    catalog: Arc<SharedCatalog>,
}

/// The in-memory host. See the module doc.
pub struct MemHost {
    trees: HashMap<(DbId, u64), Tree>,
    dbs: BTreeMap<DbId, MemDb>,
    next_hobt: u64,
    undo: Vec<Undo>,
    in_txn: bool,
    spid: i32,
    /// Sequence bounds (see [`Sequences`]): kept as long as the host.
    sequence_bounds: HashMap<(DbId, i32), (u32, i128)>,
}

impl Default for MemHost {
    fn default() -> Self {
        MemHost::new()
    }
}

impl MemHost {
    /// A host with the four system databases.
    pub fn new() -> MemHost {
        let mut h = MemHost {
            trees: HashMap::new(),
            dbs: BTreeMap::new(),
            next_hobt: 1,
            undo: Vec::new(),
            in_txn: false,
            spid: 51,
            sequence_bounds: HashMap::new(),
        };
        for (id, name) in [(1, "master"), (2, "tempdb"), (3, "model"), (4, "msdb")] {
            h.add_database(id, name);
        }
        h
    }

    fn add_database(&mut self, id: DbId, name: &str) {
        let hobt = self.next_hobt;
        self.next_hobt += 1;
        self.trees.insert((id, hobt), Tree::new());
        let catalog_index = IndexRef {
            db: id,
            hints: Default::default(),
            hobt,
            object_id: 0,
            index_id: 1,
            columns: catalog_index_columns().into(),
        };
        let info = DatabaseInfo {
            id,
            name: name.to_string(),
            state: "ONLINE",
            recovery_model: if id == 2 { "SIMPLE" } else { "FULL" },
            delayed_durability: "DISABLED",
            target_recovery_time_seconds: 60,
            read_only: false,
            page_verify: "CHECKSUM",
            collation: types::Collation::DEFAULT,
            log_reuse_wait: "NOTHING",
            create_date: Value::DateTime { days: 45_000, ticks: 0 },
            catalog_index,
        };
        self.dbs.insert(id, MemDb { info, catalog: Arc::new(SharedCatalog::new(Catalog::new())) });
    }

    fn set_collation(&mut self, db: DbId, c: types::Collation) {
        if let Some(d) = self.dbs.get_mut(&db) {
            d.info.collation = c;
            *d.catalog.collation.write() = c;
        }
    }

    fn tree(&mut self, index: &IndexRef) -> HostResult<&mut Tree> {
        self.trees
            .get_mut(&(index.db, index.hobt))
            .ok_or_else(|| HostError::Sql(SqlError::new(601, 12, 3, "Could not continue scan: the index is gone.")))
    }

    fn log(&mut self, u: Undo) {
        if self.in_txn {
            self.undo.push(u);
        }
    }

    fn undo_to(&mut self, savepoint: Option<&str>) {
        while let Some(u) = self.undo.pop() {
            match u {
                Undo::Row { index, key, row } => {
                    if let Some(t) = self.trees.get_mut(&index) {
                        match row {
                            Some(r) => {
                                t.insert(key, r);
                            }
                            None => {
                                t.remove(&key);
                            }
                        }
                    }
                }
                Undo::CreatedIndex(k) => {
                    self.trees.remove(&k);
                }
                Undo::DroppedIndex(k, t) => {
                    self.trees.insert(k, t);
                }
                Undo::Savepoint(name) => {
                    if savepoint.is_some_and(|s| s.eq_ignore_ascii_case(&name)) {
                        // Keep the savepoint: ROLLBACK TRAN s can be repeated.
                        self.undo.push(Undo::Savepoint(name));
                        return;
                    }
                }
            }
        }
    }
}

impl DataAccess for MemHost {
    fn scan(
        &mut self,
        index: &IndexRef,
        lower: Bound<&[u8]>,
        upper: Bound<&[u8]>,
        reverse: bool,
        max: usize,
        out: &mut Vec<KeyRow>,
    ) -> HostResult<bool> {
        let t = self.tree(index)?;
        if let (Bound::Included(l) | Bound::Excluded(l), Bound::Included(u) | Bound::Excluded(u)) = (lower, upper) {
            if l > u {
                return Ok(false);
            }
        }
        let range = t.range::<[u8], _>((lower, upper));
        let mut n = 0;
        if reverse {
            for (k, v) in range.rev() {
                if n == max {
                    return Ok(true);
                }
                out.push((k.clone(), v.clone()));
                n += 1;
            }
        } else {
            for (k, v) in range {
                if n == max {
                    return Ok(true);
                }
                out.push((k.clone(), v.clone()));
                n += 1;
            }
        }
        Ok(false)
    }
    fn get(&mut self, index: &IndexRef, key: &[u8]) -> HostResult<Option<Vec<Value>>> {
        Ok(self.tree(index)?.get(key).cloned())
    }
    fn insert(&mut self, index: &IndexRef, key: &[u8], row: &[Value]) -> HostResult<()> {
        let t = self.tree(index)?;
        if t.contains_key(key) {
            return Err(HostError::Duplicate);
        }
        t.insert(key.to_vec(), row.to_vec());
        self.log(Undo::Row { index: (index.db, index.hobt), key: key.to_vec(), row: None });
        Ok(())
    }
    fn update(&mut self, index: &IndexRef, key: &[u8], row: &[Value]) -> HostResult<bool> {
        let t = self.tree(index)?;
        let Some(slot) = t.get_mut(key) else {
            return Ok(false);
        };
        let old = std::mem::replace(slot, row.to_vec());
        self.log(Undo::Row { index: (index.db, index.hobt), key: key.to_vec(), row: Some(old) });
        Ok(true)
    }
    fn delete(&mut self, index: &IndexRef, key: &[u8]) -> HostResult<bool> {
        let t = self.tree(index)?;
        let Some(old) = t.remove(key) else {
            return Ok(false);
        };
        self.log(Undo::Row { index: (index.db, index.hobt), key: key.to_vec(), row: Some(old) });
        Ok(true)
    }
    fn create_index(
        &mut self,
        db: DbId,
        _object_id: i32,
        _index_id: i32,
        _columns: &[StoredColumn],
    ) -> HostResult<u64> {
        let hobt = self.next_hobt;
        self.next_hobt += 1;
        self.trees.insert((db, hobt), Tree::new());
        self.log(Undo::CreatedIndex((db, hobt)));
        Ok(hobt)
    }
    fn drop_index(&mut self, index: &IndexRef) -> HostResult<()> {
        if let Some(t) = self.trees.remove(&(index.db, index.hobt)) {
            self.log(Undo::DroppedIndex((index.db, index.hobt), t));
        }
        Ok(())
    }
}

impl Transactions for MemHost {
    fn begin(&mut self, _name: &str) -> HostResult<()> {
        self.in_txn = true;
        self.undo.clear();
        Ok(())
    }
    fn commit(&mut self, _delayed: Option<bool>) -> HostResult<()> {
        self.in_txn = false;
        self.undo.clear();
        Ok(())
    }
    fn rollback(&mut self) -> HostResult<()> {
        self.undo_to(None);
        self.in_txn = false;
        Ok(())
    }
    fn save(&mut self, name: &str) -> HostResult<()> {
        self.log(Undo::Savepoint(name.to_string()));
        Ok(())
    }
    fn rollback_to(&mut self, name: &str) -> HostResult<()> {
        if !self.undo.iter().any(|u| matches!(u, Undo::Savepoint(s) if s.eq_ignore_ascii_case(name))) {
            return Err(HostError::Sql(SqlError::new(
                6401,
                16,
                1,
                format!("Cannot roll back {name}. No transaction or savepoint of that name was found."),
            )));
        }
        self.undo_to(Some(name));
        Ok(())
    }
    fn in_transaction(&self) -> bool {
        self.in_txn
    }
    fn set_isolation(&mut self, _level: Isolation) -> HostResult<()> {
        Ok(())
    }
    fn set_lock_timeout(&mut self, _ms: i64) {}
}

impl InstanceAdmin for MemHost {
    fn databases(&self) -> Vec<DatabaseInfo> {
        self.dbs.values().map(|d| d.info.clone()).collect()
    }
    fn database_files(&self, db: DbId) -> Vec<FileInfo> {
        let Some(d) = self.dbs.get(&db) else {
            return Vec::new();
        };
        let name = &d.info.name;
        vec![
            FileInfo {
                db,
                file_id: 1,
                type_code: 0,
                logical_name: name.clone(),
                physical_name: format!("{name}.mdf"),
                size_pages: 1024,
                max_size_pages: -1,
                growth: 8192,
                growth_is_percent: false,
            },
            FileInfo {
                db,
                file_id: 2,
                type_code: 1,
                logical_name: format!("{name}_log"),
                physical_name: format!("{name}_log.ldf"),
                size_pages: 1024,
                max_size_pages: -1,
                growth: 8192,
                growth_is_percent: false,
            },
        ]
    }
    fn create_database(&mut self, stmt: &CreateDatabase) -> HostResult<DbId> {
        let name = stmt.name.value.clone();
        if self.dbs.values().any(|d| d.info.name.eq_ignore_ascii_case(&name)) {
            return Err(HostError::Sql(SqlError::new(
                1801,
                16,
                3,
                format!("Database '{name}' already exists. Choose a different database name."),
            )));
        }
        let collation = match &stmt.collation {
            Some(n) => crate::exec::query::collation_named(&n.value)?,
            None => types::Collation::DEFAULT,
        };
        let id = self.dbs.keys().max().copied().unwrap_or(4).max(4) + 1;
        self.add_database(id, &name);
        self.set_collation(id, collation);
        Ok(id)
    }
    fn alter_database(&mut self, db: DbId, stmt: &AlterDatabase) -> HostResult<()> {
        if let crate::ast::AlterDatabaseAction::Collate(n) = &stmt.action {
            let c = crate::exec::query::collation_named(&n.value)?;
            self.set_collation(db, c);
        }
        Ok(())
    }
    fn drop_database(&mut self, db: DbId) -> HostResult<()> {
        self.dbs.remove(&db);
        self.trees.retain(|k, _| k.0 != db);
        Ok(())
    }
    fn checkpoint(&mut self, _db: DbId, _duration_seconds: Option<i32>) -> HostResult<()> {
        Ok(())
    }
    fn flush_log(&mut self, _db: DbId) -> HostResult<()> {
        Ok(())
    }
    fn catalog(&self, db: DbId) -> HostResult<Arc<SharedCatalog>> {
        self.dbs.get(&db).map(|d| d.catalog.clone()).ok_or_else(|| {
            HostError::Sql(SqlError::new(
                911,
                16,
                1,
                format!("Database '{db}' does not exist. Make sure that the name is entered correctly."),
            ))
        })
    }
}

impl Diagnostics for MemHost {}

impl Sequences for MemHost {
    fn sequence_bound(&mut self, db: DbId, object_id: i32) -> HostResult<Option<(u32, i128)>> {
        Ok(self.sequence_bounds.get(&(db, object_id)).copied())
    }
    fn set_sequence_bound(&mut self, db: DbId, object_id: i32, restarts: u32, bound: i128) -> HostResult<()> {
        self.sequence_bounds.insert((db, object_id), (restarts, bound));
        Ok(())
    }
}

impl Logins for MemHost {
    fn session_id(&self) -> i32 {
        self.spid
    }
}
