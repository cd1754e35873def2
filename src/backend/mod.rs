//! The systems under test, one module per backend behind one trait. The driver is generic
//! over [`Backend`], so the per-operation call is static dispatch with no allocation.

pub mod embedded;
mod options;
pub mod redis;
pub mod tls;

pub use options::ClientOptions;

use crate::ops::{KvCommand, OpSpec};
use serde::{Deserialize, Serialize};
use std::future::Future;

/// Which backend a race runs against.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum BackendKind {
    /// In-process: tantivy for documents and search, an in-memory store for key-value work.
    Embedded,
    /// A Redis-protocol server (RESP2 over TCP), for key-value operations.
    Redis,
}

impl BackendKind {
    pub fn as_str(self) -> &'static str {
        match self {
            BackendKind::Embedded => "embedded",
            BackendKind::Redis => "redis",
        }
    }
}

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
}

impl ErrorKind {
    pub const ALL: [ErrorKind; 8] = [
        ErrorKind::NotFound,
        ErrorKind::BadRequest,
        ErrorKind::ItemFailures,
        ErrorKind::Connection,
        ErrorKind::Timeout,
        ErrorKind::Internal,
        ErrorKind::ErrorReply,
        ErrorKind::Protocol,
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
        }
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
        OpError { kind, message: message.into() }
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
}

/// Per-operation input that changes from call to call; the driver fills it without allocating.
pub enum Payload<'a> {
    None,
    /// NDJSON documents, one per line.
    Documents { body: &'a str, count: u64 },
    /// Key-value keys (and value for writes), each `key_size` bytes, concatenated, and the
    /// command of each key (all the same unless the operation is a mix).
    Keys { keys: &'a [u8], key_size: usize, value: &'a [u8], commands: &'a [KvCommand] },
}

/// Facts about the backend recorded with each race.
#[derive(Debug, Clone, Serialize, Deserialize, Default)]
pub struct BackendInfo {
    pub kind: String,
    pub version: String,
    pub details: serde_json::Map<String, serde_json::Value>,
}

/// A system under test. `prepare` turns an operation into whatever the backend wants to run
/// per call (a compiled query, a serialised body), once per task, outside the measured loop.
pub trait Backend: Send + Sync + 'static {
    type Client: BackendClient<Prepared = Self::Prepared>;
    type Prepared: Send + Sync + 'static;

    fn info(&self) -> BackendInfo;

    fn connect(&self) -> impl Future<Output = Result<Self::Client, OpError>> + Send;

    fn prepare(&self, op: &OpSpec) -> Result<Self::Prepared, OpError>;
}

/// One client's connection (or handle) to the backend; each driver client owns one.
pub trait BackendClient: Send + 'static {
    type Prepared: Send + Sync + 'static;

    fn execute(
        &mut self,
        op: &Self::Prepared,
        payload: &Payload<'_>,
    ) -> impl Future<Output = Result<Outcome, OpError>> + Send;
}
