//! The resolved track: what `raw` says, checked across fields and given types. Every error
//! names the YAML path it comes from.

use super::error::{TrackError, TrackErrorKind};
use super::load::{load_as, LoadOptions, Role};
use super::locate::Locator;
use super::raw::*;
use super::task::{resolve_task, swept_key};
use crate::corpus::{Dataset, DocumentSet, Origin};
use crate::files::resolve_inside;
use crate::ops::{self, IndexSpec, TrackContext};
use crate::suggest::did_you_mean;
use crate::units::OpsPerSec;
use serde::Serialize;
use serde_json::{Map, Value};
use std::path::{Path, PathBuf};
use std::time::Duration;

#[derive(Debug, Clone)]
pub struct Track {
    pub name: String,
    pub description: String,
    pub file: PathBuf,
    /// Effective parameters: declared defaults overlaid with the user's.
    pub params: Map<String, Value>,
    pub corpora: Vec<(String, Vec<DocumentSet>)>,
    pub indices: Vec<IndexSpec>,
    pub operations: Vec<OperationDef>,
    pub challenges: Vec<Challenge>,
    /// Positions in the rendered track, so that errors found later (planning) can point too.
    positions: std::sync::Arc<Locator>,
    /// What loading changed or left out (a Rally track's conversion), shown before a race.
    pub notes: Vec<String>,
    /// The track's own Python (a Rally track's track.py), for the race's workers.
    pub python: Option<std::sync::Arc<crate::python::TrackPython>>,
    /// Its front end shrank it for test mode by its own rules (Rally's TestModeTrackProcessor:
    /// as many iterations a client as clients): the plan leaves its iteration counts as they are.
    pub shrunk_for_test_mode: bool,
}

/// An operation as written: name, type and params (before task overrides and sweeps).
#[derive(Debug, Clone, Serialize)]
pub struct OperationDef {
    pub name: String,
    #[serde(rename = "type")]
    pub kind: String,
    pub params: Map<String, Value>,
}

#[derive(Debug, Clone)]
pub struct Challenge {
    pub name: String,
    pub description: String,
    pub default: bool,
    pub trials: u64,
    pub reset: Vec<OperationDef>,
    pub schedule: Vec<ScheduleItem>,
}

#[derive(Debug, Clone)]
pub enum ScheduleItem {
    Task(TaskSpec),
    /// `completed_by`: the index in `tasks` of the task whose end ends the block.
    Parallel {
        name: String,
        tasks: Vec<TaskSpec>,
        trials: u64,
        reset: Vec<OperationDef>,
        completed_by: Option<usize>,
    },
}

