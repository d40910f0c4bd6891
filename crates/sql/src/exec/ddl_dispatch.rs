//! The DDL statements: which module runs each CREATE, ALTER, DROP and TRUNCATE (tables
//! and indexes in `ddl.rs`, ALTER TABLE in `alter.rs`, triggers, types and functions in
//! their own modules), above the helpers they share in `ddl.rs`.

use types::{SqlError, Value};

use super::base::host_err;
use super::context::Cx;
use super::ddl::*;
use super::errors;
use super::query::Binder;
use super::{alter, trigger, tvf, user_types};
use crate::ast::*;
use crate::catalog::{self, codec, ObjectBody};

pub fn execute(cx: &mut Cx, kind: &StatementKind, stmt: &Statement) -> Result<(), SqlError> {
    match kind {
        StatementKind::CreateTable(ct) => create_table(cx, ct).map(|_| ()),
        StatementKind::AlterTable(at) => alter::alter_table(cx, at),
        StatementKind::CreateIndex(ci) => create_index(cx, ci),
        StatementKind::DropIndex { if_exists, indexes } => {
            for item in indexes {
                drop_index(cx, item, *if_exists)?;
            }
            Ok(())
        }
        StatementKind::CreateProcedure(p) => {
            too_many_parameters(p.params.len(), "CREATE PROCEDURE")?;
            let params: Vec<&str> = p.params.iter().map(|x| x.name.as_str()).collect();
            check_module(cx, &p.name, &p.body, &params)?;
            user_types::check_params(cx, &p.params)?;
            user_types::check_readonly_params(&p.name.name().value, &p.params, &p.body)?;
            create_module(cx, &p.name, p.mode, stmt, |d| ObjectBody::Procedure(d))
        }
        StatementKind::CreateType(ct) => user_types::create_type(cx, ct, stmt),
        StatementKind::Sequence { alter: false, def } => super::sequence::create(cx, def),
        StatementKind::Sequence { alter: true, def } => super::sequence::alter(cx, def),
        StatementKind::CreateTrigger(t) => {
            check_module(cx, &t.name, &t.body, &[])?;
            trigger::create_trigger(cx, t, stmt)
        }
        StatementKind::EnableTrigger { enable, names, table } => {
            let names: Option<Vec<String>> =
                names.as_ref().map(|ns| ns.iter().map(|n| n.name().value.clone()).collect());
            trigger::enable_triggers(cx, *enable, names.as_deref(), table, false)
        }
        StatementKind::CreateView(v) => {
            // Check the view binds now, as SQL Server does.
            {
                let mut b = Binder::new(cx);
                b.plan_query(&v.query)?;
            }
            create_module(cx, &v.name, v.mode, stmt, |d| ObjectBody::View(d))
        }
        StatementKind::CreateFunction(f) => {
            too_many_parameters(f.params.len(), "CREATE FUNCTION")?;
            let mut params: Vec<&str> = f.params.iter().map(|x| x.name.as_str()).collect();
            if let FunctionBody::MultiStatement { variable, .. } = &f.returns {
                params.push(variable);
            }
            let body = match &f.returns {
                FunctionBody::Scalar { body, .. } | FunctionBody::MultiStatement { body, .. } => &body[..],
                FunctionBody::InlineTable { .. } => &[],
            };
            check_module(cx, &f.name, body, &params)?;
            // Types a scalar function cannot return.
            if let FunctionBody::Scalar { data_type, .. } = &f.returns {
                let t = data_type.name.name().value.to_ascii_lowercase();
                if data_type.name.parts.len() == 1
                    && matches!(t.as_str(), "text" | "ntext" | "image" | "timestamp" | "rowversion" | "cursor")
                {
                    return Err(SqlError::new(2733, 16, 1, format!("The {t} data type is invalid for return values.")));
                }
            }
            tvf::check_body(f)?;
            let body: fn(catalog::Module) -> ObjectBody = match f.returns {
                FunctionBody::Scalar { .. } => ObjectBody::ScalarFunction,
                FunctionBody::InlineTable { .. } => ObjectBody::InlineFunction,
                FunctionBody::MultiStatement { .. } => ObjectBody::TableFunction,
            };
            create_module(cx, &f.name, f.mode, stmt, body)
        }
        StatementKind::CreateSchema { name, .. } => {
            let db = cx.state.database;
            if cx.schema_id(db, &name.value).is_some() {
                return Err(SqlError::new(
                    2714,
                    16,
                    6,
                    format!("There is already an object named '{}' in the database.", name.value),
                ));
            }
            let cat = cx.catalog(db)?;
            let id = {
                let g = cat.inner.read();
                g.schemas.keys().max().copied().unwrap_or(4).max(4) + 1
            };
            let s = catalog::Schema { id, name: name.value.clone(), principal_id: 1 };
            let index = cx.catalog_index(db)?;
            cx.host
                .insert(&index, &catalog::schema_key(id), &[Value::Binary(codec::encode_schema(&s))])
                .map_err(host_err)?;
            cat.inner.write().schemas.insert(id, s);
            cx.catalog_changed(db);
            Ok(())
        }
        StatementKind::Drop { kind, if_exists, names } => {
            for n in names {
                drop_object(cx, *kind, n, *if_exists)?;
            }
            Ok(())
        }
        StatementKind::Truncate { table } => {
            let (db, o) = cx.resolve_object(table)?.ok_or_else(|| errors::invalid_object(&errors::written(table)))?;
            if o.table().is_none() {
                return Err(SqlError::new(
                    4708,
                    16,
                    1,
                    format!("Could not truncate object '{}' because it is not a table.", errors::written(table)),
                ));
            }
            let t = cx.table_info(db, &o)?;
            if !t.referenced_by.is_empty() {
                return Err(SqlError::new(
                    4712,
                    16,
                    1,
                    format!(
                        "Cannot truncate table '{}' because it is being referenced by a FOREIGN KEY constraint.",
                        t.qualified_name()
                    ),
                ));
            }
            // New empty indexes replace the old ones (as SQL Server deallocates pages).
            let mut obj = o.clone();
            if let ObjectBody::Table(tt) = &mut obj.body {
                for (k, ix) in tt.indexes.iter_mut().enumerate() {
                    cx.host.drop_index(&t.indexes[k].iref).map_err(host_err)?;
                    ix.hobt =
                        cx.host.create_index(db, o.id, ix.index_id, &t.indexes[k].iref.columns).map_err(host_err)?;
                }
                if let Some(id) = &mut tt.identity {
                    id.last = None;
                }
            }
            *t.counters.identity.lock() = Some(None);
            write_object(cx, db, &obj)?;
            Ok(())
        }
        _ => Err(errors::not_supported("This statement")),
    }
}

