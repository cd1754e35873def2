//! Elasticsearch's t-digest, as its `percentiles` runs it by default (`TDigestState` of type
//! HYBRID): every value kept and sorted below `round(compression) * 20` values, then a
//! merging digest (Dunning's MergingDigest with Elasticsearch's changes: the K_2 scale with a
//! weight limit, two-level compression, alternating merge direction, a stable sort, and its
//! quantile interpolation). Its estimates depend on the order values arrive in, so callers add
//! them as Elasticsearch collects them: documents in index order, a document's values
//! ascending. The merging digest's answers are checked bit for bit against Elasticsearch's
//! own Java code (the table in `tdigest/es_quantiles.txt`; `tdigest/EsQuantiles.java` made
//! it); the sorting part interpolates between values as Elasticsearch's REST tests expect.

/// The largest `compression` the engine builds a digest for: its merging digest then holds
/// about 1.3 MB, and its sorting part up to 200,000 values.
pub const MAX_COMPRESSION: f64 = 10_000.0;

/// One `percentiles` state: Elasticsearch's HybridDigest.
#[derive(Debug, Clone)]
pub struct Digest {
    compression: f64,
    /// Values past which the sorting part becomes a merging digest.
    max_sorting: u64,
    state: State,
}

#[derive(Debug, Clone)]
enum State {
    Sorting(Sorting),
    Merging(Box<Merging>),
}

impl Digest {
    /// A digest of `compression` (not negative, at most [`MAX_COMPRESSION`]: callers check).
    pub fn new(compression: f64) -> Digest {
        Digest {
            compression,
            max_sorting: java_round(compression).saturating_mul(20).max(0) as u64,
            state: State::Sorting(Sorting::default()),
        }
    }

    /// Adds `x` with weight `w`, switching to the merging digest when the sorting part
    /// would reach its bound (as Elasticsearch's `reserve` does before each add).
    pub fn add(&mut self, x: f64, w: u64) {
        self.reserve(w);
        match &mut self.state {
            State::Sorting(s) => s.add(x, w),
            State::Merging(m) => m.add(x, w as f64),
        }
    }

    fn reserve(&mut self, size: u64) {
        let State::Sorting(sorting) = &mut self.state else {
            return;
        };
        if (sorting.values.len() as u64).saturating_add(size) >= self.max_sorting {
            let mut merging = Merging::new(self.compression);
            for v in &sorting.values {
                merging.add(*v, 1.0);
            }
            self.state = State::Merging(Box::new(merging));
        }
    }

    /// Adds every centroid of `other` (Elasticsearch's reduce of several shards' states).
    pub fn add_digest(&mut self, other: &mut Digest) {
        self.reserve(other.size());
        for (mean, count) in other.centroids() {
            match &mut self.state {
                State::Sorting(s) => s.add(mean, count),
                State::Merging(m) => m.add(mean, count as f64),
            }
        }
    }

    /// How many values were added.
    pub fn size(&self) -> u64 {
        match &self.state {
            State::Sorting(s) => s.values.len() as u64,
            State::Merging(m) => (m.total_weight + m.unmerged_weight) as u64,
        }
    }

    /// The centroids in ascending order of mean, each with its count.
    fn centroids(&mut self) -> Vec<(f64, u64)> {
        match &mut self.state {
            State::Sorting(s) => {
                s.sort();
                s.values.iter().map(|v| (*v, 1)).collect()
            }
            State::Merging(m) => {
                m.merge_new_values(m.compression);
                (0..m.last_used)
                    .map(|i| (m.mean[i], m.weight[i] as u64))
                    .collect()
            }
        }
    }

    /// Merges what is pending (sorts the sorting part, merges the buffer), as reading a
    /// quantile in Elasticsearch does, so that answers are then read without a change.
    pub fn settle(&mut self) {
        match &mut self.state {
            State::Sorting(s) => s.sort(),
            State::Merging(m) => m.merge_new_values(m.compression),
        }
    }

    fn is_settled(&self) -> bool {
        match &self.state {
            State::Sorting(s) => !s.unsorted,
            State::Merging(m) => m.unmerged_weight == 0.0,
        }
    }

