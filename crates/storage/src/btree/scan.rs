//! Range scans: a leaf-at-a-time walk shared by the callback scan, `count`, the
//! uniquifier search and the [`Cursor`].
//!
//! A walk latches one leaf at a time (SH). To go on, it follows the sibling link if the
//! tree's structure version is unchanged since it read the leaf (no split or merge can
//! have moved or freed the next page) and no split inside the tree was made in shared
//! mode meanwhile (`relinks`, checked again once the next leaf is latched: such a split
//! changes the links between the leaf and its right neighbour), and otherwise re-seeks
//! from the root with the last key of the leaf it left as an exclusive bound. Following a link checks that the
//! next leaf points back and that its keys continue in order, so damaged links yield
//! `Corrupt` instead of a loop.

use super::node::*;
use super::{split_uniquifier, stored_key, Inner, Seek};
use crate::buffer::PageReadGuard;
use crate::error::Result;
use crate::page::PageId;
use std::ops::Bound;
use std::sync::atomic::Ordering::Acquire;
use std::sync::Arc;

/// Where a walk is. All buffers are reused from leaf to leaf.
pub(super) struct Walk {
    reverse: bool,
    started: bool,
    pub(super) finished: bool,
    /// Last key (in walk order) of the leaf left behind: the re-seek bound.
    edge: Vec<u8>,
    has_edge: bool,
    /// The leaf left behind and the sibling to follow next.
    cur: PageId,
    next: PageId,
    version: u64,
    /// The tree's `relinks` before the leaf left behind was latched.
    relinks: u64,
}

impl Walk {
    pub(super) fn new(reverse: bool) -> Walk {
        Walk {
            reverse,
            started: false,
            finished: false,
            edge: Vec::new(),
            has_edge: false,
            cur: PageId::NULL,
            next: PageId::NULL,
            version: 0,
            relinks: 0,
        }
    }
}

/// The tighter of a lower bound and "strictly above `edge`".
fn raise<'b>(lower: Bound<&'b [u8]>, edge: &'b [u8]) -> Bound<&'b [u8]> {
    match lower {
        Bound::Included(l) | Bound::Excluded(l) if edge < l => lower,
        _ => Bound::Excluded(edge),
    }
}

/// The tighter of an upper bound and "strictly below `edge`".
fn lower_upper<'b>(upper: Bound<&'b [u8]>, edge: &'b [u8]) -> Bound<&'b [u8]> {
    match upper {
        Bound::Included(u) | Bound::Excluded(u) if edge > u => upper,
        _ => Bound::Excluded(edge),
    }
}

/// First slot at or after the start of a lower bound.
fn start_of(page: &crate::page::Page, lower: Bound<&[u8]>) -> Result<u16> {
    Ok(match lower {
        Bound::Unbounded => 0,
        Bound::Included(k) => lower_bound(page, k)?.0,
        Bound::Excluded(k) => upper_bound(page, k)?,
    })
}

/// First slot past the end of an upper bound.
fn end_of(page: &crate::page::Page, upper: Bound<&[u8]>) -> Result<u16> {
    Ok(match upper {
        Bound::Unbounded => page.slot_count(),
        Bound::Included(k) => upper_bound(page, k)?,
        Bound::Excluded(k) => lower_bound(page, k)?.0,
    })
}