impl Challenge {
    /// Every task of the schedule, those inside `parallel` blocks included.
    pub fn tasks(&self) -> impl Iterator<Item = &TaskSpec> {
        self.schedule.iter().flat_map(|item| match item {
            ScheduleItem::Task(t) => std::slice::from_ref(t),
            ScheduleItem::Parallel { tasks, .. } => tasks.as_slice(),
        })
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "kebab-case", tag = "kind", content = "value")]
pub enum Warmup {
    None,
    Iterations(u64),
    Time(#[serde(with = "crate::units::serde_secs")] Duration),
    /// A fraction in (0, 1) of the task's work (iterations, time or documents).
    Fraction(f64),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ScheduleKind {
    Deterministic,
    Poisson,
    Unthrottled,
}

/// One task as written, with sweep lists still lists.
#[derive(Debug, Clone)]
pub struct TaskSpec {
    pub name: String,
    /// The track gave the name (else it is the operation's, made unique in the challenge).
    pub named: bool,
    /// YAML path of the task, for errors found later (e.g. while planning).
    pub path: String,
    pub operation: OperationDef,
    pub clients: Vec<u64>,
    pub iterations: Option<Vec<u64>>,
    pub time_period: Option<Duration>,
    pub warmup: Warmup,
    pub targets: Option<Vec<OpsPerSec>>,
    pub schedule: ScheduleKind,
    pub trials: u64,
    /// Trials run before the recorded ones and thrown away (with their resets).
    pub warmup_trials: u64,
    /// Error responses (not broken connections or timeouts) do not abort the race.
    pub ignore_response_errors: bool,
    /// When an operation is tried again after a failure.
    pub retry: Option<super::RetryPolicy>,
    /// Shown in reports and comparisons (`include-in-reporting`, default true).
    pub reported: bool,
    /// Labels the task filters select by (`tags`).
    pub tags: Vec<String>,
    /// Pass/fail criteria on the task's merged results.
    pub thresholds: Vec<crate::thresholds::Threshold>,
    /// Client i of n starts i/n of this after the first (`ramp-up-time-period`).
    pub ramp_up: Duration,
    /// `target-throughput: max`: search for the highest rate that holds the SLO.
    pub capacity: Option<super::rate::CapacitySpec>,
    /// `target-throughput: {stages: ...}`: arrival rates that change over the task.
    pub ramp: Option<super::rate::Ramp>,
    pub reset: Vec<OperationDef>,
    /// Operation params the task overrides; sweepable ones may hold a list.
    pub params: Map<String, Value>,
}

pub struct Resolver<'a> {
    pub file: &'a Path,
    pub locator: &'a Locator,
    /// Lending tracks (`from-track`) are loaded in the same mode.
    pub test_mode: bool,
    pub role: Role,
    /// Where downloaded corpus files are kept (Rally tracks' `base-url`): a file not in the
    /// track directory is looked for here.
    pub data_dir: Option<&'a Path>,
    /// Lending tracks may be another front end's.
    pub frontends: &'static [&'static dyn super::load::Frontend],
}

impl Resolver<'_> {
    pub fn err(&self, kind: TrackErrorKind, path: &str, message: impl Into<String>) -> TrackError {
        TrackError::new(kind, self.file, message)
            .at(self.locator.find(path))
            .with_path(path)
    }

    fn dir(&self) -> &Path {
        self.file.parent().unwrap_or(Path::new("."))
    }
}

pub fn from_raw(
    raw: RawTrack,
    params: Map<String, Value>,
    r: &Resolver,
) -> Result<Track, TrackError> {
    let indices = resolve_indices(&raw.indices, r)?;
    let corpora = resolve_corpora(&raw.corpora, &indices, r)?;
    let ctx = TrackContext {
        indices: &indices,
        corpora: &corpora,
        dir: Some(r.dir()),
    };
    let mut operations = Vec::new();
    for (i, op) in raw.operations.iter().enumerate() {
        let path = format!("/operations/{i}");
        if operations.iter().any(|o: &OperationDef| o.name == op.name) {
            return Err(r.err(
                TrackErrorKind::Invalid,
                &format!("{path}/name"),
                format!("operation `{}` is defined twice", op.name),
            ));
        }
        let def = OperationDef {
            name: op.name.clone(),
            kind: op.kind.clone(),
            params: op.params.clone(),
        };
        check_operation(&def, &ctx, r, &path)?;
        operations.push(def);
    }
    let mut challenges = Vec::new();
    for (i, c) in raw.challenges.iter().enumerate() {
        let path = format!("/challenges/{i}");
        if challenges.iter().any(|x: &Challenge| x.name == c.name) {
            return Err(r.err(
                TrackErrorKind::Invalid,
                &format!("{path}/name"),
                format!("challenge `{}` is defined twice", c.name),
            ));
        }
        let reset = resolve_refs(&c.reset, &operations, &ctx, r, &format!("{path}/reset"))?;
        let mut schedule = Vec::new();
        for (j, item) in c.schedule.iter().enumerate() {
            let ipath = format!("{path}/schedule/{j}");
            schedule.push(resolve_item(item, &operations, &ctx, r, &ipath)?);
        }
        unique_task_names(&c.name, &mut schedule, r)?;
        challenges.push(Challenge {
            name: c.name.clone(),
            description: c.description.clone(),
            default: c.default,
            trials: c.trials.unwrap_or(1),
            reset,
            schedule,
        });
    }
    if challenges.iter().filter(|c| c.default).count() > 1 {
        return Err(r.err(
            TrackErrorKind::Invalid,
            "/challenges",
            "more than one challenge is marked `default: true`",
        ));
    }
    Ok(Track {
        name: raw.name,
        description: raw.description,
        file: r.file.to_path_buf(),
        params,
        corpora,
        indices,
        operations,
        challenges,
        positions: std::sync::Arc::new(r.locator.clone()),
        notes: Vec::new(),
        shrunk_for_test_mode: false,
        python: None,
    })
}

