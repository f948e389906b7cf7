//! Reading a trace file with bounds: a file without an end (`/dev/zero`) or a line without an
//! end must not be read into memory without limit.

use std::io::Read;
use std::path::Path;

use super::error::{TraceError, TraceErrorKind};

/// Largest trace file read (bytes): far above the 10x upscaled FB trace.
pub const MAX_TRACE_BYTES: u64 = 4 << 30;
/// Longest line (bytes): a coflow line lists its mappers and reducers, a few MB at most.
pub const MAX_LINE_BYTES: usize = 64 << 20;

/// The file's text, refused once it passes `max_bytes`, or a line passes `max_line`.
pub fn read_bounded(path: &Path, max_bytes: u64, max_line: usize) -> Result<String, TraceError> {
    let file = path.display().to_string();
    let io = |line: usize, e: std::io::Error| TraceError::new(&file, line, TraceErrorKind::Io(e));
    // A directory is refused by name; a FIFO without a writer is not waited on for ever.
    let mut f = crate::input::open_input(path).map_err(|e| io(0, e))?;
    let mut bytes = Vec::new();
    let mut chunk = vec![0u8; 1 << 16];
    let (mut line, mut line_len, mut checked) = (1usize, 0usize, 0usize);
    loop {
        let n = match f.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(io(line, e)),
        };
        for &b in &chunk[..n] {
            if b == b'\n' {
                line += 1;
                line_len = 0;
            } else {
                line_len += 1;
                if line_len > max_line {
                    return Err(TraceError::new(
                        &file,
                        line,
                        TraceErrorKind::LineTooLong { limit: max_line },
                    ));
                }
            }
        }
        if (bytes.len() + n) as u64 > max_bytes {
            return Err(TraceError::new(
                &file,
                line,
                TraceErrorKind::FileTooLarge { limit: max_bytes },
            ));
        }
        bytes.extend_from_slice(&chunk[..n]);
        // Checked as it arrives: random bytes fail at their first line, not after 4 GiB.
        checked = check_utf8(&bytes, checked).map_err(|(line, byte)| {
            TraceError::new(&file, line, TraceErrorKind::NotUtf8 { byte })
        })?;
    }
    String::from_utf8(bytes).map_err(|e| {
        let (line, byte) = utf8_error_at(e.as_bytes(), e.utf8_error().valid_up_to());
        TraceError::new(&file, line, TraceErrorKind::NotUtf8 { byte })
    })
}

/// Validates `bytes[from..]` as UTF-8 and returns how far it is valid, waiting for more bytes
/// when it ends inside a character; a bad byte is `Err((line, byte in the line))`.
pub fn check_utf8(bytes: &[u8], from: usize) -> Result<usize, (usize, usize)> {
    match std::str::from_utf8(&bytes[from..]) {
        Ok(_) => Ok(bytes.len()),
        // A character cut by the end of the chunk: the next read completes it.
        Err(e) if e.error_len().is_none() => Ok(from + e.valid_up_to()),
        Err(e) => Err(utf8_error_at(bytes, from + e.valid_up_to())),
    }
}

/// Where the first byte that is not UTF-8 lies: its 1-based line and 1-based byte in that line.
pub fn utf8_error_at(bytes: &[u8], valid_up_to: usize) -> (usize, usize) {
    let before = &bytes[..valid_up_to];
    let line = 1 + before.iter().filter(|&&b| b == b'\n').count();
    let start = before
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |i| i + 1);
    (line, valid_up_to - start + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_endless_file_is_refused_at_the_line_bound() {
        let e = read_bounded(Path::new("/dev/zero"), MAX_TRACE_BYTES, 1 << 20).unwrap_err();
        assert!(
            e.to_string()
                .contains("/dev/zero:1: line longer than 1048576 bytes"),
            "{e}"
        );
    }

    #[test]
    fn a_byte_that_is_not_utf8_is_located_by_line_and_byte() {
        let p = std::env::temp_dir().join(format!("coflowkit-utf8-{}.txt", std::process::id()));
        std::fs::write(&p, b"2 1\n1 0 1 \xff1 1 1:1.0\n").unwrap();
        let e = read_bounded(&p, MAX_TRACE_BYTES, 1000).unwrap_err();
        let name = p.display().to_string();
        assert_eq!((e.file.as_str(), e.line), (name.as_str(), 2));
        assert!(
            e.to_string()
                .ends_with(":2: byte 7 of the line is not UTF-8 text"),
            "{e}"
        );
        std::fs::remove_file(&p).unwrap();
        assert_eq!(utf8_error_at(b"\xff", 0), (1, 1));
        assert_eq!(utf8_error_at(b"ab\ncd\n\nx\xff", 8), (4, 2));
    }

    /// Random bytes are refused at their first bad line, long before the file bound (session
    /// 29 read `/dev/urandom` up to 4 GiB first).
    #[test]
    fn random_bytes_are_refused_as_they_are_read() {
        let e =
            read_bounded(Path::new("/dev/urandom"), MAX_TRACE_BYTES, MAX_LINE_BYTES).unwrap_err();
        assert!(matches!(e.kind, TraceErrorKind::NotUtf8 { .. }), "{e}");
        // A 1 MiB file bound: had it read past the first chunk it would say "larger than".
        let e = read_bounded(Path::new("/dev/urandom"), 1 << 20, MAX_LINE_BYTES).unwrap_err();
        assert!(e.to_string().contains("is not UTF-8 text"), "{e}");
        // A character split across reads is whole once the next read arrives.
        let text = "é".repeat(1 << 16);
        assert_eq!(check_utf8(&text.as_bytes()[..3], 0), Ok(2));
        assert_eq!(check_utf8(text.as_bytes(), 2), Ok(text.len()));
        assert_eq!(check_utf8(b"ab\nc\xffd", 0), Err((2, 2)));
    }

    #[test]
    fn a_directory_is_refused_as_a_whole() {
        let dir = std::env::temp_dir();
        let e = read_bounded(&dir, MAX_TRACE_BYTES, 1000).unwrap_err();
        assert_eq!(e.line, 0);
        assert!(
            e.to_string().ends_with("it is a directory, not a file"),
            "{e}"
        );
    }

    #[test]
    fn a_large_file_is_refused_at_the_file_bound() {
        let p = std::env::temp_dir().join(format!("coflowkit-bounded-{}.txt", std::process::id()));
        std::fs::write(&p, "1 1\n".repeat(1000)).unwrap();
        let e = read_bounded(&p, 100, 1000).unwrap_err().to_string();
        assert!(e.contains("larger than 100 bytes"), "{e}");
        assert_eq!(read_bounded(&p, 4000, 1000).unwrap().len(), 4000);
        std::fs::remove_file(&p).unwrap();
    }
}
