//! `SqlType`: the descriptor of a SQL Server data type (what a column, variable or
//! expression is declared as), with SQL Server's parameter limits, spelling, on-disk sizes
//! and data type precedence.

use std::fmt;

use crate::error::SqlError;

/// Largest n in char(n), varchar(n), binary(n), varbinary(n).
pub const MAX_BYTE_LEN: u16 = 8000;
/// Largest n in nchar(n) and nvarchar(n) (characters, i.e. UTF-16 code units).
pub const MAX_NCHAR_LEN: u16 = 4000;
/// Largest value of a MAX type or xml, in bytes: 2^31 - 1.
pub const MAX_LOB_BYTES: u32 = i32::MAX as u32;
/// Largest decimal/numeric precision.
pub const MAX_DECIMAL_PRECISION: u8 = 38;
/// Largest fractional-seconds scale of time, datetime2 and datetimeoffset.
pub const MAX_TIME_SCALE: u8 = 7;

/// The declared length of a variable-length type: a bound n, or MAX (stored out of row when
/// large, up to 2^31 - 1 bytes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Length {
    Bounded(u16),
    Max,
}

/// A SQL Server data type. Lengths of character types count what SQL Server counts: bytes
/// for char/varchar (one byte per character in code page 1252) and UTF-16 code units for
/// nchar/nvarchar. Build parameterised types with the checked constructors
/// ([`SqlType::decimal`], [`SqlType::varchar`], ...) so that out-of-range parameters get
/// SQL Server's errors.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SqlType {
    Bit,
    TinyInt,
    SmallInt,
    Int,
    BigInt,
    /// decimal(p, s): 1 <= p <= 38, 0 <= s <= p.
    Decimal {
        precision: u8,
        scale: u8,
    },
    /// numeric(p, s): the same type as decimal under another name, kept so that metadata
    /// shows what the user declared.
    Numeric {
        precision: u8,
        scale: u8,
    },
    Money,
    SmallMoney,
    /// float(1..=24), stored in 4 bytes.
    Real,
    /// float(25..=53), stored in 8 bytes; plain `float` is float(53).
    Float,
    Date,
    Time {
        scale: u8,
    },
    DateTime,
    SmallDateTime,
    DateTime2 {
        scale: u8,
    },
    DateTimeOffset {
        scale: u8,
    },
    Char {
        len: u16,
    },
    VarChar {
        len: Length,
    },
    NChar {
        len: u16,
    },
    NVarChar {
        len: Length,
    },
    Binary {
        len: u16,
    },
    VarBinary {
        len: Length,
    },
    UniqueIdentifier,
    /// xml, stored as UTF-16 text for now (SQL Server stores a binary XML format).
    Xml,
    /// sql_variant: a value of any other type except the MAX types, xml and sql_variant
    /// itself, together with that base type ([`crate::Value::Variant`]); at most 8000
    /// bytes of value.
    Variant,
    /// text, ntext and image: SQL Server's deprecated large-object types. Values and
    /// storage are those of varchar(max), nvarchar(max) and varbinary(max)
    /// ([`SqlType::max_equivalent`]); the types differ in what they allow (no comparison,
    /// sorting, grouping, index keys or local variables) and in how TDS and the catalog
    /// describe them.
    Text,
    NText,
    Image,
    /// hierarchyid: a node's path in a tree, stored in SQL Server's binary form
    /// ([`crate::hierarchyid`]; values are `Value::Binary` of that form, at most 892
    /// bytes). A CLR system type: sent over TDS as a UDT.
    HierarchyId,
    /// geometry and geography: SQL Server's serialization ([`crate::spatial`]) in a
    /// `Value::Binary`, stored as varbinary(max) ([`SqlType::max_equivalent`]). CLR system
    /// types: sent over TDS as UDTs.
    Geometry,
    Geography,
}

/// Largest value of a sql_variant's base type in bytes, and the most a stored
/// sql_variant takes (the value plus its base type header; see [`crate::encoding`]).
pub const MAX_VARIANT_VALUE_BYTES: u16 = 8000;
pub const MAX_VARIANT_BYTES: u32 = 8016;

/// A parameter written after a type name: `decimal(18, 2)` has `[Num(18), Num(2)]`,
/// `varchar(max)` has `[Max]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TypeArg {
    Num(i64),
    Max,
}

fn invalid_length(n: i64) -> SqlError {
    // SQL Server prefixes "Line N: "; the executor adds the line itself.
    SqlError::new(1001, 15, 1, format!("Length or precision specification {n} is invalid."))
}

fn precision_too_large(p: i64, max: u8) -> SqlError {
    SqlError::new(
        2750,
        16,
        1,
        format!(
            "Column or parameter #1: Specified column precision {p} is greater than the maximum precision of {max}."
        ),
    )
}

fn size_too_large(n: i64, type_name: &str, max: u16) -> SqlError {
    SqlError::new(
        131,
        15,
        3,
        format!(
            "The size ({n}) given to the type '{type_name}' exceeds the maximum allowed for any data type ({max})."
        ),
    )
}

