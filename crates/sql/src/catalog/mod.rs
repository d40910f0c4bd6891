//! The catalog of one database: schemas, tables with their columns, indexes and
//! constraints, views, procedures, functions and DML triggers.
//!
//! Stored in the database itself, in its catalog index (the host names it in
//! [`crate::host::DatabaseInfo::catalog_index`]): one row per top-level object, keyed by
//! the object id (4 bytes big-endian), whose single `varbinary(max)` column is the
//! object encoded by [`codec`]. Schemas are rows too, under key `0xFFFF_0000 | schema_id`.
//! Changes are written through the session's transaction, so a rolled-back CREATE TABLE
//! leaves nothing behind; the in-memory copy ([`SharedCatalog`]) is updated as the
//! statement runs and reloaded from the index when a transaction that changed it rolls
//! back.
//!
//! Database principals (users and roles, with their role memberships and the
//! permissions granted or denied to them) are rows under key `0xFFFE_0000 | principal_id`.
//! The fixed principals (public, dbo, guest, INFORMATION_SCHEMA, sys and the fixed
//! database roles) exist in every catalog without a row; a row for one of them (a grant
//! to public, a member added to db_datareader) replaces the built-in entry.
//!
//! User-defined types (CREATE TYPE: alias types and table types) are rows under key
//! `0xFFFD_0000 | (user_type_id - 256)`, kept as their CREATE TYPE text.
//!
//! Constraints (PRIMARY KEY, UNIQUE, CHECK, FOREIGN KEY, DEFAULT) are objects in SQL
//! Server (sys.objects types PK, UQ, C, F, D) with the table as parent; here they live
//! inside their table's row and carry their own object ids, and the catalog views list
//! them as objects.
//!
//! Identity: the last value handed out is kept in memory ([`Table::identity`]) and not
//! written on every insert; after a restart the next value continues from the highest
//! value stored in the column (SQL Server may instead skip ahead by its identity cache).

pub mod codec;

use std::collections::BTreeMap;

use parking_lot::RwLock;
use types::{SqlError, SqlType, Value};

use crate::host::IndexRef;

/// sys.schemas rows every database starts with (SQL Server's ids).
pub const SCHEMA_DBO: i32 = 1;
pub const SCHEMA_GUEST: i32 = 2;
pub const SCHEMA_INFORMATION_SCHEMA: i32 = 3;
pub const SCHEMA_SYS: i32 = 4;
/// First id for user objects (SQL Server's are large and scattered; ours count up).
pub const FIRST_USER_OBJECT_ID: i32 = 1_000_000;

#[derive(Debug, Clone, PartialEq)]
pub struct Schema {
    pub id: i32,
    pub name: String,
    pub principal_id: i32,
}

/// Principal ids of the fixed database principals (SQL Server's).
pub const PRINCIPAL_PUBLIC: i32 = 0;
pub const PRINCIPAL_DBO: i32 = 1;
pub const PRINCIPAL_GUEST: i32 = 2;
pub const ROLE_DB_OWNER: i32 = 16384;
pub const ROLE_DB_ACCESSADMIN: i32 = 16385;
pub const ROLE_DB_SECURITYADMIN: i32 = 16386;
pub const ROLE_DB_DDLADMIN: i32 = 16387;
pub const ROLE_DB_BACKUPOPERATOR: i32 = 16389;
pub const ROLE_DB_DATAREADER: i32 = 16390;
pub const ROLE_DB_DATAWRITER: i32 = 16391;
pub const ROLE_DB_DENYDATAREADER: i32 = 16392;
pub const ROLE_DB_DENYDATAWRITER: i32 = 16393;
/// First id for users and roles created by CREATE USER / CREATE ROLE.
pub const FIRST_USER_PRINCIPAL_ID: i32 = 5;

