//! `_cat/indices`: the table Elasticsearch prints for people (columns aligned, `v` for the
//! header, `h` to choose columns, `s` to sort, `bytes` for the size unit), or JSON with
//! `format=json`.

use crate::cluster::Engine;
use crate::rest::{param, RestResponse};
use serde_json::{Map, Value};

/// The columns, in Elasticsearch's order; those shown when `h` names none come first.
const COLUMNS: [&str; 13] = [
    "health",
    "status",
    "index",
    "uuid",
    "pri",
    "rep",
    "docs.count",
    "docs.deleted",
    "store.size",
    "pri.store.size",
    "dataset.size",
    "creation.date",
    "creation.date.string",
];

/// How many columns show when `h` names none.
const DEFAULT_COLUMNS: usize = 11;

/// Elasticsearch's short names of the columns.
const ALIASES: [(&str, &str); 14] = [
    ("h", "health"),
    ("s", "status"),
    ("i", "index"),
    ("idx", "index"),
    ("id", "uuid"),
    ("p", "pri"),
    ("shards.primary", "pri"),
    ("r", "rep"),
    ("shards.replica", "rep"),
    ("dc", "docs.count"),
    ("dd", "docs.deleted"),
    ("ss", "store.size"),
    ("cd", "creation.date"),
    ("cds", "creation.date.string"),
];

fn column_at(name: &str) -> Option<usize> {
    let name = ALIASES
        .iter()
        .find(|(a, _)| *a == name)
        .map_or(name, |(_, c)| c);
    COLUMNS.iter().position(|k| *k == name)
}

/// A size as `_cat` prints it: in the unit asked (`b`, `kb`, `mb`, `gb`), else Elasticsearch's
/// human form (`12.3kb`).
fn size(bytes: u64, unit: Option<&str>) -> Result<String, String> {
    let div = |d: u64| (bytes / d).to_string();
    Ok(match unit {
        Some("b") => bytes.to_string(),
        Some("kb") => div(1 << 10),
        Some("mb") => div(1 << 20),
        Some("gb") => div(1 << 30),
        Some(other) => return Err(format!("bytes unit [{other}] is not one of b, kb, mb, gb")),
        None => {
            let units = [("gb", 1u64 << 30), ("mb", 1 << 20), ("kb", 1 << 10)];
            match units.iter().find(|(_, d)| bytes >= *d) {
                Some((u, d)) => format!("{:.1}{u}", bytes as f64 / *d as f64),
                None => format!("{bytes}b"),
            }
        }
    })
}

/// The columns `h` names, by position (all without it).
fn columns(h: Option<&str>) -> Result<Vec<usize>, String> {
    let Some(h) = h else {
        return Ok((0..DEFAULT_COLUMNS).collect());
    };
    h.split(',')
        .map(|c| {
            column_at(c).ok_or_else(|| {
                format!(
                    "_cat/indices column [{c}] is not one of {}",
                    COLUMNS.join(", ")
                )
            })
        })
        .collect()
}

/// Rows sorted by `column[:desc]`, numbers as numbers.
fn sort_rows(rows: &mut [Vec<String>], sort: &str) -> Result<(), String> {
    // Several keys, comma-separated, each `column` or `column:desc`.
    let keys = sort
        .split(',')
        .map(|key| {
            let (column, desc) = match key.split_once(':') {
                Some((c, order)) => (c, order == "desc"),
                None => (key, false),
            };
            column_at(column)
                .map(|at| (at, desc))
                .ok_or_else(|| format!("_cat/indices cannot sort by [{column}]"))
        })
        .collect::<Result<Vec<_>, String>>()?;
    rows.sort_by(|a, b| {
        for &(at, desc) in &keys {
            let (x, y) = (&a[at], &b[at]);
            let order = match (x.parse::<u64>(), y.parse::<u64>()) {
                (Ok(x), Ok(y)) => x.cmp(&y),
                _ => x.cmp(y),
            };
            let order = if desc { order.reverse() } else { order };
            if order.is_ne() {
                return order;
            }
        }
        std::cmp::Ordering::Equal
    });
    Ok(())
}

/// The table as text, columns padded to their widest cell.
fn aligned(rows: &[Vec<String>], chosen: &[usize], header: bool) -> String {
    let mut table: Vec<Vec<&str>> = Vec::new();
    if header {
        table.push(chosen.iter().map(|&c| COLUMNS[c]).collect());
    }
    table.extend(
        rows.iter()
            .map(|r| chosen.iter().map(|&c| r[c].as_str()).collect()),
    );
    let widths: Vec<usize> = (0..chosen.len())
        .map(|i| table.iter().map(|r| r[i].len()).max().unwrap_or(0))
        .collect();
    let mut out = String::new();
    for row in &table {
        let cells: Vec<String> = row
            .iter()
            .zip(&widths)
            .map(|(c, w)| format!("{c:<w$}"))
            .collect();
        out.push_str(cells.join(" ").trim_end());
        out.push('\n');
    }
    out
}

