//! A task's sweeps expanded into points: every combination of its swept keys (clients, target
//! throughput, iterations, operation params), each with its typed values and its label.

use super::*;

/// Whole numbers as integers, so that sweep labels read `target-throughput=100`.
fn number(v: f64) -> Value {
    if v.fract() == 0.0 && v.abs() < 9e15 {
        Value::from(v as i64)
    } else {
        Value::from(v)
    }
}

/// One point of a task's sweeps: the values its swept keys take there (by name, for labels),
/// and the typed values of every dimension.
pub(super) struct Point {
    pub(super) sweep: Map<String, Value>,
    pub(super) clients: u64,
    pub(super) target: Option<OpsPerSec>,
    pub(super) iterations: Option<u64>,
    pub(super) params: Map<String, Value>,
}

/// A value of one dimension of a task: a task key with its type, or an operation param.
#[derive(Debug, Clone)]
enum Coordinate<'a> {
    Clients(u64),
    Target(OpsPerSec),
    Iterations(u64),
    Param(&'a str, &'a Value),
}

impl Coordinate<'_> {
    /// The key as tracks write it, for sweep labels.
    fn key(&self) -> &str {
        match self {
            Coordinate::Clients(_) => "clients",
            Coordinate::Target(_) => "target-throughput",
            Coordinate::Iterations(_) => "iterations",
            Coordinate::Param(k, _) => k,
        }
    }

    /// The value as sweep labels and stored records show it.
    fn label(&self) -> Value {
        match self {
            Coordinate::Clients(n) | Coordinate::Iterations(n) => Value::from(*n),
            Coordinate::Target(t) => number(t.0),
            Coordinate::Param(_, v) => (*v).clone(),
        }
    }
}

/// The cartesian product of a task's dimensions (clients, target throughput, iterations, then
/// its params in order), each point with the keys that vary named in its sweep.
pub(super) fn expand(task: &TaskSpec) -> Vec<Point> {
    let mut dims: Vec<Vec<Coordinate<'_>>> = vec![task
        .clients
        .iter()
        .map(|c| Coordinate::Clients(*c))
        .collect()];
    if let Some(t) = &task.targets {
        dims.push(t.iter().map(|v| Coordinate::Target(*v)).collect());
    }
    if let Some(it) = &task.iterations {
        dims.push(it.iter().map(|v| Coordinate::Iterations(*v)).collect());
    }
    for (k, v) in &task.params {
        dims.push(match v {
            Value::Array(items) => items.iter().map(|i| Coordinate::Param(k, i)).collect(),
            one => vec![Coordinate::Param(k, one)],
        });
    }
    let mut points: Vec<Vec<&Coordinate<'_>>> = vec![Vec::new()];
    for values in &dims {
        points = points
            .into_iter()
            .flat_map(|p| {
                values.iter().map(move |v| {
                    let mut q = p.clone();
                    q.push(v);
                    q
                })
            })
            .collect();
    }
    points
        .into_iter()
        .map(|coordinates| {
            let mut point = Point {
                sweep: Map::new(),
                clients: 1,
                target: None,
                iterations: None,
                params: Map::new(),
            };
            for (c, dim) in coordinates.into_iter().zip(&dims) {
                if dim.len() > 1 {
                    point.sweep.insert(c.key().to_string(), c.label());
                }
                match c {
                    Coordinate::Clients(n) => point.clients = *n,
                    Coordinate::Target(t) => point.target = Some(*t),
                    Coordinate::Iterations(n) => point.iterations = Some(*n),
                    Coordinate::Param(k, v) => {
                        point.params.insert(k.to_string(), (*v).clone());
                    }
                }
            }
            point
        })
        .collect()
}
