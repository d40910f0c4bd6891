//! Operators: arithmetic, string and binary concatenation, bitwise operators, unary
//! operators, comparison and LIKE, with SQL Server's result types and errors.
//!
//! Result types follow data type precedence (`SqlType::precedence`) with these rules
//! (probed SQL Server behaviour where known):
//! - Integers keep the wider operand type (tinyint + tinyint is tinyint) and overflow
//!   with Msg 8115 state 2 naming it; `<min> / -1` and `<min> % -1` overflow too.
//!   Integer division truncates toward zero; % takes the dividend's sign.
//! - decimal: + and - give p = max(p1-s1, p2-s2) + max(s1, s2) + 1, s = max(s1, s2),
//!   and past 38 digits keep the integral part whole, s = min(s, 38 - max(p1-s1, p2-s2));
//!   multiplication gives p1 + p2 + 1, s1 + s2; division s = max(6, s1 + p2 + 1),
//!   p = p1 - s1 + s2 + s;
//!   for both, past 38 the scale drops by the excess but not below min(s, 6); % gives
//!   p = min(p1-s1, p2-s2) + max(s1, s2), s = max(s1, s2). Integers count as decimal(3, 5,
//!   10 or 19, 0), bit as (1, 0), money as (19, 4), smallmoney as (10, 4). Every operator
//!   rounds half away from zero at the result scale except division, which truncates
//!   (decimal and money alike). The result is numeric when either operand is numeric.
//! - money keeps money (money * money rounds, money / money truncates, at 4 decimals).
//! - real wins over every operand but float; % is refused for float/real (8117 for two
//!   approximate operands, 402 for one).
//! - Strings: + concatenates; the length is the sum, capped at 8000 bytes (4000
//!   characters for nvarchar), MAX when either side is MAX; nvarchar when either side is
//!   Unicode; char(n) + char(m) stays fixed-length. A string meeting a number converts to
//!   the number (`'1' + 1` is 2, `'a' + 1` is Msg 245). - * / % on two strings: Msg 8117.
//! - Binaries: + concatenates; - % & | ^ are Msg 402, * / Msg 8117; a binary meeting an
//!   integer, decimal or money converts to it (`1 + 0x01` is 2) but not to float/real
//!   (Msg 206).
//! - bit + bit: Msg 402 (+ - %) or 8117 (* /); bitwise operators accept bit and keep it.
//! - datetime and smalldatetime meet numbers, strings and each other under + and - as day
//!   counts (`GETDATE() + 1` is tomorrow, `dt - 1.5` a day and a half earlier, `dt2 - dt1`
//!   the difference since 1900-01-01); out of range is Msg 517. The partner is rounded
//!   to the result's precision first (smalldatetime to the minute). date, time,
//!   datetime2 and datetimeoffset take no arithmetic: with a number Msg 206, with their
//!   own kind Msg 8117, between different date/time types Msg 402.
//! - Comparisons: both sides convert to the higher-precedence type (strings to numbers,
//!   binaries to integers); time against another date/time type and anything against
//!   xml are Msg 402 ("equal to" operator), two xml values Msg 305, pairs that never
//!   convert Msg 206. Two decimals compare in a decimal wide enough for both. Strings
//!   compare under SQL_Latin1_General_CP1_CI_AS (case-insensitive, trailing spaces
//!   ignored).
//! - LIKE: % _ [abc] [a-f] [^x] and ESCAPE, case-insensitive and accent-sensitive like
//!   the collation; trailing spaces of the matched string are not significant (SQL
//!   Server's rule for char/varchar), those of the pattern are. A pattern ending in its
//!   escape character is Msg 506.

use std::cmp::Ordering;

use types::{Length, SqlError, SqlType, Value};

use super::convert;
use super::util::{
    self, clash, divide_by_zero, effective_type, exact_parts, incompatible, invalid_operand, overflow, Rounding, Wide,
    UNITS_PER_DT_TICK,
};
use crate::ast::{BinaryOp, UnaryOp};

/// The operand classes the operator rules distinguish.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum K {
    Str,
    Bin,
    Xml,
    Guid,
    Bit,
    Int,
    Dec,
    Money,
    Approx,
    Legacy,
    Date,
    Time,
    Modern,
    Variant,
    /// text, ntext, image: no operator but LIKE and IS NULL takes them.
    Lob,
    /// hierarchyid: compared (with itself, strings and binaries, which convert to it),
    /// no arithmetic.
    Hid,
}

fn k(t: &SqlType) -> K {
    match t {
        SqlType::Char { .. } | SqlType::VarChar { .. } | SqlType::NChar { .. } | SqlType::NVarChar { .. } => K::Str,
        SqlType::Binary { .. } | SqlType::VarBinary { .. } => K::Bin,
        SqlType::Xml => K::Xml,
        SqlType::UniqueIdentifier => K::Guid,
        SqlType::Bit => K::Bit,
        SqlType::TinyInt | SqlType::SmallInt | SqlType::Int | SqlType::BigInt => K::Int,
        SqlType::Decimal { .. } | SqlType::Numeric { .. } => K::Dec,
        SqlType::Money | SqlType::SmallMoney => K::Money,
        SqlType::Float | SqlType::Real => K::Approx,
        SqlType::DateTime | SqlType::SmallDateTime => K::Legacy,
        SqlType::Date => K::Date,
        SqlType::Time { .. } => K::Time,
        SqlType::DateTime2 { .. } | SqlType::DateTimeOffset { .. } => K::Modern,
        SqlType::Variant => K::Variant,
        SqlType::Text | SqlType::NText | SqlType::Image => K::Lob,
        SqlType::HierarchyId => K::Hid,
        // Spatial values have no operators (only methods and IS NULL), like the LOBs.
        SqlType::Geometry | SqlType::Geography => K::Lob,
    }
}

/// The error for text, ntext or image as an operand of `op` (any operator but LIKE and
/// IS NULL): 402 naming both types when the other side is a string, a binary, another
/// such type, xml or one of the newer date and time types; 206 otherwise (the other
/// side's type would have to take the value, and none can).
fn lob_operand_error(op: BinaryOp, l: &SqlType, r: &SqlType) -> SqlError {
    let other = if k(l) == K::Lob { k(r) } else { k(l) };
    if matches!(other, K::Str | K::Bin | K::Lob | K::Xml | K::Date | K::Time | K::Modern) {
        incompatible(l.name(), r.name(), op_name(op))
    } else if k(l) == K::Lob {
        clash(l.name(), r.name())
    } else {
        clash(r.name(), l.name())
    }
}

fn is_number(k: K) -> bool {
    matches!(k, K::Bit | K::Int | K::Dec | K::Money | K::Approx)
}

/// The operator's name in SQL Server's messages.
pub fn op_name(op: BinaryOp) -> &'static str {
    match op {
        BinaryOp::Add => "add",
        BinaryOp::Sub => "subtract",
        BinaryOp::Mul => "multiply",
        BinaryOp::Div => "divide",
        BinaryOp::Mod => "modulo",
        BinaryOp::BitAnd => "'&'",
        BinaryOp::BitOr => "'|'",
        BinaryOp::BitXor => "'^'",
        BinaryOp::Eq => "equal to",
        BinaryOp::NotEq => "not equal to",
        BinaryOp::Lt => "less than",
        BinaryOp::Gt => "greater than",
        BinaryOp::LtEq => "less than or equal to",
        BinaryOp::GtEq => "greater than or equal to",
        BinaryOp::NotLt => "not less than",
        BinaryOp::NotGt => "not greater than",
        BinaryOp::And => "boolean AND",
        BinaryOp::Or => "boolean OR",
    }
}

/// Bound length of a string or binary type (None for MAX and xml).
fn bound_len(t: &SqlType) -> Option<u32> {
    match *t {
        SqlType::Char { len } | SqlType::NChar { len } | SqlType::Binary { len } => Some(u32::from(len)),
        SqlType::VarChar { len: Length::Bounded(n) }
        | SqlType::NVarChar { len: Length::Bounded(n) }
        | SqlType::VarBinary { len: Length::Bounded(n) } => Some(u32::from(n)),
        _ => None,
    }
}

fn is_fixed(t: &SqlType) -> bool {
    matches!(t, SqlType::Char { .. } | SqlType::NChar { .. } | SqlType::Binary { .. })
}

/// The type of `l + r` for strings (a binary operand counts with its byte length).
fn concat_type(l: &SqlType, r: &SqlType) -> SqlType {
    let unicode = l.is_unicode() || r.is_unicode();
    let (Some(a), Some(b)) = (bound_len(l), bound_len(r)) else {
        return if unicode { SqlType::NVarChar { len: Length::Max } } else { SqlType::VarChar { len: Length::Max } };
    };
    let cap = if unicode { 4000 } else { 8000 };
    let n = (a + b).min(cap) as u16;
    match (unicode, is_fixed(l) && is_fixed(r)) {
        (true, true) => SqlType::NChar { len: n },
        (true, false) => SqlType::NVarChar { len: Length::Bounded(n) },
        (false, true) => SqlType::Char { len: n },
        (false, false) => SqlType::VarChar { len: Length::Bounded(n) },
    }
}

