//! The plain text matrix format. Lines starting with `#` and blank lines are comments; the first
//! other line is the header `nodes <n> packets` (whole packets) or `nodes <n> normalized` (any
//! non-negative sizes, e.g. the thesis' Figure 5.1); then n rows of n whitespace-separated sizes,
//! row i being what node i sends to nodes 0..n-1 (the diagonal is local data).
//!
//! ```text
//! # generator=general seed=7 skew-target=0.5 skew=0.4998
//! nodes 3 packets
//! 16 10 22
//! 20 16 12
//! 12 22 14
//! ```

use std::fmt::Write as _;
use std::path::Path;

use coflowkit_model::echo::echo;

use super::{MatrixError, MatrixErrorKind, PacketMatrix, ShuffleMatrix};

/// The body of a matrix file, in the unit its header names.
#[derive(Debug, Clone, PartialEq)]
pub enum MatrixBody {
    Packets(PacketMatrix),
    Normalized(ShuffleMatrix),
}

/// A parsed matrix file: its comment lines (without `#`) and its body.
#[derive(Debug, Clone, PartialEq)]
pub struct MatrixFile {
    pub comments: Vec<String>,
    pub body: MatrixBody,
}

impl MatrixFile {
    /// The sizes normalized to mean 1 (packet counts divided by their mean).
    pub fn normalized(&self) -> ShuffleMatrix {
        match &self.body {
            MatrixBody::Normalized(m) => m.clone(),
            MatrixBody::Packets(p) => {
                let total = p.total_packets() as f64;
                let scale = if total > 0.0 {
                    (p.n * p.n) as f64 / total
                } else {
                    0.0
                };
                ShuffleMatrix {
                    n: p.n,
                    w: p.packets.iter().map(|&x| x as f64 * scale).collect(),
                }
            }
        }
    }
}

/// Reads a packet matrix (`nodes <n> packets`) from `path`; errors name file, line and field.
pub fn read_packet_matrix(path: &Path) -> Result<PacketMatrix, MatrixError> {
    let f = read_matrix_file(path)?;
    match f.body {
        MatrixBody::Packets(p) => Ok(p),
        MatrixBody::Normalized(_) => Err(MatrixError::at(
            &path.display().to_string(),
            0,
            MatrixErrorKind::NotPackets,
        )),
    }
}

/// Reads either kind of matrix file as a normalized matrix (packets divided by their mean).
pub fn read_normalized_matrix(path: &Path) -> Result<ShuffleMatrix, MatrixError> {
    Ok(read_matrix_file(path)?.normalized())
}

/// Most nodes a matrix may have. A shuffle is n^2 messages, and simulating it holds about
/// [`SIM_BYTES_PER_MESSAGE`] per message at its peak, so 4,400 nodes fit in 4 GB (about 3.9
/// GB); generating takes about 32 bytes a message. The former 6,000 needed about 7.2 GB, the
/// 16,384 before it about 54 GB.
pub const MAX_MATRIX_NODES: usize = 4_400;
/// Bytes `shuffle sim` holds per message at its peak, about: peak RSS of whole runs of
/// all-ones matrices (one packet a message), 214 MB at 1,000 nodes and 809 MB at 2,000 (a
/// debug build; 198 bytes a message between them). The former 100 came from runs cut short by
/// `--max-steps 10`, before most of a run's state exists.
pub const SIM_BYTES_PER_MESSAGE: f64 = 200.0;
/// Most packets one cell (one message) may have; the protocol counts a message's packets in
/// 32 bits with room to spare.
pub const MAX_CELL_PACKETS: u64 = 1 << 30;
/// Longest line read (bytes): a row of the largest matrix fits, 10-digit packet counts (66 KB)
/// or shortest-round-trip normalized sizes (up to 25 bytes a cell, 150 KB); a file of such
/// lines is read within 1.6 GB.
const MAX_LINE_BYTES: usize = 256 << 10;

