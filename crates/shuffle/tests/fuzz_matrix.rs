//! A fuzz of the matrix reader in the normal suite: random text and random edits of a valid
//! matrix give a matrix or an error naming the file, never a panic or a huge allocation.

use coflowkit_shuffle::matrix::parse_matrix;
use proptest::prelude::*;

const VALID: &str = "nodes 3 packets\n0 2 1\n1 0 2\n2 1 0\n";

fn nasty() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("4294967296".to_string()),
        Just("18446744073709551615".to_string()),
        Just("1000000000".to_string()),
        Just("-1".to_string()),
        Just("1e308".to_string()),
        Just("NaN".to_string()),
        Just("normalized".to_string()),
        "[0-9]{1,22}",
        "\\PC{0,6}",
    ]
}

fn edited() -> impl Strategy<Value = String> {
    let tokens: Vec<String> = VALID.split(' ').map(String::from).collect();
    (0..tokens.len(), nasty()).prop_map(move |(i, t)| {
        let mut v = tokens.clone();
        let keep_nl = v[i].ends_with('\n');
        v[i] = if keep_nl { format!("{t}\n") } else { t };
        v.join(" ")
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn matrices_parse_or_fail_by_name(text in prop_oneof![edited(), "\\PC{0,200}"]) {
        if let Err(e) = parse_matrix(&text, "m.txt") {
            prop_assert!(e.to_string().starts_with("m.txt"), "{}", e);
        }
    }
}
