//! From environment to a running world: rank and size (`env`), rank 0's address
//! (`COFLOWKIT_RENDEZVOUS` or a host file), a UDP socket on the interface that reaches rank 0,
//! and the table of everyone's UDP address (`rendezvous`).

use std::net::{IpAddr, Ipv4Addr, SocketAddr, TcpListener, ToSocketAddrs, UdpSocket};
use std::time::Duration;

use crate::env::{rank_from, Launcher};
use crate::error::io;
use crate::rendezvous::{join, serve};
use crate::LaunchError;

/// Rendezvous port when only a host file names rank 0.
pub const DEFAULT_PORT: u16 = 47000;

/// One rank's view of the job after the rendezvous.
#[derive(Debug)]
pub struct World {
    pub rank: u32,
    pub size: u32,
    /// Shared by every rank; a transport drops datagrams of other sessions.
    pub session: u32,
    /// UDP address of every rank (index = rank); `peers[rank]` is `socket`'s.
    pub peers: Vec<SocketAddr>,
    pub socket: UdpSocket,
    /// Which launcher's variables gave the rank (`None`: no launcher, a world of one).
    pub launcher: Option<Launcher>,
    /// The job's secret, proved at the rendezvous; keys the transport's datagrams (`None`: a
    /// world of one, or `COFLOWKIT_INSECURE=1`).
    pub secret: Option<crate::Secret>,
}

/// Rank 0's `host:port` from `COFLOWKIT_RENDEZVOUS`, or from the first host of the file
/// `COFLOWKIT_HOSTFILE` (Open MPI and Slurm host files: one host per line, `#` comments,
/// anything after the host name ignored) and `COFLOWKIT_RENDEZVOUS_PORT` (default 47000).
pub fn rendezvous_from(
    get: &impl Fn(&str) -> Option<String>,
) -> Result<Option<String>, LaunchError> {
    if let Some(v) = get("COFLOWKIT_RENDEZVOUS") {
        let v = v.trim().to_string();
        if v.rsplit_once(':')
            .and_then(|(_, p)| p.parse::<u16>().ok())
            .is_none()
        {
            return Err(LaunchError::Env {
                var: "COFLOWKIT_RENDEZVOUS",
                value: v,
                why: "expected host:port".into(),
            });
        }
        return Ok(Some(v));
    }
    let Some(path) = get("COFLOWKIT_HOSTFILE") else {
        return Ok(None);
    };
    let port = match get("COFLOWKIT_RENDEZVOUS_PORT") {
        None => DEFAULT_PORT,
        Some(p) => p.trim().parse::<u16>().map_err(|e| LaunchError::Env {
            var: "COFLOWKIT_RENDEZVOUS_PORT",
            value: p.clone(),
            why: format!("not a port ({e})"),
        })?,
    };
    let host = first_host(&path)?;
    Ok(Some(format!("{host}:{port}")))
}

/// Most bytes of a host file read before its first host (`/dev/zero` is not read whole).
pub const HOSTFILE_MAX_BYTES: u64 = 1 << 20;
/// Longest line of a host file (comments included).
pub const HOSTFILE_MAX_LINE: usize = 64 << 10;
/// Longest host name (DNS allows 253 characters).
pub const HOST_MAX_BYTES: usize = 255;

