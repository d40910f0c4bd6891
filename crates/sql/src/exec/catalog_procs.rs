//! The ODBC catalog procedures drivers call for metadata: sp_columns and sp_columns_100
//! (mssql-jdbc's DatabaseMetaData.getColumns), sp_tables, sp_databases, sp_pkeys and
//! sp_fkeys, with SQL Server's result columns (names, types, order) and ODBC type codes.
//! Rows come from the current database's catalog (user tables and views; sp_tables also
//! lists the system views), sorted as SQL Server sorts them.
//!
//! Also sp_describe_parameter_encryption, which drivers with Always Encrypted on call
//! before each parameterized query: Mesquite has no encrypted columns, so it answers
//! that no key is needed and every parameter goes in plaintext.

use std::cmp::Ordering;
use std::sync::Arc;

use types::{Length, SqlError, SqlType, Value};

use super::context::Cx;
use super::expr::{as_text, Row};
use super::plan::{OutCol, Plan};
use super::run::ArgValue;
use super::sysviews::{nv, sysname};
use crate::ast::{Ident, ObjectName};
use crate::catalog::{IndexKind, ObjectBody, ReferentialAction};
use crate::results::command_code;

/// The arguments of a system procedure bound to its parameters (positional first, then
/// `@name = value`); a missing, DEFAULT or NULL argument is None.
fn bind(proc: &str, params: &[&str], args: &[ArgValue]) -> Result<Vec<Option<(Value, SqlType)>>, SqlError> {
    let mut out = vec![None; params.len()];
    for (k, a) in args.iter().enumerate() {
        let i = match &a.name {
            Some(n) => params
                .iter()
                .position(|p| p.eq_ignore_ascii_case(n))
                .ok_or_else(|| SqlError::new(8145, 16, 2, format!("{n} is not a parameter for procedure {proc}.")))?,
            None if k < params.len() => k,
            None => {
                return Err(SqlError::new(
                    8144,
                    16,
                    2,
                    format!("Procedure or function {proc} has too many arguments specified."),
                ))
            }
        };
        if !a.is_default && !a.value.is_null() {
            out[i] = Some((a.value.clone(), a.ty));
        }
    }
    Ok(out)
}

fn text(v: &Option<(Value, SqlType)>) -> Option<String> {
    v.as_ref().and_then(|(v, t)| as_text(v, t))
}

fn int(v: &Option<(Value, SqlType)>, default: i64) -> Result<i64, SqlError> {
    v.as_ref().map_or(Ok(default), |(v, t)| super::run::int_value(v, t))
}

fn missing(proc: &str, param: &str) -> SqlError {
    SqlError::new(
        201,
        16,
        4,
        format!("Procedure or function '{proc}' expects parameter '{param}', which was not supplied."),
    )
}

/// The qualifier (database) argument must name the current database (Msg 15250).
fn check_qualifier(cx: &Cx, q: &Option<String>) -> Result<(), SqlError> {
    match q {
        Some(q) if !q.is_empty() && q != "%" && !q.eq_ignore_ascii_case(&cx.current_db_name()) => Err(SqlError::new(
            15250,
            16,
            1,
            "The database name component of the object qualifier must be the name of the current database.",
        )),
        _ => Ok(()),
    }
}

/// A name filter: a LIKE pattern (`pattern` true) or an exact, case-insensitive name;
/// no filter matches every name.
struct NameFilter {
    value: Option<String>,
    pattern: bool,
}

impl NameFilter {
    fn matches(&self, name: &str) -> bool {
        match &self.value {
            None => true,
            Some(v) if self.pattern => crate::scalar::ops::like(name, v, None).unwrap_or(false),
            Some(v) => v.eq_ignore_ascii_case(name),
        }
    }
}

fn vc(n: u16) -> SqlType {
    SqlType::VarChar { len: Length::Bounded(n) }
}

fn s(v: &str) -> Value {
    Value::String(v.to_string())
}

fn small(v: i16) -> Value {
    Value::SmallInt(v)
}

fn opt_small(v: Option<i16>) -> Value {
    v.map_or(Value::Null, Value::SmallInt)
}

fn opt_int(v: Option<i32>) -> Value {
    v.map_or(Value::Null, Value::Int)
}

/// Case-insensitive ordering of names, as the CI_AS collation sorts them.
fn ci(a: &Value, b: &Value) -> Ordering {
    match (a, b) {
        (Value::String(a), Value::String(b)) => a.to_lowercase().cmp(&b.to_lowercase()),
        (Value::Null, Value::Null) => Ordering::Equal,
        (Value::Null, _) => Ordering::Less,
        (_, Value::Null) => Ordering::Greater,
        (Value::SmallInt(a), Value::SmallInt(b)) => a.cmp(b),
        (Value::Int(a), Value::Int(b)) => a.cmp(b),
        _ => Ordering::Equal,
    }
}

