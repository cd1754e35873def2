//! A hierarchical navigable small-world graph (Malkov & Yashunin) over one segment's vectors:
//! built in parallel with a lock per neighbour list, then frozen into flat arrays that
//! searches read without locks. A search may accept only some nodes (a filter, deleted
//! documents): the others are walked through but never returned, as Lucene does.

use super::points::{Points, QueryVector};
use std::cmp::Ordering;
use std::collections::BinaryHeap;
use std::sync::{Mutex, RwLock};

/// A node and how close it is (larger is closer).
#[derive(Debug, Clone, Copy)]
pub struct Near {
    pub sim: f32,
    pub node: u32,
}

impl PartialEq for Near {
    fn eq(&self, o: &Self) -> bool {
        self.cmp(o) == Ordering::Equal
    }
}
impl Eq for Near {}
impl PartialOrd for Near {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Near {
    fn cmp(&self, o: &Self) -> Ordering {
        self.sim.total_cmp(&o.sim).then(o.node.cmp(&self.node))
    }
}

/// The farthest first: a heap of the best found so far.
#[derive(PartialEq, Eq, PartialOrd, Ord)]
struct Far(std::cmp::Reverse<Near>);

const MAX_LEVEL: u8 = 16;
const MAGIC: &[u8; 8] = b"RVHNSW02";

/// A node's layer-0 slot: its count, its 2m links, and one more a repair may add.
const fn l0_stride(m: usize) -> usize {
    2 * m + 2
}

/// Which nodes a search has seen, reset in O(1) by a new generation.
pub struct Visited {
    marks: Vec<u32>,
    generation: u32,
    /// Nodes whose distance the last search computed (Elasticsearch's
    /// `vector_operations_count`).
    pub count: u64,
}

impl Visited {
    pub fn new(n: usize) -> Visited {
        Visited {
            marks: vec![0; n],
            generation: 0,
            count: 0,
        }
    }

    fn reset(&mut self, n: usize) {
        if self.marks.len() < n {
            self.marks.resize(n, 0);
        }
        self.generation = self.generation.wrapping_add(1);
        if self.generation == 0 {
            self.marks.iter_mut().for_each(|m| *m = 0);
            self.generation = 1;
        }
    }