/// The first host of the host file `path`: at most [`HOSTFILE_MAX_BYTES`] are read (a FIFO, socket
/// or device within [`coflowkit_model::small_file::WAIT`]; a FIFO with no writer blocked for
/// ever), each line at most [`HOSTFILE_MAX_LINE`] bytes. Errors name the file, the line and the
/// field, and quote what they quote bounded and with control characters escaped.
fn first_host(path: &str) -> Result<String, LaunchError> {
    let bad = |why: String| LaunchError::HostFile {
        path: path.to_string(),
        why,
    };
    let bytes = coflowkit_model::small_file::read_small(
        std::path::Path::new(path),
        HOSTFILE_MAX_BYTES,
        coflowkit_model::small_file::WAIT,
    )
    .map_err(|e| bad(e.to_string()))?;
    let cut = bytes.len() as u64 > HOSTFILE_MAX_BYTES;
    let bytes = &bytes[..bytes.len().min(HOSTFILE_MAX_BYTES as usize)];
    for (i, line) in bytes.split(|&b| b == b'\n').enumerate() {
        let number = i + 1;
        if line.len() > HOSTFILE_MAX_LINE {
            return Err(bad(format!(
                "line {number}: longer than {HOSTFILE_MAX_LINE} bytes"
            )));
        }
        let text = std::str::from_utf8(line)
            .map_err(|e| bad(format!("line {number}: not UTF-8 text ({e})")))?;
        let Some(h) = text
            .split('#')
            .next()
            .and_then(|l| l.split_whitespace().next())
        else {
            continue;
        };
        return host_of(h).map_err(|why| bad(format!("line {number}, field 1 (host): {why}")));
    }
    Err(bad(if cut {
        format!("no host in its first {HOSTFILE_MAX_BYTES} bytes")
    } else {
        "no host in it (the first host is rank 0's)".into()
    }))
}

