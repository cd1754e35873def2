//! Painless scripts that read documents: the `script` query, `script_score` beyond the vector
//! functions, and function_score's `script_score`. The fields a script reads (`doc['f']`, the
//! name written out) are checked against the mapping when the query is compiled and opened
//! once per segment; each document's values are read from the columns (doc values), as
//! Elasticsearch reads them. A failure while running is kept and fails the search, as
//! Elasticsearch answers it (400), rather than leaving the document out.

use crate::dsl::scoring::{DocFn, SegmentFn};
use crate::mapping::{FieldType, Mapping};
use crate::painless::{Host, Script, Val};
use std::sync::{Arc, Mutex};
use tantivy::columnar::{Column, StrColumn};
use tantivy::{DocId, Score, SegmentReader};

/// Where a failure of a script while searching is kept, for the search to report.
pub type ErrorSlot = Arc<Mutex<Option<String>>>;

/// What the script's result does.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Use {
    /// A `script` query: documents for which it returns true match (scoring 1).
    Filter,
    /// A `script_score`: the score, kept above `min_score`.
    Score { min_score: Option<f32> },
    /// A `_script` sort's number (read with [`Bound::number`]).
    Value,
}

#[derive(Debug, Clone)]
enum Kind {
    Long,
    Double,
    Date,
    Keyword,
    Bool,
    GeoPoint,
}

/// The functions of a score script's context (Elasticsearch's decay functions).
pub const FUNCTIONS: [&str; 6] = [
    "decayGeoGauss",
    "decayGeoExp",
    "decayGeoLinear",
    "decayNumericGauss",
    "decayNumericExp",
    "decayNumericLinear",
];

#[derive(Debug)]
pub struct DocScript {
    script: Arc<Script>,
    /// Each field as written in the script, its column, and its type; None where the index
    /// does not map it (reading it fails the search, as in Elasticsearch).
    fields: Vec<(String, Option<(String, Kind)>)>,
    usage: Use,
    errors: ErrorSlot,
}

impl DocScript {
    pub fn compile(
        script: Arc<Script>,
        mapping: &Mapping,
        usage: Use,
        errors: ErrorSlot,
    ) -> Result<DocScript, String> {
        let (names, calls) = script.reads()?;
        let known = |c: &str| {
            FUNCTIONS.contains(&c)
                || (script.is_expression() && crate::painless::EXPRESSION_FUNCTIONS.contains(&c))
        };
        if let Some(c) = calls.iter().find(|c| !known(c)) {
            return Err(format!(
                "function `{c}` is not in the engine's Painless subset for a query's script (it has {})",
                FUNCTIONS.join(", ")
            ));
        }
        let mut fields = Vec::new();
        for name in names {
            let column = match mapping.field(&name) {
                None => None,
                Some(f) if f.json_path.is_some() => {
                    return Err(format!("`doc['{name}']`: a field learned by dynamic mapping is not read by scripts in the embedded engine (map it)"))
                }
                Some(f) => {
                    let kind = match f.kind {
                        FieldType::Long => Kind::Long,
                        FieldType::Double => Kind::Double,
                        FieldType::Date => Kind::Date,
                        FieldType::Keyword => Kind::Keyword,
                        FieldType::Boolean => Kind::Bool,
                        FieldType::GeoPoint => Kind::GeoPoint,
                        FieldType::Text => {
                            return Err(format!("Text fields are not optimised for operations that require per-document field data like aggregations and sorting, so these operations are disabled by default (`doc['{name}']`; read its keyword multi-field)"))
                        }
                        other => {
                            return Err(format!("`doc['{name}']`: scripts in the embedded engine read keyword, numeric, date and boolean fields, not a {other:?} field"))
                        }
                    };
                    Some((f.name.clone(), kind))
                }
            };
            fields.push((name, column));
        }
        Ok(DocScript {
            script,
            fields,
            usage,
            errors,
        })
    }
}

enum Open {
    Long(Column<i64>),
    Double(Column<f64>),
    Date(Column<tantivy::DateTime>),
    Keyword(StrColumn),
    Bool(Column<bool>),
    Geo(crate::dsl::scoring::Points),
    /// Mapped, with no values in this segment.
    Missing,
    /// Not mapped: reading it is an error, as in Elasticsearch.
    Unmapped,
}

impl DocFn for DocScript {
    fn bind(&self, reader: &SegmentReader) -> tantivy::Result<Box<dyn SegmentFn>> {
        Ok(Box::new(self.bound(reader)?))
    }
}

