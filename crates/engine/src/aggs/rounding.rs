//! Elasticsearch's date roundings (its `Rounding`): a date_histogram's or
//! auto_date_histogram's bucket key for a date, by a calendar unit or a fixed interval, in a
//! time zone, shifted by an `offset`. Keys are rounded on the wall clock and mapped back to
//! the instant as Elasticsearch maps them around daylight-saving transitions:
//! - a day or longer starts at the first instant of its local midnight (or, where the clock
//!   skipped midnight, at the transition);
//! - a shorter unit or a fixed interval starts at the latest instant not after the date whose
//!   clock reads the rounded time, never rounding back across a transition (a date after one
//!   rounds as the transition's previous millisecond does when its rounded time lies before it).
//!
//! So a `1d` calendar bucket holds 23 or 25 hours across a transition, a `12h` fixed one 11 or
//! 13, and the hour the clock repeats in autumn is two `1h` buckets.

use crate::mapping::calendar::truncate;
pub use crate::mapping::calendar::Unit;
use crate::zone::{Instants, Zone};

const HOUR: i64 = 3_600_000;
/// Roundings back across transitions, at most (a zone has at most a few per year).
const MAX_TRANSITION_STEPS: usize = 64;

/// What a bucket spans.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Step {
    Calendar(Unit),
    /// A fixed length in milliseconds.
    Fixed(i64),
}

#[derive(Debug, Clone)]
pub struct Rounding {
    pub step: Step,
    pub zone: Zone,
    /// Milliseconds the buckets are shifted by (`offset`).
    pub offset: i64,
}

impl Rounding {
    pub fn new(step: Step, zone: Zone, offset: i64) -> Rounding {
        Rounding { step, zone, offset }
    }

    /// The key of the bucket holding `utc` (epoch ms).
    pub fn round(&self, utc: i64) -> i64 {
        let t = utc.saturating_sub(self.offset);
        let key = match self.step {
            Step::Calendar(u) if u >= Unit::Day => self.to_midnight(t, u),
            Step::Calendar(u) => {
                let len = match u {
                    Unit::Second => 1000,
                    Unit::Minute => 60_000,
                    _ => HOUR,
                };
                self.latest_not_after(t, len, false)
            }
            Step::Fixed(len) => self.latest_not_after(t, len, true),
        };
        key.saturating_add(self.offset)
    }

    /// The key of the bucket after the one keyed `key`.
    pub fn next(&self, key: i64) -> i64 {
        let (short, _) = self.span();
        let mut probe = key.saturating_add(short.max(1));
        let mut r = self.round(probe);
        let nudge = (short / 8).max(1000);
        let mut tries = 0;
        while r <= key && tries < 10_000 {
            probe = probe.saturating_add(nudge);
            r = self.round(probe);
            tries += 1;
        }
        if r > key && self.round(r - 1) != key {
            // A bucket shorter than the probe's step lies between: the first instant past
            // `key`'s bucket starts it.
            let (mut lo, mut hi) = (key, r - 1);
            while hi - lo > 1 {
                let mid = lo + (hi - lo) / 2;
                if self.round(mid) == key {
                    lo = mid;
                } else {
                    hi = mid;
                }
            }
            return self.round(hi);
        }
        r
    }

    /// The keys from `min`'s bucket to `max`'s; Err with a count past `cap` when there are more.
    pub fn keys(&self, min: i64, max: i64, cap: usize) -> Result<Vec<i64>, usize> {
        let last = self.round(max);
        let mut key = self.round(min);
        let (short, _) = self.span();
        let estimate = (last.saturating_sub(key) / short.max(1)) as usize;
        if estimate > cap.saturating_mul(2) {
            return Err(estimate);
        }
        let mut out = vec![key];
        while key < last {
            key = self.next(key);
            out.push(key);
            if out.len() > cap {
                return Err(out.len());
            }
        }
        Ok(out)
    }

