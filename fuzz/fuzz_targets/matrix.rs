//! Shuffle matrix files (packets and normalized).
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = coflowkit_shuffle::matrix::parse_matrix(text, "fuzz");
    }
});