fn binary_concat_type(l: &SqlType, r: &SqlType) -> SqlType {
    let (Some(a), Some(b)) = (bound_len(l), bound_len(r)) else {
        return SqlType::VarBinary { len: Length::Max };
    };
    let n = (a + b).min(8000) as u16;
    if is_fixed(l) && is_fixed(r) {
        SqlType::Binary { len: n }
    } else {
        SqlType::VarBinary { len: Length::Bounded(n) }
    }
}

/// The decimal result (precision, scale) of `op` on two decimal operands.
pub fn decimal_result(op: BinaryOp, (p1, s1): (u8, u8), (p2, s2): (u8, u8)) -> (u8, u8) {
    let (p1, s1, p2, s2) = (i32::from(p1), i32::from(s1), i32::from(p2), i32::from(s2));
    // * and / past 38 digits: the scale gives way by the excess, down to min(s, 6).
    let reduce = |p: i32, s: i32| -> (i32, i32) {
        if p <= 38 {
            return (p, s);
        }
        let floor = s.min(6);
        ((38), (s - (p - 38)).max(floor))
    };
    let (p, s) = match op {
        BinaryOp::Add | BinaryOp::Sub => {
            let int = (p1 - s1).max(p2 - s2);
            let s = s1.max(s2);
            let p = int + s + 1;
            if p > 38 {
                (38, s.min(38 - int))
            } else {
                (p, s)
            }
        }
        BinaryOp::Mul => reduce(p1 + p2 + 1, s1 + s2),
        BinaryOp::Div => {
            let s = 6.max(s1 + p2 + 1);
            reduce(p1 - s1 + s2 + s, s)
        }
        _ => {
            let s = s1.max(s2);
            ((p1 - s1).min(p2 - s2) + s, s)
        }
    };
    let p = p.clamp(1, 38);
    (p as u8, s.clamp(0, p) as u8)
}

/// The smallest decimal holding both operands (comparison, CASE, UNION).
fn decimal_union((p1, s1): (u8, u8), (p2, s2): (u8, u8)) -> (u8, u8) {
    let s = s1.max(s2);
    let int = p1.saturating_sub(s1).max(p2.saturating_sub(s2));
    let p = int.saturating_add(s).clamp(1, 38);
    (p, s.min(p))
}

fn decimal_type(numeric: bool, (precision, scale): (u8, u8)) -> SqlType {
    if numeric {
        SqlType::Numeric { precision, scale }
    } else {
        SqlType::Decimal { precision, scale }
    }
}

/// The higher-precedence of two types.
fn winner(l: &SqlType, r: &SqlType) -> SqlType {
    if r.has_higher_precedence_than(l) {
        *r
    } else {
        *l
    }
}

/// The result type of `l op r` for an arithmetic, concatenation or bitwise operator
/// (Add, Sub, Mul, Div, Mod, BitAnd, BitOr, BitXor), following data type precedence and
/// the decimal precision/scale rules; string + string is concatenation. Errors: 8117
/// "Operand data type x is invalid for y operator.", 402 "The data types x and y are
/// incompatible in the z operator.", 206 for pairs that never convert, 257 for a
/// datetime multiplied or divided by a number. Comparison operators give bit (after
/// [`comparison_type_for`]'s checks).
pub fn binary_type(op: BinaryOp, l: &SqlType, r: &SqlType) -> Result<SqlType, SqlError> {
    if op.is_comparison() {
        comparison_type_for(op, l, r)?;
        return Ok(SqlType::Bit);
    }
    if matches!(op, BinaryOp::And | BinaryOp::Or) {
        return Ok(SqlType::Bit);
    }
    let name = op_name(op);
    let (kl, kr) = (k(l), k(r));
    let bitwise = matches!(op, BinaryOp::BitAnd | BinaryOp::BitOr | BinaryOp::BitXor);
    let left_invalid = || invalid_operand(l.name(), name);
    let pair_incompatible = || incompatible(l.name(), r.name(), name);
    if kl == K::Lob || kr == K::Lob {
        return Err(lob_operand_error(op, l, r));
    }
    if kl == K::Xml || kr == K::Xml {
        return Err(pair_incompatible());
    }
    // No arithmetic on sql_variant or hierarchyid (Msg 8117 names it whichever side it
    // is on).
    if kl == K::Variant || kr == K::Variant {
        return Err(invalid_operand("sql_variant", name));
    }
    if kl == K::Hid || kr == K::Hid {
        return Err(invalid_operand("hierarchyid", name));
    }
    // Strings and binaries among themselves.
    match (kl, kr) {
        (K::Str, K::Str) => {
            return if op == BinaryOp::Add { Ok(concat_type(l, r)) } else { Err(left_invalid()) };
        }
        (K::Str, K::Bin) | (K::Bin, K::Str) => {
            return match op {
                BinaryOp::Add => Ok(concat_type(l, r)),
                BinaryOp::Mul | BinaryOp::Div => Err(left_invalid()),
                _ => Err(pair_incompatible()),
            };
        }
        (K::Bin, K::Bin) => {
            return match op {
                BinaryOp::Add => Ok(binary_concat_type(l, r)),
                BinaryOp::Mul | BinaryOp::Div => Err(left_invalid()),
                _ => Err(pair_incompatible()),
            };
        }
        _ => {}
    }
    if kl == K::Guid || kr == K::Guid {
        let other = if kl == K::Guid { kr } else { kl };
        return Err(if matches!(other, K::Guid | K::Str | K::Bin) {
            invalid_operand("uniqueidentifier", name)
        } else {
            clash(l.name(), r.name())
        });
    }
    // date, time, datetime2, datetimeoffset: no arithmetic at all.
    let modern = |k: K| matches!(k, K::Date | K::Time | K::Modern);
    if modern(kl) || modern(kr) {
        let temporal = |k: K| matches!(k, K::Date | K::Time | K::Modern | K::Legacy);
        if temporal(kl) && temporal(kr) {
            return Err(if l.name() == r.name() { left_invalid() } else { pair_incompatible() });
        }
        let (t, other) = if modern(kl) { (l, kr) } else { (r, kl) };
        return Err(if other == K::Str {
            invalid_operand(t.name(), name)
        } else {
            clash(t.name(), if modern(kl) { r.name() } else { l.name() })
        });
    }
    if kl == K::Legacy || kr == K::Legacy {
        let (t, o, other) = if kl == K::Legacy { (l, r, kr) } else { (r, l, kl) };
        return match op {
            BinaryOp::Add | BinaryOp::Sub => {
                if other == K::Legacy {
                    Ok(winner(l, r))
                } else {
                    Ok(*t)
                }
            }
            BinaryOp::Mul | BinaryOp::Div if is_number(other) || other == K::Bin => {
                Err(convert::implicit_error_257(t, o))
            }
            _ if bitwise => Err(pair_incompatible()),
            _ => Err(left_invalid()),
        };
    }
    // Only numbers, strings and binaries remain, at least one a number.
    if kl == K::Bit && kr == K::Bit {
        return match op {
            _ if bitwise => Ok(SqlType::Bit),
            BinaryOp::Mul | BinaryOp::Div => Err(left_invalid()),
            _ => Err(pair_incompatible()),
        };
    }
    if kl == K::Approx || kr == K::Approx {
        if op == BinaryOp::Mod || bitwise {
            return Err(if kl == K::Approx && kr == K::Approx && !bitwise {
                left_invalid()
            } else {
                pair_incompatible()
            });
        }
        if kl == K::Bin || kr == K::Bin {
            return Err(clash(l.name(), r.name()));
        }
        return Ok(if *l == SqlType::Float || *r == SqlType::Float { SqlType::Float } else { SqlType::Real });
    }
    if bitwise {
        let intlike = |k: K| matches!(k, K::Int | K::Bit);
        return match (kl, kr) {
            (a, b) if intlike(a) && intlike(b) => Ok(winner(l, r)),
            (K::Bin, b) if intlike(b) => Ok(*r),
            (a, K::Bin) if intlike(a) => Ok(*l),
            _ => Err(pair_incompatible()),
        };
    }
    // bit beside a string or binary behaves like the bit pair.
    if (kl == K::Bit && matches!(kr, K::Str | K::Bin)) || (kr == K::Bit && matches!(kl, K::Str | K::Bin)) {
        return match op {
            BinaryOp::Mul | BinaryOp::Div => Err(left_invalid()),
            _ => Err(pair_incompatible()),
        };
    }
    if kl == K::Dec || kr == K::Dec {
        // A string or binary partner converts to the decimal operand's own type.
        let params =
            |t: &SqlType, other: &SqlType| util::decimal_params_of(t).or_else(|| util::decimal_params_of(other));
        let (Some(a), Some(b)) = (params(l, r), params(r, l)) else {
            return Err(pair_incompatible());
        };
        let numeric = matches!(l, SqlType::Numeric { .. }) || matches!(r, SqlType::Numeric { .. });
        return Ok(decimal_type(numeric, decimal_result(op, a, b)));
    }
    if kl == K::Money || kr == K::Money {
        let money = |t: &SqlType| util::is_money(t).then_some(*t);
        return Ok(match (money(l), money(r)) {
            (Some(a), Some(b)) => winner(&a, &b),
            (Some(a), None) | (None, Some(a)) => a,
            (None, None) => SqlType::Money,
        });
    }
    // Integers (with bit, strings and binaries converting to them).
    let int = |t: &SqlType| matches!(k(t), K::Int | K::Bit).then_some(*t);
    Ok(match (int(l), int(r)) {
        (Some(a), Some(b)) => winner(&a, &b),
        (Some(a), None) | (None, Some(a)) => a,
        (None, None) => SqlType::Int,
    })
}

