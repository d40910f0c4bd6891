//! Collations: the names Mesquite knows, their TDS form, and the comparison and sort-key
//! rules each one implies. The binder and executor decide which collation an operation
//! uses (collation precedence, docs/architecture.md "Collations"); this module only
//! answers "how do these two strings compare under collation C".
//!
//! Known collations (everything else is error 448 at the binder):
//! - SQL collations of code page 1252: SQL_Latin1_General_CP1_CI_AS (sort order 52, the
//!   default), SQL_Latin1_General_CP1_CS_AS (51), SQL_Latin1_General_CP1_CI_AI (54);
//! - Windows collations of the designators in [`DESIGNATORS`] (Latin1_General, LCID
//!   0x0409, and French of code page 1252; Thai of 874; Czech, Polish, Hungarian,
//!   Croatian, Romanian, Slovak, Slovenian of 1250; Cyrillic_General and Ukrainian of
//!   1251; Greek 1253; Turkish 1254; Hebrew 1255; Arabic 1256; Estonian, Latvian,
//!   Lithuanian 1257; Vietnamese 1258), version 80 (no number, TDS version 0) and 100
//!   (TDS version 1): `D[_100]_{CI|CS}_{AI|AS}[_KS][_WS]`, with `_SC` and then `_UTF8`
//!   after them for _100, and `D[_100]_{BIN|BIN2}` (`_100_BIN2_UTF8`). char and varchar
//!   values of a collation are in its code page ([`Collation::code_page`]).
//!
//! Rules, all with trailing spaces ignored (SQL Server pads the shorter operand). Every
//! designator compares by the same rules: the base-letter weights approximate each
//! language's own order (Czech "ch" after "h", Lithuanian "y" beside "i", Thai's
//! leading vowels... are not modelled), which keeps equality, case and accent
//! sensitivity right for the common cases.
//! - dictionary collations compare by primary weights (the base letter, see
//!   [`crate::compare`]); on a tie, accent-sensitive ones by accents; then
//!   case-sensitive ones by case, lower case first ('a' < 'A' < 'b'). CI_AS is exactly
//!   [`crate::compare_strings`], so existing index keys keep their bytes. Kana and
//!   width sensitivity (_KS, _WS) are accepted and named but change nothing: the
//!   weights have no kana or full-width folding (an approximation, as are the other
//!   limits listed at [`crate::compare_strings`]);
//! - BIN2 compares code points: UTF-16 code units for Unicode values (nchar, nvarchar),
//!   code page bytes for char and varchar (UTF-8 bytes under a _UTF8 collation);
//! - BIN compares the first character as a code unit and the rest byte by byte (the
//!   little-endian UTF-16 bytes of nvarchar), SQL Server's legacy binary order.
//!
//! Sort keys extend the layout of [`crate::sort_key`] for strings: primary weights,
//! 0x00, accent weights (accent-sensitive only), 0x00, and for case-sensitive ones case
//! weights, 0x00; binary collations write each unit plus one as a weight, then 0x00.
//! memcmp of two keys orders as [`Collation::compare`]; equal keys mean equal strings.

use std::cmp::Ordering;

use crate::codepage::CodePage;
use crate::compare::{push_string_key, push_weight, trim_trailing_spaces, weights};

/// A collation: SQL Server's TDS fields plus whether it is a supplementary-character
/// (_SC) one. Plain data: two collations are the same when their fields are.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct Collation {
    /// Windows locale id (20 bits).
    pub lcid: u32,
    /// TDS ColFlags: [`IGNORE_CASE`] ... [`UTF8`].
    pub flags: u8,
    /// TDS version: 0 for the 80 collations, 1 for _100.
    pub version: u8,
    /// SQL collation sort order id; 0 for Windows collations.
    pub sort_id: u8,
    /// _SC: supplementary characters count as one character in string functions.
    pub supplementary: bool,
}

pub const IGNORE_CASE: u8 = 0x01;
pub const IGNORE_ACCENT: u8 = 0x02;
pub const IGNORE_KANA: u8 = 0x04;
pub const IGNORE_WIDTH: u8 = 0x08;
pub const BINARY: u8 = 0x10;
pub const BINARY2: u8 = 0x20;
pub const UTF8: u8 = 0x40;

const LATIN1_GENERAL: u32 = 0x0409;

/// The versions a designator comes in: no number (80), _90, _100.
const V80: u8 = 1;
const V90: u8 = 2;
const V100: u8 = 4;

/// Internal `version` of the _90 collations (0 is 80, 1 is 100, the TDS versions).
const VERSION_90: u8 = 3;