    /// Marks `node`; false when it was already seen.
    fn first_visit(&mut self, node: u32) -> bool {
        let m = &mut self.marks[node as usize];
        if *m == self.generation {
            return false;
        }
        *m = self.generation;
        self.count += 1;
        true
    }
}

#[derive(Debug, PartialEq)]
pub struct Hnsw {
    m: usize,
    entry: u32,
    top: u8,
    levels: Vec<u8>,
    /// Layer 0: per node a count, then up to 2m neighbours (2m + 1 after a repair).
    l0: Vec<u32>,
    /// Where a node's upper-layer lists start in `upper` (u32::MAX: level 0 only); each
    /// upper list is a count then up to m neighbours.
    upper_off: Vec<u32>,
    upper: Vec<u32>,
}

/// How the layers of a graph are read: during the build (locked lists) or after (flat).
trait Layers {
    fn neighbours(&self, node: u32, level: u8, out: &mut Vec<u32>);
}

impl Layers for Hnsw {
    fn neighbours(&self, node: u32, level: u8, out: &mut Vec<u32>) {
        out.clear();
        out.extend_from_slice(self.list(node, level));
    }
}

struct Building {
    lists: Vec<Vec<Mutex<Vec<u32>>>>,
}

impl Layers for Building {
    fn neighbours(&self, node: u32, level: u8, out: &mut Vec<u32>) {
        out.clear();
        let list = self.lists[node as usize][level as usize]
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        out.extend_from_slice(&list);
    }
}

/// A level drawn as HNSW draws them: geometric, with ratio 1/m.
fn level_of(node: u32, m: usize) -> u8 {
    // SplitMix64 of the node: deterministic, so a rebuilt graph is the same graph.
    let mut z = (node as u64).wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^= z >> 31;
    let u = ((z >> 11) as f64 + 0.5) / (1u64 << 53) as f64;
    let level = (-u.ln() / (m as f64).ln()).floor();
    level.min(MAX_LEVEL as f64) as u8
}

/// Keeps at most `max` of `candidates` (closest first), each kept only if it is closer to
/// the base than to every one kept before it: HNSW's heuristic, which keeps links spread.
fn select(points: &Points, candidates: &mut Vec<Near>, max: usize, out: &mut Vec<u32>) {
    candidates.sort_unstable_by(|a, b| b.cmp(a));
    out.clear();
    for c in candidates.iter() {
        if out.len() >= max {
            break;
        }
        if out.iter().all(|s| points.between(c.node, *s) < c.sim) {
            out.push(c.node);
        }
    }
}

/// The `ef` nodes closest to `q` found from `entry` on one layer, only `accept`ed ones kept.
#[allow(clippy::too_many_arguments)]
fn search_layer(
    layers: &impl Layers,
    points: &Points,
    q: &QueryVector<'_>,
    entry: &[Near],
    ef: usize,
    level: u8,
    accept: &dyn Fn(u32) -> bool,
    visited: &mut Visited,
) -> Vec<Near> {
    visited.reset(points.len());
    visited.count = 0;
    let mut candidates: BinaryHeap<Near> = BinaryHeap::new();
    let mut best: BinaryHeap<Far> = BinaryHeap::new();
    for e in entry {
        visited.first_visit(e.node);
        candidates.push(*e);
        if accept(e.node) {
            best.push(Far(std::cmp::Reverse(*e)));
        }
    }
    let mut scratch = Vec::new();
    while let Some(c) = candidates.pop() {
        if best.len() >= ef && best.peek().is_some_and(|w| c.sim < w.0 .0.sim) {
            break;
        }
        layers.neighbours(c.node, level, &mut scratch);
        for &n in &scratch {
            if !visited.first_visit(n) {
                continue;
            }
            let sim = points.to(q, n);
            let worst = best.peek().map(|w| w.0 .0.sim);
            if best.len() < ef || worst.is_some_and(|w| sim > w) {
                candidates.push(Near { sim, node: n });
                if accept(n) {
                    best.push(Far(std::cmp::Reverse(Near { sim, node: n })));
                    if best.len() > ef {
                        best.pop();
                    }
                }
            }
        }
    }
    best.into_iter().map(|f| f.0 .0).collect()
}

/// From the top layer down to `stop` (exclusive), the one closest node.
fn descend(
    layers: &impl Layers,
    points: &Points,
    q: &QueryVector<'_>,
    entry: u32,
    top: u8,
    stop: u8,
) -> Near {
    let mut cur = Near {
        sim: points.to(q, entry),
        node: entry,
    };
    let mut scratch = Vec::new();
    let mut level = top;
    while level > stop {
        let mut moved = true;
        while moved {
            moved = false;
            layers.neighbours(cur.node, level, &mut scratch);
            for &n in &scratch {
                let sim = points.to(q, n);
                if sim > cur.sim {
                    cur = Near { sim, node: n };
                    moved = true;
                }
            }
        }
        level -= 1;
    }
    cur
}

impl Hnsw {
    /// The graph of `points`, built by `threads` threads.
    pub fn build(points: &Points, m: usize, ef_construction: usize, threads: usize) -> Hnsw {
        let n = points.len();
        let m = m.max(2);
        let levels: Vec<u8> = (0..n as u32).map(|i| level_of(i, m)).collect();
        let building = Building {
            lists: levels
                .iter()
                .map(|l| {
                    (0..=*l)
                        .map(|lv| Mutex::new(Vec::with_capacity(if lv == 0 { 2 * m } else { m })))
                        .collect()
                })
                .collect(),
        };
        if n == 0 {
            return Hnsw::freeze(&building, m, 0, 0, levels);
        }
        let entry = RwLock::new((0u32, levels[0]));
        let next = std::sync::atomic::AtomicUsize::new(1);
        let insert_all = || {
            let mut visited = Visited::new(n);
            let mut chosen = Vec::new();
            loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                if i >= n {
                    break;
                }
                insert(
                    &building,
                    points,
                    &levels,
                    &entry,
                    i as u32,
                    m,
                    ef_construction,
                    &mut visited,
                    &mut chosen,
                );
            }
        };
        std::thread::scope(|s| {
            for _ in 1..threads.max(1) {
                s.spawn(insert_all);
            }
            insert_all();
        });
        let (e, top) = *entry.read().unwrap_or_else(|p| p.into_inner());
        connect(&building, points, e, m);
        Hnsw::freeze(&building, m, e, top, levels)
    }

