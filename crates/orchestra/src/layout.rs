//! How the broadcast data is cut into blocks: every block `block_bytes` long but the last.

use std::ops::Range;

use crate::OrchestraError;

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Layout {
    pub bytes: u64,
    pub block_bytes: u32,
}

impl Layout {
    pub fn new(bytes: u64, block_bytes: u32) -> Result<Layout, OrchestraError> {
        if bytes == 0 {
            return Err(OrchestraError::Bad("--bytes must be at least 1".into()));
        }
        if block_bytes == 0 {
            return Err(OrchestraError::Bad(
                "a block size must be at least 1 byte".into(),
            ));
        }
        // Block indices are u32 and have-maps one byte per block on the wire.
        let blocks = bytes.div_ceil(block_bytes as u64);
        if blocks > 1 << 20 {
            return Err(OrchestraError::Bad(format!(
                "{bytes} bytes in blocks of {block_bytes} is {blocks} blocks; at most 2^20 (use larger blocks)"
            )));
        }
        Ok(Layout { bytes, block_bytes })
    }

    pub fn blocks(&self) -> u32 {
        self.bytes.div_ceil(self.block_bytes as u64) as u32
    }

    /// Byte range of block `b` in the data.
    pub fn range(&self, b: u32) -> Range<u64> {
        let start = b as u64 * self.block_bytes as u64;
        start..(start + self.block_bytes as u64).min(self.bytes)
    }

    pub fn len(&self, b: u32) -> usize {
        let r = self.range(b);
        (r.end - r.start) as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn bad_layouts_are_named() {
        assert!(Layout::new(0, 4)
            .unwrap_err()
            .to_string()
            .contains("--bytes"));
        assert!(Layout::new(10, 0).is_err());
        assert!(Layout::new(1 << 40, 1)
            .unwrap_err()
            .to_string()
            .contains("blocks"));
    }

    proptest! {
        #[test]
        fn blocks_tile_the_data(bytes in 1u64..10_000_000, block in 1u32..5_000_000) {
            let l = Layout::new(bytes, block.max((bytes >> 20) as u32 + 1)).unwrap();
            let mut next = 0;
            for b in 0..l.blocks() {
                let r = l.range(b);
                prop_assert_eq!(r.start, next);
                prop_assert!(r.end > r.start && l.len(b) as u64 <= l.block_bytes as u64);
                next = r.end;
            }
            prop_assert_eq!(next, bytes);
        }
    }
}
