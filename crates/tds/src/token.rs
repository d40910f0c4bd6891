//! The token stream of a response ([MS-TDS] 2.2.7): encoders the server uses, and a
//! decoder (for tests, tools and the fuzz targets) that reads what the encoders write.
//!
//! Byte layouts (integers little-endian unless noted):
//!
//! ```text
//! COLMETADATA  81  count u16; CekTable count u16 (0) only after Always Encrypted was
//!                  acknowledged at login; per column: UserType u32 (0), Flags u16 (0x01
//!                  nullable, 0x08 updatable, 0x10 identity), TYPE_INFO, ColName B_VARCHAR
//! ROW          D1  each column's value as TYPE_INFO says (types.rs)
//! NBCROW       D2  null bitmap ((count + 7) / 8 bytes, bit i set = column i NULL), then
//!                  the non-NULL values; used when it is shorter than ROW
//! DONE         FD  Status u16, CurCmd u16, DoneRowCount u64
//! DONEPROC     FE  same layout
//! DONEINPROC   FF  same layout; Status bits: 0x01 MORE, 0x02 ERROR, 0x04 INXACT,
//!                  0x10 COUNT (row count valid), 0x20 ATTN (attention acknowledged),
//!                  0x100 SRVERROR. MORE is set on every DONE but the last of a response.
//! ERROR        AA  Length u16, Number i32, State u8, Class u8, MsgText US_VARCHAR,
//! INFO         AB  ServerName B_VARCHAR, ProcName B_VARCHAR, LineNumber i32
//! LOGINACK     AD  Length u16, Interface u8 (1 = T-SQL), TDSVersion u32 BIG-endian,
//!                  ProgName B_VARCHAR, ProgVersion 4 bytes (major, minor, build hi, lo)
//! ENVCHANGE    E3  Length u16, Type u8, NewValue, OldValue:
//!                  1 database, 2 language, 4 packet size: B_VARCHAR new, B_VARCHAR old
//!                  7 SQL collation: B_VARBYTE new (5 bytes), B_VARBYTE old
//!                  8 begin transaction: B_VARBYTE new (8-byte descriptor), B_VARBYTE old (0)
//!                  9 commit / 10 rollback: B_VARBYTE new (0), B_VARBYTE old (descriptor)
//!                  18 reset connection ack: B_VARBYTE new (0), B_VARBYTE old (0)
//! RETURNSTATUS 79  Value i32
//! RETURNVALUE  AC  ParamOrdinal u16, ParamName B_VARCHAR, Status u8 (0x01 output
//!                  parameter), UserType u32, Flags u16, TYPE_INFO, Value
//! FEATUREEXTACK AE repeated { FeatureId u8, length u32, data }, ended by 0xFF;
//!                  COLUMNENCRYPTION (04) acknowledged with version 1 when asked for
//! ORDER        A9  Length u16, column numbers u16 (decoded only)
//! ```

use sql::results::{ColumnInfo, Done, DoneKind, EnvChange, ReturnValue};
use types::{SqlError, SqlType, Value};

use crate::error::{Result, TdsError};
use crate::types::{decode_param_value, decode_value, encode_param_value, encode_value, EncodeError, TypeInfo};
use crate::wire::{put_b_varchar, put_us_varchar, Reader};

pub mod token_type {
    pub const COLMETADATA: u8 = 0x81;
    pub const RETURNSTATUS: u8 = 0x79;
    pub const ORDER: u8 = 0xA9;
    pub const ERROR: u8 = 0xAA;
    pub const INFO: u8 = 0xAB;
    pub const RETURNVALUE: u8 = 0xAC;
    pub const LOGINACK: u8 = 0xAD;
    pub const FEATUREEXTACK: u8 = 0xAE;
    pub const ROW: u8 = 0xD1;
    pub const NBCROW: u8 = 0xD2;
    pub const ENVCHANGE: u8 = 0xE3;
    pub const DONE: u8 = 0xFD;
    pub const DONEPROC: u8 = 0xFE;
    pub const DONEINPROC: u8 = 0xFF;
}

pub mod done_status {
    pub const FINAL: u16 = 0x00;
    pub const MORE: u16 = 0x01;
    pub const ERROR: u16 = 0x02;
    pub const INXACT: u16 = 0x04;
    pub const COUNT: u16 = 0x10;
    pub const ATTN: u16 = 0x20;
    pub const SRVERROR: u16 = 0x100;
}

