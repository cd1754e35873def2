//! Streaming reader of document corpora: NDJSON files, optionally zstd/gzip/bzip2 compressed,
//! and built-in generators. Memory stays bounded by one batch, whatever the corpus size.

use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

mod check;
mod generate;
mod scale;

pub use check::{check_first, check_first_document, count_documents};
pub use generate::Dataset;

/// One line longer than this is treated as a broken corpus, not buffered without bound.
const MAX_LINE_BYTES: u64 = 64 * 1024 * 1024;

/// One documents entry of a corpus: a file, or a generator.
#[derive(Debug, Clone, serde::Serialize)]
pub struct DocumentSet {
    pub origin: Origin,
    /// Declared number of documents: checked against a file when it is read to the end; the
    /// number a generator makes.
    pub document_count: Option<u64>,
    /// The index the documents go to; empty when a file's own action lines name it.
    pub target_index: String,
    /// The file holds an action-and-metadata line before each document (Rally's
    /// `includes-action-and-meta-data`), sent as it is.
    pub with_actions: bool,
    /// The target is a data stream, which takes `create` actions only.
    pub create: bool,
}

#[derive(Debug, Clone, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Origin {
    File(PathBuf),
    Generated {
        dataset: Dataset,
        seed: u64,
    },
    /// A file's documents, then new ones recombined from them (`scale-to`); `base_count` is
    /// the file's declared document count, checked when it is read.
    Scaled {
        base: PathBuf,
        base_count: Option<u64>,
        seed: u64,
    },
}

impl DocumentSet {
    /// The documents of one file, one per line, for `target_index`.
    pub fn file(path: impl Into<PathBuf>, target_index: &str) -> DocumentSet {
        DocumentSet {
            origin: Origin::File(path.into()),
            document_count: None,
            target_index: target_index.to_string(),
            with_actions: false,
            create: false,
        }
    }

    /// What a reader calls these documents in messages: the file, or `generated small (seed 1)`.
    pub fn describe(&self) -> PathBuf {
        match &self.origin {
            Origin::File(path) => path.clone(),
            Origin::Generated { dataset, seed } => PathBuf::from(format!(
                "generated {} documents (seed {seed})",
                dataset.name()
            )),
            Origin::Scaled { base, .. } => base.clone(),
        }
    }
}

mod error;
mod framing;

pub use error::{CorpusError, MAX_BLANK_LINES};
pub use framing::{
    frame_bulk_body, parse_action_line, Action, ActionLines, BatchItem, Framing, Pair, Pairs, Verb,
};

/// Writes the documents of a compressed corpus file to `target` (through `target.part`,
/// renamed when whole): for readers that need the plain file, as Rally's preparator leaves it.
pub fn unpack(archive: &Path, target: &Path) -> Result<(), CorpusError> {
    let mut reader = open_decoded(archive)?;
    let part = target.with_extension("part");
    let write_err = |source| CorpusError::Open {
        path: part.clone(),
        source,
    };
    let mut out = std::io::BufWriter::new(File::create(&part).map_err(write_err)?);
    std::io::copy(&mut reader, &mut out).map_err(|source| CorpusError::Read {
        path: archive.to_path_buf(),
        line: 0,
        source,
    })?;
    use std::io::Write;
    out.flush().map_err(write_err)?;
    drop(out);
    std::fs::rename(&part, target).map_err(write_err)
}

fn open_decoded(path: &Path) -> Result<Box<dyn BufRead + Send>, CorpusError> {
    let open_err = |source| CorpusError::Open {
        path: path.to_path_buf(),
        source,
    };
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
    let mut reader = BufReader::with_capacity(256 * 1024, reader);
    // A UTF-8 byte-order mark before the first document is not part of it.
    const BOM: &[u8] = b"\xEF\xBB\xBF";
    if reader
        .fill_buf()
        .map_err(|source| CorpusError::Read {
            path: path.to_path_buf(),
            line: 1,
            source,
        })?
        .starts_with(BOM)
    {
        reader.consume(BOM.len());
    }
    Ok(Box::new(reader))
}