fn check_len(n: i64, type_name: &str, max: u16) -> Result<u16, SqlError> {
    if n < 1 {
        return Err(invalid_length(n));
    }
    if n > i64::from(max) {
        return Err(size_too_large(n, type_name, max));
    }
    Ok(n as u16)
}

fn check_time_scale(scale: i64) -> Result<u8, SqlError> {
    if !(0..=i64::from(MAX_TIME_SCALE)).contains(&scale) {
        return Err(SqlError::new(1002, 15, 1, format!("Specified scale {scale} is invalid.")));
    }
    Ok(scale as u8)
}

fn check_decimal(precision: i64, scale: i64) -> Result<(u8, u8), SqlError> {
    if precision < 1 {
        return Err(invalid_length(precision));
    }
    if precision > i64::from(MAX_DECIMAL_PRECISION) {
        return Err(precision_too_large(precision, MAX_DECIMAL_PRECISION));
    }
    if scale < 0 || scale > precision {
        // Msg 192 is what DECLARE reports; CREATE TABLE reports 183 with the column name,
        // which the binder can substitute.
        return Err(SqlError::new(192, 15, 1, "The scale must be less than or equal to the precision."));
    }
    Ok((precision as u8, scale as u8))
}

impl SqlType {
    /// decimal(p, s) with SQL Server's checks (2750 for p > 38, 1001 for p < 1, 192 for s > p).
    pub fn decimal(precision: i64, scale: i64) -> Result<SqlType, SqlError> {
        let (precision, scale) = check_decimal(precision, scale)?;
        Ok(SqlType::Decimal { precision, scale })
    }

    /// numeric(p, s), checked like decimal.
    pub fn numeric(precision: i64, scale: i64) -> Result<SqlType, SqlError> {
        let (precision, scale) = check_decimal(precision, scale)?;
        Ok(SqlType::Numeric { precision, scale })
    }

    /// float(n): n in 1..=24 is real, 25..=53 is float (SQL Server keeps only these two).
    pub fn float(n: i64) -> Result<SqlType, SqlError> {
        match n {
            1..=24 => Ok(SqlType::Real),
            25..=53 => Ok(SqlType::Float),
            n if n > 53 => Err(precision_too_large(n, 53)),
            n => Err(invalid_length(n)),
        }
    }

    pub fn time(scale: i64) -> Result<SqlType, SqlError> {
        Ok(SqlType::Time { scale: check_time_scale(scale)? })
    }

    pub fn datetime2(scale: i64) -> Result<SqlType, SqlError> {
        Ok(SqlType::DateTime2 { scale: check_time_scale(scale)? })
    }

    pub fn datetimeoffset(scale: i64) -> Result<SqlType, SqlError> {
        Ok(SqlType::DateTimeOffset { scale: check_time_scale(scale)? })
    }

    pub fn char(n: i64) -> Result<SqlType, SqlError> {
        Ok(SqlType::Char { len: check_len(n, "char", MAX_BYTE_LEN)? })
    }

    pub fn varchar(n: i64) -> Result<SqlType, SqlError> {
        Ok(SqlType::VarChar { len: Length::Bounded(check_len(n, "varchar", MAX_BYTE_LEN)?) })
    }

    pub fn nchar(n: i64) -> Result<SqlType, SqlError> {
        Ok(SqlType::NChar { len: check_len(n, "nchar", MAX_NCHAR_LEN)? })
    }

    pub fn nvarchar(n: i64) -> Result<SqlType, SqlError> {
        Ok(SqlType::NVarChar { len: Length::Bounded(check_len(n, "nvarchar", MAX_NCHAR_LEN)?) })
    }

    pub fn binary(n: i64) -> Result<SqlType, SqlError> {
        Ok(SqlType::Binary { len: check_len(n, "binary", MAX_BYTE_LEN)? })
    }

    pub fn varbinary(n: i64) -> Result<SqlType, SqlError> {
        Ok(SqlType::VarBinary { len: Length::Bounded(check_len(n, "varbinary", MAX_BYTE_LEN)?) })
    }

