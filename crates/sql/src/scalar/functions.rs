//! Built-in scalar functions: a registry by upper-cased name, SQL Server's result type
//! for given argument types ([`return_type`]) and evaluation ([`call`]). String, math,
//! date/time (in [`super::dates`]), FORMAT (in [`super::format`]) and system functions
//! that need no catalog.
//!
//! Rules and decisions:
//! - Argument counts: Msg 174 "The left function requires 2 argument(s)." for a fixed
//!   count, Msg 189 "The concat function requires 2 to 254 arguments." for a range.
//!   Wrong argument types: Msg 8116 "Argument data type xml is invalid for argument 1 of
//!   len function.".
//! - String functions take any argument that converts to a string implicitly (numbers,
//!   dates as CAST shows them); they compare under the CI collation (REPLACE('ABC', 'b',
//!   'x') is 'AxC', CHARINDEX is case-insensitive). LEN ignores trailing spaces and is
//!   bigint for MAX arguments; LEFT/RIGHT/SUBSTRING/UPPER/LOWER/TRIM/REVERSE keep the
//!   argument's length (char becomes varchar); REPLACE, REPLICATE and STUFF give
//!   varchar(8000)/nvarchar(4000) unless an argument is MAX; CONCAT and CONCAT_WS sum
//!   the lengths (capped likewise, MAX when any argument is MAX) and treat NULL as empty.
//!   TRIM with two arguments takes (characters, string), the order of `TRIM(characters
//!   FROM string)`.
//! - Math functions keep the argument's type except that tinyint and smallint widen to
//!   int, smallmoney to money, real and bit to float, strings convert to float;
//!   CEILING/FLOOR of decimal(p, s) give decimal(p, 0); POWER of decimal(p, s) gives
//!   decimal(38, s) (so POWER(2.0, -2) is 0.3); DEGREES/RADIANS of decimal(p, s) give
//!   decimal(38, max(s, 18)). Domain errors are Msg 3623, POWER(0, -1) Msg 8134.
//! - RAND(seed) starts a per-thread sequence that RAND() continues; the values differ
//!   from SQL Server's generator (undocumented). NEWID is a random version-4 GUID;
//!   NEWSEQUENTIALID increases in SQL Server's uniqueidentifier order within the process.
//! - CHECKSUM and BINARY_CHECKSUM are stable 32-bit hashes (FNV-1a folded per argument):
//!   CHECKSUM ignores case and trailing spaces of strings and the scale of decimals, as
//!   the collation and value equality do; BINARY_CHECKSUM hashes the bytes. The values
//!   differ from SQL Server's (undocumented) algorithm.
//! - ISNUMERIC accepts what SQL Server's does: integers, decimals, money with a currency
//!   symbol and commas, floats with e or d exponents, and a lone sign, point or currency
//!   symbol. ISDATE reads the string as datetime.
//! - ISNULL's result has the first argument's type, NULLIF's the first argument's,
//!   CHOOSE/GREATEST/LEAST the highest-precedence argument's.

use std::cell::Cell;
use std::cmp::Ordering;
use std::hash::{BuildHasher, Hasher};
use std::sync::atomic::{AtomicU64, Ordering as AtomicOrdering};
use std::sync::OnceLock;

use types::{codepage, Length, SqlError, SqlType, Value};

use super::convert::{self, float_to_unscaled};
use super::dates::{self, DatePart};
use super::format;
use super::ops;
use super::util::{self, arg_count, arg_range, effective_type, exact_parts, float_domain, invalid_arg, overflow};
use super::FnContext;

pub use super::dates::at_time_zone;

/// A resolved built-in function (by upper-cased name).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Builtin(pub &'static str);

/// Every built-in with its argument count range.
const FUNCTIONS: &[(&str, usize, usize)] = &[
    // strings
    ("LEN", 1, 1),
    ("DATALENGTH", 1, 1),
    ("LEFT", 2, 2),
    ("RIGHT", 2, 2),
    ("SUBSTRING", 3, 3),
    ("UPPER", 1, 1),
    ("LOWER", 1, 1),
    ("LTRIM", 1, 2),
    ("RTRIM", 1, 2),
    ("TRIM", 1, 2),
    ("REPLACE", 3, 3),
    ("REPLICATE", 2, 2),
    ("REVERSE", 1, 1),
    ("CHARINDEX", 2, 3),
    ("PATINDEX", 2, 2),
    ("STUFF", 4, 4),
    ("CONCAT", 2, 254),
    ("CONCAT_WS", 3, 254),
    ("SPACE", 1, 1),
    ("STR", 1, 3),
    ("ASCII", 1, 1),
    ("CHAR", 1, 1),
    ("NCHAR", 1, 1),
    ("UNICODE", 1, 1),
    ("QUOTENAME", 1, 2),
    ("FORMAT", 2, 3),
    ("TRANSLATE", 3, 3),
    ("SOUNDEX", 1, 1),
    ("DIFFERENCE", 2, 2),
    ("STRING_ESCAPE", 2, 2),
    ("FORMATMESSAGE", 1, 254),
    // math
    ("ABS", 1, 1),
    ("CEILING", 1, 1),
    ("FLOOR", 1, 1),
    ("ROUND", 2, 3),
    ("POWER", 2, 2),
    ("SQRT", 1, 1),
    ("SQUARE", 1, 1),
    ("EXP", 1, 1),
    ("LOG", 1, 2),
    ("LOG10", 1, 1),
    ("PI", 0, 0),
    ("SIGN", 1, 1),
    ("SIN", 1, 1),
    ("COS", 1, 1),
    ("TAN", 1, 1),
    ("COT", 1, 1),
    ("ASIN", 1, 1),
    ("ACOS", 1, 1),
    ("ATAN", 1, 1),
    ("ATN2", 2, 2),
    ("DEGREES", 1, 1),
    ("RADIANS", 1, 1),
    ("RAND", 0, 1),
    // dates and times
    ("DATEADD", 3, 3),
    ("DATEDIFF", 3, 3),
    ("DATEDIFF_BIG", 3, 3),
    ("DATEPART", 2, 2),
    ("DATENAME", 2, 2),
    ("DATETRUNC", 2, 2),
    ("DAY", 1, 1),
    ("MONTH", 1, 1),
    ("YEAR", 1, 1),
    ("EOMONTH", 1, 2),
    ("DATEFROMPARTS", 3, 3),
    ("DATETIME2FROMPARTS", 8, 8),
    ("DATETIMEFROMPARTS", 7, 7),
    ("SMALLDATETIMEFROMPARTS", 5, 5),
    ("TIMEFROMPARTS", 5, 5),
    ("DATETIMEOFFSETFROMPARTS", 10, 10),
    ("SYSDATETIME", 0, 0),
    ("SYSUTCDATETIME", 0, 0),
    ("GETDATE", 0, 0),
    ("GETUTCDATE", 0, 0),
    ("CURRENT_TIMESTAMP", 0, 0),
    ("SYSDATETIMEOFFSET", 0, 0),
    ("SWITCHOFFSET", 2, 2),
    ("TODATETIMEOFFSET", 2, 2),
    ("ISDATE", 1, 1),
    ("ISNUMERIC", 1, 1),
    // system
    ("ISNULL", 2, 2),
    ("NULLIF", 2, 2),
    ("CHOOSE", 2, 255),
    ("GREATEST", 1, 254),
    ("LEAST", 1, 254),
    ("NEWID", 0, 0),
    ("NEWSEQUENTIALID", 0, 0),
    ("CHECKSUM", 1, 4096),
    ("BINARY_CHECKSUM", 1, 4096),
    ("SQL_VARIANT_PROPERTY", 2, 2),
    ("TYPE_NAME", 1, 1),
    ("TYPE_ID", 1, 1),
    // JSON (see `json.rs`)
    ("ISJSON", 1, 2),
    ("JSON_VALUE", 2, 2),
    ("JSON_QUERY", 1, 2),
    ("JSON_MODIFY", 3, 3),
    // JSON_MODIFY whose new value is JSON text already (bound so by the binder; the
    // space keeps the name out of reach of SQL text).
    ("JSON_MODIFY JSON", 3, 3),
    // JSON_ARRAY and JSON_OBJECT: the first argument is the parser's hidden NULL clause
    // (see `json::construct`); JSON_OBJECT's others are key, value pairs.
    ("JSON_ARRAY", 1, 255),
    ("JSON_OBJECT", 1, 4097),
];

/// The built-in scalar function called `name` (case-insensitive), if there is one.
/// Functions needing the catalog or the session (DB_ID, OBJECT_ID, @@SPID, ...) are the
/// binder's and are not here.
pub fn lookup(name: &str) -> Option<Builtin> {
    FUNCTIONS
        .iter()
        .find(|(n, _, _)| !n.contains(' ') && n.eq_ignore_ascii_case(name.trim()))
        .map(|(n, _, _)| Builtin(n))
}

fn check_arity(f: Builtin, n: usize) -> Result<(), SqlError> {
    let Some(&(_, lo, hi)) = FUNCTIONS.iter().find(|(name, _, _)| *name == f.0) else {
        return Err(SqlError::new(195, 15, 10, format!("'{}' is not a recognized built-in function name.", f.0)));
    };
    if (lo..=hi).contains(&n) {
        Ok(())
    } else if lo == hi {
        Err(arg_count(f.0, lo))
    } else {
        Err(arg_range(f.0, lo, hi))
    }
}

const NVARCHAR_MAX: SqlType = SqlType::NVarChar { len: Length::Max };
const VARCHAR_MAX: SqlType = SqlType::VarChar { len: Length::Max };

fn varchar(n: u32, unicode: bool) -> SqlType {
    let cap = if unicode { 4000 } else { 8000 };
    let len = Length::Bounded(n.clamp(1, cap) as u16);
    if unicode {
        SqlType::NVarChar { len }
    } else {
        SqlType::VarChar { len }
    }
}

/// The length CAST(x AS varchar) needs for a value of type `t` (None for MAX).
fn text_len(t: &SqlType) -> Option<u32> {
    Some(match *t {
        SqlType::Char { len } | SqlType::NChar { len } | SqlType::Binary { len } => u32::from(len),
        SqlType::VarChar { len } | SqlType::NVarChar { len } | SqlType::VarBinary { len } => match len {
            Length::Bounded(n) => u32::from(n),
            Length::Max => return None,
        },
        SqlType::Xml | SqlType::Text | SqlType::NText | SqlType::Image => return None,
        SqlType::HierarchyId => 4000,
        SqlType::Geometry | SqlType::Geography => return None,
        // A sql_variant converts to its base type's text: at most 8000 characters.
        SqlType::Variant => 8000,
        SqlType::Bit => 1,
        SqlType::TinyInt => 3,
        SqlType::SmallInt => 6,
        SqlType::Int => 12,
        SqlType::BigInt => 20,
        SqlType::Decimal { precision, .. } | SqlType::Numeric { precision, .. } => u32::from(precision) + 2,
        SqlType::Money => 21,
        SqlType::SmallMoney => 12,
        SqlType::Float | SqlType::Real => 30,
        SqlType::Date => 10,
        SqlType::Time { .. } => 16,
        SqlType::DateTime | SqlType::SmallDateTime => 30,
        SqlType::DateTime2 { .. } => 27,
        SqlType::DateTimeOffset { .. } => 34,
        SqlType::UniqueIdentifier => 36,
    })
}

/// SQL_VARIANT_PROPERTY(v, property) for a non-NULL sql_variant: BaseType and Collation
/// as sysname, Precision, Scale, MaxLength (bytes of the base type, as sys.columns) and
/// TotalBytes (the stored value with its base type header) as int, each wrapped in a
/// sql_variant; NULL for another property name or a Collation of a non-character type.
fn variant_property(v: &types::value::Variant, prop: &str) -> Result<Value, SqlError> {
    let (_, max_len, precision, scale) = types::sqltype::type_info(&v.ty);
    let sysname = SqlType::NVarChar { len: Length::Bounded(128) };
    let int = |n: i32| Value::variant(Value::Int(n), &SqlType::Int);
    match prop.trim().to_ascii_lowercase().as_str() {
        "basetype" => Value::variant(Value::String(v.ty.name().to_string()), &sysname),
        "precision" => int(i32::from(precision)),
        "scale" => int(i32::from(scale)),
        "maxlength" => int(i32::from(max_len)),
        "totalbytes" => {
            let mut bytes = Vec::new();
            types::encode(&Value::Variant(Box::new(v.clone())), &SqlType::Variant, &mut bytes)?;
            int(bytes.len() as i32)
        }
        "collation" if v.ty.is_character() => {
            Value::variant(Value::String("SQL_Latin1_General_CP1_CI_AS".to_string()), &sysname)
        }
        _ => Ok(Value::Null),
    }
}

/// varchar(n)/nvarchar(n) of the argument's length: what LEFT, UPPER, TRIM... return.
fn same_string(t: &SqlType) -> SqlType {
    match text_len(t) {
        None => {
            if t.is_unicode() {
                NVARCHAR_MAX
            } else {
                VARCHAR_MAX
            }
        }
        Some(n) => varchar(n, t.is_unicode()),
    }
}