    /// The `q`-th quantile (`q` from 0 to 1); None without values.
    pub fn quantile(&self, q: f64) -> Option<f64> {
        if !self.is_settled() {
            let mut settled = self.clone();
            settled.settle();
            return settled.quantile(q);
        }
        match &self.state {
            State::Sorting(s) => sorted_quantile(&s.values, q),
            State::Merging(m) => m.quantile(q),
        }
    }

    /// Whether it still holds every value (and so answers exactly).
    #[cfg(test)]
    pub fn is_exact(&self) -> bool {
        matches!(self.state, State::Sorting(_))
    }

    /// Bytes it holds, for the engine's bound on a search's digests.
    pub fn bytes(&self) -> usize {
        match &self.state {
            State::Sorting(s) => s.values.capacity() * 8,
            State::Merging(m) => m.bytes(),
        }
    }
}

/// Java's `Math.round(double)`.
fn java_round(x: f64) -> i64 {
    (x + 0.5).floor() as i64
}

/// Elasticsearch's SortingDigest: every value, sorted when read.
#[derive(Debug, Clone, Default)]
struct Sorting {
    values: Vec<f64>,
    unsorted: bool,
}

impl Sorting {
    fn add(&mut self, x: f64, w: u64) {
        if self.values.last().is_some_and(|last| *last > x) {
            self.unsorted = true;
        }
        for _ in 0..w {
            self.values.push(x);
        }
    }

    /// Sorts as Java's `Collections.sort` of Doubles does (-0.0 before 0.0).
    fn sort(&mut self) {
        if std::mem::take(&mut self.unsorted) {
            self.values.sort_by(f64::total_cmp);
        }
    }
}

/// The `q`-th quantile of sorted values as Elasticsearch's sorting digest gives it: each
/// value the centre of its own weight, linear between centres, the extremes beyond.
pub fn sorted_quantile(sorted: &[f64], q: f64) -> Option<f64> {
    let n = sorted.len();
    match n {
        0 => return None,
        1 => return Some(sorted[0]),
        _ => {}
    }
    let index = q * n as f64;
    if index <= 0.5 {
        return Some(sorted[0]);
    }
    if index >= n as f64 - 0.5 {
        return Some(sorted[n - 1]);
    }
    let position = index - 0.5;
    let lower = position.floor() as usize;
    let fraction = position - lower as f64;
    Some(sorted[lower] + fraction * (sorted[lower + 1] - sorted[lower]))
}

/// The merging digest's main and buffer sizes and its working compression, as
/// Elasticsearch's constructor computes them (weight limit on, two-level compression).
fn merging_sizes(public: f64) -> (usize, usize, f64) {
    let public = public.max(10.0);
    let fudge = 10.0;
    let mut size = (public + fudge) as i64;
    let mut buffer = 5 * size;
    let scale = ((buffer / size) - 1).max(1) as f64;
    let compression = scale.sqrt() * public;
    if (size as f64) < compression + fudge {
        size = (compression + fudge).ceil() as i64;
    }
    if buffer <= 2 * size {
        buffer = 2 * size;
    }
    (size as usize, buffer as usize, compression)
}

/// Elasticsearch's MergingDigest.
#[derive(Debug, Clone)]
struct Merging {
    /// The working compression (`sqrt(scale)` times the public one).
    compression: f64,
    merge_count: u64,
    /// The first unused centroid.
    last_used: usize,
    total_weight: f64,
    weight: Vec<f64>,
    mean: Vec<f64>,
    unmerged_weight: f64,
    temp_used: usize,
    temp_weight: Vec<f64>,
    temp_mean: Vec<f64>,
    order: Vec<u32>,
    /// Scratch: the new values' sort keys.
    keys: Vec<u128>,
    min: f64,
    max: f64,
}

impl Merging {
    fn new(compression: f64) -> Merging {
        let (size, buffer, working) = merging_sizes(compression);
        Merging {
            compression: working,
            merge_count: 0,
            last_used: 0,
            total_weight: 0.0,
            weight: vec![0.0; size],
            mean: vec![0.0; size],
            unmerged_weight: 0.0,
            temp_used: 0,
            temp_weight: vec![0.0; buffer],
            temp_mean: vec![0.0; buffer],
            order: vec![0; buffer],
            keys: Vec::with_capacity(buffer),
            min: f64::INFINITY,
            max: f64::NEG_INFINITY,
        }
    }

