//! Rally tracks: a directory with a `track.json`, which is JSON rendered through Jinja2. This
//! module renders it as Rally does, with minijinja: `{% import "rally.helpers" as rally %}`
//! (`rally.collect(parts=GLOB)` includes each matching file, comma-joined;
//! `rally.exists_set_param(name, value, default_value, comma)`), the `default` filter, `now`
//! (seconds since the epoch) and `days_ago`. Track parameters are template variables (globals,
//! so that parts included from macros see them too); undefined ones render empty, as in Rally.
//! A parameter no template mentions is refused with the closest one that is.

mod convert;
mod download;
mod inline;
mod jinja;
mod python;
mod registry;
pub mod repository;

pub use convert::python::drawn_operation;
pub use convert::{test_mode_file, OnUnsupported};

use crate::suggest::did_you_mean;
use crate::track::template::{environment, render_in};
use crate::track::{TrackError, TrackErrorKind};
use minijinja::{Environment, UndefinedBehavior, Value};
use serde_json::Map;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// `{% import "rally.helpers" as rally %}` gives track.json macros that call the global `rally`
/// object, which the parts see too (they are included from inside a macro, where Jinja2's
/// `with context` would hand them the importer's `rally`; minijinja's globals do the same).
const HELPERS: &str = r#"{% macro collect(parts) -%}{{ rally.collect(parts=parts) }}{%- endmacro %}
{% macro exists_set_param(setting_name, value, default_value=none, comma=true) -%}{{ rally.exists_set_param(setting_name, value, default_value, comma) }}{%- endmacro %}"#;

/// At most this many files are looked at below a track directory (globs, parameter checks).
const MAX_FILES: usize = 10_000;

/// The `track.json` of a Rally track directory (or the `workload.json` of an OpenSearch
/// Benchmark workload, or the file itself), if `path` is one.
pub fn rally_track_file(path: &Path) -> Option<PathBuf> {
    if path.is_dir() {
        let yaml = ["track.yaml", "track.yml"]
            .iter()
            .any(|n| path.join(n).is_file());
        return ["track.json", "workload.json"]
            .iter()
            .map(|n| path.join(n))
            .find(|f| !yaml && f.is_file());
    }
    (path.extension().is_some_and(|e| e == "json") && path.is_file()).then(|| path.to_path_buf())
}

/// Renders a Rally `track.json` with `params`; refuses parameters no template of the track
/// mentions unless `ignore_unused`.
pub fn render(file: &Path, opts: &crate::track::LoadOptions) -> Result<String, TrackError> {
    let (params, ignore_unused) = (&opts.params, opts.ignore_unused_params);
    let dir = file
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("."));
    let source = crate::files::read_text(file).map_err(|e| {
        TrackError::new(TrackErrorKind::Io, file, format!("cannot read track: {e}"))
    })?;
    let assembled = assemble(file, &source)?;
    if !ignore_unused {
        let used = referenced_names(&dir, &assembled.text);
        for key in params.keys() {
            if !used.contains(key) {
                let hint = did_you_mean(key, used.iter().map(String::as_str));
                return Err(TrackError::new(
                    TrackErrorKind::Params,
                    file,
                    format!("track parameter `{key}` is not used by the track{hint}; pass --ignore-unused-track-params to allow it"),
                ));
            }
        }
    }
    render_assembled(file, &assembled, &template_vars(opts))
}

/// What a track's templates see: its parameters, and `distribution_version` where given.
fn template_vars(opts: &crate::track::LoadOptions) -> Map<String, serde_json::Value> {
    let mut vars = opts.params.clone();
    if let Some(v) = &opts.distribution_version {
        vars.insert(
            "distribution_version".into(),
            serde_json::Value::String(v.clone()),
        );
    }
    vars
}

fn assemble(file: &Path, source: &str) -> Result<inline::Assembled, TrackError> {
    inline::assemble(file, source).map_err(|m| {
        TrackError::new(
            TrackErrorKind::Template,
            file,
            format!("template error: {m}"),
        )
    })
}

/// Renders one file of a Rally track (track.json, an index body) with the track's parameters.
pub fn render_file(
    file: &Path,
    source: &str,
    params: &Map<String, serde_json::Value>,
) -> Result<String, TrackError> {
    render_assembled(file, &assemble(file, source)?, params)
}

