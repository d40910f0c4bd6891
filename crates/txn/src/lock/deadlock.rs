//! Deadlock detection: the wait-for graph, victim selection, the deadlock graph XML
//! and the lock monitor thread.
//!
//! # The graph
//!
//! Nodes are transactions with a waiting request; there is an edge A → B when a
//! request of B keeps A's waiting request from being granted (see
//! `manager::blocks`: an incompatible granted mode, a pending conversion's target, or
//! an incompatible request queued ahead). Edges are read lazily, one shard at a time,
//! during a depth-first search; a cycle found that way is then re-checked with every
//! shard it touches locked at once, so a victim is chosen only for a deadlock that
//! exists.
//!
//! # When the search runs
//!
//! - From every request as it starts to wait (a cheap search from the new waiter:
//!   only its part of the graph is visited). The request that closes a cycle finds it
//!   at once.
//! - From the lock monitor, like SQL Server's: every 5 seconds, dropping to 100 ms
//!   after a search (of either kind) has found deadlocks, and doubling back up to 5 s
//!   while none are found. `LockManager::check_deadlocks_now` runs the same search.
//!
//! Searches are serialized, so one cycle never gets two victims.
//!
//! # The victim
//!
//! As SQL Server chooses: the lowest DEADLOCK_PRIORITY; among equals, the transaction
//! that is cheapest to roll back (least log used); among equals, the one whose wait
//! closed the cycle (the most recent waiter). The victim's waiting request fails with
//! 1205 and leaves the queue (a conversion goes back to its granted mode); its other
//! locks stay until the caller rolls back and calls `release_all`.

use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use parking_lot::MutexGuard;

use super::manager::{blocks, deliver, drop_if_empty, grant_waiters, FxBuild, Inner, ShardInner, Status};
use super::owner::{process_id, Outcome, OwnerShared};
use super::{IsolationLevel, LockMode, LockResource, LockTimeout};

/// A process (waiting transaction) in a deadlock.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeadlockProcess {
    /// The graph's process id ("process" + hex).
    pub id: String,
    pub session_id: i32,
    pub txn_id: u64,
    /// What it waits for.
    pub wait_resource: LockResource,
    /// The mode it waits for (a conversion's target).
    pub lock_mode: LockMode,
    /// Whether the wait is a conversion of a lock it holds.
    pub conversion: bool,
    pub wait_time: Duration,
    pub transaction_name: String,
    pub isolation_level: IsolationLevel,
    pub log_used: u64,
    pub deadlock_priority: i32,
    pub lock_timeout: LockTimeout,
    pub input_buffer: String,
}

/// A request in a resource's owner or waiter list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeadlockRequest {
    /// The process id, as in [`DeadlockProcess::id`].
    pub process_id: String,
    pub mode: LockMode,
    /// "wait" or "convert" for waiters (and for owners that are themselves queued
    /// ahead of a waiter); `None` for granted owners.
    pub request_type: Option<&'static str>,
}

/// A resource in a deadlock: who holds it and who waits for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeadlockResource {
    pub resource: LockResource,
    pub owners: Vec<DeadlockRequest>,
    pub waiters: Vec<DeadlockRequest>,
}

/// One deadlock: what xml_deadlock_report carries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeadlockReport {
    /// Index of the victim in `processes`.
    pub victim: usize,
    /// The processes of the cycle, in cycle order.
    pub processes: Vec<DeadlockProcess>,
    pub resources: Vec<DeadlockResource>,
    pub detected_at: SystemTime,
    /// The deadlock graph, shaped like SQL Server's xml_deadlock_report `<deadlock>`.
    pub xml: String,
}

impl DeadlockReport {
    pub fn victim_process(&self) -> Option<&DeadlockProcess> {
        self.processes.get(self.victim)
    }
}

/// An edge of the wait-for graph: `from`'s waiting request `seq` on `resource` is held
/// back by a request of `to`.
#[derive(Debug, Clone, Copy)]
struct Edge {
    from: u64,
    to: u64,
    resource: LockResource,
    seq: u64,
}

/// The out-edges of a transaction's waiting requests, read one shard at a time.
fn edges_of(inner: &Inner, txn: u64) -> Vec<Edge> {
    let waits: Vec<(u64, LockResource)> = {
        let w = inner.waits.lock();
        match w.get(&txn) {
            Some(v) => v.iter().map(|e| (e.seq, e.resource)).collect(),
            None => return Vec::new(),
        }
    };
    let mut out = Vec::new();
    for (seq, resource) in waits {
        let guard = inner.shard(&resource).0.lock();
        let Some(q) = guard.map.get(&resource) else { continue };
        let Some(i) = q.iter().position(|r| r.seq == seq && r.status != Status::Granted) else { continue };
        for j in 0..q.len() {
            if blocks(q, i, j) && !out.iter().any(|e: &Edge| e.to == q[j].txn_id && e.seq == seq) {
                out.push(Edge { from: txn, to: q[j].txn_id, resource, seq });
            }
        }
    }
    out
}

