//! The byte encoding of catalog rows (objects and schemas): what the single
//! `varbinary(max)` column of a database's catalog index holds.
//!
//! Compact, versioned and strict: every row starts with a format version byte, and a
//! decoder that meets an unknown version, a truncated field, an out-of-range type
//! parameter, an unknown tag, invalid UTF-8 or bytes left over returns the
//! corrupt-catalog error (never panics, never allocates more than the input can hold).
//!
//! # Primitives
//!
//! All integers are little-endian.
//!
//! | name | bytes |
//! |---|---|
//! | `u8`, `i32`, `u32`, `u64`, `i128` | 1, 4, 4, 8, 16 (two's complement) |
//! | `bool` | 1: 0 or 1 (anything else is corrupt) |
//! | `str` | `u32` byte length, then UTF-8 |
//! | `opt<T>` | `u8` 0 (absent) or 1, then `T` |
//! | `list<T>` | `u32` count, then the elements |
//! | `type` | `u8` tag, then the parameters (below) |
//! | `value` | `u8` 0 = NULL, or 1 then `type`, `u32` length and the bytes of `types::encode` for that type |
//!
//! SqlType tags: 1 bit, 2 tinyint, 3 smallint, 4 int, 5 bigint, 6 decimal (`u8` precision,
//! `u8` scale), 7 numeric (same), 8 money, 9 smallmoney, 10 real, 11 float, 12 date,
//! 13 time (`u8` scale), 14 datetime, 15 smalldatetime, 16 datetime2 (`u8` scale),
//! 17 datetimeoffset (`u8` scale), 18 char (`u16` n), 19 varchar (`u16` n, 0xFFFF = max),
//! 20 nchar (`u16` n), 21 nvarchar (`u16` n or 0xFFFF), 22 binary (`u16` n), 23 varbinary
//! (`u16` n or 0xFFFF), 24 uniqueidentifier, 25 xml, 26 sql_variant, 27 text, 28 ntext,
//! 29 image, 30 hierarchyid, 31 geometry, 32 geography. Parameters are
//! checked on decoding with the same rules as a declaration (decimal precision 1-38,
//! scale <= precision, ...).
//!
//! # Schema row
//!
//! `u8` version (1), `i32` schema id, `str` name, `i32` principal id.
//!
//! # Type row
//!
//! `u8` version (1), `i32` user type id, `i32` schema id, `str` name, `i32` the table
//! type's object id (0 for an alias type), `str` the CREATE TYPE text.
//!
//! # Principal row
//!
//! `u8` version (1), `i32` principal id, `str` name, `u8` type (`S` SQL user, `R` role),
//! `opt<str>` login, `opt<str>` default schema, `list<i32>` roles it is a member of,
//! `list<permission>`; a permission is `u8` class (0 database, 1 object, 3 schema), `i32`
//! major id, `str` permission name (upper case), `u8` state (`G` or `D`).
//!
//! # Object row
//!
//! `u8` version (1), `u8` kind (1 table, 2 view, 3 procedure, 4 scalar function,
//! 5 inline table-valued function, 6 multi-statement table-valued function, 7 DML trigger,
//! 8 sequence), `i32` object id, `i32` schema id, `str` name, `value`
//! create_date, `value` modify_date, then the body:
//!
//! - modules (kinds 2-6): `str` definition.
//! - sequences (kind 8): `type`, `i128` start, `i128` increment, `i128` minimum, `i128`
//!   maximum, `bool` cycle, `u8` cache (0 NO CACHE, 1 CACHE of the server's size, 2
//!   CACHE n followed by `i32` n), `u32` restart count (ALTER SEQUENCE ... RESTART adds
//!   one; the values handed out are in the host's system table, see `sql::sequence`).
//! - DML triggers (kind 7): `str` definition, `i32` parent table or view id, `u8` flags
//!   (bit 0 INSERT, bit 1 UPDATE, bit 2 DELETE, bit 3 INSTEAD OF, bit 4 disabled, bit 5
//!   NOT FOR REPLICATION; other bits must be 0).
//! - tables (kind 1):
//!   - `list<column>`; a column is `i32` column id, `str` name, `type`, `u8` flags (bit 0
//!     nullable, bit 1 identity, bit 2 sparse, bit 3 collation; other bits must be 0),
//!     `opt<default>` (`i32` object id, `str` name, `str` definition), `opt<computed>`
//!     (`str` definition, `bool` persisted), then with bit 3 only a `str` collation name
//!     (a column's COLLATE other than the default; a name the server does not know is
//!     corrupt). Rows written before bit 3 existed read as the default collation;
//!   - `list<index>`; an index is `i32` index id, `opt<str>` name, `u8` kind (0 heap,
//!     1 clustered, 2 nonclustered), `bool` unique, `opt<i32>` primary key constraint id,
//!     `opt<i32>` unique constraint id, `list<(i32 column id, bool descending)>` key
//!     columns, `list<i32>` included columns, `opt<str>` filter, `u64` HoBT id;
//!   - `list<check>`: `i32` object id, `str` name, `str` definition;
//!   - `list<foreign key>`: `i32` object id, `str` name, `list<i32>` columns, `i32`
//!     referenced object id, `list<i32>` referenced columns, `u8` ON DELETE, `u8` ON UPDATE
//!     (0 NO ACTION, 1 CASCADE, 2 SET NULL, 3 SET DEFAULT);
//!   - `opt<identity>`: `i32` column id, `i128` seed, `i128` increment, `opt<i128>` last
//!     value handed out (informational: after a restart the executor continues from the
//!     highest stored value);
//!   - version 2 only: `i32` max_column_id_used. A table row is written as version 2
//!     only when a column above every remaining column id was dropped (the highest id
//!     used is not the highest id present); otherwise it is version 1, whose
//!     max_column_id_used is its highest column id. Other rows are always version 1.
//!
//!   [`Table::next_row_id`] is not stored (it is recomputed at load) and decodes as 0.