fn render_assembled(
    file: &Path,
    assembled: &inline::Assembled,
    params: &Map<String, serde_json::Value>,
) -> Result<String, TrackError> {
    let dir = file
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("."));
    let mut env = environment(
        &dir,
        UndefinedBehavior::Lenient,
        &[("rally.helpers", HELPERS), ("benchmark.helpers", HELPERS)],
    );
    // Rally's Jinja does not escape: `"{{ name }}"` in a .json part is the name in quotes.
    env.set_auto_escape_callback(|_| minijinja::AutoEscape::None);
    jinja::add_rally_globals(&mut env, &dir);
    for (k, v) in params {
        env.add_global(k.clone(), Value::from(minijinja::value::Serde(v)));
    }
    render_in(&env, &assembled.text, file, Value::UNDEFINED).map_err(|e| assembled.locate(e, file))
}

/// Parses rendered JSON, locating a syntax error in the rendered text.
pub fn parse_json(text: &str, file: &Path) -> Result<serde_json::Value, TrackError> {
    serde_json::from_str(text).map_err(|e| {
        TrackError::new(TrackErrorKind::Yaml, file, format!("the rendered track is not JSON: {e} (line and column in the rendered text; `runner render-track` shows it)")).at(Some((e.line(), e.column())))
    })
}

/// Parses a rendered file of a Rally track; an error names the collects that matched no file.
pub fn parse_rendered(text: &str, file: &Path) -> Result<serde_json::Value, TrackError> {
    parse_json(text, file).map_err(|e| with_empty_globs(e, file))
}

/// A rendered file that is not JSON names the collects in it that matched no file: they
/// rendered nothing (as in Rally), which is the likely cause of a stray comma.
fn with_empty_globs(mut e: TrackError, file: &Path) -> TrackError {
    let Ok(source) = crate::files::read_text(file) else {
        return e;
    };
    if let Ok(assembled) = inline::assemble(file, &source) {
        for glob in &assembled.empty_globs {
            e.message
                .push_str(&format!("; note: {glob}, so it rendered nothing"));
        }
    }
    e
}

/// A Rally track converted: our track's JSON text, what the conversion changed or left out,
/// and where its downloaded corpus files are.
pub struct Loaded {
    pub track: String,
    pub notes: Vec<String>,
    pub data_dir: Option<PathBuf>,
    /// Commented starts for the bindings of operations track.py's param sources fed.
    pub binding_stubs: Vec<String>,
    /// The track's Python (track.py, workload.py), loaded and checked.
    pub python: Option<crate::python::TrackPython>,
}

/// Rally's tracks (`track.json`) and OSB's workloads, as a front end of the track loader.
pub struct Rally;

/// The front ends a request accepts besides our own tracks.
pub static FRONTENDS: &[&dyn crate::track::Frontend] = &[&Rally];

impl crate::track::Frontend for Rally {
    fn claims(&self, path: &Path) -> Option<PathBuf> {
        rally_track_file(path)
    }

    fn convert(
        &self,
        file: &Path,
        opts: &crate::track::LoadOptions,
    ) -> Result<crate::track::Converted, TrackError> {
        let loaded = load_converted(file, opts)?;
        Ok(crate::track::Converted {
            track: loaded.track,
            notes: loaded.notes,
            data_dir: loaded.data_dir,
            python: loaded.python.map(std::sync::Arc::new),
        })
    }

    fn name(&self) -> &'static str {
        "Rally"
    }

    fn render(&self, file: &Path, opts: &crate::track::LoadOptions) -> Result<String, TrackError> {
        render(file, opts)
    }
}

