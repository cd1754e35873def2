//! The worker protocol's framing: a 4-byte big-endian length, then that many bytes of JSON.
//! Both directions are bounded: a frame over [`MAX_FRAME`] is an error, never an allocation.

use std::io::{Read, Write};
use tokio::io::{AsyncRead, AsyncReadExt};

/// The largest frame either side sends (a batch of drawn params stops growing at 4 MiB; one
/// params dict may be larger, up to this: a bulk body a param source makes can reach
/// Elasticsearch's own 100 MB request limit).
pub const MAX_FRAME: usize = 256 << 20;

/// A frame: its length, then its bytes.
pub fn encode(body: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(4 + body.len());
    out.extend_from_slice(&(body.len() as u32).to_be_bytes());
    out.extend_from_slice(body);
    out
}

pub fn write_sync(w: &mut impl Write, body: &[u8]) -> std::io::Result<()> {
    w.write_all(&encode(body))?;
    w.flush()
}

/// A frame's length from its head, refused past [`MAX_FRAME`] before anything is allocated.
fn length(head: [u8; 4]) -> std::io::Result<usize> {
    let n = u32::from_be_bytes(head) as usize;
    if n > MAX_FRAME {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("the worker sent a frame of {n} bytes, over the {MAX_FRAME}-byte limit"),
        ));
    }
    Ok(n)
}

/// The next frame; None at a clean end of the stream.
pub fn read_sync(r: &mut impl Read) -> std::io::Result<Option<Vec<u8>>> {
    let mut head = [0u8; 4];
    match r.read_exact(&mut head) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(None),
        Err(e) => return Err(e),
    }
    let mut body = vec![0u8; length(head)?];
    r.read_exact(&mut body)?;
    Ok(Some(body))
}

/// The next frame; None at a clean end of the stream.
pub async fn read(r: &mut (impl AsyncRead + Unpin)) -> std::io::Result<Option<Vec<u8>>> {
    let mut head = [0u8; 4];
    match r.read_exact(&mut head).await {
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(None),
        Err(e) => return Err(e),
    }
    let mut body = vec![0u8; length(head)?];
    r.read_exact(&mut body).await?;
    Ok(Some(body))
}

/// A reply's JSON head and the bytes after it: a reply of drawn params is its head, a newline,
/// then the params laid end to end (Python's compact JSON has no raw newline, so the first one
/// ends the head; the params are never scanned for it).
pub fn head_and_tail(frame: &[u8]) -> (&[u8], &[u8]) {
    match frame.iter().position(|&b| b == b'\n') {
        Some(i) => (&frame[..i], &frame[i + 1..]),
        None => (frame, &[]),
    }
}

/// One params dict a source drew, as the worker encoded it: the params without their `body`,
/// and that body apart, so that a body only passed on reaches the request as these bytes.
#[derive(Debug, Clone)]
pub struct Drawn {
    /// A JSON object: the params, without the body.
    pub params: bytes::Bytes,
    pub body: Option<DrawnBody>,
}

/// A drawn `body`, as Python gave it.
#[derive(Debug, Clone)]
pub enum DrawnBody {
    /// A dict, as its JSON.
    Json(bytes::Bytes),
    /// A str or bytes (a bulk's NDJSON), as its UTF-8: never escaped into a JSON string.
    Text(bytes::Bytes),
}

impl DrawnBody {
    pub fn bytes(&self) -> &bytes::Bytes {
        match self {
            DrawnBody::Json(b) | DrawnBody::Text(b) => b,
        }
    }

    /// The body as a JSON value (a text one as a string).
    pub fn to_value(&self) -> Result<serde_json::Value, String> {
        match self {
            DrawnBody::Json(b) => {
                serde_json::from_slice(b).map_err(|e| format!("drew a body that is not JSON: {e}"))
            }
            DrawnBody::Text(b) => std::str::from_utf8(b)
                .map(|t| serde_json::Value::String(t.to_string()))
                .map_err(|e| format!("drew a body that is not UTF-8: {e}")),
        }
    }
}

impl Drawn {
    pub fn len(&self) -> usize {
        self.params.len() + self.body.as_ref().map_or(0, |b| b.bytes().len())
    }

