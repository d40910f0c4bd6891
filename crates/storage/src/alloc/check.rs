//! The core of DBCC CHECKALLOC: cross-checks GAM, IAM chains and PFS, reading the pages
//! (never trusting the in-memory caches) and reporting every disagreement.

use super::*;
use std::collections::HashSet;

/// Owner of an extent while checking: no IAM yet, one unit, or more than one.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Owner {
    None,
    Unit(u64),
    Many,
}

impl Database {
    /// Cross-checks the allocation structures (the CHECKALLOC core) and returns the
    /// problems found, empty when consistent:
    /// - every IAM chain is well formed (page types, unit ids, sequence numbers, back
    ///   pointers, one IAM page per file and interval, no loops);
    /// - every extent marked allocated in GAM is owned by exactly one IAM, or is a system
    ///   extent; no extent is owned by two IAMs; every IAM-owned extent is allocated in GAM;
    ///   extents beyond the end of a file are not marked free;
    /// - every page allocated in PFS is a system page or lies in an owned extent; IAM
    ///   pages, and only they, are marked IAM in PFS; system pages are marked allocated;
    ///   SGAM pages are empty (no mixed extents).
    ///
    /// Allocation is paused while it runs. Unreadable pages are reported, not returned as
    /// errors, so one damaged page does not hide the others.
    pub fn check_allocation(&self) -> Result<Vec<String>> {
        let st = self.alloc.state.lock();
        let mut problems = Vec::new();
        let mut owners: HashMap<u16, Vec<Owner>> =
            st.files.iter().map(|(&f, fa)| (f, vec![Owner::None; full_extents(fa.formatted) as usize])).collect();
        let mut iam_pages: HashMap<PageId, u64> = HashMap::new();

        let mut units: Vec<AllocUnit> = self.alloc.units.read().values().cloned().collect();
        units.sort_by_key(|u| u.id);
        for u in &units {
            self.check_chain(&st, u, &mut owners, &mut iam_pages, &mut problems);
        }

        for (&file, fa) in &st.files {
            let owned = owners.get(&file).map(|v| &v[..]).unwrap_or(&[]);
            self.check_gam(file, fa.formatted, owned, &mut problems);
            self.check_pfs(file, fa.formatted, owned, &iam_pages, &mut problems);
        }

        let mut iams: Vec<(&PageId, &u64)> = iam_pages.iter().collect();
        iams.sort_unstable();
        for (&page, &au) in iams {
            match self.pfs_get(page) {
                Ok(b) if b & (PFS_ALLOCATED | PFS_IAM) == PFS_ALLOCATED | PFS_IAM => {}
                Ok(b) => problems.push(format!(
                    "IAM page ({page}) of allocation unit {au} is not marked as an allocated IAM page in PFS (PFS: {})",
                    pfs_flags(b)
                )),
                Err(e) => problems.push(format!("the PFS byte of IAM page ({page}) cannot be read: {e}")),
            }
            let e = Ext::of(page);
            let owner = owners.get(&page.file_id).and_then(|v| v.get(e.ext as usize)).copied().unwrap_or(Owner::None);
            if owner != Owner::Unit(au) {
                problems.push(format!(
                    "IAM page ({page}) of allocation unit {au} lies in extent {e}, which its unit does not own"
                ));
            }
        }
        Ok(problems)
    }