use types::{Length, SqlError, SqlType, Value};

use super::{
    corrupt_catalog, CheckConstraint, Column, ComputedColumn, DefaultConstraint, ForeignKey, Identity, Index,
    IndexKind, Module, Object, ObjectBody, PermissionEntry, Principal, PrincipalKind, ReferentialAction, Schema,
    Sequence, Table, Trigger, UserType,
};

/// The format version written by this code.
pub const FORMAT_VERSION: u8 = 1;
/// A table row that also carries max_column_id_used (see the module doc).
const TABLE_GAP_VERSION: u8 = 2;

const KIND_TABLE: u8 = 1;
const KIND_VIEW: u8 = 2;
const KIND_PROCEDURE: u8 = 3;
const KIND_SCALAR_FUNCTION: u8 = 4;
const KIND_INLINE_FUNCTION: u8 = 5;
const KIND_TABLE_FUNCTION: u8 = 6;
const KIND_TRIGGER: u8 = 7;
const KIND_SEQUENCE: u8 = 8;

const TRG_INSERT: u8 = 1;
const TRG_UPDATE: u8 = 2;
const TRG_DELETE: u8 = 4;
const TRG_INSTEAD_OF: u8 = 8;
const TRG_DISABLED: u8 = 16;
const TRG_NOT_FOR_REPLICATION: u8 = 32;

const MAX_LEN: u16 = 0xFFFF;

const COL_NULLABLE: u8 = 1;
const COL_IDENTITY: u8 = 2;
const COL_SPARSE: u8 = 4;
const COL_COLLATION: u8 = 8;

// ---------------------------------------------------------------------------------------
// Encoding

struct Writer {
    out: Vec<u8>,
}

impl Writer {
    fn u8(&mut self, v: u8) {
        self.out.push(v);
    }
    fn bool(&mut self, v: bool) {
        self.out.push(u8::from(v));
    }
    fn u16(&mut self, v: u16) {
        self.out.extend_from_slice(&v.to_le_bytes());
    }
    fn i32(&mut self, v: i32) {
        self.out.extend_from_slice(&v.to_le_bytes());
    }
    fn u32(&mut self, v: u32) {
        self.out.extend_from_slice(&v.to_le_bytes());
    }
    fn u64(&mut self, v: u64) {
        self.out.extend_from_slice(&v.to_le_bytes());
    }
    fn i128(&mut self, v: i128) {
        self.out.extend_from_slice(&v.to_le_bytes());
    }
    fn len(&mut self, n: usize) {
        // Catalog strings and lists are far below 4 GB (a module is at most a batch).
        self.u32(u32::try_from(n).unwrap_or(u32::MAX));
    }
    fn bytes(&mut self, b: &[u8]) {
        self.len(b.len());
        self.out.extend_from_slice(b);
    }
    fn str(&mut self, s: &str) {
        self.bytes(s.as_bytes());
    }
    fn opt<T>(&mut self, v: Option<T>, f: impl FnOnce(&mut Self, T)) {
        match v {
            None => self.u8(0),
            Some(v) => {
                self.u8(1);
                f(self, v);
            }
        }
    }
    fn list<T>(&mut self, items: &[T], mut f: impl FnMut(&mut Self, &T)) {
        self.len(items.len());
        for i in items {
            f(self, i);
        }
    }

    fn length(&mut self, len: Length) {
        match len {
            Length::Bounded(n) => self.u16(n),
            Length::Max => self.u16(MAX_LEN),
        }
    }

    fn sql_type(&mut self, ty: &SqlType) {
        match *ty {
            SqlType::Bit => self.u8(1),
            SqlType::TinyInt => self.u8(2),
            SqlType::SmallInt => self.u8(3),
            SqlType::Int => self.u8(4),
            SqlType::BigInt => self.u8(5),
            SqlType::Decimal { precision, scale } => {
                self.u8(6);
                self.u8(precision);
                self.u8(scale);
            }
            SqlType::Numeric { precision, scale } => {
                self.u8(7);
                self.u8(precision);
                self.u8(scale);
            }
            SqlType::Money => self.u8(8),
            SqlType::SmallMoney => self.u8(9),
            SqlType::Real => self.u8(10),
            SqlType::Float => self.u8(11),
            SqlType::Date => self.u8(12),
            SqlType::Time { scale } => {
                self.u8(13);
                self.u8(scale);
            }
            SqlType::DateTime => self.u8(14),
            SqlType::SmallDateTime => self.u8(15),
            SqlType::DateTime2 { scale } => {
                self.u8(16);
                self.u8(scale);
            }
            SqlType::DateTimeOffset { scale } => {
                self.u8(17);
                self.u8(scale);
            }
            SqlType::Char { len } => {
                self.u8(18);
                self.u16(len);
            }
            SqlType::VarChar { len } => {
                self.u8(19);
                self.length(len);
            }
            SqlType::NChar { len } => {
                self.u8(20);
                self.u16(len);
            }
            SqlType::NVarChar { len } => {
                self.u8(21);
                self.length(len);
            }
            SqlType::Binary { len } => {
                self.u8(22);
                self.u16(len);
            }
            SqlType::VarBinary { len } => {
                self.u8(23);
                self.length(len);
            }
            SqlType::UniqueIdentifier => self.u8(24),
            SqlType::Xml => self.u8(25),
            SqlType::Variant => self.u8(26),
            SqlType::Text => self.u8(27),
            SqlType::NText => self.u8(28),
            SqlType::Image => self.u8(29),
            SqlType::HierarchyId => self.u8(30),
            SqlType::Geometry => self.u8(31),
            SqlType::Geography => self.u8(32),
        }
    }

