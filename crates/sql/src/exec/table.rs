//! Tables as the executor stores them through the host: how rows and keys are laid out
//! in each index, and row-level insert, update and delete that keep every index of the
//! table in step and enforce keys.
//!
//! Layout (all keys are memcmp-ordered `types::sort_key` bytes; a DESC key column has its
//! bytes inverted, which reverses order because sort keys are prefix-free):
//! - the primary index (`indexes[0]`): a heap (index_id 0) is keyed by an 8-byte row id
//!   (the heap's row locator, standing in for SQL Server's RID); a clustered index by its
//!   key columns, plus the 8-byte row id when it is not unique (SQL Server's
//!   uniquifier). Its rows are the table's full rows, all columns in column order
//!   (non-persisted computed columns stored as NULL and computed on read).
//! - a nonclustered index: keyed by its key columns, plus the row locator when not unique;
//!   its rows are `[locator (varbinary), key columns..., included columns...]`, the
//!   locator being the primary index key of the row (SQL Server's bookmark).

use std::sync::atomic::Ordering as AtomicOrdering;
use std::sync::Arc;

use types::{SqlError, SqlType, Value};

use super::context::Cx;
use super::expr::{is_true, BExpr, Row};
use super::plan::OutCol;
use crate::catalog::{self, IndexKind, TableCounters};
use crate::host::{DbId, HostError, IndexRef, StoredColumn};

#[derive(Debug, Clone)]
pub struct IndexInfo {
    pub meta: catalog::Index,
    pub iref: IndexRef,
    /// Column positions (0-based) of the key columns.
    pub key_cols: Vec<usize>,
    pub desc: Vec<bool>,
    pub included: Vec<usize>,
    /// Bound filter predicate over the table row (filtered indexes).
    pub filter: Option<BExpr>,
    /// The constraint name when the index backs a PRIMARY KEY / UNIQUE constraint.
    pub constraint: Option<(String, &'static str)>,
    /// (the key's declared maximum length, SQL Server's limit) when the first exceeds
    /// the second: then every entry written is measured (1946).
    pub key_size: Option<(usize, usize)>,
}

/// SQL Server's key length limits: 900 bytes for a clustered index, 1,700 for a
/// nonclustered one; (limit, the word its messages use).
pub fn key_length_limit(kind: IndexKind) -> Option<(usize, &'static str)> {
    match kind {
        IndexKind::Heap => None,
        IndexKind::Clustered => Some((900, "clustered")),
        IndexKind::Nonclustered => Some((1700, "nonclustered")),
    }
}

#[derive(Debug, Clone)]
pub struct ForeignKeyInfo {
    pub name: String,
    pub columns: Vec<usize>,
    pub referenced: Arc<TableInfo>,
    pub referenced_columns: Vec<usize>,
}

#[derive(Debug, Clone)]
pub struct TableInfo {
    pub db: DbId,
    pub db_name: String,
    pub object_id: i32,
    pub schema: String,
    pub name: String,
    pub columns: Vec<catalog::Column>,
    pub indexes: Vec<IndexInfo>,
    /// Bound computed-column expressions (over the table row).
    pub computed: Vec<Option<BExpr>>,
    pub checks: Vec<(String, BExpr)>,
    pub defaults: Vec<Option<BExpr>>,
    pub foreign_keys: Vec<ForeignKeyInfo>,
    /// Foreign keys of other tables that reference this one: (constraint, child table,
    /// child columns, our columns).
    pub referenced_by: Vec<(String, Arc<TableInfo>, Vec<usize>, Vec<usize>)>,
    pub identity: Option<catalog::Identity>,
    pub counters: Arc<TableCounters>,
    /// A temp table (#t) or table variable: the name users wrote.
    pub display_name: String,
    /// Its DML triggers (see trigger.rs).
    pub triggers: Arc<[TriggerInfo]>,
}

/// Visits every row of an index in key order, reading the host in batches and resuming
/// after the last key (no latch is held while `f` runs).
pub fn for_each_stored_row(
    cx: &mut Cx,
    index: &IndexRef,
    mut f: impl FnMut(&mut Cx, Vec<u8>, Row) -> Result<(), SqlError>,
) -> Result<(), SqlError> {
    let mut last: Option<Vec<u8>> = None;
    loop {
        let mut out = Vec::new();
        let lower = match &last {
            Some(k) => std::ops::Bound::Excluded(k.as_slice()),
            None => std::ops::Bound::Unbounded,
        };
        let more = cx
            .host
            .scan(index, lower, std::ops::Bound::Unbounded, false, 1024, &mut out)
            .map_err(super::base::host_err)?;
        last = out.last().map(|(k, _)| k.clone());
        for (k, r) in out {
            f(cx, k, r)?;
        }
        if !more {
            return Ok(());
        }
    }
}

pub fn stored_columns(columns: &[catalog::Column]) -> Vec<StoredColumn> {
    columns
        .iter()
        .map(|c| StoredColumn {
            ty: c.ty,
            nullable: c.nullable || c.computed.is_some(),
            sparse: c.sparse,
            code_page: c.code_page(),
        })
        .collect()
}

/// The stored row columns of a nonclustered index.
/// The stored columns of a nonclustered index of `t`, its key and included columns found
/// by column_id.
pub fn nc_index_columns(t: &catalog::Table, ix: &catalog::Index) -> Result<Vec<StoredColumn>, SqlError> {
    let key = t.column_positions(ix.key_columns.iter().map(|(c, _)| *c))?;
    let included = t.column_positions(ix.included.iter().copied())?;
    Ok(nc_stored_columns(&t.columns, &key, &included))
}

pub fn nc_stored_columns(columns: &[catalog::Column], key_cols: &[usize], included: &[usize]) -> Vec<StoredColumn> {
    let mut v = vec![StoredColumn {
        ty: SqlType::VarBinary { len: types::Length::Bounded(900) },
        nullable: false,
        sparse: false,
        code_page: types::CodePage::CP1252,
    }];
    for &c in key_cols.iter().chain(included) {
        v.push(StoredColumn { ty: columns[c].ty, nullable: true, sparse: false, code_page: columns[c].code_page() });
    }
    v
}

impl TableInfo {
    pub fn out_cols(&self) -> Vec<OutCol> {
        self.columns.iter().map(|c| OutCol::new(c.name.clone(), c.ty, c.nullable).with_collation(c.collation)).collect()
    }