/// A database principal (sys.database_principals): a user or a role.
#[derive(Debug, Clone, PartialEq)]
pub struct Principal {
    pub id: i32,
    pub name: String,
    pub kind: PrincipalKind,
    /// The server login a SQL user is mapped to (None: WITHOUT LOGIN, or not a user).
    pub login: Option<String>,
    pub default_schema: Option<String>,
    /// Roles this principal is a member of (sys.database_role_members).
    pub member_of: Vec<i32>,
    /// GRANT / DENY entries with this principal as grantee (sys.database_permissions).
    pub permissions: Vec<PermissionEntry>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PrincipalKind {
    /// type 'S', SQL_USER.
    SqlUser,
    /// type 'R', DATABASE_ROLE.
    Role,
}

/// One row of sys.database_permissions.
#[derive(Debug, Clone, PartialEq)]
pub struct PermissionEntry {
    /// 0 database, 1 object (or column), 3 schema: sys.database_permissions.class.
    pub class: u8,
    /// The object or schema id (0 for the database).
    pub major_id: i32,
    /// Upper-cased: SELECT, INSERT, UPDATE, DELETE, EXECUTE, CREATE TABLE, ...
    pub permission: String,
    /// G grant, D deny.
    pub state: u8,
}

impl Principal {
    fn fixed(id: i32, name: &str, kind: PrincipalKind) -> Principal {
        Principal {
            id,
            name: name.to_string(),
            kind,
            login: None,
            default_schema: None,
            member_of: Vec::new(),
            permissions: Vec::new(),
        }
    }

    /// Built-in principals: no CREATE, no DROP.
    pub fn is_fixed(&self) -> bool {
        self.id < FIRST_USER_PRINCIPAL_ID || (16384..=16393).contains(&self.id)
    }
}

/// The principals every database has.
pub fn fixed_principals() -> Vec<Principal> {
    use PrincipalKind::{Role, SqlUser};
    let mut dbo = Principal::fixed(PRINCIPAL_DBO, "dbo", SqlUser);
    dbo.default_schema = Some("dbo".into());
    dbo.login = Some("sa".into());
    let mut guest = Principal::fixed(PRINCIPAL_GUEST, "guest", SqlUser);
    guest.default_schema = Some("guest".into());
    vec![
        Principal::fixed(PRINCIPAL_PUBLIC, "public", Role),
        dbo,
        guest,
        Principal::fixed(3, "INFORMATION_SCHEMA", SqlUser),
        Principal::fixed(4, "sys", SqlUser),
        Principal::fixed(ROLE_DB_OWNER, "db_owner", Role),
        Principal::fixed(ROLE_DB_ACCESSADMIN, "db_accessadmin", Role),
        Principal::fixed(ROLE_DB_SECURITYADMIN, "db_securityadmin", Role),
        Principal::fixed(ROLE_DB_DDLADMIN, "db_ddladmin", Role),
        Principal::fixed(ROLE_DB_BACKUPOPERATOR, "db_backupoperator", Role),
        Principal::fixed(ROLE_DB_DATAREADER, "db_datareader", Role),
        Principal::fixed(ROLE_DB_DATAWRITER, "db_datawriter", Role),
        Principal::fixed(ROLE_DB_DENYDATAREADER, "db_denydatareader", Role),
        Principal::fixed(ROLE_DB_DENYDATAWRITER, "db_denydatawriter", Role),
    ]
}

#[derive(Debug, Clone, PartialEq)]
pub struct Catalog {
    pub schemas: BTreeMap<i32, Schema>,
    pub objects: BTreeMap<i32, Object>,
    /// Users and roles, by principal id (see the module doc).
    pub principals: BTreeMap<i32, Principal>,
    /// User-defined types, by user type id.
    pub types: BTreeMap<i32, UserType>,
    /// The next object id to hand out (tables, constraints, modules share one sequence).
    pub next_object_id: i32,
}

/// The first user type id (sys.types.user_type_id; SQL Server's system types are below).
pub const FIRST_USER_TYPE_ID: i32 = 257;

/// A user-defined type (sys.types, is_user_defined = 1): an alias of a system type or a
/// table type, kept as its CREATE TYPE text and parsed when used.
#[derive(Debug, Clone, PartialEq)]
pub struct UserType {
    /// sys.types.user_type_id.
    pub id: i32,
    pub schema_id: i32,
    pub name: String,
    /// A table type's object id (sys.table_types.type_table_object_id); 0 for an alias.
    pub table_object_id: i32,
    pub definition: String,
}

/// A top-level object: a table, view, procedure or function.
#[derive(Debug, Clone, PartialEq)]
pub struct Object {
    pub id: i32,
    pub schema_id: i32,
    pub name: String,
    /// datetime values.
    pub create_date: Value,
    pub modify_date: Value,
    pub body: ObjectBody,
}

#[derive(Debug, Clone, PartialEq)]
pub enum ObjectBody {
    Table(Table),
    /// A module kept as its defining text (re-parsed and bound when used, as SQL Server
    /// keeps sys.sql_modules.definition).
    View(Module),
    Procedure(Module),
    /// Scalar (FN), inline table-valued (IF) or multi-statement table-valued (TF)
    /// function.
    ScalarFunction(Module),
    InlineFunction(Module),
    TableFunction(Module),
    /// A DML trigger (TR): a module with its parent table or view.
    Trigger(Trigger),
    /// A sequence object (SO).
    Sequence(Sequence),
}

/// A sequence object's definition (sys.sequences). The values it hands out are not
/// catalog data: see `crate::sequence`.
#[derive(Debug, Clone, PartialEq)]
pub struct Sequence {
    /// tinyint, smallint, int, bigint, or decimal/numeric with scale 0.
    pub ty: SqlType,
    pub start: i128,
    pub increment: i128,
    pub minimum: i128,
    pub maximum: i128,
    pub cycle: bool,
    /// None: NO CACHE; Some(None): CACHE of the server's size; Some(Some(n)): CACHE n.
    pub cache: Option<Option<i32>>,
    /// How many times ALTER SEQUENCE ... RESTART ran: values handed out under an older
    /// count belong to a previous life of the sequence.
    pub restarts: u32,
}

/// A DML trigger: its text, and what the executor needs without parsing it.
#[derive(Debug, Clone, PartialEq)]
pub struct Trigger {
    pub module: Module,
    /// The table or view it is defined on (sys.triggers.parent_id).
    pub parent_id: i32,
    pub insert: bool,
    pub update: bool,
    pub delete: bool,
    pub instead_of: bool,
    pub disabled: bool,
    pub not_for_replication: bool,
}

impl ObjectBody {
    /// The sys.objects type code ("U", "V", "P", "FN", "IF", "TF").
    pub fn type_code(&self) -> &'static str {
        match self {
            ObjectBody::Table(_) => "U",
            ObjectBody::View(_) => "V",
            ObjectBody::Procedure(_) => "P",
            ObjectBody::ScalarFunction(_) => "FN",
            ObjectBody::InlineFunction(_) => "IF",
            ObjectBody::TableFunction(_) => "TF",
            ObjectBody::Trigger(_) => "TR",
            ObjectBody::Sequence(_) => "SO",
        }
    }

