//! Entry encoding and in-page search. Everything here is bounds-checked and allocation
//! free on the success path: a damaged page yields `StorageError::Corrupt`, never a panic.

use crate::error::{Result, StorageError};
use crate::page::{Page, PageId, HEADER_SIZE, MAX_RECORD_ON_PAGE, PAGE_SIZE, SLOT_SIZE};
use std::cmp::Ordering;

/// Bytes of a B+tree page available to records and slot entries.
pub(crate) const PAGE_CAPACITY: usize = PAGE_SIZE - HEADER_SIZE;
/// Size of the key-length prefix of every entry.
pub(crate) const KEY_LEN_SIZE: usize = 2;
/// Size of an internal entry's value: the child page id.
pub(crate) const CHILD_SIZE: usize = 6;
/// A page below this many used bytes (records plus slot entries) is underfull: about 25%.
pub(crate) const UNDERFULL: usize = PAGE_CAPACITY / 4;
/// Offset of the header's `free_data` field (docs/formats.md, "Page header"). Read here
/// only to predict whether an insert will compact the page (see `Inner::put`).
const FREE_DATA_OFFSET: usize = 42;

/// The error for a page whose content cannot be a valid B+tree page.
#[cold]
pub(crate) fn damaged(page: &Page, detail: impl Into<String>) -> StorageError {
    StorageError::corrupt(format!("B-tree page ({})", page.page_id()), detail)
}

/// Splits an encoded entry into key and value.
#[inline]
pub(crate) fn split_entry(rec: &[u8]) -> Option<(&[u8], &[u8])> {
    let kl = u16::from_le_bytes([*rec.first()?, *rec.get(1)?]) as usize;
    let key = rec.get(KEY_LEN_SIZE..KEY_LEN_SIZE + kl)?;
    let value = rec.get(KEY_LEN_SIZE + kl..)?;
    Some((key, value))
}

/// Appends the encoding of (key, value) to `out`. The caller has checked the key length.
#[inline]
pub(crate) fn encode_entry(key: &[u8], value: &[u8], out: &mut Vec<u8>) {
    out.reserve(KEY_LEN_SIZE + key.len() + value.len());
    out.extend_from_slice(&(key.len() as u16).to_le_bytes());
    out.extend_from_slice(key);
    out.extend_from_slice(value);
}

/// An internal entry: separator key and child page id.
pub(crate) fn encode_child(key: &[u8], child: PageId) -> Vec<u8> {
    let mut v = Vec::with_capacity(KEY_LEN_SIZE + key.len() + CHILD_SIZE);
    encode_entry(key, &child.to_bytes(), &mut v);
    v
}

/// The (key, value) of a slot.
#[inline]
pub(crate) fn entry(page: &Page, slot: u16) -> Result<(&[u8], &[u8])> {
    match page.record(slot).and_then(split_entry) {
        Some(e) => Ok(e),
        None => Err(damaged(page, format!("slot {slot} does not hold a readable entry"))),
    }
}

#[inline]
pub(crate) fn key_at(page: &Page, slot: u16) -> Result<&[u8]> {
    entry(page, slot).map(|e| e.0)
}

/// The child page an internal entry points to.
pub(crate) fn child_at(page: &Page, slot: u16) -> Result<PageId> {
    let (_, v) = entry(page, slot)?;
    match (v.len() == CHILD_SIZE).then(|| PageId::from_bytes(v)).flatten() {
        Some(id) if !id.is_null() => Ok(id),
        _ => Err(damaged(page, format!("slot {slot} does not hold a valid child page id"))),
    }
}

/// Compares two keys as `<[u8]>::cmp` does (memcmp order, a prefix first). Keys are
/// usually short (an int key is 4 bytes), where a byte loop beats a call to the C
/// library's memcmp; in-page searches compare about seven times per lookup.
#[inline]
pub(crate) fn cmp_key(a: &[u8], b: &[u8]) -> Ordering {
    if a.len().min(b.len()) > 16 {
        return a.cmp(b);
    }
    for (x, y) in a.iter().zip(b) {
        if x != y {
            return x.cmp(y);
        }
    }
    a.len().cmp(&b.len())
}

/// First slot whose key is >= `key`, and whether that slot's key equals it.
#[inline]
pub(crate) fn lower_bound(page: &Page, key: &[u8]) -> Result<(u16, bool)> {
    let (mut lo, mut hi) = (0u16, page.slot_count());
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        match cmp_key(key_at(page, mid)?, key) {
            Ordering::Less => lo = mid + 1,
            Ordering::Equal => return Ok((mid, true)),
            Ordering::Greater => hi = mid,
        }
    }
    Ok((lo, false))
}

