//! The database directory: one row per database in master's system table (the role of
//! SQL Server's sys.sysdbreg and sys.sysbrickfiles), written in master's transactions so a
//! crash leaves either the old or the new directory.
//!
//! # Master's system table
//!
//! Every database has one *system table*: a unique B-tree with object id
//! [`SYSTEM_TABLE_OBJECT_ID`] created with the database, keyed by a one-byte tag:
//!
//! | key | value | where |
//! |---|---|---|
//! | `A` + u64 BE HoBT id | u64 LE id of the index's LOB allocation unit | every database |
//! | `D` + i16 BE database id | a [`DbRecord`] (below) | master |
//! | `L` + upper-cased login name | a login row (see `login.rs`) | master |
//! | `S` + i32 BE sequence object id | u32 LE restart count, i128 LE bound: the highest value the sequence may have handed out (see `sql::exec::sequence`) | every database |
//!
//! # DbRecord encoding
//!
//! Integers little-endian, strings a u16 byte length then UTF-8: `u8` version (1 or 2),
//! `i16` id, `str` name, `i32` create date days since 1900-01-01, `u32` create date ticks
//! (1/300 s), `u8` recovery model (0 SIMPLE, 1 FULL, 2 BULK_LOGGED), `u8` delayed
//! durability (0 DISABLED, 1 ALLOWED, 2 FORCED), `i32` TARGET_RECOVERY_TIME seconds,
//! `u8` flags (bit 0 READ_ONLY), `u8` page verify (0 NONE, 1 TORN_PAGE_DETECTION,
//! 2 CHECKSUM), `u16` file count, then per file: `u16` file id, `u8` type (0 ROWS,
//! 1 LOG), `str` logical name, `str` path relative to the data directory, `u32` initial
//! size in pages, `i64` max size in pages (-1 unlimited), `i64` growth, `u8` growth is a
//! percentage (0/1). Version 2 adds, after the files, `str` the database collation's name
//! (CREATE/ALTER DATABASE ... COLLATE; a name the server does not know is damage).
//! Version 1 records, and records of databases with the default collation (which are
//! written as version 1, so that older servers still read them), have
//! SQL_Latin1_General_CP1_CI_AS.

use types::Value;

/// Object id of every database's system table (a reserved system object id).
pub const SYSTEM_TABLE_OBJECT_ID: u32 = 8;
/// Object id of every database's catalog index (sys.sysschobjs' id in SQL Server).
pub const CATALOG_OBJECT_ID: u32 = 34;

pub const KEY_LOB_UNIT: u8 = b'A';
pub const KEY_DATABASE: u8 = b'D';
pub const KEY_SEQUENCE: u8 = b'S';
pub const KEY_LOGIN: u8 = b'L';

/// The record version without a collation (the default one), and with one.
const VERSION: u8 = 1;
const VERSION_COLLATION: u8 = 2;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RecoveryModel {
    Simple,
    Full,
    BulkLogged,
}

impl RecoveryModel {
    pub fn desc(self) -> &'static str {
        match self {
            RecoveryModel::Simple => "SIMPLE",
            RecoveryModel::Full => "FULL",
            RecoveryModel::BulkLogged => "BULK_LOGGED",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PageVerify {
    None,
    TornPageDetection,
    Checksum,
}

impl PageVerify {
    pub fn desc(self) -> &'static str {
        match self {
            PageVerify::None => "NONE",
            PageVerify::TornPageDetection => "TORN_PAGE_DETECTION",
            PageVerify::Checksum => "CHECKSUM",
        }
    }
}

/// One file of a database as created (and altered).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileRecord {
    pub file_id: u16,
    /// 0 ROWS, 1 LOG.
    pub type_code: u8,
    pub logical_name: String,
    /// Relative to the data directory.
    pub path: String,
    pub size_pages: u32,
    /// -1 = UNLIMITED.
    pub max_size_pages: i64,
    /// Pages, or a percentage when `growth_is_percent`; 0 = no growth.
    pub growth: i64,
    pub growth_is_percent: bool,
}

/// A database as the directory records it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DbRecord {
    pub id: i16,
    pub name: String,
    /// datetime: days since 1900-01-01 and 1/300 s ticks.
    pub create_days: i32,
    pub create_ticks: u32,
    pub recovery: RecoveryModel,
    pub delayed: txn::xact::DelayedDurability,
    pub target_recovery_time: i32,
    pub read_only: bool,
    pub page_verify: PageVerify,
    pub files: Vec<FileRecord>,
    /// The database collation: the default of new character columns, literals and
    /// variables in the database.
    pub collation: types::Collation,
}

