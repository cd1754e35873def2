//! A Rally track's track.py (an OSB workload's workload.py) loaded for the conversion: the
//! rendered track and what the Python model of it needs are handed to a worker, which imports
//! the track and runs its `register`.

use super::convert::python::PythonConv;
use crate::python::{probe, Dialect, TrackPython};
use crate::track::{TrackError, TrackErrorKind};
use serde_json::{json, Map, Value};
use std::path::Path;

/// The Python of the track in `dir`, loaded and registered; None when it has none.
pub(super) fn load(
    dir: &Path,
    name: &str,
    rally: &Value,
    opts: &crate::track::LoadOptions,
    data_dir: Option<&Path>,
    render_body: &dyn Fn(&str) -> Result<Value, TrackError>,
) -> Result<Option<PythonConv>, TrackError> {
    let dialect =
        if dir.join("track.py").is_file() || dir.join("track").join("__init__.py").is_file() {
            Dialect::Rally
        } else if dir.join("workload.py").is_file() {
            Dialect::Osb
        } else {
            return Ok(None);
        };
    let py_file = dir.join(format!("{}.py", dialect.entry()));
    let interpreter = crate::python::interpreter(opts.python.as_deref());
    let spec = json!({
        "name": name,
        "spec": rally,
        "challenge": opts.challenge,
        "params": opts.params,
        "documents": documents(rally, dir, data_dir, opts.test_mode),
        "bodies": bodies(rally, render_body),
        "test_mode": opts.test_mode,
    });
    let failed = |e: crate::python::PythonError| {
        TrackError::new(TrackErrorKind::Python, &py_file, e.to_string())
    };
    let (mut session, python) = probe::load(
        &interpreter,
        dir,
        dialect,
        spec,
        opts.data_root.as_deref(),
        super::drawn_operation,
    )
    .map_err(failed)?;
    if !python.registry.track_processors.is_empty() {
        // Rally's DefaultTrackPreparator decompresses the corpora that processors read; runner
        // reads archives as they are, so it unpacks them for the track's Python here.
        unpack_corpora(rally, data_dir, opts.test_mode)?;
        session.prepare(opts.data_root.as_deref()).map_err(failed)?;
    }
    Ok(Some(PythonConv {
        python,
        session,
        extents: Default::default(),
        client_checked: false,
        rallys_own: Default::default(),
    }))
}

/// Each index's and template's body, rendered, by name, as Rally's model holds it (where
/// esrally is not installed, the stand-in model reads them from here); a template's
/// `template-path` followed. One that does not render is left out: the conversion names it.
fn bodies(
    rally: &Value,
    render_body: &dyn Fn(&str) -> Result<Value, TrackError>,
) -> Map<String, Value> {
    let mut out = Map::new();
    for (key, file_key) in [
        ("indices", "body"),
        ("templates", "template"),
        ("composable-templates", "template"),
        ("component-templates", "template"),
    ] {
        for item in rally[key].as_array().into_iter().flatten() {
            let Some(name) = item["name"].as_str() else {
                continue;
            };
            let body = match &item[file_key] {
                Value::String(file) => match render_body(file) {
                    Ok(b) => b,
                    Err(_) => continue,
                },
                b @ Value::Object(_) => b.clone(),
                _ => continue,
            };
            let at = item["template-path"].as_str().unwrap_or("");
            let body = at
                .split('.')
                .filter(|f| !f.is_empty())
                .try_fold(body, |b, field| b.get(field).cloned());
            if let Some(body) = body {
                out.insert(name.to_string(), body);
            }
        }
    }
    out
}

