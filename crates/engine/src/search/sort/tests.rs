use super::*;

#[test]
fn score_bits_keep_the_order_of_scores() {
    let scores = [-3.5f32, -0.0, 0.0, 0.25, 1.0, 7.5];
    let bits: Vec<u64> = scores.iter().map(|s| score_bits(*s)).collect();
    assert!(bits.windows(2).all(|w| w[0] <= w[1]), "{bits:?}");
    for s in scores {
        assert_eq!(score_from_bits(score_bits(s)), s);
    }
}

#[test]
fn sorts_parse_and_bad_ones_say_why() {
    let body = json!({"mappings": {"properties": {"pop": {"type": "long"}, "name": {"type": "text"}, "at": {"type": "date"}}}});
    let mapping = Mapping::from_index_body(&body).unwrap();
    let s = Sort::parse(&json!([{"pop": "desc"}, "at"]), &mapping).unwrap();
    assert_eq!(
        (s.keys.len(), s.user_keys, s.keys[0].desc, s.keys[1].desc),
        (3, 2, true, false)
    );
    assert!(Sort::parse(&json!("name"), &mapping)
        .unwrap_err()
        .contains("numeric, date and boolean"));
    assert!(Sort::parse(&json!("nope"), &mapping)
        .unwrap_err()
        .contains("no such field"));
    assert!(Sort::parse(&json!({"pop": "up"}), &mapping)
        .unwrap_err()
        .contains("asc"));
    let after = s.search_after(&json!([42, 1_600_000_000_000i64])).unwrap();
    assert_eq!(
        s.values(&after.key, &Vec::new()),
        json!([42, 1_600_000_000_000i64])
    );
    assert!(s.search_after(&json!([1])).unwrap_err().contains("2 keys"));
}

#[test]
fn a_script_sorts_by_its_number() {
    let body = serde_json::json!({"mappings": {"properties": {"pop": {"type": "long"}, "name": {"type": "keyword"}}}});
    let idx = crate::index::EmbeddedIndex::create("s", &body).unwrap();
    for (name, pop) in [("a", 5), ("b", 20), ("c", 1)] {
        idx.add_for_test(&json!({"name": name, "pop": pop}).to_string());
    }
    idx.refresh().unwrap();
    let plan = idx
        .compile(&json!({"sort": [{"_script": {"type": "number", "order": "asc",
            "script": {"source": "Math.abs(doc['pop'].value - params.near)", "params": {"near": 6}}}}]}))
        .unwrap();
    let (_, hits, _) = idx.search_hits(&plan, &idx.searcher()).unwrap();
    // |5 - 6| = 1, |1 - 6| = 5, |20 - 6| = 14.
    let shown: Vec<serde_json::Value> = hits.iter().map(|h| h.sort.clone().unwrap()).collect();
    assert_eq!(shown, [json!([1.0]), json!([5.0]), json!([14.0])]);
    for (bad, says) in [
        (
            json!({"_script": {"type": "string", "script": "doc['name'].value"}}),
            "type `string`",
        ),
        (
            json!({"_script": {"type": "number", "script": "doc['nope'].value"}}),
            "No field found",
        ),
    ] {
        let plan = idx.compile(&json!({"sort": [bad]}));
        let e = match plan {
            Err(e) => e.message,
            Ok(p) => idx.search_hits(&p, &idx.searcher()).err().unwrap().message,
        };
        assert!(e.contains(says), "{e}");
    }
}
