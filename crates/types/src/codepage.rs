//! The single-byte code pages of char and varchar values, one byte per character:
//! [`CodePage`] for any of them, and the free functions of code page 1252 (Windows
//! Latin 1, the code page of SQL_Latin1_General_CP1_CI_AS and the default), which keep
//! their ASCII fast paths.
//!
//! Code pages: 1252, and 874 (Thai), 1250 (Central European), 1251 (Cyrillic), 1253
//! (Greek), 1254 (Turkish), 1255 (Hebrew), 1256 (Arabic), 1257 (Baltic), 1258
//! (Vietnamese, single-byte as SQL Server uses it: combining marks are characters of
//! their own). The upper halves of the others are generated (`codepage_tables.rs`, by
//! scripts/gen-codepages.py); the lower halves are ASCII.
//!
//! The five bytes 1252 leaves undefined (0x81, 0x8D, 0x8F, 0x90, 0x9D) map to the C1
//! control characters of the same value, as Windows' conversion does, so every byte
//! decodes and the mapping is a bijection between 256 bytes and 256 characters; the
//! other code pages do the same below 0xA0 and decode an undefined byte above to U+FFFD.
//! Characters outside the code page become '?' when stored, as SQL Server does.
//!
//! # Double-byte code pages
//!
//! 932 (Japanese, Shift-JIS), 936 (Simplified Chinese, GBK), 949 (Korean, Unified
//! Hangul Code) and 950 (Traditional Chinese, Big5): bytes below 0x80 are ASCII, a lead
//! byte and the trail byte after it (0x40..=0xFE) stand for one character, and 932 also
//! has single-byte half-width katakana. `codepage_dbcs.bin` (generated with the other
//! tables) holds for each, in that order and little-endian: 128 u16 for the bytes
//! 0x80..=0xFF (the character, 0xFFFF for a lead byte, 0 for an undefined byte), then
//! one u16 per (lead 0x81..=0xFE, trail 0x40..=0xFE), 0 for an undefined pair. Encoding
//! goes through a reverse map built at first use. A character takes one or two bytes,
//! so lengths of char and varchar in these code pages count bytes ([`CodePage::byte_len`]).

use std::collections::HashMap;
use std::sync::OnceLock;

use crate::codepage_tables::TABLES;

/// A code page of char and varchar values. Plain data: equal when the ids are.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct CodePage {
    id: u16,
    /// Index in [`TABLES`] (single-byte), or in [`DBCS_IDS`] (double-byte); unused for
    /// 1252.
    table: u8,
    double: bool,
}

/// The double-byte code pages, in the order of their tables in `codepage_dbcs.bin`.
const DBCS_IDS: [u16; 4] = [932, 936, 949, 950];
static DBCS_DATA: &[u8] = include_bytes!("codepage_dbcs.bin");
const DBCS_PAIRS: usize = 126 * 191;
const DBCS_TABLE_BYTES: usize = (128 + DBCS_PAIRS) * 2;
/// A lead byte in the single-byte part of a table.
const LEAD: u16 = 0xFFFF;

fn dbcs_entry(k: usize, i: usize) -> u16 {
    let o = k * DBCS_TABLE_BYTES + i * 2;
    match DBCS_DATA.get(o..o + 2) {
        Some(b) => u16::from_le_bytes([b[0], b[1]]),
        None => 0,
    }
}

/// The character of a lead and trail byte, if the pair is defined.
fn dbcs_pair(k: usize, lead: u8, trail: u8) -> Option<char> {
    if !(0x81..=0xFE).contains(&lead) || !(0x40..=0xFE).contains(&trail) {
        return None;
    }
    let v = dbcs_entry(k, 128 + usize::from(lead - 0x81) * 191 + usize::from(trail - 0x40));
    if v == 0 {
        None
    } else {
        char::from_u32(u32::from(v))
    }
}

/// Character -> bytes (one byte below 0x100, else lead << 8 | trail) of double-byte code
/// page `k`, built at first use; the first byte sequence of a character wins.
fn dbcs_reverse(k: usize) -> &'static HashMap<char, u16> {
    static MAPS: [OnceLock<HashMap<char, u16>>; 4] = [const { OnceLock::new() }; 4];
    MAPS[k].get_or_init(|| {
        let mut m = HashMap::new();
        for b in 0x80..=0xFFu16 {
            let v = dbcs_entry(k, usize::from(b - 0x80));
            if v != 0 && v != LEAD {
                if let Some(c) = char::from_u32(u32::from(v)) {
                    m.entry(c).or_insert(b);
                }
            }
        }
        for lead in 0x81..=0xFEu8 {
            for trail in 0x40..=0xFEu8 {
                if let Some(c) = dbcs_pair(k, lead, trail) {
                    m.entry(c).or_insert(u16::from(lead) << 8 | u16::from(trail));
                }
            }
        }
        m
    })
}