/// The result type of a unary operator on `ty`: - keeps the type but widens tinyint to
/// smallint; ~ takes integers and bit only; - and ~ on other types are Msg 8117.
pub fn unary_type(op: UnaryOp, ty: &SqlType) -> Result<SqlType, SqlError> {
    let kind = k(ty);
    match op {
        UnaryOp::Plus => match kind {
            K::Xml | K::Guid | K::Variant | K::Hid => Err(invalid_operand(ty.name(), "plus")),
            _ => Ok(*ty),
        },
        UnaryOp::Minus => match kind {
            K::Int if *ty == SqlType::TinyInt => Ok(SqlType::SmallInt),
            K::Int | K::Dec | K::Money | K::Approx => Ok(*ty),
            _ => Err(invalid_operand(ty.name(), "minus")),
        },
        UnaryOp::BitNot => match kind {
            K::Int | K::Bit => Ok(*ty),
            _ => Err(invalid_operand(ty.name(), "'~'")),
        },
        UnaryOp::Not => Ok(SqlType::Bit),
    }
}

/// An integer value in the range of an integer result type.
fn int_value(v: i128, ty: &SqlType) -> Result<Value, SqlError> {
    let bad = || overflow(ty.name());
    Ok(match ty {
        SqlType::Bit => Value::Bit(v != 0),
        SqlType::TinyInt => Value::TinyInt(u8::try_from(v).map_err(|_| bad())?),
        SqlType::SmallInt => Value::SmallInt(i16::try_from(v).map_err(|_| bad())?),
        SqlType::Int => Value::Int(i32::try_from(v).map_err(|_| bad())?),
        SqlType::BigInt => Value::BigInt(i64::try_from(v).map_err(|_| bad())?),
        _ => return Err(bad()),
    })
}

fn int_of(v: &Value) -> Option<i128> {
    match exact_parts(v) {
        Some((x, 0)) => Some(x),
        _ => None,
    }
}

/// Converts an operand to the type it takes part in the operation as.
fn operand(v: &Value, t: &SqlType, to: &SqlType) -> Result<Value, SqlError> {
    if util::fits_family(v, to) && !matches!(to, SqlType::Decimal { .. } | SqlType::Numeric { .. }) {
        return Ok(v.clone());
    }
    convert::convert(v, t, to, None)
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
    if l.is_null() || r.is_null() {
        return Ok(Value::Null);
    }
    let lt = effective_type(l, lt);
    let rt = effective_type(r, rt);
    if op.is_comparison() {
        let ty = comparison_type_for(op, &lt, &rt)?;
        let (a, b) = (operand(l, &lt, &ty)?, operand(r, &rt, &ty)?);
        let Some(ord) = compare(&a, &b, &ty) else { return Ok(Value::Null) };
        return Ok(Value::Bit(match op {
            BinaryOp::Eq => ord == Ordering::Equal,
            BinaryOp::NotEq => ord != Ordering::Equal,
            BinaryOp::Lt => ord == Ordering::Less,
            BinaryOp::Gt => ord == Ordering::Greater,
            BinaryOp::LtEq | BinaryOp::NotGt => ord != Ordering::Greater,
            _ => ord != Ordering::Less,
        }));
    }
    if matches!(op, BinaryOp::And | BinaryOp::Or) {
        let (a, b) = (matches!(l, Value::Bit(true)), matches!(r, Value::Bit(true)));
        return Ok(Value::Bit(if op == BinaryOp::And { a && b } else { a || b }));
    }
    match k(result) {
        K::Str => {
            let text_type = if result.is_unicode() {
                SqlType::NVarChar { len: Length::Max }
            } else {
                SqlType::VarChar { len: Length::Max }
            };
            let (Value::String(a), Value::String(b)) = (operand(l, &lt, &text_type)?, operand(r, &rt, &text_type)?)
            else {
                return Err(incompatible(lt.name(), rt.name(), op_name(op)));
            };
            if super::util::text_over_lob_limit(&[&a, &b], result.is_unicode()) {
                return Err(super::util::lob_too_large());
            }
            convert::convert(
                &Value::String({
                    let mut a = a;
                    types::ucs2::push_str(&mut a, &b);
                    a
                }),
                &text_type,
                result,
                None,
            )
        }
        K::Bin => {
            let bin = SqlType::VarBinary { len: Length::Max };
            let (Value::Binary(mut a), Value::Binary(b)) = (operand(l, &lt, &bin)?, operand(r, &rt, &bin)?) else {
                return Err(incompatible(lt.name(), rt.name(), op_name(op)));
            };
            if (a.len() + b.len()) as u64 > super::util::MAX_LOB_BYTES {
                return Err(super::util::lob_too_large());
            }
            a.extend_from_slice(&b);
            convert::convert(&Value::Binary(a), &bin, result, None)
        }
        K::Legacy => legacy_arith(op, l, &lt, r, &rt, result),
        K::Int | K::Bit => {
            let a = int_of(&operand(l, &lt, result)?).ok_or_else(|| overflow(result.name()))?;
            let b = int_of(&operand(r, &rt, result)?).ok_or_else(|| overflow(result.name()))?;
            let v = match op {
                BinaryOp::Add => a + b,
                BinaryOp::Sub => a - b,
                BinaryOp::Mul => a * b,
                BinaryOp::Div | BinaryOp::Mod => {
                    if b == 0 {
                        return Err(divide_by_zero());
                    }
                    // i128 holds every quotient; <min> / -1 and <min> % -1 overflow the
                    // type (SQL Server forms the quotient for % too).
                    let q = a / b;
                    int_value(q, result)?;
                    if op == BinaryOp::Div {
                        q
                    } else {
                        a % b
                    }
                }
                BinaryOp::BitAnd => a & b,
                BinaryOp::BitOr => a | b,
                _ => a ^ b,
            };
            if matches!(op, BinaryOp::BitAnd | BinaryOp::BitOr | BinaryOp::BitXor) {
                return Ok(wrap_int(v, result));
            }
            int_value(v, result)
        }
        K::Dec => decimal_arith(op, l, &lt, r, &rt, result),
        K::Money => {
            let (Value::Money(a), Value::Money(b)) = (operand(l, &lt, result)?, operand(r, &rt, result)?) else {
                return Err(overflow(result.name()));
            };
            let (a, b) = (i128::from(a), i128::from(b));
            let v = match op {
                BinaryOp::Add => Some(a + b),
                BinaryOp::Sub => Some(a - b),
                BinaryOp::Mul => Wide::mul(a, b).div_pow10(4, Rounding::HalfAway).and_then(Wide::to_i128),
                BinaryOp::Div => {
                    if b == 0 {
                        return Err(divide_by_zero());
                    }
                    Wide::mul(a, 10_000).div(Wide::from_i128(b), Rounding::Truncate).and_then(Wide::to_i128)
                }
                BinaryOp::Mod => {
                    if b == 0 {
                        return Err(divide_by_zero());
                    }
                    Some(a % b)
                }
                _ => None,
            };
            let (lo, hi) = if *result == SqlType::SmallMoney {
                (i128::from(i32::MIN), i128::from(i32::MAX))
            } else {
                (i128::from(i64::MIN), i128::from(i64::MAX))
            };
            match v {
                Some(v) if (lo..=hi).contains(&v) => Ok(Value::Money(v as i64)),
                _ => Err(overflow(result.name())),
            }
        }
        K::Approx => {
            let a = util::to_f64(&operand(l, &lt, &SqlType::Float)?).unwrap_or(0.0);
            let b = util::to_f64(&operand(r, &rt, &SqlType::Float)?).unwrap_or(0.0);
            let v = match op {
                BinaryOp::Add => a + b,
                BinaryOp::Sub => a - b,
                BinaryOp::Mul => a * b,
                BinaryOp::Div => {
                    if b == 0.0 {
                        return Err(divide_by_zero());
                    }
                    a / b
                }
                _ => return Err(invalid_operand(result.name(), op_name(op))),
            };
            if *result == SqlType::Real {
                let r = v as f32;
                if !r.is_finite() {
                    return Err(overflow("real"));
                }
                return Ok(Value::Real(r));
            }
            if !v.is_finite() {
                return Err(overflow("float"));
            }
            Ok(Value::Float(v))
        }
        _ => Err(incompatible(lt.name(), rt.name(), op_name(op))),
    }
}

