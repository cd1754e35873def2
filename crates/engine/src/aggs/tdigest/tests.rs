use super::{sorted_quantile, Digest};

/// The generators the table was made with (the same in the Java that made it).
struct Values {
    state: u64,
}

impl Values {
    fn next(&mut self, kind: &str, i: usize, n: usize) -> f64 {
        self.state = self
            .state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let unit = (self.state >> 11) as f64 / 9007199254740992.0;
        match kind {
            "uniform" => unit * 1000.0,
            "cubed" => unit * unit * unit * 1e6,
            "ints" => ((self.state >> 33) % 1000) as f64,
            "asc" => i as f64,
            "desc" => (n - i) as f64,
            "few" => ((self.state >> 33) % 3) as f64,
            other => panic!("no generator {other}"),
        }
    }
}

const PERCENTS: [f64; 11] = [
    0.0, 0.1, 1.0, 5.0, 25.0, 50.0, 75.0, 95.0, 99.0, 99.9, 100.0,
];

fn filled(compression: f64, kind: &str, n: usize, seed: u64) -> Digest {
    let mut values = Values { state: seed };
    let mut d = Digest::new(compression);
    for i in 0..n {
        d.add(values.next(kind, i, n), 1);
    }
    d
}

/// Every case of the table Elasticsearch's own HybridDigest, MergingDigest and Sort (Java,
/// run beside this port: `EsQuantiles.java`) produced: the centroid count and eleven
/// quantiles, bit for bit. `one` cases fill one digest (1,999 values stay sorted; from 2,000
/// the merging digest); `reduce` cases add two digests to a fresh one, as a reduce of two
/// shards does.
#[test]
fn quantiles_are_elasticsearchs_bit_for_bit() {
    let table = include_str!("es_quantiles.txt");
    let mut checked = 0;
    for line in table.lines() {
        let fields: Vec<&str> = line.split(' ').collect();
        let (case, compression, kind, sizes) = (fields[0], fields[1], fields[2], fields[3]);
        let compression: f64 = compression.parse().unwrap();
        let mut digest = match case {
            "one" => filled(compression, kind, sizes.parse().unwrap(), 42),
            "reduce" => {
                let mut merged = Digest::new(compression);
                for (seed, n) in sizes.split('+').enumerate() {
                    let mut part = filled(compression, kind, n.parse().unwrap(), 7 + seed as u64);
                    merged.add_digest(&mut part);
                }
                merged
            }
            other => panic!("case {other}"),
        };
        let centroids: usize = fields[4].parse().unwrap();
        assert_eq!(digest.centroids().len(), centroids, "{line}: centroids");
        for (p, expected) in PERCENTS.iter().zip(&fields[5..]) {
            let expected = f64::from_bits(u64::from_str_radix(expected, 16).unwrap());
            let got = digest.quantile(p / 100.0).unwrap();
            assert_eq!(
                got.to_bits(),
                expected.to_bits(),
                "{line}: p{p}: {got} != {expected}"
            );
        }
        checked += 1;
    }
    assert_eq!(checked, 258);
}

#[test]
fn few_values_interpolate_as_elasticsearch_does() {
    let four = [1.0, 51.0, 101.0, 151.0];
    let at = |q: f64| sorted_quantile(&four, q).unwrap();
    assert_eq!(
        [
            at(0.01),
            at(0.05),
            at(0.25),
            at(0.5),
            at(0.75),
            at(0.95),
            at(0.99)
        ],
        [1.0, 1.0, 26.0, 76.0, 126.0, 151.0, 151.0]
    );
    let three = [51.0, 101.0, 151.0];
    assert_eq!(sorted_quantile(&three, 0.25), Some(63.5));
    assert_eq!(sorted_quantile(&three, 0.75), Some(138.5));
    // {1, 2, 2} has its median at 2, not 1.99.
    assert_eq!(sorted_quantile(&[1.0, 2.0, 2.0], 0.5), Some(2.0));
    assert_eq!(sorted_quantile(&[], 0.5), None);
}

#[test]
fn the_switch_comes_at_round_compression_times_twenty() {
    let mut d = Digest::new(100.0);
    for i in 0..1999 {
        d.add(i as f64, 1);
    }
    assert!(d.is_exact(), "1,999 values are still sorted");
    d.add(1999.0, 1);
    assert!(!d.is_exact(), "the 2,000th switches");
    assert_eq!(d.size(), 2000);
    // compression 0 switches at once, to a digest of compression 10.
    let mut zero = Digest::new(0.0);
    zero.add(1.0, 1);
    assert!(!zero.is_exact());
    assert_eq!(zero.quantile(0.5), Some(1.0));
    assert_eq!(Digest::new(100.0).quantile(0.5), None);
}
