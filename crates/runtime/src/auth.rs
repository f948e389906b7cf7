//! The shared token every RPC and every data connection must present. Without TLS (`tls`, off
//! by default) it travels in clear: on an untrusted network turn TLS on.

use std::path::Path;
use std::sync::Arc;

use tonic::metadata::MetadataValue;
use tonic::service::Interceptor;
use tonic::{Request, Status};

use crate::error::{Error, Result};

/// The control and data protocol version spoken here (`coflowkit.v1`).
pub const PROTOCOL_VERSION: u32 = 1;

/// A shared secret. Compared in constant time.
#[derive(Clone)]
pub struct Token(Arc<str>);

impl std::fmt::Debug for Token {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Token(..)")
    }
}

impl Token {
    /// A token from text: printable ASCII without spaces, 8 to 512 bytes.
    pub fn new(text: &str) -> Result<Token> {
        let t = text.trim();
        if t.len() < 8 || t.len() > 512 || !t.bytes().all(|b| b.is_ascii_graphic()) {
            return Err(Error::Config(
                "the token must be 8 to 512 printable ASCII characters without spaces".into(),
            ));
        }
        Ok(Token(t.into()))
    }

    /// The token in a file (surrounding whitespace ignored).
    /// Reads a few KB at most: a token file is small, and a huge or endless one (a wrong path
    /// such as /dev/zero) is refused without reading it all.
    pub fn from_file(path: &Path) -> Result<Token> {
        const MOST: u64 = 4096;
        let io = |e| Error::io(format!("reading token file {}", path.display()), e);
        // Bounded in time as well: a FIFO with no writer blocked the start for ever.
        let bytes =
            crate::small_file::read_small(path, MOST, crate::small_file::WAIT).map_err(io)?;
        let bad = |why: &str| Error::Config(format!("token file {}: {why}", path.display()));
        if bytes.len() as u64 > MOST {
            return Err(bad(&format!("longer than {MOST} bytes")));
        }
        let text = String::from_utf8(bytes).map_err(|_| bad("not UTF-8 text"))?;
        Token::new(&text).map_err(|e| match e {
            Error::Config(why) => bad(&why),
            other => other,
        })
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Constant-time comparison (no early exit on the first differing byte).
    pub fn matches(&self, other: &str) -> bool {
        let (a, b) = (self.0.as_bytes(), other.as_bytes());
        a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
    }
}

/// Server side: reject any request without `authorization: Bearer <token>`.
#[derive(Clone)]
pub struct CheckToken(pub Token);

impl Interceptor for CheckToken {
    fn call(&mut self, req: Request<()>) -> Result<Request<()>, Status> {
        let ok = req
            .metadata()
            .get("authorization")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "))
            .is_some_and(|t| self.0.matches(t));
        if ok {
            Ok(req)
        } else {
            Err(Status::unauthenticated("missing or wrong token"))
        }
    }
}

/// Client side: attach the token to every request.
#[derive(Clone)]
pub struct AddToken(pub Token);

impl Interceptor for AddToken {
    fn call(&mut self, mut req: Request<()>) -> Result<Request<()>, Status> {
        let v: MetadataValue<_> = format!("Bearer {}", self.0.as_str())
            .parse()
            .map_err(|_| Status::internal("token is not valid metadata"))?;
        req.metadata_mut().insert("authorization", v);
        Ok(req)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_rules() {
        assert!(Token::new("short").is_err());
        assert!(Token::new("has space inside").is_err());
        let t = Token::new(" s3cret-token\n").unwrap();
        assert!(t.matches("s3cret-token"));
        assert!(!t.matches("s3cret-tokem"));
        assert!(!t.matches("s3cret-token2"));
    }

    #[test]
    fn token_files_are_read_with_a_bound_and_named_in_errors() {
        let dir = tempfile::tempdir().unwrap();
        let good = dir.path().join("good");
        std::fs::write(&good, "s3cret-token\n").unwrap();
        assert!(Token::from_file(&good).unwrap().matches("s3cret-token"));
        let huge = dir.path().join("huge");
        std::fs::write(&huge, "x".repeat(1 << 20)).unwrap();
        for path in [huge.as_path(), Path::new("/dev/zero")] {
            let e = Token::from_file(path).unwrap_err().to_string();
            assert!(e.contains(&path.display().to_string()), "{e}");
            assert!(e.contains("longer than 4096 bytes"), "{e}");
            assert!(e.len() < 200, "the token is not echoed: {e}");
        }
        let short = dir.path().join("short");
        std::fs::write(&short, "abc").unwrap();
        let e = Token::from_file(&short).unwrap_err().to_string();
        assert_eq!(e.matches("invalid configuration").count(), 1, "{e}");
    }
}
