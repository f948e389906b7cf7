//! Data-plane frames as the daemon reads them: chunks (blocks, end, refusal) until an error
//! or the end of the input.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
    rt.block_on(async {
        let mut r = data;
        let mut buf = Vec::new();
        while coflowkit_runtime::frame::read_chunk(&mut r, &mut buf).await.is_ok() {}
    });
});
