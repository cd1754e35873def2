//! One segment's vectors of one field, laid out for distance computations: node `i` is the
//! `i`-th document holding a vector. Similarities are "larger is closer" (the L2 distance is
//! negated and squared), so the graph and the scan need one comparison.

use super::spec::{Similarity, VectorSpec};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Metric {
    Dot,
    Cosine,
    /// The negated squared L2 distance.
    NegL2,
}

impl Metric {
    pub fn of(s: Similarity) -> Metric {
        match s {
            Similarity::Cosine => Metric::Cosine,
            Similarity::DotProduct | Similarity::MaxInnerProduct => Metric::Dot,
            Similarity::L2Norm => Metric::NegL2,
        }
    }

    /// The similarity the field's `_score` is computed from: a cosine, a dot product, or the
    /// L2 distance.
    pub fn raw(self, sim: f32) -> f32 {
        match self {
            Metric::NegL2 => (-sim).max(0.0).sqrt(),
            _ => sim,
        }
    }
}

pub struct Points {
    pub dims: usize,
    pub metric: Metric,
    /// `len × dims` values (dequantized when the field is int8).
    data: Vec<f32>,
    /// 1/‖v‖ per node, for cosine.
    inv_norm: Vec<f32>,
    /// The vectors as given, where `data` holds them quantized (scripts read these).
    raw: Vec<f32>,
}

/// A query vector, prepared once for a search.
pub struct QueryVector<'a> {
    pub v: &'a [f32],
    inv_norm: f32,
}

pub fn dot(a: &[f32], b: &[f32]) -> f32 {
    // Eight running sums let the compiler keep them in vector registers.
    let mut acc = [0f32; 8];
    let (ca, cb) = (a.chunks_exact(8), b.chunks_exact(8));
    let (ra, rb) = (ca.remainder(), cb.remainder());
    for (x, y) in ca.zip(cb) {
        for i in 0..8 {
            acc[i] += x[i] * y[i];
        }
    }
    let mut s: f32 = acc.iter().sum();
    for (x, y) in ra.iter().zip(rb) {
        s += x * y;
    }
    s
}

pub fn l2_squared(a: &[f32], b: &[f32]) -> f32 {
    let mut acc = [0f32; 8];
    let (ca, cb) = (a.chunks_exact(8), b.chunks_exact(8));
    let (ra, rb) = (ca.remainder(), cb.remainder());
    for (x, y) in ca.zip(cb) {
        for i in 0..8 {
            let d = x[i] - y[i];
            acc[i] += d * d;
        }
    }
    let mut s: f32 = acc.iter().sum();
    for (x, y) in ra.iter().zip(rb) {
        s += (x - y) * (x - y);
    }
    s
}

fn inv_norm(v: &[f32]) -> f32 {
    let n = dot(v, v).sqrt();
    if n > 0.0 {
        1.0 / n
    } else {
        0.0
    }
}

impl Points {
    /// `data` holds one vector after another, as the field's column gives them; an int8
    /// field's are quantized to 7 bits and held dequantized, so that searches see the loss
    /// in precision Elasticsearch's quantization brings.
    pub fn new(spec: &VectorSpec, mut data: Vec<f32>) -> Points {
        let dims = spec.dims;
        let metric = Metric::of(spec.similarity);
        let mut raw = Vec::new();
        if spec.options.int8 {
            raw = data.clone();
            if metric == Metric::Cosine {
                for v in data.chunks_exact_mut(dims) {
                    let inv = inv_norm(v);
                    v.iter_mut().for_each(|x| *x *= inv);
                }
            }
            quantize(&mut data, dims, spec.options.confidence_interval);
        }
        let inv_norm = match metric {
            Metric::Cosine => data.chunks_exact(dims).map(inv_norm).collect(),
            _ => Vec::new(),
        };
        Points {
            dims,
            metric,
            data,
            inv_norm,
            raw,
        }
    }

    /// A node's vector as its document gave it.
    pub fn raw_vector(&self, node: u32) -> &[f32] {
        if self.raw.is_empty() {
            return self.vector(node);
        }
        let at = node as usize * self.dims;
        &self.raw[at..at + self.dims]
    }

    pub fn len(&self) -> usize {
        self.data.len() / self.dims.max(1)
    }