    /// Resolves a type name as written in T-SQL (case-insensitive, with the ISO synonyms
    /// `integer`, `dec`, `double precision`, `character varying`, `national char`, ...)
    /// and its parameters. Omitted parameters take SQL Server's declaration defaults:
    /// decimal(18, 0), float(53), scale 7 for the time types, length 1 for character and
    /// binary types. (CAST and CONVERT default to length 30, which the caller supplies.)
    /// An unknown name is Msg 2715.
    pub fn from_name(name: &str, args: &[TypeArg]) -> Result<SqlType, SqlError> {
        let lower: String = name.split_whitespace().collect::<Vec<_>>().join(" ").to_ascii_lowercase();
        let too_many = || {
            SqlError::new(
                2716,
                16,
                1,
                format!("Column, parameter, or variable #1: Cannot specify a column width on data type {lower}."),
            )
        };
        let num = |i: usize, default: i64| -> Result<i64, SqlError> {
            match args.get(i) {
                None => Ok(default),
                Some(TypeArg::Num(n)) => Ok(*n),
                Some(TypeArg::Max) => Err(invalid_length(0)),
            }
        };
        let no_args = |t: SqlType| {
            if args.is_empty() {
                Ok(t)
            } else {
                Err(too_many())
            }
        };
        let at_most = |n: usize| {
            if args.len() <= n {
                Ok(())
            } else {
                Err(too_many())
            }
        };
        let var_len = |max_allowed: bool| -> Result<Option<i64>, SqlError> {
            at_most(1)?;
            match args.first() {
                None => Ok(Some(1)),
                Some(TypeArg::Num(n)) => Ok(Some(*n)),
                Some(TypeArg::Max) if max_allowed => Ok(None),
                Some(TypeArg::Max) => Err(invalid_length(0)),
            }
        };
        match lower.as_str() {
            "bit" => no_args(SqlType::Bit),
            "tinyint" => no_args(SqlType::TinyInt),
            "smallint" => no_args(SqlType::SmallInt),
            "int" | "integer" => no_args(SqlType::Int),
            "bigint" => no_args(SqlType::BigInt),
            "decimal" | "dec" => {
                at_most(2)?;
                SqlType::decimal(num(0, 18)?, num(1, 0)?)
            }
            "numeric" => {
                at_most(2)?;
                SqlType::numeric(num(0, 18)?, num(1, 0)?)
            }
            "money" => no_args(SqlType::Money),
            "smallmoney" => no_args(SqlType::SmallMoney),
            "float" => {
                at_most(1)?;
                SqlType::float(num(0, 53)?)
            }
            "double precision" => no_args(SqlType::Float),
            "real" => no_args(SqlType::Real),
            "date" => no_args(SqlType::Date),
            "time" => {
                at_most(1)?;
                SqlType::time(num(0, 7)?)
            }
            "datetime" => no_args(SqlType::DateTime),
            "smalldatetime" => no_args(SqlType::SmallDateTime),
            "datetime2" => {
                at_most(1)?;
                SqlType::datetime2(num(0, 7)?)
            }
            "datetimeoffset" => {
                at_most(1)?;
                SqlType::datetimeoffset(num(0, 7)?)
            }
            "char" | "character" => SqlType::char(var_len(false)?.unwrap_or(1)),
            "varchar" | "char varying" | "character varying" => match var_len(true)? {
                Some(n) => SqlType::varchar(n),
                None => Ok(SqlType::VarChar { len: Length::Max }),
            },
            "nchar" | "national char" | "national character" => SqlType::nchar(var_len(false)?.unwrap_or(1)),
            "nvarchar" | "national char varying" | "national character varying" => match var_len(true)? {
                Some(n) => SqlType::nvarchar(n),
                None => Ok(SqlType::NVarChar { len: Length::Max }),
            },
            "binary" => SqlType::binary(var_len(false)?.unwrap_or(1)),
            "varbinary" | "binary varying" => match var_len(true)? {
                Some(n) => SqlType::varbinary(n),
                None => Ok(SqlType::VarBinary { len: Length::Max }),
            },
            // sysname is SQL Server's built-in alias for nvarchar(128) NOT NULL.
            "sysname" => no_args(SqlType::NVarChar { len: Length::Bounded(128) }),
            "uniqueidentifier" => no_args(SqlType::UniqueIdentifier),
            "xml" => no_args(SqlType::Xml),
            "sql_variant" => no_args(SqlType::Variant),
            "text" => no_args(SqlType::Text),
            "ntext" | "national text" => no_args(SqlType::NText),
            "image" => no_args(SqlType::Image),
            "hierarchyid" => no_args(SqlType::HierarchyId),
            "geometry" => no_args(SqlType::Geometry),
            "geography" => no_args(SqlType::Geography),
            _ => Err(SqlError::new(
                2715,
                16,
                6,
                format!("Column, parameter, or variable #1: Cannot find data type {name}."),
            )),
        }
    }

