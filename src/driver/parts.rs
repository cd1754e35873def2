//! What the corpus feeder reads: the files as one queue, or, for a Rally track's bulk
//! (`split: rally`), one slice of each file per esrally worker, read as esrally's
//! `PartitionBulkIndexParamSource` reads them (params.py): a worker's clients share a slice
//! bounded by `bounds()` over their task-client indexes, its readers take turns between
//! corpora (`create_readers`), a bulk never spans two files, and `ingest-percentage` keeps
//! the first bulks of each slice. The slices' bulks go out in turn, as the workers send them
//! side by side.

use super::actions::BulkActions;
use crate::corpus::{BatchItem, CorpusError, CorpusReader, DocumentSet, Framing, Verb};
use crate::ops::BulkSpec;
use std::ops::Range;

/// Readers opened before the race at most (each holds a read buffer and a decoder).
const OPEN_AHEAD: usize = 64;

/// The feeder's source of bulks.
pub enum FeedReader {
    One(CorpusReader),
    Parts(PartedReader),
}

impl FeedReader {
    pub fn fill_items(
        &mut self,
        body: &mut String,
        items: &mut Vec<BatchItem>,
        bulk_size: u64,
        flush_bytes: Option<u64>,
    ) -> Result<u64, CorpusError> {
        match self {
            FeedReader::One(r) => r.fill_items(body, items, bulk_size, flush_bytes),
            FeedReader::Parts(p) => p.fill_items(body, items, bulk_size, flush_bytes),
        }
    }

    pub fn documents_read(&self) -> u64 {
        match self {
            FeedReader::One(r) => r.documents_read(),
            FeedReader::Parts(p) => p.documents,
        }
    }

    pub fn uniform_actions(&self) -> Option<Verb> {
        match self {
            FeedReader::One(r) => r.uniform_actions(),
            FeedReader::Parts(p) => p.uniform,
        }
    }
}

/// A slice of one file: its documents `skip..skip + take`.
#[derive(Debug, Clone)]
pub struct Window {
    pub file: DocumentSet,
    pub skip: u64,
    pub take: u64,
}

/// Rally's `bounds()`: the first document and the count of clients `first..=last` of
/// `clients`, each client's share `total / clients` rounded as Python's `round` does.
fn bounds(total: u64, clients: Range<u64>, of: u64) -> (u64, u64) {
    let per = total as f64 / of.max(1) as f64;
    let start = (per * clients.start as f64).round_ties_even() as u64;
    let end = (per * clients.end as f64).round_ties_even() as u64;
    (start, end.saturating_sub(start))
}

/// The windows a worker serving task clients `part` of `clients` reads, in Rally's order:
/// its first corpus is `part.start mod corpora`, then one file of each corpus in turn. None
/// when a file's document count is not declared (Rally requires it).
pub fn windows(
    files: &[DocumentSet],
    file_corpus: &[usize],
    part: &Range<u64>,
    clients: u64,
) -> Option<Vec<Window>> {
    let corpora = file_corpus.iter().max().map_or(1, |m| m + 1);
    let mut queues: Vec<std::collections::VecDeque<Window>> = vec![Default::default(); corpora];
    for (i, file) in files.iter().enumerate() {
        let (skip, take) = bounds(file.document_count?, part.clone(), clients);
        if take > 0 {
            let corpus = file_corpus.get(i).copied().unwrap_or(0);
            queues[corpus].push_back(Window {
                file: file.clone(),
                skip,
                take,
            });
        }
    }
    queues.rotate_left((part.start % corpora as u64) as usize);
    let mut out = Vec::new();
    while queues.iter().any(|q| !q.is_empty()) {
        for q in queues.iter_mut() {
            out.extend(q.pop_front());
        }
    }
    Some(out)
}