impl Engine {
    pub(crate) fn cat_indices(&self, names: Option<&str>, query: &str) -> RestResponse {
        let bad = |m: String| RestResponse::error(400, "illegal_argument_exception", &m);
        let indices = match self.resolve(names) {
            Ok(i) => i,
            Err(r) => return r,
        };
        let unit = param(query, "bytes");
        // One node holds no replica: an index with replicas is yellow, as there.
        let health = param(query, "health");
        if let Some(h) = health
            .as_deref()
            .filter(|h| !matches!(*h, "green" | "yellow" | "red"))
        {
            return bad(format!("unknown health status [{h}]"));
        }
        let mut rows: Vec<Vec<String>> = Vec::with_capacity(indices.len());
        for index in &indices {
            let status = index
                .settings
                .read()
                .unwrap_or_else(|p| p.into_inner())
                .health();
            if health.as_deref().is_some_and(|h| h != status) {
                continue;
            }
            let s = index.stats();
            let store = match size(s.bytes, unit.as_deref()) {
                Ok(v) => v,
                Err(m) => return bad(m),
            };
            let settings = index
                .settings
                .read()
                .unwrap_or_else(|p| p.into_inner())
                .clone();
            let created = chrono::DateTime::from_timestamp_millis(index.created_ms as i64)
                .map(|d| d.format("%Y-%m-%dT%H:%M:%S%.3fZ").to_string())
                .unwrap_or_default();
            // A closed index shows no counts, as Elasticsearch's has no stats to give.
            let closed = index.is_closed();
            let counted = |v: String| if closed { String::new() } else { v };
            rows.push(vec![
                status.into(),
                if closed { "close" } else { "open" }.into(),
                index.name.clone(),
                index.uuid.clone(),
                settings.text("index.number_of_shards"),
                settings.text("index.number_of_replicas"),
                counted(s.docs.to_string()),
                counted(s.deleted.to_string()),
                counted(store.clone()),
                counted(store.clone()),
                counted(store),
                index.created_ms.to_string(),
                created,
            ]);
        }
        let chosen = match columns(param(query, "h").as_deref()) {
            Ok(c) => c,
            Err(m) => return bad(m),
        };
        if let Some(sort) = param(query, "s") {
            if let Err(m) = sort_rows(&mut rows, &sort) {
                return bad(m);
            }
        }
        if param(query, "format").as_deref() == Some("json") {
            let objects: Vec<Value> = rows
                .iter()
                .map(|r| {
                    let o: Map<String, Value> = chosen
                        .iter()
                        .map(|&c| (COLUMNS[c].to_string(), Value::String(r[c].clone())))
                        .collect();
                    Value::Object(o)
                })
                .collect();
            return RestResponse::json(200, &Value::Array(objects));
        }
        let header = param(query, "v").is_some_and(|v| v != "false");
        let out = aligned(&rows, &chosen, header);
        RestResponse {
            status: 200,
            body: out.into_bytes(),
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::cluster::Engine;
    use crate::rest::tests::call;
    use crate::rest::RestRequest;

    #[test]
    fn indices_as_a_table_or_json() {
        let b = Engine::new();
        // `a` keeps Elasticsearch's default of one replica, which one node cannot hold.
        assert_eq!(
            call(&b, "PUT", "/b", r#"{"settings":{"number_of_replicas":0}}"#).0,
            200
        );
        assert_eq!(call(&b, "PUT", "/a", "{}").0, 200);
        let text = |query: &str| {
            let r = b.rest(&RestRequest {
                method: "GET",
                path: "/_cat/indices",
                query,
                body: b"",
            });
            (r.status, String::from_utf8(r.body).unwrap())
        };
        let (s, t) = text("v&s=index&h=index,docs.count");
        assert_eq!(s, 200);
        assert_eq!(t, "index docs.count\na     0\nb     0\n");
        let (_, r) = call(
            &b,
            "GET",
            "/_cat/indices?format=json&h=index,health&s=index:desc",
            "",
        );
        assert_eq!(
            r,
            serde_json::json!([{"index": "b", "health": "green"}, {"index": "a", "health": "yellow"}])
        );
        let (_, r) = call(
            &b,
            "GET",
            "/_cat/indices?format=json&h=index&health=yellow",
            "",
        );
        assert_eq!(r, serde_json::json!([{"index": "a"}]));
        assert_eq!(text("h=nope").0, 400);
        assert_eq!(text("bytes=tb").0, 400);
    }
}