fn resolve_indices(raw: &[RawIndex], r: &Resolver) -> Result<Vec<IndexSpec>, TrackError> {
    let mut out: Vec<IndexSpec> = Vec::new();
    for (i, idx) in raw.iter().enumerate() {
        let path = format!("/indices/{i}");
        if out.iter().any(|x| x.name == idx.name) {
            return Err(r.err(
                TrackErrorKind::Invalid,
                &format!("{path}/name"),
                format!("index `{}` is declared twice", idx.name),
            ));
        }
        let body = match &idx.body {
            None => Value::Object(Map::new()),
            Some(Value::String(name)) => {
                let bpath = format!("{path}/body");
                let file = resolve_inside(r.dir(), name).ok_or_else(|| {
                    r.err(
                        TrackErrorKind::Invalid,
                        &bpath,
                        format!("`{name}` is outside the track directory"),
                    )
                })?;
                let text = crate::files::read_text(&file).map_err(|e| {
                    r.err(
                        TrackErrorKind::Io,
                        &bpath,
                        format!("cannot read index body {}: {e}", file.display()),
                    )
                })?;
                let v: serde_yaml::Value = serde_yaml::from_str(&text).map_err(|e| {
                    let loc = e.location().map(|l| (l.line(), l.column()));
                    TrackError::new(
                        TrackErrorKind::Yaml,
                        &file,
                        format!("index body is not valid JSON/YAML: {e}"),
                    )
                    .at(loc)
                })?;
                serde_json::to_value(v)
                    .map_err(|e| r.err(TrackErrorKind::Invalid, &bpath, e.to_string()))?
            }
            Some(v) => v.clone(),
        };
        out.push(IndexSpec {
            name: idx.name.clone(),
            body,
        });
    }
    Ok(out)
}