    fn value(&mut self, v: &Value) {
        let ty = v.own_type();
        let mut bytes = Vec::new();
        match (ty, v) {
            (Some(ty), v) if types::encode(v, &ty, &mut bytes).is_ok() => {
                self.u8(1);
                self.sql_type(&ty);
                self.bytes(&bytes);
            }
            // NULL, or a value that does not encode as its own type (cannot happen for
            // the values the catalog keeps): stored as NULL rather than failing DDL.
            _ => self.u8(0),
        }
    }
}

fn action_code(a: ReferentialAction) -> u8 {
    match a {
        ReferentialAction::NoAction => 0,
        ReferentialAction::Cascade => 1,
        ReferentialAction::SetNull => 2,
        ReferentialAction::SetDefault => 3,
    }
}

fn kind_code(k: IndexKind) -> u8 {
    match k {
        IndexKind::Heap => 0,
        IndexKind::Clustered => 1,
        IndexKind::Nonclustered => 2,
    }
}

fn write_table(w: &mut Writer, t: &Table) {
    w.list(&t.columns, |w, c| {
        w.i32(c.column_id);
        w.str(&c.name);
        w.sql_type(&c.ty);
        let mut flags = 0;
        if c.nullable {
            flags |= COL_NULLABLE;
        }
        if c.is_identity {
            flags |= COL_IDENTITY;
        }
        if c.sparse {
            flags |= COL_SPARSE;
        }
        if c.collation.is_some() {
            flags |= COL_COLLATION;
        }
        w.u8(flags);
        w.opt(c.default.as_ref(), |w, d| {
            w.i32(d.object_id);
            w.str(&d.name);
            w.str(&d.definition);
        });
        w.opt(c.computed.as_ref(), |w, cc| {
            w.str(&cc.definition);
            w.bool(cc.persisted);
        });
        if let Some(coll) = &c.collation {
            w.str(&coll.name());
        }
    });
    w.list(&t.indexes, |w, i| {
        w.i32(i.index_id);
        w.opt(i.name.as_deref(), |w, n| w.str(n));
        w.u8(kind_code(i.kind));
        w.bool(i.unique);
        w.opt(i.primary_key, |w, v| w.i32(v));
        w.opt(i.unique_constraint, |w, v| w.i32(v));
        w.list(&i.key_columns, |w, &(c, desc)| {
            w.i32(c);
            w.bool(desc);
        });
        w.list(&i.included, |w, &c| w.i32(c));
        w.opt(i.filter.as_deref(), |w, f| w.str(f));
        w.u64(i.hobt);
    });
    w.list(&t.checks, |w, c| {
        w.i32(c.object_id);
        w.str(&c.name);
        w.str(&c.definition);
    });
    w.list(&t.foreign_keys, |w, f| {
        w.i32(f.object_id);
        w.str(&f.name);
        w.list(&f.columns, |w, &c| w.i32(c));
        w.i32(f.referenced_object_id);
        w.list(&f.referenced_columns, |w, &c| w.i32(c));
        w.u8(action_code(f.on_delete));
        w.u8(action_code(f.on_update));
    });
    w.opt(t.identity.as_ref(), |w, id| {
        w.i32(id.column_id);
        w.i128(id.seed);
        w.i128(id.increment);
        w.opt(id.last, |w, v| w.i128(v));
    });
    if table_version(t) == TABLE_GAP_VERSION {
        w.i32(t.max_column_id_used);
    }
}

fn highest_column_id(t: &Table) -> i32 {
    t.columns.iter().map(|c| c.column_id).max().unwrap_or(0)
}

fn table_version(t: &Table) -> u8 {
    if t.max_column_id_used > highest_column_id(t) {
        TABLE_GAP_VERSION
    } else {
        FORMAT_VERSION
    }
}

/// Encodes an object row (see the module doc).
pub fn encode_object(object: &Object) -> Vec<u8> {
    let mut w = Writer { out: Vec::with_capacity(128) };
    w.u8(match &object.body {
        ObjectBody::Table(t) => table_version(t),
        _ => FORMAT_VERSION,
    });
    let kind = match &object.body {
        ObjectBody::Table(_) => KIND_TABLE,
        ObjectBody::View(_) => KIND_VIEW,
        ObjectBody::Procedure(_) => KIND_PROCEDURE,
        ObjectBody::ScalarFunction(_) => KIND_SCALAR_FUNCTION,
        ObjectBody::InlineFunction(_) => KIND_INLINE_FUNCTION,
        ObjectBody::TableFunction(_) => KIND_TABLE_FUNCTION,
        ObjectBody::Trigger(_) => KIND_TRIGGER,
        ObjectBody::Sequence(_) => KIND_SEQUENCE,
    };
    w.u8(kind);
    w.i32(object.id);
    w.i32(object.schema_id);
    w.str(&object.name);
    w.value(&object.create_date);
    w.value(&object.modify_date);
    match &object.body {
        ObjectBody::Table(t) => write_table(&mut w, t),
        ObjectBody::View(m)
        | ObjectBody::Procedure(m)
        | ObjectBody::ScalarFunction(m)
        | ObjectBody::InlineFunction(m)
        | ObjectBody::TableFunction(m) => w.str(&m.definition),
        ObjectBody::Trigger(t) => {
            w.str(&t.module.definition);
            w.i32(t.parent_id);
            let flags = [
                (t.insert, TRG_INSERT),
                (t.update, TRG_UPDATE),
                (t.delete, TRG_DELETE),
                (t.instead_of, TRG_INSTEAD_OF),
                (t.disabled, TRG_DISABLED),
                (t.not_for_replication, TRG_NOT_FOR_REPLICATION),
            ]
            .iter()
            .filter(|(on, _)| *on)
            .fold(0u8, |f, (_, bit)| f | bit);
            w.u8(flags);
        }
        ObjectBody::Sequence(q) => {
            w.sql_type(&q.ty);
            for v in [q.start, q.increment, q.minimum, q.maximum] {
                w.i128(v);
            }
            w.bool(q.cycle);
            match q.cache {
                None => w.u8(0),
                Some(None) => w.u8(1),
                Some(Some(n)) => {
                    w.u8(2);
                    w.i32(n);
                }
            }
            w.u32(q.restarts);
        }
    }
    w.out
}

