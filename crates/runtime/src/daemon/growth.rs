//! How far a put has come, shared between the put that appends blocks and the gets that serve
//! them as they arrive (Aalo's `AaloOutputStream`: no barrier between producing and sending).

use tokio::sync::watch;

/// The end of a put, once known.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum End {
    Open,
    Done,
    /// The put broke off (the putting client went away, went silent, or sent bad data).
    Abandoned(String),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Growth {
    pub blocks: usize,
    pub bytes: u64,
    pub end: End,
}

/// The writer's side: every change wakes the readers.
pub struct Progress {
    tx: watch::Sender<Growth>,
}

impl Progress {
    pub fn new() -> Progress {
        Progress {
            tx: watch::Sender::new(Growth {
                blocks: 0,
                bytes: 0,
                end: End::Open,
            }),
        }
    }

    /// A put that completed earlier (an object recovered from its spill file at start).
    pub fn complete(blocks: usize, bytes: u64) -> Progress {
        Progress {
            tx: watch::Sender::new(Growth {
                blocks,
                bytes,
                end: End::Done,
            }),
        }
    }

    pub fn now(&self) -> Growth {
        self.tx.borrow().clone()
    }

    pub fn added(&self, len: u64) {
        self.tx.send_modify(|g| {
            g.blocks += 1;
            g.bytes += len;
        });
    }

    /// End the put; the first end wins.
    pub fn end(&self, end: End) {
        self.tx.send_if_modified(|g| {
            if g.end != End::Open {
                return false;
            }
            g.end = end;
            true
        });
    }

    /// Wait until block `i` exists or the put ended. An abandoned put is reported at once,
    /// even with blocks left to serve: the object is incomplete, sending more is waste.
    pub async fn wait_for_block(&self, i: usize) -> Growth {
        let mut rx = self.tx.subscribe();
        let g = rx
            .wait_for(|g| g.blocks > i || g.end != End::Open)
            .await
            .expect("the sender lives in the object");
        g.clone()
    }
}