fn sort_by(rows: &mut [Row], keys: &[usize]) {
    rows.sort_by(|a, b| keys.iter().map(|&k| ci(&a[k], &b[k])).find(|o| o.is_ne()).unwrap_or(Ordering::Equal));
}

/// Sends one result set (a SELECT's columns, rows and DONE).
fn send(cx: &mut Cx, spec: &[(&str, SqlType, bool)], rows: Vec<Row>) -> Result<(), SqlError> {
    let cols: Vec<OutCol> = spec.iter().map(|(n, t, null)| OutCol::new(*n, *t, *null)).collect();
    let plan = Plan::Rows { rows: Arc::new(rows), cols };
    let n = cx.send_result(&plan)?;
    cx.state.rowcount = n as i64;
    let outer = std::mem::replace(&mut cx.cur_cmd, command_code::SELECT);
    let r = cx.done(Some(n));
    cx.cur_cmd = outer;
    r
}

/// sp_describe_parameter_encryption @tsql, @params: SQL Server's two result sets. The
/// first lists the column encryption keys the parameters need: none, as no column is
/// encrypted. The second has a row per declared parameter, all plaintext
/// (column_encryption_type 0); its algorithm, key ordinal and normalization version are
/// 0 for them (what SQL Server puts there for a plaintext parameter is not documented).
/// The batch is parsed, so a syntax error in it is reported as SQL Server compiles it.
pub(crate) fn sp_describe_parameter_encryption(cx: &mut Cx, args: &[ArgValue]) -> Result<(), SqlError> {
    const PROC: &str = "sp_describe_parameter_encryption";
    let a = bind(PROC, &["@tsql", "@params"], args)?;
    let tsql = text(&a[0]).ok_or_else(|| missing(PROC, "@tsql"))?;
    crate::parse_batch(&tsql)?;
    let params = super::procs::declare_params(cx, &text(&a[1]).unwrap_or_default())?;
    let tiny = SqlType::TinyInt;
    send(
        cx,
        &[
            ("column_encryption_key_ordinal", SqlType::Int, false),
            ("database_id", SqlType::Int, false),
            ("column_encryption_key_id", SqlType::Int, false),
            ("column_encryption_key_version", SqlType::Int, false),
            ("column_encryption_key_metadata_version", SqlType::Binary { len: 8 }, false),
            ("column_encryption_key_encrypted_value", SqlType::VarBinary { len: Length::Bounded(4000) }, false),
            ("column_master_key_store_provider_name", sysname(), false),
            ("column_master_key_path", nv(4000), false),
            ("column_encryption_key_encryption_algorithm_name", sysname(), false),
        ],
        Vec::new(),
    )?;
    let rows = params
        .iter()
        .enumerate()
        .map(|(i, (name, _, _))| {
            vec![
                Value::Int(i as i32 + 1),
                s(name),
                Value::TinyInt(0),
                Value::TinyInt(0),
                Value::Int(0),
                Value::TinyInt(0),
            ]
        })
        .collect();
    send(
        cx,
        &[
            ("parameter_ordinal", SqlType::Int, false),
            ("parameter_name", sysname(), false),
            ("column_encryption_algorithm", tiny, false),
            ("column_encryption_type", tiny, false),
            ("column_encryption_key_ordinal", SqlType::Int, false),
            ("column_encryption_normalization_rule_version", tiny, false),
        ],
        rows,
    )
}

/// sp_helptext: a module's definition (sys.sql_modules.definition), one row per line
/// (each keeping its line break, as SQL Server's does), lines over 255 characters cut.
pub(crate) fn sp_helptext(cx: &mut Cx, args: &[ArgValue]) -> Result<(), SqlError> {
    let a = bind("sp_helptext", &["@objname", "@columnname"], args)?;
    let Some(name) = text(&a[0]) else { return Err(missing("sp_helptext", "@objname")) };
    let db_name = cx.current_db_name();
    let not_found = || {
        SqlError::new(
            15009,
            16,
            1,
            format!("The object '{name}' does not exist in database '{db_name}' or is invalid for this operation."),
        )
    };
    let obj = match super::base::parse_object_name(&name) {
        Ok(n) if n.database().is_none_or(|d| d.value.eq_ignore_ascii_case(&db_name)) => cx.resolve_object(&n)?,
        Ok(_) => {
            return Err(SqlError::new(
                15250,
                16,
                1,
                "The database name component of the object qualifier must be the name of the current database.",
            ))
        }
        Err(_) => None,
    };
    let (_, obj) = obj.ok_or_else(not_found)?;
    let Some(m) = obj.body.module() else {
        return Err(SqlError::new(15197, 16, 1, format!("There is no text for object '{name}'.")));
    };
    let mut rows = Vec::new();
    for line in m.definition.split_inclusive('\n') {
        let chars: Vec<char> = line.chars().collect();
        for piece in chars.chunks(255) {
            rows.push(vec![Value::String(piece.iter().collect())]);
        }
    }
    send(cx, &[("Text", nv(255), true)], rows)
}

