//! Real exchanges between endpoints on loopback, each rank on its own thread: byte-exact
//! all-to-alls under every protocol, with loss, duplication and reordering injected, with
//! garbage and foreign datagrams thrown at the endpoints, two operations at once, and a rank
//! that dies mid-exchange.

use std::net::{SocketAddr, UdpSocket};
use std::sync::Arc;
use std::time::{Duration, Instant};

use coflowkit_transport::wire::{self, Header};
use coflowkit_transport::{
    Endpoint, EndpointConfig, ExchangeProtocol, LossInjection, TransportError,
};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

const SESSION: u32 = 0x5eed;

type Outcome = Result<Vec<(u32, Vec<u8>)>, TransportError>;

/// `n` endpoints on loopback, each configured by `tune`.
fn cluster(n: usize, tune: impl Fn(&mut EndpointConfig)) -> Vec<Arc<Endpoint>> {
    let socks: Vec<UdpSocket> = (0..n)
        .map(|_| UdpSocket::bind("127.0.0.1:0").unwrap())
        .collect();
    let peers: Vec<SocketAddr> = socks.iter().map(|s| s.local_addr().unwrap()).collect();
    socks
        .into_iter()
        .enumerate()
        .map(|(r, s)| {
            let mut cfg = EndpointConfig::new(r as u32, peers.clone(), SESSION);
            cfg.resend_timeout = Duration::from_millis(2);
            cfg.dead_after = 500;
            tune(&mut cfg);
            Arc::new(Endpoint::bind(s, cfg).unwrap())
        })
        .collect()
}

/// Message sizes of an `n x n` all-to-all: random up to `max`, about one in six empty.
fn sizes(n: usize, max: usize, seed: u64) -> Vec<Vec<usize>> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    (0..n)
        .map(|_| {
            (0..n)
                .map(|_| {
                    if rng.gen_bool(1.0 / 6.0) {
                        0
                    } else {
                        rng.gen_range(1..=max)
                    }
                })
                .collect()
        })
        .collect()
}

/// The bytes rank `i` sends rank `j` in operation `op`.
fn message(op: u64, i: usize, j: usize, len: usize) -> Vec<u8> {
    let mut rng = ChaCha8Rng::seed_from_u64(op << 32 | (i as u64) << 16 | j as u64);
    let mut v = vec![0; len];
    rng.fill(&mut v[..]);
    v
}

/// Every rank sends every other rank its message and receives one from each: what rank `i`
/// got, per rank.
fn all_to_all(
    eps: &[Arc<Endpoint>],
    op: u64,
    proto: &ExchangeProtocol,
    sz: &[Vec<usize>],
) -> Vec<Outcome> {
    let n = eps.len();
    // Messages made first and every rank released at once: the ranks start together, as the
    // dead-peer bound (resend_timeout x dead_after) assumes.
    let sends: Vec<Vec<(u32, Vec<u8>)>> = (0..n)
        .map(|i| {
            (0..n)
                .filter(|&j| j != i)
                .map(|j| (j as u32, message(op, i, j, sz[i][j])))
                .collect()
        })
        .collect();
    let go = std::sync::Barrier::new(n);
    std::thread::scope(|s| {
        let hs: Vec<_> = sends
            .into_iter()
            .enumerate()
            .map(|(i, sends)| {
                let (ep, go) = (eps[i].clone(), &go);
                s.spawn(move || {
                    let from: Vec<u32> = (0..n as u32).filter(|&j| j != i as u32).collect();
                    go.wait();
                    ep.exchange(op, proto, sends, &from)
                })
            })
            .collect();
        hs.into_iter().map(|h| h.join().unwrap()).collect()
    })
}

fn check(op: u64, got: &[Outcome], sz: &[Vec<usize>]) {
    for (i, r) in got.iter().enumerate() {
        let r = r
            .as_ref()
            .unwrap_or_else(|e| panic!("rank {i}, op {op}: {e}"));
        let want: Vec<u32> = (0..sz.len() as u32).filter(|&j| j != i as u32).collect();
        assert_eq!(r.iter().map(|x| x.0).collect::<Vec<_>>(), want);
        for (j, bytes) in r {
            let j = *j as usize;
            assert!(
                *bytes == message(op, j, i, sz[j][i]),
                "op {op}: rank {i} got a wrong message from {j} ({} bytes, want {})",
                bytes.len(),
                sz[j][i]
            );
        }
    }
}