fn resolve_corpora(
    raw: &[RawCorpus],
    indices: &[IndexSpec],
    r: &Resolver,
) -> Result<Vec<(String, Vec<DocumentSet>)>, TrackError> {
    let mut out: Vec<(String, Vec<DocumentSet>)> = Vec::new();
    for (i, c) in raw.iter().enumerate() {
        let path = format!("/corpora/{i}");
        if out.iter().any(|(n, _)| *n == c.name) {
            return Err(r.err(
                TrackErrorKind::Invalid,
                &format!("{path}/name"),
                format!("corpus `{}` is declared twice", c.name),
            ));
        }
        // Documents without their own target go to the corpus's, else to the only index.
        let default_target = c
            .target_index
            .clone()
            .or_else(|| (indices.len() == 1).then(|| indices[0].name.clone()));
        let files = match (&c.from_track, c.documents.is_empty()) {
            (Some(_), false) => {
                return Err(r.err(
                    TrackErrorKind::Invalid,
                    &format!("{path}/from-track"),
                    "give either `from-track` or `documents`, not both",
                ));
            }
            (None, true) => {
                return Err(r.err(
                    TrackErrorKind::Schema,
                    &format!("{path}/documents"),
                    "a corpus needs `documents` (or `from-track`)",
                ))
            }
            (Some(lender), true) => borrowed_corpus(lender, c, default_target, r, &path)?,
            (None, false) => {
                let mut files = Vec::new();
                for (j, d) in c.documents.iter().enumerate() {
                    let dpath = format!("{path}/documents/{j}");
                    if d.target_index.is_some() && d.target_data_stream.is_some() {
                        return Err(r.err(
                            TrackErrorKind::Invalid,
                            &dpath,
                            "give either `target-index` or `target-data-stream`, not both",
                        ));
                    }
                    // Action lines may name the index themselves.
                    let target = match d
                        .target_index
                        .clone()
                        .or_else(|| d.target_data_stream.clone())
                        .or_else(|| default_target.clone())
                    {
                        Some(t) => t,
                        None if d.includes_action_and_meta_data => String::new(),
                        None => {
                            return Err(r.err(
                                TrackErrorKind::Invalid,
                                &dpath,
                                "no `target-index` for these documents",
                            ))
                        }
                    };
                    let origin = document_origin(d, r, &dpath)?;
                    // A scaled file makes `scale-to` documents; its `document-count` is the file's own.
                    let document_count = if matches!(origin, Origin::Scaled { .. }) {
                        d.scale_to
                    } else {
                        d.document_count
                    };
                    files.push(DocumentSet {
                        origin,
                        document_count,
                        target_index: target,
                        with_actions: d.includes_action_and_meta_data,
                        create: d.target_data_stream.is_some(),
                    });
                }
                files
            }
        };
        out.push((c.name.clone(), files));
    }
    Ok(out)
}

fn document_origin(d: &RawDocuments, r: &Resolver, dpath: &str) -> Result<Origin, TrackError> {
    if d.includes_action_and_meta_data && (d.scale_to.is_some() || d.generate.is_some()) {
        return Err(r.err(
            TrackErrorKind::Invalid,
            &format!("{dpath}/includes-action-and-meta-data"),
            "only a plain `source-file` holds its own action lines (not `generate` or `scale-to`)",
        ));
    }
    match (&d.source_file, &d.generate) {
        (Some(_), Some(_)) => Err(r.err(
            TrackErrorKind::Invalid,
            &format!("{dpath}/generate"),
            "give either `source-file` or `generate`, not both",
        )),
        (None, None) => Err(r.err(
            TrackErrorKind::Schema,
            dpath,
            "documents need a `source-file` or a `generate` dataset",
        )),
        (None, Some(name)) => generated_origin(d, name, r, dpath),
        (Some(source), None) => file_origin(d, source, r, dpath),
    }
}

/// A built-in generator's documents: it makes `document-count` of them.
fn generated_origin(
    d: &RawDocuments,
    name: &str,
    r: &Resolver,
    dpath: &str,
) -> Result<Origin, TrackError> {
    let dataset = Dataset::parse(name).ok_or_else(|| {
        let hint = did_you_mean(name, Dataset::NAMES.into_iter());
        r.err(
            TrackErrorKind::Corpus,
            &format!("{dpath}/generate"),
            format!(
                "no built-in dataset `{name}`{hint}; datasets: {}",
                Dataset::NAMES.join(", ")
            ),
        )
    })?;
    if d.document_count.is_none() {
        return Err(r.err(
            TrackErrorKind::Corpus,
            dpath,
            "generated documents need a `document-count`: how many to make",
        ));
    }
    if d.scale_to.is_some() {
        return Err(r.err(TrackErrorKind::Invalid, &format!("{dpath}/scale-to"), "`scale-to` scales a `source-file` up; a generated dataset makes `document-count` documents"));
    }
    Ok(Origin::Generated {
        dataset,
        seed: d.seed.unwrap_or(1),
    })
}

