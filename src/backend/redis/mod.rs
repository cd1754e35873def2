//! The redis backend: RESP2 over tokio TCP (optionally TLS), one connection per client (as
//! redis-benchmark's `-c`), pipelines and MULTI/EXEC transactions written in one go.
//! Credentials come from the environment or the credentials file (`RUNNER_REDIS_USERNAME`, `RUNNER_REDIS_PASSWORD`)
//! and are never stored.

mod read_buffer;
mod resp;

use super::{Backend, BackendClient, BackendInfo, ErrorKind, OpError, Outcome, Payload};
use crate::backend::net::{Deadline, Stream};
use crate::backend::tls::TlsOptions;
use crate::backend::ClientOptions;
use crate::ops::{CustomCommand, KvCommand, OpSpec};
use read_buffer::GrowingReader;
use resp::{
    parse_reply, push_command, push_custom, KeyedCommands, ReadError, Reply, MAX_REPLY_BYTES,
};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::io::AsyncBufReadExt;
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;

pub const DEFAULT_HOST: &str = "127.0.0.1:6379";

pub struct Settings {
    hosts: Vec<String>,
    next_host: AtomicUsize,
    username: Option<String>,
    password: Option<String>,
    db: Option<u32>,
    timeout: Duration,
    tls: Option<Tls>,
    /// Clients connected now; while fewer than `cores`, a client waiting for its reply
    /// busy-polls the socket instead of sleeping in the reactor (see `spin_until_readable`).
    live_clients: AtomicUsize,
    /// The cores, or 0 with `busy_poll:false`.
    cores: usize,
}

struct Tls {
    connector: tokio_rustls::TlsConnector,
    options: TlsOptions,
}

impl Settings {
    /// Hosts (`host:port`, or `rediss://host:port` for TLS) and client options; credentials
    /// and the database number from the environment.
    pub fn new(hosts: Vec<String>, mut options: ClientOptions) -> Result<Settings, String> {
        let env = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
        let db = match env("RUNNER_REDIS_DB") {
            Some(v) => Some(
                v.parse()
                    .map_err(|_| format!("RUNNER_REDIS_DB=`{v}` is not a database number"))?,
            ),
            None => None,
        };
        let hosts = if hosts.is_empty() {
            vec![DEFAULT_HOST.to_string()]
        } else {
            hosts
        };
        if let Some(h) = hosts.iter().find(|h| h.contains('@')) {
            return Err(format!(
                "--target-hosts: `{}` must not carry credentials; they come from RUNNER_REDIS_USERNAME and RUNNER_REDIS_PASSWORD (the environment or the credentials file)",
                super::masked_host(h)
            ));
        }
        let any_rediss = hosts.iter().any(|h| h.starts_with("rediss://"));
        let hosts: Vec<String> = hosts
            .iter()
            .map(|h| {
                h.trim_start_matches("rediss://")
                    .trim_start_matches("redis://")
                    .trim_end_matches('/')
                    .to_string()
            })
            .collect();
        let tls_on = options.bool("tls")?.unwrap_or(any_rediss);
        let tls_options = TlsOptions {
            verify: options.bool("verify_certs")?.unwrap_or(true),
            ca_file: options.string("tls_ca_file").map(Into::into),
            cert_file: options.string("tls_cert_file").map(Into::into),
            key_file: options.string("tls_key_file").map(Into::into),
            server_name: options.string("tls_server_name"),
        };
        let timeout = options.secs("timeout")?;
        let busy_poll = options.bool("busy_poll")?.unwrap_or(true);
        options.finish("redis")?;
        let tls = if tls_on {
            let config = crate::backend::tls::client_config(&tls_options)?;
            Some(Tls {
                connector: tokio_rustls::TlsConnector::from(config),
                options: tls_options,
            })
        } else {
            None
        };
        let env_timeout = match env("RUNNER_REDIS_TIMEOUT_SECS") {
            Some(v) => {
                let secs: f64 = v.parse().map_err(|_| {
                    format!("RUNNER_REDIS_TIMEOUT_SECS=`{v}` is not a number of seconds")
                })?;
                Some(
                    crate::units::duration_from_secs(secs)
                        .map_err(|m| format!("RUNNER_REDIS_TIMEOUT_SECS: {m}"))?,
                )
                .filter(|d| !d.is_zero())
            }
            None => None,
        };
        Ok(Settings {
            hosts,
            next_host: AtomicUsize::new(0),
            username: options.credentials.get("RUNNER_REDIS_USERNAME"),
            password: options.credentials.get("RUNNER_REDIS_PASSWORD"),
            db,
            timeout: timeout.or(env_timeout).unwrap_or(Duration::from_secs(10)),
            tls,
            live_clients: AtomicUsize::new(0),
            cores: if busy_poll {
                std::thread::available_parallelism().map_or(1, |n| n.get())
            } else {
                0
            },
        })
    }
}

