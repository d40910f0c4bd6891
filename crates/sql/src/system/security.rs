//! The principal and permission views: sys.server_principals, sys.sql_logins,
//! sys.server_role_members (the host's logins, kept in master), sys.database_principals,
//! sys.database_role_members and sys.database_permissions (the current database's
//! catalog).

use types::{SqlError, SqlType, Value};

use super::object::{
    col, nv, s, Access, Body, Call, Col, Columns, ObjectKind, Schema, SystemObject, BIT, DATETIME as DT, INT,
};
use crate::catalog::{self, PrincipalKind, PRINCIPAL_DBO};
use crate::exec::base::host_err;
use crate::exec::context::Cx;
use crate::exec::expr::Row;

const SYSNAME: SqlType = nv(128);
const CHAR1: SqlType = SqlType::Char { len: 1 };

pub(super) const OBJECTS: &[SystemObject] = &[
    view(-115, "server_principals", &[SERVER_PRINCIPAL], server_principals),
    view(
        -116,
        "sql_logins",
        &[SERVER_PRINCIPAL, &[col("is_policy_checked", BIT, true), col("is_expiration_checked", BIT, true)]],
        sql_logins,
    ),
    view(-117, "server_role_members", &[ROLE_MEMBERS], server_role_members),
    view(
        -118,
        "database_principals",
        &[&[
            col("name", SYSNAME, false),
            col("principal_id", INT, false),
            col("type", CHAR1, false),
            col("type_desc", nv(60), true),
            col("default_schema_name", SYSNAME, true),
            col("create_date", DT, false),
            col("modify_date", DT, false),
            col("owning_principal_id", INT, true),
            col("is_fixed_role", BIT, false),
            col("authentication_type_desc", nv(60), true),
        ]],
        database_principals,
    ),
    view(-119, "database_role_members", &[ROLE_MEMBERS], database_role_members),
    view(
        -120,
        "database_permissions",
        &[&[
            col("class", SqlType::TinyInt, false),
            col("class_desc", nv(60), true),
            col("major_id", INT, false),
            col("minor_id", INT, false),
            col("grantee_principal_id", INT, false),
            col("grantor_principal_id", INT, false),
            col("type", SqlType::Char { len: 4 }, false),
            col("permission_name", SYSNAME, true),
            col("state", CHAR1, false),
            col("state_desc", nv(60), true),
        ]],
        database_permissions,
    ),
];

/// A public view of sys.
const fn view(
    id: i32,
    name: &'static str,
    columns: &'static [&'static [Col]],
    rows: super::object::RowsFn,
) -> SystemObject {
    SystemObject {
        id,
        schema: Schema::Sys,
        name,
        kind: ObjectKind::View,
        access: Access::Public,
        columns: Columns::Runs(columns),
        params: &[],
        body: Body::Rows(rows),
    }
}

const SERVER_PRINCIPAL: &[Col] = &[
    col("name", SYSNAME, false),
    col("principal_id", INT, false),
    col("type", CHAR1, false),
    col("type_desc", nv(60), true),
    col("is_disabled", BIT, true),
    col("create_date", DT, false),
    col("modify_date", DT, false),
    col("default_database_name", SYSNAME, true),
    col("default_language_name", SYSNAME, true),
    col("is_fixed_role", BIT, false),
];

const ROLE_MEMBERS: &[Col] = &[col("role_principal_id", INT, false), col("member_principal_id", INT, false)];

/// sysadmin's principal id in sys.server_principals (SQL Server's).
const SYSADMIN_ROLE_ID: i32 = 3;

/// The logins the caller may see, as sys.server_principals rows; with `sql_login` the
/// two columns sys.sql_logins adds.
fn logins(cx: &mut Cx, sql_login: bool) -> Result<Vec<Row>, SqlError> {
    let logins = cx.host.logins().map_err(host_err)?;
    // Metadata visibility: a login that is not a sysadmin (ALTER ANY LOGIN) sees itself
    // and sa, besides the fixed server roles.
    let me = cx.login_name();
    let sees_all = cx.is_sysadmin();
    let mut out = Vec::new();
    for l in logins.iter().filter(|l| sees_all || l.principal_id == 1 || l.name.eq_ignore_ascii_case(&me)) {
        let mut r = vec![
            s(&l.name),
            Value::Int(l.principal_id),
            s("S"),
            s("SQL_LOGIN"),
            Value::Bit(l.disabled),
            l.create_date.clone(),
            l.modify_date.clone(),
            s(&l.default_database),
            s("us_english"),
            Value::Bit(false),
        ];
        if sql_login {
            r.push(Value::Bit(l.policy_checked));
            r.push(Value::Bit(false));
        }
        out.push(r);
    }
    Ok(out)
}

