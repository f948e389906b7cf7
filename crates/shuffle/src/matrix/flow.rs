//! A small Dinic max-flow, enough for the controlled rounding of `packets`: unit edges between
//! rows and columns, O(E sqrt(V)) on such graphs.

use std::collections::VecDeque;

pub(crate) struct Flow {
    head: Vec<usize>,
    // Edge e: to[e], cap[e], next[e]; e ^ 1 is its reverse.
    to: Vec<usize>,
    cap: Vec<u64>,
    next: Vec<usize>,
    level: Vec<u32>,
    iter: Vec<usize>,
}

const NONE: usize = usize::MAX;

impl Flow {
    pub fn new(nodes: usize) -> Self {
        Flow {
            head: vec![NONE; nodes],
            to: Vec::new(),
            cap: Vec::new(),
            next: Vec::new(),
            level: vec![0; nodes],
            iter: vec![0; nodes],
        }
    }

    /// Adds u -> v with capacity `c`; returns the edge id (its flow is `flow_on`). Edges added
    /// later are tried first, so add the preferred ones last.
    pub fn add(&mut self, u: usize, v: usize, c: u64) -> usize {
        let e = self.to.len();
        for (a, b, cc) in [(u, v, c), (v, u, 0)] {
            self.to.push(b);
            self.cap.push(cc);
            self.next.push(self.head[a]);
            self.head[a] = self.to.len() - 1;
        }
        e
    }

    /// Flow pushed through edge `e` (the residual of its reverse).
    pub fn flow_on(&self, e: usize) -> u64 {
        self.cap[e ^ 1]
    }

    pub fn max_flow(&mut self, s: usize, t: usize) -> u64 {
        let mut total = 0;
        while self.bfs(s, t) {
            self.iter.clone_from(&self.head);
            loop {
                let f = self.dfs(s, t, u64::MAX);
                if f == 0 {
                    break;
                }
                total += f;
            }
        }
        total
    }

    fn bfs(&mut self, s: usize, t: usize) -> bool {
        self.level.iter_mut().for_each(|l| *l = u32::MAX);
        self.level[s] = 0;
        let mut q = VecDeque::from([s]);
        while let Some(u) = q.pop_front() {
            let mut e = self.head[u];
            while e != NONE {
                let v = self.to[e];
                if self.cap[e] > 0 && self.level[v] == u32::MAX {
                    self.level[v] = self.level[u] + 1;
                    q.push_back(v);
                }
                e = self.next[e];
            }
        }
        self.level[t] != u32::MAX
    }

    // Depth is at most 3 in the rounding graph, so recursion is fine.
    fn dfs(&mut self, u: usize, t: usize, f: u64) -> u64 {
        if u == t {
            return f;
        }
        while self.iter[u] != NONE {
            let e = self.iter[u];
            let v = self.to[e];
            if self.cap[e] > 0 && self.level[v] == self.level[u] + 1 {
                let d = self.dfs(v, t, f.min(self.cap[e]));
                if d > 0 {
                    self.cap[e] -= d;
                    self.cap[e ^ 1] += d;
                    return d;
                }
            }
            self.iter[u] = self.next[e];
        }
        0
    }
}
