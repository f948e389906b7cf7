//! Put objects, kept as checksummed blocks in memory up to a bound, the rest spilled to the data
//! directory. Without a data directory a put that finds memory full waits (backpressure: the
//! daemon stops reading the socket, so the putting client's writes block) until unregistered
//! coflows free memory.
//!
//! A put's object is in the store from its first block and gets follow it block by block
//! (Aalo's streaming puts, see `growth`).
//!
//! An object is whole in memory or whole on disk: the first block that spills takes the blocks
//! already in memory with it. A spill file ends with a manifest (coflow, data id, block lengths
//! and CRCs; see `spill_file`), is written as `.part` and renamed `.spill` when the put completes
//! (before the put is acknowledged), so a restarted daemon can find, verify and serve every
//! completed spilled object. Readers look each block up when they serve it, so an object that
//! moves to disk, or whose file is renamed, while a get streams it goes on being served.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use tokio::io::{AsyncReadExt, AsyncSeekExt};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use super::builder::Builder;
use super::growth::{End, Progress};
use super::spill_file;
use crate::proto::StoredObject;

pub enum Body {
    /// Shared so that a spill can copy it to disk without holding the object's lock.
    Mem(Arc<Vec<u8>>, #[allow(dead_code)] OwnedSemaphorePermit),
    Disk {
        offset: u64,
        len: u32,
    },
}

impl Body {
    pub(super) fn len(&self) -> u32 {
        match self {
            Body::Mem(v, _) => v.len() as u32,
            Body::Disk { len, .. } => *len,
        }
    }
}

pub struct Block {
    pub crc: u32,
    pub body: Body,
}

/// What a put changes and readers look up, under one lock.
pub(super) struct Parts {
    pub(super) blocks: Vec<Block>,
    /// The spill file, once the object spilled; renamed once, `.part` to `.spill`, when the put
    /// completes.
    pub(super) spill: Option<PathBuf>,
}

pub struct Object {
    pub coflow: u64,
    pub data_id: String,
    /// Its record's share of [`RECORDS_BUDGET`], given back when the object goes.
    charge: Option<Charge>,
    /// Grows while the put streams in; readers copy a block's location out under the lock.
    parts: Mutex<Parts>,
    pub progress: Progress,
    /// Set when its coflow is unregistered while the put is still streaming in: the put stops
    /// and frees what it holds.
    cancelled: std::sync::atomic::AtomicBool,
    cancel: tokio::sync::Notify,
}

/// The most bytes the records of one daemon's objects may take in its (re-)registration: the
/// coordinator's message limit less 1 MiB for the flows and the rest of the request. A put
/// past it is refused (adversarial pass 33, B9: 12,000 puts with 500-byte data ids made a
/// registration of 6.3 MB that no restarted coordinator would take, and the daemon was lost).
pub const RECORDS_BUDGET: u64 = crate::rpc::MAX_RPC_BYTES as u64 - (1 << 20);

/// The most objects one daemon holds: the coordinator's default `--max-objects-per-daemon`
/// (past it the coordinator could not locate them).
pub const MAX_OBJECTS: usize = 65_536;

/// An upper bound on the bytes an object's record takes in a registration: the data id and,
/// for the coflow, size and flags, their tags and lengths (at most 40 bytes).
pub fn record_bytes(data_id: &str) -> u64 {
    data_id.len() as u64 + 40
}

/// Bytes counted in a store's records total until dropped.
struct Charge {
    total: Arc<AtomicU64>,
    bytes: u64,
}

impl Drop for Charge {
    fn drop(&mut self) {
        self.total.fetch_sub(self.bytes, Ordering::Relaxed);
    }
}

impl Drop for Object {
    fn drop(&mut self) {
        let parts = self.parts.get_mut().unwrap_or_else(|p| p.into_inner());
        if let Some(p) = &parts.spill {
            let _ = std::fs::remove_file(p);
        }
    }
}

/// Why block `i` cannot be served.
#[derive(Debug)]
pub enum Fetch {
    /// The put completed with fewer blocks: `i` is past the end.
    End,
    Abandoned(String),
    Io(std::io::Error),
}

impl Object {
    /// An object found in a spill file at start (complete, every block on disk).
    pub(super) fn recovered(
        coflow: u64,
        data_id: String,
        blocks: &[(u32, u32)],
        path: PathBuf,
    ) -> Object {
        let mut offset = 0u64;
        let blocks: Vec<Block> = blocks
            .iter()
            .map(|&(len, crc)| {
                let b = Block {
                    crc,
                    body: Body::Disk { offset, len },
                };
                offset += len as u64;
                b
            })
            .collect();
        Object {
            coflow,
            data_id,
            charge: None,
            cancelled: Default::default(),
            cancel: tokio::sync::Notify::new(),
            progress: Progress::complete(blocks.len(), offset),
            parts: Mutex::new(Parts {
                blocks,
                spill: Some(path),
            }),
        }
    }

