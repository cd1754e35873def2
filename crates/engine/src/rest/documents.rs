//! Document APIs: `_doc` get, put and delete, `_create`, and `_bulk` (run by the engine's bulk
//! module, single-document writes too).

use crate::bulk::{Item, Preconditions, Verb, VersionType};
use crate::cluster::Engine;
use crate::index::{Written, PRIMARY_TERM};
use crate::rest::not_found;
use crate::rest::RestResponse;
use crate::search::source::SourceFilter;
use serde_json::json;
use serde_json::{Map, Value};
use std::borrow::Cow;
use std::fmt::Write as _;
use std::time::Instant;

/// What a get (or one document of an mget) asks besides the id.
#[derive(Default)]
pub(crate) struct GetOptions {
    pub source: SourceFilter,
    /// `stored_fields`: fields mapped with `store: true` are shown under `fields`.
    pub stored_fields: Vec<String>,
    /// `version`: the get fails with a conflict unless the document has this version.
    pub version: Option<u64>,
}

impl GetOptions {
    /// A get's URL parameters.
    pub(crate) fn from_query(query: &str) -> Result<GetOptions, RestResponse> {
        let bad = |m: String| RestResponse::error(400, "illegal_argument_exception", &m);
        let source = crate::rest::search_url::url_source_filter(query).map_err(bad)?;
        let stored_fields = crate::rest::param(query, "stored_fields")
            .map(|s| {
                s.split(',')
                    .filter(|f| !f.is_empty())
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default();
        let version = match crate::rest::param(query, "version") {
            Some(v) => Some(
                v.parse()
                    .map_err(|_| bad(format!("[version] is not a number: [{v}]")))?,
            ),
            None => None,
        };
        if let Some(t) = crate::rest::param(query, "version_type") {
            VersionType::parse(&t).map_err(bad)?;
        }
        Ok(GetOptions {
            source,
            stored_fields,
            version,
        })
    }
}

impl Engine {
    pub(crate) fn get_doc(&self, name: &str, id: &str, query: &str) -> RestResponse {
        match GetOptions::from_query(query) {
            Ok(options) => self.fetch_doc(name, id, &options),
            Err(r) => r,
        }
    }

    /// A realtime get, as Elasticsearch's: documents written since the last refresh are found.
    pub(crate) fn fetch_doc(&self, name: &str, id: &str, options: &GetOptions) -> RestResponse {
        let Some(index) = self.index(name) else {
            return not_found(name);
        };
        let (source, meta) = match index.current(id) {
            Ok(Some(found)) => found,
            Ok(None) => {
                return RestResponse::json(
                    404,
                    &json!({ "_index": index.name, "_id": id, "found": false }),
                )
            }
            Err(e) => return RestResponse::from_error(&e),
        };
        if let Some(wanted) = options.version.filter(|v| *v != meta.version) {
            return RestResponse::error(
                409,
                "version_conflict_engine_exception",
                &format!("[{id}]: version conflict, current version [{}] is different than the one provided [{wanted}]", meta.version),
            );
        }
        let mut out = format!(
            r#"{{"_index":{},"_id":{},"_version":{},"_seq_no":{},"_primary_term":{PRIMARY_TERM},"found":true"#,
            json!(index.name),
            json!(id),
            meta.version,
            meta.seq_no,
        )
        .into_bytes();
        let fields = stored_values(&index.mappings, &options.stored_fields, &source);
        if !fields.is_empty() {
            out.extend_from_slice(format!(r#","fields":{}"#, Value::Object(fields)).as_bytes());
        }
        if let Some(shown) = options.source.apply(source.into_bytes()) {
            out.extend_from_slice(br#","_source":"#);
            out.extend_from_slice(&shown);
        }
        out.push(b'}');
        RestResponse {
            status: 200,
            body: out,
        }
    }

    /// `GET <index>/_source/<id>`: the source alone.
    pub(crate) fn get_source(&self, name: &str, id: &str, query: &str) -> RestResponse {
        let options = match GetOptions::from_query(query) {
            Ok(o) => o,
            Err(r) => return r,
        };
        let Some(index) = self.index(name) else {
            return not_found(name);
        };
        match index.current_source(id) {
            Ok(Some(source)) => RestResponse {
                status: 200,
                body: options
                    .source
                    .apply(source.into_bytes())
                    .unwrap_or_else(|| b"{}".to_vec()),
            },
            Ok(None) => RestResponse::error(
                404,
                "resource_not_found_exception",
                &format!("Document not found [{name}]/[{id}]"),
            ),
            Err(e) => RestResponse::from_error(&e),
        }
    }

    /// One document written (`_doc`, `_create`, `_update`) or deleted, as a bulk item of its
    /// own: the same pipelines, write blocks, aliases, auto-created indices, versions,
    /// results and conflicts.
    pub(crate) fn write_doc(
        &self,
        name: &str,
        id: Option<&str>,
        verb: Verb,
        query: &str,
        body: &[u8],
    ) -> RestResponse {
        let Ok(source) = std::str::from_utf8(body) else {
            return RestResponse::error(400, "parse_exception", "the document is not UTF-8");
        };
        let verb = match (verb, crate::rest::param(query, "op_type").as_deref()) {
            (Verb::Index, Some("create")) => Verb::Create,
            (v, None | Some("index")) | (v @ Verb::Create, Some("create")) => v,
            (_, Some(other)) => {
                return RestResponse::error(
                    400,
                    "illegal_argument_exception",
                    &format!("opType must be 'create' or 'index', found: [{other}]"),
                )
            }
        };
        let pre = match preconditions(query) {
            Ok(p) => p,
            Err(r) => return r,
        };
        let item = Item {
            verb,
            index: Some(Cow::Borrowed(name)),
            id: id.map(Cow::Borrowed),
            body: (verb != Verb::Delete).then(|| source.trim()),
            pipeline: None,
            pre,
            require_alias: Some(
                crate::rest::param(query, "require_alias").as_deref() == Some("true"),
            ),
        };
        let pipeline = crate::rest::param(query, "pipeline");
        let mut answer = None;
        let run = self.state.bulk(
            None,
            pipeline.as_deref(),
            std::iter::once(Ok(item)),
            |index, _, _, result| {
                answer = Some((index.to_string(), result));
            },
        );
        let (index, result) = match (run, answer) {
            (Ok(()), Some(a)) => a,
            (Err(m), _) => {
                return RestResponse::error(400, "illegal_argument_exception", &m.message)
            }
            (Ok(()), None) => {
                return RestResponse::error(500, "exception", "the write was not run")
            }
        };
        match result {
            Ok(written) => {
                if let Some(r) = self.refresh_if_asked(query, &index) {
                    return r;
                }
                let mut out = String::new();
                write_result(&mut out, &index, &written);
                out.insert(0, '{');
                out.push('}');
                RestResponse {
                    status: written.done.status(),
                    body: out.into_bytes(),
                }
            }
            Err(e) => RestResponse::error(e.status, e.kind, &e.reason),
        }
    }

    /// `?refresh` (`true`, `wait_for` or bare) makes the write searchable at once.
    fn refresh_if_asked(&self, query: &str, index: &str) -> Option<RestResponse> {
        match crate::rest::param(query, "refresh").as_deref() {
            Some("" | "true" | "wait_for") => match self.index(index).map(|i| i.refresh()) {
                Some(Err(e)) => Some(RestResponse::from_error(&e)),
                _ => None,
            },
            _ => None,
        }
    }

    /// `_bulk`: NDJSON action lines (index, create, update, delete), each but delete followed
    /// by its document. Items fail alone, as in Elasticsearch; the request fails only if it
    /// cannot be read. `?refresh` (true or wait_for) makes what it wrote searchable at once.
    pub(crate) fn bulk_request(
        &self,
        default_index: Option<&str>,
        query: &str,
        body: &[u8],
    ) -> RestResponse {
        let started = Instant::now();
        let Ok(text) = std::str::from_utf8(body) else {
            return RestResponse::error(400, "parse_exception", "the bulk body is not UTF-8");
        };
        let default = match default_index {
            Some(name) => match self.state.writable_index(name, crate::bulk::Verb::Index) {
                Ok(Some(i)) => Some(i),
                Ok(None) => return not_found(name),
                Err(e) => return RestResponse::error(e.status, e.kind, &e.reason),
            },
            None => None,
        };
        let mut items = String::with_capacity(64 * 1024);
        let mut errors = false;
        let mut written: std::collections::BTreeSet<String> = std::collections::BTreeSet::new();
        let require_alias = crate::rest::param(query, "require_alias").as_deref() == Some("true");
        let actions = crate::bulk::items(text).map(|item| {
            item.map(|mut i| {
                i.require_alias.get_or_insert(require_alias);
                i
            })
        });
        let run = self.state.bulk(default.as_ref(), crate::rest::param(query, "pipeline").as_deref(), actions, |index, verb, id, result| {
            if result.is_ok() && !written.contains(index) {
                written.insert(index.to_string());
            }
            if !items.is_empty() {
                items.push(',');
            }
            let verb = verb.as_str();
            match result {
                Ok(written) => {
                    let _ = write!(items, r#"{{"{verb}":{{"#);
                    write_result(&mut items, index, &written);
                    let _ = write!(items, r#","status":{}}}}}"#, written.done.status());
                }
                Err(e) => {
                    errors = true;
                    let _ = write!(
                        items,
                        r#"{{"{verb}":{{"_index":{},"_id":{},"status":{},"error":{{"type":"{}","reason":{}}}}}}}"#,
                        json!(index),
                        json!(id),
                        e.status,
                        e.kind,
                        json!(e.reason)
                    );
                }
            }
        });
        if let Err(m) = run {
            return RestResponse::error(
                400,
                "illegal_argument_exception",
                &format!("Malformed action/metadata line [{}], {}", m.line, m.message),
            );
        }
        for name in &written {
            if let Some(r) = self.refresh_if_asked(query, name) {
                return r;
            }
        }
        let mut out = format!(
            r#"{{"took":{},"errors":{errors},"items":["#,
            started.elapsed().as_millis()
        );
        out.push_str(&items);
        out.push_str("]}");
        RestResponse {
            status: 200,
            body: out.into_bytes(),
        }
    }
}

/// A write's result fields, as Elasticsearch shows them for `_doc` and for each bulk item.
fn write_result(out: &mut String, index: &str, w: &Written) {
    let _ = write!(
        out,
        r#""_index":{},"_id":{},"_version":{},"result":"{}","_shards":{{"total":1,"successful":1,"failed":0}},"_seq_no":{},"_primary_term":{PRIMARY_TERM}"#,
        json!(index),
        json!(w.id),
        w.meta.version,
        w.done.as_str(),
        w.meta.seq_no,
    );
}

/// `if_seq_no`, `if_primary_term`, `version` and `version_type` of a single-document write.
fn preconditions(query: &str) -> Result<Preconditions, RestResponse> {
    let number = |name: &str| -> Result<Option<u64>, RestResponse> {
        match crate::rest::param(query, name) {
            None => Ok(None),
            Some(v) => v.parse().map(Some).map_err(|_| {
                RestResponse::error(
                    400,
                    "illegal_argument_exception",
                    &format!("[{name}] must be a non-negative number, got [{v}]"),
                )
            }),
        }
    };
    let version_type = match crate::rest::param(query, "version_type") {
        Some(t) => VersionType::parse(&t)
            .map_err(|m| RestResponse::error(400, "illegal_argument_exception", &m))?,
        None => VersionType::Internal,
    };
    Ok(Preconditions {
        if_seq_no: number("if_seq_no")?,
        if_primary_term: number("if_primary_term")?,
        version: number("version")?,
        version_type,
    })
}

/// The `stored_fields` asked for that the mapping stores (`store: true`), with their values
/// from the source, as Elasticsearch returns stored fields.
fn stored_values(mappings: &Value, wanted: &[String], source: &str) -> Map<String, Value> {
    let mut out = Map::new();
    if wanted.is_empty() {
        return out;
    }
    let Ok(doc) = serde_json::from_str::<Value>(source) else {
        return out;
    };
    for field in wanted {
        let value = field.split('.').try_fold(&doc, |v, part| v.get(part));
        let stored = field
            .split('.')
            .try_fold(mappings, |m, part| m.get("properties")?.get(part))
            .and_then(|m| m.get("store"))
            == Some(&Value::Bool(true));
        if let (true, Some(v)) = (stored, value) {
            let values = match v {
                Value::Array(items) => items.clone(),
                other => vec![other.clone()],
            };
            out.insert(field.clone(), Value::Array(values));
        }
    }
    out
}