/// The transport's defaults (grants batched by `REAL_GRANT_BATCH`), plus GRPF granting per
/// packet (the thesis' protocol) and in units of 8.
fn protocols() -> Vec<ExchangeProtocol> {
    let mut v: Vec<ExchangeProtocol> = ["grpf", "hadoop-5", "madd"]
        .iter()
        .map(|p| ExchangeProtocol::parse(p).unwrap())
        .collect();
    for k in [1, 8] {
        let mut p = ExchangeProtocol::parse("grpf").unwrap();
        p.grant.grant_batch = k;
        v.push(p);
    }
    v
}

#[test]
fn all_to_all_of_eight_is_byte_exact_under_every_protocol() {
    let eps = cluster(8, |_| {});
    for (k, proto) in protocols().iter().enumerate() {
        let op = 1 + k as u64;
        let sz = sizes(8, 60_000, op);
        check(op, &all_to_all(&eps, op, proto, &sz), &sz);
    }
    let st = eps[0].stats();
    assert!(st.packets_sent > 0 && st.packets_received > 0);
    assert_eq!((st.malformed, st.foreign), (0, 0));
}

#[test]
fn all_to_all_survives_loss_duplication_and_reordering() {
    let eps = cluster(8, |c| {
        c.loss = LossInjection {
            drop: 0.02,
            duplicate: 0.02,
            reorder: 0.02,
            seed: 100 + c.rank as u64,
        };
    });
    for (k, proto) in protocols().iter().enumerate() {
        let op = 10 + k as u64;
        let sz = sizes(8, 40_000, op);
        check(op, &all_to_all(&eps, op, proto, &sz), &sz);
    }
    let total = |f: fn(&coflowkit_transport::EndpointStats) -> u64| {
        eps.iter().map(|e| f(&e.stats())).sum::<u64>()
    };
    assert!(total(|s| s.injected_drops) > 0);
    assert!(total(|s| s.injected_duplicates) > 0);
    assert!(total(|s| s.injected_reorders) > 0);
    assert!(total(|s| s.retransmissions) > 0, "drops but nothing resent");
}

#[test]
fn garbage_and_foreign_datagrams_are_counted_and_dropped() {
    let eps = cluster(4, |_| {});
    let target = eps[1].local_addr();
    let attacker = UdpSocket::bind("127.0.0.1:0").unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    let proto = ExchangeProtocol::parse("grpf").unwrap();
    let sz = sizes(4, 50_000, 77);
    let stop = std::sync::atomic::AtomicBool::new(false);
    let (sent_garbage, sent_foreign) = std::thread::scope(|s| {
        let noise = s.spawn(|| {
            let (mut g, mut f) = (0u64, 0u64);
            let packet = coflowkit_shuffle::proto::Packet {
                kind: coflowkit_shuffle::proto::Kind::Data,
                src: 0,
                dst: 1,
                seq: 0,
                total: 1,
                unsched: 1,
                seed: 0,
            };
            while !stop.load(std::sync::atomic::Ordering::Relaxed) || g < 50 {
                let len = rng.gen_range(0..200);
                let junk: Vec<u8> = (0..len).map(|_| rng.gen()).collect();
                attacker.send_to(&junk, target).unwrap();
                g += 1;
                // A well-formed datagram of another session, same operation id.
                let h = Header {
                    session: SESSION + 1,
                    op: 99,
                    packet,
                    msg_bytes: 3,
                    msg_crc: 0,
                };
                attacker
                    .send_to(&wire::encode(&h, &[1, 2, 3]).unwrap(), target)
                    .unwrap();
                f += 1;
                std::thread::sleep(Duration::from_micros(200));
            }
            (g, f)
        });
        let got = all_to_all(&eps, 99, &proto, &sz);
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        check(99, &got, &sz);
        noise.join().unwrap()
    });
    // Let the last ones land.
    std::thread::sleep(Duration::from_millis(50));
    let st = eps[1].stats();
    assert_eq!(st.foreign, sent_foreign);
    // Random bytes are malformed unless they happen to start with the magic, version and
    // session (they cannot in 2^56 tries here).
    assert_eq!(st.malformed, sent_garbage);
}

