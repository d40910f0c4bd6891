//! Request messages after login: SQL batch (type 1), RPC (type 3) and transaction manager
//! (type 14), each starting with ALL_HEADERS in TDS 7.2 and later.
//!
//! ```text
//! ALL_HEADERS   TotalLength u32 (itself included), then headers:
//!               { HeaderLength u32 (itself included), HeaderType u16, data }
//!               type 1 query notifications (ignored), type 2 transaction descriptor
//!               (descriptor u64, outstanding request count u32), type 3 trace activity
//!               (ignored)
//! SQL batch     ALL_HEADERS, then the text in UTF-16LE to the end of the message
//! RPC           ALL_HEADERS, then one or more calls separated by a batch flag byte
//!               (0xFF; 0x80 before TDS 7.2; 0xFE "no exec" is treated the same):
//!                 NameLenProcID u16: 0xFFFF then ProcID u16 (10 sp_executesql, ...),
//!                                   else the name's length in UTF-16 units, then the name
//!                 OptionFlags u16  (fWithRecomp 1, fNoMetaData 2, fReuseMetaData 4)
//!                 parameters to the end of the call:
//!                   ParamName B_VARCHAR (with '@', or empty), StatusFlags u8
//!                   (fByRefValue 0x01 = OUTPUT, fDefaultValue 0x02), TYPE_INFO, value;
//!                   a table-valued parameter instead: 0xF3, the type's database, schema
//!                   and name (B_VARCHAR each), its columns (count u16 or 0xFFFF for
//!                   none; user type u32, flags u16 with fDefault 0x200 for a column not
//!                   sent, TYPE_INFO, an empty name), optional ORDER_UNIQUE (0x10) and
//!                   COLUMN_ORDERING (0x11) parts, 0x00, then rows (0x01 and each sent
//!                   column's value) and 0x00
//! TM request    ALL_HEADERS, RequestType u16, payload:
//!                 0 TM_GET_DTC_ADDRESS   (a u16-length buffer, ignored)
//!                 5 TM_BEGIN_XACT        IsolationLevel u8, Name
//!                 7 TM_COMMIT_XACT       Name, Flags u8 (0x01 fBeginXact:
//! 8 TM_ROLLBACK_XACT                     then IsolationLevel u8, Name)
//!                 9 TM_SAVE_XACT         Name
//!               a Name is a B_VARBYTE: a count of bytes (not characters), then UTF-16LE
//! ```
//!
//! Transaction-manager requests are run as the T-SQL they stand for ([`TmRequest::to_sql`]),
//! so the executor produces the ENVCHANGE tokens exactly as for BEGIN TRANSACTION.

use sql::request::{BulkColumn, BulkLoad, ProcRef, RpcCall, RpcParam, TableArg};
use types::{SqlType, Value};

use crate::error::{Result, TdsError};
use crate::types::{decode_param_value, decode_value_into, type_id, TypeInfo};
use crate::wire::{utf16_to_string, Reader};

pub const HEADER_QUERY_NOTIFICATIONS: u16 = 1;
pub const HEADER_TRANSACTION_DESCRIPTOR: u16 = 2;
pub const HEADER_TRACE_ACTIVITY: u16 = 3;

pub const PARAM_BY_REF: u8 = 0x01;
pub const PARAM_DEFAULT: u8 = 0x02;
pub const PARAM_ENCRYPTED: u8 = 0x08;

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AllHeaders {
    pub transaction_descriptor: Option<u64>,
    pub outstanding_requests: Option<u32>,
}

