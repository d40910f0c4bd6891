//! Performance counters: what sys.dm_os_performance_counters (and Performance Monitor)
//! show.
//!
//! A counter is one 64-bit value named by (object, counter, instance) with a Windows
//! counter type. Values are raw and cumulative, as in the DMV: a "/sec" counter holds the
//! total since instance start and the reader divides the difference of two samples by the
//! time between them. Code that updates a counter holds a `Counter` handle (an `Arc` around
//! one atomic), so an update is a single atomic add with no lookup.
//!
//! The instance's counters live in one registry (`registry()`); the ones the engine
//! updates today are predefined in `counters()` and, per database, `database_counters()`.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicI64, Ordering::Relaxed};
use std::sync::{Arc, OnceLock};

use parking_lot::RwLock;

/// What a default instance puts before every object name ("SQLServer:Buffer Manager").
/// A named instance would show "MSSQL$NAME:"; this is the one place to change it.
pub const OBJECT_PREFIX: &str = "SQLServer:";

/// Object names (without `OBJECT_PREFIX`) of the counters Mesquite defines.
pub mod objects {
    pub const ACCESS_METHODS: &str = "Access Methods";
    pub const BUFFER_MANAGER: &str = "Buffer Manager";
    pub const DATABASES: &str = "Databases";
    pub const GENERAL_STATISTICS: &str = "General Statistics";
    pub const SQL_STATISTICS: &str = "SQL Statistics";
}

/// The instance name SQL Server gives the sum over all instances of an object.
pub const TOTAL_INSTANCE: &str = "_Total";

// Objects whose listing gains a `_Total` instance summing the others. Only objects whose
// counters are all sums belong here.
const OBJECTS_WITH_TOTAL: &[&str] = &[objects::DATABASES];

/// The Windows performance counter type, shown as cntr_type. The variant names are the
/// Windows names DBAs look up; `code` is the number the DMV shows.
#[allow(non_camel_case_types)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CounterType {
    /// A value as is: a size, a count of things now (User Connections).
    PERF_COUNTER_LARGE_RAWCOUNT,
    /// A cumulative count shown per second (Batch Requests/sec).
    PERF_COUNTER_BULK_COUNT,
    /// A cumulative total averaged per operation; divided by its PERF_LARGE_RAW_BASE.
    PERF_AVERAGE_BULK,
    /// The denominator of a PERF_AVERAGE_BULK or PERF_LARGE_RAW_FRACTION counter.
    PERF_LARGE_RAW_BASE,
    /// A ratio (Buffer cache hit ratio); divided by its PERF_LARGE_RAW_BASE.
    PERF_LARGE_RAW_FRACTION,
}

impl CounterType {
    /// The cntr_type value sys.dm_os_performance_counters shows.
    pub const fn code(self) -> i32 {
        match self {
            CounterType::PERF_COUNTER_LARGE_RAWCOUNT => 65792,
            CounterType::PERF_COUNTER_BULK_COUNT => 272696576,
            CounterType::PERF_AVERAGE_BULK => 1073874176,
            CounterType::PERF_LARGE_RAW_BASE => 1073939712,
            CounterType::PERF_LARGE_RAW_FRACTION => 537003264,
        }
    }
}

struct CounterCell {
    value: PaddedI64,
    object: String,
    counter: String,
    instance: String,
    cntr_type: CounterType,
}

/// The value on a cache line of its own: counters are separate allocations that can land
/// next to each other, and two hot counters (Page reads/sec, Page writes/sec) updated by
/// different cores must not share a line.
#[repr(align(64))]
struct PaddedI64(AtomicI64);

/// A handle to one counter. Cloning is an `Arc` clone; updates are one relaxed atomic.
#[derive(Clone)]
pub struct Counter(Arc<CounterCell>);

impl std::fmt::Debug for Counter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Counter")
            .field("object", &self.0.object)
            .field("counter", &self.0.counter)
            .field("instance", &self.0.instance)
            .field("value", &self.get())
            .finish()
    }
}

