//! A put in progress: it appends checksummed blocks to its object (in memory while the bound
//! allows, then the whole object on disk), and on completion makes a spilled object
//! recoverable. The object is in the store from the first block, so gets can stream it.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use tokio::io::AsyncWriteExt;

use super::growth::End;
use super::spill_file;
use super::store::{Block, Body, Object, Store};
use crate::proto::StoredObject;

/// Why a block could not be added.
#[derive(Debug, thiserror::Error)]
pub enum PushError {
    #[error("the object is larger than the daemon's memory bound of {limit} bytes, and it has no data dir to spill to")]
    TooLarge { limit: u64 },
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

/// A put in progress. Its object is in the store from the start, so gets can stream it; a
/// builder dropped before [`Builder::finish`] abandons it (readers get the reason, the object
/// leaves the store, its `.part` file goes with the last reader).
pub struct Builder {
    store: Arc<Store>,
    obj: Arc<Object>,
    file: Option<tokio::fs::File>,
    file_len: u64,
    ended: bool,
}

impl Builder {
    pub(super) fn new(store: Arc<Store>, obj: Arc<Object>) -> Builder {
        Builder {
            store,
            obj,
            file: None,
            file_len: 0,
            ended: false,
        }
    }

    /// Add one block (its checksum already verified). May wait for memory (cancel-safe: a
    /// push dropped while it waits adds nothing). Without a data dir, a block that would make
    /// the object larger than the memory bound is refused: it could never fit.
    pub async fn push(&mut self, crc: u32, data: &[u8]) -> Result<(), PushError> {
        let len = data.len() as u32;
        if self.store.memory_only() && self.size() + len as u64 > self.store.mem_limit() {
            return Err(PushError::TooLarge {
                limit: self.store.mem_limit(),
            });
        }
        // Once spilling, the rest of the object follows it to disk (whole objects on disk).
        let permit = if self.store.persist_all || self.file.is_some() {
            None
        } else {
            match self.store.mem.clone().try_acquire_many_owned(len) {
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
            }
        };
        let body = match permit {
            Some(p) => Body::Mem(Arc::new(data.to_vec()), p),
            None => {
                if self.file.is_none() {
                    self.start_spill().await?;
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
        self.obj.lock().blocks.push(Block { crc, body });
        self.obj.progress.added(len as u64);
        Ok(())
    }

    /// Open the spill file and move the blocks held in memory so far into it. Readers go on
    /// reading them from memory until they are in the file, then from the file.
    async fn start_spill(&mut self) -> std::io::Result<()> {
        let (path, file) = self.store.create_spill(self.obj.coflow).await?;
        let held: Vec<Arc<Vec<u8>>> = {
            let mut parts = self.obj.lock();
            // Named first, so that the file goes with the object whatever happens next.
            parts.spill = Some(path);
            parts
                .blocks
                .iter()
                .filter_map(|b| match &b.body {
                    Body::Mem(v, _) => Some(v.clone()),
                    Body::Disk { .. } => None, // none before the first spill
                })
                .collect()
        };
        let f = self.file.insert(file);
        let mut moved = Vec::with_capacity(held.len());
        for v in &held {
            f.write_all(v).await?;
            moved.push(Body::Disk {
                offset: self.file_len,
                len: v.len() as u32,
            });
            self.file_len += v.len() as u64;
        }
        f.flush().await?;
        let mut parts = self.obj.lock();
        for (b, disk) in parts.blocks.iter_mut().zip(moved) {
            // Replacing the body drops the memory permit.
            b.body = disk;
        }
        self.store
            .spilled
            .fetch_add(self.file_len, Ordering::Relaxed);
        Ok(())
    }

    pub fn size(&self) -> u64 {
        self.obj.progress.now().bytes
    }

    /// The object being written (to wait for its cancellation beside a push).
    pub fn object(&self) -> Arc<Object> {
        self.obj.clone()
    }

    /// The put is complete: its size is final and, if it spilled, its file recoverable.
    pub async fn finish(mut self) -> Result<StoredObject, String> {
        if let Err(e) = self.seal().await {
            let why = format!("spill file: {e}");
            self.abandon(why.clone());
            return Err(why);
        }
        self.ended = true;
        self.obj.progress.end(End::Done);
        Ok(self.obj.record())
    }

    /// Make a spilled object recoverable: its manifest, synced, then `.part` renamed `.spill`
    /// (from then on a restart serves it; `.part` files are dropped).
    async fn seal(&mut self) -> std::io::Result<()> {
        if self.store.persist_all && self.file.is_none() {
            // An empty object has had no block to open its file.
            self.start_spill().await?;
        }
        let Some(mut f) = self.file.take() else {
            return Ok(());
        };
        let lens: Vec<(u32, u32)> = self
            .obj
            .lock()
            .blocks
            .iter()
            .map(|b| {
                debug_assert!(matches!(b.body, Body::Disk { .. }), "whole on disk");
                (b.body.len(), b.crc)
            })
            .collect();
        let manifest = spill_file::manifest(
            self.obj.coflow,
            &self.obj.data_id,
            self.size(),
            lens.into_iter(),
        );
        f.write_all(&manifest).await?;
        f.flush().await?;
        f.sync_data().await?;
        drop(f);
        {
            // Under the lock, so a reader never sees a name that no longer exists twice.
            let mut parts = self.obj.lock();
            let part = parts.spill.clone().expect("a spilled object has a file");
            let done = part.with_extension(spill_file::DONE_EXT);
            std::fs::rename(&part, &done)?;
            parts.spill = Some(done);
        }
        self.store.sync_dir().await;
        Ok(())
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