/// Depth-first search from `start` for a cycle; returns its edges in order.
fn find_cycle(inner: &Inner, start: u64, visited: &mut HashSet<u64, FxBuild>) -> Option<Vec<Edge>> {
    struct Frame {
        node: u64,
        edges: Vec<Edge>,
        next: usize,
    }
    visited.insert(start);
    let mut stack = vec![Frame { node: start, edges: edges_of(inner, start), next: 0 }];
    let mut on_stack: HashMap<u64, usize, FxBuild> = HashMap::with_hasher(FxBuild);
    on_stack.insert(start, 0);
    while let Some(top) = stack.last_mut() {
        if top.next >= top.edges.len() {
            on_stack.remove(&top.node);
            stack.pop();
            continue;
        }
        let e = top.edges[top.next];
        top.next += 1;
        if let Some(&depth) = on_stack.get(&e.to) {
            // Each frame's current edge (the one taken last) leads to the next frame.
            return Some(stack[depth..].iter().map(|f| f.edges[f.next - 1]).collect());
        }
        if !visited.insert(e.to) {
            continue;
        }
        let edges = edges_of(inner, e.to);
        if !edges.is_empty() {
            on_stack.insert(e.to, stack.len());
            stack.push(Frame { node: e.to, edges, next: 0 });
        }
    }
    None
}

/// Searches from a request that just started waiting and resolves what it finds.
pub(crate) fn search_from(inner: &Inner, txn: u64) -> usize {
    let mut reports = Vec::new();
    {
        let _serial = inner.search_lock.lock();
        let mut misses = 0;
        while reports.len() < 16 && misses < 3 {
            let mut visited = HashSet::with_hasher(FxBuild);
            let Some(cycle) = find_cycle(inner, txn, &mut visited) else { break };
            match resolve(inner, &cycle) {
                Some(r) => reports.push(r),
                // The graph changed while we looked: look again.
                None => misses += 1,
            }
        }
    }
    publish(inner, reports)
}

/// A full search over every waiting transaction (the lock monitor's pass).
pub(crate) fn check_all(inner: &Inner) -> usize {
    let mut reports = Vec::new();
    {
        let _serial = inner.search_lock.lock();
        'rounds: for _ in 0..64 {
            let nodes: Vec<u64> = inner.waits.lock().keys().copied().collect();
            let mut visited = HashSet::with_hasher(FxBuild);
            for n in nodes {
                if visited.contains(&n) {
                    continue;
                }
                if let Some(cycle) = find_cycle(inner, n, &mut visited) {
                    if let Some(r) = resolve(inner, &cycle) {
                        reports.push(r);
                    }
                    // The graph changed (a victim left it, or it moved under us):
                    // start the pass again.
                    continue 'rounds;
                }
            }
            break;
        }
    }
    publish(inner, reports)
}

/// Counts the deadlocks and hands their reports to the observer (no locks held).
fn publish(inner: &Inner, reports: Vec<DeadlockReport>) -> usize {
    let n = reports.len();
    if n == 0 {
        return 0;
    }
    inner.stats.deadlocks.fetch_add(n as u64, Relaxed);
    let observer = inner.observer.read().clone();
    if let Some(f) = observer {
        for r in &reports {
            f(r);
        }
    }
    n
}

/// Facts about one cycle member, gathered under the shard locks.
struct Member {
    owner: Arc<OwnerShared>,
    edge: Edge,
    mode: LockMode,
    conversion: bool,
    started: Option<std::time::Instant>,
    timeout: LockTimeout,
}