    /// The shortest and longest bucket.
    pub fn span(&self) -> (i64, i64) {
        match self.step {
            Step::Calendar(u) => u.span(),
            Step::Fixed(len) => ((len - 3 * HOUR).max(len / 2).max(1), len + 3 * HOUR),
        }
    }

    /// A day or longer: the first instant of the unit's local start.
    fn to_midnight(&self, utc: i64, unit: Unit) -> i64 {
        let start = truncate(self.zone.local_ms(utc), unit);
        match self.zone.instants(start) {
            Instants::One(t) | Instants::Two(t, _) => t,
            Instants::Gap { transition, .. } => transition,
        }
    }

    /// A unit shorter than a day, or a fixed interval: the latest instant not after `utc`
    /// whose clock reads the rounded time, never across the transition before `utc` (a
    /// transition at `utc` itself counts for a fixed interval, as in Elasticsearch).
    fn latest_not_after(&self, utc: i64, len: i64, at_transition: bool) -> i64 {
        let floor = |local: i64| local.div_euclid(len).saturating_mul(len);
        if self.zone.is_utc() {
            return floor(utc);
        }
        let mut at = utc;
        for _ in 0..MAX_TRANSITION_STEPS {
            let rounded = floor(self.zone.local_ms(at));
            let found = match self.zone.instants(rounded) {
                Instants::One(a) => (a <= at).then_some(a),
                Instants::Two(a, b) => [b, a].into_iter().find(|t| *t <= at),
                Instants::Gap { transition, .. } if at_transition => return transition,
                Instants::Gap { .. } => None,
            };
            match (found, self.zone.previous_transition(at, at_transition)) {
                (Some(t), None) => return t,
                (Some(t), Some(p)) if p <= t => return t,
                (None, None) => return rounded - self.zone.offset_ms(at),
                (_, Some(p)) => at = p - 1,
            }
        }
        floor(self.zone.local_ms(utc)) - self.zone.offset_ms(utc)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DAY: i64 = 24 * HOUR;

    fn ms(text: &str) -> i64 {
        chrono::DateTime::parse_from_rfc3339(text)
            .unwrap()
            .timestamp_millis()
    }

    fn text(ms: i64) -> String {
        Zone::utc().format(ms)
    }

    fn zoned(step: Step, zone: &str) -> Rounding {
        Rounding::new(step, Zone::parse(zone).unwrap(), 0)
    }

    #[test]
    fn utc_calendar_units_and_intervals() {
        let r = |u| zoned(Step::Calendar(u), "UTC");
        let t = ms("2024-03-14T15:09:26.5Z");
        assert_eq!(text(r(Unit::Hour).round(t)), "2024-03-14T15:00:00.000Z");
        assert_eq!(text(r(Unit::Day).round(t)), "2024-03-14T00:00:00.000Z");
        assert_eq!(text(r(Unit::Week).round(t)), "2024-03-11T00:00:00.000Z");
        assert_eq!(text(r(Unit::Month).round(t)), "2024-03-01T00:00:00.000Z");
        assert_eq!(text(r(Unit::Quarter).round(t)), "2024-01-01T00:00:00.000Z");
        assert_eq!(text(r(Unit::Year).round(t)), "2024-01-01T00:00:00.000Z");
        let m = r(Unit::Month);
        assert_eq!(text(m.next(m.round(t))), "2024-04-01T00:00:00.000Z");
        let keys = m.keys(ms("2024-01-31T00:00:00Z"), ms("2024-04-02T00:00:00Z"), 100);
        assert_eq!(keys.unwrap().len(), 4);
        let f = zoned(Step::Fixed(90 * 60_000), "UTC");
        assert_eq!(text(f.round(t)), "2024-03-14T15:00:00.000Z");
        let shifted = Rounding::new(Step::Fixed(DAY), Zone::utc(), 6 * HOUR);
        assert_eq!(text(shifted.round(t)), "2024-03-14T06:00:00.000Z");
        assert_eq!(
            text(shifted.round(ms("2024-03-14T05:00:00Z"))),
            "2024-03-13T06:00:00.000Z"
        );
    }

    #[test]
    fn offsets_and_zones_round_on_the_wall_clock() {
        // Elasticsearch's documentation: with time_zone -01:00, 2015-10-01T00:05:00Z is
        // 2015-09-30T23:05 local, in the day bucket keyed 2015-09-30T01:00:00Z.
        let d = zoned(Step::Calendar(Unit::Day), "-01:00");
        assert_eq!(
            text(d.round(ms("2015-10-01T00:05:00Z"))),
            "2015-09-30T01:00:00.000Z"
        );
        let h = zoned(Step::Fixed(HOUR), "+05:30");
        assert_eq!(
            text(h.round(ms("2024-01-01T10:10:00Z"))),
            "2024-01-01T09:30:00.000Z"
        );
    }

    #[test]
    fn daylight_saving_days_and_intervals_as_elasticsearch_documents_them() {
        // CET, 2016-03-27 02:00 → 03:00: that day holds 23 hours, and a 12h fixed interval
        // has an 11h bucket on its morning.
        let day = zoned(Step::Calendar(Unit::Day), "CET");
        let k = day.round(ms("2016-03-27T12:00:00Z"));
        assert_eq!(text(k), "2016-03-26T23:00:00.000Z");
        assert_eq!(day.next(k) - k, 23 * HOUR);
        let twelve = zoned(Step::Fixed(12 * HOUR), "CET");
        let k = twelve.round(ms("2016-03-27T05:00:00Z"));
        assert_eq!(text(k), "2016-03-26T23:00:00.000Z");
        assert_eq!(twelve.next(k) - k, 11 * HOUR);
        // 2016-10-30 03:00 → 02:00: the day holds 25 hours, and the repeated hour is two
        // hourly buckets.
        let k = day.round(ms("2016-10-30T12:00:00Z"));
        assert_eq!(day.next(k) - k, 25 * HOUR);
        for step in [Step::Fixed(HOUR), Step::Calendar(Unit::Hour)] {
            let hour = zoned(step, "CET");
            assert_eq!(
                text(hour.round(ms("2016-10-30T00:30:00Z"))),
                "2016-10-30T00:00:00.000Z",
                "{step:?}"
            );
            assert_eq!(
                text(hour.round(ms("2016-10-30T01:30:00Z"))),
                "2016-10-30T01:00:00.000Z",
                "{step:?}"
            );
            let keys = hour
                .keys(ms("2016-10-29T22:30:00Z"), ms("2016-10-30T02:30:00Z"), 100)
                .unwrap();
            assert_eq!(keys.len(), 5, "{step:?}");
            assert!(keys.windows(2).all(|w| w[1] - w[0] == HOUR), "{step:?}");
        }
        // Every date is in the bucket its key starts, and keys only grow.
        let zones = ["America/New_York", "Europe/Vienna", "Australia/Lord_Howe"];
        for zone in zones {
            for step in [
                Step::Fixed(HOUR),
                Step::Fixed(90 * 60_000),
                Step::Fixed(DAY),
                Step::Calendar(Unit::Hour),
                Step::Calendar(Unit::Day),
                Step::Calendar(Unit::Week),
                Step::Calendar(Unit::Month),
            ] {
                let r = zoned(step, zone);
                let (from, to) = (ms("2016-03-01T00:00:00Z"), ms("2016-12-01T00:00:00Z"));
                let keys = r.keys(from, to, 10_000).unwrap();
                assert!(keys.windows(2).all(|w| w[0] < w[1]), "{zone} {step:?}");
                let mut t = from;
                while t < to {
                    let k = r.round(t);
                    let i = keys.partition_point(|x| *x <= t);
                    assert_eq!(keys[i - 1], k, "{zone} {step:?} {}", text(t));
                    t += 17 * 60_000;
                }
            }
        }
    }
}