    fn bytes(&self) -> usize {
        self.weight.len() * 16 + self.temp_weight.len() * 36
    }

    fn add(&mut self, x: f64, w: f64) {
        if self.temp_used + self.last_used + 1 >= self.temp_weight.len() {
            self.merge_new_values(self.compression);
        }
        let at = self.temp_used;
        self.temp_used += 1;
        self.temp_weight[at] = w;
        self.temp_mean[at] = x;
        self.unmerged_weight += w;
        if x < self.min {
            self.min = x;
        }
        if x > self.max {
            self.max = x;
        }
    }

    fn merge_new_values(&mut self, compression: f64) {
        if self.unmerged_weight > 0.0 {
            // Every other merge runs downward, against left-to-right bias.
            let backwards = self.merge_count % 2 == 1;
            self.merge(backwards, compression);
            self.merge_count += 1;
            self.temp_used = 0;
            self.unmerged_weight = 0.0;
        }
    }

    /// Merges the buffered values with the centroids into new centroids, each as large as
    /// the K_2 scale's weight limit allows at its place.
    fn merge(&mut self, backwards: bool, compression: f64) {
        let last = self.last_used;
        let count = self.temp_used + last;
        self.temp_mean[self.temp_used..count].copy_from_slice(&self.mean[..last]);
        self.temp_weight[self.temp_used..count].copy_from_slice(&self.weight[..last]);
        self.order_incoming(count);
        self.total_weight += self.unmerged_weight;
        if backwards {
            self.order[..count].reverse();
        }
        let total = self.total_weight;
        let first = self.order[0] as usize;
        self.last_used = 0;
        self.mean[0] = self.temp_mean[first];
        self.weight[0] = self.temp_weight[first];
        let mut w_so_far = 0.0;
        let normalizer = k2_normalizer(compression, total);
        for i in 1..count {
            let ix = self.order[i] as usize;
            let cell = self.last_used;
            let proposed = self.weight[cell] + self.temp_weight[ix];
            let q0 = w_so_far / total;
            let q2 = (w_so_far + proposed) / total;
            let limit = total * java_min(k2_max(q0, normalizer), k2_max(q2, normalizer));
            // The first and last centroids stay single values; the last cell takes the rest.
            let add_this =
                (proposed <= limit && i != 1 && i != count - 1) || cell == self.mean.len() - 1;
            if add_this {
                self.weight[cell] += self.temp_weight[ix];
                self.mean[cell] = self.mean[cell]
                    + (self.temp_mean[ix] - self.mean[cell]) * self.temp_weight[ix]
                        / self.weight[cell];
            } else {
                w_so_far += self.weight[cell];
                self.last_used += 1;
                self.mean[self.last_used] = self.temp_mean[ix];
                self.weight[self.last_used] = self.temp_weight[ix];
            }
            self.temp_weight[ix] = 0.0;
        }
        self.last_used += 1;
        if backwards {
            self.mean[..self.last_used].reverse();
            self.weight[..self.last_used].reverse();
        }
        if total > 0.0 {
            self.min = java_min(self.min, self.mean[0]);
            self.max = java_max(self.max, self.mean[self.last_used - 1]);
        }
    }

