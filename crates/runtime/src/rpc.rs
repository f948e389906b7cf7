//! Connecting to the coordinator with the token attached and bounded message sizes.

use std::time::Duration;

use tonic::service::interceptor::InterceptedService;
use tonic::transport::{Channel, Endpoint};

use crate::auth::{AddToken, Token};
use crate::error::{Error, Result};
use crate::proto::coordinator_client::CoordinatorClient;
use crate::tls::TlsClient;

/// Largest control message either side accepts (bytes). A daemon's re-registration lists its
/// stored objects and flows, so this bounds how much soft state one daemon can report.
pub const MAX_RPC_BYTES: usize = 4 * 1024 * 1024;

/// Most flows one `ReportProgress` may carry (INVALID_ARGUMENT past it); a daemon reports more
/// in several requests. Keeps one request's hold on the coordinator's state short: 4 MiB of
/// entries is about 200,000.
pub const MAX_PROGRESS_PER_REQUEST: usize = 16_384;

pub type Client = CoordinatorClient<InterceptedService<Channel, AddToken>>;

/// Connect (eagerly, with a short timeout) to a plaintext coordinator at `host:port`.
pub async fn connect(addr: &str, token: &Token) -> Result<Client> {
    connect_with(addr, token, None).await
}

/// Connect to a coordinator at `host:port`, over TLS when `tls` is given.
pub async fn connect_with(addr: &str, token: &Token, tls: Option<&TlsClient>) -> Result<Client> {
    let uri = match (addr.contains("://"), tls) {
        (true, _) => addr.to_string(),
        (false, None) => format!("http://{addr}"),
        (false, Some(_)) => format!("https://{addr}"),
    };
    let mut ep = Endpoint::from_shared(uri)
        .map_err(|e| Error::Config(format!("coordinator address `{addr}`: {e}")))?
        .connect_timeout(Duration::from_secs(2))
        .tcp_nodelay(true)
        // A daemon notices a vanished coordinator (host gone, no FIN) within seconds and
        // falls back to fair sharing.
        .http2_keep_alive_interval(Duration::from_secs(2))
        .keep_alive_timeout(Duration::from_secs(4))
        .keep_alive_while_idle(true);
    if let Some(t) = tls {
        ep = ep
            .tls_config(t.tonic(addr))
            .map_err(|e| Error::Config(format!("TLS towards coordinator `{addr}`: {e}")))?;
    }
    let ch = ep.connect().await.map_err(|source| Error::Connect {
        addr: addr.to_string(),
        source,
    })?;
    Ok(
        CoordinatorClient::with_interceptor(ch, AddToken(token.clone()))
            .max_decoding_message_size(MAX_RPC_BYTES)
            .max_encoding_message_size(MAX_RPC_BYTES),
    )
}