pub mod env_type {
    pub const DATABASE: u8 = 1;
    pub const LANGUAGE: u8 = 2;
    pub const PACKET_SIZE: u8 = 4;
    pub const SQL_COLLATION: u8 = 7;
    pub const BEGIN_TRAN: u8 = 8;
    pub const COMMIT_TRAN: u8 = 9;
    pub const ROLLBACK_TRAN: u8 = 10;
    pub const RESET_ACK: u8 = 18;
}

use token_type::*;

/// The program name and version LOGINACK reports. Drivers gate features on the product
/// version, so Mesquite reports SQL Server 2022's.
pub const PROG_NAME: &str = "Microsoft SQL Server";
pub const PROG_VERSION: [u8; 4] = [16, 0, 0x03, 0xE8];

/// A DONE-family token as the encoder holds it before deciding on MORE.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DoneToken {
    pub token: u8,
    pub status: u16,
    pub cur_cmd: u16,
    pub row_count: u64,
}

impl DoneToken {
    pub fn from_done(d: &Done) -> DoneToken {
        let token = match d.kind {
            DoneKind::Statement => DONE,
            DoneKind::InProc => DONEINPROC,
            DoneKind::Proc => DONEPROC,
        };
        let mut status = 0;
        if d.row_count.is_some() {
            status |= done_status::COUNT;
        }
        if d.error {
            status |= done_status::ERROR;
        }
        if d.in_xact {
            status |= done_status::INXACT;
        }
        DoneToken { token, status, cur_cmd: 0, row_count: d.row_count.unwrap_or(0) }
    }

    pub fn encode(&self, out: &mut Vec<u8>) {
        out.push(self.token);
        out.extend_from_slice(&self.status.to_le_bytes());
        out.extend_from_slice(&self.cur_cmd.to_le_bytes());
        out.extend_from_slice(&self.row_count.to_le_bytes());
    }
}

/// Writes a token with a u16 length prefix: `body` fills it.
fn with_len(out: &mut Vec<u8>, token: u8, body: impl FnOnce(&mut Vec<u8>)) {
    out.push(token);
    let at = out.len();
    out.extend_from_slice(&[0, 0]);
    body(out);
    let len = (out.len() - at - 2).min(usize::from(u16::MAX)) as u16;
    out[at..at + 2].copy_from_slice(&len.to_le_bytes());
}

pub fn put_loginack(out: &mut Vec<u8>, tds_version: u32) {
    with_len(out, LOGINACK, |b| {
        b.push(1);
        b.extend_from_slice(&tds_version.to_be_bytes());
        put_b_varchar(b, PROG_NAME);
        b.extend_from_slice(&PROG_VERSION);
    });
}

/// FEATUREEXTACK: COLUMNENCRYPTION with `column_encryption`'s version when given (no
/// enclave type: version 1), nothing else.
pub fn put_feature_ext_ack(out: &mut Vec<u8>, column_encryption: Option<u8>) {
    out.push(FEATUREEXTACK);
    if let Some(v) = column_encryption {
        out.push(crate::login::FEATURE_COLUMN_ENCRYPTION);
        out.extend_from_slice(&1u32.to_le_bytes());
        out.push(v);
    }
    out.push(0xFF);
}

pub fn put_env_strings(out: &mut Vec<u8>, ty: u8, new: &str, old: &str) {
    with_len(out, ENVCHANGE, |b| {
        b.push(ty);
        put_b_varchar(b, new);
        put_b_varchar(b, old);
    });
}

pub fn put_env_bytes(out: &mut Vec<u8>, ty: u8, new: &[u8], old: &[u8]) {
    // Two per transaction (begin, commit): one reservation, no per-push growth checks
    // that call out.
    let (new, old) = (&new[..new.len().min(255)], &old[..old.len().min(255)]);
    let len = 3 + new.len() + old.len();
    out.reserve(3 + len);
    out.push(ENVCHANGE);
    out.extend_from_slice(&(len as u16).to_le_bytes());
    out.push(ty);
    out.push(new.len() as u8);
    out.extend_from_slice(new);
    out.push(old.len() as u8);
    out.extend_from_slice(old);
}

