//! A hit's `_id` and `_source` read straight from the doc store's bytes.
//!
//! tantivy's `Searcher::doc` deserialises a whole `TantivyDocument`, and its `Vec<u8>` reader
//! takes a stored `_source` one byte (one `read_exact`) at a time: on a search that fetches ten
//! hits that was a quarter of the engine's time. Our documents store two fields only (`_id` as
//! text, `_source` as bytes) and two numbers (`_version` where it is not 1, and `_seq_no`), whose
//! layout in the doc store is simple and stable across tantivy's doc store versions: a VInt field
//! count, then per field a little-endian u32 field number, a one-byte type code and, for text and
//! bytes, a VInt length and the bytes; for 64-bit numbers, eight little-endian bytes. Anything
//! else falls back to tantivy's own reader, so an unexpected layout costs speed, never an answer.
//!
//! `_version` and `_seq_no` live here rather than in columns: a dense column of every
//! document's sequence number cost a bulk load 16% of its documents per second.

use std::sync::{Arc, RwLock};
use tantivy::schema::{Field, Value as _};
use tantivy::store::StoreReader;
use tantivy::{DocAddress, Searcher, TantivyDocument};

/// tantivy's type codes for the value kinds we store.
const TEXT_CODE: u8 = 0;
const U64_CODE: u8 = 1;
const I64_CODE: u8 = 2;
const BYTES_CODE: u8 = 4;
const F64_CODE: u8 = 6;

/// The schema's fields the fast path reads.
#[derive(Clone, Copy, Debug)]
pub struct Layout {
    pub id: Field,
    pub source: Field,
    pub version: Field,
    pub seq_no: Field,
}

/// The fields of `mapping` the fast path reads.
pub fn layout(mapping: &crate::mapping::Mapping) -> Layout {
    Layout {
        id: mapping.id,
        source: mapping.source,
        version: mapping.version,
        seq_no: mapping.seq_no,
    }
}

