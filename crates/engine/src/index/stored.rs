//! A hit's `_id` and `_source` read straight from the doc store's bytes.
//!
//! tantivy's `Searcher::doc` deserialises a whole `TantivyDocument`, and its `Vec<u8>` reader
//! takes a stored `_source` one byte (one `read_exact`) at a time: on a search that fetches ten
//! hits that was a quarter of the engine's time. Our documents store two fields only (`_id` as
//! text, `_source` as bytes), whose layout in the doc store is simple and stable across tantivy's
//! doc store versions: a VInt field count, then per field a little-endian u32 field number, a
//! one-byte type code and, for text and bytes, a VInt length and the bytes. Anything else falls
//! back to tantivy's own reader, so an unexpected layout costs speed, never an answer.

use std::sync::{Arc, RwLock};
use tantivy::schema::{Field, Value as _};
use tantivy::store::StoreReader;
use tantivy::{DocAddress, Searcher, TantivyDocument};

/// tantivy's type codes for the two value kinds we store.
const TEXT_CODE: u8 = 0;
const BYTES_CODE: u8 = 4;
/// tantivy's own default number of decompressed blocks a store reader caches.
const CACHED_BLOCKS: usize = 100;

/// The store readers of one searcher generation: a searcher's own are private to tantivy.
struct Stores {
    generation: u64,
    readers: Vec<StoreReader>,
}

/// Store readers of the last few searcher generations (a refresh or a merge makes a new one;
/// a scroll keeps an older searcher alive), newest first.
#[derive(Default)]
pub struct StoredFields {
    recent: RwLock<Vec<Arc<Stores>>>,
}

/// Generations whose readers are kept: the current one and the scrolls' older ones.
const GENERATIONS_KEPT: usize = 4;

impl StoredFields {
    /// The `_id` and `_source` of one hit.
    pub fn id_and_source(
        &self,
        searcher: &Searcher,
        addr: DocAddress,
        id: Field,
        source: Field,
    ) -> tantivy::Result<(String, Vec<u8>)> {
        let stores = self.stores(searcher)?;
        let reader = &stores.readers[addr.segment_ord as usize];
        let bytes = reader.get_document_bytes(addr.doc_id)?;
        if let Some((found_id, found_source)) = parse(bytes.as_slice(), id, source) {
            return Ok((found_id.to_string(), found_source.to_vec()));
        }
        let doc: TantivyDocument = searcher.doc(addr)?;
        Ok((
            doc.get_first(id)
                .and_then(|v| v.as_str())
                .unwrap_or_default()
                .to_string(),
            doc.get_first(source)
                .and_then(|v| v.as_bytes())
                .unwrap_or(b"{}")
                .to_vec(),
        ))
    }

    fn stores(&self, searcher: &Searcher) -> tantivy::Result<Arc<Stores>> {
        let generation = searcher.generation().generation_id();
        let find = |recent: &[Arc<Stores>]| {
            recent
                .iter()
                .find(|s| s.generation == generation)
                .map(Arc::clone)
        };
        if let Some(s) = find(&self.recent.read().unwrap_or_else(|p| p.into_inner())) {
            return Ok(s);
        }
        let readers = searcher
            .segment_readers()
            .iter()
            .map(|s| s.get_store_reader(CACHED_BLOCKS))
            .collect::<std::io::Result<Vec<_>>>()?;
        let mut recent = self.recent.write().unwrap_or_else(|p| p.into_inner());
        if let Some(s) = find(&recent) {
            return Ok(s);
        }
        let stores = Arc::new(Stores {
            generation,
            readers,
        });
        recent.insert(0, Arc::clone(&stores));
        recent.truncate(GENERATIONS_KEPT);
        Ok(stores)
    }
}

/// The `_id` text and `_source` bytes of one stored document, or None when its layout is not
/// the one described above (the caller falls back to tantivy's reader).
fn parse(mut bytes: &[u8], id: Field, source: Field) -> Option<(&str, &[u8])> {
    let fields = vint(&mut bytes)?;
    let (mut found_id, mut found_source) = ("", &b"{}"[..]);
    for _ in 0..fields {
        let (number, rest) = bytes.split_first_chunk::<4>()?;
        let field = Field::from_field_id(u32::from_le_bytes(*number));
        let (&code, rest) = rest.split_first()?;
        bytes = rest;
        if code != TEXT_CODE && code != BYTES_CODE {
            return None;
        }
        let len = usize::try_from(vint(&mut bytes)?).ok()?;
        if len > bytes.len() {
            return None;
        }
        let (value, rest) = bytes.split_at(len);
        bytes = rest;
        match (field, code) {
            (f, TEXT_CODE) if f == id => found_id = std::str::from_utf8(value).ok()?,
            (f, BYTES_CODE) if f == source => found_source = value,
            _ if field == id || field == source => return None,
            _ => {}
        }
    }
    Some((found_id, found_source))
}

