//! A fuzz of the trace and fabric-file readers in the normal suite: random text and random
//! edits of valid files give a trace or an error, never a panic, and an error always names the
//! file.

use coflowkit_model::fabric_file::parse_port_rates;
use coflowkit_model::trace::parse_str;
use proptest::prelude::*;

const VALID: &str = "4 3\n1 0 2 0 1 1 2:2.0\n2 10 1 1 2 2:1.0 3:1.0\n3 20 1 3 1 0:4.0\n";

/// Tokens that stress the number parsers.
fn nasty() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("1e308".to_string()),
        Just("-1".to_string()),
        Just("NaN".to_string()),
        Just("inf".to_string()),
        Just("18446744073709551616".to_string()),
        Just("4294967296".to_string()),
        Just("30000".to_string()),
        Just("0".to_string()),
        Just("9:1e300".to_string()),
        Just("1:".to_string()),
        "[0-9]{1,25}",
        "[0-9]{1,5}:[0-9.e+-]{1,12}",
        "\\PC{0,6}",
    ]
}

/// `VALID` with one token replaced.
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
    fn traces_parse_or_fail_by_name(text in prop_oneof![edited(), "\\PC{0,200}"]) {
        match parse_str(&text, "fuzz.txt") {
            Err(e) => prop_assert!(e.to_string().starts_with("fuzz.txt"), "{}", e),
            // What reads is something every ratio is defined on: no coflow of no bytes, no
            // size past 2^53 bytes, no arrival past 2^53 ms.
            Ok(t) => {
                for c in &t.coflows {
                    prop_assert!(c.bytes() > 0.0, "coflow {} has no bytes", c.id);
                    prop_assert!(c.arrival_s * 1000.0 <= 2f64.powi(53));
                    for f in &c.flows {
                        prop_assert!(f.bytes.is_sign_positive() && f.bytes <= 2f64.powi(53));
                    }
                }
            }
        }
    }

    #[test]
    fn port_rate_files_parse_or_fail_by_name(
        lines in prop::collection::vec((nasty(), nasty()), 0..6),
    ) {
        let text: String = lines.iter().map(|(a, b)| format!("{a} {b}\n")).collect();
        if let Err(e) = parse_port_rates(&text, "rates.txt", 4, 1e9) {
            prop_assert!(e.to_string().contains("rates.txt"), "{}", e);
        }
    }
}
