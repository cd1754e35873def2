//! A search's URL parameters, read as Elasticsearch's `RestSearchAction` reads them: `size`,
//! `from`, `sort`, `_source*`, `q` (with `df`, `default_operator`, `lenient`,
//! `analyze_wildcard`), `track_total_hits`, `version` and `seq_no_primary_term` override the
//! body's; `rest_total_hits_as_int` shapes the answer. Parameters that change nothing on one
//! node (`preference`, `request_cache`, `search_type`, ...) are accepted; the route table
//! refuses the rest.

use crate::rest::params::pairs;
use crate::rest::RestResponse;
use crate::search::source::SourceFilter;
use serde_json::{json, Map, Value};

/// How a search answers its total hits.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum TotalShown {
    /// `{"value": n, "relation": "eq"}`, or capped at `up_to` with `"gte"` past it
    /// (Elasticsearch's default cap is 10,000).
    Object { up_to: Option<u64> },
    /// `rest_total_hits_as_int`: the number alone.
    Int,
    /// `track_total_hits: false`: no total.
    Hidden,
    /// `track_total_hits: false` with `rest_total_hits_as_int`: -1.
    Untracked,
}

/// Elasticsearch's `track_total_hits` default.
const DEFAULT_TRACK_UP_TO: u64 = 10_000;

