//! Datagrams forged by a sender that knows the session id (and can derive sequence numbers
//! from what it sees) but not the job's secret. With a key they change nothing; without one
//! (the control, the transport before authentication) the same forgeries break the run.

use std::net::{SocketAddr, UdpSocket};
use std::sync::Arc;
use std::time::Duration;

use coflowkit_shuffle::proto::{Kind, Packet};
use coflowkit_transport::wire::{self, Header};
use coflowkit_transport::{Endpoint, EndpointConfig, ExchangeProtocol, ReturnWhen, WireKey};

const SESSION: u32 = 0xa11;

type Received = Result<Vec<(u32, Vec<u8>)>, String>;

fn cluster(
    n: usize,
    auth: Option<WireKey>,
    tune: impl Fn(&mut EndpointConfig),
) -> Vec<Arc<Endpoint>> {
    let socks: Vec<UdpSocket> = (0..n)
        .map(|_| UdpSocket::bind("127.0.0.1:0").unwrap())
        .collect();
    let peers: Vec<SocketAddr> = socks.iter().map(|s| s.local_addr().unwrap()).collect();
    socks
        .into_iter()
        .enumerate()
        .map(|(r, s)| {
            let mut cfg = EndpointConfig::new(r as u32, peers.clone(), SESSION);
            cfg.resend_timeout = Duration::from_millis(5);
            cfg.dead_after = 400;
            cfg.auth = auth.clone();
            tune(&mut cfg);
            Arc::new(Endpoint::bind(s, cfg).unwrap())
        })
        .collect()
}

/// A datagram of the run's session, sealed with a key derived from the wrong secret.
fn forged(op: u64, packet: Packet, msg_bytes: u64, msg_crc: u32, payload: &[u8]) -> Vec<u8> {
    let h = Header {
        session: SESSION,
        op,
        packet,
        msg_bytes,
        msg_crc,
    };
    let mut d = wire::encode(&h, payload).unwrap();
    WireKey::derive(b"not the job's secret", SESSION).seal(&mut d);
    d
}

fn key() -> Option<WireKey> {
    Some(WireKey::derive(b"the job's secret", SESSION))
}

/// A forged first packet of rank 0's message to rank 1 (right session, op, src, dst, seq 0),
/// arriving before the real one, claims the message's length and CRC. Returns what rank 1
/// received and how many datagrams it dropped as unauthenticated.
fn forged_first_packet(auth: Option<WireKey>) -> (Received, u64) {
    let eps = cluster(2, auth, |c| {
        c.op_timeout = Some(Duration::from_millis(1500))
    });
    let attacker = UdpSocket::bind("127.0.0.1:0").unwrap();
    let lie = b"forged".to_vec();
    let packet = Packet {
        kind: Kind::Data,
        src: 0,
        dst: 1,
        seq: 0,
        total: 1,
        unsched: 1,
        seed: 0,
    };
    let d = forged(7, packet, lie.len() as u64, crc32fast::hash(&lie), &lie);
    attacker.send_to(&d, eps[1].local_addr()).unwrap();
    std::thread::sleep(Duration::from_millis(50));
    let proto = ExchangeProtocol::parse("grpf").unwrap();
    let real = vec![42u8; 5000];
    let got = std::thread::scope(|s| {
        let (ep0, p) = (eps[0].clone(), &proto);
        let real = real.clone();
        s.spawn(move || ep0.exchange(7, p, vec![(1, real)], &[]));
        eps[1].exchange(7, &proto, vec![], &[0])
    });
    (
        got.map_err(|e| e.to_string()),
        eps[1].stats().unauthenticated,
    )
}

#[test]
fn a_forged_first_packet_changes_nothing_and_the_run_finishes() {
    let (got, dropped) = forged_first_packet(key());
    assert_eq!(got.unwrap(), vec![(0, vec![42u8; 5000])]);
    assert_eq!(dropped, 1, "the forged packet is counted");
    // The control: without a key the forged packet is taken for the message (it may even
    // complete it: rank 1 then gets the forger's bytes), or it fixes the message and the run
    // fails.
    let (got, dropped) = forged_first_packet(None);
    assert_ne!(
        got,
        Ok(vec![(0, vec![42u8; 5000])]),
        "without tags the forgery was harmless?"
    );
    assert_eq!(dropped, 0);
}

/// Rank 0 sends rank 1 a 4-packet message and, under `Acked`, waits for the ACK; a forger
/// floods ACKs with the right `seq` (the packet count) before rank 1 has started. Returns
/// whether rank 0's exchange returned during the flood, then whether rank 1 got the message.
fn forged_acks(auth: Option<WireKey>) -> (bool, bool, u64) {
    let eps = cluster(2, auth, |c| {
        c.return_when = ReturnWhen::Acked;
        c.op_timeout = Some(Duration::from_millis(1500));
    });
    let attacker = UdpSocket::bind("127.0.0.1:0").unwrap();
    let ack = Packet {
        kind: Kind::Ack,
        src: 1,
        dst: 0,
        seq: 4, // 5000 bytes in payloads of 1400
        total: 0,
        unsched: 0,
        seed: 0,
    };
    let d = forged(9, ack, 0, 0, &[]);
    let proto = ExchangeProtocol::parse("grpf").unwrap();
    let msg = vec![7u8; 5000];
    std::thread::scope(|s| {
        let (tx, rx) = std::sync::mpsc::channel();
        let (ep0, p, m) = (eps[0].clone(), &proto, msg.clone());
        s.spawn(move || {
            let _ = tx.send(ep0.exchange(9, p, vec![(1, m)], &[]).is_ok());
        });
        // Rank 0 has sent its packets by then; the ACKs answer them.
        std::thread::sleep(Duration::from_millis(20));
        for _ in 0..40 {
            attacker.send_to(&d, eps[0].local_addr()).unwrap();
            std::thread::sleep(Duration::from_millis(5));
        }
        let early = rx.try_recv().is_ok();
        let got = eps[1].exchange(9, &proto, vec![], &[0]);
        let delivered = got.map(|g| g == vec![(0, msg.clone())]).unwrap_or(false);
        let _ = rx.recv();
        (early, delivered, eps[0].stats().unauthenticated)
    })
}

