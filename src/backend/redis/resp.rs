//! A lean RESP2 codec: commands are encoded into a reused buffer, replies are read from a
//! buffered socket and checked without building values.

use tokio::io::{AsyncBufRead, AsyncBufReadExt};

/// Appends `n` in decimal, without going through `fmt`.
pub fn push_decimal(out: &mut Vec<u8>, mut n: usize) {
    let mut digits = [0u8; 20];
    let mut i = digits.len();
    loop {
        i -= 1;
        digits[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    out.extend_from_slice(&digits[i..]);
}

/// Appends one command (an array of bulk strings).
pub fn push_command(out: &mut Vec<u8>, args: &[&[u8]]) {
    out.push(b'*');
    push_decimal(out, args.len());
    out.extend_from_slice(b"\r\n");
    for a in args {
        out.push(b'$');
        push_decimal(out, a.len());
        out.extend_from_slice(b"\r\n");
        out.extend_from_slice(a);
        out.extend_from_slice(b"\r\n");
    }
}

/// What one reply was, as far as a benchmark cares.
#[derive(Debug, PartialEq, Eq)]
pub enum Reply {
    /// A value (simple string, integer, non-null bulk string, array).
    Value,
    /// A null bulk string or array: GET of a missing key.
    Nil,
    /// An error reply: its text (allocated only for errors).
    Error(String),
}

#[derive(Debug)]
pub enum ReadError {
    Closed,
    Io(std::io::Error),
    Protocol(String),
}

async fn line<R: AsyncBufRead + Unpin>(r: &mut R, buf: &mut Vec<u8>) -> Result<(), ReadError> {
    buf.clear();
    let n = r.read_until(b'\n', buf).await.map_err(ReadError::Io)?;
    if n == 0 {
        return Err(ReadError::Closed);
    }
    if buf.len() < 3 || !buf.ends_with(b"\r\n") {
        return Err(ReadError::Protocol(format!("malformed reply line {:?}", String::from_utf8_lossy(buf))));
    }
    buf.truncate(buf.len() - 2);
    Ok(())
}

fn number(bytes: &[u8]) -> Result<i64, ReadError> {
    std::str::from_utf8(bytes).ok().and_then(|s| s.parse().ok()).ok_or_else(|| ReadError::Protocol(format!("not a number: {:?}", String::from_utf8_lossy(bytes))))
}

/// Reads one whole reply (nested arrays included). For an array, the first error inside it is
/// reported (EXEC returns the replies of the queued commands as an array).
pub async fn read_reply<R: AsyncBufRead + Unpin>(r: &mut R, buf: &mut Vec<u8>) -> Result<Reply, ReadError> {
    // Arrays are walked iteratively: `pending` counts the elements still to read.
    let mut pending: u64 = 1;
    let mut first = None;
    let mut error = None;
    while pending > 0 {
        pending -= 1;
        line(r, buf).await?;
        let (kind, rest) = (buf[0], &buf[1..]);
        let reply = match kind {
            b'+' | b':' => Reply::Value,
            b'-' => Reply::Error(String::from_utf8_lossy(rest).into_owned()),
            b'$' => {
                let len = number(rest)?;
                if len < 0 {
                    Reply::Nil
                } else {
                    let mut left = len as u64 + 2;
                    // Skip the payload and its CRLF without copying it out.
                    while left > 0 {
                        let chunk = r.fill_buf().await.map_err(ReadError::Io)?;
                        if chunk.is_empty() {
                            return Err(ReadError::Closed);
                        }
                        let take = chunk.len().min(left as usize);
                        r.consume(take);
                        left -= take as u64;
                    }
                    Reply::Value
                }
            }
            b'*' => {
                let len = number(rest)?;
                if len < 0 {
                    Reply::Nil
                } else {
                    pending += len as u64;
                    Reply::Value
                }
            }
            other => return Err(ReadError::Protocol(format!("unexpected reply type byte {:?}", other as char))),
        };
        if let Reply::Error(_) = reply {
            error.get_or_insert(reply);
        } else if first.is_none() {
            first = Some(reply);
        }
    }
    Ok(error.or(first).unwrap_or(Reply::Value))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encodes_commands() {
        let mut out = Vec::new();
        push_command(&mut out, &[b"SET", b"k1", b"value"]);
        assert_eq!(out, b"*3\r\n$3\r\nSET\r\n$2\r\nk1\r\n$5\r\nvalue\r\n");
    }

    #[tokio::test]
    async fn reads_replies() {
        let data: &[u8] = b"+OK\r\n$-1\r\n$5\r\nhello\r\n-ERR wrong\r\n*3\r\n+QUEUED\r\n:1\r\n-WRONGTYPE x\r\n*-1\r\n";
        let mut r = tokio::io::BufReader::new(data);
        let mut buf = Vec::new();
        assert_eq!(read_reply(&mut r, &mut buf).await.unwrap(), Reply::Value);
        assert_eq!(read_reply(&mut r, &mut buf).await.unwrap(), Reply::Nil);
        assert_eq!(read_reply(&mut r, &mut buf).await.unwrap(), Reply::Value);
        assert_eq!(read_reply(&mut r, &mut buf).await.unwrap(), Reply::Error("ERR wrong".into()));
        assert_eq!(read_reply(&mut r, &mut buf).await.unwrap(), Reply::Error("WRONGTYPE x".into()));
        assert_eq!(read_reply(&mut r, &mut buf).await.unwrap(), Reply::Nil);
        assert!(matches!(read_reply(&mut r, &mut buf).await, Err(ReadError::Closed)));
    }

    #[tokio::test]
    async fn garbage_is_a_protocol_error() {
        let mut r = tokio::io::BufReader::new(&b"HTTP/1.1 200 OK\r\n"[..]);
        assert!(matches!(read_reply(&mut r, &mut Vec::new()).await, Err(ReadError::Protocol(_))));
    }
}
