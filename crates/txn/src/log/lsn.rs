//! Log sequence numbers.
//!
//! An LSN names one log record by where it sits in the log, as SQL Server's does:
//!
//! ```text
//!  63            32 31              12 11        0
//! +----------------+------------------+-----------+
//! | VLF FSeqNo     | block offset     | slot      |
//! | (32 bits)      | (20 bits)        | (12 bits) |
//! +----------------+------------------+-----------+
//! ```
//!
//! - the sequence number (FSeqNo) of the virtual log file the record is in; FSeqNos only
//!   grow, a recycled VLF gets a new one;
//! - the offset of the record's log block from the start of that VLF, in 512-byte
//!   sectors (so a VLF is at most 2^20 sectors = 512 MB);
//! - the record's slot in the block, starting at 1 (so at most 4095 records a block).
//!
//! Packed this way, LSNs compare as plain integers in log order. They print in SQL
//! Server's form, `0000002a:00000010:0003` (hex, 8:8:4 digits), and parse back from it.

use std::fmt;
use std::str::FromStr;

/// A log sequence number. See the module documentation for the packing.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Lsn(pub u64);

/// Bits of the block offset field.
const BLOCK_BITS: u32 = 20;
/// Bits of the slot field.
const SLOT_BITS: u32 = 12;

impl Lsn {
    /// No LSN: `00000000:00000000:0000`, smaller than every real LSN (FSeqNos start at 1).
    pub const NULL: Lsn = Lsn(0);
    /// The largest block offset an LSN can carry (sectors from the start of a VLF).
    pub const MAX_BLOCK: u32 = (1 << BLOCK_BITS) - 1;
    /// The largest slot an LSN can carry.
    pub const MAX_SLOT: u16 = (1 << SLOT_BITS) - 1;

    /// Packs the three parts. Returns `None` if `block` or `slot` does not fit its field.
    pub fn new(vlf_seq: u32, block: u32, slot: u16) -> Option<Lsn> {
        if block > Self::MAX_BLOCK || slot > Self::MAX_SLOT {
            return None;
        }
        Some(Lsn((u64::from(vlf_seq) << 32) | (u64::from(block) << SLOT_BITS) | u64::from(slot)))
    }

    /// The FSeqNo of the VLF holding the record.
    pub fn vlf_seq(self) -> u32 {
        (self.0 >> 32) as u32
    }

    /// The log block's offset from the start of its VLF, in 512-byte sectors.
    pub fn block(self) -> u32 {
        ((self.0 >> SLOT_BITS) as u32) & Self::MAX_BLOCK
    }

    /// The record's slot within its block (1-based).
    pub fn slot(self) -> u16 {
        (self.0 as u16) & Self::MAX_SLOT
    }

    pub fn is_null(self) -> bool {
        self.0 == 0
    }

    pub fn as_u64(self) -> u64 {
        self.0
    }
}

impl From<u64> for Lsn {
    fn from(v: u64) -> Lsn {
        Lsn(v)
    }
}

impl From<Lsn> for u64 {
    fn from(l: Lsn) -> u64 {
        l.0
    }
}

impl fmt::Display for Lsn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:08x}:{:08x}:{:04x}", self.vlf_seq(), self.block(), self.slot())
    }
}

/// The text was not an LSN in `vvvvvvvv:bbbbbbbb:ssss` form, or a part was out of range.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("'{0}' is not an LSN of the form 0000002a:00000010:0003")]
pub struct ParseLsnError(pub String);

impl FromStr for Lsn {
    type Err = ParseLsnError;

    /// Parses SQL Server's form. The digit counts are not enforced (`2a:10:3` is
    /// accepted), but each part must fit its field.
    fn from_str(s: &str) -> Result<Lsn, ParseLsnError> {
        let err = || ParseLsnError(s.to_string());
        let mut parts = s.trim().split(':');
        let (Some(v), Some(b), Some(sl), None) = (parts.next(), parts.next(), parts.next(), parts.next()) else {
            return Err(err());
        };
        let hex = |p: &str| -> Option<u64> {
            if p.is_empty() || p.len() > 8 || !p.bytes().all(|c| c.is_ascii_hexdigit()) {
                return None;
            }
            u64::from_str_radix(p, 16).ok()
        };
        let v = hex(v).ok_or_else(err)?;
        let b = hex(b).ok_or_else(err)?;
        let sl = hex(sl).ok_or_else(err)?;
        let v = u32::try_from(v).map_err(|_| err())?;
        let b = u32::try_from(b).map_err(|_| err())?;
        let sl = u16::try_from(sl).map_err(|_| err())?;
        Lsn::new(v, b, sl).ok_or_else(err)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packs_and_prints_like_sql_server() {
        let l = Lsn::new(0x2a, 0x10, 3).unwrap();
        assert_eq!(l.to_string(), "0000002a:00000010:0003");
        assert_eq!((l.vlf_seq(), l.block(), l.slot()), (0x2a, 0x10, 3));
        assert_eq!("0000002a:00000010:0003".parse::<Lsn>().unwrap(), l);
        assert_eq!("2a:10:3".parse::<Lsn>().unwrap(), l);
        assert_eq!(Lsn::NULL.to_string(), "00000000:00000000:0000");
        assert!(Lsn::new(1, 1 << 20, 0).is_none());
        assert!(Lsn::new(1, 0, 4096).is_none());
        for bad in ["", "1:2", "1:2:3:4", "x:1:1", "1:100000:1", "1:1:1000", "123456789:1:1"] {
            assert!(bad.parse::<Lsn>().is_err(), "{bad}");
        }
    }

    #[test]
    fn order_is_log_order() {
        let a = Lsn::new(1, 500, 4095).unwrap();
        let b = Lsn::new(1, 501, 1).unwrap();
        let c = Lsn::new(2, 1, 1).unwrap();
        assert!(Lsn::NULL < a && a < b && b < c);
    }
}
