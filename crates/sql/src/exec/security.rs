//! Security: logins (kept by the host in master), database users and roles (in each
//! database's catalog), GRANT/DENY/REVOKE, and the permission checks the executor makes.
//!
//! The model is SQL Server's, reduced to what a DBA uses day to day (see
//! docs/architecture.md, "Security"):
//! - A login in the sysadmin role can do anything, and acts as `dbo` in every database.
//! - Any other login reaches a database through the user mapped to it (CREATE USER ...
//!   FOR LOGIN); master, tempdb and msdb let every login in as `guest`.
//! - A user's permissions are its own and those of its roles (public, fixed roles such
//!   as db_owner, db_datareader, db_datawriter, db_ddladmin, and CREATE ROLE roles).
//!   DENY beats GRANT; db_owner and `dbo` pass every check.
//! - Objects used inside a procedure, function or view are not checked again (ownership
//!   chaining: every object here belongs to dbo, so every chain is unbroken). Dynamic
//!   SQL breaks the chain, as in SQL Server.

use types::{SqlError, Value};

use super::base::{host_err, TEMPDB};
use super::context::Cx;
use crate::ast::*;
use crate::catalog::{
    self, codec, Catalog, Object, PermissionEntry, Principal, PrincipalKind, PRINCIPAL_DBO, PRINCIPAL_GUEST,
    ROLE_DB_ACCESSADMIN, ROLE_DB_BACKUPOPERATOR, ROLE_DB_DATAREADER, ROLE_DB_DATAWRITER, ROLE_DB_DDLADMIN,
    ROLE_DB_DENYDATAREADER, ROLE_DB_DENYDATAWRITER, ROLE_DB_OWNER, ROLE_DB_SECURITYADMIN,
};
use crate::host::{DbId, LoginChange};

const MASTER: DbId = 1;
const MSDB: DbId = 4;

/// Whether `login` (not a sysadmin) may use database `db`: through a mapped user, or
/// as guest in master, tempdb and msdb.
pub fn can_access_database(catalog: &Catalog, login: &str, db: DbId) -> bool {
    matches!(db, MASTER | TEMPDB | MSDB) || catalog.user_for_login(login).is_some()
}

/// The database principal the session acts as in `db`, None if it has no access.
fn session_principal(cx: &mut Cx, db: DbId) -> Result<Option<i32>, SqlError> {
    if cx.is_sysadmin() {
        return Ok(Some(PRINCIPAL_DBO));
    }
    let login = cx.login_name();
    let cat = cx.catalog(db)?;
    let g = cat.inner.read();
    Ok(match g.user_for_login(&login) {
        Some(u) => Some(u.id),
        None if matches!(db, MASTER | TEMPDB | MSDB) => Some(PRINCIPAL_GUEST),
        None => None,
    })
}

/// Inside a procedure, function or view: objects are reached through the module's
/// ownership chain and not checked again.
fn chained(cx: &Cx) -> bool {
    cx.view_depth > 0 || cx.frames.last().is_some_and(|f| f.in_module)
}

fn has_role(g: &Catalog, principal: i32, role: i32) -> bool {
    principal == PRINCIPAL_DBO || g.principal_closure(principal).contains(&role)
}

/// Whether `principal` holds `perm` on the object (id, schema id) (or, for database
/// permissions such as CREATE TABLE, on the database: `object` None).
fn holds(g: &Catalog, principal: i32, perm: &str, object: Option<(i32, i32)>) -> bool {
    let set = g.principal_closure(principal);
    if principal == PRINCIPAL_DBO || set.contains(&ROLE_DB_OWNER) {
        return true;
    }
    let applies = |e: &PermissionEntry| {
        (e.permission == perm || e.permission == "CONTROL")
            && match (e.class, object) {
                (0, _) => true,
                (1, Some((id, _))) => e.major_id == id,
                (3, Some((_, schema_id))) => e.major_id == schema_id,
                _ => false,
            }
    };
    let entries = || set.iter().filter_map(|id| g.principals.get(id)).flat_map(|p| p.permissions.iter());
    let reads = perm == "SELECT";
    let writes = matches!(perm, "INSERT" | "UPDATE" | "DELETE");
    let denied = entries().any(|e| e.state == b'D' && applies(e))
        || (reads && set.contains(&ROLE_DB_DENYDATAREADER))
        || (writes && set.contains(&ROLE_DB_DENYDATAWRITER));
    if denied {
        return false;
    }
    entries().any(|e| e.state == b'G' && applies(e))
        || (reads && set.contains(&ROLE_DB_DATAREADER))
        || (writes && set.contains(&ROLE_DB_DATAWRITER))
        || (perm.starts_with("CREATE ") && set.contains(&ROLE_DB_DDLADMIN))
}