    /// SQL Server's name of the type without parameters, as in sys.types.
    pub fn name(&self) -> &'static str {
        match self {
            SqlType::Bit => "bit",
            SqlType::TinyInt => "tinyint",
            SqlType::SmallInt => "smallint",
            SqlType::Int => "int",
            SqlType::BigInt => "bigint",
            SqlType::Decimal { .. } => "decimal",
            SqlType::Numeric { .. } => "numeric",
            SqlType::Money => "money",
            SqlType::SmallMoney => "smallmoney",
            SqlType::Real => "real",
            SqlType::Float => "float",
            SqlType::Date => "date",
            SqlType::Time { .. } => "time",
            SqlType::DateTime => "datetime",
            SqlType::SmallDateTime => "smalldatetime",
            SqlType::DateTime2 { .. } => "datetime2",
            SqlType::DateTimeOffset { .. } => "datetimeoffset",
            SqlType::Char { .. } => "char",
            SqlType::VarChar { .. } => "varchar",
            SqlType::NChar { .. } => "nchar",
            SqlType::NVarChar { .. } => "nvarchar",
            SqlType::Binary { .. } => "binary",
            SqlType::VarBinary { .. } => "varbinary",
            SqlType::UniqueIdentifier => "uniqueidentifier",
            SqlType::Xml => "xml",
            SqlType::Variant => "sql_variant",
            SqlType::Text => "text",
            SqlType::NText => "ntext",
            SqlType::Image => "image",
            SqlType::HierarchyId => "hierarchyid",
            SqlType::Geometry => "geometry",
            SqlType::Geography => "geography",
        }
    }

    /// The CLR system types: hierarchyid, geometry, geography.
    pub fn is_clr(&self) -> bool {
        matches!(self, SqlType::HierarchyId | SqlType::Geometry | SqlType::Geography)
    }

    /// geometry, geography.
    pub fn is_spatial(&self) -> bool {
        matches!(self, SqlType::Geometry | SqlType::Geography)
    }

    /// text, ntext, image.
    pub fn is_legacy_lob(&self) -> bool {
        matches!(self, SqlType::Text | SqlType::NText | SqlType::Image)
    }

    /// The MAX type whose values and storage a legacy large-object type shares
    /// (varchar(max) for text, nvarchar(max) for ntext, varbinary(max) for image); any
    /// other type is itself.
    pub fn max_equivalent(&self) -> SqlType {
        match self {
            SqlType::Text => SqlType::VarChar { len: Length::Max },
            SqlType::NText => SqlType::NVarChar { len: Length::Max },
            SqlType::Image | SqlType::Geometry | SqlType::Geography => SqlType::VarBinary { len: Length::Max },
            t => *t,
        }
    }

    /// Values that may be stored off the row: the MAX types, xml, text, ntext, image.
    pub fn is_lob(&self) -> bool {
        self.is_max() || self.is_legacy_lob()
    }

    /// On-disk length of a fixed-length type in bytes (what the fixed part of a row
    /// reserves); None for variable-length types. Follows SQL Server's storage sizes:
    /// decimal 5/9/13/17 by precision, time 3/4/5 by scale, datetime2 time + 3,
    /// datetimeoffset datetime2 + 2, nchar(n) 2n bytes. bit takes a whole byte here (SQL
    /// Server packs up to 8 bit columns into one byte; the row format may do the same).
    pub fn fixed_storage_len(&self) -> Option<u16> {
        Some(match *self {
            SqlType::Bit | SqlType::TinyInt => 1,
            SqlType::SmallInt => 2,
            SqlType::Int | SqlType::SmallMoney | SqlType::Real | SqlType::SmallDateTime => 4,
            SqlType::BigInt | SqlType::Money | SqlType::Float | SqlType::DateTime => 8,
            SqlType::Decimal { precision, .. } | SqlType::Numeric { precision, .. } => {
                1 + u16::from(decimal_magnitude_len(precision))
            }
            SqlType::Date => 3,
            SqlType::Time { scale } => u16::from(time_storage_len(scale)),
            SqlType::DateTime2 { scale } => u16::from(time_storage_len(scale)) + 3,
            SqlType::DateTimeOffset { scale } => u16::from(time_storage_len(scale)) + 5,
            SqlType::Char { len } | SqlType::Binary { len } => len,
            SqlType::NChar { len } => len.saturating_mul(2),
            SqlType::UniqueIdentifier => 16,
            SqlType::VarChar { .. }
            | SqlType::NVarChar { .. }
            | SqlType::VarBinary { .. }
            | SqlType::Xml
            | SqlType::Variant
            | SqlType::Text
            | SqlType::NText
            | SqlType::Image
            | SqlType::HierarchyId
            | SqlType::Geometry
            | SqlType::Geography => return None,
        })
    }

    /// Whether the type is declared (MAX) (or is xml, which has the same limits). Not
    /// text, ntext or image (see [`SqlType::is_lob`]).
    pub fn is_max(&self) -> bool {
        matches!(
            self,
            SqlType::VarChar { len: Length::Max }
                | SqlType::NVarChar { len: Length::Max }
                | SqlType::VarBinary { len: Length::Max }
                | SqlType::Xml
        )
    }

    /// The most bytes a value of this type occupies on disk: the fixed length, 2n for
    /// nvarchar(n), n for varchar(n)/varbinary(n), 2^31 - 1 for MAX types and xml.
    pub fn max_len(&self) -> u32 {
        match *self {
            SqlType::VarChar { len: Length::Bounded(n) } | SqlType::VarBinary { len: Length::Bounded(n) } => {
                u32::from(n)
            }
            SqlType::NVarChar { len: Length::Bounded(n) } => 2 * u32::from(n),
            SqlType::VarChar { len: Length::Max }
            | SqlType::NVarChar { len: Length::Max }
            | SqlType::VarBinary { len: Length::Max }
            | SqlType::Xml
            | SqlType::Text
            | SqlType::NText
            | SqlType::Image => MAX_LOB_BYTES,
            SqlType::Variant => MAX_VARIANT_BYTES,
            SqlType::HierarchyId => crate::hierarchyid::MAX_BYTES as u32,
            SqlType::Geometry | SqlType::Geography => MAX_LOB_BYTES,
            _ => u32::from(self.fixed_storage_len().unwrap_or(0)),
        }
    }

    /// SQL Server's data type precedence as its position in the documented list (1 is the
    /// highest): when an operator combines two types, the one with the smaller number wins
    /// and the other is converted to it. The list, highest first: (user-defined,
    /// sql_variant,) xml, datetimeoffset, datetime2, datetime, smalldatetime, date, time,
    /// float, real, decimal, money, smallmoney, bigint, int, smallint, tinyint, bit,
    /// (ntext, text, image, timestamp,) uniqueidentifier, nvarchar, nchar, varchar, char,
    /// varbinary, binary. Types Mesquite does not have keep their slots so the numbers
    /// match the documentation (ntext 20, text 21, image 22).
    pub fn precedence(&self) -> u8 {
        match self {
            // CLR types are first in the list (user-defined data types).
            SqlType::HierarchyId | SqlType::Geometry | SqlType::Geography => 1,
            SqlType::Variant => 2,
            SqlType::Xml => 3,
            SqlType::DateTimeOffset { .. } => 4,
            SqlType::DateTime2 { .. } => 5,
            SqlType::DateTime => 6,
            SqlType::SmallDateTime => 7,
            SqlType::Date => 8,
            SqlType::Time { .. } => 9,
            SqlType::Float => 10,
            SqlType::Real => 11,
            SqlType::Decimal { .. } | SqlType::Numeric { .. } => 12,
            SqlType::Money => 13,
            SqlType::SmallMoney => 14,
            SqlType::BigInt => 15,
            SqlType::Int => 16,
            SqlType::SmallInt => 17,
            SqlType::TinyInt => 18,
            SqlType::Bit => 19,
            SqlType::NText => 20,
            SqlType::Text => 21,
            SqlType::Image => 22,
            SqlType::UniqueIdentifier => 24,
            SqlType::NVarChar { .. } => 25,
            SqlType::NChar { .. } => 26,
            SqlType::VarChar { .. } => 27,
            SqlType::Char { .. } => 28,
            SqlType::VarBinary { .. } => 29,
            SqlType::Binary { .. } => 30,
        }
    }

    /// Whether `self` wins over `other` in data type precedence.
    pub fn has_higher_precedence_than(&self, other: &SqlType) -> bool {
        self.precedence() < other.precedence()
    }

    /// (precision, scale) of decimal/numeric.
    pub fn decimal_params(&self) -> Option<(u8, u8)> {
        match *self {
            SqlType::Decimal { precision, scale } | SqlType::Numeric { precision, scale } => Some((precision, scale)),
            _ => None,
        }
    }

    /// Fractional-seconds scale of time, datetime2 and datetimeoffset.
    pub fn time_scale(&self) -> Option<u8> {
        match *self {
            SqlType::Time { scale } | SqlType::DateTime2 { scale } | SqlType::DateTimeOffset { scale } => Some(scale),
            _ => None,
        }
    }

    /// Can a sql_variant hold a value of this type? Not the MAX types, xml or
    /// sql_variant itself, nor text, ntext and image (SQL Server also excludes timestamp
    /// and CLR types, which Mesquite does not have).
    pub fn is_variant_base(&self) -> bool {
        !self.is_lob() && !self.is_clr() && *self != SqlType::Variant
    }

    pub fn is_fixed_length(&self) -> bool {
        self.fixed_storage_len().is_some()
    }

    /// char, varchar, nchar, nvarchar, text, ntext (and xml, which is text here).
    pub fn is_character(&self) -> bool {
        matches!(
            self,
            SqlType::Char { .. }
                | SqlType::VarChar { .. }
                | SqlType::NChar { .. }
                | SqlType::NVarChar { .. }
                | SqlType::Xml
                | SqlType::Text
                | SqlType::NText
        )
    }

    /// nchar, nvarchar, ntext and xml: stored as UTF-16.
    pub fn is_unicode(&self) -> bool {
        matches!(self, SqlType::NChar { .. } | SqlType::NVarChar { .. } | SqlType::Xml | SqlType::NText)
    }

    /// binary, varbinary, image.
    pub fn is_binary(&self) -> bool {
        matches!(self, SqlType::Binary { .. } | SqlType::VarBinary { .. } | SqlType::Image)
    }

    /// bit, the integers, decimal/numeric, money, smallmoney, real, float.
    pub fn is_numeric(&self) -> bool {
        self.is_exact_numeric() || matches!(self, SqlType::Real | SqlType::Float)
    }

    pub fn is_exact_numeric(&self) -> bool {
        matches!(
            self,
            SqlType::Bit
                | SqlType::TinyInt
                | SqlType::SmallInt
                | SqlType::Int
                | SqlType::BigInt
                | SqlType::Decimal { .. }
                | SqlType::Numeric { .. }
                | SqlType::Money
                | SqlType::SmallMoney
        )
    }

    /// date, time, datetime, smalldatetime, datetime2, datetimeoffset.
    pub fn is_temporal(&self) -> bool {
        matches!(
            self,
            SqlType::Date
                | SqlType::Time { .. }
                | SqlType::DateTime
                | SqlType::SmallDateTime
                | SqlType::DateTime2 { .. }
                | SqlType::DateTimeOffset { .. }
        )
    }
}

