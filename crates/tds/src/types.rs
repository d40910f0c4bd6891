//! Data types on the wire ([MS-TDS] 2.2.5.4-2.2.5.5): TYPE_INFO descriptors and value
//! encodings, both ways. The server writes them in COLMETADATA/ROW/NBCROW/RETURNVALUE and
//! reads them in RPC parameters.
//!
//! TYPE_INFO by family (ids in hex; lengths little-endian):
//!
//! ```text
//! fixed        INT1 30, BIT 32, INT2 34, INT4 38, DATETIM4 3A, FLT4 3B, MONEY 3C,
//!              DATETIME 3D, FLT8 3E, MONEY4 7A, INT8 7F          id only
//! byte length  GUID 24, INTN 26, BITN 68, FLTN 6D, MONEYN 6E, DATETIMN 6F
//!                                                                id, max length u8
//! decimal      DECIMALN 6A, NUMERICN 6C                          id, length u8 (5/9/13/17),
//!                                                                precision u8, scale u8
//! date         DATEN 28                                          id
//! scaled       TIMEN 29, DATETIME2N 2A, DATETIMEOFFSETN 2B        id, scale u8
//! short length BIGVARBINARY A5, BIGVARCHAR A7, BIGBINARY AD, BIGCHAR AF, NVARCHAR E7,
//!              NCHAR EF                                           id, max length u16 (bytes;
//!                                                                0xFFFF = (max), PLP),
//!                                                                collation 5 bytes for the
//!                                                                character types
//! xml          XML F1                                            id, schema present u8 (0)
//! sql_variant  SSVARIANT 62                                      id, max length u32 (8009)
//! hierarchyid, UDT F0                                           id, max byte size u16
//! geometry,                                                      (892; 0xFFFF for the
//! geography                                                      spatial types), database
//!                                                                B_VARCHAR (empty), schema
//!                                                                B_VARCHAR ("sys"), type
//!                                                                B_VARCHAR (the type's
//!                                                                name), assembly-qualified
//!                                                                name US_VARCHAR
//!                                                                (Microsoft.SqlServer.Types.
//!                                                                SqlHierarchyId, ...);
//!                                                                values as PLP
//! long length  IMAGE 22, TEXT 23, NTEXT 63                       id, max length u32
//!                                                                (0x7FFFFFFF; ntext
//!                                                                0x7FFFFFFE), collation for
//!                                                                text and ntext; in
//!                                                                COLMETADATA then the table
//!                                                                name: u8 part count and
//!                                                                each part US_VARCHAR (the
//!                                                                server sends 0 parts); in
//!                                                                a bulk-load COLMETADATA one
//!                                                                US_VARCHAR
//! ```
//!
//! The collation is SQL_Latin1_General_CP1_CI_AS: `09 04 D0 00 34` (LCID 0x0409 with
//! IgnoreCase|IgnoreKana|IgnoreWidth flags, SortId 52).
//!
//! Values:
//!
//! ```text
//! fixed types          the bytes alone (no NULL possible)
//! byte-length types    length u8 (0 = NULL), then the bytes
//! integers, floats     little-endian two's complement / IEEE 754
//! money                8 bytes: high i32 LE then low u32 LE of the i64 count of 1/10000;
//! smallmoney           i32 LE
//! datetime             days since 1900-01-01 i32 LE, 1/300 s ticks u32 LE
//! smalldatetime        days u16 LE, minutes u16 LE
//! decimal/numeric      length u8, sign u8 (1 positive, 0 negative), magnitude LE in
//!                      4/8/12/16 bytes by precision (1-9/10-19/20-28/29-38)
//! date                 length u8 (3), days since 0001-01-01 in 3 bytes LE
//! time(n)              length u8 (3/4/5 by scale), units of 10^-n s since midnight LE
//! datetime2(n)         length u8, time as above, then date (3 bytes)
//! datetimeoffset(n)    length u8, UTC time, UTC date, offset minutes i16 LE
//! uniqueidentifier     length u8 (16), the 16 bytes in SQL Server's (.NET) order
//! short-length types   length u16 (0xFFFF = NULL), the bytes (the code page of the
//!                      collation for char/varchar, 1252 by default; UTF-16LE for
//!                      nchar/nvarchar)
//! PLP ((max), xml)     total length u64 (0xFFFFFFFFFFFFFFFF = NULL,
//!                      0xFFFFFFFFFFFFFFFE = unknown), chunks { length u32, bytes },
//!                      a zero-length chunk ends the value
//! sql_variant          length u32 (0 = NULL), the base type's id, the number of
//!                      property bytes and the properties
//!                      (`types::encoding::put_variant_header`), then the value's bytes
//!                      as above without a length prefix
//! text/ntext/image     in ROW, NBCROW and bulk-load rows: text pointer length u8 (0 =
//!                      NULL, nothing follows), the pointer (16 bytes), a timestamp (8
//!                      bytes), then length u32 and the bytes (code page 1252, UTF-16LE,
//!                      raw); in RPC parameters and RETURNVALUE: length u32
//!                      (0xFFFFFFFF = NULL) and the bytes ([`encode_param_value`])
//! ```

use std::borrow::Cow;

use types::calendar::{MAX_OFFSET_MINUTES, TICKS_PER_DAY};
use types::decimal::{fits_precision, rescale};
use types::sqltype::{decimal_magnitude_len, time_storage_len, Length};
use types::{CodePage, SqlType, Value};

use crate::error::{Result, TdsError};
use crate::wire::{put_utf16, utf16_to_string, Reader};

pub mod type_id {
    // The sql_variant base types (shared with the row format, see `types::encoding`).
    pub use types::encoding::variant_id::*;
    pub const NULLTYPE: u8 = 0x1F;
    pub const INTN: u8 = 0x26;
    pub const DECIMAL: u8 = 0x37;
    pub const NUMERIC: u8 = 0x3F;
    pub const BITN: u8 = 0x68;
    pub const FLTN: u8 = 0x6D;
    pub const MONEYN: u8 = 0x6E;
    pub const DATETIMN: u8 = 0x6F;
    pub const XML: u8 = 0xF1;
    pub const TEXT: u8 = 0x23;
    pub const IMAGE: u8 = 0x22;
    pub const NTEXT: u8 = 0x63;
    pub const SSVARIANT: u8 = 0x62;
    pub const UDT: u8 = 0xF0;
    pub const TVP: u8 = 0xF3;
}

use type_id::*;

/// SQL_Latin1_General_CP1_CI_AS as TDS sends it.
pub const DEFAULT_COLLATION: [u8; 5] = types::encoding::DEFAULT_COLLATION;