pub struct RedisBackend {
    settings: Arc<Settings>,
    version: String,
}

pub struct Prepared {
    transaction: bool,
    custom: Option<Arc<CustomCommand>>,
}

const KV_ONLY: &str =
    "the redis backend runs key-value operations (get, put, delete, incr, kv-mix, command)";

fn io_error(host: &str, e: std::io::Error) -> OpError {
    let kind = if e.kind() == std::io::ErrorKind::TimedOut {
        ErrorKind::Timeout
    } else {
        ErrorKind::Connection
    };
    OpError::new(kind, format!("redis at {host}: {e}"))
}

fn read_error(host: &str, e: ReadError) -> OpError {
    match e {
        ReadError::Closed => OpError::new(
            ErrorKind::Connection,
            format!("redis at {host} closed the connection"),
        ),
        ReadError::Protocol(m) => OpError::new(
            ErrorKind::Protocol,
            format!("redis at {host}: {m} (is it a Redis server?)"),
        ),
    }
}

impl RedisBackend {
    /// Connects once to each host to check the server and read its version; says clearly
    /// when it cannot.
    pub async fn connect_checked(settings: Settings) -> Result<RedisBackend, OpError> {
        let settings = Arc::new(settings);
        let mut version = String::new();
        for host in &settings.hosts {
            let mut c = RedisClient::open(&settings, host).await?;
            version = tokio::time::timeout(settings.timeout, c.server_version())
                .await
                .map_err(|_| {
                    OpError::new(
                        ErrorKind::Timeout,
                        format!(
                            "redis at {host}: no answer to PING/INFO within {:?}",
                            settings.timeout
                        ),
                    )
                })??;
        }
        Ok(RedisBackend { settings, version })
    }
}

impl Backend for RedisBackend {
    type Client = RedisClient;
    type Prepared = Prepared;

    fn info(&self) -> BackendInfo {
        let mut details = serde_json::Map::new();
        details.insert("protocol".into(), "RESP2".into());
        details.insert("hosts".into(), self.settings.hosts.clone().into());
        // Whether a lone client busy-polls for replies changes what its latency includes.
        details.insert("busy_poll_below_clients".into(), self.settings.cores.into());
        if let Some(tls) = &self.settings.tls {
            details.insert("tls".into(), true.into());
            details.insert("verify_certs".into(), tls.options.verify.into());
        }
        BackendInfo {
            kind: "redis".into(),
            version: self.version.clone(),
            details,
        }
    }

    async fn connect(&self) -> Result<RedisClient, OpError> {
        let i = self.settings.next_host.fetch_add(1, Ordering::Relaxed) % self.settings.hosts.len();
        let host = self.settings.hosts[i].clone();
        RedisClient::open(&self.settings, &host).await
    }