/// Bytes of decimal magnitude for a precision: 4, 8, 12 or 16 (SQL Server's 5/9/13/17
/// storage sizes minus the sign byte).
pub fn decimal_magnitude_len(precision: u8) -> u8 {
    match precision {
        0..=9 => 4,
        10..=19 => 8,
        20..=28 => 12,
        _ => 16,
    }
}

/// Bytes of a time value at a scale: 3 for 0..=2, 4 for 3..=4, 5 for 5..=7.
pub fn time_storage_len(scale: u8) -> u8 {
    match scale {
        0..=2 => 3,
        3..=4 => 4,
        _ => 5,
    }
}

impl fmt::Display for SqlType {
    /// SQL Server's spelling with parameters: `decimal(18,2)`, `nvarchar(max)`,
    /// `datetime2(7)`, `char(10)`; `float` and `real` without n.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = self.name();
        match *self {
            SqlType::Decimal { precision, scale } | SqlType::Numeric { precision, scale } => {
                write!(f, "{name}({precision},{scale})")
            }
            SqlType::Time { scale } | SqlType::DateTime2 { scale } | SqlType::DateTimeOffset { scale } => {
                write!(f, "{name}({scale})")
            }
            SqlType::Char { len } | SqlType::NChar { len } | SqlType::Binary { len } => {
                write!(f, "{name}({len})")
            }
            SqlType::VarChar { len } | SqlType::NVarChar { len } | SqlType::VarBinary { len } => match len {
                Length::Bounded(n) => write!(f, "{name}({n})"),
                Length::Max => write!(f, "{name}(max)"),
            },
            _ => f.write_str(name),
        }
    }
}