/// The 5 bytes Mesquite sends for a collation (COLMETADATA, the SQL collation
/// ENVCHANGE): the collation's own, whose LCID tells the client the code page of
/// char/varchar values. A _UTF8 collation sends the default's: values are sent in code
/// page 1252, and a client reading 65001 would decode them as UTF-8.
pub fn collation_bytes(c: &types::Collation) -> [u8; 5] {
    if c.code_page() != 65001 {
        c.tds_bytes()
    } else {
        DEFAULT_COLLATION
    }
}
/// The max length of a short-length type that means "(max), sent as PLP".
pub const PLP_MARKER: u16 = 0xFFFF;
pub const PLP_NULL: u64 = u64::MAX;
pub const PLP_UNKNOWN_LEN: u64 = u64::MAX - 1;
/// PLP chunk size the server writes.
const PLP_CHUNK: usize = 8000;

/// A TYPE_INFO as it appears on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TypeInfo {
    /// A fixed-length type: INT1, BIT, INT2, INT4, INT8, FLT4, FLT8, MONEY, MONEY4,
    /// DATETIME, DATETIM4, or NULLTYPE.
    Fixed(u8),
    /// INTN, BITN, FLTN, MONEYN, DATETIMN, GUID with their max length.
    ByteLen {
        id: u8,
        len: u8,
    },
    /// DECIMALN/NUMERICN (and the legacy DECIMAL/NUMERIC ids).
    Decimal {
        id: u8,
        len: u8,
        precision: u8,
        scale: u8,
    },
    Date,
    /// TIMEN, DATETIME2N, DATETIMEOFFSETN.
    Scaled {
        id: u8,
        scale: u8,
    },
    /// BIGVARBINARY, BIGVARCHAR, BIGBINARY, BIGCHAR, NVARCHAR, NCHAR; `len` in bytes,
    /// [`PLP_MARKER`] for (max).
    ShortLen {
        id: u8,
        len: u16,
        collation: Option<[u8; 5]>,
    },
    Xml,
    /// SSVARIANT with its max length (SQL Server sends 8009).
    Variant(u32),
    /// TEXT, NTEXT, IMAGE with their max length in bytes and, for TEXT and NTEXT, the
    /// collation.
    Long {
        id: u8,
        len: u32,
        collation: Option<[u8; 5]>,
    },
    /// UDT: a CLR system type (hierarchyid, geometry, geography); values travel as PLP
    /// whatever the size.
    Udt {
        ty: SqlType,
    },
}

/// The UDT_INFO of a CLR system type: its max byte size (0xFFFF: unlimited), type name
/// and the assembly-qualified .NET name SQL Server sends.
pub fn clr_udt_info(ty: &SqlType) -> (u16, &'static str, &'static str) {
    match ty {
        SqlType::Geometry => (0xFFFF, "geometry", "Microsoft.SqlServer.Types.SqlGeometry"),
        SqlType::Geography => (0xFFFF, "geography", "Microsoft.SqlServer.Types.SqlGeography"),
        _ => (types::hierarchyid::MAX_BYTES as u16, "hierarchyid", "Microsoft.SqlServer.Types.SqlHierarchyId"),
    }
}

/// The rest of a CLR system type's assembly-qualified name.
const CLR_ASSEMBLY_TAIL: &str =
    ", Microsoft.SqlServer.Types, Version=11.0.0.0, Culture=neutral, PublicKeyToken=89845dcd8080cc91";

/// The max length SQL Server declares for text and image columns (ntext: one less, an
/// even number of bytes).
pub const LONG_MAX_LEN: u32 = 0x7FFF_FFFF;
/// The text pointer the server sends before each non-NULL text, ntext or image value in
/// a row. Clients keep it only to hand back to READTEXT/WRITETEXT, which Mesquite does
/// not have, so one constant serves.
const TEXT_POINTER: [u8; 16] = [0xAA; 16];
/// The timestamp sent after the text pointer.
const TEXT_TIMESTAMP: [u8; 8] = [0; 8];
/// A NULL text, ntext or image value as an RPC parameter or RETURNVALUE.
const LONG_NULL: u32 = u32::MAX;

/// The max length SQL Server declares for a sql_variant column.
pub const VARIANT_MAX_LEN: u32 = 8009;

fn fixed_len(id: u8) -> Option<usize> {
    Some(match id {
        NULLTYPE => 0,
        INT1 | BIT => 1,
        INT2 => 2,
        INT4 | DATETIM4 | FLT4 | MONEY4 => 4,
        MONEY | DATETIME | FLT8 | INT8 => 8,
        _ => return None,
    })
}

fn is_char(id: u8) -> bool {
    matches!(id, BIGVARCHAR | BIGCHAR | NVARCHAR | NCHAR)
}

impl TypeInfo {
    /// The TYPE_INFO SQL Server sends for a column of `ty`: the nullable (N) forms, or the
    /// fixed forms for NOT NULL integer, bit, float, money and datetime columns.
    /// [`TypeInfo::for_sql_type`] with a character type's collation bytes replaced by
    /// `collation`'s ([`collation_bytes`]).
    pub fn for_column(ty: &SqlType, nullable: bool, collation: Option<&types::Collation>) -> TypeInfo {
        let mut ti = TypeInfo::for_sql_type(ty, nullable);
        if let Some(c) = collation {
            if let TypeInfo::ShortLen { collation: Some(b), .. } | TypeInfo::Long { collation: Some(b), .. } = &mut ti {
                *b = collation_bytes(c);
            }
        }
        ti
    }