/// varchar(8000)/nvarchar(4000), or MAX for a MAX argument.
fn capped_string(t: &SqlType, unicode: bool) -> SqlType {
    if t.is_max() {
        if unicode {
            NVARCHAR_MAX
        } else {
            VARCHAR_MAX
        }
    } else {
        varchar(8000, unicode)
    }
}

/// Msg 8116 unless the argument converts to a string.
fn need_stringish(t: &SqlType, n: usize, f: Builtin) -> Result<(), SqlError> {
    if *t == SqlType::Xml {
        return Err(invalid_arg(t.name(), n, f.0));
    }
    Ok(())
}

/// The string functions that refuse text, ntext and image arguments (8116) where SQL
/// Server does; DATALENGTH, SUBSTRING, CHARINDEX, PATINDEX, CONCAT, ISNULL, COALESCE and
/// CONVERT take them.
const REFUSE_LEGACY_LOB: &[&str] = &[
    "LEN",
    "LEFT",
    "RIGHT",
    "UPPER",
    "LOWER",
    "LTRIM",
    "RTRIM",
    "TRIM",
    "REPLACE",
    "REVERSE",
    "STUFF",
    "REPLICATE",
    "ASCII",
    "UNICODE",
    "SOUNDEX",
    "STRING_ESCAPE",
    "FORMAT",
    "TRANSLATE",
    "ISJSON",
    "JSON_VALUE",
];

/// Msg 8116 unless the argument is a number (or a string, which converts).
fn need_numeric(t: &SqlType, n: usize, f: Builtin) -> Result<(), SqlError> {
    if t.is_numeric() || t.is_character() && *t != SqlType::Xml {
        Ok(())
    } else {
        Err(invalid_arg(t.name(), n, f.0))
    }
}

/// The widening math functions apply to their first argument.
fn widen(t: &SqlType) -> SqlType {
    match t {
        SqlType::TinyInt | SqlType::SmallInt => SqlType::Int,
        SqlType::SmallMoney => SqlType::Money,
        SqlType::Real | SqlType::Bit => SqlType::Float,
        t if t.is_character() => SqlType::Float,
        t => *t,
    }
}

fn literal_int(literals: &[Option<Value>], i: usize) -> Option<i64> {
    match literals.get(i)? {
        Some(v) => exact_parts(v).map(|(x, s)| (x / types::decimal::pow10(s)) as i64),
        None => None,
    }
}

fn precision_arg(literals: &[Option<Value>], i: usize, type_name: &str) -> Result<u8, SqlError> {
    match literal_int(literals, i) {
        Some(p) if (0..=7).contains(&p) => Ok(p as u8),
        Some(p) => Err(SqlError::new(1002, 15, 1, format!("Specified scale {p} is invalid."))),
        None => Err(dates::scale_not_constant(type_name)),
    }
}

/// The highest-precedence type of several (strings: the widest). A NULL constant does not
/// count (int only when every argument is NULL), as for CASE.
fn common_type(types: &[SqlType], literals: &[Option<Value>]) -> SqlType {
    let mut typed =
        types.iter().enumerate().filter(|(i, _)| !matches!(literals.get(*i), Some(Some(Value::Null)))).map(|(_, t)| t);
    let Some(mut best) = typed.next().copied() else { return SqlType::Int };
    for t in typed {
        best = match ops::comparison_type(&best, t) {
            Ok(c) => c,
            Err(_) if t.has_higher_precedence_than(&best) => *t,
            Err(_) => best,
        };
    }
    best
}

/// The result type for these argument types. `args` holds each argument's static type;
/// `literals` holds the argument's value when it is a constant (the datepart of
/// DATEADD/DATEDIFF/DATEPART/DATENAME arrives as a constant string such as "day" or
/// "dd"; lengths of LEFT/SUBSTRING may shape the result type). Errors: 174 "The x
/// function requires n argument(s).", 8116 "Argument data type x is invalid for
/// argument n of y function.", 155 "'x' is not a recognized datepart option.".
pub fn return_type(f: Builtin, args: &[SqlType], literals: &[Option<Value>]) -> Result<SqlType, SqlError> {
    check_arity(f, args.len())?;
    if let Some(i) = args.iter().position(|t| t.is_legacy_lob()) {
        if REFUSE_LEGACY_LOB.contains(&f.0) {
            return Err(invalid_arg(args[i].name(), i + 1, f.0));
        }
    }
    let a0 = args.first().copied().unwrap_or(SqlType::Int);
    let unicode_any = args.iter().any(|t| t.is_unicode());
    let part = |i: usize, fname: &str| dates::datepart_arg(literals.get(i).and_then(|v| v.as_ref()), fname);
    Ok(match f.0 {
        "LEN" | "CHARINDEX" | "PATINDEX" => {
            let subject = if f.0 == "LEN" { a0 } else { args[1] };
            need_stringish(&subject, if f.0 == "LEN" { 1 } else { 2 }, f)?;
            if subject.is_max() {
                SqlType::BigInt
            } else {
                SqlType::Int
            }
        }
        "DATALENGTH" => {
            if a0.is_max() {
                SqlType::BigInt
            } else {
                SqlType::Int
            }
        }
        "LEFT" | "RIGHT" | "UPPER" | "LOWER" | "LTRIM" | "RTRIM" | "REVERSE" => {
            need_stringish(&a0, 1, f)?;
            same_string(&a0)
        }
        "TRIM" => {
            let s = if args.len() == 2 { args[1] } else { a0 };
            need_stringish(&s, args.len(), f)?;
            same_string(&s)
        }
        "SUBSTRING" => match a0 {
            SqlType::Binary { len } => SqlType::VarBinary { len: Length::Bounded(len) },
            SqlType::VarBinary { len } => SqlType::VarBinary { len },
            t if t.is_character() && t != SqlType::Xml => same_string(&t),
            t => return Err(invalid_arg(t.name(), 1, f.0)),
        },
        "REPLACE" | "STUFF" => {
            for (i, t) in args.iter().enumerate() {
                if f.0 == "REPLACE" || i != 1 && i != 2 {
                    need_stringish(t, i + 1, f)?;
                }
            }
            capped_string(&a0, unicode_any)
        }
        "REPLICATE" => {
            need_stringish(&a0, 1, f)?;
            capped_string(&a0, a0.is_unicode())
        }
        "TRANSLATE" => same_string(&a0),
        "CONCAT" | "CONCAT_WS" => {
            let mut total: u32 = 0;
            let mut max = false;
            for (i, t) in args.iter().enumerate() {
                match text_len(t) {
                    Some(n) => {
                        // The separator appears between every pair of values.
                        let times =
                            if f.0 == "CONCAT_WS" && i == 0 { (args.len() as u32).saturating_sub(2) } else { 1 };
                        total = total.saturating_add(n.saturating_mul(times));
                    }
                    None => max = true,
                }
            }
            if max {
                if unicode_any {
                    NVARCHAR_MAX
                } else {
                    VARCHAR_MAX
                }
            } else {
                varchar(total, unicode_any)
            }
        }
        "SPACE" => varchar(8000, false),
        "STR" => {
            need_numeric(&a0, 1, f)?;
            let n = literal_int(literals, 1).unwrap_or(10).clamp(1, 8000) as u32;
            SqlType::VarChar { len: Length::Bounded(n as u16) }
        }
        "ASCII" | "UNICODE" | "DIFFERENCE" | "ISDATE" | "ISNUMERIC" | "CHECKSUM" | "BINARY_CHECKSUM" => SqlType::Int,
        "CHAR" => SqlType::Char { len: 1 },
        "NCHAR" => SqlType::NChar { len: 1 },
        "QUOTENAME" => SqlType::NVarChar { len: Length::Bounded(258) },
        "FORMAT" => {
            if a0.is_character() || a0.is_binary() || matches!(a0, SqlType::Bit | SqlType::UniqueIdentifier) {
                return Err(invalid_arg(a0.name(), 1, f.0));
            }
            SqlType::NVarChar { len: Length::Bounded(4000) }
        }
        "SOUNDEX" => SqlType::VarChar { len: Length::Bounded(4) },
        "STRING_ESCAPE" => NVARCHAR_MAX,
        "FORMATMESSAGE" => SqlType::NVarChar { len: Length::Bounded(2047) },
        "ABS" | "SIGN" | "ROUND" => {
            need_numeric(&a0, 1, f)?;
            match widen(&a0) {
                SqlType::Decimal { precision, scale } if f.0 == "SIGN" => {
                    SqlType::Decimal { precision: precision.max(scale + 1).min(38), scale }
                }
                SqlType::Numeric { precision, scale } if f.0 == "SIGN" => {
                    SqlType::Numeric { precision: precision.max(scale + 1).min(38), scale }
                }
                t => t,
            }
        }
        "CEILING" | "FLOOR" => {
            need_numeric(&a0, 1, f)?;
            match widen(&a0) {
                SqlType::Decimal { precision, .. } => SqlType::Decimal { precision, scale: 0 },
                SqlType::Numeric { precision, .. } => SqlType::Numeric { precision, scale: 0 },
                t => t,
            }
        }
        "POWER" => {
            need_numeric(&a0, 1, f)?;
            need_numeric(&args[1], 2, f)?;
            match widen(&a0) {
                SqlType::Decimal { scale, .. } => SqlType::Decimal { precision: 38, scale },
                SqlType::Numeric { scale, .. } => SqlType::Numeric { precision: 38, scale },
                t => t,
            }
        }
        "DEGREES" | "RADIANS" => {
            need_numeric(&a0, 1, f)?;
            match widen(&a0) {
                SqlType::Decimal { scale, .. } => SqlType::Decimal { precision: 38, scale: scale.max(18) },
                SqlType::Numeric { scale, .. } => SqlType::Numeric { precision: 38, scale: scale.max(18) },
                t => t,
            }
        }
        "SQRT" | "SQUARE" | "EXP" | "LOG" | "LOG10" | "SIN" | "COS" | "TAN" | "COT" | "ASIN" | "ACOS" | "ATAN"
        | "ATN2" => {
            for (i, t) in args.iter().enumerate() {
                need_numeric(t, i + 1, f)?;
            }
            SqlType::Float
        }
        "PI" | "RAND" => SqlType::Float,
        "DATEADD" => {
            let p = part(0, "dateadd")?;
            if !(args[1].is_numeric()) {
                return Err(invalid_arg(args[1].name(), 2, "dateadd"));
            }
            let t = date_type(&args[2], 3, f)?;
            dates::check_part(p, &t, "dateadd")?;
            if args[2].is_character() {
                SqlType::DateTime
            } else {
                t
            }
        }
        "DATEDIFF" | "DATEDIFF_BIG" => {
            part(0, &f.0.to_ascii_lowercase())?;
            date_type(&args[1], 2, f)?;
            date_type(&args[2], 3, f)?;
            if f.0 == "DATEDIFF" {
                SqlType::Int
            } else {
                SqlType::BigInt
            }
        }
        "DATEPART" | "DATENAME" => {
            let p = part(0, &f.0.to_ascii_lowercase())?;
            let t = date_type(&args[1], 2, f)?;
            dates::check_part(p, &t, &f.0.to_ascii_lowercase())?;
            if f.0 == "DATEPART" {
                SqlType::Int
            } else {
                dates::DATENAME_TYPE
            }
        }
        "DATETRUNC" => {
            let p = part(0, "datetrunc")?;
            let t = date_type(&args[1], 2, f)?;
            dates::check_part(p, &t, "datetrunc")?;
            t
        }
        "DAY" | "MONTH" | "YEAR" => {
            date_type(&a0, 1, f)?;
            SqlType::Int
        }
        "EOMONTH" => {
            date_type(&a0, 1, f)?;
            SqlType::Date
        }
        "DATEFROMPARTS" => SqlType::Date,
        "DATETIMEFROMPARTS" => SqlType::DateTime,
        "SMALLDATETIMEFROMPARTS" => SqlType::SmallDateTime,
        "DATETIME2FROMPARTS" => SqlType::DateTime2 { scale: precision_arg(literals, 7, "datetime2")? },
        "TIMEFROMPARTS" => SqlType::Time { scale: precision_arg(literals, 4, "time")? },
        "DATETIMEOFFSETFROMPARTS" => SqlType::DateTimeOffset { scale: precision_arg(literals, 9, "datetimeoffset")? },
        "SYSDATETIME" | "SYSUTCDATETIME" => SqlType::DateTime2 { scale: 7 },
        "GETDATE" | "GETUTCDATE" | "CURRENT_TIMESTAMP" => SqlType::DateTime,
        "SYSDATETIMEOFFSET" => SqlType::DateTimeOffset { scale: 7 },
        "SWITCHOFFSET" | "TODATETIMEOFFSET" => {
            let t = date_type(&a0, 1, f)?;
            SqlType::DateTimeOffset {
                scale: match t {
                    SqlType::DateTime => 3,
                    SqlType::SmallDateTime | SqlType::Date => 0,
                    t => t.time_scale().unwrap_or(7),
                },
            }
        }
        "ISNULL" | "NULLIF" => a0,
        "CHOOSE" => common_type(&args[1..], literals.get(1..).unwrap_or(&[])),
        "GREATEST" | "LEAST" => common_type(args, literals),
        "NEWID" | "NEWSEQUENTIALID" => SqlType::UniqueIdentifier,
        "SQL_VARIANT_PROPERTY" => {
            if a0.is_max() || a0 == SqlType::Xml {
                return Err(invalid_arg(a0.name(), 1, f.0));
            }
            SqlType::Variant
        }
        "TYPE_NAME" => SqlType::NVarChar { len: Length::Bounded(128) },
        "TYPE_ID" => SqlType::Int,
        "ISJSON" => {
            need_stringish(&a0, 1, f)?;
            SqlType::Int
        }
        "JSON_VALUE" => {
            need_stringish(&a0, 1, f)?;
            SqlType::NVarChar { len: Length::Bounded(4000) }
        }
        "JSON_QUERY" | "JSON_MODIFY" | "JSON_MODIFY JSON" => {
            need_stringish(&a0, 1, f)?;
            NVARCHAR_MAX
        }
        "JSON_ARRAY" | "JSON_OBJECT" => NVARCHAR_MAX,
        _ => return Err(SqlError::new(195, 15, 10, format!("'{}' is not a recognized built-in function name.", f.0))),
    })
}

