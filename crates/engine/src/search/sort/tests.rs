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