/// A table or view of the current database with its schema name and columns.
struct Relation {
    schema: String,
    name: String,
    columns: Vec<RelColumn>,
}

struct RelColumn {
    name: String,
    ordinal: i32,
    ty: SqlType,
    nullable: bool,
    identity: bool,
    computed: bool,
    sparse: bool,
    default: Option<String>,
}

/// The user tables and views of the current database whose schema and name pass the
/// filters. A view's columns are those of its bound query (a view that no longer binds
/// has none).
fn relations(cx: &mut Cx, owner: &NameFilter, table: &NameFilter) -> Result<Vec<Relation>, SqlError> {
    let db = cx.state.database;
    let mut out = Vec::new();
    let mut views = Vec::new();
    {
        let cat = cx.catalog(db)?;
        let g = cat.inner.read();
        for o in g.objects.values() {
            let schema = g.schemas.get(&o.schema_id).map(|x| x.name.clone()).unwrap_or_default();
            if !owner.matches(&schema) || !table.matches(&o.name) || o.name.starts_with('#') {
                continue;
            }
            match &o.body {
                ObjectBody::Table(t) => out.push(Relation {
                    schema,
                    name: o.name.clone(),
                    columns: t
                        .columns
                        .iter()
                        .map(|c| RelColumn {
                            name: c.name.clone(),
                            ordinal: c.column_id,
                            ty: c.ty,
                            nullable: c.nullable,
                            identity: c.is_identity,
                            computed: c.computed.is_some(),
                            sparse: c.sparse,
                            default: c.default.as_ref().map(|d| d.definition.clone()),
                        })
                        .collect(),
                }),
                ObjectBody::View(_) => views.push((schema, o.name.clone())),
                _ => {}
            }
        }
    }
    for (schema, name) in views {
        let oname = ObjectName { parts: vec![Ident::new(schema.clone()), Ident::new(name.clone())] };
        let cols = super::query::Binder::new(cx).table_source(&oname).map(|(_, c)| c).unwrap_or_default();
        let columns = cols
            .into_iter()
            .enumerate()
            .map(|(i, c)| RelColumn {
                name: c.name,
                ordinal: i as i32 + 1,
                ty: c.ty,
                nullable: c.nullable,
                identity: false,
                computed: false,
                sparse: false,
                default: None,
            })
            .collect();
        out.push(Relation { schema, name, columns });
    }
    Ok(out)
}

/// What ODBC's SQLColumns says of a type, as SQL Server's spt_datatype_info has it.
struct OdbcType {
    data_type: i16,
    precision: Option<i32>,
    length: i32,
    scale: Option<i16>,
    radix: Option<i16>,
    sql_data_type: i16,
    datetime_sub: Option<i16>,
    octet_length: Option<i32>,
    /// The legacy (TDS 4.2) type code: the nullable variant for a NULL column.
    ss_data_type: u8,
}