    pub fn column_index(&self, name: &str) -> Option<usize> {
        self.columns.iter().position(|c| c.name.eq_ignore_ascii_case(name))
    }

    pub fn primary(&self) -> &IndexInfo {
        &self.indexes[0]
    }

    pub fn is_heap(&self) -> bool {
        self.indexes[0].meta.kind == IndexKind::Heap
    }

    pub fn qualified_name(&self) -> String {
        format!("{}.{}", self.schema, self.display_name)
    }

    /// The full row for an index entry: the stored row itself for the primary index,
    /// else the primary row its locator points to (None if it vanished meanwhile).
    pub fn row_from_index(&self, index: usize, stored: Row, cx: &mut Cx) -> Result<Option<Row>, SqlError> {
        let mut row = if index == 0 {
            stored
        } else {
            let Some(Value::Binary(locator)) = stored.first() else {
                return Ok(None);
            };
            match cx.host.get(&self.indexes[0].iref, locator).map_err(super::base::host_err)? {
                Some(r) => r,
                None => return Ok(None),
            }
        };
        self.fill_computed(&mut row, cx)?;
        Ok(Some(row))
    }

    /// Whether rows as stored lack values that are computed when read (non-persisted
    /// computed columns, which `fill_computed` fills in).
    pub fn computes_on_read(&self) -> bool {
        self.computed.iter().zip(&self.columns).any(|(e, c)| e.is_some() && Self::computed_on_read(c))
    }

    fn computed_on_read(c: &catalog::Column) -> bool {
        c.computed.as_ref().is_some_and(|c| !c.persisted)
    }

    pub fn fill_computed(&self, row: &mut Row, cx: &mut Cx) -> Result<(), SqlError> {
        for (i, c) in self.computed.iter().enumerate() {
            if let Some(e) = c {
                if Self::computed_on_read(&self.columns[i]) {
                    let v = e.eval(row, cx)?;
                    let v = crate::scalar::convert::convert(&v, &e.ty(), &self.columns[i].ty, None)?;
                    if let Some(slot) = row.get_mut(i) {
                        *slot = v;
                    }
                }
            }
        }
        Ok(())
    }