fn server_principals(cx: &mut Cx, _: &Call) -> Result<Vec<Row>, SqlError> {
    let mut out = logins(cx, false)?;
    let created = Value::DateTime { days: 0, ticks: 0 };
    out.push(vec![
        s("sysadmin"),
        Value::Int(SYSADMIN_ROLE_ID),
        s("R"),
        s("SERVER_ROLE"),
        Value::Bit(false),
        created.clone(),
        created,
        Value::Null,
        Value::Null,
        Value::Bit(true),
    ]);
    Ok(out)
}

fn sql_logins(cx: &mut Cx, _: &Call) -> Result<Vec<Row>, SqlError> {
    logins(cx, true)
}

fn server_role_members(cx: &mut Cx, _: &Call) -> Result<Vec<Row>, SqlError> {
    let logins = cx.host.logins().map_err(host_err)?;
    Ok(logins
        .iter()
        .filter(|l| l.sysadmin)
        .map(|l| vec![Value::Int(SYSADMIN_ROLE_ID), Value::Int(l.principal_id)])
        .collect())
}

fn database_principals(cx: &mut Cx, call: &Call) -> Result<Vec<Row>, SqlError> {
    let cat = cx.catalog(call.db)?;
    let g = cat.inner.read();
    let created = Value::DateTime { days: 0, ticks: 0 };
    let mut out = Vec::new();
    for p in g.principals.values() {
        let (t, desc) = match p.kind {
            PrincipalKind::SqlUser => ("S", "SQL_USER"),
            PrincipalKind::Role => ("R", "DATABASE_ROLE"),
        };
        let auth = match (p.kind, &p.login) {
            (PrincipalKind::Role, _) => "NONE",
            (_, Some(_)) => "INSTANCE",
            (_, None) => "NONE",
        };
        out.push(vec![
            s(&p.name),
            Value::Int(p.id),
            s(t),
            s(desc),
            p.default_schema.as_deref().map_or(Value::Null, s),
            created.clone(),
            created.clone(),
            if p.kind == PrincipalKind::Role { Value::Int(PRINCIPAL_DBO) } else { Value::Null },
            Value::Bit(p.is_fixed() && p.kind == PrincipalKind::Role && p.id != catalog::PRINCIPAL_PUBLIC),
            s(auth),
        ]);
    }
    Ok(out)
}

fn database_role_members(cx: &mut Cx, call: &Call) -> Result<Vec<Row>, SqlError> {
    let cat = cx.catalog(call.db)?;
    let g = cat.inner.read();
    Ok(g.principals
        .values()
        .flat_map(|p| p.member_of.iter().map(move |r| vec![Value::Int(*r), Value::Int(p.id)]))
        .collect())
}

fn database_permissions(cx: &mut Cx, call: &Call) -> Result<Vec<Row>, SqlError> {
    let cat = cx.catalog(call.db)?;
    let g = cat.inner.read();
    let mut out = Vec::new();
    for p in g.principals.values() {
        for e in &p.permissions {
            let class_desc = match e.class {
                0 => "DATABASE",
                1 => "OBJECT_OR_COLUMN",
                _ => "SCHEMA",
            };
            let (state, state_desc) = if e.state == b'D' { ("D", "DENY") } else { ("G", "GRANT") };
            out.push(vec![
                Value::TinyInt(e.class),
                s(class_desc),
                Value::Int(e.major_id),
                Value::Int(0),
                Value::Int(p.id),
                Value::Int(PRINCIPAL_DBO),
                s(&permission_type(&e.permission)),
                s(&e.permission),
                s(state),
                s(state_desc),
            ]);
        }
    }
    Ok(out)
}

/// sys.database_permissions.type: SQL Server's short codes.
fn permission_type(p: &str) -> String {
    let code = match p {
        "SELECT" => "SL",
        "INSERT" => "IN",
        "UPDATE" => "UP",
        "DELETE" => "DL",
        "EXECUTE" => "EX",
        "REFERENCES" => "RF",
        "ALTER" => "AL",
        "CONTROL" => "CL",
        "VIEW DEFINITION" => "VW",
        "CREATE TABLE" => "CRTB",
        "CREATE VIEW" => "CRVW",
        "CREATE PROCEDURE" => "CRPR",
        "CREATE FUNCTION" => "CRFN",
        "CREATE SCHEMA" => "CRSC",
        "CONNECT" => "CO",
        "CHECKPOINT" => "CP",
        "SHOWPLAN" => "SPLN",
        other => other,
    };
    format!("{code:<4}")
}
