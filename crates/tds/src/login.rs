//! LOGIN7 ([MS-TDS] 2.2.6.4), packet type 0x10: the client's credentials and options.
//!
//! ```text
//! offset size  field
//! 0      4     Length            u32 LE, the whole structure
//! 4      4     TDSVersion        u32 LE (0x74000004 for 7.4, 0x08000000 for TDS 8.0)
//! 8      4     PacketSize        requested packet size (0: server default)
//! 12     4     ClientProgVer
//! 16     4     ClientPID
//! 20     4     ConnectionID
//! 24     1     OptionFlags1      fUseDB 0x20, fSetLang 0x80, ...
//! 25     1     OptionFlags2      fODBC 0x02, fIntSecurity 0x80 (integrated security)
//! 26     1     TypeFlags         fReadOnlyIntent 0x20
//! 27     1     OptionFlags3      fChangePassword 0x01, fExtension 0x10 (FeatureExt
//!                                present)
//! 28     4     ClientTimeZone    i32
//! 32     4     ClientLCID
//! 36     4x9   (offset u16, length u16) of HostName, UserName, Password, AppName,
//!              ServerName, Extension, CltIntName, Language, Database; offsets from the
//!              start of LOGIN7, lengths in UTF-16 code units (Extension: in bytes)
//! 72     6     ClientID          MAC address
//! 78     4     (offset, length) SSPI, in bytes
//! 82     4     (offset, length) AtchDBFile
//! 86     4     (offset, length) ChangePassword          (TDS 7.2+)
//! 90     4     cbSSPILong        u32                      (TDS 7.2+)
//! 94     ...   variable data
//! ```
//!
//! The password is UTF-16LE with each byte's nibbles swapped and then XORed with 0xA5.
//! With fExtension, the Extension field holds a u32 offset to the FeatureExt block:
//! repeated { FeatureId u8, FeatureDataLen u32 LE, data }, ended by 0xFF. Of the
//! features, Mesquite acknowledges COLUMNENCRYPTION (0x04, data: the highest Always
//! Encrypted version the client speaks, one byte) with version 1.

use crate::backend::LoginRequest;
use crate::error::{Result, TdsError};
use crate::wire::{put_utf16, utf16_to_string, Reader};

pub const TDS_7_1: u32 = 0x7100_0001;
pub const TDS_7_2: u32 = 0x7209_0002;
pub const TDS_7_3: u32 = 0x730B_0003;
pub const TDS_7_4: u32 = 0x7400_0004;
pub const TDS_8_0: u32 = 0x0800_0000;

pub const FLAG1_USE_DB: u8 = 0x20;
pub const FLAG1_SET_LANG: u8 = 0x80;
pub const FLAG2_ODBC: u8 = 0x02;
pub const FLAG2_INT_SECURITY: u8 = 0x80;
/// fChangePassword: ChangePassword holds the login's new password.
pub const FLAG3_CHANGE_PASSWORD: u8 = 0x01;
pub const FLAG3_EXTENSION: u8 = 0x10;
pub const FEATURE_TERMINATOR: u8 = 0xFF;
/// FeatureId of Always Encrypted ([MS-TDS] 2.2.6.4, COLUMNENCRYPTION).
pub const FEATURE_COLUMN_ENCRYPTION: u8 = 0x04;

/// Length of the fixed part for TDS 7.2 and later (86 for 7.0/7.1, which lack
/// ChangePassword and cbSSPILong).
pub const FIXED_LEN: usize = 94;
const FIXED_LEN_71: usize = 86;

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Login7 {
    pub tds_version: u32,
    pub packet_size: u32,
    pub client_prog_ver: u32,
    pub client_pid: u32,
    pub connection_id: u32,
    pub option_flags1: u8,
    pub option_flags2: u8,
    pub type_flags: u8,
    pub option_flags3: u8,
    pub client_time_zone: i32,
    pub client_lcid: u32,
    pub host_name: String,
    pub user_name: String,
    pub password: String,
    pub app_name: String,
    pub server_name: String,
    pub library_name: String,
    pub language: String,
    pub database: String,
    pub client_id: [u8; 6],
    pub sspi: Vec<u8>,
    pub attach_db_file: String,
    pub change_password: String,
    /// FeatureIds of the FeatureExt block (when fExtension is set).
    pub features: Vec<u8>,
    /// The COLUMNENCRYPTION feature's version byte, when the client sent the feature.
    pub column_encryption: Option<u8>,
}

/// Password obfuscation: swap the nibbles of each byte, then XOR with 0xA5.
pub fn scramble_password(password: &str) -> Vec<u8> {
    let mut b = Vec::new();
    put_utf16(&mut b, password);
    for x in &mut b {
        *x = x.rotate_left(4) ^ 0xA5;
    }
    b
}

pub fn unscramble_password(bytes: &[u8]) -> String {
    let b: Vec<u8> = bytes.iter().map(|x| (x ^ 0xA5).rotate_left(4)).collect();
    utf16_to_string(&b)
}

