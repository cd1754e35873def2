//! One HTTP/1.1 keep-alive connection that a driver client owns: a request is written from
//! bytes built once per task (and a body straight from the feeder's buffer), and the response
//! is read into the connection's bounded buffer, where the operation looks at it in place.

use super::wire::{self, Chunked, Framing, WireError};
use super::MAX_RESPONSE_BYTES;
use crate::backend::net::{write_two, Stream};
use crate::backend::{ErrorKind, OpError};
use std::ops::Range;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::io::AsyncReadExt;
use tokio::net::TcpStream;

/// Where one host is and how to reach it.
pub struct Endpoint {
    /// `host:port`, to connect to and to name in messages.
    pub addr: String,
    tls: Option<(
        tokio_rustls::TlsConnector,
        rustls::pki_types::ServerName<'static>,
    )>,
}

impl Endpoint {
    pub fn new(
        url: &reqwest::Url,
        tls: &Arc<rustls::ClientConfig>,
        tls_options: &crate::backend::tls::TlsOptions,
    ) -> Result<Endpoint, String> {
        let host = url.host_str().unwrap_or("localhost");
        let port = url.port_or_known_default().unwrap_or(9200);
        let addr = format!("{host}:{port}");
        let tls = match url.scheme() {
            "https" => Some((
                tokio_rustls::TlsConnector::from(tls.clone()),
                crate::backend::tls::server_name(tls_options, &addr)?,
            )),
            _ => None,
        };
        Ok(Endpoint { addr, tls })
    }
}

/// A client's read buffer to start with; it grows while responses need it, to at most the
/// response limit, and goes back to this size after a response of more than `SHRINK_ABOVE`.
const INITIAL_BUFFER: usize = 4 * 1024;
const SHRINK_ABOVE: usize = 4 << 20;
/// A connection idle for longer than this is checked for a server that closed it meanwhile
/// (a server's idle timeout is seconds or more; the check costs a system call).
const CHECK_IDLE_AFTER: Duration = Duration::from_secs(1);

/// A failed exchange: what kind, and the message without the call's label.
pub struct Failure {
    pub kind: ErrorKind,
    pub message: String,
}

impl Failure {
    fn io(e: std::io::Error) -> Failure {
        use std::io::ErrorKind as Io;
        let hint = match e.kind() {
            Io::ConnectionRefused => " (is the cluster running? name it with --target-hosts)",
            Io::UnexpectedEof | Io::ConnectionReset | Io::BrokenPipe | Io::ConnectionAborted => {
                " (the server closed the connection)"
            }
            _ if e.to_string().to_ascii_lowercase().contains("certificate") => {
                " (TLS failed: see the tls_ca_file and verify_certs client options)"
            }
            _ => "",
        };
        Failure {
            kind: ErrorKind::Connection,
            message: format!("{e}{hint}"),
        }
    }

    fn wire(e: WireError) -> Failure {
        match e {
            WireError::Invalid(m) => Failure {
                kind: ErrorKind::Protocol,
                message: m,
            },
            WireError::TooLong(n) => Failure {
                kind: ErrorKind::Protocol,
                message: format!("answered a body of {n} bytes or more, past the {MAX_RESPONSE_BYTES}-byte limit"),
            },
        }
    }

    fn closed_early() -> Failure {
        Failure {
            kind: ErrorKind::Connection,
            message: "the server closed the connection before the response ended".into(),
        }
    }

    pub fn into_op_error(self, label: &str, addr: &str) -> OpError {
        OpError::new(self.kind, format!("{label} on {addr}: {}", self.message))
    }
}

/// A response read: its status and where its body lies in the connection's buffer.
pub struct Response {
    pub status: u16,
    pub body: Range<usize>,
}

pub struct Connection {
    stream: Stream,
    /// Read buffer; all of it is initialised, so reads go straight into it.
    buf: Vec<u8>,
    idle_since: Instant,
    /// False while an exchange is under way (also when it was dropped midway), after an error,
    /// or when the server said it closes: the connection is then out of step.
    reusable: bool,
}

impl Connection {
    pub async fn open(endpoint: &Endpoint) -> Result<Connection, Failure> {
        let tcp = TcpStream::connect(&endpoint.addr)
            .await
            .map_err(Failure::io)?;
        tcp.set_nodelay(true).map_err(Failure::io)?;
        let stream = match &endpoint.tls {
            None => Stream::Plain(tcp),
            Some((connector, name)) => match connector.connect(name.clone(), tcp).await {
                Ok(s) => Stream::Tls(Box::new(s)),
                Err(e) => {
                    return Err(Failure {
                        kind: ErrorKind::Connection,
                        message: format!("TLS handshake failed: {e} (see the tls_ca_file and verify_certs client options)"),
                    })
                }
            },
        };
        Ok(Connection {
            stream,
            buf: vec![0; INITIAL_BUFFER],
            idle_since: Instant::now(),
            reusable: true,
        })
    }

