//! What each client does next: how much work is left (iterations, time, corpus) and the
//! payload of the next operation (a batch of documents, a set of keys). Buffers are reused.

use super::parts::FeedReader;
use crate::backend::Payload;
use crate::corpus::{BatchItem, CorpusError, CorpusReader, DocumentSet, Framing, Pairs};
use crate::ops::{KeyDistribution, KvCommand, KvSpec};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use rand_distr::{Distribution, Zipf};
use std::sync::{Arc, Mutex};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

/// A bulk request body read by the corpus feeder.
pub struct Batch {
    /// NDJSON: an action line before each document.
    pub body: String,
    /// Each (action, document) pair of `body`, as ranges of it; empty when every action is
    /// the same `index` line (`uniform`).
    pub items: Vec<BatchItem>,
    pub uniform: Option<crate::corpus::Verb>,
    pub docs: u64,
    /// Position of the first document in the corpus.
    pub first_doc: u64,
    /// Position of this request in the feed (0-based).
    pub seq: u64,
}

impl Batch {
    pub fn pairs(&self) -> Pairs<'_> {
        match self.uniform {
            Some(verb) => Pairs::Each(verb),
            None => Pairs::Listed(&self.items),
        }
    }
}

/// Which requests of a whole-corpus bulk are warmup.
#[derive(Debug, Clone, Copy)]
pub enum CorpusWarmup {
    /// The first N requests (fixed bulk size: "the first 40% of bulk requests").
    Requests(u64),
    /// Requests lying wholly within the first N documents (with a byte flush threshold the
    /// request count is not known in advance).
    Documents(u64),
    /// Requests handed out before this instant (a time warmup on a corpus).
    Until(Instant),
}

impl CorpusWarmup {
    #[inline]
    pub fn is_warmup(self, b: &Batch) -> bool {
        match self {
            CorpusWarmup::Requests(n) => b.seq < n,
            CorpusWarmup::Documents(n) => b.first_doc + b.docs <= n,
            CorpusWarmup::Until(t) => Instant::now() < t,
        }
    }
}

/// Reads the corpus on its own thread and hands batches to clients through a bounded channel,
/// so memory holds at most `2 × clients` batches and clients never wait on disk or zstd
/// inside a measured call.
pub struct CorpusFeed {
    batches: async_channel::Receiver<Batch>,
    recycle: async_channel::Sender<(String, Vec<BatchItem>)>,
    error: Arc<Mutex<Option<CorpusError>>>,
    pub warmup: CorpusWarmup,
}

#[derive(Clone)]
pub struct FeedLimits {
    pub bulk_size: u64,
    pub flush_bytes: Option<u64>,
    pub max_requests: Option<u64>,
    pub document_limit: Option<u64>,
    pub looped: bool,
    /// A shard's part of the corpus: of the whole feed's requests, dealt to the task's
    /// clients in turn (request k to client k mod C), those of clients `range` of C. Every
    /// shard reads the same feed, so each document goes to one shard, with the id and action
    /// it would have in one process.
    pub owned: Option<(std::ops::Range<u64>, u64)>,
}

impl CorpusFeed {
    /// The reader of a bulk task's files as one queue, framing each document as a bulk item.
    pub fn one_queue(
        files: Vec<DocumentSet>,
        limits: &FeedLimits,
        actions: super::actions::BulkActions,
    ) -> Result<FeedReader, CorpusError> {
        // Files for several indices in one bulk: each action line names its index.
        let first = files
            .first()
            .map(|f| f.target_index.clone())
            .unwrap_or_default();
        let several = files.iter().any(|f| f.target_index != first);
        Ok(FeedReader::One(
            CorpusReader::open(files, limits.document_limit)?
                .with_framing(Framing::Bulk(Box::new(actions)))
                .naming_indices(several)
                .looped(limits.looped),
        ))
    }

