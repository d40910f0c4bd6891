//! The methods of the CLR system types, bound to internal built-ins (names with a space,
//! so no query can call them by name) and evaluated by [`call`]:
//! - hierarchyid (`types::hierarchyid`): `node.GetLevel()`, `ToString()`,
//!   `GetAncestor(n)`, `IsDescendantOf(p)`, `GetDescendant(c1, c2)`,
//!   `GetReparentedValue(old, new)`, and `hierarchyid::GetRoot()`, `hierarchyid::Parse(s)`;
//! - geometry and geography (`types::spatial`): `STAsText()`, `ToString()`, `STSrid`,
//!   `STX`/`STY` (geometry), `Lat`/`Long` (geography), `STGeometryType()`,
//!   `STNumPoints()`, `STIsEmpty()`, and `type::STGeomFromText(wkt, srid)` (also
//!   STPointFromText, STLineFromText, STPolyFromText), `type::Parse(wkt)`,
//!   `type::Point(x|lat, y|long, srid)`.
//!
//! Method names are case-sensitive, as CLR methods are in SQL Server. Their evaluation
//! is in `crate::scalar::clr`.
use types::{Length, SqlError, SqlType, Value};

use super::expr::BExpr;
use super::query::{Binder, Scope};
use crate::ast::{Expr, Ident};
use crate::scalar::clr::no_method;
use crate::scalar::functions::Builtin;

/// A method: its name, its internal built-in, its arguments (`None`: a value of the
/// method's own type) and its result type (`None`: the method's own type).
struct Method {
    name: &'static str,
    builtin: &'static str,
    params: &'static [Option<SqlType>],
    ret: Option<SqlType>,
}

const fn m(
    name: &'static str,
    builtin: &'static str,
    params: &'static [Option<SqlType>],
    ret: Option<SqlType>,
) -> Method {
    Method { name, builtin, params, ret }
}

const NVARCHAR_4000: SqlType = SqlType::NVarChar { len: Length::Bounded(4000) };
const NVARCHAR_MAX: SqlType = SqlType::NVarChar { len: Length::Max };

const HIERARCHYID_METHODS: &[Method] = &[
    m("GetLevel", "HIERARCHYID GetLevel", &[], Some(SqlType::SmallInt)),
    m("ToString", "HIERARCHYID ToString", &[], Some(NVARCHAR_4000)),
    m("GetAncestor", "HIERARCHYID GetAncestor", &[Some(SqlType::Int)], None),
    m("IsDescendantOf", "HIERARCHYID IsDescendantOf", &[None], Some(SqlType::Bit)),
    m("GetDescendant", "HIERARCHYID GetDescendant", &[None, None], None),
    m("GetReparentedValue", "HIERARCHYID GetReparentedValue", &[None, None], None),
];

const HIERARCHYID_STATIC: &[Method] =
    &[m("GetRoot", "HIERARCHYID GetRoot", &[], None), m("Parse", "HIERARCHYID Parse", &[Some(NVARCHAR_4000)], None)];

/// geometry's and geography's instance methods (the ones only one of them has are
/// checked in `spatial_has`).
const SPATIAL_METHODS: &[Method] = &[
    m("STAsText", "SPATIAL STAsText", &[], Some(NVARCHAR_MAX)),
    m("ToString", "SPATIAL STAsText", &[], Some(NVARCHAR_MAX)),
    m("STSrid", "SPATIAL STSrid", &[], Some(SqlType::Int)),
    m("STX", "SPATIAL STX", &[], Some(SqlType::Float)),
    m("STY", "SPATIAL STY", &[], Some(SqlType::Float)),
    m("Lat", "SPATIAL Lat", &[], Some(SqlType::Float)),
    m("Long", "SPATIAL Long", &[], Some(SqlType::Float)),
    m("STGeometryType", "SPATIAL STGeometryType", &[], Some(NVARCHAR_4000)),
    m("STNumPoints", "SPATIAL STNumPoints", &[], Some(SqlType::Int)),
    m("STIsEmpty", "SPATIAL STIsEmpty", &[], Some(SqlType::Bit)),
];

const SPATIAL_STATIC: &[Method] = &[
    m("STGeomFromText", "SPATIAL STGeomFromText", &[Some(NVARCHAR_MAX), Some(SqlType::Int)], None),
    m("STPointFromText", "SPATIAL STGeomFromText", &[Some(NVARCHAR_MAX), Some(SqlType::Int)], None),
    m("STLineFromText", "SPATIAL STGeomFromText", &[Some(NVARCHAR_MAX), Some(SqlType::Int)], None),
    m("STPolyFromText", "SPATIAL STGeomFromText", &[Some(NVARCHAR_MAX), Some(SqlType::Int)], None),
    m("Parse", "SPATIAL Parse", &[Some(NVARCHAR_MAX)], None),
    m("Point", "SPATIAL Point", &[Some(SqlType::Float), Some(SqlType::Float), Some(SqlType::Int)], None),
];