impl TotalShown {
    /// The `"total"` of a search's hits, or None.
    pub(crate) fn render(self, count: u64) -> Option<String> {
        Some(match self {
            TotalShown::Hidden => return None,
            TotalShown::Untracked => "-1".to_string(),
            TotalShown::Int => count.to_string(),
            TotalShown::Object { up_to: Some(n) } if count > n => {
                format!(r#"{{"value":{n},"relation":"gte"}}"#)
            }
            TotalShown::Object { .. } => format!(r#"{{"value":{count},"relation":"eq"}}"#),
        })
    }
}

fn bad(message: String) -> RestResponse {
    RestResponse::error(400, "illegal_argument_exception", &message)
}

fn boolean(name: &str, v: &str) -> Result<bool, RestResponse> {
    match v {
        "" | "true" => Ok(true),
        "false" => Ok(false),
        other => Err(bad(format!(
            "Failed to parse value [{other}] as only [true] or [false] are allowed (parameter [{name}])"
        ))),
    }
}

fn number(name: &str, v: &str) -> Result<Value, RestResponse> {
    v.parse::<i64>().map(Value::from).map_err(|_| {
        bad(format!(
            "Failed to parse int parameter [{name}] with value [{v}]"
        ))
    })
}

/// `field:order,field`: the body's `sort` list.
fn sort_list(v: &str) -> Value {
    Value::Array(
        v.split(',')
            .filter(|s| !s.is_empty())
            .map(|s| match s.rsplit_once(':') {
                Some((field, order)) => json!({ field: order }),
                None => json!(s),
            })
            .collect(),
    )
}

/// A get's or mget's `_source`, `_source_includes` and `_source_excludes` parameters, as the
/// source filter they ask for.
pub(crate) fn url_source_filter(query: &str) -> Result<SourceFilter, String> {
    let find = |name: &str| {
        pairs(query)
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.into_owned())
    };
    SourceFilter::parse(
        source(
            find("_source"),
            find("_source_includes"),
            find("_source_excludes"),
        )
        .as_ref(),
    )
}

/// The URL's `_source`, `_source_includes` and `_source_excludes` as the body's `_source`.
fn source(
    given: Option<String>,
    includes: Option<String>,
    excludes: Option<String>,
) -> Option<Value> {
    let list = |s: &str| -> Value {
        s.split(',')
            .filter(|p| !p.is_empty())
            .map(Value::from)
            .collect()
    };
    match (given.as_deref(), includes, excludes) {
        (None, None, None) => None,
        (Some("true" | ""), None, None) => Some(json!(true)),
        (Some("false"), None, None) => Some(json!(false)),
        (given, includes, excludes) => {
            let mut o = Map::new();
            let inc = includes.or_else(|| {
                given
                    .filter(|g| !matches!(*g, "true" | "false" | ""))
                    .map(str::to_string)
            });
            if let Some(i) = inc {
                o.insert("includes".into(), list(&i));
            }
            if let Some(e) = excludes {
                o.insert("excludes".into(), list(&e));
            }
            Some(Value::Object(o))
        }
    }
}

/// Folds the URL's parameters into the body; answers how the total is shown.
pub(crate) fn into_body(query: &str, body: &mut Value) -> Result<TotalShown, RestResponse> {
    let Value::Object(b) = body else {
        return Err(bad("the search body is not a JSON object".into()));
    };
    let (mut q, mut query_options) = (None, Map::new());
    let (mut given, mut includes, mut excludes) = (None, None, None);
    let mut as_int = false;
    for (k, v) in pairs(query) {
        match k.as_ref() {
            "size" | "from" => {
                b.insert(k.to_string(), number(&k, &v)?);
            }
            "sort" => {
                b.insert("sort".into(), sort_list(&v));
            }
            "_source" => given = Some(v.into_owned()),
            "_source_includes" => includes = Some(v.into_owned()),
            "_source_excludes" => excludes = Some(v.into_owned()),
            "q" => q = Some(v.into_owned()),
            "df" => {
                query_options.insert("default_field".into(), json!(v));
            }
            "default_operator" => {
                query_options.insert("default_operator".into(), json!(v));
            }
            "lenient" | "analyze_wildcard" => {
                query_options.insert(k.to_string(), json!(boolean(&k, &v)?));
            }
            "track_total_hits" => {
                let t = match v.as_ref() {
                    "true" | "" => json!(true),
                    "false" => json!(false),
                    n => number(&k, n)?,
                };
                b.insert("track_total_hits".into(), t);
            }
            "rest_total_hits_as_int" => as_int = boolean(&k, &v)?,
            "docvalue_fields" | "stored_fields" => {
                let list: Vec<Value> = v
                    .split(',')
                    .filter(|f| !f.is_empty())
                    .map(Value::from)
                    .collect();
                b.insert(k.to_string(), Value::Array(list));
            }
            "version" | "seq_no_primary_term" => {
                b.insert(k.to_string(), json!(boolean(&k, &v)?));
            }
            _ => {}
        }
    }
    if let Some(q) = q {
        query_options.insert("query".into(), json!(q));
        b.insert("query".into(), json!({ "query_string": query_options }));
    }
    if let Some(s) = source(given, includes, excludes) {
        b.insert("_source".into(), s);
    }
    total_shown(b.get("track_total_hits"), as_int)
}

/// `track_total_hits` (true, false or a number) with `rest_total_hits_as_int`.
fn total_shown(track: Option<&Value>, as_int: bool) -> Result<TotalShown, RestResponse> {
    let up_to = match track {
        None => Some(DEFAULT_TRACK_UP_TO),
        Some(Value::Bool(true)) => None,
        // With an integer total, untracked hits show as -1, as Elasticsearch shows them.
        Some(Value::Bool(false)) if as_int => return Ok(TotalShown::Untracked),
        Some(Value::Bool(false)) => return Ok(TotalShown::Hidden),
        Some(v) => match v.as_i64() {
            Some(-1) => None,
            Some(n) if n >= 0 => Some(n as u64),
            Some(n) => {
                return Err(bad(format!(
                    "[track_total_hits] parameter must be positive or equals to -1, got {n}"
                )))
            }
            None => {
                return Err(bad(format!(
                    "[track_total_hits] must be true, false or a number, got {v}"
                )))
            }
        },
    };
    match (as_int, track) {
        (false, _) => Ok(TotalShown::Object { up_to }),
        // Elasticsearch counts exactly for an integer total, and refuses a capped count.
        (true, None) => Ok(TotalShown::Int),
        (true, _) if up_to.is_none() => Ok(TotalShown::Int),
        (true, Some(v)) => Err(bad(format!(
            "[rest_total_hits_as_int] cannot be used if the tracking of total hits is not accurate, got {v}"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn folded(query: &str, body: Value) -> (Value, TotalShown) {
        let mut b = body;
        let shown = into_body(query, &mut b)
            .unwrap_or_else(|r| panic!("{}", String::from_utf8_lossy(&r.body)));
        (b, shown)
    }

    #[test]
    fn url_parameters_override_the_body() {
        let (b, shown) = folded(
            "size=1000&from=5&sort=pop:desc,name&_source_includes=name,pop&q=tag%3Aa&df=tag&default_operator=AND",
            json!({"size": 10, "query": {"match_all": {}}}),
        );
        assert_eq!(b["size"], 1000);
        assert_eq!(b["from"], 5);
        assert_eq!(b["sort"], json!([{"pop": "desc"}, "name"]));
        assert_eq!(b["_source"], json!({"includes": ["name", "pop"]}));
        assert_eq!(
            b["query"],
            json!({"query_string": {"query": "tag:a", "default_field": "tag", "default_operator": "AND"}})
        );
        assert_eq!(
            shown,
            TotalShown::Object {
                up_to: Some(10_000)
            }
        );
        assert_eq!(
            folded("_source=false", json!({})).0["_source"],
            json!(false)
        );
    }

    #[test]
    fn totals_are_shown_as_elasticsearch_shows_them() {
        let shown = |q: &str| folded(q, json!({})).1;
        assert_eq!(shown("rest_total_hits_as_int=true"), TotalShown::Int);
        assert_eq!(shown("track_total_hits=false"), TotalShown::Hidden);
        assert_eq!(
            shown("track_total_hits=true"),
            TotalShown::Object { up_to: None }
        );
        assert_eq!(
            TotalShown::Object { up_to: Some(10) }.render(11).unwrap(),
            r#"{"value":10,"relation":"gte"}"#
        );
        assert_eq!(
            TotalShown::Object { up_to: Some(10) }.render(10).unwrap(),
            r#"{"value":10,"relation":"eq"}"#
        );
        assert_eq!(TotalShown::Int.render(7).unwrap(), "7");
        let mut b = json!({});
        assert!(into_body("rest_total_hits_as_int=true&track_total_hits=100", &mut b).is_err());
        assert!(into_body("size=ten", &mut json!({})).is_err());
    }
}
