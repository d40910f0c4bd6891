//! Fault injection: a memory backend that can lose power between any two writes.
//!
//! Crash tests across the project rely on the exact semantics below; change them only
//! together with those tests.
//!
//! # Two images per file
//!
//! Every file has a *volatile* image (the page cache: what reads see) and a *durable*
//! image (the platters: what survives a crash).
//!
//! - `write_at` updates the volatile image and appends `(offset, bytes)` to the file's
//!   list of unsynced operations. Writing past the end zero-fills the gap.
//! - `set_len` is applied to the volatile image and appended to the same list.
//! - `sync` applies the file's unsynced operations to its durable image, in order, and
//!   clears the list. Afterwards durable == volatile for that file. Syncing one file never
//!   makes another file's writes durable.
//! - Creating and removing files are directory operations and are durable immediately (a
//!   created file survives a crash, empty if nothing in it was synced; a removed file stays
//!   removed). A handle to a removed file keeps working on its orphaned images, which
//!   `restart` ignores.
//!
//! # Crashes
//!
//! A global counter numbers the successful `write_at` calls of all files (`set_len`,
//! `sync` and failed writes are not counted; a zero-length write is).
//! [`FaultFs::crash_after_writes`]`(n)` arms a crash that fires right after the n-th
//! subsequent write completes: that write is in the volatile image (unsynced) and
//! returned `Ok`, and nothing after it lands in any image. Writes are serialized with respect to the crash, so with many threads
//! writing concurrently exactly `n` more writes succeed. [`FaultFs::crash_now`] crashes
//! at once.
//!
//! Once crashed, every operation on every file (`read_at`, `write_at`, `sync`, `len`,
//! `set_len`) and every `open`, `remove` and `create_dir_all` fails with an `io::Error`
//! of kind `Other` whose message contains `"simulated crash"`, so the engine above stops
//! cleanly instead of carrying on against a dead disk. `exists` keeps answering. The
//! introspection methods (`durable_bytes`, `volatile_bytes`, `unsynced_write_count`,
//! `writes_done`, `corrupt`) work whether or not the file system has crashed.
//!
//! # Restart
//!
//! [`FaultFs::restart`] is a reboot: it crashes this file system (if it has not crashed
//! yet, so stray threads of the dead engine fail from now on) and returns a new,
//! uncrashed `FaultFs` sharing nothing with it. In the new file system each file's
//! contents are its durable image plus its unsynced operations replayed in order, each
//! one, according to the [`TornPolicy`]:
//!
//! - a write is dropped, applied, or torn: split at the 512-byte sector boundaries of the
//!   *file* offsets it covers ([`SECTOR_SIZE`]), each piece applied or not independently
//!   (so an unaligned write tears into a partial first sector, whole sectors, and a partial
//!   last sector). An applied piece past the end extends the file, zero-filling any gap,
//!   so a surviving write beyond the durable size leaves the file at least that long;
//! - a size change is kept or dropped.
//!
//! The new file system's durable and volatile images are both that content, with no
//! unsynced operations, its write counter at 0, no armed crash and no injected errors;
//! the torn-write policy carries over.
//!
//! All randomness comes from a small built-in PRNG (splitmix64) seeded by
//! [`FaultFs::new`]; a restarted file system's generator is seeded from its parent's.
//! The same seed and the same sequence of operations therefore give the same post-crash
//! images, so a failing crash test can be replayed. Files are visited in path order so
//! that hash ordering never perturbs the stream.
//!
//! # Injected errors and bit rot
//!
//! - [`FaultFs::fail_writes_after`]`(n, kind)`: a full disk. The next `n` writes succeed;
//!   from then on every `write_at`, and every `set_len` that grows a file, fails with
//!   `kind` and a "No space left on device" message, without crashing and without
//!   changing any image. Shrinking, reading and syncing still work.
//! - [`FaultFs::fail_reads_at`]`(path, range)`: reads of `path` that overlap `range` fail
//!   (a bad sector).
//! - [`FaultFs::clear_faults`] removes both kinds of injected errors (not an armed crash:
//!   see [`FaultFs::disarm_crash`]).
//! - [`FaultFs::corrupt`]`(path, offset, mask)` XORs `mask` into both images at once, as
//!   bit rot on the medium under a cache that has to re-read it would. A later write over
//!   those bytes replaces them, as rewriting a sector does.
//!
//! # Threads
//!
//! `FaultFs` is a cheap handle (clones share one simulated disk) and is `Send + Sync`.
//! Reads of all files run concurrently; writes are serialized against each other and
//! against the crash so that "nothing after the n-th write lands" holds exactly. It is a
//! test backend: that serialization costs nothing worth measuring at test sizes.

