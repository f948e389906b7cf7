use coflowkit_group::GroupError;
use thiserror::Error;

#[derive(Debug, Error)]
pub enum MilliSortError {
    #[error("{0}")]
    BadOption(String),
    #[error("no pivots at all: every rank is empty")]
    NoPivots,
    #[error("splitter {0} was chosen by no pivot sorter (or twice)")]
    SplitterGap(usize),
    #[error("malformed {what} from rank {from}")]
    Malformed { from: usize, what: &'static str },
    #[error(transparent)]
    Group(#[from] GroupError),
}
