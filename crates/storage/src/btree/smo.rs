//! Structure modifications: splits, merges, new and collapsed roots. Everything here
//! except [`split_shared`] (see there) runs under the exclusive tree latch, so nothing
//! else moves in the tree: a recorded path stays valid, and page latches are taken only
//! to satisfy the buffer pool (the lazy writer may still hold one SH latch briefly,
//! never while waiting for another).
//!
//! Each structure modification is a system transaction of its own without row undo
//! ([`Inner::smo`]); the user's entry is never written inside one. An insert or growing
//! update that does not fit splits the leaf first (an SMO that places nothing new), then
//! retries and performs the change as an ordinary row operation; a delete removes its
//! entry as a row operation, then rebalances in an SMO. The exclusive tree latch is held
//! across both, so nobody sees the tree between them; after a crash between them the
//! tree may keep an empty leaf (the right page of an append split), which is valid.

use super::node::*;
use super::{Inner, Step, MAX_STORED_KEY};
use crate::buffer::PageWriteGuard;
use crate::error::{Result, StorageError};
use crate::page::{Page, PageId, PageOp, PageType, SLOT_SIZE};

/// Largest internal entry with its slot: the size assumed for a separator pushed up by a
/// split above the leaf level when counting the pages a split may need.
const MAX_INTERNAL_SLOT: usize = KEY_LEN_SIZE + MAX_STORED_KEY + CHILD_SIZE + SLOT_SIZE;

/// A change to one page that a split carries out as it distributes the entries.
#[derive(Clone, Copy)]
pub(super) enum Modify<'a> {
    None,
    /// Insert this record at this slot.
    Insert(u16, &'a [u8]),
    /// Replace the record at this slot (it grew).
    Replace(u16, &'a [u8]),
}

impl Modify<'_> {
    fn pos(&self) -> Option<usize> {
        match *self {
            Modify::None => None,
            Modify::Insert(p, _) | Modify::Replace(p, _) => Some(p as usize),
        }
    }
}

/// The entries of a page as they are after a `Modify`: what a split distributes.
struct Seq<'p> {
    page: &'p Page,
    m: Modify<'p>,
    n: usize,
}

impl<'p> Seq<'p> {
    fn new(page: &'p Page, m: Modify<'p>) -> Seq<'p> {
        Seq { page, m, n: page.slot_count() as usize }
    }

    fn len(&self) -> usize {
        match self.m {
            Modify::Insert(..) => self.n + 1,
            _ => self.n,
        }
    }

    fn rec(&self, i: usize) -> Result<&'p [u8]> {
        let slot = match self.m {
            Modify::Insert(p, r) => match i.cmp(&(p as usize)) {
                std::cmp::Ordering::Equal => return Ok(r),
                std::cmp::Ordering::Greater => i - 1,
                std::cmp::Ordering::Less => i,
            },
            Modify::Replace(p, r) if i == p as usize => return Ok(r),
            _ => i,
        };
        u16::try_from(slot)
            .ok()
            .and_then(|s| self.page.record(s))
            .ok_or_else(|| damaged(self.page, format!("slot {slot} is unreadable")))
    }

    fn key(&self, i: usize) -> Result<&'p [u8]> {
        let r = self.rec(i)?;
        split_entry(r).map(|e| e.0).ok_or_else(|| damaged(self.page, "an entry's key length exceeds its record"))
    }
}

/// Where the rightmost leaf splits for an insert at slot `p` of its `n` entries, when
/// that is near its end: the entries from the returned index on move to the new page
/// with the new entry, the others stay. For `p == n` (an append) with keys arriving in
/// order, only the new entry moves: ever-increasing keys leave full pages behind.
///
/// Keys drawn in order by concurrent sessions (IDENTITY values) arrive a little out of
/// order: some land just below the last few entries, and a session that waited for the
/// page latch while others kept taking it can arrive a page or more behind. A most-even
/// split would leave half-empty pages behind, and a full left page would split again,
/// half and half, in exclusive mode, for each latecomer. So while inserts land behind
/// the edge (`Inner::edge_disorder`), the split moves as many entries as the
/// nearest of them landed below the edge, so that those keys belong to the new page,
/// and at least a sixteenth of the page, which the left page keeps free for the later
/// ones. `None` beyond the last quarter of the page.
pub(super) fn edge_split_point(t: &Inner, n: usize, p: usize) -> Option<usize> {
    if p == 0 || p > n || (n - p) * 4 > n {
        return None;
    }
    let (above, late) = t.edge_disorder();
    let slack = if above == 0 && !late { 0 } else { (above as usize).max(n / 16).min(n / 4) };
    Some(p.min(n - slack).max(1))
}