/// A bitwise result in its type's width (two's complement, never an overflow).
fn wrap_int(v: i128, ty: &SqlType) -> Value {
    match ty {
        SqlType::Bit => Value::Bit(v & 1 != 0),
        SqlType::TinyInt => Value::TinyInt(v as u8),
        SqlType::SmallInt => Value::SmallInt(v as i16),
        SqlType::Int => Value::Int(v as i32),
        _ => Value::BigInt(v as i64),
    }
}

/// An operand of decimal arithmetic as (unscaled, scale): numbers as they are, strings
/// and binaries converted to the other operand's type.
fn decimal_operand(v: &Value, t: &SqlType, other: &SqlType) -> Result<(i128, u8), SqlError> {
    if let Some(p) = exact_parts(v) {
        return Ok(p);
    }
    let target =
        if util::decimal_params_of(other).is_some() { *other } else { SqlType::Decimal { precision: 38, scale: 10 } };
    let c = convert::convert(v, t, &target, None)?;
    exact_parts(&c).ok_or_else(|| overflow("numeric"))
}

fn decimal_arith(
    op: BinaryOp,
    l: &Value,
    lt: &SqlType,
    r: &Value,
    rt: &SqlType,
    result: &SqlType,
) -> Result<Value, SqlError> {
    let (precision, scale) = result.decimal_params().unwrap_or((38, 0));
    let (a, sa) = decimal_operand(l, lt, rt)?;
    let (b, sb) = decimal_operand(r, rt, lt)?;
    let ovf = || overflow("numeric");
    let rs = u32::from(scale);
    let v: Option<i128> = match op {
        BinaryOp::Add | BinaryOp::Sub | BinaryOp::Mod => {
            let cs = sa.max(sb);
            let wa = Wide::from_i128(a).mul_pow10(u32::from(cs - sa)).ok_or_else(ovf)?;
            let wb = Wide::from_i128(b).mul_pow10(u32::from(cs - sb)).ok_or_else(ovf)?;
            let w = match op {
                BinaryOp::Add => wa.add(wb),
                BinaryOp::Sub => wa.add(wb.neg()),
                _ => {
                    if b == 0 {
                        return Err(divide_by_zero());
                    }
                    wa.rem(wb)
                }
            }
            .ok_or_else(ovf)?;
            rescale_wide(w, u32::from(cs), rs, Rounding::HalfAway)
        }
        BinaryOp::Mul => rescale_wide(Wide::mul(a, b), u32::from(sa) + u32::from(sb), rs, Rounding::HalfAway),
        BinaryOp::Div => {
            if b == 0 {
                return Err(divide_by_zero());
            }
            // a/10^sa / (b/10^sb) at scale rs: a * 10^(rs + sb - sa) / b, truncated.
            let k = i64::from(rs) + i64::from(sb) - i64::from(sa);
            let (num, den) = if k >= 0 {
                (Wide::from_i128(a).mul_pow10(k as u32).ok_or_else(ovf)?, Wide::from_i128(b))
            } else {
                (Wide::from_i128(a), Wide::from_i128(b).mul_pow10((-k) as u32).ok_or_else(ovf)?)
            };
            num.div(den, Rounding::Truncate).and_then(Wide::to_i128)
        }
        _ => None,
    };
    match v {
        Some(v) if types::decimal::fits_precision(v, precision) => Ok(Value::Decimal { value: v, precision, scale }),
        _ => Err(ovf()),
    }
}

/// A wide value at scale `from` moved to scale `to`.
fn rescale_wide(w: Wide, from: u32, to: u32, rounding: Rounding) -> Option<i128> {
    if to >= from {
        w.mul_pow10(to - from)?.to_i128()
    } else {
        w.div_pow10(from - to, rounding)?.to_i128()
    }
}

/// datetime/smalldatetime arithmetic as day counts in 1/300 s ticks.
fn legacy_arith(
    op: BinaryOp,
    l: &Value,
    lt: &SqlType,
    r: &Value,
    rt: &SqlType,
    result: &SqlType,
) -> Result<Value, SqlError> {
    const PER_DAY: i128 = types::calendar::DATETIME_TICKS_PER_DAY as i128;
    let ticks = |v: &Value, t: &SqlType| -> Result<i128, SqlError> {
        let v = match v {
            Value::DateTime { .. } | Value::SmallDateTime { .. } => v.clone(),
            // A number is a count of days; the partner rounds to the result's precision.
            _ if util::exact_parts(v).is_some() || matches!(v, Value::Float(_) | Value::Real(_)) => {
                let days = match exact_parts(v) {
                    Some((x, s)) => {
                        Wide::mul(x, PER_DAY).div_pow10(u32::from(s), Rounding::HalfAway).and_then(Wide::to_i128)
                    }
                    None => {
                        let f = util::to_f64(v).unwrap_or(0.0) * PER_DAY as f64;
                        (f.is_finite() && f.abs() < 1e30).then(|| f.round() as i128)
                    }
                }
                .ok_or_else(|| overflow(result.name()))?;
                if *result == SqlType::SmallDateTime {
                    let minute = 18_000;
                    let rem = days.rem_euclid(minute);
                    // 29.999 seconds round up: 8999.7 ticks, i.e. from tick 9000.
                    return Ok(days - rem + if rem >= 9_000 { minute } else { 0 });
                }
                return Ok(days);
            }
            _ => convert::convert(v, t, result, None)?,
        };
        Ok(match v {
            Value::DateTime { days, ticks } => i128::from(days) * PER_DAY + i128::from(ticks),
            Value::SmallDateTime { days, minutes } => i128::from(days) * PER_DAY + i128::from(minutes) * 18_000,
            _ => 0,
        })
    };
    let (a, b) = (ticks(l, lt)?, ticks(r, rt)?);
    let total = match op {
        BinaryOp::Add => a + b,
        BinaryOp::Sub => a - b,
        _ => return Err(invalid_operand(result.name(), op_name(op))),
    };
    let range =
        || SqlError::new(517, 16, 1, format!("Adding a value to a '{}' column caused an overflow.", result.name()));
    let days = i64::try_from(total.div_euclid(PER_DAY)).map_err(|_| range())?;
    let units = total.rem_euclid(PER_DAY) as u64 * UNITS_PER_DT_TICK;
    util::build_temporal(days.saturating_add(types::calendar::DAYS_TO_1900), units, result, 0).map_err(|_| range())
}

/// Unary minus / plus / ~ on a value of type `ty` (result type = `ty`, or what
/// [`unary_type`] gives).
pub fn unary(op: UnaryOp, v: &Value, ty: &SqlType) -> Result<Value, SqlError> {
    if v.is_null() {
        return Ok(Value::Null);
    }
    let vt = util::value_type(v);
    match op {
        UnaryOp::Plus => Ok(v.clone()),
        UnaryOp::Not => Ok(match v {
            Value::Bit(b) => Value::Bit(!b),
            _ => Value::Null,
        }),
        UnaryOp::Minus => {
            let target = if util::fits_family(v, ty) || !matches!(k(ty), K::Int) { vt } else { *ty };
            match *v {
                Value::TinyInt(_) | Value::SmallInt(_) | Value::Int(_) | Value::BigInt(_) => {
                    let x = int_of(v).unwrap_or(0);
                    let t = if util::fits_family(v, ty) || !matches!(k(ty), K::Int) { target } else { *ty };
                    let t = if t == SqlType::TinyInt { SqlType::SmallInt } else { t };
                    int_value(-x, &t)
                }
                Value::Decimal { value, precision, scale } => Ok(Value::Decimal { value: -value, precision, scale }),
                Value::Money(m) => m.checked_neg().map(Value::Money).ok_or_else(|| overflow("money")),
                Value::Float(f) => Ok(Value::Float(-f)),
                Value::Real(f) => Ok(Value::Real(-f)),
                _ => Err(invalid_operand(if matches!(v, Value::String(_)) { ty.name() } else { vt.name() }, "minus")),
            }
        }
        UnaryOp::BitNot => Ok(match *v {
            Value::Bit(b) => Value::Bit(!b),
            Value::TinyInt(x) => Value::TinyInt(!x),
            Value::SmallInt(x) => Value::SmallInt(!x),
            Value::Int(x) => Value::Int(!x),
            Value::BigInt(x) => Value::BigInt(!x),
            _ => return Err(invalid_operand(vt.name(), "'~'")),
        }),
    }
}

/// The type both operands of a comparison are converted to (the one of higher
/// precedence); Msg 402 or 206 when they cannot be compared (e.g. int and date).
pub fn comparison_type(l: &SqlType, r: &SqlType) -> Result<SqlType, SqlError> {
    comparison_type_for(BinaryOp::Eq, l, r)
}