    /// Tell the put still writing this object to stop.
    pub(super) fn cancel(&self) {
        self.cancelled.store(true, Ordering::Release);
        self.cancel.notify_waiters();
    }

    /// Returns once [`cancel`](Self::cancel) is called.
    pub async fn cancelled(&self) {
        loop {
            let n = self.cancel.notified();
            tokio::pin!(n);
            n.as_mut().enable();
            if self.cancelled.load(Ordering::Acquire) {
                return;
            }
            n.await;
        }
    }

    /// Forget the spill file without deleting it.
    pub(super) fn disown(self) {
        self.lock().spill = None;
    }

    pub(super) fn lock(&self) -> MutexGuard<'_, Parts> {
        self.parts.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The spill file's current name, if the object spilled.
    pub(super) fn spill_path(&self) -> Option<PathBuf> {
        self.lock().spill.clone()
    }

    /// The size, once the put is complete.
    pub fn size(&self) -> Option<u64> {
        let g = self.progress.now();
        (g.end == End::Done).then_some(g.bytes)
    }

    /// The bytes of block `i`, waiting for it while the put is still streaming in (read from
    /// the spill file when it is on disk; `file` keeps the file open between calls of one
    /// reader). Returns its CRC.
    pub async fn read_block(
        &self,
        i: usize,
        buf: &mut Vec<u8>,
        file: &mut Option<tokio::fs::File>,
    ) -> Result<u32, Fetch> {
        let g = self.progress.wait_for_block(i).await;
        if let End::Abandoned(why) = g.end {
            return Err(Fetch::Abandoned(why));
        }
        if g.blocks <= i {
            return Err(Fetch::End);
        }
        let (crc, mem, disk) = {
            let parts = self.lock();
            let b = &parts.blocks[i];
            match &b.body {
                Body::Mem(v, _) => (b.crc, Some(v.clone()), None),
                Body::Disk { offset, len } => (b.crc, None, Some((*offset, *len))),
            }
        };
        if let Some(v) = mem {
            buf.clear();
            buf.extend_from_slice(&v);
        }
        if let Some((offset, len)) = disk {
            let io = async {
                if file.is_none() {
                    *file = Some(self.open_spill().await?);
                }
                let f = file.as_mut().expect("just opened");
                f.seek(std::io::SeekFrom::Start(offset)).await?;
                buf.resize(len as usize, 0);
                f.read_exact(buf).await?;
                Ok::<(), std::io::Error>(())
            };
            io.await.map_err(Fetch::Io)?;
        }
        Ok(crc)
    }

    /// Open the spill file to read. An open handle survives the rename at the put's end; a
    /// reader that looked the name up just before the rename finds the new one on a second look
    /// (rename and the new name are one step under the lock, see `Builder::seal`).
    async fn open_spill(&self) -> std::io::Result<tokio::fs::File> {
        let Some(path) = self.spill_path() else {
            return Err(std::io::Error::other("a disk block without a spill file"));
        };
        match tokio::fs::File::open(&path).await {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => match self.spill_path() {
                Some(renamed) if renamed != path => tokio::fs::File::open(renamed).await,
                _ => Err(e),
            },
            r => r,
        }
    }

    pub(super) fn record(&self) -> StoredObject {
        let g = self.progress.now();
        StoredObject {
            coflow: self.coflow,
            data_id: self.data_id.clone(),
            size_bytes: g.bytes,
            pending: g.end == End::Open,
            abandoned: matches!(g.end, End::Abandoned(_)),
        }
    }
}

pub struct Store {
    pub(super) mem: Arc<Semaphore>,
    mem_limit: u64,
    pub(super) data_dir: Option<PathBuf>,
    pub(super) objects: Mutex<HashMap<(u64, String), Arc<Object>>>,
    pub(super) spilled: AtomicU64,
    seq: AtomicU64,
    /// Every put goes to disk (none is kept in memory), so a restart recovers every completed one.
    pub(super) persist_all: bool,
    /// Bytes the records of the objects held take in a registration ([`record_bytes`]).
    records: Arc<AtomicU64>,
    records_budget: u64,
}

impl Store {
    pub fn new(mem_limit_bytes: u64, data_dir: Option<&Path>) -> Arc<Store> {
        Store::with_persist_all(mem_limit_bytes, data_dir, false)
    }

