//! Evaluation of the CLR system types' methods (hierarchyid, geometry, geography), bound
//! by `exec::clr` to internal built-ins ("HIERARCHYID <method>", "SPATIAL <method>").

use types::hierarchyid::HierarchyId;
use types::{SqlError, SqlType, Value};

/// Msg 6506: no such method on a CLR type.
pub(crate) fn no_method(ty: &SqlType, method: &str) -> SqlError {
    let class = match ty {
        SqlType::Geometry => "SqlGeometry",
        SqlType::Geography => "SqlGeography",
        _ => "SqlHierarchyId",
    };
    SqlError::new(
        6506,
        16,
        10,
        format!("Could not find method '{method}' for type 'Microsoft.SqlServer.Types.{class}' in assembly 'Microsoft.SqlServer.Types'"),
    )
}

/// Evaluates a "SPATIAL <method>" built-in: static methods get (is geography, args...),
/// instance methods (value, is geography, args...).
fn spatial_call(method: &str, args: &[Value]) -> Result<Value, SqlError> {
    use types::spatial::{Shape, Spatial};
    let arg = |i: usize| args.get(i).unwrap_or(&Value::Null);
    let is_static = matches!(method, "STGeomFromText" | "Parse" | "Point");
    let geography = matches!(arg(if is_static { 0 } else { 1 }), Value::Bit(true));
    let out = |s: Spatial| Ok(Value::Binary(s.serialize(geography)));
    let default_srid = if geography { 4326 } else { 0 };
    match method {
        "STGeomFromText" => {
            return match (arg(1), arg(2)) {
                (Value::String(t), Value::Int(srid)) => out(Spatial::from_wkt(t, *srid, geography)?),
                _ => Ok(Value::Null),
            }
        }
        "Parse" => {
            return match arg(1) {
                Value::String(t) => out(Spatial::from_wkt(t, default_srid, geography)?),
                _ => Ok(Value::Null),
            }
        }
        "Point" => {
            return match (arg(1), arg(2), arg(3)) {
                (Value::Float(a), Value::Float(c), Value::Int(srid)) => {
                    // geography::Point(lat, long, srid); geometry::Point(x, y, srid).
                    let p = if geography { (*c, *a) } else { (*a, *c) };
                    let s = Spatial { srid: *srid, shape: Shape::Point(Some(p)) };
                    let s = Spatial::from_wkt(&s.to_wkt(), *srid, geography)?;
                    out(s)
                }
                _ => Ok(Value::Null),
            };
        }
        _ => {}
    }
    let Value::Binary(bytes) = arg(0) else { return Ok(Value::Null) };
    let s = Spatial::deserialize(bytes, geography).ok_or_else(|| SqlError::invalid_stored_value("geometry"))?;
    let point = match &s.shape {
        Shape::Point(p) => *p,
        _ => None,
    };
    let coord = |f: fn((f64, f64)) -> f64| point.map_or(Value::Null, |p| Value::Float(f(p)));
    Ok(match method {
        "STAsText" => Value::String(s.to_wkt()),
        "STSrid" => Value::Int(s.srid),
        "STX" | "Long" => coord(|p| p.0),
        "STY" | "Lat" => coord(|p| p.1),
        "STGeometryType" => Value::String(s.shape.type_name().to_string()),
        "STNumPoints" => Value::Int(i32::try_from(s.shape.points().len()).unwrap_or(i32::MAX)),
        "STIsEmpty" => Value::Bit(s.shape.points().is_empty()),
        _ => return Err(no_method(&SqlType::Geometry, method)),
    })
}

/// Evaluates a "HIERARCHYID <method>" or "SPATIAL <method>" built-in (`method` with
/// its type's prefix).
pub fn call(method: &str, args: &[Value]) -> Result<Value, SqlError> {
    if let Some(m) = method.strip_prefix("SPATIAL ") {
        return spatial_call(m, args);
    }
    let method = method.strip_prefix("HIERARCHYID ").unwrap_or(method);
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
        _ => return Err(no_method(&SqlType::HierarchyId, method)),
    })
}
