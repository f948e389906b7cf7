//! Batched datagram I/O on a non-blocking UDP socket: `sendmmsg` and `recvmmsg` move up to a
//! batch of datagrams per system call (one datagram per message, each to its own address, so
//! pacing and loss injection stay per packet; GSO would need equal-sized segments to one
//! destination). Plus an `eventfd` that wakes the I/O thread out of `poll`.

use std::io;
use std::mem::{size_of, zeroed};
use std::net::{SocketAddr, UdpSocket};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

/// Bytes of the largest datagram a socket buffer slot holds (a jumbo frame's UDP payload fits).
pub const MAX_DATAGRAM: usize = 65_507;

/// A socket address in the C layout, for `msg_name`.
#[derive(Clone, Copy)]
pub struct RawAddr {
    storage: libc::sockaddr_storage,
    len: libc::socklen_t,
}

impl RawAddr {
    pub fn new(a: &SocketAddr) -> RawAddr {
        // SAFETY: sockaddr_storage is plain data; all-zero is a valid (unspecified) value.
        let mut storage: libc::sockaddr_storage = unsafe { zeroed() };
        let len = match a {
            SocketAddr::V4(v4) => {
                let sin = libc::sockaddr_in {
                    sin_family: libc::AF_INET as libc::sa_family_t,
                    sin_port: v4.port().to_be(),
                    sin_addr: libc::in_addr {
                        s_addr: u32::from_ne_bytes(v4.ip().octets()),
                    },
                    sin_zero: [0; 8],
                };
                // SAFETY: sockaddr_storage is larger than and aligned for sockaddr_in.
                unsafe { std::ptr::write(&mut storage as *mut _ as *mut libc::sockaddr_in, sin) };
                size_of::<libc::sockaddr_in>()
            }
            SocketAddr::V6(v6) => {
                let sin6 = libc::sockaddr_in6 {
                    sin6_family: libc::AF_INET6 as libc::sa_family_t,
                    sin6_port: v6.port().to_be(),
                    sin6_flowinfo: v6.flowinfo(),
                    sin6_addr: libc::in6_addr {
                        s6_addr: v6.ip().octets(),
                    },
                    sin6_scope_id: v6.scope_id(),
                };
                // SAFETY: sockaddr_storage is larger than and aligned for sockaddr_in6.
                unsafe { std::ptr::write(&mut storage as *mut _ as *mut libc::sockaddr_in6, sin6) };
                size_of::<libc::sockaddr_in6>()
            }
        };
        RawAddr {
            storage,
            len: len as libc::socklen_t,
        }
    }

    /// The address the kernel wrote, if it is IPv4 or IPv6.
    #[cfg(test)]
    pub fn get(&self) -> Option<SocketAddr> {
        match self.storage.ss_family as libc::c_int {
            libc::AF_INET => {
                // SAFETY: the family says the storage holds a sockaddr_in.
                let sin = unsafe { &*(&self.storage as *const _ as *const libc::sockaddr_in) };
                let ip = std::net::Ipv4Addr::from(sin.sin_addr.s_addr.to_ne_bytes());
                Some(SocketAddr::V4(std::net::SocketAddrV4::new(
                    ip,
                    u16::from_be(sin.sin_port),
                )))
            }
            libc::AF_INET6 => {
                // SAFETY: the family says the storage holds a sockaddr_in6.
                let s = unsafe { &*(&self.storage as *const _ as *const libc::sockaddr_in6) };
                Some(SocketAddr::V6(std::net::SocketAddrV6::new(
                    s.sin6_addr.s6_addr.into(),
                    u16::from_be(s.sin6_port),
                    s.sin6_flowinfo,
                    s.sin6_scope_id,
                )))
            }
            _ => None,
        }
    }
}

