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
    let zst = file(
        dir.path(),
        "c.json.zst",
        &zstd::encode_all(&b"{\"c\":1}\n"[..], 1).unwrap(),
    );
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
    assert_eq!(
        r.fill(&mut buf, 10, None).unwrap(),
        1,
        "the good document before the bad one is handed out"
    );
    assert_eq!(buf, "{\"a\":1}\n");
    let e = r.fill(&mut buf, 10, None).unwrap_err();
    assert!(matches!(e, CorpusError::NotJson { line: 2, .. }), "{e}");
    let whole = zstd::encode_all(&b"{\"a\":1}\n{\"a\":2}\n"[..], 1).unwrap();
    let f = file(dir.path(), "t.json.zst", &whole[..whole.len() - 4]);
    let mut r = CorpusReader::open(vec![f], None).unwrap();
    let mut buf = String::new();
    let first = r.fill(&mut buf, 10, None);
    assert!(
        matches!(first, Err(CorpusError::Read { .. }))
            || matches!(r.fill(&mut buf, 10, None), Err(CorpusError::Read { .. }))
    );
}

#[test]
fn a_line_that_is_not_utf8_is_an_error_naming_its_line() {
    let dir = tempfile::tempdir().unwrap();
    // The second line holds a lone 0xff byte, which no UTF-8 text holds.
    let mut bytes = "{\"name\":\"Sankt Pölten\"}\n{\"a\":\"".as_bytes().to_vec();
    bytes.extend_from_slice(&[0xff, b'"', b'}', b'\n']);
    let f = file(dir.path(), "bad.json", &bytes);
    let mut r = CorpusReader::open(vec![f], None).unwrap();
    let mut buf = String::new();
    assert_eq!(r.fill(&mut buf, 10, None).unwrap(), 1);
    assert_eq!(buf, "{\"name\":\"Sankt Pölten\"}\n");
    let e = r.fill(&mut buf, 10, None).unwrap_err();
    assert!(
        matches!(e, CorpusError::Read { line: 2, .. }) && e.to_string().contains("UTF-8"),
        "{e}"
    );
}

#[test]
fn generated_documents_follow_files_and_stop_at_their_count() {
    let dir = tempfile::tempdir().unwrap();
    let plain = file(dir.path(), "a.json", b"{\"a\":1}\n");
    let generated = DocumentSet {
        origin: Origin::Generated {
            dataset: Dataset::Small,
            seed: 3,
        },
        document_count: Some(5),
        target_index: "i".into(),
        with_actions: false,
        create: false,
    };
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
    assert!(matches!(
        check_first_document(&p("e.json", b"\n\n")),
        Err(CorpusError::Empty { .. })
    ));
    assert!(matches!(
        check_first_document(&p("t.json", b"a,b,c\n")),
        Err(CorpusError::NotJson { line: 1, .. })
    ));
    assert!(matches!(
        check_first_document(&p("z.json.gz", b"{\"a\":1}\n")),
        Err(CorpusError::Read { .. })
    ));
}

/// Action lines that alternate an id'd index and an update, to see both framings.
struct Alternate(u64);

impl ActionLines for Alternate {
    fn write_action(&mut self, buf: &mut String) -> Action {
        self.0 += 1;
        if self.0 % 2 == 0 {
            let start = buf.len() + "{\"update\":{\"_id\":".len();
            buf.push_str("{\"update\":{\"_id\":\"1\"}}\n");
            Action {
                verb: Verb::Update,
                id: Some(start..start + 3),
            }
        } else {
            buf.push_str("{\"index\":{}}\n");
            Action {
                verb: Verb::Index,
                id: None,
            }
        }
    }
}

#[test]
fn bulk_framing_puts_an_action_before_each_document_and_wraps_updates() {
    let dir = tempfile::tempdir().unwrap();
    let f = file(dir.path(), "a.json", b"{\"a\":1}\n\n{\"a\":2}\r\n");
    let mut r = CorpusReader::open(vec![f], None)
        .unwrap()
        .with_framing(Framing::Bulk(Box::new(Alternate(0))));
    let mut buf = String::new();
    assert_eq!(r.fill(&mut buf, 10, None).unwrap(), 2);
    assert_eq!(
        buf,
        "{\"index\":{}}\n{\"a\":1}\n{\"update\":{\"_id\":\"1\"}}\n{\"doc\":{\"a\":2}}\n"
    );
    assert_eq!(
        r.fill(&mut buf, 10, None).unwrap(),
        0,
        "no dangling action line at the end"
    );
    assert_eq!(buf.lines().count(), 4);
}

