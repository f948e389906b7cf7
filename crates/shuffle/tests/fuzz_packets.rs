//! Hostile packets into one protocol node (see `hostile/mod.rs`): never a panic, only
//! well-formed packets out. The same script runs under cargo-fuzz as the `packet` target.

mod hostile;

use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(600))]

    #[test]
    fn hostile_packets_never_panic_a_node(data in proptest::collection::vec(any::<u8>(), 0..1500)) {
        hostile::run(&data);
    }
}
