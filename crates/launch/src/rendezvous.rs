//! The meeting at rank 0: every other rank opens a TCP connection to rank 0's rendezvous
//! address, says `{"magic", "rank", "size", "addr"}` (its UDP address) on one JSON line, and
//! gets back one line `{"session", "peers"}` (the UDP address of every rank, index = rank) once
//! all have come. Waits are bounded and a timeout names the ranks that never came; a
//! connection that sends garbage, nothing, or too much is dropped without disturbing the rest.
//!
//! With a job secret ([`Secret`]), a hello carries a fresh `nonce` and a `proof`, the
//! HMAC-SHA256 under the secret of the hello's fields and nonce (never the secret itself);
//! rank 0 refuses a hello without the right proof, naming the reason. Its table carries a
//! proof of the table and that rank's nonce, which the rank checks, so neither side takes a
//! table or a place from someone who does not hold the secret.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::error::io;
use crate::secret::Secret;
use crate::LaunchError;

pub const MAGIC: &str = "coflowkit-rendezvous/2";
/// Longest hello line rank 0 reads (a hello is under 200 bytes).
const HELLO_LIMIT: u64 = 4096;
/// How long rank 0 gives one connection to say hello (in all, not per read).
const HELLO_WAIT: Duration = Duration::from_secs(5);
/// Connections read at once (one thread each); more are closed at once, and a rank whose
/// connection was closed without a table connects again.
const MAX_READERS: usize = 64;

#[derive(Debug, Serialize, Deserialize)]
struct Hello {
    magic: String,
    rank: u32,
    size: u32,
    addr: SocketAddr,
    #[serde(default)]
    nonce: String,
    #[serde(default)]
    proof: String,
}

impl Hello {
    fn proved(&self, secret: &Secret) -> String {
        secret.prove(&[
            b"hello",
            self.magic.as_bytes(),
            &self.rank.to_le_bytes(),
            &self.size.to_le_bytes(),
            self.addr.to_string().as_bytes(),
            self.nonce.as_bytes(),
        ])
    }

    /// Whether its proof is right (compared in constant time).
    fn verify(&self, secret: &Secret) -> bool {
        crate::secret::same(&self.proved(secret), &self.proof)
    }
}

/// The proof of a table sent in answer to the hello of `nonce`.
fn table_proof(secret: &Secret, nonce: &str, session: u32, peers: &[SocketAddr]) -> String {
    let peers = serde_json::to_string(peers).expect("addresses serialize");
    secret.prove(&[
        b"table",
        nonce.as_bytes(),
        &session.to_le_bytes(),
        peers.as_bytes(),
    ])
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct Reply {
    #[serde(default)]
    session: u32,
    #[serde(default)]
    peers: Vec<SocketAddr>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    error: Option<String>,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    proof: String,
}

/// What every rank knows after the rendezvous.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Table {
    pub session: u32,
    /// UDP address of each rank, index = rank.
    pub peers: Vec<SocketAddr>,
}

