//! The BASHuffler caller's pre-scheduling cache (§3.5): one request per batch instead of one
//! RPC round trip (task -> AM -> heartbeat -> RM and back) per fetcher. The sources of a batch
//! enter the pattern at once, so the scheduler's pattern may run ahead of the flows actually
//! running until the cache drains. Batch size 1 is no pre-scheduling.

use std::collections::VecDeque;

use super::{ClusterState, Policy, SelectError, Source};

/// One reduce task's cache of pre-scheduled sources.
#[derive(Debug, Clone)]
pub struct FetchCache {
    batch: usize,
    queue: VecDeque<u32>,
    requests: u64,
}

impl FetchCache {
    /// `batch` sources per request (at least 1).
    pub fn new(batch: usize) -> Self {
        FetchCache {
            batch: batch.max(1),
            queue: VecDeque::new(),
            requests: 0,
        }
    }

    /// Sources for `n` free fetchers on `dst`. When the cache runs short it asks `state` for at
    /// least a batch; every source chosen is taken out of `pending` at once (its output is
    /// reserved), so `pending` always lists what is neither fetched nor cached. Fewer than `n`
    /// come back only when nothing is left.
    pub fn take(
        &mut self,
        state: &mut ClusterState,
        policy: Policy,
        dst: u32,
        pending: &mut Vec<Source>,
        n: usize,
    ) -> Result<Vec<u32>, SelectError> {
        if self.queue.len() < n && !pending.is_empty() {
            let k = self.batch.max(n - self.queue.len());
            let picks = state.select(policy, dst, pending, k)?;
            self.requests += 1;
            for &src in &picks {
                let i = pending.iter().position(|s| s.node == src).unwrap();
                pending[i].outputs -= 1;
                if pending[i].outputs == 0 {
                    pending.remove(i);
                }
            }
            self.queue.extend(picks);
        }
        let n = n.min(self.queue.len());
        Ok(self.queue.drain(..n).collect())
    }

    /// Sources chosen but not yet handed to a fetcher.
    pub fn cached(&self) -> usize {
        self.queue.len()
    }

    /// Requests sent to the scheduler so far.
    pub fn requests(&self) -> u64 {
        self.requests
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::select::SelectOptions;
    use coflowkit_model::Fabric;

    #[test]
    fn a_batch_is_scheduled_at_once_and_handed_out_one_by_one() {
        let mut st = ClusterState::new(Fabric::uniform(4, 1.0), 1, SelectOptions::default());
        let mut pending = vec![
            Source {
                node: 0,
                outputs: 2,
            },
            Source {
                node: 1,
                outputs: 1,
            },
            Source {
                node: 2,
                outputs: 1,
            },
        ];
        let mut cache = FetchCache::new(3);
        let first = cache
            .take(&mut st, Policy::Pgss, 3, &mut pending, 1)
            .unwrap();
        assert_eq!(first.len(), 1);
        // The whole batch is in the pattern although one fetcher asked.
        assert_eq!(st.pattern().len(), 3);
        assert_eq!(cache.cached(), 2);
        let left: u32 = pending.iter().map(|s| s.outputs).sum();
        assert_eq!(left, 1);
        let more = cache
            .take(&mut st, Policy::Pgss, 3, &mut pending, 2)
            .unwrap();
        assert_eq!(more.len(), 2);
        assert_eq!(cache.requests(), 1);
        // The last output comes with the next request; then nothing is left.
        let last = cache
            .take(&mut st, Policy::Pgss, 3, &mut pending, 5)
            .unwrap();
        assert_eq!(last.len(), 1);
        assert!(pending.is_empty());
        assert_eq!(st.pattern().len(), 4);
        assert!(cache
            .take(&mut st, Policy::Pgss, 3, &mut pending, 1)
            .unwrap()
            .is_empty());
    }
}