/// [`comparison_type`] naming the operator in Msg 402 ("less than", ...).
pub fn comparison_type_for(op: BinaryOp, l: &SqlType, r: &SqlType) -> Result<SqlType, SqlError> {
    let (kl, kr) = (k(l), k(r));
    if kl == K::Lob || kr == K::Lob {
        return Err(lob_operand_error(op, l, r));
    }
    if kl == K::Xml && kr == K::Xml {
        return Err(SqlError::new(
            305,
            16,
            1,
            "The XML data type cannot be compared or sorted, except when using the IS NULL operator.",
        ));
    }
    if kl == K::Xml || kr == K::Xml {
        return Err(incompatible(l.name(), r.name(), op_name(op)));
    }
    // sql_variant has the highest precedence: the other side becomes a sql_variant of
    // its own type, and the sql_variant rules order the two.
    if kl == K::Variant || kr == K::Variant {
        return Ok(SqlType::Variant);
    }
    // Strings and binaries convert to hierarchyid; the encodings compare byte by byte.
    if kl == K::Hid || kr == K::Hid {
        let other = if kl == K::Hid { kr } else { kl };
        return if matches!(other, K::Hid | K::Str | K::Bin) {
            Ok(SqlType::HierarchyId)
        } else {
            Err(clash(l.name(), r.name()))
        };
    }
    let temporal = |k: K| matches!(k, K::Date | K::Time | K::Legacy | K::Modern);
    if (kl == K::Time) != (kr == K::Time) && temporal(kl) && temporal(kr) {
        return Err(incompatible(l.name(), r.name(), op_name(op)));
    }
    match (kl, kr) {
        (K::Str, K::Str) => {
            let unicode = l.is_unicode() || r.is_unicode();
            let len = match (bound_len(l), bound_len(r)) {
                (Some(a), Some(b)) => Length::Bounded(a.max(b).min(if unicode { 4000 } else { 8000 }) as u16),
                _ => Length::Max,
            };
            return Ok(if unicode { SqlType::NVarChar { len } } else { SqlType::VarChar { len } });
        }
        (K::Bin, K::Bin) => {
            let len = match (bound_len(l), bound_len(r)) {
                (Some(a), Some(b)) => Length::Bounded(a.max(b) as u16),
                _ => Length::Max,
            };
            return Ok(SqlType::VarBinary { len });
        }
        _ => {}
    }
    let exact = |k: K| matches!(k, K::Bit | K::Int | K::Dec | K::Money);
    if (kl == K::Dec || kr == K::Dec) && exact(kl) && exact(kr) {
        let (Some(a), Some(b)) = (util::decimal_params_of(l), util::decimal_params_of(r)) else {
            return Err(clash(l.name(), r.name()));
        };
        let numeric = matches!(l, SqlType::Numeric { .. }) || matches!(r, SqlType::Numeric { .. });
        return Ok(decimal_type(numeric, decimal_union(a, b)));
    }
    let (hi, lo) = if r.has_higher_precedence_than(l) { (r, l) } else { (l, r) };
    if !convert::implicit_allowed(lo, hi) {
        let modern = |k: K| matches!(k, K::Date | K::Time | K::Modern);
        // SQL Server names the date/time side first whichever side it is written on.
        return Err(if kl == K::Bin || kr == K::Bin {
            convert::implicit_error(lo, hi)
        } else if modern(kl) && !temporal(kr) {
            clash(l.name(), r.name())
        } else if modern(kr) && !temporal(kl) {
            clash(r.name(), l.name())
        } else if convert::explicit_allowed(lo, hi) {
            convert::implicit_error(lo, hi)
        } else {
            clash(l.name(), r.name())
        });
    }
    // Same family: the wider parameters.
    Ok(match (*hi, *lo) {
        (SqlType::Time { scale: a }, SqlType::Time { scale: b }) => SqlType::Time { scale: a.max(b) },
        (SqlType::DateTime2 { scale: a }, SqlType::DateTime2 { scale: b }) => SqlType::DateTime2 { scale: a.max(b) },
        (SqlType::DateTimeOffset { scale: a }, SqlType::DateTimeOffset { scale: b }) => {
            SqlType::DateTimeOffset { scale: a.max(b) }
        }
        (SqlType::DateTime2 { scale }, SqlType::Time { scale: b }) => SqlType::DateTime2 { scale: scale.max(b) },
        (SqlType::DateTimeOffset { scale }, SqlType::Time { scale: b }) => {
            SqlType::DateTimeOffset { scale: scale.max(b) }
        }
        (h, _) => h,
    })
}

/// Compares two non-NULL values already converted to `ty` (strings under
/// SQL_Latin1_General_CP1_CI_AS, trailing spaces ignored; numbers exactly, decimals of
/// different scales and money included). None if either is NULL.
pub fn compare(l: &Value, r: &Value, ty: &SqlType) -> Option<Ordering> {
    compare_in(l, r, ty, None)
}

/// [`compare`] with strings under `collation` (None: the default).
pub fn compare_in(l: &Value, r: &Value, ty: &SqlType, collation: Option<&types::Collation>) -> Option<Ordering> {
    match (l, r, collation) {
        (Value::String(a), Value::String(b), Some(c)) => Some(c.compare(a, b, ty.is_unicode())),
        (Value::String(a), Value::String(b), None) => Some(types::compare_strings(a, b)),
        _ => types::compare(l, r),
    }
}

// ---- LIKE --------------------------------------------------------------------------

#[derive(Debug, Clone)]
enum Tok {
    Lit(char),
    One,
    Any,
    Set { negated: bool, items: Vec<(char, char)> },
}

/// Case-insensitive, accent-sensitive character equality (the CI_AS collation).
fn char_eq(a: char, b: char) -> bool {
    a == b || a.to_lowercase().eq(b.to_lowercase())
}

fn char_cmp(a: char, b: char) -> Ordering {
    let mut x = [0u8; 4];
    let mut y = [0u8; 4];
    types::compare_strings(a.encode_utf8(&mut x), b.encode_utf8(&mut y))
}

fn compile_like(pattern: &str, escape: Option<char>) -> Result<Vec<Tok>, SqlError> {
    let chars: Vec<char> = pattern.chars().collect();
    let mut toks = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if Some(c) == escape {
            let Some(&next) = chars.get(i + 1) else {
                return Err(SqlError::new(
                    506,
                    16,
                    1,
                    format!("The invalid escape character \"{c}\" was specified in a LIKE predicate."),
                ));
            };
            toks.push(Tok::Lit(next));
            i += 2;
            continue;
        }
        match c {
            '%' => {
                if !matches!(toks.last(), Some(Tok::Any)) {
                    toks.push(Tok::Any);
                }
                i += 1;
            }
            '_' => {
                toks.push(Tok::One);
                i += 1;
            }
            '[' => {
                // The set ends at the first ']' after at least one character.
                let close = (i + 2..chars.len()).find(|&j| chars[j] == ']');
                let Some(close) = close else {
                    toks.push(Tok::Lit('['));
                    i += 1;
                    continue;
                };
                let mut body = &chars[i + 1..close];
                let negated = body.first() == Some(&'^') && body.len() > 1;
                if negated {
                    body = &body[1..];
                }
                let mut items = Vec::new();
                let mut j = 0;
                while j < body.len() {
                    if j + 2 < body.len() && body[j + 1] == '-' {
                        items.push((body[j], body[j + 2]));
                        j += 3;
                    } else {
                        items.push((body[j], body[j]));
                        j += 1;
                    }
                }
                toks.push(Tok::Set { negated, items });
                i = close + 1;
            }
            _ => {
                toks.push(Tok::Lit(c));
                i += 1;
            }
        }
    }
    Ok(toks)
}

/// The collation LIKE matches characters under: None for the default.
type LikeCollation<'a> = Option<(&'a types::Collation, bool)>;

fn char_eq_in(a: char, b: char, coll: LikeCollation<'_>) -> bool {
    match coll {
        None => char_eq(a, b),
        Some(_) => char_cmp_in(a, b, coll) == Ordering::Equal,
    }
}

fn char_cmp_in(a: char, b: char, coll: LikeCollation<'_>) -> Ordering {
    match coll {
        None => char_cmp(a, b),
        Some((c, unicode)) => {
            let mut x = [0u8; 4];
            let mut y = [0u8; 4];
            c.compare(a.encode_utf8(&mut x), b.encode_utf8(&mut y), unicode)
        }
    }
}

fn tok_matches(t: &Tok, c: char, coll: LikeCollation<'_>) -> bool {
    match t {
        Tok::Lit(l) => char_eq_in(*l, c, coll),
        Tok::One => true,
        Tok::Any => false,
        Tok::Set { negated, items } => {
            let hit = items.iter().any(|&(lo, hi)| {
                if lo == hi {
                    char_eq_in(lo, c, coll)
                } else {
                    char_cmp_in(lo, c, coll) != Ordering::Greater && char_cmp_in(c, hi, coll) != Ordering::Greater
                }
            });
            hit != *negated
        }
    }
}

/// The states reachable without consuming a character.
fn close_any(toks: &[Tok], states: &mut [bool]) {
    for j in 0..toks.len() {
        if states[j] && matches!(toks[j], Tok::Any) {
            states[j + 1] = true;
        }
    }
}

/// `s LIKE pattern [ESCAPE e]` with %, _, [a-z], [^a] under the CI_AS collation.
/// Msg 506 for an invalid escape sequence.
pub fn like(s: &str, pattern: &str, escape: Option<char>) -> Result<bool, SqlError> {
    like_in(s, pattern, escape, None, true)
}