/// Loads a Rally track as a track of ours: render, parse, fetch missing corpus files from
/// their `base-url` (kept under `data_root/<track>`), check their sizes, convert (Rally's
/// semantics). The caller checks the result as any track.
pub fn load_converted(file: &Path, opts: &crate::track::LoadOptions) -> Result<Loaded, TrackError> {
    let params = &template_vars(opts);
    let text = render(file, opts)?;
    let rally = parse_rendered(&text, file)?;
    let dir = file
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("."));
    let name = dir
        .canonicalize()
        .ok()
        .and_then(|d| d.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_else(|| "rally-track".into());
    let data_dir = opts.data_root.as_ref().map(|root| root.join(&name));
    let render_body = |body: &str| -> Result<serde_json::Value, TrackError> {
        // A file name the template left blank: the track expects it from its params. (An
        // index body left blank is no body, as in Rally; the converter passes it over.)
        if body.trim().is_empty() {
            return Err(TrackError::new(
                TrackErrorKind::Invalid,
                file,
                "a `template` file renders empty: the track sets it from a parameter it was not given (pass the track's params with --track-params, e.g. its params file)",
            ));
        }
        let path = crate::files::resolve_inside(&dir, body).ok_or_else(|| {
            TrackError::new(
                TrackErrorKind::Io,
                file,
                format!("index body `{body}` is outside the track directory"),
            )
        })?;
        let source = crate::files::read_text(&path).map_err(|e| {
            TrackError::new(
                TrackErrorKind::Io,
                &path,
                format!("cannot read index body: {e}"),
            )
        })?;
        parse_rendered(&render_file(&path, &source, params)?, &path)
    };
    let python = python::load(&dir, &name, &rally, opts, data_dir.as_deref(), &render_body)?;
    let converted = convert::convert(
        &rally,
        file,
        &name,
        opts.test_mode,
        opts.on_unsupported,
        opts.challenge.as_deref(),
        &render_body,
        python,
    )?;
    let missing = fetch_and_check_corpora(&rally, file, &dir, data_dir.as_deref(), opts)?;
    let track = serde_json::to_string_pretty(&converted.track)
        .map_err(|e| TrackError::new(TrackErrorKind::Invalid, file, e.to_string()))?;
    let mut notes = converted.notes;
    notes.extend(missing);
    if let Some(py) = &converted.python {
        notes.insert(0, python::summary(py));
    }
    Ok(Loaded {
        track,
        notes,
        data_dir,
        binding_stubs: converted.binding_stubs,
        python: converted.python,
    })
}

/// `runner convert-rally`: writes `out_dir/track.yaml` (the converted track, its notes as
/// comments) and its corpus files beside it (hard-linked, else copied), then loads what it
/// wrote as any track. Returns the YAML and its path; an existing track.yaml is not replaced.
pub fn write_converted(
    dir: &Path,
    out_dir: &Path,
    opts: &crate::track::LoadOptions,
) -> Result<(String, PathBuf), TrackError> {
    let file = rally_track_file(dir).ok_or_else(|| {
        TrackError::new(
            TrackErrorKind::Io,
            dir,
            "holds no Rally track (track.json) or OpenSearch Benchmark workload (workload.json)",
        )
    })?;
    let loaded = load_converted(&file, opts)?;
    let value = parse_json(&loaded.track, &file)?;
    let target = out_dir.join("track.yaml");
    let io = |path: &Path, what: &str, e: std::io::Error| {
        TrackError::new(TrackErrorKind::Io, path, format!("{what}: {e}"))
    };
    if target.exists() {
        return Err(TrackError::new(
            TrackErrorKind::Io,
            &target,
            "exists; choose another --out",
        ));
    }
    std::fs::create_dir_all(out_dir).map_err(|e| io(out_dir, "cannot create the directory", e))?;
    let mut text = format!(
        "# Converted by `runner convert-rally` from {}.\n",
        file.display()
    );
    for note in &loaded.notes {
        text.push_str(&format!("# note: {note}\n"));
    }
    for stub in &loaded.binding_stubs {
        text.push_str("#\n");
        for line in stub.lines() {
            text.push_str(&format!("# {line}\n"));
        }
    }
    text.push_str(
        &serde_yaml::to_string(&value)
            .map_err(|e| TrackError::new(TrackErrorKind::Invalid, &file, e.to_string()))?,
    );
    for corpus in value["corpora"].as_array().into_iter().flatten() {
        for d in corpus["documents"].as_array().into_iter().flatten() {
            let Some(name) = d["source-file"].as_str() else {
                continue;
            };
            let from = match (dir.join(name), &loaded.data_dir) {
                (local, Some(cache)) if !local.is_file() => cache.join(name),
                (local, _) => local,
            };
            let to = out_dir.join(name);
            if let Some(parent) = to.parent() {
                std::fs::create_dir_all(parent)
                    .map_err(|e| io(parent, "cannot create the directory", e))?;
            }
            if !from.is_file() {
                // Named in the notes: the conversion is written before the data is here.
                continue;
            }
            if !to.exists() && std::fs::hard_link(&from, &to).is_err() {
                std::fs::copy(&from, &to)
                    .map_err(|e| io(&to, &format!("cannot copy {} here", from.display()), e))?;
            }
        }
    }
    crate::results::write_report(&target, &text)
        .map_err(|e| TrackError::new(TrackErrorKind::Io, &target, e.to_string()))?;
    // What was written must load as any track does (once its corpus files are there).
    let corpus_missing = value["corpora"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|c| c["documents"].as_array().into_iter().flatten())
        .filter_map(|d| d["source-file"].as_str())
        .any(|f| !out_dir.join(f).is_file());
    if !corpus_missing {
        crate::track::load(out_dir, &crate::track::LoadOptions::default())?;
    }
    Ok((text, target))
}

