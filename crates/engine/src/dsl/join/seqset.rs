//! A set of documents by `_seq_no`, each with a score. Sequence numbers are dense (each
//! write takes the next), so membership is a bitset over them while they stay below
//! [`MAX_BITS`]; scores are kept one per document only where they differ.

use super::super::nested::ScoreMode;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use tantivy::Score;

/// The largest `_seq_no` a bitset holds (16 MB of bits); past it, a map holds the set.
const MAX_BITS: u64 = 1 << 27;

/// A multiplicative hash for `_seq_no` keys: SipHash would cost more than the join itself.
#[derive(Default)]
pub(crate) struct SeqHasher(u64);

impl Hasher for SeqHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 = (self.0 ^ u64::from(*b)).wrapping_mul(0x100_0000_01b3);
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = (n ^ (n >> 29)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
}

pub(crate) type SeqMap<V> = HashMap<u64, V, BuildHasherDefault<SeqHasher>>;

#[derive(Debug, Default)]
pub(crate) struct SeqSet {
    /// Bit `s` is set when document `s` (below [`MAX_BITS`]) is in.
    bits: Vec<u64>,
    /// The members at or past [`MAX_BITS`].
    far: SeqMap<()>,
    len: usize,
    /// The score of every member, when they all score the same.
    same: Score,
    /// Each member's score, when they differ.
    each: Option<SeqMap<Score>>,
}

impl SeqSet {
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Document `s`'s score, when it is in the set.
    #[inline]
    pub fn score(&self, s: u64) -> Option<Score> {
        let member = match s < MAX_BITS {
            true => self
                .bits
                .get((s / 64) as usize)
                .is_some_and(|w| w & (1 << (s % 64)) != 0),
            false => self.far.contains_key(&s),
        };
        if !member {
            return None;
        }
        Some(match &self.each {
            Some(m) => m.get(&s).copied().unwrap_or(self.same),
            None => self.same,
        })
    }
}

/// Builds a [`SeqSet`] from matches (a document's several objects combined by `mode`).
pub(crate) struct SeqSetBuilder {
    mode: ScoreMode,
    scoring: bool,
    set: SeqSet,
    /// With scores: every match, combined at the end unless they all score `first`.
    matches: Vec<(u64, Score)>,
    first: Option<Score>,
    all_same: bool,
}

impl SeqSetBuilder {
    pub fn new(mode: ScoreMode, scoring: bool) -> Self {
        SeqSetBuilder {
            mode,
            scoring: scoring && mode != ScoreMode::None,
            set: SeqSet::default(),
            matches: Vec::new(),
            first: None,
            all_same: true,
        }
    }

    #[inline]
    pub fn add(&mut self, s: u64, score: Score) {
        let new = if s < MAX_BITS {
            let word = (s / 64) as usize;
            if word >= self.set.bits.len() {
                self.set.bits.resize((word + 1).next_power_of_two(), 0);
            }
            let bit = 1u64 << (s % 64);
            let new = self.set.bits[word] & bit == 0;
            self.set.bits[word] |= bit;
            new
        } else {
            self.set.far.insert(s, ()).is_none()
        };
        self.set.len += usize::from(new);
        if self.scoring {
            match self.first {
                None => self.first = Some(score),
                Some(f) if f != score => self.all_same = false,
                _ => {}
            }
            self.matches.push((s, score));
        }
    }

    pub fn build(self) -> SeqSet {
        let mut set = self.set;
        set.same = match self.mode {
            ScoreMode::None => 0.0,
            _ if !self.scoring => 1.0,
            _ => self.first.unwrap_or(1.0),
        };
        // Equal scores combine to that score, except summed over several objects.
        if !self.scoring || (self.all_same && self.mode != ScoreMode::Sum) {
            return set;
        }
        let mut sums: SeqMap<(Score, u32)> = SeqMap::default();
        for (s, score) in self.matches {
            let e = sums.entry(s).or_insert(match self.mode {
                ScoreMode::Min => (Score::MAX, 0),
                ScoreMode::Max => (Score::MIN, 0),
                _ => (0.0, 0),
            });
            e.1 += 1;
            e.0 = match self.mode {
                ScoreMode::Avg | ScoreMode::Sum => e.0 + score,
                ScoreMode::Max => e.0.max(score),
                ScoreMode::Min => e.0.min(score),
                ScoreMode::None => 0.0,
            };
        }
        set.each = Some(
            sums.into_iter()
                .map(|(s, (score, n))| match self.mode {
                    ScoreMode::Avg => (s, score / n as Score),
                    _ => (s, score),
                })
                .collect(),
        );
        set
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scores_combine_by_mode_and_stay_one_where_equal() {
        let build = |mode, scoring, adds: &[(u64, Score)]| {
            let mut b = SeqSetBuilder::new(mode, scoring);
            adds.iter().for_each(|(s, sc)| b.add(*s, *sc));
            b.build()
        };
        let adds = [(3, 1.0), (3, 3.0), (70, 2.0)];
        let avg = build(ScoreMode::Avg, true, &adds);
        assert_eq!(
            (avg.len(), avg.score(3), avg.score(70), avg.score(4)),
            (2, Some(2.0), Some(2.0), None)
        );
        let sum = build(ScoreMode::Sum, true, &adds);
        assert_eq!((sum.score(3), sum.score(70)), (Some(4.0), Some(2.0)));
        assert_eq!(build(ScoreMode::Max, true, &adds).score(3), Some(3.0));
        assert_eq!(build(ScoreMode::Min, true, &adds).score(3), Some(1.0));
        // Equal scores: no map; summed, they still count each object.
        let equal = [(3, 1.0), (3, 1.0), (9, 1.0)];
        let avg = build(ScoreMode::Avg, true, &equal);
        assert!(avg.each.is_none());
        assert_eq!(avg.score(3), Some(1.0));
        assert_eq!(build(ScoreMode::Sum, true, &equal).score(3), Some(2.0));
        assert_eq!(build(ScoreMode::None, true, &equal).score(9), Some(0.0));
        // Past the bitset's reach, a map holds the set.
        let far = build(ScoreMode::Avg, false, &[(MAX_BITS + 5, 0.0), (2, 0.0)]);
        assert_eq!(
            (
                far.len(),
                far.score(MAX_BITS + 5),
                far.score(2),
                far.score(1)
            ),
            (2, Some(1.0), Some(1.0), None)
        );
    }
}
