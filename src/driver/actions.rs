//! The action line before each document of a bulk body: `{"index":{}}`, or, with Rally's
//! simulated id conflicts, an id (a new one, or one indexed before) and an `index` or
//! `update` action. Written by the corpus feeder thread, outside the measured calls.

use crate::corpus::{Action, ActionLines, Verb};
use crate::ops::{Conflicts, IdOrder, OnConflict, BULK_ACTION_LINE};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

/// Rally's slope of the recency curve: a reused id is `Exp(30 × recency)` of the way back.
const RECENCY_SLOPE: f64 = 30.0;

/// The action line of a document created in a data stream.
const BULK_CREATE_LINE: &str = "{\"create\":{}}\n";

/// Rally's action lines, naming the index (`GenerateActionMetaData`'s format, spaces and all).
#[derive(Clone, Copy)]
struct RallyLines {
    index: &'static str,
    create: &'static str,
    /// Up to the id of an `index` or `update` with an id: `{"index": {"_index": "x", "_id": `.
    index_with_id: &'static str,
    update_with_id: &'static str,
}

impl RallyLines {
    fn new(index: &str) -> RallyLines {
        let name = serde_json::Value::String(index.to_string()).to_string();
        RallyLines {
            index: interned(format!("{{\"index\": {{\"_index\": {name}}}}}\n")),
            create: interned(format!("{{\"create\": {{\"_index\": {name}}}}}\n")),
            index_with_id: interned(format!("{{\"index\": {{\"_index\": {name}, \"_id\": ")),
            update_with_id: interned(format!("{{\"update\": {{\"_index\": {name}, \"_id\": ")),
        }
    }
}

/// A line kept for the life of the process, once per distinct text: a race names few indices,
/// and the corpus reader frames every document with the same `&'static str`.
fn interned(line: String) -> &'static str {
    use std::collections::HashSet;
    use std::sync::{Mutex, OnceLock};
    static LINES: OnceLock<Mutex<HashSet<&'static str>>> = OnceLock::new();
    let mut set = LINES
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    if let Some(s) = set.get(line.as_str()) {
        return s;
    }
    let s: &'static str = Box::leak(line.into_boxed_str());
    set.insert(s);
    s
}

pub struct BulkActions {
    conflicts: Option<Conflicts>,
    /// Random ids: a permutation of the corpus positions, so no id list is held in memory.
    permutation: Option<Permutation>,
    /// New ids handed out so far.
    issued: u64,
    rng: SmallRng,
    /// Every document is a `create` (into a data stream).
    create: bool,
    /// Rally's lines naming the index, instead of `{"index":{}}`.
    rally: Option<RallyLines>,
    /// Added to every id: a slice of a file numbers its documents from where it starts
    /// (Rally's `build_conflicting_ids(..., offset)`).
    first_id: u64,
}

impl BulkActions {
    /// `documents` is how many documents the task indexes; random ids need it (they are a
    /// permutation of 0..documents).
    pub fn new(conflicts: Option<Conflicts>, documents: Option<u64>, seed: u64) -> BulkActions {
        let permutation = match (conflicts, documents) {
            (
                Some(Conflicts {
                    order: IdOrder::Random,
                    ..
                }),
                Some(n),
            ) => Some(Permutation::new(n.max(1), seed)),
            _ => None,
        };
        BulkActions {
            conflicts,
            permutation,
            issued: 0,
            rng: SmallRng::seed_from_u64(seed),
            create: false,
            rally: None,
            first_id: 0,
        }
    }

    /// Ids from `first` on (the documents of a slice starting there).
    pub fn numbering_from(mut self, first: u64) -> Self {
        self.first_id = first;
        self
    }

    /// Action lines naming `index` as Rally writes them (a Rally track's bulk).
    pub fn naming(mut self, index: Option<&str>) -> Self {
        self.rally = index.map(RallyLines::new);
        self
    }

    /// Every document as a `create` action, as a data stream takes them.
    pub fn creating(mut self, create: bool) -> Self {
        self.create = create;
        self
    }

    /// The id of the `i`-th new document.
    fn id_of(&self, i: u64) -> u64 {
        self.first_id
            + match &self.permutation {
                // A looped corpus indexes the same ids again on each pass.
                Some(p) => p.apply(i % p.n),
                None => i,
            }
    }

