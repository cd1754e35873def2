//! End-to-end tests: the real `runner` binary on real tracks, each with its own results home.

mod aggregations;
mod bad_input;
mod bad_tracks;
mod bindings;
mod bulk_actions;
mod compare;
mod elasticsearch;
mod export;
mod full_disk;
mod http_wire;
mod kv;
mod memory;
mod percentiles;
mod plot;
mod race;
mod rally;
mod redis;
mod redis_faults;
mod redis_tls;
mod secrets;
mod serve_limits;
mod shards;
mod signals;
mod thresholds;
mod tracks;
mod util;
