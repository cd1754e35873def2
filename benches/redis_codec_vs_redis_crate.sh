#!/usr/bin/env bash
# runner's hand-written RESP codec (the whole runner: driver, recorder, codec) against a lean
# loop on the `redis` crate (benches/redis-crate-client), side by side against one
# redis-server: GET and SET at 1, 50 and 1,000 clients, with and without a 16-deep pipeline.
# Prints runner / redis-crate ratios of requests/s, p50 and p99 (per operation). Each point
# runs ROUNDS times alternating which goes first; the medians are compared (see
# redis_side_by_side.sh).
#
#   cargo build --release && benches/redis_codec_vs_redis_crate.sh [SCALE] [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")/.."
SCALE=${1:-1} ROUNDS=${2:-3} PORT=${PORT:-6398}
WARMUP=10%  # as the crate client warms up
(cd benches/redis-crate-client && cargo build --release -q)
CRATE=./benches/redis-crate-client/target/release/redis-crate-client
source benches/redis_side_by_side.sh
other_point() { # test clients pipeline requests -> "rps p50 p99"
  "$CRATE" "127.0.0.1:$PORT" "$1" "$2" "$3" $(( $4 / $3 ))
}
side_by_side redis-rs
