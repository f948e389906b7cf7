//! The peer protocol between nodes (one TCP connection per pair, opened by the receiver): a
//! 9-byte header (tag, a 32-bit argument, payload length) and a payload (have-maps, block data).
//! Have-maps are one byte per block, 1 when held.

use std::sync::Arc;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

use crate::pace::{Pacer, PACE_PIECE};

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Msg {
    /// First message of a connection: who is asking.
    Hello {
        host: u32,
    },
    /// Send me block `block`; if `wait`, hold the request until you have it (pipelines).
    Get {
        block: u32,
        wait: bool,
    },
    /// To the source: send me a block of your choosing that I lack (round robin first).
    GetAny {
        have: Vec<u8>,
    },
    /// What the server holds, right after `Hello`; then `Have` for each new block.
    HaveMap {
        have: Vec<u8>,
    },
    Have {
        block: u32,
    },
    Block {
        block: u32,
        data: Arc<Vec<u8>>,
    },
    /// The server does not hold `block` (or, to a `GetAny`, nothing the asker lacks).
    NotHave {
        block: u32,
    },
    Choke,
    Unchoke,
    Interested,
    NotInterested,
}

const HELLO: u8 = 1;
const GET: u8 = 2;
const GET_WAIT: u8 = 3;
const GET_ANY: u8 = 4;
const HAVE_MAP: u8 = 5;
const HAVE: u8 = 6;
const BLOCK: u8 = 7;
const NOT_HAVE: u8 = 8;
const CHOKE: u8 = 9;
const UNCHOKE: u8 = 10;
const INTERESTED: u8 = 11;
const NOT_INTERESTED: u8 = 12;

/// Largest payload accepted (a 256 MiB block); anything larger is a broken peer.
pub const MAX_PAYLOAD: u32 = 1 << 28;

/// Read one message; `Ok(None)` at a clean end of stream before a header.
pub async fn read_msg(r: &mut (impl AsyncRead + Unpin)) -> std::io::Result<Option<Msg>> {
    let mut h = [0u8; 9];
    match r.read_exact(&mut h[..1]).await {
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(None),
        Err(e) => return Err(e),
    }
    r.read_exact(&mut h[1..]).await?;
    let a = u32::from_be_bytes(h[1..5].try_into().expect("4 bytes"));
    let len = u32::from_be_bytes(h[5..9].try_into().expect("4 bytes"));
    if len > MAX_PAYLOAD {
        return Err(bad(format!("payload of {len} bytes")));
    }
    let mut payload = vec![0u8; len as usize];
    r.read_exact(&mut payload).await?;
    Ok(Some(match h[0] {
        HELLO => Msg::Hello { host: a },
        GET => Msg::Get {
            block: a,
            wait: false,
        },
        GET_WAIT => Msg::Get {
            block: a,
            wait: true,
        },
        GET_ANY => Msg::GetAny { have: payload },
        HAVE_MAP => Msg::HaveMap { have: payload },
        HAVE => Msg::Have { block: a },
        BLOCK => Msg::Block {
            block: a,
            data: Arc::new(payload),
        },
        NOT_HAVE => Msg::NotHave { block: a },
        CHOKE => Msg::Choke,
        UNCHOKE => Msg::Unchoke,
        INTERESTED => Msg::Interested,
        NOT_INTERESTED => Msg::NotInterested,
        t => return Err(bad(format!("unknown message tag {t}"))),
    }))
}

fn bad(why: String) -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::InvalidData, why)
}

/// Write one message; block data goes out in pieces, each after the pacer allows it.
pub async fn write_msg(
    w: &mut (impl AsyncWrite + Unpin),
    m: &Msg,
    pacer: Option<&Pacer>,
) -> std::io::Result<()> {
    let (tag, a, payload): (u8, u32, &[u8]) = match m {
        Msg::Hello { host } => (HELLO, *host, &[]),
        Msg::Get { block, wait } => (if *wait { GET_WAIT } else { GET }, *block, &[]),
        Msg::GetAny { have } => (GET_ANY, 0, have),
        Msg::HaveMap { have } => (HAVE_MAP, 0, have),
        Msg::Have { block } => (HAVE, *block, &[]),
        Msg::Block { block, data } => (BLOCK, *block, data.as_slice()),
        Msg::NotHave { block } => (NOT_HAVE, *block, &[]),
        Msg::Choke => (CHOKE, 0, &[]),
        Msg::Unchoke => (UNCHOKE, 0, &[]),
        Msg::Interested => (INTERESTED, 0, &[]),
        Msg::NotInterested => (NOT_INTERESTED, 0, &[]),
    };
    let mut h = [0u8; 9];
    h[0] = tag;
    h[1..5].copy_from_slice(&a.to_be_bytes());
    h[5..9].copy_from_slice(&(payload.len() as u32).to_be_bytes());
    w.write_all(&h).await?;
    for piece in payload.chunks(PACE_PIECE) {
        if let Some(p) = pacer {
            // Sent once its time at the rate has passed: a one-block broadcast is paced too.
            p.wait_through(piece.len()).await;
        }
        w.write_all(piece).await?;
    }
    w.flush().await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn every_message_round_trips() {
        let all = vec![
            Msg::Hello { host: 7 },
            Msg::Get {
                block: 3,
                wait: false,
            },
            Msg::Get {
                block: 4,
                wait: true,
            },
            Msg::GetAny {
                have: vec![1, 0, 1],
            },
            Msg::HaveMap { have: vec![0; 5] },
            Msg::Have { block: 9 },
            Msg::Block {
                block: 2,
                data: Arc::new((0..200_000u32).map(|i| i as u8).collect()),
            },
            Msg::NotHave { block: 1 },
            Msg::Choke,
            Msg::Unchoke,
            Msg::Interested,
            Msg::NotInterested,
        ];
        let mut buf = Vec::new();
        for m in &all {
            write_msg(&mut buf, m, None).await.unwrap();
        }
        let mut r = &buf[..];
        for m in &all {
            assert_eq!(&read_msg(&mut r).await.unwrap().unwrap(), m);
        }
        assert_eq!(read_msg(&mut r).await.unwrap(), None);
        // A cut message is an error, not a clean end.
        let mut cut = &buf[..buf.len() - 1][..];
        for _ in 0..all.len() - 1 {
            read_msg(&mut cut).await.unwrap();
        }
        assert!(read_msg(&mut cut).await.is_err());
        let mut junk = &[99u8, 0, 0, 0, 0, 0, 0, 0, 0][..];
        assert!(read_msg(&mut junk)
            .await
            .unwrap_err()
            .to_string()
            .contains("tag 99"));
    }
}