/// Where a leaf may split for the insert of `rec` at slot `p` of its `n` entries, best
/// first, when the new key continues an ascending run far below the next key (the entry
/// at `p`, or past the last entry `upper()`: the leaf's upper bound, or any key of the
/// next leaf). Past the last entry: the new
/// entry alone moves to the new page. Below other entries (another run's first keys,
/// typically): those entries move and the new one stays, if it fits there, else it
/// moves with them. Either way the left page stays full. Sessions that each append to
/// their own key range fill leaves inside the tree this way, as ever-increasing keys
/// fill the rightmost leaf; a most-even split there leaves every page half empty for
/// good, since no key ever comes back to it. Empty (the most even split) when the insert
/// is in the first half of the page or the next key is near (see [`room_above`]).
fn ascending_split_points(
    leaf: &Page,
    p: usize,
    rec: &[u8],
    upper: impl FnOnce() -> Result<Option<Vec<u8>>>,
) -> Result<Vec<usize>> {
    let n = leaf.slot_count() as usize;
    if p == 0 || p > n || 2 * p < n {
        return Ok(Vec::new());
    }
    let key = split_entry(rec).map(|e| e.0).ok_or_else(|| damaged(leaf, "a new entry is malformed"))?;
    let above = if p < n { Some(key_at(leaf, p as u16)?.to_vec()) } else { upper()? };
    if !room_above(key_at(leaf, 0)?, key, above.as_deref()) {
        return Ok(Vec::new());
    }
    // Indices into the entries with the new one at `p`: `k` keeps `[..k]` on the left.
    Ok(if p < n { vec![p + 1, p] } else { vec![p] })
}

/// Is the room between `key` and the next key above it (`above`, None: no bound) larger
/// than the span from the leaf's first key `first` to `key`? Compared as big-endian
/// numbers over the first 8 bytes past the prefix common to `first` and `above` (which
/// `key`, between them, shares). Random keys pass this only with a vanishing
/// probability at the second half of a page: a gap between neighbours as wide as half
/// the page's keys together.
pub(super) fn room_above(first: &[u8], key: &[u8], above: Option<&[u8]>) -> bool {
    let Some(above) = above else { return true };
    let common = first.iter().zip(above).take_while(|(a, b)| a == b).count();
    let num = |k: &[u8]| -> u64 {
        let mut b = [0u8; 8];
        let tail = k.get(common..).unwrap_or(&[]);
        let n = tail.len().min(8);
        b[..n].copy_from_slice(&tail[..n]);
        u64::from_be_bytes(b)
    };
    let (f, k, u) = (num(first), num(key), num(above));
    // Out of order only on damage (it is reported elsewhere): no preference then.
    if !(f <= k && k <= u) {
        return false;
    }
    u - k > k - f
}

/// The smallest separator above the leaf a descent `path` reached: the tightest bound
/// of its key range, or None for the rightmost leaf (exclusive mode: the path is stable).
fn upper_of(t: &Inner, path: &[Step]) -> Result<Option<Vec<u8>>> {
    for (i, step) in path.iter().enumerate().rev() {
        let level = (path.len() - i) as u8;
        let p = t.read_page(step.page, level)?;
        if step.slot + 1 < p.slot_count() {
            return Ok(Some(key_at(&p, step.slot + 1)?.to_vec()));
        }
    }
    Ok(None)
}

/// Where to split `seq` so that `seq[..k]` stays and `seq[k..]` moves to a new page:
/// the first of `preferred` where both halves fit (see [`edge_split_point`] and
/// [`ascending_split_points`]), else (unless `preferred_only`) the most even split by
/// bytes where both halves fit. `None` when no such split makes both halves fit (without
/// `preferred_only`, possible only with very large entries: then the caller splits at
/// the modified slot and retries).
fn choose_split(seq: &Seq<'_>, internal: bool, preferred: &[usize], preferred_only: bool) -> Result<Option<usize>> {
    let len = seq.len();
    if len < 2 {
        return Ok(None);
    }
    let mut sizes = Vec::with_capacity(len);
    for i in 0..len {
        sizes.push(seq.rec(i)?.len() + SLOT_SIZE);
    }
    let total: usize = sizes.iter().sum();
    // An internal page's first entry loses its key (it becomes minus infinity).
    let shrink = |k: usize| -> Result<usize> {
        if internal {
            seq.key(k).map(|key| key.len())
        } else {
            Ok(0)
        }
    };
    for &k in preferred.iter().filter(|&&k| k > 0 && k < len) {
        let left: usize = sizes[..k].iter().sum();
        if left <= PAGE_CAPACITY && total - left - shrink(k)? <= PAGE_CAPACITY {
            return Ok(Some(k));
        }
    }
    if preferred_only {
        return Ok(None);
    }
    let mut best: Option<(usize, usize)> = None;
    let mut left = 0usize;
    for k in 1..len {
        left += sizes[k - 1];
        let right = total - left - shrink(k)?;
        if left <= PAGE_CAPACITY && right <= PAGE_CAPACITY {
            let d = left.abs_diff(right);
            let better = match best {
                Some((bd, _)) => d < bd,
                None => true,
            };
            if better {
                best = Some((d, k));
            }
        }
    }
    Ok(best.map(|(_, k)| k))
}