use super::{FileSystem, IoFile, SECTOR_SIZE};
use parking_lot::{Mutex, RwLock};
use std::collections::BTreeMap;
use std::fmt;
use std::io;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// What [`FaultFs::restart`] does with each unsynced operation.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum TornPolicy {
    /// Each unsynced write is dropped, applied or torn (one chance in three each); each
    /// unsynced size change is kept or dropped (one chance in two). The default.
    #[default]
    Random,
    /// Everything unsynced is lost: the files come back exactly as last synced.
    DropAllUnsynced,
    /// Everything unsynced survives: the files come back exactly as last seen by reads.
    KeepAllUnsynced,
    /// Every unsynced write is torn (each sector piece kept with probability 1/2); size
    /// changes are kept or dropped at random.
    TearAll,
}

/// The fault-injecting file system. See the module documentation for the semantics.
#[derive(Clone)]
pub struct FaultFs {
    shared: Arc<Shared>,
}

struct Shared {
    control: Arc<RwLock<Control>>,
    // BTreeMap, not HashMap: restart visits files in a fixed order, which keeps the
    // random stream (and so the post-crash images) a function of the seed alone.
    files: Mutex<BTreeMap<PathBuf, Arc<FaultFile>>>,
}

/// State shared by every file of one FaultFs.
///
/// Lock order: `control`, then the file table, then a file's images. `write_at` holds
/// `control` exclusively while it counts and applies the write, which is what makes the
/// crash atomic; every other file operation holds it shared, so it either finishes before
/// the crash or sees it.
struct Control {
    crashed: bool,
    /// Successful `write_at` calls since this FaultFs was created.
    writes_done: u64,
    /// Value of `writes_done` at which to crash.
    crash_at: Option<u64>,
    /// Writes still allowed before the simulated full disk, and the error kind it reports.
    write_budget: Option<(u64, io::ErrorKind)>,
    read_faults: Vec<(PathBuf, Range<u64>)>,
    policy: TornPolicy,
    rng: SplitMix64,
}

impl Control {
    fn new(rng: SplitMix64, policy: TornPolicy) -> Self {
        Control {
            crashed: false,
            writes_done: 0,
            crash_at: None,
            write_budget: None,
            read_faults: Vec::new(),
            policy,
            rng,
        }
    }

    fn check_alive(&self) -> io::Result<()> {
        if self.crashed {
            Err(crashed_error())
        } else {
            Ok(())
        }
    }

    /// The error a write (or a growing `set_len`) gets once the disk is "full".
    fn disk_full(&self) -> Option<io::Error> {
        match self.write_budget {
            Some((0, kind)) => Some(io::Error::new(kind, "simulated write failure: No space left on device")),
            _ => None,
        }
    }
}

fn crashed_error() -> io::Error {
    io::Error::other("simulated crash: this FaultFs has crashed; restart() it to continue")
}

fn too_large() -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, "FaultFs: offset or length out of range")
}

/// One unsynced operation, in the order it was issued.
#[derive(Clone, Debug)]
enum Pending {
    Write { offset: u64, data: Vec<u8> },
    SetLen(u64),
}