/// The type a date argument is read as, or Msg 8116.
fn date_type(t: &SqlType, n: usize, f: Builtin) -> Result<SqlType, SqlError> {
    if t.is_temporal() || t.is_numeric() || (t.is_character() && *t != SqlType::Xml) {
        Ok(dates::date_arg_type(t))
    } else {
        Err(invalid_arg(t.name(), n, f.0))
    }
}

// ---- argument access ---------------------------------------------------------------

fn arg_ty(arg_types: &[SqlType], args: &[Value], i: usize) -> SqlType {
    let v = args.get(i).unwrap_or(&Value::Null);
    effective_type(v, arg_types.get(i).unwrap_or(&util::value_type(v)))
}

/// An argument as text (implicit conversion to nvarchar); None for NULL.
fn text(args: &[Value], arg_types: &[SqlType], i: usize) -> Result<Option<String>, SqlError> {
    match args.get(i) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(v) => {
            // Non-Unicode sources (numbers, binaries, dates) convert to varchar, as
            // SQL Server's implicit conversion does: LEN(0x414243) reads 'ABC'.
            let t = arg_ty(arg_types, args, i);
            let target = if t.is_unicode() { NVARCHAR_MAX } else { VARCHAR_MAX };
            match convert::convert(v, &t, &target, None)? {
                Value::String(s) => Ok(Some(s)),
                _ => Ok(None),
            }
        }
    }
}

/// An argument as an integer (numbers truncate, strings convert); None for NULL.
fn int(args: &[Value], arg_types: &[SqlType], i: usize) -> Result<Option<i64>, SqlError> {
    match args.get(i) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => match convert::convert(v, &arg_ty(arg_types, args, i), &SqlType::BigInt, None)? {
            Value::BigInt(x) => Ok(Some(x)),
            _ => Ok(None),
        },
    }
}

fn float(args: &[Value], arg_types: &[SqlType], i: usize) -> Result<Option<f64>, SqlError> {
    match args.get(i) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => Ok(util::to_f64(&convert::convert(v, &arg_ty(arg_types, args, i), &SqlType::Float, None)?)),
    }
}

/// A string result fitted to the declared type (truncation, code page 1252).
fn string_out(s: String, ret: &SqlType) -> Result<Value, SqlError> {
    convert::convert(&Value::String(s), &NVARCHAR_MAX, ret, None)
}

/// Case-insensitive position of `needle` in `hay` at or after `from` (characters).
fn find_ci(hay: &[char], needle: &[char], from: usize) -> Option<usize> {
    if needle.is_empty() || needle.len() > hay.len() {
        return None;
    }
    (from..=hay.len() - needle.len()).find(|&i| {
        hay[i..i + needle.len()].iter().zip(needle).all(|(a, b)| a == b || a.to_lowercase().eq(b.to_lowercase()))
    })
}

fn text_units(s: &str, unicode: bool) -> usize {
    if unicode {
        types::ucs2::len(&s)
    } else {
        s.chars().count()
    }
}

// ---- random numbers ----------------------------------------------------------------

thread_local! {
    static RAND_STATE: Cell<u64> = const { Cell::new(0) };
}

fn random_seed() -> u64 {
    std::collections::hash_map::RandomState::new().build_hasher().finish() | 1
}

fn splitmix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = x;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The next value of this thread's RAND sequence in [0, 1); a seed restarts it.
fn rand(seed: Option<i64>) -> f64 {
    RAND_STATE.with(|s| {
        if let Some(seed) = seed {
            s.set(splitmix(seed as u64) | 1);
        } else if s.get() == 0 {
            s.set(random_seed());
        }
        // xorshift64*
        let mut x = s.get();
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        s.set(x);
        (x.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11) as f64 / (1u64 << 53) as f64
    })
}

fn random_bytes() -> [u8; 16] {
    let a = random_seed().to_le_bytes();
    let b = random_seed().to_le_bytes();
    let mut g = [0u8; 16];
    g[..8].copy_from_slice(&a);
    g[8..].copy_from_slice(&b);
    g
}

/// NEWID(): a random version-4 GUID in SQL Server's stored byte order.
pub fn newid() -> [u8; 16] {
    let mut g = random_bytes();
    // Text group 3 starts with the version nibble (stored byte 7); group 4 with the
    // variant bits (stored byte 8).
    g[7] = (g[7] & 0x0F) | 0x40;
    g[8] = (g[8] & 0x3F) | 0x80;
    g
}

/// SQL Server's uniqueidentifier comparison order: most significant stored byte first.
const GUID_ORDER: [usize; 16] = [10, 11, 12, 13, 14, 15, 8, 9, 6, 7, 4, 5, 0, 1, 2, 3];

static SEQUENTIAL: AtomicU64 = AtomicU64::new(0);
static SEQUENTIAL_BASE: OnceLock<u64> = OnceLock::new();

/// NEWSEQUENTIALID(): a per-process random prefix and a counter, laid out so that
/// successive values increase in SQL Server's comparison order.
fn newsequentialid() -> [u8; 16] {
    let base = *SEQUENTIAL_BASE.get_or_init(random_seed);
    let n = SEQUENTIAL.fetch_add(1, AtomicOrdering::Relaxed);
    let mut key = [0u8; 16];
    key[..8].copy_from_slice(&base.to_be_bytes());
    key[8..].copy_from_slice(&n.to_be_bytes());
    let mut g = [0u8; 16];
    for (j, &slot) in GUID_ORDER.iter().enumerate() {
        g[slot] = key[j];
    }
    g
}

// ---- checksums ---------------------------------------------------------------------

fn fnv1a(bytes: &[u8]) -> u32 {
    let mut h: u32 = 0x811C_9DC5;
    for &b in bytes {
        h ^= u32::from(b);
        h = h.wrapping_mul(0x0100_0193);
    }
    h
}

/// The bytes a value contributes to CHECKSUM (`binary` false: collation-equal strings
/// and equal numbers of any scale hash alike) or BINARY_CHECKSUM.
fn checksum_bytes(v: &Value, binary: bool) -> Vec<u8> {
    match v {
        Value::Null => vec![0xFF, 0x00],
        Value::String(s) => {
            let s = s.trim_end_matches(' ');
            if binary {
                s.as_bytes().to_vec()
            } else {
                s.to_lowercase().into_bytes()
            }
        }
        Value::Binary(b) => b.clone(),
        Value::Guid(g) => g.to_vec(),
        Value::Float(f) => f.to_bits().to_le_bytes().to_vec(),
        Value::Real(f) => f64::from(*f).to_bits().to_le_bytes().to_vec(),
        _ => {
            if let Some((mut x, mut s)) = exact_parts(v) {
                while s > 0 && x % 10 == 0 {
                    x /= 10;
                    s -= 1;
                }
                let mut b = x.to_le_bytes().to_vec();
                b.push(s);
                return b;
            }
            match util::utc_clock(v) {
                Some((d, u)) => {
                    let mut b = d.to_le_bytes().to_vec();
                    b.extend_from_slice(&u.to_le_bytes());
                    b
                }
                None => v.to_string().into_bytes(),
            }
        }
    }
}

fn checksum(args: &[Value], binary: bool) -> i32 {
    let mut h: u32 = 0;
    for v in args {
        h = h.rotate_left(4) ^ fnv1a(&checksum_bytes(v, binary));
    }
    h as i32
}

// ---- ISNUMERIC, SOUNDEX ------------------------------------------------------------

fn is_currency(c: char) -> bool {
    matches!(c, '$' | '\u{A2}'..='\u{A5}' | '\u{20A0}'..='\u{20CF}')
}

/// SQL Server's ISNUMERIC: optional sign and currency symbol (either order), digits
/// with commas and one point, an optional e/d exponent with digits.
fn isnumeric(s: &str) -> bool {
    let t = s.trim_matches(|c: char| c == ' ' || c == '\t' || c == '\n' || c == '\r');
    let chars: Vec<char> = t.chars().collect();
    if chars.is_empty() {
        return false;
    }
    let mut i = 0;
    let (mut sign, mut currency) = (false, false);
    while i < chars.len() {
        let c = chars[i];
        if (c == '+' || c == '-') && !sign {
            sign = true;
        } else if is_currency(c) && !currency {
            currency = true;
        } else {
            break;
        }
        i += 1;
        while i < chars.len() && chars[i] == ' ' {
            i += 1;
        }
    }
    let (mut digits, mut point) = (0, false);
    let mut body = false;
    while i < chars.len() {
        match chars[i] {
            '0'..='9' => digits += 1,
            ',' if !point => {}
            '.' if !point => point = true,
            _ => break,
        }
        body = true;
        i += 1;
    }
    if i < chars.len() && matches!(chars[i], 'e' | 'E' | 'd' | 'D') {
        if digits == 0 {
            return false;
        }
        i += 1;
        if i < chars.len() && (chars[i] == '+' || chars[i] == '-') {
            i += 1;
        }
        let start = i;
        while i < chars.len() && chars[i].is_ascii_digit() {
            i += 1;
        }
        if i == start {
            return false;
        }
    }
    i == chars.len() && (body || sign || currency)
}

fn soundex(s: &str) -> String {
    let code = |c: char| match c.to_ascii_uppercase() {
        'B' | 'F' | 'P' | 'V' => '1',
        'C' | 'G' | 'J' | 'K' | 'Q' | 'S' | 'X' | 'Z' => '2',
        'D' | 'T' => '3',
        'L' => '4',
        'M' | 'N' => '5',
        'R' => '6',
        'H' | 'W' => 'h',
        _ => '0',
    };
    let letters: Vec<char> = s.trim_start().chars().take_while(|c| c.is_ascii_alphabetic()).collect();
    let Some(&first) = letters.first() else { return "0000".into() };
    let mut out = String::from(first.to_ascii_uppercase());
    let mut last = code(first);
    for &c in &letters[1..] {
        let d = code(c);
        if d == 'h' {
            // H and W do not separate letters of the same code.
            continue;
        }
        if d != '0' && d != last {
            out.push(d);
            if out.len() == 4 {
                break;
            }
        }
        last = d;
    }
    while out.len() < 4 {
        out.push('0');
    }
    out
}

/// STR(f, length, decimals): right-aligned, fewer decimals when needed, `*`s when the
/// integer part does not fit.
fn str_fn(f: f64, len: i64, decimals: i64) -> Option<String> {
    if !(1..=8000).contains(&len) || decimals < 0 {
        return None;
    }
    let len = len as usize;
    for d in (0..=decimals.min(16) as u8).rev() {
        let Some(u) = float_to_unscaled(f, d) else { break };
        let t = types::decimal::format_unscaled(u, d);
        if t.len() <= len {
            return Some(format!("{t:>len$}"));
        }
    }
    Some("*".repeat(len))
}

// ---- math helpers ------------------------------------------------------------------

/// A float result converted to the function's numeric result type (integers truncate).
fn float_result(f: f64, ret: &SqlType) -> Result<Value, SqlError> {
    if !f.is_finite() {
        return Err(overflow(if util::is_approx(ret) { "float" } else { ret.name() }));
    }
    match ret {
        SqlType::Float => Ok(Value::Float(f)),
        SqlType::Real => Ok(Value::Real(f as f32)),
        t if util::is_decimal(t) || util::is_money(t) => {
            let (p, s) = t.decimal_params().unwrap_or((19, 4));
            match float_to_unscaled(f, s) {
                Some(v) if util::is_money(t) => i64::try_from(v).map(Value::Money).map_err(|_| overflow(t.name())),
                Some(v) if types::decimal::fits_precision(v, p) => {
                    Ok(Value::Decimal { value: v, precision: p, scale: s })
                }
                _ => Err(overflow("numeric")),
            }
        }
        t => {
            let tr = f.trunc();
            let fits = match t {
                SqlType::BigInt => (-9.223_372_036_854_776e18..9.223_372_036_854_776e18).contains(&tr),
                _ => tr >= f64::from(i32::MIN) && tr <= f64::from(i32::MAX),
            };
            if !fits {
                return Err(SqlError::new(
                    232,
                    16,
                    3,
                    format!("Arithmetic overflow error for type {}, value = {}.", t.name(), convert::f6(f)),
                ));
            }
            convert::convert(&Value::BigInt(tr as i64), &SqlType::BigInt, t, None)
        }
    }
}