fn odbc_type(ty: &SqlType, nullable: bool, odbc3: bool) -> OdbcType {
    let num = |data_type: i16, precision: i32, length: i32, fixed: u8, n: u8| OdbcType {
        data_type,
        precision: Some(precision),
        length,
        scale: Some(0),
        radix: Some(10),
        sql_data_type: data_type,
        datetime_sub: None,
        octet_length: None,
        ss_data_type: if nullable { n } else { fixed },
    };
    // char/binary types: (precision, length, octets); MAX types report 0 (mssql-jdbc's
    // ZeroFixupFilter turns a 0 COLUMN_SIZE into Integer.MAX_VALUE).
    let chars = |data_type: i16, len: Option<u16>, bytes_per_char: i32, ss: u8| {
        let p = len.map_or(0, i32::from);
        OdbcType {
            data_type,
            precision: Some(p),
            length: p * bytes_per_char,
            scale: None,
            radix: None,
            sql_data_type: data_type,
            datetime_sub: None,
            octet_length: Some(p * bytes_per_char),
            ss_data_type: ss,
        }
    };
    let bounded = |l: Length| match l {
        Length::Max => None,
        Length::Bounded(n) => Some(n),
    };
    // Date and time types: ODBC 3 codes (91 date, 93 timestamp) or ODBC 2's (9, 11).
    let temporal = |v3: i16, v2: i16, precision: i32, length: i32, scale: Option<u8>, sub: i16, ss: u8| {
        let data_type = if odbc3 { v3 } else { v2 };
        OdbcType {
            data_type,
            precision: Some(precision),
            length,
            scale: scale.map(i16::from),
            radix: None,
            sql_data_type: if odbc3 && v3 > 90 { 9 } else { data_type },
            datetime_sub: if odbc3 || v3 < 0 { Some(sub) } else { None },
            octet_length: None,
            ss_data_type: ss,
        }
    };
    let frac = |scale: u8| if scale > 0 { i32::from(scale) + 1 } else { 0 };
    let (p53, p24, float_radix) = if odbc3 { (53, 24, 2) } else { (15, 7, 10) };
    match *ty {
        SqlType::Bit => OdbcType { scale: None, radix: None, ..num(-7, 1, 1, 50, 50) },
        SqlType::TinyInt => num(-6, 3, 1, 48, 38),
        SqlType::SmallInt => num(5, 5, 2, 52, 38),
        SqlType::Int => num(4, 10, 4, 56, 38),
        SqlType::BigInt => num(-5, 19, 8, 127, 38),
        SqlType::Decimal { precision, scale } => OdbcType {
            scale: Some(i16::from(scale)),
            ..num(3, i32::from(precision), i32::from(precision) + 2, 55, 106)
        },
        SqlType::Numeric { precision, scale } => OdbcType {
            scale: Some(i16::from(scale)),
            ..num(2, i32::from(precision), i32::from(precision) + 2, 63, 108)
        },
        SqlType::Money => OdbcType { scale: Some(4), ..num(3, 19, 21, 60, 110) },
        SqlType::SmallMoney => OdbcType { scale: Some(4), ..num(3, 10, 12, 122, 110) },
        SqlType::Float => OdbcType { scale: None, radix: Some(float_radix), ..num(6, p53, 8, 62, 109) },
        SqlType::Real => OdbcType { scale: None, radix: Some(float_radix), ..num(7, p24, 4, 59, 109) },
        SqlType::Date => temporal(91, 9, 10, 6, None, 1, 0),
        SqlType::Time { scale } => temporal(-154, -154, 8 + frac(scale), 12, Some(scale), 0, 0),
        SqlType::DateTime => temporal(93, 11, 23, 16, Some(3), 3, if nullable { 111 } else { 61 }),
        SqlType::SmallDateTime => temporal(93, 11, 16, 16, Some(0), 3, if nullable { 111 } else { 58 }),
        SqlType::DateTime2 { scale } => temporal(93, 11, 19 + frac(scale), 16, Some(scale), 3, 0),
        SqlType::DateTimeOffset { scale } => temporal(-155, -155, 26 + frac(scale), 20, Some(scale), 0, 0),
        SqlType::Char { len } => chars(1, Some(len), 1, 47),
        SqlType::VarChar { len } => chars(12, bounded(len), 1, 39),
        SqlType::NChar { len } => chars(-8, Some(len), 2, 47),
        SqlType::NVarChar { len } => chars(-9, bounded(len), 2, 39),
        SqlType::Binary { len } => chars(-2, Some(len), 1, 45),
        SqlType::VarBinary { len } => chars(-3, bounded(len), 1, 37),
        SqlType::UniqueIdentifier => OdbcType { length: 16, octet_length: None, ..chars(-11, Some(36), 1, 37) },
        SqlType::Xml => chars(-152, None, 1, 0),
        // SQL_SS_VARIANT; LENGTH 8016 is the value and its base type header.
        SqlType::Variant => OdbcType { length: 8016, octet_length: None, ..chars(-150, Some(8000), 1, 39) },
        // SQL_SS_UDT, as SQL Server's ODBC catalog reports CLR types.
        SqlType::HierarchyId => OdbcType { length: 892, octet_length: Some(892), ..chars(-151, Some(892), 1, 0) },
        SqlType::Geometry | SqlType::Geography => {
            OdbcType { length: i32::MAX, octet_length: Some(i32::MAX), ..chars(-151, None, 1, 0) }
        }
        // SQL_LONGVARCHAR, SQL_WLONGVARCHAR, SQL_LONGVARBINARY with their full sizes.
        SqlType::Text | SqlType::NText | SqlType::Image => {
            let (data_type, precision, length, ss) = match ty {
                SqlType::Text => (-1, i32::MAX, i32::MAX, 35),
                SqlType::NText => (-10, i32::MAX / 2, i32::MAX - 1, 99),
                _ => (-4, i32::MAX, i32::MAX, 34),
            };
            OdbcType { precision: Some(precision), length, octet_length: Some(length), ..chars(data_type, None, 1, ss) }
        }
    }
}