#[test]
fn a_malformed_datagram_of_our_session_is_refused_without_disturbing() {
    let eps = cluster(3, |_| {});
    let attacker = UdpSocket::bind("127.0.0.1:0").unwrap();
    let bad = |kind, src, dst, seq, total, msg_bytes, payload: &[u8]| {
        let h = Header {
            session: SESSION,
            op: 7,
            packet: coflowkit_shuffle::proto::Packet {
                kind,
                src,
                dst,
                seq,
                total,
                unsched: 0,
                seed: 0,
            },
            msg_bytes,
            msg_crc: 0,
        };
        wire::encode(&h, payload).unwrap()
    };
    use coflowkit_shuffle::proto::Kind;
    let sz = vec![vec![0, 5000, 0], vec![3000, 0, 1], vec![7, 0, 0]];
    // Start the operation first, so the datagrams hit it rather than the staging area.
    let proto = ExchangeProtocol::parse("grpf").unwrap();
    let got = std::thread::scope(|s| {
        let h = s.spawn(|| all_to_all(&eps, 7, &proto, &sz));
        let to = eps[0].local_addr();
        for d in [
            bad(Kind::Data, 9, 0, 0, 1, 10, &[0; 10]),    // no rank 9
            bad(Kind::Data, 1, 2, 0, 1, 10, &[0; 10]),    // not for rank 0
            bad(Kind::Data, 0, 0, 0, 1, 10, &[0; 10]),    // from itself
            bad(Kind::Data, 1, 0, 5, 1, 10, &[0; 10]),    // beyond the end
            bad(Kind::Data, 1, 0, 0, 9, 10, &[0; 10]),    // counts disagree
            bad(Kind::Grant, 1, 0, 1_000_000, 0, 0, &[]), // grant past the message
        ] {
            attacker.send_to(&d, to).unwrap();
        }
        h.join().unwrap()
    });
    check(7, &got, &sz);
    // Some may have arrived before the operation started (staged, then refused) or after it
    // ended (filtered): none was taken for data.
    let st = eps[0].stats();
    assert!(st.malformed >= 3, "{st:?}");
}

#[test]
fn two_operations_at_once_on_the_same_endpoints() {
    let eps = cluster(4, |_| {});
    let grpf = ExchangeProtocol::parse("grpf").unwrap();
    let hadoop = ExchangeProtocol::parse("hadoop-2").unwrap();
    let (a, b) = (sizes(4, 80_000, 1), sizes(4, 80_000, 2));
    let (ra, rb) = std::thread::scope(|s| {
        let x = s.spawn(|| all_to_all(&eps, 1 << 32 | 1, &grpf, &a));
        let y = s.spawn(|| all_to_all(&eps, 2 << 32 | 1, &hadoop, &b));
        (x.join().unwrap(), y.join().unwrap())
    });
    check(1 << 32 | 1, &ra, &a);
    check(2 << 32 | 1, &rb, &b);
}

#[test]
fn a_late_rank_is_served_from_the_staging_area() {
    let eps = cluster(3, |_| {});
    let proto = ExchangeProtocol::parse("grpf").unwrap();
    let sz = sizes(3, 20_000, 3);
    let got: Vec<_> = std::thread::scope(|s| {
        let hs: Vec<_> = (0..3)
            .map(|i| {
                let (ep, sz, proto) = (eps[i].clone(), &sz, &proto);
                s.spawn(move || {
                    if i == 2 {
                        std::thread::sleep(Duration::from_millis(100));
                    }
                    let sends = (0..3)
                        .filter(|&j| j != i)
                        .map(|j| (j as u32, message(5, i, j, sz[i][j])))
                        .collect();
                    let from: Vec<u32> = (0..3).filter(|&j| j != i as u32).collect();
                    ep.exchange(5, proto, sends, &from)
                })
            })
            .collect();
        hs.into_iter().map(|h| h.join().unwrap()).collect()
    });
    check(5, &got, &sz);
    assert!(eps[2].stats().staged > 0);
    // The operation id is spent.
    let again = eps[0].exchange(5, &proto, vec![], &[]);
    assert!(matches!(again, Err(TransportError::Config(_))), "{again:?}");
}

