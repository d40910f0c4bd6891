//! CAST and CONVERT. (Skeleton: being written.)

use types::{SqlError, SqlType, Value};

/// CAST(value AS to) / CONVERT(to, value, style): `from` is the value's static type.
/// Errors are SQL Server's (245, 8114, 8115, 241, 242, 529 "Explicit conversion from
/// data type x to y is not allowed.", 220/232/244 overflow, 8116 ...).
pub fn convert(value: &Value, from: &SqlType, to: &SqlType, style: Option<i32>) -> Result<Value, SqlError> {
    let _ = style;
    if value.is_null() {
        return Ok(Value::Null);
    }
    if from == to {
        return Ok(value.clone());
    }
    if let Value::String(s) = value {
        return types::parse_from(s, from, to);
    }
    value.fit_to(to)
}

/// TRY_CAST/TRY_CONVERT: NULL where CAST would fail with a conversion error; an
/// explicit conversion that is never allowed (529) is still an error.
pub fn try_convert(value: &Value, from: &SqlType, to: &SqlType, style: Option<i32>) -> Result<Value, SqlError> {
    Ok(convert(value, from, to, style).unwrap_or(Value::Null))
}

/// Does SQL Server convert `from` to `to` without CAST (assignment, comparison,
/// arithmetic)? Where not, the error is Msg 206 "Operand type clash" or 257 "Implicit
/// conversion from data type x to y is not allowed. Use the CONVERT function ...".
pub fn implicit_allowed(from: &SqlType, to: &SqlType) -> bool {
    let _ = (from, to);
    true
}

/// The implicit-conversion error for `from` to `to` (Msg 257 or 206 as SQL Server picks).
pub fn implicit_error(from: &SqlType, to: &SqlType) -> SqlError {
    SqlError::new(
        257,
        16,
        3,
        format!(
            "Implicit conversion from data type {} to {} is not allowed. Use the CONVERT function to run this query.",
            from.name(),
            to.name()
        ),
    )
}