/// The TYPE_NAME of a column: an identity column's adds " identity" (decimal and numeric
/// as `decimal() identity`).
fn odbc_type_name(ty: &SqlType, identity: bool) -> String {
    match (ty, identity) {
        (_, false) => ty.name().to_string(),
        (SqlType::Decimal { .. } | SqlType::Numeric { .. }, true) => format!("{}() identity", ty.name()),
        (_, true) => format!("{} identity", ty.name()),
    }
}

/// sp_columns [@table_name =] name [, @table_owner] [, @table_qualifier] [, @column_name]
/// [, @ODBCVer]; sp_columns_100 adds @NameScope before @ODBCVer and @fUsePattern after,
/// and the SS_IS_* / SS_UDT_* / SS_XML_* columns before SS_DATA_TYPE.
pub(crate) fn sp_columns(cx: &mut Cx, proc: &str, args: &[ArgValue]) -> Result<(), SqlError> {
    let v100 = proc == "sp_columns_100";
    let params: &[&str] = if v100 {
        &["@table_name", "@table_owner", "@table_qualifier", "@column_name", "@NameScope", "@ODBCVer", "@fUsePattern"]
    } else {
        &["@table_name", "@table_owner", "@table_qualifier", "@column_name", "@ODBCVer"]
    };
    if !args.iter().enumerate().any(|(k, a)| a.name.as_ref().map_or(k == 0, |n| n.eq_ignore_ascii_case("@table_name")))
    {
        return Err(missing(proc, "@table_name"));
    }
    let a = bind(proc, params, args)?;
    let odbc3 = int(&a[if v100 { 5 } else { 4 }], 2)? == 3;
    let pattern = !v100 || int(&a[6], 1)? != 0;
    check_qualifier(cx, &text(&a[2]))?;
    let owner = NameFilter { value: text(&a[1]), pattern };
    let table = NameFilter { value: text(&a[0]), pattern };
    let column = NameFilter { value: text(&a[3]), pattern };
    let db_name = cx.current_db_name();
    let mut rows = Vec::new();
    for r in relations(cx, &owner, &table)? {
        for c in r.columns.iter().filter(|c| column.matches(&c.name)) {
            let t = odbc_type(&c.ty, c.nullable, odbc3);
            let mut row = vec![
                s(&db_name),
                s(&r.schema),
                s(&r.name),
                s(&c.name),
                small(t.data_type),
                s(&odbc_type_name(&c.ty, c.identity)),
                opt_int(t.precision),
                Value::Int(t.length),
                opt_small(t.scale),
                opt_small(t.radix),
                small(i16::from(c.nullable)),
                Value::Null,
                c.default.as_deref().map_or(Value::Null, s),
                small(t.sql_data_type),
                opt_small(t.datetime_sub),
                opt_int(t.octet_length),
                Value::Int(c.ordinal),
                s(if c.nullable { "YES" } else { "NO" }),
            ];
            if v100 {
                row.extend([
                    small(i16::from(c.sparse)),
                    small(0),
                    small(i16::from(c.computed)),
                    small(i16::from(c.identity)),
                    Value::Null,
                    Value::Null,
                    Value::Null,
                    Value::Null,
                    Value::Null,
                    Value::Null,
                ]);
            }
            row.push(Value::TinyInt(t.ss_data_type));
            rows.push(row);
        }
    }
    sort_by(&mut rows, &[0, 1, 2, 16]);
    let si = SqlType::SmallInt;
    let mut spec = vec![
        ("TABLE_QUALIFIER", sysname(), true),
        ("TABLE_OWNER", sysname(), true),
        ("TABLE_NAME", sysname(), true),
        ("COLUMN_NAME", sysname(), true),
        ("DATA_TYPE", si, true),
        ("TYPE_NAME", sysname(), true),
        ("PRECISION", SqlType::Int, true),
        ("LENGTH", SqlType::Int, true),
        ("SCALE", si, true),
        ("RADIX", si, true),
        ("NULLABLE", si, true),
        ("REMARKS", vc(254), true),
        ("COLUMN_DEF", nv(4000), true),
        ("SQL_DATA_TYPE", si, true),
        ("SQL_DATETIME_SUB", si, true),
        ("CHAR_OCTET_LENGTH", SqlType::Int, true),
        ("ORDINAL_POSITION", SqlType::Int, true),
        ("IS_NULLABLE", vc(254), true),
    ];
    if v100 {
        spec.extend([
            ("SS_IS_SPARSE", si, true),
            ("SS_IS_COLUMN_SET", si, true),
            ("SS_IS_COMPUTED", si, true),
            ("SS_IS_IDENTITY", si, true),
            ("SS_UDT_CATALOG_NAME", nv(128), true),
            ("SS_UDT_SCHEMA_NAME", nv(128), true),
            ("SS_UDT_ASSEMBLY_TYPE_NAME", SqlType::NVarChar { len: Length::Max }, true),
            ("SS_XML_SCHEMACOLLECTION_CATALOG_NAME", nv(128), true),
            ("SS_XML_SCHEMACOLLECTION_SCHEMA_NAME", nv(128), true),
            ("SS_XML_SCHEMACOLLECTION_NAME", nv(128), true),
        ]);
    }
    spec.push(("SS_DATA_TYPE", SqlType::TinyInt, true));
    send(cx, &spec, rows)
}