impl DbRecord {
    pub fn create_date(&self) -> Value {
        Value::DateTime { days: self.create_days, ticks: self.create_ticks }
    }

    pub fn data_files(&self) -> impl Iterator<Item = &FileRecord> {
        self.files.iter().filter(|f| f.type_code == 0)
    }

    pub fn log_file(&self) -> Option<&FileRecord> {
        self.files.iter().find(|f| f.type_code == 1)
    }

    pub fn key(id: i16) -> Vec<u8> {
        let mut k = vec![KEY_DATABASE];
        k.extend_from_slice(&id.to_be_bytes());
        k
    }

    pub fn encode(&self) -> Vec<u8> {
        let default = self.collation == types::Collation::DEFAULT;
        let mut o = vec![if default { VERSION } else { VERSION_COLLATION }];
        o.extend_from_slice(&self.id.to_le_bytes());
        put_str(&mut o, &self.name);
        o.extend_from_slice(&self.create_days.to_le_bytes());
        o.extend_from_slice(&self.create_ticks.to_le_bytes());
        o.push(match self.recovery {
            RecoveryModel::Simple => 0,
            RecoveryModel::Full => 1,
            RecoveryModel::BulkLogged => 2,
        });
        o.push(match self.delayed {
            txn::xact::DelayedDurability::Disabled => 0,
            txn::xact::DelayedDurability::Allowed => 1,
            txn::xact::DelayedDurability::Forced => 2,
        });
        o.extend_from_slice(&self.target_recovery_time.to_le_bytes());
        o.push(u8::from(self.read_only));
        o.push(match self.page_verify {
            PageVerify::None => 0,
            PageVerify::TornPageDetection => 1,
            PageVerify::Checksum => 2,
        });
        o.extend_from_slice(&(self.files.len() as u16).to_le_bytes());
        for f in &self.files {
            o.extend_from_slice(&f.file_id.to_le_bytes());
            o.push(f.type_code);
            put_str(&mut o, &f.logical_name);
            put_str(&mut o, &f.path);
            o.extend_from_slice(&f.size_pages.to_le_bytes());
            o.extend_from_slice(&f.max_size_pages.to_le_bytes());
            o.extend_from_slice(&f.growth.to_le_bytes());
            o.push(u8::from(f.growth_is_percent));
        }
        if !default {
            put_str(&mut o, &self.collation.name());
        }
        o
    }

    pub fn decode(b: &[u8]) -> Option<DbRecord> {
        let mut r = Rd { b, at: 0 };
        let version = r.u8()?;
        if version != VERSION && version != VERSION_COLLATION {
            return None;
        }
        let id = i16::from_le_bytes(r.arr()?);
        let name = r.str()?;
        let create_days = i32::from_le_bytes(r.arr()?);
        let create_ticks = u32::from_le_bytes(r.arr()?);
        let recovery = match r.u8()? {
            0 => RecoveryModel::Simple,
            1 => RecoveryModel::Full,
            2 => RecoveryModel::BulkLogged,
            _ => return None,
        };
        let delayed = match r.u8()? {
            0 => txn::xact::DelayedDurability::Disabled,
            1 => txn::xact::DelayedDurability::Allowed,
            2 => txn::xact::DelayedDurability::Forced,
            _ => return None,
        };
        let target_recovery_time = i32::from_le_bytes(r.arr()?);
        let flags = r.u8()?;
        if flags > 1 {
            return None;
        }
        let page_verify = match r.u8()? {
            0 => PageVerify::None,
            1 => PageVerify::TornPageDetection,
            2 => PageVerify::Checksum,
            _ => return None,
        };
        let n = u16::from_le_bytes(r.arr()?);
        let mut files = Vec::new();
        for _ in 0..n {
            files.push(FileRecord {
                file_id: u16::from_le_bytes(r.arr()?),
                type_code: r.u8().filter(|t| *t <= 1)?,
                logical_name: r.str()?,
                path: r.str()?,
                size_pages: u32::from_le_bytes(r.arr()?),
                max_size_pages: i64::from_le_bytes(r.arr()?),
                growth: i64::from_le_bytes(r.arr()?),
                growth_is_percent: match r.u8()? {
                    0 => false,
                    1 => true,
                    _ => return None,
                },
            });
        }
        let collation = if version == VERSION_COLLATION {
            types::Collation::from_name(&r.str()?)?
        } else {
            types::Collation::DEFAULT
        };
        if r.at != b.len() {
            return None;
        }
        Some(DbRecord {
            id,
            name,
            create_days,
            create_ticks,
            recovery,
            delayed,
            target_recovery_time,
            read_only: flags & 1 != 0,
            page_verify,
            files,
            collation,
        })
    }
}

