use thiserror::Error;

#[derive(Debug, Error)]
pub enum TransportError {
    #[error("rank {rank} is dead: no answer to repeated probes")]
    PeerDead { rank: u32 },
    #[error("operation {op} did not complete within {after_ms} ms")]
    Timeout { op: u64, after_ms: u64 },
    #[error("the message of operation {op} from rank {from} failed its CRC-32 check")]
    Checksum { op: u64, from: u32 },
    #[error("socket: {0}")]
    Io(#[from] std::io::Error),
    #[error("{0}")]
    Config(String),
    #[error("the endpoint is closed{0}")]
    Closed(String),
}
