//! The spill file format, a leaf (the store writes it, recovery reads it). A spill file
//! `c<coflow>-<n>.spill` holds one object's blocks back to back, then a manifest:
//!
//! ```text
//! [u64 coflow][u32 id length][data id][u64 size][u32 blocks] blocks × [u32 length][u32 CRC-32]
//! [u32 CRC-32 of the manifest][u32 manifest length]["CFKSPIL1"]        (all big-endian)
//! ```
//!
//! It is written as `.part` while the put runs and renamed to `.spill` once complete and synced.

use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use crate::frame::MAX_FRAME_BYTES;

/// Extension of a completed spill file (recovered at start).
pub const DONE_EXT: &str = "spill";
/// Extension of a spill file whose put has not completed (dropped at start).
pub const PART_EXT: &str = "part";
/// Extension a spill file that fails verification is renamed to.
pub const BAD_EXT: &str = "corrupt";
const MAGIC: &[u8; 8] = b"CFKSPIL1";
const TRAILER: u64 = 16;
/// Longest data id a manifest may hold (the data plane accepts 512 bytes).
const MAX_ID: usize = 4096;

/// The manifest and trailer that end a spill file.
pub fn manifest(
    coflow: u64,
    data_id: &str,
    size: u64,
    blocks: impl ExactSizeIterator<Item = (u32, u32)>,
) -> Vec<u8> {
    let mut m = Vec::with_capacity(28 + data_id.len() + 8 * blocks.len());
    m.extend_from_slice(&coflow.to_be_bytes());
    m.extend_from_slice(&(data_id.len() as u32).to_be_bytes());
    m.extend_from_slice(data_id.as_bytes());
    m.extend_from_slice(&size.to_be_bytes());
    m.extend_from_slice(&(blocks.len() as u32).to_be_bytes());
    for (len, crc) in blocks {
        m.extend_from_slice(&len.to_be_bytes());
        m.extend_from_slice(&crc.to_be_bytes());
    }
    let crc = crc32fast::hash(&m);
    let len = m.len() as u32;
    m.extend_from_slice(&crc.to_be_bytes());
    m.extend_from_slice(&len.to_be_bytes());
    m.extend_from_slice(MAGIC);
    m
}

/// What one spill file holds, once verified.
#[derive(Debug, PartialEq)]
pub struct Verified {
    pub coflow: u64,
    pub data_id: String,
    /// (length, CRC-32) of each block, in order from offset 0.
    pub blocks: Vec<(u32, u32)>,
}

/// Read a spill file's manifest and check every block against it.
pub fn verify(path: &Path) -> Result<Verified, String> {
    use std::os::unix::fs::OpenOptionsExt;
    // Non-blocking, so that a FIFO put in the file's place cannot hold the start.
    let mut f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| format!("cannot open: {e}"))?;
    let meta = f.metadata().map_err(|e| format!("cannot stat: {e}"))?;
    if !meta.is_file() {
        return Err("not a regular file".into());
    }
    let file_len = meta.len();
    if file_len < TRAILER {
        return Err(format!(
            "{file_len} bytes, too short for a manifest (truncated?)"
        ));
    }
    let mut trailer = [0u8; TRAILER as usize];
    f.seek(SeekFrom::Start(file_len - TRAILER))
        .and_then(|_| f.read_exact(&mut trailer))
        .map_err(|e| format!("reading the trailer: {e}"))?;
    if &trailer[8..] != MAGIC {
        return Err("no manifest at the end (truncated, or not a coflowkit spill file)".into());
    }
    let crc = u32::from_be_bytes(trailer[..4].try_into().expect("4 bytes"));
    let mlen = u32::from_be_bytes(trailer[4..8].try_into().expect("4 bytes")) as u64;
    if mlen > file_len - TRAILER {
        return Err(format!(
            "manifest of {mlen} bytes does not fit in {file_len} bytes"
        ));
    }
    let data_len = file_len - TRAILER - mlen;
    f.seek(SeekFrom::Start(data_len))
        .map_err(|e| format!("reading the manifest: {e}"))?;
    // Read as a stream and checked as it comes: the length in the trailer is only believed
    // as far as the manifest's own counts bear it out (never allocated whole).
    let mut m = Hashed {
        r: std::io::BufReader::with_capacity(64 * 1024, &mut f),
        h: crc32fast::Hasher::new(),
    };
    let (coflow, data_id, size, blocks) = parse(&mut m, mlen, data_len)?;
    if m.h.finalize() != crc {
        return Err("manifest checksum mismatch".into());
    }
    let sum: u64 = blocks.iter().map(|&(len, _)| len as u64).sum();
    if sum != size || size != data_len {
        return Err(format!(
            "manifest says {size} bytes in blocks of {sum} bytes, the file holds {data_len}"
        ));
    }
    f.seek(SeekFrom::Start(0))
        .map_err(|e| format!("reading the data: {e}"))?;
    let mut r = std::io::BufReader::with_capacity(256 * 1024, f);
    let mut buf = vec![0u8; MAX_FRAME_BYTES];
    for (i, &(len, crc)) in blocks.iter().enumerate() {
        let b = &mut buf[..len as usize];
        r.read_exact(b)
            .map_err(|e| format!("reading block {i}: {e}"))?;
        if crc32fast::hash(b) != crc {
            return Err(format!("block {i} checksum mismatch"));
        }
    }
    Ok(Verified {
        coflow,
        data_id,
        blocks,
    })
}

