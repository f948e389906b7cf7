//! The data-plane frame decoder under random and mutated input (the normal suite's side of
//! `fuzz/fuzz_targets/frame.rs`): every input ends in a value or an error, never a panic, and
//! never a buffer above the frame limit; valid streams decode to what was written.

use coflowkit_runtime::frame::{self, Chunk, FrameError, MAX_FRAME_BYTES};
use proptest::prelude::*;

/// Read chunks until the first error; what came out, in order.
fn chunks(mut input: &[u8]) -> (Vec<Result<Option<u64>, String>>, usize) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("runtime");
    rt.block_on(async {
        let mut out = Vec::new();
        let mut buf = Vec::new();
        let mut largest = 0;
        loop {
            let r = frame::read_chunk(&mut input, &mut buf).await;
            largest = largest.max(buf.len());
            match r {
                Ok(Chunk::Block) => out.push(Ok(None)),
                Ok(Chunk::End(n)) => out.push(Ok(Some(n))),
                Ok(Chunk::Refused(why)) => out.push(Err(why)),
                Err(e) => {
                    out.push(Err(e.to_string()));
                    break;
                }
            }
        }
        (out, largest)
    })
}

/// A valid stream: blocks then the end frame.
fn stream(blocks: &[Vec<u8>]) -> Vec<u8> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("runtime");
    rt.block_on(async {
        let mut w = Vec::new();
        let mut total = 0;
        for b in blocks {
            frame::write_block(&mut w, crc32fast::hash(b), b)
                .await
                .expect("write");
            total += b.len() as u64;
        }
        frame::write_end(&mut w, total).await.expect("write");
        w
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn random_bytes_give_values_or_errors(input in prop::collection::vec(any::<u8>(), 0..4096)) {
        let (_, largest) = chunks(&input);
        prop_assert!(largest <= MAX_FRAME_BYTES);
    }

    #[test]
    fn valid_streams_decode_and_any_flipped_byte_is_caught_or_harmless(
        blocks in prop::collection::vec(prop::collection::vec(any::<u8>(), 0..600), 0..6),
        flip in any::<prop::sample::Index>(),
        bit in 0u8..8,
    ) {
        let wire = stream(&blocks);
        let (out, _) = chunks(&wire);
        let total: u64 = blocks.iter().map(|b| b.len() as u64).sum();
        // Every block, then the end with the total, then the clean end of input.
        prop_assert_eq!(out.len(), blocks.len() + 2);
        prop_assert!(out[..blocks.len()].iter().all(|c| *c == Ok(None)));
        prop_assert_eq!(&out[blocks.len()], &Ok(Some(total)));

        // One flipped bit: never a panic; inside a block's bytes or CRC it is caught, never
        // delivered as a good block.
        let mut bad = wire.clone();
        let i = flip.index(bad.len());
        bad[i] ^= 1 << bit;
        let (out, largest) = chunks(&bad);
        prop_assert!(largest <= MAX_FRAME_BYTES);
        let goods = out.iter().filter(|c| **c == Ok(None)).count();
        let in_blocks = i < wire.len() - 13; // the end frame is the last 13 bytes
        if in_blocks {
            prop_assert!(goods < blocks.len(), "a corrupted block was accepted: {out:?}");
        }
    }
}

#[test]
fn an_announced_length_above_the_limit_is_refused_before_reading_it() {
    let mut wire = ((MAX_FRAME_BYTES + 1) as u32).to_be_bytes().to_vec();
    wire.push(4);
    let (out, largest) = chunks(&wire);
    assert_eq!(largest, 0);
    let want = FrameError::TooLong(MAX_FRAME_BYTES + 1).to_string();
    assert_eq!(out, vec![Err(want)]);
}
