//! User-defined types: CREATE TYPE (alias types `FROM base` and table types `AS TABLE`),
//! DROP TYPE, and their use: variables and parameters of an alias type, table variables
//! declared with a table type, and table-valued parameters (procedure and sp_executesql
//! parameters declared `@p dbo.T READONLY`, whose value is a table: rows sent by the
//! client in an RPC, or a table variable passed by EXEC).
//!
//! A type is kept as its CREATE TYPE text (see [`crate::catalog::UserType`]) and parsed
//! when used; a table-valued parameter is a table variable made from the type's
//! definition and filled with the rows.

use std::sync::Arc;

use types::{SqlError, SqlType, Value};

use super::base::host_err;
use super::context::Cx;
use super::query::resolve_type;
use super::run::TableSource;
use super::session::Var;
use super::table::TableInfo;
use super::{ddl, dml, errors};
use crate::ast::*;
use crate::catalog::{self, codec, UserType, FIRST_USER_TYPE_ID};
use crate::request::TableArg;

/// What a data type name in a declaration stands for.
pub enum DeclaredType {
    Scalar(SqlType),
    Table(TableType),
}

/// A table type's definition.
pub struct TableType {
    pub elements: Vec<TableElement>,
}

fn not_found_type(name: &str) -> SqlError {
    SqlError::new(
        218,
        16,
        1,
        format!("Cannot find the type '{name}', because it does not exist or you do not have permission."),
    )
}

/// The user type `name` names in the current database (schema dbo when unqualified).
fn find(cx: &mut Cx, name: &ObjectName) -> Result<Option<UserType>, SqlError> {
    let db = cx.state.database;
    let schema = match name.schema() {
        Some(s) => match cx.schema_id(db, &s.value) {
            Some(id) => id,
            None => return Ok(None),
        },
        None => catalog::SCHEMA_DBO,
    };
    let cat = cx.catalog(db)?;
    let g = cat.inner.read();
    Ok(g.type_by_name(schema, &name.name().value).cloned())
}

fn definition(t: &UserType) -> Result<TypeDefinition, SqlError> {
    let stmt = super::base::parse_module(&t.definition)?;
    match stmt.kind {
        StatementKind::CreateType(ct) => Ok(ct.definition),
        _ => Err(catalog::corrupt_catalog()),
    }
}

/// Resolves a declared data type: a system type, or a user-defined alias or table type
/// (2715 for neither).
pub fn resolve(cx: &mut Cx, dt: &DataType) -> Result<DeclaredType, SqlError> {
    let system = resolve_type(dt);
    if let Ok(ty) = system {
        return Ok(DeclaredType::Scalar(ty));
    }
    let Some(t) = find(cx, &dt.name)? else {
        return system.map(DeclaredType::Scalar);
    };
    match definition(&t)? {
        TypeDefinition::Alias { base, .. } => Ok(DeclaredType::Scalar(resolve_type(&base)?)),
        TypeDefinition::Table(elements) => Ok(DeclaredType::Table(TableType { elements })),
    }
}

/// CREATE PROCEDURE and sp_executesql parameter lists: a table-valued parameter must be
/// READONLY (352), and only a table-valued one may be (346).
pub fn check_params(cx: &mut Cx, params: &[Parameter]) -> Result<(), SqlError> {
    for p in params {
        let is_table = matches!(resolve(cx, &p.data_type)?, DeclaredType::Table(_));
        if is_table && !p.readonly {
            return Err(SqlError::new(
                352,
                15,
                1,
                format!("The table-valued parameter \"{}\" must be declared with the READONLY option.", p.name),
            ));
        }
        if !is_table && p.readonly {
            return Err(SqlError::new(
                346,
                15,
                1,
                format!(
                    "The parameter \"{}\" can not be declared READONLY since it is not a table-valued parameter.",
                    p.name
                ),
            ));
        }
    }
    Ok(())
}

/// CREATE PROCEDURE / FUNCTION: a statement of the body that changes a table-valued
/// parameter fails the CREATE (10700), as SQL Server's compile does.
pub fn check_readonly_params(module: &str, params: &[Parameter], body: &[Statement]) -> Result<(), SqlError> {
    let readonly: Vec<&str> = params.iter().filter(|p| p.readonly).map(|p| p.name.as_str()).collect();
    if readonly.is_empty() {
        return Ok(());
    }
    let changed = find_statement(body, &mut |st| {
        let target = match &st.kind {
            StatementKind::Insert(i) => &i.target,
            StatementKind::Update(u) => &u.target,
            StatementKind::Delete(d) => &d.target,
            StatementKind::Merge(m) => &m.target,
            _ => return None,
        };
        match target {
            DmlTarget::Variable(v) if readonly.iter().any(|r| r.eq_ignore_ascii_case(v)) => {
                Some((v.clone(), st.line()))
            }
            _ => None,
        }
    });
    match changed {
        Some((v, line)) => Err(errors::readonly_tvp(&v).in_procedure(module).at_line(line)),
        None => Ok(()),
    }
}