    /// Walks one unit's IAM chain from the pages, recording extent owners and IAM pages.
    fn check_chain(
        &self,
        st: &State,
        u: &AllocUnit,
        owners: &mut HashMap<u16, Vec<Owner>>,
        iam_pages: &mut HashMap<PageId, u64>,
        problems: &mut Vec<String>,
    ) {
        let au = u.id;
        let mut cur = u.first_iam;
        let mut prev = PageId::NULL;
        let mut seq = 0u32;
        let mut intervals = HashSet::new();
        while !cur.is_null() {
            if let Some(other) = iam_pages.get(&cur) {
                problems.push(format!(
                    "the IAM chain of allocation unit {au} reaches IAM page ({cur}) again (already in the chain of unit {other})"
                ));
                return;
            }
            if !st.page_in_range(cur) {
                problems.push(format!(
                    "the IAM chain of allocation unit {au} points to ({cur}), outside the data files (from ({prev}))"
                ));
                return;
            }
            let g = match self.read(cur) {
                Ok(g) => g,
                Err(e) => {
                    problems.push(format!("IAM page ({cur}) of allocation unit {au} cannot be read: {e}"));
                    return;
                }
            };
            if g.page_type() != Some(PageType::Iam) {
                problems.push(format!(
                    "page ({cur}) in the IAM chain of allocation unit {au} is not an IAM page (page type {})",
                    g.page_type_raw()
                ));
                return;
            }
            let h = match IamHeader::decode(g.body()) {
                Ok(h) => h,
                Err(d) => {
                    problems.push(format!("IAM page ({cur}) of allocation unit {au} is damaged: {d}"));
                    return;
                }
            };
            if h.au != au || g.alloc_unit_id() != au {
                problems.push(format!(
                    "IAM page ({cur}) in the chain of allocation unit {au} belongs to unit {} (header {})",
                    h.au,
                    g.alloc_unit_id()
                ));
            }
            if h.seq != seq {
                problems.push(format!(
                    "IAM page ({cur}) of allocation unit {au} has sequence number {}, expected {seq}",
                    h.seq
                ));
            }
            if g.prev() != prev {
                problems.push(format!(
                    "IAM page ({cur}) of allocation unit {au} has previous pointer ({}), expected ({prev})",
                    g.prev()
                ));
            }
            let formatted = st.files.get(&h.file_id).map(|f| f.formatted).unwrap_or(0);
            if h.file_id != cur.file_id || h.interval() >= intervals_in(formatted) {
                problems.push(format!(
                    "IAM page ({cur}) of allocation unit {au} maps file {} from page {}, which does not exist",
                    h.file_id, h.start_page
                ));
            } else if !intervals.insert((h.file_id, h.interval())) {
                problems.push(format!(
                    "allocation unit {au} has more than one IAM page for file {} from page {} (({cur}) is one)",
                    h.file_id, h.start_page
                ));
            } else {
                iam_pages.insert(cur, au);
                let bm = &g.body()[iam::BITMAP..iam::BITMAP + BITMAP_BYTES];
                let base = h.interval() * GAM_INTERVAL_EXTENTS;
                let owned = owners.entry(h.file_id).or_default();
                for (i, &byte) in bm.iter().enumerate() {
                    if byte == 0 {
                        continue;
                    }
                    for j in 0..8 {
                        if byte & (1 << j) == 0 {
                            continue;
                        }
                        let e = Ext { file: h.file_id, ext: base + (i * 8 + j) as u32 };
                        let Some(slot) = owned.get_mut(e.ext as usize) else {
                            problems.push(format!(
                                "IAM page ({cur}) of allocation unit {au} maps extent {e}, beyond the end of the file"
                            ));
                            continue;
                        };
                        if is_system_extent(e.ext) {
                            problems.push(format!("IAM page ({cur}) of allocation unit {au} maps system extent {e}"));
                        }
                        *slot = match *slot {
                            Owner::None => Owner::Unit(au),
                            Owner::Unit(other) => {
                                problems.push(format!(
                                    "Extent {e} in database ID {} is allocated by more than one allocation object (units {other} and {au})",
                                    self.id
                                ));
                                Owner::Many
                            }
                            Owner::Many => {
                                problems.push(format!(
                                    "Extent {e} in database ID {} is allocated by more than one allocation object (unit {au} and others)",
                                    self.id
                                ));
                                Owner::Many
                            }
                        };
                    }
                }
            }
            let next = g.next();
            drop(g);
            prev = cur;
            cur = next;
            seq += 1;
        }
        if u.first_iam.is_null() && st.units.get(&au).is_some_and(|ua| !ua.chain.is_empty()) {
            problems
                .push(format!("allocation unit {au} has IAM pages in memory but no first IAM page in its descriptor"));
        }
    }

