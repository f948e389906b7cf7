//! Input quoted back in an error message, bounded: a 50 MB host name or token is shown by its
//! start and its length, not copied whole into the message (and the terminal, and the logs).

/// Input up to this many bytes is quoted whole.
pub const ECHO_MAX: usize = 256;
/// Of longer input, this many bytes (rounded down to a character boundary) are quoted.
pub const ECHO_HEAD: usize = 64;

/// `text` as it may appear in an error: whole up to [`ECHO_MAX`] bytes, else its first
/// [`ECHO_HEAD`] bytes, `…` and its length (`hhhh…(50000000 bytes)`).
pub fn echo(text: &str) -> String {
    if text.len() <= ECHO_MAX {
        return text.to_string();
    }
    let mut end = ECHO_HEAD;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…({} bytes)", &text[..end], text.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_text_is_whole_and_long_text_is_cut_at_a_character() {
        assert_eq!(echo("node-1"), "node-1");
        let at_limit = "x".repeat(ECHO_MAX);
        assert_eq!(echo(&at_limit), at_limit);
        let long = "h".repeat(50_000_000);
        assert_eq!(echo(&long), format!("{}…(50000000 bytes)", "h".repeat(64)));
        // 63 ASCII bytes then a 3-byte character across the cut: the cut moves back to 63.
        let multi = format!("{}€{}", "a".repeat(63), "b".repeat(300));
        assert_eq!(echo(&multi), format!("{}…(366 bytes)", "a".repeat(63)));
    }
}
