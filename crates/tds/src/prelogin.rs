//! PRELOGIN ([MS-TDS] 2.2.6.5): the first message of a connection, packet type 0x12. The
//! server answers with the same structure in a tabular-result message (type 0x04).
//!
//! ```text
//! option table:  repeated { token u8, offset u16 BE, length u16 BE }, ended by 0xFF
//!                (offsets count from the start of the message)
//! option data:
//!   0x00 VERSION          6 bytes: UL_VERSION u32 BE (major u8, minor u8, build u16 BE),
//!                         US_SUBBUILD u16 BE
//!   0x01 ENCRYPTION       1 byte: 0 OFF, 1 ON, 2 NOT_SUP, 3 REQ, 4 STRICT (TDS 8.0 clients
//!                         inside TLS); bit 0x80 CLIENT_CERT is ignored
//!   0x02 INSTOPT          instance name, NUL-terminated (the server answers 0x00)
//!   0x03 THREADID         4 bytes (client thread id, debugging only; the server sends none)
//!   0x04 MARS             1 byte: Mesquite always answers 0 (no MARS)
//!   0x05 TRACEID          36 bytes: connection id, activity id, sequence (ignored)
//!   0x06 FEDAUTHREQUIRED  1 byte (ignored; federated authentication is not offered)
//!   0x07 NONCEOPT         32 bytes (ignored)
//! ```
//!
//! Encryption negotiation ([`negotiate`]): the server always has a certificate, so it
//! answers ON to ON/REQ, OFF to OFF (only LOGIN7 is encrypted), NOT_SUP to NOT_SUP; with
//! `require_encryption` it answers REQ to OFF (full encryption) and refuses NOT_SUP.

use crate::error::{Result, TdsError};
use crate::wire::Reader;

pub const OPT_VERSION: u8 = 0x00;
pub const OPT_ENCRYPTION: u8 = 0x01;
pub const OPT_INSTOPT: u8 = 0x02;
pub const OPT_THREADID: u8 = 0x03;
pub const OPT_MARS: u8 = 0x04;
pub const OPT_TRACEID: u8 = 0x05;
pub const OPT_FEDAUTHREQUIRED: u8 = 0x06;
pub const OPT_NONCE: u8 = 0x07;
pub const OPT_TERMINATOR: u8 = 0xFF;

pub const ENCRYPT_OFF: u8 = 0x00;
pub const ENCRYPT_ON: u8 = 0x01;
pub const ENCRYPT_NOT_SUP: u8 = 0x02;
pub const ENCRYPT_REQ: u8 = 0x03;
pub const ENCRYPT_STRICT: u8 = 0x04;
pub const ENCRYPT_CLIENT_CERT: u8 = 0x80;

/// The product version the server reports: SQL Server 2022 (16.0), so that drivers enable
/// the features they gate on the server version.
pub const SERVER_VERSION: [u8; 6] = [16, 0, 0x03, 0xE8, 0, 0]; // 16.0.1000.0

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PreLogin {
    /// VERSION: the 6 raw bytes (client: driver version; server: product version).
    pub version: Option<[u8; 6]>,
    pub encryption: Option<u8>,
    /// INSTOPT without its terminating NUL.
    pub instance: Option<Vec<u8>>,
    pub thread_id: Option<u32>,
    pub mars: Option<u8>,
    pub trace_id: Option<Vec<u8>>,
    pub fed_auth_required: Option<u8>,
    pub nonce: Option<Vec<u8>>,
}

