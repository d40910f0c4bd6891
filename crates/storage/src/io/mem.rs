//! Memory-only files: fast tests, and the building block of the fault-injecting backend.

use super::{FileSystem, IoFile};
use parking_lot::{Mutex, RwLock};
use std::collections::HashMap;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// A file held in memory. Every write is immediately "durable".
#[derive(Default)]
pub struct MemFile {
    data: RwLock<Vec<u8>>,
}

impl MemFile {
    pub fn from_bytes(bytes: Vec<u8>) -> Self {
        MemFile { data: RwLock::new(bytes) }
    }

    pub fn to_bytes(&self) -> Vec<u8> {
        self.data.read().clone()
    }
}

impl IoFile for MemFile {
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        let data = self.data.read();
        let start = offset as usize;
        let end = start.checked_add(buf.len()).filter(|&e| e <= data.len());
        match end {
            Some(end) => {
                buf.copy_from_slice(&data[start..end]);
                Ok(())
            }
            None => Err(io::Error::new(io::ErrorKind::UnexpectedEof, "read past end of file")),
        }
    }

    fn write_at(&self, offset: u64, src: &[u8]) -> io::Result<()> {
        let mut data = self.data.write();
        let start = offset as usize;
        let end = start + src.len();
        if data.len() < end {
            data.resize(end, 0);
        }
        data[start..end].copy_from_slice(src);
        Ok(())
    }

    fn sync(&self) -> io::Result<()> {
        Ok(())
    }

    fn len(&self) -> io::Result<u64> {
        Ok(self.data.read().len() as u64)
    }

    fn set_len(&self, len: u64) -> io::Result<()> {
        self.data.write().resize(len as usize, 0);
        Ok(())
    }
}

/// A directory tree held in memory.
#[derive(Default)]
pub struct MemFs {
    files: Mutex<HashMap<PathBuf, Arc<MemFile>>>,
}

impl MemFs {
    pub fn new() -> Self {
        Self::default()
    }
}

impl FileSystem for MemFs {
    fn open(&self, path: &Path, create: bool) -> io::Result<Arc<dyn IoFile>> {
        let mut files = self.files.lock();
        if let Some(f) = files.get(path) {
            return Ok(f.clone());
        }
        if !create {
            return Err(io::Error::new(io::ErrorKind::NotFound, format!("{} not found", path.display())));
        }
        let f = Arc::new(MemFile::default());
        files.insert(path.to_path_buf(), f.clone());
        Ok(f)
    }

    fn exists(&self, path: &Path) -> bool {
        self.files.lock().contains_key(path)
    }

    fn remove(&self, path: &Path) -> io::Result<()> {
        match self.files.lock().remove(path) {
            Some(_) => Ok(()),
            None => Err(io::Error::new(io::ErrorKind::NotFound, format!("{} not found", path.display()))),
        }
    }

    fn create_dir_all(&self, _path: &Path) -> io::Result<()> {
        Ok(())
    }
}