#[derive(Default)]
struct Images {
    volatile: Vec<u8>,
    durable: Vec<u8>,
    /// Invariant: replaying `pending` on `durable` gives `volatile`, unless
    /// `resync_from_volatile` is set.
    pending: Vec<Pending>,
    /// Set by `corrupt` while writes are pending: the flipped bytes may lie under a
    /// pending write or in a zero-filled extension, where replay would not reproduce
    /// them, so the next sync copies the volatile image instead of replaying.
    resync_from_volatile: bool,
}

struct FaultFile {
    path: PathBuf,
    control: Arc<RwLock<Control>>,
    images: RwLock<Images>,
}

impl FaultFs {
    // The policies under names reachable from other crates: `io` re-exports `FaultFs`
    // but not (yet) `TornPolicy`, so integration tests could not otherwise name them.
    /// `TornPolicy::Random`.
    pub const TORN_RANDOM: TornPolicy = TornPolicy::Random;
    /// `TornPolicy::DropAllUnsynced`.
    pub const DROP_ALL_UNSYNCED: TornPolicy = TornPolicy::DropAllUnsynced;
    /// `TornPolicy::KeepAllUnsynced`.
    pub const KEEP_ALL_UNSYNCED: TornPolicy = TornPolicy::KeepAllUnsynced;
    /// `TornPolicy::TearAll`.
    pub const TEAR_ALL: TornPolicy = TornPolicy::TearAll;

    /// An empty file system whose crash behaviour is a function of `seed`.
    pub fn new(seed: u64) -> Self {
        Self::with_parts(Control::new(SplitMix64::new(seed), TornPolicy::default()), BTreeMap::new())
    }

    fn with_parts(control: Control, files: BTreeMap<PathBuf, Arc<FaultFile>>) -> Self {
        FaultFs { shared: Arc::new(Shared { control: Arc::new(RwLock::new(control)), files: Mutex::new(files) }) }
    }

    /// Chooses how [`restart`](Self::restart) treats unsynced operations.
    pub fn set_torn_write_policy(&self, policy: TornPolicy) {
        self.shared.control.write().policy = policy;
    }

    pub fn torn_write_policy(&self) -> TornPolicy {
        self.shared.control.read().policy
    }

    /// Arms a crash right after the `n`-th write from now completes (`n == 0` crashes at
    /// once). Replaces any crash armed before. No effect once crashed.
    pub fn crash_after_writes(&self, n: u64) {
        let mut control = self.shared.control.write();
        if control.crashed {
            return;
        }
        if n == 0 {
            control.crashed = true;
            control.crash_at = None;
        } else {
            control.crash_at = Some(control.writes_done.saturating_add(n));
        }
    }

    /// Cancels a crash armed by [`crash_after_writes`](Self::crash_after_writes) that has
    /// not fired yet.
    pub fn disarm_crash(&self) {
        self.shared.control.write().crash_at = None;
    }

    /// Crashes now: every later operation fails with "simulated crash".
    pub fn crash_now(&self) {
        let mut control = self.shared.control.write();
        control.crashed = true;
        control.crash_at = None;
    }

    pub fn is_crashed(&self) -> bool {
        self.shared.control.read().crashed
    }

    /// Successful `write_at` calls over all files since this FaultFs was created (a
    /// restarted FaultFs starts again at 0). Run a workload once to count its writes,
    /// then rerun it with `crash_after_writes(k)` for k in `1..=count`.
    pub fn writes_done(&self) -> u64 {
        self.shared.control.read().writes_done
    }

