//! Why a corpus cannot be read, naming the file and the document.

use std::path::PathBuf;

/// Blank lines in a row that a corpus may hold before it is refused: a compressed file of
/// nothing but line breaks (kilobytes that inflate to gigabytes) must not cost minutes.
pub const MAX_BLANK_LINES: u64 = 1_000_000;

#[derive(Debug, thiserror::Error)]
pub enum CorpusError {
    #[error("cannot open corpus file {path}: {source}")]
    Open {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}: document {line}: cannot read: {source} (is the file truncated or compressed with another format than its extension says?)")]
    Read {
        path: PathBuf,
        line: u64,
        source: std::io::Error,
    },
    #[error("{path}: document {line} is not a JSON object (corpora are NDJSON: one JSON document per line)")]
    NotJson { path: PathBuf, line: u64 },
    #[error("{path}: document {line} is longer than 64 MB")]
    LineTooLong { path: PathBuf, line: u64 },
    #[error("{path}: the file holds no documents")]
    Empty { path: PathBuf },
    #[error("{path}: the track declares {declared} documents but the file has {actual}")]
    CountMismatch {
        path: PathBuf,
        declared: u64,
        actual: u64,
    },
    #[error("{path}: line {line} should be the action-and-metadata line of a document (the corpus declares `includes-action-and-meta-data`), such as {{\"index\":{{}}}}")]
    NotAction { path: PathBuf, line: u64 },
    #[error(
        "{path}: the file ends after the action line of document {line}, without the document"
    )]
    ActionWithoutDocument { path: PathBuf, line: u64 },
    #[error("{path}: more than {MAX_BLANK_LINES} blank lines in a row after document {after} (a file of blank lines is no corpus)")]
    Blank { path: PathBuf, after: u64 },
    #[error("{path}: `scale-to` holds its base file in memory, and this one decompresses past {} MB (at document {line}); scale a smaller base, or give the documents as files", crate::corpus::scale::MAX_BASE_BYTES >> 20)]
    ScaleBaseTooLarge { path: PathBuf, line: u64 },
}