const TABLES_SPEC: [(&str, SqlType, bool); 5] = [
    ("TABLE_QUALIFIER", SqlType::NVarChar { len: Length::Bounded(128) }, true),
    ("TABLE_OWNER", SqlType::NVarChar { len: Length::Bounded(128) }, true),
    ("TABLE_NAME", SqlType::NVarChar { len: Length::Bounded(128) }, true),
    ("TABLE_TYPE", SqlType::VarChar { len: Length::Bounded(32) }, true),
    ("REMARKS", SqlType::VarChar { len: Length::Bounded(254) }, true),
];

/// sp_tables [@table_name] [, @table_owner] [, @table_qualifier] [, @table_type]
/// [, @fUsePattern]. @table_type is a list of quoted types (`'TABLE','VIEW'`); the
/// system views are VIEWs owned by sys and INFORMATION_SCHEMA, as in SQL Server. The
/// enumerations ODBC defines: qualifier '%' with empty owner and name lists the
/// databases, owner '%' with the others empty the schemas, type '%' the table types.
pub(crate) fn sp_tables(cx: &mut Cx, args: &[ArgValue]) -> Result<(), SqlError> {
    let a =
        bind("sp_tables", &["@table_name", "@table_owner", "@table_qualifier", "@table_type", "@fUsePattern"], args)?;
    let (name, owner, qualifier, types) = (text(&a[0]), text(&a[1]), text(&a[2]), text(&a[3]));
    let empty = |v: &Option<String>| v.as_deref() == Some("");
    let row = |q: Value, o: Value, t: Value| vec![q, o, Value::Null, t, Value::Null];
    if qualifier.as_deref() == Some("%") && empty(&owner) && empty(&name) {
        let mut rows: Vec<Row> =
            cx.host.databases().iter().map(|d| row(s(&d.name), Value::Null, Value::Null)).collect();
        sort_by(&mut rows, &[0]);
        return send(cx, &TABLES_SPEC, rows);
    }
    if owner.as_deref() == Some("%") && empty(&qualifier) && empty(&name) {
        let cat = cx.catalog(cx.state.database)?;
        let mut rows: Vec<Row> =
            cat.inner.read().schemas.values().map(|sc| row(Value::Null, s(&sc.name), Value::Null)).collect();
        sort_by(&mut rows, &[1]);
        return send(cx, &TABLES_SPEC, rows);
    }
    if types.as_deref() == Some("%") && empty(&qualifier) && empty(&owner) && empty(&name) {
        let rows = ["SYSTEM TABLE", "TABLE", "VIEW"].iter().map(|t| row(Value::Null, Value::Null, s(t))).collect();
        return send(cx, &TABLES_SPEC, rows);
    }
    check_qualifier(cx, &qualifier)?;
    let pattern = int(&a[4], 1)? != 0;
    let owner = NameFilter { value: owner, pattern };
    let table = NameFilter { value: name, pattern };
    let wanted: Option<Vec<String>> = types.map(|t| {
        t.split(',').map(|x| x.trim().trim_matches(|c| c == '\'' || c == '"').trim().to_ascii_uppercase()).collect()
    });
    let keep = |ty: &str| wanted.as_ref().is_none_or(|w| w.iter().any(|x| x == ty));
    let db_name = cx.current_db_name();
    let mut rows = Vec::new();
    {
        let cat = cx.catalog(cx.state.database)?;
        let g = cat.inner.read();
        for o in g.objects.values() {
            let ty = match o.body {
                ObjectBody::Table(_) => "TABLE",
                ObjectBody::View(_) => "VIEW",
                _ => continue,
            };
            let schema = g.schemas.get(&o.schema_id).map(|x| x.name.as_str()).unwrap_or_default();
            if keep(ty) && owner.matches(schema) && table.matches(&o.name) && !o.name.starts_with('#') {
                rows.push(vec![s(&db_name), s(schema), s(&o.name), s(ty), Value::Null]);
            }
        }
    }
    if keep("VIEW") {
        for o in crate::system::all().filter(|o| o.kind == crate::system::ObjectKind::View) {
            let schema = o.schema.name();
            if owner.matches(schema) && table.matches(o.name) {
                rows.push(vec![s(&db_name), s(schema), s(o.name), s("VIEW"), Value::Null]);
            }
        }
    }
    sort_by(&mut rows, &[3, 0, 1, 2]);
    send(cx, &TABLES_SPEC, rows)
}