impl CodePage {
    /// Code page 1252, the default.
    pub const CP1252: CodePage = CodePage { id: 1252, table: 0, double: false };

    /// The code page of a Windows code page number, None for one Mesquite lacks.
    pub fn from_id(id: u16) -> Option<CodePage> {
        if id == 1252 {
            return Some(CodePage::CP1252);
        }
        if let Some(k) = DBCS_IDS.iter().position(|&d| d == id) {
            return Some(CodePage { id, table: k as u8, double: true });
        }
        TABLES.iter().position(|(cp, _)| *cp == id).map(|i| CodePage { id, table: i as u8, double: false })
    }

    /// Whether characters may take two bytes (932, 936, 949, 950).
    pub fn is_double_byte(self) -> bool {
        self.double
    }

    /// The bytes `s` takes in this code page ('?' for a character it lacks: one byte).
    pub fn byte_len(self, s: &str) -> usize {
        if !self.double || s.is_ascii() {
            return s.chars().count();
        }
        let rev = dbcs_reverse(usize::from(self.table));
        s.chars()
            .map(|c| if c.is_ascii() { 1 } else { rev.get(&c).map_or(1, |&v| if v < 0x100 { 1 } else { 2 }) })
            .sum()
    }

    /// The Windows code page number.
    pub fn id(self) -> u16 {
        self.id
    }

    fn high(self) -> &'static [char; 128] {
        &TABLES[usize::from(self.table)].1
    }

    /// The character a byte stands for (a lead byte of a double-byte code page alone:
    /// '?').
    pub fn decode_byte(self, b: u8) -> char {
        if self.id == 1252 {
            decode_byte(b)
        } else if b < 0x80 {
            char::from(b)
        } else if self.double {
            match dbcs_entry(usize::from(self.table), usize::from(b - 0x80)) {
                0 | LEAD => '?',
                v => char::from_u32(u32::from(v)).unwrap_or('?'),
            }
        } else {
            self.high()[usize::from(b - 0x80)]
        }
    }

    /// The byte of a character, or None when the code page has no such character (or,
    /// in a double-byte code page, needs two bytes: see [`CodePage::encode_lossy`]).
    pub fn encode_char(self, c: char) -> Option<u8> {
        if self.id == 1252 {
            return encode_char(c);
        }
        if c.is_ascii() {
            return Some(c as u8);
        }
        if self.double {
            return dbcs_reverse(usize::from(self.table)).get(&c).and_then(|&v| u8::try_from(v).ok());
        }
        // 128 entries: a scan is as quick as a lookup structure would be to build.
        if c == '\u{FFFD}' {
            return None;
        }
        self.high().iter().position(|&h| h == c).map(|i| 0x80 + i as u8)
    }

    /// Appends the bytes of `s`, with '?' for characters the code page lacks.
    pub fn encode_lossy(self, s: &str, out: &mut Vec<u8>) {
        if self.id == 1252 || s.is_ascii() {
            return encode_lossy(s, out);
        }
        if self.double {
            let rev = dbcs_reverse(usize::from(self.table));
            for c in s.chars() {
                match (c.is_ascii(), rev.get(&c)) {
                    (true, _) => out.push(c as u8),
                    (false, Some(&v)) if v < 0x100 => out.push(v as u8),
                    (false, Some(&v)) => out.extend_from_slice(&v.to_be_bytes()),
                    (false, None) => out.push(b'?'),
                }
            }
            return;
        }
        out.extend(s.chars().map(|c| self.encode_char(c).unwrap_or(b'?')));
    }

    /// Decodes bytes of the code page (every byte decodes).
    pub fn decode(self, bytes: &[u8]) -> String {
        let mut s = String::new();
        self.decode_into(bytes, &mut s);
        s
    }

    /// Appends the characters of the bytes to `out`.
    pub fn decode_into(self, bytes: &[u8], out: &mut String) {
        if self.id == 1252 || bytes.is_ascii() {
            return decode_into(bytes, out);
        }
        if self.double {
            let k = usize::from(self.table);
            let mut i = 0;
            while i < bytes.len() {
                let b = bytes[i];
                i += 1;
                if b < 0x80 {
                    out.push(char::from(b));
                } else if dbcs_entry(k, usize::from(b - 0x80)) == LEAD {
                    // A lead byte without a valid trail (cut off, or damaged): '?'.
                    match bytes.get(i).and_then(|&t| dbcs_pair(k, b, t)) {
                        Some(c) => {
                            out.push(c);
                            i += 1;
                        }
                        None => out.push('?'),
                    }
                } else {
                    out.push(self.decode_byte(b));
                }
            }
            return;
        }
        out.reserve(bytes.len());
        out.extend(bytes.iter().map(|&b| self.decode_byte(b)));
    }

    /// `s` as it reads back after being stored in this code page: characters outside it
    /// replaced by '?'.
    pub fn to_lossy(self, s: &str) -> String {
        if s.is_ascii() {
            return s.to_string();
        }
        if self.double {
            let rev = dbcs_reverse(usize::from(self.table));
            return s.chars().map(|c| if c.is_ascii() || rev.contains_key(&c) { c } else { '?' }).collect();
        }
        s.chars().map(|c| if self.encode_char(c).is_some() { c } else { '?' }).collect()
    }
}