impl Counter {
    /// A counter in no registry (tests, or a component's private use). Counters the DMV
    /// should show come from `CounterRegistry::counter`.
    pub fn new(object: &str, counter: &str, instance: &str, cntr_type: CounterType) -> Counter {
        Counter(Arc::new(CounterCell {
            object: object.to_owned(),
            counter: counter.to_owned(),
            instance: instance.to_owned(),
            cntr_type,
            value: PaddedI64(AtomicI64::new(0)),
        }))
    }

    #[inline]
    pub fn add(&self, n: i64) {
        self.0.value.0.fetch_add(n, Relaxed);
    }

    #[inline]
    pub fn inc(&self) {
        self.add(1);
    }

    #[inline]
    pub fn dec(&self) {
        self.add(-1);
    }

    /// For gauges (Page life expectancy, Database pages).
    #[inline]
    pub fn set(&self, v: i64) {
        self.0.value.0.store(v, Relaxed);
    }

    #[inline]
    pub fn get(&self) -> i64 {
        self.0.value.0.load(Relaxed)
    }

    /// The object name without `OBJECT_PREFIX`.
    pub fn object(&self) -> &str {
        &self.0.object
    }

    pub fn counter_name(&self) -> &str {
        &self.0.counter
    }

    pub fn instance_name(&self) -> &str {
        &self.0.instance
    }

    pub fn cntr_type(&self) -> CounterType {
        self.0.cntr_type
    }

    /// Whether two handles update the same counter.
    pub fn same(&self, other: &Counter) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }

    fn snapshot(&self) -> CounterSnapshot {
        CounterSnapshot {
            object_name: format!("{OBJECT_PREFIX}{}", self.0.object),
            counter_name: self.0.counter.clone(),
            instance_name: self.0.instance.clone(),
            cntr_value: self.get(),
            cntr_type: self.0.cntr_type.code(),
        }
    }
}

/// One row of sys.dm_os_performance_counters. The DMV's columns are nchar(128): padding
/// with blanks is the DMV layer's job, these strings are unpadded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CounterSnapshot {
    /// With `OBJECT_PREFIX`: "SQLServer:Buffer Manager".
    pub object_name: String,
    pub counter_name: String,
    /// Empty for objects with a single instance, as in SQL Server.
    pub instance_name: String,
    pub cntr_value: i64,
    pub cntr_type: i32,
}

type Key = (String, String, String);

/// A set of named counters. The instance has one (`registry()`); tests make their own.
#[derive(Default)]
pub struct CounterRegistry {
    // Creation and listing are rare (database open, DMV query); updates go through the
    // handles and never take this lock.
    counters: RwLock<BTreeMap<Key, Counter>>,
}

impl CounterRegistry {
    pub const fn new() -> CounterRegistry {
        CounterRegistry { counters: RwLock::new(BTreeMap::new()) }
    }

    /// The counter named (object, counter, instance), created at zero on first use.
    /// `object` is without `OBJECT_PREFIX`; `instance` is "" for single-instance objects.
    /// If the counter exists, it is returned as is, including its original type.
    pub fn counter(&self, object: &str, counter: &str, instance: &str, cntr_type: CounterType) -> Counter {
        let key = (object.to_owned(), counter.to_owned(), instance.to_owned());
        if let Some(c) = self.counters.read().get(&key) {
            return c.clone();
        }
        self.counters.write().entry(key).or_insert_with(|| Counter::new(object, counter, instance, cntr_type)).clone()
    }

    /// The counter if it exists.
    pub fn find(&self, object: &str, counter: &str, instance: &str) -> Option<Counter> {
        let key = (object.to_owned(), counter.to_owned(), instance.to_owned());
        self.counters.read().get(&key).cloned()
    }

    /// Removes every counter of one instance of an object (a dropped database); returns
    /// how many. Handles still held keep working but are no longer listed.
    pub fn remove_instance(&self, object: &str, instance: &str) -> usize {
        let mut counters = self.counters.write();
        let before = counters.len();
        counters.retain(|(o, _, i), _| !(o == object && i == instance));
        before - counters.len()
    }