/// ROUND(v, length, function) in v's own type.
fn round_value(v: &Value, len: i64, truncate: bool, ret: &SqlType) -> Result<Value, SqlError> {
    let rounding = |x: i128, drop: i64| -> Option<i128> {
        if drop <= 0 {
            return Some(x);
        }
        if drop > 38 {
            return Some(0);
        }
        let p = types::decimal::pow10(drop as u8);
        let q = if truncate { x / p } else { types::decimal::rescale(x, drop as u8, 0)? };
        q.checked_mul(p)
    };
    match *v {
        Value::Float(_) | Value::Real(_) => {
            let f = util::to_f64(v).unwrap_or(0.0);
            let r = if len >= 0 {
                let l = len.min(30) as u8;
                if truncate {
                    let p = 10f64.powi(i32::from(l));
                    (f * p).trunc() / p
                } else {
                    match float_to_unscaled(f, l) {
                        Some(u) => types::decimal::format_unscaled(u, l).parse().unwrap_or(f),
                        None => f,
                    }
                }
            } else {
                let p = 10f64.powi((-len).min(308) as i32);
                let q = f / p;
                (if truncate { q.trunc() } else { q.round() }) * p
            };
            float_result(r, ret)
        }
        Value::Decimal { value, precision, scale } => {
            let drop = i64::from(scale) - len;
            let r = rounding(value, drop).ok_or_else(|| overflow("numeric"))?;
            if !types::decimal::fits_precision(r, precision) {
                return Err(overflow("numeric"));
            }
            Ok(Value::Decimal { value: r, precision, scale })
        }
        Value::Money(m) => {
            let r = rounding(i128::from(m), 4 - len).ok_or_else(|| overflow("money"))?;
            i64::try_from(r).map(Value::Money).map_err(|_| overflow("money"))
        }
        _ => {
            let (x, _) = exact_parts(v).ok_or_else(|| overflow(ret.name()))?;
            let r = rounding(x, -len).ok_or_else(|| overflow(ret.name()))?;
            convert::convert(
                &Value::Decimal { value: r, precision: 38, scale: 0 },
                &SqlType::Decimal { precision: 38, scale: 0 },
                ret,
                None,
            )
            .map_err(|_| overflow(ret.name()))
        }
    }
}