/// One worker's slice: its windows, read one after another, each cut into bulks. The
/// windows' readers are opened (and their starts reached) before the race, not when they are
/// due, up to `OPEN_AHEAD` readers in all; the rest when due.
struct Part {
    windows: Vec<Window>,
    /// The next window without a reader.
    next: usize,
    readers: std::collections::VecDeque<CorpusReader>,
    /// Bulks of each pass (`ingest-percentage`), else every bulk of the windows.
    budget: Option<u64>,
    sent: u64,
    /// Documents read in this pass: a looped pass over nothing ends the part.
    read_this_pass: u64,
    done: bool,
}

pub struct PartedReader {
    parts: Vec<Part>,
    turn: usize,
    looped: bool,
    make: Box<dyn Fn(&Window) -> Result<CorpusReader, CorpusError> + Send>,
    documents: u64,
    uniform: Option<Verb>,
}

impl PartedReader {
    /// The slices of `bulk`'s files for workers `parts` of a task's `clients`; None when a
    /// file's count is not declared.
    pub fn new(
        bulk: &BulkSpec,
        parts: &[Range<u64>],
        clients: u64,
        seed: u64,
    ) -> Result<Option<PartedReader>, CorpusError> {
        let mut slices = Vec::new();
        for part in parts {
            let Some(windows) = windows(&bulk.files, &bulk.file_corpus, part, clients) else {
                return Ok(None);
            };
            let bulks: u64 = windows
                .iter()
                .map(|w| w.take.div_ceil(bulk.bulk_size.0.max(1)))
                .sum();
            slices.push(Part {
                budget: bulk
                    .ingest_percentage
                    .map(|pct| (bulks as f64 * pct / 100.0).ceil() as u64),
                windows,
                next: 0,
                readers: Default::default(),
                sent: 0,
                read_this_pass: 0,
                done: false,
            });
        }
        let (conflicts, create) = (bulk.conflicts, bulk.create);
        // As the one queue frames them (`CorpusFeed::one_queue`): one index, named in Rally's
        // lines where the driver's; files for several indices, each line naming its own (the
        // batch then lists its items, so that every backend reads each one's index).
        let several = bulk.index.is_empty();
        let rally_index = bulk
            .action_lines
            .name_the_index()
            .then(|| bulk.index.clone())
            .filter(|i| !i.is_empty());
        let make = move |w: &Window| {
            let actions = BulkActions::new(conflicts, Some(w.take), seed)
                .numbering_from(w.skip)
                .creating(create)
                .naming(rally_index.as_deref());
            CorpusReader::open(vec![w.file.clone()], Some(w.take))?
                .skipping(w.skip)
                .with_framing(Framing::Bulk(Box::new(actions)))
                .naming_indices(several)
                .opened()
        };
        // Each slice's first window first, then the next ones, while the budget lasts.
        let mut budget = OPEN_AHEAD;
        while budget > 0 && slices.iter().any(|p| p.next < p.windows.len()) {
            for part in slices.iter_mut().filter(|p| p.next < p.windows.len()) {
                if budget == 0 {
                    break;
                }
                part.readers.push_back(make(&part.windows[part.next])?);
                part.next += 1;
                budget -= 1;
            }
        }
        // Every window frames its documents alike but for the index its lines name.
        let uniform = slices
            .iter()
            .flat_map(|p| p.readers.front())
            .next()
            .and_then(CorpusReader::uniform_actions);
        Ok(Some(PartedReader {
            parts: slices,
            turn: 0,
            looped: bulk.looped,
            make: Box::new(make),
            documents: 0,
            uniform,
        }))
    }

    /// The next bulk of the next slice in turn; 0 once every slice is read.
    fn fill_items(
        &mut self,
        body: &mut String,
        items: &mut Vec<BatchItem>,
        bulk_size: u64,
        flush_bytes: Option<u64>,
    ) -> Result<u64, CorpusError> {
        let n = self.parts.len();
        for k in 0..n {
            let at = (self.turn + k) % n;
            let docs = self.next_bulk(at, body, items, bulk_size, flush_bytes)?;
            if docs > 0 {
                self.turn = at + 1;
                self.documents += docs;
                return Ok(docs);
            }
        }
        Ok(0)
    }