/// One stored document as the fast path reads it: `_source` is `{}` and the numbers are absent
/// where the document stores none.
#[derive(Debug, PartialEq)]
struct Parsed<'a> {
    id: &'a str,
    source: &'a [u8],
    version: Option<u64>,
    seq_no: Option<u64>,
}
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
        layout: Layout,
    ) -> tantivy::Result<(String, Vec<u8>)> {
        self.read(searcher, addr, layout, |p| {
            (p.id.to_string(), p.source.to_vec())
        })
    }

    /// A document's `_version` (1 where none is stored) and `_seq_no` (0 where none is).
    pub fn version_and_seq_no(
        &self,
        searcher: &Searcher,
        addr: DocAddress,
        layout: Layout,
    ) -> tantivy::Result<(u64, u64)> {
        self.read(searcher, addr, layout, |p| {
            (p.version.unwrap_or(1), p.seq_no.unwrap_or(0))
        })
    }

    fn read<T>(
        &self,
        searcher: &Searcher,
        addr: DocAddress,
        layout: Layout,
        take: impl Fn(&Parsed) -> T,
    ) -> tantivy::Result<T> {
        let stores = self.stores(searcher)?;
        let reader = &stores.readers[addr.segment_ord as usize];
        let bytes = reader.get_document_bytes(addr.doc_id)?;
        if let Some(parsed) = parse(bytes.as_slice(), layout) {
            return Ok(take(&parsed));
        }
        let doc: TantivyDocument = searcher.doc(addr)?;
        let number = |f: Field| doc.get_first(f).and_then(|v| v.as_u64());
        Ok(take(&Parsed {
            id: doc
                .get_first(layout.id)
                .and_then(|v| v.as_str())
                .unwrap_or_default(),
            source: doc
                .get_first(layout.source)
                .and_then(|v| v.as_bytes())
                .unwrap_or(b"{}"),
            version: number(layout.version),
            seq_no: number(layout.seq_no),
        }))
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

/// One stored document's fields, or None when its layout is not the one described above (the
/// caller falls back to tantivy's reader).
fn parse(mut bytes: &[u8], layout: Layout) -> Option<Parsed<'_>> {
    let fields = vint(&mut bytes)?;
    let mut parsed = Parsed {
        id: "",
        source: b"{}",
        version: None,
        seq_no: None,
    };
    for _ in 0..fields {
        let (number, rest) = bytes.split_first_chunk::<4>()?;
        let field = Field::from_field_id(u32::from_le_bytes(*number));
        let (&code, rest) = rest.split_first()?;
        bytes = rest;
        if matches!(code, U64_CODE | I64_CODE | F64_CODE) {
            let (value, rest) = bytes.split_first_chunk::<8>()?;
            bytes = rest;
            let value = u64::from_le_bytes(*value);
            match (field, code) {
                (f, U64_CODE) if f == layout.version => parsed.version = Some(value),
                (f, U64_CODE) if f == layout.seq_no => parsed.seq_no = Some(value),
                _ if [layout.version, layout.seq_no, layout.id, layout.source].contains(&field) => {
                    return None
                }
                _ => {}
            }
            continue;
        }
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
            (f, TEXT_CODE) if f == layout.id => parsed.id = std::str::from_utf8(value).ok()?,
            (f, BYTES_CODE) if f == layout.source => parsed.source = value,
            _ if [layout.version, layout.seq_no, layout.id, layout.source].contains(&field) => {
                return None
            }
            _ => {}
        }
    }
    Some(parsed)
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
        let layout = Layout {
            id: schema.add_text_field("_id", STRING | STORED),
            source: schema.add_bytes_field("_source", STORED),
            version: schema.add_u64_field("_version", STORED),
            seq_no: schema.add_u64_field("_seq_no", STORED),
        };
        let other = schema.add_i64_field("n", STORED);
        let (id, source) = (layout.id, layout.source);
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
            let mut d = doc!(id => name, source => s.clone(), layout.seq_no => u64::MAX - n as u64);
            if n % 2 == 1 {
                d.add_u64(layout.version, 1 << (n * 20));
                d.add_i64(other, -7);
            }
            writer.add_document(d).unwrap();
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
                let fast = parse(bytes.as_slice(), layout).expect("our layout");
                let doc: TantivyDocument = searcher.doc(addr).unwrap();
                let slow_id = doc.get_first(id).and_then(|v| v.as_str()).unwrap();
                let slow_source = doc.get_first(source).and_then(|v| v.as_bytes());
                let number = |f: Field| doc.get_first(f).and_then(|v| v.as_u64());
                assert_eq!(fast.id, slow_id);
                assert_eq!(fast.source, slow_source.unwrap_or(b"{}"));
                assert_eq!(fast.version, number(layout.version));
                assert_eq!(fast.seq_no, number(layout.seq_no));
                let (got_id, got_source) = stored.id_and_source(&searcher, addr, layout).unwrap();
                assert_eq!(
                    (got_id.as_str(), got_source.as_slice()),
                    (fast.id, fast.source)
                );
                let meta = stored.version_and_seq_no(&searcher, addr, layout).unwrap();
                assert_eq!(meta, (fast.version.unwrap_or(1), fast.seq_no.unwrap_or(0)));
                seen += 1;
            }
        }
        assert_eq!(seen, 5);
    }

    #[test]
    fn a_truncated_or_foreign_layout_falls_back() {
        let layout = Layout {
            id: Field::from_field_id(0),
            source: Field::from_field_id(1),
            version: Field::from_field_id(2),
            seq_no: Field::from_field_id(3),
        };
        // One field announced, none present.
        assert_eq!(parse(&[0x81], layout), None);
        // An i64 (code 2) where text was expected.
        assert_eq!(
            parse(&[0x81, 0, 0, 0, 0, 2, 1, 0, 0, 0, 0, 0, 0, 0], layout),
            None
        );
        // A sequence number cut short.
        assert_eq!(parse(&[0x81, 3, 0, 0, 0, 1, 1, 0, 0], layout), None);
        // A sequence number stored as text.
        assert_eq!(parse(&[0x81, 3, 0, 0, 0, 0, 0x81, b'1'], layout), None);
        // A length past the end.
        assert_eq!(parse(&[0x81, 1, 0, 0, 0, 4, 0x85, b'{'], layout), None);
        // A VInt that never ends.
        assert_eq!(parse(&[0x01; 12], layout), None);
        let two = [
            0x83, 0, 0, 0, 0, 0, 0x81, b'a', 1, 0, 0, 0, 4, 0x82, b'{', b'}', 3, 0, 0, 0, 1, 9, 0,
            0, 0, 0, 0, 0, 0,
        ];
        assert_eq!(
            parse(&two, layout),
            Some(Parsed {
                id: "a",
                source: b"{}",
                version: None,
                seq_no: Some(9)
            })
        );
    }
}