/// Encodes a schema row (see the module doc).
pub fn encode_schema(schema: &Schema) -> Vec<u8> {
    let mut w = Writer { out: Vec::with_capacity(16 + schema.name.len()) };
    w.u8(FORMAT_VERSION);
    w.i32(schema.id);
    w.str(&schema.name);
    w.i32(schema.principal_id);
    w.out
}

/// Encodes a user-defined type row (see the module doc).
pub fn encode_type(t: &UserType) -> Vec<u8> {
    let mut w = Writer { out: Vec::with_capacity(32 + t.name.len() + t.definition.len()) };
    w.u8(FORMAT_VERSION);
    w.i32(t.id);
    w.i32(t.schema_id);
    w.str(&t.name);
    w.i32(t.table_object_id);
    w.str(&t.definition);
    w.out
}

/// Encodes a principal row (see the module doc).
pub fn encode_principal(p: &Principal) -> Vec<u8> {
    let mut w = Writer { out: Vec::with_capacity(32 + p.name.len()) };
    w.u8(FORMAT_VERSION);
    w.i32(p.id);
    w.str(&p.name);
    w.u8(match p.kind {
        PrincipalKind::SqlUser => b'S',
        PrincipalKind::Role => b'R',
    });
    w.opt(p.login.as_deref(), |w, l| w.str(l));
    w.opt(p.default_schema.as_deref(), |w, l| w.str(l));
    w.list(&p.member_of, |w, r| w.i32(*r));
    w.list(&p.permissions, |w, e| {
        w.u8(e.class);
        w.i32(e.major_id);
        w.str(&e.permission);
        w.u8(e.state);
    });
    w.out
}

// ---------------------------------------------------------------------------------------
// Decoding

/// A reader that fails (with `None`) instead of panicking; the public functions turn
/// `None` into the corrupt-catalog error.
struct Reader<'a> {
    b: &'a [u8],
    at: usize,
}