/// The separator between `seq[..k]` and `seq[k..]`: for leaves the shortest key between
/// the two, for internal pages the key of the entry that becomes the new page's first.
fn separator(seq: &Seq<'_>, k: usize, internal: bool) -> Result<Vec<u8>> {
    if internal {
        Ok(seq.key(k)?.to_vec())
    } else {
        Ok(shortest_separator(seq.key(k - 1)?, seq.key(k)?))
    }
}

/// Pages allocated before a split changes anything. Unused ones are freed by `release`
/// at the end of the split, or on drop on an error path, so running out of space leaves
/// the tree as it was.
struct Spare<'a> {
    t: &'a Inner,
    pages: Vec<PageWriteGuard<'a>>,
}

impl<'a> Spare<'a> {
    fn take(&mut self, near: PageId) -> Result<PageWriteGuard<'a>> {
        if self.pages.is_empty() {
            // Only if the estimate was short; it is conservative, so this is a fallback.
            self.t.db.allocate_page(self.t.au, Some(near))
        } else {
            Ok(self.pages.remove(0))
        }
    }
}

impl Spare<'_> {
    /// Frees the pages the split did not need. Errors are reported (inside the split's
    /// system transaction, a failure must fail it rather than commit a half-done free).
    fn release(mut self) -> Result<()> {
        for g in std::mem::take(&mut self.pages) {
            let id = g.page_id();
            drop(g);
            self.t.db.free_page(self.t.au, id)?;
        }
        Ok(())
    }
}

impl Drop for Spare<'_> {
    fn drop(&mut self) {
        for g in self.pages.drain(..) {
            let id = g.page_id();
            drop(g);
            // A failure leaves an allocated page nobody references; DBCC CHECKALLOC
            // reports such pages. There is no better place to report it from Drop.
            let _ = self.t.db.free_page(self.t.au, id);
        }
    }
}

/// Allocates every page a leaf split may need: the new leaf, one page per ancestor that
/// cannot take its new separator (assuming the largest separator above the leaf
/// parent), and a new root if all of them split.
fn preallocate<'a>(t: &'a Inner, path: &[Step], sep_len: usize, leaf: PageId) -> Result<Spare<'a>> {
    let mut nears = vec![leaf];
    let mut need = KEY_LEN_SIZE + sep_len + CHILD_SIZE + SLOT_SIZE;
    let mut all_split = true;
    for (i, step) in path.iter().enumerate().rev() {
        let level = (path.len() - i) as u8;
        let p = t.read_page(step.page, level)?;
        if p.free_count() >= need {
            all_split = false;
            break;
        }
        nears.push(step.page);
        need = MAX_INTERNAL_SLOT;
    }
    if all_split {
        nears.push(t.root_id());
    }
    let mut spare = Spare { t, pages: Vec::with_capacity(nears.len()) };
    for near in nears {
        let g = t.db.allocate_page(t.au, Some(near))?;
        spare.pages.push(g);
    }
    Ok(spare)
}

/// Splits `page` at `k` of its entries-after-`m` into itself and the fresh page `right`,
/// carrying out `m` on the way; links `right` into the level. Returns `right`'s id. The
/// caller inserts the separator into the parent. Leaves are split with `Modify::None`
/// (the user's entry is a row operation of its own); `m` carries the separator an
/// internal page takes.
fn split<'a>(
    t: &'a Inner,
    page: &mut PageWriteGuard<'_>,
    m: Modify<'_>,
    k: usize,
    mut right: PageWriteGuard<'_>,
    next: Option<&mut PageWriteGuard<'a>>,
) -> Result<PageId> {
    let level = page.level();
    let internal = level > 0;
    let left_id = page.page_id();
    let right_id = right.page_id();
    let old_next = page.next();
    // Latch (and validate) the old neighbour before changing anything, unless the caller
    // holds it already (a split in shared mode latches it before the parent).
    let mut own = None;
    let mut neighbour = match next {
        Some(nb) if nb.page_id() == old_next => Some(nb),
        Some(nb) => return Err(damaged(nb, format!("it is not the next page of ({left_id})"))),
        None if old_next.is_null() => None,
        None => Some(own.insert(t.write_page(old_next, level)?)),
    };
    if let Some(nb) = &neighbour {
        if nb.prev() != left_id {
            return Err(damaged(nb, format!("its previous-page link does not point back to ({left_id})")));
        }
    }
    let page_type = if internal { PageType::Index } else { t.leaf_type };
    t.db.change(
        &mut right,
        &PageOp::Format { page_type, level, index_id: t.index_id, object_id: t.object_id, alloc_unit_id: t.au },
    )?;
    let (n_old, len) = {
        let seq = Seq::new(page, m);
        let len = seq.len();
        let mut first = Vec::new();
        for i in k..len {
            let mut rec = seq.rec(i)?;
            if internal && i == k {
                // The new page's first entry: its key moves up as the separator.
                let child = split_entry(rec).map(|e| e.1).filter(|c| c.len() == CHILD_SIZE);
                let child = child.ok_or_else(|| damaged(page, "internal entry without a child page id"))?;
                first.clear();
                encode_entry(&[], child, &mut first);
                rec = &first;
            }
            t.put(&mut right, &PageOp::InsertSlot { slot: (i - k) as u16, record: rec })?;
        }
        (seq.n, len)
    };
    debug_assert!(k <= len && n_old <= len);
    t.db.change(&mut right, &PageOp::SetLinks { prev: left_id, next: old_next })?;
    if let Some(nb) = neighbour.as_mut() {
        let next = nb.next();
        t.db.change(nb, &PageOp::SetLinks { prev: right_id, next })?;
    }
    // Keep seq[..k] on the left page.
    match m {
        Modify::Insert(p, r) if (p as usize) < k => {
            t.db.change(page, &PageOp::TruncateSlots { from: (k - 1) as u16 })?;
            t.put(page, &PageOp::InsertSlot { slot: p, record: r })?;
        }
        Modify::Replace(p, r) if (p as usize) < k => {
            t.db.change(page, &PageOp::TruncateSlots { from: k as u16 })?;
            t.put(page, &PageOp::ReplaceSlot { slot: p, record: r })?;
        }
        // Nothing moves when the right page starts empty (an append split).
        _ if k >= n_old => {}
        _ => t.db.change(page, &PageOp::TruncateSlots { from: k as u16 })?,
    }
    let prev = page.prev();
    t.db.change(page, &PageOp::SetLinks { prev, next: right_id })?;
    diag::counters().page_splits.add(1);
    Ok(right_id)
}

