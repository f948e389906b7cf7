//! Spill files that outlive the daemon: the re-indexing at start (their format is
//! [`super::spill_file`]).
//!
//! At start the daemon drops `.part` files (puts never acknowledged, such as one still streaming
//! in when the daemon died), reads every `.spill` file's manifest, checks each block's CRC
//! against its bytes, and serves (and reports to the coordinator) the objects that pass. A file that fails (truncated, corrupt, not ours) is
//! logged with the reason, renamed `.corrupt` for inspection and never served.

use std::path::{Path, PathBuf};

use super::spill_file::{seq_of, verify, BAD_EXT, DONE_EXT, PART_EXT};
use super::store::{Object, Store};

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
    use super::super::spill_file::manifest;
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
