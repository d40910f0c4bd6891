//! Unicode text as SQL Server keeps it: nchar and nvarchar hold UTF-16 code units as
//! they were sent, unpaired surrogates included. Engine strings are Rust `String`s
//! (UTF-8), which cannot hold an unpaired surrogate, so each one (0xD800..=0xDFFF) is
//! carried as a stand-in code point, U+10F800 + (unit - 0xD800): the last 2,048 code
//! points of Supplementary Private Use Area-B. Wherever text becomes UTF-16 again (TDS,
//! nvarchar storage, LEN, DATALENGTH, UNICODE, collation keys), [`units`] turns a
//! stand-in back into its single unit, and [`len`] counts it as one.
//!
//! The cost: a client's own U+10F800..=U+10FFFF (private-use code points, the last two
//! noncharacters) reads back as the unpaired surrogate it stands for.

/// The stand-in of the first surrogate, 0xD800.
pub const FIRST_STAND_IN: u32 = 0x10F800;

/// The stand-in of an unpaired surrogate `unit` (0xD800..=0xDFFF).
pub fn stand_in(unit: u16) -> char {
    char::from_u32(FIRST_STAND_IN + u32::from(unit.wrapping_sub(0xD800) & 0x7FF)).unwrap_or(char::REPLACEMENT_CHARACTER)
}

/// The surrogate `c` stands in for, if it is a stand-in.
pub fn lone_unit(c: char) -> Option<u16> {
    let v = c as u32;
    (v >= FIRST_STAND_IN).then(|| 0xD800 + (v - FIRST_STAND_IN) as u16)
}

/// The code unit `u` as a one-unit string's char: itself, or a surrogate's stand-in
/// (NCHAR(0xD800)).
pub fn unit_char(u: u16) -> char {
    char::from_u32(u32::from(u)).unwrap_or_else(|| stand_in(u))
}

/// Appends UTF-16 `units` to `s`: pairs as their characters, unpaired surrogates as
/// stand-ins.
pub fn decode_into(s: &mut String, units: impl IntoIterator<Item = u16>) {
    s.extend(char::decode_utf16(units).map(|r| r.unwrap_or_else(|e| stand_in(e.unpaired_surrogate()))));
}

/// UTF-16 `units` as a string (see [`decode_into`]).
pub fn decode(units: impl IntoIterator<Item = u16>) -> String {
    let mut s = String::new();
    decode_into(&mut s, units);
    s
}

/// The UTF-16 code units of `s`, a stand-in as its one unpaired surrogate.
pub fn units(s: &str) -> Units<'_> {
    Units { chars: s.chars(), low: None }
}

/// The number of UTF-16 code units of `s` (LEN, DATALENGTH / 2 of nvarchar).
pub fn len(s: &str) -> usize {
    if s.is_ascii() {
        return s.len();
    }
    s.chars().map(char_units).sum()
}

/// The UTF-16 code units of `c` (a stand-in: one).
pub fn char_units(c: char) -> usize {
    if (0x10000..FIRST_STAND_IN).contains(&(c as u32)) {
        2
    } else {
        1
    }
}

/// Appends `b` to `a` as UTF-16 units would be appended: a high surrogate at the end of
/// `a` and a low one at the start of `b` (both unpaired, as stand-ins) become the pair's
/// character, as they are one character in SQL Server (N'' + NCHAR(55357) + NCHAR(56832)).
pub fn push_str(a: &mut String, b: &str) {
    let high = a.chars().next_back().and_then(lone_unit).filter(|u| (0xD800..0xDC00).contains(u));
    let low = b.chars().next().and_then(lone_unit).filter(|u| (0xDC00..0xE000).contains(u));
    if let (Some(h), Some(l)) = (high, low) {
        a.pop();
        decode_into(a, [h, l]);
        let first = b.chars().next().map_or(0, char::len_utf8);
        a.push_str(&b[first..]);
        return;
    }
    a.push_str(b);
}

/// Iterator of [`units`].
#[derive(Clone)]
pub struct Units<'a> {
    chars: std::str::Chars<'a>,
    /// The low surrogate of a pair whose high one went out.
    low: Option<u16>,
}

impl Iterator for Units<'_> {
    type Item = u16;

    #[inline]
    fn next(&mut self) -> Option<u16> {
        if let Some(u) = self.low.take() {
            return Some(u);
        }
        let v = self.chars.next()? as u32;
        if v < 0x10000 {
            return Some(v as u16);
        }
        if v >= FIRST_STAND_IN {
            return Some(0xD800 + (v - FIRST_STAND_IN) as u16);
        }
        let v = v - 0x10000;
        self.low = Some(0xDC00 | (v & 0x3FF) as u16);
        Some(0xD800 | (v >> 10) as u16)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unpaired_surrogates_round_trip_and_count_one_unit() {
        let sent = [0x61, 0xD800, 0x62, 0xDFFF, 0xD83D, 0xDE00, 0xDC00, 0xD801];
        let s = decode(sent);
        assert_eq!(s.chars().count(), 7, "the pair is one char");
        assert!(s.contains('\u{1F600}'));
        assert_eq!(units(&s).collect::<Vec<_>>(), sent);
        assert_eq!(len(&s), sent.len());
        assert_eq!(len("abc"), 3);
        assert_eq!(len("a\u{1F600}"), 3);
        assert_eq!(unit_char(0xDC05), stand_in(0xDC05));
        assert_eq!(lone_unit(unit_char(0xDC05)), Some(0xDC05));
        assert_eq!(unit_char(0x20AC), '€');
        let mut a = String::from("x");
        push_str(&mut a, &unit_char(0xD83D).to_string());
        push_str(&mut a, &format!("{}y", unit_char(0xDE00)));
        assert_eq!(a, "x\u{1F600}y", "halves appended make the pair");
    }
}
