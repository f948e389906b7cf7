//! BASHuffler properties. Spec D1 for the bandwidth estimate (the shared water-filling with unit
//! weights): feasible, every flow has a bottleneck, and the flow order does not matter; the
//! first two together characterize the unique max-min fair allocation. Then the bookkeeping of
//! every selection policy.

use coflowkit_model::Fabric;
use coflowkit_sched::select::Bandwidth;
use proptest::prelude::*;

const TOL: f64 = 1e-9;

fn instance() -> impl Strategy<Value = (Vec<f64>, Vec<(u32, u32)>, u64)> {
    (2usize..7).prop_flat_map(|n| {
        (
            prop::collection::vec(prop::sample::select(vec![1.0, 2.0, 3.0, 6.0, 12.0]), n),
            prop::collection::vec((0..n as u32, 0..n as u32), 1..14),
            any::<u64>(),
        )
    })
}

fn loads(n: usize, flows: &[(u32, u32)], rates: &[f64]) -> (Vec<f64>, Vec<f64>) {
    let (mut up, mut down) = (vec![0.0; n], vec![0.0; n]);
    for (&(s, d), &r) in flows.iter().zip(rates) {
        up[s as usize] += r;
        down[d as usize] += r;
    }
    (up, down)
}

proptest! {
    #[test]
    fn max_min_rates_are_feasible_bottlenecked_and_order_free((caps, flows, seed) in instance()) {
        let n = caps.len();
        let fabric = Fabric { up_bytes_per_s: caps.clone(), down_bytes_per_s: caps.clone() };
        let mut bw = Bandwidth::new(fabric);
        let rates = bw.rates(&flows, &[]).to_vec();
        let (up, down) = loads(n, &flows, &rates);
        for p in 0..n {
            prop_assert!(up[p] <= caps[p] + TOL && down[p] <= caps[p] + TOL);
        }
        for (i, &(s, d)) in flows.iter().enumerate() {
            prop_assert!(rates[i] > 0.0);
            let max_on = |pick: &dyn Fn(&(u32, u32)) -> bool| {
                flows.iter().zip(&rates).filter(|(f, _)| pick(f)).map(|(_, &r)| r).fold(0.0, f64::max)
            };
            let up_bottleneck = (up[s as usize] - caps[s as usize]).abs() < TOL
                && rates[i] >= max_on(&|f| f.0 == s) - TOL;
            let down_bottleneck = (down[d as usize] - caps[d as usize]).abs() < TOL
                && rates[i] >= max_on(&|f| f.1 == d) - TOL;
            prop_assert!(up_bottleneck || down_bottleneck, "flow {i} {s}->{d} has no bottleneck: {rates:?}");
        }
        // A seeded permutation of the flows gives each flow the same rate.
        let mut perm: Vec<usize> = (0..flows.len()).collect();
        let mut x = seed | 1;
        for i in (1..perm.len()).rev() {
            x ^= x << 13; x ^= x >> 7; x ^= x << 17;
            perm.swap(i, (x % (i as u64 + 1)) as usize);
        }
        let shuffled: Vec<(u32, u32)> = perm.iter().map(|&i| flows[i]).collect();
        let again = bw.rates(&shuffled, &[]).to_vec();
        for (k, &i) in perm.iter().enumerate() {
            prop_assert!((again[k] - rates[i]).abs() < TOL);
        }
    }
}

mod selection {
    use coflowkit_model::Fabric;
    use coflowkit_sched::select::{ClusterState, Policy, SelectOptions, Source};
    use proptest::prelude::*;

    proptest! {
        /// Whatever the policy: picks come from the pending nodes, no node more often than it
        /// holds outputs, each pick enters the pattern and lowers its node's load count by one,
        /// and the same seed gives the same picks.
        #[test]
        fn picks_respect_pending_outputs_and_bookkeeping(
            caps in prop::collection::vec(prop::sample::select(vec![1.0, 2.0, 6.0, 12.0]), 3..7),
            outputs in prop::collection::vec(0u32..3, 6),
            k in 1usize..4,
            seed in any::<u64>(),
            policy in prop::sample::select(Policy::ALL.to_vec()),
        ) {
            let n = caps.len() as u32;
            let dst = 0;
            let pending: Vec<Source> = (1..n)
                .zip(&outputs)
                .filter(|&(_, &o)| o > 0)
                .map(|(node, &outputs)| Source { node, outputs })
                .collect();
            let fabric = Fabric { up_bytes_per_s: caps.clone(), down_bytes_per_s: caps };
            let run = || {
                let mut st = ClusterState::new(fabric.clone(), seed, SelectOptions::default());
                st.on_shuffle_start(&pending).unwrap();
                let picks = st.select(policy, dst, &pending, k).unwrap();
                (st, picks)
            };
            let (st, picks) = run();
            let available: u32 = pending.iter().map(|s| s.outputs).sum();
            prop_assert_eq!(picks.len(), k.min(available as usize));
            prop_assert_eq!(st.pattern().len(), picks.len());
            for s in &pending {
                let times = picks.iter().filter(|&&p| p == s.node).count() as u32;
                prop_assert!(times <= s.outputs);
                prop_assert_eq!(st.load(s.node), u64::from(s.outputs - times));
            }
            prop_assert!(picks.iter().all(|p| pending.iter().any(|s| s.node == *p)));
            prop_assert_eq!(run().1, picks);
        }
    }
}
