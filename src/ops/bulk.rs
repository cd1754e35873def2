//! bulk: index a corpus in requests of `bulk-size` documents (or `flush-bytes` bytes), with
//! Rally's simulated id conflicts (`conflicts`, `conflict-probability`, `on-conflict`,
//! `recency`) and `looped` corpora.

use super::{OpSpec, OperationType, ParamError, Params, TrackContext};
use crate::corpus::DocumentSet;
use crate::units::{parse_bytes, BulkSize, Bytes, ThroughputUnit};

pub const BULK: OperationType = OperationType {
    name: "bulk",
    unit: ThroughputUnit::Documents,
    sweepable: &["bulk-size", "flush-bytes"],
    parse: |p, ctx| Ok(OpSpec::Bulk(parse(p, ctx)?)),
};
use serde_json::Value;

/// The action line before every document of a bulk request body without ids. `flush-bytes`
/// counts it, so that the threshold means the request size Elasticsearch receives.
pub const BULK_ACTION_LINE: &str = "{\"index\":{}}\n";

/// Which ids the documents get, as Rally's `conflicts`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IdOrder {
    /// Ids 0, 1, 2, ... in corpus order.
    Sequential,
    /// The same ids in a seeded random order.
    Random,
}

/// What a conflicting document does to the one it conflicts with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OnConflict {
    /// Replaces it (`index` action).
    Index,
    /// Updates it with its fields (`update` action, `{"doc": ...}`).
    Update,
}

/// Rally's simulated id conflicts: every document gets an id; with `probability` percent
/// a document takes the id of one indexed before instead of a new one.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Conflicts {
    pub order: IdOrder,
    /// Percent of documents (0 to 100) that reuse an earlier id; Rally's default is 25.
    pub probability: f64,
    pub on_conflict: OnConflict,
    /// 0 picks the reused id uniformly among those indexed so far; towards 1 it favours the
    /// most recent ones (Rally's curve: an exponential with rate 30 × recency).
    pub recency: f64,
}

#[derive(Debug, Clone)]
pub struct BulkSpec {
    pub index: String,
    pub corpus: String,
    pub files: Vec<DocumentSet>,
    pub bulk_size: BulkSize,
    /// Send a request once its NDJSON body (action lines included) reaches this many bytes,
    /// even below `bulk_size` documents.
    pub flush_bytes: Option<Bytes>,
    /// Index only this share of the corpus, in percent (Rally's `ingest-percentage`).
    pub ingest_percentage: Option<f64>,
    pub conflicts: Option<Conflicts>,
    /// Start over at the end of the corpus (Rally's `looped`): the task's iterations or time
    /// period end it.
    pub looped: bool,
    /// The documents go to data streams: `create` actions.
    pub create: bool,
    /// The ingest pipeline every document goes through (Rally's `pipeline`).
    pub pipeline: Option<String>,
    /// How action lines are written and the request sent: ours, Rally's or OSB's.
    pub action_lines: ActionLines,
    /// `split: rally`: the corpus is cut as esrally cuts it, one slice per load-driver worker
    /// (see `plan::rally_workers`), each slice's files cut into bulks on their own; else
    /// (`split: queue`) every client takes the next bulk of one queue over the files.
    pub rally_split: bool,
    /// The corpus (0, 1, ... in the order named) of each of `files`: Rally's readers take
    /// turns between corpora.
    pub file_corpus: Vec<usize>,
}

/// A bulk's action lines and request, by whose driver they follow.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ActionLines {
    /// `{"index":{}}` lines to `/<index>/_bulk` (POST).
    Plain,
    /// Each line names the index as Rally's bulk writes it (`{"index": {"_index": "x"}}`),
    /// sent to `/_bulk` with PUT, as Rally's Elasticsearch client sends it.
    Rally,
    /// Rally's lines (OSB keeps their format), sent to `/_bulk` with POST, as opensearch-py
    /// sends it.
    Osb,
}

impl ActionLines {
    /// Each action line names its index (a driver's lines, not ours).
    pub fn name_the_index(self) -> bool {
        match self {
            ActionLines::Plain => false,
            ActionLines::Rally | ActionLines::Osb => true,
        }
    }
}

impl BulkSpec {
    /// A bulk whose body comes whole with each call (a track's Python draws it), sent to
    /// `/_bulk`: its action lines name the targets.
    pub fn whole_body(docs: u64, pipeline: Option<String>) -> BulkSpec {
        BulkSpec {
            index: String::new(),
            corpus: String::new(),
            files: Vec::new(),
            bulk_size: BulkSize(docs.max(1)),
            flush_bytes: None,
            ingest_percentage: None,
            conflicts: None,
            looped: false,
            create: false,
            pipeline,
            action_lines: ActionLines::Plain,
            rally_split: false,
            file_corpus: Vec::new(),
        }
    }
}

