//! Rally's corpora as ours: each file with its `-1k` variant under test mode, downloaded ones where they were kept.

use super::*;

pub(super) fn corpora(c: &mut Ctx, top: &Map<String, Value>) -> Result<Vec<Value>, TrackError> {
    let mut out = Vec::new();
    for (i, corpus) in top
        .get("corpora")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        let path = format!("/corpora/{i}");
        let name = corpus
            .get("name")
            .and_then(Value::as_str)
            .ok_or_else(|| c.err(&path, "a corpus needs a name"))?;
        let mut docs = Vec::new();
        for (j, d) in corpus
            .get("documents")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .enumerate()
        {
            let dpath = format!("{path}/documents/{j}");
            let source = d
                .get("source-file")
                .and_then(Value::as_str)
                .ok_or_else(|| c.err(&dpath, "documents need a `source-file`"))?;
            let mut count = d.get("document-count").and_then(Value::as_u64);
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
            // As Rally: a data stream (the documents' or the corpus's) wins over an index.
            if let Some(t) = d
                .get("target-data-stream")
                .or_else(|| corpus.get("target-data-stream"))
            {
                o.insert("target-data-stream".into(), t.clone());
            } else if let Some(t) = d.get("target-index").or_else(|| corpus.get("target-index")) {
                o.insert("target-index".into(), t.clone());
            }
            if d.get("includes-action-and-meta-data")
                .and_then(Value::as_bool)
                == Some(true)
            {
                o.insert("includes-action-and-meta-data".into(), json!(true));
            }
            if d.get("compressed-bytes").is_some() || d.get("uncompressed-bytes").is_some() {
                c.notes.push(format!("{dpath}: compressed-bytes/uncompressed-bytes are not checked; document-count is"));
            }
            docs.push(Value::Object(o));
        }
        out.push(json!({"name": name, "documents": docs}));
    }
    Ok(out)
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