/// Re-checks a cycle with all its shards locked; if it still holds, chooses and fails
/// the victim and returns the report.
fn resolve(inner: &Inner, cycle: &[Edge]) -> Option<DeadlockReport> {
    let mut idxs: Vec<usize> = cycle.iter().map(|e| inner.shard_index(&e.resource)).collect();
    idxs.sort_unstable();
    idxs.dedup();
    let mut guards: Vec<MutexGuard<'_, ShardInner>> = idxs.iter().map(|&i| inner.shards[i].0.lock()).collect();
    let slot = |r: &LockResource| idxs.binary_search(&inner.shard_index(r)).ok();

    // Verify every edge and gather the members.
    let mut members: Vec<Member> = Vec::with_capacity(cycle.len());
    for e in cycle {
        let q = guards[slot(&e.resource)?].map.get(&e.resource)?;
        let i = q.iter().position(|r| r.seq == e.seq && r.txn_id == e.from && r.status != Status::Granted)?;
        let j = q.iter().position(|r| r.txn_id == e.to)?;
        if !blocks(q, i, j) {
            return None;
        }
        let owner = q[i].waiter.clone()?;
        members.push(Member {
            owner,
            edge: *e,
            mode: q[i].wait_mode()?,
            conversion: matches!(q[i].status, Status::Convert(_)),
            started: None,
            timeout: LockTimeout::Infinite,
        });
    }
    {
        let waits = inner.waits.lock();
        for m in &mut members {
            if let Some(w) = waits.get(&m.edge.from).and_then(|v| v.iter().find(|w| w.seq == m.edge.seq)) {
                m.started = Some(w.started);
                m.timeout = w.timeout;
            }
        }
    }

    // The victim: lowest priority, then least log used, then the latest waiter.
    let victim = (0..members.len()).min_by(|&a, &b| {
        let (ma, mb) = (&members[a], &members[b]);
        let pa = ma.owner.deadlock_priority.load(Relaxed);
        let pb = mb.owner.deadlock_priority.load(Relaxed);
        pa.cmp(&pb)
            .then(ma.owner.log_used.load(Relaxed).cmp(&mb.owner.log_used.load(Relaxed)))
            .then(mb.edge.seq.cmp(&ma.edge.seq))
    })?;

    // The report, from the state before the victim's request is withdrawn.
    let pid: HashMap<u64, String, FxBuild> = members.iter().map(|m| (m.edge.from, process_id(&m.owner))).collect();
    let processes: Vec<DeadlockProcess> = members
        .iter()
        .map(|m| DeadlockProcess {
            id: pid.get(&m.edge.from).cloned().unwrap_or_default(),
            session_id: m.owner.session_id,
            txn_id: m.owner.txn_id,
            wait_resource: m.edge.resource,
            lock_mode: m.mode,
            conversion: m.conversion,
            wait_time: m.started.map(|s| s.elapsed()).unwrap_or_default(),
            transaction_name: m.owner.transaction_name.lock().clone(),
            isolation_level: IsolationLevel::from_number(m.owner.isolation.load(Relaxed)).unwrap_or_default(),
            log_used: m.owner.log_used.load(Relaxed),
            deadlock_priority: m.owner.deadlock_priority.load(Relaxed),
            lock_timeout: m.timeout,
            input_buffer: m.owner.input_buffer.lock().clone(),
        })
        .collect();
    let mut resources: Vec<DeadlockResource> = Vec::new();
    for m in &members {
        let res = m.edge.resource;
        let Some(q) = slot(&res).and_then(|s| guards[s].map.get(&res)) else { continue };
        let k = match resources.iter().position(|r| r.resource == res) {
            Some(k) => k,
            None => {
                resources.push(DeadlockResource { resource: res, owners: Vec::new(), waiters: Vec::new() });
                resources.len() - 1
            }
        };
        let entry = &mut resources[k];
        let waiter_id = pid.get(&m.edge.from).cloned().unwrap_or_default();
        if !entry.waiters.iter().any(|w| w.process_id == waiter_id) {
            entry.waiters.push(DeadlockRequest {
                process_id: waiter_id,
                mode: m.mode,
                request_type: Some(if m.conversion { "convert" } else { "wait" }),
            });
        }
        if let Some(b) = q.iter().find(|r| r.txn_id == m.edge.to) {
            let owner_id = pid.get(&m.edge.to).cloned().unwrap_or_default();
            if !entry.owners.iter().any(|o| o.process_id == owner_id) {
                let request_type = match b.status {
                    Status::Wait => Some("wait"),
                    _ => None,
                };
                entry.owners.push(DeadlockRequest { process_id: owner_id, mode: b.mode, request_type });
            }
        }
    }

    // Fail the victim's request.
    let v = &members[victim];
    let sh: &mut ShardInner = &mut guards[slot(&v.edge.resource)?];
    if let Some(q) = sh.map.get_mut(&v.edge.resource) {
        if let Some(i) = q.iter().position(|r| r.seq == v.edge.seq && r.status != Status::Granted) {
            match q[i].status {
                Status::Convert(_) => {
                    q[i].status = Status::Granted;
                    q[i].seq = 0;
                    q[i].waiter = None;
                }
                _ => {
                    q.remove(i);
                }
            }
            inner.remove_wait(v.edge.from, v.edge.seq);
            deliver(&v.owner, v.edge.seq, Outcome::Victim);
            grant_waiters(inner, q, &v.edge.resource);
        }
    }
    drop_if_empty(sh, &v.edge.resource);
    drop(guards);

    let mut report =
        DeadlockReport { victim, processes, resources, detected_at: SystemTime::now(), xml: String::new() };
    report.xml = deadlock_xml(&report);
    Some(report)
}