    fn next_bulk(
        &mut self,
        at: usize,
        body: &mut String,
        items: &mut Vec<BatchItem>,
        bulk_size: u64,
        flush_bytes: Option<u64>,
    ) -> Result<u64, CorpusError> {
        let looped = self.looped;
        let part = &mut self.parts[at];
        loop {
            if part.done {
                return Ok(0);
            }
            let read_all = part.readers.is_empty() && part.next >= part.windows.len();
            if part.budget.is_some_and(|b| part.sent >= b) || read_all {
                if !looped || part.read_this_pass == 0 {
                    part.done = true;
                    return Ok(0);
                }
                // A looped slice starts over from its own first document.
                part.readers.clear();
                (part.next, part.sent, part.read_this_pass) = (0, 0, 0);
            }
            if part.readers.is_empty() {
                part.readers
                    .push_back((self.make)(&part.windows[part.next])?);
                part.next += 1;
            }
            let reader = part.readers.front_mut().expect("opened above");
            let docs = reader.fill_items(body, items, bulk_size, flush_bytes)?;
            if docs > 0 {
                part.sent += 1;
                part.read_this_pass += docs;
                return Ok(docs);
            }
            part.readers.pop_front();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(name: &str, count: u64) -> DocumentSet {
        DocumentSet {
            document_count: Some(count),
            ..DocumentSet::file(name, "idx")
        }
    }

    #[test]
    fn bounds_round_as_python_does() {
        // 1,000 documents over 8 clients, two workers of 4: 500 each.
        assert_eq!(bounds(1000, 0..4, 8), (0, 500));
        assert_eq!(bounds(1000, 4..8, 8), (500, 500));
        // 5 over 2: 2.5 rounds to 2 (half to even), so the first gets 2, the second 3.
        assert_eq!(bounds(5, 0..1, 2), (0, 2));
        assert_eq!(bounds(5, 1..2, 2), (2, 3));
        // 7 over 2: 3.5 rounds to 4.
        assert_eq!(bounds(7, 0..1, 2), (0, 4));
    }

    /// Rally's own cases (tests/track/params_test.py, `test_calculate_*bounds*`): the first
    /// document and the count of clients `first..=last` of `clients`.
    #[test]
    fn bounds_are_rallys_in_rallys_own_cases() {
        let rally = |docs, first, last, clients| bounds(docs, first..last + 1, clients);
        assert_eq!(rally(1000, 0, 0, 1), (0, 1000));
        assert_eq!(
            (rally(1000, 0, 0, 2), rally(1000, 1, 1, 2)),
            ((0, 500), (500, 500))
        );
        // With action lines Rally counts lines, twice the documents; here documents.
        assert_eq!(rally(800, 3, 3, 4), (600, 200));
        for i in 0..8 {
            assert_eq!(rally(2000, i, i, 8), (250 * i, 250));
        }
        let twelve: Vec<(u64, u64)> = (0..12).map(|i| rally(16000, i, i, 12)).collect();
        assert_eq!(
            twelve[..4],
            [(0, 1333), (1333, 1334), (2667, 1333), (4000, 1333)]
        );
        assert_eq!(twelve[11], (14667, 1333));
        let six: Vec<(u64, u64)> = (0..6).map(|i| rally(3500, i, i, 6)).collect();
        assert_eq!(
            six,
            [
                (0, 583),
                (583, 584),
                (1167, 583),
                (1750, 583),
                (2333, 584),
                (2917, 583)
            ]
        );
        // Several clients on one worker (`test_calculate_bounds_for_multiple_clients_per_worker`).
        assert_eq!(
            (rally(2000, 0, 3, 8), rally(2000, 4, 7, 8)),
            ((0, 1000), (1000, 1000))
        );
    }

    #[test]
    fn a_worker_starts_with_its_own_corpus_and_takes_turns() {
        let files = [file("a1", 10), file("a2", 10), file("b1", 10)];
        let names = |ws: Vec<Window>| -> Vec<(String, u64, u64)> {
            ws.into_iter()
                .map(|w| (w.file.describe().display().to_string(), w.skip, w.take))
                .collect()
        };
        // Worker of clients 0..1 of 2: corpus a first, then b, then a's second file.
        assert_eq!(
            names(windows(&files, &[0, 0, 1], &(0..1), 2).unwrap()),
            [
                ("a1".into(), 0, 5),
                ("b1".into(), 0, 5),
                ("a2".into(), 0, 5)
            ]
        );
        // Worker of client 1: corpus b first.
        assert_eq!(
            names(windows(&files, &[0, 0, 1], &(1..2), 2).unwrap()),
            [
                ("b1".into(), 5, 5),
                ("a1".into(), 5, 5),
                ("a2".into(), 5, 5)
            ]
        );
        // No declared count: not split.
        let mut unknown = files.clone();
        unknown[1].document_count = None;
        assert!(windows(&unknown, &[0, 0, 1], &(0..1), 2).is_none());
    }

    fn bulk_of(dir: &std::path::Path, docs: u64, bulk_size: u64) -> BulkSpec {
        let path = dir.join("docs.json");
        let body: String = (0..docs).map(|i| format!("{{\"n\":{i}}}\n")).collect();
        std::fs::write(&path, body).unwrap();
        BulkSpec {
            index: "idx".into(),
            files: vec![DocumentSet {
                document_count: Some(docs),
                ..DocumentSet::file(&path, "idx")
            }],
            file_corpus: vec![0],
            action_lines: crate::ops::ActionLines::Rally,
            rally_split: true,
            ..BulkSpec::whole_body(bulk_size, None)
        }
    }

    /// A second file of the same corpus, `count` documents numbered from 10, for `index`.
    fn add_file(bulk: &mut BulkSpec, dir: &std::path::Path, count: u64, index: &str) {
        let path = dir.join(format!("more-{}.json", bulk.files.len()));
        let body: String = (10..10 + count)
            .map(|i| format!("{{\"n\":{i}}}\n"))
            .collect();
        std::fs::write(&path, body).unwrap();
        bulk.files.push(DocumentSet {
            document_count: Some(count),
            ..DocumentSet::file(&path, index)
        });
        bulk.file_corpus.push(0);
    }

    /// Every bulk the reader hands out, as the numbers of its documents.
    fn bulks(reader: &mut PartedReader, bulk_size: u64) -> Vec<Vec<u64>> {
        let mut out = Vec::new();
        loop {
            let (mut body, mut items) = (String::new(), Vec::new());
            let n = reader
                .fill_items(&mut body, &mut items, bulk_size, None)
                .unwrap();
            if n == 0 || out.len() > 100 {
                return out;
            }
            out.push(
                body.lines()
                    .filter_map(|l| l.strip_prefix("{\"n\":"))
                    .map(|l| l.trim_end_matches('}').parse().unwrap())
                    .collect(),
            );
        }
    }

    #[test]
    fn each_worker_cuts_its_own_slice_into_bulks_and_they_take_turns() {
        let dir = tempfile::tempdir().unwrap();
        let bulk = bulk_of(dir.path(), 10, 3);
        // Two workers of 8 clients: documents 0-4 and 5-9, each cut in bulks of 3.
        let mut r = PartedReader::new(&bulk, &[0..4, 4..8], 8, 1)
            .unwrap()
            .unwrap();
        assert_eq!(
            bulks(&mut r, 3),
            vec![vec![0, 1, 2], vec![5, 6, 7], vec![3, 4], vec![8, 9]]
        );
        assert_eq!(r.documents, 10);
        // Rally's action lines name the index.
        let mut r = PartedReader::new(&bulk, &[0..8], 8, 1).unwrap().unwrap();
        let (mut body, mut items) = (String::new(), Vec::new());
        r.fill_items(&mut body, &mut items, 3, None).unwrap();
        assert!(
            body.starts_with("{\"index\": {\"_index\": \"idx\"}}\n{\"n\":0}\n"),
            "{body}"
        );
    }

    #[test]
    fn ingest_percentage_takes_the_first_bulks_of_every_slice() {
        let dir = tempfile::tempdir().unwrap();
        let mut bulk = bulk_of(dir.path(), 20, 2);
        bulk.ingest_percentage = Some(40.0);
        // Each slice of 10 has 5 bulks; 40% of them is 2.
        let mut r = PartedReader::new(&bulk, &[0..1, 1..2], 2, 1)
            .unwrap()
            .unwrap();
        assert_eq!(
            bulks(&mut r, 2),
            vec![vec![0, 1], vec![10, 11], vec![2, 3], vec![12, 13]]
        );
        // Looped, each slice starts over from its own first document.
        bulk.looped = true;
        let mut r = PartedReader::new(&bulk, &[0..1, 1..2], 2, 1)
            .unwrap()
            .unwrap();
        let got = bulks(&mut r, 2);
        assert_eq!(got[4..6], [vec![0, 1], vec![10, 11]]);
    }

    #[test]
    fn a_slice_numbers_its_ids_from_where_it_starts() {
        let dir = tempfile::tempdir().unwrap();
        let mut bulk = bulk_of(dir.path(), 4, 10);
        bulk.conflicts = Some(crate::ops::Conflicts {
            order: crate::ops::IdOrder::Sequential,
            probability: 0.0,
            on_conflict: crate::ops::OnConflict::Index,
            recency: 0.0,
        });
        let mut r = PartedReader::new(&bulk, &[0..1, 1..2], 2, 1)
            .unwrap()
            .unwrap();
        let (mut body, mut items) = (String::new(), Vec::new());
        r.fill_items(&mut body, &mut items, 10, None).unwrap();
        body.clear();
        items.clear();
        r.fill_items(&mut body, &mut items, 10, None).unwrap();
        assert!(
            body.starts_with(
                "{\"index\": {\"_index\": \"idx\", \"_id\": \"0000000002\"}}\n{\"n\":2}\n"
            ),
            "{body}"
        );
    }

    #[test]
    fn a_bulk_never_spans_two_files_of_a_slice() {
        let dir = tempfile::tempdir().unwrap();
        let mut bulk = bulk_of(dir.path(), 4, 3);
        add_file(&mut bulk, dir.path(), 4, "idx");
        // One worker: each file cut on its own, 3 + 1 documents each.
        let mut r = PartedReader::new(&bulk, &[0..2], 2, 1).unwrap().unwrap();
        assert_eq!(
            bulks(&mut r, 3),
            vec![vec![0, 1, 2], vec![3], vec![10, 11, 12], vec![13]]
        );
        // Two workers: each a half of each file, in turn.
        let mut r = PartedReader::new(&bulk, &[0..1, 1..2], 2, 1)
            .unwrap()
            .unwrap();
        assert_eq!(
            bulks(&mut r, 3),
            vec![vec![0, 1], vec![2, 3], vec![10, 11], vec![12, 13]]
        );
    }

    #[test]
    fn files_for_several_indices_name_each_documents_index() {
        let dir = tempfile::tempdir().unwrap();
        let mut bulk = bulk_of(dir.path(), 2, 10);
        add_file(&mut bulk, dir.path(), 2, "second");
        bulk.index = String::new();
        let mut r = PartedReader::new(&bulk, &[0..1], 1, 1).unwrap().unwrap();
        assert_eq!(
            r.uniform, None,
            "the batch lists its items, with their indices"
        );
        for want in ["idx", "second"] {
            let (mut body, mut items) = (String::new(), Vec::new());
            assert_eq!(r.fill_items(&mut body, &mut items, 10, None).unwrap(), 2);
            for item in &items {
                assert_eq!(
                    BatchItem::text(&body, &item.index).as_deref(),
                    Some(want),
                    "{body}"
                );
            }
        }
    }
}