    /// GAM against IAM ownership; SGAM empty.
    fn check_gam(&self, file: u16, formatted: u32, owned: &[Owner], problems: &mut Vec<String>) {
        let full = full_extents(formatted);
        for k in 0..intervals_in(formatted) {
            let gid = PageId::new(file, gam_page_of_interval(k));
            let bm = match self.sys_read(gid, PageType::Gam) {
                Ok(g) => g.body()[..BITMAP_BYTES].to_vec(),
                Err(e) => {
                    problems.push(format!(
                        "GAM page ({gid}) cannot be read ({e}); the extents of file {file} from page {} are not checked",
                        interval_start_page(k)
                    ));
                    continue;
                }
            };
            let sid = PageId::new(file, sgam_page_of_interval(k));
            if sid.page_no < formatted {
                match self.sys_read(sid, PageType::Sgam) {
                    Ok(g) if g.body()[..BITMAP_BYTES].iter().all(|&b| b == 0) => {}
                    Ok(_) => {
                        problems.push(format!("SGAM page ({sid}) marks mixed extents, but no mixed extents are used"))
                    }
                    Err(e) => problems.push(format!("SGAM page ({sid}) cannot be read: {e}")),
                }
            }
            let base = k * GAM_INTERVAL_EXTENTS;
            for i in 0..GAM_INTERVAL_EXTENTS as usize {
                let ext = base + i as u32;
                let e = Ext { file, ext };
                let free = bit(&bm, i);
                if ext >= full {
                    if free {
                        problems
                            .push(format!("GAM page ({gid}) marks extent {e}, beyond the end of the file, as free"));
                    }
                    continue;
                }
                let owner = owned.get(ext as usize).copied().unwrap_or(Owner::None);
                if is_system_extent(ext) {
                    if free {
                        problems.push(format!("system extent {e} is marked free in GAM page ({gid})"));
                    }
                    continue;
                }
                match (free, owner) {
                    (true, Owner::None) | (false, Owner::Unit(_)) | (false, Owner::Many) => {}
                    (false, Owner::None) => problems.push(format!(
                        "Extent {e} in database ID {} is marked allocated in the GAM, but no IAM has allocated it",
                        self.id
                    )),
                    (true, Owner::Unit(au)) => problems.push(format!(
                        "Extent {e} in database ID {} is allocated by allocation unit {au} but marked free in the GAM",
                        self.id
                    )),
                    (true, Owner::Many) => problems.push(format!(
                        "Extent {e} in database ID {} is allocated by several allocation units but marked free in the GAM",
                        self.id
                    )),
                }
            }
        }
    }

    /// PFS bytes against extent ownership and the IAM pages found.
    fn check_pfs(
        &self,
        file: u16,
        formatted: u32,
        owned: &[Owner],
        iam_pages: &HashMap<PageId, u64>,
        problems: &mut Vec<String>,
    ) {
        let mut p = FIRST_PFS_PAGE as u64;
        while p < formatted as u64 {
            let pid = PageId::new(file, p as u32);
            let base = if p == FIRST_PFS_PAGE as u64 { 0 } else { p as u32 };
            match self.sys_read(pid, PageType::Pfs) {
                Err(e) => problems.push(format!("PFS page ({pid}) cannot be read ({e}); its pages are not checked")),
                Ok(g) => {
                    let end = (base as u64 + PFS_INTERVAL as u64).min(formatted as u64) as u32;
                    for q in base..end {
                        let b = g.body()[pfs_index(q)];
                        let id = PageId::new(file, q);
                        if is_system_page(file, q) {
                            if b & PFS_ALLOCATED == 0 || b & PFS_IAM != 0 {
                                problems.push(format!(
                                    "system page ({id}) has PFS byte {b:#04x} ({}) in ({pid})",
                                    pfs_flags(b)
                                ));
                            }
                            continue;
                        }
                        if b & PFS_ALLOCATED == 0 {
                            if b & PFS_IAM != 0 {
                                problems
                                    .push(format!("page ({id}) is marked IAM but not allocated in PFS page ({pid})"));
                            }
                            continue;
                        }
                        let ext = extent_of(q);
                        let owner = owned.get(ext as usize).copied().unwrap_or(Owner::None);
                        if is_system_extent(ext) || ext as usize >= owned.len() {
                            problems.push(format!(
                                "page ({id}) is allocated in PFS page ({pid}) but lies in a system extent or past the last full extent"
                            ));
                        } else if owner == Owner::None {
                            problems.push(format!(
                                "Page ({id}) in database ID {} is allocated in PFS ({pid}), but was not allocated in any IAM. PFS flags '{}'",
                                self.id,
                                pfs_flags(b)
                            ));
                        }
                        if b & PFS_IAM != 0 && !iam_pages.contains_key(&id) {
                            problems
                                .push(format!("page ({id}) is marked as an IAM page in PFS but is in no IAM chain"));
                        }
                    }
                }
            }
            p = if p == FIRST_PFS_PAGE as u64 { PFS_INTERVAL as u64 } else { p + PFS_INTERVAL as u64 };
        }
    }
}