#[test]
fn files_with_their_own_action_lines_keep_them_and_count_documents() {
    let dir = tempfile::tempdir().unwrap();
    let mut f = file(
        dir.path(),
        "a.json",
        b"{\"index\":{\"_id\":\"x\"}}\n{\"a\":1}\n{\"create\":{}}\n{\"a\":2}\n",
    );
    f.with_actions = true;
    f.document_count = Some(2);
    let mut r = CorpusReader::open(vec![f.clone()], None)
        .unwrap()
        .with_framing(Framing::Bulk(Box::new(Alternate(0))));
    let mut buf = String::new();
    assert_eq!(r.fill(&mut buf, 1, None).unwrap(), 1);
    assert_eq!(buf, "{\"index\":{\"_id\":\"x\"}}\n{\"a\":1}\n");
    assert_eq!(count_documents(&[f.clone()], None).unwrap(), 2);
    let mut r = CorpusReader::open(vec![f], None).unwrap();
    buf.clear();
    assert_eq!(r.fill(&mut buf, 10, None).unwrap(), 2);
    assert_eq!(
        buf, "{\"a\":1}\n{\"a\":2}\n",
        "bare documents drop the action lines"
    );
    let mut odd = file(
        dir.path(),
        "b.json",
        b"{\"index\":{}}\n{\"a\":1}\n{\"index\":{}}\n",
    );
    odd.with_actions = true;
    let mut r = CorpusReader::open(vec![odd], None)
        .unwrap()
        .with_framing(Framing::Bulk(Box::new(Alternate(0))));
    buf.clear();
    assert_eq!(r.fill(&mut buf, 10, None).unwrap(), 1);
    assert_eq!(
        buf, "{\"index\":{}}\n{\"a\":1}\n",
        "the document without its pair is not sent"
    );
    assert!(matches!(
        r.fill(&mut buf, 10, None),
        Err(CorpusError::ActionWithoutDocument { line: 2, .. })
    ));
    let mut bad = file(dir.path(), "c.json", b"[1]\n{\"a\":1}\n");
    bad.with_actions = true;
    assert!(matches!(
        check_first(bad),
        Err(CorpusError::NotAction { line: 1, .. })
    ));
}

#[test]
fn a_looped_reader_starts_over_until_its_limit() {
    let dir = tempfile::tempdir().unwrap();
    let f = file(dir.path(), "a.json", b"{\"a\":1}\n{\"a\":2}\n");
    let mut r = CorpusReader::open(vec![f], Some(5)).unwrap().looped(true);
    let mut buf = String::new();
    assert_eq!(r.fill(&mut buf, 10, None).unwrap(), 5);
    assert_eq!(
        buf.lines().collect::<Vec<_>>(),
        [
            "{\"a\":1}",
            "{\"a\":2}",
            "{\"a\":1}",
            "{\"a\":2}",
            "{\"a\":1}"
        ]
    );
    let empty = file(dir.path(), "e.json", b"\n");
    let mut r = CorpusReader::open(vec![empty], None).unwrap().looped(true);
    assert_eq!(
        r.fill(&mut buf, 10, None).unwrap(),
        0,
        "looping over nothing ends"
    );
}

#[test]
fn declared_count_is_checked() {
    let dir = tempfile::tempdir().unwrap();
    let mut f = file(dir.path(), "a.json", b"{\"a\":1}\n");
    f.document_count = Some(2);
    let e = count_documents(&[f], None).unwrap_err();
    assert!(matches!(
        e,
        CorpusError::CountMismatch {
            declared: 2,
            actual: 1,
            ..
        }
    ));
}

/// What a batch's pairs say, as text: (verb, index, id, document).
fn pairs(buf: &str, items: &[BatchItem]) -> Vec<(Verb, Option<String>, Option<String>, String)> {
    items
        .iter()
        .map(|i| {
            (
                i.verb,
                BatchItem::text(buf, &i.index).map(|s| s.into_owned()),
                BatchItem::text(buf, &i.id).map(|s| s.into_owned()),
                buf[i.document.clone()].to_string(),
            )
        })
        .collect()
}

