//! The keys a task of a challenge takes: one table holding each key's name, how its value is
//! read, whether it sweeps, its JSON Schema fragment and a line about it. The task resolver reads
//! values through the table's parsers, the sweep checks and their messages read it, and tests tie
//! it to `schemas/track.schema.json` and to docs/tracks.md.

use crate::track::task::{MAX_CLIENTS, MAX_ITERATIONS};

/// How a key's value is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Parser {
    /// A string.
    Name,
    /// An operation's name, or an inline operation, resolved against the track's operations.
    Operation,
    /// Operation references, each resolved as `Operation`.
    Operations,
    /// A whole number from 1 to `max`, or a list of them (a sweep).
    Counts { max: u64 },
    /// A rate in ops/s above zero, or a list of them.
    Rates,
    /// Rates, `max` (a capacity search) or a ramp of `stages`.
    Target,
    /// A time between operations above zero, or a list of them; read as rates.
    Intervals,
    /// A time: `30s`, `1m`, or seconds.
    Duration,
    /// Iterations, a time, or a percentage of the work.
    Warmup,
    /// `deterministic`, `poisson` or `unthrottled`.
    Schedule,
    /// A whole number from 0.
    Count,
    /// A boolean.
    Flag,
    /// A share: `2%` or 0.02.
    Share,
    /// One rate in ops/s above zero.
    Rate,
    /// `non-fatal`.
    ErrorLevel,
    /// The operation's params, overridden.
    Params,
    /// `metric: condition` pairs.
    Thresholds,
    /// A string or a list of strings.
    Tags,
    /// An object: when an operation is tried again.
    Retry,
}

/// One key of a task.
pub struct TaskKey {
    /// As tracks write it.
    pub name: &'static str,
    /// How its value is read.
    pub parser: Parser,
    /// A list of values sweeps it (each value a point with its own trials).
    pub sweepable: bool,
    /// Its fragment of the track schema (`$defs/task/properties/<name>`), as JSON.
    pub schema: &'static str,
    /// What it sets, in a line.
    pub about: &'static str,
}