/// Msg 229 unless the session may use `perm` (SELECT, INSERT, UPDATE, DELETE, EXECUTE)
/// on the object.
pub fn check_object(cx: &mut Cx, db: DbId, obj: &Object, perm: &str) -> Result<(), SqlError> {
    check_object_id(cx, db, obj.id, obj.schema_id, &obj.name, perm)
}

/// [`check_object`] for the object `id` (of schema `schema_id`) named `name`.
pub fn check_object_id(cx: &mut Cx, db: DbId, id: i32, schema_id: i32, name: &str, perm: &str) -> Result<(), SqlError> {
    if cx.is_sysadmin() || db == TEMPDB || chained(cx) {
        return Ok(());
    }
    let principal = session_principal(cx, db)?;
    let cat = cx.catalog(db)?;
    let g = cat.inner.read();
    if principal.is_some_and(|p| holds(&g, p, perm, Some((id, schema_id)))) {
        return Ok(());
    }
    let schema = g.schemas.get(&schema_id).map(|s| s.name.clone()).unwrap_or_else(|| "dbo".into());
    drop(g);
    let db_name = cx.db_name(db).unwrap_or_default();
    Err(SqlError::new(
        229,
        14,
        5,
        format!("The {perm} permission was denied on the object '{name}', database '{db_name}', schema '{schema}'."),
    ))
}

/// Whether the session may change objects of `db` (db_owner, db_ddladmin or dbo).
fn may_alter_objects(cx: &mut Cx, db: DbId) -> Result<bool, SqlError> {
    if cx.is_sysadmin() || db == TEMPDB {
        return Ok(true);
    }
    let Some(p) = session_principal(cx, db)? else {
        return Ok(false);
    };
    let cat = cx.catalog(db)?;
    let g = cat.inner.read();
    Ok(has_role(&g, p, ROLE_DB_OWNER) || has_role(&g, p, ROLE_DB_DDLADMIN))
}

/// The permission check of a DDL statement, before it runs: CREATE needs the database
/// permission (Msg 262), ALTER/DROP/TRUNCATE/CREATE INDEX need db_owner or db_ddladmin
/// (Msg 3701 for DROP, 1088 otherwise, which do not tell whether the object exists).
/// The database a statement's object name lands in (None for #temp objects and
/// databases that do not exist, which fail later with their own errors).
fn target_db(cx: &mut Cx, name: &ObjectName) -> Result<Option<DbId>, SqlError> {
    if name.name().value.starts_with('#') {
        return Ok(None);
    }
    Ok(Some(match name.database() {
        Some(d) => match cx.db_id_by_name(&d.value) {
            Some(id) => id,
            None => return Ok(None),
        },
        None => cx.state.database,
    }))
}

/// CREATE TABLE, CREATE VIEW, ... permission in the database `name` lands in (the
/// current one without a name): 262 naming that database. SELECT INTO checks CREATE
/// TABLE the same way, in the database its target names.
pub fn check_create(cx: &mut Cx, what: &str, name: Option<&ObjectName>) -> Result<(), SqlError> {
    if cx.is_sysadmin() {
        return Ok(());
    }
    let db = match name {
        Some(n) => match target_db(cx, n)? {
            Some(db) => db,
            None => return Ok(()),
        },
        None => cx.state.database,
    };
    if db == TEMPDB {
        return Ok(());
    }
    if let Some(p) = session_principal(cx, db)? {
        let cat = cx.catalog(db)?;
        let g = cat.inner.read();
        if holds(&g, p, what, None) {
            return Ok(());
        }
    }
    let db_name = cx.db_name(db).unwrap_or_default();
    Err(SqlError::new(262, 14, 1, format!("{what} permission denied in database '{db_name}'.")))
}