#[test]
fn forged_acks_with_the_right_sequence_number_change_nothing() {
    let (early, delivered, dropped) = forged_acks(key());
    assert!(!early, "rank 0 took a forged ACK");
    assert!(delivered, "rank 1 did not get the message");
    assert_eq!(dropped, 40, "every forged ACK is counted");
    // The control: without a key rank 0 takes the forged ACK, ending its send before rank 1
    // has even started (its data got through only because rank 1 had staged it).
    let r = forged_acks(None);
    assert!(r.0, "without tags the forged ACK was harmless? {r:?}");
}

#[test]
fn authenticated_endpoints_exchange_and_an_unkeyed_peer_is_not_heard() {
    let eps = cluster(3, key(), |_| {});
    let proto = ExchangeProtocol::parse("grpf").unwrap();
    let got = std::thread::scope(|s| {
        let hs: Vec<_> = (0..3)
            .map(|i| {
                let (ep, p) = (eps[i].clone(), &proto);
                s.spawn(move || {
                    let sends = (0..3)
                        .filter(|&j| j != i)
                        .map(|j| (j as u32, vec![(i * 3 + j) as u8; 3000 + j]))
                        .collect();
                    let from: Vec<u32> = (0..3).filter(|&j| j != i).map(|j| j as u32).collect();
                    ep.exchange(1, p, sends, &from).unwrap()
                })
            })
            .collect();
        hs.into_iter()
            .map(|h| h.join().unwrap())
            .collect::<Vec<_>>()
    });
    for (i, g) in got.iter().enumerate() {
        for (j, m) in g {
            assert_eq!(m, &vec![(*j as usize * 3 + i) as u8; 3000 + i]);
        }
    }
    // Datagrams without a tag (an endpoint that has no key) are dropped as unauthenticated.
    let bare = UdpSocket::bind("127.0.0.1:0").unwrap();
    let h = Header {
        session: SESSION,
        op: 99,
        packet: Packet {
            kind: Kind::Grant,
            src: 1,
            dst: 0,
            seq: 1,
            total: 0,
            unsched: 0,
            seed: 0,
        },
        msg_bytes: 0,
        msg_crc: 0,
    };
    let before = eps[0].stats();
    bare.send_to(&wire::encode(&h, &[]).unwrap(), eps[0].local_addr())
        .unwrap();
    let t = std::time::Instant::now();
    while eps[0].stats().unauthenticated == before.unauthenticated
        && t.elapsed() < Duration::from_secs(5)
    {
        std::thread::sleep(Duration::from_millis(5));
    }
    let after = eps[0].stats();
    assert_eq!(after.unauthenticated, before.unauthenticated + 1);
    assert_eq!(
        after.staged, before.staged,
        "nothing staged for the unknown op"
    );
}

/// Sealed datagrams that wait in the staging area for a late rank are opened once, when they
/// arrive, and handed on opened when the rank starts; retransmissions, duplicates and
/// reordered datagrams are sealed and opened like any other (each send takes a fresh nonce).
#[test]
fn a_late_rank_gets_its_staged_datagrams_and_loss_is_recovered_under_keys() {
    use coflowkit_transport::LossInjection;
    let eps = cluster(3, key(), |c| {
        c.loss = LossInjection {
            drop: 0.03,
            duplicate: 0.03,
            reorder: 0.03,
            seed: 40 + c.rank as u64,
        };
    });
    let proto = ExchangeProtocol::parse("grpf").unwrap();
    let msg = |i: usize, j: usize| -> Vec<u8> {
        (0..30_000 + 1000 * j)
            .map(|k| (k * 7 + i * 31 + j) as u8)
            .collect()
    };
    let got = std::thread::scope(|s| {
        let hs: Vec<_> = (0..3)
            .map(|i| {
                let (ep, p) = (eps[i].clone(), &proto);
                s.spawn(move || {
                    if i == 2 {
                        std::thread::sleep(Duration::from_millis(100));
                    }
                    let sends = (0..3).filter(|&j| j != i).map(|j| (j as u32, msg(i, j)));
                    let from: Vec<u32> = (0..3).filter(|&j| j != i).map(|j| j as u32).collect();
                    ep.exchange(3, p, sends.collect(), &from).unwrap()
                })
            })
            .collect();
        hs.into_iter()
            .map(|h| h.join().unwrap())
            .collect::<Vec<_>>()
    });
    for (i, g) in got.iter().enumerate() {
        assert_eq!(g.len(), 2);
        for (j, m) in g {
            assert!(*m == msg(*j as usize, i), "rank {i} from {j}: wrong bytes");
        }
    }
    let st: Vec<_> = eps.iter().map(|e| e.stats()).collect();
    assert!(
        st[2].staged > 0,
        "nothing was staged: the test tests nothing"
    );
    assert_eq!(
        st.iter().map(|s| s.unauthenticated).sum::<u64>(),
        0,
        "a genuine datagram failed its tag"
    );
    assert!(st.iter().map(|s| s.injected_drops).sum::<u64>() > 0);
    assert!(st.iter().map(|s| s.injected_duplicates).sum::<u64>() > 0);
    assert!(st.iter().map(|s| s.retransmissions).sum::<u64>() > 0);
}
