//! TLS as an option on both planes, with one certificate per server and one CA for clients.
//!
//! - Control plane: tonic's rustls TLS (`ServerTlsConfig` with the certificate and key on the
//!   coordinator, `ClientTlsConfig` with the CA on daemons and clients).
//! - Data plane: the daemon's framed TCP connections are wrapped in tokio-rustls; framing and
//!   serving are generic over the stream, so the same code runs with and without TLS.
//!
//! The shared token stays as it is: TLS hides it and the data from the network, the token still
//! says who may use the cluster. The crypto is rustls with `ring` (no cmake or nasm needed to
//! build). Without TLS configured everything is plaintext, as before.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};
use rustls::{ClientConfig, RootCertStore, ServerConfig};
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio_rustls::{TlsAcceptor, TlsConnector};
use tonic::transport::{Certificate, ClientTlsConfig, Identity, ServerTlsConfig};

use crate::error::{Error, Result};
use crate::frame::{self, Kind};
use crate::proto::DataReply;

/// The TLS handshake of a data connection must finish within this time.
const HANDSHAKE: Duration = Duration::from_secs(10);
/// The first byte of every TLS connection (a handshake record). A coflowkit plaintext frame
/// starts with the high byte of a length ≤ 64 KiB, i.e. 0, so the two never look alike.
const TLS_HANDSHAKE_RECORD: u8 = 0x16;

/// The one crypto provider (ring). Installed as the process default too, since tonic builds its
/// rustls configs from the default; if the embedding program installed one first, that stays.
fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    let _ = rustls::crypto::ring::default_provider().install_default();
    Arc::new(rustls::crypto::ring::default_provider())
}

/// A server's certificate chain and private key (coordinator, daemon data port).
#[derive(Clone)]
pub struct TlsServer {
    cert_pem: Arc<[u8]>,
    key_pem: Arc<[u8]>,
    acceptor: TlsAcceptor,
}

impl std::fmt::Debug for TlsServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("TlsServer(..)")
    }
}

impl TlsServer {
    /// From PEM files: a certificate chain (leaf first) and its private key (PKCS#8, PKCS#1 or
    /// SEC1). Errors name the file at fault.
    pub fn from_files(cert: &Path, key: &Path) -> Result<TlsServer> {
        let cert_pem = read(cert, "TLS certificate")?;
        let key_pem = read(key, "TLS key")?;
        TlsServer::parse(
            cert_pem,
            key_pem,
            &cert.display().to_string(),
            &key.display().to_string(),
        )
    }

    /// From PEM text (as in the files).
    pub fn from_pem(cert: &[u8], key: &[u8]) -> Result<TlsServer> {
        TlsServer::parse(cert.to_vec(), key.to_vec(), "certificate", "key")
    }

    fn parse(cert_pem: Vec<u8>, key_pem: Vec<u8>, cert: &str, key: &str) -> Result<TlsServer> {
        let chain = certs(&cert_pem, cert)?;
        let private = rustls_pemfile::private_key(&mut key_pem.as_slice())
            .map_err(|e| Error::Config(format!("TLS key {key}: {e}")))?
            .ok_or_else(|| Error::Config(format!("TLS key {key}: no private key in PEM")))?;
        let config = server_config(chain, private).map_err(|e| {
            Error::Config(format!(
                "TLS certificate {cert} with key {key}: {e} (do they belong together?)"
            ))
        })?;
        Ok(TlsServer {
            cert_pem: cert_pem.into(),
            key_pem: key_pem.into(),
            acceptor: TlsAcceptor::from(Arc::new(config)),
        })
    }

    /// For the coordinator's gRPC server.
    pub(crate) fn tonic(&self) -> ServerTlsConfig {
        let _ = provider();
        ServerTlsConfig::new().identity(Identity::from_pem(&*self.cert_pem, &*self.key_pem))
    }
}

fn server_config(
    chain: Vec<CertificateDer<'static>>,
    key: PrivateKeyDer<'static>,
) -> Result<ServerConfig, rustls::Error> {
    ServerConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()?
        .with_no_client_auth()
        .with_single_cert(chain, key)
}

/// What a client (or a daemon, towards the coordinator) trusts: a CA certificate, and
/// optionally the one name every server's certificate carries.
#[derive(Clone)]
pub struct TlsClient {
    ca_pem: Arc<[u8]>,
    domain: Option<String>,
    connector: TlsConnector,
}