    /// Every counter, ordered by object, counter and instance name, as
    /// sys.dm_os_performance_counters lists them. Objects that have a `_Total` instance in
    /// SQL Server get one here, summing that counter over the object's instances.
    pub fn snapshot(&self) -> Vec<CounterSnapshot> {
        let counters = self.counters.read();
        let mut rows = Vec::with_capacity(counters.len() + 8);
        let mut total: Option<CounterSnapshot> = None;
        for ((object, counter, _), c) in counters.iter() {
            let row = c.snapshot();
            if OBJECTS_WITH_TOTAL.contains(&object.as_str()) {
                // The map is ordered, so all instances of one (object, counter) are
                // adjacent: the running total is complete when the name changes.
                match &mut total {
                    Some(t) if t.object_name == row.object_name && &t.counter_name == counter => {
                        t.cntr_value = t.cntr_value.wrapping_add(row.cntr_value);
                    }
                    _ => {
                        if let Some(t) = total.take() {
                            rows.push(t);
                        }
                        total = Some(CounterSnapshot { instance_name: TOTAL_INSTANCE.to_owned(), ..row.clone() });
                    }
                }
            } else if let Some(t) = total.take() {
                rows.push(t);
            }
            rows.push(row);
        }
        if let Some(t) = total.take() {
            rows.push(t);
        }
        rows
    }
}

static REGISTRY: CounterRegistry = CounterRegistry::new();

/// The instance's counter registry.
pub fn registry() -> &'static CounterRegistry {
    &REGISTRY
}

/// The instance-wide counters the engine updates, registered in `registry()` on first use.
#[derive(Debug)]
pub struct InstanceCounters {
    /// SQL Statistics / Batch Requests/sec: one per batch or RPC received.
    pub batch_requests: Counter,
    /// General Statistics / User Connections: connected user sessions now.
    pub user_connections: Counter,
    /// Buffer Manager / Page reads/sec: physical page reads.
    pub page_reads: Counter,
    /// Buffer Manager / Page writes/sec: physical page writes, by any writer.
    pub page_writes: Counter,
    /// Buffer Manager / Checkpoint pages/sec: pages written by checkpoint.
    pub checkpoint_pages: Counter,
    /// Buffer Manager / Lazy writes/sec: pages written by the lazy writer.
    pub lazy_writes: Counter,
    /// Buffer Manager / Page life expectancy: seconds a page stays in the pool.
    pub page_life_expectancy: Counter,
    /// Buffer Manager / Database pages: pages in the pool holding database content.
    pub database_pages: Counter,
    /// Buffer Manager / Target pages: the pool's ideal size in pages.
    pub target_pages: Counter,
    /// Access Methods / Page Splits/sec: index page splits.
    pub page_splits: Counter,
    /// Access Methods / Workfiles Created/sec: partition files of hash joins, hash
    /// aggregates, DISTINCT and set operators past their memory grant.
    pub workfiles_created: Counter,
    /// Access Methods / Worktables Created/sec: spools written to disk past their grant.
    pub worktables_created: Counter,
}

/// The predefined instance-wide counters.
pub fn counters() -> &'static InstanceCounters {
    static COUNTERS: OnceLock<InstanceCounters> = OnceLock::new();
    COUNTERS.get_or_init(|| {
        use objects::*;
        use CounterType::{PERF_COUNTER_BULK_COUNT as PER_SEC, PERF_COUNTER_LARGE_RAWCOUNT as RAW};
        let r = registry();
        InstanceCounters {
            batch_requests: r.counter(SQL_STATISTICS, "Batch Requests/sec", "", PER_SEC),
            user_connections: r.counter(GENERAL_STATISTICS, "User Connections", "", RAW),
            page_reads: r.counter(BUFFER_MANAGER, "Page reads/sec", "", PER_SEC),
            page_writes: r.counter(BUFFER_MANAGER, "Page writes/sec", "", PER_SEC),
            checkpoint_pages: r.counter(BUFFER_MANAGER, "Checkpoint pages/sec", "", PER_SEC),
            lazy_writes: r.counter(BUFFER_MANAGER, "Lazy writes/sec", "", PER_SEC),
            page_life_expectancy: r.counter(BUFFER_MANAGER, "Page life expectancy", "", RAW),
            database_pages: r.counter(BUFFER_MANAGER, "Database pages", "", RAW),
            target_pages: r.counter(BUFFER_MANAGER, "Target pages", "", RAW),
            page_splits: r.counter(ACCESS_METHODS, "Page Splits/sec", "", PER_SEC),
            workfiles_created: r.counter(ACCESS_METHODS, "Workfiles Created/sec", "", PER_SEC),
            worktables_created: r.counter(ACCESS_METHODS, "Worktables Created/sec", "", PER_SEC),
        }
    })
}