    /// Starts the feeder: bulk bodies (action line, document) read from `reader`, in order.
    pub fn start(
        mut reader: FeedReader,
        limits: FeedLimits,
        clients: u64,
        warmup: CorpusWarmup,
        cancel: CancellationToken,
    ) -> Result<CorpusFeed, CorpusError> {
        let uniform = reader.uniform_actions();
        let depth = (clients as usize * 2).max(2);
        let (tx, rx) = async_channel::bounded::<Batch>(depth);
        let (recycle_tx, recycle_rx) =
            async_channel::bounded::<(String, Vec<BatchItem>)>(depth + clients as usize);
        let error = Arc::new(Mutex::new(None));
        let error_slot = error.clone();
        std::thread::Builder::new()
            .name("corpus-feed".into())
            .spawn(move || {
                let mut sent = 0u64;
                let mut seq = 0u64;
                let mut spare = None;
                loop {
                    if cancel.is_cancelled() || limits.max_requests.is_some_and(|m| sent >= m) {
                        break;
                    }
                    let (mut body, mut items) = spare
                        .take()
                        .or_else(|| recycle_rx.try_recv().ok())
                        .unwrap_or_default();
                    body.clear();
                    items.clear();
                    let first_doc = reader.documents_read();
                    match reader.fill_items(
                        &mut body,
                        &mut items,
                        limits.bulk_size,
                        limits.flush_bytes,
                    ) {
                        Ok(0) => break,
                        Ok(docs) => {
                            let mine = limits.owned.as_ref().is_none_or(|(range, clients)| {
                                range.contains(&(seq % clients.max(&1)))
                            });
                            seq += 1;
                            if !mine {
                                // Another shard's request: its buffers go round again.
                                spare = Some((body, items));
                                continue;
                            }
                            if tx
                                .send_blocking(Batch {
                                    body,
                                    items,
                                    uniform,
                                    docs,
                                    first_doc,
                                    seq: seq - 1,
                                })
                                .is_err()
                            {
                                break;
                            }
                            sent += 1;
                        }
                        Err(e) => {
                            // Batches already read are still sent: closing the channel lets the
                            // clients finish them, then the trial fails with this error.
                            *error_slot.lock().unwrap_or_else(|p| p.into_inner()) = Some(e);
                            break;
                        }
                    }
                }
            })
            .expect("spawn corpus feeder thread");
        Ok(CorpusFeed {
            batches: rx,
            recycle: recycle_tx,
            error,
            warmup,
        })
    }

    pub async fn next(&self) -> Option<Batch> {
        self.batches.recv().await.ok()
    }

    /// Returns a batch's buffers for the next one, so that the feeder reuses them.
    pub fn give_back(&self, batch: Batch) {
        let _ = self.recycle.try_send((batch.body, batch.items));
    }

    /// The corpus error that stopped the feed, if any.
    pub fn take_error(&self) -> Option<CorpusError> {
        self.error.lock().unwrap_or_else(|p| p.into_inner()).take()
    }
}

/// A client's walk over a vector search's queries: every query once per round, from its own
/// start and with its own stride, so that clients do not send the same query together.
pub struct VectorWalk {
    n: usize,
    at: usize,
    step: usize,
    /// The query of the call in flight.
    pub current: usize,
}

impl VectorWalk {
    pub fn new(n: usize, client: u64, clients: u64) -> VectorWalk {
        let n = n.max(1);
        let start = (client as u128 * n as u128 / clients.max(1) as u128) as usize;
        // Strides coprime with n visit every query once per round; clients take different ones.
        let gcd = |mut a: usize, mut b: usize| {
            while b != 0 {
                (a, b) = (b, a % b);
            }
            a
        };
        let mut step = 1 + 2 * (client as usize % 64) % n.max(2);
        while gcd(step, n) != 1 {
            step += 1;
        }
        VectorWalk {
            n,
            at: start % n,
            step: step % n.max(2),
            current: 0,
        }
    }

    #[inline]
    pub fn next(&mut self) -> usize {
        self.current = self.at;
        self.at = (self.at + self.step.max(1)) % self.n;
        self.current
    }
}