    /// INFO of each host, summed, on connections of their own.
    async fn server_snapshot(
        &self,
    ) -> Option<Result<crate::backend::server_stats::ServerSnapshot, String>> {
        let read = async {
            let mut total = crate::backend::server_stats::ServerSnapshot::default();
            for host in &self.settings.hosts {
                let mut c = RedisClient::open(&self.settings, host)
                    .await
                    .map_err(|e| e.message)?;
                let text = tokio::time::timeout(self.settings.timeout, c.info(b"default"))
                    .await
                    .map_err(|_| {
                        format!(
                            "redis at {host}: no answer to INFO within {:?}",
                            self.settings.timeout
                        )
                    })?
                    .map_err(|e| e.message)?
                    .ok_or_else(|| format!("redis at {host} refuses INFO"))?;
                let one = crate::backend::server_stats::from_redis_info(&text);
                for (k, v) in one.counters {
                    *total.counters.entry(k).or_insert(0.0) += v;
                }
                for (k, v) in one.gauges {
                    *total.gauges.entry(k).or_insert(0.0) += v;
                }
            }
            Ok(total)
        };
        Some(read.await)
    }

    fn cannot_run(op: &OpSpec) -> Option<String> {
        match op {
            OpSpec::Kv(_) | OpSpec::Sleep(_) => None,
            _ => Some(KV_ONLY.into()),
        }
    }

    fn prepare(&self, op: &OpSpec) -> Result<Prepared, OpError> {
        match op {
            OpSpec::Kv(spec) => Ok(Prepared {
                transaction: spec.transaction.is_some(),
                custom: spec.custom.clone(),
            }),
            _ => Err(OpError::new(ErrorKind::BadRequest, KV_ONLY)),
        }
    }
}

pub struct RedisClient {
    settings: Arc<Settings>,
    host: String,
    /// Writes go straight through to the stream (`get_mut`); reads are buffered.
    conn: GrowingReader<Stream>,
    out: Vec<u8>,
    keyed: KeyedCommands,
    line: Vec<u8>,
    /// After a timeout or a broken connection the stream is out of step: reconnect first.
    broken: bool,
    /// The reply deadline, kept across operations.
    deadline: Deadline,
}

impl Drop for RedisClient {
    fn drop(&mut self) {
        self.settings.live_clients.fetch_sub(1, Ordering::Relaxed);
    }
}

/// A client's read buffer to start with; it grows (to `MAX_READ_BUFFER`) while reads fill it.
const READ_BUFFER: usize = 4 * 1024;
const MAX_READ_BUFFER: usize = 64 * 1024;

/// How long a client busy-polls for its reply before it waits in the reactor.
const SPIN: Duration = Duration::from_micros(200);

impl RedisClient {
    /// With a core to spare per client, waits for the reply by polling the socket: waking a
    /// thread asleep in epoll costs tens of µs on a VM (36-50 µs here, BENCHMARKS.md), most of
    /// a loopback round trip. Plain TCP only; never longer than [`SPIN`].
    fn spin_until_readable(&self) {
        use std::os::fd::AsRawFd;
        let Stream::Plain(tcp) = self.conn.get_ref() else {
            return;
        };
        if self.settings.live_clients.load(Ordering::Relaxed) >= self.settings.cores {
            return;
        }
        let fd = tcp.as_raw_fd();
        let start = std::time::Instant::now();
        let mut byte = 0u8;
        loop {
            for _ in 0..16 {
                // SAFETY: a one-byte peek into a live local; the fd belongs to `tcp`.
                let n = unsafe {
                    libc::recv(
                        fd,
                        (&mut byte as *mut u8).cast(),
                        1,
                        libc::MSG_PEEK | libc::MSG_DONTWAIT,
                    )
                };
                if n >= 0
                    || std::io::Error::last_os_error().kind() != std::io::ErrorKind::WouldBlock
                {
                    return;
                }
                std::hint::spin_loop();
            }
            if start.elapsed() >= SPIN {
                return;
            }
        }
    }