/// Refuse a node count whose dense matrix would pass [`MAX_MATRIX_NODES`], with the estimate.
pub fn check_nodes(n: usize) -> Result<(), String> {
    if n > MAX_MATRIX_NODES {
        let gb = |n: f64| n * n * SIM_BYTES_PER_MESSAGE / 1e9;
        return Err(format!(
            "{n} nodes would need about {:.1} GB to simulate their n^2 messages, over the \
             limit of {MAX_MATRIX_NODES} nodes (about {:.1} GB)",
            gb(n as f64),
            gb(MAX_MATRIX_NODES as f64)
        ));
    }
    Ok(())
}

/// Reads a matrix file of either kind, with its comments.
pub fn read_matrix_file(path: &Path) -> Result<MatrixFile, MatrixError> {
    let name = path.display().to_string();
    let max_file = (MAX_MATRIX_NODES as u64 + 16) * MAX_LINE_BYTES as u64;
    let text = read_bounded(path, max_file, MAX_LINE_BYTES)
        .map_err(|(line, why)| MatrixError::at(&name, line, MatrixErrorKind::Io(why)))?;
    parse_matrix(&text, &name)
}

/// The file's text, refused (with the line reached) once it passes `max_bytes` or a line
/// passes `max_line`: `/dev/zero` is not read without bound.
fn read_bounded(path: &Path, max_bytes: u64, max_line: usize) -> Result<String, (usize, String)> {
    use std::io::Read;
    // A directory is refused by name; a FIFO without a writer is not waited on for ever.
    let mut f = coflowkit_model::input::open_input(path).map_err(|e| (0, e.to_string()))?;
    let (mut bytes, mut chunk) = (Vec::new(), vec![0u8; 1 << 16]);
    let (mut line, mut len, mut checked) = (1usize, 0usize, 0usize);
    loop {
        let n = match f.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err((line, e.to_string())),
        };
        for &b in &chunk[..n] {
            if b == b'\n' {
                (line, len) = (line + 1, 0);
            } else {
                len += 1;
                if len > max_line {
                    return Err((line, format!("line longer than {max_line} bytes")));
                }
            }
        }
        if (bytes.len() + n) as u64 > max_bytes {
            return Err((line, format!("file larger than {max_bytes} bytes")));
        }
        bytes.extend_from_slice(&chunk[..n]);
        // Checked as it arrives: random bytes fail at their first line, not after GBs.
        match std::str::from_utf8(&bytes[checked..]) {
            Ok(_) => checked = bytes.len(),
            // A character cut by the end of the chunk: the next read completes it.
            Err(e) if e.error_len().is_none() => checked += e.valid_up_to(),
            Err(e) => return Err(not_utf8(&bytes[..checked + e.valid_up_to()])),
        }
    }
    String::from_utf8(bytes).map_err(|e| not_utf8(&e.as_bytes()[..e.utf8_error().valid_up_to()]))
}

/// The error for a byte that is not UTF-8 after `valid`, located like any other error: the
/// line, and the byte within it.
fn not_utf8(valid: &[u8]) -> (usize, String) {
    let line = 1 + valid.iter().filter(|&&b| b == b'\n').count();
    let start = valid.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    let byte = valid.len() - start + 1;
    (line, format!("byte {byte} of the line is not UTF-8 text"))
}