/// Each corpus file: in the track directory, else in `data_dir`, else downloaded from the
/// corpus's `base-url` into `data_dir`; then its size checked against `compressed-bytes` (and
/// `uncompressed-bytes` for a file that is not compressed).
fn fetch_and_check_corpora(
    rally: &serde_json::Value,
    file: &Path,
    dir: &Path,
    data_dir: Option<&Path>,
    opts: &crate::track::LoadOptions,
) -> Result<Vec<String>, TrackError> {
    let (test_mode, may_be_missing) = (opts.test_mode, opts.corpora_may_be_missing);
    let mut missing = Vec::new();
    for (i, corpus) in rally["corpora"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
    {
        for (j, d) in corpus["documents"]
            .as_array()
            .into_iter()
            .flatten()
            .enumerate()
        {
            let path = format!("/corpora/{i}/documents/{j}");
            let Some(source) = d["source-file"]
                .as_str()
                .filter(|_| convert::is_bulk(corpus, d))
            else {
                continue;
            };
            // Test mode reads the -1k file, whose size the track does not give.
            let test_file = test_mode.then(|| convert::test_mode_file(source));
            let source = test_file.as_deref().unwrap_or(source);
            let err = |m: String| TrackError::new(TrackErrorKind::Corpus, file, m).with_path(&path);
            let local = crate::files::resolve_inside(dir, source)
                .ok_or_else(|| err(format!("`{source}` is outside the track directory")))?;
            let cached = data_dir.map(|d| d.join(source));
            let from_rally = || {
                let corpus_name = corpus["name"].as_str()?;
                let kept = repository::corpus_file(corpus_name, source)?;
                link_rallys_corpus(&kept, data_dir?, source)
            };
            let found = if local.is_file() {
                local
            } else if let Some(c) = cached.filter(|c| c.is_file()) {
                c
            } else if let Some(kept) = from_rally() {
                kept
            } else {
                let Some(base) = d["base-url"]
                    .as_str()
                    .or_else(|| corpus["base-url"].as_str())
                else {
                    if may_be_missing {
                        missing.push(format!("{path}: `{source}` is not here and the track gives no `base-url`; put it beside track.yaml before racing"));
                    }
                    continue;
                };
                let Some(target) = data_dir.map(|d| d.join(source)) else {
                    continue;
                };
                let url = format!("{}/{source}", base.trim_end_matches('/'));
                if opts.offline {
                    let m = format!("`{source}` is not on disk and --offline forbids downloading it from {url}; put it in {} (or where esrally keeps corpora)", target.parent().unwrap_or(&target).display());
                    if may_be_missing {
                        missing.push(format!("{path}: {m}"));
                        continue;
                    }
                    return Err(err(m));
                }
                match download::fetch(&url, &target) {
                    Ok(()) => target,
                    Err(m) if may_be_missing => {
                        missing.push(format!("{path}: `{source}` is not here and cannot be downloaded from {url} ({m}); put it beside track.yaml before racing"));
                        continue;
                    }
                    Err(m) => return Err(err(format!("cannot download {url}: {m}"))),
                }
            };
            let size = std::fs::metadata(&found).map(|m| m.len()).unwrap_or(0);
            let compressed = [".bz2", ".gz", ".zst", ".zip"]
                .iter()
                .any(|ext| source.ends_with(ext));
            let expected = if test_mode {
                None
            } else if compressed {
                d["compressed-bytes"].as_u64()
            } else {
                d["uncompressed-bytes"]
                    .as_u64()
                    .or(d["compressed-bytes"].as_u64())
            };
            if let Some(want) = expected.filter(|w| *w != size) {
                return Err(err(format!("{}: the track says {want} bytes, the file has {size} (a partial download, or another version of the corpus)", found.display())));
            }
        }
    }
    Ok(missing)
}

/// A corpus file esrally downloaded, linked into runner's data folder of the track (a hard
/// link, else a symbolic one: nothing is copied or downloaded again), with its unpacked file
/// if esrally kept it too.
fn link_rallys_corpus(kept: &Path, data_dir: &Path, source: &str) -> Option<PathBuf> {
    let target = crate::files::resolve_inside(data_dir, source)?;
    std::fs::create_dir_all(target.parent()?).ok()?;
    let link = |from: &Path, to: &Path| {
        if !to.exists() {
            let _ = std::fs::remove_file(to);
            if std::fs::hard_link(from, to).is_err() {
                let _ = std::os::unix::fs::symlink(from, to);
            }
        }
    };
    link(kept, &target);
    let unpacked = python::unpacked_name(source);
    if let (Some(kept_dir), Some(our)) = (kept.parent(), target.parent()) {
        let kept_plain = kept_dir.join(&unpacked);
        if unpacked != source && kept_plain.is_file() {
            link(&kept_plain, &our.join(&unpacked));
        }
    }
    target.is_file().then_some(target)
}

/// Every variable any template of the track refers to: `track.json` and each `.json` file
/// below it (parts are often included through globs, so all are counted).
fn referenced_names(dir: &Path, source: &str) -> BTreeSet<String> {
    let env = Environment::new();
    let mut names = BTreeSet::new();
    let mut add = |text: &str| {
        if let Ok(t) = env.template_from_str(text) {
            names.extend(t.undeclared_variables(true));
        }
    };
    add(source);
    for f in files_below(dir)
        .iter()
        .filter(|f| f.ends_with(".json") && *f != "track.json")
    {
        if let Ok(text) = crate::files::read_text(&dir.join(f)) {
            add(&text);
        }
    }
    names
}

/// Paths of the files below `dir`, relative, with `/` separators; bounded in count and depth.
fn files_below(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![(dir.to_path_buf(), String::new(), 0)];
    while let Some((path, rel, depth)) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&path) else {
            continue;
        };
        for e in entries.flatten() {
            if out.len() >= MAX_FILES {
                return out;
            }
            let name = e.file_name().to_string_lossy().into_owned();
            let child_rel = if rel.is_empty() {
                name
            } else {
                format!("{rel}/{name}")
            };
            match e.file_type() {
                Ok(t) if t.is_dir() && depth < 8 => stack.push((e.path(), child_rel, depth + 1)),
                Ok(t) if t.is_file() => out.push(child_rel),
                _ => {}
            }
        }
    }
    out
}