#[test]
fn an_endpoint_is_shared_between_threads() {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<Endpoint>();
}

#[test]
fn bad_arguments_are_errors_naming_the_rank() {
    let eps = cluster(2, |_| {});
    let p = ExchangeProtocol::parse("grpf").unwrap();
    let e = eps[0].exchange(1, &p, vec![(5, vec![1])], &[]).unwrap_err();
    assert!(e.to_string().contains("rank 5"), "{e}");
    let e = eps[0].exchange(2, &p, vec![], &[1, 1]).unwrap_err();
    assert!(e.to_string().contains("rank 1"), "{e}");
    let lock = ExchangeProtocol::parse("lockstep").unwrap();
    assert!(eps[0].exchange(3, &lock, vec![], &[]).is_err());
    // Nothing to move at all: done at once; a message to itself is handed over.
    let r = eps[0].exchange(4, &p, vec![(0, vec![9; 3])], &[0]).unwrap();
    assert_eq!(r, vec![(0, vec![9; 3])]);
}

#[test]
fn a_rank_that_dies_mid_exchange_is_named_by_the_others() {
    // Paced so the exchange would take about a second; rank 3 dies after 150 ms; a silent
    // peer is dead after 20 periods of 10 ms.
    let eps = cluster(4, |c| {
        c.rate_bps = Some(40e6);
        c.resend_timeout = Duration::from_millis(10);
        c.dead_after = 20;
    });
    let proto = ExchangeProtocol::parse("grpf").unwrap();
    let sz = vec![vec![1_500_000; 4]; 4];
    let (got, took) = std::thread::scope(|s| {
        let h = s.spawn(|| all_to_all(&eps, 1, &proto, &sz));
        // Wait until rank 3 is visibly mid-exchange.
        while eps[3].stats().packets_sent < 20 {
            std::thread::sleep(Duration::from_millis(5));
        }
        std::thread::sleep(Duration::from_millis(100));
        let died = Instant::now();
        eps[3].close();
        let got = h.join().unwrap();
        (got, died.elapsed())
    });
    for (i, r) in got.iter().enumerate().take(3) {
        match r {
            Err(TransportError::PeerDead { rank: 3 }) => {}
            other => panic!(
                "rank {i}: {other:?} after {took:?}; {:#?}",
                eps.iter().map(|e| e.stats()).collect::<Vec<_>>()
            ),
        }
    }
    assert!(
        matches!(got[3], Err(TransportError::Closed(_))),
        "{:?}",
        got[3]
    );
    // 20 silent periods of 10 ms, plus scheduling on a busy machine.
    assert!(took < Duration::from_secs(3), "took {took:?} to notice");
}

/// Rank 0 an endpoint, rank 1 a bare socket that the test speaks the wire through.
fn endpoint_and_bare_peer() -> (Endpoint, UdpSocket) {
    let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
    let bare = UdpSocket::bind("127.0.0.1:0").unwrap();
    bare.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let peers = vec![sock.local_addr().unwrap(), bare.local_addr().unwrap()];
    let mut cfg = EndpointConfig::new(0, peers, SESSION);
    cfg.resend_timeout = Duration::from_millis(50);
    (Endpoint::bind(sock, cfg).unwrap(), bare)
}

/// The one DATA packet of a `bytes`-long message (at most one payload) from rank 1 to rank 0.
fn lone_packet(op: u64, bytes: &[u8], crc: u32) -> Vec<u8> {
    use coflowkit_shuffle::proto::{Kind, Packet};
    let packet = Packet {
        kind: Kind::Data,
        src: 1,
        dst: 0,
        seq: 0,
        total: 1,
        unsched: 1,
        seed: 0,
    };
    let h = Header {
        session: SESSION,
        op,
        packet,
        msg_bytes: bytes.len() as u64,
        msg_crc: crc,
    };
    wire::encode(&h, bytes).unwrap()
}