/// Random keys (and a value, and the command of each key for mixes) for key-value
/// operations, in buffers allocated once.
pub struct KeyGen {
    rng: SmallRng,
    keyspace: u64,
    zipf: Option<Zipf<f64>>,
    key_size: usize,
    /// The low digits a key number can change: the rest of a key (`k` and leading zeros) is
    /// written once, not per draw.
    varying_digits: usize,
    keys: Vec<u8>,
    value: Vec<u8>,
    commands: Vec<KvCommand>,
    /// Cumulative weights of a mix (empty for one command).
    mix: Vec<(u32, KvCommand)>,
    /// Commands of each kind in the last draw.
    pub drawn: [u64; KvCommand::COUNT],
}

impl KeyGen {
    pub fn new(spec: &KvSpec, client: u64) -> KeyGen {
        // Seeded per client and per command, so that gets do not replay the keys of the puts.
        let command = spec.mix[0].0 as u64 + 1 + ((spec.mix.len() as u64 - 1) << 8);
        let mut rng = SmallRng::seed_from_u64(
            spec.seed
                ^ client.wrapping_mul(0x2545_F491_4F6C_DD1D)
                ^ command.wrapping_mul(0x9E37_79B9_7F4A_7C15),
        );
        let value = (0..spec.value_size)
            .map(|_| rng.random_range(b'a'..=b'z'))
            .collect();
        let per_op = spec.keys_per_operation() as usize;
        let zipf = match spec.distribution {
            KeyDistribution::Uniform => None,
            // Validated at load: keyspace ≥ 1 and exponent > 0 are all Zipf needs.
            KeyDistribution::Zipfian { exponent } => Zipf::new(spec.keyspace as f64, exponent).ok(),
        };
        let mut total = 0;
        let mix = match spec.mix.as_slice() {
            [_] => Vec::new(),
            many => many
                .iter()
                .map(|&(c, w)| {
                    total += w;
                    (total, c)
                })
                .collect(),
        };
        let mut drawn = [0; KvCommand::COUNT];
        drawn[spec.mix[0].0.index()] = per_op as u64;
        let mut keys = vec![b'0'; spec.key_size * per_op];
        for key in keys.chunks_exact_mut(spec.key_size) {
            key[0] = b'k';
        }
        let mut digits = [0u8; 20];
        let key_number_digits =
            crate::units::decimal_bytes(&mut digits, spec.keyspace.saturating_sub(1)).len();
        KeyGen {
            rng,
            keyspace: spec.keyspace,
            zipf,
            key_size: spec.key_size,
            varying_digits: key_number_digits.min(spec.key_size.saturating_sub(1)),
            keys,
            value,
            commands: vec![spec.mix[0].0; per_op],
            mix,
            drawn,
        }
    }