    pub fn type_desc(&self) -> &'static str {
        match self {
            ObjectBody::Table(_) => "USER_TABLE",
            ObjectBody::View(_) => "VIEW",
            ObjectBody::Procedure(_) => "SQL_STORED_PROCEDURE",
            ObjectBody::ScalarFunction(_) => "SQL_SCALAR_FUNCTION",
            ObjectBody::InlineFunction(_) => "SQL_INLINE_TABLE_VALUED_FUNCTION",
            ObjectBody::TableFunction(_) => "SQL_TABLE_VALUED_FUNCTION",
            ObjectBody::Trigger(_) => "SQL_TRIGGER",
            ObjectBody::Sequence(_) => "SEQUENCE_OBJECT",
        }
    }

    /// The module text of a view, procedure or function.
    pub fn module(&self) -> Option<&Module> {
        match self {
            ObjectBody::Table(_) | ObjectBody::Sequence(_) => None,
            ObjectBody::View(m)
            | ObjectBody::Procedure(m)
            | ObjectBody::ScalarFunction(m)
            | ObjectBody::InlineFunction(m)
            | ObjectBody::TableFunction(m) => Some(m),
            ObjectBody::Trigger(t) => Some(&t.module),
        }
    }

    /// A trigger's parent table or view (sys.objects.parent_object_id).
    pub fn parent_id(&self) -> Option<i32> {
        match self {
            ObjectBody::Trigger(t) => Some(t.parent_id),
            _ => None,
        }
    }

    /// Scalar, inline or multi-statement table-valued function.
    pub fn is_function(&self) -> bool {
        matches!(self, ObjectBody::ScalarFunction(_) | ObjectBody::InlineFunction(_) | ObjectBody::TableFunction(_))
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Module {
    /// The CREATE statement as written (sys.sql_modules.definition).
    pub definition: String,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    pub columns: Vec<Column>,
    /// Index 0 is the heap (index_id 0) or the clustered index (index_id 1); then the
    /// nonclustered indexes by index_id.
    pub indexes: Vec<Index>,
    pub checks: Vec<CheckConstraint>,
    pub foreign_keys: Vec<ForeignKey>,
    pub identity: Option<Identity>,
    /// The highest column_id the table has ever had (sys.tables.max_column_id_used). A
    /// dropped column leaves a gap in column_id and its id is never handed out again: an
    /// added column gets this plus one.
    pub max_column_id_used: i32,
    /// Heaps: the next hidden row id (the heap's row locator; not persisted, recomputed
    /// from the highest stored one at load).
    pub next_row_id: u64,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Column {
    /// 1-based, as sys.columns.column_id.
    pub column_id: i32,
    pub name: String,
    pub ty: SqlType,
    pub nullable: bool,
    pub is_identity: bool,
    pub sparse: bool,
    pub default: Option<DefaultConstraint>,
    pub computed: Option<ComputedColumn>,
    /// The column's COLLATE when it is not the default (None: the database default,
    /// SQL_Latin1_General_CP1_CI_AS). Only character columns have one.
    pub collation: Option<types::Collation>,
}

impl Column {
    /// The code page of the column's char and varchar values (its collation's).
    pub fn code_page(&self) -> types::CodePage {
        self.collation.map_or(types::CodePage::CP1252, |c| c.char_code_page())
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct DefaultConstraint {
    pub object_id: i32,
    pub name: String,
    /// The expression's text, e.g. `(getdate())` as sys.default_constraints shows it.
    pub definition: String,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ComputedColumn {
    pub definition: String,
    pub persisted: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub struct CheckConstraint {
    pub object_id: i32,
    pub name: String,
    pub definition: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReferentialAction {
    NoAction,
    Cascade,
    SetNull,
    SetDefault,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ForeignKey {
    pub object_id: i32,
    pub name: String,
    pub columns: Vec<i32>,
    pub referenced_object_id: i32,
    pub referenced_columns: Vec<i32>,
    pub on_delete: ReferentialAction,
    pub on_update: ReferentialAction,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Identity {
    pub column_id: i32,
    pub seed: i128,
    pub increment: i128,
    /// The last value handed out (IDENT_CURRENT); None before the first insert.
    pub last: Option<i128>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IndexKind {
    Heap,
    Clustered,
    Nonclustered,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Index {
    /// 0 heap, 1 clustered, 2+ nonclustered.
    pub index_id: i32,
    /// None for a heap.
    pub name: Option<String>,
    pub kind: IndexKind,
    pub unique: bool,
    /// Backs a PRIMARY KEY constraint (object id of the constraint).
    pub primary_key: Option<i32>,
    /// Backs a UNIQUE constraint (object id of the constraint).
    pub unique_constraint: Option<i32>,
    /// Key columns (column ids) and whether each is descending.
    pub key_columns: Vec<(i32, bool)>,
    /// INCLUDE columns (nonclustered only).
    pub included: Vec<i32>,
    /// Filtered index predicate text (`WHERE ...`).
    pub filter: Option<String>,
    /// The host's HoBT id.
    pub hobt: u64,
}

impl Table {
    /// The position in `columns` of the column with this column_id. Indexes, keys,
    /// foreign keys and the identity name columns by column_id, which is not the
    /// position once a column has been dropped.
    pub fn column_pos(&self, column_id: i32) -> Option<usize> {
        self.columns.iter().position(|c| c.column_id == column_id)
    }

    /// The positions of these column ids; an id without a column is a corrupt catalog.
    pub fn column_positions(&self, ids: impl IntoIterator<Item = i32>) -> Result<Vec<usize>, SqlError> {
        ids.into_iter().map(|id| self.column_pos(id).ok_or_else(corrupt_catalog)).collect()
    }

    /// The column_id of the column at this position.
    pub fn column_id_at(&self, pos: usize) -> i32 {
        self.columns.get(pos).map_or(0, |c| c.column_id)
    }

    /// The column_id the next added column gets.
    pub fn next_column_id(&self) -> i32 {
        self.max_column_id_used.max(self.columns.iter().map(|c| c.column_id).max().unwrap_or(0)) + 1
    }
}

impl Index {
    /// Index 0 of a table without a clustered index, stored in `hobt`.
    pub fn heap(hobt: u64) -> Index {
        Index {
            index_id: 0,
            name: None,
            kind: IndexKind::Heap,
            unique: false,
            primary_key: None,
            unique_constraint: None,
            key_columns: Vec::new(),
            included: Vec::new(),
            filter: None,
            hobt,
        }
    }

    pub fn type_desc(&self) -> &'static str {
        match self.kind {
            IndexKind::Heap => "HEAP",
            IndexKind::Clustered => "CLUSTERED",
            IndexKind::Nonclustered => "NONCLUSTERED",
        }
    }
}

impl Catalog {
    /// A new database's catalog: the four fixed schemas, no objects.
    pub fn new() -> Catalog {
        let mut schemas = BTreeMap::new();
        for (id, name, principal) in [
            (SCHEMA_DBO, "dbo", 1),
            (SCHEMA_GUEST, "guest", 2),
            (SCHEMA_INFORMATION_SCHEMA, "INFORMATION_SCHEMA", 3),
            (SCHEMA_SYS, "sys", 4),
        ] {
            schemas.insert(id, Schema { id, name: name.to_string(), principal_id: principal });
        }
        let principals = fixed_principals().into_iter().map(|p| (p.id, p)).collect();
        Catalog {
            schemas,
            objects: BTreeMap::new(),
            principals,
            types: BTreeMap::new(),
            next_object_id: FIRST_USER_OBJECT_ID,
        }
    }

    /// The principal called `name` (case-insensitive).
    pub fn principal_by_name(&self, name: &str) -> Option<&Principal> {
        self.principals.values().find(|p| p.name.eq_ignore_ascii_case(name))
    }

    /// The user mapped to `login`, if any.
    pub fn user_for_login(&self, login: &str) -> Option<&Principal> {
        self.principals.values().find(|p| {
            p.kind == PrincipalKind::SqlUser
                && p.id != PRINCIPAL_DBO
                && p.login.as_deref().is_some_and(|l| l.eq_ignore_ascii_case(login))
        })
    }

    /// The id for the next CREATE USER / CREATE ROLE.
    pub fn next_principal_id(&self) -> i32 {
        self.principals
            .keys()
            .copied()
            .filter(|&id| (FIRST_USER_PRINCIPAL_ID..16384).contains(&id))
            .max()
            .map_or(FIRST_USER_PRINCIPAL_ID, |m| m + 1)
    }

    /// `principal` and every role it belongs to, directly or through other roles, and
    /// public.
    pub fn principal_closure(&self, principal: i32) -> Vec<i32> {
        let mut out = vec![principal, PRINCIPAL_PUBLIC];
        let mut i = 0;
        while i < out.len() {
            if let Some(p) = self.principals.get(&out[i]) {
                for r in &p.member_of {
                    if !out.contains(r) {
                        out.push(*r);
                    }
                }
            }
            i += 1;
        }
        out
    }

    pub fn schema_by_name(&self, name: &str) -> Option<&Schema> {
        self.schemas.values().find(|s| s.name.eq_ignore_ascii_case(name))
    }

    /// The object called `name` in `schema_id` (names compare case-insensitively, as
    /// under the default collation).
    pub fn object_by_name(&self, schema_id: i32, name: &str) -> Option<&Object> {
        self.objects.values().find(|o| o.schema_id == schema_id && o.name.eq_ignore_ascii_case(name))
    }

    /// A user-defined type by schema and name (types have a namespace of their own).
    pub fn type_by_name(&self, schema_id: i32, name: &str) -> Option<&UserType> {
        self.types.values().find(|t| t.schema_id == schema_id && t.name.eq_ignore_ascii_case(name))
    }

    pub fn allocate_object_id(&mut self) -> i32 {
        let id = self.next_object_id;
        self.next_object_id += 1;
        id
    }
}

impl Default for Catalog {
    fn default() -> Self {
        Catalog::new()
    }
}

/// The in-memory catalog of a database, shared by all sessions. Readers take the read
/// lock for the duration of binding a statement; DDL takes the write lock.
#[derive(Debug, Default)]
pub struct SharedCatalog {
    pub inner: RwLock<Catalog>,
    /// Per-table counters that change on every insert and are not written to the
    /// catalog: heap row ids and identity values (see the module doc).
    pub counters: parking_lot::Mutex<std::collections::HashMap<i32, std::sync::Arc<TableCounters>>>,
    /// Bumped on every change, so sessions know their cached table descriptions are stale.
    pub version: std::sync::atomic::AtomicU64,
    /// ALTER DATABASE SET RECURSIVE_TRIGGERS (kept in memory only: OFF after a restart).
    pub recursive_triggers: std::sync::atomic::AtomicBool,
    /// Sequences' values, by object id (see `exec::sequence`).
    pub sequences: parking_lot::Mutex<std::collections::HashMap<i32, SequenceState>>,
    /// The database collation (the host keeps it with the database and sets it here at
    /// open and on ALTER DATABASE ... COLLATE): the collation of new character columns
    /// and of literals and variables in batches run in the database.
    pub collation: parking_lot::RwLock<types::Collation>,
}

/// What a sequence has handed out, as loaded from and persisted to the host's bound
/// (see `exec::sequence`).
#[derive(Debug, Clone, Copy, Default)]
pub struct SequenceState {
    /// The catalog's restart count this state belongs to.
    pub restarts: u32,
    /// The last value handed out; None before the first (the next is the start value).
    pub last: Option<i128>,
    /// The bound persisted: values up to it may be handed out without writing again.
    pub bound: Option<i128>,
}

/// In-memory counters of one table.
#[derive(Debug, Default)]
pub struct TableCounters {
    /// The next row id (heap locator / uniquifier); 0 = not loaded yet.
    pub row_id: std::sync::atomic::AtomicU64,
    /// Serialises the first load of `row_id`.
    pub init: parking_lot::Mutex<()>,
    /// None = not loaded; Some(None) = no value handed out yet; Some(Some(v)) = last value.
    pub identity: parking_lot::Mutex<Option<Option<i128>>>,
}

impl SharedCatalog {
    pub fn new(catalog: Catalog) -> SharedCatalog {
        SharedCatalog {
            inner: RwLock::new(catalog),
            counters: Default::default(),
            version: Default::default(),
            recursive_triggers: Default::default(),
            sequences: Default::default(),
            collation: Default::default(),
        }
    }

    pub fn counters(&self, object_id: i32) -> std::sync::Arc<TableCounters> {
        self.counters.lock().entry(object_id).or_default().clone()
    }
}

/// The catalog index key of an object row.
pub fn object_key(object_id: i32) -> Vec<u8> {
    (object_id as u32).to_be_bytes().to_vec()
}

/// The catalog index key of a schema row.
pub fn schema_key(schema_id: i32) -> Vec<u8> {
    (0xFFFF_0000u32 | (schema_id as u32 & 0xFFFF)).to_be_bytes().to_vec()
}

/// The catalog index key of a user-defined type row.
pub fn type_key(user_type_id: i32) -> Vec<u8> {
    (0xFFFD_0000u32 | ((user_type_id - FIRST_USER_TYPE_ID + 1) as u32 & 0xFFFF)).to_be_bytes().to_vec()
}

/// The catalog index key of a principal row.
pub fn principal_key(principal_id: i32) -> Vec<u8> {
    (0xFFFE_0000u32 | (principal_id as u32 & 0xFFFF)).to_be_bytes().to_vec()
}

/// The stored columns of the catalog index: one `varbinary(max)`.
pub fn catalog_index_columns() -> Vec<crate::host::StoredColumn> {
    vec![crate::host::StoredColumn {
        ty: SqlType::VarBinary { len: types::Length::Max },
        nullable: false,
        sparse: false,
        code_page: types::CodePage::CP1252,
    }]
}

impl Catalog {
    /// Reads a database's catalog from its catalog index (see the module doc).
    pub fn load(host: &mut dyn crate::host::Host, index: &IndexRef) -> Result<Catalog, SqlError> {
        let mut catalog = Catalog::new();
        let mut out = Vec::new();
        let mut last: Option<Vec<u8>> = None;
        loop {
            out.clear();
            let lower = match &last {
                Some(k) => std::ops::Bound::Excluded(k.as_slice()),
                None => std::ops::Bound::Unbounded,
            };
            let more = host.scan(index, lower, std::ops::Bound::Unbounded, false, 256, &mut out).map_err(host_error)?;
            for (key, row) in &out {
                let Some(Value::Binary(bytes)) = row.first() else {
                    return Err(corrupt_catalog());
                };
                if key.len() == 4 && key[0] == 0xFF && key[1] == 0xFF {
                    let schema = codec::decode_schema(bytes)?;
                    catalog.schemas.insert(schema.id, schema);
                } else if key.len() == 4 && key[0] == 0xFF && key[1] == 0xFD {
                    let t = codec::decode_type(bytes)?;
                    catalog.next_object_id = catalog.next_object_id.max(t.table_object_id + 1);
                    catalog.types.insert(t.id, t);
                } else if key.len() == 4 && key[0] == 0xFF && key[1] == 0xFE {
                    let p = codec::decode_principal(bytes)?;
                    catalog.principals.insert(p.id, p);
                } else {
                    let object = codec::decode_object(bytes)?;
                    catalog.next_object_id = catalog.next_object_id.max(object.max_id() + 1);
                    catalog.objects.insert(object.id, object);
                }
            }
            if let Some((k, _)) = out.last() {
                last = Some(k.clone());
            }
            if !more {
                break;
            }
        }
        Ok(catalog)
    }
}

impl Object {
    /// The highest object id this object uses (its own and its constraints').
    pub fn max_id(&self) -> i32 {
        let mut m = self.id;
        if let ObjectBody::Table(t) = &self.body {
            for c in &t.columns {
                if let Some(d) = &c.default {
                    m = m.max(d.object_id);
                }
            }
            for c in &t.checks {
                m = m.max(c.object_id);
            }
            for f in &t.foreign_keys {
                m = m.max(f.object_id);
            }
            for i in &t.indexes {
                m = m.max(i.primary_key.unwrap_or(0)).max(i.unique_constraint.unwrap_or(0));
            }
        }
        m
    }

    pub fn table(&self) -> Option<&Table> {
        match &self.body {
            ObjectBody::Table(t) => Some(t),
            _ => None,
        }
    }
}

impl Catalog {
    /// The triggers defined on the table or view `parent_id`, by object id.
    pub fn triggers_of(&self, parent_id: i32) -> impl Iterator<Item = (&Object, &Trigger)> {
        self.objects.values().filter_map(move |o| match &o.body {
            ObjectBody::Trigger(t) if t.parent_id == parent_id => Some((o, t)),
            _ => None,
        })
    }
}

pub(crate) fn corrupt_catalog() -> SqlError {
    SqlError::new(
        8992,
        16,
        1,
        "Check Catalog Msg 3853: the catalog row could not be decoded; run DBCC CHECKDB.".to_string(),
    )
}

pub(crate) fn host_error(e: crate::host::HostError) -> SqlError {
    match e {
        crate::host::HostError::Sql(e) => e,
        crate::host::HostError::Duplicate => SqlError::new(2601, 14, 1, "Duplicate key in the catalog."),
    }
}

// Cache invalidation: SharedCatalog carries a version bumped on every change.
impl SharedCatalog {
    pub fn version(&self) -> u64 {
        self.version.load(std::sync::atomic::Ordering::Acquire)
    }

    pub fn bump(&self) {
        self.version.fetch_add(1, std::sync::atomic::Ordering::AcqRel);
    }
}