/// The SQLServer:Databases counters of one database (instance name = database name).
#[derive(Debug, Clone)]
pub struct DatabaseCounters {
    /// Transactions/sec: transactions started.
    pub transactions: Counter,
    /// Log Flushes/sec: log flushes (one per log block write that hardens commits).
    pub log_flushes: Counter,
    /// Log Bytes Flushed/sec: bytes of log flushed.
    pub log_bytes_flushed: Counter,
    /// Log Flush Wait Time: total milliseconds commits waited for log flushes.
    pub log_flush_wait_time: Counter,
}

impl DatabaseCounters {
    /// Creates (or finds) the counters of `database` in `registry`.
    pub fn in_registry(registry: &CounterRegistry, database: &str) -> DatabaseCounters {
        use objects::DATABASES;
        use CounterType::PERF_COUNTER_BULK_COUNT as PER_SEC;
        DatabaseCounters {
            transactions: registry.counter(DATABASES, "Transactions/sec", database, PER_SEC),
            log_flushes: registry.counter(DATABASES, "Log Flushes/sec", database, PER_SEC),
            log_bytes_flushed: registry.counter(DATABASES, "Log Bytes Flushed/sec", database, PER_SEC),
            // Cumulative milliseconds, shown by Performance Monitor as ms per second.
            log_flush_wait_time: registry.counter(DATABASES, "Log Flush Wait Time", database, PER_SEC),
        }
    }
}

/// The counters of one database in the instance registry, created on first use. Asking
/// again (the database reopens) returns the same counters, which continue from where they
/// were. Callers keep the returned handles rather than asking per update.
pub fn database_counters(database: &str) -> DatabaseCounters {
    DatabaseCounters::in_registry(registry(), database)
}