/// sp_databases: every database with its size in KB (data and log files).
pub(crate) fn sp_databases(cx: &mut Cx, args: &[ArgValue]) -> Result<(), SqlError> {
    bind("sp_databases", &[], args)?;
    let mut rows = Vec::new();
    for d in cx.host.databases() {
        let pages: i64 = cx.host.database_files(d.id).iter().map(|f| f.size_pages).sum();
        rows.push(vec![s(&d.name), Value::Int((pages * 8).min(i64::from(i32::MAX)) as i32), Value::Null]);
    }
    sort_by(&mut rows, &[0]);
    send(
        cx,
        &[("DATABASE_NAME", sysname(), false), ("DATABASE_SIZE", SqlType::Int, true), ("REMARKS", vc(254), true)],
        rows,
    )
}

/// A user table's key facts: (schema, name, object id, table).
type TableRef = (String, String, i32, crate::catalog::Table);

/// The user tables named `name` (exact, case-insensitive) in schema `owner` (any schema
/// when None).
fn tables_named(cx: &Cx, name: Option<&str>, owner: Option<&str>) -> Result<Vec<TableRef>, SqlError> {
    let cat = cx.catalog(cx.state.database)?;
    let g = cat.inner.read();
    let mut out = Vec::new();
    for o in g.objects.values() {
        let ObjectBody::Table(t) = &o.body else { continue };
        let schema = g.schemas.get(&o.schema_id).map(|x| x.name.clone()).unwrap_or_default();
        if name.is_none_or(|n| n.eq_ignore_ascii_case(&o.name))
            && owner.is_none_or(|w| w.eq_ignore_ascii_case(&schema))
            && !o.name.starts_with('#')
        {
            out.push((schema, o.name.clone(), o.id, t.clone()));
        }
    }
    Ok(out)
}

fn column_name(t: &crate::catalog::Table, id: i32) -> Value {
    t.columns.iter().find(|c| c.column_id == id).map_or(Value::Null, |c| s(&c.name))
}

/// sp_pkeys [@table_name =] name [, @table_owner] [, @table_qualifier]: the primary key's
/// columns in key order.
pub(crate) fn sp_pkeys(cx: &mut Cx, args: &[ArgValue]) -> Result<(), SqlError> {
    let a = bind("sp_pkeys", &["@table_name", "@table_owner", "@table_qualifier"], args)?;
    let Some(name) = text(&a[0]) else { return Err(missing("sp_pkeys", "@table_name")) };
    check_qualifier(cx, &text(&a[2]))?;
    let db_name = cx.current_db_name();
    let mut rows = Vec::new();
    for (schema, tname, _, t) in tables_named(cx, Some(&name), text(&a[1]).as_deref())? {
        let Some(pk) = t.indexes.iter().find(|ix| ix.primary_key.is_some()) else { continue };
        let pk_name = pk.name.as_deref().map_or(Value::Null, s);
        for (seq, (col, _)) in pk.key_columns.iter().enumerate() {
            rows.push(vec![
                s(&db_name),
                s(&schema),
                s(&tname),
                column_name(&t, *col),
                small(seq as i16 + 1),
                pk_name.clone(),
            ]);
        }
    }
    sort_by(&mut rows, &[0, 1, 2, 4]);
    send(
        cx,
        &[
            ("TABLE_QUALIFIER", sysname(), true),
            ("TABLE_OWNER", sysname(), true),
            ("TABLE_NAME", sysname(), false),
            ("COLUMN_NAME", sysname(), false),
            ("KEY_SEQ", SqlType::SmallInt, false),
            ("PK_NAME", sysname(), true),
        ],
        rows,
    )
}