/// A file's documents (found in the track's directory, else where downloads are kept), read
/// as they are or scaled up (`scale-to`); its first document is checked now.
fn file_origin(
    d: &RawDocuments,
    source: &str,
    r: &Resolver,
    dpath: &str,
) -> Result<Origin, TrackError> {
    if d.seed.is_some() && d.scale_to.is_none() {
        return Err(r.err(
            TrackErrorKind::Invalid,
            &format!("{dpath}/seed"),
            "`seed` applies to generated or scaled (`scale-to`) documents only",
        ));
    }
    let file = resolve_inside(r.dir(), source).ok_or_else(|| {
        r.err(
            TrackErrorKind::Corpus,
            &format!("{dpath}/source-file"),
            format!("`{source}` is outside the track directory"),
        )
    })?;
    let file = match r.data_dir.map(|d| d.join(source)) {
        Some(cached) if !file.is_file() && cached.is_file() => cached,
        _ => file,
    };
    if let Some(what) = crate::files::not_a_file(&file) {
        return Err(r.err(
            TrackErrorKind::Corpus,
            &format!("{dpath}/source-file"),
            format!(
                "corpus file {} is {what}, not a regular file",
                file.display()
            ),
        ));
    }
    if !file.is_file() {
        return Err(r.err(
            TrackErrorKind::Corpus,
            &format!("{dpath}/source-file"),
            format!("corpus file {} does not exist", file.display()),
        ));
    }
    let set = DocumentSet {
        with_actions: d.includes_action_and_meta_data,
        ..DocumentSet::file(&file, "")
    };
    crate::corpus::check_first(set).map_err(|e| {
        r.err(
            TrackErrorKind::Corpus,
            &format!("{dpath}/source-file"),
            e.to_string(),
        )
    })?;
    if d.scale_to.is_some() {
        return Ok(Origin::Scaled {
            base: file,
            base_count: d.document_count,
            seed: d.seed.unwrap_or(1),
        });
    }
    Ok(Origin::File(file))
}

/// The corpus of the same name from a track beside this one (`from-track: geonames` reads
/// `../geonames`), so that tracks can share one corpus without copying it or reaching
/// outside their directories.
fn borrowed_corpus(
    lender: &str,
    c: &RawCorpus,
    default_target: Option<String>,
    r: &Resolver,
    path: &str,
) -> Result<Vec<DocumentSet>, TrackError> {
    let fpath = format!("{path}/from-track");
    if r.role == Role::Lender {
        return Err(r.err(TrackErrorKind::Invalid, &fpath, "this track lends its corpora to another track, so it cannot borrow with `from-track` itself"));
    }
    let plain_name = !lender.is_empty()
        && Path::new(lender).components().count() == 1
        && !lender.contains(['/', '\\'])
        && lender != "."
        && lender != "..";
    if !plain_name {
        return Err(r.err(TrackErrorKind::Invalid, &fpath, format!("`{lender}` is not a track name: `from-track` names a track directory beside this one")));
    }
    let here = r
        .dir()
        .canonicalize()
        .unwrap_or_else(|_| r.dir().to_path_buf());
    let dir = here
        .parent()
        .map(|p| p.join(lender))
        .filter(|d| d.join("track.yaml").is_file())
        .ok_or_else(|| {
            r.err(
                TrackErrorKind::Corpus,
                &fpath,
                format!(
                    "no track `{lender}` beside this track (looked for {}/track.yaml)",
                    here.parent().unwrap_or(&here).join(lender).display()
                ),
            )
        })?;
    let track = load_as(
        &dir,
        &LoadOptions {
            frontends: r.frontends,
            params: Map::new(),
            test_mode: r.test_mode,
            ..Default::default()
        },
        Role::Lender,
    )?;
    let (_, files) = track
        .corpora
        .iter()
        .find(|(n, _)| *n == c.name)
        .ok_or_else(|| {
            let hint = did_you_mean(&c.name, track.corpora.iter().map(|(n, _)| n.as_str()));
            r.err(
                TrackErrorKind::Corpus,
                &fpath,
                format!("track `{lender}` has no corpus `{}`{hint}", c.name),
            )
        })?;
    Ok(files
        .iter()
        .map(|f| DocumentSet {
            target_index: default_target
                .clone()
                .unwrap_or_else(|| f.target_index.clone()),
            ..f.clone()
        })
        .collect())
}

