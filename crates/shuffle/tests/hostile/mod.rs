//! Hostile packets for one protocol node, decoded from arbitrary bytes, so that the proptest
//! (`fuzz_packets.rs`) and the coverage-guided target (`fuzz/fuzz_targets/packet.rs`) drive the
//! same script: whatever a peer sends (unknown senders, sequence numbers past the message,
//! lengths that change, grants beyond everything, timers at any time), the node never panics
//! and only ever sends well-formed packets of its own.

use coflowkit_shuffle::proto::{
    Clock, GrantOptions, Kind, Node, NodeSpec, Packet, Protocol, Recovery,
};

const PROTOCOLS: [&str; 6] = ["grpf", "srpt", "hadoop-2", "madd", "lockstep", "push-rr"];
const KINDS: [Kind; 5] = [
    Kind::Data,
    Kind::Announce,
    Kind::Grant,
    Kind::Ack,
    Kind::Resend,
];

struct Bytes<'a>(&'a [u8]);

impl Bytes<'_> {
    fn u8(&mut self) -> Option<u8> {
        let (&b, rest) = self.0.split_first()?;
        self.0 = rest;
        Some(b)
    }

    /// A u32 biased to the edges that break arithmetic: 0, 1, `near - 1`, `near`, `near + 1`,
    /// u32::MAX, or any.
    fn u32(&mut self, near: u32) -> Option<u32> {
        Some(match self.u8()? % 8 {
            0 => 0,
            1 => 1,
            2 => near.wrapping_sub(1),
            3 => near,
            4 => near.wrapping_add(1),
            5 => u32::MAX,
            6 => u32::from(self.u8()?),
            _ => u32::from_le_bytes([self.u8()?, self.u8()?, self.u8()?, self.u8()?]),
        })
    }
}

/// Runs the script in `data`; panics (the finding) only if the node does.
pub fn run(data: &[u8]) {
    let mut b = Bytes(data);
    let setup = (|| Some((b.u8()?, b.u8()?, b.u8()?, b.u8()?)))();
    let Some((proto, n, flags, id)) = setup else {
        return;
    };
    let protocol = Protocol::parse(PROTOCOLS[proto as usize % PROTOCOLS.len()]).unwrap();
    let n = 2 + n as usize % 5;
    let id = id as usize % n;
    let sizes: Vec<u64> = (0..n)
        .map(|_| u64::from(b.u8().unwrap_or(3) % 20))
        .collect();
    let senders: Vec<u32> = (0..n as u32).filter(|&s| s as usize != id).collect();
    let grant = GrantOptions::default();
    let mut node = Node::new(&NodeSpec {
        id,
        out_sizes: &sizes,
        senders: &senders,
        protocol: &protocol,
        grant: &grant,
        madd_gamma: (40, 1),
        clock: Clock::default(),
        recovery: (flags & 1 == 1).then_some(Recovery {
            timeout: 20,
            dead_after: 3,
        }),
        seed: u64::from(flags),
    });
    let mut now = 0u64;
    while let Some(op) = b.u8() {
        match op % 4 {
            0 => {
                let Some(p) = packet(&mut b, id, n) else {
                    return;
                };
                node.handle_packet(now, &p);
            }
            1 => {
                now += u64::from(b.u8().unwrap_or(1));
                if node.poll_timeout().is_some_and(|t| t <= now) {
                    node.handle_timeout(now);
                }
            }
            2 => {
                let mut data = false;
                while let Some(p) = node.poll_transmit(now, !data) {
                    data |= p.kind == Kind::Data;
                    check_sent(&p, id, n);
                }
            }
            _ => now += 1,
        }
    }
}

/// A packet addressed to node `id` from any sender, known or not.
fn packet(b: &mut Bytes, id: usize, n: usize) -> Option<Packet> {
    let kind = KINDS[b.u8()? as usize % KINDS.len()];
    let src = u32::from(b.u8()?) % (n as u32 + 2);
    let total = b.u32(20)?;
    Some(Packet {
        kind,
        src,
        dst: id as u32,
        seq: b.u32(total)?,
        total,
        unsched: b.u32(total)?,
        seed: u64::from(b.u8()?),
    })
}

fn check_sent(p: &Packet, id: usize, n: usize) {
    assert_eq!(p.src as usize, id, "sent as another node: {p:?}");
    assert!(
        (p.dst as usize) < n && p.dst as usize != id,
        "bad destination: {p:?}"
    );
    if p.kind == Kind::Data {
        assert!(p.seq < p.total, "data past its message: {p:?}");
    }
}