/// [`like`] under `collation` (None: the default); `unicode` says the string is
/// nchar/nvarchar (binary collations compare code units or code page bytes).
pub fn like_in(
    s: &str,
    pattern: &str,
    escape: Option<char>,
    collation: Option<&types::Collation>,
    unicode: bool,
) -> Result<bool, SqlError> {
    let coll = collation.map(|c| (c, unicode));
    let toks = compile_like(pattern, escape)?;
    let chars: Vec<char> = s.chars().collect();
    // Trailing spaces of the string are not significant: a match of any prefix that
    // leaves only spaces counts.
    let significant = chars.iter().rposition(|&c| c != ' ').map_or(0, |i| i + 1);
    let m = toks.len();
    let mut cur = vec![false; m + 1];
    cur[0] = true;
    close_any(&toks, &mut cur);
    if significant == 0 && cur[m] {
        return Ok(true);
    }
    for (i, &c) in chars.iter().enumerate() {
        let mut next = vec![false; m + 1];
        for j in 0..m {
            if !cur[j] {
                continue;
            }
            match &toks[j] {
                Tok::Any => next[j] = true,
                t if tok_matches(t, c, coll) => next[j + 1] = true,
                _ => {}
            }
        }
        close_any(&toks, &mut next);
        if !next.iter().any(|&b| b) {
            return Ok(false);
        }
        cur = next;
        if i + 1 >= significant && cur[m] {
            return Ok(true);
        }
    }
    Ok(false)
}

#[cfg(test)]
mod tests {
    use super::*;
    use types::calendar::{days_from_civil, DAYS_TO_1900};

    fn vc(n: i64) -> SqlType {
        SqlType::varchar(n).unwrap()
    }

    fn nvc(n: i64) -> SqlType {
        SqlType::nvarchar(n).unwrap()
    }

    fn dec(p: u8, s: u8) -> SqlType {
        SqlType::Decimal { precision: p, scale: s }
    }

    fn d(v: i128, p: u8, s: u8) -> Value {
        Value::Decimal { value: v, precision: p, scale: s }
    }

    fn ty(op: BinaryOp, l: SqlType, r: SqlType) -> Result<SqlType, SqlError> {
        binary_type(op, &l, &r)
    }

    fn eval(op: BinaryOp, l: Value, lt: SqlType, r: Value, rt: SqlType) -> Result<Value, SqlError> {
        let t = binary_type(op, &lt, &rt)?;
        binary(op, &l, &lt, &r, &rt, &t)
    }

    fn num(r: Result<impl std::fmt::Debug, SqlError>) -> (i32, String) {
        match r {
            Ok(v) => panic!("expected an error, got {v:?}"),
            Err(e) => (e.number, e.message),
        }
    }

    use BinaryOp::*;

    #[test]
    fn integer_arithmetic() {
        assert_eq!(eval(Add, Value::Int(2), SqlType::Int, Value::Int(3), SqlType::Int).unwrap(), Value::Int(5));
        assert_eq!(eval(Div, Value::Int(7), SqlType::Int, Value::Int(2), SqlType::Int).unwrap(), Value::Int(3));
        assert_eq!(eval(Div, Value::Int(-7), SqlType::Int, Value::Int(2), SqlType::Int).unwrap(), Value::Int(-3));
        assert_eq!(eval(Mod, Value::Int(-7), SqlType::Int, Value::Int(2), SqlType::Int).unwrap(), Value::Int(-1));
        assert_eq!(
            eval(Add, Value::Int(1), SqlType::Int, Value::BigInt(2), SqlType::BigInt).unwrap(),
            Value::BigInt(3)
        );
        let (n, m) = num(eval(Add, Value::Int(i32::MAX), SqlType::Int, Value::Int(1), SqlType::Int));
        assert_eq!((n, m.as_str()), (8115, "Arithmetic overflow error converting expression to data type int."));
        let (n, m) = num(eval(Add, Value::TinyInt(255), SqlType::TinyInt, Value::TinyInt(1), SqlType::TinyInt));
        assert_eq!((n, m.as_str()), (8115, "Arithmetic overflow error converting expression to data type tinyint."));
        assert_eq!(num(eval(Div, Value::Int(i32::MIN), SqlType::Int, Value::Int(-1), SqlType::Int)).0, 8115);
        assert_eq!(num(eval(Mod, Value::Int(i32::MIN), SqlType::Int, Value::Int(-1), SqlType::Int)).0, 8115);
        let (n, m) = num(eval(Div, Value::Int(1), SqlType::Int, Value::Int(0), SqlType::Int));
        assert_eq!((n, m.as_str()), (8134, "Divide by zero error encountered."));
        assert_eq!(num(eval(Mod, Value::Int(1), SqlType::Int, Value::Int(0), SqlType::Int)).0, 8134);
        assert_eq!(
            eval(Mul, Value::BigInt(i64::MAX), SqlType::BigInt, Value::BigInt(2), SqlType::BigInt).unwrap_err().number,
            8115
        );
        assert_eq!(
            binary(Add, &Value::Null, &SqlType::Int, &Value::Int(1), &SqlType::Int, &SqlType::Int).unwrap(),
            Value::Null
        );
    }

    #[test]
    fn strings_and_numbers() {
        assert_eq!(ty(Add, vc(10), SqlType::Int).unwrap(), SqlType::Int);
        assert_eq!(eval(Add, Value::String("1".into()), vc(1), Value::Int(1), SqlType::Int).unwrap(), Value::Int(2));
        let (n, m) = num(eval(Add, Value::String("a".into()), vc(1), Value::Int(1), SqlType::Int));
        assert_eq!((n, m.as_str()), (245, "Conversion failed when converting the varchar value 'a' to data type int."));
        assert_eq!(ty(Add, vc(10), vc(20)).unwrap(), vc(30));
        assert_eq!(ty(Add, vc(5000), vc(5000)).unwrap(), vc(8000));
        assert_eq!(ty(Add, vc(10), nvc(20)).unwrap(), nvc(30));
        assert_eq!(ty(Add, nvc(3000), nvc(3000)).unwrap(), nvc(4000));
        assert_eq!(
            ty(Add, vc(10), SqlType::VarChar { len: Length::Max }).unwrap(),
            SqlType::VarChar { len: Length::Max }
        );
        assert_eq!(ty(Add, SqlType::char(2).unwrap(), SqlType::char(3).unwrap()).unwrap(), SqlType::char(5).unwrap());
        let v = eval(Add, Value::String("ab".into()), vc(2), Value::String("cd".into()), vc(2)).unwrap();
        assert_eq!(v, Value::String("abcd".into()));
        let (n, m) = num(ty(Sub, vc(2), vc(2)));
        assert_eq!((n, m.as_str()), (8117, "Operand data type varchar is invalid for subtract operator."));
        let big = "x".repeat(5000);
        let v = eval(Add, Value::String(big.clone()), vc(5000), Value::String(big), vc(5000)).unwrap();
        assert_eq!(v, Value::String("x".repeat(8000)));
    }

    #[test]
    fn decimal_types_and_values() {
        // Documented examples: + - * / % rules and the reduction to 38.
        assert_eq!(decimal_result(Add, (5, 2), (10, 4)), (11, 4));
        assert_eq!(decimal_result(Mul, (5, 2), (10, 4)), (16, 6));
        assert_eq!(decimal_result(Div, (3, 1), (1, 0)), (8, 6));
        assert_eq!(decimal_result(Div, (2, 1), (1, 0)), (7, 6));
        assert_eq!(decimal_result(Div, (5, 2), (10, 0)), (16, 13));
        assert_eq!(decimal_result(Mod, (5, 2), (10, 4)), (7, 4));
        assert_eq!(decimal_result(Mul, (20, 5), (23, 5)), (38, 6));
        assert_eq!(decimal_result(Mul, (25, 8), (25, 8)), (38, 6));
        assert_eq!(decimal_result(Div, (30, 3), (10, 4)), (38, 7));
        assert_eq!(decimal_result(Mul, (38, 10), (38, 10)), (38, 6));
        assert_eq!(decimal_result(Add, (38, 20), (38, 20)), (38, 20));
        assert_eq!(decimal_result(Add, (38, 10), (38, 30)), (38, 10));
        assert_eq!(decimal_result(Add, (30, 20), (38, 30)), (38, 28));
        assert_eq!(decimal_result(Add, (38, 38), (38, 0)), (38, 0));
        assert_eq!(ty(Add, SqlType::Int, dec(5, 2)).unwrap(), dec(13, 2));
        assert_eq!(ty(Mul, SqlType::Money, dec(5, 2)).unwrap(), dec(25, 6));
        assert_eq!(
            ty(Add, SqlType::Numeric { precision: 2, scale: 1 }, SqlType::Int).unwrap(),
            SqlType::Numeric { precision: 12, scale: 1 }
        );
        // Values: division truncates, the others round.
        let v = eval(Div, d(400, 5, 2), dec(5, 2), Value::Int(7), SqlType::Int).unwrap();
        assert_eq!(v.to_string(), "0.5714285714285");
        let v = eval(Div, d(10, 2, 1), dec(2, 1), d(3, 1, 0), dec(1, 0)).unwrap();
        assert_eq!(v, d(333_333, 7, 6));
        let v = eval(Div, d(20, 2, 1), dec(2, 1), d(3, 1, 0), dec(1, 0)).unwrap();
        assert_eq!(v, d(666_666, 7, 6));
        let v = eval(Add, d(125, 3, 2), dec(3, 2), d(1, 2, 1), dec(2, 1)).unwrap();
        assert_eq!(v.to_string(), "1.35");
        let v = eval(Mul, d(15, 2, 1), dec(2, 1), d(15, 2, 1), dec(2, 1)).unwrap();
        assert_eq!(v.to_string(), "2.25");
        let v = eval(Mod, d(75, 2, 1), dec(2, 1), Value::Int(2), SqlType::Int).unwrap();
        assert_eq!(v.to_string(), "1.5");
        // Scale reduced: the product rounds half away from zero.
        let a = d(1, 38, 10);
        let v = eval(Mul, a.clone(), dec(38, 10), a, dec(38, 10)).unwrap();
        assert_eq!(v, d(0, 38, 6));
        let big = d(decimal_max(), 38, 0);
        let (n, m) = num(eval(Mul, big, dec(38, 0), d(10, 2, 0), dec(2, 0)));
        assert_eq!((n, m.as_str()), (8115, "Arithmetic overflow error converting expression to data type numeric."));
        assert_eq!(num(eval(Div, d(1, 1, 0), dec(1, 0), d(0, 1, 0), dec(1, 0))).0, 8134);
        // 256-bit intermediates keep 38-digit operands exact.
        let two = 2 * types::decimal::pow10(28);
        let v = eval(Div, d(two, 38, 28), dec(38, 28), Value::Int(3), SqlType::Int).unwrap();
        assert_eq!(v.to_string(), format!("0.{}", "6".repeat(28)));
    }