    /// Reboots after a power loss: crashes this FaultFs and returns a new one holding the
    /// post-crash files (durable images plus a policy-dependent selection of unsynced
    /// operations, possibly torn). See the module documentation.
    pub fn restart(&self) -> FaultFs {
        // Exclusive control for the whole rebuild: no write can slip in between the
        // crash and the snapshot of the images.
        let mut control = self.shared.control.write();
        control.crashed = true;
        control.crash_at = None;
        let policy = control.policy;

        let files = self.shared.files.lock();
        let mut rebuilt = BTreeMap::new();
        for (path, file) in files.iter() {
            let images = file.images.read();
            let content = replay(&images.durable, &images.pending, policy, &mut control.rng);
            rebuilt.insert(path.clone(), content);
        }
        drop(files);

        // Fork the stream rather than copy it, so that the parent (should it be
        // restarted again) and the child do not make the same choices.
        let child_rng = SplitMix64::new(control.rng.next_u64());
        let fs = Self::with_parts(Control::new(child_rng, policy), BTreeMap::new());
        {
            let mut new_files = fs.shared.files.lock();
            for (path, content) in rebuilt {
                let file = FaultFile::new(path.clone(), fs.shared.control.clone(), content);
                new_files.insert(path, Arc::new(file));
            }
        }
        fs
    }

    /// Simulates a full disk: the next `n` writes succeed, later ones (and growing
    /// `set_len` calls) fail with `kind` (`StorageFull` on Rust 1.83+, or `Other`) until
    /// [`clear_faults`](Self::clear_faults).
    pub fn fail_writes_after(&self, n: u64, kind: io::ErrorKind) {
        self.shared.control.write().write_budget = Some((n, kind));
    }

    /// Makes reads of `path` that overlap `range` fail, as a bad sector would.
    pub fn fail_reads_at(&self, path: &Path, range: Range<u64>) {
        self.shared.control.write().read_faults.push((path.to_path_buf(), range));
    }

    /// Removes injected write and read errors. An armed crash stays armed.
    pub fn clear_faults(&self) {
        let mut control = self.shared.control.write();
        control.write_budget = None;
        control.read_faults.clear();
    }

    /// Bit rot: XORs `xor_mask` into the bytes at `offset` of both images of `path`
    /// (the two differ in length only while a size change is unsynced; bytes beyond the
    /// end of the shorter one are skipped for it). Fails, flipping nothing, if `path` does
    /// not exist or the range reaches past the end of both images: a mask that silently
    /// missed would make a checksum test pass for the wrong reason.
    pub fn corrupt(&self, path: &Path, offset: u64, xor_mask: &[u8]) -> io::Result<()> {
        let file = self.file(path).ok_or_else(|| not_found(path))?;
        let range = span(offset, xor_mask.len())?;
        let mut guard = file.images.write();
        let images = &mut *guard;
        if range.end > images.volatile.len() && range.end > images.durable.len() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("corrupt: {}..{} is past the end of {}", range.start, range.end, path.display()),
            ));
        }
        for image in [&mut images.volatile, &mut images.durable] {
            if let Some(bytes) = image.get_mut(range.start..) {
                for (b, m) in bytes.iter_mut().zip(xor_mask) {
                    *b ^= m;
                }
            }
        }
        if !images.pending.is_empty() {
            images.resync_from_volatile = true;
        }
        Ok(())
    }

    /// The durable image of `path` (what a crash would leave before unsynced writes are
    /// considered), or `None` if there is no such file.
    pub fn durable_bytes(&self, path: &Path) -> Option<Vec<u8>> {
        self.file(path).map(|f| f.images.read().durable.clone())
    }

    /// The volatile image of `path` (what reads see), or `None` if there is no such file.
    pub fn volatile_bytes(&self, path: &Path) -> Option<Vec<u8>> {
        self.file(path).map(|f| f.images.read().volatile.clone())
    }

    /// Number of unsynced operations (writes and size changes) of `path`; 0 if there is
    /// no such file.
    pub fn unsynced_write_count(&self, path: &Path) -> usize {
        self.file(path).map_or(0, |f| f.images.read().pending.len())
    }

    fn file(&self, path: &Path) -> Option<Arc<FaultFile>> {
        self.shared.files.lock().get(path).cloned()
    }
}

impl fmt::Debug for FaultFs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let control = self.shared.control.read();
        f.debug_struct("FaultFs")
            .field("crashed", &control.crashed)
            .field("writes_done", &control.writes_done)
            .field("crash_at", &control.crash_at)
            .field("policy", &control.policy)
            .finish_non_exhaustive()
    }
}

