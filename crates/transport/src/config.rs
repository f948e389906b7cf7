//! What an endpoint and an exchange are configured with.

use std::net::SocketAddr;
use std::time::Duration;

use coflowkit_shuffle::proto::{GrantOptions, Protocol, ProtocolError};

use crate::auth::WireKey;
use crate::batch::MAX_DATAGRAM;
use crate::loss::LossInjection;
use crate::wire::HEADER_LEN;

/// The largest payload a datagram carries: a UDP datagram's 65,507 bytes less the header.
pub const MAX_PAYLOAD: usize = MAX_DATAGRAM - HEADER_LEN;

/// The payload a 1500-byte MTU holds: 1500 less IPv4's 20 bytes, UDP's 8 and the header.
pub const DEFAULT_PAYLOAD: usize = 1500 - 28 - HEADER_LEN;

/// One rank's endpoint.
#[derive(Debug, Clone)]
pub struct EndpointConfig {
    pub rank: u32,
    /// Every rank's UDP address, index = rank.
    pub peers: Vec<SocketAddr>,
    /// Names this run; datagrams of another session are counted as foreign and dropped.
    pub session: u32,
    /// Payload bytes per DATA packet, the same at every rank (1388: a 1500-byte MTU holds it
    /// with the 84-byte header and IP/UDP's 28; 8900 with jumbo frames).
    pub payload: usize,
    /// Pace everything this endpoint sends to this many bits per second on the wire (IP, UDP
    /// and Ethernet overhead counted); `None`: as fast as the socket takes it.
    pub rate_bps: Option<f64>,
    /// The pacer's bucket: how many bytes may leave back to back (at least one datagram).
    /// Deep enough that a late wake-up of the I/O thread does not cost rate, shallow enough to
    /// fit a switch's (or `tbf`'s) buffer: 16 datagrams.
    pub burst_bytes: usize,
    pub loss: LossInjection,
    /// Loss-recovery period: a message without progress for this long is asked for again.
    pub resend_timeout: Duration,
    /// Periods without a word from a probed peer before it is declared dead.
    pub dead_after: u32,
    /// Give up an exchange after this long (`TransportError::Timeout`); `None`: never (a dead
    /// peer still ends it).
    pub op_timeout: Option<Duration>,
    /// Bytes of datagrams kept for operations not started here yet.
    pub stage_bytes: usize,
    /// How long a staged datagram waits for its operation.
    pub stage_ttl: Duration,
    /// Completed operations remembered (to ACK their late packets again).
    pub remember_ops: usize,
    /// Largest message accepted from a peer (a header claiming more is malformed).
    pub max_message_bytes: u64,
    /// Datagrams per `sendmmsg` / `recvmmsg`.
    pub batch: usize,
    /// Socket send and receive buffer bytes (forced above the system limit when root).
    pub socket_buffer: usize,
    /// When `exchange` returns to its caller (see [`ReturnWhen`]).
    pub return_when: ReturnWhen,
    /// A caller waiting for its exchange polls the socket this long before it sleeps (busy
    /// polling, as MPI's progress loops do): saves a wake-up per message when this rank has a
    /// core to itself, wastes one when ranks outnumber cores. Zero (the default): never spin.
    pub spin: Duration,
    /// The session's key ([`WireKey::derive`] from the job's secret): every datagram sent is
    /// sealed with it, and one received without its right tag is dropped and counted
    /// (`EndpointStats::unauthenticated`) before it can change anything. `None` (what
    /// [`EndpointConfig::new`] gives; the CLI's ranks always set one unless the user asks for
    /// `COFLOWKIT_INSECURE=1`): no tags, anyone who sees the session id can forge datagrams.
    pub auth: Option<WireKey>,
}