    /// The new id or the reused one, and the action, of the next document.
    fn next(&mut self, c: Conflicts) -> (u64, OnConflict) {
        let reuse = self.issued > 0
            && c.probability > 0.0
            && self.rng.random::<f64>() * 100.0 <= c.probability;
        if !reuse {
            let id = self.id_of(self.issued);
            self.issued += 1;
            return (id, OnConflict::Index);
        }
        let last = self.issued - 1;
        let idx = if c.recency == 0.0 {
            self.rng.random_range(0..=last)
        } else {
            // An exponential sample, capped at 1, is how far back from the newest id to go.
            let u: f64 = 1.0 - self.rng.random::<f64>();
            let back = (-u.ln() / (RECENCY_SLOPE * c.recency)).min(1.0);
            (last as f64 * (1.0 - back)).round() as u64
        };
        (self.id_of(idx), c.on_conflict)
    }
}

impl ActionLines for BulkActions {
    fn constant(&self) -> Option<&'static str> {
        match (self.conflicts, self.create, self.rally) {
            (None, true, None) => Some(BULK_CREATE_LINE),
            (None, false, None) => Some(BULK_ACTION_LINE),
            (None, true, Some(r)) => Some(r.create),
            (None, false, Some(r)) => Some(r.index),
            _ => None,
        }
    }

    fn write_action(&mut self, buf: &mut String) -> Action {
        let Some(c) = self.conflicts else {
            let verb = if self.create {
                Verb::Create
            } else {
                Verb::Index
            };
            buf.push_str(self.constant().unwrap_or(BULK_ACTION_LINE));
            return Action { verb, id: None };
        };
        let (id, action) = self.next(c);
        let verb = match action {
            OnConflict::Index => Verb::Index,
            OnConflict::Update => Verb::Update,
        };
        buf.push_str(match (verb, self.rally) {
            (Verb::Update, None) => "{\"update\":{\"_id\":",
            (_, None) => "{\"index\":{\"_id\":",
            (Verb::Update, Some(r)) => r.update_with_id,
            (_, Some(r)) => r.index_with_id,
        });
        // Rally's ids: ten digits, zero-padded.
        let start = buf.len();
        buf.push('"');
        let mut digits = [b'0'; 20];
        let text = crate::units::decimal(&mut digits, id);
        for _ in text.len()..10 {
            buf.push('0');
        }
        buf.push_str(text);
        buf.push('"');
        let id = start..buf.len();
        buf.push_str("}}\n");
        Action { verb, id: Some(id) }
    }
}

/// A seeded bijection on `0..n`: a four-round Feistel network over the smallest even power
/// of two covering `n`, with cycle walking back into range.
struct Permutation {
    n: u64,
    half_bits: u32,
    keys: [u64; 4],
}

impl Permutation {
    fn new(n: u64, seed: u64) -> Permutation {
        let bits = (64 - (n - 1).leading_zeros()).max(2);
        let mut rng = SmallRng::seed_from_u64(seed ^ 0x1D5_C0F1_1C75);
        Permutation {
            n,
            half_bits: bits.div_ceil(2),
            keys: [rng.random(), rng.random(), rng.random(), rng.random()],
        }
    }

    fn encrypt(&self, x: u64) -> u64 {
        let mask = (1u64 << self.half_bits) - 1;
        let (mut left, mut right) = (x >> self.half_bits, x & mask);
        for key in self.keys {
            let f = splitmix(right ^ key) & mask;
            (left, right) = (right, left ^ f);
        }
        (left << self.half_bits) | right
    }

    fn apply(&self, i: u64) -> u64 {
        let mut x = self.encrypt(i);
        while x >= self.n {
            x = self.encrypt(x);
        }
        x
    }
}

