//! python: an operation the track's own Python drives. Its params come from a param source the
//! track registers (drawn per call, ahead of the call), or it is a custom runner the track
//! registers (called per operation with the official client), or both.
//!
//! ```yaml
//! - name: pure-terms
//!   type: python
//!   params:
//!     param-source: pure-terms-query-source   # registered by the track's track.py
//!     operation-type: search                  # what each drawn params dict is for
//!     dialect: rally                          # drawn params are Rally's (else ours)
//!     params: {cache: false}                  # handed to the param source
//! ```

use super::{OpSpec, OperationType, ParamError, Params, TrackContext};
use crate::units::ThroughputUnit;
use serde_json::{Map, Value};

pub const PYTHON: OperationType = OperationType {
    name: "python",
    unit: ThroughputUnit::Operations,
    sweepable: &[],
    parse: |p, ctx| Ok(OpSpec::Python(parse(p, ctx)?)),
};

/// Whose vocabulary a drawn params dict speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DrawnDialect {
    /// Rally's (or OSB's) params for its operation type: converted as a Rally track's are.
    Rally,
    /// Our params for our operation type.
    Ours,
}

#[derive(Debug, Clone)]
pub struct PythonSpec {
    /// The registered param source the params come from.
    pub param_source: Option<String>,
    /// The registered custom runner that runs the operation (None: a built-in type runs the
    /// drawn params).
    pub runner: Option<String>,
    /// The operation type drawn params are for.
    pub operation_type: String,
    pub dialect: DrawnDialect,
    /// The params handed to the param source (or, without one, to the runner).
    pub params: Map<String, Value>,
    /// What one draw became, checked before the race as any operation is.
    pub first: Option<Box<OpSpec>>,
    pub unit: ThroughputUnit,
    /// The registered scheduler that paces each call (its intended start and its params come
    /// from Python one call at a time), and the task as written, which it is made from.
    pub scheduler: Option<String>,
    pub task: Option<Value>,
}

fn parse(p: &Params, ctx: &TrackContext) -> Result<PythonSpec, ParamError> {
    let param_source = p.string("param-source")?;
    let runner = p.string("runner")?;
    if param_source.is_none() && runner.is_none() {
        return Err(ParamError::new(
            "",
            "a python operation names a `param-source` or a `runner` (or both) that the track's Python registers",
        ));
    }
    let operation_type = p
        .string("operation-type")?
        .or_else(|| runner.clone())
        .ok_or_else(|| {
            ParamError::new(
                "operation-type",
                "the operation type the drawn params are for, such as `search`",
            )
        })?;
    let dialect = match p.string("dialect")?.as_deref() {
        None | Some("rally") => DrawnDialect::Rally,
        Some("runner") => DrawnDialect::Ours,
        Some(other) => {
            return Err(ParamError::new(
                "dialect",
                format!("`{other}`: drawn params are Rally's (`rally`) or runner's (`runner`)"),
            ))
        }
    };
    let params = match p.get("params") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(m)) => m.clone(),
        Some(other) => {
            return Err(ParamError::new(
                "params",
                format!("expected a mapping, got {other}"),
            ))
        }
    };
    let mut first_unit = None;
    let first = match p.get("first") {
        None | Some(Value::Null) => None,
        Some(f) => {
            let kind = f["type"].as_str().unwrap_or_default();
            let empty = Map::new();
            let first_params = f["params"].as_object().unwrap_or(&empty);
            let (first_type, spec) = super::parse(kind, first_params, ctx).map_err(|e| {
                ParamError::new(
                    "first",
                    format!(
                        "the first params the source drew, as `{kind}`: {}",
                        e.message
                    ),
                )
            })?;
            first_unit = Some(first_type.unit);
            Some(Box::new(spec))
        }
    };
    let unit = match (&runner, p.string("unit")?.as_deref()) {
        (Some(_), Some("docs")) => ThroughputUnit::Documents,
        (Some(_), Some("ops") | None) => ThroughputUnit::Operations,
        (Some(_), Some(other)) => {
            return Err(ParamError::new(
                "unit",
                format!("`{other}`: a custom runner's weight counts `ops` or `docs`"),
            ))
        }
        (None, _) => first_unit.unwrap_or_else(|| {
            super::OperationType::find(&operation_type, &Map::new())
                .map_or(ThroughputUnit::Operations, |t| t.unit)
        }),
    };
    let scheduler = p.string("scheduler")?;
    if scheduler.is_some() && param_source.is_none() {
        return Err(ParamError::new(
            "scheduler",
            "a scheduler of the track's Python paces calls whose params a param source draws; name its `param-source`",
        ));
    }
    let task = p.get("task").cloned();
    Ok(PythonSpec {
        scheduler,
        task,
        param_source,
        runner,
        operation_type,
        dialect,
        params,
        first,
        unit,
    })
}

/// A bulk a param source drew whole: Rally's bulk runner sends any source's `body`, so tracks
/// generate their documents in Python with no corpus at all.
#[derive(Debug)]
pub struct DrawnBulk {
    /// NDJSON, an action line before each document.
    pub body: String,
    pub items: Vec<crate::corpus::BatchItem>,
    pub docs: u64,
    pub pipeline: Option<String>,
}

/// Rally's bulk runner's params from a drawn dict: `body` (NDJSON text, or a list of lines or
/// of action and document objects, as the official client takes it), and its mandatory
/// `action-metadata-present`, `bulk-size` and `unit`; `pipeline` as `?pipeline=`. None where
/// the dict has no `body` (a bulk over the track's corpora).
pub fn drawn_bulk(drawn: &mut Map<String, Value>) -> Option<Result<DrawnBulk, String>> {
    let body = drawn.remove("body")?;
    Some(read_drawn_bulk(drawn, body))
}

fn read_drawn_bulk(drawn: &Map<String, Value>, body: Value) -> Result<DrawnBulk, String> {
    for key in ["action-metadata-present", "bulk-size", "unit"] {
        if !drawn.contains_key(key) {
            // Rally's own words (its runner's `mandatory`).
            return Err(format!(
                "Parameter source for operation 'bulk-index' did not provide the mandatory parameter '{key}'"
            ));
        }
    }
    if drawn
        .get("action-metadata-present")
        .and_then(Value::as_bool)
        != Some(true)
    {
        return Err("the drawn body has no action lines (`action-metadata-present` is not true); a bulk request needs one before each document".into());
    }
    for key in ["refresh", "timeout", "retries_on_429", "detailed-results"] {
        if drawn.contains_key(key) {
            return Err(format!("drawn `{key}` is one runner's bulk does not send; leave it out of the drawn params"));
        }
    }
    let body = match body {
        Value::String(s) => s,
        Value::Array(lines) => {
            let mut out = String::new();
            for line in lines {
                match line {
                    Value::String(s) => out.push_str(s.trim_end_matches('\n')),
                    obj @ Value::Object(_) => out.push_str(&obj.to_string()),
                    other => {
                        return Err(format!(
                            "a bulk body line is text or an object, not {other}"
                        ))
                    }
                }
                out.push('\n');
            }
            out
        }
        other => {
            return Err(format!(
                "`body` is NDJSON text or a list of lines, not {other}"
            ))
        }
    };
    let (items, docs) = crate::corpus::frame_bulk_body(&body)?;
    let pipeline = match drawn.get("pipeline") {
        None | Some(Value::Null) => None,
        Some(Value::String(p)) => Some(p.clone()),
        Some(other) => return Err(format!("`pipeline` names a pipeline, not {other}")),
    };
    Ok(DrawnBulk {
        body,
        items,
        docs,
        pipeline,
    })
}
