//! Both trace formats (detected from the text): a trace or an error, never a panic.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = coflowkit_model::trace::parse_str(text, "fuzz");
    }
});