pub fn check_ddl(cx: &mut Cx, kind: &StatementKind) -> Result<(), SqlError> {
    if cx.is_sysadmin() {
        return Ok(());
    }
    let create = |what: &str, name: Option<&ObjectName>, cx: &mut Cx| check_create(cx, what, name);
    let alter = |name: &ObjectName, cx: &mut Cx| -> Result<(), SqlError> {
        match target_db(cx, name)? {
            Some(db) if !may_alter_objects(cx, db)? => Err(SqlError::new(
                1088,
                16,
                13,
                format!(
                    "Cannot find the object \"{}\" because it does not exist or you do not have permissions.",
                    super::errors::written(name)
                ),
            )),
            _ => Ok(()),
        }
    };
    match kind {
        StatementKind::CreateTable(t) => create("CREATE TABLE", Some(&t.name), cx),
        StatementKind::CreateView(v) => create("CREATE VIEW", Some(&v.name), cx),
        StatementKind::CreateProcedure(p) => create("CREATE PROCEDURE", Some(&p.name), cx),
        StatementKind::CreateFunction(f) => create("CREATE FUNCTION", Some(&f.name), cx),
        StatementKind::CreateSchema { .. } => create("CREATE SCHEMA", None, cx),
        StatementKind::Sequence { alter: false, def } => create("CREATE SEQUENCE", Some(&def.name), cx),
        StatementKind::Sequence { alter: true, def } => alter(&def.name, cx),
        StatementKind::CreateIndex(ci) => alter(&ci.table, cx),
        StatementKind::CreateTrigger(t) => alter(&t.table, cx),
        StatementKind::EnableTrigger { table, .. } => alter(table, cx),
        StatementKind::AlterTable(a) => alter(&a.name, cx),
        StatementKind::Truncate { table } => alter(table, cx),
        StatementKind::DropIndex { indexes, .. } => {
            for i in indexes {
                alter(i.table.as_ref().unwrap_or(&i.index), cx)?;
            }
            Ok(())
        }
        StatementKind::Drop { kind, names, .. }
            if matches!(kind, DropKind::Table | DropKind::View | DropKind::Procedure | DropKind::Function) =>
        {
            for n in names {
                if let Some(db) = target_db(cx, n)? {
                    if !may_alter_objects(cx, db)? {
                        let what = match kind {
                            DropKind::Table => "table",
                            DropKind::View => "view",
                            DropKind::Procedure => "procedure",
                            _ => "function",
                        };
                        return Err(super::errors::cannot_drop(what, &super::errors::written(n)));
                    }
                }
            }
            Ok(())
        }
        StatementKind::Drop { kind: DropKind::Schema, .. } => {
            let db = cx.state.database;
            if may_alter_objects(cx, db)? {
                Ok(())
            } else {
                Err(not_permitted())
            }
        }
        _ => Ok(()),
    }
}

/// CREATE DATABASE: sysadmin only here (SQL Server also has dbcreator).
pub fn check_create_database(cx: &Cx) -> Result<(), SqlError> {
    if cx.is_sysadmin() {
        return Ok(());
    }
    Err(SqlError::new(262, 14, 1, "CREATE DATABASE permission denied in database 'master'."))
}

