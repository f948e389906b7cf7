//! Put objects, kept as checksummed blocks in memory up to a bound, the rest spilled to the data
//! directory. Without a data directory a put that finds memory full waits (backpressure: the
//! daemon stops reading the socket, so the putting client's writes block) until unregistered
//! coflows free memory.
//!
//! An object is whole in memory or whole on disk: the first block that spills takes the blocks
//! already in memory with it. A spill file ends with a manifest (coflow, data id, block lengths
//! and CRCs; see `recover`), is written as `.part` and renamed when the put completes, so a
//! restarted daemon can find, verify and serve every completed spilled object.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use tokio::io::{AsyncReadExt, AsyncSeekExt, AsyncWriteExt};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::proto::StoredObject;

pub enum Body {
    Mem(Vec<u8>, #[allow(dead_code)] OwnedSemaphorePermit),
    Disk { offset: u64, len: u32 },
}

pub struct Block {
    pub crc: u32,
    pub body: Body,
}

pub struct Object {
    pub coflow: u64,
    pub data_id: String,
    pub size: u64,
    pub blocks: Vec<Block>,
    spill: Option<PathBuf>,
}

impl Object {
    /// An object found in a spill file at start (every block on disk).
    pub(super) fn recovered(
        coflow: u64,
        data_id: String,
        blocks: &[(u32, u32)],
        path: PathBuf,
    ) -> Object {
        let mut offset = 0u64;
        let blocks = blocks
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
            size: offset,
            blocks,
            spill: Some(path),
        }
    }
}

impl Object {
    /// Forget the spill file without deleting it.
    pub(super) fn disown(mut self) {
        self.spill = None;
    }
}

impl Drop for Object {
    fn drop(&mut self) {
        if let Some(p) = &self.spill {
            let _ = std::fs::remove_file(p);
        }
    }
}

impl Object {
    /// The bytes of block `i` (read from the spill file when it is on disk; `file` keeps the
    /// file open between calls of one reader).
    pub async fn read_block(
        &self,
        i: usize,
        buf: &mut Vec<u8>,
        file: &mut Option<tokio::fs::File>,
    ) -> std::io::Result<u32> {
        let b = &self.blocks[i];
        match &b.body {
            Body::Mem(v, _) => {
                buf.clear();
                buf.extend_from_slice(v);
            }
            Body::Disk { offset, len } => {
                if file.is_none() {
                    let path = self.spill.as_ref().expect("disk blocks have a spill file");
                    *file = Some(tokio::fs::File::open(path).await?);
                }
                let f = file.as_mut().expect("just opened");
                f.seek(std::io::SeekFrom::Start(*offset)).await?;
                buf.resize(*len as usize, 0);
                f.read_exact(buf).await?;
            }
        }
        Ok(b.crc)
    }
}

/// An object being put: blocks accumulate here and become visible when complete.
pub struct Builder {
    store: Arc<Store>,
    obj: Object,
    file: Option<tokio::fs::File>,
    file_len: u64,
}

impl Builder {
    /// Add one block (its checksum already verified). May wait for memory.
    pub async fn push(&mut self, crc: u32, data: &[u8]) -> std::io::Result<()> {
        let len = data.len() as u32;
        // Once spilling, the rest of the object follows it to disk (whole objects on disk).
        let on_disk = self.store.persist_all || self.file.is_some();
        let permit = match self.store.mem.clone().try_acquire_many_owned(len) {
            _ if on_disk => None,
            Ok(p) => Some(p),
            Err(_) if self.store.data_dir.is_some() => None,
            Err(_) => Some(
                self.store
                    .mem
                    .clone()
                    .acquire_many_owned(len)
                    .await
                    .map_err(|_| std::io::Error::other("store closed"))?,
            ),
        };
        let body = match permit {
            Some(p) => Body::Mem(data.to_vec(), p),
            None => {
                if self.file.is_none() {
                    self.start_spill().await?;
                }
                self.file
                    .as_mut()
                    .expect("just made")
                    .write_all(data)
                    .await?;
                let offset = self.file_len;
                self.file_len += len as u64;
                self.store.spilled.fetch_add(len as u64, Ordering::Relaxed);
                Body::Disk { offset, len }
            }
        };
        self.obj.size += len as u64;
        self.obj.blocks.push(Block { crc, body });
        Ok(())
    }

    /// Open the spill file and move the blocks held in memory so far into it.
    async fn start_spill(&mut self) -> std::io::Result<()> {
        let (path, file) = self.store.create_spill(self.obj.coflow).await?;
        self.obj.spill = Some(path);
        let f = self.file.insert(file);
        for b in &mut self.obj.blocks {
            if let Body::Mem(v, _) = &b.body {
                f.write_all(v).await?;
                let len = v.len() as u32;
                // Replacing the body drops the memory permit.
                b.body = Body::Disk {
                    offset: self.file_len,
                    len,
                };
                self.file_len += len as u64;
                self.store.spilled.fetch_add(len as u64, Ordering::Relaxed);
            }
        }
        Ok(())
    }