/// Parses matrix text; `file` names it in errors.
pub fn parse_matrix(text: &str, file: &str) -> Result<MatrixFile, MatrixError> {
    let err = |line: usize, kind| MatrixError::at(file, line, kind);
    let field = |line: usize, field: usize, name: &str, why: String| {
        err(
            line,
            MatrixErrorKind::Field {
                field,
                name: name.to_string(),
                why,
            },
        )
    };
    let mut comments = Vec::new();
    let mut header: Option<(usize, bool)> = None;
    let mut rows_seen = 0usize;
    let mut packets: Vec<u64> = Vec::new();
    let mut sizes: Vec<f64> = Vec::new();
    for (idx, raw) in text.lines().enumerate() {
        let line = idx + 1;
        let trimmed = raw.trim();
        if trimmed.is_empty() {
            continue;
        }
        if let Some(c) = trimmed.strip_prefix('#') {
            comments.push(c.trim().to_string());
            continue;
        }
        let tokens: Vec<&str> = trimmed.split_whitespace().collect();
        let Some((n, is_packets)) = header else {
            if tokens[0] != "nodes" {
                return Err(field(
                    line,
                    1,
                    "keyword",
                    format!(
                        "`{}` is not `nodes` (header `nodes <n> packets|normalized`)",
                        echo(tokens[0])
                    ),
                ));
            }
            let n = match tokens.get(1).map(|t| t.parse::<usize>()) {
                Some(Ok(n)) if n > 0 => n,
                Some(_) => {
                    return Err(field(
                        line,
                        2,
                        "node count",
                        format!("`{}` is not a positive whole number", echo(tokens[1])),
                    ))
                }
                None => return Err(field(line, 2, "node count", "missing".into())),
            };
            let is_packets = match tokens.get(2).copied() {
                Some("packets") => true,
                Some("normalized") => false,
                Some(t) => {
                    return Err(field(
                        line,
                        3,
                        "unit",
                        format!("`{}` is neither `packets` nor `normalized`", echo(t)),
                    ))
                }
                None => {
                    return Err(field(
                        line,
                        3,
                        "unit",
                        "missing (packets or normalized)".into(),
                    ))
                }
            };
            if tokens.len() > 3 {
                return Err(field(
                    line,
                    4,
                    "end",
                    format!("unexpected `{}`", echo(tokens[3])),
                ));
            }
            if let Err(why) = check_nodes(n) {
                return Err(field(line, 2, "node count", why));
            }
            header = Some((n, is_packets));
            // Room for the rows as they come, not for what the header declares: a header
            // alone costs nothing.
            continue;
        };
        if rows_seen == n {
            return Err(err(
                line,
                MatrixErrorKind::ExtraRow {
                    row: rows_seen,
                    expected: n,
                },
            ));
        }
        if tokens.len() != n {
            return Err(err(
                line,
                MatrixErrorKind::RowLength {
                    row: rows_seen,
                    found: tokens.len(),
                    expected: n,
                },
            ));
        }
        for (j, tok) in tokens.iter().enumerate() {
            let name = format!("row {rows_seen}, column {j}");
            if is_packets {
                let v = tok.parse::<u64>().map_err(|_| {
                    field(
                        line,
                        j + 1,
                        &name,
                        format!("`{}` is not a whole number of packets", echo(tok)),
                    )
                })?;
                if v > MAX_CELL_PACKETS {
                    return Err(field(
                        line,
                        j + 1,
                        &name,
                        format!(
                            "{v} packets is more than the {MAX_CELL_PACKETS} a message may have"
                        ),
                    ));
                }
                packets.push(v);
            } else {
                let v = tok
                    .parse::<f64>()
                    .ok()
                    .filter(|v| v.is_finite() && *v >= 0.0);
                sizes.push(v.ok_or_else(|| {
                    field(
                        line,
                        j + 1,
                        &name,
                        format!("`{}` is not a finite non-negative size", echo(tok)),
                    )
                })?);
            }
        }
        rows_seen += 1;
    }
    let Some((n, is_packets)) = header else {
        return Err(err(0, MatrixErrorKind::Empty));
    };
    if rows_seen < n {
        return Err(err(
            0,
            MatrixErrorKind::MissingRows {
                expected: n,
                found: rows_seen,
            },
        ));
    }
    let body = if is_packets {
        MatrixBody::Packets(PacketMatrix { n, packets })
    } else {
        MatrixBody::Normalized(ShuffleMatrix { n, w: sizes })
    };
    Ok(MatrixFile { comments, body })
}

fn render(
    n: usize,
    unit: &str,
    comments: &[String],
    mut cell: impl FnMut(usize, &mut String),
) -> String {
    let mut s = String::with_capacity(n * n * 4 + 64);
    for c in comments {
        for l in c.lines() {
            let _ = writeln!(s, "# {l}");
        }
    }
    let _ = writeln!(s, "nodes {n} {unit}");
    for i in 0..n {
        for j in 0..n {
            if j > 0 {
                s.push(' ');
            }
            cell(i * n + j, &mut s);
        }
        s.push('\n');
    }
    s
}

/// The text of a packet matrix, `comments` first (one `# ` line each).
pub fn format_packet_matrix(m: &PacketMatrix, comments: &[String]) -> String {
    render(m.n, "packets", comments, |k, s| {
        let _ = write!(s, "{}", m.packets[k]);
    })
}