    /// The params as one JSON object, the body in its place.
    pub fn to_value(&self) -> Result<serde_json::Value, String> {
        let mut params: serde_json::Value = serde_json::from_slice(&self.params)
            .map_err(|e| format!("drew params that are not JSON: {e}"))?;
        if let Some(body) = &self.body {
            let body = body.to_value()?;
            match params.as_object_mut() {
                Some(p) => {
                    p.insert("body".into(), body);
                }
                None => return Err("drew params that are not a JSON object".into()),
            }
        }
        Ok(params)
    }
}

/// How a reply's head lays out one item: its params' length, its body's (None: no body), and
/// the body's kind (0: JSON, 1: text).
pub type ItemLayout = (usize, Option<usize>, u8);

/// The items a head lays out over `tail`. Lengths past the tail, a kind not known, or bytes
/// left over, are an error, not a guess.
pub fn drawn_items(lengths: &[ItemLayout], tail: bytes::Bytes) -> Result<Vec<Drawn>, String> {
    let mut out = Vec::with_capacity(lengths.len().min(tail.len() + 1));
    let mut at = 0usize;
    let mut take = |n: usize| -> Result<bytes::Bytes, String> {
        let end = at
            .checked_add(n)
            .filter(|&e| e <= tail.len())
            .ok_or_else(|| {
                format!(
                    "the worker's reply lays out {n} bytes at {at}, past its {} bytes of params",
                    tail.len()
                )
            })?;
        let part = tail.slice(at..end);
        at = end;
        Ok(part)
    };
    for &(params, body, kind) in lengths {
        let params = take(params)?;
        let body = match (body.map(&mut take).transpose()?, kind) {
            (None, _) => None,
            (Some(b), 0) => Some(DrawnBody::Json(b)),
            (Some(b), 1) => Some(DrawnBody::Text(b)),
            (Some(_), other) => {
                return Err(format!(
                    "the worker's reply names body kind {other}, not 0 or 1"
                ))
            }
        };
        out.push(Drawn { params, body });
    }
    if at != tail.len() {
        return Err(format!(
            "the worker's reply has {} bytes of params past what its head lays out",
            tail.len() - at
        ));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    #[test]
    fn drawn_items_are_cut_as_the_head_says_and_nothing_is_guessed() {
        let frame = b"{\"rid\":3,\"ok\":true,\"items\":[[2,10,0],[11,null,0],[2,3,1]]}\n{}{\"size\":1}{\"index\":1}{}a\"b";
        let (head, tail) = super::head_and_tail(frame);
        assert!(head.ends_with(b"]]}"));
        let tail = bytes::Bytes::copy_from_slice(tail);
        let layout = [(2, Some(10), 0), (11, None, 0), (2, Some(3), 1)];
        let items = super::drawn_items(&layout, tail.clone()).unwrap();
        assert_eq!(&items[0].params[..], b"{}");
        assert_eq!(
            items[0].to_value().unwrap(),
            serde_json::json!({"body": {"size": 1}})
        );
        assert_eq!(
            items[1].to_value().unwrap(),
            serde_json::json!({"index": 1})
        );
        // A text body is its bytes, read as a string where a value is wanted.
        assert_eq!(
            items[2].to_value().unwrap(),
            serde_json::json!({"body": "a\"b"})
        );
        assert_eq!(
            items.iter().map(super::Drawn::len).sum::<usize>(),
            tail.len()
        );
        let past = super::drawn_items(&[(2, Some(usize::MAX), 0)], tail.clone()).unwrap_err();
        assert!(past.contains("past its"), "{past}");
        let left = super::drawn_items(&[(2, None, 0)], tail.clone()).unwrap_err();
        assert!(left.contains("past what its head"), "{left}");
        let kind = super::drawn_items(&[(2, Some(10), 7), (11, None, 0), (2, Some(3), 1)], tail)
            .unwrap_err();
        assert!(kind.contains("kind 7"), "{kind}");
        // A frame with no tail is all head.
        assert_eq!(
            super::head_and_tail(b"{\"ok\":true}"),
            (&b"{\"ok\":true}"[..], &b""[..])
        );
    }
}