/// Send `dgrams` (bytes, destination) with as few `sendmmsg` calls as the kernel allows; how
/// many went out before the socket's buffer filled (`WouldBlock` ends the batch early, not with
/// an error). A datagram the kernel refuses for itself (e.g. `ECONNREFUSED` from an earlier ICMP
/// error on loopback) is counted as sent: UDP gives no delivery promise anyway.
pub fn send_batch(fd: RawFd, dgrams: &[(&[u8], RawAddr)]) -> io::Result<usize> {
    let mut done = 0;
    while done < dgrams.len() {
        let chunk = &dgrams[done..(done + 64).min(dgrams.len())];
        let mut iov: Vec<libc::iovec> = chunk
            .iter()
            .map(|(b, _)| libc::iovec {
                iov_base: b.as_ptr() as *mut libc::c_void,
                iov_len: b.len(),
            })
            .collect();
        let mut addrs: Vec<RawAddr> = chunk.iter().map(|(_, a)| *a).collect();
        let mut msgs: Vec<libc::mmsghdr> = (0..chunk.len())
            .map(|i| {
                // SAFETY: mmsghdr is plain data; every pointer field is set below.
                let mut m: libc::mmsghdr = unsafe { zeroed() };
                m.msg_hdr.msg_name = &mut addrs[i].storage as *mut _ as *mut libc::c_void;
                m.msg_hdr.msg_namelen = addrs[i].len;
                m.msg_hdr.msg_iov = &mut iov[i];
                m.msg_hdr.msg_iovlen = 1;
                m
            })
            .collect();
        // SAFETY: `msgs` points at `iov` and `addrs`, which outlive the call, and at the
        // caller's buffers, borrowed for the call.
        let n = unsafe { libc::sendmmsg(fd, msgs.as_mut_ptr(), msgs.len() as u32, 0) };
        if n < 0 {
            let e = io::Error::last_os_error();
            match e.kind() {
                io::ErrorKind::WouldBlock => return Ok(done),
                io::ErrorKind::Interrupted => continue,
                // The first datagram of the chunk hit an error of its own: skip it.
                io::ErrorKind::ConnectionRefused => {
                    done += 1;
                    continue;
                }
                _ => return Err(e),
            }
        }
        done += n as usize;
    }
    Ok(done)
}

/// Receive buffers for one `recvmmsg` call.
pub struct RecvBatch {
    bufs: Vec<Vec<u8>>,
    addrs: Vec<RawAddr>,
    lens: Vec<usize>,
    filled: usize,
}

impl RecvBatch {
    pub fn new(count: usize, size: usize) -> RecvBatch {
        let zero = RawAddr::new(&SocketAddr::from(([0, 0, 0, 0], 0)));
        RecvBatch {
            bufs: vec![vec![0; size]; count],
            addrs: vec![zero; count],
            lens: vec![0; count],
            filled: 0,
        }
    }

    /// Fill the batch with what the socket holds now (0 when nothing is waiting).
    pub fn recv(&mut self, fd: RawFd) -> io::Result<usize> {
        self.filled = 0;
        let mut iov: Vec<libc::iovec> = self
            .bufs
            .iter_mut()
            .map(|b| libc::iovec {
                iov_base: b.as_mut_ptr() as *mut libc::c_void,
                iov_len: b.len(),
            })
            .collect();
        let mut msgs: Vec<libc::mmsghdr> = (0..self.bufs.len())
            .map(|i| {
                // SAFETY: plain data; pointers set below.
                let mut m: libc::mmsghdr = unsafe { zeroed() };
                m.msg_hdr.msg_name = &mut self.addrs[i].storage as *mut _ as *mut libc::c_void;
                m.msg_hdr.msg_namelen = size_of::<libc::sockaddr_storage>() as libc::socklen_t;
                m.msg_hdr.msg_iov = &mut iov[i];
                m.msg_hdr.msg_iovlen = 1;
                m
            })
            .collect();
        loop {
            // SAFETY: every pointer in `msgs` is into buffers owned by `self` or `iov`, alive
            // for the call; no timeout.
            let n = unsafe {
                libc::recvmmsg(
                    fd,
                    msgs.as_mut_ptr(),
                    msgs.len() as u32,
                    libc::MSG_DONTWAIT,
                    std::ptr::null_mut(),
                )
            };
            if n < 0 {
                let e = io::Error::last_os_error();
                match e.kind() {
                    io::ErrorKind::WouldBlock => return Ok(0),
                    io::ErrorKind::Interrupted => continue,
                    // An ICMP error from an earlier send (a peer gone): nothing to read.
                    io::ErrorKind::ConnectionRefused => continue,
                    _ => return Err(e),
                }
            }
            let n = n as usize;
            for (i, m) in msgs.iter().enumerate().take(n) {
                // A datagram longer than the buffer is cut (MSG_TRUNC): mark it so the
                // decoder sees a length mismatch instead of a short payload.
                self.lens[i] = if m.msg_hdr.msg_flags & libc::MSG_TRUNC != 0 {
                    usize::MAX
                } else {
                    m.msg_len as usize
                };
                self.addrs[i].len = m.msg_hdr.msg_namelen;
            }
            self.filled = n;
            return Ok(n);
        }
    }

    /// Datagram `i` of the last `recv` (`None` if it was cut short), to open in place.
    pub fn get_mut(&mut self, i: usize) -> Option<&mut [u8]> {
        debug_assert!(i < self.filled);
        match self.lens[i] {
            usize::MAX => None,
            n => Some(&mut self.bufs[i][..n]),
        }
    }

    /// Datagram `i` of the last `recv` (`None` if it was cut short) and its sender.
    #[cfg(test)]
    pub fn get(&self, i: usize) -> (Option<&[u8]>, Option<SocketAddr>) {
        debug_assert!(i < self.filled);
        let d = match self.lens[i] {
            usize::MAX => None,
            n => Some(&self.bufs[i][..n]),
        };
        (d, self.addrs[i].get())
    }
}

