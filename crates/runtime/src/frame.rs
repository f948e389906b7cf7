//! Data-plane framing over TCP or TLS: `[u32 big-endian length][u8 kind][payload]`, the length
//! counting kind and payload. Control frames carry protobuf messages of the versioned protocol;
//! block frames carry a CRC-32 computed where the bytes entered the system (the putting client)
//! and checked where they leave it (the getting client), so a checksum covers the whole path.

use prost::Message;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

/// Bytes of data in one stored block (and one block frame). Small enough that pacing at a few
/// hundred KB/s stays smooth, large enough that per-block overhead is negligible.
pub const BLOCK_BYTES: usize = 16 * 1024;
/// No frame may be longer; a peer announcing more is cut off (bounded memory per connection).
pub const MAX_FRAME_BYTES: usize = 64 * 1024;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Kind {
    Hello = 1,
    Request = 2,
    Reply = 3,
    Block = 4,
    End = 5,
}

impl Kind {
    fn from_u8(b: u8) -> Option<Kind> {
        Some(match b {
            1 => Kind::Hello,
            2 => Kind::Request,
            3 => Kind::Reply,
            4 => Kind::Block,
            5 => Kind::End,
            _ => return None,
        })
    }
}

/// Why a frame could not be read.
#[derive(Debug, thiserror::Error)]
pub enum FrameError {
    #[error("{0}")]
    Io(#[from] std::io::Error),
    #[error("frame of {0} bytes exceeds the limit of {MAX_FRAME_BYTES}")]
    TooLong(usize),
    #[error("empty frame")]
    Empty,
    #[error("unknown frame kind {0}")]
    UnknownKind(u8),
    #[error("expected a {expected:?} frame, got {got:?}")]
    Unexpected { expected: Kind, got: Kind },
    #[error("malformed {0:?} frame")]
    Malformed(Kind),
    #[error("block checksum mismatch")]
    Checksum,
}

pub async fn write_frame<W: AsyncWrite + Unpin>(
    w: &mut W,
    kind: Kind,
    payload: &[u8],
) -> std::io::Result<()> {
    let len = (payload.len() + 1) as u32;
    let mut head = [0u8; 5];
    head[..4].copy_from_slice(&len.to_be_bytes());
    head[4] = kind as u8;
    w.write_all(&head).await?;
    w.write_all(payload).await
}

pub async fn write_msg<W: AsyncWrite + Unpin, M: Message>(
    w: &mut W,
    kind: Kind,
    msg: &M,
) -> std::io::Result<()> {
    write_frame(w, kind, &msg.encode_to_vec()).await?;
    w.flush().await
}

/// A block frame: CRC-32 then the bytes.
pub async fn write_block<W: AsyncWrite + Unpin>(
    w: &mut W,
    crc: u32,
    data: &[u8],
) -> std::io::Result<()> {
    let len = (data.len() + 5) as u32;
    let mut head = [0u8; 9];
    head[..4].copy_from_slice(&len.to_be_bytes());
    head[4] = Kind::Block as u8;
    head[5..].copy_from_slice(&crc.to_be_bytes());
    w.write_all(&head).await?;
    w.write_all(data).await
}

pub async fn write_end<W: AsyncWrite + Unpin>(w: &mut W, total: u64) -> std::io::Result<()> {
    write_frame(w, Kind::End, &total.to_be_bytes()).await?;
    w.flush().await
}

/// Read one frame into `buf` (reused); returns its kind, `buf` holds the payload.
pub async fn read_frame<R: AsyncRead + Unpin>(
    r: &mut R,
    buf: &mut Vec<u8>,
) -> Result<Kind, FrameError> {
    let len = r.read_u32().await? as usize;
    if len == 0 {
        return Err(FrameError::Empty);
    }
    if len > MAX_FRAME_BYTES {
        return Err(FrameError::TooLong(len));
    }
    let kind = r.read_u8().await?;
    let kind = Kind::from_u8(kind).ok_or(FrameError::UnknownKind(kind))?;
    buf.resize(len - 1, 0);
    r.read_exact(buf).await?;
    Ok(kind)
}

/// Read a frame that must be the protobuf message `M` of kind `expected`.
pub async fn read_msg<R: AsyncRead + Unpin, M: Message + Default>(
    r: &mut R,
    buf: &mut Vec<u8>,
    expected: Kind,
) -> Result<M, FrameError> {
    let got = read_frame(r, buf).await?;
    if got != expected {
        return Err(FrameError::Unexpected { expected, got });
    }
    M::decode(buf.as_slice()).map_err(|_| FrameError::Malformed(expected))
}

/// What a data stream delivers after its reply: blocks, then the end with the total length.
pub enum Chunk {
    /// Verified block; the bytes are in the read buffer from offset 4.
    Block,
    End(u64),
    /// A reply in place of a block: the sender gives up, saying why (a put that was being
    /// streamed to a get was abandoned).
    Refused(String),
}

/// Read the next block (checksum verified) or the end frame.
pub async fn read_chunk<R: AsyncRead + Unpin>(
    r: &mut R,
    buf: &mut Vec<u8>,
) -> Result<Chunk, FrameError> {
    match read_frame(r, buf).await? {
        Kind::Block => {
            if buf.len() < 4 {
                return Err(FrameError::Malformed(Kind::Block));
            }
            let crc = u32::from_be_bytes(buf[..4].try_into().expect("4 bytes"));
            if crc32fast::hash(&buf[4..]) != crc {
                return Err(FrameError::Checksum);
            }
            Ok(Chunk::Block)
        }
        Kind::End => {
            let b: [u8; 8] = buf
                .as_slice()
                .try_into()
                .map_err(|_| FrameError::Malformed(Kind::End))?;
            Ok(Chunk::End(u64::from_be_bytes(b)))
        }
        Kind::Reply => {
            let reply = crate::proto::DataReply::decode(buf.as_slice())
                .map_err(|_| FrameError::Malformed(Kind::Reply))?;
            Ok(Chunk::Refused(reply.error))
        }
        got => Err(FrameError::Unexpected {
            expected: Kind::Block,
            got,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn block_roundtrip_and_corruption_detected() {
        let data = vec![7u8; 1000];
        let mut wire = Vec::new();
        write_block(&mut wire, crc32fast::hash(&data), &data)
            .await
            .unwrap();
        write_end(&mut wire, 1000).await.unwrap();
        let mut buf = Vec::new();
        let mut r = wire.as_slice();
        assert!(matches!(
            read_chunk(&mut r, &mut buf).await,
            Ok(Chunk::Block)
        ));
        assert_eq!(&buf[4..], &data[..]);
        assert!(matches!(
            read_chunk(&mut r, &mut buf).await,
            Ok(Chunk::End(1000))
        ));
        // Flip one payload bit: the receiver must notice.
        wire[100] ^= 1;
        let mut r = wire.as_slice();
        assert!(matches!(
            read_chunk(&mut r, &mut buf).await,
            Err(FrameError::Checksum)
        ));
    }

    #[tokio::test]
    async fn oversized_and_unknown_frames_rejected() {
        let mut wire = Vec::new();
        wire.extend_from_slice(&((MAX_FRAME_BYTES + 1) as u32).to_be_bytes());
        wire.push(4);
        let mut buf = Vec::new();
        assert!(matches!(
            read_frame(&mut wire.as_slice(), &mut buf).await,
            Err(FrameError::TooLong(_))
        ));
        let wire = [0u8, 0, 0, 1, 99];
        assert!(matches!(
            read_frame(&mut wire.as_slice(), &mut buf).await,
            Err(FrameError::UnknownKind(99))
        ));
    }
}