    pub fn size(&self) -> u64 {
        self.obj.size
    }

    /// Make the object visible. Fails if the data id is already taken in this coflow.
    pub async fn finish(mut self) -> Result<StoredObject, String> {
        if self.store.persist_all && self.file.is_none() {
            // An empty object has had no block to open its file.
            self.start_spill()
                .await
                .map_err(|e| format!("spill file: {e}"))?;
        }
        let spilled = self.file.is_some();
        if let Some(mut f) = self.file.take() {
            let lens = self.obj.blocks.iter().map(|b| match b.body {
                Body::Disk { len, .. } => (len, b.crc),
                Body::Mem(..) => unreachable!("a spilled object is whole on disk"),
            });
            let manifest =
                super::recover::manifest(self.obj.coflow, &self.obj.data_id, self.obj.size, lens);
            let err = |e: std::io::Error| format!("spill file: {e}");
            f.write_all(&manifest).await.map_err(err)?;
            f.flush().await.map_err(err)?;
            f.sync_data().await.map_err(err)?;
        }
        let key = (self.obj.coflow, self.obj.data_id.clone());
        let rec = StoredObject {
            coflow: self.obj.coflow,
            data_id: self.obj.data_id.clone(),
            size_bytes: self.obj.size,
        };
        let mut objects = self.store.objects.lock().unwrap_or_else(|p| p.into_inner());
        if objects.contains_key(&key) {
            return Err(format!("coflow {} already has data `{}`", key.0, key.1));
        }
        if spilled {
            // Complete: from now on a restart recovers it (`.part` files are dropped).
            let part = self.obj.spill.take().expect("a spilled object has a file");
            let done = part.with_extension(super::recover::DONE_EXT);
            if let Err(e) = std::fs::rename(&part, &done) {
                self.obj.spill = Some(part);
                return Err(format!("spill file: {e}"));
            }
            self.obj.spill = Some(done);
        }
        let obj = std::mem::replace(
            &mut self.obj,
            Object {
                coflow: 0,
                data_id: String::new(),
                size: 0,
                blocks: Vec::new(),
                spill: None,
            },
        );
        objects.insert(key, Arc::new(obj));
        drop(objects);
        if spilled {
            self.store.sync_dir();
        }
        Ok(rec)
    }
}

