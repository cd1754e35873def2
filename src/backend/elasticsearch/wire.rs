//! HTTP/1.1 responses read in place: the head parsed without allocating (httparse), and the
//! body's framing (Content-Length, chunked, or until the server closes) decoded inside the
//! connection's own read buffer, so a 200 search reply costs one read and no copy.

/// The longest response head accepted: Elasticsearch's are a few hundred bytes.
pub const MAX_HEAD_BYTES: usize = 64 * 1024;
/// The most headers one response may carry.
const MAX_HEADERS: usize = 64;
/// A chunk-size line (hex size and extensions) or a trailer line longer than this is refused.
const MAX_LINE_BYTES: usize = 4 * 1024;

#[derive(Debug, Clone, PartialEq)]
pub enum WireError {
    /// The bytes are not an HTTP/1.x response.
    Invalid(String),
    /// The body is (or would be) at least this many bytes, past the limit.
    TooLong(u64),
}

/// How the body after a head ends.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Framing {
    /// No body (HEAD, 1xx, 204, 304).
    Empty,
    Length(usize),
    Chunked,
    /// Neither length nor chunked: the body is everything until the server closes.
    UntilClose,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Head {
    pub status: u16,
    /// Bytes of the head, blank line included.
    pub len: usize,
    pub framing: Framing,
    /// Whether the connection may carry another request after this response.
    pub keep_alive: bool,
}

fn header_has_token(value: &[u8], token: &str) -> bool {
    value
        .split(|b| *b == b',')
        .any(|t| t.trim_ascii().eq_ignore_ascii_case(token.as_bytes()))
}

fn content_length(value: &[u8]) -> Result<u64, WireError> {
    let v = value.trim_ascii();
    if v.is_empty() || v.len() > 19 || !v.iter().all(u8::is_ascii_digit) {
        return Err(WireError::Invalid(format!(
            "content-length `{}` is not a number",
            String::from_utf8_lossy(&v[..v.len().min(40)])
        )));
    }
    Ok(v.iter().fold(0u64, |n, d| n * 10 + u64::from(d - b'0')))
}