#[test]
fn batches_name_each_action_and_document_without_a_bulk_parser() {
    let dir = tempfile::tempdir().unwrap();
    // Generated action lines, the constant one read in place and an id'd update wrapped.
    let f = file(dir.path(), "a.json", b"{\"a\":1}\n\n{\"a\":2}\r\n");
    let mut r = CorpusReader::open(vec![f.clone()], None)
        .unwrap()
        .with_framing(Framing::Bulk(Box::new(Alternate(0))));
    let (mut buf, mut items) = (String::new(), Vec::new());
    assert_eq!(r.fill_items(&mut buf, &mut items, 10, None).unwrap(), 2);
    assert_eq!(
        pairs(&buf, &items),
        vec![
            (Verb::Index, None, None, "{\"a\":1}".to_string()),
            (
                Verb::Update,
                None,
                Some("1".to_string()),
                "{\"doc\":{\"a\":2}}".to_string()
            ),
        ]
    );
    struct Constant;
    impl ActionLines for Constant {
        fn write_action(&mut self, buf: &mut String) -> Action {
            buf.push_str("{\"index\":{}}\n");
            Action {
                verb: Verb::Index,
                id: None,
            }
        }
        fn constant(&self) -> Option<&'static str> {
            Some("{\"index\":{}}\n")
        }
    }
    let mut r = CorpusReader::open(vec![f], None)
        .unwrap()
        .with_framing(Framing::Bulk(Box::new(Constant)));
    let (mut buf, mut items) = (String::new(), Vec::new());
    assert_eq!(r.uniform_actions(), Some(Verb::Index));
    assert_eq!(r.fill_items(&mut buf, &mut items, 10, None).unwrap(), 2);
    assert!(
        items.is_empty(),
        "uniform batches list no pairs: their lines are the pairs"
    );
    let uniform: Vec<Pair> = Pairs::Each(Verb::Index).iter(&buf).collect();
    assert_eq!(
        uniform,
        vec![
            Pair {
                verb: Verb::Index,
                index: None,
                id: None,
                document: "{\"a\":1}"
            },
            Pair {
                verb: Verb::Index,
                index: None,
                id: None,
                document: "{\"a\":2}"
            },
        ]
    );

    // A file's own action lines: verb, `_index` and `_id` (escapes decoded) taken from them.
    let mut own = file(dir.path(), "b.json", b"{\"create\":{\"_index\":\"logs\",\"_id\":\"a\\\"b\",\"routing\":1}}\n{\"a\":1}\n{\"update\":{\"_id\":\"7\"}}\n{\"doc\":{\"a\":2}}\n");
    own.with_actions = true;
    let mut r = CorpusReader::open(vec![own], None)
        .unwrap()
        .with_framing(Framing::Bulk(Box::new(Constant)));
    assert_eq!(r.uniform_actions(), None);
    let (mut buf, mut items) = (String::new(), Vec::new());
    assert_eq!(r.fill_items(&mut buf, &mut items, 10, None).unwrap(), 2);
    assert_eq!(
        pairs(&buf, &items),
        vec![
            (
                Verb::Create,
                Some("logs".to_string()),
                Some("a\"b".to_string()),
                "{\"a\":1}".to_string()
            ),
            (
                Verb::Update,
                None,
                Some("7".to_string()),
                "{\"doc\":{\"a\":2}}".to_string()
            ),
        ]
    );
    // A batch cut short by a broken document holds the pairs of the documents it hands out.
    let broken = file(dir.path(), "c.json", b"{\"a\":1}\nnot json\n");
    let mut r = CorpusReader::open(vec![broken], None)
        .unwrap()
        .with_framing(Framing::Bulk(Box::new(Alternate(0))));
    let (mut buf, mut items) = (String::new(), Vec::new());
    assert_eq!(r.fill_items(&mut buf, &mut items, 10, None).unwrap(), 1);
    assert_eq!(items.len(), 1);
}

#[test]
fn action_lines_from_files_must_be_one_action_with_string_names() {
    assert_eq!(
        parse_action_line("{\"index\":{}}"),
        Some((Verb::Index, None, None))
    );
    assert_eq!(
        parse_action_line("{\"delete\":{\"_id\":\"x\"}}"),
        Some((Verb::Delete, None, Some(17..20)))
    );
    for bad in [
        "{\"index\":{\"_id\":5}}",
        "{\"index\":{},\"create\":{}}",
        "{\"upsert\":{}}",
        "{}",
        "[1]",
    ] {
        assert_eq!(parse_action_line(bad), None, "{bad}");
    }
}

#[test]
fn a_file_of_blank_lines_is_refused_after_a_bounded_read() {
    // 2,000,001 line breaks compress to a few hundred bytes; reading them all would be
    // a file of nothing, and a bomb of them would cost minutes.
    let dir = tempfile::tempdir().unwrap();
    let bomb = zstd::encode_all(&vec![b'\n'; 2_000_001][..], 19).unwrap();
    assert!(bomb.len() < 4096, "{}", bomb.len());
    let f = file(dir.path(), "blank.json.zst", &bomb);
    let e = check_first(f).unwrap_err();
    assert!(matches!(e, CorpusError::Blank { after: 0, .. }), "{e}");
    assert!(
        e.to_string()
            .contains("more than 1000000 blank lines in a row"),
        "{e}"
    );
    // A few blank lines between documents stay fine.
    let ok = file(dir.path(), "ok.json", b"{\"a\":1}\n\n\n{\"a\":2}\n");
    assert_eq!(count_documents(&[ok], None).unwrap(), 2);
}
