//! A small SVG chart writer: axes with round ticks, lines, points, whiskers and a legend. Text
//! is plain SVG `<text>`, rendered by the viewer's fonts: no font files, no C libraries.

use std::fmt::Write;

pub const COLORS: [&str; 8] = [
    "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf",
];

/// Colours of the page around the lines, light and dark.
const STYLE: &str = "<style>.rc-bg{fill:#fff}text:not([fill]){fill:#24292f}.rc-grid{stroke:#e5e5e5}.rc-tick{stroke:#999}.rc-axis{stroke:#333}.rc-shade{fill:#8c959f;opacity:.18}@media (prefers-color-scheme:dark){.rc-bg{fill:#0d1117}text:not([fill]){fill:#d1d9e0}.rc-grid{stroke:#30363d}.rc-tick{stroke:#6e7681}.rc-axis{stroke:#9198a1}}</style>\n";

const W: f64 = 820.0;
const H: f64 = 420.0;
const LEFT: f64 = 78.0;
const RIGHT: f64 = 230.0;
const TOP: f64 = 40.0;
const BOTTOM: f64 = 62.0;

/// How x values map to the page.
#[derive(Clone)]
pub enum XAxis {
    Linear {
        min: f64,
        max: f64,
        label: String,
    },
    /// Seconds of a trial: linear, ticked at whole seconds only.
    Seconds {
        min: f64,
        max: f64,
        label: String,
    },
    /// Categories at evenly spaced slots.
    Categories {
        names: Vec<String>,
        label: String,
    },
    /// Percentiles drawn as HdrHistogram plots do: x = log10(1 / (1 - q)).
    Percentile {
        max_nines: f64,
    },
}

pub struct Chart {
    title: String,
    x: XAxis,
    /// Logarithmic y from `y_min` (latencies spanning microseconds to seconds).
    log_y: Option<f64>,
    y_max: f64,
    y_label: String,
    body: String,
    legend: Vec<(String, &'static str, bool)>,
}

pub use crate::report::table::esc;

/// A round step giving about `n` ticks up to `max`.
pub fn nice_step(max: f64, n: f64) -> f64 {
    if !(max > 0.0) || !max.is_finite() {
        return 1.0;
    }
    let raw = max / n;
    let mag = 10f64.powf(raw.log10().floor());
    let f = raw / mag;
    mag * if f <= 1.0 {
        1.0
    } else if f <= 2.0 {
        2.0
    } else if f <= 5.0 {
        5.0
    } else {
        10.0
    }
}

fn tick_label(v: f64) -> String {
    if v == 0.0 {
        "0".into()
    } else if v.abs() >= 1e6 {
        format!("{:.1}M", v / 1e6)
    } else if v.abs() >= 1e4 {
        format!("{:.0}k", v / 1e3)
    } else if v.abs() >= 1.0 {
        format!("{}", (v * 100.0).round() / 100.0)
    } else {
        format!("{v:.4}").trim_end_matches('0').to_string()
    }
}

impl Chart {
    pub fn new(title: &str, x: XAxis, y_max: f64, y_label: &str) -> Chart {
        let step = nice_step(y_max, 5.0);
        let y_max = ((y_max / step).ceil() * step).max(step);
        Chart {
            title: title.into(),
            x,
            log_y: None,
            y_max,
            y_label: y_label.into(),
            body: String::new(),
            legend: Vec::new(),
        }
    }

    /// A chart with a logarithmic y axis over whole decades covering `min..max`.
    pub fn new_log_y(title: &str, x: XAxis, min: f64, max: f64, y_label: &str) -> Chart {
        let lo = 10f64.powf(min.max(1e-4).log10().floor());
        let hi = 10f64.powf(max.max(lo * 10.0).log10().ceil());
        Chart {
            title: title.into(),
            x,
            log_y: Some(lo),
            y_max: hi,
            y_label: y_label.into(),
            body: String::new(),
            legend: Vec::new(),
        }
    }

