//! SQL Server's type system as Mesquite stores and compares it: type descriptors with
//! their exact ranges and precisions, values, the byte encodings rows use on disk, and
//! `SqlError`, the one error shape every layer's errors become at the session boundary.
//!
//! Modules:
//! - [`sqltype`](mod@sqltype) — [`SqlType`], the declared type (parameters, spelling, storage sizes,
//!   precedence);
//! - [`value`](mod@value) — [`Value`], one value in its exact representation, and range checks;
//! - [`calendar`](mod@calendar) — proleptic Gregorian day numbers and the tick units of the time types;
//! - [`decimal`](mod@decimal) — fixed-point helpers for decimal and money;
//! - [`codepage`](mod@codepage) — code page 1252, the storage of char/varchar;
//! - [`format`](mod@format) — values as SQL Server shows them (`Display` for [`Value`]);
//! - [`hash`](mod@hash) — a fast hasher for the engine's in-memory hash tables;
//! - [`lang`](mod@lang) — the languages of SET LANGUAGE, with their month and day names;
//! - [`parse`](mod@parse) — CAST('text' AS type);
//! - [`encoding`](mod@encoding) — the bytes of a value inside a row;
//! - [`ucs2`](mod@ucs2) — UTF-16 code units as sent, unpaired surrogates included;
//! - [`compare`](mod@compare) — ordering, the CI_AS collation approximation, and memcmp sort keys;
//! - [`error`](mod@error) — [`SqlError`].
//!
//! Decisions where SQL Server's behaviour was not certain (each is documented again
//! where it is implemented):
//! - Display uses the ISO forms client tools show (`2024-01-02 03:04:05.997`, money with
//!   4 decimals). CAST(datetime AS varchar) and CAST(money AS varchar) use CONVERT style
//!   0 in SQL Server; [`format::format_datetime_style0`] and
//!   [`format::format_money_style0`] provide those forms for the CONVERT implementation.
//! - float and real print the shortest round-trip digits in .NET's layout (`1E+15`,
//!   `1.5E-05`), not SQL Server's 6-digit CONVERT style 0.
//! - Time rounding past 23:59:59.9999999 at a small scale wraps `time` to 00:00:00 and
//!   carries `datetime2`/`datetimeoffset` into the next day (out of range at 9999-12-31
//!   is Msg 242).
//! - A string longer than 7 fractional digits is Msg 241 for the 100 ns types; datetime
//!   rejects more than 3 (known SQL Server behaviour).
//! - Invalid dates for datetime/smalldatetime (Feb 30, month 13) are Msg 242, for the
//!   other types Msg 241.
//! - Characters outside code page 1252 stored in char/varchar become '?' (SQL Server may
//!   use a best-fit letter, e.g. 'ā' -> 'a').
//! - The collation is an approximation of SQL_Latin1_General_CP1_CI_AS; see
//!   [`compare::compare_strings`] for its limits.
//! - Parameter errors use the messages of DECLARE (Msg 192 for scale > precision; CREATE
//!   TABLE's Msg 183 names the column) and "#1" as the column ordinal of Msg 2750.

pub mod calendar;
pub mod codepage;
#[rustfmt::skip]
mod codepage_tables;
pub mod collation;
pub mod compare;
pub mod decimal;
pub mod encoding;
pub mod error;
pub mod format;
pub mod hash;
pub mod hierarchyid;
pub mod lang;
pub mod parse;
pub mod spatial;
pub mod sqltype;
pub mod ucs2;
pub mod value;

pub use codepage::CodePage;
pub use collation::Collation;
pub use compare::{compare, compare_strings, sort_key, sort_key_in, sort_key_vec};
pub use encoding::{decode, decode_to, decode_to_in, encode, encode_in};
pub use error::SqlError;
pub use parse::{fit_code_page, parse, parse_from};
pub use sqltype::{Length, SqlType, TypeArg};
pub use value::Value;
