//! The systems under test, one module per backend behind one trait. The driver is generic
//! over [`Backend`], so the per-operation call is static dispatch with no allocation.

pub mod credentials;
pub mod elasticsearch;
pub mod embedded;
pub mod net;
mod options;
pub mod redis;
#[cfg(test)]
pub mod scripted;
pub mod server_stats;
pub mod tls;

pub use options::{read_bounded, ClientOptions};

use crate::ops::{KvCommand, OpSpec};
use serde::{Deserialize, Serialize};
use std::future::Future;
use std::sync::Arc;

/// Which backend a race runs against.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum BackendKind {
    /// In-process: tantivy for documents and search, an in-memory store for key-value work.
    Embedded,
    /// A Redis-protocol server (RESP2 over TCP), for key-value operations.
    Redis,
    /// An Elasticsearch or OpenSearch cluster over its REST API (also `runner serve`).
    Elasticsearch,
}

impl BackendKind {
    pub const ALL: [BackendKind; 3] = [
        BackendKind::Embedded,
        BackendKind::Redis,
        BackendKind::Elasticsearch,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            BackendKind::Embedded => "embedded",
            BackendKind::Redis => "redis",
            BackendKind::Elasticsearch => "elasticsearch",
        }
    }

    fn cannot_run(self, op: &OpSpec) -> Option<String> {
        // The track's Python: what its first draw became is checked as any operation; a custom
        // runner is handed an Elasticsearch client.
        if let OpSpec::Python(p) = op {
            if p.runner.is_some() && self == BackendKind::Redis {
                return Some("a custom runner is handed an Elasticsearch client, which a Redis server does not answer".into());
            }
            return p.first.as_deref().and_then(|f| self.cannot_run(f));
        }
        match self {
            BackendKind::Embedded => embedded::EmbeddedBackend::cannot_run(op),
            BackendKind::Redis => redis::RedisBackend::cannot_run(op),
            BackendKind::Elasticsearch => elasticsearch::ElasticsearchBackend::cannot_run(op),
        }
    }

    /// What the indices a race creates decide (their mappings), checked before the race:
    /// `created` are the create-index specs of the tasks before this one.
    pub fn check_against(
        self,
        op: &OpSpec,
        created: &[crate::ops::IndexSpec],
    ) -> Result<(), String> {
        if let OpSpec::Python(p) = op {
            return p
                .first
                .as_deref()
                .map_or(Ok(()), |f| self.check_against(f, created));
        }
        match self {
            BackendKind::Embedded => embedded::cannot_run_on(op, created).map_or(Ok(()), Err),
            _ => Ok(()),
        }
    }

    /// The one capability check, run for every task before a race starts: why this backend
    /// cannot run `op`, and which backends can.
    pub fn check(self, op: &OpSpec) -> Result<(), String> {
        let Some(why) = self.cannot_run(op) else {
            return Ok(());
        };
        let others: Vec<String> = Self::ALL
            .iter()
            .filter(|k| **k != self && k.cannot_run(op).is_none())
            .map(|k| format!("--backend {}", k.as_str()))
            .collect();
        match others.as_slice() {
            [] => Err(why),
            _ => Err(format!("{why}; it runs on {}", others.join(" or "))),
        }
    }
}

/// A host as given, safe to print: any `user:password@` in it is masked, so that a host the
/// runner cannot use never echoes a credential.
pub fn masked_host(h: &str) -> String {
    match h.rfind('@') {
        Some(at) => {
            let start = h.find("://").map_or(0, |i| i + 3).min(at);
            format!("{}***{}", &h[..start], &h[at..])
        }
        None => h.to_string(),
    }
}

/// Where a race's backend is: its kind, hosts and client options, and the most clients it
/// will hold at once (network clients need a file descriptor each).
pub struct Target {
    pub kind: BackendKind,
    pub hosts: Vec<String>,
    pub options: ClientOptions,
    pub max_clients: u64,
    /// The embedded engine's storage, and the results home its directories go under.
    pub engine_storage: embedded::storage::EngineStorage,
    pub home: std::path::PathBuf,
}

/// Why a backend could not be opened.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    /// The hosts or client options are wrong: the user's input.
    #[error("{0}")]
    Settings(String),
    /// The backend did not answer, or not as expected; or the machine's limits stop it.
    #[error("{0}")]
    Unreachable(String),
    /// Ctrl-C or SIGTERM while checking the backend, before anything was measured.
    #[error("interrupted while checking the backend, before the race started")]
    Interrupted,
}