/// Removes a dropped database's counters from the instance registry.
pub fn drop_database_counters(database: &str) -> usize {
    registry().remove_instance(objects::DATABASES, database)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn type_codes_match_sql_server() {
        assert_eq!(CounterType::PERF_COUNTER_LARGE_RAWCOUNT.code(), 65792);
        assert_eq!(CounterType::PERF_COUNTER_BULK_COUNT.code(), 272696576);
        assert_eq!(CounterType::PERF_AVERAGE_BULK.code(), 1073874176);
        assert_eq!(CounterType::PERF_LARGE_RAW_BASE.code(), 1073939712);
        assert_eq!(CounterType::PERF_LARGE_RAW_FRACTION.code(), 537003264);
    }

    #[test]
    fn concurrent_adds_are_exact() {
        let r = CounterRegistry::new();
        let threads: Vec<_> = (0..4)
            .map(|_| {
                // Each thread looks the counter up itself: all must get the same one.
                let c = r.counter("SQL Statistics", "Batch Requests/sec", "", CounterType::PERF_COUNTER_BULK_COUNT);
                std::thread::spawn(move || {
                    for _ in 0..25_000 {
                        c.inc();
                    }
                    c.add(10);
                })
            })
            .collect();
        for h in threads {
            assert!(h.join().is_ok());
        }
        let c = r.find("SQL Statistics", "Batch Requests/sec", "");
        assert_eq!(c.map(|c| c.get()), Some(100_040));
        assert!(r.find("SQL Statistics", "Batch Requests/sec", "other").is_none());
    }

    #[test]
    fn set_and_rows() {
        let r = CounterRegistry::new();
        let ple = r.counter("Buffer Manager", "Page life expectancy", "", CounterType::PERF_COUNTER_LARGE_RAWCOUNT);
        ple.set(300);
        ple.set(42);
        let again = r.counter("Buffer Manager", "Page life expectancy", "", CounterType::PERF_COUNTER_BULK_COUNT);
        assert!(again.same(&ple));
        // The first type wins.
        assert_eq!(again.cntr_type(), CounterType::PERF_COUNTER_LARGE_RAWCOUNT);
        assert_eq!(
            r.snapshot(),
            vec![CounterSnapshot {
                object_name: "SQLServer:Buffer Manager".into(),
                counter_name: "Page life expectancy".into(),
                instance_name: String::new(),
                cntr_value: 42,
                cntr_type: 65792,
            }]
        );
    }

    #[test]
    fn database_instances_and_total() {
        let r = CounterRegistry::new();
        let a = DatabaseCounters::in_registry(&r, "alpha");
        let b = DatabaseCounters::in_registry(&r, "beta");
        a.transactions.add(3);
        b.transactions.add(4);
        a.log_bytes_flushed.add(1000);
        // Reopening continues the same counters.
        let a2 = DatabaseCounters::in_registry(&r, "alpha");
        assert!(a2.transactions.same(&a.transactions));
        a2.transactions.inc();

        let rows = r.snapshot();
        let value = |counter: &str, instance: &str| {
            rows.iter()
                .find(|s| {
                    s.object_name == "SQLServer:Databases" && s.counter_name == counter && s.instance_name == instance
                })
                .map(|s| s.cntr_value)
        };
        assert_eq!(value("Transactions/sec", "alpha"), Some(4));
        assert_eq!(value("Transactions/sec", "beta"), Some(4));
        assert_eq!(value("Transactions/sec", "_Total"), Some(8));
        assert_eq!(value("Log Bytes Flushed/sec", "_Total"), Some(1000));
        assert_eq!(value("Log Flush Wait Time", "_Total"), Some(0));
        // 4 counters x (2 databases + _Total).
        assert_eq!(rows.len(), 12);
        assert!(rows.iter().all(|s| s.cntr_type == 272696576));

        assert_eq!(r.remove_instance("Databases", "beta"), 4);
        let rows = r.snapshot();
        assert_eq!(rows.len(), 8);
        assert!(rows
            .iter()
            .any(|s| s.instance_name == "_Total" && s.counter_name == "Transactions/sec" && s.cntr_value == 4));
    }

    #[test]
    fn predefined_counters_are_listed() {
        let c = counters();
        c.batch_requests.inc();
        c.user_connections.set(3);
        let db = database_counters("diag_test_db");
        db.log_flushes.inc();
        let rows = registry().snapshot();
        let has = |object: &str, counter: &str, instance: &str, ty: i32| {
            rows.iter().any(|s| {
                s.object_name == object && s.counter_name == counter && s.instance_name == instance && s.cntr_type == ty
            })
        };
        assert!(has("SQLServer:SQL Statistics", "Batch Requests/sec", "", 272696576));
        assert!(has("SQLServer:General Statistics", "User Connections", "", 65792));
        for name in ["Page reads/sec", "Page writes/sec", "Checkpoint pages/sec", "Lazy writes/sec"] {
            assert!(has("SQLServer:Buffer Manager", name, "", 272696576), "{name}");
        }
        for name in ["Page life expectancy", "Database pages", "Target pages"] {
            assert!(has("SQLServer:Buffer Manager", name, "", 65792), "{name}");
        }
        assert!(has("SQLServer:Access Methods", "Page Splits/sec", "", 272696576));
        assert!(has("SQLServer:Databases", "Log Flushes/sec", "diag_test_db", 272696576));
        assert!(has("SQLServer:Databases", "Log Flushes/sec", "_Total", 272696576));
        assert_eq!(drop_database_counters("diag_test_db"), 4);
        assert!(registry().find("Databases", "Log Flushes/sec", "diag_test_db").is_none());
    }
}