    /// Draws fresh keys: `k` then the key number, zero-padded to the key size; and, for a
    /// mix, each key's command.
    #[inline]
    pub fn draw(&mut self) -> Payload<'_> {
        let first_varying = self.key_size - self.varying_digits;
        for key in self.keys.chunks_exact_mut(self.key_size) {
            let mut n = match &self.zipf {
                None => self.rng.random_range(0..self.keyspace),
                // Zipf samples ranks 1..=keyspace; rank 1 is key 0.
                Some(z) => (z.sample(&mut self.rng) as u64).clamp(1, self.keyspace) - 1,
            };
            for byte in key[first_varying..].iter_mut().rev() {
                *byte = b'0' + (n % 10) as u8;
                n /= 10;
            }
        }
        if let Some(&(total, _)) = self.mix.last() {
            self.drawn = [0; KvCommand::COUNT];
            for c in self.commands.iter_mut() {
                let r = self.rng.random_range(0..total);
                *c = self
                    .mix
                    .iter()
                    .find(|(upto, _)| r < *upto)
                    .map_or(self.mix[0].1, |(_, c)| *c);
                self.drawn[c.index()] += 1;
            }
        }
        Payload::Keys {
            keys: &self.keys,
            key_size: self.key_size,
            value: &self.value,
            commands: &self.commands,
        }
    }

    /// The command of the first key of the last draw: the operation's command when it has one key.
    #[inline]
    pub fn first_command(&self) -> KvCommand {
        self.commands[0]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(v: serde_json::Value, kind: &str) -> KvSpec {
        let ctx = crate::ops::TrackContext {
            indices: &[],
            corpora: &[],
            dir: None,
        };
        match crate::ops::parse(kind, v.as_object().unwrap(), &ctx)
            .unwrap()
            .1
        {
            crate::ops::OpSpec::Kv(k) => k,
            _ => unreachable!(),
        }
    }

    fn key_number(k: &[u8]) -> u64 {
        assert_eq!(k[0], b'k');
        std::str::from_utf8(&k[1..]).unwrap().parse().unwrap()
    }

    #[test]
    fn keys_are_fixed_size_and_in_keyspace() {
        let spec = spec(
            serde_json::json!({"keyspace": 100, "key-size": 8, "value-size": 16, "pipeline": 3}),
            "get",
        );
        let mut g = KeyGen::new(&spec, 0);
        let Payload::Keys {
            keys,
            key_size,
            value,
            commands,
        } = g.draw()
        else {
            panic!()
        };
        assert_eq!(
            (keys.len(), key_size, value.len(), commands),
            (24, 8, 16, &[KvCommand::Get; 3][..])
        );
        for k in keys.chunks(8) {
            assert!(key_number(k) < 100);
        }
        assert_eq!(g.drawn[KvCommand::Get.index()], 3);
    }

    #[test]
    fn keys_keep_their_padding_and_reach_the_whole_keyspace() {
        let spec = spec(serde_json::json!({"keyspace": 1000, "key-size": 8}), "get");
        let mut g = KeyGen::new(&spec, 0);
        let mut seen = std::collections::HashSet::new();
        for _ in 0..20_000 {
            let Payload::Keys { keys, .. } = g.draw() else {
                panic!()
            };
            assert_eq!(&keys[..5], b"k0000", "{:?}", std::str::from_utf8(keys));
            seen.insert(key_number(keys));
        }
        assert_eq!(seen.len(), 1000);
    }

    #[test]
    fn a_mix_draws_commands_in_its_proportions() {
        let spec = spec(
            serde_json::json!({"mix": {"get": 10, "put": 90}, "pipeline": 10}),
            "kv-mix",
        );
        let mut g = KeyGen::new(&spec, 3);
        let mut counts = [0u64; KvCommand::COUNT];
        for _ in 0..10_000 {
            let Payload::Keys { commands, .. } = g.draw() else {
                panic!()
            };
            assert_eq!(commands.len(), 10);
            for (c, n) in counts.iter_mut().zip(g.drawn) {
                *c += n;
            }
        }
        let gets = counts[KvCommand::Get.index()] as f64 / 100_000.0;
        assert!((0.09..0.11).contains(&gets), "gets {gets}");
        assert_eq!(
            counts[KvCommand::Get.index()] + counts[KvCommand::Put.index()],
            100_000
        );
    }

    #[test]
    fn zipfian_keys_favour_the_first_ones() {
        let spec = spec(
            serde_json::json!({"keyspace": 1000, "key-distribution": "zipfian"}),
            "get",
        );
        let mut g = KeyGen::new(&spec, 0);
        let (mut first_ten, mut max) = (0, 0);
        for _ in 0..10_000 {
            let Payload::Keys { keys, .. } = g.draw() else {
                panic!()
            };
            let n = key_number(keys);
            first_ten += u64::from(n < 10);
            max = max.max(n);
        }
        // Under uniform keys 1% would fall on the first ten; zipf(0.99) over 1,000 puts ~39% there.
        assert!(first_ten > 3_000, "{first_ten}");
        assert!(max < 1000 && max > 100, "{max}");
    }

    #[test]
    fn each_vector_walk_visits_every_query_once_a_round_in_its_own_order() {
        for n in [1, 2, 10, 97, 100] {
            let orders: Vec<Vec<usize>> = (0..4)
                .map(|c| {
                    let mut w = VectorWalk::new(n, c, 4);
                    (0..n).map(|_| w.next()).collect()
                })
                .collect();
            for o in &orders {
                let mut sorted = o.clone();
                sorted.sort_unstable();
                assert_eq!(sorted, (0..n).collect::<Vec<_>>(), "n={n}");
            }
            if n >= 10 {
                assert_ne!(orders[0], orders[1]);
                assert_ne!(orders[0][0], orders[1][0]);
            }
        }
    }
}