    /// With `persist_all`, every block goes to `data_dir` (which it needs).
    pub fn with_persist_all(
        mem_limit_bytes: u64,
        data_dir: Option<&Path>,
        persist_all: bool,
    ) -> Arc<Store> {
        let permits = mem_limit_bytes.min(Semaphore::MAX_PERMITS as u64) as usize;
        Arc::new(Store {
            mem: Arc::new(Semaphore::new(permits)),
            mem_limit: permits as u64,
            data_dir: data_dir.map(Path::to_path_buf),
            objects: Mutex::new(HashMap::new()),
            spilled: AtomicU64::new(0),
            seq: AtomicU64::new(0),
            persist_all: persist_all && data_dir.is_some(),
            records: Arc::new(AtomicU64::new(0)),
            records_budget: RECORDS_BUDGET,
        })
    }

    /// A charge of `bytes` to the records total.
    fn charge(&self, bytes: u64) -> Charge {
        self.records.fetch_add(bytes, Ordering::Relaxed);
        Charge {
            total: self.records.clone(),
            bytes,
        }
    }

    /// Bytes the records of the objects held take in a registration (at most
    /// [`RECORDS_BUDGET`], but for objects recovered at start).
    pub fn records_bytes(&self) -> u64 {
        self.records.load(Ordering::Relaxed)
    }

    /// A new `.part` spill file. Data ids are arbitrary text: the name holds a sequence number,
    /// which starts past every number found in the data dir at start (see `recover`).
    pub(super) async fn create_spill(
        &self,
        coflow: u64,
    ) -> std::io::Result<(PathBuf, tokio::fs::File)> {
        let dir = self.data_dir.as_ref().expect("spilling needs a data dir");
        loop {
            let n = self.seq.fetch_add(1, Ordering::Relaxed);
            let path = dir.join(format!("c{coflow}-{n}.{}", spill_file::PART_EXT));
            match tokio::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&path)
                .await
            {
                Ok(f) => return Ok((path, f)),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(e),
            }
        }
    }

    /// Make renames in the data dir durable (best effort: not every platform can).
    pub(super) async fn sync_dir(&self) {
        if let Some(d) = &self.data_dir {
            if let Ok(f) = tokio::fs::File::open(d).await {
                let _ = f.sync_all().await;
            }
        }
    }

    /// Spill file names from now on are numbered from at least `n`.
    pub(super) fn number_spills_from(&self, n: u64) {
        self.seq.fetch_max(n, Ordering::Relaxed);
    }

    /// Add an object recovered at start; gives it back if its (coflow, data id) is taken.
    // An error path of the start only: the large Err costs nothing worth a box.
    #[allow(clippy::result_large_err)]
    pub(super) fn adopt(&self, mut obj: Object) -> Result<(), Object> {
        let key = (obj.coflow, obj.data_id.clone());
        let mut objects = self.objects.lock().unwrap_or_else(|p| p.into_inner());
        if objects.contains_key(&key) {
            return Err(obj);
        }
        obj.charge = Some(self.charge(record_bytes(&obj.data_id)));
        self.spilled
            .fetch_add(obj.progress.now().bytes, Ordering::Relaxed);
        objects.insert(key, Arc::new(obj));
        Ok(())
    }

