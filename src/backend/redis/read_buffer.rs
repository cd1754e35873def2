//! A client's read buffer that starts small and grows while reads fill it: 10,000 mostly idle
//! clients each hold 4 KB, a client reading long pipelines grows to 64 KB. (tokio's
//! `BufReader` holds a fixed, zeroed buffer: 16 KB of it was 12 KB of RSS per client.)

use std::io;
use std::pin::Pin;
use std::task::{ready, Context, Poll};
use tokio::io::{AsyncBufRead, AsyncRead, ReadBuf};

pub struct GrowingReader<S> {
    inner: S,
    /// `buf[pos..]` is what has been read and not consumed; the capacity is the buffer's size.
    buf: Vec<u8>,
    pos: usize,
    max: usize,
}

impl<S: AsyncRead + Unpin> GrowingReader<S> {
    pub fn new(inner: S, initial: usize, max: usize) -> Self {
        GrowingReader {
            inner,
            buf: Vec::with_capacity(initial.max(1)),
            pos: 0,
            max: max.max(initial),
        }
    }

    pub fn get_ref(&self) -> &S {
        &self.inner
    }

    pub fn get_mut(&mut self) -> &mut S {
        &mut self.inner
    }

    /// What has been read and not consumed.
    pub fn buffer(&self) -> &[u8] {
        &self.buf[self.pos..]
    }

    /// Reads into the buffer when it is empty; a read that fills all of it may have left more
    /// behind, so the buffer doubles (up to `max`) for the next one.
    fn poll_fill(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        if self.pos < self.buf.len() {
            return Poll::Ready(Ok(()));
        }
        self.buf.clear();
        self.pos = 0;
        let capacity = self.buf.capacity();
        let mut read = ReadBuf::uninit(self.buf.spare_capacity_mut());
        ready!(Pin::new(&mut self.inner).poll_read(cx, &mut read))?;
        let n = read.filled().len();
        // SAFETY: `poll_read` initialised the first `n` bytes of the spare capacity.
        unsafe { self.buf.set_len(n) };
        if n == capacity && capacity < self.max {
            self.buf.reserve_exact(capacity.min(self.max - capacity));
        }
        Poll::Ready(Ok(()))
    }
}

impl<S: AsyncRead + Unpin> AsyncBufRead for GrowingReader<S> {
    fn poll_fill_buf(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<&[u8]>> {
        let me = self.get_mut();
        ready!(me.poll_fill(cx))?;
        Poll::Ready(Ok(&me.buf[me.pos..]))
    }

    fn consume(self: Pin<&mut Self>, amt: usize) {
        let me = self.get_mut();
        me.pos = (me.pos + amt).min(me.buf.len());
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for GrowingReader<S> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        out: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let me = self.get_mut();
        // A large read into an empty buffer goes straight through, as tokio's BufReader does.
        if me.pos >= me.buf.len() && out.remaining() >= me.buf.capacity() {
            me.buf.clear();
            me.pos = 0;
            return Pin::new(&mut me.inner).poll_read(cx, out);
        }
        ready!(me.poll_fill(cx))?;
        let available = &me.buf[me.pos..];
        let n = available.len().min(out.remaining());
        out.put_slice(&available[..n]);
        me.pos += n;
        Poll::Ready(Ok(()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt};

    #[tokio::test]
    async fn reads_everything_in_order_and_grows_only_while_reads_fill_it() {
        let (mut tx, rx) = tokio::io::duplex(1 << 20);
        let data: Vec<u8> = (0..200_000u32).map(|i| (i % 251) as u8).collect();
        tx.write_all(&data).await.unwrap();
        drop(tx);
        let mut r = GrowingReader::new(rx, 4096, 65536);
        let mut got = Vec::new();
        // Mixed: buffered line-ish reads, consumes, and plain reads.
        let mut small = [0u8; 100];
        r.read_exact(&mut small).await.unwrap();
        got.extend_from_slice(&small);
        loop {
            let chunk = r.fill_buf().await.unwrap();
            if chunk.is_empty() {
                break;
            }
            let n = chunk.len().min(777);
            got.extend_from_slice(&chunk[..n]);
            r.consume(n);
        }
        assert_eq!(got, data);
        assert!(
            r.buf.capacity() > 4096 && r.buf.capacity() <= 65536,
            "{}",
            r.buf.capacity()
        );
    }

    #[tokio::test]
    async fn a_quiet_client_keeps_its_small_buffer() {
        let (mut tx, rx) = tokio::io::duplex(1024);
        let mut r = GrowingReader::new(rx, 4096, 65536);
        for _ in 0..100 {
            tx.write_all(b"+OK\r\n").await.unwrap();
            let mut line = Vec::new();
            r.read_until(b'\n', &mut line).await.unwrap();
            assert_eq!(line, b"+OK\r\n");
        }
        assert_eq!(r.buf.capacity(), 4096);
    }
}