/// The next ACK the bare peer receives for `op`. An "alive, not started" answer is skipped: a
/// packet that reaches the endpoint before the test's `exchange` starts gets one first.
fn next_ack(bare: &UdpSocket, op: u64) -> coflowkit_shuffle::proto::Packet {
    let mut buf = [0u8; 2048];
    loop {
        let n = bare.recv(&mut buf).expect("an ACK in time");
        let (h, _) = wire::decode(&buf[..n], SESSION).unwrap();
        if h.op == op
            && h.packet.kind == coflowkit_shuffle::proto::Kind::Ack
            && !wire::is_alive(&h.packet)
        {
            return h.packet;
        }
    }
}

#[test]
fn a_completed_operation_acks_again_when_its_sender_asks() {
    let (ep, bare) = endpoint_and_bare_peer();
    let to = ep.local_addr();
    let msg = b"hello".to_vec();
    let d = lone_packet(3, &msg, crc32fast::hash(&msg));
    bare.send_to(&d, to).unwrap();
    let p = ExchangeProtocol::parse("grpf").unwrap();
    let got = ep.exchange(3, &p, vec![], &[1]).unwrap();
    assert_eq!(got, vec![(1, msg)]);
    let ack = next_ack(&bare, 3);
    assert_eq!((ack.src, ack.dst, ack.seq), (0, 1, 1));
    assert_eq!(ep.stats().reacks, 0);
    // The ACK was "lost": the sender sends its packet again, long after the operation ended.
    bare.send_to(&d, to).unwrap();
    let again = next_ack(&bare, 3);
    assert_eq!(again, ack);
    assert_eq!(ep.stats().reacks, 1);
}

#[test]
fn a_message_that_fails_its_crc_is_an_error_naming_the_sender() {
    let (ep, bare) = endpoint_and_bare_peer();
    let msg = b"hello".to_vec();
    bare.send_to(
        &lone_packet(4, &msg, crc32fast::hash(&msg) ^ 1),
        ep.local_addr(),
    )
    .unwrap();
    let p = ExchangeProtocol::parse("grpf").unwrap();
    match ep.exchange(4, &p, vec![], &[1]) {
        Err(TransportError::Checksum { op: 4, from: 1 }) => {}
        other => panic!("{other:?}"),
    }
}

#[test]
fn an_operation_past_its_deadline_times_out() {
    let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
    // Rank 1 exists but never says anything; it is not declared dead within the deadline.
    let quiet = UdpSocket::bind("127.0.0.1:0").unwrap();
    let peers = vec![sock.local_addr().unwrap(), quiet.local_addr().unwrap()];
    let mut cfg = EndpointConfig::new(0, peers, SESSION);
    cfg.op_timeout = Some(Duration::from_millis(100));
    let ep = Endpoint::bind(sock, cfg).unwrap();
    let p = ExchangeProtocol::parse("grpf").unwrap();
    let t = Instant::now();
    match ep.exchange(8, &p, vec![(1, vec![1; 10])], &[1]) {
        Err(TransportError::Timeout {
            op: 8,
            after_ms: 100,
        }) => {}
        other => panic!("{other:?}"),
    }
    assert!(t.elapsed() >= Duration::from_millis(100));
    assert!(t.elapsed() < Duration::from_secs(3));
}

#[test]
fn linger_returns_once_peers_are_quiet_and_waits_while_they_talk() {
    let eps = cluster(2, |c| c.resend_timeout = Duration::from_millis(5));
    // Nobody talks: three quiet periods (15 ms) and it returns.
    let t0 = Instant::now();
    eps[0].linger();
    let quiet = t0.elapsed();
    assert!(quiet >= Duration::from_millis(15), "{quiet:?}");
    assert!(quiet < Duration::from_millis(400), "{quiet:?}");
    // A peer keeps sending (garbage counts as traffic: it may be a probe we must answer) for
    // 150 ms: linger waits it out.
    let target = eps[0].local_addr();
    let talker = std::thread::spawn(move || {
        let s = UdpSocket::bind("127.0.0.1:0").unwrap();
        let end = Instant::now() + Duration::from_millis(150);
        while Instant::now() < end {
            s.send_to(b"probe?", target).unwrap();
            std::thread::sleep(Duration::from_millis(2));
        }
    });
    std::thread::sleep(Duration::from_millis(5));
    let t0 = Instant::now();
    eps[0].linger();
    let waited = t0.elapsed();
    talker.join().unwrap();
    assert!(waited >= Duration::from_millis(120), "{waited:?}");
}