// ---------------------------------------------------------------------------------------
// Catalog facts: how sys.types, sys.columns and TYPE_NAME/TYPE_ID describe a type
// ---------------------------------------------------------------------------------------

/// The system types of sys.types by name (each with its widest parameters, as
/// sys.types shows them); TYPE_NAME and TYPE_ID read the same list.
pub const SYSTEM_TYPES: &[(&str, SqlType)] = &[
    ("bigint", SqlType::BigInt),
    ("binary", SqlType::Binary { len: 8000 }),
    ("bit", SqlType::Bit),
    ("char", SqlType::Char { len: 8000 }),
    ("date", SqlType::Date),
    ("datetime", SqlType::DateTime),
    ("datetime2", SqlType::DateTime2 { scale: 7 }),
    ("datetimeoffset", SqlType::DateTimeOffset { scale: 7 }),
    ("decimal", SqlType::Decimal { precision: 38, scale: 38 }),
    ("float", SqlType::Float),
    ("geography", SqlType::Geography),
    ("geometry", SqlType::Geometry),
    ("hierarchyid", SqlType::HierarchyId),
    ("image", SqlType::Image),
    ("int", SqlType::Int),
    ("money", SqlType::Money),
    ("nchar", SqlType::NChar { len: 4000 }),
    ("ntext", SqlType::NText),
    ("numeric", SqlType::Numeric { precision: 38, scale: 38 }),
    ("nvarchar", SqlType::NVarChar { len: Length::Bounded(4000) }),
    ("real", SqlType::Real),
    ("smalldatetime", SqlType::SmallDateTime),
    ("smallint", SqlType::SmallInt),
    ("smallmoney", SqlType::SmallMoney),
    ("sql_variant", SqlType::Variant),
    ("text", SqlType::Text),
    ("time", SqlType::Time { scale: 7 }),
    ("tinyint", SqlType::TinyInt),
    ("uniqueidentifier", SqlType::UniqueIdentifier),
    ("varbinary", SqlType::VarBinary { len: Length::Bounded(8000) }),
    ("varchar", SqlType::VarChar { len: Length::Bounded(8000) }),
    ("xml", SqlType::Xml),
];

