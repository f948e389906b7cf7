//! The transport's cost per packet and the packet rate one rank sustains on loopback (not a
//! test: `cargo bench -p coflowkit-transport --bench udp`).
//!
//! 1. One sender, one receiver, one large message under GRPF, unpaced: packets per second
//!    through the sending rank, and CPU nanoseconds per packet (process CPU time, both ranks'
//!    I/O threads and the kernel's share of the system calls, over DATA + control packets sent
//!    and received).
//! 2. An all-to-all of 8 ranks, 1 MB per message: aggregate goodput, unpaced and paced
//!    (`-- paced` for these only) with the share of the pacing bound reached.
//! 3. `-- auth`: the time to seal and open one datagram, with the AES-128-GCM of wire
//!    version 3 and with the HMAC-SHA256 (truncated to 8 bytes) of version 2, computed here
//!    the way version 2 did; then test 1 with datagram tags off and on
//!    (`EndpointConfig::auth`), alternated three times, and the ratio of their packet rates
//!    and CPU per packet.

use std::net::{SocketAddr, UdpSocket};
use std::sync::Arc;
use std::time::Instant;

use coflowkit_transport::{wire, Endpoint, EndpointConfig, ExchangeProtocol, WireKey};

fn cluster_at(n: usize, payload: usize, rate_bps: Option<f64>) -> Vec<Arc<Endpoint>> {
    cluster_keyed(n, payload, rate_bps, None)
}

fn cluster_keyed(
    n: usize,
    payload: usize,
    rate_bps: Option<f64>,
    auth: Option<WireKey>,
) -> Vec<Arc<Endpoint>> {
    let socks: Vec<UdpSocket> = (0..n)
        .map(|_| UdpSocket::bind("127.0.0.1:0").unwrap())
        .collect();
    let peers: Vec<SocketAddr> = socks.iter().map(|s| s.local_addr().unwrap()).collect();
    socks
        .into_iter()
        .enumerate()
        .map(|(r, s)| {
            let mut cfg = EndpointConfig::new(r as u32, peers.clone(), 1);
            cfg.payload = payload;
            cfg.rate_bps = rate_bps;
            cfg.auth = auth.clone();
            Arc::new(Endpoint::bind(s, cfg).unwrap())
        })
        .collect()
}

/// CPU seconds of this process so far (user + system).
fn cpu_s() -> f64 {
    // SAFETY: getrusage writes into a local struct.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut u) };
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
    tv(u.ru_utime) + tv(u.ru_stime)
}

/// Per op: packets per second and CPU ns per DATA packet.
fn one_way(payload: usize, bytes: usize, auth: Option<WireKey>) -> Vec<(f64, f64)> {
    let tags = if auth.is_some() {
        "tags on"
    } else {
        "tags off"
    };
    let eps = cluster_keyed(2, payload, None, auth);
    let mut out = Vec::new();
    let proto = ExchangeProtocol::parse("grpf").unwrap();
    let data = vec![7u8; bytes];
    for op in 0..3u64 {
        let (c0, t0) = (cpu_s(), Instant::now());
        std::thread::scope(|s| {
            let a = s.spawn(|| eps[0].exchange(op, &proto, vec![(1, data.clone())], &[]));
            let b = s.spawn(|| eps[1].exchange(op, &proto, vec![], &[0]));
            a.join().unwrap().unwrap();
            assert_eq!(b.join().unwrap().unwrap()[0].1.len(), bytes);
        });
        let (wall, cpu) = (t0.elapsed().as_secs_f64(), cpu_s() - c0);
        let (s0, s1) = (eps[0].stats(), eps[1].stats());
        let pk = (bytes as f64 / payload as f64).ceil();
        let all =
            (s0.packets_sent + s0.packets_received + s1.packets_sent + s1.packets_received) as f64;
        out.push((pk / wall, cpu * 1e9 / pk));
        println!(
            "one way, {tags}, payload {payload} B, {} MB: {:.3} s, {:.0} kpackets/s, {:.2} Gbit/s goodput, \
             {:.0} ns CPU per DATA packet ({:.0} ns per packet sent or received), {} retransmissions",
            bytes >> 20,
            wall,
            pk / wall / 1e3,
            bytes as f64 * 8.0 / wall / 1e9,
            cpu * 1e9 / pk,
            cpu * 1e9 / all * (op + 1) as f64,
            s0.retransmissions
        );
    }
    out
}

/// Nanoseconds to seal a datagram of `payload` bytes and to open (check) it again, with this
/// build's [`WireKey`] (AES-128-GCM, payload encrypted) and with version 2's tag computed the
/// way it did (HMAC-SHA256 of the header and payload, truncated to 8 bytes, compared),
/// alternated three times; the medians.
fn tag_cost(payload: usize) {
    use ring::hmac;
    let n = 20_000;
    let key = WireKey::derive(b"bench secret", 1);
    let mac = hmac::Key::new(hmac::HMAC_SHA256, &[7; 32]);
    let h = wire::Header {
        session: 1,
        op: 1,
        packet: coflowkit_shuffle::proto::Packet {
            kind: coflowkit_shuffle::proto::Kind::Data,
            src: 0,
            dst: 1,
            seq: 0,
            total: 1,
            unsched: 1,
            seed: 0,
        },
        msg_bytes: payload as u64,
        msg_crc: 0,
    };
    let mut d = wire::encode(&h, &vec![7u8; payload]).unwrap();
    let tag_at = coflowkit_transport::auth::TAG_AT;
    // Over everything but the tag's bytes, as version 2 did.
    let hmac_tag = |d: &[u8]| {
        let mut ctx = hmac::Context::with_key(&mac);
        ctx.update(&d[..tag_at]);
        ctx.update(&d[tag_at + 8..]);
        let mut out = [0u8; 8];
        out.copy_from_slice(&ctx.sign().as_ref()[..8]);
        out
    };
    let time = |f: &mut dyn FnMut() -> bool| {
        let t0 = Instant::now();
        let mut ok = 0;
        for _ in 0..n {
            ok += std::hint::black_box(f()) as usize;
        }
        assert_eq!(ok, n);
        t0.elapsed().as_nanos() as f64 / n as f64
    };
    let (mut hm, mut gcm) = (Vec::new(), Vec::new());
    for _ in 0..3 {
        hm.push(time(&mut || {
            let t = hmac_tag(&d);
            d[tag_at..tag_at + 8].copy_from_slice(&t);
            let got = hmac_tag(&d);
            got.iter()
                .zip(&d[tag_at..tag_at + 8])
                .fold(0u8, |a, (x, y)| a | (x ^ y))
                == 0
        }));
        gcm.push(time(&mut || {
            key.seal(&mut d);
            key.open(&mut d)
        }));
    }
    let med = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let (a, b) = (med(&mut hm), med(&mut gcm));
    println!(
        "a {}-byte datagram sealed and opened, ns (medians of 3 x {n}): HMAC-SHA256/64 {a:.0}, \
         AES-128-GCM {b:.0}; GCM/HMAC {:.3}",
        d.len(),
        b / a
    );
}