fn not_found(path: &Path) -> io::Error {
    io::Error::new(io::ErrorKind::NotFound, format!("{} not found", path.display()))
}

impl FileSystem for FaultFs {
    fn open(&self, path: &Path, create: bool) -> io::Result<Arc<dyn IoFile>> {
        let control = self.shared.control.read();
        control.check_alive()?;
        let mut files = self.shared.files.lock();
        if let Some(f) = files.get(path) {
            return Ok(f.clone());
        }
        if !create {
            return Err(not_found(path));
        }
        let f = Arc::new(FaultFile::new(path.to_path_buf(), self.shared.control.clone(), Vec::new()));
        files.insert(path.to_path_buf(), f.clone());
        Ok(f)
    }

    fn exists(&self, path: &Path) -> bool {
        self.shared.files.lock().contains_key(path)
    }

    /// Like a real file system (and unlike `MemFs`), removing a missing file is an error.
    fn remove(&self, path: &Path) -> io::Result<()> {
        let control = self.shared.control.read();
        control.check_alive()?;
        match self.shared.files.lock().remove(path) {
            Some(_) => Ok(()),
            None => Err(not_found(path)),
        }
    }

    fn create_dir_all(&self, _path: &Path) -> io::Result<()> {
        self.shared.control.read().check_alive()
    }
}

impl FaultFile {
    fn new(path: PathBuf, control: Arc<RwLock<Control>>, content: Vec<u8>) -> Self {
        let images =
            Images { volatile: content.clone(), durable: content, pending: Vec::new(), resync_from_volatile: false };
        FaultFile { path, control, images: RwLock::new(images) }
    }
}

impl IoFile for FaultFile {
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        let control = self.control.read();
        control.check_alive()?;
        let range = span(offset, buf.len())?;
        let (start, end) = (range.start as u64, range.end as u64);
        let bad = control.read_faults.iter().any(|(p, r)| *p == self.path && start < r.end && r.start < end);
        if bad {
            return Err(io::Error::other(format!(
                "simulated read error (bad sector) in {} at {start}..{end}",
                self.path.display()
            )));
        }
        let images = self.images.read();
        match images.volatile.get(range) {
            Some(src) => {
                buf.copy_from_slice(src);
                Ok(())
            }
            None => Err(io::Error::new(io::ErrorKind::UnexpectedEof, "read past end of file")),
        }
    }

    fn write_at(&self, offset: u64, data: &[u8]) -> io::Result<()> {
        // Exclusive: the count, the write and the crash check form one atomic step.
        let mut control = self.control.write();
        control.check_alive()?;
        if let Some(err) = control.disk_full() {
            return Err(err);
        }
        {
            let mut images = self.images.write();
            // Apply first: if it fails (range overflow, out of memory) nothing is recorded
            // or counted, so the images stay consistent.
            write_into(&mut images.volatile, offset, data)?;
            if !data.is_empty() {
                images.pending.push(Pending::Write { offset, data: data.to_vec() });
            }
        }
        control.writes_done += 1;
        if let Some((left, _)) = &mut control.write_budget {
            *left = left.saturating_sub(1);
        }
        if control.crash_at == Some(control.writes_done) {
            control.crashed = true;
            control.crash_at = None;
        }
        Ok(())
    }

    fn sync(&self) -> io::Result<()> {
        let control = self.control.read();
        control.check_alive()?;
        let mut guard = self.images.write();
        let images = &mut *guard;
        if images.resync_from_volatile {
            images.durable.clone_from(&images.volatile);
        } else {
            for op in &images.pending {
                // Each op succeeded on the volatile image from the same starting state,
                // so it cannot fail here; if it somehow did, fall back to a copy.
                if apply(&mut images.durable, op).is_err() {
                    images.durable.clone_from(&images.volatile);
                    break;
                }
            }
        }
        images.pending.clear();
        images.resync_from_volatile = false;
        Ok(())
    }

    fn len(&self) -> io::Result<u64> {
        let control = self.control.read();
        control.check_alive()?;
        let len = self.images.read().volatile.len();
        Ok(len as u64)
    }

    fn set_len(&self, len: u64) -> io::Result<()> {
        let control = self.control.read();
        control.check_alive()?;
        let mut images = self.images.write();
        if len > images.volatile.len() as u64 {
            // Growing preallocates blocks, so a full disk refuses it too.
            if let Some(err) = control.disk_full() {
                return Err(err);
            }
        }
        resize(&mut images.volatile, len)?;
        images.pending.push(Pending::SetLen(len));
        Ok(())
    }
}