/// `lower_bound` for an insert: tries the end of the page first, so ever-increasing
/// keys (the common bulk-load pattern) cost one comparison instead of a binary search.
#[inline]
pub(crate) fn insert_position(page: &Page, key: &[u8]) -> Result<(u16, bool)> {
    let n = page.slot_count();
    if n > 0 && cmp_key(key_at(page, n - 1)?, key) == Ordering::Less {
        return Ok((n, false));
    }
    lower_bound(page, key)
}

/// First slot whose key is > `key`.
#[inline]
pub(crate) fn upper_bound(page: &Page, key: &[u8]) -> Result<u16> {
    let (mut lo, mut hi) = (0u16, page.slot_count());
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if cmp_key(key_at(page, mid)?, key) != Ordering::Greater {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    Ok(lo)
}

/// In an internal page: the slot of the child whose subtree holds `key`, i.e. the last
/// slot whose separator is <= `key`. Slot 0's key is minus infinity and is not read.
#[inline]
pub(crate) fn route(page: &Page, key: &[u8]) -> Result<u16> {
    let n = page.slot_count();
    if n == 0 {
        return Err(damaged(page, "internal page without entries"));
    }
    let (mut lo, mut hi) = (1u16, n);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if cmp_key(key_at(page, mid)?, key) != Ordering::Greater {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    Ok(lo - 1)
}

/// Bytes used by records and slot entries.
#[inline]
pub(crate) fn used(page: &Page) -> usize {
    PAGE_CAPACITY.saturating_sub(page.free_count())
}

/// Does a new record of `len` bytes (plus its slot) fit?
#[inline]
pub(crate) fn fits(page: &Page, len: usize) -> bool {
    page.free_count() >= len + SLOT_SIZE
}

/// Would placing `len` more bytes make `page::apply` compact the page? Compaction walks
/// every slot entry, so the caller validates the whole page first (see `Inner::put`).
#[inline]
pub(crate) fn may_compact(page: &Page, len: usize) -> bool {
    let b = page.as_bytes();
    let free_data = u16::from_le_bytes([b[FREE_DATA_OFFSET], b[FREE_DATA_OFFSET + 1]]) as usize;
    let slot_start = PAGE_SIZE.saturating_sub(SLOT_SIZE * (page.slot_count() as usize + 1));
    free_data + len > slot_start
}

/// O(1) sanity of the fields every B+tree operation relies on, so that later slot access
/// and page ops stay in bounds: slot array inside the page, free figures plausible.
#[inline]
pub(crate) fn header_sane(page: &Page) -> bool {
    let n = page.slot_count() as usize;
    let Some(slot_start) = PAGE_SIZE.checked_sub(SLOT_SIZE * n) else {
        return false;
    };
    if slot_start < HEADER_SIZE {
        return false;
    }
    let b = page.as_bytes();
    let free_data = u16::from_le_bytes([b[FREE_DATA_OFFSET], b[FREE_DATA_OFFSET + 1]]) as usize;
    free_data >= HEADER_SIZE && free_data <= slot_start && page.free_count() <= slot_start - HEADER_SIZE
}

/// The shortest separator `s` with `left < s <= right` (suffix truncation): the shortest
/// prefix of `right` greater than `left`. Shorter separators make internal pages hold
/// more children. Requires `left < right`.
pub(crate) fn shortest_separator(left: &[u8], right: &[u8]) -> Vec<u8> {
    let common = left.iter().zip(right).take_while(|(a, b)| a == b).count();
    let len = (common + 1).min(right.len());
    right[..len].to_vec()
}

/// Largest encoded leaf entry: one entry alone on a page.
pub(crate) const MAX_ENTRY: usize = MAX_RECORD_ON_PAGE;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn separator_is_shortest_between() {
        assert_eq!(shortest_separator(b"abc", b"abd"), b"abd");
        assert_eq!(shortest_separator(b"abc", b"b"), b"b");
        assert_eq!(shortest_separator(b"ab", b"abxyz"), b"abx");
        assert_eq!(shortest_separator(b"", b"q"), b"q");
        assert_eq!(shortest_separator(b"apple", b"banana"), b"b");
        for (l, r) in [(&b"a"[..], &b"a\0"[..]), (b"zz", b"zzz"), (b"\x01\xff", b"\x02")] {
            let s = shortest_separator(l, r);
            assert!(l < &s[..] && &s[..] <= r);
        }
    }

    #[test]
    fn entry_round_trip_and_damage() {
        let mut v = Vec::new();
        encode_entry(b"key", b"value", &mut v);
        assert_eq!(split_entry(&v), Some((&b"key"[..], &b"value"[..])));
        assert_eq!(split_entry(&[5, 0, 1]), None);
        assert_eq!(split_entry(&[1]), None);
        assert_eq!(split_entry(&[0, 0]), Some((&b""[..], &b""[..])));
    }
}