    pub fn for_sql_type(ty: &SqlType, nullable: bool) -> TypeInfo {
        let fixed_or = |fixed: u8, id: u8, len: u8| {
            if nullable {
                TypeInfo::ByteLen { id, len }
            } else {
                TypeInfo::Fixed(fixed)
            }
        };
        let short = |id: u8, len: Length, unit: u16| {
            let collation = if is_char(id) { Some(DEFAULT_COLLATION) } else { None };
            let len = match len {
                Length::Bounded(n) => n.saturating_mul(unit),
                Length::Max => PLP_MARKER,
            };
            TypeInfo::ShortLen { id, len, collation }
        };
        match *ty {
            SqlType::Bit => fixed_or(BIT, BITN, 1),
            SqlType::TinyInt => fixed_or(INT1, INTN, 1),
            SqlType::SmallInt => fixed_or(INT2, INTN, 2),
            SqlType::Int => fixed_or(INT4, INTN, 4),
            SqlType::BigInt => fixed_or(INT8, INTN, 8),
            SqlType::Real => fixed_or(FLT4, FLTN, 4),
            SqlType::Float => fixed_or(FLT8, FLTN, 8),
            SqlType::Money => fixed_or(MONEY, MONEYN, 8),
            SqlType::SmallMoney => fixed_or(MONEY4, MONEYN, 4),
            SqlType::DateTime => fixed_or(DATETIME, DATETIMN, 8),
            SqlType::SmallDateTime => fixed_or(DATETIM4, DATETIMN, 4),
            SqlType::Decimal { precision, scale } => {
                TypeInfo::Decimal { id: DECIMALN, len: 1 + decimal_magnitude_len(precision), precision, scale }
            }
            SqlType::Numeric { precision, scale } => {
                TypeInfo::Decimal { id: NUMERICN, len: 1 + decimal_magnitude_len(precision), precision, scale }
            }
            SqlType::Date => TypeInfo::Date,
            SqlType::Time { scale } => TypeInfo::Scaled { id: TIMEN, scale },
            SqlType::DateTime2 { scale } => TypeInfo::Scaled { id: DATETIME2N, scale },
            SqlType::DateTimeOffset { scale } => TypeInfo::Scaled { id: DATETIMEOFFSETN, scale },
            SqlType::Char { len } => short(BIGCHAR, Length::Bounded(len), 1),
            SqlType::VarChar { len } => short(BIGVARCHAR, len, 1),
            SqlType::NChar { len } => short(NCHAR, Length::Bounded(len), 2),
            SqlType::NVarChar { len } => short(NVARCHAR, len, 2),
            SqlType::Binary { len } => short(BIGBINARY, Length::Bounded(len), 1),
            SqlType::VarBinary { len } => short(BIGVARBINARY, len, 1),
            SqlType::UniqueIdentifier => TypeInfo::ByteLen { id: GUID, len: 16 },
            SqlType::Xml => TypeInfo::Xml,
            SqlType::Variant => TypeInfo::Variant(VARIANT_MAX_LEN),
            SqlType::Text => TypeInfo::Long { id: TEXT, len: LONG_MAX_LEN, collation: Some(DEFAULT_COLLATION) },
            SqlType::NText => TypeInfo::Long { id: NTEXT, len: LONG_MAX_LEN - 1, collation: Some(DEFAULT_COLLATION) },
            SqlType::Image => TypeInfo::Long { id: IMAGE, len: LONG_MAX_LEN, collation: None },
            SqlType::HierarchyId | SqlType::Geometry | SqlType::Geography => TypeInfo::Udt { ty: *ty },
        }
    }

    pub fn id(&self) -> u8 {
        match *self {
            TypeInfo::Fixed(id)
            | TypeInfo::ByteLen { id, .. }
            | TypeInfo::Decimal { id, .. }
            | TypeInfo::Scaled { id, .. }
            | TypeInfo::ShortLen { id, .. }
            | TypeInfo::Long { id, .. } => id,
            TypeInfo::Date => DATEN,
            TypeInfo::Xml => XML,
            TypeInfo::Variant(_) => SSVARIANT,
            TypeInfo::Udt { .. } => UDT,
        }
    }

    /// Values travel as PLP ((max) types and xml).
    pub fn is_plp(&self) -> bool {
        matches!(self, TypeInfo::Xml | TypeInfo::Udt { .. } | TypeInfo::ShortLen { len: PLP_MARKER, .. })
    }

    /// Bytes a NULL takes in a ROW token; None when the type cannot be NULL there.
    /// The code page of char, varchar and text values under this TYPE_INFO: that of its
    /// collation bytes, 1252 for other types.
    pub fn code_page(&self) -> CodePage {
        match self {
            TypeInfo::ShortLen { collation: Some(b), .. } | TypeInfo::Long { collation: Some(b), .. } => {
                types::Collation::code_page_of_tds(b)
            }
            _ => CodePage::CP1252,
        }
    }

    pub fn null_len(&self) -> Option<usize> {
        match self {
            TypeInfo::Fixed(NULLTYPE) => Some(0),
            TypeInfo::Fixed(_) => None,
            TypeInfo::Xml | TypeInfo::Udt { .. } | TypeInfo::ShortLen { len: PLP_MARKER, .. } => Some(8),
            TypeInfo::ShortLen { .. } => Some(2),
            TypeInfo::Variant(_) => Some(4),
            _ => Some(1),
        }
    }

    pub fn encode(&self, out: &mut Vec<u8>) {
        out.push(self.id());
        match *self {
            TypeInfo::Fixed(_) | TypeInfo::Date => {}
            TypeInfo::ByteLen { len, .. } => out.push(len),
            TypeInfo::Decimal { len, precision, scale, .. } => out.extend_from_slice(&[len, precision, scale]),
            TypeInfo::Scaled { scale, .. } => out.push(scale),
            TypeInfo::ShortLen { len, collation, .. } => {
                out.extend_from_slice(&len.to_le_bytes());
                if let Some(c) = collation {
                    out.extend_from_slice(&c);
                }
            }
            TypeInfo::Xml => out.push(0),
            TypeInfo::Variant(len) => out.extend_from_slice(&len.to_le_bytes()),
            // UDT_INFO: max byte size, database (none sent), schema, type name, assembly.
            TypeInfo::Udt { ty } => {
                let (max, name, class) = clr_udt_info(&ty);
                out.extend_from_slice(&max.to_le_bytes());
                crate::wire::put_b_varchar(out, "");
                crate::wire::put_b_varchar(out, "sys");
                crate::wire::put_b_varchar(out, name);
                crate::wire::put_us_varchar(out, &format!("{class}{CLR_ASSEMBLY_TAIL}"));
            }
            TypeInfo::Long { len, collation, .. } => {
                out.extend_from_slice(&len.to_le_bytes());
                if let Some(c) = collation {
                    out.extend_from_slice(&c);
                }
            }
        }
    }

    /// The TYPE_INFO of a COLMETADATA column: [`TypeInfo::encode`], and for text, ntext
    /// and image the table name, sent as zero parts (the column's table is not tracked
    /// through a query; clients read the parts and skip them).
    pub fn encode_column(&self, out: &mut Vec<u8>) {
        self.encode(out);
        if let TypeInfo::Long { .. } = self {
            out.push(0);
        }
    }

    /// Reads what [`TypeInfo::encode_column`] writes (any number of table name parts).
    pub fn decode_column(r: &mut Reader) -> Result<TypeInfo> {
        let ti = TypeInfo::decode(r)?;
        if let TypeInfo::Long { .. } = ti {
            for _ in 0..r.u8("COLMETADATA table name")? {
                r.us_varchar("COLMETADATA table name")?;
            }
        }
        Ok(ti)
    }