/// Shell-style matching of a relative path: `*` and `?` within one segment, `**` any segments.
fn glob_match(pattern: &str, path: &str) -> bool {
    fn segments(p: &[&str], s: &[&str]) -> bool {
        match (p.first(), s.first()) {
            (None, None) => true,
            (Some(&"**"), _) => segments(&p[1..], s) || (!s.is_empty() && segments(p, &s[1..])),
            (Some(pp), Some(ss)) => {
                segment(pp.as_bytes(), ss.as_bytes()) && segments(&p[1..], &s[1..])
            }
            _ => false,
        }
    }
    fn segment(p: &[u8], s: &[u8]) -> bool {
        match (p.first(), s.first()) {
            (None, None) => true,
            (Some(b'*'), _) => segment(&p[1..], s) || (!s.is_empty() && segment(p, &s[1..])),
            (Some(b'?'), Some(_)) => segment(&p[1..], &s[1..]),
            (Some(a), Some(b)) if a == b => segment(&p[1..], &s[1..]),
            _ => false,
        }
    }
    let p: Vec<&str> = pattern.trim_start_matches("./").split('/').collect();
    let s: Vec<&str> = path.split('/').collect();
    segments(&p, &s)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn track(files: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for (name, text) in files {
            let p = dir.path().join(name);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        }
        dir
    }

    const TRACK: &str = r#"{% import "rally.helpers" as rally with context %}
{
  "version": 2,
  "operations": [{{ rally.collect(parts="operations/*.json") }}],
  "bulk": {"bulk-size": {{ bulk_size | default(5000) }} {{ rally.exists_set_param("ingest-percentage", ingest_percentage) }} {{ rally.exists_set_param("conflicts", conflicts, "random") }}},
  "age": {{ "01-01-2020" | days_ago("31-01-2020") }}
}"#;

    fn opts(
        params: Map<String, serde_json::Value>,
        ignore_unused: bool,
    ) -> crate::track::LoadOptions {
        crate::track::LoadOptions {
            params,
            ignore_unused_params: ignore_unused,
            ..Default::default()
        }
    }

    #[test]
    fn collect_exists_set_param_default_and_days_ago() {
        let dir = track(&[
            ("track.json", TRACK),
            (
                "operations/b.json",
                r#"{"name": "b", "clients": {{ clients | default(2) }}}"#,
            ),
            ("operations/a.json", r#"{"name": "a"}"#),
        ]);
        let file = dir.path().join("track.json");
        let text = render(&file, &opts(Map::new(), false)).unwrap();
        let v: serde_json::Value = serde_json::from_str(&text).expect(&text);
        assert_eq!(
            v["operations"],
            serde_json::json!([{"name": "a"}, {"name": "b", "clients": 2}]),
            "sorted, comma-joined, params visible in parts"
        );
        assert_eq!(
            v["bulk"],
            serde_json::json!({"bulk-size": 5000, "conflicts": "random"})
        );
        assert_eq!(v["age"], 30);
        let params: Map<String, serde_json::Value> =
            serde_json::from_str(r#"{"bulk_size": 100, "ingest_percentage": 50, "clients": 8}"#)
                .unwrap();
        let v: serde_json::Value =
            serde_json::from_str(&render(&file, &opts(params.clone(), false)).unwrap()).unwrap();
        assert_eq!(
            v["bulk"],
            serde_json::json!({"bulk-size": 100, "ingest-percentage": 50, "conflicts": "random"})
        );
        assert_eq!(v["operations"][1]["clients"], 8);
    }

    #[test]
    fn distribution_version_is_what_osb_workloads_compare() {
        let dir = track(&[(
            "track.json",
            "{% if distribution_version is not defined %}{% set distribution_version = \"3.3.0\" %}{% endif %}{\"v\": \"{{ distribution_version }}\", \"old\": {{ distribution_version | version_between(\"1.0.0\", \"2.99.0\") | lower }}}",
        )]);
        let file = dir.path().join("track.json");
        let v: serde_json::Value =
            serde_json::from_str(&render(&file, &opts(Map::new(), false)).unwrap()).unwrap();
        assert_eq!(v, serde_json::json!({"v": "3.3.0", "old": false}));
        let mut o = opts(Map::new(), false);
        o.distribution_version = Some("2.11.0".into());
        let v: serde_json::Value = serde_json::from_str(&render(&file, &o).unwrap()).unwrap();
        assert_eq!(v, serde_json::json!({"v": "2.11.0", "old": true}));
    }

    #[test]
    fn unused_parameters_are_refused_with_the_closest_used_one() {
        let dir = track(&[
            ("track.json", TRACK),
            ("operations/a.json", "{\"c\": {{ clients | default(1) }}}"),
        ]);
        let file = dir.path().join("track.json");
        let params: Map<String, serde_json::Value> =
            serde_json::from_str(r#"{"bulk_sise": 100}"#).unwrap();
        let e = render(&file, &opts(params.clone(), false)).unwrap_err();
        assert_eq!(e.kind, TrackErrorKind::Params);
        assert!(
            e.message.contains("did you mean `bulk_size`")
                && e.message.contains("--ignore-unused-track-params"),
            "{}",
            e.message
        );
        render(&file, &opts(params.clone(), true)).unwrap();
    }

    #[test]
    fn globs_match_within_and_across_segments() {
        assert!(glob_match("operations/*.json", "operations/default.json"));
        assert!(!glob_match(
            "operations/*.json",
            "operations/x/default.json"
        ));
        assert!(glob_match("**/*.json", "challenges/x/default.json"));
        assert!(glob_match(
            "challenges/d?fault.json",
            "challenges/default.json"
        ));
        assert!(!glob_match("*.json", "track.yaml"));
    }
}