    fn decimal_max() -> i128 {
        types::decimal::MAX_DECIMAL_UNSCALED
    }

    #[test]
    fn money_and_float() {
        assert_eq!(ty(Add, SqlType::Money, SqlType::Int).unwrap(), SqlType::Money);
        let v = eval(Div, Value::Money(10_000), SqlType::Money, Value::Int(7), SqlType::Int).unwrap();
        assert_eq!(v, Value::Money(1_428));
        let v = eval(Div, Value::Money(20_000), SqlType::Money, Value::Int(3), SqlType::Int).unwrap();
        assert_eq!(v, Value::Money(6_666));
        let v = eval(Mul, Value::Money(10_001), SqlType::Money, Value::Money(5_555), SqlType::Money).unwrap();
        assert_eq!(v, Value::Money(5_556));
        assert_eq!(num(eval(Add, Value::Money(i64::MAX), SqlType::Money, Value::Money(1), SqlType::Money)).0, 8115);
        assert_eq!(ty(Add, SqlType::Real, SqlType::Int).unwrap(), SqlType::Real);
        assert_eq!(ty(Add, SqlType::Real, dec(10, 2)).unwrap(), SqlType::Real);
        assert_eq!(ty(Add, SqlType::Real, SqlType::Float).unwrap(), SqlType::Float);
        let v = eval(Div, Value::Float(1.0), SqlType::Float, Value::Int(4), SqlType::Int).unwrap();
        assert_eq!(v, Value::Float(0.25));
        assert_eq!(num(eval(Div, Value::Float(1.0), SqlType::Float, Value::Float(0.0), SqlType::Float)).0, 8134);
        assert_eq!(num(eval(Mul, Value::Float(1e308), SqlType::Float, Value::Float(10.0), SqlType::Float)).0, 8115);
        let (n, m) = num(ty(Mod, SqlType::Float, SqlType::Int));
        assert_eq!((n, m.as_str()), (402, "The data types float and int are incompatible in the modulo operator."));
        assert_eq!(num(ty(Mod, SqlType::Real, SqlType::Float)).0, 8117);
        assert_eq!(num(ty(Add, SqlType::Float, SqlType::varbinary(4).unwrap())).0, 206);
    }

    #[test]
    fn bit_binary_guid_xml() {
        let (n, m) = num(ty(Add, SqlType::Bit, SqlType::Bit));
        assert_eq!((n, m.as_str()), (402, "The data types bit and bit are incompatible in the add operator."));
        let (n, m) = num(ty(Mul, SqlType::Bit, SqlType::Bit));
        assert_eq!((n, m.as_str()), (8117, "Operand data type bit is invalid for multiply operator."));
        assert_eq!(ty(BitAnd, SqlType::Bit, SqlType::Bit).unwrap(), SqlType::Bit);
        assert_eq!(ty(Add, SqlType::Bit, SqlType::Int).unwrap(), SqlType::Int);
        let vb = SqlType::varbinary(1).unwrap();
        assert_eq!(eval(Add, Value::Int(1), SqlType::Int, Value::Binary(vec![1]), vb).unwrap(), Value::Int(2));
        assert_eq!(eval(BitAnd, Value::Int(255), SqlType::Int, Value::Binary(vec![1]), vb).unwrap(), Value::Int(1));
        assert_eq!(
            eval(Add, Value::TinyInt(5), SqlType::TinyInt, Value::Binary(vec![1]), vb).unwrap(),
            Value::TinyInt(6)
        );
        let v = eval(Add, Value::Binary(vec![1]), vb, Value::Binary(vec![1]), vb).unwrap();
        assert_eq!(v, Value::Binary(vec![1, 1]));
        let (n, m) = num(ty(BitAnd, vb, vb));
        assert_eq!(
            (n, m.as_str()),
            (402, "The data types varbinary and varbinary are incompatible in the '&' operator.")
        );
        assert_eq!(num(ty(Sub, vb, vb)).0, 402);
        assert_eq!(num(ty(Div, vb, vb)).0, 8117);
        let (n, m) = num(ty(BitAnd, SqlType::Numeric { precision: 2, scale: 1 }, SqlType::Int));
        assert_eq!((n, m.as_str()), (402, "The data types numeric and int are incompatible in the '&' operator."));
        assert_eq!(eval(BitXor, Value::Int(6), SqlType::Int, Value::Int(3), SqlType::Int).unwrap(), Value::Int(5));
        assert_eq!(
            eval(BitOr, Value::SmallInt(4), SqlType::SmallInt, Value::TinyInt(1), SqlType::TinyInt).unwrap(),
            Value::SmallInt(5)
        );
        assert_eq!(num(ty(Add, SqlType::UniqueIdentifier, SqlType::UniqueIdentifier)).0, 8117);
        assert_eq!(num(ty(Add, SqlType::UniqueIdentifier, SqlType::Int)).0, 206);
        let (n, m) = num(ty(Add, SqlType::Xml, SqlType::Int));
        assert_eq!((n, m.as_str()), (402, "The data types xml and int are incompatible in the add operator."));
    }

    fn dt(y: i32, m: u32, dd: u32, h: u32) -> Value {
        Value::datetime_from_parts(y, m, dd, h * 3_600_000).unwrap()
    }

    #[test]
    fn date_arithmetic() {
        let a = dt(2024, 1, 1, 0);
        assert_eq!(ty(Add, SqlType::DateTime, SqlType::Int).unwrap(), SqlType::DateTime);
        assert_eq!(eval(Add, a.clone(), SqlType::DateTime, Value::Int(1), SqlType::Int).unwrap(), dt(2024, 1, 2, 0));
        assert_eq!(eval(Add, Value::Int(1), SqlType::Int, a.clone(), SqlType::DateTime).unwrap(), dt(2024, 1, 2, 0));
        let v = eval(Sub, a.clone(), SqlType::DateTime, Value::Float(1.5), SqlType::Float).unwrap();
        assert_eq!(v, dt(2023, 12, 30, 12));
        let v = eval(Sub, dt(2024, 1, 2, 6), SqlType::DateTime, a.clone(), SqlType::DateTime).unwrap();
        assert_eq!(v, Value::DateTime { days: 1, ticks: 6 * 3600 * 300 });
        let v = eval(Add, a.clone(), SqlType::DateTime, Value::String("1900-01-02".into()), vc(10)).unwrap();
        assert_eq!(v, dt(2024, 1, 2, 0));
        let s = Value::SmallDateTime { days: 45_290, minutes: 0 };
        let v = eval(Sub, s, SqlType::SmallDateTime, Value::Int(1), SqlType::Int).unwrap();
        assert_eq!(v, Value::SmallDateTime { days: 45_289, minutes: 0 });
        let s = Value::SmallDateTime { days: 0, minutes: 0 };
        let v = eval(Add, s.clone(), SqlType::SmallDateTime, d(3, 4, 4), dec(4, 4)).unwrap();
        assert_eq!(v, s);
        let v = eval(Add, s, SqlType::SmallDateTime, d(4, 4, 4), dec(4, 4)).unwrap();
        assert_eq!(v, Value::SmallDateTime { days: 0, minutes: 1 });
        let max = Value::DateTime { days: types::calendar::DATETIME_MAX_DAYS, ticks: 0 };
        let (n, m) = num(eval(Add, max, SqlType::DateTime, Value::Int(1), SqlType::Int));
        assert_eq!((n, m.as_str()), (517, "Adding a value to a 'datetime' column caused an overflow."));
        assert_eq!(num(ty(Mul, SqlType::DateTime, SqlType::Int)).0, 257);
        let (n, m) = num(ty(Add, SqlType::Date, SqlType::Int));
        assert_eq!((n, m.as_str()), (206, "Operand type clash: date is incompatible with int"));
        assert_eq!(num(ty(Add, SqlType::Int, SqlType::Date)).1, "Operand type clash: date is incompatible with int");
        let (n, m) = num(ty(Add, SqlType::Date, SqlType::Date));
        assert_eq!((n, m.as_str()), (8117, "Operand data type date is invalid for add operator."));
        assert_eq!(num(ty(Add, SqlType::DateTime, SqlType::Date)).0, 402);
        assert_eq!(num(ty(Add, SqlType::Time { scale: 7 }, SqlType::Int)).0, 206);
        assert_eq!(num(ty(Add, SqlType::Date, vc(10))).0, 8117);
        let _ = (days_from_civil(2024, 1, 1), DAYS_TO_1900);
    }