fn check_operation(
    def: &OperationDef,
    ctx: &TrackContext,
    r: &Resolver,
    path: &str,
) -> Result<ops::OpSpec, TrackError> {
    ops::parse(&def.kind, &def.params, ctx)
        .map(|(_, spec)| spec)
        .map_err(|e| {
            let kind = if def.params.is_empty() && e.param.is_empty() {
                TrackErrorKind::UnknownOperationType
            } else {
                TrackErrorKind::Invalid
            };
            let p = if e.param.is_empty() {
                format!("{path}/type")
            } else {
                format!("{path}/params/{}", e.param)
            };
            r.err(kind, &p, format!("operation `{}`: {}", def.name, e.message))
        })
}

pub(super) fn resolve_ref(
    v: &Value,
    ops: &[OperationDef],
    ctx: &TrackContext,
    r: &Resolver,
    path: &str,
) -> Result<OperationDef, TrackError> {
    match v {
        Value::String(name) => ops
            .iter()
            .find(|o| o.name == *name)
            .cloned()
            .ok_or_else(|| {
                let hint = did_you_mean(name, ops.iter().map(|o| o.name.as_str()));
                r.err(
                    TrackErrorKind::UnknownOperation,
                    path,
                    format!("no operation named `{name}` under `operations`{hint}"),
                )
            }),
        other => {
            let raw: RawOperation = serde_json::from_value(other.clone()).map_err(|e| {
                r.err(
                    TrackErrorKind::Schema,
                    path,
                    format!("not an operation: {e}"),
                )
            })?;
            let def = OperationDef {
                name: raw.name,
                kind: raw.kind,
                params: raw.params,
            };
            check_operation(&def, ctx, r, path)?;
            Ok(def)
        }
    }
}

pub(super) fn resolve_refs(
    vs: &[Value],
    ops: &[OperationDef],
    ctx: &TrackContext,
    r: &Resolver,
    path: &str,
) -> Result<Vec<OperationDef>, TrackError> {
    vs.iter()
        .enumerate()
        .map(|(i, v)| resolve_ref(v, ops, ctx, r, &format!("{path}/{i}")))
        .collect()
}

fn resolve_item(
    item: &RawScheduleItem,
    ops: &[OperationDef],
    ctx: &TrackContext,
    r: &Resolver,
    path: &str,
) -> Result<ScheduleItem, TrackError> {
    let Some(par) = &item.parallel else {
        return Ok(ScheduleItem::Task(resolve_task(item, ops, ctx, r, path)?));
    };
    let mut tasks = Vec::new();
    for (i, t) in par.tasks.iter().enumerate() {
        let tpath = format!("{path}/parallel/tasks/{i}");
        let task = resolve_task(t, ops, ctx, r, &tpath)?;
        if task.trials > 1 || task.warmup_trials > 0 || !task.reset.is_empty() {
            return Err(r.err(TrackErrorKind::Invalid, &tpath, "tasks inside `parallel` cannot have their own trials, warmup-trials or reset; set trials and reset on the parallel block"));
        }
        if let Some(key) = swept_key(&task) {
            return Err(r.err(TrackErrorKind::NotSweepable, &format!("{tpath}/{key}"), format!("`{key}` cannot be swept inside a `parallel` block: its tasks run at once, so they cannot step through a sweep")));
        }
        if task.capacity.is_some() {
            return Err(r.err(TrackErrorKind::Invalid, &format!("{tpath}/target-throughput"), "a capacity search (`target-throughput: max`) cannot run inside `parallel`: each probe picks the next rate from its own verdict, which the block's other tasks would blur; search it as a task of its own"));
        }
        tasks.push(task);
    }
    let name = item
        .name
        .clone()
        .unwrap_or_else(|| format!("parallel-{}", path.rsplit('/').next().unwrap_or("0")));
    let completed_by = match &par.completed_by {
        None => None,
        Some(by) => Some(tasks.iter().position(|t| t.name == *by).ok_or_else(|| {
            let hint = did_you_mean(by, tasks.iter().map(|t| t.name.as_str()));
            r.err(
                TrackErrorKind::Invalid,
                &format!("{path}/parallel/completed-by"),
                format!("no task `{by}` in this parallel block{hint}"),
            )
        })?),
    };
    Ok(ScheduleItem::Parallel {
        name,
        completed_by,
        tasks,
        trials: par.trials.unwrap_or(1),
        reset: resolve_refs(&par.reset, ops, ctx, r, &format!("{path}/parallel/reset"))?,
    })
}