type R<T> = Option<T>;

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> R<&'a [u8]> {
        let end = self.at.checked_add(n)?;
        let s = self.b.get(self.at..end)?;
        self.at = end;
        Some(s)
    }
    fn array<const N: usize>(&mut self) -> R<[u8; N]> {
        self.take(N)?.try_into().ok()
    }
    fn u8(&mut self) -> R<u8> {
        Some(self.take(1)?[0])
    }
    fn bool(&mut self) -> R<bool> {
        match self.u8()? {
            0 => Some(false),
            1 => Some(true),
            _ => None,
        }
    }
    fn u16(&mut self) -> R<u16> {
        Some(u16::from_le_bytes(self.array()?))
    }
    fn i32(&mut self) -> R<i32> {
        Some(i32::from_le_bytes(self.array()?))
    }
    fn u32(&mut self) -> R<u32> {
        Some(u32::from_le_bytes(self.array()?))
    }
    fn u64(&mut self) -> R<u64> {
        Some(u64::from_le_bytes(self.array()?))
    }
    fn i128(&mut self) -> R<i128> {
        Some(i128::from_le_bytes(self.array()?))
    }
    fn bytes(&mut self) -> R<&'a [u8]> {
        let n = self.u32()? as usize;
        self.take(n)
    }
    fn str(&mut self) -> R<String> {
        std::str::from_utf8(self.bytes()?).ok().map(str::to_string)
    }
    fn opt<T>(&mut self, f: impl FnOnce(&mut Self) -> R<T>) -> R<Option<T>> {
        match self.u8()? {
            0 => Some(None),
            1 => f(self).map(Some),
            _ => None,
        }
    }
    fn list<T>(&mut self, mut f: impl FnMut(&mut Self) -> R<T>) -> R<Vec<T>> {
        let n = self.u32()? as usize;
        // Every element takes at least one byte: a count beyond the bytes left is
        // corrupt, and no allocation is sized by an untrusted count.
        if n > self.b.len().saturating_sub(self.at) {
            return None;
        }
        let mut v = Vec::with_capacity(n);
        for _ in 0..n {
            v.push(f(self)?);
        }
        Some(v)
    }
    fn end(&self) -> R<()> {
        (self.at == self.b.len()).then_some(())
    }

    fn length(&mut self) -> R<Option<u16>> {
        let n = self.u16()?;
        Some(if n == MAX_LEN { None } else { Some(n) })
    }

    fn sql_type(&mut self) -> R<SqlType> {
        let ok = |r: Result<SqlType, SqlError>| r.ok();
        let var = |n: Option<u16>, bounded: fn(i64) -> Result<SqlType, SqlError>, max: SqlType| match n {
            None => Some(max),
            Some(n) => bounded(i64::from(n)).ok(),
        };
        Some(match self.u8()? {
            1 => SqlType::Bit,
            2 => SqlType::TinyInt,
            3 => SqlType::SmallInt,
            4 => SqlType::Int,
            5 => SqlType::BigInt,
            6 => {
                let (p, s) = (self.u8()?, self.u8()?);
                ok(SqlType::decimal(i64::from(p), i64::from(s)))?
            }
            7 => {
                let (p, s) = (self.u8()?, self.u8()?);
                ok(SqlType::numeric(i64::from(p), i64::from(s)))?
            }
            8 => SqlType::Money,
            9 => SqlType::SmallMoney,
            10 => SqlType::Real,
            11 => SqlType::Float,
            12 => SqlType::Date,
            13 => ok(SqlType::time(i64::from(self.u8()?)))?,
            14 => SqlType::DateTime,
            15 => SqlType::SmallDateTime,
            16 => ok(SqlType::datetime2(i64::from(self.u8()?)))?,
            17 => ok(SqlType::datetimeoffset(i64::from(self.u8()?)))?,
            18 => ok(SqlType::char(i64::from(self.u16()?)))?,
            19 => var(self.length()?, SqlType::varchar, SqlType::VarChar { len: Length::Max })?,
            20 => ok(SqlType::nchar(i64::from(self.u16()?)))?,
            21 => var(self.length()?, SqlType::nvarchar, SqlType::NVarChar { len: Length::Max })?,
            22 => ok(SqlType::binary(i64::from(self.u16()?)))?,
            23 => var(self.length()?, SqlType::varbinary, SqlType::VarBinary { len: Length::Max })?,
            24 => SqlType::UniqueIdentifier,
            25 => SqlType::Xml,
            26 => SqlType::Variant,
            27 => SqlType::Text,
            28 => SqlType::NText,
            29 => SqlType::Image,
            30 => SqlType::HierarchyId,
            31 => SqlType::Geometry,
            32 => SqlType::Geography,
            _ => return None,
        })
    }

    fn value(&mut self) -> R<Value> {
        match self.u8()? {
            0 => Some(Value::Null),
            1 => {
                let ty = self.sql_type()?;
                let bytes = self.bytes()?;
                types::decode(&ty, bytes).ok()
            }
            _ => None,
        }
    }

    fn action(&mut self) -> R<ReferentialAction> {
        Some(match self.u8()? {
            0 => ReferentialAction::NoAction,
            1 => ReferentialAction::Cascade,
            2 => ReferentialAction::SetNull,
            3 => ReferentialAction::SetDefault,
            _ => return None,
        })
    }

    fn table(&mut self, version: u8) -> R<Table> {
        let columns = self.list(|r| {
            let column_id = r.i32()?;
            let name = r.str()?;
            let ty = r.sql_type()?;
            let flags = r.u8()?;
            if flags & !(COL_NULLABLE | COL_IDENTITY | COL_SPARSE | COL_COLLATION) != 0 {
                return None;
            }
            let default =
                r.opt(|r| Some(DefaultConstraint { object_id: r.i32()?, name: r.str()?, definition: r.str()? }))?;
            let computed = r.opt(|r| Some(ComputedColumn { definition: r.str()?, persisted: r.bool()? }))?;
            let collation = if flags & COL_COLLATION != 0 {
                // The default is never written (None stands for it).
                Some(types::Collation::from_name(&r.str()?).filter(|c| *c != types::Collation::DEFAULT)?)
            } else {
                None
            };
            Some(Column {
                column_id,
                name,
                ty,
                nullable: flags & COL_NULLABLE != 0,
                is_identity: flags & COL_IDENTITY != 0,
                sparse: flags & COL_SPARSE != 0,
                default,
                computed,
                collation,
            })
        })?;
        let indexes = self.list(|r| {
            let index_id = r.i32()?;
            let name = r.opt(|r| r.str())?;
            let kind = match r.u8()? {
                0 => IndexKind::Heap,
                1 => IndexKind::Clustered,
                2 => IndexKind::Nonclustered,
                _ => return None,
            };
            Some(Index {
                index_id,
                name,
                kind,
                unique: r.bool()?,
                primary_key: r.opt(|r| r.i32())?,
                unique_constraint: r.opt(|r| r.i32())?,
                key_columns: r.list(|r| Some((r.i32()?, r.bool()?)))?,
                included: r.list(|r| r.i32())?,
                filter: r.opt(|r| r.str())?,
                hobt: r.u64()?,
            })
        })?;
        let checks =
            self.list(|r| Some(CheckConstraint { object_id: r.i32()?, name: r.str()?, definition: r.str()? }))?;
        let foreign_keys = self.list(|r| {
            Some(ForeignKey {
                object_id: r.i32()?,
                name: r.str()?,
                columns: r.list(|r| r.i32())?,
                referenced_object_id: r.i32()?,
                referenced_columns: r.list(|r| r.i32())?,
                on_delete: r.action()?,
                on_update: r.action()?,
            })
        })?;
        let identity = self.opt(|r| {
            Some(Identity { column_id: r.i32()?, seed: r.i128()?, increment: r.i128()?, last: r.opt(|r| r.i128())? })
        })?;
        let mut t = Table { columns, indexes, checks, foreign_keys, identity, max_column_id_used: 0, next_row_id: 0 };
        let highest = highest_column_id(&t);
        t.max_column_id_used = if version == TABLE_GAP_VERSION {
            // Written only when above every column id.
            Some(self.i32()?).filter(|&m| m > highest)?
        } else {
            highest
        };
        Some(t)
    }

    fn object(&mut self) -> R<Object> {
        let version = self.u8()?;
        if version != FORMAT_VERSION && version != TABLE_GAP_VERSION {
            return None;
        }
        let kind = self.u8()?;
        if version == TABLE_GAP_VERSION && kind != KIND_TABLE {
            return None;
        }
        let id = self.i32()?;
        let schema_id = self.i32()?;
        let name = self.str()?;
        let create_date = self.value()?;
        let modify_date = self.value()?;
        let body = match kind {
            KIND_TABLE => ObjectBody::Table(self.table(version)?),
            KIND_VIEW => ObjectBody::View(Module { definition: self.str()? }),
            KIND_PROCEDURE => ObjectBody::Procedure(Module { definition: self.str()? }),
            KIND_SCALAR_FUNCTION => ObjectBody::ScalarFunction(Module { definition: self.str()? }),
            KIND_INLINE_FUNCTION => ObjectBody::InlineFunction(Module { definition: self.str()? }),
            KIND_TABLE_FUNCTION => ObjectBody::TableFunction(Module { definition: self.str()? }),
            KIND_TRIGGER => {
                let definition = self.str()?;
                let parent_id = self.i32()?;
                let flags = self.u8()?;
                if flags >= 64 {
                    return None;
                }
                ObjectBody::Trigger(Trigger {
                    module: Module { definition },
                    parent_id,
                    insert: flags & TRG_INSERT != 0,
                    update: flags & TRG_UPDATE != 0,
                    delete: flags & TRG_DELETE != 0,
                    instead_of: flags & TRG_INSTEAD_OF != 0,
                    disabled: flags & TRG_DISABLED != 0,
                    not_for_replication: flags & TRG_NOT_FOR_REPLICATION != 0,
                })
            }
            KIND_SEQUENCE => {
                let ty = self.sql_type()?;
                let (start, increment, minimum, maximum) = (self.i128()?, self.i128()?, self.i128()?, self.i128()?);
                let cycle = self.bool()?;
                let cache = match self.u8()? {
                    0 => None,
                    1 => Some(None),
                    2 => Some(Some(self.i32()?)),
                    _ => return None,
                };
                let restarts = self.u32()?;
                ObjectBody::Sequence(Sequence { ty, start, increment, minimum, maximum, cycle, cache, restarts })
            }
            _ => return None,
        };
        self.end()?;
        Some(Object { id, schema_id, name, create_date, modify_date, body })
    }

    fn schema(&mut self) -> R<Schema> {
        if self.u8()? != FORMAT_VERSION {
            return None;
        }
        let s = Schema { id: self.i32()?, name: self.str()?, principal_id: self.i32()? };
        self.end()?;
        Some(s)
    }
}

