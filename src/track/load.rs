//! Loading a track: read → render template → parse YAML → validate against the schema →
//! resolve. Each step's error names the file and, where it can, the line and column.

use super::error::{TrackError, TrackErrorKind};
use super::locate::Locator;
use super::model::{from_raw, Resolver, Track};
use super::raw::RawTrack;
use super::schema;
use super::template::{render, Strictness};
use crate::suggest::did_you_mean;
use serde_json::{Map, Value};
use std::path::{Path, PathBuf};

/// Tracks bigger than this are refused before templating: a track is configuration.
const MAX_TRACK_BYTES: u64 = 16 * 1024 * 1024;

/// What to do with a task the runner cannot run as the track's own tool would.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum OnUnsupported {
    /// Stop with an error naming the task and why (the default).
    #[default]
    Fail,
    /// Leave the task out and say so.
    Skip,
}

/// A reader of tracks written for another tool (Rally's `track.json`, OSB's workloads): it
/// claims a path, then turns the track there into one of ours. The request names the front
/// ends it accepts; the track module knows none of them.
pub trait Frontend: Sync {
    /// The file of a track this front end reads at `path`, if there is one.
    fn claims(&self, path: &Path) -> Option<PathBuf>;
    /// The track at `file` converted to ours (JSON text), with what changed.
    fn convert(&self, file: &Path, opts: &LoadOptions) -> Result<Converted, TrackError>;
    /// Whose tracks these are (`Rally`), for messages.
    fn name(&self) -> &'static str;
    /// The track at `file` after its own templating, as its tool renders it.
    fn render(&self, file: &Path, opts: &LoadOptions) -> Result<String, TrackError>;
}

/// A track another front end converted: our track's text, what the conversion changed or
/// left out, and where its downloaded corpus files are.
pub struct Converted {
    pub track: String,
    pub notes: Vec<String>,
    pub data_dir: Option<PathBuf>,
    /// The track's own Python, where it has some (Rally's track.py).
    pub python: Option<std::sync::Arc<crate::python::TrackPython>>,
}

#[derive(Clone, Default)]
pub struct LoadOptions {
    /// The front ends whose tracks load besides ours.
    pub frontends: &'static [&'static dyn Frontend],
    /// Parameters from `--track-params`, overriding the track's declared defaults.
    pub params: Map<String, Value>,
    /// Exposed to templates as `test_mode`.
    pub test_mode: bool,
    /// Rally tracks: accept parameters no template uses.
    pub ignore_unused_params: bool,
    /// Rally tracks: what to do with tasks the runner cannot run as Rally would.
    pub on_unsupported: OnUnsupported,
    /// Rally tracks: the challenge the race runs (None: the track's default); only its tasks
    /// can make the conversion fail.
    pub challenge: Option<String>,
    /// Rally tracks: where corpus files from a `base-url` are downloaded to and kept, one
    /// directory per track below it (the results home's `data/`).
    pub data_root: Option<PathBuf>,
    /// Rally tracks: a corpus file that is not here and cannot be downloaded is a note, not
    /// an error (`convert-rally` writes the track before its data is fetched).
    pub corpora_may_be_missing: bool,
    /// Rally tracks with a track.py: the Python interpreter it runs on (None: `python3`).
    pub python: Option<PathBuf>,
    /// Rally tracks and OSB workloads: the template variable `distribution_version` (the
    /// version their `{% if %}`s compare), which they otherwise default themselves.
    pub distribution_version: Option<String>,
    /// Rally tracks: never download a corpus (`--offline`); one not on disk is an error.
    pub offline: bool,
}

/// The file of a track given as a directory (its `track.yaml`) or as a file.
impl std::fmt::Debug for LoadOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LoadOptions")
            .field("frontends", &self.frontends.len())
            .field("params", &self.params)
            .field("test_mode", &self.test_mode)
            .field("challenge", &self.challenge)
            .finish_non_exhaustive()
    }
}

impl LoadOptions {
    /// The front end that reads the track at `path`, and its file; None for a track of ours.
    fn frontend_for(&self, path: &Path) -> Option<(&'static dyn Frontend, PathBuf)> {
        self.frontends
            .iter()
            .find_map(|f| f.claims(path).map(|file| (*f, file)))
    }
}

