use super::*;
use std::io::Write;

fn file(dir: &Path, name: &str, content: &[u8]) -> DocumentSet {
    let path = dir.join(name);
    std::fs::write(&path, content).unwrap();
    DocumentSet::file(path, "i")
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
    let generated = DocumentSet { origin: Origin::Generated { dataset: Dataset::Small, seed: 3 }, document_count: Some(5), target_index: "i".into(), with_actions: false };
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

/// Action lines that alternate an id'd index and an update, to see both framings.
struct Alternate(u64);

impl ActionLines for Alternate {
    fn write_action(&mut self, buf: &mut String) -> DocumentAs {
        self.0 += 1;
        if self.0 % 2 == 0 {
            buf.push_str("{\"update\":{\"_id\":\"1\"}}\n");
            DocumentAs::PartialUpdate
        } else {
            buf.push_str("{\"index\":{}}\n");
            DocumentAs::Source
        }
    }
}

#[test]
fn bulk_framing_puts_an_action_before_each_document_and_wraps_updates() {
    let dir = tempfile::tempdir().unwrap();
    let f = file(dir.path(), "a.json", b"{\"a\":1}\n\n{\"a\":2}\r\n");
    let mut r = CorpusReader::open(vec![f], None).unwrap().with_framing(Framing::Bulk(Box::new(Alternate(0))));
    let mut buf = String::new();
    assert_eq!(r.fill(&mut buf, 10, None).unwrap(), 2);
    assert_eq!(buf, "{\"index\":{}}\n{\"a\":1}\n{\"update\":{\"_id\":\"1\"}}\n{\"doc\":{\"a\":2}}\n");
    assert_eq!(r.fill(&mut buf, 10, None).unwrap(), 0, "no dangling action line at the end");
    assert_eq!(buf.lines().count(), 4);
}

#[test]
fn files_with_their_own_action_lines_keep_them_and_count_documents() {
    let dir = tempfile::tempdir().unwrap();
    let mut f = file(dir.path(), "a.json", b"{\"index\":{\"_id\":\"x\"}}\n{\"a\":1}\n{\"create\":{}}\n{\"a\":2}\n");
    f.with_actions = true;
    f.document_count = Some(2);
    let mut r = CorpusReader::open(vec![f.clone()], None).unwrap().with_framing(Framing::Bulk(Box::new(Alternate(0))));
    let mut buf = String::new();
    assert_eq!(r.fill(&mut buf, 1, None).unwrap(), 1);
    assert_eq!(buf, "{\"index\":{\"_id\":\"x\"}}\n{\"a\":1}\n");
    assert_eq!(count_documents(&[f.clone()], None).unwrap(), 2);
    let mut r = CorpusReader::open(vec![f], None).unwrap();
    buf.clear();
    assert_eq!(r.fill(&mut buf, 10, None).unwrap(), 2);
    assert_eq!(buf, "{\"a\":1}\n{\"a\":2}\n", "bare documents drop the action lines");
    let mut odd = file(dir.path(), "b.json", b"{\"index\":{}}\n{\"a\":1}\n{\"index\":{}}\n");
    odd.with_actions = true;
    let mut r = CorpusReader::open(vec![odd], None).unwrap().with_framing(Framing::Bulk(Box::new(Alternate(0))));
    buf.clear();
    assert_eq!(r.fill(&mut buf, 10, None).unwrap(), 1);
    assert_eq!(buf, "{\"index\":{}}\n{\"a\":1}\n", "the document without its pair is not sent");
    assert!(matches!(r.fill(&mut buf, 10, None), Err(CorpusError::ActionWithoutDocument { line: 2, .. })));
    let mut bad = file(dir.path(), "c.json", b"[1]\n{\"a\":1}\n");
    bad.with_actions = true;
    assert!(matches!(check_first(bad), Err(CorpusError::NotAction { line: 1, .. })));
}

#[test]
fn a_looped_reader_starts_over_until_its_limit() {
    let dir = tempfile::tempdir().unwrap();
    let f = file(dir.path(), "a.json", b"{\"a\":1}\n{\"a\":2}\n");
    let mut r = CorpusReader::open(vec![f], Some(5)).unwrap().looped(true);
    let mut buf = String::new();
    assert_eq!(r.fill(&mut buf, 10, None).unwrap(), 5);
    assert_eq!(buf.lines().collect::<Vec<_>>(), ["{\"a\":1}", "{\"a\":2}", "{\"a\":1}", "{\"a\":2}", "{\"a\":1}"]);
    let empty = file(dir.path(), "e.json", b"\n");
    let mut r = CorpusReader::open(vec![empty], None).unwrap().looped(true);
    assert_eq!(r.fill(&mut buf, 10, None).unwrap(), 0, "looping over nothing ends");
}

#[test]
fn declared_count_is_checked() {
    let dir = tempfile::tempdir().unwrap();
    let mut f = file(dir.path(), "a.json", b"{\"a\":1}\n");
    f.document_count = Some(2);
    let e = count_documents(&[f], None).unwrap_err();
    assert!(matches!(e, CorpusError::CountMismatch { declared: 2, actual: 1, .. }));
}