impl Reader<'_> {
    fn user_type(&mut self) -> R<UserType> {
        if self.u8()? != FORMAT_VERSION {
            return None;
        }
        let t = UserType {
            id: self.i32()?,
            schema_id: self.i32()?,
            name: self.str()?,
            table_object_id: self.i32()?,
            definition: self.str()?,
        };
        self.end()?;
        Some(t)
    }

    fn principal(&mut self) -> R<Principal> {
        if self.u8()? != FORMAT_VERSION {
            return None;
        }
        let id = self.i32()?;
        let name = self.str()?;
        let kind = match self.u8()? {
            b'S' => PrincipalKind::SqlUser,
            b'R' => PrincipalKind::Role,
            _ => return None,
        };
        let login = self.opt(|r| r.str())?;
        let default_schema = self.opt(|r| r.str())?;
        let member_of = self.list(|r| r.i32())?;
        let permissions = self.list(|r| {
            let class = r.u8()?;
            let major_id = r.i32()?;
            let permission = r.str()?;
            let state = r.u8()?;
            (matches!(class, 0 | 1 | 3) && matches!(state, b'G' | b'D')).then_some(PermissionEntry {
                class,
                major_id,
                permission,
                state,
            })
        })?;
        self.end()?;
        Some(Principal { id, name, kind, login, default_schema, member_of, permissions })
    }
}

/// Decodes a principal row; damaged or unknown bytes are the corrupt-catalog error.
pub fn decode_principal(bytes: &[u8]) -> Result<Principal, SqlError> {
    Reader { b: bytes, at: 0 }.principal().ok_or_else(corrupt_catalog)
}

/// Decodes an object row; damaged or unknown bytes are the corrupt-catalog error.
pub fn decode_object(bytes: &[u8]) -> Result<Object, SqlError> {
    Reader { b: bytes, at: 0 }.object().ok_or_else(corrupt_catalog)
}

/// Decodes a user-defined type row; damaged or unknown bytes are the corrupt-catalog error.
pub fn decode_type(bytes: &[u8]) -> Result<UserType, SqlError> {
    Reader { b: bytes, at: 0 }.user_type().ok_or_else(corrupt_catalog)
}