    fn key_of(&self, ix: &IndexInfo, row: &[Value], out: &mut Vec<u8>) -> Result<(), SqlError> {
        for (k, &c) in ix.key_cols.iter().enumerate() {
            let start = out.len();
            // A column's collation decides its key: a case-sensitive unique index holds
            // 'a' and 'A'.
            types::sort_key_in(&row[c], &self.columns[c].ty, self.columns[c].collation.as_ref(), out)?;
            if ix.desc.get(k).copied().unwrap_or(false) {
                for b in &mut out[start..] {
                    *b = !*b;
                }
            }
        }
        Ok(())
    }

    /// The primary index key of a row; `row_id` is used by heaps and non-unique
    /// clustered indexes.
    pub fn primary_key(&self, row: &[Value], row_id: u64) -> Result<Vec<u8>, SqlError> {
        let mut k = Vec::new();
        self.primary_key_into(row, row_id, &mut k)?;
        Ok(k)
    }

    /// [`TableInfo::primary_key`] appended to `k`.
    fn primary_key_into(&self, row: &[Value], row_id: u64, k: &mut Vec<u8>) -> Result<(), SqlError> {
        let ix = &self.indexes[0];
        match ix.meta.kind {
            IndexKind::Heap => k.extend_from_slice(&row_id.to_be_bytes()),
            _ => {
                self.key_of(ix, row, k)?;
                if !ix.meta.unique {
                    k.extend_from_slice(&row_id.to_be_bytes());
                }
            }
        }
        Ok(())
    }

    pub fn nc_entry(&self, ix: &IndexInfo, row: &[Value], locator: &[u8]) -> Result<(Vec<u8>, Row), SqlError> {
        let mut k = Vec::new();
        self.key_of(ix, row, &mut k)?;
        if !ix.meta.unique {
            k.extend_from_slice(locator);
        }
        let mut r = Vec::with_capacity(1 + ix.key_cols.len() + ix.included.len());
        r.push(Value::Binary(locator.to_vec()));
        for &c in ix.key_cols.iter().chain(&ix.included) {
            r.push(row[c].clone());
        }
        Ok((k, r))
    }

    pub fn in_filter(&self, ix: &IndexInfo, row: &[Value], cx: &mut Cx) -> Result<bool, SqlError> {
        match &ix.filter {
            Some(f) => Ok(is_true(&f.eval(row, cx)?)),
            None => Ok(true),
        }
    }

    /// Does the primary key need a row id (heap or non-unique clustered index)?
    pub fn needs_row_id(&self) -> bool {
        let ix = &self.indexes[0];
        ix.meta.kind == IndexKind::Heap || !ix.meta.unique
    }

    pub fn next_row_id(&self, cx: &mut Cx) -> Result<u64, SqlError> {
        let c = &self.counters;
        if c.row_id.load(AtomicOrdering::Acquire) == 0 {
            let _g = c.init.lock();
            if c.row_id.load(AtomicOrdering::Acquire) == 0 {
                // Continue after the highest row id stored: scan for the largest one.
                let mut max = 0u64;
                for_each_stored_row(cx, &self.indexes[0].iref, |_, k, _| {
                    if let Some(tail) = k.len().checked_sub(8).and_then(|i| k.get(i..)) {
                        let mut b = [0u8; 8];
                        b.copy_from_slice(tail);
                        max = max.max(u64::from_be_bytes(b));
                    }
                    Ok(())
                })?;
                c.row_id.store(max + 1, AtomicOrdering::Release);
            }
        }
        Ok(c.row_id.fetch_add(1, AtomicOrdering::AcqRel))
    }

    pub(super) fn duplicate_error(&self, ix: &IndexInfo, row: &[Value]) -> SqlError {
        let vals: Vec<String> = ix
            .key_cols
            .iter()
            .map(|&c| if row[c].is_null() { "<NULL>".to_string() } else { row[c].to_string() })
            .collect();
        let key = vals.join(", ");
        let object = self.qualified_name();
        match &ix.constraint {
            Some((name, kind)) => SqlError::new(
                2627,
                14,
                1,
                format!(
                    "Violation of {kind} constraint '{name}'. Cannot insert duplicate key in object '{object}'. The duplicate key value is ({key})."
                ),
            ),
            None => SqlError::new(
                2601,
                14,
                1,
                format!(
                    "Cannot insert duplicate key row in object '{object}' with unique index '{}'. The duplicate key value is ({key}).",
                    ix.meta.name.clone().unwrap_or_default()
                ),
            ),
        }
    }