/// Windows collation designators: name, LCID, code page of char/varchar, the name
/// sys.fn_helpcollations' descriptions start with, and the versions known. (LCIDs and
/// code pages as COLLATIONPROPERTY reports them.)
const DESIGNATORS: [(&str, u32, u16, &str, u8); 62] = [
    ("Latin1_General", LATIN1_GENERAL, 1252, "Latin1-General", V80 | V100),
    ("French", 0x040C, 1252, "French", V80 | V100),
    ("Danish_Norwegian", 0x0406, 1252, "Danish-Norwegian", V80 | V100),
    ("Finnish_Swedish", 0x040B, 1252, "Finnish-Swedish", V80 | V100),
    ("German_PhoneBook", 0x10407, 1252, "German-PhoneBook", V80 | V100),
    ("Icelandic", 0x040F, 1252, "Icelandic", V80 | V100),
    ("Modern_Spanish", 0x0C0A, 1252, "Modern-Spanish", V80 | V100),
    ("Traditional_Spanish", 0x040A, 1252, "Traditional-Spanish", V80 | V100),
    ("Thai", 0x041E, 874, "Thai", V80 | V100),
    ("Czech", 0x0405, 1250, "Czech", V80 | V100),
    ("Polish", 0x0415, 1250, "Polish", V80 | V100),
    ("Hungarian", 0x040E, 1250, "Hungarian", V80 | V100),
    ("Hungarian_Technical", 0x1040E, 1250, "Hungarian-Technical", V80 | V100),
    ("Croatian", 0x041A, 1250, "Croatian", V80 | V100),
    ("Romanian", 0x0418, 1250, "Romanian", V80 | V100),
    ("Slovak", 0x041B, 1250, "Slovak", V80 | V100),
    ("Slovenian", 0x0424, 1250, "Slovenian", V80 | V100),
    ("Albanian", 0x041C, 1250, "Albanian", V80 | V100),
    ("Turkmen", 0x0442, 1250, "Turkmen", V100),
    ("Serbian_Latin", 0x081A, 1250, "Serbian-Latin", V100),
    ("Bosnian_Latin", 0x141A, 1250, "Bosnian-Latin", V100),
    ("Cyrillic_General", 0x0419, 1251, "Cyrillic-General", V80 | V100),
    ("Ukrainian", 0x0422, 1251, "Ukrainian", V80 | V100),
    ("Macedonian_FYROM", 0x042F, 1251, "Macedonian-FYROM", V90 | V100),
    ("Serbian_Cyrillic", 0x0C1A, 1251, "Serbian-Cyrillic", V100),
    ("Kazakh", 0x043F, 1251, "Kazakh", V90 | V100),
    ("Tatar", 0x0444, 1251, "Tatar", V90 | V100),
    ("Azeri_Cyrillic", 0x082C, 1251, "Azeri-Cyrillic", V90 | V100),
    ("Bashkir", 0x046D, 1251, "Bashkir", V100),
    ("Yakut", 0x0485, 1251, "Yakut", V100),
    ("Bosnian_Cyrillic", 0x201A, 1251, "Bosnian-Cyrillic", V100),
    ("Greek", 0x0408, 1253, "Greek", V80 | V100),
    ("Turkish", 0x041F, 1254, "Turkish", V80 | V100),
    ("Azeri_Latin", 0x042C, 1254, "Azeri-Latin", V90 | V100),
    ("Uzbek_Latin", 0x0443, 1254, "Uzbek-Latin", V90 | V100),
    ("Hebrew", 0x040D, 1255, "Hebrew", V80 | V100),
    ("Arabic", 0x0401, 1256, "Arabic", V80 | V100),
    ("Persian", 0x0429, 1256, "Persian", V100),
    ("Urdu", 0x0420, 1256, "Urdu", V100),
    ("Uighur", 0x0480, 1256, "Uighur", V100),
    ("Dari", 0x048C, 1256, "Dari", V100),
    ("Estonian", 0x0425, 1257, "Estonian", V80 | V100),
    ("Latvian", 0x0426, 1257, "Latvian", V80 | V100),
    ("Lithuanian", 0x0427, 1257, "Lithuanian", V80 | V100),
    ("Vietnamese", 0x042A, 1258, "Vietnamese", V80 | V100),
    ("Japanese", 0x0411, 932, "Japanese", V80 | V90),
    ("Japanese_XJIS", 0x0411, 932, "Japanese-XJIS", V100),
    ("Japanese_Unicode", 0x10411, 932, "Japanese-Unicode", V80),
    ("Japanese_Bushu_Kakusu", 0x40411, 932, "Japanese-Bushu-Kakusu", V100),
    ("Chinese_PRC", 0x0804, 936, "Chinese-PRC", V80 | V90),
    ("Chinese_PRC_Stroke", 0x20804, 936, "Chinese-PRC-Stroke", V80 | V90),
    ("Chinese_Simplified_Pinyin", 0x0804, 936, "Chinese-Simplified-Pinyin", V100),
    ("Chinese_Simplified_Stroke_Order", 0x20804, 936, "Chinese-Simplified-Stroke-Order", V100),
    ("Korean_Wansung", 0x0412, 949, "Korean-Wansung", V80),
    ("Korean", 0x0412, 949, "Korean", V90 | V100),
    ("Chinese_Taiwan_Stroke", 0x0404, 950, "Chinese-Taiwan-Stroke", V80 | V90),
    ("Chinese_Taiwan_Bopomofo", 0x30404, 950, "Chinese-Taiwan-Bopomofo", V80 | V90),
    ("Chinese_Traditional_Stroke_Count", 0x0404, 950, "Chinese-Traditional-Stroke-Count", V100),
    ("Chinese_Traditional_Bopomofo", 0x30404, 950, "Chinese-Traditional-Bopomofo", V100),
    ("Chinese_Traditional_Pinyin", 0x1404, 950, "Chinese-Traditional-Pinyin", V100),
    ("Chinese_Traditional_Stroke_Order", 0x21404, 950, "Chinese-Traditional-Stroke-Order", V100),
    ("Chinese_Hong_Kong_Stroke", 0x0C04, 950, "Chinese-Hong-Kong-Stroke", V90),
];

