//! Put objects, kept as checksummed blocks in memory up to a bound, the rest spilled to the data
//! directory. Without a data directory a put that finds memory full waits (backpressure: the
//! daemon stops reading the socket, so the putting client's writes block) until unregistered
//! coflows free memory.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use tokio::io::{AsyncReadExt, AsyncSeekExt, AsyncWriteExt};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use super::growth::{End, Progress};
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
    /// Grows while the put streams in; readers copy a block out under the lock.
    blocks: Mutex<Vec<Block>>,
    pub progress: Progress,
    spill: Option<PathBuf>,
}

impl Drop for Object {
    fn drop(&mut self) {
        if let Some(p) = &self.spill {
            let _ = std::fs::remove_file(p); // may never have been created
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
        let (crc, disk) = {
            let blocks = self.blocks.lock().unwrap_or_else(|p| p.into_inner());
            let b = &blocks[i];
            match &b.body {
                Body::Mem(v, _) => {
                    buf.clear();
                    buf.extend_from_slice(v);
                    (b.crc, None)
                }
                Body::Disk { offset, len } => (b.crc, Some((*offset, *len))),
            }
        };
        if let Some((offset, len)) = disk {
            let io = async {
                if file.is_none() {
                    let path = self.spill.as_ref().expect("disk blocks have a spill file");
                    *file = Some(tokio::fs::File::open(path).await?);
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

    fn record(&self) -> StoredObject {
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

/// A put in progress. Its object is in the store from the start, so gets can stream it; a
/// builder dropped before [`Builder::finish`] abandons it (readers get the reason, the object
/// leaves the store).
pub struct Builder {
    store: Arc<Store>,
    obj: Arc<Object>,
    file: Option<tokio::fs::File>,
    file_len: u64,
    ended: bool,
}

impl Builder {
    /// Add one block (its checksum already verified). May wait for memory.
    pub async fn push(&mut self, crc: u32, data: &[u8]) -> std::io::Result<()> {
        let len = data.len() as u32;
        let permit = match self.store.mem.clone().try_acquire_many_owned(len) {
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
                    let path = self
                        .obj
                        .spill
                        .as_ref()
                        .expect("a data dir gives a spill path");
                    self.file = Some(tokio::fs::File::create(path).await?);
                }
                let f = self.file.as_mut().expect("just made");
                f.write_all(data).await?;
                // Readers open the file themselves: the block must be in it before it is listed.
                f.flush().await?;
                let offset = self.file_len;
                self.file_len += len as u64;
                self.store.spilled.fetch_add(len as u64, Ordering::Relaxed);
                Body::Disk { offset, len }
            }
        };
        self.obj
            .blocks
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(Block { crc, body });
        self.obj.progress.added(len as u64);
        Ok(())
    }

    pub fn size(&self) -> u64 {
        self.obj.progress.now().bytes
    }

    /// The put is complete: its size is final.
    pub async fn finish(mut self) -> Result<StoredObject, String> {
        if let Some(mut f) = self.file.take() {
            let synced = async {
                f.flush().await?;
                f.sync_data().await
            };
            if let Err(e) = synced.await {
                let why = format!("spill file: {e}");
                self.abandon(why.clone());
                return Err(why);
            }
        }
        self.ended = true;
        self.obj.progress.end(End::Done);
        Ok(self.obj.record())
    }

    /// The put broke off: readers get `why`, the object leaves the store. Returns its record
    /// (marked abandoned) for the coordinator.
    pub fn abandon(&mut self, why: String) -> StoredObject {
        self.ended = true;
        self.obj.progress.end(End::Abandoned(why));
        let key = (self.obj.coflow, self.obj.data_id.clone());
        let mut objects = self.store.objects.lock().unwrap_or_else(|p| p.into_inner());
        if objects.get(&key).is_some_and(|o| Arc::ptr_eq(o, &self.obj)) {
            objects.remove(&key);
        }
        self.obj.record()
    }
}

impl Drop for Builder {
    fn drop(&mut self) {
        if !self.ended {
            self.abandon("the put ended without completing".into());
        }
    }
}

pub struct Store {
    mem: Arc<Semaphore>,
    mem_limit: u64,
    data_dir: Option<PathBuf>,
    objects: Mutex<HashMap<(u64, String), Arc<Object>>>,
    spilled: AtomicU64,
    seq: AtomicU64,
}

impl Store {
    pub fn new(mem_limit_bytes: u64, data_dir: Option<&Path>) -> Arc<Store> {
        let permits = mem_limit_bytes.min(Semaphore::MAX_PERMITS as u64) as usize;
        Arc::new(Store {
            mem: Arc::new(Semaphore::new(permits)),
            mem_limit: permits as u64,
            data_dir: data_dir.map(Path::to_path_buf),
            objects: Mutex::new(HashMap::new()),
            spilled: AtomicU64::new(0),
            seq: AtomicU64::new(0),
        })
    }

    fn spill_path(&self, coflow: u64, data_id: &str) -> PathBuf {
        // Data ids are arbitrary text: the file name uses a sequence number, not the id.
        let n = self.seq.fetch_add(1, Ordering::Relaxed);
        let _ = data_id;
        self.data_dir
            .as_ref()
            .expect("spilling needs a data dir")
            .join(format!("c{coflow}-{n}.spill"))
    }

    /// Start a put; its object is visible (and streams to gets) at once. Fails if the data id
    /// is already taken in this coflow.
    pub fn begin(self: &Arc<Self>, coflow: u64, data_id: &str) -> Result<Builder, String> {
        let key = (coflow, data_id.to_string());
        let mut objects = self.objects.lock().unwrap_or_else(|p| p.into_inner());
        if objects.contains_key(&key) {
            return Err(format!("coflow {coflow} already has data `{data_id}`"));
        }
        let obj = Arc::new(Object {
            coflow,
            data_id: data_id.to_string(),
            blocks: Mutex::new(Vec::new()),
            progress: Progress::new(),
            spill: self
                .data_dir
                .is_some()
                .then(|| self.spill_path(coflow, data_id)),
        });
        objects.insert(key, obj.clone());
        Ok(Builder {
            store: self.clone(),
            obj,
            file: None,
            file_len: 0,
            ended: false,
        })
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
    use super::*;

    #[tokio::test]
    async fn spills_beyond_the_bound_and_reads_back() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::new(1000, Some(dir.path()));
        let mut b = store.begin(1, "x").unwrap();
        let blocks: Vec<Vec<u8>> = (0..5u8).map(|i| vec![i; 400]).collect();
        for blk in &blocks {
            b.push(crc32fast::hash(blk), blk).await.unwrap();
        }
        assert!(store.mem_used() <= 1000);
        assert_eq!(store.spilled_bytes(), 1200);
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
            let blk = vec![k; 300]; // the second and later blocks spill
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
}