/// (system_type_id, max_length, precision, scale) as sys.columns reports a type.
pub fn type_info(ty: &SqlType) -> (u8, i16, u8, u8) {
    match *ty {
        SqlType::Bit => (104, 1, 1, 0),
        SqlType::TinyInt => (48, 1, 3, 0),
        SqlType::SmallInt => (52, 2, 5, 0),
        SqlType::Int => (56, 4, 10, 0),
        SqlType::BigInt => (127, 8, 19, 0),
        SqlType::Decimal { precision, scale } => (106, decimal_magnitude_len(precision) as i16 + 1, precision, scale),
        SqlType::Numeric { precision, scale } => (108, decimal_magnitude_len(precision) as i16 + 1, precision, scale),
        SqlType::Money => (60, 8, 19, 4),
        SqlType::SmallMoney => (122, 4, 10, 4),
        SqlType::Real => (59, 4, 24, 0),
        SqlType::Float => (62, 8, 53, 0),
        SqlType::Date => (40, 3, 10, 0),
        SqlType::Time { scale } => (41, 5, 16, scale),
        SqlType::DateTime => (61, 8, 23, 3),
        SqlType::SmallDateTime => (58, 4, 16, 0),
        SqlType::DateTime2 { scale } => (42, 8, 27, scale),
        SqlType::DateTimeOffset { scale } => (43, 10, 34, scale),
        SqlType::Char { len } => (175, len as i16, 0, 0),
        SqlType::VarChar { len } => (
            167,
            match len {
                Length::Max => -1,
                Length::Bounded(n) => n as i16,
            },
            0,
            0,
        ),
        SqlType::NChar { len } => (239, (len as i16).saturating_mul(2), 0, 0),
        SqlType::NVarChar { len } => (
            231,
            match len {
                Length::Max => -1,
                Length::Bounded(n) => (n as i16).saturating_mul(2),
            },
            0,
            0,
        ),
        SqlType::Binary { len } => (173, len as i16, 0, 0),
        SqlType::VarBinary { len } => (
            165,
            match len {
                Length::Max => -1,
                Length::Bounded(n) => n as i16,
            },
            0,
            0,
        ),
        SqlType::UniqueIdentifier => (36, 16, 0, 0),
        SqlType::Xml => (241, -1, 0, 0),
        SqlType::Variant => (98, 8016, 0, 0),
        // The 16 bytes of the text pointer a row holds in SQL Server.
        SqlType::Image => (34, 16, 0, 0),
        SqlType::Text => (35, 16, 0, 0),
        SqlType::NText => (99, 16, 0, 0),
        // The CLR system types share system_type_id 240 (user_type_id tells them apart).
        SqlType::HierarchyId => (240, 892, 0, 0),
        SqlType::Geometry | SqlType::Geography => (240, -1, 0, 0),
    }
}