/// Reads ALL_HEADERS when the message starts with one. TDS 7.2+ clients always send it;
/// `required` makes a missing one an error.
pub fn decode_all_headers(r: &mut Reader, required: bool) -> Result<AllHeaders> {
    let mut h = AllHeaders::default();
    if !required && r.remaining() < 4 {
        return Ok(h);
    }
    let total = r.clone().u32_le("ALL_HEADERS")? as usize;
    if !required && (total < 4 || total > r.remaining()) {
        // Not an ALL_HEADERS (a TDS 7.1 client's text begins here).
        return Ok(h);
    }
    r.skip(4, "ALL_HEADERS")?;
    if total < 4 {
        return Err(TdsError::invalid("ALL_HEADERS", format!("total length {total}")));
    }
    let mut body = Reader::new(r.bytes(total - 4, "ALL_HEADERS")?);
    while !body.is_empty() {
        let len = body.u32_le("ALL_HEADERS header")? as usize;
        if len < 6 {
            return Err(TdsError::invalid("ALL_HEADERS", format!("header length {len}")));
        }
        let ty = body.u16_le("ALL_HEADERS header")?;
        let data = body.bytes(len - 6, "ALL_HEADERS header")?;
        if ty == HEADER_TRANSACTION_DESCRIPTOR {
            let mut d = Reader::new(data);
            h.transaction_descriptor = Some(d.u64_le("transaction descriptor header")?);
            h.outstanding_requests = Some(d.u32_le("transaction descriptor header")?);
        }
    }
    Ok(h)
}