/// The lock monitor thread: a full search every interval (see the module docs).
pub(crate) fn monitor_loop(inner: Arc<Inner>) {
    let max = inner.config.monitor_interval;
    let min = inner.config.monitor_min_interval.min(max);
    let mut interval = max;
    let mut seen = inner.stats.deadlocks.load(Relaxed);
    loop {
        {
            let mut st = inner.monitor.lock();
            if st.shutdown {
                return;
            }
            st.interval = interval;
            let _ = inner.monitor_cv.wait_for(&mut st, interval);
            if st.shutdown {
                return;
            }
        }
        check_all(&inner);
        let now = inner.stats.deadlocks.load(Relaxed);
        interval = if now != seen { min } else { (interval * 2).min(max) };
        seen = now;
    }
}

fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\r' => out.push_str("&#xD;"),
            '\n' => out.push_str("&#xA;"),
            c => out.push(c),
        }
    }
    out
}

/// A stable lock id for the graph ("lock" + hex), derived from the resource.
fn lock_id(r: &LockResource) -> String {
    use std::hash::BuildHasher;
    format!("lock{:x}", FxBuild.hash_one(r) >> 24)
}

/// The resource element: its name and the attributes before `id`.
fn resource_element(r: &LockResource) -> (&'static str, String) {
    match *r {
        LockResource::Database { db } => ("databaselock", format!("subresource=\"FULL\" dbid=\"{db}\"")),
        LockResource::Object { db, object_id } => {
            ("objectlock", format!("lockPartition=\"0\" objid=\"{object_id}\" subresource=\"FULL\" dbid=\"{db}\""))
        }
        LockResource::Hobt { db, hobt_id } => {
            ("hobtlock", format!("hobtid=\"{hobt_id}\" subresource=\"FULL\" dbid=\"{db}\""))
        }
        LockResource::Extent { db, file, page } => {
            ("extentlock", format!("fileid=\"{file}\" pageid=\"{page}\" dbid=\"{db}\""))
        }
        LockResource::Page { db, file, page } => {
            ("pagelock", format!("fileid=\"{file}\" pageid=\"{page}\" dbid=\"{db}\" subresource=\"FULL\""))
        }
        LockResource::Key { db, hobt_id, .. } => ("keylock", format!("hobtid=\"{hobt_id}\" dbid=\"{db}\"")),
        LockResource::Rid { db, file, page, .. } => {
            ("ridlock", format!("fileid=\"{file}\" pageid=\"{page}\" dbid=\"{db}\""))
        }
    }
}

