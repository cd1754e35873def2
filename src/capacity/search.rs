//! The search for the highest rate that holds the SLO, as a state machine the driver feeds
//! with each probe's outcome (and a test with a simulated system). First a calibration: the
//! clients unthrottled show the most they reach (an open model with the same clients cannot
//! sustain more). Then growth from half that (or `probe-start`), doubling while probes hold;
//! halving when the first one fails; then bisection of the bracket (highest held, lowest
//! failed) until it is within the precision. A probe within noise of a limit is run again,
//! up to three runs at that rate, and the majority decides (a tie goes to the last run that
//! was sure), so the answer does not flip from run to run.

use super::{Conclusion, Phase, ProbeVerdict};

/// Most runs of one rate whose verdict stays within noise.
pub const RUNS_PER_RATE: usize = 3;
/// A search that must go this far below its first rate has found no rate that holds.
const LOWEST_SHARE: f64 = 1.0 / 1024.0;
/// The growth's first step past the calibrated rate: a little above it.
const CALIBRATED_MARGIN: f64 = 1.1;

/// What one probe came to, as the search needs it.
#[derive(Debug, Clone, Copy)]
pub struct Outcome {
    pub verdict: ProbeVerdict,
    pub uncertain: bool,
    /// Operations per second achieved.
    pub achieved: f64,
    /// Why the driver, not the system, could not keep this probe's schedule (when it could not).
    pub driver_limited: bool,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Next {
    /// Run a probe at this rate (None: unthrottled, to calibrate).
    Probe {
        rate: Option<f64>,
        phase: Phase,
    },
    Done(Conclusion),
}

/// A rate whose verdict is not yet final.
struct Deciding {
    rate: f64,
    phase: Phase,
    /// Each run's verdict, and whether it was sure.
    runs: Vec<(ProbeVerdict, bool)>,
}

pub struct Search {
    precision: f64,
    max_probes: u32,
    start: Option<f64>,
    probes: u32,
    calibrated: Option<f64>,
    held: Option<f64>,
    failed: Option<f64>,
    /// The rate being decided and the verdicts of its runs so far (with their certainty).
    current: Option<Deciding>,
    done: Option<Conclusion>,
}

impl Search {
    pub fn new(precision: f64, max_probes: u32, start: Option<f64>) -> Search {
        Search {
            precision,
            max_probes,
            start,
            probes: 0,
            calibrated: None,
            held: None,
            failed: None,
            current: None,
            done: None,
        }
    }

    /// The highest rate held and the lowest failed, so far.
    pub fn bracket(&self) -> (Option<f64>, Option<f64>) {
        (self.held, self.failed)
    }

    pub fn calibrated(&self) -> Option<f64> {
        self.calibrated
    }

    pub fn next_step(&mut self) -> Next {
        if let Some(done) = self.done {
            return Next::Done(done);
        }
        if self.probes >= self.max_probes {
            return self.finish(Conclusion::MaxProbes);
        }
        if let Some(d) = &self.current {
            return Next::Probe {
                rate: Some(d.rate),
                phase: if d.runs.is_empty() {
                    d.phase
                } else {
                    Phase::Repeat
                },
            };
        }
        let first = self.start.or(self.calibrated.map(|c| c / 2.0));
        let Some(first) = first else {
            return Next::Probe {
                rate: None,
                phase: Phase::Calibrate,
            };
        };
        let (rate, phase) = match (self.held, self.failed) {
            (None, None) => (first, Phase::Grow),
            (Some(h), None) => (self.grown(h), Phase::Grow),
            (None, Some(f)) if f / 2.0 < first * LOWEST_SHARE => {
                return self.finish(Conclusion::NoRateHeld)
            }
            (None, Some(f)) => (f / 2.0, Phase::Lower),
            (Some(h), Some(f)) if (f - h) / f <= self.precision => {
                return self.finish(Conclusion::Found)
            }
            (Some(h), Some(f)) => ((h + f) / 2.0, Phase::Bisect),
        };
        let rate = rate.min(crate::units::OpsPerSec::MAX);
        self.current = Some(Deciding {
            rate,
            phase,
            runs: Vec::new(),
        });
        Next::Probe {
            rate: Some(rate),
            phase,
        }
    }