impl std::fmt::Debug for TlsClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "TlsClient(domain: {:?})", self.domain)
    }
}

impl TlsClient {
    /// Trust the CA certificate(s) in a PEM file.
    pub fn from_file(ca: &Path) -> Result<TlsClient> {
        let pem = read(ca, "TLS CA certificate")?;
        TlsClient::parse(pem, &ca.display().to_string())
    }

    /// Trust the CA certificate(s) in PEM text.
    pub fn from_pem(ca: &[u8]) -> Result<TlsClient> {
        TlsClient::parse(ca.to_vec(), "CA certificate")
    }

    fn parse(pem: Vec<u8>, name: &str) -> Result<TlsClient> {
        let mut roots = RootCertStore::empty();
        for c in certs(&pem, name)? {
            roots
                .add(c)
                .map_err(|e| Error::Config(format!("TLS CA certificate {name}: {e}")))?;
        }
        let config = ClientConfig::builder_with_provider(provider())
            .with_safe_default_protocol_versions()
            .map_err(|e| Error::Config(format!("TLS: {e}")))?
            .with_root_certificates(roots)
            .with_no_client_auth();
        Ok(TlsClient {
            ca_pem: pem.into(),
            domain: None,
            connector: TlsConnector::from(Arc::new(config)),
        })
    }

    /// Check every server's certificate for this name instead of the host of its address
    /// (for a cluster sharing one certificate, or addresses that are IPs the certificate lacks).
    pub fn with_domain(mut self, name: &str) -> TlsClient {
        self.domain = Some(name.to_string());
        self
    }

    /// The name a server at `addr` must prove.
    fn name_for(&self, addr: &str) -> String {
        self.domain.clone().unwrap_or_else(|| host_of(addr))
    }

    /// For a gRPC channel to the coordinator at `addr`.
    pub(crate) fn tonic(&self, addr: &str) -> ClientTlsConfig {
        let _ = provider();
        ClientTlsConfig::new()
            .ca_certificate(Certificate::from_pem(&*self.ca_pem))
            .domain_name(self.name_for(addr))
    }
}

/// The host part of `host:port`, `[v6]:port` or `scheme://host:port/...`.
fn host_of(addr: &str) -> String {
    let a = addr.split_once("://").map_or(addr, |(_, rest)| rest);
    let a = a.split('/').next().unwrap_or(a);
    if let Some(rest) = a.strip_prefix('[') {
        return rest.split(']').next().unwrap_or(rest).to_string();
    }
    a.rsplit_once(':').map_or(a, |(h, _)| h).to_string()
}

/// Largest certificate, key or CA file read (bytes): a CA bundle is a few hundred KB, and
/// `/dev/urandom` must not be read until memory runs out.
pub const MAX_PEM_FILE_BYTES: u64 = 16 << 20;

fn read(path: &Path, what: &str) -> Result<Vec<u8>> {
    let ctx = || format!("reading {what} file {}", path.display());
    // Bounded in time as well as size: a FIFO with no writer blocked the start for ever.
    let bytes = crate::small_file::read_small(path, MAX_PEM_FILE_BYTES, crate::small_file::WAIT)
        .map_err(|e| Error::io(ctx(), e))?;
    if bytes.len() as u64 > MAX_PEM_FILE_BYTES {
        return Err(Error::io(
            ctx(),
            std::io::Error::other(format!(
                "larger than the limit of {MAX_PEM_FILE_BYTES} bytes"
            )),
        ));
    }
    Ok(bytes)
}

fn certs(pem: &[u8], name: &str) -> Result<Vec<CertificateDer<'static>>> {
    let chain = rustls_pemfile::certs(&mut &*pem)
        .collect::<std::io::Result<Vec<_>>>()
        .map_err(|e| Error::Config(format!("TLS certificate {name}: {e}")))?;
    if chain.is_empty() {
        return Err(Error::Config(format!(
            "TLS certificate {name}: no PEM certificate in it"
        )));
    }
    Ok(chain)
}

/// Any byte stream a data connection runs on (plain TCP or TLS over it).
pub trait Io: AsyncRead + AsyncWrite + Unpin + Send {}
impl<T: AsyncRead + AsyncWrite + Unpin + Send> Io for T {}

pub type DataStream = Box<dyn Io>;

