//! Per-port capacities from a text file, for heterogeneous fabrics:
//!
//! ```text
//! # port  uplink   [downlink]     (bits per second: 1e9, 10gbit, 500mbit; downlink = uplink if absent)
//! 0       10gbit
//! 7       1gbit    500mbit
//! ```
//! Ports not listed keep the default rate.

use std::path::Path;

use thiserror::Error;

use crate::trace::bounded::read_bounded;
use crate::trace::TraceError;
use crate::units::parse_rate_bps;
use crate::Fabric;

/// Largest port-rate file read (bytes), and its longest line: `/dev/zero` is not read without
/// bound.
pub const MAX_PORT_FILE_BYTES: u64 = 4 << 30;
pub const MAX_PORT_LINE_BYTES: usize = 1 << 20;

#[derive(Debug, Error)]
pub enum PortFileError {
    #[error("{file}: {source}")]
    Io {
        file: String,
        source: std::io::Error,
    },
    /// Reading the text (bounds, UTF-8), located as trace read errors are.
    #[error(transparent)]
    Read(#[from] TraceError),
    #[error("{file}:{line}: field {field} ({name}): {why}")]
    Field {
        file: String,
        line: usize,
        field: usize,
        name: &'static str,
        why: String,
    },
}

/// Read `path` and apply it over a fabric of `ports` ports at `default_bps` each way.
pub fn read_port_rates(
    path: &Path,
    ports: usize,
    default_bps: f64,
) -> Result<Fabric, PortFileError> {
    let file = path.display().to_string();
    // A line per port (at most 2^24 ports read) at under 100 bytes each, comments aside.
    let text = read_bounded(path, MAX_PORT_FILE_BYTES, MAX_PORT_LINE_BYTES)?;
    parse_port_rates(&text, &file, ports, default_bps)
}

pub fn parse_port_rates(
    text: &str,
    file: &str,
    ports: usize,
    default_bps: f64,
) -> Result<Fabric, PortFileError> {
    let mut fabric = Fabric::uniform_bps(ports, default_bps);
    let mut seen = vec![false; ports];
    for (i, raw) in text.lines().enumerate() {
        let line = raw.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let err = |field, name, why: String| PortFileError::Field {
            file: file.to_string(),
            line: i + 1,
            field,
            name,
            why,
        };
        let tokens: Vec<&str> = line.split_whitespace().collect();
        if tokens.len() > 3 {
            return Err(err(
                4,
                "end of line",
                format!("unexpected `{}`", crate::echo::echo(tokens[3])),
            ));
        }
        if tokens.len() < 2 {
            return Err(err(2, "uplink rate", "missing".into()));
        }
        let port: usize = tokens[0].parse().map_err(|_| {
            err(
                1,
                "port",
                format!("`{}` is not a port number", crate::echo::echo(tokens[0])),
            )
        })?;
        if port >= ports {
            return Err(err(
                1,
                "port",
                format!("port {port} out of range 0..{ports}"),
            ));
        }
        if std::mem::replace(&mut seen[port], true) {
            return Err(err(1, "port", format!("port {port} listed twice")));
        }
        let up = parse_rate_bps(tokens[1]).map_err(|e| err(2, "uplink rate", e.to_string()))?;
        let down = match tokens.get(2) {
            Some(t) => parse_rate_bps(t).map_err(|e| err(3, "downlink rate", e.to_string()))?,
            None => up,
        };
        fabric.up_bytes_per_s[port] = up / 8.0;
        fabric.down_bytes_per_s[port] = down / 8.0;
    }
    Ok(fabric)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_heterogeneous_ports() {
        let f = parse_port_rates(
            "# hdr\n0 10gbit\n2 1gbit 500mbit # slow rx\n",
            "p.txt",
            3,
            1e9,
        )
        .unwrap();
        assert_eq!(f.up_bytes_per_s, vec![1.25e9, 1.25e8, 1.25e8]);
        assert_eq!(f.down_bytes_per_s, vec![1.25e9, 1.25e8, 6.25e7]);
    }

    #[test]
    fn a_file_that_is_not_utf8_or_has_no_end_is_refused_with_its_line() {
        let p = std::env::temp_dir().join(format!("coflowkit-pr-{}.txt", std::process::id()));
        std::fs::write(&p, b"0 1gbit\n# \xe9t\xe9\n").unwrap();
        let e = read_port_rates(&p, 2, 1e9).unwrap_err().to_string();
        let name = p.display().to_string();
        assert_eq!(e, format!("{name}:2: byte 3 of the line is not UTF-8 text"));
        std::fs::remove_file(&p).unwrap();
        let e = read_port_rates(Path::new("/dev/zero"), 2, 1e9)
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("/dev/zero:1: line longer than"), "{e}");
    }

    #[test]
    fn errors_name_file_line_and_field() {
        let e = parse_port_rates("0 1gbit\n5 1gbit\n", "p.txt", 3, 1e9).unwrap_err();
        assert_eq!(
            e.to_string(),
            "p.txt:2: field 1 (port): port 5 out of range 0..3"
        );
        let e = parse_port_rates("\n1 fast\n", "p.txt", 3, 1e9).unwrap_err();
        assert!(
            e.to_string().starts_with("p.txt:2: field 2 (uplink rate)"),
            "{e}"
        );
        let e = parse_port_rates("1 1gbit\n1 2gbit\n", "p.txt", 3, 1e9).unwrap_err();
        assert!(e.to_string().contains("listed twice"), "{e}");
        let e = parse_port_rates("1 1gbit 1gbit x\n", "p.txt", 3, 1e9).unwrap_err();
        assert!(e.to_string().starts_with("p.txt:1: field 4"), "{e}");
    }
}