    pub fn vector(&self, node: u32) -> &[f32] {
        let at = node as usize * self.dims;
        &self.data[at..at + self.dims]
    }

    pub fn query<'a>(&self, v: &'a [f32]) -> QueryVector<'a> {
        QueryVector {
            v,
            inv_norm: inv_norm(v),
        }
    }

    /// How close a query is to a node (larger is closer).
    pub fn to(&self, q: &QueryVector<'_>, node: u32) -> f32 {
        let v = self.vector(node);
        match self.metric {
            Metric::Dot => dot(q.v, v),
            Metric::Cosine => dot(q.v, v) * q.inv_norm * self.inv_norm[node as usize],
            Metric::NegL2 => -l2_squared(q.v, v),
        }
    }

    /// How close two nodes are.
    pub fn between(&self, a: u32, b: u32) -> f32 {
        let (x, y) = (self.vector(a), self.vector(b));
        match self.metric {
            Metric::Dot => dot(x, y),
            Metric::Cosine => dot(x, y) * self.inv_norm[a as usize] * self.inv_norm[b as usize],
            Metric::NegL2 => -l2_squared(x, y),
        }
    }

    pub fn heap_bytes(&self) -> usize {
        (self.data.capacity() + self.inv_norm.capacity() + self.raw.capacity()) * 4
    }
}

/// Scalar quantization to 7 bits between two quantiles of the values (Lucene's int8: the
/// central `confidence_interval` of them, 1 - 1/(dims + 1) by default), each value replaced
/// by what its code stands for.
fn quantize(data: &mut [f32], dims: usize, confidence_interval: Option<f32>) {
    if data.is_empty() {
        return;
    }
    // Lucene samples 25,000 vectors for the quantiles.
    let step = (data.len() / dims / 25_000).max(1);
    let mut sample: Vec<f32> = data
        .chunks_exact(dims)
        .step_by(step)
        .flat_map(|v| v.iter().copied())
        .collect();
    sample.sort_unstable_by(f32::total_cmp);
    let ci = match confidence_interval {
        Some(c) if c > 0.0 => c,
        _ => 1.0 - 1.0 / (dims as f32 + 1.0),
    };
    let tail = ((1.0 - ci) / 2.0 * sample.len() as f32) as usize;
    let lo = sample[tail.min(sample.len() - 1)];
    let hi = sample[(sample.len() - 1).saturating_sub(tail)];
    let width = hi - lo;
    if width <= 0.0 {
        return;
    }
    let scale = 127.0 / width;
    for x in data.iter_mut() {
        let code = ((x.clamp(lo, hi) - lo) * scale).round();
        *x = lo + code / scale;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn quantization_keeps_seven_bits() {
        let mut data: Vec<f32> = (0..1000).map(|i| i as f32 / 999.0).collect();
        let orig = data.clone();
        quantize(&mut data, 10, Some(1.0));
        let distinct: std::collections::BTreeSet<u32> = data.iter().map(|x| x.to_bits()).collect();
        assert!(distinct.len() <= 128, "{}", distinct.len());
        let worst = data
            .iter()
            .zip(&orig)
            .map(|(a, b)| (a - b).abs())
            .fold(0f32, f32::max);
        assert!(worst <= 0.5 / 127.0 + 1e-6, "{worst}");
    }

    #[test]
    fn metrics_agree_with_their_definitions() {
        let spec = |sim: &str| {
            crate::vector::spec::VectorSpec::parse(&json!({"type": "dense_vector", "dims": 3, "similarity": sim, "index_options": {"type": "hnsw"}})).unwrap()
        };
        let data = vec![1.0, 0.0, 0.0, 0.0, 3.0, 4.0];
        let p = Points::new(&spec("l2_norm"), data.clone());
        let q = [0.0, 0.0, 0.0];
        assert_eq!(p.metric.raw(p.to(&p.query(&q), 1)), 5.0);
        let c = Points::new(&spec("cosine"), data);
        assert!((c.to(&c.query(&[0.0, 6.0, 8.0]), 1) - 1.0).abs() < 1e-6);
        assert_eq!(c.between(0, 1), 0.0);
        let long: Vec<f32> = (0..19).map(|i| i as f32).collect();
        assert_eq!(
            dot(&long, &long),
            (0..19).map(|i| (i * i) as f32).sum::<f32>()
        );
    }
}