    fn px(&self, x: f64) -> f64 {
        let width = W - LEFT - RIGHT;
        match &self.x {
            XAxis::Linear { min, max, .. } | XAxis::Seconds { min, max, .. } => {
                LEFT + (x - min) / (max - min).max(f64::MIN_POSITIVE) * width
            }
            XAxis::Categories { names, .. } => LEFT + (x + 0.5) / names.len().max(1) as f64 * width,
            XAxis::Percentile { max_nines } => {
                let q = x.clamp(0.0, 1.0 - 10f64.powf(-max_nines));
                LEFT + (1.0 / (1.0 - q)).log10() / max_nines * width
            }
        }
    }

    fn py(&self, y: f64) -> f64 {
        let frac = match self.log_y {
            Some(lo) => (y.max(lo).log10() - lo.log10()) / (self.y_max.log10() - lo.log10()),
            None => y / self.y_max,
        };
        H - BOTTOM - frac.clamp(0.0, 1.05) * (H - TOP - BOTTOM)
    }

    fn y_ticks(&self) -> Vec<f64> {
        match self.log_y {
            Some(lo) => {
                let mut v = lo;
                let mut out = Vec::new();
                while v <= self.y_max * 1.0001 {
                    out.push(v);
                    v *= 10.0;
                }
                out
            }
            None => {
                let step = nice_step(self.y_max, 5.0);
                (0..)
                    .map(|i| i as f64 * step)
                    .take_while(|v| *v <= self.y_max + 1e-9)
                    .collect()
            }
        }
    }

    pub fn line(&mut self, name: &str, color: &'static str, dashed: bool, points: &[(f64, f64)]) {
        if points.is_empty() {
            return;
        }
        let pts: Vec<String> = points
            .iter()
            .map(|(x, y)| format!("{:.1},{:.1}", self.px(*x), self.py(*y)))
            .collect();
        let dash = if dashed {
            " stroke-dasharray=\"6 4\""
        } else {
            ""
        };
        let _ = writeln!(self.body, "<polyline fill=\"none\" stroke=\"{color}\" stroke-width=\"2\"{dash} points=\"{}\"><title>{}</title></polyline>", pts.join(" "), esc(name));
        // A line of one point draws nothing: show the point.
        if let [(x, y)] = points {
            let _ = writeln!(self.body, "<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"3\" fill=\"{color}\"><title>{}</title></circle>", self.px(*x), self.py(*y), esc(name));
        }
        self.legend.push((name.to_string(), color, dashed));
    }

    /// A line left out of the legend (a guide: a segment's mean).
    pub fn line_unlisted(&mut self, color: &'static str, dashed: bool, points: &[(f64, f64)]) {
        let before = self.legend.len();
        self.line("", color, dashed, points);
        self.legend.truncate(before);
    }