/// Each corpus file the track names, by the names Rally's model knows it by (the archive and
/// the file after decompression), where it is on this machine. In test mode each is its `-1k`
/// variant, as Rally's test mode reads those.
fn documents(
    rally: &Value,
    dir: &Path,
    data_dir: Option<&Path>,
    test_mode: bool,
) -> Map<String, Value> {
    let mut out = Map::new();
    // Absolute: the track's Python runs in another directory, and Rally's paths are absolute.
    let dir = std::path::absolute(dir).unwrap_or_else(|_| dir.to_path_buf());
    let data_dir = data_dir.map(|d| std::path::absolute(d).unwrap_or_else(|_| d.to_path_buf()));
    let data_dir = data_dir.as_deref();
    for (source, used) in corpus_files(rally, test_mode) {
        let archive = data_dir
            .map(|d| d.join(&used))
            .filter(|p| p.is_file())
            .unwrap_or_else(|| dir.join(&used));
        out.insert(source.clone(), json!(archive));
        // Where the documents are once unpacked (see `unpack_corpora`).
        let plain = match (data_dir, dir.join(unpacked_name(&used))) {
            (_, local) if local.is_file() => local,
            (Some(d), _) => d.join(unpacked_name(&used)),
            (None, local) => local,
        };
        out.insert(unpacked_name(&source), json!(plain));
    }
    out
}

/// Each corpus file the track names, and the file a race reads for it (test mode: `-1k`).
fn corpus_files(rally: &Value, test_mode: bool) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for corpus in rally["corpora"].as_array().into_iter().flatten() {
        for d in corpus["documents"].as_array().into_iter().flatten() {
            if let Some(source) = d["source-file"]
                .as_str()
                .filter(|_| super::convert::is_bulk(corpus, d))
            {
                let used = if test_mode {
                    super::test_mode_file(source)
                } else {
                    source.to_string()
                };
                out.push((source.to_string(), used));
            }
        }
    }
    out
}

/// Each compressed corpus file of the track, unpacked beside it in the data directory when
/// not there yet (written to a `.part` file, renamed when whole).
fn unpack_corpora(
    rally: &Value,
    data_dir: Option<&Path>,
    test_mode: bool,
) -> Result<(), TrackError> {
    let Some(data_dir) = data_dir else {
        return Ok(());
    };
    for (_, used) in corpus_files(rally, test_mode) {
        let archive = data_dir.join(&used);
        let plain = data_dir.join(unpacked_name(&used));
        if archive == plain || plain.is_file() || !archive.is_file() {
            continue;
        }
        crate::corpus::unpack(&archive, &plain).map_err(|e| {
            TrackError::new(
                TrackErrorKind::Corpus,
                &archive,
                format!("cannot unpack it for the track's Python: {e}"),
            )
        })?;
    }
    Ok(())
}

pub(crate) fn unpacked_name(name: &str) -> String {
    [".bz2", ".gz", ".zst"]
        .iter()
        .find_map(|ext| name.strip_suffix(ext))
        .unwrap_or(name)
        .to_string()
}

/// The note a race shows first: which Python runs the track, and what it registered.
pub(super) fn summary(py: &TrackPython) -> String {
    let r = &py.registry;
    let count = |what: &str, names: &[String]| match names.len() {
        0 => None,
        n => Some(format!("{n} {what}{}", if n == 1 { "" } else { "s" })),
    };
    let parts: Vec<String> = [
        count("param source", &r.param_sources),
        count("runner", &r.runners),
        count("scheduler", &r.schedulers),
        count("track processor", &r.track_processors),
    ]
    .into_iter()
    .flatten()
    .collect();
    format!(
        "{}.py runs on Python {} ({}), with {}: {}",
        py.dialect.entry(),
        py.python_version,
        py.interpreter.display(),
        match (&py.esrally, py.dialect) {
            (Some(v), crate::python::Dialect::Rally) => format!("esrally {v}"),
            (Some(v), crate::python::Dialect::Osb) => format!("OpenSearch Benchmark {v}"),
            (None, crate::python::Dialect::Rally) => "runner's stand-in for esrally".into(),
            (None, crate::python::Dialect::Osb) => {
                "runner's stand-in for OpenSearch Benchmark".into()
            }
        },
        if parts.is_empty() {
            "it registers nothing".into()
        } else {
            format!("it registers {}", parts.join(", "))
        }
    )
}
