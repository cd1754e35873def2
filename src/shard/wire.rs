//! The rendezvous protocol: frames of one kind byte, a 4-byte big-endian length and a JSON
//! message. Control messages are small; only a shard's results may be large, and every
//! length is checked against its kind's bound before anything is allocated.

use crate::capacity::share::ProbeShare;
use crate::results::{HistogramFile, RaceRecord};
use serde::{Deserialize, Serialize};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

const CONTROL: u8 = b'C';
const RESULTS: u8 = b'R';
const MAX_CONTROL: u32 = 64 * 1024;
/// A shard's stored race and histograms: far above what a race of 100,000 task runs stores.
pub const MAX_RESULTS: u32 = 512 * 1024 * 1024;

/// From a shard to the coordinator.
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "kebab-case")]
pub enum ToCoordinator {
    Hello {
        shard: u32,
        count: u32,
        /// `plan_digest` of the race the shard is about to run.
        plan: String,
        host: String,
    },
    Ping,
    /// Ready for step `step`; `round_trip_ns` is the shard's best round trip to here.
    Arrive {
        step: usize,
        what: String,
        round_trip_ns: u64,
    },
    /// The shard's race ended (however it ended): it leaves the rendezvous.
    Results(Box<ShardResults>),
    /// This shard's part of a capacity search's probe.
    Probe {
        step: usize,
        probe: u32,
        share: Box<ProbeShare>,
    },
}

#[derive(Debug, Serialize, Deserialize)]
pub struct ShardResults {
    pub race: RaceRecord,
    pub histograms: HistogramFile,
}

/// From the coordinator to a shard.
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "kebab-case")]
pub enum ToMember {
    /// Every shard has joined: the race's id.
    Welcome { race: String },
    /// The coordinator's clock, for the shard to learn its offset.
    Pong { now_ns: u64 },
    /// Start step `step` at this instant of the coordinator's clock.
    Go { step: usize, at_ns: u64 },
    /// The race cannot go on: why, for every shard to say.
    Fail { message: String },
    /// Every shard's part of a probe, merged.
    Probed {
        step: usize,
        probe: u32,
        merged: Box<ProbeShare>,
    },
}

impl ToMember {
    /// A merged probe carries histograms: it goes in a frame of the large kind.
    pub fn is_large(&self) -> bool {
        matches!(self, ToMember::Probed { .. })
    }
}

#[derive(Debug, thiserror::Error)]
pub enum WireError {
    #[error("connection closed")]
    Closed,
    #[error("{0}")]
    Io(#[from] std::io::Error),
    #[error("sent a frame of kind {0:#04x}, which is not part of the protocol")]
    Kind(u8),
    #[error("announced a {len}-byte message, above the {max}-byte bound of its kind")]
    TooLong { len: u32, max: u32 },
    #[error("sent a message that does not parse: {0}")]
    Json(#[from] serde_json::Error),
}

pub async fn send<W: AsyncWrite + Unpin, T: Serialize>(
    w: &mut W,
    message: &T,
    large: bool,
) -> Result<(), WireError> {
    let body = serde_json::to_vec(message)?;
    let max = if large { MAX_RESULTS } else { MAX_CONTROL };
    let len = u32::try_from(body.len()).unwrap_or(u32::MAX);
    if len > max {
        return Err(WireError::TooLong { len, max });
    }
    let mut head = [0u8; 5];
    head[0] = if large { RESULTS } else { CONTROL };
    head[1..].copy_from_slice(&len.to_be_bytes());
    w.write_all(&head).await?;
    w.write_all(&body).await?;
    w.flush().await?;
    Ok(())
}

pub async fn receive<R: AsyncRead + Unpin, T: for<'de> Deserialize<'de>>(
    r: &mut R,
) -> Result<T, WireError> {
    let mut head = [0u8; 5];
    match r.read_exact(&mut head).await {
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Err(WireError::Closed),
        Err(e) => return Err(e.into()),
    }
    let max = match head[0] {
        CONTROL => MAX_CONTROL,
        RESULTS => MAX_RESULTS,
        other => return Err(WireError::Kind(other)),
    };
    let len = u32::from_be_bytes([head[1], head[2], head[3], head[4]]);
    if len > max {
        return Err(WireError::TooLong { len, max });
    }
    // Read in pieces as they come, so that a peer that announces much and sends little
    // holds only what it sent.
    let mut body = Vec::with_capacity(len.min(64 * 1024) as usize);
    let read = r.take(len as u64).read_to_end(&mut body).await?;
    if read < len as usize {
        return Err(WireError::Closed);
    }
    Ok(serde_json::from_slice(&body)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn frames_round_trip_and_bounds_hold() {
        let mut buf = Vec::new();
        send(&mut buf, &ToMember::Go { step: 3, at_ns: 7 }, false)
            .await
            .unwrap();
        let got: ToMember = receive(&mut buf.as_slice()).await.unwrap();
        assert!(matches!(got, ToMember::Go { step: 3, at_ns: 7 }));
        // A control frame that announces more than its bound is refused before reading.
        let mut hostile = vec![CONTROL];
        hostile.extend_from_slice(&(MAX_CONTROL + 1).to_be_bytes());
        let e = receive::<_, ToMember>(&mut hostile.as_slice())
            .await
            .unwrap_err();
        assert!(matches!(e, WireError::TooLong { .. }), "{e}");
        // Garbage kinds, short bodies and bad JSON are errors, not panics.
        let e = receive::<_, ToMember>(&mut &b"GET / HTTP/1.1\r\n"[..])
            .await
            .unwrap_err();
        assert!(matches!(e, WireError::Kind(b'G')), "{e}");
        let mut short = vec![CONTROL, 0, 0, 0, 10];
        short.extend_from_slice(b"{}");
        assert!(matches!(
            receive::<_, ToMember>(&mut short.as_slice()).await,
            Err(WireError::Closed)
        ));
        let mut bad = vec![CONTROL, 0, 0, 0, 2];
        bad.extend_from_slice(b"{]");
        assert!(matches!(
            receive::<_, ToMember>(&mut bad.as_slice()).await,
            Err(WireError::Json(_))
        ));
        assert!(matches!(
            receive::<_, ToMember>(&mut &b""[..]).await,
            Err(WireError::Closed)
        ));
    }
}
