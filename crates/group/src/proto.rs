//! The protocol of one all-to-all-v, chosen per call.

use coflowkit_shuffle::proto::Protocol;

use crate::exchange::WireProto;
use crate::schedule::high_entropy::HighEntropyOptions;
use crate::GroupError;

#[derive(Debug, Clone, PartialEq)]
pub enum ShuffleProto {
    /// One exchange of every message at once under a transport protocol (grpf, grpt, srpt,
    /// hadoop-C, madd, push-*).
    Wire(WireProto),
    /// M-1 exchanges, rank n to (n + s) mod M in step s, with a group barrier between steps.
    Lockstep,
    /// MilliSort's chunked, randomised shuffle (millisort.md §4.4) as rounds of exchanges.
    HighEntropy(HighEntropyOptions),
}

impl ShuffleProto {
    /// `grpf`, `grpt`, `srpt`, `hadoop-C`, `madd`, `push-blocks`, `push-rr`, `lockstep` or
    /// `high-entropy`, with default options.
    pub fn parse(name: &str) -> Result<ShuffleProto, GroupError> {
        let lower = name.to_ascii_lowercase();
        match lower.as_str() {
            "lockstep" => Ok(ShuffleProto::Lockstep),
            "high-entropy" => Ok(ShuffleProto::HighEntropy(HighEntropyOptions::default())),
            _ => match Protocol::parse(name) {
                Ok(protocol) => Ok(ShuffleProto::Wire(WireProto::new(protocol))),
                Err(e) => Err(GroupError::BadOption(format!("{e}, or high-entropy"))),
            },
        }
    }

    pub fn name(&self) -> String {
        match self {
            ShuffleProto::Wire(w) => w.protocol.name(),
            ShuffleProto::Lockstep => "lockstep".into(),
            ShuffleProto::HighEntropy(_) => "high-entropy".into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_unknown_names_list_the_choices() {
        for n in [
            "grpf",
            "srpt",
            "hadoop-5",
            "madd",
            "lockstep",
            "high-entropy",
        ] {
            assert_eq!(ShuffleProto::parse(n).unwrap().name(), n);
        }
        // Lockstep is the group's (with real barriers), not the simulator's node.
        assert_eq!(
            ShuffleProto::parse("LOCKSTEP").unwrap(),
            ShuffleProto::Lockstep
        );
        let e = ShuffleProto::parse("tcp").unwrap_err().to_string();
        assert!(e.contains("tcp") && e.contains("high-entropy"), "{e}");
    }
}
