//! The UDP transport's endpoint as an `Exchange`: one exchange is one operation of the
//! sans-IO shuffle protocol over kernel UDP.

use coflowkit_transport::{Endpoint, ExchangeProtocol, TransportError};

use crate::{Exchange, GroupError, WireProto};

impl Exchange for Endpoint {
    fn exchange(
        &self,
        op: u64,
        sends: Vec<(u32, Vec<u8>)>,
        recv_from: &[u32],
        proto: &WireProto,
    ) -> Result<Vec<(u32, Vec<u8>)>, GroupError> {
        let p = ExchangeProtocol {
            protocol: proto.protocol.clone(),
            grant: proto.grant.clone(),
            madd_gamma: proto.madd_gamma,
            seed: proto.seed,
        };
        Endpoint::exchange(self, op, &p, sends, recv_from).map_err(|e| match e {
            TransportError::PeerDead { rank } => GroupError::PeerDead(rank),
            e => GroupError::Exchange(Box::new(e)),
        })
    }

    fn world_rank(&self) -> u32 {
        self.rank()
    }

    fn world_size(&self) -> u32 {
        self.size()
    }
}
