//! Standard output (and standard error) for every command. `println!` panics when stdout fails (a full disk, a reader
//! that closed the pipe); here each write returns an error marked [`StdoutError`], which `main`
//! turns into the exit status: a closed pipe (`| head`) ends the program quietly with 141, what a
//! shell reports for a program ended by SIGPIPE; any other failure is `error: writing to stdout:
//! ...` and status 1. SIGPIPE itself stays ignored (Rust's default), so sockets and child pipes of
//! the servers and launchers still see EPIPE as an error, not a signal.

use std::fmt;
use std::io::{self, Write};

/// Exit status after stdout's reader went away: 128 + SIGPIPE, as a shell reports `seq 1e9 | head`.
pub const BROKEN_PIPE_STATUS: u8 = 141;

/// A failed write to standard output (its cause is the I/O error).
#[derive(Debug)]
pub struct StdoutError(pub io::Error);

impl fmt::Display for StdoutError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "writing to stdout: {}", self.0)
    }
}

impl std::error::Error for StdoutError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.0)
    }
}

/// Writes formatted text to stdout; `outln!`/`out!` call it.
pub fn write_fmt(args: fmt::Arguments<'_>) -> Result<(), StdoutError> {
    io::stdout().lock().write_fmt(args).map_err(StdoutError)
}

/// Flushes stdout (what a last `out!` without newline left buffered).
pub fn flush() -> Result<(), StdoutError> {
    io::stdout().lock().flush().map_err(StdoutError)
}

/// Stdout as a writer for code that takes `impl Write` (trace writers): its errors carry the
/// [`StdoutError`] mark inside the `io::Error`, so they are told apart from a file's errors.
pub struct Stdout;

impl Write for Stdout {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        io::stdout().lock().write(buf).map_err(marked)
    }
    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        io::stdout().lock().write_all(buf).map_err(marked)
    }
    fn flush(&mut self) -> io::Result<()> {
        io::stdout().lock().flush().map_err(marked)
    }
}

fn marked(e: io::Error) -> io::Error {
    io::Error::new(e.kind(), StdoutError(e))
}

/// The stdout failure somewhere in `e`'s causes, if any.
pub fn stdout_failure(e: &anyhow::Error) -> Option<&StdoutError> {
    e.chain().find_map(|cause| {
        cause.downcast_ref::<StdoutError>().or_else(|| {
            cause
                .downcast_ref::<io::Error>()?
                .get_ref()?
                .downcast_ref::<StdoutError>()
        })
    })
}

/// True when stdout's reader went away: the program should end quietly.
pub fn is_broken_pipe(e: &anyhow::Error) -> bool {
    stdout_failure(e).is_some_and(|s| s.0.kind() == io::ErrorKind::BrokenPipe)
}

/// Writes formatted text to stderr, ignoring a failure: `errln!` panics when stderr fails
/// (a closed pipe, a full disk), and an error or warning that cannot be shown is no reason to
/// stop a run or a server. `errln!`/`err!` call it.
pub fn err_fmt(args: fmt::Arguments<'_>) {
    let _ = io::stderr().lock().write_fmt(args);
}

/// `errln!` that never panics (a failed write to stderr is dropped).
macro_rules! errln {
    () => { $crate::out::err_fmt(format_args!("\n")) };
    ($($arg:tt)*) => { $crate::out::err_fmt(format_args!("{}\n", format_args!($($arg)*))) };
}

/// `err!` that never panics.
macro_rules! err {
    ($($arg:tt)*) => { $crate::out::err_fmt(format_args!($($arg)*)) };
}

/// `println!` that returns `Result<(), StdoutError>` instead of panicking.
macro_rules! outln {
    () => { $crate::out::write_fmt(format_args!("\n")) };
    ($($arg:tt)*) => { $crate::out::write_fmt(format_args!("{}\n", format_args!($($arg)*))) };
}

/// `print!` that returns `Result<(), StdoutError>` instead of panicking.
macro_rules! out {
    ($($arg:tt)*) => { $crate::out::write_fmt(format_args!($($arg)*)) };
}

/// The one check of every command's output paths, made before the work (pass 34, C9):
/// `check_outputs(&[Out::file("--json", a.json.as_deref())])?`.
pub use coflowkit_simcmd::outputs::{check as check_outputs, Out};

#[cfg(test)]
mod tests {
    use super::*;
    use anyhow::Context;

    #[test]
    fn a_stdout_failure_is_found_through_context_and_io_wrapping() {
        let direct = anyhow::Error::new(StdoutError(io::Error::from(io::ErrorKind::BrokenPipe)))
            .context("printing the table");
        assert!(is_broken_pipe(&direct));
        // A writer's io::Error, wrapped by a library error that names it as its source.
        let wrapped = Err::<(), _>(marked(io::Error::from_raw_os_error(libc::ENOSPC)))
            .context("cannot write trace")
            .unwrap_err();
        let s = stdout_failure(&wrapped).expect("found inside the io::Error");
        assert_eq!(s.0.raw_os_error(), Some(libc::ENOSPC));
        assert!(!is_broken_pipe(&wrapped));
        // A broken pipe that is not stdout's (a socket, a child) is an ordinary error.
        let socket = anyhow::Error::new(io::Error::from(io::ErrorKind::BrokenPipe));
        assert!(stdout_failure(&socket).is_none());
    }
}