impl PreLogin {
    /// Decodes a PRELOGIN message. Unknown options are skipped; every option's data must
    /// lie inside the message.
    pub fn decode(data: &[u8]) -> Result<PreLogin> {
        let mut r = Reader::new(data);
        let mut p = PreLogin::default();
        loop {
            let token = r.u8("PRELOGIN option table")?;
            if token == OPT_TERMINATOR {
                break;
            }
            let offset = usize::from(r.u16_be("PRELOGIN option offset")?);
            let len = usize::from(r.u16_be("PRELOGIN option length")?);
            let end = offset.checked_add(len).filter(|&e| e <= data.len());
            let Some(end) = end else {
                return Err(TdsError::invalid("PRELOGIN option", format!("option {token:#04x} beyond the message")));
            };
            let v = &data[offset..end];
            let need = |n: usize| -> Result<()> {
                if v.len() < n {
                    Err(TdsError::invalid("PRELOGIN option", format!("option {token:#04x} has {} bytes", v.len())))
                } else {
                    Ok(())
                }
            };
            match token {
                OPT_VERSION => {
                    need(6)?;
                    let mut a = [0u8; 6];
                    a.copy_from_slice(&v[..6]);
                    p.version = Some(a);
                }
                OPT_ENCRYPTION => {
                    need(1)?;
                    p.encryption = Some(v[0]);
                }
                OPT_INSTOPT => {
                    let name = v.split(|&b| b == 0).next().unwrap_or(&[]);
                    p.instance = Some(name.to_vec());
                }
                // Servers send an empty THREADID; clients 4 bytes.
                OPT_THREADID if v.len() >= 4 => p.thread_id = Some(u32::from_be_bytes([v[0], v[1], v[2], v[3]])),
                OPT_MARS => {
                    need(1)?;
                    p.mars = Some(v[0]);
                }
                OPT_TRACEID => p.trace_id = Some(v.to_vec()),
                OPT_FEDAUTHREQUIRED => {
                    need(1)?;
                    p.fed_auth_required = Some(v[0]);
                }
                OPT_NONCE => p.nonce = Some(v.to_vec()),
                _ => {}
            }
        }
        Ok(p)
    }

    /// Encodes the options present, in token order.
    pub fn encode(&self) -> Vec<u8> {
        let mut opts: Vec<(u8, Vec<u8>)> = Vec::new();
        if let Some(v) = self.version {
            opts.push((OPT_VERSION, v.to_vec()));
        }
        if let Some(e) = self.encryption {
            opts.push((OPT_ENCRYPTION, vec![e]));
        }
        if let Some(i) = &self.instance {
            let mut v = i.clone();
            v.push(0);
            opts.push((OPT_INSTOPT, v));
        }
        if let Some(t) = self.thread_id {
            opts.push((OPT_THREADID, t.to_be_bytes().to_vec()));
        }
        if let Some(m) = self.mars {
            opts.push((OPT_MARS, vec![m]));
        }
        if let Some(t) = &self.trace_id {
            opts.push((OPT_TRACEID, t.clone()));
        }
        if let Some(f) = self.fed_auth_required {
            opts.push((OPT_FEDAUTHREQUIRED, vec![f]));
        }
        if let Some(n) = &self.nonce {
            opts.push((OPT_NONCE, n.clone()));
        }
        let mut out = Vec::new();
        let mut offset = opts.len() * 5 + 1;
        for (tok, v) in &opts {
            out.push(*tok);
            out.extend_from_slice(&(offset as u16).to_be_bytes());
            out.extend_from_slice(&(v.len() as u16).to_be_bytes());
            offset += v.len();
        }
        out.push(OPT_TERMINATOR);
        for (_, v) in &opts {
            out.extend_from_slice(v);
        }
        out
    }

    /// The server's answer: product version, the negotiated ENCRYPTION byte, an empty
    /// instance name, no thread id, MARS off.
    pub fn server_response(encryption: u8) -> PreLogin {
        PreLogin {
            version: Some(SERVER_VERSION),
            encryption: Some(encryption),
            instance: Some(Vec::new()),
            thread_id: None,
            mars: Some(0),
            ..PreLogin::default()
        }
    }
}

/// How much of the connection TLS covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EncryptionMode {
    /// No TLS at all.
    None,
    /// TLS for the LOGIN7 message only (ENCRYPT_OFF), plain afterwards.
    LoginOnly,
    /// TLS for the rest of the connection.
    Full,
    /// The client cannot encrypt but the server requires it: answer, then close.
    Refuse,
}

/// The server's ENCRYPTION answer to a client's value, and what follows from it.
pub fn negotiate(client: u8, require_encryption: bool) -> (u8, EncryptionMode) {
    match client & !ENCRYPT_CLIENT_CERT {
        ENCRYPT_OFF if require_encryption => (ENCRYPT_REQ, EncryptionMode::Full),
        ENCRYPT_OFF => (ENCRYPT_OFF, EncryptionMode::LoginOnly),
        ENCRYPT_ON | ENCRYPT_REQ => (ENCRYPT_ON, EncryptionMode::Full),
        ENCRYPT_NOT_SUP if require_encryption => (ENCRYPT_REQ, EncryptionMode::Refuse),
        ENCRYPT_NOT_SUP => (ENCRYPT_NOT_SUP, EncryptionMode::None),
        // Unknown values (including STRICT outside TLS): treat as a request for encryption.
        _ => (ENCRYPT_ON, EncryptionMode::Full),
    }
}
