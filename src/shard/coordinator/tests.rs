use super::*;
use crate::results::RaceRecord;
use tokio::net::TcpStream;

struct Peer {
    read: tokio::net::tcp::OwnedReadHalf,
    write: tokio::net::tcp::OwnedWriteHalf,
}

impl Peer {
    async fn join(c: &Coordinator, shard: u32, count: u32, plan: &str) -> Peer {
        let (read, mut write) = TcpStream::connect(c.address).await.unwrap().into_split();
        let hello = ToCoordinator::Hello {
            shard,
            count,
            plan: plan.into(),
            host: format!("h{shard}"),
        };
        wire::send(&mut write, &hello, false).await.unwrap();
        Peer { read, write }
    }

    async fn send(&mut self, m: ToCoordinator) {
        let large = matches!(m, ToCoordinator::Results(_));
        wire::send(&mut self.write, &m, large).await.unwrap();
    }

    async fn next(&mut self) -> ToMember {
        wire::receive(&mut self.read).await.unwrap()
    }

    async fn arrive(&mut self, step: usize) -> ToMember {
        self.send(ToCoordinator::Arrive {
            step,
            what: format!("step {step}"),
            round_trip_ns: 100_000,
        })
        .await;
        self.next().await
    }
}

fn results(shard: u32, status: &str) -> ToCoordinator {
    let race = serde_json::json!({
        "format": 2, "race_id": format!("r/shard-{shard}"), "status": status,
        "stop_reason": "the first error", "started_at": "2026-12-05T05:56:24Z", "track": "t",
        "track_path": "t.yaml", "challenge": "c", "test_mode": false, "params": {},
        "backend": {"kind": "embedded", "version": "1", "details": {}}, "on_error": "abort",
        "host": crate::results::HostInfo::current(), "tasks": [],
    });
    let race: RaceRecord = serde_json::from_value(race).unwrap();
    ToCoordinator::Results(Box::new(ShardResults {
        race,
        histograms: HistogramFile::default(),
    }))
}

async fn start(count: u32) -> Coordinator {
    Coordinator::start("127.0.0.1:0", count, Duration::from_secs(5), "plan".into())
        .await
        .unwrap()
}

#[tokio::test]
async fn shards_start_each_step_at_one_instant_once_all_have_arrived() {
    let c = start(2).await;
    let mut a = Peer::join(&c, 0, 2, "plan").await;
    let mut b = Peer::join(&c, 1, 2, "plan").await;
    let (ToMember::Welcome { race: ra }, ToMember::Welcome { race: rb }) =
        (a.next().await, b.next().await)
    else {
        panic!("welcome expected");
    };
    assert_eq!(ra, rb);
    // The first to arrive waits for the other; both are told the same instant.
    a.send(ToCoordinator::Arrive {
        step: 0,
        what: "x".into(),
        round_trip_ns: 1,
    })
    .await;
    let go_b = b.arrive(0).await;
    let go_a = a.next().await;
    let (ToMember::Go { at_ns: ta, .. }, ToMember::Go { at_ns: tb, .. }) = (go_a, go_b) else {
        panic!("go expected");
    };
    assert_eq!(ta, tb);
    assert!(
        ta > unix_ns(),
        "the start is ahead, for the message to arrive first"
    );
    a.send(results(0, "completed")).await;
    b.send(results(1, "completed")).await;
    let collected = c.finish().await.unwrap();
    assert_eq!(collected.results.len(), 2);
    assert_eq!(collected.barriers.len(), 1);
    assert!(collected.missing.is_empty() && collected.failure.is_none());
}

#[tokio::test]
async fn a_different_plan_fails_the_race_on_every_shard() {
    let c = start(2).await;
    let mut a = Peer::join(&c, 0, 2, "plan").await;
    let mut b = Peer::join(&c, 1, 2, "another").await;
    let ToMember::Fail { message } = b.next().await else {
        panic!()
    };
    assert!(message.contains("planned a different race"), "{message}");
    assert!(matches!(a.next().await, ToMember::Fail { .. }));
    assert!(c.finish().await.unwrap_err().contains("shard 1 (on h1)"));
}

#[tokio::test]
async fn a_shard_that_aborts_stops_the_others_at_their_next_step() {
    let c = start(3).await;
    let mut peers = Vec::new();
    for i in 0..3 {
        peers.push(Peer::join(&c, i, 3, "plan").await);
    }
    for p in &mut peers {
        assert!(matches!(p.next().await, ToMember::Welcome { .. }));
    }
    // A second shard with the same index is refused, naming the first.
    let mut twin = Peer::join(&c, 2, 3, "plan").await;
    let ToMember::Fail { message } = twin.next().await else {
        panic!()
    };
    assert!(message.contains("already joined"), "{message}");
    peers[1].send(results(1, "aborted")).await;
    let ToMember::Fail { message } = peers[2].arrive(0).await else {
        panic!()
    };
    assert!(
        message.contains("shard 1 (on h1) stopped: the first error"),
        "{message}"
    );
    peers[0].send(results(0, "aborted")).await;
    peers[2].send(results(2, "aborted")).await;
    let collected = c.finish().await.unwrap();
    assert!(collected.failure.unwrap().contains("shard 1"));
    assert_eq!(collected.results.len(), 3);
}

#[tokio::test]
async fn a_stray_connection_is_not_a_shard() {
    let c = start(1).await;
    let (mut read, mut write) = TcpStream::connect(c.address).await.unwrap().into_split();
    wire::send(&mut write, &ToCoordinator::Ping, false)
        .await
        .unwrap();
    let ToMember::Fail { message } = wire::receive(&mut read).await.unwrap() else {
        panic!()
    };
    assert!(message.contains("hello"), "{message}");
    let mut a = Peer::join(&c, 0, 1, "plan").await;
    assert!(matches!(a.next().await, ToMember::Welcome { .. }));
    a.send(results(0, "completed")).await;
    assert_eq!(c.finish().await.unwrap().results.len(), 1);
}