    async fn open(settings: &Arc<Settings>, host: &str) -> Result<RedisClient, OpError> {
        let stream = tokio::time::timeout(settings.timeout, TcpStream::connect(host))
            .await
            .map_err(|_| {
                OpError::new(
                    ErrorKind::Timeout,
                    format!(
                        "redis at {host}: no connection within {:?}",
                        settings.timeout
                    ),
                )
            })?
            .map_err(|e| {
                let mut err = io_error(host, e);
                err.message
                    .push_str(" (is redis-server running? name it with --target-hosts HOST:PORT)");
                err
            })?;
        stream.set_nodelay(true).map_err(|e| io_error(host, e))?;
        let stream = match &settings.tls {
            None => Stream::Plain(stream),
            Some(tls) => {
                let name = crate::backend::tls::server_name(&tls.options, host)
                    .map_err(|m| OpError::new(ErrorKind::BadRequest, m))?;
                let handshake =
                    tokio::time::timeout(settings.timeout, tls.connector.connect(name, stream))
                        .await;
                match handshake {
                    Ok(Ok(s)) => Stream::Tls(Box::new(s)),
                    Ok(Err(e)) => return Err(OpError::new(ErrorKind::Connection, format!("redis at {host}: TLS handshake failed: {e} (see the tls_* and verify_certs client options)"))),
                    Err(_) => return Err(OpError::new(ErrorKind::Timeout, format!("redis at {host}: no TLS handshake within {:?} (does the server speak TLS on this port?)", settings.timeout))),
                }
            }
        };
        let mut c = RedisClient {
            settings: settings.clone(),
            host: host.to_string(),
            // Sized for what a client needs, at 10,000 clients: a pipeline's replies fit, a
            // large value is read straight into its own buffer, and requests grow `out`.
            conn: GrowingReader::new(stream, READ_BUFFER, MAX_READ_BUFFER),
            out: Vec::with_capacity(1024),
            keyed: KeyedCommands::default(),
            line: Vec::with_capacity(256),
            broken: false,
            deadline: Deadline::default(),
        };
        settings.live_clients.fetch_add(1, Ordering::Relaxed);
        // A server that accepts the connection and never answers AUTH or SELECT must not hold
        // the race (or a reconnect) forever.
        tokio::time::timeout(settings.timeout, c.handshake())
            .await
            .map_err(|_| {
                OpError::new(
                    ErrorKind::Timeout,
                    format!(
                        "redis at {host}: no answer to AUTH/SELECT within {:?}",
                        settings.timeout
                    ),
                )
            })??;
        Ok(c)
    }

    async fn handshake(&mut self) -> Result<(), OpError> {
        let s = self.settings.clone();
        if let Some(password) = &s.password {
            self.out.clear();
            match &s.username {
                Some(user) => push_command(
                    &mut self.out,
                    &[b"AUTH", user.as_bytes(), password.as_bytes()],
                ),
                None => push_command(&mut self.out, &[b"AUTH", password.as_bytes()]),
            }
            if let Reply::Error(e) = self.round_trip(1).await? {
                // The password itself never goes into the message.
                return Err(OpError::new(ErrorKind::ErrorReply, format!("redis at {}: AUTH failed: {e} (check RUNNER_REDIS_USERNAME / RUNNER_REDIS_PASSWORD)", self.host)));
            }
        }
        if let Some(db) = s.db {
            self.out.clear();
            let db = db.to_string();
            push_command(&mut self.out, &[b"SELECT", db.as_bytes()]);
            if let Reply::Error(e) = self.round_trip(1).await? {
                return Err(OpError::new(
                    ErrorKind::ErrorReply,
                    format!("redis at {}: SELECT {db} failed: {e}", self.host),
                ));
            }
        }
        Ok(())
    }

    async fn server_version(&mut self) -> Result<String, OpError> {
        self.out.clear();
        push_command(&mut self.out, &[b"PING"]);
        if let Reply::Error(e) = self.round_trip(1).await? {
            return Err(OpError::new(
                ErrorKind::ErrorReply,
                format!("redis at {}: PING failed: {e}", self.host),
            ));
        }
        Ok(match self.info(b"server").await? {
            Some(text) => text
                .lines()
                .find_map(|l| l.strip_prefix("redis_version:"))
                .map(|v| format!("redis {}", v.trim()))
                .unwrap_or_else(|| "unknown".into()),
            // INFO refused (an ACL without it): the version is unknown, the server is there.
            None => "unknown".into(),
        })
    }