/// tantivy's VInt: seven bits a byte, least significant first, the last byte's high bit set.
fn vint(bytes: &mut &[u8]) -> Option<u64> {
    let mut value = 0u64;
    for (i, &b) in bytes.iter().enumerate().take(10) {
        value |= u64::from(b & 0x7f) << (7 * i);
        if b & 0x80 != 0 {
            *bytes = &bytes[i + 1..];
            return Some(value);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use tantivy::schema::{Schema, STORED, STRING};
    use tantivy::{doc, Index};

    /// What tantivy's own reader finds, for every document: the fast path must agree.
    #[test]
    fn the_fast_path_reads_what_tantivy_reads() {
        let mut schema = Schema::builder();
        let id = schema.add_text_field("_id", STRING | STORED);
        let source = schema.add_bytes_field("_source", STORED);
        let index = Index::create_in_ram(schema.build());
        let mut writer = index.writer_with_num_threads(1, 15_000_000).unwrap();
        let long = format!("{{\"text\":\"{}\"}}", "é".repeat(20_000));
        let sources: Vec<Vec<u8>> = vec![
            b"{}".to_vec(),
            br#"{"name":"Z\u00fcrich"}"#.to_vec(),
            long.into_bytes(),
            Vec::new(),
        ];
        for (n, s) in sources.iter().enumerate() {
            let name = format!("doc-{n}-{}", "ü".repeat(n * 70));
            writer
                .add_document(doc!(id => name, source => s.clone()))
                .unwrap();
        }
        // A document without a source reads as `{}`, as tantivy's path reads it.
        writer.add_document(doc!(id => "bare")).unwrap();
        writer.commit().unwrap();
        let searcher = index.reader().unwrap().searcher();
        let stored = StoredFields::default();
        let mut seen = 0;
        for (ord, segment) in searcher.segment_readers().iter().enumerate() {
            for doc_id in 0..segment.max_doc() {
                let addr = DocAddress::new(ord as u32, doc_id);
                let bytes = stored.stores(&searcher).unwrap().readers[ord]
                    .get_document_bytes(doc_id)
                    .unwrap();
                let fast = parse(bytes.as_slice(), id, source).expect("our layout");
                let doc: TantivyDocument = searcher.doc(addr).unwrap();
                let slow_id = doc.get_first(id).and_then(|v| v.as_str()).unwrap();
                let slow_source = doc.get_first(source).and_then(|v| v.as_bytes());
                assert_eq!(fast.0, slow_id);
                assert_eq!(fast.1, slow_source.unwrap_or(b"{}"));
                let (got_id, got_source) =
                    stored.id_and_source(&searcher, addr, id, source).unwrap();
                assert_eq!((got_id.as_str(), got_source.as_slice()), fast);
                seen += 1;
            }
        }
        assert_eq!(seen, 5);
    }

    #[test]
    fn a_truncated_or_foreign_layout_falls_back() {
        let (id, source) = (Field::from_field_id(0), Field::from_field_id(1));
        // One field announced, none present.
        assert_eq!(parse(&[0x81], id, source), None);
        // A u64 (code 2) where text was expected.
        assert_eq!(
            parse(&[0x81, 0, 0, 0, 0, 2, 1, 0, 0, 0, 0, 0, 0, 0], id, source),
            None
        );
        // A length past the end.
        assert_eq!(parse(&[0x81, 1, 0, 0, 0, 4, 0x85, b'{'], id, source), None);
        // A VInt that never ends.
        assert_eq!(parse(&[0x01; 12], id, source), None);
        assert_eq!(
            parse(
                &[0x82, 0, 0, 0, 0, 0, 0x81, b'a', 1, 0, 0, 0, 4, 0x82, b'{', b'}'],
                id,
                source
            ),
            Some(("a", &b"{}"[..]))
        );
    }
}