pub fn track_file(path: &Path) -> PathBuf {
    if path.is_dir() {
        for name in ["track.yaml", "track.yml"] {
            let f = path.join(name);
            if f.is_file() {
                return f;
            }
        }
        path.join("track.yaml")
    } else {
        path.to_path_buf()
    }
}

pub fn load(path: &Path, opts: &LoadOptions) -> Result<Track, TrackError> {
    load_as(path, opts, Role::Main)
}

/// A track loaded to lend its corpus to another (`from-track`) may not borrow in turn, so
/// references cannot loop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Role {
    Main,
    Lender,
}

pub(super) fn load_as(path: &Path, opts: &LoadOptions, role: Role) -> Result<Track, TrackError> {
    if let Some((frontend, file)) = opts.frontend_for(path) {
        let loaded = frontend.convert(&file, opts)?;
        let (ours, notes) = (loaded.track, loaded.notes);
        let mut track = parse_rendered(
            &ours,
            &file,
            opts.params.clone(),
            opts.test_mode,
            role,
            loaded.data_dir.as_deref(),
            opts.frontends,
        )
        .map_err(|mut e| {
            e.message.push_str(&format!(
                " (in the track converted from {}'s; `runner convert-rally` shows it)",
                frontend.name()
            ));
            e
        })?;
        track.notes = notes;
        track.python = loaded.python;
        track.shrunk_for_test_mode = opts.test_mode;
        return Ok(track);
    }
    let file = track_file(path);
    let bytes = crate::files::read_bytes(&file).map_err(|e| {
        TrackError::new(TrackErrorKind::Io, &file, format!("cannot read track: {e}"))
    })?;
    let source = String::from_utf8(bytes).map_err(|e| {
        let valid = &e.as_bytes()[..e.utf8_error().valid_up_to()];
        let valid = std::str::from_utf8(valid).unwrap_or_default();
        let line = valid.matches('\n').count() + 1;
        let column = valid.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
        let byte = e.as_bytes()[valid.len()];
        TrackError::new(
            TrackErrorKind::Yaml,
            &file,
            format!("the track is not UTF-8 text (byte 0x{byte:02x}); YAML files are UTF-8"),
        )
        .at(Some((line, column)))
    })?;
    load_source_as(&source, &file, opts, role)
}

/// Loads a track from its text, as if read from `file` (whose directory holds its includes
/// and corpora). The fuzz target enters here.
pub fn load_source(source: &str, file: &Path, opts: &LoadOptions) -> Result<Track, TrackError> {
    if source.len() as u64 > MAX_TRACK_BYTES {
        return Err(TrackError::new(
            TrackErrorKind::Io,
            file,
            "the track file is larger than 16 MB; tracks are limited to 16 MB",
        ));
    }
    load_source_as(source, file, opts, Role::Main)
}

fn load_source_as(
    source: &str,
    file: &Path,
    opts: &LoadOptions,
    role: Role,
) -> Result<Track, TrackError> {
    let (rendered, effective) = render_source(source, file, opts)?;
    parse_rendered(
        &rendered,
        file,
        effective,
        opts.test_mode,
        role,
        None,
        opts.frontends,
    )
    .map_err(|mut e| {
        // Template blocks can add or drop lines; then positions are those of the rendered text.
        if e.location.is_some() && source.lines().count() != rendered.lines().count() {
            e.message
                .push_str(" (line and column are in the rendered template)");
        }
        e
    })
}

/// The text of a track after templating, as the loader parses it: a track of ours (YAML) or a
/// Rally track (`track.json`, see `rally`; it must render to JSON).
pub fn render_track(path: &Path, opts: &LoadOptions) -> Result<String, TrackError> {
    if let Some((frontend, file)) = opts.frontend_for(path) {
        return frontend.render(&file, opts);
    }
    let file = track_file(path);
    let source = crate::files::read_text(&file).map_err(|e| {
        TrackError::new(TrackErrorKind::Io, &file, format!("cannot read track: {e}"))
    })?;
    render_source(&source, &file, opts).map(|(text, _)| text)
}