/// `offset..offset+len` as in-memory indexes, or an error if it does not fit.
fn span(offset: u64, len: usize) -> io::Result<Range<usize>> {
    let start = usize::try_from(offset).map_err(|_| too_large())?;
    let end = start.checked_add(len).ok_or_else(too_large)?;
    Ok(start..end)
}

fn resize(image: &mut Vec<u8>, len: u64) -> io::Result<()> {
    let len = usize::try_from(len).map_err(|_| too_large())?;
    if len > image.len() {
        // try_reserve turns an absurd size into an error instead of an abort.
        image.try_reserve(len - image.len()).map_err(|e| io::Error::new(io::ErrorKind::OutOfMemory, e.to_string()))?;
    }
    image.resize(len, 0);
    Ok(())
}

/// Writes `data` at `offset`, zero-filling any gap past the end.
fn write_into(image: &mut Vec<u8>, offset: u64, data: &[u8]) -> io::Result<()> {
    if data.is_empty() {
        return Ok(());
    }
    let range = span(offset, data.len())?;
    if range.end > image.len() {
        resize(image, range.end as u64)?;
    }
    match image.get_mut(range) {
        Some(dst) => {
            dst.copy_from_slice(data);
            Ok(())
        }
        None => Err(too_large()),
    }
}

fn apply(image: &mut Vec<u8>, op: &Pending) -> io::Result<()> {
    match op {
        Pending::Write { offset, data } => write_into(image, *offset, data),
        Pending::SetLen(len) => resize(image, *len),
    }
}