    /// A median point with a min–max whisker and the individual values as small dots.
    pub fn spread(
        &mut self,
        x: f64,
        offset_px: f64,
        values: &[f64],
        median: f64,
        color: &'static str,
    ) {
        let cx = self.px(x) + offset_px;
        let (lo, hi) = values
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
                (a.min(*v), b.max(*v))
            });
        if lo.is_finite() {
            let _ = writeln!(self.body, "<line x1=\"{cx:.1}\" x2=\"{cx:.1}\" y1=\"{:.1}\" y2=\"{:.1}\" stroke=\"{color}\" stroke-width=\"2\"/>", self.py(lo), self.py(hi));
            for (a, b) in [(lo, lo), (hi, hi)] {
                let _ = writeln!(self.body, "<line x1=\"{:.1}\" x2=\"{:.1}\" y1=\"{:.1}\" y2=\"{:.1}\" stroke=\"{color}\" stroke-width=\"2\"/>", cx - 6.0, cx + 6.0, self.py(a), self.py(b));
            }
        }
        for v in values {
            let _ = writeln!(
                self.body,
                "<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"2.5\" fill=\"{color}\" opacity=\"0.5\"/>",
                cx + 9.0,
                self.py(*v)
            );
        }
        let _ = writeln!(self.body, "<circle cx=\"{cx:.1}\" cy=\"{:.1}\" r=\"5\" fill=\"{color}\"><title>median {}</title></circle>", self.py(median), tick_label(median));
    }

    /// A dot at (x, y), with a tooltip.
    pub fn dot(&mut self, x: f64, y: f64, radius: f64, color: &'static str, tip: &str) {
        let _ = writeln!(self.body, "<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"{radius}\" fill=\"{color}\"><title>{}</title></circle>", self.px(x), self.py(y), esc(tip));
    }

    /// A dashed horizontal line across the plot at `y` (a limit), labelled at its right end.
    pub fn h_rule(&mut self, y: f64, label: &str, color: &'static str) {
        let py = self.py(y);
        let _ = writeln!(self.body, "<line x1=\"{LEFT}\" x2=\"{:.1}\" y1=\"{py:.1}\" y2=\"{py:.1}\" stroke=\"{color}\" stroke-width=\"1.5\" stroke-dasharray=\"3 3\"/><text x=\"{:.1}\" y=\"{:.1}\" fill=\"{color}\" text-anchor=\"end\">{}</text>", W - RIGHT, W - RIGHT - 4.0, py - 4.0, esc(label));
    }

    /// A dashed vertical line across the plot at `x` (a found value), labelled at its top.
    pub fn v_rule(&mut self, x: f64, label: &str, color: &'static str) {
        let px = self.px(x);
        let _ = writeln!(self.body, "<line x1=\"{px:.1}\" x2=\"{px:.1}\" y1=\"{TOP}\" y2=\"{:.1}\" stroke=\"{color}\" stroke-width=\"1.5\" stroke-dasharray=\"3 3\"/><text x=\"{:.1}\" y=\"{:.1}\" fill=\"{color}\" text-anchor=\"end\">{}</text>", H - BOTTOM, px - 4.0, TOP + 12.0, esc(label));
    }

    /// A shaded band over `x0..x1` (warmup), labelled at its top.
    pub fn shade(&mut self, x0: f64, x1: f64, label: &str) {
        let (a, b) = (self.px(x0), self.px(x1));
        if b - a < 0.5 {
            return;
        }
        let _ = writeln!(self.body, "<rect class=\"rc-shade\" x=\"{a:.1}\" y=\"{TOP}\" width=\"{:.1}\" height=\"{:.1}\"><title>{}</title></rect><text x=\"{:.1}\" y=\"{:.1}\" font-size=\"11\">{}</text>", b - a, H - TOP - BOTTOM, esc(label), a + 4.0, TOP + 12.0, esc(label));
    }

    pub fn legend_entry(&mut self, name: &str, color: &'static str) {
        self.legend.push((name.to_string(), color, false));
    }

    fn x_ticks(&self) -> Vec<(f64, String)> {
        match &self.x {
            XAxis::Linear { min, max, .. } => {
                let step = nice_step(max - min, 6.0);
                let mut v = (min / step).ceil() * step;
                let mut out = Vec::new();
                while v <= *max + 1e-9 {
                    out.push((v, tick_label(v)));
                    v += step;
                }
                out
            }
            XAxis::Seconds { min, max, .. } => {
                let step = nice_step(max - min, 6.0).max(1.0).round();
                let mut v = (min / step).ceil() * step;
                let mut out = Vec::new();
                while v <= *max + 1e-9 {
                    out.push((v, format!("{v:.0}")));
                    v += step;
                }
                out
            }
            XAxis::Categories { names, .. } => names
                .iter()
                .enumerate()
                .map(|(i, n)| (i as f64, n.clone()))
                .collect(),
            XAxis::Percentile { max_nines } => (0..=(*max_nines as i32))
                .map(|k| {
                    let q = 1.0 - 10f64.powi(-k);
                    let label = match k {
                        0 => "0%".to_string(),
                        1 => "90%".to_string(),
                        k => format!("{}%", 100.0 - 10f64.powi(2 - k)),
                    };
                    (q, label)
                })
                .collect(),
        }
    }

    pub fn render(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(s, "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {W} {H}\" width=\"{W}\" height=\"{H}\" font-family=\"sans-serif\" font-size=\"12\">");
        // Light by default, dark where the viewer prefers it: inline, so that a chart opened
        // on its own and one inside report.html look the same.
        s.push_str(STYLE);
        let _ = writeln!(s, "<rect class=\"rc-bg\" width=\"100%\" height=\"100%\"/>");
        let _ = writeln!(
            s,
            "<text x=\"{}\" y=\"22\" font-size=\"15\" font-weight=\"bold\">{}</text>",
            LEFT,
            esc(&self.title)
        );
        let (x0, x1, y0, y1) = (LEFT, W - RIGHT, H - BOTTOM, TOP);
        for v in self.y_ticks() {
            let y = self.py(v);
            let _ = writeln!(s, "<line x1=\"{x0}\" x2=\"{x1}\" y1=\"{y:.1}\" y2=\"{y:.1}\" class=\"rc-grid\"/><text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>", x0 - 6.0, y + 4.0, tick_label(v));
        }
        for (x, label) in self.x_ticks() {
            let px = self.px(x);
            let _ = writeln!(s, "<line x1=\"{px:.1}\" x2=\"{px:.1}\" y1=\"{y0}\" y2=\"{:.1}\" class=\"rc-tick\"/><text x=\"{px:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>", y0 + 5.0, y0 + 19.0, esc(&label));
        }
        let x_label = match &self.x {
            XAxis::Linear { label, .. }
            | XAxis::Seconds { label, .. }
            | XAxis::Categories { label, .. } => label.clone(),
            XAxis::Percentile { .. } => "percentile (log scale of 1 / (1 − q))".into(),
        };
        let _ = writeln!(s, "<line x1=\"{x0}\" x2=\"{x1}\" y1=\"{y0}\" y2=\"{y0}\" class=\"rc-axis\"/><line x1=\"{x0}\" x2=\"{x0}\" y1=\"{y0}\" y2=\"{y1}\" class=\"rc-axis\"/>");
        let _ = writeln!(
            s,
            "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>",
            (x0 + x1) / 2.0,
            H - 18.0,
            esc(&x_label)
        );
        let _ = writeln!(
            s,
            "<text transform=\"translate(18 {:.1}) rotate(-90)\" text-anchor=\"middle\">{}</text>",
            (y0 + y1) / 2.0,
            esc(&self.y_label)
        );
        s.push_str(&self.body);
        for (i, (name, color, dashed)) in self.legend.iter().enumerate() {
            let y = TOP + 10.0 + i as f64 * 18.0;
            let dash = if *dashed {
                " stroke-dasharray=\"6 4\""
            } else {
                ""
            };
            let _ = writeln!(s, "<line x1=\"{:.1}\" x2=\"{:.1}\" y1=\"{y:.1}\" y2=\"{y:.1}\" stroke=\"{color}\" stroke-width=\"3\"{dash}/><text x=\"{:.1}\" y=\"{:.1}\">{}</text>", x1 + 14.0, x1 + 34.0, x1 + 40.0, y + 4.0, esc(name));
        }
        s.push_str("</svg>\n");
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_are_round() {
        assert_eq!(nice_step(97.0, 5.0), 20.0);
        assert_eq!(nice_step(0.9, 5.0), 0.2);
        assert_eq!(nice_step(12_000.0, 5.0), 5000.0);
    }

    #[test]
    fn renders_escaped_text_and_lines() {
        let mut c = Chart::new(
            "a <b>",
            XAxis::Linear {
                min: 0.0,
                max: 10.0,
                label: "s".into(),
            },
            5.0,
            "ms",
        );
        c.line("l&1", COLORS[0], false, &[(0.0, 1.0), (10.0, 4.0)]);
        let svg = c.render();
        assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
        assert!(
            svg.contains("a &lt;b&gt;") && svg.contains("<polyline") && svg.contains("l&amp;1")
        );
    }
}
