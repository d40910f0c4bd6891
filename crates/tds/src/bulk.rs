//! The bulk-load message (packet type 7, [MS-TDS] 2.2.6.1): a COLMETADATA token
//! describing the columns, ROW tokens, then DONE. A client sends it after an INSERT BULK
//! statement; the rows are decoded here and inserted by the engine.
//!
//! Errors are SQL Server's bulk-copy errors, so a malformed message is answered and the
//! connection keeps serving: 4816 for a column whose type cannot be read, 4815 for a value
//! that does not match its column, 4002 for a stream that is not COLMETADATA, ROW*, DONE.

use sql::request::{BulkColumn, BulkLoad};
use types::{SqlError, Value};

use crate::login;
use crate::token::token_type::{COLMETADATA, DONE, NBCROW, ROW};
use crate::types::{decode_value_into, TypeInfo};
use crate::wire::Reader;

fn protocol_error(detail: &str) -> SqlError {
    SqlError::new(
        4002,
        16,
        1,
        format!("The incoming tabular data stream (TDS) protocol stream is incorrect: {detail}."),
    )
}

fn column_type_error(colid: usize) -> SqlError {
    SqlError::new(4816, 16, 1, format!("Invalid column type from bcp client for colid {colid}."))
}

fn column_length_error(colid: usize) -> SqlError {
    SqlError::new(4815, 16, 1, format!("Received an invalid column length from the bcp client for colid {colid}."))
}

/// Decodes a bulk-load message of a client speaking `tds_version` (before TDS 7.2 the
/// user type in COLMETADATA is 2 bytes, not 4).
pub fn decode_bulk_load(data: &[u8], tds_version: u32) -> Result<BulkLoad, SqlError> {
    decode_bulk_load_with(data, tds_version, false)
}

