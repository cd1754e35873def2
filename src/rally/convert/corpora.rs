//! Rally's corpora as ours: each file with its `-1k` variant under test mode, downloaded ones where they were kept.

use super::*;

/// Rally's corpora (its loader's `_create_corpora`): each file's target is its own, else its
/// corpus's, else the track's only index or only data stream; files holding their own action
/// lines have none. What Rally refuses is refused with its words.
pub(super) fn corpora(c: &mut Ctx, top: &Map<String, Value>) -> Result<Vec<Value>, TrackError> {
    let names = |key: &str| -> Vec<String> {
        top.get(key)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|i| i.get("name").and_then(Value::as_str).map(str::to_string))
            .collect()
    };
    let (indices, streams) = (names("indices"), names("data-streams"));
    let corpora: Vec<&Value> = top
        .get("corpora")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .collect();
    if !indices.is_empty() && !streams.is_empty() && !corpora.is_empty() {
        return Err(c.err("/", "indices and data-streams cannot both be specified"));
    }
    let mut out = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for (i, corpus) in corpora.into_iter().enumerate() {
        let path = format!("/corpora/{i}");
        let name = corpus
            .get("name")
            .and_then(Value::as_str)
            .ok_or_else(|| c.err(&path, "a corpus needs a name"))?;
        if !seen.insert(name) {
            return Err(c.err(&path, format!("Duplicate document corpus name [{name}].")));
        }
        if corpus.get("target-type").is_some() {
            return Err(c.err(&format!("{path}/target-type"), format!("Track corpus '{name}' specifies 'target-type', which is no longer supported by Rally (document types were removed in Elasticsearch 7.0). Remove the 'target-type' key.")));
        }
        // Rally reads a corpus's default index only where the track has indices, and its
        // default data stream only where it has data streams.
        let default_of = |key: &str, declared: &[String]| -> Option<String> {
            match declared {
                [] => None,
                [only] => Some(
                    corpus
                        .get(key)
                        .and_then(Value::as_str)
                        .unwrap_or(only)
                        .to_string(),
                ),
                _ => corpus.get(key).and_then(Value::as_str).map(str::to_string),
            }
        };
        let (index_default, stream_default) = (
            default_of("target-index", &indices),
            default_of("target-data-stream", &streams),
        );
        let defaults = Targets {
            index: index_default.as_deref(),
            stream: stream_default.as_deref(),
            actions: corpus
                .get("includes-action-and-meta-data")
                .and_then(Value::as_bool)
                .unwrap_or(false),
        };
        let docs = documents(
            c,
            corpus,
            &path,
            &defaults,
            !indices.is_empty(),
            !streams.is_empty(),
        )?;
        if docs.is_empty() && c.osb {
            continue;
        }
        out.push(json!({"name": name, "documents": docs}));
    }
    Ok(out)
}

/// A corpus's documents entries as ours: NDJSON ones converted, OSB's vector data sets left
/// out (named), any other format refused as the loaders refuse it.
fn documents(
    c: &mut Ctx,
    corpus: &Value,
    path: &str,
    defaults: &Targets,
    has_indices: bool,
    has_streams: bool,
) -> Result<Vec<Value>, TrackError> {
    // The loaders' corpus-level default of each file's `source-format`.
    let corpus_format = corpus
        .get("source-format")
        .and_then(Value::as_str)
        .unwrap_or("bulk");
    let mut docs = Vec::new();
    for (j, d) in corpus
        .get("documents")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        let dpath = format!("{path}/documents/{j}");
        let format = d
            .get("source-format")
            .and_then(Value::as_str)
            .unwrap_or(corpus_format);
        match format {
            "bulk" => {}
            // OSB's vector data sets, read by its bulk-vector-data-set operation (which
            // runner does not run): left out, and said.
            "hdf5" | "big-ann" if c.osb => {
                c.notes.push(format!("{dpath}: a `{format}` vector data set is left out: runner reads NDJSON corpora, and OSB's bulk-vector-data-set, which reads these, is not supported"));
                continue;
            }
            other => {
                return Err(c.err(
                    &format!("{dpath}/source-format"),
                    format!("Unknown source-format [{other}] in document corpus"),
                ))
            }
        }
        docs.push(document(c, d, &dpath, defaults, has_indices, has_streams)?);
    }
    Ok(docs)
}

/// Whether a corpus's documents entry is NDJSON to bulk (`source-format`, the entry's else
/// its corpus's, default `bulk`), rather than one of OSB's vector data sets.
pub fn is_bulk(corpus: &Value, d: &Value) -> bool {
    d.get("source-format")
        .or_else(|| corpus.get("source-format"))
        .and_then(Value::as_str)
        .is_none_or(|f| f == "bulk")
}

/// A corpus's defaults for its files.
struct Targets<'a> {
    index: Option<&'a str>,
    stream: Option<&'a str>,
    actions: bool,
}