impl Login7 {
    pub fn decode(data: &[u8]) -> Result<Login7> {
        let mut r = Reader::new(data);
        let length = r.u32_le("LOGIN7")? as usize;
        if length > data.len() || length < FIXED_LEN_71 {
            return Err(TdsError::invalid("LOGIN7 length", format!("{length} for a message of {}", data.len())));
        }
        let data = &data[..length];
        let mut r = Reader::new(data);
        r.skip(4, "LOGIN7")?;
        let mut l = Login7 {
            tds_version: r.u32_le("LOGIN7")?,
            packet_size: r.u32_le("LOGIN7")?,
            client_prog_ver: r.u32_le("LOGIN7")?,
            client_pid: r.u32_le("LOGIN7")?,
            connection_id: r.u32_le("LOGIN7")?,
            option_flags1: r.u8("LOGIN7")?,
            option_flags2: r.u8("LOGIN7")?,
            type_flags: r.u8("LOGIN7")?,
            option_flags3: r.u8("LOGIN7")?,
            client_time_zone: r.i32_le("LOGIN7")?,
            client_lcid: r.u32_le("LOGIN7")?,
            ..Login7::default()
        };
        let fixed = if l.tds_version >= TDS_7_2 || l.tds_version == TDS_8_0 { FIXED_LEN } else { FIXED_LEN_71 };
        if length < fixed {
            return Err(TdsError::invalid("LOGIN7 length", format!("{length} is shorter than the fixed part")));
        }
        let mut pairs = [(0usize, 0usize); 9];
        for p in &mut pairs {
            *p = (usize::from(r.u16_le("LOGIN7")?), usize::from(r.u16_le("LOGIN7")?));
        }
        l.client_id.copy_from_slice(r.bytes(6, "LOGIN7")?);
        let sspi = (usize::from(r.u16_le("LOGIN7")?), usize::from(r.u16_le("LOGIN7")?));
        let attach = (usize::from(r.u16_le("LOGIN7")?), usize::from(r.u16_le("LOGIN7")?));
        let (change, sspi_long) = if fixed == FIXED_LEN {
            let c = (usize::from(r.u16_le("LOGIN7")?), usize::from(r.u16_le("LOGIN7")?));
            (c, r.u32_le("LOGIN7")? as usize)
        } else {
            ((0, 0), 0)
        };

        // A field: `len` units of `unit` bytes at `off`, inside the variable part.
        let field = |name: &'static str, (off, len): (usize, usize), unit: usize| -> Result<&[u8]> {
            if len == 0 {
                return Ok(&[]);
            }
            let end = off.checked_add(len * unit).filter(|&e| off >= fixed && e <= length);
            match end {
                Some(end) => Ok(&data[off..end]),
                None => Err(TdsError::invalid("LOGIN7 field", format!("{name} at {off} length {len} out of bounds"))),
            }
        };
        let text =
            |name: &'static str, p: (usize, usize)| -> Result<String> { Ok(utf16_to_string(field(name, p, 2)?)) };
        l.host_name = text("HostName", pairs[0])?;
        l.user_name = text("UserName", pairs[1])?;
        l.password = unscramble_password(field("Password", pairs[2], 2)?);
        l.app_name = text("AppName", pairs[3])?;
        l.server_name = text("ServerName", pairs[4])?;
        l.library_name = text("CltIntName", pairs[6])?;
        l.language = text("Language", pairs[7])?;
        l.database = text("Database", pairs[8])?;
        // cbSSPI of 0xFFFF means the length is in cbSSPILong.
        let sspi_len = if sspi.1 == 0xFFFF { sspi_long } else { sspi.1 };
        l.sspi = field("SSPI", (sspi.0, sspi_len), 1)?.to_vec();
        l.attach_db_file = text("AtchDBFile", attach)?;
        l.change_password = unscramble_password(field("ChangePassword", change, 2)?);
        if l.option_flags3 & FLAG3_EXTENSION != 0 {
            let ext = field("Extension", pairs[5], 1)?;
            if ext.len() >= 4 {
                let off = u32::from_le_bytes([ext[0], ext[1], ext[2], ext[3]]) as usize;
                (l.features, l.column_encryption) = decode_feature_ext(data, off, fixed)?;
            }
        }
        Ok(l)
    }

    /// Encodes a LOGIN7 as a client sends it (tests and tools).
    pub fn encode(&self) -> Vec<u8> {
        let mut var: Vec<u8> = Vec::new();
        let mut pairs: Vec<(u16, u16)> = Vec::new();
        let text = |var: &mut Vec<u8>, s: &str, scrambled: bool| -> (u16, u16) {
            let off = (FIXED_LEN + var.len()) as u16;
            let before = var.len();
            if scrambled {
                var.extend_from_slice(&scramble_password(s));
            } else {
                put_utf16(var, s);
            }
            (off, ((var.len() - before) / 2) as u16)
        };
        pairs.push(text(&mut var, &self.host_name, false));
        pairs.push(text(&mut var, &self.user_name, false));
        pairs.push(text(&mut var, &self.password, true));
        pairs.push(text(&mut var, &self.app_name, false));
        pairs.push(text(&mut var, &self.server_name, false));
        let ext_pair_index = pairs.len();
        pairs.push(((FIXED_LEN + var.len()) as u16, 0));
        pairs.push(text(&mut var, &self.library_name, false));
        pairs.push(text(&mut var, &self.language, false));
        pairs.push(text(&mut var, &self.database, false));
        let sspi = ((FIXED_LEN + var.len()) as u16, self.sspi.len() as u16);
        var.extend_from_slice(&self.sspi);
        let attach = text(&mut var, &self.attach_db_file, false);
        let change = text(&mut var, &self.change_password, true);
        if self.option_flags3 & FLAG3_EXTENSION != 0 {
            // Extension holds a u32 offset to the FeatureExt block that follows it.
            let ext_off = (FIXED_LEN + var.len()) as u16;
            let block = (FIXED_LEN + var.len() + 4) as u32;
            var.extend_from_slice(&block.to_le_bytes());
            for f in &self.features {
                var.push(*f);
                match self.column_encryption.filter(|_| *f == FEATURE_COLUMN_ENCRYPTION) {
                    Some(v) => {
                        var.extend_from_slice(&1u32.to_le_bytes());
                        var.push(v);
                    }
                    None => var.extend_from_slice(&0u32.to_le_bytes()),
                }
            }
            var.push(FEATURE_TERMINATOR);
            pairs[ext_pair_index] = (ext_off, 4);
        }
        let mut out = Vec::with_capacity(FIXED_LEN + var.len());
        out.extend_from_slice(&((FIXED_LEN + var.len()) as u32).to_le_bytes());
        out.extend_from_slice(&self.tds_version.to_le_bytes());
        out.extend_from_slice(&self.packet_size.to_le_bytes());
        out.extend_from_slice(&self.client_prog_ver.to_le_bytes());
        out.extend_from_slice(&self.client_pid.to_le_bytes());
        out.extend_from_slice(&self.connection_id.to_le_bytes());
        out.extend_from_slice(&[self.option_flags1, self.option_flags2, self.type_flags, self.option_flags3]);
        out.extend_from_slice(&self.client_time_zone.to_le_bytes());
        out.extend_from_slice(&self.client_lcid.to_le_bytes());
        for (o, l) in &pairs {
            out.extend_from_slice(&o.to_le_bytes());
            out.extend_from_slice(&l.to_le_bytes());
        }
        out.extend_from_slice(&self.client_id);
        for (o, l) in [sspi, attach, change] {
            out.extend_from_slice(&o.to_le_bytes());
            out.extend_from_slice(&l.to_le_bytes());
        }
        out.extend_from_slice(&0u32.to_le_bytes());
        out.extend_from_slice(&var);
        out
    }

    /// Integrated (SSPI/Kerberos) authentication was asked for.
    pub fn wants_integrated_security(&self) -> bool {
        self.option_flags2 & FLAG2_INT_SECURITY != 0 || !self.sspi.is_empty()
    }

    pub fn to_request(&self, packet_size: u32) -> LoginRequest {
        LoginRequest {
            user: self.user_name.clone(),
            password: self.password.clone(),
            database: if self.database.is_empty() { None } else { Some(self.database.clone()) },
            app_name: self.app_name.clone(),
            host_name: self.host_name.clone(),
            language: self.language.clone(),
            packet_size,
            tds_version: self.tds_version,
            new_password: (self.option_flags3 & FLAG3_CHANGE_PASSWORD != 0).then(|| self.change_password.clone()),
            ..LoginRequest::default()
        }
    }
}

