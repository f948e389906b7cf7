//! Protocol packets as a hostile peer would send them, into one node of every protocol: never
//! a panic, only well-formed packets out. The script is shared with the proptest in the normal
//! suite (crates/shuffle/tests/fuzz_packets.rs).
#![no_main]
use libfuzzer_sys::fuzz_target;

#[path = "../../crates/shuffle/tests/hostile/mod.rs"]
mod hostile;

fuzz_target!(|data: &[u8]| hostile::run(data));