    pub fn decode(r: &mut Reader) -> Result<TypeInfo> {
        let id = r.u8("TYPE_INFO")?;
        let what = "TYPE_INFO";
        Ok(match id {
            _ if fixed_len(id).is_some() => TypeInfo::Fixed(id),
            GUID | INTN | BITN | FLTN | MONEYN | DATETIMN => {
                let len = r.u8(what)?;
                let ok = match id {
                    GUID => len == 16 || len == 0,
                    INTN => matches!(len, 1 | 2 | 4 | 8),
                    BITN => len == 1,
                    FLTN => matches!(len, 4 | 8),
                    MONEYN => matches!(len, 4 | 8),
                    _ => matches!(len, 4 | 8),
                };
                if !ok {
                    return Err(TdsError::invalid("TYPE_INFO", format!("type {id:#04x} with length {len}")));
                }
                TypeInfo::ByteLen { id, len }
            }
            DECIMALN | NUMERICN | DECIMAL | NUMERIC => {
                let len = r.u8(what)?;
                let precision = r.u8(what)?;
                let scale = r.u8(what)?;
                if !(1..=38).contains(&precision) || scale > precision || !(2..=17).contains(&len) {
                    return Err(TdsError::invalid(
                        "TYPE_INFO",
                        format!("decimal length {len} precision {precision} scale {scale}"),
                    ));
                }
                TypeInfo::Decimal { id, len, precision, scale }
            }
            DATEN => TypeInfo::Date,
            TIMEN | DATETIME2N | DATETIMEOFFSETN => {
                let scale = r.u8(what)?;
                if scale > 7 {
                    return Err(TdsError::invalid("TYPE_INFO", format!("time scale {scale}")));
                }
                TypeInfo::Scaled { id, scale }
            }
            BIGVARBINARY | BIGVARCHAR | BIGBINARY | BIGCHAR | NVARCHAR | NCHAR => {
                let len = r.u16_le(what)?;
                let collation = if is_char(id) {
                    let mut c = [0u8; 5];
                    c.copy_from_slice(r.bytes(5, what)?);
                    Some(c)
                } else {
                    None
                };
                if len == PLP_MARKER && matches!(id, BIGBINARY | BIGCHAR | NCHAR) {
                    return Err(TdsError::invalid("TYPE_INFO", format!("type {id:#04x} cannot be (max)")));
                }
                TypeInfo::ShortLen { id, len, collation }
            }
            XML => {
                let schema = r.u8(what)?;
                if schema != 0 {
                    // XML_INFO with a schema collection: dbname, owner (B_VARCHAR) and the
                    // collection name (US_VARCHAR); the schema is not enforced here.
                    r.b_varchar(what)?;
                    r.b_varchar(what)?;
                    r.us_varchar(what)?;
                }
                TypeInfo::Xml
            }
            SSVARIANT => TypeInfo::Variant(r.u32_le(what)?),
            UDT => {
                r.u16_le(what)?;
                r.b_varchar(what)?;
                r.b_varchar(what)?;
                let name = r.b_varchar(what)?.to_ascii_lowercase();
                r.us_varchar(what)?;
                let ty = match name.as_str() {
                    "hierarchyid" => SqlType::HierarchyId,
                    "geometry" => SqlType::Geometry,
                    "geography" => SqlType::Geography,
                    _ => return Err(TdsError::UnsupportedType(UDT)),
                };
                TypeInfo::Udt { ty }
            }
            TEXT | NTEXT | IMAGE => {
                let len = r.u32_le(what)?;
                let collation = if id == IMAGE {
                    None
                } else {
                    let mut c = [0u8; 5];
                    c.copy_from_slice(r.bytes(5, what)?);
                    Some(c)
                };
                TypeInfo::Long { id, len, collation }
            }
            other => return Err(TdsError::UnsupportedType(other)),
        })
    }

    /// The SQL type a client-declared TYPE_INFO stands for (RPC parameters).
    pub fn sql_type(&self) -> Result<SqlType> {
        let bounded = |len: u16, unit: u16, max: u16| -> Length {
            if len == PLP_MARKER {
                Length::Max
            } else {
                let n = (len / unit).max(1);
                if n > max {
                    Length::Max
                } else {
                    Length::Bounded(n)
                }
            }
        };
        let fixed_n = |len: u16, unit: u16, max: u16| -> u16 { (len / unit).clamp(1, max) };
        Ok(match *self {
            TypeInfo::Fixed(id) | TypeInfo::ByteLen { id, .. } if id == NULLTYPE => SqlType::Int,
            TypeInfo::Fixed(INT1) | TypeInfo::ByteLen { id: INTN, len: 1 } => SqlType::TinyInt,
            TypeInfo::Fixed(INT2) | TypeInfo::ByteLen { id: INTN, len: 2 } => SqlType::SmallInt,
            TypeInfo::Fixed(INT4) | TypeInfo::ByteLen { id: INTN, len: 4 } => SqlType::Int,
            TypeInfo::Fixed(INT8) | TypeInfo::ByteLen { id: INTN, len: 8 } => SqlType::BigInt,
            TypeInfo::Fixed(BIT) | TypeInfo::ByteLen { id: BITN, .. } => SqlType::Bit,
            TypeInfo::Fixed(FLT4) | TypeInfo::ByteLen { id: FLTN, len: 4 } => SqlType::Real,
            TypeInfo::Fixed(FLT8) | TypeInfo::ByteLen { id: FLTN, .. } => SqlType::Float,
            TypeInfo::Fixed(MONEY4) | TypeInfo::ByteLen { id: MONEYN, len: 4 } => SqlType::SmallMoney,
            TypeInfo::Fixed(MONEY) | TypeInfo::ByteLen { id: MONEYN, .. } => SqlType::Money,
            TypeInfo::Fixed(DATETIM4) | TypeInfo::ByteLen { id: DATETIMN, len: 4 } => SqlType::SmallDateTime,
            TypeInfo::Fixed(DATETIME) | TypeInfo::ByteLen { id: DATETIMN, .. } => SqlType::DateTime,
            TypeInfo::ByteLen { id: GUID, .. } => SqlType::UniqueIdentifier,
            TypeInfo::Decimal { id, precision, scale, .. } => {
                if id == NUMERICN || id == NUMERIC {
                    SqlType::Numeric { precision, scale }
                } else {
                    SqlType::Decimal { precision, scale }
                }
            }
            TypeInfo::Date => SqlType::Date,
            TypeInfo::Scaled { id: TIMEN, scale } => SqlType::Time { scale },
            TypeInfo::Scaled { id: DATETIME2N, scale } => SqlType::DateTime2 { scale },
            TypeInfo::Scaled { scale, .. } => SqlType::DateTimeOffset { scale },
            TypeInfo::ShortLen { id: BIGCHAR, len, .. } => SqlType::Char { len: fixed_n(len, 1, 8000) },
            TypeInfo::ShortLen { id: BIGVARCHAR, len, .. } => SqlType::VarChar { len: bounded(len, 1, 8000) },
            TypeInfo::ShortLen { id: NCHAR, len, .. } => SqlType::NChar { len: fixed_n(len, 2, 4000) },
            TypeInfo::ShortLen { id: NVARCHAR, len, .. } => SqlType::NVarChar { len: bounded(len, 2, 4000) },
            TypeInfo::ShortLen { id: BIGBINARY, len, .. } => SqlType::Binary { len: fixed_n(len, 1, 8000) },
            TypeInfo::ShortLen { id: BIGVARBINARY, len, .. } => SqlType::VarBinary { len: bounded(len, 1, 8000) },
            TypeInfo::Xml => SqlType::Xml,
            TypeInfo::Variant(_) => SqlType::Variant,
            TypeInfo::Long { id: TEXT, .. } => SqlType::Text,
            TypeInfo::Long { id: NTEXT, .. } => SqlType::NText,
            TypeInfo::Long { .. } => SqlType::Image,
            TypeInfo::Udt { ty } => ty,
            other => return Err(TdsError::UnsupportedType(other.id())),
        })
    }
}

