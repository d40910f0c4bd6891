//! Little helpers for the byte shapes [MS-TDS] uses everywhere: a bounds-checked reader
//! over a message, and writers for B_VARCHAR (1-byte length in UTF-16 code units),
//! US_VARCHAR (2-byte length), B_VARBYTE and UTF-16LE text.
//!
//! The reader never allocates from a length field alone: every length is checked against
//! the bytes that remain before anything is copied.

use crate::error::{Result, TdsError};

/// A cursor over a received message. All reads are bounds-checked.
#[derive(Debug, Clone)]
pub struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    pub fn new(buf: &'a [u8]) -> Reader<'a> {
        Reader { buf, pos: 0 }
    }

    pub fn pos(&self) -> usize {
        self.pos
    }

    pub fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }

    pub fn is_empty(&self) -> bool {
        self.remaining() == 0
    }

    /// The unread part, without consuming it.
    pub fn rest(&self) -> &'a [u8] {
        &self.buf[self.pos..]
    }

    pub fn peek_u8(&self) -> Option<u8> {
        self.buf.get(self.pos).copied()
    }

    pub fn bytes(&mut self, n: usize, what: &'static str) -> Result<&'a [u8]> {
        if n > self.remaining() {
            return Err(TdsError::Truncated(what));
        }
        let s = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    pub fn skip(&mut self, n: usize, what: &'static str) -> Result<()> {
        self.bytes(n, what).map(|_| ())
    }

    fn array<const N: usize>(&mut self, what: &'static str) -> Result<[u8; N]> {
        let b = self.bytes(N, what)?;
        let mut a = [0u8; N];
        a.copy_from_slice(b);
        Ok(a)
    }

    pub fn u8(&mut self, what: &'static str) -> Result<u8> {
        Ok(self.array::<1>(what)?[0])
    }
    pub fn u16_le(&mut self, what: &'static str) -> Result<u16> {
        Ok(u16::from_le_bytes(self.array(what)?))
    }
    pub fn u16_be(&mut self, what: &'static str) -> Result<u16> {
        Ok(u16::from_be_bytes(self.array(what)?))
    }
    pub fn i16_le(&mut self, what: &'static str) -> Result<i16> {
        Ok(i16::from_le_bytes(self.array(what)?))
    }
    pub fn u32_le(&mut self, what: &'static str) -> Result<u32> {
        Ok(u32::from_le_bytes(self.array(what)?))
    }
    pub fn u32_be(&mut self, what: &'static str) -> Result<u32> {
        Ok(u32::from_be_bytes(self.array(what)?))
    }
    pub fn i32_le(&mut self, what: &'static str) -> Result<i32> {
        Ok(i32::from_le_bytes(self.array(what)?))
    }
    pub fn u64_le(&mut self, what: &'static str) -> Result<u64> {
        Ok(u64::from_le_bytes(self.array(what)?))
    }
    pub fn i64_le(&mut self, what: &'static str) -> Result<i64> {
        Ok(i64::from_le_bytes(self.array(what)?))
    }
    pub fn f32_le(&mut self, what: &'static str) -> Result<f32> {
        Ok(f32::from_le_bytes(self.array(what)?))
    }
    pub fn f64_le(&mut self, what: &'static str) -> Result<f64> {
        Ok(f64::from_le_bytes(self.array(what)?))
    }

    /// B_VARCHAR: a 1-byte count of UTF-16 code units, then the text.
    pub fn b_varchar(&mut self, what: &'static str) -> Result<String> {
        let n = usize::from(self.u8(what)?);
        Ok(utf16_to_string(self.bytes(n * 2, what)?))
    }

    /// US_VARCHAR: a 2-byte count of UTF-16 code units, then the text.
    pub fn us_varchar(&mut self, what: &'static str) -> Result<String> {
        let n = usize::from(self.u16_le(what)?);
        Ok(utf16_to_string(self.bytes(n * 2, what)?))
    }

    /// B_VARBYTE: a 1-byte length, then the bytes.
    pub fn b_varbyte(&mut self, what: &'static str) -> Result<&'a [u8]> {
        let n = usize::from(self.u8(what)?);
        self.bytes(n, what)
    }
}

/// UTF-16LE bytes to a String. Unpaired surrogates become U+FFFD, as .NET's decoder does;
/// an odd trailing byte is dropped (callers that care check the length first).
pub fn utf16_to_string(bytes: &[u8]) -> String {
    // Batch texts and names are mostly ASCII: a branch-free pass copies the low bytes and
    // checks that every unit is ASCII (the char-by-char decoder cost ~60 instructions
    // per character of every SQL batch); anything else is decoded as UTF-16.
    let mut out = Vec::with_capacity(bytes.len() / 2);
    let mut ascii = true;
    for c in bytes.chunks_exact(2) {
        out.push(c[0]);
        ascii &= (c[0] < 0x80) & (c[1] == 0);
    }
    if ascii {
        // ASCII bytes are UTF-8: this cannot fail.
        if let Ok(s) = String::from_utf8(out) {
            return s;
        }
    }
    let units = bytes.chunks_exact(2).map(|c| u16::from_le_bytes([c[0], c[1]]));
    let mut s = String::with_capacity(bytes.len() / 2);
    // Unpaired surrogates are kept as sent (as stand-ins, see `types::ucs2`).
    types::ucs2::decode_into(&mut s, units);
    s
}

/// Appends `s` as UTF-16LE.
pub fn put_utf16(out: &mut Vec<u8>, s: &str) {
    for u in types::ucs2::units(&s) {
        out.extend_from_slice(&u.to_le_bytes());
    }
}

/// `s` as UTF-16LE, at most `max_units` code units (never splitting a surrogate pair).
fn utf16_units(s: &str, max_units: usize) -> Vec<u16> {
    let mut units: Vec<u16> = Vec::new();
    for c in s.chars() {
        let mut buf = [0u16; 2];
        let enc: &[u16] = match types::ucs2::lone_unit(c) {
            Some(u) => {
                buf[0] = u;
                &buf[..1]
            }
            None => c.encode_utf16(&mut buf),
        };
        if units.len() + enc.len() > max_units {
            break;
        }
        units.extend_from_slice(enc);
    }
    units
}

/// B_VARCHAR; text beyond 255 code units is cut (names in TDS are at most 128).
pub fn put_b_varchar(out: &mut Vec<u8>, s: &str) {
    let units = utf16_units(s, 255);
    out.push(units.len() as u8);
    for u in units {
        out.extend_from_slice(&u.to_le_bytes());
    }
}

/// US_VARCHAR; text beyond 65,535 code units is cut.
pub fn put_us_varchar(out: &mut Vec<u8>, s: &str) {
    let units = utf16_units(s, usize::from(u16::MAX));
    out.extend_from_slice(&(units.len() as u16).to_le_bytes());
    for u in units {
        out.extend_from_slice(&u.to_le_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn utf16(s: &str) -> Vec<u8> {
        let mut b = Vec::new();
        put_utf16(&mut b, s);
        b
    }

    #[test]
    fn utf16_text_decodes_past_its_ascii_prefix() {
        for s in ["", "SELECT 1", "é", "BEGIN TRAN; INSERT t VALUES (N'gämma 🎉 ok'); COMMIT;", "🎉", "a\u{7f}\u{80}b"]
        {
            assert_eq!(utf16_to_string(&utf16(s)), s);
        }
        // A lone surrogate is kept (as its stand-in), after an ASCII prefix or not, and
        // goes back out as the unit it was.
        let mut b = utf16("ab");
        b.extend_from_slice(&0xD800u16.to_le_bytes());
        b.extend_from_slice(&utf16("c"));
        let lone = types::ucs2::stand_in(0xD800);
        assert_eq!(utf16_to_string(&b), format!("ab{lone}c"));
        assert_eq!(utf16_to_string(&b[4..]), format!("{lone}c"));
        assert_eq!(utf16(&utf16_to_string(&b)), b);
    }
}