/// The compile checks of a module's body at CREATE/ALTER (`compile::check_body`); an
/// error names the module, as SQL Server's do.
fn check_module(cx: &mut Cx, name: &ObjectName, body: &[Statement], params: &[&str]) -> Result<(), SqlError> {
    match super::compile::check_body(&cx.source, body, params) {
        Some(e) => Err(e.in_procedure(name.name().value.clone())),
        None => Ok(()),
    }
}

/// 180: a module declares more parameters than SQL Server allows (2,100).
fn too_many_parameters(n: usize, statement: &str) -> Result<(), SqlError> {
    const MAX_PARAMETERS: usize = 2100;
    if n > MAX_PARAMETERS {
        return Err(SqlError::new(
            180,
            15,
            1,
            format!(
                "There are too many parameters in this {statement} statement. The maximum number is {MAX_PARAMETERS}."
            ),
        ));
    }
    Ok(())
}

/// The first table whose computed column, default or CHECK constraint calls function
/// `f` or draws from sequence `f` (SQL Server keeps these as dependencies that block
/// DROP FUNCTION and DROP SEQUENCE: 3729). For a default the name is the constraint's.
fn expression_user(cx: &mut Cx, db: crate::host::DbId, f: &catalog::Object) -> Result<Option<String>, SqlError> {
    let schema = cx.schema_name(db, f.schema_id).unwrap_or_else(|| "dbo".into());
    let cat = cx.catalog(db)?;
    let g = cat.inner.read();
    let names = |n: &ObjectName, qualified: bool| {
        (n.parts.len() > 1 || !qualified)
            && n.name().value.eq_ignore_ascii_case(&f.name)
            && n.schema().is_none_or(|s| s.value.eq_ignore_ascii_case(&schema))
    };
    for o in g.objects.values() {
        let Some(t) = o.table() else { continue };
        let texts = t
            .columns
            .iter()
            .flat_map(|c| {
                let computed = c.computed.as_ref().map(|x| (x.definition.as_str(), o.name.as_str()));
                computed.into_iter().chain(c.default.as_ref().map(|d| (d.definition.as_str(), d.name.as_str())))
            })
            .chain(t.checks.iter().map(|c| (c.definition.as_str(), o.name.as_str())));
        for (text, user) in texts {
            let Ok(e) = crate::parse_expression(text) else { continue };
            let mut uses = false;
            crate::ast::walk_expr(&e, &mut |x| match &x.kind {
                // A scalar function is always called with its schema.
                ExprKind::Function(call) if f.body.is_function() => uses |= names(&call.name, true),
                ExprKind::NextValueFor { name, .. } if !f.body.is_function() => uses |= names(name, false),
                _ => {}
            });
            if uses {
                return Ok(Some(user.to_string()));
            }
        }
    }
    Ok(None)
}

