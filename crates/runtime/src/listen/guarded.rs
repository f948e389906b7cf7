//! An accepted connection with timeouts: a handshake deadline (until the first `need` bytes
//! have arrived) and an idle limit on each direction (a read or a write that stays pending
//! that long fails with `TimedOut`), holding its place in the listener's limits.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio::time::{Instant, Sleep};

use super::gate::Permit;
use super::stats::ListenStats;

pub struct Guarded<S> {
    inner: S,
    idle: Duration,
    read: Timer,
    write: Timer,
    /// Bytes still to arrive before the handshake deadline stops applying, and the deadline.
    handshake: Option<(usize, Pin<Box<Sleep>>)>,
    stats: Arc<ListenStats>,
    _permit: Option<Permit>,
}

/// A sleep armed when an operation first stays pending, disarmed when it makes progress.
struct Timer {
    sleep: Pin<Box<Sleep>>,
    armed: bool,
}

impl Timer {
    fn new() -> Timer {
        Timer {
            sleep: Box::pin(tokio::time::sleep(Duration::ZERO)),
            armed: false,
        }
    }

    /// Still pending: has it been pending for `idle`?
    fn expired(&mut self, idle: Duration, cx: &mut Context<'_>) -> bool {
        if !self.armed {
            self.sleep.as_mut().reset(Instant::now() + idle);
            self.armed = true;
        }
        self.sleep.as_mut().poll(cx).is_ready()
    }
}

impl<S> Guarded<S> {
    /// `need` bytes must arrive within `handshake` (0 = no handshake deadline here);
    /// afterwards no read or write may stay pending for `idle`.
    pub fn new(
        inner: S,
        need: usize,
        handshake: Duration,
        idle: Duration,
        stats: Arc<ListenStats>,
        permit: Option<Permit>,
    ) -> Guarded<S> {
        Guarded {
            inner,
            idle,
            read: Timer::new(),
            write: Timer::new(),
            handshake: (need > 0).then(|| (need, Box::pin(tokio::time::sleep(handshake)))),
            stats,
            _permit: permit,
        }
    }

    pub fn get_ref(&self) -> &S {
        &self.inner
    }

    fn timed_out(&self, what: &str) -> io::Error {
        ListenStats::bump(&self.stats.timed_out);
        io::Error::new(io::ErrorKind::TimedOut, format!("{what} timed out"))
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for Guarded<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = &mut *self;
        let before = buf.filled().len();
        match Pin::new(&mut this.inner).poll_read(cx, buf) {
            Poll::Ready(r) => {
                this.read.armed = false;
                let got = buf.filled().len() - before;
                if let Some((need, _)) = &mut this.handshake {
                    *need = need.saturating_sub(got);
                    if *need == 0 {
                        this.handshake = None;
                    }
                }
                Poll::Ready(r)
            }
            Poll::Pending => {
                if let Some((_, deadline)) = &mut this.handshake {
                    if deadline.as_mut().poll(cx).is_ready() {
                        return Poll::Ready(Err(this.timed_out("handshake")));
                    }
                }
                if this.read.expired(this.idle, cx) {
                    return Poll::Ready(Err(this.timed_out("idle connection (read)")));
                }
                Poll::Pending
            }
        }
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for Guarded<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = &mut *self;
        match Pin::new(&mut this.inner).poll_write(cx, data) {
            Poll::Ready(r) => {
                this.write.armed = false;
                Poll::Ready(r)
            }
            Poll::Pending if this.write.expired(this.idle, cx) => {
                Poll::Ready(Err(this.timed_out("stalled connection (write)")))
            }
            Poll::Pending => Poll::Pending,
        }
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = &mut *self;
        match Pin::new(&mut this.inner).poll_flush(cx) {
            Poll::Ready(r) => {
                this.write.armed = false;
                Poll::Ready(r)
            }
            Poll::Pending if this.write.expired(this.idle, cx) => {
                Poll::Ready(Err(this.timed_out("stalled connection (flush)")))
            }
            Poll::Pending => Poll::Pending,
        }
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = &mut *self;
        match Pin::new(&mut this.inner).poll_write_vectored(cx, bufs) {
            Poll::Ready(r) => {
                this.write.armed = false;
                Poll::Ready(r)
            }
            Poll::Pending if this.write.expired(this.idle, cx) => {
                Poll::Ready(Err(this.timed_out("stalled connection (write)")))
            }
            Poll::Pending => Poll::Pending,
        }
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }
}

impl tonic::transport::server::Connected for Guarded<TcpStream> {
    type ConnectInfo = tonic::transport::server::TcpConnectInfo;

    fn connect_info(&self) -> Self::ConnectInfo {
        self.inner.connect_info()
    }
}
