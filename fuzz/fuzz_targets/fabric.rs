//! Per-port rate files.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = coflowkit_model::fabric_file::parse_port_rates(text, "fuzz", 64, 1e9);
    }
});