    /// `INFO section` read in full (None when the server refuses it). Not a race operation:
    /// it runs before the race and around trials, on a connection of its own.
    async fn info(&mut self, section: &[u8]) -> Result<Option<String>, OpError> {
        self.out.clear();
        push_command(&mut self.out, &[b"INFO", section]);
        self.send().await?;
        // Bounded: a header line of at most 32 bytes, a body of at most 1 MiB (INFO is a few
        // KB), whatever length the server declares.
        const MAX_INFO: usize = 1 << 20;
        let mut header = Vec::new();
        tokio::io::AsyncBufReadExt::read_until(
            &mut tokio::io::AsyncReadExt::take(&mut self.conn, 32),
            b'\n',
            &mut header,
        )
        .await
        .map_err(|e| io_error(&self.host, e))?;
        let header = String::from_utf8_lossy(&header);
        if header.starts_with('-') {
            return Ok(None);
        }
        let len = match header
            .trim()
            .strip_prefix('$')
            .and_then(|n| n.parse::<usize>().ok())
        {
            Some(len) if len <= MAX_INFO => len,
            _ => {
                return Err(read_error(
                    &self.host,
                    ReadError::Protocol(format!(
                        "INFO answered {:?}, not a bulk string of at most {MAX_INFO} bytes",
                        header.trim()
                    )),
                ))
            }
        };
        let mut body = vec![0u8; len + 2];
        tokio::io::AsyncReadExt::read_exact(&mut self.conn, &mut body)
            .await
            .map_err(|e| io_error(&self.host, e))?;
        Ok(Some(String::from_utf8_lossy(&body).into_owned()))
    }

    /// Writes `out`.
    async fn send(&mut self) -> Result<(), OpError> {
        // Every earlier reply has been read and nothing is asked yet: the socket is empty, so
        // its stale readiness would only cost an EAGAIN read before the reactor wait.
        if self.conn.buffer().is_empty() {
            self.conn.get_ref().forget_readiness();
        }
        let stream = self.conn.get_mut();
        stream
            .write_all(&self.out)
            .await
            .map_err(|e| io_error(&self.host, e))?;
        // TLS buffers the record until flushed; a plain socket's flush does nothing.
        stream.flush().await.map_err(|e| io_error(&self.host, e))
    }

    /// Sends `out` and reads `replies` replies: the first error reply, if any, and how many
    /// replies to a GET were values (not nil); `commands`, when given, is the command of each
    /// reply. Replies after an error are still read so that the connection stays in step.
    async fn exchange(
        &mut self,
        replies: usize,
        commands: Option<&[KvCommand]>,
    ) -> Result<(Option<String>, u64), OpError> {
        self.send().await?;
        let (mut error, mut values, mut left) = (None, 0, replies);
        // Parse every complete reply in the buffered bytes before waiting for more: one wakeup
        // serves a whole pipeline. A reply split across reads is reassembled in `line`.
        self.line.clear();
        if self.conn.buffer().is_empty() {
            self.spin_until_readable();
        }
        while left > 0 {
            let chunk = self
                .conn
                .fill_buf()
                .await
                .map_err(|e| io_error(&self.host, e))?;
            if chunk.is_empty() {
                return Err(read_error(&self.host, ReadError::Closed));
            }
            let (data, from_line): (&[u8], bool) = if self.line.is_empty() {
                (chunk, false)
            } else {
                if self.line.len() + chunk.len() > MAX_REPLY_BYTES + 64 {
                    // A reply that never ends (a declared length it never meets, a line with no
                    // CRLF) stops here, not at the memory limit.
                    self.broken = true;
                    return Err(read_error(
                        &self.host,
                        ReadError::Protocol(format!("a reply longer than {MAX_REPLY_BYTES} bytes")),
                    ));
                }
                self.line.extend_from_slice(chunk);
                if !chunk.contains(&b'\n') {
                    // Every RESP element ends with CRLF: without a new line feed nothing more is
                    // complete, and re-parsing a long partial reply per read would be quadratic.
                    let n = chunk.len();
                    self.conn.consume(n);
                    continue;
                }
                (&self.line, true)
            };
            let (mut used, chunk_len) = (0, chunk.len());
            while left > 0 {
                match parse_reply(&data[used..]).map_err(|e| read_error(&self.host, e))? {
                    Some((n, reply)) => {
                        used += n;
                        left -= 1;
                        match reply {
                            Reply::Error(e) => {
                                error.get_or_insert(e);
                            }
                            Reply::Value => {
                                let i = replies - left - 1;
                                values += u64::from(
                                    commands.is_some_and(|c| c.get(i) == Some(&KvCommand::Get)),
                                );
                            }
                            Reply::Nil => {}
                        }
                    }
                    None => break,
                }
            }
            if from_line {
                // All of the chunk now lives in `line`, parsed or kept for the next read.
                self.line.drain(..used);
                self.conn.consume(chunk_len);
            } else if left == 0 {
                self.conn.consume(used);
            } else {
                self.line.extend_from_slice(&chunk[used..]);
                self.conn.consume(chunk_len);
            }
        }
        Ok((error, values))
    }