/// The designator of an LCID (Latin1_General for one not in the table).
fn designator(lcid: u32) -> (&'static str, u32, u16, &'static str, u8) {
    DESIGNATORS.iter().copied().find(|d| d.1 == lcid).unwrap_or(DESIGNATORS[0])
}

/// The versions mask bit of an internal version.
fn version_bit(version: u8) -> u8 {
    match version {
        0 => V80,
        VERSION_90 => V90,
        _ => V100,
    }
}

/// The designator of an LCID in a version (Korean_Wansung and Korean share theirs).
fn designator_of(lcid: u32, version: u8) -> (&'static str, u32, u16, &'static str, u8) {
    DESIGNATORS
        .iter()
        .copied()
        .find(|d| d.1 == lcid && d.4 & version_bit(version) != 0)
        .unwrap_or_else(|| designator(lcid))
}
const DICTIONARY: u8 = IGNORE_KANA | IGNORE_WIDTH;

/// The SQL collations known, by sort order id.
const SQL_COLLATIONS: [(u8, &str, u8); 3] = [
    (52, "SQL_Latin1_General_CP1_CI_AS", IGNORE_CASE | DICTIONARY),
    (51, "SQL_Latin1_General_CP1_CS_AS", DICTIONARY),
    (54, "SQL_Latin1_General_CP1_CI_AI", IGNORE_CASE | IGNORE_ACCENT | DICTIONARY),
];

impl Collation {
    /// SQL_Latin1_General_CP1_CI_AS, the instance's and every database's default.
    pub const DEFAULT: Collation = Collation {
        lcid: LATIN1_GENERAL,
        flags: IGNORE_CASE | DICTIONARY,
        version: 0,
        sort_id: 52,
        supplementary: false,
    };

