//! Streaming reader of document corpora: NDJSON files, optionally zstd/gzip/bzip2 compressed,
//! and built-in generators. Memory stays bounded by one batch, whatever the corpus size.

use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

use super::generate::Dataset;

/// One line longer than this is treated as a broken corpus, not buffered without bound.
const MAX_LINE_BYTES: u64 = 64 * 1024 * 1024;

/// One documents entry of a corpus: a file, or a generator.
#[derive(Debug, Clone, serde::Serialize)]
pub struct DocumentSet {
    pub origin: Origin,
    /// Declared number of documents: checked against a file when it is read to the end; the
    /// number a generator makes.
    pub document_count: Option<u64>,
    pub target_index: String,
}

#[derive(Debug, Clone, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Origin {
    File(PathBuf),
    Generated { dataset: Dataset, seed: u64 },
    /// A file's documents, then new ones recombined from them (`scale-to`); `base_count` is
    /// the file's declared document count, checked when it is read.
    Scaled { base: PathBuf, base_count: Option<u64>, seed: u64 },
}

impl DocumentSet {
    /// What a reader calls these documents in messages: the file, or `generated small (seed 1)`.
    pub fn describe(&self) -> PathBuf {
        match &self.origin {
            Origin::File(path) => path.clone(),
            Origin::Generated { dataset, seed } => PathBuf::from(format!("generated {} documents (seed {seed})", dataset.name())),
            Origin::Scaled { base, .. } => base.clone(),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum CorpusError {
    #[error("cannot open corpus file {path}: {source}")]
    Open { path: PathBuf, source: std::io::Error },
    #[error("{path}: document {line}: cannot read: {source} (is the file truncated or compressed with another format than its extension says?)")]
    Read { path: PathBuf, line: u64, source: std::io::Error },
    #[error("{path}: document {line} is not a JSON object (corpora are NDJSON: one JSON document per line)")]
    NotJson { path: PathBuf, line: u64 },
    #[error("{path}: document {line} is longer than 64 MB")]
    LineTooLong { path: PathBuf, line: u64 },
    #[error("{path}: the file holds no documents")]
    Empty { path: PathBuf },
    #[error("{path}: the track declares {declared} documents but the file has {actual}")]
    CountMismatch { path: PathBuf, declared: u64, actual: u64 },
}

fn open_decoded(path: &Path) -> Result<Box<dyn BufRead + Send>, CorpusError> {
    let open_err = |source| CorpusError::Open { path: path.to_path_buf(), source };
    let file = File::open(path).map_err(open_err)?;
    let name = path.to_string_lossy();
    let reader: Box<dyn Read + Send> = if name.ends_with(".zst") {
        Box::new(zstd::stream::read::Decoder::new(file).map_err(open_err)?)
    } else if name.ends_with(".gz") {
        Box::new(flate2::read::MultiGzDecoder::new(file))
    } else if name.ends_with(".bz2") {
        Box::new(bzip2::read::MultiBzDecoder::new(file))
    } else {
        Box::new(file)
    };
    Ok(Box::new(BufReader::with_capacity(256 * 1024, reader)))
}

enum Source {
    File(Box<dyn BufRead + Send>),
    Made { maker: Maker, seed: u64, count: u64 },
}

/// What makes documents that no file holds: document `n` from (seed, n) alone.
enum Maker {
    Dataset(Dataset),
    Scaled(std::sync::Arc<super::scale::ScaleBase>),
}

impl Maker {
    fn write(&self, seed: u64, n: u64, buf: &mut String) {
        match self {
            Maker::Dataset(d) => d.write(seed, n, buf),
            Maker::Scaled(base) => base.write(seed, n, buf),
        }
    }
}

struct OpenFile {
    source: Source,
    index: usize,
    docs_read: u64,
}

/// Reads documents from the files in order, up to an optional limit.
pub struct CorpusReader {
    files: Vec<DocumentSet>,
    current: Option<OpenFile>,
    next_file: usize,
    limit: Option<u64>,
    total_read: u64,
    /// Bytes a request adds to each document (its action line), counted against `max_bytes`.
    per_document_overhead: u64,
    /// An error found after good documents in one batch, returned by the next `fill`.
    pending: Option<CorpusError>,
}

impl CorpusReader {
    pub fn open(files: Vec<DocumentSet>, limit: Option<u64>) -> Result<Self, CorpusError> {
        // Fail before the race starts if any file is missing.
        for f in &files {
            if let Origin::File(path) | Origin::Scaled { base: path, .. } = &f.origin {
                File::open(path).map_err(|source| CorpusError::Open { path: path.clone(), source })?;
            }
        }
        Ok(CorpusReader { files, current: None, next_file: 0, limit, total_read: 0, per_document_overhead: 0, pending: None })
    }

    /// Counts `bytes` more per document against the byte threshold of `fill`.
    pub fn with_per_document_overhead(mut self, bytes: u64) -> Self {
        self.per_document_overhead = bytes;
        self
    }

    /// Documents handed out so far.
    pub fn documents_read(&self) -> u64 {
        self.total_read
    }

    /// Appends up to `max_docs` documents, one per line, to `buf`, stopping early once the batch
    /// (with the per-document overhead) holds `max_bytes` or more. Returns how many were appended; 0 means the corpus is exhausted.
    ///
    /// A broken document (or a count that does not match) after some good ones in the same
    /// batch is reported on the next call, so that the good ones are still sent and measured.
    pub fn fill(&mut self, buf: &mut String, max_docs: u64, max_bytes: Option<u64>) -> Result<u64, CorpusError> {
        if let Some(e) = self.pending.take() {
            return Err(e);
        }
        let (before, docs_before) = (buf.len(), self.total_read);
        match self.fill_batch(buf, max_docs, max_bytes) {
            Ok(n) => Ok(n),
            Err(e) if self.total_read == docs_before => Err(e),
            Err(e) => {
                let added = self.total_read - docs_before;
                let end = buf[before..].match_indices('\n').nth(added as usize - 1).map_or(buf.len(), |(i, _)| before + i + 1);
                buf.truncate(end);
                self.pending = Some(e);
                Ok(added)
            }
        }
    }

    fn fill_batch(&mut self, buf: &mut String, max_docs: u64, max_bytes: Option<u64>) -> Result<u64, CorpusError> {
        let mut added = 0;
        while added < max_docs {
            if self.limit.is_some_and(|l| self.total_read >= l) {
                break;
            }
            if max_bytes.is_some_and(|m| buf.len() as u64 + added * self.per_document_overhead >= m) {
                break;
            }
            if self.current.is_none() {
                if self.next_file >= self.files.len() {
                    break;
                }
                let set = &self.files[self.next_file];
                let source = match &set.origin {
                    Origin::File(path) => Source::File(open_decoded(path)?),
                    Origin::Generated { dataset, seed } => {
                        Source::Made { maker: Maker::Dataset(*dataset), seed: *seed, count: set.document_count.unwrap_or(0) }
                    }
                    Origin::Scaled { base, base_count, seed } => {
                        let loaded = super::scale::ScaleBase::load(base)?;
                        if let Some(declared) = base_count.filter(|d| *d != loaded.len()) {
                            return Err(CorpusError::CountMismatch { path: base.clone(), declared, actual: loaded.len() });
                        }
                        Source::Made { maker: Maker::Scaled(loaded), seed: *seed, count: set.document_count.unwrap_or(0) }
                    }
                };
                self.current = Some(OpenFile { source, index: self.next_file, docs_read: 0 });
                self.next_file += 1;
            }
            let file = self.current.as_mut().expect("opened above");
            let meta = &self.files[file.index];
            let reader = match &mut file.source {
                Source::Made { maker, seed, count } => {
                    if file.docs_read >= *count {
                        self.current = None;
                        continue;
                    }
                    maker.write(*seed, file.docs_read, buf);
                    file.docs_read += 1;
                    self.total_read += 1;
                    added += 1;
                    continue;
                }
                Source::File(reader) => reader,
            };
            let path = || meta.describe();
            let start = buf.len();
            let line_no = file.docs_read + 1;
            let n = reader
                .by_ref()
                .take(MAX_LINE_BYTES)
                .read_line(buf)
                .map_err(|source| CorpusError::Read { path: path(), line: line_no, source })?;
            if n == 0 {
                if let Some(declared) = meta.document_count {
                    if declared != file.docs_read && self.limit.is_none() {
                        return Err(CorpusError::CountMismatch { path: path(), declared, actual: file.docs_read });
                    }
                }
                self.current = None;
                continue;
            }
            if n as u64 == MAX_LINE_BYTES && !buf.ends_with('\n') {
                return Err(CorpusError::LineTooLong { path: path(), line: line_no });
            }
            let line = buf[start..].trim();
            if line.is_empty() {
                buf.truncate(start);
                continue;
            }
            if !(line.starts_with('{') && line.ends_with('}')) {
                return Err(CorpusError::NotJson { path: path(), line: line_no });
            }
            if !buf.ends_with('\n') {
                buf.push('\n');
            }
            file.docs_read += 1;
            self.total_read += 1;
            added += 1;
        }
        Ok(added)
    }
}

/// Reads the first document of a corpus file, so that a file compressed in another format than
/// its extension says, one that is not NDJSON, or an empty one is refused before a race starts.
/// (A file truncated further in is found when the race reaches it, and fails that trial.)
pub fn check_first_document(path: &Path) -> Result<(), CorpusError> {
    let set = DocumentSet { origin: Origin::File(path.to_path_buf()), document_count: None, target_index: String::new() };
    let mut reader = CorpusReader::open(vec![set], Some(1))?;
    let mut buf = String::new();
    if reader.fill(&mut buf, 1, None)? == 0 {
        return Err(CorpusError::Empty { path: path.to_path_buf() });
    }
    Ok(())
}

/// Counts documents by reading the corpus once (used when no document-count is declared);
/// generators are not run, they make exactly their count.
pub fn count_documents(files: &[DocumentSet], limit: Option<u64>) -> Result<u64, CorpusError> {
    let mut total = 0u64;
    for set in files {
        let left = limit.map_or(u64::MAX, |l| l.saturating_sub(total));
        if left == 0 {
            break;
        }
        total += match set.origin {
            Origin::Generated { .. } | Origin::Scaled { .. } => set.document_count.unwrap_or(0).min(left),
            Origin::File(_) => {
                let mut reader = CorpusReader::open(vec![set.clone()], Some(left).filter(|_| limit.is_some()))?;
                let mut buf = String::new();
                loop {
                    buf.clear();
                    if reader.fill(&mut buf, 10_000, None)? == 0 {
                        break reader.documents_read();
                    }
                }
            }
        };
    }
    Ok(total)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn file(dir: &Path, name: &str, content: &[u8]) -> DocumentSet {
        let path = dir.join(name);
        std::fs::write(&path, content).unwrap();
        DocumentSet { origin: Origin::File(path), document_count: None, target_index: "i".into() }
    }

    #[test]
    fn reads_batches_across_compressed_files() {
        let dir = tempfile::tempdir().unwrap();
        let plain = file(dir.path(), "a.json", b"{\"a\":1}\n{\"a\":2}\n");
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(b"{\"b\":1}\n\n{\"b\":2}").unwrap();
        let gz = file(dir.path(), "b.json.gz", &gz.finish().unwrap());
        let zst = file(dir.path(), "c.json.zst", &zstd::encode_all(&b"{\"c\":1}\n"[..], 1).unwrap());
        let mut r = CorpusReader::open(vec![plain, gz, zst], None).unwrap();
        let mut buf = String::new();
        assert_eq!(r.fill(&mut buf, 3, None).unwrap(), 3);
        assert_eq!(buf, "{\"a\":1}\n{\"a\":2}\n{\"b\":1}\n");
        buf.clear();
        assert_eq!(r.fill(&mut buf, 10, None).unwrap(), 2);
        assert_eq!(buf, "{\"b\":2}\n{\"c\":1}\n");
        assert_eq!(r.fill(&mut buf, 10, None).unwrap(), 0);
    }

    #[test]
    fn limit_and_byte_threshold_cut_batches() {
        let dir = tempfile::tempdir().unwrap();
        let f = file(dir.path(), "a.json", b"{\"a\":1}\n{\"a\":2}\n{\"a\":3}\n");
        let mut r = CorpusReader::open(vec![f.clone()], Some(2)).unwrap();
        let mut buf = String::new();
        assert_eq!(r.fill(&mut buf, 10, None).unwrap(), 2);
        let mut r = CorpusReader::open(vec![f], None).unwrap();
        buf.clear();
        assert_eq!(r.fill(&mut buf, 10, Some(5)).unwrap(), 1);
    }

    #[test]
    fn not_ndjson_and_truncated_files_are_errors() {
        let dir = tempfile::tempdir().unwrap();
        let f = file(dir.path(), "a.json", b"{\"a\":1}\nnot json\n");
        let mut r = CorpusReader::open(vec![f], None).unwrap();
        let mut buf = String::new();
        assert_eq!(r.fill(&mut buf, 10, None).unwrap(), 1, "the good document before the bad one is handed out");
        assert_eq!(buf, "{\"a\":1}\n");
        let e = r.fill(&mut buf, 10, None).unwrap_err();
        assert!(matches!(e, CorpusError::NotJson { line: 2, .. }), "{e}");
        let whole = zstd::encode_all(&b"{\"a\":1}\n{\"a\":2}\n"[..], 1).unwrap();
        let f = file(dir.path(), "t.json.zst", &whole[..whole.len() - 4]);
        let mut r = CorpusReader::open(vec![f], None).unwrap();
        let mut buf = String::new();
        let first = r.fill(&mut buf, 10, None);
        assert!(matches!(first, Err(CorpusError::Read { .. })) || matches!(r.fill(&mut buf, 10, None), Err(CorpusError::Read { .. })));
    }

    #[test]
    fn generated_documents_follow_files_and_stop_at_their_count() {
        let dir = tempfile::tempdir().unwrap();
        let plain = file(dir.path(), "a.json", b"{\"a\":1}\n");
        let generated = DocumentSet { origin: Origin::Generated { dataset: Dataset::Small, seed: 3 }, document_count: Some(5), target_index: "i".into() };
        let mut r = CorpusReader::open(vec![plain, generated.clone()], None).unwrap();
        let mut buf = String::new();
        assert_eq!(r.fill(&mut buf, 4, None).unwrap(), 4);
        assert!(buf.starts_with("{\"a\":1}\n{\"@timestamp\""), "{buf}");
        assert_eq!(r.fill(&mut buf, 10, None).unwrap(), 2);
        assert_eq!(r.fill(&mut buf, 10, None).unwrap(), 0);
        assert_eq!(buf.lines().count(), 6);
        assert_eq!(count_documents(&[generated.clone()], None).unwrap(), 5);
        assert_eq!(count_documents(&[generated], Some(2)).unwrap(), 2);
    }

    #[test]
    fn the_first_document_is_checked_before_a_race() {
        let dir = tempfile::tempdir().unwrap();
        let p = |name: &str, content: &[u8]| {
            let path = dir.path().join(name);
            std::fs::write(&path, content).unwrap();
            path
        };
        check_first_document(&p("ok.json", b"{\"a\":1}\n")).unwrap();
        assert!(matches!(check_first_document(&p("e.json", b"\n\n")), Err(CorpusError::Empty { .. })));
        assert!(matches!(check_first_document(&p("t.json", b"a,b,c\n")), Err(CorpusError::NotJson { line: 1, .. })));
        assert!(matches!(check_first_document(&p("z.json.gz", b"{\"a\":1}\n")), Err(CorpusError::Read { .. })));
    }

    #[test]
    fn declared_count_is_checked() {
        let dir = tempfile::tempdir().unwrap();
        let mut f = file(dir.path(), "a.json", b"{\"a\":1}\n");
        f.document_count = Some(2);
        let e = count_documents(&[f], None).unwrap_err();
        assert!(matches!(e, CorpusError::CountMismatch { declared: 2, actual: 1, .. }));
    }
}