/// ALTER DATABASE and DROP DATABASE: sysadmin or the database's db_owner (Msg 5011 or
/// 3701, which do not tell whether the database exists).
pub fn check_database_owner(cx: &mut Cx, db: DbId, drop: bool) -> Result<(), SqlError> {
    if let Some(p) = session_principal(cx, db)? {
        let cat = cx.catalog(db)?;
        let g = cat.inner.read();
        if has_role(&g, p, ROLE_DB_OWNER) {
            return Ok(());
        }
    }
    let name = cx.db_name(db).unwrap_or_default();
    Err(if drop {
        SqlError::new(
            3701,
            14,
            1,
            format!("Cannot drop the database '{name}', because it does not exist or you do not have permission."),
        )
    } else {
        SqlError::new(
            5011,
            14,
            9,
            format!("User does not have permission to alter database '{name}', the database does not exist, or the database is not in a state that allows access checks."),
        )
    })
}

/// Msg 916 for USE of a database the login cannot enter.
pub fn check_use(cx: &mut Cx, db: DbId) -> Result<(), SqlError> {
    if session_principal(cx, db)?.is_some() {
        return Ok(());
    }
    let login = cx.login_name();
    let db_name = cx.db_name(db).unwrap_or_default();
    Err(SqlError::new(
        916,
        14,
        1,
        format!("The server principal \"{login}\" is not able to access the database \"{db_name}\" under the current security context."),
    ))
}

/// CHECKPOINT: sysadmin, db_owner or db_backupoperator (Msg 262 otherwise).
pub fn check_checkpoint(cx: &mut Cx, db: DbId) -> Result<(), SqlError> {
    if let Some(p) = session_principal(cx, db)? {
        let cat = cx.catalog(db)?;
        let g = cat.inner.read();
        if has_role(&g, p, ROLE_DB_OWNER) || has_role(&g, p, ROLE_DB_BACKUPOPERATOR) {
            return Ok(());
        }
    }
    let db_name = cx.db_name(db).unwrap_or_default();
    Err(SqlError::new(262, 14, 1, format!("CHECKPOINT permission denied in database '{db_name}'.")))
}

fn not_permitted() -> SqlError {
    SqlError::new(15247, 16, 1, "User does not have permission to perform this action.")
}

fn require_sysadmin(cx: &Cx) -> Result<(), SqlError> {
    if cx.is_sysadmin() {
        Ok(())
    } else {
        Err(not_permitted())
    }
}

fn text_value(cx: &mut Cx, e: &Expr) -> Result<String, SqlError> {
    let (v, ty) = super::run::eval_standalone(cx, e)?;
    Ok(match v {
        Value::Null => String::new(),
        v => super::expr::as_text(&v, &ty).unwrap_or_default(),
    })
}

fn option_text(cx: &mut Cx, o: &OptionItem) -> Result<String, SqlError> {
    match &o.value {
        Some(OptionValue::Name(n)) => Ok(n.name().value.clone()),
        Some(OptionValue::Expr(e)) => text_value(cx, e),
        _ => Err(SqlError::new(102, 15, 1, format!("Incorrect syntax near '{}'.", o.name))),
    }
}

fn on_off(cx: &mut Cx, o: &OptionItem) -> Result<bool, SqlError> {
    Ok(option_text(cx, o)?.eq_ignore_ascii_case("ON"))
}

/// EXECUTE AS LOGIN = 'x' | USER = 'x' | CALLER: the session acts as that login until
/// REVERT (impersonating needs sysadmin here: there is no IMPERSONATE permission).
pub fn execute_as(cx: &mut Cx, ctx: &ExecuteAs) -> Result<(), SqlError> {
    let (login, server) = match ctx {
        ExecuteAs::Caller => return Ok(()),
        ExecuteAs::Login(e) => (text_value(cx, e)?, true),
        ExecuteAs::User(e) => {
            let user = text_value(cx, e)?;
            let db = cx.state.database;
            let cat = cx.catalog(db)?;
            let login = cat
                .inner
                .read()
                .principal_by_name(&user)
                .filter(|p| p.kind == PrincipalKind::SqlUser)
                .and_then(|p| p.login.clone());
            match login {
                Some(l) if cx.is_sysadmin() => (l, false),
                _ => {
                    return Err(SqlError::new(
                        15517,
                        16,
                        1,
                        "Cannot execute as the database principal because the principal \"".to_string()
                            + &user
                            + "\" does not exist, this type of principal cannot be impersonated, or you do not have permission.",
                    ))
                }
            }
        }
    };
    let found = if cx.is_sysadmin() {
        cx.host.logins().map_err(host_err)?.into_iter().find(|l| l.name.eq_ignore_ascii_case(&login))
    } else {
        None
    };
    let Some(l) = found else {
        let (n, what) = if server { (15406, "server") } else { (15517, "database") };
        return Err(SqlError::new(
            n,
            16,
            1,
            format!("Cannot execute as the {what} principal because the principal \"{login}\" does not exist, this type of principal cannot be impersonated, or you do not have permission."),
        ));
    };
    cx.state.impersonation.push((l.name, l.sysadmin));
    Ok(())
}