    /// The collation a name stands for (case-insensitive, as SQL Server reads names), or
    /// None for a name Mesquite does not know (the binder raises 448).
    pub fn from_name(name: &str) -> Option<Collation> {
        let upper = name.to_ascii_uppercase();
        if let Some(&(sort_id, _, flags)) = SQL_COLLATIONS.iter().find(|(_, n, _)| n.eq_ignore_ascii_case(name)) {
            return Some(Collation { lcid: LATIN1_GENERAL, flags, version: 0, sort_id, supplementary: false });
        }
        // The longest designator that prefixes the name and knows its version (Korean_90
        // is Korean's, Korean_Wansung_CI_AS Korean_Wansung's, Japanese_XJIS_100_BIN2
        // Japanese_XJIS's).
        let (_, lcid, version, rest) = DESIGNATORS
            .iter()
            .filter_map(|(d, lcid, _, _, versions)| {
                let rest = upper.strip_prefix(d.to_ascii_uppercase().as_str())?.strip_prefix('_')?;
                let (version, rest) = if let Some(r) = rest.strip_prefix("100_") {
                    (1, r)
                } else if let Some(r) = rest.strip_prefix("90_") {
                    (VERSION_90, r)
                } else {
                    (0, rest)
                };
                (versions & version_bit(version) != 0).then_some((d.len(), *lcid, version, rest))
            })
            .max_by_key(|m| m.0)?;
        let mut parts: Vec<&str> = rest.split('_').collect();
        let utf8 = parts.last() == Some(&"UTF8");
        if utf8 {
            if version != 1 {
                return None;
            }
            parts.pop();
        }
        let base = Collation { lcid, flags: 0, version, sort_id: 0, supplementary: false };
        let with_utf8 = |c: Collation| Collation { flags: c.flags | if utf8 { UTF8 } else { 0 }, ..c };
        match parts.as_slice() {
            ["BIN"] if !utf8 => return Some(Collation { flags: BINARY, ..base }),
            ["BIN2"] => return Some(with_utf8(Collation { flags: BINARY2, ..base })),
            _ => {}
        }
        let mut it = parts.into_iter();
        let mut flags = match it.next()? {
            "CI" => IGNORE_CASE,
            "CS" => 0,
            _ => return None,
        };
        flags |= match it.next()? {
            "AI" => IGNORE_ACCENT,
            "AS" => 0,
            _ => return None,
        };
        let mut next = it.next();
        if next == Some("KS") {
            next = it.next();
        } else {
            flags |= IGNORE_KANA;
        }
        if next == Some("WS") {
            next = it.next();
        } else {
            flags |= IGNORE_WIDTH;
        }
        let supplementary = next == Some("SC");
        if supplementary {
            if version != 1 {
                return None;
            }
            next = it.next();
        }
        // UTF8 needs _SC; nothing may follow.
        if next.is_some() || (utf8 && !supplementary) {
            return None;
        }
        Some(with_utf8(Collation { flags, supplementary, ..base }))
    }

    /// The collation's name, as sys.columns and COLLATIONPROPERTY show it.
    pub fn name(&self) -> String {
        if self.sort_id != 0 {
            if let Some((_, n, _)) = SQL_COLLATIONS.iter().find(|(id, _, _)| *id == self.sort_id) {
                return (*n).to_string();
            }
        }
        let mut s = String::from(designator_of(self.lcid, self.version).0);
        match self.version {
            1 => s.push_str("_100"),
            VERSION_90 => s.push_str("_90"),
            _ => {}
        }
        if self.flags & BINARY != 0 {
            s.push_str("_BIN");
        } else if self.flags & BINARY2 != 0 {
            s.push_str("_BIN2");
        } else {
            s.push_str(if self.flags & IGNORE_CASE != 0 { "_CI" } else { "_CS" });
            s.push_str(if self.flags & IGNORE_ACCENT != 0 { "_AI" } else { "_AS" });
            if self.flags & IGNORE_KANA == 0 {
                s.push_str("_KS");
            }
            if self.flags & IGNORE_WIDTH == 0 {
                s.push_str("_WS");
            }
            if self.supplementary {
                s.push_str("_SC");
            }
        }
        if self.flags & UTF8 != 0 {
            s.push_str("_UTF8");
        }
        s
    }

    /// Every collation Mesquite knows, in name order (sys.fn_helpcollations).
    pub fn all() -> Vec<Collation> {
        let mut names: Vec<String> = SQL_COLLATIONS.iter().map(|(_, n, _)| n.to_string()).collect();
        for (d, _, _, _, versions) in DESIGNATORS {
            for (v, bit) in [("", V80), ("_90", V90), ("_100", V100)] {
                if versions & bit == 0 {
                    continue;
                }
                names.push(format!("{d}{v}_BIN"));
                names.push(format!("{d}{v}_BIN2"));
                for case in ["CI", "CS"] {
                    for accent in ["AI", "AS"] {
                        for ks in ["", "_KS"] {
                            for ws in ["", "_WS"] {
                                names.push(format!("{d}{v}_{case}_{accent}{ks}{ws}"));
                                if bit == V100 {
                                    names.push(format!("{d}{v}_{case}_{accent}{ks}{ws}_SC"));
                                    names.push(format!("{d}{v}_{case}_{accent}{ks}{ws}_SC_UTF8"));
                                }
                            }
                        }
                    }
                }
            }
            if versions & V100 != 0 {
                names.push(format!("{d}_100_BIN2_UTF8"));
            }
        }
        names.sort_by_key(|n| n.to_ascii_uppercase());
        names.iter().filter_map(|n| Collation::from_name(n)).collect()
    }

