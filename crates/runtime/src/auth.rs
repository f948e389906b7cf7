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
    pub fn from_file(path: &Path) -> Result<Token> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| Error::io(format!("reading token file {}", path.display()), e))?;
        Token::new(&text).map_err(|e| Error::Config(format!("{}: {e}", path.display())))
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
}
