//! End-to-end tests: the real `runner` binary on real tracks, each with its own results home.

mod bad_input;
mod bulk_actions;
mod bad_tracks;
mod compare;
mod elasticsearch;
mod kv;
mod memory;
mod redis;
mod redis_faults;
mod redis_tls;
mod plot;
mod race;
mod rally;
mod secrets;
mod signals;
mod tracks;
mod util;
