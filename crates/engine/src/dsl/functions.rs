//! Elasticsearch's `function_score`: `weight`, `field_value_factor`, `random_score`, the
//! `gauss`/`exp`/`linear` decays on numbers, dates and geo points, and `script_score` (a
//! Painless script reading the document, `_score` the query's), each optionally under a
//! `filter`, combined by `score_mode` and `boost_mode` as Elasticsearch documents them.

use crate::dsl::scoring::DocFn;
use crate::dsl::scoring::NumberKind;
use crate::dsl::scoring::Numbers;
use crate::dsl::scoring::Points;
use crate::dsl::scoring::SegmentFn;
use crate::geo::distance::{arc_distance, distance_meters};
use crate::mapping::FieldType;
use crate::mapping::Mapping;
use serde_json::{Map, Value};
use tantivy::query::{EnableScoring, Query, Scorer};
use tantivy::{DocId, DocSet, Score, SegmentReader};

/// Compiles the `filter` of the function at a position (parsed with the query), if it has one.
pub type Compile<'a> = dyn Fn(usize) -> Result<Option<Box<dyn Query>>, String> + 'a;
/// Binds a `script_score` function's `script` to the index.
pub type CompileScript<'a> =
    dyn Fn(&Value) -> Result<crate::dsl::doc_script::DocScript, String> + 'a;

#[derive(Debug)]
pub struct FunctionScore {
    functions: Vec<Function>,
    score_mode: Mode,
    boost_mode: Mode,
    max_boost: f64,
    min_score: Option<f64>,
}

#[derive(Debug)]
struct Function {
    filter: Option<Box<dyn Query>>,
    weight: Option<f64>,
    kind: Kind,
}

#[derive(Debug)]
enum Kind {
    Weight,
    FieldValue {
        field: String,
        number: NumberKind,
        factor: f64,
        modifier: String,
        missing: Option<f64>,
    },
    Random {
        seed: u64,
    },
    Script(crate::dsl::doc_script::DocScript),
    Decay {
        shape: Shape,
        on: DecayOn,
        scale: f64,
        offset: f64,
        decay: f64,
    },
}

#[derive(Debug, Clone, Copy)]
pub(crate) enum Shape {
    Gauss,
    Exp,
    Linear,
}