/// Wakes a thread blocked in [`wait`] (an `eventfd`).
#[derive(Debug)]
pub struct Waker(OwnedFd);

impl Waker {
    pub fn new() -> io::Result<Waker> {
        // SAFETY: eventfd with valid flags returns a new descriptor or -1.
        let fd = unsafe { libc::eventfd(0, libc::EFD_NONBLOCK | libc::EFD_CLOEXEC) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `fd` is a fresh descriptor that nothing else owns.
        Ok(Waker(unsafe { OwnedFd::from_raw_fd(fd) }))
    }

    pub fn wake(&self) {
        let one: u64 = 1;
        // SAFETY: writes 8 bytes from a local to our eventfd; a full counter (EAGAIN) already
        // means "wake".
        unsafe { libc::write(self.0.as_raw_fd(), &one as *const u64 as *const _, 8) };
    }

    fn drain(&self) {
        let mut v: u64 = 0;
        // SAFETY: reads 8 bytes into a local; EAGAIN (nothing pending) is fine.
        unsafe { libc::read(self.0.as_raw_fd(), &mut v as *mut u64 as *mut _, 8) };
    }
}

/// Block until the socket is readable (or writable, if `want_write`), the waker fires, or
/// `timeout_ns` passes (`None`: no limit).
pub fn wait(
    sock: Option<&UdpSocket>,
    waker: &Waker,
    want_write: bool,
    timeout_ns: Option<u64>,
) -> io::Result<()> {
    let mut events = libc::POLLIN;
    if want_write {
        events |= libc::POLLOUT;
    }
    let mut fds = [
        libc::pollfd {
            // A negative descriptor is skipped by ppoll: then only the waker and the timeout.
            fd: sock.map_or(-1, |s| s.as_raw_fd()),
            events,
            revents: 0,
        },
        libc::pollfd {
            fd: waker.0.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        },
    ];
    // ppoll takes nanoseconds; poll's milliseconds would make pacing coarse.
    let ts = timeout_ns.map(|ns| libc::timespec {
        tv_sec: (ns / 1_000_000_000) as libc::time_t,
        tv_nsec: (ns % 1_000_000_000) as libc::c_long,
    });
    let tsp = ts
        .as_ref()
        .map_or(std::ptr::null(), |t| t as *const libc::timespec);
    // SAFETY: two valid pollfds and an optional timespec, all on the stack for the call.
    let rc = unsafe { libc::ppoll(fds.as_mut_ptr(), 2, tsp, std::ptr::null()) };
    if rc < 0 {
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
    if fds[1].revents != 0 {
        waker.drain();
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_batch_crosses_loopback_with_addresses() {
        let a = UdpSocket::bind("127.0.0.1:0").unwrap();
        let b = UdpSocket::bind("127.0.0.1:0").unwrap();
        b.set_nonblocking(true).unwrap();
        let to = RawAddr::new(&b.local_addr().unwrap());
        let bufs: Vec<Vec<u8>> = (0..100u8).map(|i| vec![i; i as usize]).collect();
        let dgrams: Vec<(&[u8], RawAddr)> = bufs.iter().map(|b| (&b[..], to)).collect();
        assert_eq!(send_batch(a.as_raw_fd(), &dgrams).unwrap(), 100);
        let mut got = Vec::new();
        let mut rb = RecvBatch::new(16, 256);
        while got.len() < 100 {
            let n = rb.recv(b.as_raw_fd()).unwrap();
            for i in 0..n {
                let (d, from) = rb.get(i);
                assert_eq!(from, Some(a.local_addr().unwrap()));
                got.push(d.unwrap().to_vec());
            }
        }
        assert_eq!(got, bufs);
        assert_eq!(rb.recv(b.as_raw_fd()).unwrap(), 0);
    }

    #[test]
    fn a_long_datagram_is_marked_cut() {
        let a = UdpSocket::bind("127.0.0.1:0").unwrap();
        let b = UdpSocket::bind("127.0.0.1:0").unwrap();
        a.send_to(&[1; 100], b.local_addr().unwrap()).unwrap();
        let mut rb = RecvBatch::new(4, 50);
        let waker = Waker::new().unwrap();
        wait(Some(&b), &waker, false, Some(1_000_000_000)).unwrap();
        assert_eq!(rb.recv(b.as_raw_fd()).unwrap(), 1);
        assert_eq!(rb.get(0).0, None);
    }

    #[test]
    fn the_waker_ends_a_wait() {
        let s = UdpSocket::bind("127.0.0.1:0").unwrap();
        let waker = Waker::new().unwrap();
        waker.wake();
        let t = std::time::Instant::now();
        wait(Some(&s), &waker, false, Some(5_000_000_000)).unwrap();
        assert!(t.elapsed() < std::time::Duration::from_secs(4));
    }
}