/// [`decode_bulk_load`] on a connection that negotiated Always Encrypted: the client's
/// COLMETADATA then has a CEK table after its column count, which must be empty (no
/// column is encrypted).
pub fn decode_bulk_load_with(data: &[u8], tds_version: u32, cek_table: bool) -> Result<BulkLoad, SqlError> {
    let wide_user_type = tds_version >= login::TDS_7_2 || tds_version == login::TDS_8_0;
    let mut r = Reader::new(data);
    let truncated = |_| protocol_error("the bulk-load message ended inside a token");
    if r.u8("token").map_err(truncated)? != COLMETADATA {
        return Err(protocol_error("a bulk-load message must begin with COLMETADATA"));
    }
    let n = r.u16_le("COLMETADATA").map_err(truncated)?;
    if n == 0 || n == 0xFFFF {
        return Err(protocol_error("a bulk-load message needs columns"));
    }
    if cek_table && r.u16_le("COLMETADATA").map_err(truncated)? != 0 {
        return Err(protocol_error("a bulk-load message names column encryption keys, and no column is encrypted"));
    }
    let mut infos = Vec::with_capacity(usize::from(n));
    let mut load = BulkLoad::default();
    for i in 0..usize::from(n) {
        let colid = i + 1;
        if wide_user_type {
            r.u32_le("COLMETADATA").map_err(truncated)?;
        } else {
            r.u16_le("COLMETADATA").map_err(truncated)?;
        }
        r.u16_le("COLMETADATA").map_err(truncated)?;
        let ti = TypeInfo::decode(&mut r).map_err(|_| column_type_error(colid))?;
        let ty = ti.sql_type().map_err(|_| column_type_error(colid))?;
        if let TypeInfo::Long { .. } = ti {
            // text, ntext and image name their table (one US_VARCHAR, as go-mssqldb and
            // FreeTDS send it); the INSERT BULK statement has already named it.
            r.us_varchar("COLMETADATA").map_err(truncated)?;
        }
        let name = r.b_varchar("COLMETADATA").map_err(truncated)?;
        infos.push((ti, ty));
        load.columns.push(BulkColumn { name, ty });
    }
    loop {
        // FreeTDS (pymssql's bulk_copy, freebcp) ends the message after its last row,
        // without the DONE of [MS-TDS] 2.2.6.1; SQL Server takes that, so a message that
        // ends between tokens is a complete load.
        let Some(token) = r.peek_u8() else { return Ok(load) };
        r.skip(1, "token").map_err(truncated)?;
        match token {
            ROW | NBCROW => {
                let mut nulls: &[u8] = &[];
                if token == NBCROW {
                    nulls = r.bytes(infos.len().div_ceil(8), "NBCROW").map_err(truncated)?;
                }
                let mut row = Vec::with_capacity(infos.len());
                for (i, (ti, ty)) in infos.iter().enumerate() {
                    let mut v = Value::Null;
                    if nulls.get(i / 8).is_none_or(|b| b & (1 << (i % 8)) == 0) {
                        decode_value_into(ti, ty, &mut r, &mut v).map_err(|_| column_length_error(i + 1))?;
                    }
                    row.push(v);
                }
                load.rows.push(row);
            }
            DONE => return Ok(load),
            other => return Err(protocol_error(&format!("unexpected token {other:#04x} in a bulk-load message"))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::DEFAULT_COLLATION;
    use types::SqlType;

    fn colmetadata(cols: &[(&str, TypeInfo)]) -> Vec<u8> {
        let mut b = vec![COLMETADATA];
        b.extend_from_slice(&(cols.len() as u16).to_le_bytes());
        for (name, ti) in cols {
            b.extend_from_slice(&0u32.to_le_bytes());
            b.extend_from_slice(&1u16.to_le_bytes());
            ti.encode(&mut b);
            crate::wire::put_b_varchar(&mut b, name);
        }
        b
    }

    fn done(b: &mut Vec<u8>) {
        b.push(DONE);
        b.extend_from_slice(&[0; 12]);
    }

    #[test]
    fn decodes_columns_and_rows() {
        let varchar =
            TypeInfo::ShortLen { id: crate::types::type_id::BIGVARCHAR, len: 10, collation: Some(DEFAULT_COLLATION) };
        let int = TypeInfo::ByteLen { id: crate::types::type_id::INTN, len: 4 };
        let mut b = colmetadata(&[("id", int), ("name", varchar)]);
        b.push(ROW);
        b.extend_from_slice(&[4, 7, 0, 0, 0, 2, 0, b'h', b'i']);
        b.push(ROW);
        b.extend_from_slice(&[0, 0xFF, 0xFF]);
        b.push(NBCROW);
        b.extend_from_slice(&[0b01, 1, 0, b'x']);
        done(&mut b);
        let load = decode_bulk_load(&b, login::TDS_7_4).unwrap();
        assert_eq!(load.columns[0], BulkColumn { name: "id".into(), ty: SqlType::Int });
        assert_eq!(load.columns[1].name, "name");
        assert_eq!(
            load.rows,
            vec![
                vec![Value::Int(7), Value::String("hi".into())],
                vec![Value::Null, Value::Null],
                vec![Value::Null, Value::String("x".into())],
            ]
        );
    }

    /// text, ntext and image columns name their table (one US_VARCHAR, as go-mssqldb and
    /// FreeTDS write it); their row values carry a text pointer, none for NULL.
    #[test]
    fn decodes_text_ntext_image_columns() {
        let mut b = vec![COLMETADATA, 3, 0];
        for (name, ty) in [("t", SqlType::Text), ("n", SqlType::NText), ("i", SqlType::Image)] {
            b.extend_from_slice(&0u32.to_le_bytes());
            b.extend_from_slice(&1u16.to_le_bytes());
            TypeInfo::for_sql_type(&ty, true).encode(&mut b);
            crate::wire::put_us_varchar(&mut b, "dbo.tbl");
            crate::wire::put_b_varchar(&mut b, name);
        }
        let pointer = |b: &mut Vec<u8>| {
            b.push(16);
            b.extend_from_slice(&[0xFF; 24]);
        };
        b.push(ROW);
        pointer(&mut b);
        b.extend_from_slice(&[2, 0, 0, 0, b'h', b'i']);
        pointer(&mut b);
        b.extend_from_slice(&[2, 0, 0, 0, 0xE9, 0]);
        pointer(&mut b);
        b.extend_from_slice(&[1, 0, 0, 0, 7]);
        b.push(ROW);
        b.extend_from_slice(&[0, 0, 0]);
        done(&mut b);
        let load = decode_bulk_load(&b, login::TDS_7_4).unwrap();
        assert_eq!(
            load.columns.iter().map(|c| c.ty).collect::<Vec<_>>(),
            [SqlType::Text, SqlType::NText, SqlType::Image]
        );
        assert_eq!(
            load.rows,
            vec![
                vec![Value::String("hi".into()), Value::String("é".into()), Value::Binary(vec![7])],
                vec![Value::Null, Value::Null, Value::Null],
            ]
        );
    }

    #[test]
    fn errors_name_the_column() {
        let int = TypeInfo::ByteLen { id: crate::types::type_id::INTN, len: 4 };
        // A 3-byte int in column 2.
        let mut b = colmetadata(&[("a", int), ("b", int)]);
        b.push(ROW);
        b.extend_from_slice(&[4, 1, 0, 0, 0, 3, 1, 2, 3]);
        done(&mut b);
        assert_eq!(decode_bulk_load(&b, login::TDS_7_4).unwrap_err().number, 4815);
        // An unknown type id in column 1.
        let mut b = vec![COLMETADATA, 1, 0, 0, 0, 0, 0, 1, 0, 0x99];
        done(&mut b);
        let e = decode_bulk_load(&b, login::TDS_7_4).unwrap_err();
        assert_eq!((e.number, e.message.as_str()), (4816, "Invalid column type from bcp client for colid 1."));
        // Another token, not COLMETADATA first.
        let b = colmetadata(&[("a", int)]);
        let mut c = b.clone();
        c.push(0xAA);
        assert_eq!(decode_bulk_load(&c, login::TDS_7_4).unwrap_err().number, 4002);
        assert_eq!(decode_bulk_load(&[ROW], login::TDS_7_4).unwrap_err().number, 4002);
        assert_eq!(decode_bulk_load(&[], login::TDS_7_4).unwrap_err().number, 4002);
    }

    #[test]
    fn a_prefix_is_a_load_between_tokens_else_an_error() {
        let int = TypeInfo::ByteLen { id: crate::types::type_id::INTN, len: 4 };
        let mut b = colmetadata(&[("a", int)]);
        b.push(ROW);
        b.extend_from_slice(&[4, 1, 0, 0, 0]);
        done(&mut b);
        assert!(decode_bulk_load(&b, login::TDS_7_4).is_ok());
        // Ending between tokens is a load without DONE (as FreeTDS sends it); ending
        // anywhere else is an error.
        let boundaries = [b.len() - 19, b.len() - 13];
        for n in 0..b.len() - 13 {
            assert_eq!(decode_bulk_load(&b[..n], login::TDS_7_4).is_ok(), boundaries.contains(&n), "prefix {n}");
        }
    }

    #[test]
    fn a_load_with_always_encrypted_has_an_empty_cek_table() {
        let int = TypeInfo::ByteLen { id: crate::types::type_id::INTN, len: 4 };
        let mut b = colmetadata(&[("a", int)]);
        b.splice(3..3, [0u8, 0]);
        b.push(ROW);
        b.extend_from_slice(&[4, 9, 0, 0, 0]);
        assert_eq!(decode_bulk_load_with(&b, login::TDS_7_4, true).unwrap().rows, vec![vec![Value::Int(9)]]);
        // Without Always Encrypted the same bytes are misread, not silently accepted.
        assert!(decode_bulk_load(&b, login::TDS_7_4).is_err());
        // A key in the table: refused.
        b[3] = 1;
        assert_eq!(decode_bulk_load_with(&b, login::TDS_7_4, true).unwrap_err().number, 4002);
    }

    #[test]
    fn a_load_may_end_without_done() {
        let int = TypeInfo::ByteLen { id: crate::types::type_id::INTN, len: 4 };
        let mut b = colmetadata(&[("a", int)]);
        b.push(ROW);
        b.extend_from_slice(&[4, 9, 0, 0, 0]);
        let load = decode_bulk_load(&b, login::TDS_7_4).unwrap();
        assert_eq!(load.rows, vec![vec![Value::Int(9)]]);
    }
}