/// Reports, plots and compare find a task by its name, so names are unique in a challenge:
/// two tasks the track named alike are refused (as Rally does); an unnamed task that reuses an
/// operation is named after it with `-2`, `-3`, ... in schedule order.
fn unique_task_names(
    challenge: &str,
    schedule: &mut [ScheduleItem],
    r: &Resolver,
) -> Result<(), TrackError> {
    let mut seen: Vec<(String, String)> = Vec::new();
    for t in schedule.iter_mut().flat_map(|item| match item {
        ScheduleItem::Task(t) => std::slice::from_mut(t),
        ScheduleItem::Parallel { tasks, .. } => tasks.as_mut_slice(),
    }) {
        if let Some((_, first)) = seen.iter().find(|(n, _)| *n == t.name) {
            if t.named {
                return Err(r.err(TrackErrorKind::Invalid, &t.path, format!("challenge `{challenge}` has two tasks named `{}` (the first at {first}); give each its own `name`", t.name)));
            }
            let base = t.name.clone();
            t.name = (2..)
                .map(|k| format!("{base}-{k}"))
                .find(|n| !seen.iter().any(|(s, _)| s == n))
                .unwrap_or(base);
        }
        seen.push((t.name.clone(), t.path.clone()));
    }
    Ok(())
}

impl Track {
    /// Adds the line and column of the error's YAML path, when it has a path and no position.
    pub fn locate(&self, mut e: TrackError) -> TrackError {
        if e.location.is_none() {
            if let Some(path) = &e.path {
                e.location = self.positions.find(path);
            }
        }
        e
    }

    /// Where the params of operation `name` were written: `/operations/N` for a named one,
    /// `None` for an inline one (which lives under its task).
    pub fn operation_path(&self, name: &str) -> Option<String> {
        self.operations
            .iter()
            .position(|o| o.name == name)
            .map(|i| format!("/operations/{i}"))
    }
    /// The challenge to run: by name, else the one marked default, else the only/first one.
    pub fn challenge(&self, name: Option<&str>) -> Result<&Challenge, TrackError> {
        match name {
            Some(n) => self.challenges.iter().find(|c| c.name == n).ok_or_else(|| {
                let hint = did_you_mean(n, self.challenges.iter().map(|c| c.name.as_str()));
                let all: Vec<_> = self.challenges.iter().map(|c| c.name.as_str()).collect();
                TrackError::new(
                    TrackErrorKind::UnknownChallenge,
                    &self.file,
                    format!(
                        "track `{}` has no challenge `{n}`{hint}; it has: {}",
                        self.name,
                        all.join(", ")
                    ),
                )
            }),
            None => Ok(self
                .challenges
                .iter()
                .find(|c| c.default)
                .unwrap_or(&self.challenges[0])),
        }
    }

    pub fn context(&self) -> TrackContext<'_> {
        TrackContext {
            indices: &self.indices,
            corpora: &self.corpora,
            dir: self.file.parent(),
        }
    }
}