/// Why a value could not be written as its column's type (an executor bug, reported to
/// the client as an error rather than a broken stream).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("cannot send {value} as {ty}")]
pub struct EncodeError {
    pub value: &'static str,
    pub ty: String,
}

fn mismatch(v: &Value, ty: &SqlType) -> EncodeError {
    EncodeError { value: v.kind_name(), ty: ty.to_string() }
}

fn as_i64(v: &Value) -> Option<i64> {
    Some(match *v {
        Value::Bit(b) => i64::from(b),
        Value::TinyInt(x) => i64::from(x),
        Value::SmallInt(x) => i64::from(x),
        Value::Int(x) => i64::from(x),
        Value::BigInt(x) => x,
        _ => return None,
    })
}

fn time_units(ticks: u64, scale: u8) -> u64 {
    ticks / 10u64.pow(7 - u32::from(scale.min(7)))
}

fn put_uint_le(out: &mut Vec<u8>, v: u64, n: usize) {
    out.extend_from_slice(&v.to_le_bytes()[..n]);
}

/// Writes the bytes of a non-NULL value for `ty` into `out`, without any length prefix.
/// Integers and floats are converted within their family when the value's variant
/// differs from the column's type (and in range); other mismatches are errors.
/// The bytes of a value of `ty`; char, varchar and text in code page `cp` (the column's
/// collation's, [`TypeInfo::code_page`]).
fn value_bytes(ty: &SqlType, cp: CodePage, v: &Value, out: &mut Vec<u8>) -> std::result::Result<(), EncodeError> {
    let bad = || mismatch(v, ty);
    match *ty {
        SqlType::Bit => out.push(u8::from(as_i64(v).ok_or_else(bad)? != 0)),
        SqlType::TinyInt => out.push(u8::try_from(as_i64(v).ok_or_else(bad)?).map_err(|_| bad())?),
        SqlType::SmallInt => {
            out.extend_from_slice(&i16::try_from(as_i64(v).ok_or_else(bad)?).map_err(|_| bad())?.to_le_bytes())
        }
        SqlType::Int => {
            out.extend_from_slice(&i32::try_from(as_i64(v).ok_or_else(bad)?).map_err(|_| bad())?.to_le_bytes())
        }
        SqlType::BigInt => out.extend_from_slice(&as_i64(v).ok_or_else(bad)?.to_le_bytes()),
        SqlType::Real => {
            let f = match *v {
                Value::Real(f) => f,
                Value::Float(f) => f as f32,
                _ => return Err(bad()),
            };
            out.extend_from_slice(&f.to_le_bytes());
        }
        SqlType::Float => {
            let f = match *v {
                Value::Float(f) => f,
                Value::Real(f) => f64::from(f),
                _ => return Err(bad()),
            };
            out.extend_from_slice(&f.to_le_bytes());
        }
        SqlType::Money => {
            let Value::Money(m) = *v else { return Err(bad()) };
            out.extend_from_slice(&((m >> 32) as i32).to_le_bytes());
            out.extend_from_slice(&(m as u32).to_le_bytes());
        }
        SqlType::SmallMoney => {
            let Value::Money(m) = *v else { return Err(bad()) };
            out.extend_from_slice(&i32::try_from(m).map_err(|_| bad())?.to_le_bytes());
        }
        SqlType::Decimal { precision, scale } | SqlType::Numeric { precision, scale } => {
            let unscaled = match *v {
                Value::Decimal { value, scale: s, .. } => rescale(value, s, scale).ok_or_else(bad)?,
                _ => {
                    let i = as_i64(v).ok_or_else(bad)?;
                    rescale(i128::from(i), 0, scale).ok_or_else(bad)?
                }
            };
            if !fits_precision(unscaled, precision) {
                return Err(bad());
            }
            out.push(u8::from(unscaled >= 0));
            let mag = unscaled.unsigned_abs().to_le_bytes();
            out.extend_from_slice(&mag[..usize::from(decimal_magnitude_len(precision))]);
        }
        SqlType::DateTime => {
            let Value::DateTime { days, ticks } = *v else { return Err(bad()) };
            out.extend_from_slice(&days.to_le_bytes());
            out.extend_from_slice(&ticks.to_le_bytes());
        }
        SqlType::SmallDateTime => {
            let Value::SmallDateTime { days, minutes } = *v else { return Err(bad()) };
            out.extend_from_slice(&days.to_le_bytes());
            out.extend_from_slice(&minutes.to_le_bytes());
        }
        SqlType::Date => {
            let Value::Date(days) = *v else { return Err(bad()) };
            put_uint_le(out, u64::from(days), 3);
        }
        SqlType::Time { scale } => {
            let Value::Time { ticks, .. } = *v else { return Err(bad()) };
            put_uint_le(out, time_units(ticks, scale), usize::from(time_storage_len(scale)));
        }
        SqlType::DateTime2 { scale } => {
            let Value::DateTime2 { days, ticks, .. } = *v else { return Err(bad()) };
            put_uint_le(out, time_units(ticks, scale), usize::from(time_storage_len(scale)));
            put_uint_le(out, u64::from(days), 3);
        }
        SqlType::DateTimeOffset { scale } => {
            let Value::DateTimeOffset { days, ticks, offset, .. } = *v else { return Err(bad()) };
            put_uint_le(out, time_units(ticks, scale), usize::from(time_storage_len(scale)));
            put_uint_le(out, u64::from(days), 3);
            out.extend_from_slice(&offset.to_le_bytes());
        }
        SqlType::Char { .. } | SqlType::VarChar { .. } => {
            let Value::String(s) = v else { return Err(bad()) };
            cp.encode_lossy(s, out);
        }
        SqlType::NChar { .. } | SqlType::NVarChar { .. } | SqlType::Xml | SqlType::NText => {
            let Value::String(s) = v else { return Err(bad()) };
            put_utf16(out, s);
        }
        SqlType::Text => {
            let Value::String(s) = v else { return Err(bad()) };
            cp.encode_lossy(s, out);
        }
        SqlType::Binary { .. }
        | SqlType::VarBinary { .. }
        | SqlType::Image
        | SqlType::HierarchyId
        | SqlType::Geometry
        | SqlType::Geography => {
            let Value::Binary(b) = v else { return Err(bad()) };
            out.extend_from_slice(b);
        }
        SqlType::UniqueIdentifier => {
            let Value::Guid(g) = v else { return Err(bad()) };
            out.extend_from_slice(g);
        }
        SqlType::Variant => {
            let Value::Variant(inner) = v else { return Err(bad()) };
            types::encoding::put_variant_header(&inner.ty, out);
            value_bytes(&inner.ty, CodePage::CP1252, &inner.value, out)?;
        }
    }
    Ok(())
}

