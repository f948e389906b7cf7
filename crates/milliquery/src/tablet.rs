//! The CSV tablets: where each lives, its header, and loading one rank's share with errors that
//! name the file, line and field. Rank r of M reads `<table dir>/<prefix>-RRR.csv` (RRR: r with
//! at least three digits), and the directory must hold exactly M tablets of that table.

use std::net::Ipv4Addr;
use std::path::{Path, PathBuf};

use coflowkit_model::echo::echo;

use crate::QueryError;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Table {
    /// Q1: `language,views`.
    Views,
    /// Q2: `contributor_ip`, a dotted quad.
    Edits,
    /// Q3: `repo_name,author`, already unnested.
    Commits,
    /// Q3: `lang,bytes,repo_name`, already unnested.
    Languages,
}

impl Table {
    pub const ALL: [Table; 4] = [Table::Views, Table::Edits, Table::Commits, Table::Languages];

    pub fn dir(self) -> &'static str {
        match self {
            Table::Views => "q1",
            Table::Edits => "q2",
            Table::Commits | Table::Languages => "q3",
        }
    }

    pub fn prefix(self) -> &'static str {
        match self {
            Table::Views | Table::Edits => "tablet",
            Table::Commits => "commits",
            Table::Languages => "languages",
        }
    }

    pub fn header(self) -> &'static [&'static str] {
        match self {
            Table::Views => &["language", "views"],
            Table::Edits => &["contributor_ip"],
            Table::Commits => &["repo_name", "author"],
            Table::Languages => &["lang", "bytes", "repo_name"],
        }
    }

    pub fn path(self, data: &Path, rank: usize) -> PathBuf {
        data.join(self.dir())
            .join(format!("{}-{rank:03}.csv", self.prefix()))
    }

    /// How many tablets of this table `data` holds (files named `<prefix>-<digits>.csv`).
    pub fn count(self, data: &Path) -> Result<usize, QueryError> {
        let dir = data.join(self.dir());
        let entries = std::fs::read_dir(&dir).map_err(|source| QueryError::Io {
            path: dir.clone(),
            source,
        })?;
        let mut n = 0;
        for e in entries {
            let e = e.map_err(|source| QueryError::Io {
                path: dir.clone(),
                source,
            })?;
            let name = e.file_name();
            let name = name.to_string_lossy();
            let digits = name
                .strip_prefix(self.prefix())
                .and_then(|s| s.strip_prefix('-'))
                .and_then(|s| s.strip_suffix(".csv"));
            if digits.is_some_and(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit())) {
                n += 1;
            }
        }
        Ok(n)
    }
}

/// One rank's rows of every table (a query reads only its own).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Q1Rows(pub Vec<(String, u64)>);
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Q2Rows(pub Vec<u32>);
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Q3Rows {
    pub commits: Vec<(String, String)>,
    pub languages: Vec<(String, u64, String)>,
}

/// Bytes a rank holds per byte of a tablet it loads: 150 MB of `aa,1` rows (5 bytes each, a
/// `String` and a count in memory, then the query's copies) took a rank to 1.73 GB, 11.5 bytes
/// a byte; rounded up for 4-byte rows.
pub const HOLD_PER_TABLET_BYTE: u64 = 16;

/// The size of a tablet that is a regular file (through symbolic links); a directory, FIFO or
/// device is refused saying what it is (a FIFO would block the open, a device never end).
pub fn size_of(path: &Path, rank: usize, ranks: usize) -> Result<u64, QueryError> {
    let meta = match std::fs::metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(QueryError::MissingTablet {
                path: path.to_path_buf(),
                rank,
                ranks,
            })
        }
        Err(source) => {
            return Err(QueryError::Io {
                path: path.to_path_buf(),
                source,
            })
        }
    };
    if !meta.is_file() {
        return Err(QueryError::NotATablet {
            path: path.to_path_buf(),
            what: file_kind(&meta.file_type()),
            rank,
            ranks,
        });
    }
    Ok(meta.len())
}

fn file_kind(t: &std::fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if t.is_dir() {
        "a directory"
    } else if t.is_fifo() {
        "a FIFO (named pipe)"
    } else if t.is_char_device() {
        "a character device"
    } else if t.is_block_device() {
        "a block device"
    } else if t.is_socket() {
        "a socket"
    } else {
        "not a regular file"
    }
}

/// Bytes rank `rank` will hold to load its tablets of `tables` (their sizes x
/// [`HOLD_PER_TABLET_BYTE`]), for a check against memory before anything is read.
pub fn hold_bytes(
    data: &Path,
    tables: &[Table],
    rank: usize,
    ranks: usize,
) -> Result<u64, QueryError> {
    let mut sum = 0u64;
    for &t in tables {
        let size = size_of(&t.path(data, rank), rank, ranks)?;
        sum = sum.saturating_add(size.saturating_mul(HOLD_PER_TABLET_BYTE));
    }
    Ok(sum)
}

