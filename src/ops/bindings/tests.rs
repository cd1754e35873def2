use super::*;
use serde_json::json;

fn bound(params: Value, dir: Option<&std::path::Path>) -> Result<Arc<BoundBody>, ParamError> {
    let ctx = TrackContext {
        indices: &[],
        corpora: &[],
        dir,
    };
    let map = params.as_object().unwrap().clone();
    let p = Params::new("search", &map);
    BoundBody::parse(&p, &map["body"], &ctx).map(|b| b.expect("bindings given"))
}

fn draws(b: &Arc<BoundBody>, client: u64, clients: u64, n: usize) -> Vec<Value> {
    let mut d = b.client(client, clients);
    (0..n)
        .map(|_| serde_json::from_slice(d.render()).expect("a drawn body is JSON"))
        .collect()
}

#[test]
fn slots_take_their_values_typed_as_text_and_spread() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("terms.txt"),
        "Paris\n\n\"quoted\" name\nBerlin\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("q.csv"),
        "java,2012-04-08\nrust,2015-05-15\n",
    )
    .unwrap();
    let b = bound(
        json!({
            "body": {
                "query": {"terms": {"name": ["...${terms}", "${salt}"]}},
                "tag": "${tag}",
                "note": "tag ${tag} at ${n}",
                "size": "${n}",
                "all": "${terms}"
            },
            "bindings": {
                "terms": {"lines": "terms.txt"},
                "salt": {"int": [1, 100], "as": "string"},
                "tag": {"choice-file": "q.csv", "column": 0},
                "n": {"int": [5, 5]}
            }
        }),
        Some(dir.path()),
    )
    .unwrap();
    for body in draws(&b, 0, 1, 50) {
        let names = body["query"]["terms"]["name"].as_array().unwrap();
        assert_eq!(
            names[..3],
            [json!("Paris"), json!("\"quoted\" name"), json!("Berlin")]
        );
        let salt: u32 = names[3].as_str().unwrap().parse().unwrap();
        assert!((1..=100).contains(&salt));
        let tag = body["tag"].as_str().unwrap();
        assert!(tag == "java" || tag == "rust", "{body}");
        assert_eq!(body["note"], json!(format!("tag {tag} at 5")));
        assert_eq!(body["size"], json!(5));
        assert_eq!(body["all"].as_array().unwrap().len(), 3);
    }
}

#[test]
fn draws_are_seeded_per_client_and_sequences_do_not_overlap() {
    let b = bound(
        json!({
            "body": {"id": "${id}", "x": "${x}", "u": "${u}", "d": "${d}"},
            "bindings": {
                "id": {"sequence": [100, 10]},
                "x": {"float": [0.0, 1.0]},
                "u": {"uuid": true},
                "d": {"date": ["2020-01-01", "2020-12-31"], "format": "%Y-%m-%d"}
            }
        }),
        None,
    )
    .unwrap();
    assert_eq!(
        draws(&b, 1, 3, 20),
        draws(&b, 1, 3, 20),
        "the same client draws the same"
    );
    assert_ne!(draws(&b, 0, 3, 20), draws(&b, 1, 3, 20));
    let mut ids: Vec<i64> = (0..3)
        .flat_map(|c| draws(&b, c, 3, 10))
        .map(|v| v["id"].as_i64().unwrap())
        .collect();
    ids.sort();
    assert_eq!(ids, (0..30).map(|k| 100 + 10 * k).collect::<Vec<_>>());
    for v in draws(&b, 0, 1, 100) {
        let u = v["u"].as_str().unwrap();
        assert_eq!(u.len(), 36);
        assert_eq!(&u[14..15], "4", "a version-4 uuid: {u}");
        let d = v["d"].as_str().unwrap();
        assert!(d.starts_with("2020-") && d.len() == 10, "{d}");
        let x = v["x"].as_f64().unwrap();
        assert!((0.0..1.0).contains(&x));
    }
}

#[test]
fn weighted_and_zipf_picks_follow_their_weights() {
    let b = bound(
        json!({
            "body": {"w": "${w}", "z": "${z}"},
            "bindings": {
                "w": {"weighted": [["a", 9], ["b", 1]]},
                "z": {"zipf": ["first", "second", "third", "fourth"], "exponent": 1.5}
            }
        }),
        None,
    )
    .unwrap();
    let all = draws(&b, 0, 1, 20_000);
    let count = |k: &str, v: &str| all.iter().filter(|d| d[k] == v).count() as f64 / 20_000.0;
    // 90% and 10%, within sampling error.
    assert!((count("w", "a") - 0.9).abs() < 0.02, "{}", count("w", "a"));
    assert!((count("w", "b") - 0.1).abs() < 0.02);
    // Zipf with s = 1.5 over 4 ranks: rank 1 takes 1/H = 0.6, rank 2 0.6/2^1.5.
    let h: f64 = (1..=4).map(|k| 1.0 / (k as f64).powf(1.5)).sum();
    assert!(
        (count("z", "first") - 1.0 / h).abs() < 0.02,
        "{}",
        count("z", "first")
    );
    assert!((count("z", "second") - 1.0 / h / 2f64.powf(1.5)).abs() < 0.02);
}

#[test]
fn mistakes_are_named() {
    let err = |params: Value| bound(params, None).unwrap_err().message;
    let e = err(json!({"body": {"q": "${contry}"}, "bindings": {"country": {"choice": ["a"]}}}));
    assert!(
        e.contains("`${contry}` names no binding") && e.contains("`country`"),
        "{e}"
    );
    let e = err(json!({"body": {"q": 1}, "bindings": {"tag": {"choice": ["a"]}}}));
    assert!(e.contains("never uses `${tag}`"), "{e}");
    let e =
        err(json!({"body": {"q": "${t}"}, "bindings": {"t": {"choice": ["a"], "int": [1, 2]}}}));
    assert!(e.contains("exactly one of"), "{e}");
    let e = err(json!({"body": {"q": ["...${t}"]}, "bindings": {"t": {"choice": ["a"]}}}));
    assert!(e.contains("not a `lines` binding"), "{e}");
    let e = err(json!({"body": {"q": "x ${t}"}, "bindings": {"t": {"choice": [{"a": 1}]}}}));
    assert!(e.contains("cannot stand inside a string"), "{e}");
    let e = err(json!({"body": {"q": "${t}"}, "bindings": {"t": {"lines": "terms.txt"}}}));
    assert!(e.contains("track's directory"), "{e}");
    let dir = tempfile::tempdir().unwrap();
    let e = bound(
        json!({"body": {"q": "${t}"}, "bindings": {"t": {"lines": "../../etc/passwd"}}}),
        Some(dir.path()),
    )
    .unwrap_err()
    .message;
    assert!(e.contains("outside the track directory"), "{e}");
}