// ---- logins (server level; not part of the session's transaction) ---------------------

/// CREATE LOGIN, ALTER LOGIN, DROP LOGIN and ALTER SERVER ROLE.
pub fn execute_server(cx: &mut Cx, kind: &StatementKind) -> Result<(), SqlError> {
    match kind {
        StatementKind::CreateLogin(c) => {
            require_sysadmin(cx)?;
            if c.windows {
                return Err(super::errors::not_supported("Windows logins"));
            }
            let mut password = None;
            let mut default_db = "master".to_string();
            let mut check_policy = true;
            for o in &c.options {
                match o {
                    LoginOption::Password { value, hashed, .. } => {
                        if *hashed {
                            return Err(super::errors::not_supported("PASSWORD ... HASHED"));
                        }
                        password = Some(text_value(cx, value)?);
                    }
                    LoginOption::Other(o) if o.is("DEFAULT_DATABASE") => {
                        let d = option_text(cx, o)?;
                        if cx.db_id_by_name(&d).is_none() {
                            return Err(SqlError::new(
                                15010,
                                16,
                                1,
                                format!("The database '{d}' does not exist. Supply a valid database name. To see available databases, use sys.databases."),
                            ));
                        }
                        default_db = d;
                    }
                    LoginOption::Other(o) if o.is("CHECK_POLICY") => check_policy = on_off(cx, o)?,
                    // CHECK_EXPIRATION, DEFAULT_LANGUAGE, SID: accepted, not kept.
                    LoginOption::Other(_) => {}
                }
            }
            let password = password.ok_or_else(|| SqlError::new(102, 15, 1, "Incorrect syntax near 'WITH'."))?;
            cx.host.create_login(&c.name.value, &password, &default_db, check_policy).map_err(host_err)
        }
        StatementKind::AlterLogin(a) => {
            let name = &a.name.value;
            let own = name.eq_ignore_ascii_case(&cx.login_name());
            let changes: Vec<LoginChange> = match &a.action {
                AlterLoginAction::Enable => vec![LoginChange::Enable],
                AlterLoginAction::Disable => vec![LoginChange::Disable],
                AlterLoginAction::With(opts) => {
                    let mut v = Vec::new();
                    for o in opts {
                        match o {
                            LoginOption::Password { value, old_password, .. } => {
                                // A login may change its own password by giving the old one.
                                if !cx.is_sysadmin() && !(own && old_password.is_some()) {
                                    return Err(not_permitted());
                                }
                                v.push(LoginChange::Password { new: text_value(cx, value)?, check_policy: true });
                            }
                            LoginOption::Other(o) if o.is("DEFAULT_DATABASE") => {
                                v.push(LoginChange::DefaultDatabase(option_text(cx, o)?))
                            }
                            LoginOption::Other(o) if o.is("NAME") => v.push(LoginChange::Name(option_text(cx, o)?)),
                            LoginOption::Other(o) if o.is("CHECK_POLICY") => {
                                v.push(LoginChange::CheckPolicy(on_off(cx, o)?))
                            }
                            LoginOption::Other(_) => {}
                        }
                    }
                    v
                }
            };
            let only_own_password = own && changes.iter().all(|c| matches!(c, LoginChange::Password { .. }));
            if !only_own_password {
                require_sysadmin(cx)?;
            }
            for c in changes {
                cx.host.alter_login(name, c).map_err(host_err)?;
            }
            Ok(())
        }
        StatementKind::Drop { kind: DropKind::Login, names, if_exists } => {
            require_sysadmin(cx)?;
            for n in names {
                let name = &n.name().value;
                if *if_exists && !cx.host.logins().map_err(host_err)?.iter().any(|l| l.name.eq_ignore_ascii_case(name))
                {
                    continue;
                }
                cx.host.drop_login(name).map_err(host_err)?;
            }
            Ok(())
        }
        StatementKind::AlterRole { server: true, role, add, member } => {
            require_sysadmin(cx)?;
            if !role.value.eq_ignore_ascii_case("sysadmin") {
                return Err(super::errors::not_supported("Fixed server roles other than sysadmin"));
            }
            cx.host.alter_login(&member.value, LoginChange::Sysadmin(*add)).map_err(host_err)
        }
        _ => Err(super::errors::not_supported("This statement")),
    }
}