/// Splits a full leaf so that the change `m` (an insert or a growing replace, not
/// carried out here) fits afterwards in the half it belongs to: the split point is chosen
/// with `m` counted, then only the existing entries move. For an append past the last
/// key of the rightmost leaf the new right page starts empty and its separator is the new
/// key (or its shortest prefix above the left page's last key), so ever-increasing keys
/// leave full pages behind. When no single split can make room (huge entries) the leaf
/// is split between the neighbours of the modified slot and the caller retries.
/// Returns the leaf the change now fits in, or `None` after such a fallback split (the
/// caller then descends again).
fn split_leaf(t: &Inner, mut path: Vec<Step>, mut leaf: PageWriteGuard<'_>, m: Modify<'_>) -> Result<Option<PageId>> {
    let n = leaf.slot_count() as usize;
    let rightmost = leaf.next().is_null();
    let edge = match m {
        Modify::Insert(p, _) if rightmost => edge_split_point(t, n, p as usize),
        _ => None,
    };
    let preferred = match m {
        Modify::Insert(p, rec) if edge.is_none() => {
            ascending_split_points(&leaf, p as usize, rec, || upper_of(t, &path))?
        }
        _ => edge.into_iter().collect(),
    };
    // `j`: the first existing entry that moves to the new page; `goes_right`: whether the
    // pending change belongs to the new page (None: fallback split, it may fit neither).
    let (j, sep, goes_right) = {
        let seq = Seq::new(&leaf, m);
        match choose_split(&seq, false, &preferred, false)? {
            Some(k) => {
                // seq[..k] stays; the pending entry at `p` is one of seq's entries.
                let j = match m {
                    Modify::Insert(p, _) if (p as usize) < k => k - 1,
                    _ => k,
                };
                (j, separator(&seq, k, false)?, m.pos().map(|p| p >= k))
            }
            None => {
                // Split between the neighbours of the modified slot; both halves are
                // non-empty there, or a split with the modification would have fitted.
                let k =
                    m.pos().filter(|&p| p > 0 && p < n).ok_or_else(|| damaged(&leaf, "a full leaf cannot be split"))?;
                let seq = Seq::new(&leaf, Modify::None);
                (k, separator(&seq, k, false)?, None)
            }
        }
    };
    let left_id = leaf.page_id();
    let mut spare = preallocate(t, &path, sep.len(), left_id)?;
    let right = spare.take(left_id)?;
    let right_id = split(t, &mut leaf, Modify::None, j, right, None)?;
    if edge.is_some() {
        t.edge_split_made();
    }
    drop(leaf);
    insert_separator(t, &mut path, 0, left_id, sep, right_id, &mut spare)?;
    spare.release()?;
    Ok(goes_right.map(|r| if r { right_id } else { left_id }))
}

/// Log reserved for a split made in shared mode: its records (allocation, the new page's
/// format and links, the old leaf's link, its right neighbour's link, the parent's
/// separator, the end record) with a full page image for each page changed first since
/// it was last written.
const SHARED_SPLIT_LOG_RESERVE: u64 = 12 * (crate::page::PAGE_SIZE as u64 + 256);