/// Checks that `data` holds exactly `ranks` tablets of `table` and opens this rank's.
fn open(
    data: &Path,
    table: Table,
    rank: usize,
    ranks: usize,
) -> Result<(PathBuf, csv::Reader<std::fs::File>), QueryError> {
    let path = table.path(data, rank);
    size_of(&path, rank, ranks)?;
    let tablets = table.count(data)?;
    if tablets != ranks {
        return Err(QueryError::RankMismatch {
            dir: data.join(table.dir()),
            tablets,
            ranks,
        });
    }
    let file = std::fs::File::open(&path).map_err(|source| QueryError::Io {
        path: path.clone(),
        source,
    })?;
    let mut rd = csv::ReaderBuilder::new()
        .has_headers(true)
        .from_reader(file);
    let header = rd.headers().map_err(|e| csv_error(&path, e))?.clone();
    let want = table.header();
    if header.iter().ne(want.iter().copied()) {
        return Err(QueryError::Malformed {
            path,
            line: 1,
            field: "header".into(),
            reason: format!(
                "expected `{}`, found `{}`",
                want.join(","),
                echo(&header.iter().collect::<Vec<_>>().join(","))
            ),
        });
    }
    Ok((path, rd))
}

fn csv_error(path: &Path, e: csv::Error) -> QueryError {
    let line = e.position().map(|p| p.line()).unwrap_or(0);
    let reason = match e.kind() {
        csv::ErrorKind::UnequalLengths {
            expected_len, len, ..
        } => {
            format!("{len} fields where the header has {expected_len}")
        }
        _ => e.to_string(),
    };
    QueryError::Malformed {
        path: path.to_path_buf(),
        line,
        field: "(row)".into(),
        reason,
    }
}

/// Reads every record, handing each with its line number to `row`.
fn each(
    path: &Path,
    rd: &mut csv::Reader<std::fs::File>,
    mut row: impl FnMut(&csv::StringRecord, u64) -> Result<(), QueryError>,
) -> Result<(), QueryError> {
    let mut rec = csv::StringRecord::new();
    loop {
        match rd.read_record(&mut rec) {
            Ok(false) => return Ok(()),
            Ok(true) => {
                let line = rec.position().map(|p| p.line()).unwrap_or(0);
                row(&rec, line)?;
            }
            Err(e) => return Err(csv_error(path, e)),
        }
    }
}

fn bad(path: &Path, line: u64, field: &str, reason: String) -> QueryError {
    QueryError::Malformed {
        path: path.to_path_buf(),
        line,
        field: field.into(),
        reason,
    }
}

fn text(path: &Path, line: u64, field: &str, v: &str) -> Result<String, QueryError> {
    if v.is_empty() {
        return Err(bad(path, line, field, "empty".into()));
    }
    Ok(v.to_string())
}

fn count(path: &Path, line: u64, field: &str, v: &str) -> Result<u64, QueryError> {
    // At most i64::MAX, so a SQL engine's 64-bit integers hold every value.
    match v.parse::<u64>() {
        Ok(n) if n <= i64::MAX as u64 => Ok(n),
        _ => Err(bad(
            path,
            line,
            field,
            format!("`{}` is not an integer in 0..=2^63-1", echo(v)),
        )),
    }
}

pub fn load_q1(data: &Path, rank: usize, ranks: usize) -> Result<Q1Rows, QueryError> {
    let (path, mut rd) = open(data, Table::Views, rank, ranks)?;
    let mut rows = Vec::new();
    each(&path, &mut rd, |r, line| {
        rows.push((
            text(&path, line, "language", &r[0])?,
            count(&path, line, "views", &r[1])?,
        ));
        Ok(())
    })?;
    Ok(Q1Rows(rows))
}

pub fn load_q2(data: &Path, rank: usize, ranks: usize) -> Result<Q2Rows, QueryError> {
    let (path, mut rd) = open(data, Table::Edits, rank, ranks)?;
    let mut rows = Vec::new();
    each(&path, &mut rd, |r, line| {
        // Canonical dotted quads only (no leading zeros), so the address prints back as the
        // text the SQL engine groups by.
        let ip: Ipv4Addr = r[0].parse().map_err(|_| {
            bad(
                &path,
                line,
                "contributor_ip",
                format!("`{}` is not a dotted-quad IPv4 address", echo(&r[0])),
            )
        })?;
        rows.push(u32::from(ip));
        Ok(())
    })?;
    Ok(Q2Rows(rows))
}

pub fn load_q3(data: &Path, rank: usize, ranks: usize) -> Result<Q3Rows, QueryError> {
    let (path, mut rd) = open(data, Table::Commits, rank, ranks)?;
    let mut commits = Vec::new();
    each(&path, &mut rd, |r, line| {
        commits.push((
            text(&path, line, "repo_name", &r[0])?,
            text(&path, line, "author", &r[1])?,
        ));
        Ok(())
    })?;
    let (path, mut rd) = open(data, Table::Languages, rank, ranks)?;
    let mut languages = Vec::new();
    each(&path, &mut rd, |r, line| {
        languages.push((
            text(&path, line, "lang", &r[0])?,
            count(&path, line, "bytes", &r[1])?,
            text(&path, line, "repo_name", &r[2])?,
        ));
        Ok(())
    })?;
    Ok(Q3Rows { commits, languages })
}
