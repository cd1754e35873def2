//! Any bytes as a corpus file, plain or under each compression: the reader hands out only
//! whole JSON-object lines, stops at its limits, and reports anything else as a `CorpusError`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use runner::corpus::{CorpusReader, DocumentSet};
use std::sync::OnceLock;

fn dir() -> &'static tempfile::TempDir {
    static DIR: OnceLock<tempfile::TempDir> = OnceLock::new();
    DIR.get_or_init(|| tempfile::tempdir().expect("temp dir"))
}

fuzz_target!(|data: &[u8]| {
    let Some((&selector, content)) = data.split_first() else { return };
    let ext = ["json", "json.gz", "json.zst", "json.bz2"][(selector & 3) as usize];
    let batch = 1 + (selector >> 2) as u64 % 7;
    let max_bytes = (selector & 0x80 != 0).then_some(64);
    let path = dir().path().join(format!("corpus.{ext}"));
    std::fs::write(&path, content).unwrap();
    // Bit 6: the file holds an action line before each document (read in pairs, dropped here).
    let set = DocumentSet { with_actions: selector & 0x40 != 0, ..DocumentSet::file(path, "i") };
    let Ok(mut reader) = CorpusReader::open(vec![set], None) else { return };
    let mut buf = String::new();
    let mut total = 0u64;
    loop {
        buf.clear();
        match reader.fill(&mut buf, batch, max_bytes) {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                assert!(n <= batch, "{n} documents in a batch of {batch}");
                let lines: Vec<&str> = buf.lines().collect();
                assert_eq!(lines.len() as u64, n, "one line per document: {buf:?}");
                for line in lines {
                    let t = line.trim();
                    assert!(t.starts_with('{') && t.ends_with('}'), "not an object line: {line:?}");
                }
                total += n;
                assert_eq!(reader.documents_read(), total);
            }
        }
    }
});
