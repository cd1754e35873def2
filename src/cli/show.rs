//! `runner show`: the report of a stored race.

use super::common::{emit_report, load_race, ReportArgs};
use super::CliError;
use crate::race;
use crate::report;
use crate::results::RaceStore;
use clap::Args;
use std::path::Path;

#[derive(Debug, Args)]
pub struct ShowArgs {
    /// Race id, unique id prefix, `latest` or `latest~N`.
    race: String,
    /// Serve the race on the dashboard's page at ADDR instead (default 127.0.0.1:0; the
    /// address is printed) until Ctrl-C: the view a live race ends on, its report.
    #[arg(long, value_name = "ADDR", num_args = 0..=1, default_missing_value = "127.0.0.1:0")]
    dashboard: Option<std::net::SocketAddr>,
    #[command(flatten)]
    report: ReportArgs,
}

pub fn run(args: ShowArgs, home: &Path) -> Result<u8, CliError> {
    let store = RaceStore::new(home);
    let (mut record, histograms) = load_race(&store, &args.race)?;
    record.status = race::effective_status(&record);
    if let Some(addr) = args.dashboard {
        return serve_stored(addr, &record, &histograms);
    }
    emit_report(
        report::render_race(args.report.report_format, &record, &histograms),
        args.report.report_file.as_deref(),
    )?;
    Ok(0)
}

/// A stored race on the dashboard: its plan, every trial's seconds, and its report.
fn serve_stored(
    addr: std::net::SocketAddr,
    record: &crate::results::RaceRecord,
    histograms: &crate::results::RaceHistograms,
) -> Result<u8, CliError> {
    use crate::driver::LiveSink;
    let hub = crate::dashboard::Hub::new(serde_json::Value::Null, Vec::new());
    let steps = record
        .tasks
        .iter()
        .flat_map(|t| t.trials.iter().map(move |tr| (t, tr)))
        .map(|(t, tr)| {
            let label = format!(
                "{} [{}] trial {}",
                t.slot.task,
                t.sweep_label(),
                tr.trial + 1
            );
            hub.replay(&label, t.slot.throughput_unit.as_str(), &tr.timeline);
            vec![crate::driver::TaskView {
                label,
                unit: t.slot.throughput_unit.as_str(),
                total_operations: None,
                total_units: None,
                planned: None,
                target: t.slot.target_throughput.map(|r| r.0),
            }]
        })
        .collect();
    hub.race_started(
        serde_json::json!({
            "id": record.race_id,
            "track": record.track,
            "challenge": record.challenge,
            "backend": record.backend.kind,
        }),
        steps,
    );
    let source = crate::plot::Source {
        label: &record.race_id,
        race: record,
        histograms,
    };
    hub.finish(crate::plot::report_page(source, None).0);
    let runtime = super::common::runtime()?;
    runtime.block_on(async {
        let stop = tokio_util::sync::CancellationToken::new();
        super::common::cancel_on_signals(&stop, None);
        let bound = crate::dashboard::start(addr, hub, stop.clone())
            .map_err(|e| CliError::Usage(format!("--dashboard {addr}: cannot listen: {e}")))?;
        eprintln!("dashboard: http://{bound}/ (Ctrl-C to stop)");
        stop.cancelled().await;
        Ok(0)
    })
}