impl DocScript {
    /// The script bound to one segment's columns.
    pub(crate) fn bound(&self, reader: &SegmentReader) -> tantivy::Result<Bound> {
        let ff = reader.fast_fields();
        let mut columns = Vec::new();
        for (name, column) in &self.fields {
            let open = match column {
                None => Open::Unmapped,
                Some((col, kind)) => match kind {
                    Kind::Long => ff.i64(col).map_or(Open::Missing, Open::Long),
                    Kind::Double => ff.f64(col).map_or(Open::Missing, Open::Double),
                    Kind::Date => ff.date(col).map_or(Open::Missing, Open::Date),
                    Kind::Bool => ff.bool(col).map_or(Open::Missing, Open::Bool),
                    Kind::Keyword => ff
                        .str(col)
                        .ok()
                        .flatten()
                        .map_or(Open::Missing, Open::Keyword),
                    Kind::GeoPoint => Open::Geo(crate::dsl::scoring::Points::open(reader, col)?),
                },
            };
            columns.push((name.clone(), open));
        }
        Ok(Bound {
            script: self.script.clone(),
            columns,
            usage: self.usage,
            errors: self.errors.clone(),
            text: String::new(),
        })
    }
}

pub(crate) struct Bound {
    script: Arc<Script>,
    columns: Vec<(String, Open)>,
    usage: Use,
    errors: ErrorSlot,
    text: String,
}

struct DocHost<'a> {
    columns: &'a [(String, Open)],
    doc: DocId,
    text: &'a mut String,
}

impl Host for DocHost<'_> {
    fn doc(&mut self, field: &str) -> Result<Val, String> {
        let Some((_, open)) = self.columns.iter().find(|(n, _)| n == field) else {
            return Err(format!("No field found for [{field}] in mapping"));
        };
        let doc = self.doc;
        Ok(Val::Doc(match open {
            Open::Long(c) => c.values_for_doc(doc).map(Val::Int).collect(),
            Open::Double(c) => c.values_for_doc(doc).map(Val::Float).collect(),
            Open::Date(c) => c
                .values_for_doc(doc)
                .map(|d| Val::Date(d.into_timestamp_millis()))
                .collect(),
            Open::Bool(c) => c.values_for_doc(doc).map(Val::Bool).collect(),
            Open::Keyword(c) => {
                let mut out = Vec::new();
                for ord in c.term_ords(doc) {
                    self.text.clear();
                    if c.ord_to_str(ord, self.text).is_ok() {
                        out.push(Val::Str(self.text.clone()));
                    }
                }
                out
            }
            Open::Geo(p) => p
                .get(doc)
                .map(|(lat, lon)| Val::Geo(lat, lon))
                .into_iter()
                .collect(),
            Open::Missing => Vec::new(),
            Open::Unmapped => return Err(format!("No field found for [{field}] in mapping")),
        }))
    }

    fn call(&mut self, name: &str, args: &[Val]) -> Option<Result<Val, String>> {
        FUNCTIONS.contains(&name).then(|| decay(name, args))
    }

    fn maps(&self, field: &str) -> bool {
        self.columns
            .iter()
            .any(|(n, o)| n == field && !matches!(o, Open::Unmapped))
    }
}

/// Elasticsearch's score-script decay functions: `decayGeo*(origin "lat, lon", scale "500km",
/// offset "0km", decay, point)` and `decayNumeric*(origin, scale, offset, decay, value)`.
fn decay(name: &str, args: &[Val]) -> Result<Val, String> {
    use crate::dsl::functions::{decay_value, Shape};
    let shape = if name.ends_with("Gauss") {
        Shape::Gauss
    } else if name.ends_with("Exp") {
        Shape::Exp
    } else {
        Shape::Linear
    };
    let [origin, scale, offset, decay, value] = args else {
        return Err(format!(
            "`{name}` takes origin, scale, offset, decay and the document's value"
        ));
    };
    let decay = decay
        .as_f64()
        .ok_or_else(|| format!("`{name}`: decay is a number"))?;
    let value = match value {
        Val::Doc(values) => values
            .first()
            .cloned()
            .ok_or_else(|| format!("`{name}`: the document has no value"))?,
        other => other.clone(),
    };
    let text = |v: &Val| -> String {
        match v {
            Val::Str(s) => s.clone(),
            other => crate::painless::text(other),
        }
    };
    let distance_and_scale = if name.starts_with("decayGeo") {
        let Val::Geo(lat, lon) = value else {
            return Err(format!(
                "`{name}` takes a geo point, got a {}",
                value.type_name()
            ));
        };
        let origin = text(origin);
        let (olat, olon) = origin
            .split_once(',')
            .and_then(|(a, b)| Some((a.trim().parse::<f64>().ok()?, b.trim().parse::<f64>().ok()?)))
            .ok_or_else(|| format!("`{name}`: origin `{origin}` is not \"lat, lon\""))?;
        let d = crate::geo::distance::arc_distance(olat, olon, lat, lon);
        let scale = crate::geo::distance::distance_meters(&text(scale))?;
        let offset = crate::geo::distance::distance_meters(&text(offset))?;
        ((d - offset).max(0.0), scale)
    } else {
        let n = |v: &Val| v.as_f64().ok_or_else(|| format!("`{name}` takes numbers"));
        ((n(&value)? - n(origin)?).abs() - n(offset)?, n(scale)?)
    };
    let (d, scale) = distance_and_scale;
    Ok(Val::Float(decay_value(shape, d.max(0.0), scale, decay)))
}

