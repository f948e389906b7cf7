use thiserror::Error;

#[derive(Debug, Error)]
pub enum GroupError {
    #[error("k-nomial radix must be at least 2, got {0}")]
    BadRadix(u32),
    #[error("a group needs at least one member")]
    EmptyGroup,
    #[error("root {root} is not a rank of this group of {size}")]
    BadRoot { root: usize, size: usize },
    #[error("rank {rank} is not a member of a group of {size}")]
    NoSuchRank { rank: usize, size: usize },
    #[error("rank {0} is listed twice in the member list")]
    DuplicateMember(usize),
    #[error("this process (world rank {0}) is not a member of the requested sub-group")]
    NotMember(u32),
    #[error("world rank {rank} is out of range for a world of {size}")]
    BadWorld { rank: u32, size: u32 },
    #[error("all-to-all-v got {got} buffers for a group of {size} (one per rank, own included)")]
    WrongCount { got: usize, size: usize },
    #[error("{0}")]
    BadOption(String),
    #[error("malformed {what} from rank {from}")]
    Malformed { from: usize, what: &'static str },
    #[error("rank {0} did not answer (declared dead by the transport)")]
    PeerDead(u32),
    #[error("exchange failed: {0}")]
    Exchange(#[source] Box<dyn std::error::Error + Send + Sync>),
}
