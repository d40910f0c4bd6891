//! Codec tests: golden bytes and round trips for packets, PRELOGIN, LOGIN7, every type's
//! TYPE_INFO and value encoding, RPC/SQL batch/transaction-manager decoding, the token
//! stream the sink writes, and decoders fed arbitrary bytes.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use proptest::prelude::*;
use sql::request::ProcRef;
use sql::results::{ColumnInfo, Done, DoneKind, EnvChange, Message, ResultSink, ReturnValue};
use tds::login::{self, Login7};
use tds::packet::{self, status, PacketHeader, PacketType, PacketWriter, Reassembler};
use tds::prelogin::{self, PreLogin};
use tds::rpc::{self, TmRequest};
use tds::sink::TokenSink;
use tds::token::{self, decode_tokens, done_status, Token};
use tds::types::{decode_param_value, decode_value, decode_value_into, encode_param_value, encode_value, TypeInfo};
use tds::wire::Reader;
use tds::TdsError;
use types::{Length, SqlError, SqlType, Value};

fn hex(s: &str) -> Vec<u8> {
    let s: String = s.chars().filter(|c| !c.is_whitespace()).collect();
    (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap()).collect()
}

fn utf16(s: &str) -> Vec<u8> {
    s.encode_utf16().flat_map(|u| u.to_le_bytes()).collect()
}

// ---------------------------------------------------------------- packets

#[test]
fn packet_header_golden() {
    let h = PacketHeader { ty: 0x12, status: status::EOM, length: 0x2F, spid: 0, packet_id: 1, window: 0 };
    assert_eq!(h.encode(), [0x12, 0x01, 0x00, 0x2F, 0x00, 0x00, 0x01, 0x00]);
    assert_eq!(PacketHeader::decode(&h.encode()).unwrap(), h);
    // Unknown type, too short, too long.
    assert_eq!(PacketHeader::decode(&[0x55, 1, 0, 8, 0, 0, 0, 0]), Err(TdsError::UnexpectedPacket(0x55)));
    assert!(PacketHeader::decode(&[1, 1, 0, 7, 0, 0, 0, 0]).is_err());
    assert!(PacketHeader::decode(&[1, 1, 0x80, 1, 0, 0, 0, 0]).is_err());
}

#[test]
fn writer_splits_and_reassembler_joins() {
    let payload: Vec<u8> = (0..2000u32).map(|i| i as u8).collect();
    let mut w = PacketWriter::new(PacketType::SqlBatch, 7, 512);
    w.write(&payload);
    let packets = w.finish();
    assert_eq!(packets.len(), 4); // 504 + 504 + 504 + 488
    for (i, p) in packets.iter().enumerate() {
        let h = PacketHeader::decode(p[..8].try_into().unwrap()).unwrap();
        assert_eq!(usize::from(h.length), p.len());
        assert_eq!(h.spid, 7);
        assert_eq!(h.packet_id, i as u8 + 1);
        assert_eq!(h.is_eom(), i == 3);
    }
    let msgs = packet::decode_stream(&packets.concat(), 1 << 20).unwrap();
    assert_eq!(msgs.len(), 1);
    assert_eq!(msgs[0].ty, PacketType::SqlBatch);
    assert_eq!(msgs[0].data, payload);
}

#[test]
fn reassembler_limits_and_rules() {
    let stream = packet::encode_message(PacketType::SqlBatch, 0, 512, &[0u8; 3000]);
    assert!(matches!(packet::decode_stream(&stream, 2000), Err(TdsError::TooLarge { .. })));
    // A packet of another type inside a message.
    let mut r = Reassembler::new(1 << 20);
    let h1 = PacketHeader { ty: 1, status: 0, length: 10, spid: 0, packet_id: 1, window: 0 };
    assert_eq!(r.push(&h1, &[1, 2]).unwrap(), None);
    let h2 = PacketHeader { ty: 3, status: 1, length: 10, spid: 0, packet_id: 2, window: 0 };
    assert!(r.push(&h2, &[1, 2]).is_err());
    // IGNORE discards the message.
    let mut r = Reassembler::new(1 << 20);
    assert_eq!(r.push(&h1, &[1, 2]).unwrap(), None);
    let ign = PacketHeader { ty: 1, status: status::EOM | status::IGNORE, length: 8, spid: 0, packet_id: 2, window: 0 };
    assert_eq!(r.push(&ign, &[]).unwrap(), None);
    assert!(!r.in_progress());
    // RESETCONNECTION is kept from the first packet.
    let rc = PacketHeader {
        ty: 1,
        status: status::EOM | status::RESET_CONNECTION,
        length: 10,
        spid: 0,
        packet_id: 1,
        window: 0,
    };
    let m = r.push(&rc, &[0, 0]).unwrap().unwrap();
    assert!(m.reset_connection());
    // Truncated streams.
    assert!(matches!(packet::decode_stream(&stream[..100], 1 << 20), Err(TdsError::Truncated(_))));
    assert!(matches!(packet::decode_stream(&stream[..5], 1 << 20), Err(TdsError::Truncated(_))));
}

// ---------------------------------------------------------------- PRELOGIN