pub fn parse(p: &Params, ctx: &TrackContext) -> Result<BulkSpec, ParamError> {
    let (corpus, mut files) = corpus_files(p, ctx)?;
    if let Some(targets) = target_filter(p)? {
        files.retain(|(_, f)| targets.contains(&f.target_index));
        if files.is_empty() {
            return Err(ParamError::new(
                "indices",
                format!(
                    "no documents of corpus `{corpus}` target {}",
                    targets.join(", ")
                ),
            ));
        }
    }
    let (file_corpus, mut files): (Vec<usize>, Vec<_>) = files.into_iter().unzip();
    if let Some(index) = p.string("index")? {
        files
            .iter_mut()
            .for_each(|f| f.target_index = index.clone());
    }
    let first = files
        .first()
        .map(|f| f.target_index.clone())
        .unwrap_or_default();
    // Files for several indices: requests go to `/_bulk`, each action line naming its index.
    let index = if files.iter().any(|f| f.target_index != first) {
        String::new()
    } else {
        first
    };
    let conflicts = conflicts(p)?;
    let create = check_actions(&files, conflicts.is_some())?;
    let looped = match p.get("looped") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(other) => {
            return Err(ParamError::new(
                "looped",
                format!("expected true or false, got {other}"),
            ))
        }
    };
    Ok(BulkSpec {
        index,
        corpus,
        files,
        bulk_size: BulkSize(p.positive_int("bulk-size")?.unwrap_or(5000)),
        flush_bytes: flush_bytes(p)?,
        ingest_percentage: ingest_percentage(p)?,
        conflicts,
        looped,
        create,
        pipeline: p.string("pipeline")?,
        action_lines: match p.string("action-lines")?.as_deref() {
            None | Some("plain") => ActionLines::Plain,
            Some("rally") => ActionLines::Rally,
            Some("osb") => ActionLines::Osb,
            Some(other) => {
                return Err(ParamError::new(
                    "action-lines",
                    format!("expected `plain`, `rally` or `osb`, got `{other}`"),
                ))
            }
        },
        rally_split: ours_or_rallys(p, "split", "queue")?,
        file_corpus,
    })
}

/// `indices`: index only the corpus documents that target these indices or data streams
/// (Rally's bulk `indices` and `data-streams`).
fn target_filter(p: &Params) -> Result<Option<Vec<String>>, ParamError> {
    let bad = |v: &Value| {
        ParamError::new(
            "indices",
            format!("expected an index name or a list of them, got {v}"),
        )
    };
    match p.get("indices") {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(vec![s.clone()])),
        Some(Value::Array(a)) if !a.is_empty() => a
            .iter()
            .map(|v| v.as_str().map(str::to_string).ok_or_else(|| bad(v)))
            .collect::<Result<Vec<_>, _>>()
            .map(Some),
        Some(other) => Err(bad(other)),
    }
}

/// The corpus (or corpora, one after another, as Rally's `corpora: [a, b]`) a bulk indexes,
/// by its name, and their files.
fn corpus_files(
    p: &Params,
    ctx: &TrackContext,
) -> Result<(String, Vec<(usize, crate::corpus::DocumentSet)>), ParamError> {
    let find = |name: &str| {
        ctx.corpora.iter().find(|(n, _)| n == name).ok_or_else(|| {
            let hint =
                crate::suggest::did_you_mean(name, ctx.corpora.iter().map(|(n, _)| n.as_str()));
            ParamError::new(
                "corpus",
                format!("corpus `{name}` is not declared under `corpora`{hint}"),
            )
        })
    };
    // Several corpora, one after another (Rally's `corpora: [a, b]`).
    let (corpus, files) = match p.get("corpus") {
        Some(Value::Array(names)) if !names.is_empty() => {
            let mut files = Vec::new();
            let mut joined = Vec::new();
            for (i, n) in names.iter().enumerate() {
                let n = n.as_str().ok_or_else(|| {
                    ParamError::new("corpus", format!("expected corpus names, got {n}"))
                })?;
                files.extend(find(n)?.1.iter().map(|f| (i, f.clone())));
                joined.push(n);
            }
            return Ok((joined.join("+"), files));
        }
        Some(Value::String(name)) => {
            let (n, f) = find(name)?;
            (n, f)
        }
        Some(other) => {
            return Err(ParamError::new(
                "corpus",
                format!("expected a corpus name or a list of them, got {other}"),
            ))
        }
        None => match ctx.corpora {
            [only] => (&only.0, &only.1),
            [] => {
                return Err(ParamError::new(
                    "corpus",
                    "the track declares no corpora to index",
                ))
            }
            _ => {
                return Err(ParamError::new(
                    "corpus",
                    "the track has several corpora; name one with `corpus` (or a list of them)",
                ))
            }
        },
    };
    Ok((
        corpus.clone(),
        files.iter().map(|f| (0, f.clone())).collect(),
    ))
}