/// What to do with a backend once it is open. The driver is generic over [`Backend`], so
/// the caller's work is handed in and runs with the concrete type (static dispatch).
pub trait WithBackend {
    type Output;
    fn run<B: Backend>(self, backend: Arc<B>) -> impl Future<Output = Self::Output>;
}

/// Opens the backend `target` names (checking a network one answers, which `cancel` cuts
/// short) and runs `with` on it.
pub async fn open<W: WithBackend>(
    target: Target,
    cancel: &tokio_util::sync::CancellationToken,
    with: W,
) -> Result<W::Output, OpenError> {
    async fn checked<B>(
        check: impl Future<Output = Result<B, OpError>>,
        cancel: &tokio_util::sync::CancellationToken,
    ) -> Result<B, OpenError> {
        tokio::select! {
            r = check => r.map_err(|e| OpenError::Unreachable(e.message)),
            _ = cancel.cancelled() => Err(OpenError::Interrupted),
        }
    }
    match target.kind {
        BackendKind::Embedded => {
            // A throttled client's precise timer is a descriptor; without one it spins (said).
            let _ = raise_open_files(target.max_clients.saturating_mul(2) + 64);
            let engine =
                embedded::EmbeddedBackend::with_storage(target.engine_storage, &target.home)
                    .map_err(|e| {
                        OpenError::Settings(format!(
                            "cannot create the engine's directory under {}: {e} (--engine-storage ram keeps indices in memory)",
                            target.home.join("engine").display()
                        ))
                    })?;
            Ok(with.run(Arc::new(engine)).await)
        }
        BackendKind::Redis => {
            ensure_open_files(target.max_clients)?;
            let settings =
                redis::Settings::new(target.hosts, target.options).map_err(OpenError::Settings)?;
            let backend = checked(redis::RedisBackend::connect_checked(settings), cancel).await?;
            Ok(with.run(Arc::new(backend)).await)
        }
        BackendKind::Elasticsearch => {
            ensure_open_files(target.max_clients)?;
            let settings = elasticsearch::Settings::new(target.hosts, target.options)
                .map_err(OpenError::Settings)?;
            let backend = checked(
                elasticsearch::ElasticsearchBackend::connect_checked(settings),
                cancel,
            )
            .await?;
            Ok(with.run(Arc::new(backend)).await)
        }
    }
}

/// Each network client holds a socket: raise the soft open-files limit to fit them, or say
/// clearly that it cannot be raised. A throttled client's precise timer is one more, wanted
/// but not needed (without it the client spins, and says so).
fn ensure_open_files(clients: u64) -> Result<(), OpenError> {
    if raise_open_files(clients.saturating_mul(2) + 64).is_ok() {
        return Ok(());
    }
    let needed = clients + 64;
    raise_open_files(needed).map_err(|hard| match hard {
        Some(hard) => OpenError::Unreachable(format!(
            "{clients} clients need {needed} open files, but the hard limit is {hard} (raise it with `ulimit -Hn` as root, or use fewer clients)"
        )),
        None => OpenError::Unreachable(format!("cannot raise the open-files limit to {needed} for {clients} clients")),
    })
}

/// Raises the soft open-files limit to at least `needed`. On failure returns the hard limit
/// when that is what stands in the way (`None` when the system refused otherwise).
pub(crate) fn raise_open_files(needed: u64) -> Result<(), Option<u64>> {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit/setrlimit only read and write the struct passed in.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) } != 0 || lim.rlim_cur >= needed {
        return Ok(());
    }
    if lim.rlim_max < needed {
        return Err(Some(lim.rlim_max));
    }
    let raised = libc::rlimit {
        rlim_cur: needed.max(lim.rlim_cur),
        rlim_max: lim.rlim_max,
    };
    // SAFETY: as above.
    if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &raised) } != 0 {
        return Err(None);
    }
    Ok(())
}

/// What a backend's `prepare` says of an operation the track's Python drives: the driver runs
/// each of its draws (or its runner), never the operation itself.
pub const PYTHON_RUNS_IT: &str =
    "an operation the track's Python drives is run draw by draw by the driver, not prepared whole";

/// Why an operation failed, as counted in results. Kept small and fixed so that counting
/// is an array index, not a map insert.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, PartialOrd, Ord)]
#[serde(rename_all = "kebab-case")]
pub enum ErrorKind {
    /// The index, key or document does not exist.
    NotFound,
    /// The request was malformed for this backend (bad query, bad document).
    BadRequest,
    /// Some items of a bulk request failed although the request itself succeeded.
    ItemFailures,
    /// Could not connect, or the connection broke.
    Connection,
    Timeout,
    /// The backend failed while serving the request.
    Internal,
    /// The server answered with an error reply (RESP `-ERR ...`).
    ErrorReply,
    /// The server's answer could not be understood.
    Protocol,
    /// The server refused the credentials or the permission (HTTP 401/403).
    Unauthorized,
    /// The server asked the client to slow down (HTTP 429).
    TooManyRequests,
    /// The server failed with an HTTP 5xx status.
    ServerError,
    /// The server answered with a redirect (HTTP 3xx), which is not followed: following would
    /// turn a POST into a body-less GET whose 200 is not the work asked for.
    Redirect,
    /// The answer says the condition the task waits for does not hold (a cluster health below
    /// the status waited for): Rally's runner result with `success: false`.
    Unmet,
}

