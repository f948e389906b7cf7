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
                    let path = self.store.spill_path(self.obj.coflow, &self.obj.data_id);
                    self.file = Some(tokio::fs::File::create(&path).await?);
                    self.obj.spill = Some(path);
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

    pub fn size(&self) -> u64 {
        self.obj.size
    }

    /// Make the object visible. Fails if the data id is already taken in this coflow.
    pub async fn finish(mut self) -> Result<StoredObject, String> {
        if let Some(mut f) = self.file.take() {
            f.flush().await.map_err(|e| format!("spill file: {e}"))?;
            f.sync_data()
                .await
                .map_err(|e| format!("spill file: {e}"))?;
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
        assert!(store.mem_used() <= 1000);
        assert_eq!(store.spilled_bytes(), 1200);
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
}