    /// Whether the next request may go on this connection.
    pub fn usable(&self) -> bool {
        self.reusable
            && (self.idle_since.elapsed() < CHECK_IDLE_AFTER || !self.stream.closed_while_idle())
    }

    pub fn body(&self, response: &Response) -> &[u8] {
        &self.buf[response.body.clone()]
    }

    /// Sends `head` and `body` and reads the response.
    pub async fn exchange(
        &mut self,
        head: &[u8],
        body: &[u8],
        head_request: bool,
    ) -> Result<Response, Failure> {
        self.reusable = false;
        if self.buf.len() > SHRINK_ABOVE {
            self.buf = vec![0; INITIAL_BUFFER];
        }
        // The previous response was read whole and nothing is asked yet: the socket is empty.
        self.stream.forget_readiness();
        write_two(&mut self.stream, head, body)
            .await
            .map_err(Failure::io)?;
        let (head, mut filled) = self.read_head(head_request).await?;
        let body = match head.framing {
            Framing::Empty => head.len..head.len,
            Framing::Length(n) => {
                let end = head.len + n;
                if self.buf.len() < end {
                    self.buf.resize(end, 0);
                }
                while filled < end {
                    filled += self.read_more(filled).await?;
                }
                head.len..end
            }
            Framing::Chunked => {
                let (body, end) = self.read_chunked(head.len, filled).await?;
                filled = end;
                body
            }
            Framing::UntilClose => {
                loop {
                    if filled == self.buf.len() {
                        self.grow(filled - head.len)?;
                    }
                    match self
                        .stream
                        .read(&mut self.buf[filled..])
                        .await
                        .map_err(Failure::io)?
                    {
                        0 => break,
                        n => filled += n,
                    }
                }
                head.len..filled
            }
        };
        // Bytes past the response were never asked for: the connection is out of step.
        self.reusable = head.keep_alive && filled == body.end;
        self.idle_since = Instant::now();
        Ok(Response {
            status: head.status,
            body,
        })
    }

    /// Reads until a final (non-1xx) head is complete; returns it and the bytes filled.
    async fn read_head(&mut self, head_request: bool) -> Result<(wire::Head, usize), Failure> {
        let mut filled = 0;
        loop {
            if filled > 0 {
                if let Some(head) =
                    wire::parse_head(&self.buf[..filled], head_request, MAX_RESPONSE_BYTES)
                        .map_err(Failure::wire)?
                {
                    match head.status {
                        101 => {
                            return Err(Failure {
                                kind: ErrorKind::Protocol,
                                message: "the server switched protocols (101), which a request never asked for".into(),
                            })
                        }
                        100..=199 => {
                            // An interim response (100 Continue, 103 Early Hints): skip it.
                            self.buf.copy_within(head.len..filled, 0);
                            filled -= head.len;
                            continue;
                        }
                        _ => return Ok((head, filled)),
                    }
                }
            }
            if filled == self.buf.len() {
                let grown = (self.buf.len() * 2).min(wire::MAX_HEAD_BYTES + INITIAL_BUFFER);
                self.buf.resize(grown.max(filled + 1), 0);
            }
            filled += self.read_more(filled).await?;
        }
    }

    /// One read after `filled`; the end of the stream before a response ends is an error.
    async fn read_more(&mut self, filled: usize) -> Result<usize, Failure> {
        match self
            .stream
            .read(&mut self.buf[filled..])
            .await
            .map_err(Failure::io)?
        {
            0 => Err(Failure::closed_early()),
            n => Ok(n),
        }
    }

    /// Doubles the buffer, unless a body of `body_len` bytes already reached the limit.
    fn grow(&mut self, body_len: usize) -> Result<(), Failure> {
        if body_len >= MAX_RESPONSE_BYTES {
            return Err(Failure::wire(WireError::TooLong(body_len as u64)));
        }
        let grown = (self.buf.len() * 2).min(MAX_RESPONSE_BYTES + wire::MAX_HEAD_BYTES + 64 * 1024);
        self.buf.resize(grown, 0);
        Ok(())
    }

    /// The decoded body, and where the bytes read end (past the body if the server sent more).
    async fn read_chunked(
        &mut self,
        start: usize,
        mut filled: usize,
    ) -> Result<(Range<usize>, usize), Failure> {
        let mut chunked = Chunked::new(start);
        loop {
            chunked
                .advance(&mut self.buf, filled, start, MAX_RESPONSE_BYTES)
                .map_err(Failure::wire)?;
            if chunked.done() {
                // The body now ends at `out`; what followed the last chunk is after it.
                let extra = filled - chunked.pos;
                return Ok((start..chunked.out, chunked.out + extra));
            }
            if filled == self.buf.len() {
                filled = chunked.compact(&mut self.buf, filled);
                if filled == self.buf.len() {
                    self.grow(chunked.out - start)?;
                }
            }
            filled += self.read_more(filled).await?;
        }
    }
}