/// Characters of bytes 0x80..=0x9F; the rest of the code page equals Latin-1.
const HIGH: [char; 32] = [
    '\u{20AC}', '\u{0081}', '\u{201A}', '\u{0192}', '\u{201E}', '\u{2026}', '\u{2020}', '\u{2021}', '\u{02C6}',
    '\u{2030}', '\u{0160}', '\u{2039}', '\u{0152}', '\u{008D}', '\u{017D}', '\u{008F}', '\u{0090}', '\u{2018}',
    '\u{2019}', '\u{201C}', '\u{201D}', '\u{2022}', '\u{2013}', '\u{2014}', '\u{02DC}', '\u{2122}', '\u{0161}',
    '\u{203A}', '\u{0153}', '\u{009D}', '\u{017E}', '\u{0178}',
];

/// The character a 1252 byte stands for.
pub fn decode_byte(b: u8) -> char {
    if (0x80..=0x9F).contains(&b) {
        HIGH[usize::from(b - 0x80)]
    } else {
        char::from(b)
    }
}

/// The 1252 byte of a character, or None when the code page has no such character.
pub fn encode_char(c: char) -> Option<u8> {
    let cp = u32::from(c);
    if cp < 0x80 || (0xA0..=0xFF).contains(&cp) {
        return Some(cp as u8);
    }
    HIGH.iter().position(|&h| h == c).map(|i| 0x80 + i as u8)
}

/// Appends the 1252 bytes of `s`, with '?' for characters the code page lacks.
pub fn encode_lossy(s: &str, out: &mut Vec<u8>) {
    // ASCII is the same bytes in UTF-8 and 1252: copied whole (result streams of text).
    if s.is_ascii() {
        out.extend_from_slice(s.as_bytes());
    } else {
        out.extend(s.chars().map(|c| encode_char(c).unwrap_or(b'?')));
    }
}

/// Decodes 1252 bytes (every byte is valid).
pub fn decode(bytes: &[u8]) -> String {
    let mut s = String::new();
    decode_into(bytes, &mut s);
    s
}

/// Appends the characters of 1252 bytes to `out`, so a caller can reuse its buffer.
pub fn decode_into(bytes: &[u8], out: &mut String) {
    // ASCII is the same bytes in UTF-8 and 1252: copied whole.
    if bytes.is_ascii() {
        // SAFETY: ASCII bytes are valid UTF-8 (checked just above; `from_utf8` would
        // only check it a second time, on every string of a scan).
        out.push_str(unsafe { std::str::from_utf8_unchecked(bytes) });
    } else {
        out.reserve(bytes.len());
        out.extend(bytes.iter().map(|&b| decode_byte(b)));
    }
}

/// `s` as it reads back after being stored as varchar: characters outside 1252 replaced
/// by '?'.
pub fn to_cp1252_lossy(s: &str) -> String {
    s.chars().map(|c| if encode_char(c).is_some() { c } else { '?' }).collect()
}