/// Writes a value (NULL or not) as `ti` requires for a column of `ty`: the length prefix
/// of its family and the bytes. `ti` must come from [`TypeInfo::for_sql_type`] for `ty`.
pub fn encode_value(ti: &TypeInfo, ty: &SqlType, v: &Value, out: &mut Vec<u8>) -> std::result::Result<(), EncodeError> {
    if encode_common(ti, ty, v, out) {
        return Ok(());
    }
    if v.is_null() {
        match ti.null_len() {
            None => return Err(mismatch(v, ty)),
            Some(0) => {}
            Some(1) => out.push(0),
            Some(2) => out.extend_from_slice(&0xFFFFu16.to_le_bytes()),
            Some(4) => out.extend_from_slice(&0u32.to_le_bytes()),
            Some(_) => out.extend_from_slice(&PLP_NULL.to_le_bytes()),
        }
        return Ok(());
    }
    if let TypeInfo::Long { .. } = ti {
        out.push(TEXT_POINTER.len() as u8);
        out.extend_from_slice(&TEXT_POINTER);
        out.extend_from_slice(&TEXT_TIMESTAMP);
        let start = out.len();
        let r = put_long_value(ti, ty, v, out);
        if r.is_err() {
            out.truncate(start - TEXT_POINTER.len() - TEXT_TIMESTAMP.len() - 1);
        }
        return r;
    }
    // The bytes go straight after their length prefix, which is filled in afterwards
    // (no buffer per value); a failed value leaves `out` as it was.
    let start = out.len();
    let r = match ti {
        TypeInfo::Fixed(_) => value_bytes(ty, ti.code_page(), v, out),
        TypeInfo::ShortLen { len, .. } if *len != PLP_MARKER => {
            out.extend_from_slice(&[0, 0]);
            value_bytes(ty, ti.code_page(), v, out).and_then(|()| {
                let n = out.len() - start - 2;
                // A bounded length is below 0xFFFF (the NULL and PLP markers).
                let n = u16::try_from(n).ok().filter(|n| n <= len).ok_or_else(|| mismatch(v, ty))?;
                out[start..start + 2].copy_from_slice(&n.to_le_bytes());
                Ok(())
            })
        }
        TypeInfo::ShortLen { .. } | TypeInfo::Xml | TypeInfo::Udt { .. } => {
            let mut bytes = Vec::new();
            value_bytes(ty, ti.code_page(), v, &mut bytes).map(|()| put_plp(out, &bytes))
        }
        TypeInfo::Variant(max) => {
            out.extend_from_slice(&[0; 4]);
            value_bytes(ty, ti.code_page(), v, out).and_then(|()| {
                let n =
                    u32::try_from(out.len() - start - 4).ok().filter(|n| n <= max).ok_or_else(|| mismatch(v, ty))?;
                out[start..start + 4].copy_from_slice(&n.to_le_bytes());
                Ok(())
            })
        }
        _ => {
            // Byte-length families: a u8 length (their values are at most 17 bytes).
            out.push(0);
            value_bytes(ty, ti.code_page(), v, out).and_then(|()| {
                out[start] = u8::try_from(out.len() - start - 1).map_err(|_| mismatch(v, ty))?;
                Ok(())
            })
        }
    };
    if r.is_err() {
        out.truncate(start);
    }
    r
}

/// A non-NULL text, ntext or image value: length u32 and the bytes.
fn put_long_value(ti: &TypeInfo, ty: &SqlType, v: &Value, out: &mut Vec<u8>) -> std::result::Result<(), EncodeError> {
    let TypeInfo::Long { len: max, .. } = ti else { return Err(mismatch(v, ty)) };
    let start = out.len();
    out.extend_from_slice(&[0; 4]);
    let r = value_bytes(ty, ti.code_page(), v, out).and_then(|()| {
        let n = u32::try_from(out.len() - start - 4).ok().filter(|n| n <= max).ok_or_else(|| mismatch(v, ty))?;
        out[start..start + 4].copy_from_slice(&n.to_le_bytes());
        Ok(())
    });
    if r.is_err() {
        out.truncate(start);
    }
    r
}

/// A value as an RPC parameter or RETURNVALUE carries it: as [`encode_value`] but for
/// text, ntext and image, which have no text pointer there (length u32, 0xFFFFFFFF for
/// NULL, and the bytes).
pub fn encode_param_value(
    ti: &TypeInfo,
    ty: &SqlType,
    v: &Value,
    out: &mut Vec<u8>,
) -> std::result::Result<(), EncodeError> {
    match ti {
        TypeInfo::Long { .. } if v.is_null() => {
            out.extend_from_slice(&LONG_NULL.to_le_bytes());
            Ok(())
        }
        TypeInfo::Long { .. } => put_long_value(ti, ty, v, out),
        _ => encode_value(ti, ty, v, out),
    }
}

/// Reads what [`encode_param_value`] writes (RPC parameters, RETURNVALUE). The max
/// length a client declares for text, ntext or image is not a limit (pytds declares 0).
pub fn decode_param_value(ti: &TypeInfo, r: &mut Reader) -> Result<Value> {
    let TypeInfo::Long { .. } = ti else { return decode_value(ti, r) };
    let ty = ti.sql_type()?;
    let n = r.u32_le("value length")?;
    if n == LONG_NULL {
        return Ok(Value::Null);
    }
    let mut v = Value::Null;
    decode_bytes(ty, ti.code_page(), Cow::Borrowed(r.bytes(n as usize, "value")?), &mut v)?;
    Ok(v)
}

/// [`encode_value`] for the commonest values of a result stream, written whole: a
/// non-NULL int, bigint, ASCII varchar/char or datetime2 of the column's own type. False
/// (and `out` untouched) for anything else: the general path writes it or reports it.
fn encode_common(ti: &TypeInfo, ty: &SqlType, v: &Value, out: &mut Vec<u8>) -> bool {
    match (ti, *ty, v) {
        (TypeInfo::Fixed(_), SqlType::Int, Value::Int(x)) => out.extend_from_slice(&x.to_le_bytes()),
        (TypeInfo::ByteLen { .. }, SqlType::Int, Value::Int(x)) => {
            let b = x.to_le_bytes();
            out.extend_from_slice(&[4, b[0], b[1], b[2], b[3]]);
        }
        (TypeInfo::Fixed(_), SqlType::BigInt, Value::BigInt(x)) => out.extend_from_slice(&x.to_le_bytes()),
        (TypeInfo::ByteLen { .. }, SqlType::BigInt, Value::BigInt(x)) => {
            out.push(8);
            out.extend_from_slice(&x.to_le_bytes());
        }
        (TypeInfo::ShortLen { len, .. }, SqlType::VarChar { .. } | SqlType::Char { .. }, Value::String(s))
            if *len != PLP_MARKER && s.len() <= usize::from(*len) && s.is_ascii() =>
        {
            // ASCII is the same bytes in every code page.
            out.extend_from_slice(&(s.len() as u16).to_le_bytes());
            out.extend_from_slice(s.as_bytes());
        }
        (TypeInfo::Scaled { .. }, SqlType::DateTime2 { scale }, &Value::DateTime2 { days, ticks, .. }) => {
            let t = usize::from(time_storage_len(scale));
            out.push((t + 3) as u8);
            put_uint_le(out, time_units(ticks, scale), t);
            put_uint_le(out, u64::from(days), 3);
        }
        _ => return false,
    }
    true
}