#[derive(Debug)]
enum DecayOn {
    Number {
        field: String,
        number: NumberKind,
        origin: f64,
    },
    Geo {
        field: String,
        lat: f64,
        lon: f64,
    },
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Mode {
    Multiply,
    Sum,
    Avg,
    First,
    Max,
    Min,
    Replace,
}

const MODIFIERS: [&str; 10] = [
    "none",
    "log",
    "log1p",
    "log2p",
    "ln",
    "ln1p",
    "ln2p",
    "square",
    "sqrt",
    "reciprocal",
];

impl FunctionScore {
    /// `compile` turns a nested query (the `query` and each function's `filter`) into tantivy's.
    pub fn parse(
        body: &Map<String, Value>,
        mapping: &Mapping,
        compile: &Compile,
        script: &CompileScript,
    ) -> Result<FunctionScore, String> {
        let mode = |key: &str, allowed: &[&str]| -> Result<Mode, String> {
            let Some(v) = body.get(key) else {
                return Ok(Mode::Multiply);
            };
            let name = v.as_str().unwrap_or_default();
            if !allowed.contains(&name) {
                return Err(format!(
                    "function_score `{key}` `{v}` is not one of {}",
                    allowed.join(", ")
                ));
            }
            Ok(match name {
                "multiply" => Mode::Multiply,
                "sum" => Mode::Sum,
                "avg" => Mode::Avg,
                "first" => Mode::First,
                "max" => Mode::Max,
                "min" => Mode::Min,
                _ => Mode::Replace,
            })
        };
        let score_mode = mode(
            "score_mode",
            &["multiply", "sum", "avg", "first", "max", "min"],
        )?;
        let boost_mode = mode(
            "boost_mode",
            &["multiply", "replace", "sum", "avg", "max", "min"],
        )?;
        let mut functions = Vec::new();
        match body.get("functions") {
            Some(Value::Array(list)) => {
                for (position, f) in list.iter().enumerate() {
                    let f = f.as_object().ok_or("each of `functions` is an object")?;
                    functions.push(function(f, mapping, compile(position)?, script)?);
                }
            }
            Some(_) => return Err("function_score `functions` is a list".into()),
            // A single function written at the top level.
            None => {
                if body.keys().any(|k| FUNCTION_KEYS.contains(&k.as_str())) {
                    functions.push(function(body, mapping, compile(0)?, script)?);
                }
            }
        }
        for key in body.keys() {
            let known = [
                "query",
                "functions",
                "score_mode",
                "boost_mode",
                "max_boost",
                "min_score",
                "boost",
                "filter",
                "weight",
                "_name",
            ];
            if !known.contains(&key.as_str()) && !FUNCTION_KEYS.contains(&key.as_str()) {
                return Err(format!(
                    "function_score `{key}` is not run by the embedded backend"
                ));
            }
        }
        Ok(FunctionScore {
            functions,
            score_mode,
            boost_mode,
            max_boost: body
                .get("max_boost")
                .and_then(Value::as_f64)
                .unwrap_or(f64::MAX),
            min_score: body.get("min_score").and_then(Value::as_f64),
        })
    }
}

const FUNCTION_KEYS: [&str; 7] = [
    "field_value_factor",
    "random_score",
    "gauss",
    "exp",
    "linear",
    "script_score",
    "weight",
];

fn function(
    f: &Map<String, Value>,
    mapping: &Mapping,
    filter: Option<Box<dyn Query>>,
    script: &CompileScript,
) -> Result<Function, String> {
    let weight = f
        .get("weight")
        .map(|w| w.as_f64().ok_or("`weight` is a number"))
        .transpose()?;
    let numeric = |field: &str| -> Result<NumberKind, String> {
        match mapping.field(field).map(|m| m.kind) {
            Some(FieldType::Long) => Ok(NumberKind::Long),
            Some(FieldType::Double) => Ok(NumberKind::Double),
            Some(FieldType::Date) => Ok(NumberKind::Date),
            Some(other) => Err(format!(
                "function_score: field `{field}` is {other:?}, not a number or a date"
            )),
            None => Err(format!(
                "function_score: field `{field}` is not in the index mapping"
            )),
        }
    };
    let kind = if let Some(s) = f.get("script_score") {
        let source = s
            .get("script")
            .ok_or("function_score `script_score` needs a `script`")?;
        Kind::Script(script(source)?)
    } else if let Some(fvf) = f.get("field_value_factor").and_then(Value::as_object) {
        let field = fvf
            .get("field")
            .and_then(Value::as_str)
            .ok_or("field_value_factor needs a `field`")?;
        let modifier = fvf
            .get("modifier")
            .and_then(Value::as_str)
            .unwrap_or("none")
            .to_string();
        if !MODIFIERS.contains(&modifier.as_str()) {
            return Err(format!(
                "field_value_factor modifier `{modifier}` is not one of {}",
                MODIFIERS.join(", ")
            ));
        }
        Kind::FieldValue {
            field: field.to_string(),
            number: numeric(field)?,
            factor: fvf.get("factor").and_then(Value::as_f64).unwrap_or(1.0),
            modifier,
            missing: fvf.get("missing").and_then(Value::as_f64),
        }
    } else if let Some(r) = f.get("random_score") {
        Kind::Random {
            seed: r.get("seed").and_then(Value::as_u64).unwrap_or(0x5EED),
        }
    } else if let Some((shape, d)) = [
        ("gauss", Shape::Gauss),
        ("exp", Shape::Exp),
        ("linear", Shape::Linear),
    ]
    .iter()
    .find_map(|(k, s)| f.get(*k).map(|d| (*s, d)))
    {
        decay(shape, d, mapping, &numeric)?
    } else {
        Kind::Weight
    };
    Ok(Function {
        filter,
        weight,
        kind,
    })
}

fn decay(
    shape: Shape,
    d: &Value,
    mapping: &Mapping,
    numeric: &dyn Fn(&str) -> Result<NumberKind, String>,
) -> Result<Kind, String> {
    let obj = d.as_object().ok_or("a decay function is an object")?;
    let (field, p) = obj
        .iter()
        .find(|(k, _)| !matches!(k.as_str(), "multi_value_mode"))
        .ok_or("a decay function names its field")?;
    let p = p
        .as_object()
        .ok_or("a decay function's field takes origin, scale, offset, decay")?;
    let decay = p.get("decay").and_then(Value::as_f64).unwrap_or(0.5);
    if !(decay > 0.0 && decay < 1.0) {
        return Err(format!("decay `{decay}` must be between 0 and 1"));
    }
    let text = |k: &str| {
        p.get(k).map(|v| {
            v.as_str()
                .map(str::to_string)
                .unwrap_or_else(|| v.to_string())
        })
    };
    let geo = mapping
        .field(field)
        .is_some_and(|m| m.kind == FieldType::GeoPoint);
    let (on, scale, offset) = if geo {
        let origin = p.get("origin").ok_or("a geo decay needs an `origin`")?;
        let (lat, lon) = crate::mapping::geo_point(origin).map(|(lon, lat)| (lat, lon))?;
        let meters = |k: &str, default: Option<f64>| match text(k) {
            Some(t) => distance_meters(&t),
            None => default.ok_or(format!("a geo decay needs `{k}`")),
        };
        (
            DecayOn::Geo {
                field: field.clone(),
                lat,
                lon,
            },
            meters("scale", None)?,
            meters("offset", Some(0.0))?,
        )
    } else {
        let number = numeric(field)?;
        let amount = |k: &str, default: Option<f64>| -> Result<f64, String> {
            match (p.get(k), number) {
                (None, _) => default.ok_or(format!("a decay needs `{k}`")),
                (Some(Value::Number(n)), _) => Ok(n.as_f64().unwrap_or(0.0)),
                (Some(Value::String(s)), NumberKind::Date) => crate::util::parse_time(s)
                    .map(|d| d.as_secs_f64() * 1000.0)
                    .map_err(|e| format!("decay `{k}`: {e}")),
                (Some(v), _) => v
                    .as_str()
                    .and_then(|s| s.parse().ok())
                    .ok_or(format!("decay `{k}` `{v}` is not a number")),
            }
        };
        let origin = match (p.get("origin"), number) {
            (None, NumberKind::Date) | (Some(Value::String(_)), NumberKind::Date)
                if p.get("origin")
                    .and_then(Value::as_str)
                    .is_none_or(|s| s == "now") =>
            {
                chrono::Utc::now().timestamp_millis() as f64
            }
            (Some(v), NumberKind::Date) => {
                let dt = crate::mapping::dates::DateFormats::default().read(v)?;
                dt.into_timestamp_micros() as f64 / 1000.0
            }
            _ => amount("origin", None)?,
        };
        (
            DecayOn::Number {
                field: field.clone(),
                number,
                origin,
            },
            amount("scale", None)?,
            amount("offset", Some(0.0))?,
        )
    };
    if scale <= 0.0 {
        return Err("a decay's `scale` must be above 0".into());
    }
    Ok(Kind::Decay {
        shape,
        on,
        scale,
        offset,
        decay,
    })
}

enum Source {
    None,
    Numbers(Numbers),
    Points(Points),
    Script(Box<dyn SegmentFn>),
}

struct BoundFunction {
    filter: Option<Box<dyn Scorer>>,
    source: Source,
    seed: u64,
}

struct Bound {
    spec: std::sync::Arc<FunctionScore>,
    functions: Vec<BoundFunction>,
}

/// The function_score as a [`DocFn`].
#[derive(Debug)]
pub struct FunctionScoreFn(pub std::sync::Arc<FunctionScore>);

impl DocFn for FunctionScoreFn {
    fn bind(&self, reader: &SegmentReader) -> tantivy::Result<Box<dyn SegmentFn>> {
        let schema = reader.schema();
        let mut functions = Vec::with_capacity(self.0.functions.len());
        for f in &self.0.functions {
            let filter = match &f.filter {
                Some(q) => Some(
                    q.weight(EnableScoring::disabled_from_schema(schema))?
                        .scorer(reader, 1.0)?,
                ),
                None => None,
            };
            let source = match &f.kind {
                Kind::FieldValue { field, number, .. } => {
                    Source::Numbers(Numbers::open(reader, field, *number)?)
                }
                Kind::Decay {
                    on: DecayOn::Number { field, number, .. },
                    ..
                } => Source::Numbers(Numbers::open(reader, field, *number)?),
                Kind::Decay {
                    on: DecayOn::Geo { field, .. },
                    ..
                } => Source::Points(Points::open(reader, field)?),
                Kind::Script(s) => Source::Script(s.bind(reader)?),
                Kind::Weight | Kind::Random { .. } => Source::None,
            };
            let segment = reader.segment_id().uuid_string();
            let seed = segment.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
                (h ^ b as u64).wrapping_mul(0x0100_0000_01b3)
            });
            functions.push(BoundFunction {
                filter,
                source,
                seed,
            });
        }
        Ok(Box::new(Bound {
            spec: self.0.clone(),
            functions,
        }))
    }
}