/// Tags off and on, alternated, and the ratios of the medians.
fn auth_cost(payload: usize, bytes: usize) {
    let key = WireKey::derive(b"bench secret", 1);
    let (mut off, mut on) = (Vec::new(), Vec::new());
    for _ in 0..3 {
        off.extend(one_way(payload, bytes, None));
        on.extend(one_way(payload, bytes, Some(key.clone())));
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let (mut r0, mut r1): (Vec<f64>, Vec<f64>) = (
        off.iter().map(|x| x.0).collect(),
        on.iter().map(|x| x.0).collect(),
    );
    let (mut c0, mut c1): (Vec<f64>, Vec<f64>) = (
        off.iter().map(|x| x.1).collect(),
        on.iter().map(|x| x.1).collect(),
    );
    let (r0, r1, c0, c1) = (
        median(&mut r0),
        median(&mut r1),
        median(&mut c0),
        median(&mut c1),
    );
    println!(
        "payload {payload} B, medians of {} ops: tags off {:.0} kpackets/s, {c0:.0} ns CPU per \
         DATA packet; tags on {:.0} kpackets/s, {c1:.0} ns; rate on/off {:.3}, CPU on/off {:.3}",
        off.len(),
        r0 / 1e3,
        r1 / 1e3,
        r1 / r0,
        c1 / c0
    );
}

fn all_to_all(n: usize, bytes: usize, rate_bps: Option<f64>, name: &str) {
    let eps = cluster_at(n, 1400, rate_bps);
    let proto = ExchangeProtocol::parse(name).unwrap();
    let t0 = Instant::now();
    std::thread::scope(|s| {
        for (i, ep) in eps.iter().enumerate() {
            let (ep, proto) = (ep.clone(), &proto);
            s.spawn(move || {
                let sends = (0..n as u32)
                    .filter(|&j| j != i as u32)
                    .map(|j| (j, vec![j as u8; bytes]))
                    .collect();
                let from: Vec<u32> = (0..n as u32).filter(|&j| j != i as u32).collect();
                ep.exchange(1, proto, sends, &from).unwrap();
            });
        }
    });
    let wall = t0.elapsed().as_secs_f64();
    let total = (n * (n - 1) * bytes) as f64;
    // Each rank sends (n - 1) messages: at the pacer's rate that takes this long on the wire.
    let bound = rate_bps.map(|r| {
        let dgrams = (bytes as f64 / 1400.0).ceil() * (n - 1) as f64;
        dgrams * (1400 + wire::HEADER_LEN + 46) as f64 * 8.0 / r
    });
    println!(
        "{name} all-to-all of {n}, {} KB per message, rate {}: {:.3} s, {:.2} Gbit/s aggregate, \
         {:.0} Mbit/s per rank{}",
        bytes >> 10,
        rate_bps.map_or("unpaced".into(), |r| format!("{:.0} Mbit/s", r / 1e6)),
        wall,
        total * 8.0 / wall / 1e9,
        total * 8.0 / wall / 1e6 / n as f64,
        bound.map_or(String::new(), |b| format!(
            ", {:.0} % of the pacing bound {b:.3} s",
            b / wall * 100.0
        ))
    );
    let st: Vec<_> = eps.iter().map(|e| e.stats()).collect();
    println!(
        "    packets sent {}, retransmissions {}, bytes sent {}",
        st.iter().map(|s| s.packets_sent).sum::<u64>(),
        st.iter().map(|s| s.retransmissions).sum::<u64>(),
        st.iter().map(|s| s.bytes_sent).sum::<u64>()
    );
}

/// `-- paced` runs only the paced all-to-alls.
fn main() {
    if std::env::args().any(|a| a == "auth") {
        tag_cost(1400);
        tag_cost(8900);
        auth_cost(1400, 32 << 20);
        auth_cost(8900, 32 << 20);
        return;
    }
    let paced_only = std::env::args().any(|a| a == "paced");
    if !paced_only {
        one_way(1400, 64 << 20, None);
        one_way(8900, 64 << 20, None);
        all_to_all(8, 1 << 20, None, "grpf");
    }
    for name in ["push-rr", "madd", "grpf"] {
        all_to_all(2, 4 << 20, Some(100e6), name);
    }
    for name in ["grpf", "hadoop-5", "madd"] {
        all_to_all(8, 1 << 20, Some(50e6), name);
    }
    all_to_all(2, 8 << 20, Some(200e6), "grpf");
}