/// Calls the function on values of the static types `arg_types`; the result must be of
/// `ret` (from [`return_type`]).
pub fn call(
    f: Builtin,
    args: &[Value],
    arg_types: &[SqlType],
    ret: &SqlType,
    cx: &FnContext,
) -> Result<Value, SqlError> {
    if f.0.starts_with("HIERARCHYID ") || f.0.starts_with("SPATIAL ") {
        return super::clr::call(f.0, args);
    }
    if args.is_empty() {
        // The clock functions and NEWID run once per row in INSERT defaults and loops:
        // answered before the arity check and the long chain of name comparisons below.
        match f.0 {
            "SYSDATETIME" | "SYSUTCDATETIME" | "GETDATE" | "GETUTCDATE" | "CURRENT_TIMESTAMP" | "SYSDATETIMEOFFSET" => {
                return dates::clock_function(f.0, cx)
            }
            "NEWID" => return Ok(Value::Guid(newid())),
            _ => {}
        }
    }
    check_arity(f, args.len())?;
    let null = Ok(Value::Null);
    let t0 = arg_ty(arg_types, args, 0);
    macro_rules! text_or_null {
        ($i:expr) => {
            match text(args, arg_types, $i)? {
                Some(s) => s,
                None => return null,
            }
        };
    }
    macro_rules! int_or_null {
        ($i:expr) => {
            match int(args, arg_types, $i)? {
                Some(x) => x,
                None => return null,
            }
        };
    }
    macro_rules! float_or_null {
        ($i:expr) => {
            match float(args, arg_types, $i)? {
                Some(x) => x,
                None => return null,
            }
        };
    }
    let name = f.0;
    match name {
        // ---- strings ---------------------------------------------------------------
        "LEN" => {
            let s = text_or_null!(0);
            let n = text_units(s.trim_end_matches(' '), t0.is_unicode()) as i64;
            Ok(if *ret == SqlType::BigInt { Value::BigInt(n) } else { Value::Int(n as i32) })
        }
        "DATALENGTH" => {
            let v = &args[0];
            let (v, t0) = match v {
                Value::Variant(b) => (&b.value, b.ty),
                v => (v, t0),
            };
            let n: i64 = match v {
                Value::Null => return null,
                Value::String(s) if t0.is_unicode() => 2 * types::ucs2::len(&s) as i64,
                Value::String(s) => s.chars().count() as i64,
                Value::Binary(b) => b.len() as i64,
                _ => i64::from(t0.fixed_storage_len().unwrap_or(0)),
            };
            Ok(if *ret == SqlType::BigInt { Value::BigInt(n) } else { Value::Int(n as i32) })
        }
        "LEFT" | "RIGHT" => {
            let s = text_or_null!(0);
            let n = int_or_null!(1);
            if n < 0 {
                return Err(SqlError::new(
                    536,
                    16,
                    6,
                    format!("Invalid length parameter passed to the {} function.", name.to_ascii_lowercase()),
                ));
            }
            let chars: Vec<char> = s.chars().collect();
            let n = (n as usize).min(chars.len());
            let out: String =
                if name == "LEFT" { chars[..n].iter().collect() } else { chars[chars.len() - n..].iter().collect() };
            string_out(out, ret)
        }
        "SUBSTRING" => {
            if args[0].is_null() {
                return null;
            }
            let start = int_or_null!(1);
            let len = int_or_null!(2);
            if len < 0 {
                return Err(SqlError::new(536, 16, 8, "Invalid length parameter passed to the substring function."));
            }
            // Positions start..start+len-1 of the 1-based string.
            let from = start.saturating_sub(1).max(0) as usize;
            let to = start.saturating_add(len).saturating_sub(1).max(0) as usize;
            if let Value::Binary(b) = &args[0] {
                let (a, z) = (from.min(b.len()), to.min(b.len()));
                return Ok(Value::Binary(b[a..z.max(a)].to_vec()));
            }
            let s = text_or_null!(0);
            let out: String = s.chars().skip(from).take(to.saturating_sub(from)).collect();
            string_out(out, ret)
        }
        "UPPER" => string_out(text_or_null!(0).to_uppercase(), ret),
        "LOWER" => string_out(text_or_null!(0).to_lowercase(), ret),
        "REVERSE" => string_out(text_or_null!(0).chars().rev().collect(), ret),
        "LTRIM" | "RTRIM" | "TRIM" => {
            let (s, set) = if args.len() == 2 {
                let (si, ci) = if name == "TRIM" { (1, 0) } else { (0, 1) };
                let s = text_or_null!(si);
                let set = text_or_null!(ci);
                (s, set.chars().collect::<Vec<char>>())
            } else {
                (text_or_null!(0), vec![' '])
            };
            let is_set = |c: char| set.contains(&c);
            let out = match name {
                "LTRIM" => s.trim_start_matches(is_set),
                "RTRIM" => s.trim_end_matches(is_set),
                _ => s.trim_matches(is_set),
            };
            string_out(out.to_string(), ret)
        }
        "REPLACE" => {
            let s = text_or_null!(0);
            let find = text_or_null!(1);
            let repl = text_or_null!(2);
            let hay: Vec<char> = s.chars().collect();
            let needle: Vec<char> = find.chars().collect();
            let mut out = String::with_capacity(s.len());
            let mut i = 0;
            let mut guard = super::util::LobGuard::default();
            while i < hay.len() {
                match find_ci(&hay, &needle, i) {
                    Some(p) => {
                        out.extend(&hay[i..p]);
                        out.push_str(&repl);
                        // Msg 7119 as the result passes 2 GB, before it grows further.
                        guard.check(&out, ret.is_unicode())?;
                        i = p + needle.len();
                    }
                    None => {
                        out.extend(&hay[i..]);
                        break;
                    }
                }
            }
            string_out(out, ret)
        }
        "REPLICATE" => {
            let s = text_or_null!(0);
            let n = int_or_null!(1);
            if n < 0 {
                return null;
            }
            // Stop once past the result's limit (8000 bytes, or 2 GB for MAX).
            let limit = if ret.is_max() { i32::MAX as usize } else { 8000 };
            let per = s.chars().count().max(1);
            if ret.is_max() {
                // Msg 7119 past 2 GB, before anything is built.
                let unit = if ret.is_unicode() { types::ucs2::len(&s) * 2 } else { per } as u64;
                if unit.saturating_mul(n as u64) > super::util::MAX_LOB_BYTES {
                    return Err(super::util::lob_too_large());
                }
            }
            let times = (n as usize).min(limit / per + 1);
            string_out(s.repeat(times), ret)
        }
        "SPACE" => {
            let n = int_or_null!(0);
            if n < 0 {
                return null;
            }
            string_out(" ".repeat((n as usize).min(8000)), ret)
        }
        "CHARINDEX" => {
            let needle: Vec<char> = text_or_null!(0).chars().collect();
            let hay: Vec<char> = text_or_null!(1).chars().collect();
            let start = if args.len() == 3 { int(args, arg_types, 2)?.unwrap_or(1) } else { 1 };
            let from = (start.max(1) - 1) as usize;
            let pos = if from > hay.len() { None } else { find_ci(&hay, &needle, from) };
            let n = pos.map_or(0, |p| p as i64 + 1);
            Ok(if *ret == SqlType::BigInt { Value::BigInt(n) } else { Value::Int(n as i32) })
        }
        "PATINDEX" => {
            let pattern = text_or_null!(0);
            let s = text_or_null!(1);
            let n = patindex(&pattern, &s)?;
            Ok(if *ret == SqlType::BigInt { Value::BigInt(n) } else { Value::Int(n as i32) })
        }
        "STUFF" => {
            let s = text_or_null!(0);
            let start = int_or_null!(1);
            let len = int_or_null!(2);
            let ins = text(args, arg_types, 3)?.unwrap_or_default();
            // Byte offsets of the characters (no vector of every character).
            let count = s.chars().count();
            if start < 1 || start as usize > count || len < 0 {
                return null;
            }
            let a = start as usize - 1;
            let b = a.saturating_add(len as usize).min(count);
            let offset = |n: usize| s.char_indices().nth(n).map_or(s.len(), |(i, _)| i);
            let (head, tail) = (&s[..offset(a)], &s[offset(b)..]);
            if super::util::text_over_lob_limit(&[head, &ins, tail], ret.is_unicode()) {
                return Err(super::util::lob_too_large());
            }
            let mut out = String::with_capacity(head.len() + ins.len() + tail.len());
            out.push_str(head);
            out.push_str(&ins);
            out.push_str(tail);
            string_out(out, ret)
        }
        "FORMATMESSAGE" => {
            // A message number would be looked up in sys.messages; user messages do
            // not exist here, so it is NULL as for a number sp_addmessage never added.
            let Some(fmt) = (match args.first() {
                Some(Value::String(s)) => Some(s.clone()),
                _ => None,
            }) else {
                return Ok(Value::Null);
            };
            let rest: Vec<(Value, SqlType)> =
                (1..args.len()).map(|i| (args[i].clone(), arg_ty(arg_types, args, i))).collect();
            string_out(printf_message(&fmt, &rest), ret)
        }
        "CONCAT" => {
            let mut parts = Vec::with_capacity(args.len());
            for i in 0..args.len() {
                if let Some(s) = text(args, arg_types, i)? {
                    parts.push(s);
                }
            }
            // Msg 7119 before a result past 2 GB is built.
            if super::util::text_over_lob_limit(&parts.iter().map(String::as_str).collect::<Vec<_>>(), ret.is_unicode())
            {
                return Err(super::util::lob_too_large());
            }
            let mut out = String::new();
            for p in &parts {
                types::ucs2::push_str(&mut out, p);
            }
            string_out(out, ret)
        }
        "CONCAT_WS" => {
            let sep = text(args, arg_types, 0)?.unwrap_or_default();
            let mut parts = Vec::new();
            for i in 1..args.len() {
                if let Some(s) = text(args, arg_types, i)? {
                    parts.push(s);
                }
            }
            let mut all: Vec<&str> = parts.iter().map(String::as_str).collect();
            all.extend(std::iter::repeat_n(sep.as_str(), parts.len().saturating_sub(1)));
            if super::util::text_over_lob_limit(&all, ret.is_unicode()) {
                return Err(super::util::lob_too_large());
            }
            string_out(parts.join(&sep), ret)
        }
        "STR" => {
            let v = float_or_null!(0);
            let len = if args.len() > 1 { int_or_null!(1) } else { 10 };
            let dec = if args.len() > 2 { int_or_null!(2) } else { 0 };
            match str_fn(v, len, dec) {
                Some(s) => string_out(s, ret),
                None => null,
            }
        }
        "ASCII" => {
            let s = text_or_null!(0);
            Ok(match s.chars().next() {
                Some(c) => Value::Int(i32::from(codepage::encode_char(c).unwrap_or(b'?'))),
                None => Value::Null,
            })
        }
        "UNICODE" => {
            let s = text_or_null!(0);
            Ok(match types::ucs2::units(&s).next() {
                Some(u) => Value::Int(i32::from(u)),
                None => Value::Null,
            })
        }
        "CHAR" => {
            let n = int_or_null!(0);
            Ok(match u8::try_from(n) {
                Ok(b) => Value::String(codepage::decode_byte(b).to_string()),
                Err(_) => Value::Null,
            })
        }
        "NCHAR" => {
            let n = int_or_null!(0);
            // NCHAR(0xD800) is an unpaired surrogate, kept as SQL Server keeps it.
            Ok(match u16::try_from(n).ok().map(types::ucs2::unit_char) {
                Some(c) => Value::String(c.to_string()),
                None => Value::Null,
            })
        }
        "QUOTENAME" => {
            let s = text_or_null!(0);
            let q = if args.len() == 2 { text_or_null!(1) } else { "[".into() };
            if types::ucs2::len(&s) > 128 {
                return null;
            }
            let (open, close) = match q.chars().next() {
                Some('[' | ']') => ('[', ']'),
                Some('"') => ('"', '"'),
                Some('\'') => ('\'', '\''),
                Some('(' | ')') => ('(', ')'),
                Some('<' | '>') => ('<', '>'),
                Some('{' | '}') => ('{', '}'),
                Some('`') => ('`', '`'),
                _ => return null,
            };
            let body = s.replace(close, &format!("{close}{close}"));
            string_out(format!("{open}{body}{close}"), ret)
        }
        "FORMAT" => {
            let culture = if args.len() == 3 { text(args, arg_types, 2)? } else { None };
            format::check_culture(culture.as_deref())?;
            if args[0].is_null() {
                return null;
            }
            let Some(fmt) = text(args, arg_types, 1)? else {
                return Err(invalid_arg("NULL", 2, "format"));
            };
            match format::format_value(&args[0], &fmt) {
                Some(s) => string_out(s, ret),
                None => null,
            }
        }
        "TRANSLATE" => {
            let s = text_or_null!(0);
            let from: Vec<char> = text_or_null!(1).chars().collect();
            let to: Vec<char> = text_or_null!(2).chars().collect();
            if from.len() != to.len() {
                return Err(SqlError::new(
                    9828,
                    16,
                    1,
                    "The second and third arguments of the TRANSLATE built-in function must contain an equal number of characters.",
                ));
            }
            let out: String = s.chars().map(|c| from.iter().position(|&x| x == c).map_or(c, |i| to[i])).collect();
            string_out(out, ret)
        }
        "SOUNDEX" => string_out(soundex(&text_or_null!(0)), ret),
        "DIFFERENCE" => {
            let (a, b) = (soundex(&text_or_null!(0)), soundex(&text_or_null!(1)));
            Ok(Value::Int(a.chars().zip(b.chars()).filter(|(x, y)| x == y).count() as i32))
        }
        "STRING_ESCAPE" => {
            let s = text_or_null!(0);
            let mode = text_or_null!(1);
            if !mode.eq_ignore_ascii_case("json") {
                return Err(SqlError::new(
                    9806,
                    16,
                    1,
                    format!("The second argument of STRING_ESCAPE function '{mode}' is not supported."),
                ));
            }
            string_out(super::json::escape(&s), ret)
        }
        // ---- JSON ------------------------------------------------------------------
        "ISJSON" => {
            let s = text_or_null!(0);
            let constraint = if args.len() > 1 { Some(text_or_null!(1)) } else { None };
            Ok(Value::Int(i32::from(super::json::is_json(&s, constraint.as_deref())?)))
        }
        "JSON_VALUE" => {
            let s = text_or_null!(0);
            let path = text_or_null!(1);
            Ok(super::json::value(&s, &path)?.map_or(Value::Null, Value::String))
        }
        "JSON_QUERY" => {
            let s = text_or_null!(0);
            let path = if args.len() > 1 { Some(text_or_null!(1)) } else { None };
            Ok(super::json::query(&s, path.as_deref())?.map_or(Value::Null, Value::String))
        }
        "JSON_MODIFY" | "JSON_MODIFY JSON" => {
            let s = text_or_null!(0);
            let path = text_or_null!(1);
            let new = if args[2].is_null() {
                None
            } else {
                let mut out = String::new();
                super::json::write_value(&args[2], &arg_ty(arg_types, args, 2), name == "JSON_MODIFY JSON", &mut out)?;
                Some(out)
            };
            Ok(Value::String(super::json::modify(&s, &path, new.as_deref())?))
        }
        "JSON_ARRAY" | "JSON_OBJECT" => {
            let spec = text_or_null!(0);
            let tys: Vec<SqlType> = (0..args.len()).map(|i| arg_ty(arg_types, args, i)).collect();
            Ok(Value::String(super::json::construct(&spec, &args[1..], &tys[1..], name == "JSON_OBJECT")?))
        }
        // ---- math ------------------------------------------------------------------
        "ABS" | "SIGN" | "CEILING" | "FLOOR" => {
            if args[0].is_null() {
                return null;
            }
            let v = convert::convert(&args[0], &t0, &widen(&t0), None)?;
            math_exact(name, &v, ret)
        }
        "ROUND" => {
            if args[0].is_null() {
                return null;
            }
            let len = int_or_null!(1);
            let truncate = args.len() == 3 && int(args, arg_types, 2)?.unwrap_or(0) != 0;
            let v = convert::convert(&args[0], &t0, ret, None)?;
            round_value(&v, len, truncate, ret)
        }
        "POWER" => {
            let x = float_or_null!(0);
            let y = float_or_null!(1);
            if x == 0.0 && y < 0.0 {
                return Err(util::divide_by_zero());
            }
            if x < 0.0 && y.fract() != 0.0 {
                return Err(float_domain());
            }
            float_result(x.powf(y), ret)
        }
        "SQRT" | "SQUARE" | "EXP" | "LOG" | "LOG10" | "SIN" | "COS" | "TAN" | "COT" | "ASIN" | "ACOS" | "ATAN" => {
            let x = float_or_null!(0);
            let r = match name {
                "SQRT" if x < 0.0 => return Err(float_domain()),
                "SQRT" => x.sqrt(),
                "SQUARE" => x * x,
                "EXP" => x.exp(),
                "LOG" | "LOG10" if x <= 0.0 => return Err(float_domain()),
                "LOG" if args.len() == 2 => {
                    let b = float_or_null!(1);
                    if b <= 0.0 || b == 1.0 {
                        return Err(float_domain());
                    }
                    x.ln() / b.ln()
                }
                "LOG" => x.ln(),
                "LOG10" => x.log10(),
                "SIN" => x.sin(),
                "COS" => x.cos(),
                "TAN" => x.tan(),
                "COT" if x == 0.0 => return Err(float_domain()),
                "COT" => 1.0 / x.tan(),
                "ASIN" | "ACOS" if !(-1.0..=1.0).contains(&x) => return Err(float_domain()),
                "ASIN" => x.asin(),
                "ACOS" => x.acos(),
                _ => x.atan(),
            };
            if !r.is_finite() {
                return Err(overflow("float"));
            }
            Ok(Value::Float(r))
        }
        "ATN2" => {
            let y = float_or_null!(0);
            let x = float_or_null!(1);
            if x == 0.0 && y == 0.0 {
                return Err(float_domain());
            }
            Ok(Value::Float(y.atan2(x)))
        }
        "PI" => Ok(Value::Float(std::f64::consts::PI)),
        "RAND" => {
            if args.len() == 1 {
                let seed = int_or_null!(0);
                return Ok(Value::Float(rand(Some(seed))));
            }
            Ok(Value::Float(rand(None)))
        }
        "DEGREES" | "RADIANS" => {
            let x = float_or_null!(0);
            let r = if name == "DEGREES" { x.to_degrees() } else { x.to_radians() };
            float_result(r, ret)
        }
        // ---- dates -----------------------------------------------------------------
        "DATEADD" => {
            let part = dates::datepart_arg(args.first(), "dateadd")?;
            if args[1].is_null() || args[2].is_null() {
                return null;
            }
            let n = match convert::convert(&args[1], &arg_ty(arg_types, args, 1), &SqlType::Int, None) {
                Ok(Value::Int(n)) => i64::from(n),
                Ok(_) => return null,
                Err(e) => return Err(e),
            };
            let d = date_value(args, arg_types, 2, f)?;
            let d = if ret.is_temporal() && util::value_type(&d) != *ret {
                convert::convert(&d, &util::value_type(&d), ret, None)?
            } else {
                d
            };
            dates::dateadd(part, n, &d, ret)
        }
        "DATEDIFF" | "DATEDIFF_BIG" => {
            let part = dates::datepart_arg(args.first(), &name.to_ascii_lowercase())?;
            if args[1].is_null() || args[2].is_null() {
                return null;
            }
            let a = date_value(args, arg_types, 1, f)?;
            let b = date_value(args, arg_types, 2, f)?;
            let n = dates::datediff(part, &a, &b, name == "DATEDIFF_BIG")?;
            Ok(if name == "DATEDIFF" { Value::Int(n as i32) } else { Value::BigInt(n) })
        }
        "DATEPART" | "DATENAME" => {
            let part = dates::datepart_arg(args.first(), &name.to_ascii_lowercase())?;
            if args[1].is_null() {
                return null;
            }
            let d = date_value(args, arg_types, 1, f)?;
            dates::check_part(part, &util::value_type(&d), &name.to_ascii_lowercase())?;
            if name == "DATEPART" {
                Ok(Value::Int(dates::datepart(part, &d, cx.datefirst) as i32))
            } else {
                string_out(dates::datename(part, &d, cx.datefirst, types::lang::by_name(&cx.language)), ret)
            }
        }
        "DATETRUNC" => {
            let part = dates::datepart_arg(args.first(), "datetrunc")?;
            if args[1].is_null() {
                return null;
            }
            let d = date_value(args, arg_types, 1, f)?;
            let ty = util::value_type(&d);
            let v = dates::datetrunc(part, &d, &ty, cx.datefirst)?;
            convert::convert(&v, &ty, ret, None)
        }
        "DAY" | "MONTH" | "YEAR" => {
            if args[0].is_null() {
                return null;
            }
            let d = date_value(args, arg_types, 0, f)?;
            let part = match name {
                "DAY" => DatePart::Day,
                "MONTH" => DatePart::Month,
                _ => DatePart::Year,
            };
            Ok(Value::Int(dates::datepart(part, &d, cx.datefirst) as i32))
        }
        "EOMONTH" => {
            if args[0].is_null() {
                return null;
            }
            let d = date_value(args, arg_types, 0, f)?;
            let months = if args.len() == 2 { int(args, arg_types, 1)?.unwrap_or(0) } else { 0 };
            dates::eomonth(&d, months)
        }
        "DATEFROMPARTS"
        | "DATETIMEFROMPARTS"
        | "SMALLDATETIMEFROMPARTS"
        | "DATETIME2FROMPARTS"
        | "TIMEFROMPARTS"
        | "DATETIMEOFFSETFROMPARTS" => {
            // The precision argument (last, for the scaled types) is not a part.
            let count = match name {
                "DATETIME2FROMPARTS" => 7,
                "TIMEFROMPARTS" => 4,
                "DATETIMEOFFSETFROMPARTS" => 9,
                _ => args.len(),
            };
            let mut parts = Vec::with_capacity(count);
            for i in 0..count {
                parts.push(int_or_null!(i));
            }
            dates::from_parts(name, &parts, ret)
        }
        "SYSDATETIME" | "SYSUTCDATETIME" | "GETDATE" | "GETUTCDATE" | "CURRENT_TIMESTAMP" | "SYSDATETIMEOFFSET" => {
            dates::clock_function(name, cx)
        }
        "SWITCHOFFSET" | "TODATETIMEOFFSET" => {
            if args[0].is_null() || args[1].is_null() {
                return null;
            }
            let offset = dates::offset_arg(&args[1], name)?;
            let d = date_value(args, arg_types, 0, f)?;
            if name == "SWITCHOFFSET" {
                dates::switchoffset(&d, offset, ret)
            } else {
                dates::todatetimeoffset(&d, offset, ret)
            }
        }
        "ISDATE" => {
            let v = match &args[0] {
                Value::Null => return Ok(Value::Int(0)),
                Value::DateTime { .. } | Value::SmallDateTime { .. } => return Ok(Value::Int(1)),
                Value::Date(_) | Value::Time { .. } | Value::DateTime2 { .. } | Value::DateTimeOffset { .. } => {
                    return Err(invalid_arg(t0.name(), 1, "isdate"))
                }
                v => v,
            };
            if !matches!(v, Value::String(_)) && exact_parts(v).is_none_or(|(_, s)| s != 0) {
                return Ok(Value::Int(0));
            }
            let s = text_or_null!(0);
            let ok = !s.trim().is_empty() && types::parse(&s, &SqlType::DateTime).is_ok();
            Ok(Value::Int(i32::from(ok)))
        }
        "ISNUMERIC" => Ok(Value::Int(match &args[0] {
            Value::Null | Value::Bit(_) => 0,
            Value::String(s) => i32::from(isnumeric(s)),
            v if v.kind_name() != "nvarchar"
                && (exact_parts(v).is_some() || matches!(v, Value::Float(_) | Value::Real(_))) =>
            {
                1
            }
            _ => 0,
        })),
        // ---- system ----------------------------------------------------------------
        "ISNULL" => {
            let (i, v) = if args[0].is_null() { (1, &args[1]) } else { (0, &args[0]) };
            convert::convert(v, &arg_ty(arg_types, args, i), ret, None)
        }
        "NULLIF" => {
            if args[0].is_null() {
                return null;
            }
            if !args[1].is_null() {
                let (lt, rt) = (t0, arg_ty(arg_types, args, 1));
                let ty = ops::comparison_type(&lt, &rt)?;
                let a = convert::convert(&args[0], &lt, &ty, None)?;
                let b = convert::convert(&args[1], &rt, &ty, None)?;
                if ops::compare(&a, &b, &ty) == Some(Ordering::Equal) {
                    return null;
                }
            }
            convert::convert(&args[0], &t0, ret, None)
        }
        "CHOOSE" => {
            let i = int_or_null!(0);
            match usize::try_from(i).ok().filter(|&i| i >= 1 && i < args.len()) {
                Some(i) => convert::convert(&args[i], &arg_ty(arg_types, args, i), ret, None),
                None => null,
            }
        }
        "GREATEST" | "LEAST" => {
            let mut best: Option<Value> = None;
            for (i, v) in args.iter().enumerate() {
                if v.is_null() {
                    continue;
                }
                let c = convert::convert(v, &arg_ty(arg_types, args, i), ret, None)?;
                let better = match &best {
                    None => true,
                    Some(b) => {
                        let o = ops::compare(&c, b, ret);
                        if name == "GREATEST" {
                            o == Some(Ordering::Greater)
                        } else {
                            o == Some(Ordering::Less)
                        }
                    }
                };
                if better {
                    best = Some(c);
                }
            }
            Ok(best.unwrap_or(Value::Null))
        }
        "NEWID" => Ok(Value::Guid(newid())),
        "NEWSEQUENTIALID" => Ok(Value::Guid(newsequentialid())),
        "CHECKSUM" => Ok(Value::Int(checksum(args, false))),
        "BINARY_CHECKSUM" => Ok(Value::Int(checksum(args, true))),
        "SQL_VARIANT_PROPERTY" => {
            let prop = text_or_null!(1);
            match convert::convert(&args[0], &t0, &SqlType::Variant, None)? {
                Value::Variant(v) => variant_property(&v, &prop),
                _ => null,
            }
        }
        "TYPE_NAME" => {
            let id = int_or_null!(0);
            let name = types::sqltype::SYSTEM_TYPES
                .iter()
                .find(|(_, t)| i64::from(types::sqltype::user_type_id(t)) == id)
                .map(|(n, _)| *n);
            Ok(name.map_or(Value::Null, |n| Value::String(n.to_string())))
        }
        "TYPE_ID" => {
            let name = text_or_null!(0);
            let name = name.trim().trim_start_matches('[').trim_end_matches(']');
            let t = types::sqltype::SYSTEM_TYPES.iter().find(|(n, _)| n.eq_ignore_ascii_case(name));
            Ok(t.map_or(Value::Null, |(_, t)| Value::Int(types::sqltype::user_type_id(t))))
        }
        _ => Err(SqlError::new(195, 15, 10, format!("'{}' is not a recognized built-in function name.", f.0))),
    }
}