/// Renders a track of ours: declared parameters and their defaults first, then the whole
/// template with them; returns the text and the effective parameters.
fn render_source(
    source: &str,
    file: &Path,
    opts: &LoadOptions,
) -> Result<(String, Map<String, Value>), TrackError> {
    // A byte-order mark (editors on Windows write one) is not content: YAML would read it as
    // text before the first document.
    let source = source.strip_prefix('\u{feff}').unwrap_or(source);
    let file = file.to_path_buf();
    // First pass: learn the declared parameters and their defaults from the top-level
    // `parameters:` block alone (the rest of the template needs them to render).
    let mut vars = opts.params.clone();
    vars.insert("test_mode".into(), Value::Bool(opts.test_mode));
    let block = parameters_block(source);
    let declared = match render(&block, &file, &vars, Strictness::Lenient) {
        Ok(text) => declared_parameters(&text),
        Err(_) => Map::new(),
    };
    for key in opts.params.keys() {
        if !declared.contains_key(key) {
            let hint = did_you_mean(key, declared.keys().map(String::as_str));
            let known = if declared.is_empty() {
                "it declares none".to_string()
            } else {
                format!(
                    "it declares: {}",
                    declared.keys().cloned().collect::<Vec<_>>().join(", ")
                )
            };
            return Err(TrackError::new(
                TrackErrorKind::Params,
                &file,
                format!("unknown track parameter `{key}`{hint}; {known}"),
            ));
        }
    }
    let mut effective = declared;
    effective.extend(opts.params.clone());
    let mut vars = effective.clone();
    vars.insert("test_mode".into(), Value::Bool(opts.test_mode));
    let rendered = render(source, &file, &vars, Strictness::Strict)?;
    Ok((rendered, effective))
}

