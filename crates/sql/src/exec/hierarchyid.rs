//! The hierarchyid methods: `node.GetLevel()`, `node.ToString()`, `node.GetAncestor(n)`,
//! `node.IsDescendantOf(p)`, `node.GetDescendant(c1, c2)`,
//! `node.GetReparentedValue(old, new)` and the static `hierarchyid::GetRoot()` and
//! `hierarchyid::Parse(text)`, bound to internal built-ins ("HIERARCHYID <method>",
//! evaluated by [`call`]) over the binary form of `types::hierarchyid`. Method names are
//! case-sensitive, as CLR methods are in SQL Server.

use types::hierarchyid::HierarchyId;
use types::{Length, SqlError, SqlType, Value};

use super::expr::BExpr;
use super::query::{Binder, Scope};
use crate::ast::{Expr, Ident};
use crate::scalar::functions::Builtin;

/// (method, argument types, result type): `None` for a hierarchyid argument.
const METHODS: &[(&str, &[Option<SqlType>], SqlType)] = &[
    ("GetLevel", &[], SqlType::SmallInt),
    ("ToString", &[], SqlType::NVarChar { len: Length::Bounded(4000) }),
    ("GetAncestor", &[Some(SqlType::Int)], SqlType::HierarchyId),
    ("IsDescendantOf", &[None], SqlType::Bit),
    ("GetDescendant", &[None, None], SqlType::HierarchyId),
    ("GetReparentedValue", &[None, None], SqlType::HierarchyId),
];

const STATIC_METHODS: &[(&str, &[Option<SqlType>], SqlType)] = &[
    ("GetRoot", &[], SqlType::HierarchyId),
    ("Parse", &[Some(SqlType::NVarChar { len: Length::Bounded(4000) })], SqlType::HierarchyId),
];

pub fn is_method(name: &str) -> bool {
    METHODS.iter().any(|(m, _, _)| *m == name)
}

/// The internal built-in of a method (its name in the table, so it lives as long).
fn builtin(name: &'static str) -> Builtin {
    Builtin(match name {
        "GetLevel" => "HIERARCHYID GetLevel",
        "ToString" => "HIERARCHYID ToString",
        "GetAncestor" => "HIERARCHYID GetAncestor",
        "IsDescendantOf" => "HIERARCHYID IsDescendantOf",
        "GetDescendant" => "HIERARCHYID GetDescendant",
        "GetReparentedValue" => "HIERARCHYID GetReparentedValue",
        "GetRoot" => "HIERARCHYID GetRoot",
        _ => "HIERARCHYID Parse",
    })
}

fn no_method(method: &str) -> SqlError {
    SqlError::new(
        6506,
        16,
        10,
        format!("Could not find method '{method}' for type 'Microsoft.SqlServer.Types.SqlHierarchyId' in assembly 'Microsoft.SqlServer.Types'"),
    )
}

fn bind_args(
    b: &mut Binder,
    params: &[Option<SqlType>],
    method: &Ident,
    args: &[Expr],
    scope: &Scope,
) -> Result<Vec<BExpr>, SqlError> {
    if args.len() != params.len() {
        return Err(no_method(&method.value));
    }
    let mut out = Vec::with_capacity(args.len());
    for (a, p) in args.iter().zip(params) {
        let x = b.bind_expr(a, scope)?;
        let to = p.unwrap_or(SqlType::HierarchyId);
        out.push(if x.ty() == to { x } else { b.convert(x, to, None, false)? });
    }
    Ok(out)
}

/// `target.Method(args)` on a hierarchyid.
pub(super) fn bind_method(
    b: &mut Binder,
    target: &Expr,
    method: &Ident,
    args: &[Expr],
    scope: &Scope,
) -> Result<BExpr, SqlError> {
    let t = b.bind_expr(target, scope)?;
    if t.ty() != SqlType::HierarchyId {
        return Err(SqlError::new(258, 15, 1, format!("Cannot call methods on {}.", t.ty().name())));
    }
    let Some(&(name, params, ty)) = METHODS.iter().find(|(m, _, _)| *m == method.value) else {
        return Err(no_method(&method.value));
    };
    let mut all = vec![t];
    all.extend(bind_args(b, params, method, args, scope)?);
    Ok(BExpr::Func { f: builtin(name), args: all, ty })
}

/// `hierarchyid::Method(args)`.
pub(super) fn bind_static(
    b: &mut Binder,
    type_name: &Ident,
    method: &Ident,
    args: &[Expr],
    scope: &Scope,
) -> Result<BExpr, SqlError> {
    if !type_name.value.eq_ignore_ascii_case("hierarchyid") {
        return Err(SqlError::new(243, 16, 2, format!("Type {} is not a defined system type.", type_name.value)));
    }
    let Some(&(name, params, ty)) = STATIC_METHODS.iter().find(|(m, _, _)| *m == method.value) else {
        return Err(no_method(&method.value));
    };
    let all = bind_args(b, params, method, args, scope)?;
    Ok(BExpr::Func { f: builtin(name), args: all, ty })
}

/// Evaluates a "HIERARCHYID <method>" built-in: the node first for instance methods.
pub fn call(method: &str, args: &[Value]) -> Result<Value, SqlError> {
    let node = |v: &Value| -> Result<Option<HierarchyId>, SqlError> {
        match v {
            Value::Null => Ok(None),
            Value::Binary(b) => {
                HierarchyId::decode(b).map(Some).ok_or_else(|| SqlError::invalid_stored_value("hierarchyid"))
            }
            _ => Err(SqlError::invalid_stored_value("hierarchyid")),
        }
    };
    let out = |h: HierarchyId| h.encode().map(Value::Binary);
    match method {
        "GetRoot" => return out(HierarchyId::root()),
        "Parse" => {
            return match args.first() {
                Some(Value::String(s)) => out(HierarchyId::parse(s)?),
                _ => Ok(Value::Null),
            }
        }
        _ => {}
    }
    let Some(this) = node(args.first().unwrap_or(&Value::Null))? else { return Ok(Value::Null) };
    let arg = |i: usize| args.get(i).unwrap_or(&Value::Null);
    Ok(match method {
        "GetLevel" => Value::SmallInt(i16::try_from(this.level()).unwrap_or(i16::MAX)),
        "ToString" => Value::String(this.to_text()),
        "GetAncestor" => match arg(1) {
            Value::Int(n) if *n >= 0 => match this.ancestor(*n as usize) {
                Some(h) => out(h)?,
                None => Value::Null,
            },
            Value::Int(_) => {
                return Err(types::hierarchyid::clr_error(
                    "Microsoft.SqlServer.Types.HierarchyIdException",
                    "24011: SqlHierarchyId.GetAncestor failed because 'n' must be non-negative.",
                ))
            }
            _ => Value::Null,
        },
        "IsDescendantOf" => match node(arg(1))? {
            Some(p) => Value::Bit(this.is_descendant_of(&p)),
            None => Value::Null,
        },
        "GetDescendant" => {
            let (c1, c2) = (node(arg(1))?, node(arg(2))?);
            out(this.descendant(c1.as_ref(), c2.as_ref())?)?
        }
        "GetReparentedValue" => match (node(arg(1))?, node(arg(2))?) {
            (Some(old), Some(new)) => out(this.reparented(&old, &new)?)?,
            _ => Value::Null,
        },
        _ => return Err(no_method(method)),
    })
}