    /// Start a put; its object is visible (and streams to gets) at once. Fails if the data id
    /// is already taken in this coflow.
    pub fn begin(self: &Arc<Self>, coflow: u64, data_id: &str) -> Result<Builder, String> {
        let key = (coflow, data_id.to_string());
        let mut objects = self.objects.lock().unwrap_or_else(|p| p.into_inner());
        if objects.contains_key(&key) {
            return Err(format!("coflow {coflow} already has data `{data_id}`"));
        }
        if objects.len() >= MAX_OBJECTS {
            return Err(format!(
                "coflow {coflow}: put refused: this daemon holds {} objects, the most it \
                 keeps ({MAX_OBJECTS}, the coordinator's default --max-objects-per-daemon); \
                 unregister finished coflows",
                objects.len()
            ));
        }
        let bytes = record_bytes(data_id);
        let held = self.records.load(Ordering::Relaxed);
        if held + bytes > self.records_budget {
            return Err(format!(
                "coflow {coflow}: a put of data id of {} bytes refused: the records of the {} \
                 objects this daemon holds take {held} bytes of its re-registration, and this \
                 one ({bytes} bytes) would pass the {} bytes it may carry (the coordinator's \
                 {} byte message limit); unregister finished coflows or use shorter data ids",
                data_id.len(),
                objects.len(),
                self.records_budget,
                crate::rpc::MAX_RPC_BYTES
            ));
        }
        let obj = Arc::new(Object {
            coflow,
            data_id: data_id.to_string(),
            charge: Some(self.charge(bytes)),
            parts: Mutex::new(Parts {
                blocks: Vec::new(),
                spill: None,
            }),
            progress: Progress::new(),
            cancelled: Default::default(),
            cancel: tokio::sync::Notify::new(),
        });
        objects.insert(key, obj.clone());
        Ok(Builder::new(self.clone(), obj))
    }

