//! Reading a small input file (JSON vectors, summaries) with a size bound: `/dev/zero`,
//! `/dev/urandom` or a mistaken multi-GB file is refused after `limit` bytes, naming the file
//! and the limit, instead of being read until memory runs out.

use std::io::Read;
use std::path::Path;

use anyhow::{bail, Context, Result};

/// The bytes of `path`, refused once they pass `limit`.
pub fn read_limited(path: &Path, limit: u64) -> Result<Vec<u8>> {
    let name = path.display();
    // A directory is refused by name; a FIFO without a writer is not waited on for ever.
    let f = coflowkit_model::input::open_input(path).with_context(|| format!("reading {name}"))?;
    let mut bytes = Vec::new();
    f.take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .with_context(|| format!("reading {name}"))?;
    if bytes.len() as u64 > limit {
        bail!("reading {name}: larger than the limit of {limit} bytes");
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endless_and_large_files_are_refused_at_the_limit() {
        for endless in ["/dev/zero", "/dev/urandom"] {
            let e = read_limited(Path::new(endless), 1000).unwrap_err();
            assert_eq!(
                format!("{e:#}"),
                format!("reading {endless}: larger than the limit of 1000 bytes")
            );
        }
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f");
        std::fs::write(&p, [7u8; 1000]).unwrap();
        assert_eq!(read_limited(&p, 1000).unwrap().len(), 1000);
        assert!(read_limited(&p, 999).is_err());
        assert!(format!("{:#}", read_limited(dir.path(), 10).unwrap_err()).contains("directory"));
    }
}