/// Decodes a schema row; damaged or unknown bytes are the corrupt-catalog error.
pub fn decode_schema(bytes: &[u8]) -> Result<Schema, SqlError> {
    Reader { b: bytes, at: 0 }.schema().ok_or_else(corrupt_catalog)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn type_rows_round_trip_and_reject_damage() {
        let t = UserType {
            id: 257,
            schema_id: 1,
            name: "Pairs".into(),
            table_object_id: 1_000_004,
            definition: "CREATE TYPE Pairs AS TABLE (a int)".into(),
        };
        let enc = encode_type(&t);
        assert_eq!(decode_type(&enc).unwrap(), t);
        for cut in 0..enc.len() {
            assert!(decode_type(&enc[..cut]).is_err());
        }
        let mut longer = enc.clone();
        longer.push(0);
        assert!(decode_type(&longer).is_err());
    }

    #[test]
    fn principal_rows_round_trip_and_reject_damage() {
        let p = Principal {
            id: 7,
            name: "app_user".into(),
            kind: PrincipalKind::SqlUser,
            login: Some("app".into()),
            default_schema: Some("dbo".into()),
            member_of: vec![16390, 9],
            permissions: vec![
                PermissionEntry { class: 1, major_id: 1_000_003, permission: "SELECT".into(), state: b'G' },
                PermissionEntry { class: 0, major_id: 0, permission: "CREATE TABLE".into(), state: b'D' },
            ],
        };
        let enc = encode_principal(&p);
        assert_eq!(decode_principal(&enc).unwrap(), p);
        for cut in 0..enc.len() {
            assert!(decode_principal(&enc[..cut]).is_err());
        }
        let mut bad = enc.clone();
        *bad.last_mut().unwrap() = b'X';
        assert!(decode_principal(&bad).is_err());
    }

    fn any_type() -> impl Strategy<Value = SqlType> {
        let len = prop_oneof![(1u16..=8000).prop_map(Length::Bounded), Just(Length::Max)];
        let nlen = prop_oneof![(1u16..=4000).prop_map(Length::Bounded), Just(Length::Max)];
        prop_oneof![
            Just(SqlType::Bit),
            Just(SqlType::TinyInt),
            Just(SqlType::SmallInt),
            Just(SqlType::Int),
            Just(SqlType::BigInt),
            (1u8..=38)
                .prop_flat_map(|p| (Just(p), 0..=p))
                .prop_map(|(precision, scale)| SqlType::Decimal { precision, scale }),
            (1u8..=38)
                .prop_flat_map(|p| (Just(p), 0..=p))
                .prop_map(|(precision, scale)| SqlType::Numeric { precision, scale }),
            Just(SqlType::Money),
            Just(SqlType::SmallMoney),
            Just(SqlType::Real),
            Just(SqlType::Float),
            Just(SqlType::Date),
            (0u8..=7).prop_map(|scale| SqlType::Time { scale }),
            Just(SqlType::DateTime),
            Just(SqlType::SmallDateTime),
            (0u8..=7).prop_map(|scale| SqlType::DateTime2 { scale }),
            (0u8..=7).prop_map(|scale| SqlType::DateTimeOffset { scale }),
            (1u16..=8000).prop_map(|len| SqlType::Char { len }),
            len.clone().prop_map(|len| SqlType::VarChar { len }),
            (1u16..=4000).prop_map(|len| SqlType::NChar { len }),
            nlen.prop_map(|len| SqlType::NVarChar { len }),
            (1u16..=8000).prop_map(|len| SqlType::Binary { len }),
            len.prop_map(|len| SqlType::VarBinary { len }),
            Just(SqlType::UniqueIdentifier),
            Just(SqlType::Xml),
        ]
    }

    fn date() -> impl Strategy<Value = Value> {
        prop_oneof![
            Just(Value::Null),
            (-53_690i32..=2_958_463, 0u32..25_920_000).prop_map(|(days, ticks)| Value::DateTime { days, ticks }),
            (0u32..3_652_059, 0u64..864_000_000_000).prop_map(|(days, ticks)| Value::DateTime2 {
                days,
                ticks,
                scale: 7
            }),
        ]
    }

    fn name() -> impl Strategy<Value = String> {
        "[a-zA-Z_ é€#@$0-9\\[\\]'\"]{0,20}"
    }

    fn action() -> impl Strategy<Value = ReferentialAction> {
        prop_oneof![
            Just(ReferentialAction::NoAction),
            Just(ReferentialAction::Cascade),
            Just(ReferentialAction::SetNull),
            Just(ReferentialAction::SetDefault),
        ]
    }

    fn column() -> impl Strategy<Value = Column> {
        (
            any::<i32>(),
            name(),
            any_type(),
            any::<(bool, bool, bool)>(),
            proptest::option::of((any::<i32>(), name(), name())),
            proptest::option::of((name(), any::<bool>())),
            proptest::option::of(proptest::sample::select(
                types::Collation::all().into_iter().filter(|c| *c != types::Collation::DEFAULT).collect::<Vec<_>>(),
            )),
        )
            .prop_map(|(column_id, name, ty, (nullable, is_identity, sparse), d, c, collation)| Column {
                column_id,
                name,
                ty,
                nullable,
                is_identity,
                sparse,
                default: d.map(|(object_id, name, definition)| DefaultConstraint { object_id, name, definition }),
                computed: c.map(|(definition, persisted)| ComputedColumn { definition, persisted }),
                collation,
            })
    }

    fn index() -> impl Strategy<Value = Index> {
        (
            any::<i32>(),
            proptest::option::of(name()),
            prop_oneof![Just(IndexKind::Heap), Just(IndexKind::Clustered), Just(IndexKind::Nonclustered)],
            any::<bool>(),
            proptest::option::of(any::<i32>()),
            proptest::option::of(any::<i32>()),
            proptest::collection::vec((any::<i32>(), any::<bool>()), 0..4),
            proptest::collection::vec(any::<i32>(), 0..4),
            proptest::option::of(name()),
            any::<u64>(),
        )
            .prop_map(
                |(
                    index_id,
                    name,
                    kind,
                    unique,
                    primary_key,
                    unique_constraint,
                    key_columns,
                    included,
                    filter,
                    hobt,
                )| {
                    Index {
                        index_id,
                        name,
                        kind,
                        unique,
                        primary_key,
                        unique_constraint,
                        key_columns,
                        included,
                        filter,
                        hobt,
                    }
                },
            )
    }

    fn table() -> impl Strategy<Value = Table> {
        (
            proptest::collection::vec(column(), 0..6),
            proptest::collection::vec(index(), 0..4),
            proptest::collection::vec((any::<i32>(), name(), name()), 0..3),
            proptest::collection::vec(
                (
                    any::<i32>(),
                    name(),
                    proptest::collection::vec(any::<i32>(), 0..3),
                    any::<i32>(),
                    proptest::collection::vec(any::<i32>(), 0..3),
                    action(),
                    action(),
                ),
                0..3,
            ),
            proptest::option::of((any::<i32>(), any::<i128>(), any::<i128>(), proptest::option::of(any::<i128>()))),
            0..3i32,
        )
            .prop_map(|(columns, indexes, checks, fks, identity, gap)| Table {
                max_column_id_used: columns.iter().map(|c: &Column| c.column_id).max().unwrap_or(0).saturating_add(gap),
                columns,
                indexes,
                checks: checks
                    .into_iter()
                    .map(|(object_id, name, definition)| CheckConstraint { object_id, name, definition })
                    .collect(),
                foreign_keys: fks
                    .into_iter()
                    .map(
                        |(object_id, name, columns, referenced_object_id, referenced_columns, on_delete, on_update)| {
                            ForeignKey {
                                object_id,
                                name,
                                columns,
                                referenced_object_id,
                                referenced_columns,
                                on_delete,
                                on_update,
                            }
                        },
                    )
                    .collect(),
                identity: identity.map(|(column_id, seed, increment, last)| Identity {
                    column_id,
                    seed,
                    increment,
                    last,
                }),
                next_row_id: 0,
            })
    }

    fn object() -> impl Strategy<Value = Object> {
        let module = "[ -~\n]{0,60}".prop_map(|definition| Module { definition });
        let body = prop_oneof![
            table().prop_map(ObjectBody::Table),
            module.clone().prop_map(ObjectBody::View),
            module.clone().prop_map(ObjectBody::Procedure),
            module.clone().prop_map(ObjectBody::ScalarFunction),
            module.clone().prop_map(ObjectBody::InlineFunction),
            module.clone().prop_map(ObjectBody::TableFunction),
            (module, any::<i32>(), 0u8..64).prop_map(|(module, parent_id, f)| ObjectBody::Trigger(Trigger {
                module,
                parent_id,
                insert: f & 1 != 0,
                update: f & 2 != 0,
                delete: f & 4 != 0,
                instead_of: f & 8 != 0,
                disabled: f & 16 != 0,
                not_for_replication: f & 32 != 0,
            })),
            (any::<[i128; 4]>(), any::<bool>(), proptest::option::of(proptest::option::of(1i32..)), any::<u32>())
                .prop_map(|([start, increment, minimum, maximum], cycle, cache, restarts)| {
                    ObjectBody::Sequence(Sequence {
                        ty: SqlType::BigInt,
                        start,
                        increment,
                        minimum,
                        maximum,
                        cycle,
                        cache,
                        restarts,
                    })
                }),
        ];
        (any::<i32>(), any::<i32>(), name(), date(), date(), body).prop_map(
            |(id, schema_id, name, create_date, modify_date, body)| Object {
                id,
                schema_id,
                name,
                create_date,
                modify_date,
                body,
            },
        )
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        #[test]
        fn objects_round_trip(o in object()) {
            let bytes = encode_object(&o);
            let gap = matches!(&o.body, ObjectBody::Table(t) if table_version(t) == TABLE_GAP_VERSION);
            prop_assert_eq!(bytes[0], if gap { TABLE_GAP_VERSION } else { FORMAT_VERSION });
            prop_assert_eq!(decode_object(&bytes).expect("decodes"), o);
        }

        #[test]
        fn schemas_round_trip(id in any::<i32>(), name in name(), principal_id in any::<i32>()) {
            let s = Schema { id, name, principal_id };
            prop_assert_eq!(decode_schema(&encode_schema(&s)).expect("decodes"), s);
        }

        #[test]
        fn truncations_and_bit_flips_never_panic(o in object(), at in any::<usize>(), bit in 0u8..8) {
            let bytes = encode_object(&o);
            for cut in 0..bytes.len() {
                prop_assert!(decode_object(&bytes[..cut]).is_err());
            }
            let mut flipped = bytes.clone();
            let i = at % flipped.len();
            flipped[i] ^= 1 << bit;
            let _ = decode_object(&flipped);
            let _ = decode_schema(&flipped);
        }

        #[test]
        fn garbage_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
            let _ = decode_object(&bytes);
            let _ = decode_schema(&bytes);
            let mut versioned = vec![FORMAT_VERSION, KIND_TABLE];
            versioned.extend_from_slice(&bytes);
            let _ = decode_object(&versioned);
        }
    }

    #[test]
    fn rejects_unknown_version_trailing_bytes_and_bad_types() {
        let s = Schema { id: 1, name: "dbo".into(), principal_id: 1 };
        let mut b = encode_schema(&s);
        b[0] = 2;
        assert_eq!(decode_schema(&b).unwrap_err().number, 8992);
        let mut b = encode_schema(&s);
        b.push(0);
        assert!(decode_schema(&b).is_err());
        // decimal(39, 0) is not a type.
        let mut r = Reader { b: &[6, 39, 0], at: 0 };
        assert!(r.sql_type().is_none());
        let mut r = Reader { b: &[19, 0xFF, 0xFF], at: 0 };
        assert_eq!(r.sql_type(), Some(SqlType::VarChar { len: Length::Max }));
        let mut r = Reader { b: &[19, 0x41, 0x1F], at: 0 };
        assert!(r.sql_type().is_none(), "varchar(8001)");
    }

    #[test]
    fn a_table_row_is_compact() {
        let t = Table {
            columns: vec![Column {
                column_id: 1,
                name: "id".into(),
                ty: SqlType::Int,
                nullable: false,
                is_identity: false,
                sparse: false,
                default: None,
                computed: None,
                collation: None,
            }],
            indexes: vec![],
            checks: vec![],
            foreign_keys: vec![],
            identity: None,
            max_column_id_used: 1,
            next_row_id: 0,
        };
        let o = Object {
            id: 1_000_000,
            schema_id: 1,
            name: "t".into(),
            create_date: Value::DateTime { days: 45_000, ticks: 0 },
            modify_date: Value::DateTime { days: 45_000, ticks: 0 },
            body: ObjectBody::Table(t),
        };
        let b = encode_object(&o);
        // version, kind, ids, name, two typed datetimes, one column, four empty lists.
        assert_eq!(b.len(), 1 + 1 + 4 + 4 + 5 + 2 * 14 + 4 + (4 + 4 + 2 + 1 + 1 + 1 + 1) + 4 + 4 + 4 + 1);
        assert_eq!(decode_object(&b).unwrap(), o);
        // A dropped last column: max_column_id_used above every column id is written as
        // version 2 with one more field; version 1 rows (every database written before)
        // read as having used their highest column id.
        let ObjectBody::Table(mut t) = o.body.clone() else { unreachable!() };
        t.max_column_id_used = 3;
        let o2 = Object { body: ObjectBody::Table(t), ..o.clone() };
        let b2 = encode_object(&o2);
        assert_eq!((b2[0], b2.len()), (TABLE_GAP_VERSION, b.len() + 4));
        assert_eq!(decode_object(&b2).unwrap(), o2);
        let mut bad = b2.clone();
        bad.truncate(b.len());
        assert!(decode_object(&bad).is_err(), "version 2 without its field");
        let mut v = encode_object(&Object { body: ObjectBody::View(Module { definition: "x".into() }), ..o });
        v[0] = TABLE_GAP_VERSION;
        assert!(decode_object(&v).is_err(), "version 2 is for tables only");
    }
}