/// Whether `name` is an instance method of a CLR type (the parser's list is the same).
pub fn is_method(name: &str) -> bool {
    HIERARCHYID_METHODS.iter().chain(SPATIAL_METHODS).any(|m| m.name == name)
}

fn spatial_has(ty: &SqlType, name: &str) -> bool {
    match name {
        "STX" | "STY" => *ty == SqlType::Geometry,
        "Lat" | "Long" => *ty == SqlType::Geography,
        _ => true,
    }
}

fn bind_args(
    b: &mut Binder,
    own: SqlType,
    method: &Method,
    args: &[Expr],
    scope: &Scope,
) -> Result<Vec<BExpr>, SqlError> {
    if args.len() != method.params.len() {
        return Err(no_method(&own, method.name));
    }
    let mut out = Vec::with_capacity(args.len());
    for (a, p) in args.iter().zip(method.params) {
        let x = b.bind_expr(a, scope)?;
        let to = p.unwrap_or(own);
        out.push(if x.ty() == to { x } else { b.convert(x, to, None, false)? });
    }
    Ok(out)
}

/// A spatial built-in's first argument after the value: whether it is a geography.
fn kind_arg(ty: SqlType) -> BExpr {
    BExpr::Const(Value::Bit(ty == SqlType::Geography), SqlType::Bit)
}

/// `target.Method(args)` on a CLR type.
pub(super) fn bind_method(
    b: &mut Binder,
    target: &Expr,
    method: &Ident,
    args: &[Expr],
    scope: &Scope,
) -> Result<BExpr, SqlError> {
    let t = b.bind_expr(target, scope)?;
    let ty = t.ty();
    let table = match ty {
        SqlType::HierarchyId => HIERARCHYID_METHODS,
        SqlType::Geometry | SqlType::Geography => SPATIAL_METHODS,
        _ => return Err(SqlError::new(258, 15, 1, format!("Cannot call methods on {}.", ty.name()))),
    };
    let Some(m) = table.iter().find(|m| m.name == method.value && (!ty.is_spatial() || spatial_has(&ty, m.name)))
    else {
        return Err(no_method(&ty, &method.value));
    };
    let mut all = vec![t];
    if ty.is_spatial() {
        all.push(kind_arg(ty));
    }
    all.extend(bind_args(b, ty, m, args, scope)?);
    Ok(BExpr::Func { f: Builtin(m.builtin), args: all, ty: m.ret.unwrap_or(ty) })
}

/// The properties of geometry and geography (read without parentheses).
const SPATIAL_PROPERTIES: &[&str] = &["STSrid", "STX", "STY", "Lat", "Long"];

pub fn is_property(name: &str) -> bool {
    SPATIAL_PROPERTIES.contains(&name)
}

/// `value.Property` on a geometry or geography.
pub(super) fn bind_property(t: BExpr, prop: &Ident) -> Result<BExpr, SqlError> {
    let ty = t.ty();
    let Some(m) = SPATIAL_METHODS.iter().find(|m| m.name == prop.value && spatial_has(&ty, m.name)) else {
        return Err(no_method(&ty, &prop.value));
    };
    Ok(BExpr::Func { f: Builtin(m.builtin), args: vec![t, kind_arg(ty)], ty: m.ret.unwrap_or(ty) })
}

/// `type::Method(args)`.
pub(super) fn bind_static(
    b: &mut Binder,
    type_name: &Ident,
    method: &Ident,
    args: &[Expr],
    scope: &Scope,
) -> Result<BExpr, SqlError> {
    let (ty, table) = match type_name.value.to_ascii_lowercase().as_str() {
        "hierarchyid" => (SqlType::HierarchyId, HIERARCHYID_STATIC),
        "geometry" => (SqlType::Geometry, SPATIAL_STATIC),
        "geography" => (SqlType::Geography, SPATIAL_STATIC),
        _ => return Err(SqlError::new(243, 16, 2, format!("Type {} is not a defined system type.", type_name.value))),
    };
    let Some(m) = table.iter().find(|m| m.name == method.value) else {
        return Err(no_method(&ty, &method.value));
    };
    let mut all = Vec::new();
    if ty.is_spatial() {
        all.push(kind_arg(ty));
    }
    all.extend(bind_args(b, ty, m, args, scope)?);
    Ok(BExpr::Func { f: Builtin(m.builtin), args: all, ty: m.ret.unwrap_or(ty) })
}