/// One file of a corpus as ours: its name (`-1k` under test mode), count and target.
fn document(
    c: &mut Ctx,
    d: &Value,
    dpath: &str,
    defaults: &Targets,
    has_indices: bool,
    has_streams: bool,
) -> Result<Value, TrackError> {
    let source = d
        .get("source-file")
        .and_then(Value::as_str)
        .ok_or_else(|| c.err(dpath, "documents need a `source-file`"))?;
    if d.get("target-type").is_some() {
        return Err(c.err(&format!("{dpath}/target-type"), format!("Track document set '{source}' specifies 'target-type', which is no longer supported by Rally (document types were removed in Elasticsearch 7.0). Remove the 'target-type' key.")));
    }
    let name = source;
    let mut count = d.get("document-count").and_then(Value::as_u64);
    if count.is_none() {
        return Err(c.err(dpath, "Mandatory element 'document-count' is missing."));
    }
    // Rally's test mode reads `<name>-1k.<ext>`: the first 1,000 documents.
    let source = if c.test_mode {
        count = count.map(|n| n.min(1000));
        test_mode_file(source)
    } else {
        source.to_string()
    };
    let mut o = Map::new();
    o.insert("source-file".into(), json!(source));
    if let Some(n) = count {
        o.insert("document-count".into(), json!(n));
    }
    let actions = d
        .get("includes-action-and-meta-data")
        .and_then(Value::as_bool)
        .unwrap_or(defaults.actions);
    if actions {
        o.insert("includes-action-and-meta-data".into(), json!(true));
    } else {
        let (key, target) = target(c, d, dpath, defaults, (has_indices, has_streams), name)?;
        o.insert(key.into(), json!(target));
    }
    if d.get("compressed-bytes").is_some() || d.get("uncompressed-bytes").is_some() {
        c.notes.push(format!(
            "{dpath}: compressed-bytes/uncompressed-bytes are not checked; document-count is"
        ));
    }
    Ok(Value::Object(o))
}

/// A file's target, as Rally's loader finds it: its own, else its corpus's default; refused in
/// Rally's words where it finds none or one of a kind the track does not use.
fn target<'a>(
    c: &Ctx,
    d: &'a Value,
    dpath: &str,
    defaults: &Targets<'a>,
    (has_indices, has_streams): (bool, bool),
    name: &str,
) -> Result<(&'static str, &'a str), TrackError> {
    let stream = d
        .get("target-data-stream")
        .and_then(Value::as_str)
        .or(defaults.stream);
    let index = d
        .get("target-index")
        .and_then(Value::as_str)
        .or(defaults.index);
    match (stream, index) {
        (Some(_), _) if has_indices => Err(c.err(
            dpath,
            "target-data-stream cannot be used when using indices",
        )),
        (_, Some(_)) if has_streams => {
            Err(c.err(dpath, "target-index cannot be used when using data-streams"))
        }
        (Some(s), _) => Ok(("target-data-stream", s)),
        (None, Some(i)) => Ok(("target-index", i)),
        // Rally's words: a declared kind with no default makes its key mandatory; with
        // neither declared, the file still needs a target.
        (None, None) if has_indices || has_streams => {
            let key = if has_indices {
                "target-index"
            } else {
                "target-data-stream"
            };
            Err(c.err(
                dpath,
                format!("Mandatory element '{key}' is missing in '{name}'"),
            ))
        }
        (None, None) => Err(c.err(
            dpath,
            format!("a target-data-stream is required for {name}"),
        )),
    }
}

/// `name` split as Python's `os.path.splitext` does (the last dot of the file name, not a
/// leading one), except that `.tar.gz` and `.tar.bz2` stay whole, as in Rally's `io.splitext`.
pub(super) fn splitext(name: &str) -> (&str, &str) {
    for whole in [".tar.gz", ".tar.bz2"] {
        if let Some(stem) = name.strip_suffix(whole) {
            return (stem, &name[stem.len()..]);
        }
    }
    let base_start = name.rfind('/').map_or(0, |i| i + 1);
    let base = &name[base_start..];
    match base.rfind('.') {
        // A dot that only leads the name (`.hidden`, `..x`) is no extension.
        Some(i) if base[..i].chars().any(|c| c != '.') => {
            (&name[..base_start + i], &name[base_start + i..])
        }
        _ => (name, ""),
    }
}

/// The file Rally's test mode reads instead of `source`, as Rally names it: the `-1k` goes before
/// the document extension, inside any compression extension. `documents.json.bz2` →
/// `documents-1k.json.bz2`, `documents-181998.unparsed.json.bz2` →
/// `documents-181998.unparsed-1k.json.bz2`, `docs.json` → `docs-1k.json`.
pub fn test_mode_file(source: &str) -> String {
    const COMPRESSED: [&str; 8] = [
        ".bz2", ".gz", ".zst", ".zip", ".tgz", ".tar", ".tar.gz", ".tar.bz2",
    ];
    let (path, ext) = splitext(source);
    if COMPRESSED.contains(&ext) {
        let (path2, ext2) = splitext(path);
        format!("{path2}-1k{ext2}{ext}")
    } else {
        format!("{path}-1k{ext}")
    }
}