/// ALL_HEADERS with a transaction descriptor header (clients; tests).
pub fn encode_all_headers(descriptor: u64, outstanding: u32) -> Vec<u8> {
    let mut out = Vec::with_capacity(22);
    out.extend_from_slice(&22u32.to_le_bytes());
    out.extend_from_slice(&18u32.to_le_bytes());
    out.extend_from_slice(&HEADER_TRANSACTION_DESCRIPTOR.to_le_bytes());
    out.extend_from_slice(&descriptor.to_le_bytes());
    out.extend_from_slice(&outstanding.to_le_bytes());
    out
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SqlBatch {
    pub headers: AllHeaders,
    pub text: String,
}

pub fn decode_sql_batch(data: &[u8], headers_required: bool) -> Result<SqlBatch> {
    let mut r = Reader::new(data);
    let headers = decode_all_headers(&mut r, headers_required)?;
    let rest = r.rest();
    if !rest.len().is_multiple_of(2) {
        return Err(TdsError::invalid("SQL batch", "odd number of bytes of UTF-16 text"));
    }
    Ok(SqlBatch { headers, text: utf16_to_string(rest) })
}

#[derive(Debug, Clone, PartialEq)]
pub struct RpcRequest {
    pub headers: AllHeaders,
    pub calls: Vec<RpcCall>,
}

fn is_batch_flag(b: u8) -> bool {
    matches!(b, 0x80 | 0xFE | 0xFF)
}

pub fn decode_rpc(data: &[u8], headers_required: bool) -> Result<RpcRequest> {
    let mut r = Reader::new(data);
    let headers = decode_all_headers(&mut r, headers_required)?;
    let mut calls = Vec::new();
    loop {
        calls.push(decode_call(&mut r)?);
        match r.peek_u8() {
            None => break,
            Some(b) if is_batch_flag(b) => {
                r.skip(1, "RPC batch flag")?;
                if r.is_empty() {
                    break;
                }
            }
            Some(b) => return Err(TdsError::invalid("RPC", format!("unexpected byte {b:#04x} after a call"))),
        }
    }
    Ok(RpcRequest { headers, calls })
}

fn decode_call(r: &mut Reader) -> Result<RpcCall> {
    let name_len = r.u16_le("RPC procedure")?;
    let procedure = if name_len == 0xFFFF {
        ProcRef::Id(r.u16_le("RPC procedure id")?)
    } else {
        let b = r.bytes(usize::from(name_len) * 2, "RPC procedure name")?;
        ProcRef::Name(utf16_to_string(b))
    };
    let _option_flags = r.u16_le("RPC option flags")?;
    let mut params = Vec::new();
    while let Some(b) = r.peek_u8() {
        if is_batch_flag(b) {
            break;
        }
        let name = r.b_varchar("RPC parameter name")?;
        let status = r.u8("RPC parameter status")?;
        if status & PARAM_ENCRYPTED != 0 {
            return Err(TdsError::invalid(
                "RPC parameter",
                "encrypted parameters (Always Encrypted) are not supported",
            ));
        }
        let name = if name.is_empty() { None } else { Some(name) };
        if r.peek_u8() == Some(type_id::TVP) {
            r.u8("TVP")?;
            let table = decode_tvp(r)?;
            params.push(RpcParam {
                name,
                ty: SqlType::Int,
                value: Value::Null,
                output: false,
                table: Some(Box::new(table)),
            });
            continue;
        }
        let ti = TypeInfo::decode(r)?;
        let ty = ti.sql_type()?;
        let value = decode_param_value(&ti, r)?;
        params.push(RpcParam { name, ty, value, output: status & PARAM_BY_REF != 0, table: None });
    }
    Ok(RpcCall { procedure, params })
}

/// A TVP column's fDefault flag: its values are not sent.
const TVP_COLUMN_DEFAULT: u16 = 0x200;

/// A table-valued parameter after its 0xF3 type byte (see the module doc).
fn decode_tvp(r: &mut Reader) -> Result<TableArg> {
    let what = "TVP";
    let _db = r.b_varchar(what)?;
    let schema = r.b_varchar(what)?;
    let type_name = r.b_varchar(what)?;
    let count = r.u16_le(what)?;
    let mut sent = Vec::new();
    let mut ordinals = Vec::new();
    let mut data = BulkLoad::default();
    if count != 0xFFFF {
        for i in 0..usize::from(count) {
            r.u32_le(what)?;
            let flags = r.u16_le(what)?;
            let ti = TypeInfo::decode(r)?;
            let ty = ti.sql_type()?;
            r.b_varchar(what)?;
            if flags & TVP_COLUMN_DEFAULT == 0 {
                sent.push((ti, ty));
                ordinals.push(i);
                data.columns.push(BulkColumn { name: String::new(), ty });
            }
        }
    }
    // Optional ORDER_UNIQUE and COLUMN_ORDERING parts (hints only), then TVP_END_TOKEN.
    loop {
        match r.u8(what)? {
            0x00 => break,
            0x10 => {
                let n = r.u16_le(what)?;
                r.skip(usize::from(n) * 3, what)?;
            }
            0x11 => {
                let n = r.u16_le(what)?;
                r.skip(usize::from(n) * 2, what)?;
            }
            other => return Err(TdsError::invalid(what, format!("unexpected token {other:#04x}"))),
        }
    }
    loop {
        match r.u8(what)? {
            0x00 => break,
            0x01 => {
                let mut row = Vec::with_capacity(sent.len());
                for (ti, ty) in &sent {
                    let mut v = Value::Null;
                    decode_value_into(ti, ty, r, &mut v)?;
                    row.push(v);
                }
                data.rows.push(row);
            }
            other => return Err(TdsError::invalid(what, format!("unexpected row token {other:#04x}"))),
        }
    }
    Ok(TableArg { schema, type_name, ordinals, data })
}

pub const TM_GET_DTC_ADDRESS: u16 = 0;
pub const TM_PROPAGATE_XACT: u16 = 1;
pub const TM_BEGIN_XACT: u16 = 5;
pub const TM_PROMOTE_XACT: u16 = 6;
pub const TM_COMMIT_XACT: u16 = 7;
pub const TM_ROLLBACK_XACT: u16 = 8;
pub const TM_SAVE_XACT: u16 = 9;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TmRequest {
    GetDtcAddress,
    /// Isolation level 0 keeps the current one; 1 READ UNCOMMITTED .. 4 SERIALIZABLE,
    /// 5 SNAPSHOT.
    Begin {
        isolation: u8,
        name: String,
    },
    Commit {
        name: String,
        begin_after: Option<(u8, String)>,
    },
    Rollback {
        name: String,
        begin_after: Option<(u8, String)>,
    },
    Save {
        name: String,
    },
    /// TM_PROPAGATE_XACT, TM_PROMOTE_XACT: distributed transactions, not supported.
    Unsupported(u16),
}

pub fn decode_tm(data: &[u8], headers_required: bool) -> Result<(AllHeaders, TmRequest)> {
    let mut r = Reader::new(data);
    let headers = decode_all_headers(&mut r, headers_required)?;
    let ty = r.u16_le("transaction manager request")?;
    let begin_after = |r: &mut Reader| -> Result<Option<(u8, String)>> {
        let flags = r.u8("transaction manager request")?;
        if flags & 0x01 != 0 {
            let iso = r.u8("transaction manager request")?;
            Ok(Some((iso, xact_name(r, "transaction manager request")?)))
        } else {
            Ok(None)
        }
    };
    let req = match ty {
        TM_GET_DTC_ADDRESS => TmRequest::GetDtcAddress,
        TM_BEGIN_XACT => {
            let isolation = r.u8("TM_BEGIN_XACT")?;
            let name = if r.is_empty() { String::new() } else { xact_name(&mut r, "TM_BEGIN_XACT")? };
            TmRequest::Begin { isolation, name }
        }
        TM_COMMIT_XACT | TM_ROLLBACK_XACT => {
            let name = xact_name(&mut r, "TM_COMMIT_XACT")?;
            let begin_after = if r.is_empty() { None } else { begin_after(&mut r)? };
            if ty == TM_COMMIT_XACT {
                TmRequest::Commit { name, begin_after }
            } else {
                TmRequest::Rollback { name, begin_after }
            }
        }
        TM_SAVE_XACT => TmRequest::Save { name: xact_name(&mut r, "TM_SAVE_XACT")? },
        TM_PROPAGATE_XACT | TM_PROMOTE_XACT => TmRequest::Unsupported(ty),
        other => return Err(TdsError::invalid("transaction manager request", format!("type {other}"))),
    };
    Ok((headers, req))
}

/// A transaction or savepoint name in a TM request: B_VARBYTE holding UTF-16LE.
fn xact_name(r: &mut Reader, what: &'static str) -> Result<String> {
    let b = r.b_varbyte(what)?;
    if b.len() % 2 != 0 {
        return Err(TdsError::invalid(what, format!("a name of {} bytes (odd)", b.len())));
    }
    Ok(utf16_to_string(b))
}

/// A delimited identifier for a transaction or savepoint name.
fn quote_name(name: &str) -> String {
    format!("[{}]", name.replace(']', "]]"))
}

fn isolation_sql(level: u8) -> Option<&'static str> {
    Some(match level {
        1 => "READ UNCOMMITTED",
        2 => "READ COMMITTED",
        3 => "REPEATABLE READ",
        4 => "SERIALIZABLE",
        5 => "SNAPSHOT",
        _ => return None,
    })
}