/// The head at the start of `buf`, or `None` while it is incomplete. `limit` bounds a
/// declared body length; `head_request` says the request was HEAD (no body follows).
pub fn parse_head(buf: &[u8], head_request: bool, limit: usize) -> Result<Option<Head>, WireError> {
    let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut response = httparse::Response::new(&mut headers);
    let len = match response.parse(buf) {
        Ok(httparse::Status::Complete(n)) => n,
        Ok(httparse::Status::Partial) if buf.len() > MAX_HEAD_BYTES => {
            return Err(WireError::Invalid(format!(
                "a response head longer than {MAX_HEAD_BYTES} bytes"
            )))
        }
        Ok(httparse::Status::Partial) => return Ok(None),
        Err(e) => {
            let start = String::from_utf8_lossy(&buf[..buf.len().min(40)]).into_owned();
            return Err(WireError::Invalid(format!(
                "not an HTTP/1.x response ({e}): `{}`",
                start.escape_debug()
            )));
        }
    };
    let status = response.code.unwrap_or(0);
    let http10 = response.version == Some(0);
    let (mut length, mut chunked, mut other_coding) = (None, false, false);
    let (mut close, mut keep_alive_asked) = (false, false);
    for h in response.headers.iter() {
        if h.name.eq_ignore_ascii_case("content-length") {
            let n = content_length(h.value)?;
            if length.is_some_and(|l| l != n) {
                return Err(WireError::Invalid("two different content-lengths".into()));
            }
            length = Some(n);
        } else if h.name.eq_ignore_ascii_case("transfer-encoding") {
            // Only the last coding frames the message (RFC 9112 6.1).
            let last = h.value.rsplit(|b| *b == b',').next().unwrap_or_default();
            chunked = last.trim_ascii().eq_ignore_ascii_case(b"chunked");
            other_coding |= !chunked;
        } else if h.name.eq_ignore_ascii_case("connection") {
            close |= header_has_token(h.value, "close");
            keep_alive_asked |= header_has_token(h.value, "keep-alive");
        }
    }
    let no_body = head_request || (100..200).contains(&status) || status == 204 || status == 304;
    let framing = if no_body {
        Framing::Empty
    } else if chunked {
        Framing::Chunked
    } else if other_coding {
        Framing::UntilClose
    } else {
        match length {
            Some(n) if n > limit as u64 => return Err(WireError::TooLong(n)),
            Some(n) => Framing::Length(n as usize),
            None => Framing::UntilClose,
        }
    };
    // With both a length and chunked, the length is ignored but the peer is suspect.
    let keep_alive = !close
        && (!http10 || keep_alive_asked)
        && framing != Framing::UntilClose
        && !(chunked && length.is_some());
    Ok(Some(Head {
        status,
        len,
        framing,
        keep_alive,
    }))
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum ChunkState {
    Size,
    Data(usize),
    DataEnd,
    Trailer,
    Done,
}

/// A chunked body decoded in place: chunk data is moved down over the framing as it
/// arrives, so the body ends up contiguous after the head.
#[derive(Debug)]
pub struct Chunked {
    state: ChunkState,
    /// End of the decoded body so far.
    pub out: usize,
    /// Where undecoded input starts.
    pub pos: usize,
}

impl Chunked {
    pub fn new(body_start: usize) -> Chunked {
        Chunked {
            state: ChunkState::Size,
            out: body_start,
            pos: body_start,
        }
    }

    pub fn done(&self) -> bool {
        self.state == ChunkState::Done
    }

    /// The end of the line starting at `pos`, if `buf[..filled]` holds all of it.
    fn line_end(&self, buf: &[u8], filled: usize) -> Result<Option<usize>, WireError> {
        let window = &buf[self.pos..filled];
        match window.iter().position(|b| *b == b'\n') {
            Some(i) => Ok(Some(self.pos + i)),
            None if window.len() > MAX_LINE_BYTES => Err(WireError::Invalid(format!(
                "a chunk line longer than {MAX_LINE_BYTES} bytes"
            ))),
            None => Ok(None),
        }
    }

    /// Decodes what `buf[pos..filled]` holds. `body_start` and `limit` bound the body.
    pub fn advance(
        &mut self,
        buf: &mut [u8],
        filled: usize,
        body_start: usize,
        limit: usize,
    ) -> Result<(), WireError> {
        loop {
            match self.state {
                ChunkState::Done => return Ok(()),
                ChunkState::Size => {
                    let Some(end) = self.line_end(buf, filled)? else {
                        return Ok(());
                    };
                    let line = &buf[self.pos..end];
                    let hex = line
                        .split(|b| *b == b';')
                        .next()
                        .unwrap_or_default()
                        .trim_ascii();
                    if hex.is_empty() || hex.len() > 15 || !hex.iter().all(u8::is_ascii_hexdigit) {
                        return Err(WireError::Invalid(format!(
                            "a chunk size `{}` that is not hexadecimal",
                            String::from_utf8_lossy(&hex[..hex.len().min(20)])
                        )));
                    }
                    let size = usize::from_str_radix(std::str::from_utf8(hex).unwrap_or("0"), 16)
                        .map_err(|e| WireError::Invalid(format!("chunk size: {e}")))?;
                    let decoded = (self.out - body_start) as u64 + size as u64;
                    if decoded > limit as u64 {
                        return Err(WireError::TooLong(decoded));
                    }
                    self.pos = end + 1;
                    self.state = if size == 0 {
                        ChunkState::Trailer
                    } else {
                        ChunkState::Data(size)
                    };
                }
                ChunkState::Data(left) => {
                    let n = left.min(filled - self.pos);
                    if n == 0 {
                        return Ok(());
                    }
                    buf.copy_within(self.pos..self.pos + n, self.out);
                    (self.out, self.pos) = (self.out + n, self.pos + n);
                    self.state = match left - n {
                        0 => ChunkState::DataEnd,
                        rest => ChunkState::Data(rest),
                    };
                }
                ChunkState::DataEnd => {
                    let Some(end) = self.line_end(buf, filled)? else {
                        return Ok(());
                    };
                    if !buf[self.pos..end].trim_ascii().is_empty() {
                        return Err(WireError::Invalid("chunk data longer than its size".into()));
                    }
                    self.pos = end + 1;
                    self.state = ChunkState::Size;
                }
                ChunkState::Trailer => {
                    let Some(end) = self.line_end(buf, filled)? else {
                        return Ok(());
                    };
                    let blank = buf[self.pos..end].trim_ascii().is_empty();
                    self.pos = end + 1;
                    if blank {
                        self.state = ChunkState::Done;
                    }
                }
            }
        }
    }

    /// Moves undecoded input down to the end of the decoded body, freeing the space the
    /// framing took; returns the new end of the filled bytes.
    pub fn compact(&mut self, buf: &mut [u8], filled: usize) -> usize {
        buf.copy_within(self.pos..filled, self.out);
        let filled = self.out + (filled - self.pos);
        self.pos = self.out;
        filled
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIMIT: usize = 1 << 20;

    #[test]
    fn heads_give_status_framing_and_whether_the_connection_stays() {
        let h = parse_head(
            b"HTTP/1.1 200 OK\r\nContent-Length: 12\r\n\r\n{}",
            false,
            LIMIT,
        )
        .unwrap()
        .unwrap();
        assert_eq!(
            (h.status, h.len, h.framing, h.keep_alive),
            (200, 39, Framing::Length(12), true)
        );
        let h = parse_head(
            b"HTTP/1.1 200 OK\r\ntransfer-encoding: gzip, chunked\r\nconnection: close\r\n\r\n",
            false,
            LIMIT,
        )
        .unwrap()
        .unwrap();
        assert_eq!((h.framing, h.keep_alive), (Framing::Chunked, false));
        let h = parse_head(b"HTTP/1.0 200 OK\r\n\r\n", false, LIMIT)
            .unwrap()
            .unwrap();
        assert_eq!((h.framing, h.keep_alive), (Framing::UntilClose, false));
        let h = parse_head(
            b"HTTP/1.0 200 OK\r\nConnection: Keep-Alive\r\nContent-Length: 0\r\n\r\n",
            false,
            LIMIT,
        )
        .unwrap()
        .unwrap();
        assert!(h.keep_alive);
        let h = parse_head(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n", true, LIMIT)
            .unwrap()
            .unwrap();
        assert_eq!(h.framing, Framing::Empty);
        let h = parse_head(b"HTTP/1.1 204 No Content\r\n\r\n", false, LIMIT)
            .unwrap()
            .unwrap();
        assert_eq!((h.framing, h.keep_alive), (Framing::Empty, true));
        assert_eq!(
            parse_head(b"HTTP/1.1 200 OK\r\nContent-Le", false, LIMIT),
            Ok(None)
        );
    }

    #[test]
    fn bad_heads_and_lengths_past_the_limit_are_refused() {
        assert!(matches!(
            parse_head(b"SSH-2.0-nonsense\r\n\r\n", false, LIMIT),
            Err(WireError::Invalid(_))
        ));
        assert_eq!(
            parse_head(
                b"HTTP/1.1 200 OK\r\nContent-Length: 99999999999\r\n\r\n",
                false,
                LIMIT
            ),
            Err(WireError::TooLong(99_999_999_999))
        );
        for bad in ["-1", "1e3", "", "184467440737095516160"] {
            let head = format!("HTTP/1.1 200 OK\r\nContent-Length: {bad}\r\n\r\n");
            assert!(
                matches!(
                    parse_head(head.as_bytes(), false, LIMIT),
                    Err(WireError::Invalid(_))
                ),
                "{bad}"
            );
        }
        let two = b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n";
        assert!(parse_head(two, false, LIMIT).is_err());
        // An endless head stops at the limit instead of growing.
        let mut endless = b"HTTP/1.1 200 OK\r\n".to_vec();
        while endless.len() <= MAX_HEAD_BYTES {
            endless.extend_from_slice(b"x-filler: aaaaaaaaaaaaaaaa\r\n");
        }
        assert!(parse_head(&endless, false, LIMIT).is_err());
    }

    /// Decodes `wire` (a chunked body) fed `step` bytes at a time, compacting as a
    /// connection does when its buffer fills.
    fn decode(wire: &[u8], step: usize) -> Result<Vec<u8>, WireError> {
        let mut buf = vec![0u8; wire.len() + 8];
        let (mut filled, mut fed) = (3, 0);
        buf[..3].copy_from_slice(b"HDR");
        let mut c = Chunked::new(3);
        while !c.done() {
            if fed == wire.len() {
                return Err(WireError::Invalid("ended early".into()));
            }
            let n = step.min(wire.len() - fed);
            buf[filled..filled + n].copy_from_slice(&wire[fed..fed + n]);
            (filled, fed) = (filled + n, fed + n);
            c.advance(&mut buf, filled, 3, 64)?;
            filled = c.compact(&mut buf, filled);
        }
        assert_eq!(&buf[..3], b"HDR");
        Ok(buf[3..c.out].to_vec())
    }

    #[test]
    fn chunked_bodies_decode_in_place_however_the_reads_split_them() {
        let wire = b"5;ext=1\r\nhello\r\n1\r\n \r\nA\r\n0123456789\r\n0\r\nx-trailer: 1\r\n\r\n";
        for step in [1, 2, 3, 7, wire.len()] {
            assert_eq!(
                decode(wire, step).unwrap(),
                b"hello 0123456789",
                "step {step}"
            );
        }
    }

    #[test]
    fn bad_or_oversized_chunks_are_refused() {
        assert!(matches!(decode(b"zz\r\n", 4), Err(WireError::Invalid(_))));
        assert!(matches!(
            decode(b"3\r\nabcdef\r\n0\r\n\r\n", 64),
            Err(WireError::Invalid(_))
        ));
        assert_eq!(decode(b"41\r\n", 4), Err(WireError::TooLong(65)));
        assert_eq!(
            decode(b"ffffffffffffff\r\n", 64),
            Err(WireError::TooLong(0xffffffffffffff))
        );
        let long_line = vec![b'1'; MAX_LINE_BYTES + 10];
        assert!(decode(&long_line, 64).is_err());
    }
}