/// ODBC's referential action codes as sp_fkeys reports them.
fn rule(r: ReferentialAction) -> i16 {
    match r {
        ReferentialAction::Cascade => 0,
        ReferentialAction::NoAction => 1,
        ReferentialAction::SetNull => 2,
        ReferentialAction::SetDefault => 3,
    }
}

/// sp_fkeys [@pktable_name] [, @pktable_owner] [, @pktable_qualifier] [, @fktable_name]
/// [, @fktable_owner] [, @fktable_qualifier]: the foreign keys referencing the primary
/// key table, or those of the foreign key table, or between the two (Msg 15252 without
/// either name).
pub(crate) fn sp_fkeys(cx: &mut Cx, args: &[ArgValue]) -> Result<(), SqlError> {
    let a = bind(
        "sp_fkeys",
        &[
            "@pktable_name",
            "@pktable_owner",
            "@pktable_qualifier",
            "@fktable_name",
            "@fktable_owner",
            "@fktable_qualifier",
        ],
        args,
    )?;
    let (pk_name, fk_name) = (text(&a[0]), text(&a[3]));
    if pk_name.is_none() && fk_name.is_none() {
        return Err(SqlError::new(15252, 16, 1, "The primary or foreign key table name must be given."));
    }
    check_qualifier(cx, &text(&a[2]))?;
    check_qualifier(cx, &text(&a[5]))?;
    let pk_tables = tables_named(cx, pk_name.as_deref(), text(&a[1]).as_deref())?;
    let fk_tables = tables_named(cx, fk_name.as_deref(), text(&a[4]).as_deref())?;
    let db_name = cx.current_db_name();
    let mut rows = Vec::new();
    for (fschema, fname, _, ft) in &fk_tables {
        for fk in &ft.foreign_keys {
            let Some((pschema, pname, _, pt)) = pk_tables.iter().find(|p| p.2 == fk.referenced_object_id) else {
                continue;
            };
            // The referenced key: the primary key or unique constraint (or index) on
            // exactly the referenced columns.
            let key = pt
                .indexes
                .iter()
                .filter(|ix| ix.unique && ix.kind != IndexKind::Heap)
                .find(|ix| {
                    let mut k: Vec<i32> = ix.key_columns.iter().map(|c| c.0).collect();
                    let mut r = fk.referenced_columns.clone();
                    k.sort_unstable();
                    r.sort_unstable();
                    k == r
                })
                .and_then(|ix| ix.name.as_deref())
                .map_or(Value::Null, s);
            for (seq, (fc, pc)) in fk.columns.iter().zip(&fk.referenced_columns).enumerate() {
                rows.push(vec![
                    s(&db_name),
                    s(pschema),
                    s(pname),
                    column_name(pt, *pc),
                    s(&db_name),
                    s(fschema),
                    s(fname),
                    column_name(ft, *fc),
                    small(seq as i16 + 1),
                    small(rule(fk.on_update)),
                    small(rule(fk.on_delete)),
                    s(&fk.name),
                    key.clone(),
                    small(7),
                ]);
            }
        }
    }
    // With a primary key table: ordered by the foreign key tables; else by the primary
    // key tables.
    if pk_name.is_some() {
        sort_by(&mut rows, &[4, 5, 6, 8]);
    } else {
        sort_by(&mut rows, &[0, 1, 2, 8]);
    }
    let si = SqlType::SmallInt;
    send(
        cx,
        &[
            ("PKTABLE_QUALIFIER", sysname(), true),
            ("PKTABLE_OWNER", sysname(), true),
            ("PKTABLE_NAME", sysname(), false),
            ("PKCOLUMN_NAME", sysname(), false),
            ("FKTABLE_QUALIFIER", sysname(), true),
            ("FKTABLE_OWNER", sysname(), true),
            ("FKTABLE_NAME", sysname(), false),
            ("FKCOLUMN_NAME", sysname(), false),
            ("KEY_SEQ", si, false),
            ("UPDATE_RULE", si, true),
            ("DELETE_RULE", si, true),
            ("FK_NAME", sysname(), true),
            ("PK_NAME", sysname(), true),
            ("DEFERRABILITY", si, false),
        ],
        rows,
    )
}