/// A PLP value: total length, chunks, terminator.
pub fn put_plp(out: &mut Vec<u8>, bytes: &[u8]) {
    out.extend_from_slice(&(bytes.len() as u64).to_le_bytes());
    for chunk in bytes.chunks(PLP_CHUNK) {
        out.extend_from_slice(&(chunk.len() as u32).to_le_bytes());
        out.extend_from_slice(chunk);
    }
    out.extend_from_slice(&0u32.to_le_bytes());
}

/// Reads a PLP value; None for NULL. The declared total length is only trusted after the
/// chunks that make it up have actually been read.
pub fn read_plp(r: &mut Reader) -> Result<Option<Vec<u8>>> {
    let total = r.u64_le("PLP length")?;
    if total == PLP_NULL {
        return Ok(None);
    }
    if total != PLP_UNKNOWN_LEN && total > r.remaining() as u64 {
        return Err(TdsError::Truncated("PLP value"));
    }
    let mut out = Vec::with_capacity(if total == PLP_UNKNOWN_LEN { 0 } else { total as usize });
    loop {
        let n = r.u32_le("PLP chunk")? as usize;
        if n == 0 {
            break;
        }
        out.extend_from_slice(r.bytes(n, "PLP chunk")?);
    }
    if total != PLP_UNKNOWN_LEN && out.len() as u64 != total {
        return Err(TdsError::invalid("PLP value", format!("{} bytes in chunks, {total} declared", out.len())));
    }
    Ok(Some(out))
}

fn uint_le(b: &[u8]) -> u64 {
    let mut a = [0u8; 8];
    a[..b.len().min(8)].copy_from_slice(&b[..b.len().min(8)]);
    u64::from_le_bytes(a)
}

fn invalid_value(ty: &SqlType, detail: impl std::fmt::Display) -> TdsError {
    TdsError::invalid("value", format!("{ty}: {detail}"))
}

/// Reads one value of a TYPE_INFO (RPC parameters, RETURNVALUE, ROW), checked against the
/// type's rules (a datetime with impossible ticks, a decimal beyond its precision, ... are
/// errors, never values).
pub fn decode_value(ti: &TypeInfo, r: &mut Reader) -> Result<Value> {
    let mut v = Value::Null;
    decode_value_into(ti, &ti.sql_type()?, r, &mut v)?;
    Ok(v)
}

/// [`decode_value`] for a caller decoding many rows into the same row buffer: `ty` is
/// `ti.sql_type()` (worked out once per column), and a char, varchar or binary value
/// reuses the buffer of the string or binary `slot` held before, so decoding allocates
/// nothing once the buffers have grown. After an error `slot` holds NULL or a value.
pub fn decode_value_into(ti: &TypeInfo, ty: &SqlType, r: &mut Reader, slot: &mut Value) -> Result<()> {
    let ty = *ty;
    // The value's bytes (borrowed from the message but for PLP), or None for NULL.
    let data: Option<Cow<'_, [u8]>> = match ti {
        TypeInfo::Fixed(NULLTYPE) => None,
        TypeInfo::Fixed(id) => {
            let n = fixed_len(*id).unwrap_or(0);
            Some(Cow::Borrowed(r.bytes(n, "value")?))
        }
        TypeInfo::ShortLen { len: PLP_MARKER, .. } | TypeInfo::Xml | TypeInfo::Udt { .. } => {
            read_plp(r)?.map(Cow::Owned)
        }
        TypeInfo::Variant(max) => {
            let n = r.u32_le("value length")?;
            if n == 0 {
                None
            } else if n > *max {
                return Err(invalid_value(&ty, format!("length {n} beyond the declared {max}")));
            } else {
                Some(Cow::Borrowed(r.bytes(n as usize, "value")?))
            }
        }
        TypeInfo::Long { .. } => {
            // A row's form: the text pointer (none for NULL), the timestamp, the value.
            // The declared max length is not a limit, as for RPC parameters.
            let ptr = r.u8("text pointer length")?;
            if ptr == 0 {
                None
            } else {
                r.skip(usize::from(ptr) + TEXT_TIMESTAMP.len(), "text pointer")?;
                let n = r.u32_le("value length")?;
                Some(Cow::Borrowed(r.bytes(n as usize, "value")?))
            }
        }
        TypeInfo::ShortLen { len, .. } => {
            let n = r.u16_le("value length")?;
            if n == 0xFFFF {
                None
            } else if n > *len {
                return Err(invalid_value(&ty, format!("length {n} beyond the declared {len}")));
            } else {
                Some(Cow::Borrowed(r.bytes(usize::from(n), "value")?))
            }
        }
        _ => {
            let n = r.u8("value length")?;
            if n == 0 {
                None
            } else {
                Some(Cow::Borrowed(r.bytes(usize::from(n), "value")?))
            }
        }
    };
    let Some(b) = data else {
        *slot = Value::Null;
        return Ok(());
    };
    decode_bytes(ty, ti.code_page(), b, slot)
}