/// Splits a write of `len` bytes at `offset` at the sector boundaries of the file:
/// yields (file offset, range within the data) for each piece.
fn sector_pieces(offset: u64, len: usize) -> impl Iterator<Item = (u64, Range<usize>)> {
    let sector = SECTOR_SIZE as u64;
    let mut pos = 0usize;
    std::iter::from_fn(move || {
        if pos >= len {
            return None;
        }
        let file_off = offset.checked_add(pos as u64)?;
        let to_boundary = (sector - file_off % sector) as usize;
        let n = to_boundary.min(len - pos);
        let piece = (file_off, pos..pos + n);
        pos += n;
        Some(piece)
    })
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Fate {
    Drop,
    Apply,
    Tear,
}

/// The post-crash content of one file: `durable` plus the fate of each pending op.
fn replay(durable: &[u8], pending: &[Pending], policy: TornPolicy, rng: &mut SplitMix64) -> Vec<u8> {
    let mut image = durable.to_vec();
    for op in pending {
        // Errors below cannot happen (the same ops already succeeded on the volatile
        // image, which is never smaller than what they need); treating a failing op as
        // dropped keeps restart infallible.
        match op {
            Pending::Write { offset, data } => {
                let fate = match policy {
                    TornPolicy::Random => match rng.below(3) {
                        0 => Fate::Drop,
                        1 => Fate::Apply,
                        _ => Fate::Tear,
                    },
                    TornPolicy::DropAllUnsynced => Fate::Drop,
                    TornPolicy::KeepAllUnsynced => Fate::Apply,
                    TornPolicy::TearAll => Fate::Tear,
                };
                match fate {
                    Fate::Drop => {}
                    Fate::Apply => {
                        let _ = write_into(&mut image, *offset, data);
                    }
                    Fate::Tear => {
                        for (file_off, piece) in sector_pieces(*offset, data.len()) {
                            if rng.coin() {
                                if let Some(bytes) = data.get(piece) {
                                    let _ = write_into(&mut image, file_off, bytes);
                                }
                            }
                        }
                    }
                }
            }
            Pending::SetLen(len) => {
                let keep = match policy {
                    TornPolicy::Random | TornPolicy::TearAll => rng.coin(),
                    TornPolicy::DropAllUnsynced => false,
                    TornPolicy::KeepAllUnsynced => true,
                };
                if keep {
                    let _ = resize(&mut image, *len);
                }
            }
        }
    }
    image
}

/// splitmix64: tiny, fast, good enough for choosing fates, and needs no dependency.
#[derive(Clone, Debug)]
struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    fn new(seed: u64) -> Self {
        SplitMix64 { state: seed }
    }

    fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (multiply-shift; the bias is negligible for small `n`).
    fn below(&mut self, n: u64) -> u64 {
        ((self.next_u64() as u128 * n as u128) >> 64) as u64
    }

    fn coin(&mut self) -> bool {
        self.next_u64() >> 63 == 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sector_pieces_split_at_file_sector_boundaries() {
        let pieces: Vec<_> = sector_pieces(100, 1000).collect();
        assert_eq!(pieces, vec![(100, 0..412), (512, 412..924), (1024, 924..1000)]);
        let aligned: Vec<_> = sector_pieces(1024, 1024).collect();
        assert_eq!(aligned, vec![(1024, 0..512), (1536, 512..1024)]);
        assert_eq!(sector_pieces(7, 0).count(), 0);
        assert_eq!(sector_pieces(511, 2).collect::<Vec<_>>(), vec![(511, 0..1), (512, 1..2)]);
    }

    #[test]
    fn splitmix_is_deterministic_and_spreads() {
        let mut a = SplitMix64::new(42);
        let mut b = SplitMix64::new(42);
        let xs: Vec<u64> = (0..100).map(|_| a.next_u64()).collect();
        let ys: Vec<u64> = (0..100).map(|_| b.next_u64()).collect();
        assert_eq!(xs, ys);
        let mut counts = [0u32; 3];
        for _ in 0..3000 {
            counts[a.below(3) as usize] += 1;
        }
        assert!(counts.iter().all(|&c| c > 800), "{counts:?}");
    }

    #[test]
    fn replay_extremes() {
        let durable = vec![1u8; 1024];
        let pending = vec![
            Pending::Write { offset: 0, data: vec![2; 512] },
            Pending::SetLen(2048),
            Pending::Write { offset: 4096, data: vec![3; 10] },
        ];
        let mut rng = SplitMix64::new(1);
        assert_eq!(replay(&durable, &pending, TornPolicy::DropAllUnsynced, &mut rng), durable);
        let kept = replay(&durable, &pending, TornPolicy::KeepAllUnsynced, &mut rng);
        assert_eq!(kept.len(), 4106);
        assert_eq!(&kept[..512], &[2u8; 512][..]);
        assert_eq!(&kept[512..1024], &[1u8; 512][..]);
        assert!(kept[1024..4096].iter().all(|&b| b == 0));
        assert_eq!(&kept[4096..], &[3u8; 10][..]);
    }

    #[test]
    fn sync_after_corrupt_with_pending_copies_volatile() {
        let fs = FaultFs::new(0);
        let f = fs.open(Path::new("a"), true).unwrap();
        f.write_at(0, &[0u8; 16]).unwrap();
        fs.corrupt(Path::new("a"), 4, &[0xFF]).unwrap();
        f.sync().unwrap();
        let v = fs.volatile_bytes(Path::new("a")).unwrap();
        assert_eq!(v[4], 0xFF);
        assert_eq!(fs.durable_bytes(Path::new("a")).unwrap(), v);
    }
}