/// Open a data connection to the daemon at `host` (TLS when `tls` is set).
pub async fn connect_data(host: &str, tls: Option<&TlsClient>) -> Result<DataStream> {
    let sock = TcpStream::connect(host)
        .await
        .map_err(|e| Error::io(format!("connecting to daemon {host}"), e))?;
    let _ = sock.set_nodelay(true);
    let Some(tls) = tls else {
        return Ok(Box::new(sock));
    };
    let name = tls.name_for(host);
    let server = ServerName::try_from(name.clone())
        .map_err(|e| Error::Config(format!("TLS name `{name}` of daemon {host}: {e}")))?;
    let hs = tls.connector.connect(server, sock);
    match tokio::time::timeout(HANDSHAKE, hs).await {
        Ok(Ok(s)) => Ok(Box::new(s)),
        Ok(Err(e)) => Err(Error::io(
            format!("TLS handshake with daemon {host} (does it serve TLS, with a certificate for `{name}`?)"),
            e,
        )),
        Err(_) => Err(Error::io(
            format!("TLS handshake with daemon {host}"),
            std::io::Error::new(std::io::ErrorKind::TimedOut, "timed out"),
        )),
    }
}

/// The server side of a data connection: with TLS, the handshake (bounded in time); a
/// plaintext coflowkit client gets a readable refusal instead of a TLS alert it cannot parse.
pub(crate) async fn accept_data(
    sock: TcpStream,
    tls: Option<&TlsServer>,
) -> Result<DataStream, String> {
    let _ = sock.set_nodelay(true);
    let Some(tls) = tls else {
        return Ok(Box::new(sock));
    };
    let hs = async {
        let mut first = [0u8; 1];
        let n = sock
            .peek(&mut first)
            .await
            .map_err(|e| format!("before the TLS handshake: {e}"))?;
        if n == 1 && first[0] != TLS_HANDSHAKE_RECORD {
            refuse_plaintext(sock).await;
            return Err("plaintext client refused (this daemon requires TLS)".to_string());
        }
        tls.acceptor
            .accept(sock)
            .await
            .map_err(|e| format!("TLS handshake: {e}"))
    };
    match tokio::time::timeout(HANDSHAKE, hs).await {
        Ok(Ok(s)) => Ok(Box::new(s)),
        Ok(Err(e)) => Err(e),
        Err(_) => Err("TLS handshake timed out".into()),
    }
}

/// Read the plaintext hello and request (so closing does not reset the connection under the
/// reply), then say why the connection is refused.
async fn refuse_plaintext(mut sock: TcpStream) {
    let mut buf = Vec::new();
    for _ in 0..2 {
        if frame::read_frame(&mut sock, &mut buf).await.is_err() {
            return;
        }
    }
    let reply = DataReply {
        error: "this daemon requires TLS: configure the client with the cluster's CA \
                certificate (--tls-ca)"
            .into(),
        ..Default::default()
    };
    let _ = frame::write_msg(&mut sock, Kind::Reply, &reply).await;
    let _ = sock.shutdown().await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_of_addresses() {
        assert_eq!(host_of("example.org:7400"), "example.org");
        assert_eq!(host_of("127.0.0.1:7401"), "127.0.0.1");
        assert_eq!(host_of("[::1]:7400"), "::1");
        assert_eq!(host_of("https://coord.lan:7400/"), "coord.lan");
        assert_eq!(host_of("localhost"), "localhost");
    }

    #[test]
    fn bad_pem_is_refused_with_its_name() {
        let e = TlsClient::from_pem(b"not a certificate").unwrap_err();
        assert!(e.to_string().contains("no PEM certificate"), "{e}");
        let e = TlsServer::from_pem(b"", b"").unwrap_err();
        assert!(e.to_string().contains("certificate"), "{e}");
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("nope.pem");
        let e = TlsClient::from_file(&missing).unwrap_err();
        assert!(e.to_string().contains("nope.pem"), "{e}");
    }

    /// An endless file is refused at the bound, naming file and limit (session 29 read
    /// `/dev/urandom` past a GB).
    #[test]
    fn endless_pem_files_are_refused_at_the_bound() {
        let e = TlsClient::from_file(Path::new("/dev/urandom")).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!(
                "reading TLS CA certificate file /dev/urandom: larger than the limit of \
                 {MAX_PEM_FILE_BYTES} bytes"
            )
        );
        let e = TlsServer::from_files(Path::new("/dev/zero"), Path::new("/dev/zero")).unwrap_err();
        assert!(e.to_string().contains("/dev/zero: larger than"), "{e}");
    }
}
