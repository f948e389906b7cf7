//! Invariants over random inputs: the data plane's decoder never panics on arbitrary bytes, and
//! the coordinator's rate tables never load a port beyond its capacity, whatever the policy.

use std::collections::HashMap;

use coflowkit_runtime::coordinator::state::State;
use coflowkit_runtime::frame::{read_chunk, read_frame};
use coflowkit_runtime::proto::FlowInfo;
use coflowkit_sched::{build, SchedOptions, SchedulerKind};
use proptest::prelude::*;

fn block_on<F: std::future::Future>(f: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap()
        .block_on(f)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn arbitrary_bytes_never_panic_the_decoder(wire in proptest::collection::vec(any::<u8>(), 0..2048)) {
        block_on(async {
            let mut buf = Vec::new();
            let mut r = wire.as_slice();
            while read_frame(&mut r, &mut buf).await.is_ok() {}
            let mut r = wire.as_slice();
            while read_chunk(&mut r, &mut buf).await.is_ok() {}
        });
    }

    /// Random daemons (heterogeneous NICs), coflows and flows, some finished: every daemon's
    /// rate table sums to at most its NIC, every receiving daemon gets at most its NIC.
    #[test]
    fn rate_tables_respect_every_port(
        nics in proptest::collection::vec(1e3f64..1e6, 2..6),
        flows in proptest::collection::vec((0usize..6, 0usize..6, 1u64..1_000_000, 0usize..4, any::<bool>()), 1..40),
        kind in prop::sample::select(vec![SchedulerKind::Varys, SchedulerKind::Aalo, SchedulerKind::Fair, SchedulerKind::Sebf]),
    ) {
        let mut s = State::new(1);
        let addrs: Vec<String> = (0..nics.len()).map(|i| format!("h{i}:1")).collect();
        for (a, &nic) in addrs.iter().zip(&nics) {
            let p = s.register_daemon(0.0, a, nic, &[], &[]);
            s.set_connected(p, true);
        }
        let coflows: Vec<u64> = (0..4).map(|_| s.register_coflow(0.0, String::new(), 0, None, 1.0, vec![]).unwrap()).collect();
        let n = nics.len();
        let mut dst_of = HashMap::new();
        for (i, &(src, dst, size, c, done)) in flows.iter().enumerate() {
            let (src, dst) = (src % n, dst % n);
            s.start_flow(0.0, src, &FlowInfo {
                flow: i as u64, coflow: coflows[c], data_id: String::new(),
                dst: addrs[dst].clone(), size_bytes: size, sent_bytes: 0, size_pending: false,
            });
            dst_of.insert((src, i as u64), dst);
            if done {
                s.progress(src, i as u64, size, true, false);
            }
        }
        let mut sched = build(kind, &SchedOptions::default());
        let (_, tables) = s.decide(sched.as_mut(), 0.5);
        let mut down = vec![0.0; n];
        for (src, t) in tables.iter().enumerate() {
            let up: f64 = t.rates.iter().map(|r| r.bytes_per_s).sum();
            prop_assert!(up <= nics[src] * (1.0 + 1e-9), "uplink {src}: {up} > {}", nics[src]);
            for r in &t.rates {
                prop_assert!(r.bytes_per_s >= 0.0 && r.bytes_per_s.is_finite());
                down[dst_of[&(src, r.flow)]] += r.bytes_per_s;
            }
        }
        for (d, &load) in down.iter().enumerate() {
            prop_assert!(load <= nics[d] * (1.0 + 1e-9), "downlink {d}: {load} > {}", nics[d]);
        }
        // Someone is served whenever unfinished flows exist (all policies here are work
        // conserving enough to give some flow a rate).
        let unfinished = flows.iter().any(|f| !f.4);
        let served = tables.iter().any(|t| t.rates.iter().any(|r| r.bytes_per_s > 0.0));
        prop_assert_eq!(unfinished, served);
    }
}