#[test]
fn an_eager_send_returns_before_its_receiver_starts_and_still_arrives() {
    // Rank 1 starts its receive only after rank 0's send has returned: under the default
    // `ReturnWhen::Sent` that must complete (under `Acked` it would wait forever for an ACK
    // that only a started receiver gives). Rank 0 keeps the operation until the ACK, and `linger` waits for that.
    let eps = cluster(2, |_| {});
    let proto = ExchangeProtocol::parse("grpf").unwrap();
    let msg = message(9, 0, 1, 5000);
    let got0 = eps[0]
        .exchange(9, &proto, vec![(1, msg.clone())], &[])
        .unwrap();
    assert!(got0.is_empty());
    let got1 = eps[1].exchange(9, &proto, vec![], &[0]).unwrap();
    assert_eq!(got1, vec![(0, msg)]);
    // Rank 0 still held the operation for the ACK; linger returns once it has it.
    eps[0].linger();
    eps[1].linger();
}

#[test]
fn an_acked_exchange_waits_for_its_receiver() {
    // Under `Acked` a send returns only once the receiver has the message.
    let eps = cluster(2, |c| {
        c.return_when = coflowkit_transport::ReturnWhen::Acked
    });
    let proto = ExchangeProtocol::parse("grpf").unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::scope(|s| {
        let (ep, proto) = (eps[0].clone(), &proto);
        s.spawn(move || {
            ep.exchange(3, proto, vec![(1, vec![7; 100])], &[]).unwrap();
            tx.send(()).unwrap();
        });
        // Not answered while rank 1 has not started (20 resend periods of 2 ms).
        assert!(rx.recv_timeout(Duration::from_millis(40)).is_err());
        eps[1].exchange(3, proto, vec![], &[0]).unwrap();
        rx.recv().unwrap();
    });
}

#[test]
fn spinning_and_acked_callers_still_exchange_byte_exact() {
    for tune in [
        (|c: &mut EndpointConfig| c.spin = Duration::from_micros(50)) as fn(&mut EndpointConfig),
        |c| c.return_when = coflowkit_transport::ReturnWhen::Acked,
    ] {
        let eps = cluster(4, tune);
        let proto = ExchangeProtocol::parse("grpf").unwrap();
        for op in 1..=3 {
            let sz = sizes(4, 30_000, op);
            check(op, &all_to_all(&eps, op, &proto, &sz), &sz);
        }
    }
}

#[test]
fn a_busy_rank_is_not_taken_for_dead() {
    // Rank 1 waits for rank 0's message; rank 0 is busy elsewhere for four times the window
    // in which a silent peer is declared dead (20 periods of 5 ms), then sends. Rank 0's
    // endpoint answers rank 1's probes with "alive, not started", so rank 1 waits.
    let eps = cluster(2, |c| {
        c.resend_timeout = Duration::from_millis(5);
        c.dead_after = 20;
    });
    let proto = ExchangeProtocol::parse("grpf").unwrap();
    std::thread::scope(|s| {
        let (ep, proto) = (eps[0].clone(), &proto);
        s.spawn(move || {
            std::thread::sleep(Duration::from_millis(400));
            ep.exchange(4, proto, vec![(1, vec![9; 3000])], &[])
                .unwrap();
        });
        let got = eps[1].exchange(4, proto, vec![], &[0]).unwrap();
        assert_eq!(got, vec![(0, vec![9; 3000])]);
    });
    assert!(eps[0].stats().alive_sent > 0);
    assert!(eps[1].stats().alive_received > 0);
    // A rank that is gone is still named: rank 1 waits for a message rank 0 never sends.
    let eps = cluster(2, |c| {
        c.resend_timeout = Duration::from_millis(5);
        c.dead_after = 20;
    });
    let ep1 = eps[1].clone();
    eps[0].close();
    let err = ep1.exchange(4, &proto, vec![], &[0]).unwrap_err();
    assert!(
        matches!(err, TransportError::PeerDead { rank: 0 }),
        "{err:?}"
    );
}