/// The lines of the top-level `parameters:` block of a track's source, up to the next
/// top-level key.
fn parameters_block(source: &str) -> String {
    let mut out = String::new();
    let mut inside = false;
    for line in source.lines() {
        let top_level = !line.starts_with([' ', '\t', '#']) && !line.trim().is_empty();
        if top_level {
            inside = line.trim_end().starts_with("parameters:");
        }
        if inside {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

/// The `parameters:` mapping of a first, lenient render; empty if it cannot be read yet
/// (the strict render reports the real problem).
fn declared_parameters(text: &str) -> Map<String, Value> {
    let Ok(value) = serde_yaml::from_str::<serde_yaml::Value>(text) else {
        return Map::new();
    };
    match serde_json::to_value(value) {
        Ok(Value::Object(mut top)) => match top.remove("parameters") {
            Some(Value::Object(p)) => p,
            _ => Map::new(),
        },
        _ => Map::new(),
    }
}

fn parse_rendered(
    rendered: &str,
    file: &Path,
    params: Map<String, Value>,
    test_mode: bool,
    role: Role,
    data_dir: Option<&Path>,
    frontends: &'static [&'static dyn Frontend],
) -> Result<Track, TrackError> {
    if let Some(at) = too_deep(rendered) {
        return Err(TrackError::new(TrackErrorKind::Yaml, file, format!("invalid YAML: lists and mappings nested more than {MAX_FLOW_DEPTH} deep (recursion limit)")).at(Some(at)));
    }
    let yaml: serde_yaml::Value = serde_yaml::from_str(rendered).map_err(|e| {
        let mut loc = e.location().map(|l| (l.line(), l.column()));
        let text = e.to_string();
        // The parser points at the mapping that holds a duplicate; point at the duplicate.
        if let (Some((line, _)), Some(key)) = (loc, duplicate_key(&text)) {
            loc = second_occurrence(rendered, line, key).or(loc);
        }
        // "More than one document" comes without a position: the second document's marker.
        if loc.is_none() && text.contains("more than one document") {
            loc = rendered
                .lines()
                .enumerate()
                .skip(1)
                .find(|(_, l)| l.starts_with("---"))
                .map(|(i, _)| (i + 1, 1));
        }
        TrackError::new(TrackErrorKind::Yaml, file, format!("invalid YAML: {text}")).at(loc)
    })?;
    let json = serde_json::to_value(&yaml).map_err(|e| {
        let path = non_scalar_key(&yaml, String::new()).unwrap_or_default();
        let at = Locator::new(rendered).find(&path);
        TrackError::new(
            TrackErrorKind::Yaml,
            file,
            format!("the track cannot be read as data: {e} (mapping keys must be strings)"),
        )
        .at(at)
        .with_path(if path.is_empty() { "/".into() } else { path })
    })?;
    let locator = Locator::new(rendered);
    schema::validate(&json, file, &locator)?;
    let raw: RawTrack = serde_json::from_value(json).map_err(|e| {
        TrackError::new(
            TrackErrorKind::Schema,
            file,
            format!("track does not match the format: {e}"),
        )
    })?;
    from_raw(
        raw,
        params,
        &Resolver {
            file,
            locator: &locator,
            test_mode,
            role,
            data_dir,
            frontends,
        },
    )
}

/// Deeper flow nesting than this is refused before parsing: the YAML parser's cost grows with
/// the square of the depth (100,000 `[` took 26 s), and no track needs it.
const MAX_FLOW_DEPTH: usize = 128;

/// The line and column of the first `[` or `{` nested deeper than [`MAX_FLOW_DEPTH`], outside
/// quoted strings and comments.
fn too_deep(text: &str) -> Option<(usize, usize)> {
    let (mut depth, mut line, mut col) = (0usize, 1usize, 0usize);
    let mut quote: Option<char> = None;
    let mut comment = false;
    let mut prev = '\n';
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        col += 1;
        if c == '\n' {
            (line, col, comment) = (line + 1, 0, false);
            prev = c;
            continue;
        }
        match quote {
            Some('"') if c == '\\' => {
                chars.next();
                col += 1;
            }
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None if comment => {}
            None => match c {
                '#' if prev.is_whitespace() => comment = true,
                '"' | '\'' if !prev.is_alphanumeric() => quote = Some(c),
                '[' | '{' => {
                    depth += 1;
                    if depth > MAX_FLOW_DEPTH {
                        return Some((line, col));
                    }
                }
                ']' | '}' => depth = depth.saturating_sub(1),
                _ => {}
            },
        }
        prev = c;
    }
    None
}

/// The path of the first mapping whose key is a list or mapping (JSON has no such keys).
fn non_scalar_key(v: &serde_yaml::Value, path: String) -> Option<String> {
    use serde_yaml::Value as Y;
    match v {
        Y::Mapping(m) => m.iter().find_map(|(k, child)| match k {
            Y::Sequence(_) | Y::Mapping(_) => Some(path.clone()),
            _ => {
                let key = match k {
                    Y::String(s) => s.clone(),
                    other => serde_yaml::to_string(other)
                        .unwrap_or_default()
                        .trim()
                        .to_string(),
                };
                non_scalar_key(child, format!("{path}/{key}"))
            }
        }),
        Y::Sequence(items) => items
            .iter()
            .enumerate()
            .find_map(|(i, child)| non_scalar_key(child, format!("{path}/{i}"))),
        Y::Tagged(t) => non_scalar_key(&t.value, path),
        _ => None,
    }
}

/// The key of a "duplicate entry with key \"k\"" message.
fn duplicate_key(message: &str) -> Option<&str> {
    let rest = message.split_once("duplicate entry with key \"")?.1;
    rest.split_once('"').map(|(key, _)| key)
}

/// Line and column of the second `key:` at one indentation, from `from_line` on.
fn second_occurrence(text: &str, from_line: usize, key: &str) -> Option<(usize, usize)> {
    let mut first_indent = None;
    for (i, line) in text.lines().enumerate().skip(from_line.saturating_sub(1)) {
        let trimmed = line.trim_start_matches([' ', '-']);
        let indent = line.len() - trimmed.len();
        let is_key = trimmed
            .strip_prefix(key)
            .is_some_and(|rest| rest.trim_start().starts_with(':'))
            || trimmed
                .strip_prefix(&format!("\"{key}\""))
                .is_some_and(|rest| rest.trim_start().starts_with(':'));
        if !is_key {
            continue;
        }
        match first_indent {
            None => first_indent = Some(indent),
            Some(first) if first == indent => return Some((i + 1, indent + 1)),
            Some(_) => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn write(text: &str) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("track.yaml"), text).unwrap();
        dir
    }

    const TRACK: &str = "name: t
parameters:
  clients: 2
  targets: [10, 20]
operations: [{name: nap, type: sleep}]
challenges:
  - name: c
    schedule:
      - operation: nap
        clients: {{ clients }}
        iterations: {{ clients * 10 }}
        target-throughput: {{ targets }}
{% if test_mode %}
      - operation: nap
{% endif %}
";

    #[test]
    fn defaults_apply_and_user_params_override() {
        let dir = write(TRACK);
        let t = load(dir.path(), &LoadOptions::default()).unwrap();
        let crate::track::ScheduleItem::Task(task) = &t.challenges[0].schedule[0] else {
            panic!()
        };
        assert_eq!(
            (task.clients.clone(), task.iterations.clone()),
            (vec![2], Some(vec![20]))
        );
        assert_eq!(t.params["targets"], json!([10, 20]));
        let mut params = Map::new();
        params.insert("clients".into(), json!(3));
        let t = load(
            dir.path(),
            &LoadOptions {
                params,
                test_mode: true,
                ..Default::default()
            },
        )
        .unwrap();
        let crate::track::ScheduleItem::Task(task) = &t.challenges[0].schedule[0] else {
            panic!()
        };
        assert_eq!(task.iterations, Some(vec![30]));
        assert_eq!(
            t.challenges[0].schedule.len(),
            2,
            "test_mode is a template variable"
        );
    }

    #[test]
    fn unknown_params_are_rejected_with_a_suggestion() {
        let dir = write(TRACK);
        let mut params = Map::new();
        params.insert("client".into(), json!(3));
        let e = load(
            dir.path(),
            &LoadOptions {
                params,
                test_mode: false,
                ..Default::default()
            },
        )
        .unwrap_err();
        assert_eq!(e.kind, TrackErrorKind::Params);
        assert!(
            e.message.contains("did you mean `clients`"),
            "{}",
            e.message
        );
    }

    #[test]
    fn positions_after_template_blocks_say_so() {
        let dir = write("name: t\n{% if true %}\n{% endif %}\nchallenges:\n  - name: c\n    schedule: [{operation: x}]\n");
        let e = load(dir.path(), &LoadOptions::default()).unwrap_err();
        assert_eq!(e.kind, TrackErrorKind::UnknownOperation);
        assert!(e.location.is_some());
        let dir = write("name: t\n{% if false %}\nextra: 1\n{% endif %}\nchallenges:\n  - name: c\n    schedule: [{operation: x}]\n");
        let e = load(dir.path(), &LoadOptions::default()).unwrap_err();
        assert!(e.message.contains("rendered template"), "{}", e.message);
    }

    #[test]
    fn nesting_depth_ignores_brackets_in_strings_and_comments() {
        let deep = format!("a: {}", "[".repeat(129));
        assert_eq!(too_deep(&deep), Some((1, 132)));
        let quoted = format!(
            "a: '{0}'\nb: \"{0}\\\"\"\n# {0}\nc: [[1]]\n",
            "[".repeat(200)
        );
        assert_eq!(too_deep(&quoted), None);
    }

    #[test]
    fn duplicate_keys_point_at_the_second_one() {
        let dir = write("name: t\nchallenges:\n  - name: c\n    schedule: []\n    schedule: []\n");
        let e = load(dir.path(), &LoadOptions::default()).unwrap_err();
        assert_eq!(
            (e.kind, e.location),
            (TrackErrorKind::Yaml, Some((5, 5))),
            "{e}"
        );
    }

    #[test]
    fn huge_and_hostile_yaml_fail_cleanly() {
        let laughs = "a: &a [x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]\ne: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d]\nf: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e]\ng: &g [*f, *f, *f, *f, *f, *f, *f, *f, *f]\nh: [*g, *g, *g, *g, *g, *g, *g, *g, *g]\n";
        let e = load(write(laughs).path(), &LoadOptions::default()).unwrap_err();
        assert!(
            matches!(e.kind, TrackErrorKind::Yaml | TrackErrorKind::Schema),
            "{e}"
        );
        let deep = format!("name: t\nx: {}{}\n", "[".repeat(10_000), "]".repeat(10_000));
        let e = load(write(&deep).path(), &LoadOptions::default()).unwrap_err();
        assert_eq!(e.kind, TrackErrorKind::Yaml, "{e}");
    }
}