/// The deadlock graph as SQL Server's xml_deadlock_report shows it.
pub fn deadlock_xml(report: &DeadlockReport) -> String {
    let mut x = String::with_capacity(2048);
    let _ = writeln!(x, "<deadlock>");
    let _ = writeln!(x, " <victim-list>");
    let _ = writeln!(x, "  <victimProcess id=\"{}\" />", escape(report.victim_process().map_or("", |p| p.id.as_str())));
    let _ = writeln!(x, " </victim-list>");
    let _ = writeln!(x, " <process-list>");
    for p in &report.processes {
        let _ = writeln!(
            x,
            "  <process id=\"{}\" taskpriority=\"{}\" logused=\"{}\" waitresource=\"{}\" waittime=\"{}\" ownerId=\"{}\" transactionname=\"{}\" lockMode=\"{}\" status=\"suspended\" spid=\"{}\" sbid=\"0\" ecid=\"0\" priority=\"{}\" isolationlevel=\"{}\" xactid=\"{}\" currentdb=\"{}\" lockTimeout=\"{}\">",
            escape(&p.id),
            p.deadlock_priority,
            p.log_used,
            escape(&p.wait_resource.to_string()),
            p.wait_time.as_millis(),
            p.txn_id,
            escape(&p.transaction_name),
            p.lock_mode,
            p.session_id,
            p.deadlock_priority,
            escape(&p.isolation_level.deadlock_graph_name()),
            p.txn_id,
            p.wait_resource.database_id(),
            p.lock_timeout.deadlock_graph_value(),
        );
        let _ = writeln!(x, "   <executionStack />");
        let _ = writeln!(x, "   <inputbuf>{}</inputbuf>", escape(&p.input_buffer));
        let _ = writeln!(x, "  </process>");
    }
    let _ = writeln!(x, " </process-list>");
    let _ = writeln!(x, " <resource-list>");
    for r in &report.resources {
        let (name, attrs) = resource_element(&r.resource);
        let mode = r.owners.first().map(|o| o.mode).or_else(|| r.waiters.first().map(|w| w.mode));
        let _ = write!(x, "  <{name} {attrs} id=\"{}\"", lock_id(&r.resource));
        if let Some(m) = mode {
            let _ = write!(x, " mode=\"{m}\"");
        }
        let assoc = r.resource.associated_entity_id();
        if assoc != 0 {
            let _ = write!(x, " associatedObjectId=\"{assoc}\"");
        }
        let _ = writeln!(x, ">");
        let _ = writeln!(x, "   <owner-list>");
        for o in &r.owners {
            let _ = write!(x, "    <owner id=\"{}\" mode=\"{}\"", escape(&o.process_id), o.mode);
            if let Some(t) = o.request_type {
                let _ = write!(x, " requestType=\"{t}\"");
            }
            let _ = writeln!(x, " />");
        }
        let _ = writeln!(x, "   </owner-list>");
        let _ = writeln!(x, "   <waiter-list>");
        for w in &r.waiters {
            let _ = writeln!(
                x,
                "    <waiter id=\"{}\" mode=\"{}\" requestType=\"{}\" />",
                escape(&w.process_id),
                w.mode,
                w.request_type.unwrap_or("wait")
            );
        }
        let _ = writeln!(x, "   </waiter-list>");
        let _ = writeln!(x, "  </{name}>");
    }
    let _ = writeln!(x, " </resource-list>");
    let _ = write!(x, "</deadlock>");
    x
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn xml_escapes_and_shapes() {
        let p = |id: &str, s: i32| DeadlockProcess {
            id: id.into(),
            session_id: s,
            txn_id: s as u64 * 10,
            wait_resource: LockResource::key(5, 72057594038779904, 0x8194443284a0),
            lock_mode: LockMode::X,
            conversion: false,
            wait_time: Duration::from_millis(1500),
            transaction_name: "a<b>&\"c\"".into(),
            isolation_level: IsolationLevel::ReadCommitted,
            log_used: 100,
            deadlock_priority: 0,
            lock_timeout: LockTimeout::Infinite,
            input_buffer: "UPDATE t SET a = 1 WHERE b < 2".into(),
        };
        let report = DeadlockReport {
            victim: 1,
            processes: vec![p("process1a", 51), p("process2b", 52)],
            resources: vec![DeadlockResource {
                resource: LockResource::key(5, 72057594038779904, 0x8194443284a0),
                owners: vec![DeadlockRequest { process_id: "process1a".into(), mode: LockMode::X, request_type: None }],
                waiters: vec![DeadlockRequest {
                    process_id: "process2b".into(),
                    mode: LockMode::X,
                    request_type: Some("wait"),
                }],
            }],
            detected_at: SystemTime::now(),
            xml: String::new(),
        };
        let x = deadlock_xml(&report);
        assert!(x.starts_with("<deadlock>\n <victim-list>\n  <victimProcess id=\"process2b\" />"), "{x}");
        assert!(x.contains("waitresource=\"KEY: 5:72057594038779904 (8194443284a0)\""));
        assert!(x.contains("transactionname=\"a&lt;b&gt;&amp;&quot;c&quot;\""));
        assert!(x.contains("waittime=\"1500\""));
        assert!(x.contains("isolationlevel=\"read committed (2)\""));
        assert!(x.contains("lockTimeout=\"4294967295\""));
        assert!(x.contains("<inputbuf>UPDATE t SET a = 1 WHERE b &lt; 2</inputbuf>"));
        assert!(x.contains("<keylock hobtid=\"72057594038779904\" dbid=\"5\" id=\"lock"));
        assert!(x.contains("associatedObjectId=\"72057594038779904\""));
        assert!(x.contains("<owner id=\"process1a\" mode=\"X\" />"));
        assert!(x.contains("<waiter id=\"process2b\" mode=\"X\" requestType=\"wait\" />"));
        assert!(x.ends_with("</deadlock>"));
        assert_eq!(x.matches("<process ").count(), 2);
    }
}