impl Bound {
    /// The script's number for a document; None (and the search's error noted) when it
    /// fails or gives no number.
    pub(crate) fn number(&mut self, doc: DocId, score: Score) -> Option<f64> {
        match self
            .run(doc, score)
            .map(|v| v.as_f64().ok_or(v.type_name()))
        {
            Ok(Ok(x)) => Some(x),
            Ok(Err(kind)) => {
                self.fail(format!(
                    "a `_script` sort's script must return a number, got a {kind}"
                ));
                None
            }
            Err(e) => {
                self.fail(e);
                None
            }
        }
    }

    /// The script's value for a document, `_score` being its score.
    fn run(&mut self, doc: DocId, score: Score) -> Result<Val, String> {
        let mut host = DocHost {
            columns: &self.columns,
            doc,
            text: &mut self.text,
        };
        self.script
            .run(&[("_score".into(), Val::Float(score as f64))], &mut host)
    }

    fn fail(&self, e: String) -> Option<Score> {
        let mut slot = self.errors.lock().unwrap_or_else(|p| p.into_inner());
        slot.get_or_insert(e);
        None
    }
}

impl SegmentFn for Bound {
    fn eval(&mut self, doc: DocId, score: Score) -> Option<Score> {
        let out = self.run(doc, score);
        match (self.usage, out) {
            (_, Err(e)) => self.fail(e),
            (Use::Filter, Ok(Val::Bool(true))) => Some(1.0),
            (Use::Filter, Ok(Val::Bool(false))) => None,
            (Use::Filter, Ok(other)) => self.fail(format!(
                "a script query's script must return a boolean, got a {}",
                other.type_name()
            )),
            (Use::Value, Ok(v)) => v.as_f64().map(|x| x as f32),
            (Use::Score { min_score }, Ok(v)) => match v.as_f64() {
                Some(s) if s < 0.0 => self.fail(format!(
                    "script score function must not produce negative scores, but got: [{s}]"
                )),
                Some(s) => {
                    let s = s as f32;
                    min_score.is_none_or(|m| s >= m).then_some(s)
                }
                None => self.fail(format!(
                    "a script_score's script must return a number, got a {}",
                    v.type_name()
                )),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::index::EmbeddedIndex;
    use serde_json::{json, Value};

    fn index() -> EmbeddedIndex {
        let body = json!({"mappings": {"properties": {
            "tags": {"type": "keyword"}, "n": {"type": "long"}, "price": {"type": "double"},
            "at": {"type": "date"}, "flag": {"type": "boolean"}, "title": {"type": "text"}}}});
        let idx = EmbeddedIndex::create("s", &body).unwrap();
        for doc in [
            json!({"tags": ["a", "b", "c"], "n": 1, "price": 2.5, "at": "2024-05-01T00:00:00Z", "flag": true}),
            json!({"tags": ["a"], "n": 2, "price": 10.0, "at": "2023-05-01T00:00:00Z", "flag": true}),
            json!({"tags": ["x", "y", "z", "w"], "n": 4, "price": 1.0, "at": "2024-01-01T00:00:00Z", "flag": false}),
            json!({"tags": [], "price": 7.0}),
        ] {
            idx.add_for_test(&doc.to_string());
        }
        idx.refresh().unwrap();
        idx
    }

    fn search(idx: &EmbeddedIndex, query: Value) -> Result<Vec<(f32, u64)>, String> {
        let plan = idx
            .compile(&json!({"query": query, "sort": ["_score", {"price": "asc"}], "_source": ["price"]}))
            .map_err(|e| e.message)?;
        let (_, hits, _) = idx
            .search_hits(&plan, &idx.searcher())
            .map_err(|e| e.message)?;
        Ok(hits
            .iter()
            .map(|h| {
                let source: Value = serde_json::from_slice(h.source.as_ref().unwrap()).unwrap();
                (h.score, source["price"].as_f64().unwrap() as u64)
            })
            .collect())
    }

    #[test]
    fn a_script_query_filters_on_doc_values() {
        let idx = index();
        let prices =
            |q: Value| -> Vec<u64> { search(&idx, q).unwrap().iter().map(|(_, p)| *p).collect() };
        // The stack overflow track's filter: more than two tags.
        assert_eq!(
            prices(json!({"script": {"script": "doc['tags'].length > 2"}})),
            [1, 2]
        );
        assert_eq!(
            prices(
                json!({"script": {"script": {"source": "doc['n'].size() > 0 && doc['n'].value % 2 == 0 && doc['flag'].value", "lang": "painless"}}})
            ),
            [10]
        );
        assert_eq!(prices(json!({"script": {"script": "doc['at'].size() > 0 && doc['at'].value.getYear() == params.y", }})).len(), 0);
        assert_eq!(
            prices(
                json!({"script": {"script": {"source": "doc['at'].size() > 0 && doc['at'].value.getYear() == params.y", "params": {"y": 2024}}}})
            ),
            [1, 2]
        );
        assert_eq!(
            prices(
                json!({"script": {"script": "doc['tags'].contains('a') && !doc.containsKey('nope')"}})
            ),
            [2, 10]
        );
    }

    #[test]
    fn a_script_score_reads_doc_values_and_the_inner_score() {
        let idx = index();
        let got = search(
            &idx,
            json!({"script_score": {"query": {"match_all": {}}, "script": {"source": "doc['price'].value * params.f + _score", "params": {"f": 2}}, "min_score": 4}}),
        )
        .unwrap();
        // match_all scores 1: 2.5·2+1, 10·2+1, 1·2+1 (below min_score), 7·2+1.
        assert_eq!(got, [(21.0, 10), (15.0, 7), (6.0, 2)]);
    }

    #[test]
    fn function_score_script_score_functions() {
        let idx = index();
        let replace = search(
            &idx,
            json!({"function_score": {"query": {"match_all": {}}, "script_score": {"script": "doc['price'].value"}, "boost_mode": "replace"}}),
        )
        .unwrap();
        assert_eq!(replace, [(10.0, 10), (7.0, 7), (2.5, 2), (1.0, 1)]);
        // Summed: the script (2 × the query's score of 1) where `flag` is true, plus a weight of 3.
        let summed = search(
            &idx,
            json!({"function_score": {"functions": [
                {"filter": {"term": {"flag": true}}, "script_score": {"script": "_score * 2"}},
                {"weight": 3}], "score_mode": "sum", "boost_mode": "replace"}}),
        )
        .unwrap();
        assert_eq!(summed, [(5.0, 2), (5.0, 10), (3.0, 1), (3.0, 7)]);
    }

    #[test]
    fn geo_points_and_decay_functions_as_geonames_scripts_use_them() {
        let body = json!({"mappings": {"properties": {"location": {"type": "geo_point"}, "population": {"type": "long"}}}});
        let idx = EmbeddedIndex::create("g", &body).unwrap();
        let places = [
            (52.37, 4.8951, 800_000),
            (48.8566, 2.3522, 2_100_000),
            (51.5072, -0.1276, 8_900_000),
        ];
        for (lat, lon, pop) in places {
            idx.add_for_test(
                &json!({"location": {"lat": lat, "lon": lon}, "population": pop}).to_string(),
            );
        }
        idx.refresh().unwrap();
        // Each place's score, in the order of `places`.
        let scores = |source: &str, params: Value| -> Vec<f32> {
            let plan = idx
                .compile(&json!({"query": {"script_score": {"query": {"match_all": {}}, "script": {"source": source, "params": params}}}}))
                .unwrap();
            let (_, hits, _) = idx.search_hits(&plan, &idx.searcher()).unwrap();
            let by_pop = |pop: i64| {
                hits.iter()
                    .find(|h| {
                        let s: Value = serde_json::from_slice(h.source.as_ref().unwrap()).unwrap();
                        s["population"] == pop
                    })
                    .map(|h| h.score)
                    .unwrap()
            };
            places.iter().map(|(_, _, pop)| by_pop(*pop)).collect()
        };
        // Haversine on Elasticsearch's mean earth radius, computed here independently.
        let km = |(lat, lon): (f64, f64)| {
            let (p1, p2) = (52.37f64.to_radians(), lat.to_radians());
            let (dp, dl) = ((lat - 52.37).to_radians(), (lon - 4.8951).to_radians());
            let h = (dp / 2.0).sin().powi(2) + p1.cos() * p2.cos() * (dl / 2.0).sin().powi(2);
            2.0 * 6_371_008.7714 * h.sqrt().asin() / 1000.0
        };
        let got = scores(
            "decayGeoGauss(params.origin, params.scale, params.offset, params.decay, doc['location'].value)",
            json!({"origin": "52.37, 4.8951", "scale": "500km", "offset": "0km", "decay": 0.1}),
        );
        for (i, (lat, lon, _)) in places.iter().enumerate() {
            let want = 0.1f64.powf((km((*lat, *lon)) / 500.0).powi(2));
            assert!(
                (got[i] as f64 - want).abs() < 1e-5,
                "{i}: {} against {want}",
                got[i]
            );
        }
        // geonames' `expression` (a Lucene expression: a field is its value).
        let plan = idx
            .compile(&json!({"query": {"script_score": {"query": {"match_all": {}}, "script": {"lang": "expression",
                "source": "abs(ln(abs(doc['population']) + 1) + doc['location'].lon + doc['location'].lat) * _score"}}}}))
            .unwrap();
        let (_, hits, _) = idx.search_hits(&plan, &idx.searcher()).unwrap();
        let mut got: Vec<f64> = hits.iter().map(|h| h.score as f64).collect();
        let mut want: Vec<f64> = places
            .iter()
            .map(|(lat, lon, pop)| ((*pop as f64 + 1.0).ln() + lon + lat).abs())
            .collect();
        got.sort_by(f64::total_cmp);
        want.sort_by(f64::total_cmp);
        for (g, w) in got.iter().zip(&want) {
            assert!((g - w).abs() < 1e-3 * w, "{g} against {w}");
        }
        // geonames' `painless_static`: a field read as `doc.f`, cast through `List`.
        let got = scores(
            "Math.abs(Math.log(Math.abs((int)((List)doc.population).get(0)) + 1) + (double)(doc.location.lon) * (double)(doc.location.lat))/_score",
            json!({}),
        );
        for (i, (lat, lon, pop)) in places.iter().enumerate() {
            let want = ((*pop as f64 + 1.0).ln() + lon * lat).abs();
            assert!(
                (got[i] as f64 - want).abs() < 1e-3 * want,
                "{i}: {} against {want}",
                got[i]
            );
        }
    }

    #[test]
    fn failures_fail_the_search_and_text_fields_are_refused() {
        let idx = index();
        // The fourth document has no `n`: Elasticsearch's error for `.value` fails the search.
        let e = search(&idx, json!({"script": {"script": "doc['n'].value > 0"}})).unwrap_err();
        assert!(
            e.contains("A document doesn't have a value for a field"),
            "{e}"
        );
        let e = search(
            &idx,
            json!({"script": {"script": "doc['title'].value == 'x'"}}),
        )
        .unwrap_err();
        assert!(e.contains("Text fields are not optimised"), "{e}");
        let e = search(&idx, json!({"script": {"script": "doc['n'].size()"}})).unwrap_err();
        assert!(e.contains("must return a boolean"), "{e}");
        let e = search(
            &idx,
            json!({"script_score": {"query": {"match_all": {}}, "script": "-doc['price'].value"}}),
        )
        .unwrap_err();
        assert!(e.contains("must not produce negative scores"), "{e}");
        // A scroll reads its first page over every match: the failure is found there too.
        let plan = idx
            .compile(&json!({"query": {"script": {"script": "doc['n'].value > 0"}}}))
            .unwrap();
        let paging = crate::search::Paging {
            by: crate::search::PageBy::Scroll,
            pages: Some(2),
            per_page: 1,
        };
        let e = idx.paged(&plan, paging).unwrap_err();
        assert!(e.message.contains("doesn't have a value"), "{}", e.message);
        // A later search with a good script is not failed by an earlier one's error.
        assert_eq!(
            search(
                &idx,
                json!({"script": {"script": "doc['price'].value > 5"}})
            )
            .unwrap()
            .len(),
            2
        );
    }
}