/// Rank 0's side: wait on `listener` for ranks `1..size`, then send each the table whose
/// entry 0 is `own`. Returns the table and the number of connections dropped as garbage.
/// With `secret`, only hellos that prove it are taken (others are told why and counted).
pub fn serve(
    listener: TcpListener,
    size: u32,
    own: SocketAddr,
    session: u32,
    timeout: Duration,
    secret: Option<&Secret>,
) -> Result<(Table, u32), LaunchError> {
    let start = Instant::now();
    let deadline = start + timeout;
    listener
        .set_nonblocking(true)
        .map_err(io("rendezvous listener"))?;
    let (tx, rx) = mpsc::channel::<Option<(Hello, TcpStream)>>();
    let mut joined: BTreeMap<u32, (SocketAddr, String, TcpStream)> = BTreeMap::new();
    let mut garbage = 0u32;
    let mut readers = 0usize;
    let mut refused = 0u32;
    while (joined.len() as u32) < size - 1 {
        let now = Instant::now();
        if now >= deadline {
            // Named up to a few: a world of 2^32 - 1 would otherwise list them all.
            let missing = (1..size)
                .filter(|r| !joined.contains_key(r))
                .take(crate::error::MISSING_NAMED)
                .collect();
            return Err(LaunchError::RendezvousTimeout {
                waited_s: timeout.as_secs_f64(),
                size,
                missing,
                missing_count: size - 1 - joined.len() as u32,
            });
        }
        let mut idle = true;
        match listener.accept() {
            Ok((stream, from)) => {
                idle = false;
                if readers >= MAX_READERS {
                    refused += 1;
                    garbage += 1;
                    if refused.is_power_of_two() {
                        eprintln!(
                            "warning: rendezvous: {refused} connection(s) closed unread, \
                             {MAX_READERS} already waiting to say hello (latest from {from})"
                        );
                    }
                } else {
                    let tx = tx.clone();
                    let secret = secret.cloned();
                    let spawned = std::thread::Builder::new()
                        .name("rendezvous-hello".into())
                        .spawn(move || {
                            let _ = tx.send(read_hello(stream, size, own, secret.as_ref()));
                        });
                    match spawned {
                        Ok(_) => readers += 1,
                        // Out of threads or memory: this connection is closed, the rest served.
                        Err(e) => {
                            garbage += 1;
                            eprintln!("warning: rendezvous: connection from {from} closed: {e}");
                        }
                    }
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            // A connection reset before accept, out of descriptors: keep serving the others.
            Err(_) => {}
        }
        while let Ok(msg) = rx.try_recv() {
            idle = false;
            readers -= 1;
            match msg {
                // A rank that reconnects (its first try timed out) replaces its old entry.
                Some((h, s)) => {
                    joined.insert(h.rank, (h.addr, h.nonce, s));
                }
                None => garbage += 1,
            }
        }
        if idle {
            std::thread::sleep(Duration::from_millis(2));
        }
    }
    let mut peers = vec![own];
    peers.extend(joined.values().map(|(a, _, _)| *a));
    let line = |nonce: &str| {
        serde_json::to_string(&Reply {
            session,
            peers: peers.clone(),
            error: None,
            proof: secret.map_or(String::new(), |k| table_proof(k, nonce, session, &peers)),
        })
        .expect("a table serializes")
            + "\n"
    };
    let mut hung_up = Vec::new();
    for (rank, (_, nonce, mut s)) in joined {
        let _ = s.set_nonblocking(false);
        let _ = s.set_write_timeout(Some(HELLO_WAIT));
        if s.write_all(line(&nonce).as_bytes())
            .and_then(|_| s.flush())
            .is_err()
        {
            hung_up.push(rank);
        }
    }
    if !hung_up.is_empty() {
        return Err(LaunchError::Bad(format!(
            "rendezvous: rank(s) {hung_up:?} hung up before they got the table"
        )));
    }
    Ok((Table { session, peers }, garbage))
}

/// One connection's hello, or `None` for garbage. A well-formed hello that does not fit this
/// job (another size, a bad rank) is answered with the reason, so that rank fails clearly.
fn read_hello(
    stream: TcpStream,
    size: u32,
    own: SocketAddr,
    secret: Option<&Secret>,
) -> Option<(Hello, TcpStream)> {
    stream.set_nonblocking(false).ok()?;
    let line = read_line_by(&stream, Instant::now() + HELLO_WAIT)?;
    let hello: Hello = serde_json::from_str(line.trim_end()).ok()?;
    if hello.magic != MAGIC {
        return None;
    }
    let why = if secret.is_some_and(|k| !hello.verify(k)) {
        Some(format!(
            "rank {}: {} job secret (COFLOWKIT_SECRET or COFLOWKIT_SECRET_FILE must be the \
             same at every rank)",
            hello.rank,
            if hello.proof.is_empty() {
                "no proof of the"
            } else {
                "wrong"
            }
        ))
    } else if hello.size != size {
        Some(format!(
            "rank {} says the job has {} ranks, rank 0 says {size}",
            hello.rank, hello.size
        ))
    } else if hello.rank == 0 || hello.rank >= size {
        Some(format!("rank {} is not in 1..{size}", hello.rank))
    } else if let Some(bad) = unusable(hello.addr, own) {
        Some(format!(
            "rank {}: address {}: {bad}",
            hello.rank, hello.addr
        ))
    } else {
        None
    };
    if let Some(why) = why {
        let mut s = stream;
        let reply = Reply {
            error: Some(why),
            ..Reply::default()
        };
        let _ = writeln!(s, "{}", serde_json::to_string(&reply).ok()?);
        return None;
    }
    Some((hello, stream))
}

/// Why `addr` cannot be a peer of rank 0, whose own address is `own`: every rank's
/// endpoint sends to every other from one socket, so the families must match.
fn unusable(addr: SocketAddr, own: SocketAddr) -> Option<&'static str> {
    if addr.port() == 0 {
        Some("port 0 is not a bound port")
    } else if addr.ip().is_unspecified() {
        Some("an unspecified IP cannot be sent to")
    } else if addr.is_ipv4() != own.is_ipv4() {
        Some("its IP family differs from rank 0's")
    } else {
        None
    }
}

/// One line of at most `HELLO_LIMIT` bytes, read by `deadline` (a client that dribbles a
/// byte at a time cannot hold its reader past it); `None` otherwise.
fn read_line_by(stream: &TcpStream, deadline: Instant) -> Option<String> {
    let mut line = Vec::new();
    let mut buf = [0u8; 512];
    let mut s = stream;
    while !line.contains(&b'\n') {
        let left = deadline.checked_duration_since(Instant::now())?;
        if left.is_zero() || line.len() as u64 >= HELLO_LIMIT {
            return None;
        }
        stream.set_read_timeout(Some(left)).ok()?;
        // Not past the first newline's chunk: a hello is one line and nothing follows it.
        let want = buf.len().min((HELLO_LIMIT - line.len() as u64) as usize);
        match s.read(&mut buf[..want]) {
            // A last line without its newline still counts, as `read_line` had it.
            Ok(0) => break,
            Err(_) => return None,
            Ok(k) => line.extend_from_slice(&buf[..k]),
        }
    }
    let end = line.iter().position(|&b| b == b'\n').unwrap_or(line.len());
    String::from_utf8(line[..end].to_vec()).ok()
}

/// Every other rank's side: tell rank 0 at `rendezvous` (host:port) our UDP address `own`
/// and wait for the table, retrying the connection until `timeout` (rank 0 may start late).
/// With `secret`, the hello proves it and the table must prove it too.
pub fn join(
    rendezvous: &str,
    rank: u32,
    size: u32,
    own: SocketAddr,
    timeout: Duration,
    secret: Option<&Secret>,
) -> Result<Table, LaunchError> {
    let start = Instant::now();
    let deadline = start + timeout;
    let late = |why: String| LaunchError::JoinTimeout {
        addr: rendezvous.to_string(),
        waited_s: start.elapsed().as_secs_f64(),
        why,
    };
    let mut hello = Hello {
        magic: MAGIC.into(),
        rank,
        size,
        addr: own,
        nonce: Secret::generate()?,
        proof: String::new(),
    };
    if let Some(k) = secret {
        hello.proof = hello.proved(k);
    }
    let line = serde_json::to_string(&hello).expect("a hello serializes") + "\n";
    // Rank 0 closes connections it has no reader for (a flood of idle ones): connect again.
    let reply = loop {
        let mut stream = loop {
            let err = match connect_once(rendezvous, deadline) {
                Ok(s) => break s,
                Err(e) => e,
            };
            if Instant::now() + Duration::from_millis(50) >= deadline {
                return Err(late(format!("could not connect: {err}")));
            }
            std::thread::sleep(Duration::from_millis(50));
        };
        let sent = stream.write_all(line.as_bytes());
        let left = deadline.saturating_duration_since(Instant::now());
        stream
            .set_read_timeout(Some(left.max(Duration::from_millis(1))))
            .map_err(io("rendezvous socket"))?;
        let mut reply = String::new();
        let read = BufReader::new(stream)
            .take(64 + size as u64 * 64)
            .read_line(&mut reply);
        let closed = match (&sent, &read) {
            (Ok(()), Ok(_)) if !reply.is_empty() => break reply,
            (Ok(()), Ok(_)) => "rank 0 closed the connection without a table".to_string(),
            (Err(e), _) => format!("could not send our address: {e}"),
            (_, Err(e)) if is_reset(e) => format!("rank 0 closed the connection: {e}"),
            (_, Err(e)) => {
                // A read that timed out is the deadline: no point connecting again.
                return Err(late(format!(
                    "connected, but no table came (are all {size} ranks started?): {e}"
                )));
            }
        };
        if Instant::now() + Duration::from_millis(50) >= deadline {
            return Err(late(closed));
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let reply: Reply = serde_json::from_str(reply.trim_end())
        .map_err(|e| LaunchError::BadTable(format!("{e}")))?;
    if let Some(why) = reply.error {
        return Err(LaunchError::Refused { rank, why });
    }
    if let Some(k) = secret {
        if !crate::secret::same(
            &table_proof(k, &hello.nonce, reply.session, &reply.peers),
            &reply.proof,
        ) {
            return Err(LaunchError::BadTable(
                "it does not prove our job secret (is COFLOWKIT_SECRET or \
                 COFLOWKIT_SECRET_FILE the same at rank 0?)"
                    .into(),
            ));
        }
    }
    if reply.peers.len() != size as usize {
        return Err(LaunchError::BadTable(format!(
            "{} addresses for {size} ranks",
            reply.peers.len()
        )));
    }
    if reply.peers[rank as usize] != own {
        return Err(LaunchError::BadTable(format!(
            "entry {rank} is {}, we are {own}",
            reply.peers[rank as usize]
        )));
    }
    Ok(Table {
        session: reply.session,
        peers: reply.peers,
    })
}

fn is_reset(e: &std::io::Error) -> bool {
    use std::io::ErrorKind::*;
    matches!(e.kind(), ConnectionReset | ConnectionAborted | BrokenPipe)
}

fn connect_once(addr: &str, deadline: Instant) -> Result<TcpStream, String> {
    let addrs: Vec<SocketAddr> = addr
        .to_socket_addrs()
        .map_err(|e| format!("cannot resolve {addr}: {e}"))?
        .collect();
    let mut last = format!("{addr} resolves to no address");
    for a in addrs {
        let left = deadline.saturating_duration_since(Instant::now());
        match TcpStream::connect_timeout(&a, left.clamp(Duration::from_millis(1), HELLO_WAIT)) {
            Ok(s) => return Ok(s),
            Err(e) => last = format!("{a}: {e}"),
        }
    }
    Err(last)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::UdpSocket;

    fn udp() -> SocketAddr {
        // Distinct real addresses; the sockets themselves are not used.
        UdpSocket::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
    }

    #[test]
    fn every_rank_gets_the_same_table_despite_garbage_connections() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let at = listener.local_addr().unwrap().to_string();
        let size = 6u32;
        let own: Vec<SocketAddr> = (0..size).map(|_| udp()).collect();
        let own0 = own[0];
        let server = std::thread::spawn(move || {
            serve(listener, size, own0, 77, Duration::from_secs(20), None)
        });
        // Garbage first: bytes that are not JSON, a foreign magic, a connection that says
        // nothing and stays open, and one that closes at once.
        let mut g1 = TcpStream::connect(&at).unwrap();
        g1.write_all(b"\x00\xffGET / HTTP/1.0\r\n\r\n").unwrap();
        let mut g2 = TcpStream::connect(&at).unwrap();
        g2.write_all(b"{\"magic\":\"other\",\"rank\":1,\"size\":6,\"addr\":\"1.2.3.4:5\"}\n")
            .unwrap();
        let _silent = TcpStream::connect(&at).unwrap();
        drop(TcpStream::connect(&at).unwrap());
        let clients: Vec<_> = (1..size)
            .map(|r| {
                let at = at.clone();
                let me = own[r as usize];
                std::thread::spawn(move || join(&at, r, size, me, Duration::from_secs(20), None))
            })
            .collect();
        let tables: Vec<Table> = clients
            .into_iter()
            .map(|c| c.join().unwrap().unwrap())
            .collect();
        let (table, garbage) = server.join().unwrap().unwrap();
        assert_eq!(table.peers, own);
        assert_eq!(table.session, 77);
        assert!(tables.iter().all(|t| *t == table));
        assert!(garbage >= 2, "garbage = {garbage}");
    }

    #[test]
    fn a_missing_rank_is_named_when_the_wait_ends() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let at = listener.local_addr().unwrap().to_string();
        let server = std::thread::spawn(move || {
            serve(listener, 4, udp(), 1, Duration::from_millis(800), None)
        });
        let c1 = {
            let at = at.clone();
            std::thread::spawn(move || join(&at, 1, 4, udp(), Duration::from_millis(1500), None))
        };
        let c3 =
            std::thread::spawn(move || join(&at, 3, 4, udp(), Duration::from_millis(1500), None));
        let e = server.join().unwrap().unwrap_err();
        assert!(
            matches!(&e, LaunchError::RendezvousTimeout { missing, .. } if missing == &vec![2]),
            "{e}"
        );
        assert!(e.to_string().contains("[2]"), "{e}");
        // The ranks that came fail too, with a bounded wait, rather than hang.
        for c in [c1, c3] {
            assert!(c.join().unwrap().is_err());
        }
    }

    /// Issue 17: a world of 2^32 - 1 ranks (COFLOWKIT_SIZE) listed every missing rank, 16 GiB.
    #[test]
    fn a_huge_world_names_a_few_missing_ranks_and_counts_the_rest() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let e = serve(
            listener,
            u32::MAX,
            udp(),
            1,
            Duration::from_millis(50),
            None,
        )
        .unwrap_err();
        let LaunchError::RendezvousTimeout {
            missing,
            missing_count,
            ..
        } = &e
        else {
            panic!("{e}")
        };
        assert_eq!(missing.len(), crate::error::MISSING_NAMED);
        assert_eq!(*missing_count, u32::MAX - 1);
        assert!(
            e.to_string()
                .contains("4294967294 rank(s) of 4294967295: [1, 2,"),
            "{e}"
        );
        assert!(e.to_string().ends_with("16] ..."), "{e}");
    }

    #[test]
    fn a_rank_of_another_job_is_refused_with_the_reason() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let at = listener.local_addr().unwrap().to_string();
        let server = std::thread::spawn(move || {
            serve(listener, 2, udp(), 1, Duration::from_millis(2000), None)
        });
        let e = join(&at, 1, 3, udp(), Duration::from_secs(5), None).unwrap_err();
        assert!(
            e.to_string().contains("3 ranks") && e.to_string().contains("says 2"),
            "{e}"
        );
        // The right rank still gets in afterwards.
        let t = join(&at, 1, 2, udp(), Duration::from_secs(5), None).unwrap();
        assert_eq!(t.peers.len(), 2);
        assert!(server.join().unwrap().is_ok());
    }

    #[test]
    fn nobody_listening_is_a_bounded_error_naming_the_address() {
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let at = format!("127.0.0.1:{port}");
        let t0 = Instant::now();
        let e = join(&at, 1, 2, udp(), Duration::from_millis(300), None).unwrap_err();
        assert!(t0.elapsed() < Duration::from_secs(5));
        assert!(e.to_string().contains(&at), "{e}");
    }

    fn threads() -> usize {
        std::fs::read_dir("/proc/self/task").unwrap().count()
    }

    #[test]
    fn an_idle_connection_flood_takes_a_bounded_number_of_threads_and_ranks_still_join() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let at = listener.local_addr().unwrap().to_string();
        let own: Vec<SocketAddr> = (0..2).map(|_| udp()).collect();
        let own0 = own[0];
        let before = threads();
        let server =
            std::thread::spawn(move || serve(listener, 2, own0, 5, Duration::from_secs(30), None));
        let idle: Vec<TcpStream> = (0..300).map(|_| TcpStream::connect(&at).unwrap()).collect();
        std::thread::sleep(Duration::from_millis(500));
        let during = threads();
        // One reader per connection would be 300 more; other tests of this binary add a few.
        assert!(
            during <= before + MAX_READERS + 100,
            "{before} threads before the flood, {during} during it"
        );
        // The rank is closed out while the readers are taken, and connects again until one
        // frees (the idle ones are dropped after HELLO_WAIT).
        let me = own[1];
        let table = join(&at, 1, 2, me, Duration::from_secs(30), None).unwrap();
        let (served, garbage) = server.join().unwrap().unwrap();
        assert_eq!(table, served);
        assert_eq!(table.peers, own);
        assert!(garbage >= 300 - MAX_READERS as u32, "garbage = {garbage}");
        drop(idle);
    }

    #[test]
    fn a_hello_whose_address_cannot_be_a_peer_is_refused_with_the_reason() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let at = listener.local_addr().unwrap().to_string();
        let server = std::thread::spawn(move || {
            serve(listener, 2, udp(), 1, Duration::from_millis(1500), None)
        });
        for (addr, why) in [
            ("[::1]:0", "port 0"),
            ("[::1]:9", "IP family"),
            ("0.0.0.0:9", "unspecified"),
        ] {
            let mut s = TcpStream::connect(&at).unwrap();
            let hello =
                format!("{{\"magic\":\"{MAGIC}\",\"rank\":1,\"size\":2,\"addr\":\"{addr}\"}}\n");
            s.write_all(hello.as_bytes()).unwrap();
            let mut reply = String::new();
            BufReader::new(s).read_line(&mut reply).unwrap();
            assert!(reply.contains(why), "{addr}: {reply}");
        }
        // None of them took rank 1's place.
        assert!(matches!(
            server.join().unwrap(),
            Err(LaunchError::RendezvousTimeout { .. })
        ));
    }

    #[test]
    fn a_rank_with_the_wrong_secret_is_refused_and_the_others_join() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let at = listener.local_addr().unwrap().to_string();
        let good = Secret::new("the job's").unwrap();
        let bad = Secret::new("another job's").unwrap();
        let k = good.clone();
        let rank0 = std::thread::spawn(move || {
            serve(listener, 2, udp(), 7, Duration::from_secs(20), Some(&k))
        });
        // The wrong secret, then none: each refused with the reason, before the real rank 1.
        let e = join(&at, 1, 2, udp(), Duration::from_secs(5), Some(&bad)).unwrap_err();
        assert!(
            matches!(&e, LaunchError::Refused { rank: 1, why } if why.contains("wrong job secret")),
            "{e}"
        );
        let e = join(&at, 1, 2, udp(), Duration::from_secs(5), None).unwrap_err();
        assert!(e.to_string().contains("no proof of the job secret"), "{e}");
        let me = udp();
        let t = join(&at, 1, 2, me, Duration::from_secs(5), Some(&good)).unwrap();
        assert_eq!(t.peers[1], me);
        let (t0, garbage) = rank0.join().unwrap().unwrap();
        assert_eq!(t0, t);
        assert_eq!(garbage, 2, "the two refused hellos");
    }

    #[test]
    fn a_table_that_does_not_prove_the_secret_is_refused() {
        // Rank 0 without a secret (or an impostor in its place): its table has no proof.
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let at = listener.local_addr().unwrap().to_string();
        let rank0 =
            std::thread::spawn(move || serve(listener, 2, udp(), 7, Duration::from_secs(5), None));
        let k = Secret::new("the job's").unwrap();
        let e = join(&at, 1, 2, udp(), Duration::from_secs(5), Some(&k)).unwrap_err();
        assert!(
            matches!(&e, LaunchError::BadTable(why) if why.contains("does not prove our job secret")),
            "{e}"
        );
        let _ = rank0.join();
    }
}