// ---- users, roles and permissions (in the catalog, inside the transaction) ------------

fn write_principal(cx: &mut Cx, db: DbId, p: &Principal) -> Result<(), SqlError> {
    let index = cx.catalog_index(db)?;
    let key = catalog::principal_key(p.id);
    let row = vec![Value::Binary(codec::encode_principal(p))];
    if !cx.host.update(&index, &key, &row).map_err(host_err)? {
        cx.host.insert(&index, &key, &row).map_err(host_err)?;
    }
    cx.catalog(db)?.inner.write().principals.insert(p.id, p.clone());
    cx.catalog_changed(db);
    Ok(())
}

fn delete_principal(cx: &mut Cx, db: DbId, id: i32) -> Result<(), SqlError> {
    let index = cx.catalog_index(db)?;
    cx.host.delete(&index, &catalog::principal_key(id)).map_err(host_err)?;
    let cat = cx.catalog(db)?;
    let mut g = cat.inner.write();
    g.principals.remove(&id);
    // Memberships of the dropped role go with it.
    let holders: Vec<Principal> = g.principals.values().filter(|p| p.member_of.contains(&id)).cloned().collect();
    drop(g);
    for mut p in holders {
        p.member_of.retain(|r| *r != id);
        write_principal(cx, db, &p)?;
    }
    cx.catalog_changed(db);
    Ok(())
}

/// Requires db_owner, or the fixed role that administers this kind of change.
fn require_db_role(cx: &mut Cx, db: DbId, role: i32) -> Result<(), SqlError> {
    if let Some(p) = session_principal(cx, db)? {
        let cat = cx.catalog(db)?;
        let g = cat.inner.read();
        if has_role(&g, p, ROLE_DB_OWNER) || has_role(&g, p, role) {
            return Ok(());
        }
    }
    Err(not_permitted())
}

fn principal(cx: &mut Cx, db: DbId, name: &str) -> Result<Option<Principal>, SqlError> {
    Ok(cx.catalog(db)?.inner.read().principal_by_name(name).cloned())
}