/// Splits a full leaf for the insert of `rec` (the entry for `key`) at `slot` while the
/// caller holds the tree latch only shared. The split point is the one the exclusive
/// path would choose: one that keeps pages full under ascending keys where it applies
/// (the rightmost leaf for an insert past its last key or among its last few, see
/// [`edge_split_point`]; a leaf inside the tree for an insert that continues an
/// ascending run far below the next key, see [`ascending_split_points`]), else the most
/// even. Leaf splits are the structure changes made in shared mode, so that sessions
/// inserting, to the end of the tree, each to a key range of its own or anywhere, do
/// not drain the whole tree for each new page (see "Concurrency" in the module above).
/// The entries from the split point on move to the new right page, whose separator goes
/// into the parent, which must have room for it (a parent split takes the exclusive
/// path). The insert itself follows as a row operation.
///
/// Why it is safe: in shared mode internal pages change only here, by the insertion of
/// a separator into the parent of a leaf whose EX latch the splitter holds, and no
/// internal page splits; so the parent found by routing `key` is the leaf's parent, and
/// the path above it is stable. Latches are taken leaf, then its right neighbour (whose
/// back link changes), then the parent: leaves left to right, then parents, and no
/// shared-mode thread holds a parent latch while it waits for a leaf, nor a leaf while
/// it waits for the leaf on its left, so waits cannot form a cycle. Nothing that can
/// fail for want of log space happens after the first change (the log is reserved up
/// front), because this split cannot be rolled back once its latches are released: the
/// system transaction ends while they are held. Descents that read the parent before
/// the separator appeared detect it through `shared_splits`, bumped while the leaf is
/// still latched, and descend again; range walks that read the leaf or its neighbour
/// before a split inside the tree detect it through `relinks` (bumped while both are
/// latched) and re-seek instead of following a sibling link that changed. A split of
/// the rightmost leaf changes no link a walk may still follow.
///
/// Returns `false`, having changed nothing, when it cannot: the leaf is the root, the
/// insert is at its first slot, no split makes both halves fit (huge entries), the
/// parent is full, the log has no room, or DBCC is checking the tree (the SMO gate is
/// busy). The caller then takes the exclusive path.
/// Consumes the leaf latch either way.
pub(super) fn split_shared(t: &Inner, mut leaf: PageWriteGuard<'_>, key: &[u8], rec: &[u8], slot: u16) -> Result<bool> {
    let leaf_id = leaf.page_id();
    let n = leaf.slot_count();
    // Inside another system transaction this one would end only with it, maybe after
    // the latches are gone: take the exclusive path there.
    if leaf_id == t.root_id() || slot == 0 || crate::database::in_system_txn() {
        return Ok(false);
    }
    let Some(_gate) = t.smo_gate.try_read() else { return Ok(false) };
    let rightmost = leaf.next().is_null();
    // The split point, an index into the entries with the new one at `slot`. A split
    // inside the tree latches the right neighbour first: its first key bounds the room
    // above an insert past the leaf's last entry, and its back link changes.
    let mut next = None;
    let preferred = if rightmost {
        edge_split_point(t, n as usize, slot as usize).into_iter().collect()
    } else {
        let nb = t.write_page(leaf.next(), 0)?;
        if nb.prev() != leaf_id {
            return Err(damaged(&nb, format!("its previous-page link does not point back to ({leaf_id})")));
        }
        let above = || (nb.slot_count() > 0).then(|| key_at(&nb, 0).map(<[u8]>::to_vec)).transpose();
        let points = ascending_split_points(&leaf, slot as usize, rec, above)?;
        next = Some(nb);
        points
    };
    let (j, sep, goes_right, moved_log) = {
        let seq = Seq::new(&leaf, Modify::Insert(slot, rec));
        // Else the most even split, as under the exclusive latch: only the leaf, its
        // right neighbour's back link and the parent change either way.
        let Some(k) = choose_split(&seq, false, &preferred, false)? else { return Ok(false) };
        // `j`: the first existing entry that moves.
        let j = (if (slot as usize) < k { k - 1 } else { k }) as u16;
        // Each moved entry is logged as an insert into the new page.
        let mut moved_log = 0u64;
        for s in j..n {
            let r = leaf.record(s).ok_or_else(|| damaged(&leaf, format!("slot {s} is unreadable")))?;
            moved_log += r.len() as u64 + 256;
        }
        (j, separator(&seq, k, false)?, slot as usize >= k, moved_log)
    };
    // `key` is above the leaf's first key (slot > 0) and below its upper bound, so
    // routing it at each level follows the path down to the leaf's parent.
    let mut id = t.root_id();
    let mut level = t.root_level();
    while level > 1 {
        let g = t.read_page(id, level)?;
        id = child_at(&g, route(&g, key)?)?;
        level -= 1;
    }
    let mut parent = t.write_page(id, 1)?;
    let at = route(&parent, key)?;
    let pos = at + 1;
    // The separator's entry, sized with the leaf's id in place of the new page's (same
    // length), for the room and damage checks made before anything changes.
    let probe = encode_child(&sep, leaf_id);
    if child_at(&parent, at)? != leaf_id || !fits(&parent, probe.len()) {
        return Ok(false);
    }
    t.precheck(&parent, &PageOp::InsertSlot { slot: pos, record: &probe })?;
    let stx = t.db.begin_system_txn()?;
    if !t.db.reserve_system_log(SHARED_SPLIT_LOG_RESERVE + moved_log)? {
        return Ok(false); // nothing logged: the system transaction ends empty
    }
    let done = t.db.allocate_page(t.au, Some(leaf_id)).and_then(|right| {
        let right_id = split(t, &mut leaf, Modify::None, j as usize, right, next.as_mut())?;
        t.db.change(&mut parent, &PageOp::InsertSlot { slot: pos, record: &encode_child(&sep, right_id) })?;
        Ok(right_id)
    });
    let right_id = match done {
        Ok(id) => id,
        Err(e) => {
            // Not for want of log (reserved above), and the pages were checked: an I/O
            // failure. The rollback latches the pages itself, so they are released
            // first (as a failed row operation does).
            drop(parent);
            drop(next);
            drop(leaf);
            drop(stx);
            return Err(e);
        }
    };
    stx.commit()?;
    if rightmost {
        t.edge_split_made();
    } else {
        t.relinks.fetch_add(1, std::sync::atomic::Ordering::AcqRel);
    }
    t.shared_splits.fetch_add(1, std::sync::atomic::Ordering::AcqRel);
    t.set_hint(if goes_right { right_id } else { leaf_id });
    drop(parent);
    drop(next);
    drop(leaf);
    Ok(true)
}