pub fn put_env_change(out: &mut Vec<u8>, change: &EnvChange) {
    match change {
        EnvChange::Database { old, new } => put_env_strings(out, env_type::DATABASE, new, old),
        EnvChange::Language { old, new } => put_env_strings(out, env_type::LANGUAGE, new, old),
        EnvChange::Collation { old, new } => put_env_bytes(
            out,
            env_type::SQL_COLLATION,
            &crate::types::collation_bytes(new),
            &crate::types::collation_bytes(old),
        ),
        EnvChange::BeginTransaction { descriptor } => {
            put_env_bytes(out, env_type::BEGIN_TRAN, &descriptor.to_le_bytes(), &[])
        }
        EnvChange::CommitTransaction { descriptor } => {
            put_env_bytes(out, env_type::COMMIT_TRAN, &[], &descriptor.to_le_bytes())
        }
        EnvChange::RollbackTransaction { descriptor } => {
            put_env_bytes(out, env_type::ROLLBACK_TRAN, &[], &descriptor.to_le_bytes())
        }
    }
}

/// An ERROR (or, with `info`, INFO) token.
pub fn put_message(out: &mut Vec<u8>, info: bool, e: &SqlError, server_name: &str) {
    with_len(out, if info { INFO } else { ERROR }, |b| {
        b.extend_from_slice(&e.number.to_le_bytes());
        b.push(e.state);
        b.push(e.severity);
        put_us_varchar(b, &e.message);
        put_b_varchar(b, server_name);
        put_b_varchar(b, e.procedure.as_deref().unwrap_or(""));
        b.extend_from_slice(&(e.line as i32).to_le_bytes());
    });
}

pub fn put_return_status(out: &mut Vec<u8>, status: i32) {
    out.push(RETURNSTATUS);
    out.extend_from_slice(&status.to_le_bytes());
}

/// How one column of the current result set is written.
#[derive(Debug, Clone, PartialEq)]
pub struct ColumnEncoding {
    pub ty: SqlType,
    pub type_info: TypeInfo,
}

fn column_flags(c: &ColumnInfo) -> u16 {
    let mut f = 0u16;
    if c.nullable {
        f |= 0x01;
    }
    if c.updatable {
        f |= 0x08; // usUpdateable = 1 (read/write), bits 2-3
    }
    if c.identity {
        f |= 0x10;
    }
    f
}

/// COLMETADATA for a result set; returns how each column's values are to be written.
/// `cek_table`: the connection negotiated Always Encrypted, so the column count is
/// followed by the CEK table ([MS-TDS] 2.2.7.4 CekTable), always empty here: no column
/// is encrypted (nor is any column's fEncrypted flag set).
pub fn put_colmetadata(out: &mut Vec<u8>, columns: &[ColumnInfo], cek_table: bool) -> Vec<ColumnEncoding> {
    out.push(COLMETADATA);
    out.extend_from_slice(&(columns.len().min(0xFFFE) as u16).to_le_bytes());
    if cek_table {
        out.extend_from_slice(&0u16.to_le_bytes());
    }
    let mut enc = Vec::with_capacity(columns.len());
    for c in columns.iter().take(0xFFFE) {
        let ti = TypeInfo::for_column(&c.ty, c.nullable, c.collation.as_ref());
        out.extend_from_slice(&0u32.to_le_bytes());
        out.extend_from_slice(&column_flags(c).to_le_bytes());
        ti.encode_column(out);
        put_b_varchar(out, &c.name);
        enc.push(ColumnEncoding { ty: c.ty, type_info: ti });
    }
    enc
}

/// A ROW, or an NBCROW when the row has NULLs and the bitmap is shorter than the NULL
/// markers it replaces (or a NULL sits in a NOT NULL fixed-length column, which only
/// NBCROW can carry). A value that does not fit its column is an error and nothing is
/// written.
pub fn put_row(out: &mut Vec<u8>, columns: &[ColumnEncoding], row: &[Value]) -> std::result::Result<(), EncodeError> {
    if row.len() != columns.len() {
        return Err(EncodeError { value: "row", ty: format!("{} columns (row has {})", columns.len(), row.len()) });
    }
    let mut null_bytes = 0usize;
    let mut must_nbc = false;
    for (c, v) in columns.iter().zip(row) {
        if v.is_null() {
            match c.type_info.null_len() {
                Some(n) => null_bytes += n,
                None => must_nbc = true,
            }
        }
    }
    let bitmap_len = columns.len().div_ceil(8);
    let start = out.len();
    let result = if must_nbc || (null_bytes > 0 && bitmap_len < null_bytes) {
        out.push(NBCROW);
        let at = out.len();
        out.resize(at + bitmap_len, 0);
        for (i, v) in row.iter().enumerate() {
            if v.is_null() {
                out[at + i / 8] |= 1 << (i % 8);
            }
        }
        columns
            .iter()
            .zip(row)
            .filter(|(_, v)| !v.is_null())
            .try_for_each(|(c, v)| encode_value(&c.type_info, &c.ty, v, out))
    } else {
        out.push(ROW);
        columns.iter().zip(row).try_for_each(|(c, v)| encode_value(&c.type_info, &c.ty, v, out))
    };
    if result.is_err() {
        out.truncate(start);
    }
    result
}

