//! Reading a small configuration file (a token, a TLS certificate, key or CA, the job's secret,
//! a host file) whole, with bounds on both its size and the wait for it (the streaming twin,
//! for traces and matrices, is [`crate::input`], whose opening and polling it shares). Here, in the model crate, so
//! that both the runtime and the launcher use it. A FIFO with no writer blocked `open` for ever, so a
//! server given one as `--token-file` never started and said nothing. The file is opened
//! without blocking; a regular file is read as usual, while a FIFO, socket or device is read
//! only as its data arrives within [`WAIT`] (a writer such as the shell's `<(...)` still
//! works). A directory is refused as such.

use std::io::{ErrorKind, Read};
use std::path::Path;
use std::time::{Duration, Instant};

use crate::input::{kind_name, open_nonblocking, poll_in};

/// How long a FIFO, socket or device may take to deliver the whole file.
pub const WAIT: Duration = Duration::from_secs(5);

/// At most `max + 1` bytes of `path` (the caller refuses more), waiting at most `wait` for a
/// file that is not a regular one. Errors say what the file is when that is the cause.
pub fn read_small(path: &Path, max: u64, wait: Duration) -> std::io::Result<Vec<u8>> {
    let (f, kind) = open_nonblocking(path)?;
    if kind.is_dir() {
        return Err(std::io::Error::other("a directory, not a file"));
    }
    let mut bytes = Vec::new();
    if kind.is_file() {
        f.take(max + 1).read_to_end(&mut bytes)?;
        return Ok(bytes);
    }
    let what = kind_name(&kind);
    let deadline = Instant::now() + wait;
    let mut f = f;
    let mut buf = [0u8; 4096];
    while (bytes.len() as u64) <= max {
        let Some(revents) = poll_in(&f, deadline)? else {
            return Err(std::io::Error::new(
                ErrorKind::TimedOut,
                format!(
                    "{what} that delivered {} bytes and no end within {} s (give a regular file)",
                    bytes.len(),
                    wait.as_secs_f64()
                ),
            ));
        };
        let room = (max + 1 - bytes.len() as u64).min(buf.len() as u64) as usize;
        match f.read(&mut buf[..room]) {
            Ok(0) => break,
            Ok(n) => bytes.extend_from_slice(&buf[..n]),
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::Interrupted) => {
                // A FIFO with no writer yet polls as hung up: wait a little for one.
                if revents & libc::POLLHUP != 0 {
                    std::thread::sleep(Duration::from_millis(20));
                }
            }
            Err(e) => return Err(e),
        }
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mkfifo(path: &Path) {
        let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    }

    #[test]
    fn a_fifo_without_a_writer_times_out_and_with_one_is_read() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("token");
        mkfifo(&fifo);
        let t = Instant::now();
        let e = read_small(&fifo, 4096, Duration::from_millis(300)).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::TimedOut);
        assert!(e.to_string().contains("a FIFO (named pipe)"), "{e}");
        assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());
        // A writer that comes later and writes in pieces is read to its end.
        let p = fifo.clone();
        let w = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(100));
            let mut f = std::fs::OpenOptions::new().write(true).open(p).unwrap();
            std::io::Write::write_all(&mut f, b"secret-").unwrap();
            std::thread::sleep(Duration::from_millis(50));
            std::io::Write::write_all(&mut f, b"token\n").unwrap();
        });
        let got = read_small(&fifo, 4096, Duration::from_secs(10)).unwrap();
        w.join().unwrap();
        assert_eq!(got, b"secret-token\n");
    }

    #[test]
    fn directories_are_refused_and_devices_bounded() {
        let dir = tempfile::tempdir().unwrap();
        let e = read_small(dir.path(), 10, WAIT).unwrap_err();
        assert!(e.to_string().contains("a directory"), "{e}");
        let zero = read_small(Path::new("/dev/zero"), 100, WAIT).unwrap();
        assert_eq!(zero.len(), 101, "max + 1 bytes, for the caller to refuse");
        let file = dir.path().join("f");
        std::fs::write(&file, b"abc").unwrap();
        assert_eq!(read_small(&file, 10, WAIT).unwrap(), b"abc");
    }
}
