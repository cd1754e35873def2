//! What the network backends share: a connection that is plain TCP or TLS over TCP as one
//! type, the check for a peer that closed an idle connection, and a reply deadline that costs
//! no timer-wheel update per operation.

use std::io::{self, IoSlice};
use std::os::fd::AsRawFd;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio::time::{Instant, Sleep};
use tokio_rustls::client::TlsStream;

pub enum Stream {
    Plain(TcpStream),
    Tls(Box<TlsStream<TcpStream>>),
}

impl Stream {
    fn tcp(&self) -> &TcpStream {
        match self {
            Stream::Plain(s) => s,
            Stream::Tls(s) => s.get_ref().0,
        }
    }

    /// Whether the peer has closed the connection (or it failed) while it sat idle: a
    /// one-byte peek that never blocks. Bytes waiting unasked also make it unusable.
    pub fn closed_while_idle(&self) -> bool {
        let mut byte = 0u8;
        // SAFETY: a one-byte peek into a live local; the fd belongs to this stream.
        let n = unsafe {
            libc::recv(
                self.tcp().as_raw_fd(),
                (&mut byte as *mut u8).cast(),
                1,
                libc::MSG_PEEK | libc::MSG_DONTWAIT,
            )
        };
        n >= 0 || io::Error::last_os_error().kind() != io::ErrorKind::WouldBlock
    }
}

impl Stream {
    /// Forgets that the socket was readable, without a system call. After a whole response
    /// has been read the socket is nearly always empty, and without this the next read would
    /// first try the socket, get EAGAIN and only then wait for the reactor: one wasted system
    /// call per request. Call it only while the peer has nothing to send (before the next
    /// request is written), so that no readiness for new data is lost. TLS is left as it is:
    /// its session may hold bytes already read.
    pub fn forget_readiness(&self) {
        if let Stream::Plain(tcp) = self {
            let _ = tcp.try_io(tokio::io::Interest::READABLE, || {
                Err::<(), _>(io::ErrorKind::WouldBlock.into())
            });
        }
    }
}

impl AsyncRead for Stream {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Stream::Plain(s) => Pin::new(s).poll_read(cx, buf),
            Stream::Tls(s) => Pin::new(s.as_mut()).poll_read(cx, buf),
        }
    }
}

impl AsyncWrite for Stream {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            Stream::Plain(s) => Pin::new(s).poll_write(cx, buf),
            Stream::Tls(s) => Pin::new(s.as_mut()).poll_write(cx, buf),
        }
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            Stream::Plain(s) => Pin::new(s).poll_write_vectored(cx, bufs),
            Stream::Tls(s) => Pin::new(s.as_mut()).poll_write_vectored(cx, bufs),
        }
    }

    fn is_write_vectored(&self) -> bool {
        match self {
            Stream::Plain(s) => s.is_write_vectored(),
            Stream::Tls(s) => s.is_write_vectored(),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Stream::Plain(s) => Pin::new(s).poll_flush(cx),
            Stream::Tls(s) => Pin::new(s.as_mut()).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Stream::Plain(s) => Pin::new(s).poll_shutdown(cx),
            Stream::Tls(s) => Pin::new(s.as_mut()).poll_shutdown(cx),
        }
    }
}

/// Writes `head` then `body` with as few system calls as the stream allows (one `writev` for
/// plain TCP), so that a large body goes from its buffer to the socket without a copy.
pub async fn write_two(stream: &mut Stream, head: &[u8], body: &[u8]) -> io::Result<()> {
    use tokio::io::AsyncWriteExt;
    let (mut head, mut body) = (head, body);
    while !head.is_empty() {
        let n = stream
            .write_vectored(&[IoSlice::new(head), IoSlice::new(body)])
            .await?;
        if n == 0 {
            return Err(io::ErrorKind::WriteZero.into());
        }
        let from_head = n.min(head.len());
        head = &head[from_head..];
        body = &body[n - from_head..];
    }
    stream.write_all(body).await?;
    // TLS holds the last record until flushed; a plain socket's flush does nothing.
    stream.flush().await
}

/// A reply deadline kept across operations. Moving a tokio timer costs a timer-wheel update
/// under a lock, per operation 2% of the driver's time at 1,000 pipelined clients, so it is
/// moved only when less than `timeout` is left: each reply gets between `timeout` and
/// 1.125 × `timeout`. Used by one client at a time, so no lock.
#[derive(Default)]
pub struct Deadline {
    /// `None` while a call holds it (or after one was dropped midway).
    sleep: Option<Pin<Box<Sleep>>>,
}

impl Deadline {
    /// `work`, or `None` when it does not finish within about `timeout`.
    pub async fn within<F: std::future::Future>(
        &mut self,
        timeout: Duration,
        work: F,
    ) -> Option<F::Output> {
        let now = Instant::now();
        let mut sleep = self
            .sleep
            .take()
            .unwrap_or_else(|| Box::pin(tokio::time::sleep_until(now)));
        // Also moved when a longer timeout set it further away than this one allows.
        let latest = now + timeout + timeout / 8;
        if sleep.deadline() < now + timeout || sleep.deadline() > latest {
            sleep.as_mut().reset(latest);
        }
        let result = tokio::select! {
            biased;
            r = work => Some(r),
            () = sleep.as_mut() => None,
        };
        self.sleep = Some(sleep);
        result
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncReadExt;

    #[tokio::test]
    async fn write_two_sends_both_parts_in_order_and_a_closed_peer_is_seen_while_idle() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let client = tokio::spawn(async move { TcpStream::connect(addr).await.unwrap() });
        let (mut server, _) = listener.accept().await.unwrap();
        let mut stream = Stream::Plain(client.await.unwrap());
        assert!(!stream.closed_while_idle());
        let body = vec![b'x'; 3 << 20];
        let reader = tokio::spawn(async move {
            let mut got = Vec::new();
            server.read_to_end(&mut got).await.unwrap();
            got
        });
        write_two(&mut stream, b"head:", &body).await.unwrap();
        let Stream::Plain(tcp) = &mut stream else {
            unreachable!()
        };
        tokio::io::AsyncWriteExt::shutdown(tcp).await.unwrap();
        let got = reader.await.unwrap();
        assert_eq!(&got[..5], b"head:");
        assert_eq!(got.len(), 5 + body.len());
        // The server has closed its side now: the idle check sees it.
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert!(stream.closed_while_idle());
    }

    #[tokio::test]
    async fn a_deadline_cuts_slow_work_and_lets_quick_work_finish() {
        let mut d = Deadline::default();
        assert_eq!(d.within(Duration::from_secs(5), async { 7 }).await, Some(7));
        let slow = tokio::time::sleep(Duration::from_secs(60));
        assert_eq!(d.within(Duration::from_millis(20), slow).await, None);
    }
}
