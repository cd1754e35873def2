//! The engine's one error type: what went wrong, in the terms of Elasticsearch's answers.

/// What kind of failure: the REST layer turns each into its status, a caller into its own kinds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// The index, alias or document does not exist (404).
    NotFound,
    /// The request is malformed or asks for what the engine does not run (400).
    BadRequest,
    /// The engine failed while serving the request (500).
    Internal,
    /// A key-value command the store refused (as Redis replies `-ERR ...`).
    ErrorReply,
    /// The index is closed (`_close`): nothing reads or writes it until `_open` (400).
    Closed,
    /// The request cannot run on this index's mapping (Elasticsearch's `query_shard_exception`):
    /// a search of several indices fails this index's shard alone (400 where all fail).
    QueryShard,
}

#[derive(Debug, Clone, thiserror::Error)]
#[error("{kind:?}: {message}")]
pub struct Error {
    pub kind: ErrorKind,
    pub message: String,
}

impl Error {
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Error {
            kind,
            message: message.into(),
        }
    }
}