/// When an exchange answers its caller.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ReturnWhen {
    /// Every expected message arrived whole and every outgoing message left at least once
    /// (an eager send, as MPI's for small messages): the operation then stays in the I/O
    /// thread, retransmitting until its peers ACK. Saves a round trip per step of a
    /// collective; a peer that dies later is noticed by the peers that needed the data.
    #[default]
    Sent,
    /// Also every outgoing message ACKed (the protocol's own end).
    Acked,
}

impl EndpointConfig {
    pub fn new(rank: u32, peers: Vec<SocketAddr>, session: u32) -> EndpointConfig {
        EndpointConfig {
            rank,
            peers,
            session,
            payload: DEFAULT_PAYLOAD,
            rate_bps: None,
            burst_bytes: 16 * (DEFAULT_PAYLOAD + HEADER_LEN),
            loss: LossInjection::default(),
            resend_timeout: Duration::from_millis(5),
            dead_after: 100,
            op_timeout: None,
            stage_bytes: 64 << 20,
            stage_ttl: Duration::from_secs(10),
            remember_ops: 4096,
            max_message_bytes: u32::MAX as u64,
            batch: 32,
            socket_buffer: 8 << 20,
            return_when: ReturnWhen::default(),
            spin: Duration::ZERO,
            auth: None,
        }
    }

    /// The first thing wrong with the configuration, if any.
    pub fn validate(&self) -> Result<(), String> {
        let n = self.peers.len();
        if self.rank as usize >= n {
            return Err(format!("rank {} of {n} peers", self.rank));
        }
        if self.payload == 0 || self.payload > MAX_PAYLOAD {
            return Err(format!(
                "payload {} bytes: must be 1 to {MAX_PAYLOAD}",
                self.payload
            ));
        }
        if let Some(r) = self.rate_bps {
            if !(r.is_finite() && r > 0.0) {
                return Err(format!("rate {r} bit/s: must be positive and finite"));
            }
        }
        if self.resend_timeout.is_zero() || self.dead_after == 0 {
            return Err("resend_timeout and dead_after must be positive".into());
        }
        if self.batch == 0 {
            return Err("batch must be positive".into());
        }
        self.loss.validate()
    }

    /// Packets of a message of `bytes` (an empty message is one empty DATA packet).
    pub fn packets(&self, bytes: u64) -> u64 {
        bytes.div_ceil(self.payload as u64).max(1)
    }

    /// Nanoseconds a full DATA packet takes on the wire at the configured rate (1 us without
    /// one: MADD's packet time needs some rate).
    pub fn packet_ns(&self) -> u64 {
        match self.rate_bps {
            Some(r) => {
                let bits = ((self.payload + HEADER_LEN + crate::pacer::FRAME_OVERHEAD) * 8) as f64;
                ((bits / r * 1e9).ceil() as u64).max(1)
            }
            None => 1000,
        }
    }
}

/// The protocol of one exchange.
#[derive(Debug, Clone, PartialEq)]
pub struct ExchangeProtocol {
    /// grpf / grpt / srpt, hadoop-C, madd, push-*. Lockstep is a sequence of exchanges (one
    /// per step) that the group layer runs; an exchange refuses it.
    pub protocol: Protocol,
    pub grant: GrantOptions,
    /// MADD's Gamma, the busiest link's packets over the whole operation, as num / den: only
    /// the caller knows the whole matrix. `None`: this rank's own outgoing packets (its uplink
    /// as the bottleneck).
    pub madd_gamma: Option<(u64, u64)>,
    /// Seed of the protocol's random choices (randomized priorities, Hadoop's picks).
    pub seed: u64,
}

impl ExchangeProtocol {
    pub fn new(protocol: Protocol) -> ExchangeProtocol {
        ExchangeProtocol {
            protocol,
            grant: GrantOptions::real_link(),
            madd_gamma: None,
            seed: 0,
        }
    }

    /// By name: `grpf`, `hadoop-5`, `madd`, ... (see `Protocol::parse`).
    pub fn parse(name: &str) -> Result<ExchangeProtocol, ProtocolError> {
        Ok(ExchangeProtocol::new(Protocol::parse(name)?))
    }
}
