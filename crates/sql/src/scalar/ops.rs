//! Operators. (Skeleton: being written.)

use std::cmp::Ordering;

use types::{SqlError, SqlType, Value};

use crate::ast::BinaryOp;

/// The result type of `l op r` for an arithmetic, concatenation or bitwise operator
/// (Add, Sub, Mul, Div, Mod, BitAnd, BitOr, BitXor), following data type precedence and
/// the decimal precision/scale rules; string + string is concatenation. Errors: 8117
/// "Operand data type x is invalid for y operator.", 402 "The data types x and y are
/// incompatible in the z operator.".
pub fn binary_type(op: BinaryOp, l: &SqlType, r: &SqlType) -> Result<SqlType, SqlError> {
    let _ = op;
    Ok(if l.has_higher_precedence_than(r) { *l } else { *r })
}

/// Evaluates `l op r`; operands have their static types `lt`/`rt` and are converted to
/// `result` (from [`binary_type`]) first. NULL in, NULL out. Errors: 8134 divide by
/// zero, 8115/220/232/8115 arithmetic overflow.
pub fn binary(
    op: BinaryOp,
    l: &Value,
    lt: &SqlType,
    r: &Value,
    rt: &SqlType,
    result: &SqlType,
) -> Result<Value, SqlError> {
    let _ = (op, l, lt, r, rt, result);
    Err(SqlError::new(40000, 16, 1, "operators are being written"))
}

/// Unary minus / plus / ~ on a value of type `ty` (result type = `ty`).
pub fn unary(op: crate::ast::UnaryOp, v: &Value, ty: &SqlType) -> Result<Value, SqlError> {
    let _ = (op, v, ty);
    Err(SqlError::new(40000, 16, 1, "operators are being written"))
}

/// The type both operands of a comparison are converted to (the one of higher
/// precedence); Msg 402 or 206 when they cannot be compared (e.g. int and date).
pub fn comparison_type(l: &SqlType, r: &SqlType) -> Result<SqlType, SqlError> {
    Ok(if l.has_higher_precedence_than(r) { *l } else { *r })
}

/// Compares two non-NULL values already converted to `ty` (strings under
/// SQL_Latin1_General_CP1_CI_AS, trailing spaces ignored). None if either is NULL.
pub fn compare(l: &Value, r: &Value, ty: &SqlType) -> Option<Ordering> {
    let _ = ty;
    types::compare(l, r)
}

/// `s LIKE pattern [ESCAPE e]` with %, _, [a-z], [^a] under the CI_AS collation.
/// Msg 506 for an invalid escape sequence.
pub fn like(s: &str, pattern: &str, escape: Option<char>) -> Result<bool, SqlError> {
    let _ = escape;
    Ok(s.eq_ignore_ascii_case(pattern))
}