    fn freeze(b: &Building, m: usize, entry: u32, top: u8, levels: Vec<u8>) -> Hnsw {
        let n = levels.len();
        let mut l0 = Vec::with_capacity(n * l0_stride(m));
        let mut upper_off = Vec::with_capacity(n);
        let mut upper = Vec::new();
        for (node, lists) in b.lists.iter().enumerate() {
            let first = lists[0].lock().unwrap_or_else(|p| p.into_inner());
            l0.push(first.len() as u32);
            l0.extend_from_slice(&first);
            l0.resize((node + 1) * l0_stride(m), 0);
            if lists.len() == 1 {
                upper_off.push(u32::MAX);
                continue;
            }
            upper_off.push(upper.len() as u32);
            for list in &lists[1..] {
                let list = list.lock().unwrap_or_else(|p| p.into_inner());
                upper.push(list.len() as u32);
                upper.extend_from_slice(&list);
                upper.resize(upper.len() + m - list.len(), 0);
            }
        }
        Hnsw {
            m,
            entry,
            top,
            levels,
            l0,
            upper_off,
            upper,
        }
    }

    fn list(&self, node: u32, level: u8) -> &[u32] {
        let m = self.m;
        if level == 0 {
            let at = node as usize * l0_stride(m);
            let len = self.l0[at] as usize;
            return &self.l0[at + 1..at + 1 + len];
        }
        let at = self.upper_off[node as usize] as usize + (level as usize - 1) * (m + 1);
        let len = self.upper[at] as usize;
        &self.upper[at + 1..at + 1 + len]
    }

    pub fn len(&self) -> usize {
        self.levels.len()
    }

    /// The `k` accepted nodes closest to `q`, exploring `ef` (≥ k) candidates, closest first.
    pub fn search(
        &self,
        points: &Points,
        q: &QueryVector<'_>,
        k: usize,
        ef: usize,
        accept: &dyn Fn(u32) -> bool,
        visited: &mut Visited,
    ) -> Vec<Near> {
        if self.levels.is_empty() || k == 0 {
            return Vec::new();
        }
        let start = descend(self, points, q, self.entry, self.top, 0);
        let mut found = search_layer(self, points, q, &[start], ef.max(k), 0, accept, visited);
        found.sort_unstable_by(|a, b| b.cmp(a));
        found.truncate(k);
        found
    }

    pub fn heap_bytes(&self) -> usize {
        self.levels.capacity()
            + (self.l0.capacity() + self.upper_off.capacity() + self.upper.capacity()) * 4
    }

    /// The graph as bytes, to keep beside its segment.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(32 + self.heap_bytes());
        out.extend_from_slice(MAGIC);
        for x in [
            self.m as u32,
            self.entry,
            self.top as u32,
            self.levels.len() as u32,
            self.upper.len() as u32,
        ] {
            out.extend_from_slice(&x.to_le_bytes());
        }
        out.extend_from_slice(&self.levels);
        for x in self.l0.iter().chain(&self.upper_off).chain(&self.upper) {
            out.extend_from_slice(&x.to_le_bytes());
        }
        out
    }

    /// A graph written by [`Hnsw::to_bytes`] for a segment of `n` vectors; None when the bytes
    /// are not one (another version, another segment, a torn write): it is then rebuilt.
    pub fn from_bytes(bytes: &[u8], n: usize) -> Option<Hnsw> {
        let rest = bytes.strip_prefix(MAGIC.as_slice())?;
        let word = |i: usize| -> Option<u32> {
            Some(u32::from_le_bytes(
                rest.get(i * 4..i * 4 + 4)?.try_into().ok()?,
            ))
        };
        let (m, entry, top, len, upper_len) = (
            word(0)? as usize,
            word(1)?,
            word(2)?,
            word(3)? as usize,
            word(4)? as usize,
        );
        if len != n || m < 2 || m > 512 || top > MAX_LEVEL as u32 || (n > 0 && entry as usize >= n)
        {
            return None;
        }
        let rest = &rest[20..];
        let levels = rest.get(..n)?.to_vec();
        let words = rest.get(n..)?;
        let l0_len = n * l0_stride(m);
        if words.len() != (l0_len + n + upper_len) * 4 {
            return None;
        }
        let mut all = words
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]));
        let l0: Vec<u32> = all.by_ref().take(l0_len).collect();
        let upper_off: Vec<u32> = all.by_ref().take(n).collect();
        let upper: Vec<u32> = all.collect();
        let g = Hnsw {
            m,
            entry,
            top: top as u8,
            levels,
            l0,
            upper_off,
            upper,
        };
        g.is_sound().then_some(g)
    }

    /// Every list within its bounds and naming existing nodes, so a damaged file cannot make a
    /// search index out of range.
    fn is_sound(&self) -> bool {
        let n = self.levels.len();
        let m = self.m;
        (0..n).all(|node| {
            let l0 = &self.l0[node * l0_stride(m)..(node + 1) * l0_stride(m)];
            let level = self.levels[node] as usize;
            let off = self.upper_off[node];
            (l0[0] as usize) < l0_stride(m)
                && l0[1..=l0[0] as usize].iter().all(|x| (*x as usize) < n)
                && (level == 0) == (off == u32::MAX)
                && (level == 0
                    || (1..=level).all(|lv| {
                        let at = off as usize + (lv - 1) * (m + 1);
                        self.upper.get(at).is_some_and(|c| *c as usize <= m)
                            && self
                                .upper
                                .get(at + 1..at + 1 + self.upper[at] as usize)
                                .is_some_and(|l| l.iter().all(|x| (*x as usize) < n))
                    }))
        })
    }
}