/// Inserts the separator of a split of `left` (at `level`) into `right` into the parent,
/// splitting parents as needed, and making a new root above a split root.
fn insert_separator<'a>(
    t: &'a Inner,
    path: &mut Vec<Step>,
    mut level: u8,
    mut left: PageId,
    mut sep: Vec<u8>,
    mut right: PageId,
    spare: &mut Spare<'a>,
) -> Result<()> {
    loop {
        let parent_level = level.checked_add(1).ok_or_else(|| StorageError::Invalid("B-tree too deep".into()))?;
        let Some(step) = path.pop() else {
            let mut root = spare.take(left)?;
            let root_id = root.page_id();
            t.db.change(
                &mut root,
                &PageOp::Format {
                    page_type: PageType::Index,
                    level: parent_level,
                    index_id: t.index_id,
                    object_id: t.object_id,
                    alloc_unit_id: t.au,
                },
            )?;
            t.put(&mut root, &PageOp::InsertSlot { slot: 0, record: &encode_child(&[], left) })?;
            t.put(&mut root, &PageOp::InsertSlot { slot: 1, record: &encode_child(&sep, right) })?;
            drop(root);
            return t.set_root(root_id, parent_level, t.first_id());
        };
        let mut parent = t.write_page(step.page, parent_level)?;
        let rec = encode_child(&sep, right);
        let pos = step.slot + 1;
        if fits(&parent, rec.len()) {
            return t.put(&mut parent, &PageOp::InsertSlot { slot: pos, record: &rec });
        }
        let m = Modify::Insert(pos, &rec);
        // Separators arrive in key order at the right edge: only an append keeps the
        // page full there (a new separator never lands just below the last ones).
        let append = (pos == parent.slot_count() && parent.next().is_null()).then_some(pos as usize);
        let (k, new_sep) = {
            let seq = Seq::new(&parent, m);
            let k = choose_split(&seq, true, append.as_slice(), false)?
                .ok_or_else(|| damaged(&parent, "internal page cannot be split"))?;
            (k, separator(&seq, k, true)?)
        };
        let r = spare.take(step.page)?;
        let new_right = split(t, &mut parent, m, k, r, None)?;
        left = step.page;
        sep = new_sep;
        right = new_right;
        level = parent_level;
    }
}

/// Inserts `rec` (encoded entry for `key`) with whatever splits it takes: each split is a
/// structure modification of its own, the insert a row operation once the entry fits.
pub(super) fn insert(t: &Inner, key: &[u8], rec: &[u8]) -> Result<()> {
    // Each round either inserts or splits the leaf around the insert position, after
    // which the entry fits beside one neighbour; two rounds suffice, more is damage.
    // After a split the leaf the entry belongs to is known: no new descent is needed
    // (the exclusive tree latch keeps the structure as the split left it).
    let mut known: Option<PageId> = None;
    for _ in 0..4 {
        let (path, leaf_id) = match known.take() {
            Some(id) => (Vec::new(), id),
            None => t.descend_path(key)?,
        };
        let leaf = t.write_page(leaf_id, 0)?;
        let (slot, found) = insert_position(&leaf, key)?;
        if found {
            return Err(StorageError::DuplicateKey);
        }
        if fits(&leaf, rec.len()) {
            t.insert_row_op(leaf, slot, key, rec)?;
            t.set_hint(leaf_id);
            return Ok(());
        }
        if path.is_empty() && leaf_id != t.root_id() {
            // A known leaf that still has no room (cannot happen after a split that
            // counted the entry): descend and split properly.
            continue;
        }
        known = t.smo(|| split_leaf(t, path, leaf, Modify::Insert(slot, rec)))?;
    }
    Err(StorageError::corrupt(format!("B-tree of allocation unit {}", t.au), "an insert found no room after splitting"))
}