    /// Inserts a complete row (defaults, identity and computed values already filled,
    /// checks already run) into every index.
    pub fn insert_row(&self, row: &Row, cx: &mut Cx) -> Result<(), SqlError> {
        let row_id = if self.needs_row_id() { self.next_row_id(cx)? } else { 0 };
        // The key is built in the batch's key buffer (no allocation per row).
        let mut pk = std::mem::take(&mut cx.spare_key);
        pk.clear();
        let r = self.primary_key_into(row, row_id, &mut pk).and_then(|()| self.insert_keyed(row, &pk, cx));
        cx.spare_key = pk;
        r
    }

    /// 1946 when an entry `row` gives index `ix` is longer than SQL Server allows
    /// (measured as SQL Server's DATALENGTH of the key columns).
    pub(crate) fn check_key_size(&self, ix: &IndexInfo, row: &[Value]) -> Result<(), SqlError> {
        let Some((_, limit)) = ix.key_size else {
            return Ok(());
        };
        let len: usize = ix
            .key_cols
            .iter()
            .map(|&c| match &row[c] {
                Value::Null => 0,
                Value::String(s) if self.columns[c].ty.is_unicode() => 2 * types::ucs2::len(s),
                Value::String(s) => s.chars().count(),
                Value::Binary(b) => b.len(),
                _ => usize::from(self.columns[c].ty.fixed_storage_len().unwrap_or(0)),
            })
            .sum();
        if len <= limit {
            return Ok(());
        }
        let kind = key_length_limit(ix.meta.kind).map_or("", |(_, k)| k);
        Err(SqlError::new(
            1946,
            16,
            3,
            format!(
                "Operation failed. The index entry of length {len} bytes for the index '{}' exceeds the maximum length of {limit} bytes for {kind} indexes.",
                ix.meta.name.as_deref().unwrap_or_default()
            ),
        ))
    }

    /// [`TableInfo::insert_row`] under the primary key `pk`.
    fn insert_keyed(&self, row: &Row, pk: &[u8], cx: &mut Cx) -> Result<(), SqlError> {
        for ix in &self.indexes {
            self.check_key_size(ix, row)?;
        }
        let stored = self.stored_row(row);
        match cx.host.insert(&self.indexes[0].iref, pk, &stored) {
            Ok(()) => {}
            Err(HostError::Duplicate) => return Err(self.duplicate_error(&self.indexes[0], row)),
            Err(HostError::Sql(e)) => return Err(e),
        }
        for ix in &self.indexes[1..] {
            if !self.in_filter(ix, row, cx)? {
                continue;
            }
            let (k, r) = self.nc_entry(ix, row, pk)?;
            match cx.host.insert(&ix.iref, &k, &r) {
                Ok(()) => {}
                Err(HostError::Duplicate) => return Err(self.duplicate_error(ix, row)),
                Err(HostError::Sql(e)) => return Err(e),
            }
        }
        Ok(())
    }