/// CREATE TYPE.
pub fn create_type(cx: &mut Cx, ct: &CreateType, stmt: &Statement) -> Result<(), SqlError> {
    let (db, schema, name) = cx.resolve_name(&ct.name)?;
    if schema < 0 || db != cx.state.database {
        return Err(super::errors::schema_not_found(ct.name.schema()));
    }
    let cat = cx.catalog(db)?;
    if cat.inner.read().type_by_name(schema, &name).is_some()
        || resolve_type(&DataType { name: ObjectName::from_ident(Ident::plain(name.clone())), args: Vec::new() })
            .is_ok()
    {
        let schema_name = cx.schema_name(db, schema).unwrap_or_default();
        return Err(SqlError::new(
            219,
            16,
            1,
            format!("The type '{schema_name}.{name}' already exists, or you do not have permission to create it."),
        ));
    }
    // The columns' (or the base's) types must exist now.
    match &ct.definition {
        TypeDefinition::Alias { base, .. } => {
            resolve_type(base)?;
        }
        TypeDefinition::Table(elements) => {
            for e in elements {
                if let TableElement::Column(ColumnDef { data_type: Some(dt), .. }) = e {
                    resolve_type(dt)?;
                }
            }
        }
    }
    let table_object_id = match ct.definition {
        TypeDefinition::Table(_) => ddl::allocate_id(cx, db)?,
        TypeDefinition::Alias { .. } => 0,
    };
    let id = cat.inner.read().types.keys().max().map_or(FIRST_USER_TYPE_ID, |m| m + 1);
    let text = stmt.span.text(&cx.source);
    let definition = if text.is_empty() { stmt.to_string() } else { text.to_string() };
    let t = UserType { id, schema_id: schema, name, table_object_id, definition };
    let index = cx.catalog_index(db)?;
    cx.host.insert(&index, &catalog::type_key(id), &[Value::Binary(codec::encode_type(&t))]).map_err(host_err)?;
    cat.inner.write().types.insert(id, t);
    cx.catalog_changed(db);
    Ok(())
}

/// DROP TYPE [IF EXISTS] name.
pub fn drop_type(cx: &mut Cx, name: &ObjectName, if_exists: bool) -> Result<(), SqlError> {
    let Some(t) = find(cx, name)? else {
        if if_exists {
            return Ok(());
        }
        return Err(not_found_type(&errors::written(name)));
    };
    let db = cx.state.database;
    // A procedure or function with a parameter of the type keeps it (3732). Columns of
    // an alias type are stored with its base type, so they do not hold it.
    let user = {
        let cat = cx.catalog(db)?;
        let g = cat.inner.read();
        g.objects
            .values()
            .find(|o| {
                super::catalog_views::module_signature(o).is_some_and(|(params, _, _)| {
                    params.iter().any(|p| {
                        let n = &p.data_type.name;
                        let schema =
                            n.schema().map_or(Some(catalog::SCHEMA_DBO), |s| g.schema_by_name(&s.value).map(|x| x.id));
                        n.name().value.eq_ignore_ascii_case(&t.name) && schema == Some(t.schema_id)
                    })
                })
            })
            .map(|o| o.name.clone())
    };
    if let Some(o) = user {
        return Err(SqlError::new(
            3732,
            16,
            1,
            format!(
                "Cannot drop type '{}' because it is being referenced by object '{o}'. There may be other objects that reference this type.",
                t.name
            ),
        ));
    }
    let index = cx.catalog_index(db)?;
    cx.host.delete(&index, &catalog::type_key(t.id)).map_err(host_err)?;
    cx.catalog(db)?.inner.write().types.remove(&t.id);
    cx.catalog_changed(db);
    Ok(())
}

/// A table variable `name` of table type `tt`, filled from `source` (empty without one).
/// Returns the variable and, when it made a table of its own, that table (the caller's
/// frame drops it when it ends). A table variable passed by EXEC is shared: the parameter
/// is READONLY (`readonly`: a parameter, not a DECLAREd variable of the type).
pub fn table_param(
    cx: &mut Cx,
    name: &str,
    tt: &TableType,
    source: Option<&TableSource>,
    readonly: bool,
) -> Result<(Var, Option<Arc<TableInfo>>), SqlError> {
    if let Some(TableSource::Variable(t)) = source {
        let var =
            Var { name: name.to_string(), ty: SqlType::Int, value: Value::Null, table: Some(t.clone()), readonly };
        return Ok((var, None));
    }
    let t = ddl::create_table_variable(cx, name, &tt.elements)?;
    if let Some(TableSource::Rows(arg)) = source {
        // Its own statement: outside a transaction the rows go in autocommit.
        super::run::atomic(cx, |cx| fill(cx, &t, name, arg))?;
    }
    let var = Var { name: name.to_string(), ty: SqlType::Int, value: Value::Null, table: Some(t.clone()), readonly };
    Ok((var, Some(t)))
}

/// Inserts a table-valued parameter's rows: identity and computed columns take their
/// own values (clients mark them defaulted; a value sent for one is ignored).
fn fill(cx: &mut Cx, t: &Arc<TableInfo>, name: &str, arg: &TableArg) -> Result<(), SqlError> {
    let bad = |detail: &str| {
        SqlError::new(
            8016,
            16,
            1,
            format!("The incoming tabular data stream (TDS) remote procedure call (RPC) protocol stream is incorrect. Table-valued parameter \"{name}\": {detail}."),
        )
    };
    if arg.ordinals.len() != arg.data.columns.len() || arg.ordinals.iter().any(|&o| o >= t.columns.len()) {
        return Err(bad("its columns do not match the table type"));
    }
    let kept: Vec<usize> = (0..arg.ordinals.len())
        .filter(|&k| {
            let c = &t.columns[arg.ordinals[k]];
            !c.is_identity && c.computed.is_none()
        })
        .collect();
    let positions: Vec<usize> = kept.iter().map(|&k| arg.ordinals[k]).collect();
    let tys: Vec<SqlType> = kept.iter().map(|&k| arg.data.columns[k].ty).collect();
    for row in &arg.data.rows {
        cx.check_cancel()?;
        if row.len() != arg.ordinals.len() {
            return Err(bad("a row does not match its columns"));
        }
        let vals: Vec<Value> = kept.iter().map(|&k| row[k].clone()).collect();
        dml::insert_values(cx, t, &positions, vals, &tys)?;
    }
    Ok(())
}