/// Whether every character of `s` exists in code page 1252.
pub fn is_cp1252(s: &str) -> bool {
    s.chars().all(|c| encode_char(c).is_some())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_byte_round_trips() {
        for b in 0..=255u8 {
            assert_eq!(encode_char(decode_byte(b)), Some(b));
        }
    }

    #[test]
    fn known_characters() {
        assert_eq!(encode_char('€'), Some(0x80));
        assert_eq!(encode_char('é'), Some(0xE9));
        assert_eq!(encode_char('Ÿ'), Some(0x9F));
        assert_eq!(encode_char('ā'), None);
        let mut out = Vec::new();
        encode_lossy("a€日", &mut out);
        assert_eq!(out, vec![b'a', 0x80, b'?']);
        assert_eq!(to_cp1252_lossy("naïve 日本"), "naïve ??");
        assert_eq!(decode(&[0x93, 0x41, 0x94]), "\u{201C}A\u{201D}");
    }

    /// Every character of a double-byte code page round-trips through its bytes, the
    /// lengths count bytes, and what the code page lacks is '?'.
    #[test]
    fn double_byte_code_pages() {
        for (k, id) in DBCS_IDS.iter().enumerate() {
            let cp = CodePage::from_id(*id).unwrap();
            assert!(cp.is_double_byte());
            let rev = dbcs_reverse(k);
            assert!(rev.len() > 7_000, "{id}: {}", rev.len());
            for (&c, _) in rev.iter() {
                let s = c.to_string();
                let mut bytes = Vec::new();
                cp.encode_lossy(&s, &mut bytes);
                assert_eq!(cp.decode(&bytes), s, "{id} {c}");
                assert_eq!(cp.byte_len(&s), bytes.len(), "{id} {c}");
            }
        }
        let gbk = CodePage::from_id(936).unwrap();
        let mut out = Vec::new();
        gbk.encode_lossy("a中文한", &mut out);
        assert_eq!(out, vec![b'a', 0xD6, 0xD0, 0xCE, 0xC4, b'?']);
        assert_eq!(gbk.byte_len("a中文한"), 6);
        assert_eq!(gbk.to_lossy("中한"), "中?");
        // A lead byte without its trail (a cut value) reads as '?'.
        assert_eq!(gbk.decode(&[b'x', 0xD6]), "x?");
        let sjis = CodePage::from_id(932).unwrap();
        assert_eq!(sjis.byte_len("ｶﾀ日"), 4); // half-width katakana take one byte
    }

    /// The ASCII fast paths and the general paths agree, and `decode_into` appends.
    #[test]
    fn ascii_and_general_paths_agree() {
        let all: Vec<u8> = (0..=255u8).collect();
        let text = decode(&all);
        assert_eq!(text.chars().count(), 256);
        assert!(text.chars().zip(&all).all(|(c, &b)| c == decode_byte(b)));
        let mut back = Vec::new();
        encode_lossy(&text, &mut back);
        assert_eq!(back, all);
        assert_eq!(decode(b"plain ascii"), "plain ascii");
        assert_eq!(decode(b""), "");
        let mut s = String::from("x");
        decode_into(b"ab", &mut s);
        decode_into(&[0x80], &mut s);
        assert_eq!(s, "xab\u{20AC}");
        let mut out = vec![1u8];
        encode_lossy("ab", &mut out);
        encode_lossy("", &mut out);
        assert_eq!(out, vec![1, b'a', b'b']);
    }

    /// Every defined byte of every code page round-trips; the 1252 case is the free
    /// functions; known characters sit where the code pages put them.
    #[test]
    fn other_code_pages() {
        for id in [874, 1250, 1251, 1252, 1253, 1254, 1255, 1256, 1257, 1258] {
            let cp = CodePage::from_id(id).unwrap();
            assert_eq!(cp.id(), id);
            for b in 0..=255u8 {
                let c = cp.decode_byte(b);
                if c != '\u{FFFD}' {
                    assert_eq!(cp.encode_char(c), Some(b), "{id} {b:#x}");
                }
            }
        }
        assert_eq!(CodePage::from_id(437), None);
        let thai = CodePage::from_id(874).unwrap();
        let cyr = CodePage::from_id(1251).unwrap();
        let mut out = Vec::new();
        thai.encode_lossy("สวัสดี é", &mut out);
        assert_eq!(out, vec![0xCA, 0xC7, 0xD1, 0xCA, 0xB4, 0xD5, b' ', b'?']);
        assert_eq!(thai.decode(&out), "สวัสดี ?");
        assert_eq!(cyr.to_lossy("Алло สวัสดี"), "Алло ??????");
        assert_eq!(cyr.encode_char('я'), Some(0xFF));
        assert_eq!(CodePage::CP1252.to_lossy("naïve 日本"), to_cp1252_lossy("naïve 日本"));
        assert_eq!(thai.decode_byte(0xDB), '\u{FFFD}');
        assert_eq!(thai.encode_char('\u{FFFD}'), None);
    }
}