/// Links every node that no path at layer 0 reaches from the entry (a concurrent insert's
/// pruning can drop a node's last incoming link), from its nearest reachable node, as Lucene
/// connects a graph's components after building it: a search then can reach every vector.
fn connect(b: &Building, points: &Points, entry: u32, m: usize) {
    let n = b.lists.len();
    let mut reached = vec![false; n];
    let mut scratch = Vec::new();
    let mut mark = |from: u32, reached: &mut Vec<bool>| {
        let mut stack = vec![from];
        reached[from as usize] = true;
        while let Some(x) = stack.pop() {
            b.neighbours(x, 0, &mut scratch);
            for &y in &scratch {
                if !reached[y as usize] {
                    reached[y as usize] = true;
                    stack.push(y);
                }
            }
        }
    };
    mark(entry, &mut reached);
    for u in 0..n as u32 {
        if reached[u as usize] {
            continue;
        }
        // The nearest reachable node with room for one more link: among the node's own
        // links (its nearest), else among all.
        let q = points.query(points.vector(u));
        let room = |v: &u32| {
            reached[*v as usize]
                && b.lists[*v as usize][0]
                    .lock()
                    .is_ok_and(|l| l.len() < l0_stride(m) - 1)
        };
        let mut links = Vec::new();
        b.neighbours(u, 0, &mut links);
        let own = links
            .iter()
            .copied()
            .filter(room)
            .map(|v| Near {
                sim: points.to(&q, v),
                node: v,
            })
            .max();
        let from = own.or_else(|| {
            (0..n as u32)
                .filter(room)
                .map(|v| Near {
                    sim: points.to(&q, v),
                    node: v,
                })
                .max()
        });
        let Some(from) = from else {
            continue;
        };
        b.lists[from.node as usize][0]
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(u);
        mark(u, &mut reached);
    }
}

