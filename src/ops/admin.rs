//! create-index, delete-index and refresh: index lifecycle operations.

use super::{OpSpec, OperationType, ParamError, Params, TrackContext};
use crate::units::ThroughputUnit;

pub const CREATE_INDEX: OperationType = OperationType {
    name: "create-index",
    unit: ThroughputUnit::Operations,
    sweepable: &[],
    parse: |p, ctx| Ok(OpSpec::CreateIndex(indices_to_create(p, ctx)?)),
};

pub const DELETE_INDEX: OperationType = OperationType {
    name: "delete-index",
    unit: ThroughputUnit::Operations,
    sweepable: &[],
    parse: |p, ctx| Ok(OpSpec::DeleteIndex(index_names(p, ctx)?)),
};

pub const REFRESH: OperationType = OperationType {
    name: "refresh",
    unit: ThroughputUnit::Operations,
    sweepable: &[],
    parse: |p, ctx| Ok(OpSpec::Refresh(index_names(p, ctx)?)),
};
use serde_json::Value;

/// An index as the track declares it: a name and Elasticsearch-style settings/mappings.
#[derive(Debug, Clone, serde::Serialize)]
pub struct IndexSpec {
    pub name: String,
    pub body: Value,
}

/// The `index` param: one name, a list of names, or (absent) every index of the track.
pub fn index_names(p: &Params, ctx: &TrackContext) -> Result<Vec<String>, ParamError> {
    match p.get("index") {
        None => {
            if ctx.indices.is_empty() {
                return Err(ParamError::new(
                    "index",
                    "the track declares no indices; name one with `index`",
                ));
            }
            Ok(ctx.indices.iter().map(|i| i.name.clone()).collect())
        }
        Some(Value::String(s)) => Ok(vec![s.clone()]),
        Some(Value::Array(items)) if !items.is_empty() => items
            .iter()
            .map(|v| {
                v.as_str()
                    .map(str::to_string)
                    .ok_or_else(|| ParamError::new("index", "expected index names"))
            })
            .collect(),
        Some(other) => Err(ParamError::new(
            "index",
            format!("expected an index name or a list of them, got {other}"),
        )),
    }
}

pub fn single_index(p: &Params, ctx: &TrackContext) -> Result<String, ParamError> {
    let names = index_names(p, ctx)?;
    match names.as_slice() {
        [one] => Ok(one.clone()),
        _ => Err(ParamError::new(
            "index",
            "this operation needs exactly one index; name it with `index`",
        )),
    }
}

pub fn indices_to_create(p: &Params, ctx: &TrackContext) -> Result<Vec<IndexSpec>, ParamError> {
    index_names(p, ctx)?
        .into_iter()
        .map(|name| {
            ctx.indices
                .iter()
                .find(|i| i.name == name)
                .cloned()
                .ok_or_else(|| {
                    let hint = crate::suggest::did_you_mean(
                        &name,
                        ctx.indices.iter().map(|i| i.name.as_str()),
                    );
                    ParamError::new(
                        "index",
                        format!("index `{name}` is not declared under `indices`{hint}"),
                    )
                })
        })
        .collect()
}