fn splitmix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn conflicts(
        order: IdOrder,
        probability: f64,
        on_conflict: OnConflict,
        recency: f64,
    ) -> Option<Conflicts> {
        Some(Conflicts {
            order,
            probability,
            on_conflict,
            recency,
        })
    }

    fn lines(a: &mut BulkActions, n: usize) -> Vec<String> {
        (0..n)
            .map(|_| {
                let mut buf = String::new();
                a.write_action(&mut buf);
                buf
            })
            .collect()
    }

    fn id(line: &str) -> u64 {
        let start = line.find("_id\":\"").unwrap() + 6;
        line[start..start + 10].parse().unwrap()
    }

    #[test]
    fn without_conflicts_every_document_gets_a_plain_index_action() {
        let mut a = BulkActions::new(None, None, 1);
        assert_eq!(lines(&mut a, 2), vec![BULK_ACTION_LINE, BULK_ACTION_LINE]);
    }

    #[test]
    fn rallys_lines_name_the_index_as_rally_writes_them() {
        let a = BulkActions::new(None, None, 1).naming(Some("geo \"names\""));
        assert_eq!(
            a.constant(),
            Some("{\"index\": {\"_index\": \"geo \\\"names\\\"\"}}\n")
        );
        let mut a = BulkActions::new(
            conflicts(IdOrder::Sequential, 0.0, OnConflict::Index, 0.0),
            None,
            1,
        )
        .naming(Some("geonames"));
        let mut buf = String::new();
        let action = a.write_action(&mut buf);
        assert_eq!(
            buf,
            "{\"index\": {\"_index\": \"geonames\", \"_id\": \"0000000000\"}}\n"
        );
        assert_eq!(&buf[action.id.unwrap()], "\"0000000000\"");
        let parsed = crate::corpus::parse_action_line(buf.trim_end()).unwrap();
        assert_eq!(parsed.0, Verb::Index);
        let creating = BulkActions::new(None, None, 1)
            .creating(true)
            .naming(Some("logs"));
        assert_eq!(
            creating.constant(),
            Some("{\"create\": {\"_index\": \"logs\"}}\n")
        );
    }

    #[test]
    fn sequential_ids_without_reuse_are_zero_padded_in_order() {
        let mut a = BulkActions::new(
            conflicts(IdOrder::Sequential, 0.0, OnConflict::Index, 0.0),
            None,
            1,
        );
        assert_eq!(
            lines(&mut a, 3),
            vec![
                "{\"index\":{\"_id\":\"0000000000\"}}\n",
                "{\"index\":{\"_id\":\"0000000001\"}}\n",
                "{\"index\":{\"_id\":\"0000000002\"}}\n"
            ]
        );
    }

    #[test]
    fn random_ids_are_a_permutation_of_the_corpus() {
        for n in [1u64, 2, 7, 1000, 4097] {
            let mut a = BulkActions::new(
                conflicts(IdOrder::Random, 0.0, OnConflict::Index, 0.0),
                Some(n),
                9,
            );
            let mut ids: Vec<u64> = lines(&mut a, n as usize).iter().map(|l| id(l)).collect();
            let in_order = ids.windows(2).all(|w| w[0] < w[1]);
            ids.sort_unstable();
            assert_eq!(ids, (0..n).collect::<Vec<_>>(), "n = {n}");
            assert!(n < 7 || !in_order, "n = {n}: ids came out in order");
        }
    }

    #[test]
    fn reused_ids_follow_the_probability_and_are_ids_already_indexed() {
        let mut a = BulkActions::new(
            conflicts(IdOrder::Sequential, 25.0, OnConflict::Update, 0.0),
            None,
            3,
        );
        let (mut seen, mut updates) = (std::collections::HashSet::new(), 0);
        for line in lines(&mut a, 20_000) {
            let id = id(&line);
            if line.starts_with("{\"update\"") {
                updates += 1;
                assert!(seen.contains(&id), "update of {id}, never indexed");
            } else {
                assert!(seen.insert(id), "a new id {id} twice");
            }
        }
        assert!(
            (4_500..5_500).contains(&updates),
            "{updates} updates of 20,000 at 25%"
        );
    }

    #[test]
    fn recency_favours_recent_ids() {
        let mean_age = |recency: f64| {
            let mut a = BulkActions::new(
                conflicts(IdOrder::Sequential, 50.0, OnConflict::Index, recency),
                None,
                5,
            );
            // How far back each reused id is, as a share of the ids indexed until then.
            let (mut new, mut back, mut count) = (0u64, 0f64, 0u64);
            for line in lines(&mut a, 20_000) {
                let id = id(&line);
                if id == new {
                    new += 1;
                } else {
                    back += (new - 1 - id) as f64 / new as f64;
                    count += 1;
                }
            }
            back / count as f64
        };
        let (uniform, recent) = (mean_age(0.0), mean_age(1.0));
        // Uniform reuse goes back half the ids on average; recency 1 about 1/30.
        assert!((0.4..0.6).contains(&uniform), "{uniform}");
        assert!(recent < 0.1, "{recent}");
    }
}
