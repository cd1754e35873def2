//! Per-request samples (`race --keep-samples`): each request's intended start, service time and
//! latency, as Rally keeps them for its metrics store's `latency` and `service_time` documents.
//! Histograms answer every percentile; samples answer "when": a latency spike at second 41.
//!
//! A recorder's buffer is allocated when the trial starts and never grows: past its capacity,
//! reservoir sampling (Vitter's algorithm R) keeps a uniform sample of every request seen, so
//! memory is bounded whatever the rate, and the record says how many were seen and kept.

use std::time::Duration;

/// One request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sample {
    /// When the schedule wanted it to start, from the trial's time zero.
    pub intended_us: u64,
    pub service_us: u64,
    pub latency_us: u64,
    pub ok: bool,
    pub warmup: bool,
}

/// One recorder's samples: at most `capacity`, uniform over all it was offered.
pub struct Reservoir {
    kept: Vec<Sample>,
    capacity: usize,
    seen: u64,
    /// xorshift64 state: which kept sample a late request replaces.
    rng: u64,
}

impl Reservoir {
    /// A reservoir of `capacity` samples (allocated now), its draws seeded by `seed`.
    pub fn new(capacity: usize, seed: u64) -> Reservoir {
        Reservoir {
            kept: Vec::with_capacity(capacity),
            capacity,
            seen: 0,
            rng: seed | 1,
        }
    }

    /// Offers one request: kept while there is room, then in place of a uniformly drawn kept
    /// one with probability capacity/seen. No allocation.
    #[inline]
    pub fn offer(&mut self, sample: Sample) {
        self.seen += 1;
        if self.kept.len() < self.capacity {
            self.kept.push(sample);
            return;
        }
        self.rng ^= self.rng << 13;
        self.rng ^= self.rng >> 7;
        self.rng ^= self.rng << 17;
        let slot = self.rng % self.seen;
        if let Some(s) = self.kept.get_mut(slot as usize) {
            *s = sample;
        }
    }
}

/// The samples of one trial, all recorders together, in order of intended start.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct TrialSamples {
    pub samples: Vec<Sample>,
    /// Requests offered (measured and warmup); more than kept when the buffers filled.
    pub seen: u64,
}

impl TrialSamples {
    pub fn merge(parts: impl IntoIterator<Item = Reservoir>) -> TrialSamples {
        let mut all = TrialSamples::default();
        for p in parts {
            all.seen += p.seen;
            all.samples.extend(p.kept);
        }
        all.samples.sort_by_key(|s| s.intended_us);
        all
    }

    /// The samples as CSV (`intended_us,service_us,latency_us,ok,warmup`), the stored form.
    pub fn to_csv(&self) -> String {
        let mut out = String::with_capacity(32 * self.samples.len() + 64);
        out.push_str(CSV_HEADER);
        out.push('\n');
        for s in &self.samples {
            use std::fmt::Write;
            let _ = writeln!(
                out,
                "{},{},{},{},{}",
                s.intended_us, s.service_us, s.latency_us, s.ok as u8, s.warmup as u8
            );
        }
        out
    }

    /// Reads what [`TrialSamples::to_csv`] wrote; `seen` comes from the trial's record.
    pub fn from_csv(text: &str, seen: u64) -> Result<TrialSamples, String> {
        let mut lines = text.lines().enumerate();
        match lines.next() {
            Some((_, h)) if h == CSV_HEADER => {}
            _ => return Err(format!("the first line is not `{CSV_HEADER}`")),
        }
        let mut samples = Vec::new();
        for (n, line) in lines {
            let bad = || format!("line {}: `{line}` is not {CSV_HEADER}", n + 1);
            let f: Vec<&str> = line.split(',').collect();
            let [a, b, c, d, e] = f.as_slice() else {
                return Err(bad());
            };
            let num = |v: &str| v.parse::<u64>().map_err(|_| bad());
            let flag = |v: &str| match v {
                "0" => Ok(false),
                "1" => Ok(true),
                _ => Err(bad()),
            };
            samples.push(Sample {
                intended_us: num(a)?,
                service_us: num(b)?,
                latency_us: num(c)?,
                ok: flag(d)?,
                warmup: flag(e)?,
            });
        }
        Ok(TrialSamples { samples, seen })
    }
}

const CSV_HEADER: &str = "intended_us,service_us,latency_us,ok,warmup";

/// A duration in whole microseconds, saturating.
pub fn micros(d: Duration) -> u64 {
    d.as_micros().min(u64::MAX as u128) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(i: u64) -> Sample {
        Sample {
            intended_us: i,
            service_us: i * 2,
            latency_us: i * 3,
            ok: i % 7 != 0,
            warmup: i < 3,
        }
    }

    #[test]
    fn keeps_all_until_full_then_a_uniform_sample() {
        let mut r = Reservoir::new(1_000, 42);
        for i in 0..1_000 {
            r.offer(sample(i));
        }
        assert_eq!(r.kept.len(), 1_000);
        let cap = r.kept.capacity();
        for i in 1_000..100_000 {
            r.offer(sample(i));
        }
        // Never grew, and every part of the stream is represented about equally: each tenth of
        // the 100,000 requests holds about 100 of the 1,000 kept.
        assert_eq!(r.kept.capacity(), cap);
        assert_eq!(r.seen, 100_000);
        let mut tenths = [0u32; 10];
        for s in &r.kept {
            tenths[(s.intended_us / 10_000) as usize] += 1;
        }
        for (i, n) in tenths.iter().enumerate() {
            assert!(
                (50..=150).contains(n),
                "tenth {i} kept {n} of 1,000: {tenths:?}"
            );
        }
    }

    #[test]
    fn merges_in_time_order_and_round_trips_as_csv() {
        let (mut a, mut b) = (Reservoir::new(10, 1), Reservoir::new(10, 2));
        for i in (0..10).step_by(2) {
            a.offer(sample(i));
            b.offer(sample(i + 1));
        }
        let merged = TrialSamples::merge([a, b]);
        assert_eq!(merged.seen, 10);
        let order: Vec<u64> = merged.samples.iter().map(|s| s.intended_us).collect();
        assert_eq!(order, (0..10).collect::<Vec<_>>());
        let back = TrialSamples::from_csv(&merged.to_csv(), 10).unwrap();
        assert_eq!(back, merged);
        let e = TrialSamples::from_csv("intended_us,service_us,latency_us,ok,warmup\n1,2,x,1,0", 1)
            .unwrap_err();
        assert!(e.contains("line 2"), "{e}");
        assert!(TrialSamples::from_csv("nope", 0).is_err());
    }
}
