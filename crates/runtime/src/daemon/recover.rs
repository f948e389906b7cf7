//! Spill files that outlive the daemon: their manifest, and the re-indexing at start.
//!
//! A spill file `c<coflow>-<n>.spill` holds one object's blocks back to back, then a manifest:
//!
//! ```text
//! [u64 coflow][u32 id length][data id][u64 size][u32 blocks] blocks × [u32 length][u32 CRC-32]
//! [u32 CRC-32 of the manifest][u32 manifest length]["CFKSPIL1"]        (all big-endian)
//! ```
//!
//! It is written as `.part` while the put runs and renamed to `.spill` once complete and synced.
//! At start the daemon drops `.part` files (puts never acknowledged, such as one still streaming
//! in when the daemon died), reads every `.spill` file's manifest, checks each block's CRC
//! against its bytes, and serves (and reports to the coordinator) the objects that pass. A file that fails (truncated, corrupt, not ours) is
//! logged with the reason, renamed `.corrupt` for inspection and never served.

use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use super::store::{Object, Store};
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
    let mut f = std::fs::File::open(path).map_err(|e| format!("cannot open: {e}"))?;
    let file_len = f.metadata().map_err(|e| format!("cannot stat: {e}"))?.len();
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
    let mut m = vec![0u8; mlen as usize];
    f.seek(SeekFrom::Start(data_len))
        .and_then(|_| f.read_exact(&mut m))
        .map_err(|e| format!("reading the manifest: {e}"))?;
    if crc32fast::hash(&m) != crc {
        return Err("manifest checksum mismatch".into());
    }
    let (coflow, data_id, size, blocks) = parse(&m).ok_or("malformed manifest")?;
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

fn parse(m: &[u8]) -> Option<Manifest> {
    let mut at = 0usize;
    let mut take = |n: usize| -> Option<&[u8]> {
        let s = m.get(at..at.checked_add(n)?)?;
        at += n;
        Some(s)
    };
    let coflow = u64::from_be_bytes(take(8)?.try_into().ok()?);
    let id_len = u32::from_be_bytes(take(4)?.try_into().ok()?) as usize;
    if id_len > MAX_ID {
        return None;
    }
    let data_id = String::from_utf8(take(id_len)?.to_vec()).ok()?;
    let size = u64::from_be_bytes(take(8)?.try_into().ok()?);
    let n = u32::from_be_bytes(take(4)?.try_into().ok()?) as usize;
    let mut blocks = Vec::with_capacity(n.min(m.len() / 8));
    for _ in 0..n {
        let len = u32::from_be_bytes(take(4)?.try_into().ok()?);
        let crc = u32::from_be_bytes(take(4)?.try_into().ok()?);
        if len == 0 || len as usize > MAX_FRAME_BYTES {
            return None;
        }
        blocks.push((len, crc));
    }
    (at == m.len()).then_some((coflow, data_id, size, blocks))
}

/// The sequence number in a spill file's name `c<coflow>-<n>.<ext>`.
fn seq_of(name: &str) -> Option<u64> {
    let stem = name.strip_prefix('c')?.rsplit_once('.')?.0;
    let (coflow, n) = stem.split_once('-')?;
    coflow.parse::<u64>().ok()?;
    n.parse().ok()
}

/// What a start found in the data dir.
#[derive(Debug, Default)]
pub struct Report {
    /// Objects now served again.
    pub recovered: usize,
    pub bytes: u64,
    /// Spill files that failed verification (renamed `.corrupt`), with why.
    pub corrupt: Vec<(PathBuf, String)>,
    /// `.part` files of puts that never completed, deleted.
    pub incomplete: usize,
}