impl Bound {
    /// One function's value for `doc`; None when its filter does not match or it has no value.
    fn value(&mut self, i: usize, doc: DocId, query_score: Score) -> Option<f64> {
        let (spec, bound) = (&self.spec.functions[i], &mut self.functions[i]);
        if let Some(filter) = &mut bound.filter {
            if filter.doc() < doc {
                filter.seek(doc);
            }
            if filter.doc() != doc {
                return None;
            }
        }
        if let Source::Script(s) = &mut bound.source {
            return s.eval(doc, query_score).map(f64::from);
        }
        let v = match (&spec.kind, &bound.source) {
            (Kind::Weight, _) => 1.0,
            (
                Kind::FieldValue {
                    factor,
                    modifier,
                    missing,
                    ..
                },
                Source::Numbers(n),
            ) => {
                let x = factor * n.get(doc).or(*missing)?;
                modify(modifier, x)
            }
            (Kind::Random { seed }, _) => {
                let mut h = (doc as u64 ^ seed ^ bound.seed).wrapping_mul(0x9E37_79B9_7F4A_7C15);
                h ^= h >> 31;
                (h >> 11) as f64 / (1u64 << 53) as f64
            }
            (
                Kind::Decay {
                    shape,
                    on,
                    scale,
                    offset,
                    decay,
                },
                source,
            ) => {
                let distance = match (on, source) {
                    (DecayOn::Number { origin, .. }, Source::Numbers(n)) => {
                        (n.get(doc)? - origin).abs()
                    }
                    (DecayOn::Geo { lat, lon, .. }, Source::Points(p)) => {
                        let (dlat, dlon) = p.get(doc)?;
                        arc_distance(*lat, *lon, dlat, dlon)
                    }
                    _ => return None,
                };
                decay_value(*shape, (distance - offset).max(0.0), *scale, *decay)
            }
            _ => return None,
        };
        Some(v)
    }
}