type Manifest = (u64, String, u64, Vec<(u32, u32)>);

/// A reader that hashes what it reads.
struct Hashed<R> {
    r: R,
    h: crc32fast::Hasher,
}

impl<R: Read> Hashed<R> {
    fn take<const N: usize>(&mut self) -> Result<[u8; N], String> {
        let mut b = [0u8; N];
        self.r
            .read_exact(&mut b)
            .map_err(|e| format!("reading the manifest: {e}"))?;
        self.h.update(&b);
        Ok(b)
    }
}

/// The manifest of `mlen` bytes ahead of `m`, before `data_len` bytes of blocks.
fn parse<R: Read>(m: &mut Hashed<R>, mlen: u64, data_len: u64) -> Result<Manifest, String> {
    let malformed = |what: String| format!("malformed manifest: {what}");
    let coflow = u64::from_be_bytes(m.take()?);
    let id_len = u32::from_be_bytes(m.take()?) as usize;
    if id_len > MAX_ID {
        return Err(malformed(format!(
            "data id of {id_len} bytes, past {MAX_ID}"
        )));
    }
    // The fixed fields and the id must fit in what the trailer claims.
    if 24 + id_len as u64 > mlen {
        return Err(malformed(format!("{mlen} bytes cannot hold its fields")));
    }
    let mut id = vec![0u8; id_len];
    m.r.read_exact(&mut id)
        .map_err(|e| format!("reading the manifest: {e}"))?;
    m.h.update(&id);
    let data_id = String::from_utf8(id).map_err(|_| malformed("data id is not UTF-8".into()))?;
    let size = u64::from_be_bytes(m.take()?);
    let n = u32::from_be_bytes(m.take()?) as u64;
    // What a manifest of n blocks holds: its length is exact, and every block is at least
    // one byte of the data before it.
    let want = 24 + id_len as u64 + 8 * n;
    if want != mlen {
        return Err(malformed(format!(
            "{n} blocks make a manifest of {want} bytes, the trailer says {mlen}"
        )));
    }
    if n > data_len {
        return Err(malformed(format!("{n} blocks in {data_len} bytes of data")));
    }
    let mut blocks = Vec::with_capacity(n.min(4096) as usize);
    for i in 0..n {
        let len = u32::from_be_bytes(m.take()?);
        let crc = u32::from_be_bytes(m.take()?);
        if len == 0 || len as usize > MAX_FRAME_BYTES {
            return Err(malformed(format!(
                "block {i} of {len} bytes (1..={MAX_FRAME_BYTES})"
            )));
        }
        blocks.push((len, crc));
    }
    Ok((coflow, data_id, size, blocks))
}

/// The sequence number in a spill file's name `c<coflow>-<n>.<ext>` (`ext` one of ours:
/// `spill`, `part`, `corrupt`).
pub(super) fn seq_of(name: &str) -> Option<u64> {
    let (stem, ext) = name.strip_prefix('c')?.rsplit_once('.')?;
    if ![DONE_EXT, PART_EXT, BAD_EXT].contains(&ext) {
        return None;
    }
    let (coflow, n) = stem.split_once('-')?;
    coflow.parse::<u64>().ok()?;
    n.parse().ok()
}