/// CREATE USER / ROLE, DROP USER / ROLE, ALTER ROLE, GRANT / DENY / REVOKE.
pub fn execute_database(cx: &mut Cx, kind: &StatementKind) -> Result<(), SqlError> {
    let db = cx.state.database;
    match kind {
        StatementKind::CreateUser(u) => {
            require_db_role(cx, db, ROLE_DB_ACCESSADMIN)?;
            let name = u.name.value.clone();
            if principal(cx, db, &name)?.is_some() {
                return Err(SqlError::new(
                    15023,
                    16,
                    1,
                    format!("User, group, or role '{name}' already exists in the current database."),
                ));
            }
            let login = if u.without_login { None } else { Some(u.login.as_ref().unwrap_or(&u.name).value.clone()) };
            if let Some(l) = &login {
                let logins = cx.host.logins().map_err(host_err)?;
                let Some(found) = logins.iter().find(|x| x.name.eq_ignore_ascii_case(l)) else {
                    return Err(SqlError::new(
                        15007,
                        16,
                        1,
                        format!("'{l}' is not a valid login or you do not have permission."),
                    ));
                };
                let cat = cx.catalog(db)?;
                if cat.inner.read().user_for_login(&found.name).is_some() {
                    return Err(SqlError::new(
                        15063,
                        16,
                        1,
                        "The login already has an account under a different user name.",
                    ));
                }
            }
            let mut default_schema = Some("dbo".to_string());
            for o in &u.options {
                if o.is("DEFAULT_SCHEMA") {
                    default_schema = Some(option_text(cx, o)?);
                }
            }
            let id = cx.catalog(db)?.inner.read().next_principal_id();
            let p = Principal {
                id,
                name,
                kind: PrincipalKind::SqlUser,
                login,
                default_schema,
                member_of: Vec::new(),
                permissions: Vec::new(),
            };
            write_principal(cx, db, &p)
        }
        StatementKind::CreateRole { name, .. } => {
            require_db_role(cx, db, ROLE_DB_SECURITYADMIN)?;
            if principal(cx, db, &name.value)?.is_some() {
                return Err(SqlError::new(
                    15023,
                    16,
                    1,
                    format!("User, group, or role '{}' already exists in the current database.", name.value),
                ));
            }
            let id = cx.catalog(db)?.inner.read().next_principal_id();
            let p = Principal {
                id,
                name: name.value.clone(),
                kind: PrincipalKind::Role,
                login: None,
                default_schema: None,
                member_of: Vec::new(),
                permissions: Vec::new(),
            };
            write_principal(cx, db, &p)
        }
        StatementKind::Drop { kind: k @ (DropKind::User | DropKind::Role), names, if_exists } => {
            let (what, admin) =
                if *k == DropKind::User { ("user", ROLE_DB_ACCESSADMIN) } else { ("role", ROLE_DB_SECURITYADMIN) };
            require_db_role(cx, db, admin)?;
            for n in names {
                let name = &n.name().value;
                let found =
                    principal(cx, db, name)?.filter(|p| (p.kind == PrincipalKind::SqlUser) == (*k == DropKind::User));
                match found {
                    None if *if_exists => {}
                    None => {
                        return Err(SqlError::new(
                            15151,
                            16,
                            1,
                            format!(
                            "Cannot drop the {what} '{name}', because it does not exist or you do not have permission."
                        ),
                        ))
                    }
                    Some(p) if p.is_fixed() => {
                        return Err(SqlError::new(
                            15405,
                            11,
                            1,
                            format!("Cannot use the special principal '{}'.", p.name),
                        ))
                    }
                    Some(p) => {
                        if *k == DropKind::Role {
                            let cat = cx.catalog(db)?;
                            if cat.inner.read().principals.values().any(|m| m.member_of.contains(&p.id)) {
                                return Err(SqlError::new(
                                    15144,
                                    16,
                                    1,
                                    "The role has members. It must be empty before it can be dropped.",
                                ));
                            }
                        }
                        delete_principal(cx, db, p.id)?;
                    }
                }
            }
            Ok(())
        }
        StatementKind::AlterRole { server: false, role, add, member } => {
            require_db_role(cx, db, ROLE_DB_SECURITYADMIN)?;
            let Some(r) = principal(cx, db, &role.value)?.filter(|p| p.kind == PrincipalKind::Role) else {
                return Err(SqlError::new(
                    15151,
                    16,
                    1,
                    format!(
                        "Cannot alter the role '{}', because it does not exist or you do not have permission.",
                        role.value
                    ),
                ));
            };
            let Some(mut m) = principal(cx, db, &member.value)? else {
                return Err(SqlError::new(
                    15151,
                    16,
                    1,
                    format!(
                        "Cannot add the principal '{}', because it does not exist or you do not have permission.",
                        member.value
                    ),
                ));
            };
            if m.id == PRINCIPAL_DBO || m.id == r.id || m.id == catalog::PRINCIPAL_PUBLIC {
                return Err(SqlError::new(15405, 11, 1, format!("Cannot use the special principal '{}'.", m.name)));
            }
            if *add {
                if !m.member_of.contains(&r.id) {
                    m.member_of.push(r.id);
                }
            } else {
                m.member_of.retain(|x| *x != r.id);
            }
            write_principal(cx, db, &m)
        }
        StatementKind::Permission(p) => permission(cx, db, p),
        _ => Err(super::errors::not_supported("This statement")),
    }
}