impl SegmentFn for Bound {
    fn eval(&mut self, doc: DocId, query_score: Score) -> Option<Score> {
        let mode = self.spec.score_mode;
        let (mut combined, mut weights) = (None::<f64>, 0.0);
        for i in 0..self.functions.len() {
            let Some(v) = self.value(i, doc, query_score) else {
                continue;
            };
            let w = self.spec.functions[i].weight.unwrap_or(1.0);
            let v = v * w;
            weights += w;
            combined = Some(match (combined, mode) {
                (None, _) => v,
                (Some(c), Mode::Multiply) => c * v,
                (Some(c), Mode::Sum | Mode::Avg) => c + v,
                (Some(c), Mode::Max) => c.max(v),
                (Some(c), Mode::Min) => c.min(v),
                (Some(c), _) => c,
            });
            if mode == Mode::First {
                break;
            }
        }
        // No function applies: the function score is 1, as in Elasticsearch.
        let mut f = match (combined, mode) {
            (Some(c), Mode::Avg) if weights > 0.0 => c / weights,
            (Some(c), _) => c,
            (None, _) => 1.0,
        };
        f = f.min(self.spec.max_boost);
        let q = query_score as f64;
        let score = match self.spec.boost_mode {
            Mode::Multiply => q * f,
            Mode::Replace => f,
            Mode::Sum => q + f,
            Mode::Avg => (q + f) / 2.0,
            Mode::Max => q.max(f),
            Mode::Min => q.min(f),
            Mode::First => q * f,
        };
        if self.spec.min_score.is_some_and(|m| score < m) {
            return None;
        }
        Some(score as Score)
    }
}

fn modify(modifier: &str, x: f64) -> f64 {
    match modifier {
        "log" => x.log10(),
        "log1p" => (1.0 + x).log10(),
        "log2p" => (2.0 + x).log10(),
        "ln" => x.ln(),
        "ln1p" => x.ln_1p(),
        "ln2p" => (2.0 + x).ln(),
        "square" => x * x,
        "sqrt" => x.sqrt(),
        "reciprocal" => 1.0 / x,
        _ => x,
    }
}

/// Elasticsearch's decay functions at `d` past the offset.
pub(crate) fn decay_value(shape: Shape, d: f64, scale: f64, decay: f64) -> f64 {
    match shape {
        Shape::Gauss => {
            let sigma2 = -scale * scale / (2.0 * decay.ln());
            (-(d * d) / (2.0 * sigma2)).exp()
        }
        Shape::Exp => (decay.ln() / scale * d).exp(),
        Shape::Linear => {
            let s = scale / (1.0 - decay);
            ((s - d) / s).max(0.0)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decays_are_the_documented_value_at_scale_and_one_at_the_origin() {
        for shape in [Shape::Gauss, Shape::Exp, Shape::Linear] {
            assert!((decay_value(shape, 0.0, 10.0, 0.5) - 1.0).abs() < 1e-12);
            // At `scale` past the offset, each decays to `decay`.
            assert!(
                (decay_value(shape, 10.0, 10.0, 0.3) - 0.3).abs() < 1e-12,
                "{shape:?}"
            );
        }
        assert_eq!(decay_value(Shape::Linear, 100.0, 10.0, 0.5), 0.0);
        assert!((modify("log1p", 9.0) - 1.0).abs() < 1e-12);
    }
}