/// A poll that ended without its condition, as an operation's error.
pub fn poll_error(end: crate::ops::poll::PollEnd) -> OpError {
    match end {
        crate::ops::poll::PollEnd::Failed(m) => OpError::new(ErrorKind::ServerError, m),
        crate::ops::poll::PollEnd::TimedOut(m) => OpError::new(ErrorKind::Timeout, m),
    }
}

impl ErrorKind {
    /// An answer the server gave (a status, an error reply, failed items), as opposed to a
    /// connection that broke, a timeout or an answer that could not be read: Rally's
    /// "non-fatal" errors.
    pub fn is_response(self) -> bool {
        !matches!(
            self,
            ErrorKind::Connection | ErrorKind::Timeout | ErrorKind::Protocol
        )
    }

    pub const ALL: [ErrorKind; 13] = [
        ErrorKind::NotFound,
        ErrorKind::BadRequest,
        ErrorKind::ItemFailures,
        ErrorKind::Connection,
        ErrorKind::Timeout,
        ErrorKind::Internal,
        ErrorKind::ErrorReply,
        ErrorKind::Protocol,
        ErrorKind::Unauthorized,
        ErrorKind::TooManyRequests,
        ErrorKind::ServerError,
        ErrorKind::Redirect,
        ErrorKind::Unmet,
    ];
    pub const COUNT: usize = Self::ALL.len();

    pub fn index(self) -> usize {
        self as usize
    }

    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::NotFound => "not-found",
            ErrorKind::BadRequest => "bad-request",
            ErrorKind::ItemFailures => "item-failures",
            ErrorKind::Connection => "connection",
            ErrorKind::Timeout => "timeout",
            ErrorKind::Internal => "internal",
            ErrorKind::ErrorReply => "error-reply",
            ErrorKind::Protocol => "protocol",
            ErrorKind::Unauthorized => "unauthorized",
            ErrorKind::TooManyRequests => "too-many-requests",
            ErrorKind::ServerError => "server-error",
            ErrorKind::Redirect => "redirect",
            ErrorKind::Unmet => "unmet",
        }
    }
}

impl std::fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The error kind of an HTTP status, or None for success (1xx, 2xx).
pub fn status_error(status: u16) -> Option<ErrorKind> {
    match status {
        0..=299 => None,
        300..=399 => Some(ErrorKind::Redirect),
        401 | 403 => Some(ErrorKind::Unauthorized),
        404 => Some(ErrorKind::NotFound),
        408 => Some(ErrorKind::Timeout),
        429 => Some(ErrorKind::TooManyRequests),
        400..=499 => Some(ErrorKind::BadRequest),
        _ => Some(ErrorKind::ServerError),
    }
}

#[derive(Debug, Clone, thiserror::Error)]
#[error("{kind:?}: {message}")]
pub struct OpError {
    pub kind: ErrorKind,
    pub message: String,
}

impl OpError {
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        OpError {
            kind,
            message: message.into(),
        }
    }
}

/// What a successful operation did, for throughput and consistency checks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Outcome {
    /// Units of throughput: documents accepted for bulk, 1 for other operations.
    pub units: u64,
    /// Total hits of a search (hits.total).
    pub hits: u64,
    /// Items of a bulk request that failed (counted as errors of kind `item-failures`).
    pub failed_items: u64,
    /// Requests (commands) the operation consisted of: a pipeline of N is one operation and
    /// N requests. 0 means one.
    pub requests: u64,
    /// Shards that failed in a search the others answered (Elasticsearch's partial results,
    /// `_shards.failed`): a success, as Rally counts it, and reported.
    pub failed_shards: u64,
}