pub fn put_return_value(out: &mut Vec<u8>, rv: &ReturnValue) -> std::result::Result<(), EncodeError> {
    let start = out.len();
    out.push(RETURNVALUE);
    out.extend_from_slice(&rv.ordinal.to_le_bytes());
    put_b_varchar(out, &rv.name);
    out.push(0x01);
    out.extend_from_slice(&0u32.to_le_bytes());
    out.extend_from_slice(&0x0001u16.to_le_bytes()); // nullable
    let ti = TypeInfo::for_sql_type(&rv.ty, true);
    ti.encode(out);
    let r = encode_param_value(&ti, &rv.ty, &rv.value, out);
    if r.is_err() {
        out.truncate(start);
    }
    r
}

// ---------------------------------------------------------------------------------------
// Decoding

/// One column as COLMETADATA described it.
#[derive(Debug, Clone, PartialEq)]
pub struct ColumnMeta {
    pub name: String,
    pub flags: u16,
    pub type_info: TypeInfo,
}

#[derive(Debug, Clone, PartialEq)]
pub struct MessageToken {
    pub number: i32,
    pub state: u8,
    pub class: u8,
    pub message: String,
    pub server: String,
    pub procedure: String,
    pub line: i32,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Token {
    ColMetadata(Vec<ColumnMeta>),
    Row(Vec<Value>),
    Done(DoneToken),
    Error(MessageToken),
    Info(MessageToken),
    LoginAck { interface: u8, tds_version: u32, prog_name: String, version: [u8; 4] },
    EnvChange { ty: u8, new: Vec<u8>, old: Vec<u8> },
    ReturnStatus(i32),
    ReturnValue { ordinal: u16, name: String, status: u8, type_info: TypeInfo, value: Value },
    FeatureExtAck(Vec<u8>),
    Order(Vec<u16>),
}

impl Token {
    /// ENVCHANGE values of the string types (database, language, packet size).
    pub fn env_strings(&self) -> Option<(u8, String, String)> {
        match self {
            Token::EnvChange { ty, new, old } if matches!(*ty, 1..=6 | 13 | 19) => {
                let s = |b: &[u8]| crate::wire::utf16_to_string(b);
                Some((*ty, s(new), s(old)))
            }
            _ => None,
        }
    }
}

fn decode_message(r: &mut Reader) -> Result<MessageToken> {
    let len = usize::from(r.u16_le("ERROR/INFO")?);
    message_body(&mut Reader::new(r.bytes(len, "ERROR/INFO")?))
}

/// The type, new value and old value of an ENVCHANGE token, from its body (after the
/// length). Types 16 and 20 have other shapes: the rest is kept as the new value.
pub(crate) fn env_change_body(b: &mut Reader) -> Result<(u8, Vec<u8>, Vec<u8>)> {
    let ty = b.u8("ENVCHANGE")?;
    let (new, old) = match ty {
        1..=6 | 13 | 19 => {
            let n = usize::from(b.u8("ENVCHANGE")?);
            let new = b.bytes(n * 2, "ENVCHANGE")?.to_vec();
            let o = usize::from(b.u8("ENVCHANGE")?);
            (new, b.bytes(o * 2, "ENVCHANGE")?.to_vec())
        }
        7..=12 | 15 | 17 | 18 => {
            let n = b.b_varbyte("ENVCHANGE")?.to_vec();
            (n, b.b_varbyte("ENVCHANGE")?.to_vec())
        }
        _ => (b.rest().to_vec(), Vec::new()),
    };
    Ok((ty, new, old))
}

/// The fields of an ERROR or INFO token, from its body (after the length).
pub(crate) fn message_body(b: &mut Reader) -> Result<MessageToken> {
    Ok(MessageToken {
        number: b.i32_le("ERROR/INFO")?,
        state: b.u8("ERROR/INFO")?,
        class: b.u8("ERROR/INFO")?,
        message: b.us_varchar("ERROR/INFO")?,
        server: b.b_varchar("ERROR/INFO")?,
        procedure: b.b_varchar("ERROR/INFO")?,
        line: b.i32_le("ERROR/INFO")?,
    })
}

/// Decodes a whole response (the tokens of one tabular-result message).
pub fn decode_tokens(data: &[u8]) -> Result<Vec<Token>> {
    let mut r = Reader::new(data);
    let mut columns: Vec<ColumnMeta> = Vec::new();
    let mut out = Vec::new();
    while !r.is_empty() {
        let t = r.u8("token")?;
        let tok = match t {
            COLMETADATA => {
                let n = r.u16_le("COLMETADATA")?;
                columns = Vec::new();
                if n != 0xFFFF {
                    for _ in 0..n {
                        let _user_type = r.u32_le("COLMETADATA")?;
                        let flags = r.u16_le("COLMETADATA")?;
                        let type_info = TypeInfo::decode_column(&mut r)?;
                        let name = r.b_varchar("COLMETADATA")?;
                        columns.push(ColumnMeta { name, flags, type_info });
                    }
                }
                Token::ColMetadata(columns.clone())
            }
            ROW => {
                let mut row = Vec::with_capacity(columns.len());
                for c in &columns {
                    row.push(decode_value(&c.type_info, &mut r)?);
                }
                Token::Row(row)
            }
            NBCROW => {
                let bitmap = r.bytes(columns.len().div_ceil(8), "NBCROW")?;
                let mut row = Vec::with_capacity(columns.len());
                for (i, c) in columns.iter().enumerate() {
                    if bitmap[i / 8] & (1 << (i % 8)) != 0 {
                        row.push(Value::Null);
                    } else {
                        row.push(decode_value(&c.type_info, &mut r)?);
                    }
                }
                Token::Row(row)
            }
            DONE | DONEPROC | DONEINPROC => Token::Done(DoneToken {
                token: t,
                status: r.u16_le("DONE")?,
                cur_cmd: r.u16_le("DONE")?,
                row_count: r.u64_le("DONE")?,
            }),
            ERROR => Token::Error(decode_message(&mut r)?),
            INFO => Token::Info(decode_message(&mut r)?),
            LOGINACK => {
                let len = usize::from(r.u16_le("LOGINACK")?);
                let mut b = Reader::new(r.bytes(len, "LOGINACK")?);
                let interface = b.u8("LOGINACK")?;
                let tds_version = b.u32_be("LOGINACK")?;
                let prog_name = b.b_varchar("LOGINACK")?;
                let mut version = [0u8; 4];
                version.copy_from_slice(b.bytes(4, "LOGINACK")?);
                Token::LoginAck { interface, tds_version, prog_name, version }
            }
            ENVCHANGE => {
                let len = usize::from(r.u16_le("ENVCHANGE")?);
                let (ty, new, old) = env_change_body(&mut Reader::new(r.bytes(len, "ENVCHANGE")?))?;
                Token::EnvChange { ty, new, old }
            }
            RETURNSTATUS => Token::ReturnStatus(r.i32_le("RETURNSTATUS")?),
            RETURNVALUE => {
                let ordinal = r.u16_le("RETURNVALUE")?;
                let name = r.b_varchar("RETURNVALUE")?;
                let status = r.u8("RETURNVALUE")?;
                let _user_type = r.u32_le("RETURNVALUE")?;
                let _flags = r.u16_le("RETURNVALUE")?;
                let type_info = TypeInfo::decode(&mut r)?;
                let value = decode_param_value(&type_info, &mut r)?;
                Token::ReturnValue { ordinal, name, status, type_info, value }
            }
            FEATUREEXTACK => {
                let mut ids = Vec::new();
                loop {
                    let id = r.u8("FEATUREEXTACK")?;
                    if id == 0xFF {
                        break;
                    }
                    let n = r.u32_le("FEATUREEXTACK")? as usize;
                    r.skip(n, "FEATUREEXTACK")?;
                    ids.push(id);
                }
                Token::FeatureExtAck(ids)
            }
            ORDER => {
                let len = usize::from(r.u16_le("ORDER")?);
                let b = r.bytes(len, "ORDER")?;
                Token::Order(b.chunks_exact(2).map(|c| u16::from_le_bytes([c[0], c[1]])).collect())
            }
            other => return Err(TdsError::invalid("token", format!("unknown token {other:#04x}"))),
        };
        out.push(tok);
    }
    Ok(out)
}