/// The text of a normalized matrix; sizes are written so they read back bit for bit.
pub fn format_normalized_matrix(m: &ShuffleMatrix, comments: &[String]) -> String {
    render(m.n, "normalized", comments, |k, s| {
        let _ = write!(s, "{}", m.w[k]);
    })
}

pub fn write_packet_matrix(
    path: &Path,
    m: &PacketMatrix,
    comments: &[String],
) -> Result<(), MatrixError> {
    write(path, &format_packet_matrix(m, comments))
}

pub fn write_normalized_matrix(
    path: &Path,
    m: &ShuffleMatrix,
    comments: &[String],
) -> Result<(), MatrixError> {
    write(path, &format_normalized_matrix(m, comments))
}

fn write(path: &Path, text: &str) -> Result<(), MatrixError> {
    std::fs::write(path, text).map_err(|e| {
        MatrixError::at(
            &path.display().to_string(),
            0,
            MatrixErrorKind::Io(e.to_string()),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_byte_that_is_not_utf8_is_located_by_line_and_byte() {
        let p = std::env::temp_dir().join(format!("coflowkit-mx-{}.txt", std::process::id()));
        std::fs::write(&p, b"nodes 2 packets\n1 2\n3 \xff\n").unwrap();
        let e = read_matrix_file(&p).unwrap_err();
        std::fs::remove_file(&p).unwrap();
        assert_eq!(e.line, 3);
        assert!(
            e.to_string()
                .ends_with(":3: cannot read: byte 3 of the line is not UTF-8 text"),
            "{e}"
        );
    }

    /// Adversarial pass 32, A5: a 200 KB token came back whole in the error.
    #[test]
    fn long_tokens_are_quoted_bounded() {
        let long = "7".repeat(100_000) + "x";
        for text in [
            format!("nodes 2 normalized\n{long} 1\n1 0\n"),
            format!("nodes 2 packets\n{long} 1\n1 0\n"),
            format!("nodes {long} packets\n"),
            format!("nodes 2 {long}\n"),
            format!("{long} 2 packets\n"),
            format!("nodes 2 packets {long}\n"),
        ] {
            let e = parse_matrix(&text, "m.txt").unwrap_err().to_string();
            assert!(
                e.len() < 400 && e.contains("(100001 bytes)"),
                "{}",
                &e[..e.len().min(300)]
            );
        }
    }

    /// Adversarial pass 32, A7: `shuffle run` ran a matrix with nothing to send.
    #[test]
    fn a_matrix_with_nothing_off_the_diagonal_is_refused_by_the_shared_check() {
        for text in [
            "nodes 2 normalized\n0 0\n0 0\n",
            "nodes 2 normalized\n1 0\n0 1\n",
            "nodes 2 packets\n5 0\n0 3\n",
        ] {
            let f = parse_matrix(text, "m.txt").unwrap();
            let e = super::super::check_network_data("m.txt", &f.body)
                .unwrap_err()
                .to_string();
            assert!(
                e.starts_with("m.txt: every cell off the diagonal is 0"),
                "{e}"
            );
        }
        let f = parse_matrix("nodes 2 normalized\n0 1e-9\n0 0\n", "m.txt").unwrap();
        assert!(super::super::check_network_data("m.txt", &f.body).is_ok());
    }

    /// Random bytes are refused at their first bad line, within the first read (session 29
    /// read `/dev/urandom` into memory up to the file bound first).
    #[test]
    fn random_bytes_are_refused_as_they_are_read() {
        let (line, why) =
            read_bounded(Path::new("/dev/urandom"), 1 << 20, MAX_LINE_BYTES).unwrap_err();
        assert!(why.contains("is not UTF-8 text"), "{line}: {why}");
        // A character cut between two reads is not an error.
        let p = std::env::temp_dir().join(format!("coflowkit-mx8-{}.txt", std::process::id()));
        let text = format!("#  {}\nnodes 2 packets\n0 1\n1 0\n", "é".repeat(1 << 16));
        std::fs::write(&p, &text).unwrap();
        let read = read_bounded(&p, 1 << 20, MAX_LINE_BYTES);
        std::fs::remove_file(&p).unwrap();
        assert_eq!(read.unwrap(), text);
    }
}