fn put_str(o: &mut Vec<u8>, s: &str) {
    // Names are sysname (128 characters) and paths far shorter than 64 KB.
    let b = &s.as_bytes()[..s.len().min(u16::MAX as usize)];
    o.extend_from_slice(&(b.len() as u16).to_le_bytes());
    o.extend_from_slice(b);
}

struct Rd<'a> {
    b: &'a [u8],
    at: usize,
}

impl Rd<'_> {
    fn take(&mut self, n: usize) -> Option<&[u8]> {
        let s = self.b.get(self.at..self.at.checked_add(n)?)?;
        self.at += n;
        Some(s)
    }
    fn arr<const N: usize>(&mut self) -> Option<[u8; N]> {
        self.take(N)?.try_into().ok()
    }
    fn u8(&mut self) -> Option<u8> {
        Some(self.take(1)?[0])
    }
    fn str(&mut self) -> Option<String> {
        let n = u16::from_le_bytes(self.arr()?) as usize;
        String::from_utf8(self.take(n)?.to_vec()).ok()
    }
}

/// The system table key of an index's LOB allocation unit.
pub fn sequence_key(object_id: i32) -> Vec<u8> {
    let mut k = vec![KEY_SEQUENCE];
    k.extend_from_slice(&object_id.to_be_bytes());
    k
}

pub fn lob_unit_key(hobt: u64) -> Vec<u8> {
    let mut k = vec![KEY_LOB_UNIT];
    k.extend_from_slice(&hobt.to_be_bytes());
    k
}

/// The system table key of a login.
pub fn login_key(name: &str) -> Vec<u8> {
    let mut k = vec![KEY_LOGIN];
    k.extend_from_slice(name.to_uppercase().as_bytes());
    k
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_round_trip_and_reject_damage() {
        let r = DbRecord {
            id: 5,
            name: "Sales".into(),
            create_days: 45_000,
            create_ticks: 123,
            recovery: RecoveryModel::BulkLogged,
            delayed: txn::xact::DelayedDurability::Forced,
            target_recovery_time: 60,
            read_only: true,
            page_verify: PageVerify::Checksum,
            files: vec![
                FileRecord {
                    file_id: 1,
                    type_code: 0,
                    logical_name: "Sales".into(),
                    path: "Sales.mdf".into(),
                    size_pages: 1024,
                    max_size_pages: -1,
                    growth: 10,
                    growth_is_percent: true,
                },
                FileRecord {
                    file_id: 2,
                    type_code: 1,
                    logical_name: "Sales_log".into(),
                    path: "Sales_log.ldf".into(),
                    size_pages: 1024,
                    max_size_pages: 262_144,
                    growth: 8192,
                    growth_is_percent: false,
                },
            ],
            collation: types::Collation::DEFAULT,
        };
        let b = r.encode();
        // The default collation writes version 1, as servers before collations did.
        assert_eq!(b[0], 1);
        assert_eq!(DbRecord::decode(&b), Some(r.clone()));
        for cut in 0..b.len() {
            assert!(DbRecord::decode(&b[..cut]).is_none());
        }
        let mut long = b.clone();
        long.push(0);
        assert!(DbRecord::decode(&long).is_none());

        let cs = DbRecord { collation: types::Collation::from_name("Latin1_General_CS_AS").unwrap(), ..r };
        let b = cs.encode();
        assert_eq!(b[0], 2);
        assert_eq!(DbRecord::decode(&b), Some(cs.clone()));
        for cut in 0..b.len() {
            assert!(DbRecord::decode(&b[..cut]).is_none());
        }
        // A collation name the server does not know is damage.
        let mut unknown = b[..b.len() - "Latin1_General_CS_AS".len() - 2].to_vec();
        put_str(&mut unknown, "Klingon_CI_AS");
        assert!(DbRecord::decode(&unknown).is_none());
    }
}