impl Inner {
    /// Moves the walk to its next leaf and returns it latched SH with the slot range
    /// `[start, end)` inside the bounds (to be visited backwards for a reverse walk), or
    /// `None` when done. The caller holds the tree latch shared (or exclusive).
    pub(super) fn walk_step<'a>(
        &'a self,
        w: &mut Walk,
        lower: Bound<&[u8]>,
        upper: Bound<&[u8]>,
    ) -> Result<Option<(PageReadGuard<'a>, u16, u16)>> {
        if w.finished {
            return Ok(None);
        }
        let version = self.version.load(Acquire);
        let relinks = self.relinks.load(Acquire);
        let mut next = None;
        if w.started && version == w.version && relinks == w.relinks && !w.next.is_null() {
            let leaf = self.read_page(w.next, 0)?;
            // A split in shared mode may have changed the links of the leaf left behind
            // or of this one since the walk read the former: re-seek then.
            if self.relinks.load(Acquire) == relinks {
                next = Some(leaf);
            }
        }
        let (leaf, start, end) = if let Some(leaf) = next {
            let n = leaf.slot_count();
            let back = if w.reverse { leaf.next() } else { leaf.prev() };
            if back != w.cur {
                return Err(damaged(&leaf, format!("its sibling link does not point back to ({})", w.cur)));
            }
            if n == 0 {
                // An empty leaf below the root is valid (an append split whose insert a
                // crash cut off, see `smo`): nothing to return, go on past it.
                return self.finish_step(w, (version, relinks), leaf, 0, 0).map(Some);
            }
            let k = key_at(&leaf, if w.reverse { n - 1 } else { 0 })?;
            if w.has_edge && (if w.reverse { k >= &w.edge[..] } else { k <= &w.edge[..] }) {
                return Err(damaged(&leaf, "leaf chain out of key order"));
            }
            let (start, end) = if w.reverse {
                let start = match lower {
                    Bound::Unbounded => 0,
                    _ if bound_admits_low(lower, key_at(&leaf, 0)?) => 0,
                    _ => start_of(&leaf, lower)?,
                };
                (start, n)
            } else {
                let end = match upper {
                    Bound::Unbounded => n,
                    _ if bound_admits_high(upper, key_at(&leaf, n - 1)?) => n,
                    _ => end_of(&leaf, upper)?,
                };
                (0, end)
            };
            (leaf, start, end)
        } else {
            // Seek from the root: the first time, or after a structure change.
            let edge = std::mem::take(&mut w.edge);
            let r = if w.reverse {
                let hi = if w.has_edge { lower_upper(upper, &edge) } else { upper };
                let seek = match hi {
                    Bound::Unbounded => Seek::Last,
                    Bound::Included(k) | Bound::Excluded(k) => Seek::Key(k),
                };
                self.descend_read(seek).and_then(|leaf| {
                    let end = end_of(&leaf, hi)?;
                    let start = start_of(&leaf, lower)?;
                    Ok((leaf, start, end))
                })
            } else {
                let lo = if w.has_edge { raise(lower, &edge) } else { lower };
                let seek = match lo {
                    Bound::Unbounded => Seek::First,
                    Bound::Included(k) | Bound::Excluded(k) => Seek::Key(k),
                };
                self.descend_read(seek).and_then(|leaf| {
                    let start = start_of(&leaf, lo)?;
                    let end = end_of(&leaf, upper)?;
                    Ok((leaf, start, end))
                })
            };
            w.edge = edge;
            r?
        };
        self.finish_step(w, (version, relinks), leaf, start, end).map(Some)
    }

    /// Records where a walk is after reading `leaf` (entries `start..end` of it), with
    /// the structure version and `relinks` read before it was latched. An empty leaf
    /// leaves the edge of the last non-empty one, so a re-seek resumes past everything
    /// returned so far.
    fn finish_step<'a>(
        &'a self,
        w: &mut Walk,
        (version, relinks): (u64, u64),
        leaf: PageReadGuard<'a>,
        start: u16,
        end: u16,
    ) -> Result<(PageReadGuard<'a>, u16, u16)> {
        let n = leaf.slot_count();
        // Inverted bounds give an empty range, never an inverted one.
        let start = start.min(end);
        w.started = true;
        w.version = version;
        w.relinks = relinks;
        w.cur = leaf.page_id();
        if n > 0 {
            w.edge.clear();
            w.has_edge = true;
        }
        if w.reverse {
            w.next = leaf.prev();
            w.finished = start > 0 || w.next.is_null();
            if n > 0 {
                w.edge.extend_from_slice(key_at(&leaf, 0)?);
            }
        } else {
            w.next = leaf.next();
            w.finished = end < n || w.next.is_null();
            if n > 0 {
                w.edge.extend_from_slice(key_at(&leaf, n - 1)?);
            }
        }
        Ok((leaf, start, end))
    }
}

/// Does the upper bound admit `key`?
#[inline]
fn bound_admits_high(upper: Bound<&[u8]>, key: &[u8]) -> bool {
    match upper {
        Bound::Unbounded => true,
        Bound::Included(u) => key <= u,
        Bound::Excluded(u) => key < u,
    }
}

/// Does the lower bound admit `key`?
#[inline]
fn bound_admits_low(lower: Bound<&[u8]>, key: &[u8]) -> bool {
    match lower {
        Bound::Unbounded => true,
        Bound::Included(l) => key >= l,
        Bound::Excluded(l) => key > l,
    }
}

/// The callback scan: entries are handed out straight from the latched leaf.
pub(super) fn scan<F: FnMut(&[u8], &[u8]) -> bool>(
    t: &Inner,
    lower: Bound<&[u8]>,
    upper: Bound<&[u8]>,
    mut f: F,
) -> Result<()> {
    let mut g = t.shared();
    let mut w = Walk::new(false);
    while let Some((leaf, start, end)) = t.walk_step(&mut w, lower, upper)? {
        for slot in start..end {
            let (k, v) = entry(&leaf, slot)?;
            if !f(k, v) {
                return Ok(());
            }
        }
        drop(leaf);
        if w.finished {
            break;
        }
        // Between leaves, let a waiting split or merge in (the walk re-seeks if one ran).
        drop(g);
        g = t.shared();
    }
    Ok(())
}

