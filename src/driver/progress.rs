//! Progress bars on a terminal (hidden otherwise, or with --quiet), fed from atomic counters
//! by a ticker so that clients never touch the terminal.

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use super::client::Shared;

/// The bars of one step: parallel leaves share one terminal area.
pub struct Bars {
    multi: Option<MultiProgress>,
}

impl Bars {
    pub fn new(visible: bool) -> Bars {
        Bars {
            multi: visible.then(|| MultiProgress::with_draw_target(ProgressDrawTarget::stderr())),
        }
    }
}

pub struct Progress {
    bar: ProgressBar,
    ticker: Option<tokio::task::JoinHandle<()>>,
}

impl Progress {
    pub fn start(bars: &Bars, label: &str, total: Option<u64>, shared: Arc<Shared>) -> Progress {
        let visible = bars.multi.is_some();
        let bar = match &bars.multi {
            None => ProgressBar::hidden(),
            Some(multi) => multi.add(ProgressBar::with_draw_target(
                total,
                ProgressDrawTarget::hidden(),
            )),
        };
        let template = if total.is_some() {
            "{spinner} {msg} [{bar:30}] {pos}/{len} ops ({per_sec}, {elapsed})"
        } else {
            "{spinner} {msg} {pos} ops ({per_sec}, {elapsed})"
        };
        bar.set_style(
            ProgressStyle::with_template(template)
                .unwrap_or_else(|_| ProgressStyle::default_bar())
                .progress_chars("=> "),
        );
        bar.set_message(label.to_string());
        let ticker = visible.then(|| {
            let bar = bar.clone();
            tokio::spawn(async move {
                loop {
                    bar.set_position(shared.progress.load(Ordering::Relaxed));
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
            })
        });
        Progress { bar, ticker }
    }

    pub fn finish(self) {
        if let Some(t) = self.ticker {
            t.abort();
        }
        self.bar.finish_and_clear();
    }
}