/// The FeatureIds of a FeatureExt block at `off`, and the COLUMNENCRYPTION version.
fn decode_feature_ext(data: &[u8], off: usize, fixed: usize) -> Result<(Vec<u8>, Option<u8>)> {
    if off < fixed || off > data.len() {
        return Err(TdsError::invalid("LOGIN7 FeatureExt", format!("offset {off} out of bounds")));
    }
    let mut r = Reader::new(&data[off..]);
    let mut ids = Vec::new();
    let mut column_encryption = None;
    loop {
        let id = r.u8("LOGIN7 FeatureExt")?;
        if id == FEATURE_TERMINATOR {
            return Ok((ids, column_encryption));
        }
        let len = r.u32_le("LOGIN7 FeatureExt")? as usize;
        let body = r.bytes(len, "LOGIN7 FeatureExt")?;
        if id == FEATURE_COLUMN_ENCRYPTION {
            column_encryption = body.first().copied();
        }
        ids.push(id);
    }
}

/// The TDS version the server answers in LOGINACK: the client's, capped at 7.4. TDS 8.0
/// clients get 7.4 too: 8.0 changes the transport, not the token stream, and drivers
/// compare the LOGINACK version against 7.x constants.
pub fn negotiated_version(client: u32) -> u32 {
    if client == TDS_8_0 || !(TDS_7_1..TDS_7_4).contains(&client) {
        TDS_7_4
    } else {
        client
    }
}
