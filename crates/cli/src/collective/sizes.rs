//! Byte counts on the command line: `100`, `1k` (1024), `64k`, `1m` (2^20), `1g`.

pub fn parse_bytes(s: &str) -> Result<usize, String> {
    let t = s.trim().to_ascii_lowercase();
    let (num, mult) = match t.as_bytes().last() {
        Some(b'k') => (&t[..t.len() - 1], 1usize << 10),
        Some(b'm') => (&t[..t.len() - 1], 1 << 20),
        Some(b'g') => (&t[..t.len() - 1], 1 << 30),
        _ => (&t[..], 1),
    };
    num.parse::<usize>()
        .ok()
        .and_then(|n| n.checked_mul(mult))
        .ok_or_else(|| format!("`{s}` is not a byte count (such as 100, 1k, 64k, 1m)"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suffixes_are_powers_of_1024_and_junk_is_named() {
        assert_eq!(parse_bytes("100"), Ok(100));
        assert_eq!(parse_bytes("1k"), Ok(1024));
        assert_eq!(parse_bytes("64K"), Ok(65536));
        assert_eq!(parse_bytes("1m"), Ok(1 << 20));
        assert_eq!(parse_bytes("0"), Ok(0));
        assert!(parse_bytes("k").unwrap_err().contains("`k`"));
        assert!(parse_bytes("1.5k").is_err());
        assert!(parse_bytes("-3").is_err());
    }
}
