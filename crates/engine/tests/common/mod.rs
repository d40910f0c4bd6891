//! Helpers shared by the engine's integration tests.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

use engine::{Instance, InstanceConfig, Session};
use sql::ast::{AlterDatabase, CreateDatabase, StatementKind};
use sql::host::{DbId, Host, IndexRef, StoredColumn};
use sql::results::CollectSink;
use types::SqlType;

pub const PASSWORD: &str = "Test#Passw0rd";

/// A directory under the system temp dir, removed when dropped.
pub struct TempDir(PathBuf);

impl TempDir {
    pub fn new(tag: &str) -> TempDir {
        static N: AtomicU32 = AtomicU32::new(0);
        let p = std::env::temp_dir().join(format!(
            "mesquite-engine-{tag}-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p).unwrap();
        TempDir(p)
    }

    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// An on-disk instance with a small pool and no error log file (tests share the process).
pub fn disk_config(dir: &Path) -> InstanceConfig {
    InstanceConfig { error_log_file: false, ..InstanceConfig::on_disk(dir) }
        .with_sa_password(PASSWORD)
        .with_memory_limit(32 << 20)
}

pub fn memory() -> Arc<Instance> {
    Instance::start(InstanceConfig::in_memory(PASSWORD)).expect("in-memory instance starts")
}

pub fn session(inst: &Arc<Instance>) -> Session {
    inst.open_session("sa", PASSWORD, None).expect("sa logs in")
}

pub fn cols(types: &[(SqlType, bool)]) -> Vec<StoredColumn> {
    types
        .iter()
        .map(|&(ty, nullable)| StoredColumn { ty, nullable, sparse: false, code_page: types::CodePage::CP1252 })
        .collect()
}

/// Creates an index in its own transaction and returns its reference.
pub fn create_index(host: &mut dyn Host, db: DbId, object_id: i32, columns: Vec<StoredColumn>) -> IndexRef {
    host.begin("create").unwrap();
    let hobt = host.create_index(db, object_id, 1, &columns).unwrap();
    host.commit(None).unwrap();
    IndexRef { db, hints: Default::default(), hobt, object_id, index_id: 1, columns: columns.into() }
}

pub fn key(n: u32) -> Vec<u8> {
    n.to_be_bytes().to_vec()
}

pub fn create_db_stmt(text: &str) -> CreateDatabase {
    let batch = sql::parse_batch(text).expect("parses");
    match batch.statements.into_iter().next().map(|s| s.kind) {
        Some(StatementKind::CreateDatabase(c)) => *c,
        other => panic!("not CREATE DATABASE: {other:?}"),
    }
}

pub fn alter_db_stmt(text: &str) -> AlterDatabase {
    let batch = sql::parse_batch(text).expect("parses");
    match batch.statements.into_iter().next().map(|s| s.kind) {
        Some(StatementKind::AlterDatabase(a)) => *a,
        other => panic!("not ALTER DATABASE: {other:?}"),
    }
}

/// Runs a batch on `s` and returns what it produced.
pub fn run(s: &mut Session, text: &str) -> CollectSink {
    let mut sink = CollectSink::default();
    s.execute_batch(text, &mut sink);
    sink
}

/// Runs a batch that must not fail.
pub fn ok(s: &mut Session, text: &str) -> CollectSink {
    let sink = run(s, text);
    assert!(sink.errors().is_empty(), "{text}: {:?}", sink.errors());
    sink
}