/// A key whose value is `ours` (the default: false) or `rally` (true); OSB's load driver cuts
/// a corpus as Rally's does, so `osb` is `rally` here.
fn ours_or_rallys(p: &Params, key: &'static str, ours: &str) -> Result<bool, ParamError> {
    match p.string(key)?.as_deref() {
        None => Ok(false),
        Some(v) if v == ours => Ok(false),
        Some("rally" | "osb") => Ok(true),
        Some(other) => Err(ParamError::new(
            key,
            format!("expected `{ours}`, `rally` or `osb`, got `{other}`"),
        )),
    }
}

/// `flush-bytes`: a size (`5mb`) or a number of bytes.
fn flush_bytes(p: &Params) -> Result<Option<Bytes>, ParamError> {
    let flush_bytes = match p.get("flush-bytes") {
        None | Some(Value::Null) => None,
        Some(Value::Number(n)) if n.as_u64().is_some_and(|v| v > 0) => {
            Some(Bytes(n.as_u64().unwrap_or(1)))
        }
        Some(Value::String(s)) => {
            Some(parse_bytes(s).map_err(|m| ParamError::new("flush-bytes", m))?)
        }
        Some(other) => {
            return Err(ParamError::new(
                "flush-bytes",
                format!("expected a size such as 5mb, got {other}"),
            ))
        }
    };
    Ok(flush_bytes)
}

/// `ingest-percentage`: above 0, at most 100.
fn ingest_percentage(p: &Params) -> Result<Option<f64>, ParamError> {
    let ingest_percentage = match p.get("ingest-percentage") {
        None | Some(Value::Null) => None,
        Some(v) => match v.as_f64() {
            Some(pct) if pct > 0.0 && pct <= 100.0 => Some(pct),
            _ => {
                return Err(ParamError::new(
                    "ingest-percentage",
                    format!("expected a percentage above 0 and at most 100, got {v}"),
                ))
            }
        },
    };
    Ok(ingest_percentage)
}

/// Files for data streams take `create` actions only, never with generated ids; a file with
/// its own action lines takes none generated either. Whether the bulk creates.
fn check_actions(files: &[crate::corpus::DocumentSet], ids: bool) -> Result<bool, ParamError> {
    let create = files.iter().any(|f| f.create);
    if create && files.iter().any(|f| !f.create) {
        return Err(ParamError::new(
            "corpus",
            "one bulk cannot index files for data streams (`create` actions) and for indices together; give each its own task",
        ));
    }
    if create && ids {
        return Err(ParamError::new(
            "conflicts",
            "documents for a data stream are only created, never updated by id",
        ));
    }
    if ids && files.iter().any(|f| f.with_actions) {
        return Err(ParamError::new(
            "conflicts",
            "the corpus holds its own action lines, so ids cannot be generated (as in Rally)",
        ));
    }
    Ok(create)
}

fn conflicts(p: &Params) -> Result<Option<Conflicts>, ParamError> {
    let order = match p.string("conflicts")?.as_deref() {
        None => None,
        Some("sequential") => Some(IdOrder::Sequential),
        Some("random") => Some(IdOrder::Random),
        Some(other) => {
            return Err(ParamError::new(
                "conflicts",
                format!("expected `sequential` or `random`, got `{other}`"),
            ))
        }
    };
    let number = |key: &'static str, max: f64| -> Result<Option<f64>, ParamError> {
        match p.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(v) => match v.as_f64() {
                Some(x) if (0.0..=max).contains(&x) => Ok(Some(x)),
                _ => Err(ParamError::new(
                    key,
                    format!("expected a number from 0 to {max}, got {v}"),
                )),
            },
        }
    };
    let probability = number("conflict-probability", 100.0)?;
    let recency = number("recency", 1.0)?;
    let on_conflict = match p.string("on-conflict")?.as_deref() {
        None | Some("index") => OnConflict::Index,
        Some("update") => OnConflict::Update,
        Some(other) => {
            return Err(ParamError::new(
                "on-conflict",
                format!("expected `index` or `update`, got `{other}`"),
            ))
        }
    };
    let Some(order) = order else {
        for key in ["conflict-probability", "recency", "on-conflict"] {
            if p.map.contains_key(key) {
                return Err(ParamError::new(
                    key,
                    format!("`{key}` needs `conflicts: sequential` or `conflicts: random`"),
                ));
            }
        }
        return Ok(None);
    };
    Ok(Some(Conflicts {
        order,
        probability: probability.unwrap_or(25.0),
        on_conflict,
        recency: recency.unwrap_or(0.0),
    }))
}