pub static TASK_KEYS: &[TaskKey] = &[
    TaskKey {
        name: "name",
        parser: Parser::Name,
        sweepable: false,
        schema: r##"{"$ref": "#/$defs/name"}"##,
        about: "the task's name in reports (default: the operation's name)",
    },
    TaskKey {
        name: "operation",
        parser: Parser::Operation,
        sweepable: false,
        schema: r##"{"$ref": "#/$defs/operationRef"}"##,
        about: "an operation name, or an inline operation",
    },
    TaskKey {
        name: "clients",
        parser: Parser::Counts { max: MAX_CLIENTS },
        sweepable: true,
        schema: r##"{"$ref": "#/$defs/positiveIntSweep"}"##,
        about: "concurrent clients; the target rate is split across them",
    },
    TaskKey {
        name: "warmup",
        parser: Parser::Warmup,
        sweepable: false,
        schema: r##"{"$ref": "#/$defs/warmup"}"##,
        about: "before measuring: iterations, a time, or a fraction of the work",
    },
    TaskKey {
        name: "iterations",
        parser: Parser::Counts {
            max: MAX_ITERATIONS,
        },
        sweepable: true,
        schema: r##"{"$ref": "#/$defs/positiveIntSweep"}"##,
        about: "measured operations across all clients",
    },
    TaskKey {
        name: "time-period",
        parser: Parser::Duration,
        sweepable: false,
        schema: r##"{"$ref": "#/$defs/duration"}"##,
        about: "run for this long instead of a number of iterations",
    },
    TaskKey {
        name: "target-throughput",
        parser: Parser::Target,
        sweepable: true,
        schema: r##"{"oneOf": [{"$ref": "#/$defs/positiveNumberSweep"}, {"const": "max", "description": "Search for the highest rate that holds the task's `slo`."}, {"$ref": "#/$defs/ramp"}]}"##,
        about: "the rate for all clients together, in ops/s; `max` searches for the highest rate that holds the `slo`; `{start, stages}` ramps it",
    },
    TaskKey {
        name: "target-interval",
        parser: Parser::Intervals,
        sweepable: true,
        schema: r##"{"$ref": "#/$defs/durationSweep"}"##,
        about: "the time between operations, for all clients together",
    },
    TaskKey {
        name: "schedule",
        parser: Parser::Schedule,
        sweepable: false,
        schema: r##"{"type": "string", "enum": ["deterministic", "poisson", "unthrottled"]}"##,
        about: "deterministic, poisson or unthrottled",
    },
    TaskKey {
        name: "trials",
        parser: Parser::Count,
        sweepable: false,
        schema: r##"{"$ref": "#/$defs/trials"}"##,
        about: "repeat the task; each trial is reported and stored",
    },
    TaskKey {
        name: "warmup-trials",
        parser: Parser::Count,
        sweepable: false,
        schema: r##"{"type": "integer", "minimum": 0, "maximum": 1000, "description": "Whole trials run first, with their resets, and not recorded (the bulk indexer benchmark's warmup runs)."}"##,
        about: "whole trials run first and not recorded",
    },
    TaskKey {
        name: "reset",
        parser: Parser::Operations,
        sweepable: false,
        schema: r##"{"$ref": "#/$defs/reset"}"##,
        about: "operations run before every trial, not reported",
    },
    TaskKey {
        name: "params",
        parser: Parser::Params,
        sweepable: false,
        schema: r##"{"type": "object", "description": "Overrides of the operation's params; a list sweeps a sweepable param (e.g. bulk-size)."}"##,
        about: "overrides of the operation's params",
    },
    TaskKey {
        name: "ignore-response-error-level",
        parser: Parser::ErrorLevel,
        sweepable: false,
        schema: r##"{"enum": ["non-fatal"], "description": "Under --on-error abort, error responses of this task (HTTP statuses, error replies, failed bulk items) do not stop the race; broken connections, timeouts and garbage still do (Rally's key of the same name)."}"##,
        about: "non-fatal: error responses do not stop a race under --on-error abort",
    },
    TaskKey {
        name: "retry",
        parser: Parser::Retry,
        sweepable: false,
        schema: r##"{"type": "object", "additionalProperties": false, "description": "An operation tried again after a failure, as Rally's Retry runner: `retries` (more attempts), `until-success` (retry until one succeeds, at most `give-up-after`, default 10m), `wait-period` (between attempts, default 0.5s), `on-timeout` (retry broken connections, timeouts and 408s, default true), `on-error` (retry answers that say the work is not done: a cluster health below the status waited for, failed bulk items). The attempts and waits are one operation.", "properties": {"retries": {"type": "integer", "minimum": 0, "maximum": 1000000}, "until-success": {"type": "boolean"}, "wait-period": {"$ref": "#/$defs/duration"}, "on-timeout": {"type": "boolean"}, "on-error": {"type": "boolean"}, "give-up-after": {"$ref": "#/$defs/duration"}}}"##,
        about: "when an operation is tried again after a failure (Rally's retries)",
    },
    TaskKey {
        name: "include-in-reporting",
        parser: Parser::Flag,
        sweepable: false,
        schema: r##"{"type": "boolean", "description": "false: the task runs and is stored, but is left out of reports, plots and comparisons (Rally's key; Rally's administrative operations default to false)."}"##,
        about: "false: run and stored, left out of reports",
    },
    TaskKey {
        name: "tags",
        parser: Parser::Tags,
        sweepable: false,
        schema: r##"{"oneOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}], "description": "Labels of the task, for `--include-tasks tag:NAME` and `--exclude-tasks tag:NAME` (Rally's key)."}"##,
        about: "labels for `--include-tasks tag:NAME` and `--exclude-tasks tag:NAME`",
    },
    TaskKey {
        name: "ramp-up-time-period",
        parser: Parser::Duration,
        sweepable: false,
        schema: r##"{"$ref": "#/$defs/duration", "description": "Start the clients one after another over this time (client i of n at i/n of it); it must lie within a time warmup (Rally's key of the same name)."}"##,
        about: "start the clients one after another over this time",
    },
    TaskKey {
        name: "thresholds",
        parser: Parser::Thresholds,
        sweepable: false,
        schema: r##"{"type": "object", "description": "Pass/fail criteria on the task's merged results, judged in every report; a failed one makes `runner race` exit 3. Keys: service_time.<p50|p90|p95|p99|p99.9|p99.99|p100|mean>, latency.<...>, error_rate, throughput, recall.<mean|min|p5|p50> (a vector-search); values: a comparison such as \"< 5ms\", \"< 0.1%\", \">= 1000\" or \">= 99% of target\".", "propertyNames": {"pattern": "^((service_time|latency)\\.(p50|p90|p95|p99|p99\\.9|p99\\.99|p100|mean)|error_rate|throughput|recall\\.(mean|min|p5|p50))$"}, "additionalProperties": {"type": "string", "pattern": "^\\s*(<=|>=|<|>)\\s*\\S"}}"##,
        about: "pass/fail criteria on the task's merged results",
    },
    TaskKey {
        name: "slo",
        parser: Parser::Thresholds,
        sweepable: false,
        schema: r##"{"type": "object", "minProperties": 1, "description": "With `target-throughput: max`: what every probe must hold, in the thresholds' syntax (latency.<stat>, service_time.<stat>, error_rate, throughput as a share of the probe's target, recall.<mean|min|p5|p50> for a vector-search).", "propertyNames": {"pattern": "^((service_time|latency)\\.(p50|p90|p95|p99|p99\\.9|p99\\.99|p100|mean)|error_rate|throughput|recall\\.(mean|min|p5|p50))$"}, "additionalProperties": {"type": "string", "pattern": "^\\s*(<=|>=|<|>)\\s*\\S"}}"##,
        about: "with `target-throughput: max`: the goal every probe must hold",
    },
    TaskKey {
        name: "probe-time",
        parser: Parser::Duration,
        sweepable: false,
        schema: r##"{"$ref": "#/$defs/duration", "description": "A capacity search's measured window per probe (default 10s)."}"##,
        about: "a capacity search's measured window per probe (default 10s)",
    },
    TaskKey {
        name: "probe-warmup",
        parser: Parser::Duration,
        sweepable: false,
        schema: r##"{"$ref": "#/$defs/duration", "description": "Run before each probe's window, not measured (default 5s); its backlog still counts."}"##,
        about: "run before each probe's window, not measured (default 5s)",
    },
    TaskKey {
        name: "precision",
        parser: Parser::Share,
        sweepable: false,
        schema: r##"{"oneOf": [{"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 0.5}, {"type": "string", "pattern": "^\\s*[0-9.]+\\s*%\\s*$"}], "description": "A capacity search stops when its bracket is this narrow (default 2%)."}"##,
        about: "a capacity search stops when its bracket is this narrow (default 2%)",
    },
    TaskKey {
        name: "probe-start",
        parser: Parser::Rate,
        sweepable: false,
        schema: r##"{"type": "number", "exclusiveMinimum": 0, "description": "A capacity search's first rate (default: half the rate its clients reach unthrottled)."}"##,
        about: "a capacity search's first rate (default: half the unthrottled rate)",
    },
    TaskKey {
        name: "max-probes",
        parser: Parser::Count,
        sweepable: false,
        schema: r##"{"type": "integer", "minimum": 3, "maximum": 1000, "description": "Most probes one capacity search runs (default 40)."}"##,
        about: "most probes one capacity search runs (default 40)",
    },
];