/// The value of type `ty` in exactly the bytes `b` (no length prefix), checked, into
/// `slot` (see [`decode_value_into`]).
fn decode_bytes(ty: SqlType, cp: CodePage, b: Cow<'_, [u8]>, slot: &mut Value) -> Result<()> {
    if ty.is_legacy_lob() {
        return decode_bytes(ty.max_equivalent(), cp, b, slot);
    }
    let want = |n: usize| -> Result<()> {
        if b.len() == n {
            Ok(())
        } else {
            Err(invalid_value(&ty, format!("{} bytes", b.len())))
        }
    };
    let v = match ty {
        // Decoded as their MAX equivalents above.
        SqlType::Text | SqlType::NText | SqlType::Image => return Err(invalid_value(&ty, "text type")),
        SqlType::Bit => {
            want(1)?;
            Value::Bit(b[0] != 0)
        }
        SqlType::TinyInt => {
            want(1)?;
            Value::TinyInt(b[0])
        }
        SqlType::SmallInt => {
            want(2)?;
            Value::SmallInt(i16::from_le_bytes([b[0], b[1]]))
        }
        SqlType::Int => {
            want(4)?;
            Value::Int(i32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        }
        SqlType::BigInt => {
            want(8)?;
            Value::BigInt(uint_le(&b) as i64)
        }
        SqlType::Real => {
            want(4)?;
            Value::Real(f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        }
        SqlType::Float => {
            want(8)?;
            Value::Float(f64::from_bits(uint_le(&b)))
        }
        SqlType::Money => {
            want(8)?;
            let hi = i32::from_le_bytes([b[0], b[1], b[2], b[3]]);
            let lo = u32::from_le_bytes([b[4], b[5], b[6], b[7]]);
            Value::Money((i64::from(hi) << 32) | i64::from(lo))
        }
        SqlType::SmallMoney => {
            want(4)?;
            Value::Money(i64::from(i32::from_le_bytes([b[0], b[1], b[2], b[3]])))
        }
        SqlType::DateTime => {
            want(8)?;
            Value::DateTime {
                days: i32::from_le_bytes([b[0], b[1], b[2], b[3]]),
                ticks: u32::from_le_bytes([b[4], b[5], b[6], b[7]]),
            }
        }
        SqlType::SmallDateTime => {
            want(4)?;
            Value::SmallDateTime { days: u16::from_le_bytes([b[0], b[1]]), minutes: u16::from_le_bytes([b[2], b[3]]) }
        }
        SqlType::Decimal { precision, scale } | SqlType::Numeric { precision, scale } => {
            if b.len() < 2 || b.len() > 17 {
                return Err(invalid_value(&ty, format!("{} bytes", b.len())));
            }
            let mut mag = [0u8; 16];
            mag[..b.len() - 1].copy_from_slice(&b[1..]);
            let m = u128::from_le_bytes(mag);
            let m = i128::try_from(m).map_err(|_| invalid_value(&ty, "magnitude too large"))?;
            let value = if b[0] == 0 { -m } else { m };
            Value::Decimal { value, precision, scale }
        }
        SqlType::Date => {
            want(3)?;
            Value::Date(uint_le(&b) as u32)
        }
        SqlType::Time { scale } | SqlType::DateTime2 { scale } | SqlType::DateTimeOffset { scale } => {
            let tl = usize::from(time_storage_len(scale));
            let extra = match ty {
                SqlType::Time { .. } => 0,
                SqlType::DateTime2 { .. } => 3,
                _ => 5,
            };
            want(tl + extra)?;
            let units = uint_le(&b[..tl]);
            let ticks = units
                .checked_mul(10u64.pow(7u32.saturating_sub(u32::from(scale))))
                .filter(|&t| t < TICKS_PER_DAY)
                .ok_or_else(|| invalid_value(&ty, "time of day out of range"))?;
            match ty {
                SqlType::Time { .. } => Value::Time { ticks, scale },
                SqlType::DateTime2 { .. } => Value::DateTime2 { days: uint_le(&b[tl..tl + 3]) as u32, ticks, scale },
                _ => Value::DateTimeOffset {
                    days: uint_le(&b[tl..tl + 3]) as u32,
                    ticks,
                    scale,
                    offset: i16::from_le_bytes([b[tl + 3], b[tl + 4]]),
                },
            }
        }
        SqlType::Char { .. } | SqlType::VarChar { .. } => {
            let mut s = match std::mem::replace(slot, Value::Null) {
                Value::String(mut s) => {
                    s.clear();
                    s
                }
                _ => String::new(),
            };
            cp.decode_into(&b, &mut s);
            Value::String(s)
        }
        SqlType::NChar { .. } | SqlType::NVarChar { .. } => {
            if !b.len().is_multiple_of(2) {
                return Err(invalid_value(&ty, "odd number of bytes of UTF-16"));
            }
            Value::String(utf16_to_string(&b))
        }
        SqlType::Xml => {
            if !b.len().is_multiple_of(2) {
                return Err(invalid_value(&ty, "odd number of bytes of UTF-16"));
            }
            let s = utf16_to_string(&b);
            Value::String(s.strip_prefix('\u{FEFF}').map(str::to_string).unwrap_or(s))
        }
        SqlType::Binary { .. } | SqlType::VarBinary { .. } => match (b, std::mem::replace(slot, Value::Null)) {
            (Cow::Borrowed(b), Value::Binary(mut buf)) => {
                buf.clear();
                buf.extend_from_slice(b);
                Value::Binary(buf)
            }
            (b, _) => Value::Binary(b.into_owned()),
        },
        SqlType::HierarchyId => {
            if types::hierarchyid::HierarchyId::decode(&b).is_none() {
                return Err(invalid_value(&ty, "hierarchyid encoding"));
            }
            Value::Binary(b.into_owned())
        }
        SqlType::Geometry | SqlType::Geography => {
            if types::spatial::Spatial::deserialize(&b, ty == SqlType::Geography).is_none() {
                return Err(invalid_value(&ty, "spatial serialization"));
            }
            Value::Binary(b.into_owned())
        }
        SqlType::UniqueIdentifier => {
            want(16)?;
            let mut g = [0u8; 16];
            g.copy_from_slice(&b);
            Value::Guid(g)
        }
        SqlType::Variant => {
            let (base, n) = types::encoding::read_variant_header(&b)
                .ok_or_else(|| invalid_value(&ty, "unknown base type or properties"))?;
            let mut inner = Value::Null;
            decode_bytes(base, CodePage::CP1252, Cow::Borrowed(&b[n..]), &mut inner)?;
            Value::variant(inner, &base).map_err(|e| invalid_value(&ty, e.message))?
        }
    };
    // Checked here first: `Value::validate` takes `offset.abs()`, which overflows for
    // i16::MIN.
    if let Value::DateTimeOffset { offset, .. } = v {
        if !(-MAX_OFFSET_MINUTES..=MAX_OFFSET_MINUTES).contains(&offset) {
            return Err(invalid_value(&ty, format!("offset of {offset} minutes")));
        }
    }
    v.validate().map_err(|e| invalid_value(&ty, e.message))?;
    *slot = v;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_column_collation_replaces_the_default_bytes() {
        let vc = SqlType::VarChar { len: Length::Bounded(10) };
        let cs = types::Collation::from_name("Latin1_General_CS_AS");
        let ti = TypeInfo::for_column(&vc, true, cs.as_ref());
        assert!(matches!(ti, TypeInfo::ShortLen { collation: Some(b), .. } if Some(b) == cs.map(|c| c.tds_bytes())));
        // Non-character types carry none; _UTF8 collations keep the default bytes.
        assert!(matches!(TypeInfo::for_column(&SqlType::Int, true, cs.as_ref()), TypeInfo::ByteLen { .. }));
        let utf8 = types::Collation::from_name("Latin1_General_100_CI_AS_SC_UTF8");
        let ti = TypeInfo::for_column(&vc, true, utf8.as_ref());
        assert!(matches!(ti, TypeInfo::ShortLen { collation: Some(DEFAULT_COLLATION), .. }));
        let ti = TypeInfo::for_column(&SqlType::Text, true, cs.as_ref());
        assert!(matches!(ti, TypeInfo::Long { collation: Some(b), .. } if Some(b) == cs.map(|c| c.tds_bytes())));
    }
}
