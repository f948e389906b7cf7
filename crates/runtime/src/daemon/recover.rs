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

/// Spill numbers at or past this were not given by a daemon (which numbers from 0 up): a file
/// so named is set aside, and new numbers never start near the end of `u64` (where they would
/// wrap to 0 and a new `.spill` could replace a found one).
const MAX_SEQ: u64 = 1 << 62;

/// A data dir entry recovery would not serve, and where it went.
#[derive(Debug)]
pub struct SetAside {
    pub from: PathBuf,
    /// Its new name (`.corrupt`), kept for inspection.
    pub to: PathBuf,
    pub why: String,
}

/// What a start found in the data dir.
#[derive(Debug, Default)]
pub struct Report {
    /// Objects now served again.
    pub recovered: usize,
    pub bytes: u64,
    /// Spill files that failed verification and entries that are not regular files (renamed
    /// `.corrupt`), with why.
    pub corrupt: Vec<SetAside>,
    /// `.part` files of puts that never completed, deleted.
    pub incomplete: usize,
}

/// An I/O error that names the entry it happened on.
fn named(path: &Path, e: std::io::Error) -> std::io::Error {
    std::io::Error::new(e.kind(), format!("{}: {e}", path.display()))
}

/// What kind of entry `path` is, when it is not a regular file (symlinks are followed: one to a
/// regular file is read as that file).
fn not_regular(path: &Path) -> Option<&'static str> {
    use std::os::unix::fs::FileTypeExt;
    let t = match std::fs::metadata(path) {
        Ok(m) => m.file_type(),
        Err(_) => return Some("a dangling link or symlink loop"),
    };
    Some(if t.is_file() {
        return None;
    } else if t.is_dir() {
        "a directory"
    } else if t.is_fifo() {
        "a FIFO"
    } else if t.is_socket() {
        "a socket"
    } else if t.is_block_device() || t.is_char_device() {
        "a device"
    } else {
        "not a regular file"
    })
}

/// Rename `path` to a free `.corrupt` name (an entry may already hold the plain one).
fn set_aside(path: &Path) -> std::io::Result<PathBuf> {
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    let mut to = path.with_extension(BAD_EXT);
    let mut k = 1u32;
    while std::fs::symlink_metadata(&to).is_ok() {
        to = path.with_file_name(format!("{name}.{k}.{BAD_EXT}"));
        k += 1;
    }
    std::fs::rename(path, &to).map_err(|e| named(path, e))?;
    Ok(to)
}