fn drop_object(cx: &mut Cx, kind: DropKind, name: &ObjectName, if_exists: bool) -> Result<(), SqlError> {
    if kind == DropKind::Type {
        return user_types::drop_type(cx, name, if_exists);
    }
    let kind_name = match kind {
        DropKind::Table => "table",
        DropKind::View => "view",
        DropKind::Procedure => "procedure",
        DropKind::Function => "function",
        DropKind::Schema => "schema",
        DropKind::Trigger => "trigger",
        DropKind::Sequence => "sequence",
        _ => return Err(errors::not_supported("This DROP")),
    };
    if kind == DropKind::Schema {
        let db = cx.state.database;
        let n = &name.name().value;
        let Some(id) = cx.schema_id(db, n) else {
            if if_exists {
                return Ok(());
            }
            return Err(errors::cannot_drop(kind_name, n));
        };
        let index = cx.catalog_index(db)?;
        cx.host.delete(&index, &catalog::schema_key(id)).map_err(host_err)?;
        cx.catalog(db)?.inner.write().schemas.remove(&id);
        cx.catalog_changed(db);
        return Ok(());
    }
    let found = cx.resolve_object(name)?;
    let display = errors::written(name);
    let Some((db, o)) = found else {
        if if_exists {
            return Ok(());
        }
        return Err(errors::cannot_drop(kind_name, &display));
    };
    let matches_kind = matches!(
        (kind, &o.body),
        (DropKind::Table, ObjectBody::Table(_))
            | (DropKind::View, ObjectBody::View(_))
            | (DropKind::Procedure, ObjectBody::Procedure(_))
            | (DropKind::Trigger, ObjectBody::Trigger(_))
            | (DropKind::Sequence, ObjectBody::Sequence(_))
    ) || (kind == DropKind::Function && o.body.is_function());
    if !matches_kind {
        return Err(SqlError::new(
            3705,
            16,
            1,
            format!(
                "Cannot use DROP {} with '{}' because '{}' is a {}. Use DROP {}.",
                kind_name.to_ascii_uppercase(),
                display,
                display,
                o.body.type_desc().to_ascii_lowercase().replace('_', " "),
                o.body.type_desc()
            ),
        ));
    }
    if o.body.is_function() || matches!(o.body, ObjectBody::Sequence(_)) {
        if let Some(user) = expression_user(cx, db, &o)? {
            let schema = cx.schema_name(db, o.schema_id).unwrap_or_else(|| "dbo".into());
            return Err(SqlError::new(
                3729,
                16,
                1,
                format!(
                    "Cannot DROP {} '{schema}.{}' because it is being referenced by object '{user}'.",
                    kind_name.to_ascii_uppercase(),
                    o.name
                ),
            ));
        }
    }
    if let ObjectBody::Table(table) = &o.body {
        // From the catalog, not the bound table: a table whose computed column or default
        // names a function that is gone can still be dropped.
        let referencing = {
            let g = cx.catalog(db)?;
            let g = g.inner.read();
            g.objects.values().find_map(|c| {
                let fk = c.table()?.foreign_keys.iter().find(|f| f.referenced_object_id == o.id && c.id != o.id)?;
                Some((fk.name.clone(), c.name.clone()))
            })
        };
        if let Some((fk, child)) = referencing {
            let schema = cx.schema_name(db, o.schema_id).unwrap_or_else(|| "dbo".into());
            return Err(SqlError::new(
                3726,
                16,
                1,
                format!(
                    "Could not drop object '{schema}.{}' because it is referenced by a FOREIGN KEY constraint '{fk}' on '{child}'.",
                    o.name
                ),
            ));
        }
        for ix in &super::ddl::index_infos(db, o.id, table)? {
            cx.host.drop_index(&ix.iref).map_err(host_err)?;
        }
        let user_name = name.name().value.clone();
        if user_name.starts_with('#') {
            cx.state.temp_tables.remove(&user_name);
        }
    }
    // A table's or view's triggers go with it.
    if matches!(o.body, ObjectBody::Table(_) | ObjectBody::View(_)) {
        for id in trigger::triggers_to_drop(cx, db, o.id)? {
            delete_object(cx, db, id)?;
        }
    }
    delete_object(cx, db, o.id)
}