    pub fn get(&self, coflow: u64, data_id: &str) -> Option<Arc<Object>> {
        self.objects
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&(coflow, data_id.to_string()))
            .cloned()
    }

    /// Drop a coflow's objects (memory and spill files are freed once no get still reads
    /// them); puts still streaming in are told to stop, so they free theirs too.
    pub fn drop_coflow(&self, coflow: u64) -> usize {
        let mut objects = self.objects.lock().unwrap_or_else(|p| p.into_inner());
        let before = objects.len();
        objects.retain(|(c, _), o| {
            if *c == coflow && o.size().is_none() {
                o.cancel();
            }
            *c != coflow
        });
        before - objects.len()
    }

    /// Whether puts are bounded by memory alone (no data dir to spill to).
    pub fn memory_only(&self) -> bool {
        self.data_dir.is_none()
    }

    /// The complete objects (puts still streaming in are reported when they complete).
    pub fn list(&self) -> Vec<StoredObject> {
        self.objects
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .values()
            .filter(|o| o.size().is_some())
            .map(|o| o.record())
            .collect()
    }

    /// Bytes held in memory now (never above the bound).
    pub fn mem_used(&self) -> u64 {
        self.mem_limit - self.mem.available_permits() as u64
    }

    pub fn mem_limit(&self) -> u64 {
        self.mem_limit
    }

    pub fn spilled_bytes(&self) -> u64 {
        self.spilled.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::super::recover;
    use super::*;

    /// Adversarial pass 33, B9: puts with long data ids are refused, naming the limit, before
    /// the objects' records would make a registration the coordinator cannot take; the
    /// budget comes back as objects go.
    #[tokio::test]
    async fn puts_stop_before_the_registration_passes_the_message_limit() {
        use prost::Message;
        let store = Store::new(1 << 20, None);
        let id = |n: u32| format!("{n:0>500}");
        let mut held = Vec::new();
        let why = loop {
            let n = held.len() as u32;
            assert!(n < 20_000, "12,000 puts of 500-byte ids were all accepted");
            match store.begin(1 + u64::from(n % 3), &id(n)) {
                Ok(b) => held.push(b),
                Err(e) => break e,
            }
        };
        assert!(why.contains("4194304 byte message limit"), "{why}");
        // Every record, as complete objects of the largest size, fits one registration.
        let objects: Vec<StoredObject> = (0..held.len() as u32)
            .map(|n| StoredObject {
                coflow: u64::MAX,
                data_id: id(n),
                size_bytes: u64::MAX,
                pending: true,
                abandoned: true,
            })
            .collect();
        let req = crate::proto::RegisterDaemonRequest {
            objects,
            addr: "x".repeat(512),
            ..Default::default()
        };
        assert!(
            req.encoded_len() <= RECORDS_BUDGET as usize + 1024,
            "{} > {RECORDS_BUDGET}",
            req.encoded_len()
        );
        assert!(held.len() > 5_000, "{} puts", held.len());
        // Objects dropped give their budget back.
        held.truncate(held.len() - 10);
        store.drop_coflow(1);
        assert!(store.begin(1, &id(1)).is_ok());
    }

    #[tokio::test]
    async fn spills_beyond_the_bound_and_reads_back() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::new(1000, Some(dir.path()));
        let mut b = store.begin(1, "x").unwrap();
        let blocks: Vec<Vec<u8>> = (0..5u8).map(|i| vec![i; 400]).collect();
        for blk in &blocks {
            b.push(crc32fast::hash(blk), blk).await.unwrap();
        }
        // The third block spilled and took the first two with it: the object is whole on disk.
        assert_eq!(store.mem_used(), 0);
        assert_eq!(store.spilled_bytes(), 2000);
        assert!(store.list().is_empty(), "not complete yet");
        b.finish().await.unwrap();
        let o = store.get(1, "x").unwrap();
        assert_eq!(o.size(), Some(2000));
        let mut buf = Vec::new();
        let mut file = None;
        for (i, blk) in blocks.iter().enumerate() {
            let crc = o.read_block(i, &mut buf, &mut file).await.unwrap();
            assert_eq!(&buf, blk);
            assert_eq!(crc, crc32fast::hash(blk));
        }
        assert!(matches!(
            o.read_block(5, &mut buf, &mut file).await,
            Err(Fetch::End)
        ));
        assert!(store.begin(1, "x").is_err(), "duplicate id");
        drop((o, file));
        assert_eq!(store.drop_coflow(1), 1);
        assert_eq!(store.mem_used(), 0);
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    /// A reader of a put in progress gets each block as it is pushed (also from the spill
    /// file), then the end; an abandoned put gives its reason and leaves the store.
    #[tokio::test]
    async fn a_reader_follows_a_put_in_progress() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::new(500, Some(dir.path()));
        let mut b = store.begin(1, "s").unwrap();
        let o = store.get(1, "s").unwrap();
        assert_eq!(o.size(), None);
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let reader = tokio::spawn(async move {
            let (mut buf, mut file) = (Vec::new(), None);
            let mut i = 0;
            loop {
                match o.read_block(i, &mut buf, &mut file).await {
                    Ok(_) => tx.send(buf.clone()).unwrap(),
                    Err(Fetch::End) => return o.size(),
                    Err(e) => panic!("{e:?}"),
                }
                i += 1;
            }
        });
        for k in 0..4u8 {
            let blk = vec![k; 300]; // the second block spills (and takes the first with it)
            b.push(crc32fast::hash(&blk), &blk).await.unwrap();
            assert_eq!(
                rx.recv().await.unwrap(),
                blk,
                "block {k} served before the end"
            );
        }
        let rec = b.finish().await.unwrap();
        assert!(!rec.pending && rec.size_bytes == 1200);
        assert_eq!(reader.await.unwrap(), Some(1200));

        let mut b = store.begin(1, "gone").unwrap();
        b.push(crc32fast::hash(b"ab"), b"ab").await.unwrap();
        let o = store.get(1, "gone").unwrap();
        drop(b);
        let (mut buf, mut file) = (Vec::new(), None);
        match o.read_block(0, &mut buf, &mut file).await {
            Err(Fetch::Abandoned(why)) => assert!(why.contains("without completing"), "{why}"),
            other => panic!("{other:?}"),
        }
        assert!(store.get(1, "gone").is_none());
        assert!(store.begin(1, "gone").is_ok(), "the id is free again");
    }

    /// Where streaming meets recovery: readers that started on the memory copy go on from the
    /// `.part` file after the object moves to disk, and from the same handle after the rename
    /// to `.spill`; a reader that starts after the rename opens the new name.
    #[tokio::test]
    async fn readers_follow_an_object_to_disk_and_through_its_rename() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::new(1000, Some(dir.path()));
        let blocks: Vec<Vec<u8>> = (0..3u8).map(|i| vec![i + 1; 400]).collect();
        let crc = |b: &Vec<u8>| crc32fast::hash(b);
        let mut b = store.begin(1, "m").unwrap();
        let o = store.get(1, "m").unwrap();
        let (mut buf, mut early) = (Vec::new(), None);
        b.push(crc(&blocks[0]), &blocks[0]).await.unwrap();
        o.read_block(0, &mut buf, &mut early).await.unwrap();
        assert!(early.is_none(), "block 0 came from memory");
        assert_eq!(buf, blocks[0]);
        b.push(crc(&blocks[1]), &blocks[1]).await.unwrap();
        b.push(crc(&blocks[2]), &blocks[2]).await.unwrap();
        assert_eq!(
            store.mem_used(),
            0,
            "the third block moved the object to disk"
        );
        let part = o.spill_path().unwrap();
        assert_eq!(part.extension().unwrap(), spill_file::PART_EXT);
        assert_eq!(
            o.read_block(1, &mut buf, &mut early).await.unwrap(),
            crc(&blocks[1])
        );
        assert_eq!(buf, blocks[1]);
        assert!(early.is_some(), "block 1 came from the file");

        b.finish().await.unwrap();
        let done = o.spill_path().unwrap();
        assert_eq!(done.extension().unwrap(), spill_file::DONE_EXT);
        assert!(!part.exists() && done.exists());
        // The early reader's handle outlives the rename.
        assert_eq!(
            o.read_block(2, &mut buf, &mut early).await.unwrap(),
            crc(&blocks[2])
        );
        assert_eq!(buf, blocks[2]);
        assert!(matches!(
            o.read_block(3, &mut buf, &mut early).await,
            Err(Fetch::End)
        ));
        // A late reader opens the renamed file.
        let mut late = None;
        for (i, blk) in blocks.iter().enumerate() {
            assert_eq!(
                o.read_block(i, &mut buf, &mut late).await.unwrap(),
                crc(blk)
            );
            assert_eq!(&buf, blk);
        }
        let v = spill_file::verify(&done).unwrap();
        assert_eq!((v.coflow, v.data_id.as_str(), v.blocks.len()), (1, "m", 3));
    }

    #[tokio::test]
    async fn a_spilled_object_survives_a_new_store_on_the_same_dir() {
        let dir = tempfile::tempdir().unwrap();
        let blocks: Vec<Vec<u8>> = (0..4u8).map(|i| vec![i; 700 + i as usize]).collect();
        {
            let store = Store::new(1000, Some(dir.path()));
            let mut small = store.begin(1, "small").unwrap();
            small.push(crc32fast::hash(b"tiny"), b"tiny").await.unwrap();
            small.finish().await.unwrap();
            let mut b = store.begin(1, "big").unwrap();
            for blk in &blocks {
                b.push(crc32fast::hash(blk), blk).await.unwrap();
            }
            b.finish().await.unwrap();
            // An unfinished put (still streaming, never acknowledged) leaves a `.part` file.
            let mut p = store.begin(2, "cut").unwrap();
            for blk in &blocks {
                p.push(crc32fast::hash(blk), blk).await.unwrap();
            }
            // "Crash": nothing is dropped (dropping would delete the files).
            std::mem::forget((store, p));
        }
        let store = Store::new(1000, Some(dir.path()));
        let r = recover::recover(&store, dir.path()).unwrap();
        assert_eq!((r.recovered, r.incomplete, r.corrupt.len()), (1, 1, 0));
        assert!(store.get(1, "small").is_none(), "memory objects are lost");
        assert!(store.get(2, "cut").is_none(), "unfinished puts are lost");
        let o = store.get(1, "big").unwrap();
        let total: u64 = blocks.iter().map(|b| b.len() as u64).sum();
        assert_eq!(o.size(), Some(total));
        assert_eq!(store.list().len(), 1, "reported to the coordinator");
        assert!(store.begin(1, "big").is_err(), "a recovered id is taken");
        let (mut buf, mut file) = (Vec::new(), None);
        for (i, blk) in blocks.iter().enumerate() {
            assert_eq!(
                o.read_block(i, &mut buf, &mut file).await.unwrap(),
                crc32fast::hash(blk)
            );
            assert_eq!(&buf, blk);
        }
        assert!(matches!(
            o.read_block(blocks.len(), &mut buf, &mut file).await,
            Err(Fetch::End)
        ));
        // A new spill does not overwrite the recovered file.
        let mut n = store.begin(1, "new").unwrap();
        for blk in &blocks {
            n.push(crc32fast::hash(blk), blk).await.unwrap();
        }
        n.finish().await.unwrap();
        drop(file);
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 2);
        assert!(spill_file::verify(&o.spill_path().unwrap()).is_ok());
    }

    #[tokio::test]
    async fn persist_all_writes_every_put_to_disk() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::with_persist_all(1 << 20, Some(dir.path()), true);
        let mut b = store.begin(3, "x").unwrap();
        b.push(crc32fast::hash(b"abc"), b"abc").await.unwrap();
        b.finish().await.unwrap();
        assert_eq!((store.mem_used(), store.spilled_bytes()), (0, 3));
        store.begin(3, "empty").unwrap().finish().await.unwrap();
        let again = Store::new(1 << 20, Some(dir.path()));
        recover::recover(&again, dir.path()).unwrap();
        assert_eq!(again.get(3, "x").unwrap().size(), Some(3));
        assert_eq!(again.get(3, "empty").unwrap().size(), Some(0));
    }
}