/// A date argument as a date/time value.
fn date_value(args: &[Value], arg_types: &[SqlType], i: usize, f: Builtin) -> Result<Value, SqlError> {
    dates::date_arg(&args[i], &arg_ty(arg_types, args, i), i + 1, f.0)
}

/// ABS, SIGN, CEILING, FLOOR on a value already in the widened type.
fn math_exact(name: &str, v: &Value, ret: &SqlType) -> Result<Value, SqlError> {
    let ovf = || overflow(ret.name());
    match *v {
        Value::Float(f) => Ok(Value::Float(match name {
            "ABS" => f.abs(),
            "SIGN" => {
                if f > 0.0 {
                    1.0
                } else if f < 0.0 {
                    -1.0
                } else {
                    0.0
                }
            }
            "CEILING" => f.ceil(),
            _ => f.floor(),
        })),
        Value::Decimal { value, scale, .. } => {
            let (precision, rscale) = ret.decimal_params().unwrap_or((38, scale));
            let p = types::decimal::pow10(scale);
            let r = match name {
                "ABS" => value.checked_abs().ok_or_else(ovf)?,
                "SIGN" => value.signum() * types::decimal::pow10(rscale),
                "CEILING" => value.div_euclid(p) + i128::from(value.rem_euclid(p) != 0),
                _ => value.div_euclid(p),
            };
            if !types::decimal::fits_precision(r, precision) {
                return Err(overflow("numeric"));
            }
            Ok(Value::Decimal { value: r, precision, scale: rscale })
        }
        Value::Money(m) => Ok(Value::Money(match name {
            "ABS" => m.checked_abs().ok_or_else(ovf)?,
            "SIGN" => m.signum() * 10_000,
            "CEILING" => {
                (m.div_euclid(10_000) + i64::from(m.rem_euclid(10_000) != 0)).checked_mul(10_000).ok_or_else(ovf)?
            }
            _ => m.div_euclid(10_000).checked_mul(10_000).ok_or_else(ovf)?,
        })),
        _ => {
            let (x, _) = exact_parts(v).ok_or_else(ovf)?;
            let r = match name {
                "ABS" => x.abs(),
                "SIGN" => x.signum(),
                _ => x,
            };
            convert::convert(&Value::BigInt(i64::try_from(r).map_err(|_| ovf())?), &SqlType::BigInt, ret, None)
                .map_err(|_| ovf())
        }
    }
}

/// PATINDEX: the 1-based start of the first match of a LIKE pattern (a leading % finds
/// the pattern anywhere), 0 when none.
fn patindex(pattern: &str, s: &str) -> Result<i64, SqlError> {
    let chars: Vec<char> = s.chars().collect();
    let Some(rest) = pattern.strip_prefix('%') else {
        return Ok(i64::from(ops::like(s, pattern, None)?));
    };
    let rest = rest.trim_start_matches('%');
    for i in 0..=chars.len() {
        let tail: String = chars[i..].iter().collect();
        if ops::like(&tail, rest, None)? {
            return Ok(i as i64 + 1);
        }
    }
    Ok(0)
}

/// Is the function nondeterministic per row (NEWID, RAND without seed)? Deterministic
/// functions of constants may be folded by the binder.
pub fn is_volatile(f: Builtin) -> bool {
    matches!(
        f.0,
        "NEWID"
            | "RAND"
            | "NEWSEQUENTIALID"
            | "GETDATE"
            | "SYSDATETIME"
            | "SYSUTCDATETIME"
            | "GETUTCDATE"
            | "CURRENT_TIMESTAMP"
            | "SYSDATETIMEOFFSET"
    )
}

/// RAISERROR's and FORMATMESSAGE's printf-style formatting: %s, %d, %i, %u, %x, %X, %o, %%, with width.
/// The first conversion specification RAISERROR does not accept (its types are d, i,
/// o, s, u, x and X): the text from its `%` through the type character.
pub fn printf_bad_spec(fmt: &str) -> Option<String> {
    let mut chars = fmt.char_indices().peekable();
    while let Some((start, c)) = chars.next() {
        if c != '%' {
            continue;
        }
        if chars.peek().map(|p| p.1) == Some('%') {
            chars.next();
            continue;
        }
        while chars.peek().is_some_and(|&(_, d)| {
            d.is_ascii_digit() || matches!(d, '-' | '+' | ' ' | '#' | '.' | '*' | 'l' | 'h' | 'I')
        }) {
            chars.next();
        }
        match chars.next() {
            Some((_, 'd' | 'i' | 'o' | 's' | 'u' | 'x' | 'X')) => {}
            Some((end, k)) => return Some(fmt[start..end + k.len_utf8()].to_string()),
            None => return Some(fmt[start..].to_string()),
        }
    }
    None
}

pub fn printf_message(fmt: &str, args: &[(Value, SqlType)]) -> String {
    let mut out = String::new();
    let mut chars = fmt.chars().peekable();
    let mut next = 0;
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        if chars.peek() == Some(&'%') {
            chars.next();
            out.push('%');
            continue;
        }
        // Flags, width, precision.
        let mut spec = String::new();
        while let Some(&d) = chars.peek() {
            if d.is_ascii_digit() || matches!(d, '-' | '+' | ' ' | '#' | '.' | '*' | 'l' | 'h' | 'I') {
                spec.push(d);
                chars.next();
            } else {
                break;
            }
        }
        let Some(kind) = chars.next() else { break };
        let arg = args.get(next);
        next += 1;
        let text = match arg {
            None => "(null)".to_string(),
            Some((Value::Null, _)) => "(null)".to_string(),
            Some((v, ty)) => match kind {
                'd' | 'i' | 'u' => Value::integer_part(v).map(|n| n.to_string()).unwrap_or_else(|| as_text(v, ty)),
                'x' => Value::integer_part(v).map(|n| format!("{n:x}")).unwrap_or_default(),
                'X' => Value::integer_part(v).map(|n| format!("{n:X}")).unwrap_or_default(),
                'o' => Value::integer_part(v).map(|n| format!("{n:o}")).unwrap_or_default(),
                _ => as_text(v, ty),
            },
        };
        let width: usize =
            spec.trim_start_matches(['-', '+', ' ', '#']).split('.').next().and_then(|w| w.parse().ok()).unwrap_or(0);
        if text.chars().count() < width {
            let zero = spec.trim_start_matches(['-', '+', ' ', '#']).starts_with('0') && !spec.starts_with('-');
            let pad = (if zero { "0" } else { " " }).repeat(width - text.chars().count());
            if spec.starts_with('-') {
                out.push_str(&text);
                out.push_str(&pad);
            } else {
                out.push_str(&pad);
                out.push_str(&text);
            }
        } else {
            out.push_str(&text);
        }
    }
    out
}

fn as_text(v: &Value, ty: &SqlType) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => match convert::convert(other, ty, &NVARCHAR_MAX, None) {
            Ok(Value::String(s)) => s,
            _ => String::new(),
        },
    }
}