/// The host of a host file's first field, as it goes before `:port`: a name or IPv4 address
/// (`node3`, `10.0.0.7`; anything after a `:` is ignored, as MPICH's `host:count`), a bare IPv6
/// address (`::1`, `fe80::2`) or one in brackets with an optional number after `]:`
/// (`[::1]`, `[::1]:4`); IPv6 comes back in brackets (`[::1]`).
fn host_of(field: &str) -> Result<String, String> {
    use coflowkit_model::echo::{echo, visible};
    use std::net::Ipv6Addr;
    let shown = echo(field);
    if let Some(rest) = field.strip_prefix('[') {
        let Some((inner, after)) = rest.split_once(']') else {
            return Err(format!("`{shown}` opens a bracket `[` it does not close"));
        };
        if inner.parse::<Ipv6Addr>().is_err() {
            return Err(format!(
                "`{}` in brackets is not an IPv6 address",
                echo(inner)
            ));
        }
        let tail_ok = after.is_empty()
            || after
                .strip_prefix(':')
                .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
        if !tail_ok {
            return Err(format!(
                "`{}` after `[{}]` is not `:` and a number",
                echo(after),
                echo(inner)
            ));
        }
        return Ok(format!("[{inner}]"));
    }
    if field.matches(':').count() >= 2 {
        return match field.parse::<Ipv6Addr>() {
            Ok(_) => Ok(format!("[{field}]")),
            Err(_) => Err(format!(
                "`{shown}` has several `:` but is not an IPv6 address"
            )),
        };
    }
    let host = field.split(':').next().unwrap_or(field);
    if host.contains('=') {
        return Err(format!(
            "`{shown}` is an option (key=value), not a host: a line starts with its host \
             (`node1 slots=4`)"
        ));
    }
    if host.is_empty() {
        return Err(format!("`{shown}` has no host before its `:`"));
    }
    if host.len() > HOST_MAX_BYTES {
        return Err(format!(
            "host name of {} bytes, longer than {HOST_MAX_BYTES}: {}",
            host.len(),
            echo(host)
        ));
    }
    if let Some((at, c)) = host
        .char_indices()
        .find(|&(_, c)| !(c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_')))
    {
        return Err(format!(
            "`{shown}` is not a host name or address: {} at byte {at} (a name has letters, \
             digits, `.`, `-` and `_`)",
            visible(c.encode_utf8(&mut [0; 4]))
        ));
    }
    Ok(host.to_string())
}

/// The local address the kernel would use to reach `to` (no packet is sent).
pub fn local_ip_towards(to: SocketAddr) -> Result<IpAddr, LaunchError> {
    let any: SocketAddr = if to.is_ipv4() {
        (Ipv4Addr::UNSPECIFIED, 0).into()
    } else {
        "[::]:0".parse().expect("literal")
    };
    let s = UdpSocket::bind(any).map_err(io("probe socket"))?;
    s.connect(to)
        .map_err(io(format!("no route to the rendezvous {to}")))?;
    Ok(s.local_addr().map_err(io("probe socket"))?.ip())
}

/// A session id for a new job: `COFLOWKIT_SESSION` when set, else from the clock and the
/// process id (only its uniqueness matters, never its value).
pub fn session_from(get: &impl Fn(&str) -> Option<String>) -> Result<u32, LaunchError> {
    if let Some(s) = get("COFLOWKIT_SESSION") {
        return s.trim().parse::<u32>().map_err(|e| LaunchError::Env {
            var: "COFLOWKIT_SESSION",
            value: s.clone(),
            why: format!("not a 32-bit integer ({e})"),
        });
    }
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0);
    let h = (t ^ (std::process::id() as u64).rotate_left(32)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    Ok(((h >> 32) as u32).max(1))
}

/// Bootstrap from the process environment, waiting at most `timeout` for the other ranks.
pub fn bootstrap(timeout: Duration) -> Result<World, LaunchError> {
    bootstrap_from(&|k| std::env::var(k).ok(), timeout)
}

pub fn bootstrap_from(
    get: &impl Fn(&str) -> Option<String>,
    timeout: Duration,
) -> Result<World, LaunchError> {
    let info = rank_from(get)?;
    let Some(info) = info.filter(|i| i.size > 1) else {
        let socket = UdpSocket::bind((Ipv4Addr::LOCALHOST, 0)).map_err(io("UDP socket"))?;
        let me = socket.local_addr().map_err(io("UDP socket"))?;
        return Ok(World {
            rank: 0,
            size: 1,
            session: session_from(get)?,
            peers: vec![me],
            socket,
            launcher: info.map(|i| i.launcher),
            secret: None,
        });
    };
    let at = rendezvous_from(get)?.ok_or(LaunchError::NoRendezvous { size: info.size })?;
    let secret = crate::secret::secret_from(get)?;
    let shown = coflowkit_model::echo::echo(&at);
    let target = at
        .to_socket_addrs()
        .map_err(io(format!("cannot resolve the rendezvous {shown}")))?
        .next()
        .ok_or_else(|| {
            LaunchError::Bad(format!("the rendezvous {shown} resolves to no address"))
        })?;
    let ip = local_ip_towards(target)?;
    let socket = UdpSocket::bind((ip, 0)).map_err(io(format!("UDP socket on {ip}")))?;
    let me = socket.local_addr().map_err(io("UDP socket"))?;
    let table = if info.rank == 0 {
        let listener = TcpListener::bind(target)
            .or_else(|_| TcpListener::bind((Ipv4Addr::UNSPECIFIED, target.port())))
            .map_err(io(format!("rendezvous listener on {shown}")))?;
        serve(
            listener,
            info.size,
            me,
            session_from(get)?,
            timeout,
            secret.as_ref(),
        )?
        .0
    } else {
        join(&at, info.rank, info.size, me, timeout, secret.as_ref())?
    };
    Ok(World {
        rank: info.rank,
        size: info.size,
        session: table.session,
        peers: table.peers,
        socket,
        launcher: Some(info.launcher),
        secret,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn vars(v: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let m: HashMap<String, String> = v
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |k| m.get(k).cloned()
    }

    #[test]
    fn rendezvous_from_variable_or_host_file() {
        assert_eq!(
            rendezvous_from(&vars(&[("COFLOWKIT_RENDEZVOUS", "node7:5000")])).unwrap(),
            Some("node7:5000".into())
        );
        let e = rendezvous_from(&vars(&[("COFLOWKIT_RENDEZVOUS", "node7")])).unwrap_err();
        assert!(e.to_string().contains("host:port"), "{e}");
        let dir = std::env::temp_dir().join(format!("ck-hosts-{}", std::process::id()));
        std::fs::write(&dir, "# cluster\n\n  node3 slots=4\nnode4 slots=4\n").unwrap();
        let path = dir.to_str().unwrap();
        assert_eq!(
            rendezvous_from(&vars(&[("COFLOWKIT_HOSTFILE", path)])).unwrap(),
            Some(format!("node3:{DEFAULT_PORT}"))
        );
        assert_eq!(
            rendezvous_from(&vars(&[
                ("COFLOWKIT_HOSTFILE", path),
                ("COFLOWKIT_RENDEZVOUS_PORT", "6001")
            ]))
            .unwrap(),
            Some("node3:6001".into())
        );
        std::fs::write(&dir, "# nothing\n\n").unwrap();
        let e = rendezvous_from(&vars(&[("COFLOWKIT_HOSTFILE", path)])).unwrap_err();
        assert!(
            e.to_string().contains(path) && e.to_string().contains("no host"),
            "{e}"
        );
        std::fs::remove_file(&dir).unwrap();
        let e = rendezvous_from(&vars(&[("COFLOWKIT_HOSTFILE", "/nonexistent/h")])).unwrap_err();
        assert!(e.to_string().contains("/nonexistent/h"), "{e}");
        assert_eq!(rendezvous_from(&vars(&[])).unwrap(), None);
    }

    /// Issue 17: `/dev/zero` was read whole (to an allocation failure), and a 50 MB host name
    /// was echoed whole into the error.
    #[test]
    fn host_files_are_read_bounded_and_long_names_are_not_echoed_whole() {
        let e = rendezvous_from(&vars(&[("COFLOWKIT_HOSTFILE", "/dev/zero")])).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!("host file /dev/zero: line 1: longer than {HOSTFILE_MAX_LINE} bytes")
        );
        let dir = tempfile_path("ck-hosts-long");
        let path = dir.to_str().unwrap();
        std::fs::write(&dir, format!("{}\n", "h".repeat(50_000))).unwrap();
        let e = rendezvous_from(&vars(&[("COFLOWKIT_HOSTFILE", path)]))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("host name of 50000 bytes, longer than 255"),
            "{e}"
        );
        assert!(e.len() < 600, "{} bytes: {}", e.len(), &e[..200]);
        // Many short comment lines: refused at the byte bound, not read on.
        std::fs::write(&dir, "# c\n".repeat(300_000)).unwrap();
        let e = rendezvous_from(&vars(&[("COFLOWKIT_HOSTFILE", path)])).unwrap_err();
        assert!(
            e.to_string().contains("no host in its first 1048576 bytes"),
            "{e}"
        );
        std::fs::write(&dir, b"\xff\xfe node1\n").unwrap();
        let e = rendezvous_from(&vars(&[("COFLOWKIT_HOSTFILE", path)])).unwrap_err();
        assert!(e.to_string().contains("line 1: not UTF-8"), "{e}");
        std::fs::remove_file(&dir).unwrap();
        // A long variable is quoted by its start and length.
        let long = format!("{}:x", "r".repeat(100_000));
        let e = rendezvous_from(&vars(&[("COFLOWKIT_RENDEZVOUS", &long)]))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("(100002 bytes)") && e.len() < 400,
            "{}",
            &e[..200]
        );
    }

    /// Adversarial pass 32, A6: `::1` and `[::1]` were cut at the first `:`, ESC sequences
    /// printed raw, a NUL reported as a file-name error, a `slots=4`-only line taken as a host.
    #[test]
    fn host_files_with_ipv6_options_and_control_characters() {
        let dir = tempfile_path("ck-hosts-a6");
        let path = dir.to_str().unwrap();
        let first = |text: &[u8]| {
            std::fs::write(&dir, text).unwrap();
            rendezvous_from(&vars(&[("COFLOWKIT_HOSTFILE", path)])).map_err(|e| e.to_string())
        };
        let ok = |h: &str| Ok(Some(format!("{h}:{DEFAULT_PORT}")));
        assert_eq!(first(b"::1\n"), ok("[::1]"));
        assert_eq!(first(b"  [::1]  slots=2\n"), ok("[::1]"));
        assert_eq!(first(b"[fe80::2]:4\n"), ok("[fe80::2]"));
        assert_eq!(first(b"# c\n2001:db8::7 slots=4\n"), ok("[2001:db8::7]"));
        assert_eq!(first(b"node3:4\n"), ok("node3"));
        assert_eq!(first(b"10.0.0.7\n"), ok("10.0.0.7"));
        for (text, want) in [
            (&b"\nslots=4\n"[..], "line 2, field 1 (host): `slots=4` is an option"),
            (b"node\x1b[2Jx\n", "line 1, field 1 (host): `node\\x1b[2Jx` is not a host name or address: \\x1b at byte 4"),
            (b"no\0de\n", "line 1, field 1 (host): `no\\0de` is not a host name or address: \\0 at byte 2"),
            (b"[::1\n", "line 1, field 1 (host): `[::1` opens a bracket"),
            (b"[node1]\n", "`node1` in brackets is not an IPv6 address"),
            (b"[::1]x\n", "`x` after `[::1]` is not `:` and a number"),
            (b"1:2:zz\n", "`1:2:zz` has several `:` but is not an IPv6 address"),
            (b":4\n", "`:4` has no host before its `:`"),
        ] {
            let e = first(text).unwrap_err();
            assert!(e.starts_with(&format!("host file {path}: ")), "{e}");
            assert!(e.contains(want), "{e}\nwanted: {want}");
            assert!(!e.contains('\x1b') && !e.contains('\0'), "{e:?}");
        }
        std::fs::remove_file(&dir).unwrap();
    }

    /// Session 33: a FIFO with no writer as the host file blocked for ever.
    #[test]
    fn a_fifo_without_a_writer_as_the_host_file_is_an_error_in_time() {
        let d = tempfile::tempdir().unwrap();
        let fifo = d.path().join("hosts");
        let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let p = fifo.to_str().unwrap().to_string();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let r = rendezvous_from(&vars(&[("COFLOWKIT_HOSTFILE", &p)]));
            let _ = tx.send(r.map_err(|e| e.to_string()));
        });
        let got = rx
            .recv_timeout(std::time::Duration::from_secs(30))
            .expect("the host file still blocked after 30 s");
        let e = got.unwrap_err();
        assert!(e.contains("a FIFO (named pipe)"), "{e}");
    }

    fn tempfile_path(name: &str) -> std::path::PathBuf {
        std::env::temp_dir().join(format!("{name}-{}", std::process::id()))
    }

    #[test]
    fn no_launcher_is_a_world_of_one_and_many_ranks_need_a_rendezvous() {
        let w = bootstrap_from(&vars(&[]), Duration::from_secs(1)).unwrap();
        assert_eq!((w.rank, w.size, w.peers.len()), (0, 1, 1));
        assert_eq!(w.peers[0], w.socket.local_addr().unwrap());
        let e = bootstrap_from(
            &vars(&[("SLURM_PROCID", "1"), ("SLURM_NTASKS", "4")]),
            Duration::from_secs(1),
        )
        .unwrap_err();
        assert!(e.to_string().contains("COFLOWKIT_RENDEZVOUS"), "{e}");
    }

    #[test]
    fn threads_with_mpi_style_variables_meet_and_agree() {
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let at = format!("127.0.0.1:{port}");
        let worlds: Vec<World> = std::thread::scope(|s| {
            let hs: Vec<_> = (0..4)
                .map(|r| {
                    let at = at.clone();
                    s.spawn(move || {
                        let r = r.to_string();
                        let get = vars(&[
                            ("OMPI_COMM_WORLD_RANK", &r),
                            ("OMPI_COMM_WORLD_SIZE", "4"),
                            ("COFLOWKIT_RENDEZVOUS", &at),
                            ("COFLOWKIT_SESSION", "99"),
                            ("COFLOWKIT_SECRET", "job 99's secret"),
                        ]);
                        bootstrap_from(&get, Duration::from_secs(20)).unwrap()
                    })
                })
                .collect();
            hs.into_iter().map(|h| h.join().unwrap()).collect()
        });
        for (r, w) in worlds.iter().enumerate() {
            assert_eq!(w.rank as usize, r);
            assert_eq!(w.session, 99);
            assert_eq!(w.peers, worlds[0].peers);
            assert_eq!(w.peers[r], w.socket.local_addr().unwrap());
            assert_eq!(w.launcher, Some(Launcher::OpenMpi));
            assert_eq!(w.secret.as_ref().unwrap().bytes(), b"job 99's secret");
        }
    }
}