/// sys.types.user_type_id of a system type: its system_type_id, but for the CLR types.
pub fn user_type_id(ty: &SqlType) -> i32 {
    match ty {
        SqlType::HierarchyId => 128,
        SqlType::Geometry => 129,
        SqlType::Geography => 130,
        t => i32::from(type_info(t).0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spelling() {
        assert_eq!(SqlType::decimal(18, 2).unwrap().to_string(), "decimal(18,2)");
        assert_eq!(SqlType::numeric(5, 0).unwrap().to_string(), "numeric(5,0)");
        assert_eq!(SqlType::NVarChar { len: Length::Max }.to_string(), "nvarchar(max)");
        assert_eq!(SqlType::datetime2(7).unwrap().to_string(), "datetime2(7)");
        assert_eq!(SqlType::char(10).unwrap().to_string(), "char(10)");
        assert_eq!(SqlType::float(10).unwrap().to_string(), "real");
        assert_eq!(SqlType::float(53).unwrap().to_string(), "float");
        assert_eq!(SqlType::UniqueIdentifier.to_string(), "uniqueidentifier");
    }

    #[test]
    fn parameter_errors() {
        let e = SqlType::decimal(39, 0).unwrap_err();
        assert_eq!(e.number, 2750);
        assert_eq!(
            e.message,
            "Column or parameter #1: Specified column precision 39 is greater than the maximum precision of 38."
        );
        assert_eq!(SqlType::decimal(5, 6).unwrap_err().number, 192);
        assert_eq!(SqlType::decimal(0, 0).unwrap_err().number, 1001);
        assert_eq!(SqlType::float(54).unwrap_err().number, 2750);
        assert_eq!(SqlType::float(0).unwrap_err().number, 1001);
        assert_eq!(SqlType::time(8).unwrap_err().number, 1002);
        assert_eq!(SqlType::datetime2(-1).unwrap_err().number, 1002);
        let e = SqlType::varchar(8001).unwrap_err();
        assert_eq!(e.number, 131);
        assert_eq!(
            e.message,
            "The size (8001) given to the type 'varchar' exceeds the maximum allowed for any data type (8000)."
        );
        assert_eq!(SqlType::nvarchar(4001).unwrap_err().number, 131);
        assert_eq!(SqlType::nchar(0).unwrap_err().number, 1001);
        assert!(SqlType::nvarchar(4000).is_ok() && SqlType::binary(8000).is_ok());
    }

    #[test]
    fn from_name_resolves_synonyms_and_defaults() {
        use TypeArg::*;
        assert_eq!(SqlType::from_name("INTEGER", &[]).unwrap(), SqlType::Int);
        assert_eq!(SqlType::from_name("dec", &[]).unwrap(), SqlType::Decimal { precision: 18, scale: 0 });
        assert_eq!(SqlType::from_name("numeric", &[Num(10)]).unwrap(), SqlType::Numeric { precision: 10, scale: 0 });
        assert_eq!(SqlType::from_name("float", &[Num(24)]).unwrap(), SqlType::Real);
        assert_eq!(SqlType::from_name("double  precision", &[]).unwrap(), SqlType::Float);
        assert_eq!(SqlType::from_name("varchar", &[Max]).unwrap(), SqlType::VarChar { len: Length::Max });
        assert_eq!(SqlType::from_name("national character varying", &[Num(20)]).unwrap().to_string(), "nvarchar(20)");
        assert_eq!(SqlType::from_name("char", &[]).unwrap(), SqlType::Char { len: 1 });
        assert_eq!(SqlType::from_name("datetime2", &[]).unwrap(), SqlType::DateTime2 { scale: 7 });
        assert_eq!(SqlType::from_name("char", &[Max]).unwrap_err().number, 1001);
        assert_eq!(SqlType::from_name("int", &[Num(4)]).unwrap_err().number, 2716);
        assert_eq!(SqlType::from_name("varchar2", &[]).unwrap_err().number, 2715);
        assert_eq!(SqlType::from_name("national text", &[]).unwrap(), SqlType::NText);
        assert_eq!(SqlType::from_name("image", &[Num(10)]).unwrap_err().number, 2716);
    }

    #[test]
    fn legacy_lob_types() {
        let max = |t: SqlType| t.max_equivalent();
        assert_eq!(max(SqlType::Text), SqlType::VarChar { len: Length::Max });
        assert_eq!(max(SqlType::NText), SqlType::NVarChar { len: Length::Max });
        assert_eq!(max(SqlType::Image), SqlType::VarBinary { len: Length::Max });
        assert_eq!(max(SqlType::Int), SqlType::Int);
        for t in [SqlType::Text, SqlType::NText, SqlType::Image] {
            assert!(t.is_lob() && t.is_legacy_lob() && !t.is_max() && !t.is_variant_base(), "{t}");
            assert_eq!((t.fixed_storage_len(), t.max_len()), (None, MAX_LOB_BYTES));
        }
        assert!(SqlType::NText.is_unicode() && SqlType::Text.is_character() && SqlType::Image.is_binary());
        assert_eq!(SqlType::NText.to_string(), "ntext");
    }

    #[test]
    fn storage_lengths() {
        let len = |t: SqlType| t.fixed_storage_len();
        assert_eq!(len(SqlType::Bit), Some(1));
        assert_eq!(len(SqlType::decimal(9, 2).unwrap()), Some(5));
        assert_eq!(len(SqlType::decimal(10, 2).unwrap()), Some(9));
        assert_eq!(len(SqlType::decimal(19, 2).unwrap()), Some(9));
        assert_eq!(len(SqlType::decimal(20, 2).unwrap()), Some(13));
        assert_eq!(len(SqlType::decimal(28, 2).unwrap()), Some(13));
        assert_eq!(len(SqlType::decimal(29, 2).unwrap()), Some(17));
        assert_eq!(len(SqlType::decimal(38, 2).unwrap()), Some(17));
        assert_eq!(len(SqlType::time(0).unwrap()), Some(3));
        assert_eq!(len(SqlType::time(3).unwrap()), Some(4));
        assert_eq!(len(SqlType::time(7).unwrap()), Some(5));
        assert_eq!(len(SqlType::datetime2(2).unwrap()), Some(6));
        assert_eq!(len(SqlType::datetime2(4).unwrap()), Some(7));
        assert_eq!(len(SqlType::datetime2(7).unwrap()), Some(8));
        assert_eq!(len(SqlType::datetimeoffset(0).unwrap()), Some(8));
        assert_eq!(len(SqlType::datetimeoffset(7).unwrap()), Some(10));
        assert_eq!(len(SqlType::nchar(10).unwrap()), Some(20));
        assert_eq!(len(SqlType::varchar(10).unwrap()), None);
        assert_eq!(len(SqlType::Money), Some(8));
        assert_eq!(len(SqlType::SmallMoney), Some(4));
        assert_eq!(len(SqlType::Date), Some(3));
        assert_eq!(len(SqlType::SmallDateTime), Some(4));
        assert_eq!(len(SqlType::UniqueIdentifier), Some(16));
        assert_eq!(SqlType::nvarchar(10).unwrap().max_len(), 20);
        assert_eq!(SqlType::VarBinary { len: Length::Max }.max_len(), 2_147_483_647);
        assert!(SqlType::Xml.is_max() && !SqlType::varchar(5).unwrap().is_max());
    }

    #[test]
    fn precedence_order() {
        let order = [
            SqlType::Xml,
            SqlType::DateTimeOffset { scale: 7 },
            SqlType::DateTime2 { scale: 7 },
            SqlType::DateTime,
            SqlType::SmallDateTime,
            SqlType::Date,
            SqlType::Time { scale: 7 },
            SqlType::Float,
            SqlType::Real,
            SqlType::Decimal { precision: 18, scale: 0 },
            SqlType::Money,
            SqlType::SmallMoney,
            SqlType::BigInt,
            SqlType::Int,
            SqlType::SmallInt,
            SqlType::TinyInt,
            SqlType::Bit,
            SqlType::NText,
            SqlType::Text,
            SqlType::Image,
            SqlType::UniqueIdentifier,
            SqlType::NVarChar { len: Length::Max },
            SqlType::NChar { len: 1 },
            SqlType::VarChar { len: Length::Max },
            SqlType::Char { len: 1 },
            SqlType::VarBinary { len: Length::Max },
            SqlType::Binary { len: 1 },
        ];
        for w in order.windows(2) {
            assert!(w[0].has_higher_precedence_than(&w[1]), "{} over {}", w[0], w[1]);
        }
        assert_eq!(SqlType::Int.precedence(), 16);
    }
}
