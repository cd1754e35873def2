//! `runner`: a declarative benchmark runner in the style of Elasticsearch Rally.
//!
//! A race flows through the modules in this order:
//! [`track`] (YAML + templates + schema) → [`plan`] (task graph) → [`driver`] (clients,
//! schedules, measurement) → [`backend`] (the system under test) → [`metrics`] (HDR
//! histograms) → [`results`] (the race store) → [`report`] (markdown, csv, json).
//! [`cli`] only parses arguments and dispatches; [`serve`] puts the embedded engine behind
//! the Elasticsearch REST API; [`thresholds`] are the pass/fail criteria a track or `--threshold`
//! sets on a task's results; [`capacity`] searches for the highest rate that holds a goal.

pub mod backend;
pub mod capacity;
pub mod cli;
pub mod compare;
pub mod corpus;
pub mod dashboard;
pub mod driver;
pub mod export;
pub mod files;
pub mod import;
pub mod metrics;
pub mod ops;
pub mod plan;
pub mod plot;
pub mod python;
pub mod race;
pub mod rally;
pub mod report;
pub mod request;
pub mod results;
pub mod serve;
pub mod shard;
pub mod suggest;
pub mod thresholds;
pub mod track;
pub mod trend;
pub mod units;
