//! Broadcast and gather over the k-nomial tree. Op ids: a node at depth d hears from its
//! parent under step d and talks to its children under step d + 1, so a parent's send and its
//! child's receive always agree, and no process uses one op id twice.

use crate::schedule::gather::fold_order;
use crate::schedule::knomial::{absolute, relative, Knomial};
use crate::{Group, GroupError};

impl Group {
    /// The root's `bytes` to every member (others pass anything, e.g. an empty vector).
    pub fn bcast(&mut self, root: usize, bytes: Vec<u8>, k: u32) -> Result<Vec<u8>, GroupError> {
        self.check_rank(root)?;
        let size = self.size();
        let tree = Knomial::new(size, k)?;
        let base = self.reserve(tree.rounds() + 1);
        let v = relative(self.rank(), root, size);
        let depth = tree.depth(v);
        let data = match tree.parent(v) {
            None => bytes,
            Some(p) => {
                let p = absolute(p, root, size);
                self.xchg(base, depth, vec![], &[p], None)?.remove(0)
            }
        };
        let children = tree.children(v);
        if !children.is_empty() {
            let sends = children
                .iter()
                .map(|&c| (absolute(c, root, size), data.clone()))
                .collect();
            self.xchg(base, depth + 1, sends, &[], None)?;
        }
        Ok(data)
    }

    /// Combine every member's `bytes` up the tree: each node folds its children's results into
    /// its own as `combine(acc, child)`, children in increasing rank relative to the root, so
    /// an associative combine gives the fold over ranks root, root + 1, ..., root - 1 (mod
    /// size). The root gets `Some(result)`, every other member `None`.
    pub fn gather<F>(
        &mut self,
        root: usize,
        bytes: Vec<u8>,
        k: u32,
        mut combine: F,
    ) -> Result<Option<Vec<u8>>, GroupError>
    where
        F: FnMut(Vec<u8>, Vec<u8>) -> Vec<u8>,
    {
        self.check_rank(root)?;
        let size = self.size();
        let tree = Knomial::new(size, k)?;
        let base = self.reserve(tree.rounds() + 1);
        let v = relative(self.rank(), root, size);
        let depth = tree.depth(v);
        let children: Vec<usize> = fold_order(&tree, v)
            .into_iter()
            .map(|c| absolute(c, root, size))
            .collect();
        let mut acc = bytes;
        if !children.is_empty() {
            for r in self.xchg(base, depth + 1, vec![], &children, None)? {
                acc = combine(acc, r);
            }
        }
        match tree.parent(v) {
            None => Ok(Some(acc)),
            Some(p) => {
                let p = absolute(p, root, size);
                self.xchg(base, depth, vec![(p, acc)], &[], None)?;
                Ok(None)
            }
        }
    }
}
