//! Pass/fail criteria on a task's merged results, for CI (as k6's thresholds, on exact merged
//! HDR histograms): `service_time.p99 < 5ms`, `error_rate < 0.1%`, `throughput >= 99% of
//! target`. Given per task in the track (`thresholds:`) or with `--threshold`, stored with the
//! race, judged by every report, and a failed one makes `runner race` exit 3.

use crate::metrics::Percentiles;
use crate::units::format_number;
use serde::Serialize;
use std::fmt;
use std::str::FromStr;

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Stat {
    Mean,
    /// A percentile, 50 to 100.
    Percentile(f64),
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Metric {
    ServiceTime(Stat),
    Latency(Stat),
    ErrorRate,
    /// The mean throughput of the complete trials, in the task's unit.
    Throughput,
    /// A vector search's recall@k over all its measured answers, 0 to 1.
    Recall(RecallStat),
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum RecallStat {
    Mean,
    Min,
    /// The 5th percentile: 95% of answers did at least this well.
    P5,
    P50,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Cmp {
    Lt,
    Le,
    Gt,
    Ge,
}

impl Cmp {
    /// Whether `value` compares to `bound` as this says.
    pub fn holds(self, value: f64, bound: f64) -> bool {
        match self {
            Cmp::Lt => value < bound,
            Cmp::Le => value <= bound,
            Cmp::Gt => value > bound,
            Cmp::Ge => value >= bound,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Bound {
    /// A time, in milliseconds.
    Millis(f64),
    /// An error rate, 0 to 1.
    Ratio(f64),
    /// A throughput in the task's unit.
    Rate(f64),
    /// A share of the task's target throughput (0.99 for `99% of target`).
    OfTarget(f64),
}

/// One criterion, kept with the text it was given in (which is how it is stored and shown).
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct Threshold {
    pub metric: Metric,
    pub cmp: Cmp,
    pub bound: Bound,
    text: String,
}

impl From<Threshold> for String {
    fn from(t: Threshold) -> String {
        t.text
    }
}

impl TryFrom<String> for Threshold {
    type Error = String;
    fn try_from(s: String) -> Result<Threshold, String> {
        s.parse()
    }
}

impl fmt::Display for Threshold {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

const METRICS_HELP: &str = "service_time.<p50|p90|p95|p99|p99.9|p99.99|p100|mean>, latency.<...>, error_rate, throughput or recall.<mean|min|p5|p50>";

fn parse_metric(m: &str) -> Result<Metric, String> {
    let stat = |s: &str| -> Result<Stat, String> {
        if s == "mean" {
            return Ok(Stat::Mean);
        }
        // The percentiles every report holds.
        crate::metrics::PERCENTILES
            .iter()
            .find(|(label, _)| *label == s)
            .map(|(_, p)| Stat::Percentile(*p))
            .ok_or_else(|| {
                format!(
                    "`{s}` is not a statistic (mean, p50, p90, p95, p99, p99.9, p99.99 or p100)"
                )
            })
    };
    match m.split_once('.') {
        Some(("service_time", s)) => Ok(Metric::ServiceTime(stat(s)?)),
        Some(("latency", s)) => Ok(Metric::Latency(stat(s)?)),
        None if m == "error_rate" => Ok(Metric::ErrorRate),
        None if m == "throughput" => Ok(Metric::Throughput),
        Some(("recall", s)) => Ok(Metric::Recall(match s {
            "mean" => RecallStat::Mean,
            "min" => RecallStat::Min,
            "p5" => RecallStat::P5,
            "p50" => RecallStat::P50,
            other => {
                return Err(format!(
                    "`{other}` is not a recall statistic (mean, min, p5 or p50)"
                ))
            }
        })),
        _ => Err(format!("unknown metric `{m}` (use {METRICS_HELP})")),
    }
}

fn parse_bound(metric: Metric, v: &str) -> Result<Bound, String> {
    let number = |s: &str| -> Result<f64, String> {
        s.trim()
            .parse::<f64>()
            .ok()
            .filter(|n| n.is_finite() && *n >= 0.0)
            .ok_or_else(|| format!("`{s}` is not a non-negative number"))
    };
    match metric {
        Metric::ServiceTime(_) | Metric::Latency(_) => {
            let has_unit = v.trim_end().ends_with(|c: char| c.is_ascii_alphabetic());
            if !has_unit {
                return Err(format!("`{v}` needs a time unit (e.g. 5ms, 250us, 1.5s)"));
            }
            crate::units::parse_duration(v).map(|d| Bound::Millis(d.as_secs_f64() * 1e3))
        }
        Metric::ErrorRate | Metric::Recall(_) => match v.trim().strip_suffix('%') {
            Some(pct) => Ok(Bound::Ratio(number(pct)? / 100.0)),
            None => Ok(Bound::Ratio(number(v)?)).and_then(|b| match b {
                Bound::Ratio(r) if r <= 1.0 => Ok(b),
                _ => Err(format!(
                    "`{v}`: a rate is from 0 to 1, or a percentage such as 0.1%"
                )),
            }),
        },
        Metric::Throughput => match v.trim().strip_suffix("of target") {
            Some(share) => {
                let pct = share.trim().strip_suffix('%').ok_or_else(|| {
                    format!("`{v}`: write a share of the target as `99% of target`")
                })?;
                Ok(Bound::OfTarget(number(pct)? / 100.0))
            }
            None => Ok(Bound::Rate(number(v)?)),
        },
    }
}

impl FromStr for Threshold {
    type Err = String;
    /// `METRIC OP VALUE`, e.g. `service_time.p99 < 5ms`.
    fn from_str(s: &str) -> Result<Threshold, String> {
        let text = s.trim();
        let at = text.find(['<', '>']).ok_or_else(|| format!("`{text}` is not a threshold: write `METRIC < VALUE` (or <=, >, >=), e.g. `service_time.p99 < 5ms`"))?;
        let (metric, rest) = text.split_at(at);
        let (cmp, value) = match rest {
            r if r.starts_with("<=") => (Cmp::Le, &r[2..]),
            r if r.starts_with(">=") => (Cmp::Ge, &r[2..]),
            r if r.starts_with('<') => (Cmp::Lt, &r[1..]),
            r => (Cmp::Gt, &r[1..]),
        };
        let metric = parse_metric(metric.trim())?;
        let bound = parse_bound(metric, value.trim()).map_err(|e| format!("`{text}`: {e}"))?;
        Ok(Threshold {
            metric,
            cmp,
            bound,
            text: text.to_string(),
        })
    }
}

impl Threshold {
    /// `metric` and `condition` as a track gives them (`service_time.p99: "< 5ms"`).
    pub fn from_track(metric: &str, condition: &str) -> Result<Threshold, String> {
        format!("{metric} {condition}").parse()
    }

    pub fn needs_target(&self) -> bool {
        matches!(self.bound, Bound::OfTarget(_))
    }
}

/// What a task's results are judged on.
pub struct Measured<'a> {
    pub service_time_ms: &'a Percentiles,
    pub latency_ms: &'a Percentiles,
    pub error_rate: f64,
    /// Mean across complete trials; None when there were none, or for one-operation tasks.
    pub throughput: Option<f64>,
    pub target: Option<f64>,
    pub unit: &'a str,
    /// A vector search's recall over all its measured answers.
    pub recall: Option<RecallMeasured>,
}

/// A vector search's recall statistics, 0 to 1.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RecallMeasured {
    pub mean: f64,
    pub min: f64,
    pub p5: f64,
    pub p50: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    Pass,
    Fail,
    /// The results cannot say (too few samples for the percentile, nothing measured): a gate
    /// that cannot be judged does not pass.
    CannotJudge,
}

#[derive(Debug, Clone, Serialize)]
pub struct Judged {
    pub threshold: String,
    /// The measured value, as shown (with its unit); absent when it cannot be judged.
    pub value: Option<String>,
    pub verdict: Verdict,
    /// Why it cannot be judged.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

impl Threshold {
    pub fn judge(&self, m: &Measured) -> Judged {
        let cannot = |reason: String| Judged {
            threshold: self.text.clone(),
            value: None,
            verdict: Verdict::CannotJudge,
            reason: Some(reason),
        };
        let timing = |p: &Percentiles, stat: Stat| -> Result<f64, String> {
            if p.count == 0 {
                return Err("nothing was measured".into());
            }
            match stat {
                Stat::Mean => Ok(p.mean),
                Stat::Percentile(q) => p.at(q).ok_or_else(|| {
                    format!("{} samples do not support p{}", p.count, format_number(q))
                }),
            }
        };
        let (value, shown) = match self.metric {
            Metric::ServiceTime(s) | Metric::Latency(s) => {
                let p = if matches!(self.metric, Metric::ServiceTime(_)) {
                    m.service_time_ms
                } else {
                    m.latency_ms
                };
                match timing(p, s) {
                    Ok(v) => (v, format!("{} ms", crate::units::ms(v))),
                    Err(e) => return cannot(e),
                }
            }
            Metric::ErrorRate => (m.error_rate, format!("{:.3}%", m.error_rate * 100.0)),
            Metric::Recall(stat) => match m.recall {
                Some(r) => {
                    let v = match stat {
                        RecallStat::Mean => r.mean,
                        RecallStat::Min => r.min,
                        RecallStat::P5 => r.p5,
                        RecallStat::P50 => r.p50,
                    };
                    (v, format!("{v:.3}"))
                }
                None => {
                    return cannot("the task measures no recall (only vector-search does)".into())
                }
            },
            Metric::Throughput => match m.throughput {
                Some(t) => (t, format!("{} {}", format_number(t), m.unit)),
                None => {
                    return cannot(
                        "no complete trial with a rate (a one-operation task has a duration)"
                            .into(),
                    )
                }
            },
        };
        let bound = match self.bound {
            Bound::Millis(v) | Bound::Ratio(v) | Bound::Rate(v) => v,
            Bound::OfTarget(share) => match m.target {
                Some(t) => share * t,
                None => return cannot("the task has no target-throughput".into()),
            },
        };
        let pass = self.cmp.holds(value, bound);
        Judged {
            threshold: self.text.clone(),
            value: Some(shown),
            verdict: if pass { Verdict::Pass } else { Verdict::Fail },
            reason: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(count: u64, p99: f64) -> Percentiles {
        Percentiles {
            count,
            mean: 1.0,
            p50: 1.0,
            p90: 2.0,
            p95: 3.0,
            p99,
            p99_9: 9.0,
            p99_99: 9.9,
            p100: 10.0,
            ..Percentiles::default()
        }
    }

    #[test]
    fn thresholds_parse_with_units_and_refuse_what_they_cannot_mean() {
        let t: Threshold = "service_time.p99 < 5ms".parse().unwrap();
        assert_eq!(
            (t.metric, t.cmp, t.bound),
            (
                Metric::ServiceTime(Stat::Percentile(99.0)),
                Cmp::Lt,
                Bound::Millis(5.0)
            )
        );
        assert_eq!(
            "error_rate<0.1%".parse::<Threshold>().unwrap().bound,
            Bound::Ratio(0.001)
        );
        assert_eq!(
            Threshold::from_track("throughput", ">= 99% of target")
                .unwrap()
                .bound,
            Bound::OfTarget(0.99)
        );
        assert_eq!(
            "latency.mean <= 1.5s".parse::<Threshold>().unwrap().bound,
            Bound::Millis(1500.0)
        );
        for bad in [
            "service_time.p99 < 5",
            "service_time.p42 < 5ms",
            "cpu < 5",
            "error_rate < 2",
            "throughput >= 99% of nothing",
            "p99 5ms",
            "throughput > -1",
        ] {
            assert!(bad.parse::<Threshold>().is_err(), "{bad}");
        }
        // Stored as the text it was given in.
        let json = serde_json::to_string(&t).unwrap();
        assert_eq!(json, "\"service_time.p99 < 5ms\"");
        assert_eq!(serde_json::from_str::<Threshold>(&json).unwrap(), t);
    }

    #[test]
    fn a_threshold_passes_fails_or_cannot_be_judged() {
        let (many, few) = (p(1000, 4.0), p(43, 4.0));
        let m = |pcts: &'static Percentiles| Measured {
            service_time_ms: pcts,
            latency_ms: pcts,
            error_rate: 0.002,
            throughput: Some(990.0),
            target: Some(1000.0),
            unit: "ops/s",
            recall: None,
        };
        let many: &'static Percentiles = Box::leak(Box::new(many));
        let few: &'static Percentiles = Box::leak(Box::new(few));
        let judge = |t: &str, pcts| t.parse::<Threshold>().unwrap().judge(&m(pcts)).verdict;
        assert_eq!(judge("service_time.p99 < 5ms", many), Verdict::Pass);
        assert_eq!(judge("service_time.p99 < 3ms", many), Verdict::Fail);
        assert_eq!(
            judge("service_time.p99 < 5ms", few),
            Verdict::CannotJudge,
            "43 samples do not support p99"
        );
        assert_eq!(judge("error_rate < 0.1%", many), Verdict::Fail);
        assert_eq!(judge("throughput >= 99% of target", many), Verdict::Pass);
        assert_eq!(judge("throughput >= 99.5% of target", many), Verdict::Fail);
    }
}