/// Replaces the entry for `key` with the larger `rec`, splitting as needed (splits are
/// structure modifications, the replace a row operation).
pub(super) fn update(t: &Inner, key: &[u8], rec: &[u8]) -> Result<bool> {
    let mut known: Option<PageId> = None;
    for _ in 0..4 {
        let (path, leaf_id) = match known.take() {
            Some(id) => (Vec::new(), id),
            None => t.descend_path(key)?,
        };
        let leaf = t.write_page(leaf_id, 0)?;
        let (slot, found) = lower_bound(&leaf, key)?;
        if !found {
            return Ok(false);
        }
        let old = leaf.record(slot).map_or(0, |r| r.len());
        if rec.len() <= old || leaf.free_count() >= rec.len() - old {
            t.update_row_op(leaf, slot, key, rec)?;
            t.set_hint(leaf_id);
            return Ok(true);
        }
        if path.is_empty() && leaf_id != t.root_id() {
            continue;
        }
        known = t.smo(|| split_leaf(t, path, leaf, Modify::Replace(slot, rec)))?;
    }
    Err(StorageError::corrupt(format!("B-tree of allocation unit {}", t.au), "an update found no room after splitting"))
}

/// Deletes the entry for `key` (a row operation), then rebalances (a structure
/// modification).
pub(super) fn delete(t: &Inner, key: &[u8]) -> Result<bool> {
    let (path, leaf_id) = t.descend_path(key)?;
    let leaf = t.write_page(leaf_id, 0)?;
    let (slot, found) = lower_bound(&leaf, key)?;
    if !found {
        return Ok(false);
    }
    let leaf = t.delete_row_op(leaf, slot, key)?;
    if !path.is_empty() && used(&leaf) < UNDERFULL {
        t.smo(|| rebalance(t, path, leaf))?;
    }
    Ok(true)
}

/// Fixes an underfull or empty non-root `page` (the last page of `path`'s descent):
/// an empty page is unlinked and freed; otherwise it merges with a sibling under the
/// same parent if both fit in one page. Walks up while parents become underfull, and
/// collapses a root left with a single child.
fn rebalance<'a>(t: &'a Inner, mut path: Vec<Step>, mut page: PageWriteGuard<'a>) -> Result<()> {
    loop {
        let Some(step) = path.pop() else {
            return Ok(());
        };
        let level = page.level();
        let mut parent = t.write_page(step.page, level + 1)?;
        let i = step.slot;
        let n = parent.slot_count();
        if child_at(&parent, i)? != page.page_id() {
            return Err(damaged(&parent, format!("slot {i} does not point to ({})", page.page_id())));
        }
        if page.slot_count() == 0 {
            let id = page.page_id();
            unlink(t, &mut page)?;
            drop(page);
            remove_child(t, &mut parent, i)?;
            t.db.free_page(t.au, id)?;
        } else if let Some(freed) = merge_pair(t, &mut parent, i, &mut page, i + 1 < n, i > 0)? {
            // Free only once unlatched: the allocator may latch the page it frees.
            drop(page);
            t.db.free_page(t.au, freed)?;
        } else {
            return Ok(());
        }
        // `page` is released here: collapsing the root may latch it again.
        if path.is_empty() {
            return collapse_root(t, parent);
        }
        if parent.slot_count() > 0 && used(&parent) >= UNDERFULL {
            return Ok(());
        }
        page = parent;
    }
}

/// Merges `page` (child `i` of `parent`) with its right sibling under the same parent
/// if `try_right` and both fit in one page, else with its left sibling if `try_left`
/// and they fit. The right page of the pair moves into the left one and leaves the
/// parent. Returns the emptied page for the caller to free once it has released
/// `page` (which is that page when it merged into its left sibling).
fn merge_pair<'a>(
    t: &'a Inner,
    parent: &mut PageWriteGuard<'a>,
    i: u16,
    page: &mut PageWriteGuard<'a>,
    try_right: bool,
    try_left: bool,
) -> Result<Option<PageId>> {
    let level = page.level();
    // The separator of the right page of a pair at `right_slot` becomes the key of its
    // first entry when internal pages merge; leaf separators are dropped.
    let sep_of = |parent: &Page, right_slot: u16| -> Result<Vec<u8>> {
        if level > 0 {
            Ok(key_at(parent, right_slot)?.to_vec())
        } else {
            Ok(Vec::new())
        }
    };
    if try_right {
        let right_id = child_at(parent, i + 1)?;
        let mut right = t.write_page(right_id, level)?;
        let sep = sep_of(parent, i + 1)?;
        if used(page) + used(&right) + sep.len() <= PAGE_CAPACITY {
            merge_into(t, page, &mut right, &sep)?;
            drop(right);
            remove_child(t, parent, i + 1)?;
            return Ok(Some(right_id));
        }
    }
    if try_left {
        let left_id = child_at(parent, i - 1)?;
        let mut left = t.write_page(left_id, level)?;
        let sep = sep_of(parent, i)?;
        if used(&left) + used(page) + sep.len() <= PAGE_CAPACITY {
            merge_into(t, &mut left, page, &sep)?;
            drop(left);
            remove_child(t, parent, i)?;
            return Ok(Some(page.page_id()));
        }
    }
    Ok(None)
}