pub struct Store {
    mem: Arc<Semaphore>,
    mem_limit: u64,
    data_dir: Option<PathBuf>,
    objects: Mutex<HashMap<(u64, String), Arc<Object>>>,
    spilled: AtomicU64,
    seq: AtomicU64,
    /// Every put goes to disk (none is kept in memory), so a restart recovers all of them.
    persist_all: bool,
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
        })
    }

    /// A new `.part` spill file. Data ids are arbitrary text: the name holds a sequence number,
    /// which starts past every number found in the data dir at start (see `recover`).
    async fn create_spill(&self, coflow: u64) -> std::io::Result<(PathBuf, tokio::fs::File)> {
        let dir = self.data_dir.as_ref().expect("spilling needs a data dir");
        loop {
            let n = self.seq.fetch_add(1, Ordering::Relaxed);
            let path = dir.join(format!("c{coflow}-{n}.{}", super::recover::PART_EXT));
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
    fn sync_dir(&self) {
        if let Some(d) = &self.data_dir {
            if let Ok(f) = std::fs::File::open(d) {
                let _ = f.sync_all();
            }
        }
    }

    /// Spill file names from now on are numbered from at least `n`.
    pub(super) fn number_spills_from(&self, n: u64) {
        self.seq.fetch_max(n, Ordering::Relaxed);
    }

    /// Add an object recovered at start; gives it back if its (coflow, data id) is taken.
    pub(super) fn adopt(&self, obj: Object) -> Result<(), Object> {
        let key = (obj.coflow, obj.data_id.clone());
        let mut objects = self.objects.lock().unwrap_or_else(|p| p.into_inner());
        if objects.contains_key(&key) {
            return Err(obj);
        }
        self.spilled.fetch_add(obj.size, Ordering::Relaxed);
        objects.insert(key, Arc::new(obj));
        Ok(())
    }

    pub fn begin(self: &Arc<Self>, coflow: u64, data_id: &str) -> Builder {
        Builder {
            store: self.clone(),
            obj: Object {
                coflow,
                data_id: data_id.to_string(),
                size: 0,
                blocks: Vec::new(),
                spill: None,
            },
            file: None,
            file_len: 0,
        }
    }

    pub fn get(&self, coflow: u64, data_id: &str) -> Option<Arc<Object>> {
        self.objects
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&(coflow, data_id.to_string()))
            .cloned()
    }

    /// Drop a coflow's objects (memory is freed once no get still reads them).
    pub fn drop_coflow(&self, coflow: u64) -> usize {
        let mut objects = self.objects.lock().unwrap_or_else(|p| p.into_inner());
        let before = objects.len();
        objects.retain(|(c, _), _| *c != coflow);
        before - objects.len()
    }

    pub fn list(&self) -> Vec<StoredObject> {
        self.objects
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .values()
            .map(|o| StoredObject {
                coflow: o.coflow,
                data_id: o.data_id.clone(),
                size_bytes: o.size,
            })
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
    use super::*;

    #[tokio::test]
    async fn spills_beyond_the_bound_and_reads_back() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::new(1000, Some(dir.path()));
        let mut b = store.begin(1, "x");
        let blocks: Vec<Vec<u8>> = (0..5u8).map(|i| vec![i; 400]).collect();
        for blk in &blocks {
            b.push(crc32fast::hash(blk), blk).await.unwrap();
        }
        // The third block spilled and took the first two with it: the object is whole on disk.
        assert_eq!(store.mem_used(), 0);
        assert_eq!(store.spilled_bytes(), 2000);
        b.finish().await.unwrap();
        let o = store.get(1, "x").unwrap();
        let mut buf = Vec::new();
        let mut file = None;
        for (i, blk) in blocks.iter().enumerate() {
            let crc = o.read_block(i, &mut buf, &mut file).await.unwrap();
            assert_eq!(&buf, blk);
            assert_eq!(crc, crc32fast::hash(blk));
        }
        assert!(store.begin(1, "x").finish().await.is_err(), "duplicate id");
        drop((o, file));
        assert_eq!(store.drop_coflow(1), 1);
        assert_eq!(store.mem_used(), 0);
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    #[tokio::test]
    async fn a_spilled_object_survives_a_new_store_on_the_same_dir() {
        let dir = tempfile::tempdir().unwrap();
        let blocks: Vec<Vec<u8>> = (0..4u8).map(|i| vec![i; 700 + i as usize]).collect();
        {
            let store = Store::new(1000, Some(dir.path()));
            let mut small = store.begin(1, "small");
            small.push(crc32fast::hash(b"tiny"), b"tiny").await.unwrap();
            small.finish().await.unwrap();
            let mut b = store.begin(1, "big");
            for blk in &blocks {
                b.push(crc32fast::hash(blk), blk).await.unwrap();
            }
            b.finish().await.unwrap();
            // An unfinished put leaves a `.part` file behind.
            let mut p = store.begin(2, "cut");
            for blk in &blocks {
                p.push(crc32fast::hash(blk), blk).await.unwrap();
            }
            // "Crash": nothing is dropped (dropping would delete the files).
            std::mem::forget((store, p));
        }
        let store = Store::new(1000, Some(dir.path()));
        let r = super::super::recover::recover(&store, dir.path()).unwrap();
        assert_eq!((r.recovered, r.incomplete, r.corrupt.len()), (1, 1, 0));
        assert!(store.get(1, "small").is_none(), "memory objects are lost");
        let o = store.get(1, "big").unwrap();
        let (mut buf, mut file) = (Vec::new(), None);
        for (i, blk) in blocks.iter().enumerate() {
            assert_eq!(
                o.read_block(i, &mut buf, &mut file).await.unwrap(),
                crc32fast::hash(blk)
            );
            assert_eq!(&buf, blk);
        }
        // A new spill does not overwrite the recovered file.
        let mut n = store.begin(1, "new");
        for blk in &blocks {
            n.push(crc32fast::hash(blk), blk).await.unwrap();
        }
        n.finish().await.unwrap();
        drop(file);
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 2);
        assert!(super::super::recover::verify(o.spill.as_ref().unwrap()).is_ok());
    }

    #[tokio::test]
    async fn persist_all_writes_every_put_to_disk() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::with_persist_all(1 << 20, Some(dir.path()), true);
        let mut b = store.begin(3, "x");
        b.push(crc32fast::hash(b"abc"), b"abc").await.unwrap();
        b.finish().await.unwrap();
        assert_eq!((store.mem_used(), store.spilled_bytes()), (0, 3));
        store.begin(3, "empty").finish().await.unwrap();
        let again = Store::new(1 << 20, Some(dir.path()));
        super::super::recover::recover(&again, dir.path()).unwrap();
        assert_eq!(again.get(3, "x").unwrap().size, 3);
        assert_eq!(again.get(3, "empty").unwrap().size, 0);
    }
}