    /// Double, but stop first just above the calibrated rate: the open model cannot sustain
    /// more than the same clients reached unthrottled, so the doubling would be wasted.
    fn grown(&self, held: f64) -> f64 {
        match self.calibrated.map(|c| c * CALIBRATED_MARGIN) {
            Some(ceiling) if held < ceiling && held * 2.0 > ceiling => ceiling,
            _ => held * 2.0,
        }
    }

    fn finish(&mut self, c: Conclusion) -> Next {
        self.done = Some(c);
        Next::Done(c)
    }

    /// The search stops (Ctrl-C, a failed probe, the driver's limit).
    pub fn stop(&mut self, c: Conclusion) {
        self.done.get_or_insert(c);
    }

    /// Takes the outcome of the probe `next_step` asked for; returns the rate's final verdict
    /// once it has one.
    pub fn record(&mut self, o: Outcome) -> Option<ProbeVerdict> {
        self.probes += 1;
        let Some(mut d) = self.current.take() else {
            // The calibration: nothing achieved leaves nothing to search from.
            self.calibrated = Some(o.achieved);
            if o.achieved <= 0.0 && self.start.is_none() {
                self.stop(Conclusion::NothingMeasured);
            }
            return None;
        };
        d.runs.push((o.verdict, !o.uncertain));
        if o.uncertain && d.runs.len() < RUNS_PER_RATE && self.probes < self.max_probes {
            self.current = Some(d);
            return None;
        }
        let (rate, verdict) = (d.rate, majority(&d.runs));
        match verdict {
            ProbeVerdict::Held => self.held = Some(self.held.map_or(rate, |h| h.max(rate))),
            ProbeVerdict::Failed => {
                self.failed = Some(self.failed.map_or(rate, |f| f.min(rate)));
                if o.driver_limited {
                    self.stop(Conclusion::DriverLimited);
                }
            }
        }
        Some(verdict)
    }
}

/// The verdict most runs gave; a tie goes to the last run that was sure (else: failed).
fn majority(runs: &[(ProbeVerdict, bool)]) -> ProbeVerdict {
    let held = runs.iter().filter(|r| r.0 == ProbeVerdict::Held).count();
    let failed = runs.len() - held;
    match held.cmp(&failed) {
        std::cmp::Ordering::Greater => ProbeVerdict::Held,
        std::cmp::Ordering::Less => ProbeVerdict::Failed,
        std::cmp::Ordering::Equal => runs
            .iter()
            .rev()
            .find(|r| r.1)
            .map_or(ProbeVerdict::Failed, |r| r.0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A system that holds every rate up to `capacity` (its clients' limit is `closed`), with
    /// verdicts in doubt within `noise` of the capacity, where they come out as `flaky` says.
    fn run(
        capacity: f64,
        closed: f64,
        noise: f64,
        mut flaky: impl FnMut(f64) -> bool,
        s: &mut Search,
    ) -> (Conclusion, Vec<(Option<f64>, Phase)>) {
        let mut probes = Vec::new();
        loop {
            match s.next_step() {
                Next::Done(c) => return (c, probes),
                Next::Probe { rate, phase } => {
                    probes.push((rate, phase));
                    let o = match rate {
                        None => Outcome {
                            verdict: ProbeVerdict::Held,
                            uncertain: false,
                            achieved: closed,
                            driver_limited: false,
                        },
                        Some(r) => {
                            let near = noise > 0.0 && (r - capacity).abs() <= noise * capacity;
                            let held = if near { flaky(r) } else { r <= capacity };
                            Outcome {
                                verdict: if held {
                                    ProbeVerdict::Held
                                } else {
                                    ProbeVerdict::Failed
                                },
                                uncertain: near,
                                achieved: r.min(closed),
                                driver_limited: false,
                            }
                        }
                    };
                    s.record(o);
                }
            }
        }
    }

    #[test]
    fn finds_the_capacity_within_the_precision_and_never_above() {
        // 4 clients of a 10 ms sleep: 400 ops/s at most, closed or open.
        let mut s = Search::new(0.02, 40, None);
        let (c, probes) = run(400.0, 400.0, 0.0, |_| true, &mut s);
        assert_eq!(c, Conclusion::Found);
        let (held, failed) = s.bracket();
        let (held, failed) = (held.unwrap(), failed.unwrap());
        assert!((400.0 * 0.98..=400.0).contains(&held), "{held} {probes:?}");
        assert!((failed - held) / failed <= 0.02);
        assert_eq!(probes[0], (None, Phase::Calibrate));
        assert_eq!(probes[1], (Some(200.0), Phase::Grow));
        assert_eq!(probes[2], (Some(400.0), Phase::Grow));
        // Past the unthrottled rate the growth stops just above it, not at twice it.
        assert_eq!(probes[3].1, Phase::Grow);
        assert!((probes[3].0.unwrap() - 440.0).abs() < 1e-9, "{probes:?}");
        assert!(probes.len() <= 8, "{probes:?}");
    }

    #[test]
    fn a_first_rate_that_fails_is_halved_until_one_holds() {
        let mut s = Search::new(0.05, 40, Some(1000.0));
        let (c, probes) = run(100.0, 1e6, 0.0, |_| true, &mut s);
        assert_eq!(c, Conclusion::Found);
        assert_eq!(probes[0], (Some(1000.0), Phase::Grow));
        assert_eq!(probes[1], (Some(500.0), Phase::Lower));
        assert!(s.bracket().0.unwrap() <= 100.0);
        // Nothing holds at all: the search gives up a thousandfold below its start.
        let mut s = Search::new(0.05, 40, Some(1000.0));
        let (c, _) = run(0.0, 1e6, 0.0, |_| true, &mut s);
        assert_eq!(c, Conclusion::NoRateHeld);
    }

    #[test]
    fn verdicts_within_noise_are_repeated_and_decided_by_majority() {
        // Near the capacity the verdict alternates held, failed, held: three runs, held.
        let mut flips = [true, false, true].into_iter().cycle();
        let mut s = Search::new(0.02, 100, Some(390.0));
        let (c, probes) = run(400.0, 1e6, 0.05, |_| flips.next().unwrap(), &mut s);
        assert_eq!(c, Conclusion::Found);
        assert!(probes.iter().any(|p| p.1 == Phase::Repeat), "{probes:?}");
        // No rate is ever run more than three times.
        let mut counts = std::collections::BTreeMap::new();
        for (rate, _) in &probes {
            *counts.entry(rate.map(|r| r.to_bits())).or_insert(0) += 1;
        }
        assert!(counts.values().all(|n| *n <= RUNS_PER_RATE), "{probes:?}");
    }

    #[test]
    fn a_driver_that_cannot_keep_up_stops_the_search() {
        let mut s = Search::new(0.02, 40, Some(100.0));
        assert!(matches!(s.next_step(), Next::Probe { .. }));
        s.record(Outcome {
            verdict: ProbeVerdict::Failed,
            uncertain: false,
            achieved: 50.0,
            driver_limited: true,
        });
        assert_eq!(s.next_step(), Next::Done(Conclusion::DriverLimited));
    }

    #[test]
    fn the_probe_budget_is_kept() {
        let mut s = Search::new(0.0001, 5, None);
        let (c, probes) = run(400.0, 400.0, 0.0, |_| true, &mut s);
        assert_eq!(c, Conclusion::MaxProbes);
        assert_eq!(probes.len(), 5);
    }
}