/// Re-index the spill files of `dir` into `store` (at start, before serving).
pub fn recover(store: &Store, dir: &Path) -> std::io::Result<Report> {
    let mut report = Report::default();
    let mut next = 0u64;
    let mut done = Vec::new();
    let mut aside = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
            continue;
        };
        let Some(n) = seq_of(name) else { continue };
        let ext = path.extension().and_then(|e| e.to_str());
        if n >= MAX_SEQ {
            if ext == Some(DONE_EXT) {
                aside.push((path, format!("spill number {n} is past {MAX_SEQ}")));
            } else if ext == Some(PART_EXT) {
                std::fs::remove_file(&path).map_err(|e| named(&path, e))?;
                report.incomplete += 1;
            }
            continue;
        }
        next = next.max(n + 1);
        if ext == Some(BAD_EXT) {
            continue;
        }
        if let Some(kind) = not_regular(&path) {
            aside.push((path, format!("{kind}, not a spill file")));
            continue;
        }
        if ext == Some(DONE_EXT) {
            done.push(path);
        } else {
            std::fs::remove_file(&path).map_err(|e| named(&path, e))?;
            report.incomplete += 1;
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
        aside.push((path, why));
    }
    for (from, why) in aside {
        let to = set_aside(&from)?;
        report.corrupt.push(SetAside { from, to, why });
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
        assert!(r.corrupt[0].why.contains("block 0"), "{:?}", r.corrupt);
        assert!(store.get(1, "a").is_some());
        assert!(store.get(1, "b").is_none());
        assert!(dir.path().join("c1-5.corrupt").exists());
        assert!(!dir.path().join("c2-9.part").exists());
        assert!(dir.path().join("notes.txt").exists());
        // New spill files are numbered past every name found (9 here).
        assert_eq!(seq_of("c2-9.part"), Some(9));
        assert_eq!(seq_of("notes.txt"), None);
    }

    /// Adversarial pass 32, A13: a name numbered u64::MAX (any extension) panicked the start
    /// on `n + 1`; names that are not ours must not move the numbering.
    #[test]
    fn a_spill_number_at_the_end_of_u64_is_set_aside_not_added_to() {
        let dir = tempfile::tempdir().unwrap();
        let max = u64::MAX;
        std::fs::write(dir.path().join(format!("c1-{max}.spill")), b"garbage").unwrap();
        std::fs::write(dir.path().join(format!("c1-{max}.txt")), b"not ours").unwrap();
        std::fs::write(dir.path().join("c1-7.txt"), b"not ours").unwrap();
        write_spill(dir.path(), "c1-2.spill", 1, "a", &[vec![5u8; 10]]);
        let store = Store::new(1 << 20, Some(dir.path()));
        let r = recover(&store, dir.path()).unwrap();
        assert_eq!(r.recovered, 1);
        assert_eq!(r.corrupt.len(), 1, "{:?}", r.corrupt);
        assert!(r.corrupt[0].why.contains("spill number"), "{:?}", r.corrupt);
        assert!(dir.path().join(format!("c1-{max}.corrupt")).exists());
        assert!(dir.path().join(format!("c1-{max}.txt")).exists());
        assert_eq!(seq_of("c1-7.txt"), None);
        // New spill files go on from 3 (past c1-2), not from 8 or a wrapped 0.
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let (path, _) = rt.block_on(store.create_spill(1)).unwrap();
        assert_eq!(path.file_name().unwrap(), "c1-3.part");
    }

    /// Adversarial pass 32, A14: a (sparse) file whose trailer claims a manifest of 2^32 - 1
    /// bytes made the start allocate and read 4 GiB.
    #[test]
    fn a_manifest_length_is_bounded_by_what_the_manifest_holds() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("c1-0.spill");
        let f = std::fs::File::create(&p).unwrap();
        let len = 5u64 << 30;
        f.set_len(len).unwrap(); // sparse: no 5 GiB written
        use std::os::unix::fs::FileExt;
        let mut t = vec![0u8; 4];
        t.extend(u32::MAX.to_be_bytes());
        t.extend(b"CFKSPIL1");
        f.write_all_at(&t, len - 16).unwrap();
        drop(f);
        let why = verify(&p).unwrap_err();
        assert!(why.contains("trailer says 4294967295"), "{why}");
        let store = Store::new(1 << 20, Some(dir.path()));
        let r = recover(&store, dir.path()).unwrap();
        assert_eq!((r.recovered, r.corrupt.len()), (0, 1));
        assert!(dir.path().join("c1-0.corrupt").exists());
    }

    /// Adversarial pass 32, A15: a FIFO named as a spill file blocked the start; a directory
    /// named `.part` or holding the `.corrupt` name stopped it with an error naming no entry.
    #[test]
    fn entries_that_are_not_regular_files_are_set_aside_by_name() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = std::ffi::CString::new(
            dir.path()
                .join("c1-0.spill")
                .into_os_string()
                .into_encoded_bytes(),
        )
        .unwrap();
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
        std::fs::create_dir(dir.path().join("c1-1.part")).unwrap();
        std::fs::write(dir.path().join("c1-2.spill"), b"garbage").unwrap();
        std::fs::create_dir(dir.path().join("c1-2.corrupt")).unwrap();
        let store = Store::new(1 << 20, Some(dir.path()));
        let (tx, rx) = std::sync::mpsc::channel();
        let d = dir.path().to_path_buf();
        std::thread::spawn(move || tx.send(recover(&store, &d).map_err(|e| e.to_string())));
        let r = rx
            .recv_timeout(std::time::Duration::from_secs(20))
            .expect("recovery must not block on a FIFO")
            .unwrap();
        let whys: Vec<(String, &str)> = r
            .corrupt
            .iter()
            .map(|b| {
                (
                    b.from.file_name().unwrap().to_string_lossy().into(),
                    &*b.why,
                )
            })
            .collect();
        assert_eq!(r.corrupt.len(), 3, "{whys:?}");
        assert!(
            whys.contains(&("c1-0.spill".into(), "a FIFO, not a spill file")),
            "{whys:?}"
        );
        assert!(
            whys.contains(&("c1-1.part".into(), "a directory, not a spill file")),
            "{whys:?}"
        );
        assert!(dir.path().join("c1-0.corrupt").exists());
        assert!(dir.path().join("c1-1.corrupt").is_dir());
        // The plain `.corrupt` name was taken: the next free one.
        assert!(dir.path().join("c1-2.spill.1.corrupt").is_file());
        assert!(dir.path().join("c1-2.corrupt").is_dir());
    }
}
