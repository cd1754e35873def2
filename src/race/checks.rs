//! What is checked of a planned race before it starts: that the backend can run every
//! operation (or, with `--on-unsupported skip`, which tasks are left out), and that a sharded
//! race drives one system.

use super::RaceError;
use crate::backend::BackendKind;
use crate::plan::{self, Plan};

/// Operations the backend cannot run fail here, before anything is measured, not in every
/// trial; with `--on-unsupported skip` their tasks are left out instead, each named in what
/// the returned deviations say.
pub(super) fn check_supported(
    kind: BackendKind,
    plan: &mut Plan,
    on_unsupported: crate::rally::OnUnsupported,
) -> Result<Vec<String>, RaceError> {
    let mut skipped: Vec<String> = Vec::new();
    for step in &mut plan.steps {
        let (plan::Step::Run { leaves }
        | plan::Step::Reset {
            operations: leaves, ..
        }) = step;
        let mut refused = None;
        leaves.retain(|leaf| {
            let Err(why) = kind.check(&leaf.spec) else {
                return true;
            };
            let what = format!(
                "operation `{}` ({}) of task `{}` cannot run on --backend {}: {why}",
                leaf.operation.name,
                leaf.op_type.name,
                leaf.task,
                kind.as_str()
            );
            match on_unsupported {
                crate::rally::OnUnsupported::Fail => {
                    refused.get_or_insert(what);
                }
                crate::rally::OnUnsupported::Skip => {
                    let note = format!("{what}; skipped (--on-unsupported skip)");
                    if !skipped.contains(&note) {
                        skipped.push(note);
                    }
                }
            }
            false
        });
        if let Some(what) = refused {
            return Err(RaceError::Unsupported(what));
        }
    }
    plan.steps.retain(|step| {
        let (plan::Step::Run { leaves }
        | plan::Step::Reset {
            operations: leaves, ..
        }) = step;
        !leaves.is_empty()
    });
    Ok(skipped)
}

/// The shards of a race drive one system: an in-process engine is one per shard, so a
/// sharded race on it would race N small systems and merge them as one. Only a track that
/// does nothing but sleep (the driver alone, as in a simulation) may shard on it.
pub(super) fn check_shardable(kind: BackendKind, plan: &Plan) -> Result<(), RaceError> {
    if kind != BackendKind::Embedded {
        return Ok(());
    }
    let leaves = plan.steps.iter().flat_map(|step| match step {
        plan::Step::Run { leaves }
        | plan::Step::Reset {
            operations: leaves, ..
        } => leaves.iter(),
    });
    for leaf in leaves {
        if !matches!(leaf.spec, crate::ops::OpSpec::Sleep(_)) {
            return Err(RaceError::Unsupported(format!(
                "task `{}` cannot run sharded on --backend embedded: every shard would race its \
                 own in-process engine. Serve one engine (`runner serve`) and race it with \
                 --backend elasticsearch --target-hosts, or race a redis or Elasticsearch server",
                leaf.task
            )));
        }
    }
    Ok(())
}
