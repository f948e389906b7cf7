//! Opening an input file that is streamed (a trace, a port-rate file, a shuffle matrix, a file
//! of records) without hanging on it. A FIFO with no writer blocked `open` for ever, so
//! `sim --trace f`, `shuffle sim --matrix f`, `sortdata check f` and the others printed nothing
//! and never ended (issue 17, adversarial pass 33, B4). [`open_input`] opens without blocking,
//! refuses a directory or a block device by name, and gives a FIFO (or socket) [`WAIT`] to
//! deliver its first byte or its end; after that the file is streamed as usual, blocking.
//! (Small configuration files -- tokens, certificates, the job secret, host files -- are read
//! whole with a bounded wait by the runtime's `small_file`; this is the streaming twin.)

use std::fs::{File, FileType};
use std::io::ErrorKind;
use std::os::fd::AsRawFd;
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::Path;
use std::time::{Duration, Instant};

/// How long a FIFO or socket may take to deliver its first byte (or its end).
pub const WAIT: Duration = Duration::from_secs(5);

/// `path` opened for reading, ready to stream; see the module text. Errors do not repeat the
/// path (callers name it) but say what the file is when that is the cause.
pub fn open_input(path: &Path) -> std::io::Result<File> {
    open_input_within(path, WAIT)
}

/// [`open_input`] with another wait for a FIFO (tests).
pub fn open_input_within(path: &Path, wait: Duration) -> std::io::Result<File> {
    let (f, kind) = open_nonblocking(path)?;
    if kind.is_dir() {
        return Err(std::io::Error::other("it is a directory, not a file"));
    }
    if kind.is_block_device() {
        return Err(std::io::Error::other("it is a block device, not a file"));
    }
    if kind.is_fifo() || kind.is_socket() {
        wait_readable(&f, wait, kind_name(&kind))?;
    }
    // Regular files and character devices (`/dev/zero`, a terminal: the readers bound them)
    // and a FIFO with data or an end: read blocking from here on.
    // SAFETY: fcntl on a descriptor this function owns.
    let flags = unsafe { libc::fcntl(f.as_raw_fd(), libc::F_GETFL) };
    if flags < 0
        || unsafe { libc::fcntl(f.as_raw_fd(), libc::F_SETFL, flags & !libc::O_NONBLOCK) } < 0
    {
        return Err(std::io::Error::last_os_error());
    }
    Ok(f)
}

/// Waits up to `wait` for `f` to have a byte to read or its end (a writer that came and went).
fn wait_readable(f: &File, wait: Duration, what: &str) -> std::io::Result<()> {
    if poll_in(f, Instant::now() + wait)?.is_some() {
        return Ok(());
    }
    Err(std::io::Error::new(
        ErrorKind::TimedOut,
        format!(
            "{what} that delivered no byte and no end within {} s (give a regular file, \
             or start its writer first)",
            wait.as_secs_f64()
        ),
    ))
}

/// `path` opened for reading without blocking (a FIFO with no writer blocks `open` itself),
/// and what kind of file it is.
pub(crate) fn open_nonblocking(path: &Path) -> std::io::Result<(File, FileType)> {
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)?;
    let kind = f.metadata()?.file_type();
    Ok((f, kind))
}

/// What a file that is not a regular one is called in errors.
pub(crate) fn kind_name(kind: &FileType) -> &'static str {
    if kind.is_fifo() {
        "a FIFO (named pipe)"
    } else if kind.is_socket() {
        "a socket"
    } else {
        "a device"
    }
}

/// Polls `f` for input until `deadline` (EINTR retried): its `revents` once it is readable
/// (or hung up), `None` at the deadline.
pub(crate) fn poll_in(f: &File, deadline: Instant) -> std::io::Result<Option<i16>> {
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let mut pfd = libc::pollfd {
            fd: f.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd for the duration of the call.
        let ready =
            unsafe { libc::poll(&mut pfd, 1, left.as_millis().min(i32::MAX as u128) as i32) };
        if ready < 0 {
            let e = std::io::Error::last_os_error();
            if e.kind() == ErrorKind::Interrupted {
                continue;
            }
            return Err(e);
        }
        return Ok((ready > 0).then_some(pfd.revents));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};

    fn mkfifo(path: &Path) {
        let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    }

    fn tempdir(tag: &str) -> std::path::PathBuf {
        let d = std::env::temp_dir().join(format!("coflowkit-input-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn a_fifo_without_a_writer_is_refused_after_the_wait_and_with_one_is_streamed() {
        let dir = tempdir("fifo");
        let fifo = dir.join("trace");
        mkfifo(&fifo);
        let t = Instant::now();
        let e = open_input_within(&fifo, Duration::from_millis(300)).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::TimedOut);
        assert!(e.to_string().contains("a FIFO (named pipe)"), "{e}");
        assert!(t.elapsed() < Duration::from_secs(3), "{:?}", t.elapsed());
        // A writer that comes later and writes in pieces is read to its end, blocking.
        let p = fifo.clone();
        let w = std::thread::spawn(move || {
            let mut f = std::fs::OpenOptions::new().write(true).open(p).unwrap();
            std::thread::sleep(Duration::from_millis(100));
            f.write_all(b"4 1\n").unwrap();
            std::thread::sleep(Duration::from_millis(100));
            f.write_all(b"1 0 1 0 1 1:1\n").unwrap();
        });
        let mut text = String::new();
        open_input_within(&fifo, Duration::from_secs(10))
            .unwrap()
            .read_to_string(&mut text)
            .unwrap();
        w.join().unwrap();
        assert_eq!(text, "4 1\n1 0 1 0 1 1:1\n");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn directories_are_refused_files_and_char_devices_read() {
        let dir = tempdir("kinds");
        let e = open_input(&dir).unwrap_err();
        assert!(e.to_string().contains("a directory"), "{e}");
        let p = dir.join("f");
        std::fs::write(&p, b"abc").unwrap();
        let mut s = String::new();
        open_input(&p).unwrap().read_to_string(&mut s).unwrap();
        assert_eq!(s, "abc");
        let mut zero = [1u8; 8];
        open_input(Path::new("/dev/zero"))
            .unwrap()
            .read_exact(&mut zero)
            .unwrap();
        assert_eq!(zero, [0u8; 8]);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
