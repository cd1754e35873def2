//! What is read of a corpus before a race: its first document (a file that cannot be read is
//! refused before anything is measured) and, where no count is declared, its documents.

use super::{CorpusError, CorpusReader, DocumentSet, Origin};
use std::path::Path;

/// Reads the first document of a corpus file, so that a file compressed in another format than
/// its extension says, one that is not NDJSON, or an empty one is refused before a race starts.
/// (A file truncated further in is found when the race reaches it, and fails that trial.)
pub fn check_first_document(path: &Path) -> Result<(), CorpusError> {
    check_first(DocumentSet::file(path, ""))
}

/// [`check_first_document`] for a documents entry (which may hold action lines).
pub fn check_first(set: DocumentSet) -> Result<(), CorpusError> {
    let path = set.describe();
    let mut reader = CorpusReader::open(vec![set], Some(1))?;
    let mut buf = String::new();
    if reader.fill(&mut buf, 1, None)? == 0 {
        return Err(CorpusError::Empty { path });
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
            Origin::Generated { .. } | Origin::Scaled { .. } => {
                set.document_count.unwrap_or(0).min(left)
            }
            Origin::File(_) => {
                let mut reader =
                    CorpusReader::open(vec![set.clone()], Some(left).filter(|_| limit.is_some()))?;
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
