//! UDP datagrams as the transport decodes them: garbage is an error, never a panic, and a
//! datagram that decodes encodes back to the same bytes (but its nonce and tag, which
//! `encode` leaves zero for the endpoint to seal); a key's `verify` never panics either.
#![no_main]
use coflowkit_transport::wire;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // The session the endpoint expects is the one the datagram names (when long enough), so
    // the fuzzer reaches past the session check.
    let session = data
        .get(4..8)
        .map_or(0, |b| u32::from_le_bytes(b.try_into().unwrap()));
    if let Ok((h, payload)) = wire::decode(data, session) {
        let back = wire::encode(&h, payload).expect("a decoded datagram encodes");
        let mut untagged = data.to_vec();
        untagged[coflowkit_transport::auth::NONCE_AT..wire::HEADER_LEN].fill(0);
        assert_eq!(back, untagged);
    }
    let _ = coflowkit_transport::WireKey::derive(b"fuzz", session).verify(data);
});
