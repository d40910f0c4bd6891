//! What an instance starts with, where its data directory is by default, and the lock
//! that keeps a second instance off a directory in use.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use storage::io::FileSystem;

use crate::error::{EngineError, Result};

/// The default buffer pool size when none is given: 1 GB (the pool's memory comes from
/// zeroed pages, so an unused pool costs nothing).
pub const DEFAULT_MEMORY_LIMIT: u64 = 1 << 30;

/// How to start an instance.
#[derive(Clone, Default)]
pub struct InstanceConfig {
    /// The data directory: system and user database files, the lock file and the error
    /// log (`log/ERRORLOG`).
    pub data_dir: PathBuf,
    /// Keep every file in memory (MemFs): nothing survives the instance. For tests.
    pub in_memory: bool,
    /// Buffer pool size in bytes (default [`DEFAULT_MEMORY_LIMIT`]).
    pub memory_limit_bytes: Option<u64>,
    /// The `sa` password used when the instance is created (first start). Without one,
    /// `MESQUITE_SA_PASSWORD` is used, else a password is generated and handed out once
    /// by [`crate::Instance::first_start_sa_password`]. Later starts use the stored hash.
    pub sa_password: Option<String>,
    /// A file system to use instead of the operating system's (or MemFs with
    /// `in_memory`): lets tests keep an in-memory or fault-injecting file system across
    /// restarts. No lock file is taken on it.
    pub filesystem: Option<Arc<dyn FileSystem>>,
    /// Write the error log to `<data_dir>/log/ERRORLOG` (on the OS file system only).
    /// Default on for `on_disk`; embedded users and tests may leave it to the in-memory
    /// ring (`diag::errorlog::recent`).
    pub error_log_file: bool,
    /// How many session workers run at once (SQLOS-style schedulers, see
    /// `diag::sched`): default the number of CPUs; 0 lets every worker run at once.
    /// The schedulers are per process, so the last instance started sets them.
    pub schedulers: Option<usize>,
}

impl std::fmt::Debug for InstanceConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The password is never printed.
        f.debug_struct("InstanceConfig")
            .field("data_dir", &self.data_dir)
            .field("in_memory", &self.in_memory)
            .field("memory_limit_bytes", &self.memory_limit_bytes)
            .field("sa_password", &self.sa_password.as_ref().map(|_| "***"))
            .field("filesystem", &self.filesystem.is_some())
            .field("error_log_file", &self.error_log_file)
            .field("schedulers", &self.schedulers)
            .finish()
    }
}

impl InstanceConfig {
    /// An instance on `data_dir` on disk, with the error log file.
    pub fn on_disk(data_dir: impl Into<PathBuf>) -> InstanceConfig {
        InstanceConfig { data_dir: data_dir.into(), error_log_file: true, ..Default::default() }
    }

    /// An in-memory instance (tests): `sa` logs in with `sa_password`.
    pub fn in_memory(sa_password: &str) -> InstanceConfig {
        InstanceConfig {
            data_dir: PathBuf::from("/mesquite-in-memory"),
            in_memory: true,
            memory_limit_bytes: Some(64 << 20),
            sa_password: Some(sa_password.to_string()),
            ..Default::default()
        }
    }

    /// An instance on the default data directory ([`default_data_dir`]).
    pub fn default_location() -> InstanceConfig {
        InstanceConfig::on_disk(default_data_dir())
    }

    pub fn with_sa_password(mut self, password: &str) -> InstanceConfig {
        self.sa_password = Some(password.to_string());
        self
    }

    pub fn with_memory_limit(mut self, bytes: u64) -> InstanceConfig {
        self.memory_limit_bytes = Some(bytes);
        self
    }
}

/// The embedded default data directory: `$MESQUITE_DATA_DIR`, else
/// `$XDG_DATA_HOME/mesquite`, else `~/.local/share/mesquite`.
pub fn default_data_dir() -> PathBuf {
    if let Some(d) = std::env::var_os("MESQUITE_DATA_DIR").filter(|d| !d.is_empty()) {
        return PathBuf::from(d);
    }
    if let Some(d) = std::env::var_os("XDG_DATA_HOME").filter(|d| !d.is_empty()) {
        return PathBuf::from(d).join("mesquite");
    }
    let home = std::env::var_os("HOME").map(PathBuf::from).unwrap_or_else(|| PathBuf::from("."));
    home.join(".local/share/mesquite")
}

/// An exclusive lock on `<data>/mesquite.lock`, held for the life of the instance, so a
/// second instance on the same directory fails clearly instead of corrupting files. The
/// lock is the operating system's (flock): it goes away with the process, so a crashed
/// instance never leaves a stale lock behind.
pub struct DataDirLock {
    _file: std::fs::File,
}

impl DataDirLock {
    pub fn acquire(dir: &Path) -> Result<DataDirLock> {
        use std::os::unix::io::AsRawFd;
        std::fs::create_dir_all(dir).map_err(|e| {
            EngineError::DataDirectory(format!("cannot create the data directory {}: {e}", dir.display()))
        })?;
        // The directory holds master (every login's salt and hash), the error log and the
        // databases: its owner only, whoever created it (docs/architecture.md, "Files
        // at rest"). Files created inside are owner-only through the process umask.
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700)).map_err(|e| {
                EngineError::DataDirectory(format!("cannot make the data directory {} private: {e}", dir.display()))
            })?;
        }
        let path = dir.join("mesquite.lock");
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(|e| EngineError::DataDirectory(format!("cannot open {}: {e}", path.display())))?;
        // SAFETY: flock on a valid descriptor this function owns.
        let rc = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
        if rc != 0 {
            return Err(EngineError::DataDirectory(format!(
                "another Mesquite instance is using the data directory {} (lock file {} is held)",
                dir.display(),
                path.display()
            )));
        }
        Ok(DataDirLock { _file: file })
    }
}
