//! `runner merge`: the shard races of a race run by several load drivers, merged exactly.

use super::common::{emit_report, ReportArgs};
use super::{race_exit_code, CliError};
use crate::report;
use crate::results::{RaceStatus, RaceStore};
use crate::shard::merge::{self, MergeContext, ShardRace};
use clap::Args;
use std::path::Path;

#[derive(Debug, Args)]
pub struct MergeArgs {
    /// The race id (as each shard printed it).
    race: String,
    #[command(flatten)]
    report: ReportArgs,
}

pub fn run(args: MergeArgs, home: &Path) -> Result<u8, CliError> {
    let (race, args) = (args.race.as_str(), &args.report);
    let store = RaceStore::new(home);
    let id = if store.race_dir(race).is_dir() && !race.is_empty() {
        race.to_string()
    } else {
        store.resolve(race)?
    };
    let ids = store.shard_ids(&id);
    if ids.is_empty() {
        return Err(CliError::Usage(format!(
            "no shard races under {}: copy each load driver's races/{id}/shard-<i> there first",
            store.race_dir(&id).display()
        )));
    }
    let mut shards = Vec::new();
    let mut ctx = MergeContext::default();
    for shard_id in &ids {
        let (mut race, histograms, unreadable) = store.load_raw(shard_id)?;
        race.status = crate::race::effective_status(&race);
        let index = race.shard.as_ref().map_or(0, |s| s.index);
        if let Some(problem) = unreadable.first() {
            ctx.missing.insert(
                index,
                format!("its stored race cannot be read whole: {problem}"),
            );
            continue;
        }
        if matches!(race.status, RaceStatus::Running | RaceStatus::Incomplete) {
            // A shard killed mid-race: its trials stop part-way, so its numbers are not
            // merged into the others' whole ones.
            ctx.missing
                .insert(index, "its process was killed before its race ended".into());
            continue;
        }
        shards.push(ShardRace {
            host: race.host.hostname.clone(),
            race,
            histograms,
        });
    }
    let (record, histograms) =
        merge::merge(&id, shards, ctx).map_err(|e| CliError::Usage(format!("race {id}: {e}")))?;
    store.finish(&record, &histograms, None)?;
    let (record, decoded) = store.load(&id)?;
    emit_report(
        report::render_race(args.report_format, &record, &decoded),
        args.report_file.as_deref(),
    )?;
    let merged = record.shards.as_ref().map_or(0, |s| s.merged.len());
    eprintln!(
        "merged {merged} shard{} into race {id}, stored in {}",
        if merged == 1 { "" } else { "s" },
        store.race_dir(&id).display()
    );
    let outcome = crate::race::RaceOutcome {
        dir: store.race_dir(&id),
        stored: (record, histograms),
    };
    Ok(race_exit_code(outcome.ended()))
}