fn begin_sql(isolation: u8, name: &str) -> String {
    let mut s = String::new();
    if let Some(level) = isolation_sql(isolation) {
        s.push_str("SET TRANSACTION ISOLATION LEVEL ");
        s.push_str(level);
        s.push_str("; ");
    }
    s.push_str("BEGIN TRANSACTION");
    if !name.is_empty() {
        s.push(' ');
        s.push_str(&quote_name(name));
    }
    s
}

impl TmRequest {
    /// The T-SQL equivalent, run through the session's batch executor; None for the
    /// requests answered without running anything (GET_DTC_ADDRESS) or refused.
    pub fn to_sql(&self) -> Option<String> {
        let with_begin = |mut s: String, begin: &Option<(u8, String)>| {
            if let Some((iso, name)) = begin {
                s.push_str("; ");
                s.push_str(&begin_sql(*iso, name));
            }
            s
        };
        Some(match self {
            TmRequest::GetDtcAddress | TmRequest::Unsupported(_) => return None,
            TmRequest::Begin { isolation, name } => begin_sql(*isolation, name),
            TmRequest::Commit { name, begin_after } => {
                let s = if name.is_empty() {
                    "COMMIT TRANSACTION".to_string()
                } else {
                    format!("COMMIT TRANSACTION {}", quote_name(name))
                };
                with_begin(s, begin_after)
            }
            TmRequest::Rollback { name, begin_after } => {
                let s = if name.is_empty() {
                    "ROLLBACK TRANSACTION".to_string()
                } else {
                    format!("ROLLBACK TRANSACTION {}", quote_name(name))
                };
                with_begin(s, begin_after)
            }
            TmRequest::Save { name } => format!("SAVE TRANSACTION {}", quote_name(name)),
        })
    }
}
