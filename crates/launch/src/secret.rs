//! The job's secret: what every rank proves at the rendezvous and keys its datagrams with.
//!
//! From `COFLOWKIT_SECRET` (the secret itself; the `--local` launchers set a fresh random one
//! per job) or `COFLOWKIT_SECRET_FILE` (a file of at most 4 KiB, surrounding whitespace
//! trimmed, like the coordinator's `--token-file`). A world of more than one rank without
//! either is refused, unless `COFLOWKIT_INSECURE=1` says to run unauthenticated.

use ring::hmac;

use crate::LaunchError;

/// Longest secret file read.
const MAX_SECRET_FILE: u64 = 4096;

/// A job's secret (never printed).
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(Vec<u8>);

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Secret(..)")
    }
}

impl Secret {
    pub fn new(bytes: impl Into<Vec<u8>>) -> Result<Secret, LaunchError> {
        let b = bytes.into();
        if b.is_empty() {
            return Err(LaunchError::Bad("the job secret is empty".into()));
        }
        Ok(Secret(b))
    }

    /// 32 random bytes, hex: what a launcher hands its ranks in `COFLOWKIT_SECRET`.
    pub fn generate() -> Result<String, LaunchError> {
        use ring::rand::SecureRandom;
        let mut b = [0u8; 32];
        ring::rand::SystemRandom::new()
            .fill(&mut b)
            .map_err(|_| LaunchError::Bad("no randomness for the job secret".into()))?;
        Ok(hex(&b))
    }

    pub fn bytes(&self) -> &[u8] {
        &self.0
    }

    /// HMAC-SHA256 under this secret of `parts` (each length-prefixed, so no two different
    /// lists of parts give the same input), hex.
    pub fn prove(&self, parts: &[&[u8]]) -> String {
        let k = hmac::Key::new(hmac::HMAC_SHA256, &self.0);
        let mut ctx = hmac::Context::with_key(&k);
        for p in parts {
            ctx.update(&(p.len() as u64).to_le_bytes());
            ctx.update(p);
        }
        hex(ctx.sign().as_ref())
    }

    /// Whether `proof` is [`Secret::prove`] of `parts` (compared in constant time).
    pub fn check(&self, proof: &str, parts: &[&[u8]]) -> bool {
        same(&self.prove(parts), proof)
    }
}

/// `a == b`, in time that depends only on their lengths.
pub(crate) fn same(a: &str, b: &str) -> bool {
    a.len() == b.len()
        && a.bytes()
            .zip(b.bytes())
            .fold(0u8, |acc, (x, y)| acc | (x ^ y))
            == 0
}

pub fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// The job's secret from the environment: `Ok(None)` only with `COFLOWKIT_INSECURE=1`.
pub fn secret_from(get: &impl Fn(&str) -> Option<String>) -> Result<Option<Secret>, LaunchError> {
    if let Some(s) = get("COFLOWKIT_SECRET") {
        return Secret::new(s.trim().as_bytes().to_vec()).map(Some);
    }
    if let Some(path) = get("COFLOWKIT_SECRET_FILE") {
        let shown = coflowkit_model::echo::echo(&path);
        let bad = |why: String| LaunchError::Env {
            var: "COFLOWKIT_SECRET_FILE",
            value: path.clone(),
            why,
        };
        // Opened without blocking: a FIFO with no writer blocked here for ever.
        let buf = coflowkit_model::small_file::read_small(
            std::path::Path::new(&path),
            MAX_SECRET_FILE,
            coflowkit_model::small_file::WAIT,
        )
        .map_err(|e| bad(format!("cannot read: {e}")))?;
        if buf.len() as u64 > MAX_SECRET_FILE {
            return Err(bad(format!("{shown}: longer than {MAX_SECRET_FILE} bytes")));
        }
        let text = buf.trim_ascii().to_vec();
        if text.is_empty() {
            return Err(bad("the file is empty".into()));
        }
        return Ok(Some(Secret(text)));
    }
    match get("COFLOWKIT_INSECURE").as_deref().map(str::trim) {
        Some("1") => Ok(None),
        _ => Err(LaunchError::NoSecret),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proofs_depend_on_every_part_and_the_secret() {
        let s = Secret::new("abc").unwrap();
        let p = s.prove(&[b"x", b"yz"]);
        assert!(s.check(&p, &[b"x", b"yz"]));
        assert!(!s.check(&p, &[b"xy", b"z"]), "parts are delimited");
        assert!(!Secret::new("abd").unwrap().check(&p, &[b"x", b"yz"]));
        assert!(!s.check("", &[b"x", b"yz"]));
        assert_ne!(Secret::generate().unwrap(), Secret::generate().unwrap());
        assert_eq!(Secret::generate().unwrap().len(), 64);
    }

    #[test]
    fn the_secret_comes_from_the_environment_or_insecure_is_explicit() {
        let none = |_: &str| None;
        assert!(matches!(secret_from(&none), Err(LaunchError::NoSecret)));
        let insecure = |k: &str| (k == "COFLOWKIT_INSECURE").then(|| "1".to_string());
        assert_eq!(secret_from(&insecure).unwrap(), None);
        let direct = |k: &str| (k == "COFLOWKIT_SECRET").then(|| " s3 \n".to_string());
        assert_eq!(secret_from(&direct).unwrap().unwrap().bytes(), b"s3");
        let dir = std::env::temp_dir().join(format!("ck-secret-{}", std::process::id()));
        std::fs::write(&dir, "  from file\n").unwrap();
        let p = dir.to_str().unwrap().to_string();
        let file = move |k: &str| (k == "COFLOWKIT_SECRET_FILE").then(|| p.clone());
        assert_eq!(secret_from(&file).unwrap().unwrap().bytes(), b"from file");
        std::fs::write(&dir, vec![b'a'; 5000]).unwrap();
        let e = secret_from(&file).unwrap_err().to_string();
        assert!(e.contains("longer than 4096"), "{e}");
        let _ = std::fs::remove_file(&dir);
    }

    /// Session 33: a FIFO with no writer as `COFLOWKIT_SECRET_FILE` blocked the rank for ever.
    #[test]
    fn a_fifo_without_a_writer_as_the_secret_file_is_an_error_in_time() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("secret");
        let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let p = fifo.to_str().unwrap().to_string();
        let get = move |k: &str| (k == "COFLOWKIT_SECRET_FILE").then(|| p.clone());
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = tx.send(secret_from(&get).map(|_| ()).map_err(|e| e.to_string()));
        });
        let got = rx
            .recv_timeout(std::time::Duration::from_secs(30))
            .expect("secret_from still blocked after 30 s");
        let e = got.unwrap_err();
        assert!(
            e.contains("COFLOWKIT_SECRET_FILE") && e.contains("a FIFO (named pipe)"),
            "{e}"
        );
    }
}