/// Re-index the spill files of `dir` into `store` (at start, before serving).
pub fn recover(store: &Store, dir: &Path) -> std::io::Result<Report> {
    let mut report = Report::default();
    let mut next = 0u64;
    let mut done = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
            continue;
        };
        let Some(n) = seq_of(name) else { continue };
        next = next.max(n + 1);
        match path.extension().and_then(|e| e.to_str()) {
            Some(DONE_EXT) => done.push(path),
            Some(PART_EXT) => {
                std::fs::remove_file(&path)?;
                report.incomplete += 1;
            }
            _ => {}
        }
    }
    // New spill files must not take the names of the ones found.
    store.number_spills_from(next);
    done.sort();
    for path in done {
        let why = match verify(&path) {
            Ok(v) => {
                let size: u64 = v.blocks.iter().map(|&(len, _)| len as u64).sum();
                let obj = Object::recovered(v.coflow, v.data_id, &v.blocks, path.clone());
                match store.adopt(obj) {
                    Ok(()) => {
                        report.recovered += 1;
                        report.bytes += size;
                        continue;
                    }
                    Err(dup) => {
                        let why = format!(
                            "coflow {} data `{}` is already in another spill file",
                            dup.coflow, dup.data_id
                        );
                        dup.disown();
                        why
                    }
                }
            }
            Err(why) => why,
        };
        let bad = path.with_extension(BAD_EXT);
        std::fs::rename(&path, &bad)?;
        report.corrupt.push((path, why));
    }
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write_spill(dir: &Path, name: &str, coflow: u64, id: &str, blocks: &[Vec<u8>]) -> PathBuf {
        let mut bytes: Vec<u8> = blocks.concat();
        let size = bytes.len() as u64;
        bytes.extend(manifest(
            coflow,
            id,
            size,
            blocks
                .iter()
                .map(|b| (b.len() as u32, crc32fast::hash(b)))
                .collect::<Vec<_>>()
                .into_iter(),
        ));
        let p = dir.join(name);
        std::fs::write(&p, bytes).unwrap();
        p
    }

    #[test]
    fn a_good_file_verifies_and_every_damage_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let blocks = vec![vec![1u8; 300], vec![2u8; 200]];
        let p = write_spill(dir.path(), "c7-0.spill", 7, "part-3", &blocks);
        let v = verify(&p).unwrap();
        assert_eq!(v.coflow, 7);
        assert_eq!(v.data_id, "part-3");
        assert_eq!(v.blocks.len(), 2);
        let good = std::fs::read(&p).unwrap();

        // A flipped data bit: that block's checksum.
        let mut bad = good.clone();
        bad[350] ^= 1;
        std::fs::write(&p, &bad).unwrap();
        assert_eq!(verify(&p).unwrap_err(), "block 1 checksum mismatch");
        // Truncated at any point: refused, never a panic.
        for cut in [0, 1, 15, 16, 499, 500, 510, good.len() - 1] {
            std::fs::write(&p, &good[..cut]).unwrap();
            assert!(verify(&p).is_err(), "cut at {cut}");
        }
        // A damaged manifest.
        let mut bad = good.clone();
        bad[505] ^= 0x40;
        std::fs::write(&p, &bad).unwrap();
        assert_eq!(verify(&p).unwrap_err(), "manifest checksum mismatch");
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]
        /// Any object round-trips; any single damaged byte or any truncation is refused.
        #[test]
        fn damage_anywhere_is_caught(
            lens in proptest::collection::vec(1usize..3000, 0..5),
            id in "[a-z0-9/._-]{0,40}",
            coflow: u64,
            at: proptest::sample::Index,
            flip in 1u8..=255,
        ) {
            let dir = tempfile::tempdir().unwrap();
            let blocks: Vec<Vec<u8>> = lens
                .iter()
                .enumerate()
                .map(|(i, &n)| (0..n).map(|j| (i * 7 + j * 13) as u8).collect())
                .collect();
            let p = write_spill(dir.path(), "c1-0.spill", coflow, &id, &blocks);
            let v = verify(&p).unwrap();
            proptest::prop_assert_eq!(v.coflow, coflow);
            proptest::prop_assert_eq!(&v.data_id, &id);
            let want: Vec<(u32, u32)> =
                blocks.iter().map(|b| (b.len() as u32, crc32fast::hash(b))).collect();
            proptest::prop_assert_eq!(&v.blocks, &want);
            let good = std::fs::read(&p).unwrap();
            let i = at.index(good.len());
            let mut bad = good.clone();
            bad[i] ^= flip;
            std::fs::write(&p, &bad).unwrap();
            proptest::prop_assert!(verify(&p).is_err(), "byte {} of {} damaged", i, good.len());
            std::fs::write(&p, &good[..i]).unwrap();
            proptest::prop_assert!(verify(&p).is_err(), "cut at {}", i);
        }
    }

    #[test]
    fn recovery_adopts_good_files_sets_aside_bad_ones_and_drops_parts() {
        let dir = tempfile::tempdir().unwrap();
        let blocks = vec![vec![9u8; 1000]];
        write_spill(dir.path(), "c1-4.spill", 1, "a", &blocks);
        let bad = write_spill(dir.path(), "c1-5.spill", 1, "b", &blocks);
        let mut bytes = std::fs::read(&bad).unwrap();
        bytes[10] ^= 1;
        std::fs::write(&bad, bytes).unwrap();
        std::fs::write(dir.path().join("c2-9.part"), b"unfinished").unwrap();
        std::fs::write(dir.path().join("notes.txt"), b"not ours").unwrap();

        let store = Store::new(1 << 20, Some(dir.path()));
        let r = recover(&store, dir.path()).unwrap();
        assert_eq!((r.recovered, r.bytes, r.incomplete), (1, 1000, 1));
        assert_eq!(r.corrupt.len(), 1);
        assert!(r.corrupt[0].1.contains("block 0"), "{:?}", r.corrupt);
        assert!(store.get(1, "a").is_some());
        assert!(store.get(1, "b").is_none());
        assert!(dir.path().join("c1-5.corrupt").exists());
        assert!(!dir.path().join("c2-9.part").exists());
        assert!(dir.path().join("notes.txt").exists());
        // New spill files are numbered past every name found (9 here).
        assert_eq!(seq_of("c2-9.part"), Some(9));
        assert_eq!(seq_of("notes.txt"), None);
    }
}
