//! Input quoted back in an error message, bounded: a 50 MB host name or token is shown by its
//! start and its length, not copied whole into the message (and the terminal, and the logs).

/// Input up to this many bytes is quoted whole.
pub const ECHO_MAX: usize = 256;
/// Of longer input, this many bytes (rounded down to a character boundary) are quoted.
pub const ECHO_HEAD: usize = 64;

/// `text` as it may appear in an error: whole up to [`ECHO_MAX`] bytes, else its first
/// [`ECHO_HEAD`] bytes, `…` and its length (`hhhh…(50000000 bytes)`). Control characters and
/// a byte-order mark are shown, not passed to the terminal: `\0`, `\n`, `\t`, `\x1b`,
/// `U+FEFF` (a NUL made `1\0` read as `1`, and ESC sequences were obeyed; pass 33, B17).
pub fn echo(text: &str) -> String {
    if text.len() <= ECHO_MAX {
        return visible(text);
    }
    let mut end = ECHO_HEAD;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…({} bytes)", visible(&text[..end]), text.len())
}

/// `text` with its control characters and byte-order marks written out, unbounded: for text
/// that is bounded already but may hold anything (names and addresses clients registered,
/// printed by `status`).
pub fn visible(text: &str) -> String {
    if !text.chars().any(hidden) {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '\0' => out.push_str("\\0"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() && (c as u32) < 0x100 => {
                out.push_str(&format!("\\x{:02x}", c as u32))
            }
            c if hidden(c) => out.push_str(&format!("U+{:04X}", c as u32)),
            c => out.push(c),
        }
    }
    out
}

fn hidden(c: char) -> bool {
    c.is_control() || c == '\u{feff}'
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

    #[test]
    fn control_characters_and_a_bom_are_shown_not_sent() {
        assert_eq!(echo("1\0"), "1\\0");
        assert_eq!(echo("1\x1b[31mX"), "1\\x1b[31mX");
        assert_eq!(echo("\u{feff}4"), "U+FEFF4");
        assert_eq!(echo("a\tb\r\n\x7f\u{9b}"), "a\\tb\\r\\n\\x7f\\x9b");
        assert_eq!(echo("née €"), "née €");
        let long = format!("\x1b[2J{}", "h".repeat(300));
        let e = echo(&long);
        assert!(e.starts_with("\\x1b[2Jhhh") && !e.contains('\x1b'), "{e}");
        assert_eq!(visible("plain é"), "plain é");
        assert_eq!(visible(&"\x1b".repeat(300)).len(), 1200, "not bounded");
    }
}