/// Permissions that can be granted on an object, and on the database.
const OBJECT_PERMISSIONS: &[&str] =
    &["SELECT", "INSERT", "UPDATE", "DELETE", "EXECUTE", "REFERENCES", "ALTER", "CONTROL", "VIEW DEFINITION"];
const DATABASE_PERMISSIONS: &[&str] = &[
    "CREATE TABLE",
    "CREATE VIEW",
    "CREATE PROCEDURE",
    "CREATE FUNCTION",
    "CREATE SCHEMA",
    "SELECT",
    "INSERT",
    "UPDATE",
    "DELETE",
    "EXECUTE",
    "CONNECT",
    "CHECKPOINT",
    "ALTER",
    "CONTROL",
    "VIEW DEFINITION",
    "SHOWPLAN",
];

fn permission(cx: &mut Cx, db: DbId, p: &Permission) -> Result<(), SqlError> {
    require_db_role(cx, db, ROLE_DB_SECURITYADMIN)?;
    // The securable: an object (class 1), a schema (class 3) or the database (class 0).
    let (class, major_id) = match &p.on {
        None => (0u8, 0i32),
        Some(s) => match s.class.as_deref() {
            Some("SCHEMA") => {
                let n = &s.name.name().value;
                match cx.schema_id(db, n) {
                    Some(id) => (3, id),
                    None => {
                        return Err(SqlError::new(
                            15151,
                            16,
                            1,
                            format!(
                            "Cannot find the schema '{n}', because it does not exist or you do not have permission."
                        ),
                        ))
                    }
                }
            }
            Some("DATABASE") => (0, 0),
            None | Some("OBJECT") => match cx.resolve_object(&s.name)? {
                Some((odb, o)) if odb == db => (1, o.id),
                _ => {
                    return Err(SqlError::new(
                        15151,
                        16,
                        1,
                        format!(
                            "Cannot find the object '{}', because it does not exist or you do not have permission.",
                            super::errors::written(&s.name)
                        ),
                    ))
                }
            },
            Some(other) => return Err(super::errors::not_supported(&format!("Permissions on {other}"))),
        },
    };
    let allowed = if class == 0 { DATABASE_PERMISSIONS } else { OBJECT_PERMISSIONS };
    for perm in &p.permissions {
        let perm = if perm == "ALL" || perm == "ALL PRIVILEGES" { "CONTROL" } else { perm.as_str() };
        if !allowed.contains(&perm) {
            return Err(super::errors::not_supported(&format!("The permission {perm} on this securable")));
        }
    }
    for grantee in &p.principals {
        let Some(mut g) = principal(cx, db, &grantee.value)? else {
            return Err(SqlError::new(
                15151,
                16,
                1,
                format!(
                    "Cannot find the user '{}', because it does not exist or you do not have permission.",
                    grantee.value
                ),
            ));
        };
        if g.id == PRINCIPAL_DBO {
            return Err(SqlError::new(
                4617,
                16,
                1,
                "Cannot grant, deny or revoke permissions to or from special roles.",
            ));
        }
        for perm in &p.permissions {
            let perm = if perm == "ALL" || perm == "ALL PRIVILEGES" { "CONTROL".to_string() } else { perm.clone() };
            g.permissions.retain(|e| !(e.class == class && e.major_id == major_id && e.permission == perm));
            let state = match p.action {
                PermissionAction::Grant => Some(b'G'),
                PermissionAction::Deny => Some(b'D'),
                PermissionAction::Revoke => None,
            };
            if let Some(state) = state {
                g.permissions.push(PermissionEntry { class, major_id, permission: perm, state });
            }
        }
        write_principal(cx, db, &g)?;
    }
    Ok(())
}
