//! The TLS flags of the real-system commands: a certificate and key for servers, a CA (and
//! optionally the name certificates carry) for clients.

use std::path::PathBuf;

use anyhow::{bail, Result};
use clap::Args;
use coflowkit_runtime::{TlsClient, TlsServer};

/// Serve over TLS.
#[derive(Args, Debug)]
pub struct TlsServerArgs {
    /// Serve over TLS with this PEM certificate chain (leaf first); needs --tls-key
    #[arg(long, value_name = "FILE")]
    pub tls_cert: Option<PathBuf>,
    /// The PEM private key of --tls-cert
    #[arg(long, value_name = "FILE")]
    pub tls_key: Option<PathBuf>,
}

impl TlsServerArgs {
    pub fn load(&self) -> Result<Option<TlsServer>> {
        match (&self.tls_cert, &self.tls_key) {
            (None, None) => Ok(None),
            (Some(c), Some(k)) => Ok(Some(TlsServer::from_files(c, k)?)),
            (Some(_), None) => bail!("--tls-cert needs --tls-key (the certificate's private key)"),
            (None, Some(_)) => bail!("--tls-key needs --tls-cert (the certificate it belongs to)"),
        }
    }
}

/// Connect over TLS.
#[derive(Args, Debug)]
pub struct TlsClientArgs {
    /// Connect over TLS, trusting the CA certificate(s) in this PEM file
    #[arg(long, value_name = "FILE")]
    pub tls_ca: Option<PathBuf>,
    /// The name servers' certificates must carry [default: the host of each address]
    #[arg(long, value_name = "NAME", requires = "tls_ca")]
    pub tls_domain: Option<String>,
}

impl TlsClientArgs {
    pub fn load(&self) -> Result<Option<TlsClient>> {
        let Some(ca) = &self.tls_ca else {
            return Ok(None);
        };
        let tls = TlsClient::from_file(ca)?;
        Ok(Some(match &self.tls_domain {
            Some(d) => tls.with_domain(d),
            None => tls,
        }))
    }
}