/// COLLATIONPROPERTY(name, property) for CodePage, LCID, ComparisonStyle, Version and
/// SortId (an int; SQL Server's result is a sql_variant). TDSCollation, other properties
/// and unknown collations give NULL.
pub fn collation_property(name: &str, property: &str) -> Value {
    let Some(c) = types::Collation::from_name(name) else { return Value::Null };
    match property.to_ascii_lowercase().as_str() {
        "codepage" => Value::Int(i32::from(c.code_page())),
        "lcid" => Value::Int(c.lcid as i32),
        "comparisonstyle" => Value::Int(c.comparison_style() as i32),
        "sortid" => Value::Int(i32::from(c.sort_id)),
        "version" => Value::Int(i32::from(c.version)),
        _ => Value::Null,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use types::calendar;

    fn vc(n: i64) -> SqlType {
        SqlType::varchar(n).unwrap()
    }

    fn s(x: &str) -> Value {
        Value::String(x.into())
    }

    fn lit_of(args: &[(Value, SqlType)]) -> Vec<Option<Value>> {
        args.iter().map(|(v, _)| Some(v.clone())).collect()
    }

    /// Resolves, types and calls a function on constant arguments.
    fn run(name: &str, args: &[(Value, SqlType)]) -> Result<Value, SqlError> {
        let f = lookup(name).expect("known function");
        let types: Vec<SqlType> = args.iter().map(|(_, t)| *t).collect();
        let ret = return_type(f, &types, &lit_of(args))?;
        let vals: Vec<Value> = args.iter().map(|(v, _)| v.clone()).collect();
        call(f, &vals, &types, &ret, &FnContext::default())
    }

    fn rt(name: &str, args: &[(Value, SqlType)]) -> SqlType {
        let f = lookup(name).unwrap();
        let types: Vec<SqlType> = args.iter().map(|(_, t)| *t).collect();
        return_type(f, &types, &lit_of(args)).unwrap()
    }

    fn ok(name: &str, args: &[(Value, SqlType)]) -> Value {
        run(name, args).unwrap()
    }

    fn err(name: &str, args: &[(Value, SqlType)]) -> (i32, String) {
        match run(name, args) {
            Ok(v) => panic!("{name}: expected an error, got {v:?}"),
            Err(e) => (e.number, e.message),
        }
    }

    fn st(x: &str) -> (Value, SqlType) {
        (s(x), vc(x.len().max(1) as i64))
    }

    fn i(x: i32) -> (Value, SqlType) {
        (Value::Int(x), SqlType::Int)
    }

    fn fl(x: f64) -> (Value, SqlType) {
        (Value::Float(x), SqlType::Float)
    }

    fn dec(v: i128, p: u8, sc: u8) -> (Value, SqlType) {
        (Value::Decimal { value: v, precision: p, scale: sc }, SqlType::Decimal { precision: p, scale: sc })
    }

    fn d2(x: &str) -> (Value, SqlType) {
        (types::parse(x, &SqlType::DateTime2 { scale: 7 }).unwrap(), SqlType::DateTime2 { scale: 7 })
    }

    fn dt(x: &str) -> (Value, SqlType) {
        (types::parse(x, &SqlType::DateTime).unwrap(), SqlType::DateTime)
    }

    #[test]
    fn registry_and_arity() {
        assert_eq!(lookup("len"), Some(Builtin("LEN")));
        assert_eq!(lookup("NoSuchFunction"), None);
        let e = return_type(lookup("LEFT").unwrap(), &[vc(3)], &[None]).unwrap_err();
        assert_eq!((e.number, e.message.as_str()), (174, "The left function requires 2 argument(s)."));
        let e = return_type(lookup("CONCAT").unwrap(), &[vc(3)], &[None]).unwrap_err();
        assert_eq!((e.number, e.message.as_str()), (189, "The concat function requires 2 to 254 arguments."));
        let e = return_type(lookup("PI").unwrap(), &[SqlType::Int], &[None]).unwrap_err();
        assert_eq!(e.number, 174);
        let e = return_type(lookup("LEN").unwrap(), &[SqlType::Xml], &[None]).unwrap_err();
        assert_eq!(
            (e.number, e.message.as_str()),
            (8116, "Argument data type xml is invalid for argument 1 of len function.")
        );
        assert!(is_volatile(Builtin("NEWID")) && !is_volatile(Builtin("LEN")));
    }

    #[test]
    fn string_functions() {
        assert_eq!(ok("LEN", &[st("abc  ")]), Value::Int(3));
        assert_eq!(ok("LEN", &[(s("abc"), SqlType::VarChar { len: Length::Max })]), Value::BigInt(3));
        assert_eq!(ok("LEN", &[i(12345)]), Value::Int(5));
        assert_eq!(ok("LEN", &[(Value::Binary(b"AB  ".to_vec()), SqlType::varbinary(4).unwrap())]), Value::Int(2));
        assert_eq!(ok("LOWER", &[dt("2024-01-15 12:34:56")]), s("jan 15 2024 12:34pm"));
        assert_eq!(ok("DATALENGTH", &[st("abc  ")]), Value::Int(5));
        assert_eq!(ok("DATALENGTH", &[(s("abc"), SqlType::nvarchar(3).unwrap())]), Value::Int(6));
        assert_eq!(ok("DATALENGTH", &[i(1)]), Value::Int(4));
        assert_eq!(ok("DATALENGTH", &[dec(1, 20, 2)]), Value::Int(13));
        assert_eq!(ok("LEFT", &[st("abcdef"), i(3)]), s("abc"));
        assert_eq!(rt("LEFT", &[(s("x"), vc(10)), i(3)]), vc(10));
        assert_eq!(rt("LEFT", &[(s("x"), SqlType::char(10).unwrap()), i(3)]), vc(10));
        assert_eq!(ok("RIGHT", &[st("abcdef"), i(2)]), s("ef"));
        assert_eq!(ok("RIGHT", &[st("ab"), i(5)]), s("ab"));
        let (n, m) = err("LEFT", &[st("abc"), i(-1)]);
        assert_eq!((n, m.as_str()), (536, "Invalid length parameter passed to the left function."));
        assert_eq!(ok("SUBSTRING", &[st("abcdef"), i(2), i(3)]), s("bcd"));
        assert_eq!(ok("SUBSTRING", &[st("abc"), i(0), i(2)]), s("a"));
        assert_eq!(ok("SUBSTRING", &[st("abc"), i(5), i(2)]), s(""));
        assert_eq!(
            rt("SUBSTRING", &[(s("x"), SqlType::nvarchar(10).unwrap()), i(1), i(1)]),
            SqlType::nvarchar(10).unwrap()
        );
        assert_eq!(
            ok("SUBSTRING", &[(Value::Binary(vec![1, 2, 3]), SqlType::varbinary(3).unwrap()), i(2), i(5)]),
            Value::Binary(vec![2, 3])
        );
        assert_eq!(err("SUBSTRING", &[st("abc"), i(1), i(-1)]).0, 536);
        assert_eq!(err("SUBSTRING", &[i(5), i(1), i(1)]).0, 8116);
        assert_eq!(ok("UPPER", &[st("abc")]), s("ABC"));
        assert_eq!(ok("LOWER", &[st("ÀBC")]), s("àbc"));
        assert_eq!(ok("LTRIM", &[st("  a  ")]), s("a  "));
        assert_eq!(ok("RTRIM", &[st("  a  ")]), s("  a"));
        assert_eq!(ok("TRIM", &[st("  a  ")]), s("a"));
        assert_eq!(ok("TRIM", &[st("x."), st("..xax.")]), s("a"));
        assert_eq!(ok("LTRIM", &[st("xxa"), st("x")]), s("a"));
        assert_eq!(ok("REPLACE", &[st("ABCabc"), st("b"), st("x")]), s("AxCaxc"));
        assert_eq!(ok("REPLACE", &[st("abc"), (s(""), vc(1)), st("x")]), s("abc"));
        assert_eq!(rt("REPLACE", &[st("a"), st("b"), st("c")]), vc(8000));
        assert_eq!(ok("REPLICATE", &[st("ab"), i(3)]), s("ababab"));
        assert_eq!(ok("REPLICATE", &[st("ab"), i(-1)]), Value::Null);
        assert_eq!(ok("REPLICATE", &[st("ab"), i(10_000)]), s(&"ab".repeat(4000)));
        assert_eq!(ok("REVERSE", &[st("abc")]), s("cba"));
        assert_eq!(ok("CHARINDEX", &[st("B"), st("abcb")]), Value::Int(2));
        assert_eq!(ok("CHARINDEX", &[st("b"), st("abcb"), i(3)]), Value::Int(4));
        assert_eq!(ok("CHARINDEX", &[st("z"), st("abc")]), Value::Int(0));
        assert_eq!(ok("PATINDEX", &[st("%ter%"), st("interesting")]), Value::Int(3));
        assert_eq!(ok("PATINDEX", &[st("%[0-9]%"), st("abc5d")]), Value::Int(4));
        assert_eq!(ok("PATINDEX", &[st("ter%"), st("interesting")]), Value::Int(0));
        assert_eq!(ok("STUFF", &[st("abcdef"), i(2), i(3), st("ijklmn")]), s("aijklmnef"));
        assert_eq!(ok("STUFF", &[st("abc"), i(5), i(1), st("x")]), Value::Null);
        assert_eq!(ok("CONCAT", &[st("a"), (Value::Null, vc(1)), i(1)]), s("a1"));
        assert_eq!(
            rt("CONCAT", &[(s("a"), vc(3)), (s("b"), SqlType::nvarchar(4).unwrap())]),
            SqlType::nvarchar(7).unwrap()
        );
        assert_eq!(ok("CONCAT_WS", &[st(","), st("a"), (Value::Null, vc(1)), st("b")]), s("a,b"));
        assert_eq!(err("CONCAT_WS", &[st(","), st("a")]).0, 189);
        assert_eq!(ok("SPACE", &[i(3)]), s("   "));
        assert_eq!(ok("STR", &[fl(123.45), i(6), i(2)]), s("123.45"));
        assert_eq!(ok("STR", &[fl(123.45), i(5), i(2)]), s("123.5"));
        assert_eq!(ok("STR", &[fl(123.45)]), s("       123"));
        assert_eq!(ok("STR", &[fl(1_234_567.0), i(5)]), s("*****"));
        assert_eq!(ok("ASCII", &[st("A")]), Value::Int(65));
        assert_eq!(ok("ASCII", &[(s("€"), SqlType::nvarchar(1).unwrap())]), Value::Int(128));
        assert_eq!(ok("CHAR", &[i(65)]), s("A"));
        assert_eq!(ok("CHAR", &[i(256)]), Value::Null);
        assert_eq!(ok("NCHAR", &[i(8364)]), s("€"));
        assert_eq!(ok("UNICODE", &[(s("€"), SqlType::nvarchar(1).unwrap())]), Value::Int(8364));
        assert_eq!(ok("QUOTENAME", &[st("a]b")]), s("[a]]b]"));
        assert_eq!(ok("QUOTENAME", &[st("a'b"), st("'")]), s("'a''b'"));
        assert_eq!(ok("QUOTENAME", &[st("ab"), st("x")]), Value::Null);
        assert_eq!(ok("TRANSLATE", &[st("2*[3+4]"), st("[]"), st("()")]), s("2*(3+4)"));
        assert_eq!(err("TRANSLATE", &[st("a"), st("ab"), st("c")]).0, 9828);
        assert_eq!(ok("SOUNDEX", &[st("Robert")]), s("R163"));
        assert_eq!(ok("SOUNDEX", &[st("Ashcraft")]), s("A261"));
        assert_eq!(ok("DIFFERENCE", &[st("Green"), st("Greene")]), Value::Int(4));
        assert_eq!(ok("STRING_ESCAPE", &[st("a\"b/"), st("json")]), s("a\\\"b\\/"));
        assert_eq!(ok("FORMAT", &[fl(1234.5), st("N2")]), s("1,234.50"));
        assert_eq!(ok("FORMAT", &[d2("2024-01-02 03:04:05"), st("yyyy-MM-dd HH:mm:ss")]), s("2024-01-02 03:04:05"));
        assert_eq!(ok("FORMAT", &[i(5), st("D3"), st("en-US")]), s("005"));
        assert_eq!(err("FORMAT", &[i(5), st("D3"), st("xx-XX")]).0, 9818);
        assert_eq!(ok("FORMAT", &[(Value::Null, SqlType::Int), st("N")]), Value::Null);
    }

    #[test]
    fn math_functions() {
        assert_eq!(ok("ABS", &[i(-5)]), Value::Int(5));
        assert_eq!(ok("ABS", &[(Value::TinyInt(5), SqlType::TinyInt)]), Value::Int(5));
        assert_eq!(err("ABS", &[i(i32::MIN)]).0, 8115);
        assert_eq!(ok("ABS", &[dec(-125, 5, 2)]), Value::Decimal { value: 125, precision: 5, scale: 2 });
        assert_eq!(ok("ABS", &[st("-1.5")]), Value::Float(1.5));
        assert_eq!(ok("CEILING", &[dec(12_345, 5, 2)]), Value::Decimal { value: 124, precision: 5, scale: 0 });
        assert_eq!(ok("CEILING", &[dec(-12_345, 5, 2)]), Value::Decimal { value: -123, precision: 5, scale: 0 });
        assert_eq!(ok("FLOOR", &[dec(-12_345, 5, 2)]), Value::Decimal { value: -124, precision: 5, scale: 0 });
        assert_eq!(ok("FLOOR", &[fl(-1.5)]), Value::Float(-2.0));
        assert_eq!(ok("CEILING", &[(Value::Money(12_345), SqlType::Money)]), Value::Money(20_000));
        assert_eq!(ok("ROUND", &[dec(12_345, 5, 2), i(1)]), Value::Decimal { value: 12_350, precision: 5, scale: 2 });
        assert_eq!(
            ok("ROUND", &[dec(12_345, 5, 2), i(1), i(1)]),
            Value::Decimal { value: 12_340, precision: 5, scale: 2 }
        );
        assert_eq!(ok("ROUND", &[dec(74_858, 5, 2), i(-2)]), Value::Decimal { value: 70_000, precision: 5, scale: 2 });
        assert_eq!(ok("ROUND", &[dec(74_858, 5, 2), i(-4)]), Value::Decimal { value: 0, precision: 5, scale: 2 });
        assert_eq!(err("ROUND", &[dec(9_995, 4, 1), i(0)]).0, 8115);
        assert_eq!(ok("ROUND", &[i(125), i(-1)]), Value::Int(130));
        assert_eq!(ok("ROUND", &[i(-125), i(-1)]), Value::Int(-130));
        assert_eq!(ok("ROUND", &[fl(2.5), i(0)]), Value::Float(3.0));
        assert_eq!(ok("ROUND", &[fl(1.2345), i(2)]), Value::Float(1.23));
        assert_eq!(ok("POWER", &[i(2), i(10)]), Value::Int(1024));
        assert_eq!(ok("POWER", &[i(2), i(-1)]), Value::Int(0));
        assert_eq!(ok("POWER", &[dec(20, 2, 1), i(-2)]), Value::Decimal { value: 3, precision: 38, scale: 1 });
        assert_eq!(ok("POWER", &[fl(2.0), fl(0.5)]), Value::Float(2f64.sqrt()));
        assert_eq!(err("POWER", &[i(2), i(40)]).0, 232);
        assert_eq!(err("POWER", &[i(0), i(-1)]).0, 8134);
        assert_eq!(err("POWER", &[fl(-8.0), fl(0.5)]).0, 3623);
        assert_eq!(ok("SQRT", &[i(16)]), Value::Float(4.0));
        let (n, m) = err("SQRT", &[i(-1)]);
        assert_eq!((n, m.as_str()), (3623, "An invalid floating point operation occurred."));
        assert_eq!(ok("SQUARE", &[i(3)]), Value::Float(9.0));
        assert_eq!(ok("EXP", &[i(0)]), Value::Float(1.0));
        assert_eq!(err("EXP", &[i(1000)]).0, 8115);
        assert_eq!(ok("LOG", &[fl(std::f64::consts::E)]), Value::Float(1.0));
        assert_eq!(ok("LOG", &[i(8), i(2)]), Value::Float(3.0));
        assert_eq!(err("LOG", &[i(0)]).0, 3623);
        assert_eq!(err("LOG", &[i(8), i(1)]).0, 3623);
        assert_eq!(ok("LOG10", &[i(1000)]), Value::Float(3.0));
        assert_eq!(ok("PI", &[]), Value::Float(std::f64::consts::PI));
        assert_eq!(ok("SIGN", &[i(-7)]), Value::Int(-1));
        assert_eq!(ok("SIGN", &[dec(-125, 5, 2)]), Value::Decimal { value: -100, precision: 5, scale: 2 });
        assert_eq!(ok("SIN", &[i(0)]), Value::Float(0.0));
        assert_eq!(ok("COS", &[i(0)]), Value::Float(1.0));
        assert_eq!(ok("TAN", &[i(0)]), Value::Float(0.0));
        assert_eq!(ok("ASIN", &[i(1)]), Value::Float(std::f64::consts::FRAC_PI_2));
        assert_eq!(ok("ACOS", &[i(1)]), Value::Float(0.0));
        assert_eq!(err("ACOS", &[i(2)]).0, 3623);
        assert_eq!(ok("ATAN", &[i(0)]), Value::Float(0.0));
        assert_eq!(ok("ATN2", &[i(1), i(1)]), Value::Float(std::f64::consts::FRAC_PI_4));
        assert_eq!(err("ATN2", &[i(0), i(0)]).0, 3623);
        assert_eq!(ok("DEGREES", &[fl(std::f64::consts::PI)]), Value::Float(180.0));
        assert_eq!(ok("RADIANS", &[i(180)]), Value::Int(3));
        assert_eq!(rt("DEGREES", &[dec(1, 5, 2)]), SqlType::Decimal { precision: 38, scale: 18 });
        let a = ok("RAND", &[i(42)]);
        let b = ok("RAND", &[i(42)]);
        assert_eq!(a, b);
        let Value::Float(x) = ok("RAND", &[]) else { panic!() };
        assert!((0.0..1.0).contains(&x));
        assert_eq!(err("ABS", &[(Value::Date(0), SqlType::Date)]).0, 8116);
    }

    #[test]
    fn date_functions() {
        let day = (s("day"), vc(3));
        assert_eq!(ok("DATEADD", &[day.clone(), i(1), d2("2024-01-31")]), d2("2024-02-01").0);
        assert_eq!(rt("DATEADD", &[day.clone(), i(1), st("2024-01-31")]), SqlType::DateTime);
        assert_eq!(ok("DATEADD", &[day.clone(), i(1), st("2024-01-31")]), dt("2024-02-01").0);
        assert_eq!(ok("DATEADD", &[(s("mm"), vc(2)), i(1), dt("2024-01-31 10:00")]), dt("2024-02-29 10:00").0);
        assert_eq!(ok("DATEADD", &[day.clone(), i(1), i(0)]), dt("1900-01-02").0);
        let (n, m) = err("DATEADD", &[(s("foo"), vc(3)), i(1), d2("2024-01-31")]);
        assert_eq!((n, m.as_str()), (155, "'foo' is not a recognized dateadd option."));
        assert_eq!(err("DATEADD", &[day.clone(), st("1"), d2("2024-01-31")]).0, 8116);
        assert_eq!(err("DATEADD", &[(s("hour"), vc(4)), i(1), (Value::Date(0), SqlType::Date)]).0, 9810);
        assert_eq!(ok("DATEDIFF", &[(s("year"), vc(4)), st("2023-12-31"), st("2024-01-01")]), Value::Int(1));
        assert_eq!(ok("DATEDIFF", &[day.clone(), i(0), st("2024-01-31")]), Value::Int(45_320));
        assert_eq!(
            ok("DATEDIFF_BIG", &[(s("ns"), vc(2)), st("2000-01-01"), st("2024-01-01")]),
            Value::BigInt(757_382_400_000_000_000)
        );
        assert_eq!(err("DATEDIFF", &[(s("ns"), vc(2)), st("2000-01-01"), st("2024-01-01")]).0, 535);
        assert_eq!(ok("DATEPART", &[(s("year"), vc(4)), i(0)]), Value::Int(1900));
        assert_eq!(ok("DATEPART", &[(s("dw"), vc(2)), d2("2024-03-15")]), Value::Int(6));
        assert_eq!(ok("DATENAME", &[(s("month"), vc(5)), d2("2024-03-15")]), s("March"));
        assert_eq!(ok("DATENAME", &[(s("dw"), vc(2)), d2("2024-03-15")]), s("Friday"));
        assert_eq!(ok("DATETRUNC", &[(s("month"), vc(5)), d2("2024-03-15 10:00")]), d2("2024-03-01").0);
        assert_eq!(ok("YEAR", &[d2("2024-03-15")]), Value::Int(2024));
        assert_eq!(ok("MONTH", &[st("2024-03-15")]), Value::Int(3));
        assert_eq!(ok("DAY", &[i(0)]), Value::Int(1));
        assert_eq!(ok("EOMONTH", &[st("2024-02-10")]), Value::Date(calendar::days_from_civil(2024, 2, 29) as u32));
        assert_eq!(
            ok("EOMONTH", &[st("2024-02-10"), i(1)]),
            Value::Date(calendar::days_from_civil(2024, 3, 31) as u32)
        );
        assert_eq!(
            ok("DATEFROMPARTS", &[i(2024), i(2), i(29)]),
            Value::Date(calendar::days_from_civil(2024, 2, 29) as u32)
        );
        assert_eq!(ok("DATEFROMPARTS", &[i(2024), (Value::Null, SqlType::Int), i(29)]), Value::Null);
        assert_eq!(err("DATEFROMPARTS", &[i(2023), i(2), i(29)]).0, 289);
        assert_eq!(
            rt("DATETIME2FROMPARTS", &[i(2024), i(1), i(2), i(3), i(4), i(5), i(5), i(1)]),
            SqlType::DateTime2 { scale: 1 }
        );
        let e = return_type(
            lookup("DATETIME2FROMPARTS").unwrap(),
            &[SqlType::Int; 8],
            &[None, None, None, None, None, None, None, None],
        )
        .unwrap_err();
        assert_eq!(e.number, 10760);
        assert_eq!(
            ok("DATETIMEFROMPARTS", &[i(2024), i(1), i(2), i(3), i(4), i(5), i(997)]),
            dt("2024-01-02 03:04:05.997").0
        );
        assert_eq!(ok("SMALLDATETIMEFROMPARTS", &[i(2024), i(1), i(2), i(3), i(4)]).to_string(), "2024-01-02 03:04:00");
        assert_eq!(ok("TIMEFROMPARTS", &[i(3), i(4), i(5), i(12), i(2)]).to_string(), "03:04:05.12");
        let v = ok("DATETIMEOFFSETFROMPARTS", &[i(2024), i(1), i(2), i(3), i(4), i(5), i(0), i(-8), i(0), i(0)]);
        assert_eq!(v.to_string(), "2024-01-02 03:04:05 -08:00");
        assert_eq!(rt("GETDATE", &[]), SqlType::DateTime);
        assert_eq!(rt("SYSDATETIMEOFFSET", &[]), SqlType::DateTimeOffset { scale: 7 });
        assert!(matches!(ok("SYSDATETIME", &[]), Value::DateTime2 { scale: 7, .. }));
        let o = (
            types::parse("2024-01-02 03:04:05 +05:30", &SqlType::DateTimeOffset { scale: 0 }).unwrap(),
            SqlType::DateTimeOffset { scale: 0 },
        );
        assert_eq!(ok("SWITCHOFFSET", &[o, st("+00:00")]).to_string(), "2024-01-01 21:34:05 +00:00");
        assert_eq!(
            ok("TODATETIMEOFFSET", &[d2("2024-01-02 03:04:05"), i(-300)]).to_string(),
            "2024-01-02 03:04:05.0000000 -05:00"
        );
        assert_eq!(ok("ISDATE", &[st("2024-02-29")]), Value::Int(1));
        assert_eq!(ok("ISDATE", &[st("2023-02-29")]), Value::Int(0));
        assert_eq!(ok("ISDATE", &[st("")]), Value::Int(0));
        assert_eq!(ok("ISDATE", &[i(20_240_512)]), Value::Int(1));
        assert_eq!(ok("ISDATE", &[fl(1.5)]), Value::Int(0));
    }

    #[test]
    fn no_panics_across_functions() {
        let mut samples = crate::scalar::convert::tests::samples();
        samples.push((s("day"), vc(3)));
        samples.push((s("ns"), vc(2)));
        samples.push((Value::Int(-1), SqlType::Int));
        samples.push((Value::BigInt(i64::MIN), SqlType::BigInt));
        samples.push((Value::Null, SqlType::Int));
        let cx = FnContext::default();
        for &(name, lo, hi) in FUNCTIONS {
            let f = Builtin(name);
            for n in lo..=hi.min(lo + 1).min(10) {
                for start in 0..samples.len() {
                    let args: Vec<(Value, SqlType)> =
                        (0..n).map(|k| samples[(start + k * 7) % samples.len()].clone()).collect();
                    let types: Vec<SqlType> = args.iter().map(|(_, t)| *t).collect();
                    let vals: Vec<Value> = args.iter().map(|(v, _)| v.clone()).collect();
                    let lits: Vec<Option<Value>> = vals.iter().cloned().map(Some).collect();
                    let ret = return_type(f, &types, &lits).unwrap_or(SqlType::NVarChar { len: Length::Max });
                    let _ = call(f, &vals, &types, &ret, &cx);
                }
            }
        }
    }

    #[test]
    fn isnumeric_cases() {
        for yes in ["1", " 12 ", "-1.5", "$", "+", "-", ".", "1e5", "1d2", "1,000", "$1,234.56", "1.", "-$5"] {
            assert_eq!(ok("ISNUMERIC", &[st(yes)]), Value::Int(1), "{yes}");
        }
        for no in ["", "a", "1a", "0x1F", "1e", "e5", "1 2", "--1"] {
            assert_eq!(ok("ISNUMERIC", &[st(no)]), Value::Int(0), "{no}");
        }
        assert_eq!(ok("ISNUMERIC", &[i(5)]), Value::Int(1));
        assert_eq!(ok("ISNUMERIC", &[(Value::Bit(true), SqlType::Bit)]), Value::Int(0));
        assert_eq!(ok("ISNUMERIC", &[(Value::Null, SqlType::Int)]), Value::Int(0));
    }

    #[test]
    fn system_functions() {
        assert_eq!(ok("ISNULL", &[(Value::Null, SqlType::Int), st("5")]), Value::Int(5));
        assert_eq!(ok("ISNULL", &[(s("ab"), vc(2)), st("xyz")]), s("ab"));
        assert_eq!(ok("ISNULL", &[(Value::Null, vc(2)), st("xyz")]), s("xy"));
        assert_eq!(ok("NULLIF", &[i(5), i(5)]), Value::Null);
        assert_eq!(ok("NULLIF", &[i(5), i(6)]), Value::Int(5));
        assert_eq!(ok("NULLIF", &[st("a"), st("A")]), Value::Null);
        assert_eq!(ok("CHOOSE", &[i(2), st("a"), st("b")]), s("b"));
        assert_eq!(ok("CHOOSE", &[i(3), st("a"), st("b")]), Value::Null);
        assert_eq!(rt("CHOOSE", &[i(1), i(1), dec(15, 3, 1)]), SqlType::Decimal { precision: 11, scale: 1 });
        assert_eq!(ok("GREATEST", &[i(1), (Value::Null, SqlType::Int), i(3)]), Value::Int(3));
        assert_eq!(ok("LEAST", &[i(1), fl(0.5)]), Value::Float(0.5));
        let Value::Guid(g) = ok("NEWID", &[]) else { panic!() };
        assert_eq!(types::format::format_guid(&g).as_bytes()[14], b'4');
        assert_ne!(ok("NEWID", &[]), ok("NEWID", &[]));
        let a = ok("NEWSEQUENTIALID", &[]);
        let b = ok("NEWSEQUENTIALID", &[]);
        assert_eq!(types::compare(&a, &b), Some(Ordering::Less));
        assert_eq!(ok("CHECKSUM", &[st("abc")]), ok("CHECKSUM", &[st("ABC  ")]));
        assert_ne!(ok("BINARY_CHECKSUM", &[st("abc")]), ok("BINARY_CHECKSUM", &[st("ABC")]));
        assert_eq!(ok("CHECKSUM", &[dec(100, 10, 2)]), ok("CHECKSUM", &[dec(1, 10, 0)]));
        assert_ne!(ok("CHECKSUM", &[i(1), i(2)]), ok("CHECKSUM", &[i(2), i(1)]));
        assert_eq!(ok("CHECKSUM", &[i(7)]), ok("CHECKSUM", &[i(7)]));
    }
}