enum Source {
    File(Box<dyn BufRead + Send>),
    Made { maker: Maker, seed: u64, count: u64 },
}

/// What makes documents that no file holds: document `n` from (seed, n) alone.
enum Maker {
    Dataset(Dataset),
    Scaled(std::sync::Arc<scale::ScaleBase>),
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

/// What one read did.
/// One more blank line in a row: skipped, or an error once there are too many.
fn blank_line(run: &mut u64, set: &DocumentSet, docs_read: u64) -> Result<ReadOne, CorpusError> {
    *run += 1;
    if *run > MAX_BLANK_LINES {
        return Err(CorpusError::Blank {
            path: set.describe(),
            after: docs_read,
        });
    }
    Ok(ReadOne::Skipped)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ReadOne {
    /// A document went into the batch.
    Added,
    /// A blank line was passed over.
    Skipped,
    /// The current file ended.
    FileDone,
}

/// Reads documents from the files in order, up to an optional limit.
pub struct CorpusReader {
    files: Vec<DocumentSet>,
    current: Option<OpenFile>,
    next_file: usize,
    limit: Option<u64>,
    total_read: u64,
    framing: Framing,
    /// Start again from the first file after the last (Rally's `looped`).
    looped: bool,
    /// Documents handed out in the current pass over the files, to stop a loop over nothing.
    read_this_pass: u64,
    /// Length of `buf` after the last whole document, to cut a broken one off.
    whole_len: usize,
    /// The document being read, and its action line from the file, before they go in `buf`.
    line: String,
    action: String,
    /// An error found after good documents in one batch, returned by the next `fill`.
    pending: Option<CorpusError>,
    /// [`CorpusReader::uniform_actions`], decided once.
    uniform: Option<Verb>,
    /// Blank lines read since the last document.
    blank_run: u64,
    /// Each generated action line names its file's target index (`_index`): a bulk over files
    /// for several indices goes to `/_bulk`.
    name_index: bool,
    /// Documents passed over at the start of each file (a slice of the file, as Rally's
    /// workers read theirs).
    skip: u64,
}

impl CorpusReader {
    pub fn open(files: Vec<DocumentSet>, limit: Option<u64>) -> Result<Self, CorpusError> {
        // Fail before the race starts if any file is missing.
        for f in &files {
            if let Origin::File(path) | Origin::Scaled { base: path, .. } = &f.origin {
                File::open(path).map_err(|source| CorpusError::Open {
                    path: path.clone(),
                    source,
                })?;
            }
        }
        Ok(CorpusReader {
            files,
            current: None,
            next_file: 0,
            limit,
            total_read: 0,
            framing: Framing::Documents,
            looped: false,
            read_this_pass: 0,
            whole_len: 0,
            line: String::new(),
            action: String::new(),
            pending: None,
            uniform: None,
            blank_run: 0,
            name_index: false,
            skip: 0,
        })
    }

    /// Starts each file after its first `documents` (the limit counts only those after).
    pub fn skipping(mut self, documents: u64) -> Self {
        self.skip = documents;
        self
    }

    /// Opens the first file now, passing over what `skipping` skips, so that the first read
    /// finds its documents at once (a slice far into a compressed file costs a read of all
    /// before it: done before a race, not inside it).
    pub fn opened(mut self) -> Result<Self, CorpusError> {
        if self.current.is_none() && self.next_file == 0 {
            self.open_next()?;
        }
        Ok(self)
    }

    /// Action lines name each file's target index (files for several indices in one bulk).
    pub fn naming_indices(mut self, name: bool) -> Self {
        self.name_index = name;
        self.uniform = self.uniform_actions();
        self
    }

    /// Hands out bulk bodies (an action line before each document) instead of bare documents.
    pub fn with_framing(mut self, framing: Framing) -> Self {
        self.framing = framing;
        self.uniform = self.uniform_actions();
        self
    }

    /// Starts over from the first file once the last is read, until the limit (if any).
    pub fn looped(mut self, looped: bool) -> Self {
        self.looped = looped;
        self
    }

    /// Documents handed out so far.
    pub fn documents_read(&self) -> u64 {
        self.total_read
    }

    /// Appends up to `max_docs` documents, one per line (each after its action line when
    /// framed as a bulk body), to `buf`, stopping early once the batch holds `max_bytes` or
    /// more. Returns how many were appended; 0 means the corpus is exhausted.
    ///
    /// A broken document (or a count that does not match) after some good ones in the same
    /// batch is reported on the next call, so that the good ones are still sent and measured.
    pub fn fill(
        &mut self,
        buf: &mut String,
        max_docs: u64,
        max_bytes: Option<u64>,
    ) -> Result<u64, CorpusError> {
        self.fill_recorded(buf, None, max_docs, max_bytes)
    }

    /// The verb of the one constant action line (`index` or `create`, no ids) framing every
    /// document, when there is one and the files hold no action lines of their own: then a
    /// batch's pairs are its lines taken two by two ([`Pairs::Each`]) and
    /// [`CorpusReader::fill_items`] records none.
    pub fn uniform_actions(&self) -> Option<Verb> {
        let Framing::Bulk(a) = &self.framing else {
            return None;
        };
        if self.files.iter().any(|f| f.with_actions) || self.name_index {
            return None;
        }
        a.constant()
            .and_then(|line| framing::parse_action_line(line.trim_end()))
            .map(|(verb, _, _)| verb)
    }

    /// [`CorpusReader::fill`], and each document's (action, document) pair appended to
    /// `items` as ranges of `buf`, unless the actions are uniform.
    pub fn fill_items(
        &mut self,
        buf: &mut String,
        items: &mut Vec<BatchItem>,
        max_docs: u64,
        max_bytes: Option<u64>,
    ) -> Result<u64, CorpusError> {
        self.fill_recorded(buf, Some(items), max_docs, max_bytes)
    }

    fn fill_recorded(
        &mut self,
        buf: &mut String,
        items: Option<&mut Vec<BatchItem>>,
        max_docs: u64,
        max_bytes: Option<u64>,
    ) -> Result<u64, CorpusError> {
        if let Some(e) = self.pending.take() {
            return Err(e);
        }
        let docs_before = self.total_read;
        self.whole_len = buf.len();
        match self.fill_batch(buf, items, max_docs, max_bytes) {
            Ok(n) => Ok(n),
            Err(e) if self.total_read == docs_before => {
                buf.truncate(self.whole_len);
                Err(e)
            }
            Err(e) => {
                // Only whole documents (with their action lines) are handed out.
                let added = self.total_read - docs_before;
                buf.truncate(self.whole_len);
                self.pending = Some(e);
                Ok(added)
            }
        }
    }

    fn fill_batch(
        &mut self,
        buf: &mut String,
        mut items: Option<&mut Vec<BatchItem>>,
        max_docs: u64,
        max_bytes: Option<u64>,
    ) -> Result<u64, CorpusError> {
        let mut added = 0;
        while added < max_docs {
            if self.limit.is_some_and(|l| self.total_read >= l) {
                break;
            }
            if max_bytes.is_some_and(|m| buf.len() as u64 >= m) {
                break;
            }
            if self.current.is_none() && !self.open_next()? {
                break;
            }
            let file = self.current.as_ref().expect("opened above");
            let meta = &self.files[file.index];
            let constant = match &self.framing {
                Framing::Documents => Some(""),
                Framing::Bulk(_) if self.name_index => None,
                Framing::Bulk(actions) => actions.constant(),
            };
            let read = match (constant, meta.with_actions) {
                // The common case, read in place: a broken or blank line is cut off again.
                (Some(action), false) => self.read_in_place(buf, action, items.as_deref_mut())?,
                // The document (and the file's own action line) is read aside first, so that
                // an action is generated only for a document that is there.
                _ => match self.read_aside()? {
                    ReadOne::Added => {
                        self.frame_aside(buf, items.as_deref_mut())?;
                        ReadOne::Added
                    }
                    other => other,
                },
            };
            if read == ReadOne::Added {
                self.handed_out(buf.len());
                added += 1;
            }
        }
        Ok(added)
    }

    /// The next document read straight into `buf` after its constant action line.
    fn read_in_place(
        &mut self,
        buf: &mut String,
        action: &'static str,
        items: Option<&mut Vec<BatchItem>>,
    ) -> Result<ReadOne, CorpusError> {
        let file = self.current.as_mut().expect("opened");
        let meta = &self.files[file.index];
        let line_no = file.docs_read + 1;
        let path = || meta.describe();
        // The common case, read in place: a broken or blank line is cut off again.
        let mark = buf.len();
        buf.push_str(action);
        let start = buf.len();
        match &mut file.source {
            Source::Made { maker, seed, count } => {
                if file.docs_read >= *count {
                    buf.truncate(mark);
                    self.current = None;
                    return Ok(ReadOne::FileDone);
                }
                maker.write(*seed, file.docs_read, buf);
            }
            Source::File(reader) => {
                if read_line(reader, buf, line_no, &path)? == 0 {
                    buf.truncate(mark);
                    check_count(meta, file.docs_read, self.limit)?;
                    self.current = None;
                    return Ok(ReadOne::FileDone);
                }
                let line = buf[start..].trim();
                if line.is_empty() {
                    buf.truncate(mark);
                    return blank_line(&mut self.blank_run, meta, file.docs_read);
                }
                if !(line.starts_with('{') && line.ends_with('}')) {
                    return Err(CorpusError::NotJson {
                        path: path(),
                        line: line_no,
                    });
                }
                while buf.ends_with(['\n', '\r', ' ', '\t']) {
                    buf.pop();
                }
                buf.push('\n');
            }
        }
        // Uniform batches need no list: their pairs are their lines (`Pairs::Each`).
        if let Some(items) = items.filter(|_| self.uniform.is_none()) {
            items.push(BatchItem {
                verb: Verb::Index,
                index: None,
                id: None,
                document: start..buf.len() - 1,
            });
        }
        Ok(ReadOne::Added)
    }

    /// The next document (and the file's own action line) read aside, into `line` and
    /// `action`.
    fn read_aside(&mut self) -> Result<ReadOne, CorpusError> {
        let file = self.current.as_mut().expect("opened");
        let meta = &self.files[file.index];
        let line_no = file.docs_read + 1;
        let path = || meta.describe();
        self.action.clear();
        self.line.clear();
        match &mut file.source {
            Source::Made { maker, seed, count } => {
                if file.docs_read >= *count {
                    self.current = None;
                    return Ok(ReadOne::FileDone);
                }
                maker.write(*seed, file.docs_read, &mut self.line);
            }
            Source::File(reader) => {
                if meta.with_actions {
                    if read_line(reader, &mut self.action, line_no, &path)? == 0 {
                        check_count(meta, file.docs_read, self.limit)?;
                        self.current = None;
                        return Ok(ReadOne::FileDone);
                    }
                    let action = self.action.trim();
                    if !(action.starts_with('{') && action.ends_with('}')) {
                        return Err(CorpusError::NotAction {
                            path: path(),
                            line: 2 * file.docs_read + 1,
                        });
                    }
                    if read_line(reader, &mut self.line, line_no, &path)? == 0 {
                        return Err(CorpusError::ActionWithoutDocument {
                            path: path(),
                            line: line_no,
                        });
                    }
                } else if read_line(reader, &mut self.line, line_no, &path)? == 0 {
                    check_count(meta, file.docs_read, self.limit)?;
                    self.current = None;
                    return Ok(ReadOne::FileDone);
                }
                let line = self.line.trim();
                if line.is_empty() && !meta.with_actions {
                    return blank_line(&mut self.blank_run, meta, file.docs_read);
                }
                if !(line.starts_with('{') && line.ends_with('}')) {
                    let line = if meta.with_actions {
                        2 * line_no
                    } else {
                        line_no
                    };
                    return Err(CorpusError::NotJson { path: path(), line });
                }
            }
        }
        Ok(ReadOne::Added)
    }

    /// The document read aside, framed into `buf`: its action line (the file's own, or one
    /// generated), then the document (wrapped as `{"doc": ...}` for a generated update).
    fn frame_aside(
        &mut self,
        buf: &mut String,
        items: Option<&mut Vec<BatchItem>>,
    ) -> Result<(), CorpusError> {
        let file = self.current.as_ref().expect("opened");
        let meta = &self.files[file.index];
        let path = || meta.describe();
        let (action, wrap) = match &mut self.framing {
            Framing::Bulk(_) if meta.with_actions => {
                let line = self.action.trim();
                let (verb, index, id) =
                    parse_action_line(line).ok_or_else(|| CorpusError::NotAction {
                        path: path(),
                        line: 2 * file.docs_read + 1,
                    })?;
                let at = buf.len();
                let shift = |r: Option<std::ops::Range<usize>>| r.map(|r| at + r.start..at + r.end);
                buf.push_str(line);
                buf.push('\n');
                ((verb, shift(index), shift(id)), false)
            }
            Framing::Bulk(actions) => {
                let at = buf.len();
                let Action { verb, mut id } = actions.write_action(buf);
                let index = if self.name_index && !meta.target_index.is_empty() {
                    let (index, shift) = name_target(buf, at, &meta.target_index);
                    id = id.map(|r| r.start + shift..r.end + shift);
                    index
                } else {
                    None
                };
                // A generated update carries the document as the fields to merge.
                ((verb, index, id), verb == Verb::Update)
            }
            Framing::Documents => ((Verb::Index, None, None), false),
        };
        let start = buf.len();
        if wrap {
            buf.push_str("{\"doc\":");
            buf.push_str(self.line.trim());
            buf.push('}');
        } else {
            buf.push_str(self.line.trim());
        }
        if let Some(items) = items {
            let (verb, index, id) = action;
            items.push(BatchItem {
                verb,
                index,
                id,
                document: start..buf.len(),
            });
        }
        buf.push('\n');
        Ok(())
    }

    /// Counts a whole document added to a batch that is now `len` bytes long.
    fn handed_out(&mut self, len: usize) {
        self.blank_run = 0;
        if let Some(file) = self.current.as_mut() {
            file.docs_read += 1;
        }
        self.total_read += 1;
        self.read_this_pass += 1;
        self.whole_len = len;
    }

    /// Opens the next file (or generator); false when all are read and the reader does not
    /// loop, or loops over files that hold nothing.
    fn open_next(&mut self) -> Result<bool, CorpusError> {
        if self.next_file >= self.files.len() {
            if !self.looped || self.read_this_pass == 0 {
                return Ok(false);
            }
            self.next_file = 0;
            self.read_this_pass = 0;
        }
        let set = &self.files[self.next_file];
        let source = match &set.origin {
            Origin::File(path) => Source::File(open_decoded(path)?),
            Origin::Generated { dataset, seed } => Source::Made {
                maker: Maker::Dataset(*dataset),
                seed: *seed,
                count: set.document_count.unwrap_or(0),
            },
            Origin::Scaled {
                base,
                base_count,
                seed,
            } => {
                let loaded = scale::ScaleBase::load(base)?;
                if let Some(declared) = base_count.filter(|d| *d != loaded.len()) {
                    return Err(CorpusError::CountMismatch {
                        path: base.clone(),
                        declared,
                        actual: loaded.len(),
                    });
                }
                Source::Made {
                    maker: Maker::Scaled(loaded),
                    seed: *seed,
                    count: set.document_count.unwrap_or(0),
                }
            }
        };
        self.current = Some(OpenFile {
            source,
            index: self.next_file,
            docs_read: 0,
        });
        self.next_file += 1;
        self.pass_over(self.skip)?;
        Ok(true)
    }

    /// Reads the current file's next `documents` and drops them (a generator jumps there).
    fn pass_over(&mut self, documents: u64) -> Result<(), CorpusError> {
        while let Some(file) = self.current.as_mut() {
            if file.docs_read >= documents {
                break;
            }
            if let Source::Made { .. } = file.source {
                file.docs_read = documents;
                break;
            }
            if self.read_aside()? == ReadOne::Added {
                self.blank_run = 0;
                if let Some(file) = self.current.as_mut() {
                    file.docs_read += 1;
                }
            }
        }
        Ok(())
    }
}

/// Reads one line (at most 64 MB) onto `buf`; 0 at the end of the file. The line is checked
/// to be UTF-8 with SIMD (simdutf8): std's check was a quarter of a bulk client's CPU.
fn read_line(
    reader: &mut Box<dyn BufRead + Send>,
    buf: &mut String,
    line_no: u64,
    path: &dyn Fn() -> PathBuf,
) -> Result<usize, CorpusError> {
    let read_error = |source| CorpusError::Read {
        path: path(),
        line: line_no,
        source,
    };
    // The string's bytes are taken out as a Vec (no copy) and only become a String again once
    // what was appended is known to be UTF-8; on any error `buf` keeps what it held.
    let mut bytes = std::mem::take(buf).into_bytes();
    let start = bytes.len();
    let read = read_until_newline(reader, &mut bytes);
    let valid = simdutf8::basic::from_utf8(&bytes[start..]).is_ok();
    bytes.truncate(if valid { bytes.len() } else { start });
    // SAFETY: `bytes[..start]` came from a String and `bytes[start..]` was just checked (or cut).
    *buf = unsafe { String::from_utf8_unchecked(bytes) };
    let n = read.map_err(read_error)?;
    if !valid {
        return Err(read_error(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            "stream did not contain valid UTF-8",
        )));
    }
    if n as u64 == MAX_LINE_BYTES && !buf.ends_with('\n') {
        return Err(CorpusError::LineTooLong {
            path: path(),
            line: line_no,
        });
    }
    Ok(n)
}

/// Appends bytes up to and including the next line feed (at most `MAX_LINE_BYTES`), found with
/// SIMD (std's `read_until` searches a word at a time): the bytes read.
fn read_until_newline(
    reader: &mut Box<dyn BufRead + Send>,
    out: &mut Vec<u8>,
) -> std::io::Result<usize> {
    let mut read = 0usize;
    loop {
        let available = match reader.fill_buf() {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        let room = MAX_LINE_BYTES as usize - read;
        let window = &available[..available.len().min(room)];
        let (used, done) = match memchr::memchr(b'\n', window) {
            Some(i) => (i + 1, true),
            None => (window.len(), window.is_empty() || window.len() == room),
        };
        out.extend_from_slice(&window[..used]);
        reader.consume(used);
        read += used;
        if done {
            return Ok(read);
        }
    }
}

/// Puts `"_index":"<target>"` first in the action line written at `at`
/// (`{"index":{...}}`): the index's range (quotes included), and how far what followed moved.
fn name_target(
    buf: &mut String,
    at: usize,
    target: &str,
) -> (Option<std::ops::Range<usize>>, usize) {
    let Some(open) = buf[at..].find(":{").map(|i| at + i + 2) else {
        return (None, 0);
    };
    let name = serde_json::Value::String(target.to_string()).to_string();
    let mut insert = format!("\"_index\":{name}");
    if !buf[open..].starts_with('}') {
        insert.push(',');
    }
    buf.insert_str(open, &insert);
    let start = open + "\"_index\":".len();
    (Some(start..start + name.len()), insert.len())
}

/// At the end of a file: its declared document count must be what it held (unless a limit
/// stopped reading early).
fn check_count(meta: &DocumentSet, read: u64, limit: Option<u64>) -> Result<(), CorpusError> {
    match meta.document_count {
        Some(declared) if declared != read && limit.is_none() => Err(CorpusError::CountMismatch {
            path: meta.describe(),
            declared,
            actual: read,
        }),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests;