    /// The row as stored: non-persisted computed columns as NULL.
    pub(super) fn stored_row<'r>(&self, row: &'r Row) -> std::borrow::Cow<'r, Row> {
        if self.columns.iter().any(|c| c.computed.as_ref().is_some_and(|c| !c.persisted)) {
            let mut r = row.clone();
            for (i, c) in self.columns.iter().enumerate() {
                if c.computed.as_ref().is_some_and(|c| !c.persisted) {
                    r[i] = Value::Null;
                }
            }
            std::borrow::Cow::Owned(r)
        } else {
            std::borrow::Cow::Borrowed(row)
        }
    }

    /// Deletes a row from every index; returns false when the row was no longer there
    /// (another transaction deleted it after it was read).
    pub fn delete_row(&self, pk: &[u8], row: &Row, cx: &mut Cx) -> Result<bool, SqlError> {
        for ix in &self.indexes[1..] {
            if !self.in_filter(ix, row, cx)? {
                continue;
            }
            let (k, _) = self.nc_entry(ix, row, pk)?;
            cx.host.delete(&ix.iref, &k).map_err(super::base::host_err)?;
        }
        cx.host.delete(&self.indexes[0].iref, pk).map_err(super::base::host_err)
    }

    /// Replaces `old` (stored under `pk`) by `new`; returns the new primary key.
    pub fn update_row(&self, pk: &[u8], old: &Row, new: &Row, cx: &mut Cx) -> Result<Vec<u8>, SqlError> {
        let row_id = if self.needs_row_id() && pk.len() >= 8 {
            let mut b = [0u8; 8];
            b.copy_from_slice(&pk[pk.len() - 8..]);
            u64::from_be_bytes(b)
        } else {
            0
        };
        for ix in &self.indexes {
            self.check_key_size(ix, new)?;
        }
        let new_pk = self.primary_key(new, row_id)?;
        let stored = self.stored_row(new);
        if new_pk == pk {
            cx.host.update(&self.indexes[0].iref, pk, &stored).map_err(super::base::host_err)?;
        } else {
            cx.host.delete(&self.indexes[0].iref, pk).map_err(super::base::host_err)?;
            match cx.host.insert(&self.indexes[0].iref, &new_pk, &stored) {
                Ok(()) => {}
                Err(HostError::Duplicate) => return Err(self.duplicate_error(&self.indexes[0], new)),
                Err(HostError::Sql(e)) => return Err(e),
            }
        }
        for ix in &self.indexes[1..] {
            let was = self.in_filter(ix, old, cx)?;
            let is = self.in_filter(ix, new, cx)?;
            let old_entry = if was { Some(self.nc_entry(ix, old, pk)?) } else { None };
            let new_entry = if is { Some(self.nc_entry(ix, new, &new_pk)?) } else { None };
            if old_entry == new_entry {
                continue;
            }
            if let Some((k, _)) = &old_entry {
                cx.host.delete(&ix.iref, k).map_err(super::base::host_err)?;
            }
            if let Some((k, r)) = &new_entry {
                match cx.host.insert(&ix.iref, k, r) {
                    Ok(()) => {}
                    Err(HostError::Duplicate) => return Err(self.duplicate_error(ix, new)),
                    Err(HostError::Sql(e)) => return Err(e),
                }
            }
        }
        Ok(new_pk)
    }

    /// The identity column's position (not its column_id less one once a column has been
    /// dropped).
    pub fn identity_pos(&self) -> Option<usize> {
        let id = self.identity.as_ref()?;
        self.columns.iter().position(|c| c.column_id == id.column_id)
    }

    /// Loads the identity counter on first use: it continues after the highest value
    /// stored in the column (the counter itself is not persisted; see catalog).
    fn init_identity(&self, id: &catalog::Identity, cx: &mut Cx) -> Result<(), SqlError> {
        if self.counters.identity.lock().is_some() {
            return Ok(());
        }
        let col = self.identity_pos().ok_or_else(crate::catalog::corrupt_catalog)?;
        let mut best: Option<i128> = None;
        for_each_stored_row(cx, &self.indexes[0].iref, |_, _, r| {
            if let Some(v) = r.get(col).and_then(Value::integer_part) {
                best = Some(match best {
                    None => v,
                    Some(b) if id.increment >= 0 => b.max(v),
                    Some(b) => b.min(v),
                });
            }
            Ok(())
        })?;
        let mut cur = self.counters.identity.lock();
        if cur.is_none() {
            *cur = Some(best.or(id.last));
        }
        Ok(())
    }

    /// The next identity value (IDENTITY(seed, increment)).
    pub fn next_identity(&self, cx: &mut Cx) -> Result<Option<i128>, SqlError> {
        Ok(self.next_identity_range(1, cx)?.map(|(first, _)| first))
    }

    /// `n` (> 0) identity values at once, for a batch of a statement's rows: the first
    /// one and the increment. The values are contiguous, so a batch's keys never
    /// interleave with another session's (SQL Server promises no contiguity between
    /// concurrent sessions either, and hands int identity values out of cached blocks).
    pub fn next_identity_range(&self, n: usize, cx: &mut Cx) -> Result<Option<(i128, i128)>, SqlError> {
        let Some(id) = &self.identity else {
            return Ok(None);
        };
        self.init_identity(id, cx)?;
        let mut cur = self.counters.identity.lock();
        let first = match *cur {
            Some(Some(last)) => last + id.increment,
            _ => id.seed,
        };
        *cur = Some(Some(first + id.increment * (n.max(1) as i128 - 1)));
        Ok(Some((first, id.increment)))
    }

    /// Gives back the end of a range from [`next_identity_range`](Self::next_identity_range)
    /// that a statement did not use (its rows failed or ran out), when no other session
    /// drew after it: the next value is then the one row-by-row inserts would have given.
    /// `used` values from `first` were handed to rows, out of `n` drawn.
    pub fn give_back_identity(&self, (first, inc): (i128, i128), n: usize, used: usize) {
        if used >= n {
            return;
        }
        let mut cur = self.counters.identity.lock();
        if *cur == Some(Some(first + inc * (n as i128 - 1))) {
            // With nothing used, `first - inc` is the value before the draw, or (for a
            // table that had handed none out) one that gives the seed again.
            *cur = Some(Some(first + inc * (used as i128 - 1)));
        }
    }

    /// SET IDENTITY_INSERT: an explicit value moves the counter past it.
    pub fn observe_identity(&self, v: i128, cx: &mut Cx) -> Result<(), SqlError> {
        let Some(id) = &self.identity else {
            return Ok(());
        };
        self.init_identity(id, cx)?;
        let mut cur = self.counters.identity.lock();
        let newer = match *cur {
            Some(Some(l)) => (id.increment >= 0 && v > l) || (id.increment < 0 && v < l),
            _ => true,
        };
        if newer {
            *cur = Some(Some(v));
        }
        Ok(())
    }
}

