//! A trend's series as charts: the value of each race in order, the mean of each segment
//! between change points, and the change points marked.

use super::svg::{Chart, XAxis, COLORS};
use super::{file_name, Plot};
use crate::trend::{Direction, Trend};

/// One chart per series (task, sweep point, metric).
pub fn trend_charts(t: &Trend) -> Vec<Plot> {
    t.series
        .iter()
        .map(|s| {
            let n = s.points.len();
            let points: Vec<(f64, f64)> = s
                .points
                .iter()
                .enumerate()
                .map(|(i, p)| (i as f64 + 1.0, p.value))
                .collect();
            let y_max = points.iter().map(|p| p.1).fold(0.0, f64::max);
            let title = format!("{} [{}] {}: {} races", s.task, s.sweep, s.metric, n);
            let mut chart = Chart::new(
                &title,
                XAxis::Linear {
                    min: 1.0,
                    max: n.max(2) as f64,
                    label: "race (oldest first)".into(),
                },
                y_max * 1.15,
                &s.unit,
            );
            chart.line(s.metric, COLORS[0], false, &points);
            // Each segment's mean, between the change points around it.
            let mut bounds: Vec<usize> = std::iter::once(0)
                .chain(s.changes.iter().map(|c| c.index))
                .collect();
            bounds.push(n);
            for w in bounds.windows(2) {
                let seg = &points[w[0]..w[1]];
                if seg.is_empty() {
                    continue;
                }
                let mean = seg.iter().map(|p| p.1).sum::<f64>() / seg.len() as f64;
                chart.line_unlisted(
                    COLORS[2],
                    true,
                    &[(seg[0].0, mean), (seg[seg.len() - 1].0, mean)],
                );
            }
            for c in &s.changes {
                let color = match c.direction {
                    Direction::Regression => "#d62728",
                    Direction::Improvement => "#2ca02c",
                    Direction::WithinNoise => "#999999",
                };
                chart.v_rule(
                    c.index as f64 + 0.5,
                    &format!("{:+.1}%", c.change_percent),
                    color,
                );
            }
            let file = file_name(
                &format!("trend-{}", s.metric),
                &format!("{}-{}", s.task, s.sweep),
            );
            Plot {
                task: s.task.clone(),
                file,
                title,
                svg: chart.render(),
            }
        })
        .collect()
}