    /// `order[..count]`: the buffer's positions ordered by value, then by position, as
    /// Elasticsearch's stable quicksort orders them. Each position is sorted as one integer
    /// (the value's order-preserving bits, then the position), and the centroids (after the
    /// new values) are already in order, so only the new values are sorted, then the two
    /// runs merged: the same order, at a fraction of the cost.
    fn order_incoming(&mut self, count: usize) {
        let used = self.temp_used;
        let key = |i: usize| (u128::from(sortable(self.temp_mean[i])) << 32) | i as u128;
        self.keys.clear();
        self.keys.extend((0..used).map(key));
        self.keys.sort_unstable();
        // Rounding could in principle leave two neighbouring means out of order: then all
        // are sorted together.
        let centroids_in_order = self.temp_mean[used..count].windows(2).all(|w| w[0] <= w[1]);
        if !centroids_in_order {
            self.keys.extend((used..count).map(key));
            self.keys.sort_unstable();
            for (o, k) in self.order.iter_mut().zip(&self.keys) {
                *o = *k as u32;
            }
            return;
        }
        let (mut a, mut b, mut out) = (0, used, 0);
        while a < used && b < count {
            let centroid = key(b);
            if self.keys[a] < centroid {
                self.order[out] = self.keys[a] as u32;
                a += 1;
            } else {
                self.order[out] = b as u32;
                b += 1;
            }
            out += 1;
        }
        for k in &self.keys[a..used] {
            self.order[out] = *k as u32;
            out += 1;
        }
        for i in b..count {
            self.order[out] = i as u32;
            out += 1;
        }
    }

    /// The quantile of a settled digest (nothing buffered).
    fn quantile(&self, q: f64) -> Option<f64> {
        let n = self.last_used;
        let (mean, weight) = (&self.mean, &self.weight);
        match n {
            0 => return None,
            1 => return Some(mean[0]),
            _ => {}
        }
        let total = self.total_weight;
        let index = q * total;
        if index < 0.0 {
            return Some(self.min);
        }
        if index >= total {
            return Some(self.max);
        }
        let mut so_far = weight[0] / 2.0;
        // One value was the minimum: interpolate toward it inside the first centroid.
        if weight[0] > 1.0 && index < so_far {
            return Some(weighted_average(self.min, so_far - index, mean[0], index));
        }
        // And one the maximum, inside the last.
        if weight[n - 1] > 1.0 && total - index <= weight[n - 1] / 2.0 {
            return Some(
                self.max
                    - (total - index - 1.0) / (weight[n - 1] / 2.0 - 1.0)
                        * (self.max - mean[n - 1]),
            );
        }
        for i in 0..n - 1 {
            let dw = (weight[i] + weight[i + 1]) / 2.0;
            if so_far + dw > index {
                let z1 = index - so_far;
                let z2 = so_far + dw - index;
                return Some(weighted_average(mean[i], z2, mean[i + 1], z1));
            }
            so_far += dw;
        }
        let z1 = index - so_far;
        let z2 = weight[n - 1] / 2.0 - z1;
        Some(weighted_average(mean[n - 1], z1, self.max, z2))
    }
}

/// `x`'s bits as an integer in the order of the values (-0.0 as 0.0, equal as Java's `==`
/// has them).
fn sortable(x: f64) -> u64 {
    let bits = (x + 0.0).to_bits();
    match bits >> 63 {
        1 => !bits,
        _ => bits | 1 << 63,
    }
}

/// K_2's normalizer: `compression / (4 ln(n / compression) + 24)`.
fn k2_normalizer(compression: f64, n: f64) -> f64 {
    compression / (4.0 * (n / compression).ln() + 24.0)
}

/// K_2's largest centroid, as a fraction of all weight, at quantile `q`.
fn k2_max(q: f64, normalizer: f64) -> f64 {
    q * (1.0 - q) / normalizer
}

/// The weighted mean of two values, kept between them.
fn weighted_average(x1: f64, w1: f64, x2: f64, w2: f64) -> f64 {
    let (x1, w1, x2, w2) = if x1 <= x2 {
        (x1, w1, x2, w2)
    } else {
        (x2, w2, x1, w1)
    };
    let x = (x1 * w1 + x2 * w2) / (w1 + w2);
    java_max(x1, java_min(x, x2))
}

/// Java's `Math.min` (NaN wins, -0.0 below 0.0).
fn java_min(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() {
        return f64::NAN;
    }
    if a == 0.0 && b == 0.0 {
        return if a.is_sign_negative() { a } else { b };
    }
    if a <= b {
        a
    } else {
        b
    }
}

/// Java's `Math.max`.
fn java_max(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() {
        return f64::NAN;
    }
    if a == 0.0 && b == 0.0 {
        return if a.is_sign_negative() { b } else { a };
    }
    if a >= b {
        a
    } else {
        b
    }
}

#[cfg(test)]
mod tests;