    /// The description sys.fn_helpcollations gives, in SQL Server's wording.
    pub fn description(&self) -> String {
        let lang = designator_of(self.lcid, self.version).3;
        if self.sort_id != 0 {
            let case = if self.ignores_case() { "case-insensitive" } else { "case-sensitive" };
            let accent = if self.ignores_accent() { "accent-insensitive" } else { "accent-sensitive" };
            return format!(
                "{lang}, {case}, {accent}, kanatype-insensitive, width-insensitive for Unicode Data, SQL Server Sort Order {} on Code Page 1252 for non-Unicode Data",
                self.sort_id
            );
        }
        let version = match self.version {
            1 => "-100",
            VERSION_90 => "-90",
            _ => "",
        };
        let mut s = format!("{lang}{version}");
        if self.flags & BINARY != 0 {
            s.push_str(", binary sort");
        } else if self.flags & BINARY2 != 0 {
            s.push_str(", binary code point comparison sort");
        } else {
            s.push_str(if self.ignores_case() { ", case-insensitive" } else { ", case-sensitive" });
            s.push_str(if self.ignores_accent() { ", accent-insensitive" } else { ", accent-sensitive" });
            s.push_str(if self.flags & IGNORE_KANA != 0 { ", kanatype-insensitive" } else { ", kanatype-sensitive" });
            s.push_str(if self.flags & IGNORE_WIDTH != 0 { ", width-insensitive" } else { ", width-sensitive" });
            if self.supplementary {
                s.push_str(", supplementary characters");
            }
        }
        if self.flags & UTF8 != 0 {
            s.push_str(", UTF8");
        }
        s
    }

    /// The 5-byte TDS collation (LCID and flags little-endian in 4 bytes, then the sort id).
    pub fn tds_bytes(&self) -> [u8; 5] {
        // The _90 collations go out as version 0 (Mesquite's internal 3 is not a TDS value).
        let version = if self.version == VERSION_90 { 0 } else { self.version };
        let info = (self.lcid & 0xF_FFFF) | u32::from(self.flags) << 20 | u32::from(version & 0xF) << 28;
        let b = info.to_le_bytes();
        [b[0], b[1], b[2], b[3], self.sort_id]
    }

    /// The code page number of char and varchar values (65001 for UTF-8 collations), as
    /// COLLATIONPROPERTY(name, 'CodePage') shows it.
    pub fn code_page(&self) -> u16 {
        if self.flags & UTF8 != 0 {
            65001
        } else {
            designator(self.lcid).2
        }
    }

    /// The code page char and varchar values are stored and sent in: the
    /// collation's, or 1252 for a UTF-8 collation (whose values Mesquite keeps in 1252,
    /// see the tds crate's `collation_bytes`).
    pub fn char_code_page(&self) -> CodePage {
        CodePage::from_id(self.code_page()).unwrap_or(CodePage::CP1252)
    }

    /// The code page of char and varchar values under the collation of 5 TDS bytes (a
    /// column's or parameter's TYPE_INFO): by the LCID for a Windows collation, 1252 for
    /// a SQL collation (Mesquite knows only those of 1252) or an unknown LCID.
    pub fn code_page_of_tds(bytes: &[u8; 5]) -> CodePage {
        let lcid = u32::from_le_bytes([bytes[0], bytes[1], bytes[2] & 0x0F, 0]);
        // fUTF8 is bit 2 of the fourth byte (flags sit above the LCID's 20 bits).
        if bytes[4] != 0 || bytes[3] & 0x04 != 0 {
            return CodePage::CP1252;
        }
        DESIGNATORS.iter().find(|d| d.1 == lcid).and_then(|d| CodePage::from_id(d.2)).unwrap_or(CodePage::CP1252)
    }

    /// COLLATIONPROPERTY's ComparisonStyle: ignore case 1, accent 2, kana 0x10000,
    /// width 0x20000; 0 for binary collations.
    pub fn comparison_style(&self) -> u32 {
        if self.binary() {
            return 0;
        }
        let f = u32::from(self.flags);
        (f & 0x3) | (f & u32::from(IGNORE_KANA)) << 14 | (f & u32::from(IGNORE_WIDTH)) << 14
    }

    pub fn ignores_case(&self) -> bool {
        self.flags & (IGNORE_CASE | BINARY | BINARY2) == IGNORE_CASE
    }

    pub fn ignores_accent(&self) -> bool {
        self.flags & (IGNORE_ACCENT | BINARY | BINARY2) == IGNORE_ACCENT
    }

    fn binary(&self) -> bool {
        self.flags & (BINARY | BINARY2) != 0
    }