/// The table's row for a key.
pub fn task_key(name: &str) -> Option<&'static TaskKey> {
    TASK_KEYS.iter().find(|k| k.name == name)
}

/// The task keys a list sweeps, in the table's order.
pub fn sweepable_task_keys() -> impl Iterator<Item = &'static str> {
    TASK_KEYS.iter().filter(|k| k.sweepable).map(|k| k.name)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn schema() -> serde_json::Value {
        serde_json::from_str(include_str!("../../schemas/track.schema.json")).unwrap()
    }

    #[test]
    fn the_schema_holds_each_task_key_as_the_table_defines_it() {
        let schema = schema();
        let properties = schema["$defs"]["task"]["properties"].as_object().unwrap();
        let names: Vec<&str> = TASK_KEYS.iter().map(|k| k.name).collect();
        let listed: Vec<&str> = properties.keys().map(String::as_str).collect();
        assert_eq!(
            names, listed,
            "the table and the schema name the same keys, in order"
        );
        for key in TASK_KEYS {
            let fragment: serde_json::Value = serde_json::from_str(key.schema).unwrap();
            assert_eq!(
                properties[key.name], fragment,
                "`{}`'s schema fragment",
                key.name
            );
            // A sweepable key's schema takes a list; no other key's does.
            let takes_list = key.schema.contains("Sweep\"");
            assert_eq!(
                takes_list, key.sweepable,
                "`{}`: sweepable in the table and the schema",
                key.name
            );
        }
    }

    /// A parser reads what the schema lets through: the table's two columns agree.
    #[test]
    fn each_parser_reads_what_its_schema_fragment_allows() {
        for key in TASK_KEYS {
            let fragment: serde_json::Value = serde_json::from_str(key.schema).unwrap();
            let reference = fragment["$ref"].as_str().unwrap_or_default();
            let expected = match key.parser {
                Parser::Counts { .. } => "#/$defs/positiveIntSweep",
                Parser::Rates => "#/$defs/positiveNumberSweep",
                Parser::Target => {
                    assert!(
                        key.schema.contains("#/$defs/positiveNumberSweep")
                            && key.schema.contains("#/$defs/ramp"),
                        "`{}`",
                        key.name
                    );
                    continue;
                }
                Parser::Share => {
                    assert!(fragment.get("oneOf").is_some(), "`{}`", key.name);
                    continue;
                }
                Parser::Rate => {
                    assert_eq!(fragment["type"], "number", "`{}`", key.name);
                    continue;
                }
                Parser::Intervals => "#/$defs/durationSweep",
                Parser::Duration => "#/$defs/duration",
                Parser::Warmup => "#/$defs/warmup",
                Parser::Name => "#/$defs/name",
                Parser::Operation => "#/$defs/operationRef",
                Parser::Operations => "#/$defs/reset",
                Parser::Count => {
                    assert!(
                        reference == "#/$defs/trials" || fragment["type"] == "integer",
                        "`{}`",
                        key.name
                    );
                    continue;
                }
                Parser::Schedule | Parser::ErrorLevel => {
                    assert!(
                        fragment.get("enum").is_some(),
                        "`{}` reads one of a list",
                        key.name
                    );
                    continue;
                }
                Parser::Flag => {
                    assert_eq!(fragment["type"], "boolean", "`{}`", key.name);
                    continue;
                }
                Parser::Tags => {
                    assert!(fragment.get("oneOf").is_some(), "`{}`", key.name);
                    continue;
                }
                Parser::Params | Parser::Thresholds | Parser::Retry => {
                    assert_eq!(fragment["type"], "object", "`{}`", key.name);
                    continue;
                }
            };
            assert_eq!(
                reference, expected,
                "`{}`: its parser and its schema",
                key.name
            );
        }
    }

    #[test]
    fn the_track_documentation_describes_every_task_key() {
        let docs = include_str!("../../docs/tracks.md");
        for key in TASK_KEYS {
            assert!(
                docs.contains(&format!("| `{}`", key.name)),
                "docs/tracks.md has no row for the task key `{}`",
                key.name
            );
        }
    }
}