/// An identity value as a value of the column's type.
pub fn identity_value(v: i128, ty: &SqlType) -> Result<Value, SqlError> {
    let overflow = || {
        SqlError::new(8115, 16, 1, format!("Arithmetic overflow error converting IDENTITY to data type {}.", ty.name()))
    };
    Ok(match ty {
        SqlType::TinyInt => Value::TinyInt(u8::try_from(v).map_err(|_| overflow())?),
        SqlType::SmallInt => Value::SmallInt(i16::try_from(v).map_err(|_| overflow())?),
        SqlType::Int => Value::Int(i32::try_from(v).map_err(|_| overflow())?),
        SqlType::BigInt => Value::BigInt(i64::try_from(v).map_err(|_| overflow())?),
        SqlType::Decimal { precision, .. } | SqlType::Numeric { precision, .. } => {
            Value::decimal(v, *precision, 0).map_err(|_| overflow())?
        }
        _ => return Err(overflow()),
    })
}

/// What a DML statement does (the trigger events).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    Insert,
    Update,
    Delete,
}

/// A table's trigger as DML statements see it.
#[derive(Debug, Clone)]
pub struct TriggerInfo {
    pub db: DbId,
    pub object_id: i32,
    pub name: String,
    pub def: crate::catalog::Trigger,
    /// The parsed CREATE TRIGGER, parsed at its first firing and kept as long as this
    /// `TriggerInfo`: the table's `TableInfo` is rebuilt on any catalog change (ALTER or
    /// DROP TRIGGER, ALTER TABLE), so a changed trigger is parsed again.
    pub body: Arc<std::sync::OnceLock<Arc<crate::ast::CreateTrigger>>>,
}

impl TriggerInfo {
    pub(crate) fn fires_on(&self, e: Event) -> bool {
        !self.def.disabled
            && match e {
                Event::Insert => self.def.insert,
                Event::Update => self.def.update,
                Event::Delete => self.def.delete,
            }
    }
}

/// The triggers of the table or view `parent_id` (TableInfo::triggers).
pub fn triggers_of(g: &crate::catalog::Catalog, db: DbId, parent_id: i32) -> Vec<TriggerInfo> {
    g.triggers_of(parent_id)
        .map(|(o, t)| TriggerInfo { db, object_id: o.id, name: o.name.clone(), def: t.clone(), body: Arc::default() })
        .collect()
}
