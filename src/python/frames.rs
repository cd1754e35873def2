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

#[cfg(test)]
mod tests {
    #[test]
    fn frames_round_trip_and_refuse_what_is_too_large() {
        let mut buf = Vec::new();
        super::write_sync(&mut buf, b"{\"a\":1}").unwrap();
        super::write_sync(&mut buf, b"").unwrap();
        let mut r = buf.as_slice();
        assert_eq!(super::read_sync(&mut r).unwrap().unwrap(), b"{\"a\":1}");
        assert_eq!(super::read_sync(&mut r).unwrap().unwrap(), b"");
        assert!(super::read_sync(&mut r).unwrap().is_none());
        let huge = ((super::MAX_FRAME + 1) as u32).to_be_bytes();
        let err = super::read_sync(&mut huge.as_slice()).unwrap_err();
        assert!(err.to_string().contains("over the"), "{err}");
        // A frame cut short is an error, not a clean end.
        let cut = [0u8, 0, 0, 9, b'{'];
        assert!(super::read_sync(&mut cut.as_slice()).is_err());
    }
}