#[allow(clippy::too_many_arguments)]
fn insert(
    b: &Building,
    points: &Points,
    levels: &[u8],
    entry: &RwLock<(u32, u8)>,
    node: u32,
    m: usize,
    ef_construction: usize,
    visited: &mut Visited,
    chosen: &mut Vec<u32>,
) {
    let level = levels[node as usize];
    let (ep, top) = *entry.read().unwrap_or_else(|p| p.into_inner());
    let q = points.query(points.vector(node));
    let all = |_: u32| true;
    let mut cur = vec![descend(b, points, &q, ep, top, level)];
    for lv in (0..=level.min(top)).rev() {
        let mut found = search_layer(b, points, &q, &cur, ef_construction, lv, &all, visited);
        let max = if lv == 0 { 2 * m } else { m };
        select(points, &mut found.clone(), m, chosen);
        *b.lists[node as usize][lv as usize]
            .lock()
            .unwrap_or_else(|p| p.into_inner()) = chosen.clone();
        for &n in chosen.iter() {
            let mut list = b.lists[n as usize][lv as usize]
                .lock()
                .unwrap_or_else(|p| p.into_inner());
            if list.contains(&node) {
                continue;
            }
            if list.len() < max {
                list.push(node);
                continue;
            }
            // Full: the node's links are chosen again among them and the new one.
            let mut candidates: Vec<Near> = list
                .iter()
                .chain(std::iter::once(&node))
                .map(|&o| Near {
                    sim: points.between(n, o),
                    node: o,
                })
                .collect();
            let mut kept = Vec::with_capacity(max);
            select(points, &mut candidates, max, &mut kept);
            *list = kept;
        }
        found.sort_unstable_by(|a, b| b.cmp(a));
        cur = found;
    }
    if level > top {
        let mut e = entry.write().unwrap_or_else(|p| p.into_inner());
        if level > e.1 {
            *e = (node, level);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vector::spec::VectorSpec;
    use serde_json::json;

    fn random_points(n: usize, dims: usize, sim: &str) -> Points {
        let mut state = 0x2545_F491_4F6C_DD1Du64;
        let data = (0..n * dims)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                (state >> 40) as f32 / (1u64 << 24) as f32 - 0.5
            })
            .collect();
        let spec = VectorSpec::parse(&json!({"type": "dense_vector", "dims": dims, "similarity": sim, "index_options": {"type": "hnsw"}})).unwrap();
        Points::new(&spec, data)
    }

    fn exact(points: &Points, q: &[f32], k: usize) -> Vec<u32> {
        let qv = points.query(q);
        let mut all: Vec<Near> = (0..points.len() as u32)
            .map(|n| Near {
                sim: points.to(&qv, n),
                node: n,
            })
            .collect();
        all.sort_unstable_by(|a, b| b.cmp(a));
        all.iter().take(k).map(|n| n.node).collect()
    }

    #[test]
    fn finds_the_true_neighbours_of_most_queries() {
        for sim in ["l2_norm", "cosine", "max_inner_product"] {
            let points = random_points(3000, 16, sim);
            let g = Hnsw::build(&points, 16, 100, 2);
            let queries = random_points(50, 16, "l2_norm");
            let mut visited = Visited::new(points.len());
            let (mut hit, mut total) = (0, 0);
            for i in 0..50 {
                let q = queries.vector(i);
                let truth = exact(&points, q, 10);
                let found: Vec<u32> = g
                    .search(&points, &points.query(q), 10, 100, &|_| true, &mut visited)
                    .iter()
                    .map(|n| n.node)
                    .collect();
                hit += found.iter().filter(|f| truth.contains(f)).count();
                total += 10;
            }
            let recall = hit as f64 / total as f64;
            assert!(recall > 0.9, "{sim}: recall {recall}");
        }
    }

    #[test]
    fn a_search_returns_only_accepted_nodes() {
        let points = random_points(2000, 8, "l2_norm");
        let g = Hnsw::build(&points, 8, 64, 1);
        let mut visited = Visited::new(points.len());
        let even = |n: u32| n % 2 == 0;
        let found = g.search(
            &points,
            &points.query(points.vector(7)),
            20,
            64,
            &even,
            &mut visited,
        );
        assert_eq!(found.len(), 20);
        assert!(found.iter().all(|n| n.node % 2 == 0));
        assert!(found.windows(2).all(|w| w[0].sim >= w[1].sim));
    }

    #[test]
    fn every_node_is_reachable_after_a_parallel_build() {
        let points = random_points(3000, 8, "l2_norm");
        for threads in [1, 2, 4] {
            let g = Hnsw::build(&points, 4, 16, threads);
            let mut seen = vec![false; points.len()];
            let mut stack = vec![g.entry];
            seen[g.entry as usize] = true;
            while let Some(n) = stack.pop() {
                for &m in g.list(n, 0) {
                    if !seen[m as usize] {
                        seen[m as usize] = true;
                        stack.push(m);
                    }
                }
            }
            assert!(seen.iter().all(|s| *s), "threads {threads}");
        }
    }

    #[test]
    fn round_trips_through_bytes_and_refuses_damage() {
        let points = random_points(500, 4, "cosine");
        let g = Hnsw::build(&points, 6, 40, 2);
        let bytes = g.to_bytes();
        assert_eq!(Hnsw::from_bytes(&bytes, 500).as_ref(), Some(&g));
        assert!(Hnsw::from_bytes(&bytes, 499).is_none());
        assert!(Hnsw::from_bytes(&bytes[..bytes.len() - 4], 500).is_none());
        let mut bad = bytes.clone();
        let at = bad.len() - 4;
        bad[at..].copy_from_slice(&u32::MAX.to_le_bytes());
        // The last word is an upper-layer neighbour or padding: damaged either way or harmless.
        if let Some(g2) = Hnsw::from_bytes(&bad, 500) {
            assert!(g2.is_sound());
        }
        assert!(Hnsw::build(&random_points(0, 4, "cosine"), 6, 40, 2).len() == 0);
    }
}