    async fn round_trip(&mut self, replies: usize) -> Result<Reply, OpError> {
        Ok(match self.exchange(replies, None).await? {
            (Some(e), _) => Reply::Error(e),
            _ => Reply::Value,
        })
    }

    /// Encodes one operation; returns how many replies it will get.
    fn encode(
        &mut self,
        transaction: bool,
        custom: Option<&CustomCommand>,
        keys: &[u8],
        key_size: usize,
        value: &[u8],
        commands: &[KvCommand],
    ) -> usize {
        self.out.clear();
        if transaction {
            push_command(&mut self.out, &[b"MULTI"]);
        }
        self.keyed.prepare(key_size, value);
        for (key, &command) in keys.chunks_exact(key_size).zip(commands) {
            match (command, custom) {
                (KvCommand::Command, Some(c)) => push_custom(&mut self.out, c, key, value),
                (KvCommand::Command, None) => push_command(&mut self.out, &[b"PING"]),
                _ => self.keyed.push(&mut self.out, command, key),
            }
        }
        if transaction {
            push_command(&mut self.out, &[b"EXEC"]);
            commands.len() + 2
        } else {
            commands.len()
        }
    }
}

impl BackendClient for RedisClient {
    type Prepared = Prepared;

    async fn execute(&mut self, op: &Prepared, payload: &Payload<'_>) -> Result<Outcome, OpError> {
        let (transaction, custom) = (op.transaction, op.custom.as_deref());
        let Payload::Keys {
            keys,
            key_size,
            value,
            commands,
        } = payload
        else {
            return Err(OpError::new(
                ErrorKind::Internal,
                "key-value operation without keys",
            ));
        };
        if self.broken {
            let fresh = RedisClient::open(&self.settings, &self.host).await?;
            *self = fresh;
        }
        let replies = self.encode(transaction, custom, keys, *key_size, value, commands);
        // In a transaction EXEC's array holds the GET replies: hits are counted outside one.
        let gets = if transaction { None } else { Some(*commands) };
        let timeout = self.settings.timeout;
        // Until the replies are all read the connection is out of step, also if this future is
        // dropped midway.
        self.broken = true;
        let mut deadline = std::mem::take(&mut self.deadline);
        let result = deadline
            .within(timeout, self.exchange(replies, gets))
            .await
            .unwrap_or_else(|| {
                Err(OpError::new(
                    ErrorKind::Timeout,
                    format!("redis at {}: no reply within {timeout:?}", self.host),
                ))
            });
        self.deadline = deadline;
        self.broken = result.is_err();
        match result {
            Ok((Some(e), _)) => Err(OpError::new(ErrorKind::ErrorReply, e)),
            Ok((None, hits)) => Ok(Outcome {
                units: 1,
                hits,
                requests: commands.len() as u64,
                ..Outcome::default()
            }),
            Err(e) => Err(e),
        }
    }
}
