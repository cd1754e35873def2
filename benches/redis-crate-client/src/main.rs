//! `redis-crate-client HOST:PORT get|set CLIENTS PIPELINE OPERATIONS`: CLIENTS tasks, each on
//! its own multiplexed connection, run OPERATIONS operations in all (10% of them warmup, as
//! the redis-kv track does) of PIPELINE commands each on random 16-byte keys out of 100,000,
//! 3-byte values. Prints one line: requests/s, p50 ms, p99 ms (per operation, like runner).

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use std::time::Instant;

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().collect();
    let [_, host, test, clients, pipeline, operations] = args.as_slice() else {
        eprintln!("usage: redis-crate-client HOST:PORT get|set CLIENTS PIPELINE OPERATIONS");
        std::process::exit(2);
    };
    let (clients, pipeline, operations): (u64, usize, u64) = (clients.parse().unwrap(), pipeline.parse().unwrap(), operations.parse().unwrap());
    let set = test == "set";
    let client = redis::Client::open(format!("redis://{host}/")).unwrap();
    let mut conns = Vec::new();
    for _ in 0..clients {
        conns.push(client.get_multiplexed_async_connection().await.unwrap());
    }
    let per_client = operations / clients;
    let warmup = per_client / 10;
    let mut tasks = Vec::new();
    let start = std::sync::Arc::new(tokio::sync::Barrier::new(clients as usize));
    for (i, mut conn) in conns.into_iter().enumerate() {
        let start = start.clone();
        tasks.push(tokio::spawn(async move {
            let mut rng = SmallRng::seed_from_u64(i as u64);
            let mut hist = hdrhistogram::Histogram::<u64>::new_with_bounds(1, 3_600_000_000, 3).unwrap();
            let mut keys: Vec<String> = vec![String::new(); pipeline];
            start.wait().await;
            let mut first = None;
            for n in 0..per_client {
                for k in keys.iter_mut() {
                    *k = format!("k{:015}", rng.random_range(0..100_000u64));
                }
                let mut pipe = redis::pipe();
                for k in &keys {
                    if set {
                        pipe.cmd("SET").arg(k).arg("xxx");
                    } else {
                        pipe.cmd("GET").arg(k);
                    }
                }
                let t0 = Instant::now();
                let _: Vec<redis::Value> = pipe.query_async(&mut conn).await.unwrap();
                if n >= warmup {
                    first.get_or_insert(t0);
                    hist.saturating_record(t0.elapsed().as_micros() as u64);
                }
            }
            (hist, first.unwrap_or_else(Instant::now), Instant::now())
        }));
    }
    let mut all = hdrhistogram::Histogram::<u64>::new_with_bounds(1, 3_600_000_000, 3).unwrap();
    let (mut first, mut last): (Option<Instant>, Option<Instant>) = (None, None);
    for t in tasks {
        let (h, a, b) = t.await.unwrap();
        all.add(&h).unwrap();
        first = Some(first.map_or(a, |f| f.min(a)));
        last = Some(last.map_or(b, |l| l.max(b)));
    }
    let secs = last.unwrap().duration_since(first.unwrap()).as_secs_f64();
    let requests = all.len() as f64 * pipeline as f64;
    println!("{:.0} {:.3} {:.3}", requests / secs, all.value_at_quantile(0.5) as f64 / 1000.0, all.value_at_quantile(0.99) as f64 / 1000.0);
}
