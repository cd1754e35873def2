//! Sorting on keyword fields. A keyword's column holds, per segment, ordinals into that
//! segment's own sorted dictionary: they order within a segment but not across segments. A
//! search sorting on a keyword merges the segments' dictionaries into one sorted list and maps
//! each segment's ordinals onto it, so a hit's key orders as its string does in every segment.
//! Built once per searcher generation (a refresh makes a new one).

use std::sync::Arc;
use tantivy::{Searcher, SegmentOrdinal};

/// One keyword field's terms across the segments of one searcher.
#[derive(Debug)]
pub struct GlobalOrds {
    /// Every term of the field, sorted, once each.
    terms: Vec<String>,
    /// Per segment: its ordinals' keys (2 × rank + 1; the even keys fall between terms).
    per_segment: Vec<Vec<u64>>,
}

impl GlobalOrds {
    pub fn build(searcher: &Searcher, field: &str) -> tantivy::Result<Arc<GlobalOrds>> {
        let mut segments: Vec<Vec<String>> = Vec::new();
        for reader in searcher.segment_readers() {
            let mut terms = Vec::new();
            if let Some(column) = reader.fast_fields().str(field)? {
                let mut stream = column.dictionary().stream()?;
                while stream.advance() {
                    terms.push(String::from_utf8_lossy(stream.key()).into_owned());
                }
            }
            segments.push(terms);
        }
        let mut all: Vec<String> = segments.iter().flatten().cloned().collect();
        all.sort_unstable();
        all.dedup();
        let per_segment = segments
            .iter()
            .map(|terms| {
                terms
                    .iter()
                    .map(|t| 2 * all.binary_search(t).unwrap_or(0) as u64 + 1)
                    .collect()
            })
            .collect();
        Ok(Arc::new(GlobalOrds {
            terms: all,
            per_segment,
        }))
    }

    /// The key of segment `segment`'s ordinal `ord`.
    pub fn key(&self, segment: SegmentOrdinal, ord: u64) -> Option<u64> {
        self.per_segment
            .get(segment as usize)?
            .get(ord as usize)
            .copied()
    }

    /// The term a key stands for.
    pub fn term(&self, key: u64) -> Option<&str> {
        (key % 2 == 1)
            .then(|| self.terms.get((key / 2) as usize).map(String::as_str))
            .flatten()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tantivy::schema::{Schema, FAST, STRING};
    use tantivy::{doc, Index, IndexWriter};

    #[test]
    fn keys_order_as_the_strings_do_across_segments() {
        let mut builder = Schema::builder();
        let cc = builder.add_text_field("cc", STRING | FAST);
        let index = Index::create_in_ram(builder.build());
        let mut writer: IndexWriter = index.writer_with_num_threads(1, 15_000_000).unwrap();
        // Two segments with different dictionaries.
        for v in ["DE", "AT", "FR"] {
            writer.add_document(doc!(cc => v)).unwrap();
        }
        writer.commit().unwrap();
        for v in ["CH", "IT", "AT"] {
            writer.add_document(doc!(cc => v)).unwrap();
        }
        writer.commit().unwrap();
        let searcher = index.reader().unwrap().searcher();
        assert_eq!(searcher.segment_readers().len(), 2);
        let ords = GlobalOrds::build(&searcher, "cc").unwrap();
        let mut seen = Vec::new();
        for (s, reader) in searcher.segment_readers().iter().enumerate() {
            let column = reader.fast_fields().str("cc").unwrap().unwrap();
            for doc in 0..reader.max_doc() {
                let ord = column.ords().first(doc).unwrap();
                let key = ords.key(s as u32, ord).unwrap();
                seen.push((key, ords.term(key).unwrap().to_string()));
            }
        }
        seen.sort();
        let terms: Vec<&str> = seen.iter().map(|(_, t)| t.as_str()).collect();
        assert_eq!(terms, ["AT", "AT", "CH", "DE", "FR", "IT"]);
        assert_eq!(ords.term(0), None);
    }
}
