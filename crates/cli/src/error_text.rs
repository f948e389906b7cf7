//! The text of a command's error: its causes joined by `: `, each said once. Many errors
//! already print their cause (`reading token file t: Is a directory`) and also hand it on as
//! their source, so `{:#}` would say it twice (or, for tonic's transport errors, three times).

/// `e` and those of its causes whose text the message does not hold yet, joined by `: `.
pub fn chain(e: &anyhow::Error) -> String {
    let mut text = String::new();
    for cause in e.chain() {
        let t = cause.to_string();
        if text.contains(&t) {
            continue;
        }
        if !text.is_empty() {
            text.push_str(": ");
        }
        text.push_str(&t);
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use anyhow::Context;

    #[test]
    fn causes_the_message_already_holds_are_not_repeated() {
        /// Says its source and hands it on, as `thiserror` errors with `{source}` do.
        #[derive(Debug)]
        struct Read(std::io::Error);
        impl std::fmt::Display for Read {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                write!(f, "reading token file t: {}", self.0)
            }
        }
        impl std::error::Error for Read {
            fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
                Some(&self.0)
            }
        }
        let e = anyhow::Error::new(Read(std::io::Error::other("Is a directory")));
        assert_eq!(
            format!("{e:#}"),
            "reading token file t: Is a directory: Is a directory"
        );
        assert_eq!(chain(&e), "reading token file t: Is a directory");
        // Causes it does not hold are still said, in order.
        let e = Err::<(), _>(std::io::Error::other("disk full"))
            .context("writing out.json")
            .unwrap_err();
        assert_eq!(chain(&e), "writing out.json: disk full");
    }
}