#[test]
fn prelogin_server_response_golden() {
    let bytes = PreLogin::server_response(prelogin::ENCRYPT_OFF).encode();
    assert_eq!(
        bytes,
        hex("00 0015 0006  01 001B 0001  02 001C 0001  04 001D 0001  FF
             10 00 03 E8 00 00  00  00  00")
    );
    let back = PreLogin::decode(&bytes).unwrap();
    assert_eq!(back.encryption, Some(0));
    assert_eq!(back.version, Some([16, 0, 3, 0xE8, 0, 0]));
    assert_eq!(back.mars, Some(0));
}

#[test]
fn prelogin_client_decode() {
    let bytes = hex("00 001A 0006  01 0020 0001  02 0021 0001  03 0022 0004  04 0026 0001  FF
         09 00 00 00 00 00  01  00  00 00 0F 10  00");
    let p = PreLogin::decode(&bytes).unwrap();
    assert_eq!(p.version, Some([9, 0, 0, 0, 0, 0]));
    assert_eq!(p.encryption, Some(prelogin::ENCRYPT_ON));
    assert_eq!(p.instance, Some(vec![]));
    assert_eq!(p.thread_id, Some(0x0F10));
    assert_eq!(p.mars, Some(0));
    // Option pointing past the end; no terminator; short ENCRYPTION.
    assert!(PreLogin::decode(&hex("01 0010 0001 FF")).is_err());
    assert!(PreLogin::decode(&hex("01 0005 0001")).is_err());
    assert!(PreLogin::decode(&hex("01 0006 0000 FF")).is_err());
    // Unknown options are skipped; FEDAUTHREQUIRED is read and ignored.
    let p = PreLogin::decode(&hex("09 000B 0001 06 000C 0001 FF 07 01")).unwrap();
    assert_eq!(p.fed_auth_required, Some(1));
}

#[test]
fn encryption_negotiation() {
    use prelogin::*;
    use tds::prelogin::EncryptionMode;
    assert_eq!(negotiate(ENCRYPT_OFF, false), (ENCRYPT_OFF, EncryptionMode::LoginOnly));
    assert_eq!(negotiate(ENCRYPT_ON, false), (ENCRYPT_ON, EncryptionMode::Full));
    assert_eq!(negotiate(ENCRYPT_REQ, false), (ENCRYPT_ON, EncryptionMode::Full));
    assert_eq!(negotiate(ENCRYPT_NOT_SUP, false), (ENCRYPT_NOT_SUP, EncryptionMode::None));
    assert_eq!(negotiate(ENCRYPT_OFF, true), (ENCRYPT_REQ, EncryptionMode::Full));
    assert_eq!(negotiate(ENCRYPT_NOT_SUP, true), (ENCRYPT_REQ, EncryptionMode::Refuse));
    assert_eq!(negotiate(ENCRYPT_ON | ENCRYPT_CLIENT_CERT, false), (ENCRYPT_ON, EncryptionMode::Full));
}

// ---------------------------------------------------------------- LOGIN7

/// A LOGIN7 built byte by byte: host "h", user "sa", password "ab", database "db".
fn hand_built_login7() -> Vec<u8> {
    let mut b = Vec::new();
    b.extend_from_slice(&108u32.to_le_bytes()); // Length
    b.extend_from_slice(&hex("04 00 00 74")); // TDS 7.4
    b.extend_from_slice(&4096u32.to_le_bytes()); // PacketSize
    b.extend_from_slice(&hex("00 00 00 07")); // ClientProgVer
    b.extend_from_slice(&1234u32.to_le_bytes()); // ClientPID
    b.extend_from_slice(&0u32.to_le_bytes()); // ConnectionID
    b.extend_from_slice(&[0xE0, 0x03, 0x00, 0x00]); // flags
    b.extend_from_slice(&(-480i32).to_le_bytes()); // ClientTimeZone
    b.extend_from_slice(&0x0409u32.to_le_bytes()); // ClientLCID
    let pairs: [(u16, u16); 9] =
        [(94, 1), (96, 2), (100, 2), (104, 0), (104, 0), (104, 0), (104, 0), (104, 0), (104, 2)];
    for (o, l) in pairs {
        b.extend_from_slice(&o.to_le_bytes());
        b.extend_from_slice(&l.to_le_bytes());
    }
    b.extend_from_slice(&[1, 2, 3, 4, 5, 6]); // ClientID
    for (o, l) in [(108u16, 0u16), (108, 0), (108, 0)] {
        b.extend_from_slice(&o.to_le_bytes());
        b.extend_from_slice(&l.to_le_bytes());
    }
    b.extend_from_slice(&0u32.to_le_bytes()); // cbSSPILong
    assert_eq!(b.len(), 94);
    b.extend_from_slice(&utf16("h"));
    b.extend_from_slice(&utf16("sa"));
    // "ab" scrambled: 'a' 0x61 -> 0x16 ^ 0xA5 = 0xB3, 0x00 -> 0xA5; 'b' 0x62 -> 0x83.
    b.extend_from_slice(&[0xB3, 0xA5, 0x83, 0xA5]);
    b.extend_from_slice(&utf16("db"));
    assert_eq!(b.len(), 108);
    b
}

#[test]
fn login7_decode_hand_built() {
    let bytes = hand_built_login7();
    let l = Login7::decode(&bytes).unwrap();
    assert_eq!(l.tds_version, login::TDS_7_4);
    assert_eq!(l.packet_size, 4096);
    assert_eq!(l.client_pid, 1234);
    assert_eq!(l.client_time_zone, -480);
    assert_eq!(l.host_name, "h");
    assert_eq!(l.user_name, "sa");
    assert_eq!(l.password, "ab");
    assert_eq!(l.database, "db");
    assert_eq!(l.client_id, [1, 2, 3, 4, 5, 6]);
    assert!(!l.wants_integrated_security());
    let req = l.to_request(4096);
    assert_eq!(req.database.as_deref(), Some("db"));
    assert_eq!(req.password, "ab");
    // The encoder writes the same bytes.
    assert_eq!(l.encode(), bytes);
    assert_eq!(login::scramble_password("ab"), vec![0xB3, 0xA5, 0x83, 0xA5]);
}

#[test]
fn login7_rejects_bad_offsets() {
    let good = hand_built_login7();
    // Database pointing past the end.
    let mut b = good.clone();
    b[68..70].copy_from_slice(&200u16.to_le_bytes());
    assert!(Login7::decode(&b).is_err());
    // Length larger than the message.
    let mut b = good.clone();
    b[0..4].copy_from_slice(&500u32.to_le_bytes());
    assert!(Login7::decode(&b).is_err());
    // A field pointing into the fixed part.
    let mut b = good.clone();
    b[40..42].copy_from_slice(&10u16.to_le_bytes());
    assert!(Login7::decode(&b).is_err());
    // Truncated anywhere.
    for n in 0..good.len() {
        let mut t = good[..n].to_vec();
        if t.len() >= 4 {
            t[0..4].copy_from_slice(&(n as u32).to_le_bytes());
        }
        assert!(Login7::decode(&t).is_err(), "prefix {n}");
    }
}

#[test]
fn login7_feature_ext_round_trip() {
    let l = Login7 {
        tds_version: login::TDS_7_4,
        packet_size: 8000,
        option_flags3: login::FLAG3_EXTENSION,
        user_name: "app".into(),
        password: "pässwörd".into(),
        features: vec![0x04, 0x0A],
        column_encryption: Some(1),
        ..Login7::default()
    };
    let back = Login7::decode(&l.encode()).unwrap();
    assert_eq!(back, l);
    assert_eq!(login::negotiated_version(login::TDS_8_0), login::TDS_7_4);
    assert_eq!(login::negotiated_version(login::TDS_7_3), login::TDS_7_3);
}

#[test]
fn login7_change_password_reaches_the_request() {
    // ChangePassword counts only with fChangePassword set.
    let mut l = Login7 {
        tds_version: login::TDS_7_4,
        user_name: "app".into(),
        password: "old".into(),
        change_password: "néw".into(),
        ..Login7::default()
    };
    let back = Login7::decode(&l.encode()).unwrap();
    assert_eq!(back.change_password, "néw");
    assert_eq!(back.to_request(4096).new_password, None);
    l.option_flags3 = login::FLAG3_CHANGE_PASSWORD;
    let req = Login7::decode(&l.encode()).unwrap().to_request(4096);
    assert_eq!((req.password.as_str(), req.new_password.as_deref()), ("old", Some("néw")));
}

// ---------------------------------------------------------------- types

/// (type, nullable, TYPE_INFO bytes, value, value bytes)
fn type_cases() -> Vec<(SqlType, bool, &'static str, Value, &'static str)> {
    let coll = "09 04 D0 00 34";
    let _ = coll;
    vec![
        (SqlType::Bit, true, "68 01", Value::Bit(true), "01 01"),
        (SqlType::Bit, false, "32", Value::Bit(true), "01"),
        (SqlType::TinyInt, true, "26 01", Value::TinyInt(255), "01 FF"),
        (SqlType::TinyInt, false, "30", Value::TinyInt(7), "07"),
        (SqlType::SmallInt, true, "26 02", Value::SmallInt(-2), "02 FE FF"),
        (SqlType::SmallInt, false, "34", Value::SmallInt(1), "01 00"),
        (SqlType::Int, true, "26 04", Value::Int(1), "04 01 00 00 00"),
        (SqlType::Int, false, "38", Value::Int(-1), "FF FF FF FF"),
        (SqlType::BigInt, true, "26 08", Value::BigInt(2), "08 02 00 00 00 00 00 00 00"),
        (SqlType::BigInt, false, "7F", Value::BigInt(2), "02 00 00 00 00 00 00 00"),
        (
            SqlType::Decimal { precision: 10, scale: 2 },
            true,
            "6A 09 0A 02",
            Value::Decimal { value: 12345, precision: 10, scale: 2 },
            "09 01 39 30 00 00 00 00 00 00",
        ),
        (
            SqlType::Decimal { precision: 5, scale: 2 },
            false,
            "6A 05 05 02",
            Value::Decimal { value: -100, precision: 5, scale: 2 },
            "05 00 64 00 00 00",
        ),
        (
            SqlType::Numeric { precision: 38, scale: 0 },
            true,
            "6C 11 26 00",
            Value::Decimal { value: 1, precision: 38, scale: 0 },
            "11 01 01 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00",
        ),
        (SqlType::Money, true, "6E 08", Value::Money(10000), "08 00 00 00 00 10 27 00 00"),
        (SqlType::Money, false, "3C", Value::Money(-1), "FF FF FF FF FF FF FF FF"),
        (SqlType::SmallMoney, true, "6E 04", Value::Money(10000), "04 10 27 00 00"),
        (SqlType::SmallMoney, false, "7A", Value::Money(-10000), "F0 D8 FF FF"),
        (SqlType::Real, true, "6D 04", Value::Real(1.5), "04 00 00 C0 3F"),
        (SqlType::Real, false, "3B", Value::Real(1.5), "00 00 C0 3F"),
        (SqlType::Float, true, "6D 08", Value::Float(1.5), "08 00 00 00 00 00 00 F8 3F"),
        (SqlType::Float, false, "3E", Value::Float(1.5), "00 00 00 00 00 00 F8 3F"),
        (SqlType::DateTime, true, "6F 08", Value::DateTime { days: 1, ticks: 300 }, "08 01 00 00 00 2C 01 00 00"),
        (SqlType::DateTime, false, "3D", Value::DateTime { days: -1, ticks: 0 }, "FF FF FF FF 00 00 00 00"),
        (SqlType::SmallDateTime, true, "6F 04", Value::SmallDateTime { days: 2, minutes: 60 }, "04 02 00 3C 00"),
        (SqlType::SmallDateTime, false, "3A", Value::SmallDateTime { days: 2, minutes: 60 }, "02 00 3C 00"),
        (SqlType::Date, true, "28", Value::Date(693_595), "03 5B 95 0A"),
        (SqlType::Time { scale: 7 }, true, "29 07", Value::Time { ticks: 10_000_000, scale: 7 }, "05 80 96 98 00 00"),
        (SqlType::Time { scale: 0 }, true, "29 00", Value::Time { ticks: 10_000_000, scale: 0 }, "03 01 00 00"),
        (SqlType::Time { scale: 3 }, true, "29 03", Value::Time { ticks: 10_000, scale: 3 }, "04 01 00 00 00"),
        (
            SqlType::DateTime2 { scale: 3 },
            true,
            "2A 03",
            Value::DateTime2 { days: 0, ticks: 10_000, scale: 3 },
            "07 01 00 00 00 00 00 00",
        ),
        (
            SqlType::DateTime2 { scale: 7 },
            true,
            "2A 07",
            Value::DateTime2 { days: 693_595, ticks: 1, scale: 7 },
            "08 01 00 00 00 00 5B 95 0A",
        ),
        (
            SqlType::DateTimeOffset { scale: 0 },
            true,
            "2B 00",
            Value::DateTimeOffset { days: 1, ticks: 0, scale: 0, offset: 60 },
            "08 00 00 00 01 00 00 3C 00",
        ),
        (SqlType::Char { len: 3 }, true, "AF 03 00 09 04 D0 00 34", Value::String("ab ".into()), "03 00 61 62 20"),
        (
            SqlType::VarChar { len: Length::Bounded(10) },
            true,
            "A7 0A 00 09 04 D0 00 34",
            Value::String("é".into()),
            "01 00 E9",
        ),
        (
            SqlType::VarChar { len: Length::Max },
            true,
            "A7 FF FF 09 04 D0 00 34",
            Value::String("ab".into()),
            "02 00 00 00 00 00 00 00  02 00 00 00 61 62  00 00 00 00",
        ),
        (SqlType::NChar { len: 2 }, true, "EF 04 00 09 04 D0 00 34", Value::String("hi".into()), "04 00 68 00 69 00"),
        (
            SqlType::NVarChar { len: Length::Bounded(5) },
            false,
            "E7 0A 00 09 04 D0 00 34",
            Value::String("hi".into()),
            "04 00 68 00 69 00",
        ),
        (
            SqlType::NVarChar { len: Length::Max },
            true,
            "E7 FF FF 09 04 D0 00 34",
            Value::String("".into()),
            "00 00 00 00 00 00 00 00  00 00 00 00",
        ),
        (SqlType::Binary { len: 2 }, true, "AD 02 00", Value::Binary(vec![1, 2]), "02 00 01 02"),
        (SqlType::VarBinary { len: Length::Bounded(4) }, true, "A5 04 00", Value::Binary(vec![9]), "01 00 09"),
        (
            SqlType::VarBinary { len: Length::Max },
            true,
            "A5 FF FF",
            Value::Binary(vec![1, 2, 3]),
            "03 00 00 00 00 00 00 00  03 00 00 00 01 02 03  00 00 00 00",
        ),
        (
            SqlType::UniqueIdentifier,
            true,
            "24 10",
            Value::Guid([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16]),
            "10 01 02 03 04 05 06 07 08 09 0A 0B 0C 0D 0E 0F 10",
        ),
        (
            SqlType::Xml,
            true,
            "F1 00",
            Value::String("<a/>".into()),
            "08 00 00 00 00 00 00 00  08 00 00 00 3C 00 61 00 2F 00 3E 00  00 00 00 00",
        ),
    ]
}

#[test]
fn every_type_info_and_value_golden() {
    for (ty, nullable, ti_hex, value, v_hex) in type_cases() {
        let ti = TypeInfo::for_sql_type(&ty, nullable);
        let mut b = Vec::new();
        ti.encode(&mut b);
        assert_eq!(b, hex(ti_hex), "TYPE_INFO of {ty} (nullable {nullable})");
        assert_eq!(TypeInfo::decode(&mut Reader::new(&b)).unwrap(), ti, "{ty}");
        let mut v = Vec::new();
        encode_value(&ti, &ty, &value, &mut v).unwrap();
        assert_eq!(v, hex(v_hex), "value of {ty}");
        let mut r = Reader::new(&v);
        assert_eq!(decode_value(&ti, &mut r).unwrap(), value, "{ty} round trip");
        assert!(r.is_empty());
        // NULL: every nullable form has a NULL marker that decodes back.
        if nullable {
            let mut n = Vec::new();
            encode_value(&ti, &ty, &Value::Null, &mut n).unwrap();
            assert_eq!(decode_value(&ti, &mut Reader::new(&n)).unwrap(), Value::Null, "{ty} NULL");
        }
    }
}

/// Decoding a stream of values into one reused slot gives each value exactly, whatever
/// the slot held before (a longer or shorter string, a binary, NULL, another type), and
/// encoding appends to what a buffer holds without touching it.
#[test]
fn values_decode_into_a_reused_slot() {
    let cases = type_cases();
    let mut slot = Value::String("a much longer string than any of the cases".into());
    for pass in 0..2 {
        for (ty, nullable, _, value, v_hex) in &cases {
            let ti = TypeInfo::for_sql_type(ty, *nullable);
            let sql_ty = ti.sql_type().unwrap();
            let mut v = vec![0xAB];
            encode_value(&ti, ty, value, &mut v).unwrap();
            assert_eq!(v[0], 0xAB, "{ty}: the bytes before are kept");
            assert_eq!(&v[1..], hex(v_hex).as_slice(), "{ty}");
            let mut r = Reader::new(&v[1..]);
            decode_value_into(&ti, &sql_ty, &mut r, &mut slot).unwrap();
            assert_eq!(&slot, value, "{ty} into a reused slot (pass {pass})");
            assert!(r.is_empty());
            if *nullable {
                let mut n = Vec::new();
                encode_value(&ti, ty, &Value::Null, &mut n).unwrap();
                let mut with_value = value.clone();
                decode_value_into(&ti, &sql_ty, &mut Reader::new(&n), &mut with_value).unwrap();
                assert_eq!(with_value, Value::Null, "{ty} NULL over a value");
            }
        }
    }
    // Strings and binaries of every length up to their column's, shrinking and growing.
    let vc = SqlType::VarChar { len: types::Length::Bounded(20) };
    let vb = SqlType::VarBinary { len: types::Length::Bounded(20) };
    let (ti_c, ti_b) = (TypeInfo::for_sql_type(&vc, true), TypeInfo::for_sql_type(&vb, true));
    let mut sc = Value::Null;
    let mut sb = Value::Null;
    for n in [20usize, 0, 1, 19, 3, 20, 0] {
        let text = Value::String("é".repeat(n));
        let bytes = Value::Binary((0..n as u8).collect());
        for (ti, ty, v, slot) in [(&ti_c, &vc, &text, &mut sc), (&ti_b, &vb, &bytes, &mut sb)] {
            let mut b = Vec::new();
            encode_value(ti, ty, v, &mut b).unwrap();
            assert_eq!(b.len(), 2 + n, "{ty} of {n}");
            decode_value_into(ti, &ti.sql_type().unwrap(), &mut Reader::new(&b), slot).unwrap();
            assert_eq!(slot, v, "{ty} of {n}");
        }
    }
    // One byte too long is refused and leaves the buffer as it was.
    let mut b = vec![1, 2, 3];
    assert!(encode_value(&ti_c, &vc, &Value::String("x".repeat(21)), &mut b).is_err());
    assert!(encode_value(&ti_b, &vb, &Value::Binary(vec![0; 21]), &mut b).is_err());
    let ti_i = TypeInfo::for_sql_type(&SqlType::TinyInt, true);
    assert!(encode_value(&ti_i, &SqlType::TinyInt, &Value::Int(256), &mut b).is_err());
    assert_eq!(b, vec![1, 2, 3]);
    // A truncated value is an error and the next attempt with all the bytes succeeds.
    let mut full = Vec::new();
    encode_value(&ti_c, &vc, &Value::String("hello".into()), &mut full).unwrap();
    let mut slot = Value::String("previous".into());
    assert!(decode_value_into(&ti_c, &vc, &mut Reader::new(&full[..4]), &mut slot).is_err());
    decode_value_into(&ti_c, &vc, &mut Reader::new(&full), &mut slot).unwrap();
    assert_eq!(slot, Value::String("hello".into()));
}

#[test]
fn sql_types_of_client_type_infos() {
    let t = |h: &str| TypeInfo::decode(&mut Reader::new(&hex(h))).unwrap().sql_type().unwrap();
    assert_eq!(t("26 04"), SqlType::Int);
    assert_eq!(t("68 01"), SqlType::Bit);
    assert_eq!(t("E7 40 1F 09 04 D0 00 34"), SqlType::NVarChar { len: Length::Bounded(4000) });
    assert_eq!(t("E7 FF FF 09 04 D0 00 34"), SqlType::NVarChar { len: Length::Max });
    assert_eq!(t("A5 FF FF"), SqlType::VarBinary { len: Length::Max });
    assert_eq!(t("6F 08"), SqlType::DateTime);
    assert_eq!(t("6A 11 26 04"), SqlType::Decimal { precision: 38, scale: 4 });
    assert_eq!(t("6D 08"), SqlType::Float);
    assert_eq!(t("24 10"), SqlType::UniqueIdentifier);
    assert_eq!(t("28"), SqlType::Date);
    assert_eq!(t("2B 07"), SqlType::DateTimeOffset { scale: 7 });
    assert_eq!(t("6E 04"), SqlType::SmallMoney);
    // Bad descriptors.
    let bad = |h: &str| TypeInfo::decode(&mut Reader::new(&hex(h)));
    assert!(bad("26 03").is_err());
    assert!(bad("6A 11 27 00").is_err());
    assert!(bad("29 08").is_err());
    // SSVARIANT takes a 4-byte max length.
    assert_eq!(t("62 491F0000"), SqlType::Variant);
    assert!(bad("62 00").is_err());
    // UDT: the CLR system types are known (their COLMETADATA form round-trips); other
    // user-defined types not.
    assert!(bad("F0 00").is_err());
    for ty in [SqlType::HierarchyId, SqlType::Geometry, SqlType::Geography] {
        let mut udt = Vec::new();
        TypeInfo::for_sql_type(&ty, true).encode(&mut udt);
        assert_eq!(TypeInfo::decode(&mut Reader::new(&udt)).unwrap().sql_type().unwrap(), ty);
    }
    let mut udt = Vec::new();
    TypeInfo::for_sql_type(&SqlType::HierarchyId, true).encode(&mut udt);
    assert_eq!(udt[..4], [0xF0, 0x7C, 0x03, 0x00]);
    let other: Vec<u8> = udt
        .iter()
        .copied()
        .take(4)
        .chain([3u8, b'd', 0, b'b', 0, b'o', 0])
        .chain([5u8, b'p', 0, b'o', 0, b'i', 0, b'n', 0, b't', 0])
        .chain([0, 0])
        .collect();
    assert_eq!(TypeInfo::decode(&mut Reader::new(&other)), Err(TdsError::UnsupportedType(0xF0)));
    assert!(bad("E7 40").is_err());
}

/// text, ntext and image ([MS-TDS] 2.2.5.4.3, TYPE_VARBYTE): the long-length TYPE_INFO
/// with its collation, the table name in COLMETADATA, the text pointer and timestamp
/// before a row's value (none for NULL), and the plain long length of RPC parameters.
#[test]
fn text_ntext_image_golden() {
    let ptr = "10 AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA 0000000000000000";
    let cases = [
        (SqlType::Text, "23 FFFFFF7F 09 04 D0 00 34", Value::String("ab".into()), "02000000 6162"),
        (SqlType::NText, "63 FEFFFF7F 09 04 D0 00 34", Value::String("é".into()), "02000000 E900"),
        (SqlType::Image, "22 FFFFFF7F", Value::Binary(vec![1, 2, 0]), "03000000 010200"),
    ];
    for (ty, ti_hex, value, v_hex) in cases {
        let ti = TypeInfo::for_sql_type(&ty, true);
        let mut b = Vec::new();
        ti.encode(&mut b);
        assert_eq!(b, hex(ti_hex), "TYPE_INFO of {ty}");
        assert_eq!(TypeInfo::decode(&mut Reader::new(&b)).unwrap(), ti);
        assert_eq!(ti.sql_type().unwrap(), ty);
        // COLMETADATA: zero table name parts from the server; a client's parts are read.
        let mut c = Vec::new();
        ti.encode_column(&mut c);
        assert_eq!(c, [hex(ti_hex), vec![0]].concat(), "{ty} column");
        let mut with_name = b.clone();
        with_name.extend(hex("02 0300"));
        with_name.extend(utf16("dbo"));
        with_name.extend(hex("0100"));
        with_name.extend(utf16("t"));
        with_name.push(0xEE);
        let mut r = Reader::new(&with_name);
        assert_eq!(TypeInfo::decode_column(&mut r).unwrap(), ti);
        assert_eq!(r.u8("next").unwrap(), 0xEE, "{ty}: the table name is consumed");
        // A row's value, and NULL as a zero-length text pointer.
        let mut v = vec![0x55];
        encode_value(&ti, &ty, &value, &mut v).unwrap();
        assert_eq!(&v[1..], [hex(ptr), hex(v_hex)].concat().as_slice(), "row value of {ty}");
        let mut slot = Value::String("something else".into());
        let mut r = Reader::new(&v[1..]);
        decode_value_into(&ti, &ty, &mut r, &mut slot).unwrap();
        assert_eq!(slot, value, "{ty} round trip");
        assert!(r.is_empty());
        let mut n = Vec::new();
        encode_value(&ti, &ty, &Value::Null, &mut n).unwrap();
        assert_eq!(n, [0]);
        assert_eq!(decode_value(&ti, &mut Reader::new(&n)).unwrap(), Value::Null);
        // Every truncation of a row value is an error.
        let full = &v[1..];
        for k in 1..full.len() {
            assert!(decode_value(&ti, &mut Reader::new(&full[..k])).is_err(), "{ty} cut at {k}");
        }
        // RPC parameters and RETURNVALUE: no text pointer; NULL is length 0xFFFFFFFF.
        let mut p = Vec::new();
        encode_param_value(&ti, &ty, &value, &mut p).unwrap();
        assert_eq!(p, hex(v_hex), "parameter value of {ty}");
        assert_eq!(decode_param_value(&ti, &mut Reader::new(&p)).unwrap(), value);
        let mut p = Vec::new();
        encode_param_value(&ti, &ty, &Value::Null, &mut p).unwrap();
        assert_eq!(p, hex("FFFFFFFF"));
        assert_eq!(decode_param_value(&ti, &mut Reader::new(&p)).unwrap(), Value::Null);
    }
    // A client's declared max length is no limit (pytds declares 0); the server never
    // writes beyond its own. Odd UTF-16 in ntext is an error.
    let small = TypeInfo::decode(&mut Reader::new(&hex("23 00000000 09 04 D0 00 34"))).unwrap();
    assert_eq!(
        decode_param_value(&small, &mut Reader::new(&hex("03000000 616263"))).unwrap(),
        Value::String("abc".into())
    );
    assert!(encode_value(&small, &SqlType::Text, &Value::String("abc".into()), &mut Vec::new()).is_err());
    let huge = hex("FFFFFF7F 61");
    assert!(decode_param_value(&small, &mut Reader::new(&huge)).is_err(), "a length beyond the message");
    let nt = TypeInfo::for_sql_type(&SqlType::NText, true);
    assert!(decode_param_value(&nt, &mut Reader::new(&hex("03000000 E90000"))).is_err());
    // A result set of the three types through the token stream and back.
    let cols = vec![
        ColumnInfo::new("t", SqlType::Text, true),
        ColumnInfo::new("n", SqlType::NText, true),
        ColumnInfo::new("i", SqlType::Image, true),
    ];
    let mut out = Vec::new();
    let enc = token::put_colmetadata(&mut out, &cols, false);
    let rows = [
        vec![Value::String("x".repeat(9000)), Value::String("ü".into()), Value::Binary(vec![9; 10])],
        vec![Value::Null, Value::Null, Value::Null],
    ];
    for row in &rows {
        token::put_row(&mut out, &enc, row).unwrap();
    }
    let toks = decode_tokens(&out).unwrap();
    let Token::ColMetadata(meta) = &toks[0] else { panic!("{:?}", toks[0]) };
    assert_eq!(
        meta.iter().map(|m| m.type_info.sql_type().unwrap()).collect::<Vec<_>>(),
        [SqlType::Text, SqlType::NText, SqlType::Image]
    );
    assert_eq!(toks[1], Token::Row(rows[0].clone()));
    assert_eq!(toks[2], Token::Row(rows[1].clone()));
    // An RPC parameter of each type, as pytds and FreeTDS send them.
    let mut b = rpc::encode_all_headers(0, 1);
    b.extend(7u16.to_le_bytes());
    b.extend(utf16("my_proc"));
    b.extend(hex("00 00"));
    b.extend(hex("02 4000 6100 00 23 FFFFFF7F 09 04 D0 00 34 03000000 616263"));
    b.extend(hex("02 4000 6200 00 63 FEFFFF7F 09 04 D0 00 34 FFFFFFFF"));
    b.extend(hex("02 4000 6300 00 22 FFFFFF7F 01000000 07"));
    let req = rpc::decode_rpc(&b, true).unwrap();
    let p = &req.calls[0].params;
    assert_eq!((p[0].ty, &p[0].value), (SqlType::Text, &Value::String("abc".into())));
    assert_eq!((p[1].ty, &p[1].value), (SqlType::NText, &Value::Null));
    assert_eq!((p[2].ty, &p[2].value), (SqlType::Image, &Value::Binary(vec![7])));
}

#[test]
fn invalid_values_are_errors() {
    let dec = |ti: &str, v: &str| {
        let ti = TypeInfo::decode(&mut Reader::new(&hex(ti))).unwrap();
        decode_value(&ti, &mut Reader::new(&hex(v)))
    };
    assert!(dec("6F 08", "08 00 00 00 00 FF FF FF FF").is_err()); // datetime ticks past midnight
    assert!(dec("6A 05 02 00", "05 01 64 00 00 00").is_err()); // 100 in decimal(2,0)
    assert!(dec("29 07", "05 FF FF FF FF FF").is_err()); // time past 24h
    assert!(dec("E7 0A 00 09 04 D0 00 34", "0C 00 01 00 02 00 03 00 04 00 05 00 06 00").is_err()); // beyond max
    assert!(dec("E7 0A 00 09 04 D0 00 34", "03 00 61 00 62").is_err()); // odd UTF-16
    assert!(dec("A5 FF FF", "05 00 00 00 00 00 00 00 02 00 00 00 01 02 00 00 00 00").is_err()); // PLP total mismatch
    assert!(dec("A5 FF FF", "FF FF FF FF FF FF FF 7F").is_err()); // huge PLP length: no allocation
    assert!(dec("26 04", "02 01 00").is_err());
    assert!(dec("2B 00", "08 00 00 00 01 00 00 00 80").is_err()); // offset i16::MIN minutes
    assert_eq!(dec("A5 FF FF", "FE FF FF FF FF FF FF FF 01 00 00 00 07 00 00 00 00").unwrap(), Value::Binary(vec![7]));
    // Encoding a value of the wrong family is an error, not a panic.
    let ti = TypeInfo::for_sql_type(&SqlType::Int, true);
    assert!(encode_value(&ti, &SqlType::Int, &Value::String("x".into()), &mut Vec::new()).is_err());
    assert!(encode_value(&ti, &SqlType::Int, &Value::BigInt(1 << 40), &mut Vec::new()).is_err());
    let ti = TypeInfo::for_sql_type(&SqlType::Int, false);
    assert!(encode_value(&ti, &SqlType::Int, &Value::Null, &mut Vec::new()).is_err());
}

// ---------------------------------------------------------------- requests

fn b_varchar(s: &str) -> Vec<u8> {
    let mut v = vec![s.encode_utf16().count() as u8];
    v.extend(utf16(s));
    v
}

/// sp_executesql by id with int, nvarchar, decimal, datetime2, varbinary(max) PLP
/// parameters and an OUTPUT int.
fn hand_built_sp_executesql() -> Vec<u8> {
    let coll = hex("09 04 D0 00 34");
    let mut b = Vec::new();
    // ALL_HEADERS: total 22, header 18 type 2, descriptor 5, 1 outstanding request.
    b.extend(hex("16 00 00 00  12 00 00 00  02 00  05 00 00 00 00 00 00 00  01 00 00 00"));
    b.extend(hex("FF FF 0A 00  00 00")); // ProcID 10, OptionFlags
    let stmt = "SELECT @a, @b, @c, @d, @e; SET @out = 42";
    b.extend(hex("00 00 E7 40 1F"));
    b.extend(&coll);
    b.extend(((stmt.len() * 2) as u16).to_le_bytes());
    b.extend(utf16(stmt));
    let params = "@a int, @b nvarchar(10), @c decimal(10,2), @d datetime2(7), @e varbinary(max), @out int OUTPUT";
    b.extend(hex("00 00 E7 40 1F"));
    b.extend(&coll);
    b.extend(((params.len() * 2) as u16).to_le_bytes());
    b.extend(utf16(params));
    b.extend(b_varchar("@a"));
    b.extend(hex("00 26 04 04 2A 00 00 00"));
    b.extend(b_varchar("@b"));
    b.extend(hex("00 E7 14 00"));
    b.extend(&coll);
    b.extend(hex("04 00 68 00 69 00"));
    b.extend(b_varchar("@c"));
    b.extend(hex("00 6A 09 0A 02 09 01 39 30 00 00 00 00 00 00"));
    b.extend(b_varchar("@d"));
    // 2024-01-02 00:00:01: days 738886 = 0x0B4646, 1 s = 10^7 units.
    b.extend(hex("00 2A 07 08 80 96 98 00 00 46 46 0B"));
    b.extend(b_varchar("@e"));
    b.extend(hex("00 A5 FF FF  05 00 00 00 00 00 00 00  03 00 00 00 01 02 03  02 00 00 00 04 05  00 00 00 00"));
    b.extend(b_varchar("@out"));
    b.extend(hex("01 26 04 00"));
    b
}

#[test]
fn rpc_sp_executesql_decodes() {
    let req = rpc::decode_rpc(&hand_built_sp_executesql(), true).unwrap();
    assert_eq!(req.headers.transaction_descriptor, Some(5));
    assert_eq!(req.headers.outstanding_requests, Some(1));
    assert_eq!(req.calls.len(), 1);
    let c = &req.calls[0];
    assert_eq!(c.procedure, ProcRef::Id(10));
    assert_eq!(c.procedure.name(), Some("sp_executesql"));
    let p = &c.params;
    assert_eq!(p.len(), 8);
    assert_eq!(p[0].name, None);
    assert_eq!(p[0].ty, SqlType::NVarChar { len: Length::Bounded(4000) });
    assert_eq!(p[0].value, Value::String("SELECT @a, @b, @c, @d, @e; SET @out = 42".into()));
    assert_eq!(p[2].name.as_deref(), Some("@a"));
    assert_eq!((p[2].ty, &p[2].value), (SqlType::Int, &Value::Int(42)));
    assert_eq!(p[3].ty, SqlType::NVarChar { len: Length::Bounded(10) });
    assert_eq!(p[3].value, Value::String("hi".into()));
    assert_eq!(p[4].value, Value::Decimal { value: 12345, precision: 10, scale: 2 });
    assert_eq!(p[4].ty, SqlType::Decimal { precision: 10, scale: 2 });
    assert_eq!(p[5].ty, SqlType::DateTime2 { scale: 7 });
    assert_eq!(p[5].value, Value::datetime2_from_parts(2024, 1, 2, 10_000_000, 7).unwrap());
    assert_eq!(p[6].ty, SqlType::VarBinary { len: Length::Max });
    assert_eq!(p[6].value, Value::Binary(vec![1, 2, 3, 4, 5]));
    assert!(!p[6].output);
    assert_eq!(p[7].name.as_deref(), Some("@out"));
    assert!(p[7].output);
    assert_eq!(p[7].value, Value::Null);
}

#[test]
fn rpc_by_name_batched_and_malformed() {
    let mut b = rpc::encode_all_headers(0, 1);
    b.extend(7u16.to_le_bytes());
    b.extend(utf16("my_proc"));
    b.extend(hex("00 00"));
    b.extend(hex("00 00 26 04 04 01 00 00 00"));
    b.push(0xFF); // batch flag
    b.extend(hex("FF FF 0F 00 00 00")); // sp_unprepare by id
    b.extend(hex("00 00 26 04 04 07 00 00 00"));
    let req = rpc::decode_rpc(&b, true).unwrap();
    assert_eq!(req.calls.len(), 2);
    assert_eq!(req.calls[0].procedure, ProcRef::Name("my_proc".into()));
    assert_eq!(req.calls[1].procedure.name(), Some("sp_unprepare"));
    assert_eq!(req.calls[1].params[0].value, Value::Int(7));
    // Every truncation of a valid request is an error, never a panic.
    let full = hand_built_sp_executesql();
    for n in 0..full.len() {
        // A cut at a parameter boundary is a valid call with fewer parameters.
        if let Ok(r) = rpc::decode_rpc(&full[..n], true) {
            assert!(r.calls[0].params.len() < 8, "prefix {n}");
        }
    }
    // ALL_HEADERS with a bad total length.
    assert!(rpc::decode_rpc(&hex("FF FF FF 00 00"), true).is_err());
}

#[test]
fn sql_batch_and_tm_requests() {
    let mut b = rpc::encode_all_headers(9, 1);
    b.extend(utf16("SELECT 1"));
    let batch = rpc::decode_sql_batch(&b, true).unwrap();
    assert_eq!(batch.text, "SELECT 1");
    assert_eq!(batch.headers.transaction_descriptor, Some(9));
    let mut odd = b.clone();
    odd.push(0);
    assert!(rpc::decode_sql_batch(&odd, true).is_err());

    let tm = |payload: &str| {
        let mut b = rpc::encode_all_headers(0, 1);
        b.extend(hex(payload));
        rpc::decode_tm(&b, true).map(|(_, t)| t)
    };
    let begin = tm("05 00  02  00").unwrap();
    assert_eq!(begin, TmRequest::Begin { isolation: 2, name: String::new() });
    assert_eq!(begin.to_sql().unwrap(), "SET TRANSACTION ISOLATION LEVEL READ COMMITTED; BEGIN TRANSACTION");
    // Names are B_VARBYTE: the length counts bytes, not characters.
    let begin = tm("05 00  00  04 74 00 31 00").unwrap();
    assert_eq!(begin.to_sql().unwrap(), "BEGIN TRANSACTION [t1]");
    // tedious's beginTransaction(cb, 'tx1', READ_COMMITTED), byte for byte.
    let begin = tm("05 00  02  06 74 00 78 00 31 00").unwrap();
    assert_eq!(begin, TmRequest::Begin { isolation: 2, name: "tx1".into() });
    assert!(tm("05 00  00  03 74 00 31").is_err());
    let commit = tm("07 00  00  00").unwrap();
    assert_eq!(commit, TmRequest::Commit { name: String::new(), begin_after: None });
    assert_eq!(commit.to_sql().unwrap(), "COMMIT TRANSACTION");
    let commit_begin = tm("07 00  00  01 04 00").unwrap();
    assert_eq!(
        commit_begin.to_sql().unwrap(),
        "COMMIT TRANSACTION; SET TRANSACTION ISOLATION LEVEL SERIALIZABLE; BEGIN TRANSACTION"
    );
    let rollback = tm("08 00  04 73 00 5D 00  00").unwrap();
    assert_eq!(rollback.to_sql().unwrap(), "ROLLBACK TRANSACTION [s]]]");
    assert_eq!(tm("09 00  02 73 00").unwrap().to_sql().unwrap(), "SAVE TRANSACTION [s]");
    let commit_named_begin = tm("07 00  02 61 00  01 01 02 62 00").unwrap();
    assert_eq!(
        commit_named_begin.to_sql().unwrap(),
        "COMMIT TRANSACTION [a]; SET TRANSACTION ISOLATION LEVEL READ UNCOMMITTED; BEGIN TRANSACTION [b]"
    );
    assert_eq!(tm("00 00  00 00").unwrap(), TmRequest::GetDtcAddress);
    assert_eq!(tm("06 00").unwrap(), TmRequest::Unsupported(6));
    assert!(tm("63 00").is_err());
    assert!(tm("05").is_err());
}

// ---------------------------------------------------------------- token stream

fn done(kind: DoneKind, rows: Option<u64>, error: bool) -> Done {
    Done { kind, row_count: rows, error, in_xact: false }
}

fn sink_tokens(run: impl FnOnce(&mut TokenSink<Vec<Vec<u8>>>), default_done: u8, attention: bool) -> Vec<Token> {
    let cancel = Arc::new(AtomicBool::new(false));
    let mut sink = TokenSink::new(Vec::new(), 51, 512, cancel, "SRV".into());
    run(&mut sink);
    let (tail, mut packets) = sink.finish(default_done);
    packets.extend(tail.finish(attention));
    let msgs = packet::decode_stream(&packets.concat(), 1 << 24).unwrap();
    // With an attention, its acknowledgement is a second message.
    assert_eq!(msgs.len(), if attention { 2 } else { 1 });
    msgs.iter()
        .flat_map(|m| {
            assert_eq!(m.ty, PacketType::TabularResult);
            decode_tokens(&m.data).unwrap()
        })
        .collect()
}

#[test]
fn sink_sets_more_on_all_but_the_last_done() {
    let cols = vec![
        ColumnInfo::new("id", SqlType::Int, false),
        ColumnInfo::new("name", SqlType::NVarChar { len: Length::Bounded(20) }, true),
    ];
    let tokens = sink_tokens(
        |s| {
            s.columns(&cols).unwrap();
            for i in 0..100 {
                let name = if i % 2 == 0 { Value::String(format!("row {i}")) } else { Value::Null };
                s.row(&[Value::Int(i), name]).unwrap();
            }
            s.done(done(DoneKind::Statement, Some(100), false)).unwrap();
            s.message(&Message { error: SqlError::new(0, 0, 1, "hello"), info: true }).unwrap();
            s.done(done(DoneKind::Statement, None, false)).unwrap();
            s.message(&Message {
                error: SqlError::new(8134, 16, 1, "Divide by zero error encountered.").at_line(3),
                info: false,
            })
            .unwrap();
            s.done(done(DoneKind::Statement, None, true)).unwrap();
        },
        token::token_type::DONE,
        false,
    );
    let dones: Vec<_> = tokens.iter().filter_map(|t| if let Token::Done(d) = t { Some(*d) } else { None }).collect();
    assert_eq!(dones.len(), 3);
    assert_eq!(dones[0].status, done_status::MORE | done_status::COUNT);
    assert_eq!(dones[0].row_count, 100);
    assert_eq!(dones[1].status, done_status::MORE);
    assert_eq!(dones[2].status, done_status::ERROR);
    let rows: Vec<_> =
        tokens.iter().filter_map(|t| if let Token::Row(r) = t { Some(r.clone()) } else { None }).collect();
    assert_eq!(rows.len(), 100);
    assert_eq!(rows[3], vec![Value::Int(3), Value::Null]);
    assert_eq!(rows[4], vec![Value::Int(4), Value::String("row 4".into())]);
    let err = tokens.iter().find_map(|t| if let Token::Error(e) = t { Some(e.clone()) } else { None }).unwrap();
    assert_eq!((err.number, err.class, err.line, err.server.as_str()), (8134, 16, 3, "SRV"));
}

#[test]
fn nbcrow_only_when_shorter() {
    let cols =
        [ColumnInfo::new("a", SqlType::Int, true), ColumnInfo::new("b", SqlType::NVarChar { len: Length::Max }, true)];
    let mut out = Vec::new();
    let enc = token::put_colmetadata(&mut out, &cols, false);
    let mut row = Vec::new();
    token::put_row(&mut row, &enc, &[Value::Int(1), Value::String("x".into())]).unwrap();
    assert_eq!(row[0], token::token_type::ROW);
    let mut row = Vec::new();
    token::put_row(&mut row, &enc, &[Value::Int(1), Value::Null]).unwrap();
    assert_eq!(row, hex("D2 02 04 01 00 00 00")); // bitmap 0b10 then the int only
                                                  // A single nullable int column: NULL costs 1 byte either way, so ROW.
    let enc1 = &enc[..1];
    let mut row = Vec::new();
    token::put_row(&mut row, enc1, &[Value::Null]).unwrap();
    assert_eq!(row, hex("D1 00"));
    // Wrong arity is an error and writes nothing.
    let mut row = Vec::new();
    assert!(token::put_row(&mut row, &enc, &[Value::Int(1)]).is_err());
    assert!(row.is_empty());
}

#[test]
fn attention_ends_with_done_attn() {
    let tokens = sink_tokens(
        |s| {
            s.columns(&[ColumnInfo::new("x", SqlType::Int, true)]).unwrap();
            s.row(&[Value::Int(1)]).unwrap();
            s.done(done(DoneKind::Statement, Some(1), false)).unwrap();
        },
        token::token_type::DONE,
        true,
    );
    let dones: Vec<_> = tokens.iter().filter_map(|t| if let Token::Done(d) = t { Some(*d) } else { None }).collect();
    assert_eq!(dones.len(), 2);
    // The response ends with its last DONE (no MORE bit); the acknowledgement follows
    // in a message of its own.
    assert_eq!(dones[0].status & done_status::MORE, 0);
    assert_eq!(dones[1].status, done_status::ATTN);
    let cancel = Arc::new(AtomicBool::new(false));
    let mut sink = TokenSink::new(Vec::new(), 7, 4096, cancel, "S".into());
    sink.done(done(DoneKind::Statement, Some(3), false)).unwrap();
    let (tail, mut packets) = sink.finish(token::token_type::DONE);
    packets.extend(tail.finish(true));
    let msgs = packet::decode_stream(&packets.concat(), 1 << 24).unwrap();
    assert_eq!(msgs.len(), 2);
    assert_eq!(decode_tokens(&msgs[1].data).unwrap().len(), 1);
    assert_eq!(msgs[1].data.len(), 13);
    // Nothing sent before the attention (a WAITFOR): a final DONE, then the ack.
    let tokens = sink_tokens(|_| {}, token::token_type::DONE, true);
    let statuses: Vec<_> =
        tokens.iter().filter_map(|t| if let Token::Done(d) = t { Some(d.status) } else { None }).collect();
    assert_eq!(statuses, [done_status::FINAL, done_status::ATTN]);

    // After the cancel flag is set, the sink refuses everything.
    let cancel = Arc::new(AtomicBool::new(false));
    let mut sink = TokenSink::new(Vec::new(), 1, 4096, cancel.clone(), "S".into());
    sink.done(done(DoneKind::Statement, None, false)).unwrap();
    cancel.store(true, std::sync::atomic::Ordering::SeqCst);
    assert!(sink.row(&[]).is_err());
    assert!(sink.done(done(DoneKind::Statement, None, false)).is_err());
}

#[test]
fn rpc_response_tokens() {
    let tokens = sink_tokens(
        |s| {
            s.return_status(0).unwrap();
            s.return_value(&ReturnValue { name: "@out".into(), ordinal: 8, ty: SqlType::Int, value: Value::Int(42) })
                .unwrap();
            s.env_change(&EnvChange::BeginTransaction { descriptor: 0x0102 }).unwrap();
            s.done(done(DoneKind::Proc, None, false)).unwrap();
        },
        token::token_type::DONEPROC,
        false,
    );
    assert_eq!(tokens[0], Token::ReturnStatus(0));
    match &tokens[1] {
        Token::ReturnValue { ordinal, name, status, value, .. } => {
            assert_eq!((*ordinal, name.as_str(), *status, value), (8, "@out", 1, &Value::Int(42)));
        }
        t => panic!("{t:?}"),
    }
    assert_eq!(tokens[2], Token::EnvChange { ty: 8, new: 0x0102u64.to_le_bytes().to_vec(), old: vec![] });
    assert!(matches!(tokens[3], Token::Done(d) if d.token == token::token_type::DONEPROC && d.status == 0));
}

#[test]
fn login_tokens_golden() {
    let mut b = Vec::new();
    token::put_loginack(&mut b, login::TDS_7_4);
    let mut expect = hex("AD 32 00 01 74 00 00 04 14");
    expect.extend(utf16("Microsoft SQL Server"));
    expect.extend(hex("10 00 03 E8"));
    assert_eq!(b, expect);
    let mut b = Vec::new();
    token::put_env_bytes(&mut b, token::env_type::SQL_COLLATION, &tds::types::DEFAULT_COLLATION, &[]);
    assert_eq!(b, hex("E3 08 00 07 05 09 04 D0 00 34 00"));
    let mut b = Vec::new();
    token::put_env_change(&mut b, &EnvChange::CommitTransaction { descriptor: 1 });
    assert_eq!(b, hex("E3 0B 00 09 00 08 01 00 00 00 00 00 00 00"));
    let mut b = Vec::new();
    token::put_env_strings(&mut b, token::env_type::DATABASE, "db", "master");
    assert_eq!(decode_tokens(&b).unwrap()[0].env_strings(), Some((1, "db".into(), "master".into())));
    let mut b = Vec::new();
    token::put_message(&mut b, true, &SqlError::new(5701, 0, 2, "Changed database context to 'db'.").at_line(1), "S");
    let mut expect = hex("AB");
    let body_len = 4 + 1 + 1 + 2 + 33 * 2 + 1 + 2 + 1 + 4;
    expect.extend((body_len as u16).to_le_bytes());
    expect.extend(hex("45 16 00 00 02 00 21 00"));
    expect.extend(utf16("Changed database context to 'db'."));
    expect.extend(hex("01 53 00 00 01 00 00 00"));
    assert_eq!(b, expect);
}

// ---------------------------------------------------------------- arbitrary input

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn decoders_never_panic(data in proptest::collection::vec(any::<u8>(), 0..600)) {
        let _ = packet::decode_stream(&data, 1 << 16);
        let _ = PreLogin::decode(&data);
        let _ = Login7::decode(&data);
        let _ = rpc::decode_rpc(&data, true);
        let _ = rpc::decode_rpc(&data, false);
        let _ = rpc::decode_sql_batch(&data, true);
        let _ = rpc::decode_tm(&data, true);
        let _ = decode_tokens(&data);
    }

    #[test]
    fn mutated_requests_never_panic(pos in 0usize..400, byte in any::<u8>(), cut in 0usize..400) {
        let mut rpc_bytes = hand_built_sp_executesql();
        let p = pos % rpc_bytes.len();
        rpc_bytes[p] = byte;
        let c = cut.min(rpc_bytes.len());
        let _ = rpc::decode_rpc(&rpc_bytes[..c], true);
        let _ = rpc::decode_rpc(&rpc_bytes, true);
        let mut l = hand_built_login7();
        let p = pos % l.len();
        l[p] = byte;
        let _ = Login7::decode(&l);
    }
}

/// The DONE token carries the statement's command (CurCmd) the executor announced, once:
/// mssql-jdbc takes update counts only from DML commands' DONEs.
#[test]
fn sink_done_carries_the_command_code() {
    use sql::results::command_code;
    let tokens = sink_tokens(
        |s| {
            s.command(command_code::INSERT);
            s.done(done(DoneKind::InProc, Some(3), false)).unwrap();
            s.command(command_code::SELECT);
            s.done(done(DoneKind::Statement, Some(1), false)).unwrap();
            s.done(done(DoneKind::Proc, None, false)).unwrap();
        },
        token::token_type::DONE,
        false,
    );
    let cmds: Vec<(u8, u16, u64)> = tokens
        .iter()
        .filter_map(|t| if let Token::Done(d) = t { Some((d.token, d.cur_cmd, d.row_count)) } else { None })
        .collect();
    use token::token_type::{DONE, DONEINPROC, DONEPROC};
    assert_eq!(cmds, [(DONEINPROC, 0xC3, 3), (DONE, 0xC1, 1), (DONEPROC, 0, 0)]);
}

// ---------------------------------------------------------------- sql_variant

fn variant(v: Value, ty: SqlType) -> Value {
    Value::variant(v, &ty).unwrap()
}

#[test]
fn sql_variant_golden_and_round_trip() {
    let ti = TypeInfo::for_sql_type(&SqlType::Variant, true);
    let mut out = Vec::new();
    ti.encode(&mut out);
    assert_eq!(out, hex("62 491f0000"));
    let mut r = Reader::new(&out);
    assert_eq!(TypeInfo::decode(&mut r).unwrap(), ti);

    // int 42: length 6, INT4, no properties, the 4 bytes.
    let mut out = Vec::new();
    encode_value(&ti, &SqlType::Variant, &variant(Value::Int(42), SqlType::Int), &mut out).unwrap();
    assert_eq!(out, hex("06000000 38 00 2a000000"));
    // nvarchar(10) N'hé': NVARCHAR, 7 property bytes (max length 20, collation), UTF-16.
    let mut out = Vec::new();
    let s = variant(Value::String("hé".into()), SqlType::nvarchar(10).unwrap());
    encode_value(&ti, &SqlType::Variant, &s, &mut out).unwrap();
    assert_eq!(out, hex("0d000000 e7 07 1400 0904d00034 6800 e900"));
    // decimal(10,2) 123.45: DECIMALN, precision, scale, sign and 8 magnitude bytes.
    let mut out = Vec::new();
    let d = variant(Value::decimal(12345, 10, 2).unwrap(), SqlType::decimal(10, 2).unwrap());
    encode_value(&ti, &SqlType::Variant, &d, &mut out).unwrap();
    assert_eq!(out, hex("0d000000 6a 02 0a 02 01 3930000000000000"));
    // NULL is a zero length.
    let mut out = Vec::new();
    encode_value(&ti, &SqlType::Variant, &Value::Null, &mut out).unwrap();
    assert_eq!(out, hex("00000000"));

    let values = [
        variant(Value::Int(-7), SqlType::Int),
        s,
        d,
        variant(Value::String("abc".into()), SqlType::varchar(5).unwrap()),
        variant(Value::Binary(vec![1, 0, 2]), SqlType::varbinary(8).unwrap()),
        variant(Value::Guid([7; 16]), SqlType::UniqueIdentifier),
        variant(Value::DateTime2 { days: 738_000, ticks: 1_234_567, scale: 7 }, SqlType::datetime2(7).unwrap()),
        variant(Value::DateTime { days: 45_000, ticks: 300 }, SqlType::DateTime),
        variant(Value::Money(-15_000), SqlType::Money),
        variant(Value::Float(1.5), SqlType::Float),
        variant(Value::Time { ticks: 10_000_000, scale: 3 }, SqlType::time(3).unwrap()),
        Value::Null,
    ];
    for v in values {
        let mut out = Vec::new();
        encode_value(&ti, &SqlType::Variant, &v, &mut out).unwrap();
        let mut r = Reader::new(&out);
        assert_eq!(decode_value(&ti, &mut r).unwrap(), v, "{v:?}");
        assert_eq!(r.remaining(), 0);
        // The row format stores the same header followed by the storage encoding.
        if !v.is_null() {
            let mut bytes = Vec::new();
            types::encode(&v, &SqlType::Variant, &mut bytes).unwrap();
            assert_eq!(types::decode(&SqlType::Variant, &bytes).unwrap(), v);
        }
    }
}

#[test]
fn sql_variant_rejects_bad_values() {
    let ti = TypeInfo::Variant(8009);
    // Unknown base type id, a property count that does not fit the type, a length
    // beyond the declared maximum, a truncated value.
    for bad in ["03000000 f1 00 00", "06000000 38 01 2a000000", "4a1f0000 38 00", "06000000 38 00 2a00"] {
        let b = hex(bad);
        assert!(decode_value(&ti, &mut Reader::new(&b)).is_err(), "{bad}");
    }
    // Not a sql_variant value: an encode error, nothing written.
    let mut out = vec![9];
    assert!(encode_value(&ti, &SqlType::Variant, &Value::Int(1), &mut out).is_err());
    assert_eq!(out, vec![9]);
}