/// Appends `right`'s entries to `left` (adjacent pages of one level) and unlinks
/// `right`. For internal pages, `sep` (the parent's separator for `right`) becomes the
/// key of `right`'s first entry.
fn merge_into(t: &Inner, left: &mut PageWriteGuard<'_>, right: &mut PageWriteGuard<'_>, sep: &[u8]) -> Result<()> {
    let level = left.level();
    let (left_id, right_id) = (left.page_id(), right.page_id());
    if left.next() != right_id || right.prev() != left_id {
        return Err(damaged(right, format!("sibling links between ({left_id}) and ({right_id}) disagree")));
    }
    let next = right.next();
    let mut neighbour = if next.is_null() { None } else { Some(t.write_page(next, level)?) };
    if let Some(nb) = &neighbour {
        if nb.prev() != right_id {
            return Err(damaged(nb, format!("its previous-page link does not point back to ({right_id})")));
        }
    }
    let n = left.slot_count();
    let mut first = Vec::new();
    for j in 0..right.slot_count() {
        let mut rec = right.record(j).ok_or_else(|| damaged(right, format!("slot {j} is unreadable")))?;
        if level > 0 && j == 0 {
            let child = split_entry(rec).map(|e| e.1).filter(|c| c.len() == CHILD_SIZE);
            let child = child.ok_or_else(|| damaged(right, "internal entry without a child page id"))?;
            encode_entry(sep, child, &mut first);
            rec = &first;
        }
        t.put(left, &PageOp::InsertSlot { slot: n + j, record: rec })?;
    }
    if let Some(nb) = neighbour.as_mut() {
        let nn = nb.next();
        t.db.change(nb, &PageOp::SetLinks { prev: left_id, next: nn })?;
    }
    let prev = left.prev();
    t.db.change(left, &PageOp::SetLinks { prev, next })?;
    Ok(())
}

/// Takes an empty page out of its level's sibling list (and out of the allocation
/// unit's first page, for the leftmost leaf).
fn unlink(t: &Inner, page: &mut PageWriteGuard<'_>) -> Result<()> {
    let level = page.level();
    let id = page.page_id();
    let (prev, next) = (page.prev(), page.next());
    let mut p = if prev.is_null() { None } else { Some(t.write_page(prev, level)?) };
    let mut q = if next.is_null() { None } else { Some(t.write_page(next, level)?) };
    if p.as_ref().is_some_and(|p| p.next() != id) || q.as_ref().is_some_and(|q| q.prev() != id) {
        return Err(damaged(page, "its neighbours' links do not point back to it"));
    }
    if let Some(p) = p.as_mut() {
        let pp = p.prev();
        t.db.change(p, &PageOp::SetLinks { prev: pp, next })?;
    }
    if let Some(q) = q.as_mut() {
        let qn = q.next();
        t.db.change(q, &PageOp::SetLinks { prev, next: qn })?;
    }
    if level == 0 && id == t.first_id() {
        if next.is_null() {
            return Err(damaged(page, "the only leaf of the tree is not its root"));
        }
        t.set_root(t.root_id(), t.root_level(), next)?;
    }
    Ok(())
}

/// Removes entry `i` of an internal page. If it was entry 0, the new entry 0 gets the
/// empty (minus infinity) key: its child now also covers the removed child's range.
fn remove_child(t: &Inner, parent: &mut PageWriteGuard<'_>, i: u16) -> Result<()> {
    t.put(parent, &PageOp::DeleteSlot { slot: i })?;
    if i == 0 && parent.slot_count() > 0 {
        let child = child_at(parent, 0)?;
        t.put(parent, &PageOp::ReplaceSlot { slot: 0, record: &encode_child(&[], child) })?;
    }
    Ok(())
}

/// Replaces an internal root that has a single child by that child, repeatedly.
fn collapse_root<'a>(t: &'a Inner, mut root: PageWriteGuard<'a>) -> Result<()> {
    loop {
        let level = root.level();
        if level == 0 || root.slot_count() > 1 {
            return Ok(());
        }
        if root.slot_count() == 0 {
            return Err(damaged(&root, "the root lost all its children"));
        }
        let child = child_at(&root, 0)?;
        let old = root.page_id();
        drop(root);
        root = t.write_page(child, level - 1)?;
        if !root.prev().is_null() || !root.next().is_null() {
            return Err(damaged(&root, "the only page of its level has sibling links"));
        }
        t.set_root(child, level - 1, t.first_id())?;
        t.db.free_page(t.au, old)?;
    }
}