/// Per-operation input that changes from call to call; the driver fills it without allocating.
pub enum Payload<'a> {
    None,
    /// A bulk request body: NDJSON, an action line before each of `count` documents, and
    /// each (action, document) pair as ranges of it.
    Documents {
        body: &'a str,
        count: u64,
        pairs: crate::corpus::Pairs<'a>,
    },
    /// Key-value keys (and value for writes), each `key_size` bytes, concatenated, and the
    /// command of each key (all the same unless the operation is a mix).
    Keys {
        keys: &'a [u8],
        key_size: usize,
        value: &'a [u8],
        commands: &'a [KvCommand],
    },
    /// The body of this call, drawn from the operation's bindings.
    Body(&'a [u8]),
    /// Which query vector of a vector search this call sends.
    Vector(usize),
}

/// Facts about the backend recorded with each race.
#[derive(Debug, Clone, Serialize, Deserialize, Default)]
pub struct BackendInfo {
    pub kind: String,
    pub version: String,
    pub details: serde_json::Map<String, serde_json::Value>,
}

/// A search with its encoded body read into place; what the conversion added to it (`size`)
/// wins over the body's own.
pub fn with_encoded_body(mut spec: crate::ops::SearchSpec, body: &[u8]) -> Result<OpSpec, OpError> {
    let mut real: serde_json::Map<String, serde_json::Value> = serde_json::from_slice(body)
        .map_err(|e| {
            OpError::new(
                ErrorKind::BadRequest,
                format!("the body is not a JSON object: {e}"),
            )
        })?;
    if let serde_json::Value::Object(added) = std::mem::take(&mut spec.body) {
        real.extend(added);
    }
    spec.body = serde_json::Value::Object(real);
    Ok(OpSpec::Search(spec))
}

/// A system under test. `prepare` turns an operation into whatever the backend wants to run
/// per call (a compiled query, a serialised body), once per task, outside the measured loop.
pub trait Backend: Send + Sync + 'static {
    type Client: BackendClient<Prepared = Self::Prepared>;
    type Prepared: Send + Sync + 'static;

    fn info(&self) -> BackendInfo;

    fn connect(&self) -> impl Future<Output = Result<Self::Client, OpError>> + Send;

    /// Turns `op` into what each call runs. An operation [`Backend::cannot_run`] refuses is
    /// never prepared: the race checks every task first.
    fn prepare(&self, op: &OpSpec) -> Result<Self::Prepared, OpError>;

    /// A search whose body came encoded (drawn by a track's Python): `spec.body` holds what
    /// the conversion added, `body` the drawn body's JSON. A backend that sends bodies as they
    /// are sends these bytes; the others read them first.
    fn prepare_encoded_search(
        &self,
        spec: crate::ops::SearchSpec,
        body: bytes::Bytes,
    ) -> Result<Self::Prepared, OpError> {
        self.prepare(&with_encoded_body(spec, &body)?)
    }

    /// Why this backend can never run `op` (None: it can). It needs no connection, so a track
    /// meant for another backend fails before the race, and the message can name the
    /// backends that would run it ([`BackendKind::check`]).
    fn cannot_run(op: &OpSpec) -> Option<String>;

    /// Descriptors a client opens after `connect`, on its first request (an HTTP client's
    /// connection to each host): the driver leaves room for them in the open-files limit.
    fn descriptors_opened_later(&self) -> u64 {
        0
    }

    /// The engine itself, where the backend is the embedded one: the track's Python runners
    /// reach it through a loopback `runner serve`.
    fn embedded_engine(&self) -> Option<engine::Engine> {
        None
    }

    /// The server's own statistics now (read before and after each trial, off the measured
    /// path); None when the backend has none, an error when it could not be read.
    fn server_snapshot(
        &self,
    ) -> impl Future<Output = Option<Result<server_stats::ServerSnapshot, String>>> + Send {
        std::future::ready(None)
    }
}

/// One client's connection (or handle) to the backend; each driver client owns one.
pub trait BackendClient: Send + 'static {
    type Prepared: Send + Sync + 'static;

    fn execute(
        &mut self,
        op: &Self::Prepared,
        payload: &Payload<'_>,
    ) -> impl Future<Output = Result<Outcome, OpError>> + Send;

    /// Why items of the last bulk request failed, if the backend knows; asked only after an
    /// outcome with `failed_items`, so the reason costs nothing on the success path.
    fn item_failure_reason(&mut self) -> Option<String> {
        None
    }

    /// How many hits of the last search answer are among `truth` (hashed ids, sorted),
    /// counting at most `k` hits; None when the backend cannot read hit ids. Called after each
    /// vector search, so it must not allocate.
    fn hits_among(&mut self, _truth: &[u64], _k: usize) -> Option<u32> {
        None
    }

    /// The ids of the last search answer's hits, in order (off the measured path: an exact
    /// ground truth's pass); false when the backend cannot read them.
    fn last_hit_ids(&mut self, _out: &mut Vec<String>) -> bool {
        false
    }
}