    /// Compares two strings under the collation; `unicode` says they are nchar/nvarchar
    /// values (binary collations compare char and varchar by their code page bytes).
    pub fn compare(&self, a: &str, b: &str, unicode: bool) -> Ordering {
        if *self == Collation::DEFAULT {
            return crate::compare_strings(a, b);
        }
        let (a, b) = (trim_trailing_spaces(a), trim_trailing_spaces(b));
        if self.binary() {
            return self.binary_units(a, unicode).cmp(self.binary_units(b, unicode));
        }
        let primary = a.chars().map(|c| weights(c).0).cmp(b.chars().map(|c| weights(c).0));
        if primary != Ordering::Equal {
            return primary;
        }
        if !self.ignores_accent() {
            let accents = a.chars().map(|c| weights(c).1).cmp(b.chars().map(|c| weights(c).1));
            if accents != Ordering::Equal {
                return accents;
            }
        }
        if !self.ignores_case() {
            return a.chars().map(case_weight).cmp(b.chars().map(case_weight));
        }
        Ordering::Equal
    }

    /// Whether two strings are equal under the collation (`=`, IN, DISTINCT).
    pub fn equal(&self, a: &str, b: &str, unicode: bool) -> bool {
        self.compare(a, b, unicode) == Ordering::Equal
    }

    /// Appends the string's sort key (see the module doc); trailing spaces dropped.
    pub fn push_sort_key(&self, s: &str, unicode: bool, out: &mut Vec<u8>) {
        if *self == Collation::DEFAULT {
            return push_string_key(s, out);
        }
        let s = trim_trailing_spaces(s);
        if self.binary() {
            for u in self.binary_units(s, unicode) {
                push_weight(u + 1, out);
            }
            out.push(0);
            return;
        }
        for c in s.chars() {
            push_weight(weights(c).0, out);
        }
        out.push(0);
        if !self.ignores_accent() {
            push_minor(s.chars().map(|c| weights(c).1), out);
        }
        if !self.ignores_case() {
            push_minor(s.chars().map(case_weight), out);
        }
    }

    /// The units a binary collation compares, in order: UTF-16 code units (BIN2,
    /// Unicode), code page or UTF-8 bytes (non-Unicode), or for BIN on Unicode the first
    /// code unit then the remaining little-endian bytes.
    fn binary_units<'a>(&self, s: &'a str, unicode: bool) -> Box<dyn Iterator<Item = u32> + 'a> {
        if !unicode {
            if self.flags & UTF8 != 0 {
                return Box::new(s.bytes().map(u32::from));
            }
            let cp = self.char_code_page();
            if cp.is_double_byte() {
                let mut bytes = Vec::new();
                cp.encode_lossy(s, &mut bytes);
                return Box::new(bytes.into_iter().map(u32::from));
            }
            return Box::new(s.chars().map(move |c| u32::from(cp.encode_char(c).unwrap_or(b'?'))));
        }
        if self.flags & BINARY2 != 0 {
            return Box::new(crate::ucs2::units(&s).map(u32::from));
        }
        let mut units = crate::ucs2::units(&s);
        let first = units.next().map(u32::from);
        Box::new(first.into_iter().chain(units.flat_map(|u| u.to_le_bytes()).map(u32::from)))
    }
}

impl Default for Collation {
    fn default() -> Self {
        Collation::DEFAULT
    }
}

/// The case weight of a character: 0 for lower case and caseless, 1 for upper case, so
/// lower case sorts first as in Windows collations.
fn case_weight(c: char) -> u8 {
    u8::from(c.is_uppercase())
}