/// Counts entries leaf by leaf without decoding them.
pub(super) fn count(t: &Inner) -> Result<u64> {
    let mut g = t.shared();
    let mut w = Walk::new(false);
    let mut n = 0u64;
    while let Some((leaf, start, end)) = t.walk_step(&mut w, Bound::Unbounded, Bound::Unbounded)? {
        n += (end - start) as u64;
        drop(leaf);
        if w.finished {
            break;
        }
        drop(g);
        g = t.shared();
    }
    Ok(n)
}

/// The largest uniquifier among the stored keys of `key` in a non-unique tree: a
/// backward walk from `key || FFFFFFFF` down to `key || 00000000`, skipping longer keys
/// that sort among them.
pub(super) fn max_uniquifier(t: &Inner, key: &[u8]) -> Result<Option<u32>> {
    let lo = stored_key(key, 0);
    let hi = stored_key(key, u32::MAX);
    let _g = t.shared();
    let mut w = Walk::new(true);
    while let Some((leaf, start, end)) = t.walk_step(&mut w, Bound::Included(&lo), Bound::Included(&hi))? {
        for slot in (start..end).rev() {
            if let Some((base, u)) = split_uniquifier(key_at(&leaf, slot)?) {
                if base == key {
                    return Ok(Some(u));
                }
            }
        }
    }
    Ok(None)
}

/// A cursor over a key range, forward or backward. It copies one leaf's entries at a
/// time into a reused buffer and holds no latch between calls, so the caller may do
/// anything meanwhile, including changing the tree: entries of leaves not yet reached
/// reflect those changes, the buffered leaf does not.
///
/// [`Cursor::next_entry`] lends slices into the buffer (no allocation per entry);
/// the `Iterator` implementation copies each entry into owned vectors.
pub struct Cursor {
    tree: Arc<Inner>,
    lower: Bound<Vec<u8>>,
    upper: Bound<Vec<u8>>,
    walk: Walk,
    buf: Vec<u8>,
    /// (record start, value start, record end) in `buf`.
    items: Vec<(usize, usize, usize)>,
    pos: usize,
    failed: bool,
}

impl Cursor {
    pub(super) fn new(tree: Arc<Inner>, lower: Bound<&[u8]>, upper: Bound<&[u8]>, reverse: bool) -> Cursor {
        Cursor {
            tree,
            lower: lower.map(<[u8]>::to_vec),
            upper: upper.map(<[u8]>::to_vec),
            walk: Walk::new(reverse),
            buf: Vec::new(),
            items: Vec::new(),
            pos: 0,
            failed: false,
        }
    }

    /// Buffers the next leaf's entries in range; false at the end.
    fn fill(&mut self) -> Result<bool> {
        loop {
            if self.walk.finished {
                return Ok(false);
            }
            let _g = self.tree.shared();
            let Some((leaf, start, end)) = self.tree.walk_step(
                &mut self.walk,
                self.lower.as_ref().map(Vec::as_slice),
                self.upper.as_ref().map(Vec::as_slice),
            )?
            else {
                return Ok(false);
            };
            self.buf.clear();
            self.items.clear();
            self.pos = 0;
            let mut copy = |slot: u16| -> Result<()> {
                let (k, v) = entry(&leaf, slot)?;
                let at = self.buf.len();
                self.buf.extend_from_slice(k);
                self.buf.extend_from_slice(v);
                self.items.push((at, at + k.len(), at + k.len() + v.len()));
                Ok(())
            };
            if self.walk.reverse {
                for slot in (start..end).rev() {
                    copy(slot)?;
                }
            } else {
                for slot in start..end {
                    copy(slot)?;
                }
            }
            if !self.items.is_empty() {
                return Ok(true);
            }
        }
    }

    /// The next entry as (key, value), borrowed from the cursor's buffer.
    pub fn next_entry(&mut self) -> Result<Option<(&[u8], &[u8])>> {
        if self.pos >= self.items.len() {
            if self.failed {
                return Ok(None);
            }
            match self.fill() {
                Ok(true) => {}
                Ok(false) => return Ok(None),
                Err(e) => {
                    self.failed = true;
                    return Err(e);
                }
            }
        }
        let (a, b, c) = self.items[self.pos];
        self.pos += 1;
        Ok(Some((&self.buf[a..b], &self.buf[b..c])))
    }
}

impl Iterator for Cursor {
    type Item = Result<(Vec<u8>, Vec<u8>)>;

    fn next(&mut self) -> Option<Self::Item> {
        match self.next_entry() {
            Ok(Some((k, v))) => Some(Ok((k.to_vec(), v.to_vec()))),
            Ok(None) => None,
            Err(e) => Some(Err(e)),
        }
    }
}
