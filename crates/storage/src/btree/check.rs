//! Structural verification of a whole tree (the B+tree part of DBCC CHECKTABLE).

use super::node::*;
use super::{Inner, UNIQUIFIER_LEN};
use crate::error::{Result, StorageError};
use crate::page::PageId;
use std::collections::HashSet;

/// What [`super::BTree::check`] found in a consistent tree.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TreeStats {
    pub root: PageId,
    /// Leftmost leaf.
    pub first_leaf: PageId,
    /// Number of levels (1 when the root is the only leaf).
    pub levels: u32,
    /// Pages per level, index 0 = leaves.
    pub pages_per_level: Vec<u64>,
    pub leaf_pages: u64,
    pub internal_pages: u64,
    /// Leaf entries.
    pub entries: u64,
    /// Bytes used on leaf pages by records and slot entries.
    pub leaf_bytes_used: u64,
    /// Bytes used on internal pages by records and slot entries.
    pub internal_bytes_used: u64,
}

impl TreeStats {
    pub fn pages(&self) -> u64 {
        self.leaf_pages + self.internal_pages
    }

    /// Average leaf fullness, 0..=1 (SQL Server's avg_page_space_used_in_percent / 100).
    pub fn leaf_fill(&self) -> f64 {
        if self.leaf_pages == 0 {
            return 0.0;
        }
        self.leaf_bytes_used as f64 / (self.leaf_pages as f64 * PAGE_CAPACITY as f64)
    }
}

/// One page as seen at its level, for the sibling-link check.
struct Seen {
    id: PageId,
    prev: PageId,
    next: PageId,
}

struct Checker<'a> {
    t: &'a Inner,
    seen: HashSet<PageId>,
    levels: Vec<Vec<Seen>>,
    stats: TreeStats,
}

fn bad(t: &Inner, id: PageId, detail: impl Into<String>) -> StorageError {
    StorageError::corrupt(format!("B-tree page ({id}) of allocation unit {}", t.au), detail)
}

pub(super) fn check(t: &Inner) -> Result<TreeStats> {
    // The SMO gate keeps splits from running in shared mode meanwhile (they only try
    // it), so the walk sees one structure.
    let _gate = t.smo_gate.write();
    let _g = t.shared();
    let root = t.root_id();
    let root_level = t.root_level();
    let au = t.db.alloc_unit(t.au)?;
    if au.root != root || au.first_page != t.first_id() {
        return Err(StorageError::corrupt(
            format!("B-tree of allocation unit {}", t.au),
            format!(
                "the allocation unit records root ({}) and first page ({}), the tree has ({root}) and ({})",
                au.root,
                au.first_page,
                t.first_id()
            ),
        ));
    }
    let mut c = Checker {
        t,
        seen: HashSet::new(),
        levels: (0..=root_level).map(|_| Vec::new()).collect(),
        stats: TreeStats { root, first_leaf: t.first_id(), levels: root_level as u32 + 1, ..Default::default() },
    };
    c.page(root, root_level, None, None, true)?;
    for (level, pages) in c.levels.iter().enumerate() {
        for (j, p) in pages.iter().enumerate() {
            let want_prev = if j == 0 { PageId::NULL } else { pages[j - 1].id };
            let want_next = pages.get(j + 1).map_or(PageId::NULL, |q| q.id);
            if p.prev != want_prev || p.next != want_next {
                return Err(bad(
                    t,
                    p.id,
                    format!(
                        "level {level} sibling links are prev ({}) next ({}), the tree order gives prev ({want_prev}) next ({want_next})",
                        p.prev, p.next
                    ),
                ));
            }
        }
        c.stats.pages_per_level.push(pages.len() as u64);
    }
    let first = c.levels.first().and_then(|l| l.first()).map(|p| p.id);
    if first != Some(t.first_id()) {
        return Err(bad(t, t.first_id(), "the recorded first page is not the leftmost leaf"));
    }
    Ok(c.stats)
}

impl Checker<'_> {
    /// Checks the subtree at `id`, whose keys must lie in `[lower, upper)`.
    fn page(&mut self, id: PageId, level: u8, lower: Option<&[u8]>, upper: Option<&[u8]>, is_root: bool) -> Result<()> {
        let t = self.t;
        if !self.seen.insert(id) {
            return Err(bad(t, id, "the page is reachable twice"));
        }
        let g = t.read_page(id, level)?;
        g.check_structure().map_err(|e| bad(t, id, e.to_string()))?;
        let n = g.slot_count();
        if let Some(l) = self.levels.get_mut(level as usize) {
            l.push(Seen { id, prev: g.prev(), next: g.next() });
        }
        let in_range = |k: &[u8]| {
            let above = match lower {
                Some(l) => k >= l,
                None => true,
            };
            let below = match upper {
                Some(u) => k < u,
                None => true,
            };
            above && below
        };
        if level == 0 {
            // An empty leaf below the root is valid: the right page of an append split
            // stays empty if a crash comes between the split and the insert that follows
            // it (two system transactions), until an insert lands there or a merge takes
            // it.
            let mut prev: Option<&[u8]> = None;
            for s in 0..n {
                let (k, _) = entry(&g, s)?;
                if t.unique_flag() == Some(false) && k.len() < UNIQUIFIER_LEN {
                    return Err(bad(t, id, format!("slot {s}: key without uniquifier in a non-unique tree")));
                }
                if prev.is_some_and(|p| p >= k) {
                    return Err(bad(t, id, format!("slot {s}: keys out of order")));
                }
                if !in_range(k) {
                    return Err(bad(t, id, format!("slot {s}: key outside the range its parent gives")));
                }
                prev = Some(k);
            }
            self.stats.leaf_pages += 1;
            self.stats.entries += n as u64;
            self.stats.leaf_bytes_used += used(&g) as u64;
            return Ok(());
        }
        if is_root && n < 2 {
            return Err(bad(t, id, "internal root with a single child"));
        }
        let mut children: Vec<(Vec<u8>, PageId)> = Vec::with_capacity(n as usize);
        for s in 0..n {
            let (k, _) = entry(&g, s)?;
            let child = child_at(&g, s)?;
            if s == 0 {
                if !k.is_empty() {
                    return Err(bad(t, id, "the first entry of an internal page has a key"));
                }
            } else {
                if k.is_empty() || !in_range(k) {
                    return Err(bad(t, id, format!("slot {s}: separator outside the page's range")));
                }
                if children.last().is_some_and(|(p, _)| s > 1 && p[..] >= *k) {
                    return Err(bad(t, id, format!("slot {s}: separators out of order")));
                }
            }
            children.push((k.to_vec(), child));
        }
        self.stats.internal_pages += 1;
        self.stats.internal_bytes_used += used(&g) as u64;
        drop(g);
        for i in 0..children.len() {
            let lo = if i == 0 { lower } else { Some(&children[i].0[..]) };
            let hi = children.get(i + 1).map(|c| &c.0[..]).or(upper);
            self.page(children[i].1, level - 1, lo, hi, false)?;
        }
        Ok(())
    }
}