/// Minor (accent or case) weights plus one, trailing zero weights dropped, then 0x00:
/// the same layout as the accent part of the default key.
fn push_minor(ws: impl Iterator<Item = u8>, out: &mut Vec<u8>) {
    let ws: Vec<u8> = ws.collect();
    let end = ws.iter().rposition(|&w| w != 0).map_or(0, |i| i + 1);
    out.extend(ws[..end].iter().map(|&w| w + 1));
    out.push(0);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(name: &str) -> Collation {
        Collation::from_name(name).unwrap_or_else(|| panic!("{name}"))
    }

    fn key(coll: Collation, s: &str, unicode: bool) -> Vec<u8> {
        let mut k = Vec::new();
        coll.push_sort_key(s, unicode, &mut k);
        k
    }

    #[test]
    fn names_round_trip_and_unknown_names_are_refused() {
        for coll in Collation::all() {
            assert_eq!(Collation::from_name(&coll.name()), Some(coll), "{}", coll.name());
        }
        assert_eq!(c("sql_latin1_general_cp1_ci_as"), Collation::DEFAULT);
        assert_eq!(c("Latin1_General_100_CI_AS_SC_UTF8").name(), "Latin1_General_100_CI_AS_SC_UTF8");
        assert_eq!(c("latin1_general_cs_as_ks_ws").name(), "Latin1_General_CS_AS_KS_WS");
        for bad in [
            "Thai_CI",
            "Thai_CI_AS_UTF8",
            "Klingon_CI_AS",
            "Latin1_General_CI",
            "Latin1_General_CI_AS_SC",
            "Latin1_General_100_CI_AS_UTF8",
            "Latin1_General_BIN_UTF8",
            "Latin1_General_CI_AS_WS_KS",
            "Latin1_General_100_BIN2_SC",
            "",
        ] {
            assert_eq!(Collation::from_name(bad), None, "{bad}");
        }
        // At least the 18 names of one version of each designator.
        assert!(Collation::all().len() > 18 * DESIGNATORS.len());
    }

    #[test]
    fn designators_sharing_a_prefix_or_an_lcid_keep_apart() {
        // (name, LCID with its sort id bits, code page), as COLLATIONPROPERTY reports them.
        for (name, lcid, cp) in [
            ("Japanese_XJIS_100_BIN2", 0x0411, 932),
            ("Japanese_CI_AS", 0x0411, 932),
            ("Japanese_Unicode_BIN2", 0x10411, 932),
            ("Japanese_Bushu_Kakusu_100_CS_AS", 0x40411, 932),
            ("Chinese_Simplified_Pinyin_100_BIN2", 0x0804, 936),
            ("Chinese_Simplified_Stroke_Order_100_BIN2", 0x20804, 936),
            ("Chinese_Traditional_Bopomofo_100_BIN2", 0x30404, 950),
            ("Chinese_Traditional_Stroke_Order_100_BIN2", 0x21404, 950),
            ("Hungarian_Technical_CI_AS", 0x1040E, 1250),
            ("Hungarian_CI_AS", 0x040E, 1250),
            ("Serbian_Cyrillic_100_CI_AS", 0x0C1A, 1251),
            ("Macedonian_FYROM_90_CI_AS", 0x042F, 1251),
            ("Azeri_Latin_100_BIN2", 0x042C, 1254),
            ("Persian_100_CI_AI", 0x0429, 1256),
            ("Finnish_Swedish_CI_AS", 0x040B, 1252),
            ("German_PhoneBook_100_CS_AS", 0x10407, 1252),
        ] {
            let coll = c(name);
            assert_eq!((coll.lcid, coll.code_page()), (lcid, cp), "{name}");
            assert_eq!(coll.name(), name);
            assert_eq!(Collation::code_page_of_tds(&coll.tds_bytes()).id(), cp, "{name}");
        }
        // Versions a designator does not come in.
        for bad in ["Japanese_XJIS_CI_AS", "Japanese_100_CI_AS", "Turkmen_CI_AS", "Kazakh_CI_AS"] {
            assert_eq!(Collation::from_name(bad), None, "{bad}");
        }
    }

    #[test]
    fn other_designators_have_their_lcid_and_code_page() {
        let thai = c("thai_ci_ai");
        assert_eq!(thai.name(), "Thai_CI_AI");
        assert_eq!((thai.lcid, thai.code_page()), (0x041E, 874));
        // As SQL Server sends Thai_CI_AI: LCID 0x041E, IgnoreCase|IgnoreAccent|IgnoreKana|IgnoreWidth.
        assert_eq!(thai.tds_bytes(), [0x1E, 0x04, 0xF0, 0x00, 0x00]);
        assert_eq!(Collation::code_page_of_tds(&thai.tds_bytes()).id(), 874);
        assert_eq!(Collation::code_page_of_tds(&Collation::DEFAULT.tds_bytes()).id(), 1252);
        let cyr = c("Cyrillic_General_100_CS_AS");
        assert_eq!(
            (cyr.name().as_str(), cyr.lcid, cyr.code_page(), cyr.version),
            ("Cyrillic_General_100_CS_AS", 0x0419, 1251, 1)
        );
        assert_eq!(c("Vietnamese_BIN2").code_page(), 1258);
        assert_eq!(c("Greek_100_CI_AS_SC_UTF8").code_page(), 65001);
        assert_eq!(c("Greek_100_CI_AS_SC_UTF8").char_code_page().id(), 1252);
        assert_eq!(Collation::code_page_of_tds(&c("Greek_100_CI_AS_SC_UTF8").tds_bytes()).id(), 1252);
        assert_eq!(
            c("Ukrainian_CI_AS").description(),
            "Ukrainian, case-insensitive, accent-sensitive, kanatype-insensitive, width-insensitive"
        );
        assert!(c("Cyrillic_General_CI_AS").equal("привет", "ПРИВЕТ", true));
        assert!(!c("Cyrillic_General_CS_AS").equal("привет", "ПРИВЕТ", false));
        // BIN2 on varchar compares code page bytes: '€' is 0x88 in 1251, below 'я' (0xFF),
        // though its code point is above.
        assert_eq!(c("Cyrillic_General_BIN2").compare("€", "я", false), Ordering::Less);
        assert_eq!(c("Cyrillic_General_BIN2").compare("€", "я", true), Ordering::Greater);
    }

    #[test]
    fn tds_bytes_match_sql_servers() {
        // SQL_Latin1_General_CP1_CI_AS as SQL Server sends it.
        assert_eq!(Collation::DEFAULT.tds_bytes(), [0x09, 0x04, 0xD0, 0x00, 0x34]);
        // Latin1_General_CI_AS: sort id 0, same flags.
        assert_eq!(c("Latin1_General_CI_AS").tds_bytes(), [0x09, 0x04, 0xD0, 0x00, 0x00]);
        // _100_BIN2: version 1, fBinary2.
        assert_eq!(c("Latin1_General_100_BIN2").tds_bytes(), [0x09, 0x04, 0x00, 0x12, 0x00]);
        assert_eq!(c("Latin1_General_100_CI_AS_SC_UTF8").tds_bytes()[3], 0x14);
        assert_eq!(Collation::DEFAULT.comparison_style(), 196609);
        assert_eq!(c("Latin1_General_CS_AI_KS_WS").comparison_style(), 2);
        assert_eq!(c("Latin1_General_BIN2").comparison_style(), 0);
    }

    #[test]
    fn case_accent_and_binary_rules() {
        let cs = c("Latin1_General_CS_AS");
        let ci_ai = c("Latin1_General_CI_AI");
        let bin2 = c("Latin1_General_BIN2");
        assert!(Collation::DEFAULT.equal("abc", "ABC ", true));
        assert!(!cs.equal("abc", "ABC", true));
        assert!(cs.equal("abc", "abc  ", true));
        assert_eq!(cs.compare("a", "A", true), Ordering::Less);
        assert_eq!(cs.compare("A", "b", true), Ordering::Less);
        assert!(!Collation::DEFAULT.equal("resume", "résumé", true));
        assert!(ci_ai.equal("resume", "RÉSUMÉ", true));
        assert!(!c("Latin1_General_CS_AI").equal("resume", "Résumé", true));
        assert!(c("Latin1_General_CS_AI").equal("Resume", "Résumé", true));
        assert_eq!(c("SQL_Latin1_General_CP1_CI_AI"), c("SQL_Latin1_General_CP1_CI_AI"));
        assert!(c("SQL_Latin1_General_CP1_CI_AI").equal("é", "E", false));
        // Code point order: upper case letters before lower case, 'Z' < 'a'.
        assert_eq!(bin2.compare("Z", "a", true), Ordering::Less);
        assert_eq!(Collation::DEFAULT.compare("Z", "a", true), Ordering::Greater);
        assert!(bin2.equal("x ", "x", true));
        // varchar under BIN2 compares code page 1252 bytes: '€' is 0x80, below 'ÿ' (0xFF),
        // though its code point (U+20AC) is above.
        assert_eq!(bin2.compare("€", "ÿ", false), Ordering::Less);
        assert_eq!(bin2.compare("€", "ÿ", true), Ordering::Greater);
        // BIN on nvarchar: first character as a code unit, then bytes (little-endian).
        let bin = c("Latin1_General_BIN");
        assert_eq!(bin.compare("a\u{0101}", "a\u{0200}", true), Ordering::Greater);
        assert_eq!(bin2.compare("a\u{0101}", "a\u{0200}", true), Ordering::Less);
    }

    #[test]
    fn sort_keys_order_as_compare_does() {
        let words = [
            "",
            "a",
            "A",
            "á",
            "Á",
            "ab",
            "aB",
            "Ab",
            "b",
            "B",
            "résumé",
            "Resume",
            "resume",
            "RÉSUMÉ",
            "z",
            "Z",
            "€",
            "ÿ",
            "a b",
            "a\u{0101}",
            "a\u{0200}",
            "x ",
            "x",
        ];
        for coll in Collation::all() {
            for unicode in [true, false] {
                for a in words {
                    for b in words {
                        let by_key = key(coll, a, unicode).cmp(&key(coll, b, unicode));
                        assert_eq!(
                            by_key,
                            coll.compare(a, b, unicode),
                            "{} {a:?} {b:?} unicode {unicode}",
                            coll.name()
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn the_default_keeps_the_existing_key_bytes() {
        let mut old = Vec::new();
        crate::compare::push_string_key("Résumé x ", &mut old);
        assert_eq!(key(Collation::DEFAULT, "Résumé x ", true), old);
    }
}