    #[test]
    fn unary_operators() {
        assert_eq!(unary(UnaryOp::Minus, &Value::Int(5), &SqlType::Int).unwrap(), Value::Int(-5));
        assert_eq!(num(unary(UnaryOp::Minus, &Value::Int(i32::MIN), &SqlType::Int)).0, 8115);
        assert_eq!(unary_type(UnaryOp::Minus, &SqlType::TinyInt).unwrap(), SqlType::SmallInt);
        assert_eq!(unary(UnaryOp::Minus, &Value::TinyInt(5), &SqlType::SmallInt).unwrap(), Value::SmallInt(-5));
        assert_eq!(unary(UnaryOp::Minus, &Value::TinyInt(5), &SqlType::TinyInt).unwrap(), Value::SmallInt(-5));
        assert_eq!(unary(UnaryOp::Minus, &d(15, 2, 1), &dec(2, 1)).unwrap(), d(-15, 2, 1));
        assert_eq!(unary(UnaryOp::Minus, &Value::Money(5), &SqlType::Money).unwrap(), Value::Money(-5));
        let z = unary(UnaryOp::Minus, &Value::Float(0.0), &SqlType::Float).unwrap();
        assert!(matches!(z, Value::Float(f) if f == 0.0 && f.is_sign_negative()));
        let (n, m) = num(unary_type(UnaryOp::Minus, &SqlType::Bit));
        assert_eq!((n, m.as_str()), (8117, "Operand data type bit is invalid for minus operator."));
        assert_eq!(num(unary(UnaryOp::Minus, &Value::String("1".into()), &vc(1))).0, 8117);
        assert_eq!(unary(UnaryOp::BitNot, &Value::Int(1), &SqlType::Int).unwrap(), Value::Int(-2));
        assert_eq!(unary(UnaryOp::BitNot, &Value::TinyInt(0), &SqlType::TinyInt).unwrap(), Value::TinyInt(255));
        assert_eq!(unary(UnaryOp::BitNot, &Value::Bit(true), &SqlType::Bit).unwrap(), Value::Bit(false));
        assert_eq!(num(unary_type(UnaryOp::BitNot, &dec(2, 1))).0, 8117);
        assert_eq!(unary(UnaryOp::Plus, &Value::String("a".into()), &vc(1)).unwrap(), Value::String("a".into()));
        assert_eq!(unary(UnaryOp::Minus, &Value::Null, &SqlType::Int).unwrap(), Value::Null);
    }

    #[test]
    fn comparisons() {
        assert_eq!(comparison_type(&SqlType::Int, &vc(5)).unwrap(), SqlType::Int);
        assert_eq!(comparison_type(&vc(5), &nvc(10)).unwrap(), nvc(10));
        assert_eq!(comparison_type(&dec(5, 2), &dec(10, 4)).unwrap(), dec(10, 4));
        assert_eq!(comparison_type(&dec(5, 0), &dec(5, 5)).unwrap(), dec(10, 5));
        assert_eq!(comparison_type(&SqlType::Int, &dec(5, 2)).unwrap(), dec(12, 2));
        assert_eq!(comparison_type(&SqlType::Date, &SqlType::DateTime).unwrap(), SqlType::DateTime);
        let (n, m) = num(comparison_type(&SqlType::Date, &SqlType::Int));
        assert_eq!((n, m.as_str()), (206, "Operand type clash: date is incompatible with int"));
        assert_eq!(
            num(comparison_type(&SqlType::Int, &SqlType::Date)).1,
            "Operand type clash: date is incompatible with int"
        );
        let (n, m) = num(comparison_type(&SqlType::Xml, &vc(5)));
        assert_eq!((n, m.as_str()), (402, "The data types xml and varchar are incompatible in the equal to operator."));
        assert_eq!(num(comparison_type(&SqlType::Xml, &SqlType::Xml)).0, 305);
        let (n, m) = num(comparison_type_for(Lt, &SqlType::Time { scale: 7 }, &SqlType::DateTime));
        assert_eq!(
            (n, m.as_str()),
            (402, "The data types time and datetime are incompatible in the less than operator.")
        );
        assert_eq!(num(comparison_type(&SqlType::UniqueIdentifier, &SqlType::Int)).0, 206);
        assert_eq!(num(comparison_type(&SqlType::Date, &SqlType::varbinary(3).unwrap())).0, 257);
        // Values.
        let c = |l: Value, lt: SqlType, r: Value, rt: SqlType| eval(Eq, l, lt, r, rt).unwrap();
        assert_eq!(c(Value::String("abc".into()), vc(3), Value::String("ABC  ".into()), vc(5)), Value::Bit(true));
        assert_eq!(c(d(150, 5, 2), dec(5, 2), d(15, 3, 1), dec(3, 1)), Value::Bit(true));
        assert_eq!(c(Value::Money(15_000), SqlType::Money, d(15, 3, 1), dec(3, 1)), Value::Bit(true));
        assert_eq!(
            c(Value::Binary(vec![1]), SqlType::varbinary(1).unwrap(), Value::Int(1), SqlType::Int),
            Value::Bit(true)
        );
        assert_eq!(eval(Lt, Value::Int(1), SqlType::Int, Value::String("2".into()), vc(1)).unwrap(), Value::Bit(true));
        assert_eq!(compare(&Value::String("a".into()), &Value::String("B".into()), &vc(1)), Some(Ordering::Less));
        assert_eq!(compare(&Value::Null, &Value::Int(1), &SqlType::Int), None);
    }

    #[test]
    fn no_panics_across_the_matrix() {
        let samples = crate::scalar::convert::tests::samples();
        let ops = [Add, Sub, Mul, Div, Mod, BitAnd, BitOr, BitXor, Eq, Lt];
        for (a, at) in &samples {
            for (b, bt) in &samples {
                for op in ops {
                    if let Ok(t) = binary_type(op, at, bt) {
                        let _ = binary(op, a, at, b, bt, &t);
                    }
                }
                if let Ok(t) = comparison_type(at, bt) {
                    let _ = compare(a, b, &t);
                }
            }
            for op in [UnaryOp::Minus, UnaryOp::Plus, UnaryOp::BitNot] {
                let _ = unary(op, a, at);
                let _ = unary_type(op, at);
            }
        }
        for p in ["[", "[]", "[^]", "%[a-", "_%_%", "[z-a]", "\\"] {
            let _ = like("abc", p, Some('\\'));
        }
    }

    #[test]
    fn like_patterns() {
        let l = |s: &str, p: &str| like(s, p, None).unwrap();
        assert!(l("abc", "abc"));
        assert!(l("ABC", "abc"));
        assert!(l("abcdef", "abc%"));
        assert!(l("xabcx", "%abc%"));
        assert!(!l("xabx", "%abc%"));
        assert!(l("abc", "a_c"));
        assert!(!l("abbc", "a_c"));
        assert!(l("bat", "[abc]at"));
        assert!(!l("rat", "[abc]at"));
        assert!(l("dog", "[a-f]og"));
        assert!(l("Dog", "[a-f]og"));
        assert!(!l("hog", "[a-f]og"));
        assert!(l("hog", "[^a-f]og"));
        assert!(!l("dog", "[^a-f]og"));
        assert!(l("abc  ", "abc"));
        assert!(!l("abc", "abc "));
        assert!(l("abc ", "abc "));
        assert!(l("", "%"));
        assert!(l("", ""));
        assert!(!l("a", ""));
        assert!(l("e", "e"));
        assert!(!l("é", "e"));
        assert!(l("50%", "50[%]"));
        assert!(like("50%", "50!%", Some('!')).unwrap());
        assert!(!like("500", "50!%", Some('!')).unwrap());
        assert!(like("a_b", "a!_b", Some('!')).unwrap());
        let (n, _) = num(like("abc", "abc!", Some('!')));
        assert_eq!(n, 506);
        assert!(l("[x", "[x"));
        assert!(!l(&"a".repeat(500), "%a%a%a%a%a%b%"));
    }
}
