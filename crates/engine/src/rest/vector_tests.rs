//! Vector search through the REST layer, against answers worked out from Elasticsearch's
//! documentation (its knn query example) and against exact search.

use crate::rest::tests::call;
use crate::Engine;
use serde_json::{json, Value};

fn images(b: &Engine) {
    let mapping = json!({"mappings": {"properties": {
        "image-vector": {"type": "dense_vector", "dims": 3, "index": true, "similarity": "l2_norm", "index_options": {"type": "hnsw"}},
        "file-type": {"type": "keyword"},
        "title": {"type": "text"}}}});
    assert_eq!(
        call(b, "PUT", "/my-image-index", &mapping.to_string()).0,
        200
    );
    let bulk = [
        r#"{"index":{"_id":"1"}}"#,
        r#"{"image-vector":[1,5,-20],"file-type":"jpg","title":"mountain lake"}"#,
        r#"{"index":{"_id":"2"}}"#,
        r#"{"image-vector":[42,8,-15],"file-type":"png","title":"frozen lake"}"#,
        r#"{"index":{"_id":"3"}}"#,
        r#"{"image-vector":[15,11,23],"file-type":"jpg","title":"mountain lake lodge"}"#,
    ]
    .join("\n")
        + "\n";
    let (s, r) = call(b, "POST", "/my-image-index/_bulk?refresh=true", &bulk);
    assert_eq!((s, &r["errors"]), (200, &json!(false)), "{r}");
}

fn hits(r: &Value) -> Vec<(String, f64)> {
    r["hits"]["hits"]
        .as_array()
        .unwrap_or_else(|| panic!("{r}"))
        .iter()
        .map(|h| {
            (
                h["_id"].as_str().unwrap().to_string(),
                h["_score"].as_f64().unwrap(),
            )
        })
        .collect()
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-6 * b.max(1e-3)
}

#[test]
fn the_documented_knn_examples_answer_as_elasticsearch() {
    let b = Engine::new();
    images(&b);
    // Squared distances to [-5, 9, -12]: 116, 2219, 1629; l2_norm scores 1 / (1 + d²).
    let (s, r) = call(
        &b,
        "POST",
        "/my-image-index/_search",
        r#"{"size": 3, "query": {"knn": {"field": "image-vector", "query_vector": [-5, 9, -12], "num_candidates": 10}}}"#,
    );
    assert_eq!(s, 200, "{r}");
    let h = hits(&r);
    assert_eq!(
        h.iter().map(|x| x.0.as_str()).collect::<Vec<_>>(),
        ["1", "3", "2"]
    );
    assert!(
        close(h[0].1, 1.0 / 117.0) && close(h[1].1, 1.0 / 1630.0) && close(h[2].1, 1.0 / 2220.0),
        "{h:?}"
    );
    // Top-level knn: the global k; its filter keeps only the png.
    let (_, r) = call(
        &b,
        "POST",
        "/my-image-index/_search",
        r#"{"knn": {"field": "image-vector", "query_vector": [-5, 9, -12], "k": 2, "num_candidates": 10}}"#,
    );
    assert_eq!(hits(&r).len(), 2);
    assert_eq!(r["hits"]["total"]["value"], 2);
    let (_, r) = call(
        &b,
        "POST",
        "/my-image-index/_search",
        r#"{"knn": {"field": "image-vector", "query_vector": [-5, 9, -12], "k": 3, "num_candidates": 10, "filter": {"term": {"file-type": "png"}}}}"#,
    );
    assert_eq!(
        hits(&r).iter().map(|x| x.0.as_str()).collect::<Vec<_>>(),
        ["2"]
    );
    // `similarity` bounds the distance: only doc 1 is within 11 (√116 ≈ 10.8).
    let (_, r) = call(
        &b,
        "POST",
        "/my-image-index/_search",
        r#"{"knn": {"field": "image-vector", "query_vector": [-5, 9, -12], "k": 3, "num_candidates": 10, "similarity": 11}}"#,
    );
    assert_eq!(
        hits(&r).iter().map(|x| x.0.as_str()).collect::<Vec<_>>(),
        ["1"]
    );
}

#[test]
fn int8_hnsw_is_the_default_and_its_scores_are_approximate() {
    let b = Engine::new();
    let mapping = json!({"mappings": {"properties": {"v": {"type": "dense_vector", "dims": 3, "similarity": "l2_norm"}}}});
    call(&b, "PUT", "/q", &mapping.to_string());
    let bulk = "{\"index\":{\"_id\":\"1\"}}\n{\"v\":[1,5,-20]}\n{\"index\":{\"_id\":\"2\"}}\n{\"v\":[42,8,-15]}\n";
    call(&b, "POST", "/q/_bulk?refresh=true", bulk);
    let (_, r) = call(
        &b,
        "POST",
        "/q/_search",
        r#"{"knn": {"field": "v", "query_vector": [-5, 9, -12], "k": 1}}"#,
    );
    let h = hits(&r);
    assert_eq!(h[0].0, "1");
    // Seven bits a value: within 2% of the exact 1/117, not equal to it.
    assert!(
        (h[0].1 - 1.0 / 117.0).abs() < 0.02 / 117.0 && h[0].1 != 1.0 / 117.0,
        "{h:?}"
    );
}

#[test]
fn a_profiled_knn_search_counts_the_vectors_it_compared() {
    let b = Engine::new();
    images(&b);
    let (s, r) = call(
        &b,
        "POST",
        "/my-image-index/_search",
        r#"{"knn": {"field": "image-vector", "query_vector": [-5, 9, -12], "k": 2, "num_candidates": 3}, "profile": true, "_source": false}"#,
    );
    assert_eq!(s, 200, "{r}");
    let knn = &r["profile"]["shards"][0]["dfs"]["knn"];
    assert_eq!(knn.as_array().unwrap().len(), 1, "{r}");
    // Three vectors in the index: the graph compares each at most once.
    let n = knn[0]["vector_operations_count"].as_u64().unwrap();
    assert!((1..=3).contains(&n), "{r}");
    assert_eq!(hits(&r).len(), 2);
    let (s, r) = call(
        &b,
        "POST",
        "/my-image-index/_search",
        r#"{"query": {"match_all": {}}, "profile": true}"#,
    );
    assert_eq!(s, 400, "{r}");
    assert!(r.to_string().contains("profile"), "{r}");
}

#[test]
fn a_filtered_alias_filters_the_knn_candidates() {
    let b = Engine::new();
    images(&b);
    let alias = r#"{"actions": [{"add": {"index": "my-image-index", "alias": "jpgs", "filter": {"term": {"file-type": "jpg"}}}}]}"#;
    assert_eq!(call(&b, "POST", "/_aliases", alias).0, 200);
    let (s, r) = call(
        &b,
        "POST",
        "/jpgs/_search",
        r#"{"knn": {"field": "image-vector", "query_vector": [42, 8, -15], "k": 3, "num_candidates": 10}}"#,
    );
    assert_eq!(s, 200, "{r}");
    // Doc 2 (the png) is the nearest, but the alias does not reach it; nothing else is added.
    let ids: Vec<String> = hits(&r).into_iter().map(|h| h.0).collect();
    assert_eq!(ids.len(), 2, "{r}");
    assert!(!ids.contains(&"2".to_string()), "{r}");
}

#[test]
fn hybrid_search_adds_the_query_and_knn_scores() {
    let b = Engine::new();
    images(&b);
    let (_, alone) = call(
        &b,
        "POST",
        "/my-image-index/_search",
        r#"{"query": {"match": {"title": "frozen"}}}"#,
    );
    let text = hits(&alone)[0].1;
    let (_, r) = call(
        &b,
        "POST",
        "/my-image-index/_search",
        r#"{"query": {"match": {"title": "frozen"}}, "knn": {"field": "image-vector", "query_vector": [-5, 9, -12], "k": 1, "num_candidates": 3, "boost": 2}}"#,
    );
    let h = hits(&r);
    // Doc 2 by its text, doc 1 as the nearest; neither is both.
    assert_eq!(h.len(), 2, "{h:?}");
    let by_id = |id: &str| h.iter().find(|x| x.0 == id).unwrap().1;
    assert!(close(by_id("2"), text));
    assert!(close(by_id("1"), 2.0 / 117.0));
    // Two knn clauses on one document sum.
    let (_, r) = call(
        &b,
        "POST",
        "/my-image-index/_search",
        r#"{"knn": [{"field": "image-vector", "query_vector": [1, 5, -20], "k": 1}, {"field": "image-vector", "query_vector": [1, 5, -19], "k": 1}]}"#,
    );
    let h = hits(&r);
    assert_eq!(h[0].0, "1");
    assert!(close(h[0].1, 1.0 + 0.5), "{h:?}");
}

#[test]
fn opensearch_knn_and_script_score_run_too() {
    let b = Engine::new();
    let mapping = json!({"settings": {"index.knn": true}, "mappings": {"properties": {"v": {"type": "knn_vector", "dimension": 2, "method": {"name": "hnsw", "space_type": "innerproduct", "engine": "faiss"}}}}});
    assert_eq!(call(&b, "PUT", "/os", &mapping.to_string()).0, 200);
    let bulk = "{\"index\":{\"_id\":\"a\"}}\n{\"v\":[1,0]}\n{\"index\":{\"_id\":\"b\"}}\n{\"v\":[0,2]}\n{\"index\":{\"_id\":\"c\"}}\n{\"v\":[-1,-1]}\n";
    call(&b, "POST", "/os/_bulk?refresh=true", bulk);
    let (s, r) = call(
        &b,
        "POST",
        "/os/_search",
        r#"{"query": {"knn": {"v": {"vector": [0, 1], "k": 3}}}}"#,
    );
    assert_eq!(s, 200, "{r}");
    // innerproduct: dot + 1 when positive, 1 / (1 - dot) when not.
    let h = hits(&r);
    assert_eq!(
        h.iter().map(|x| x.0.as_str()).collect::<Vec<_>>(),
        ["b", "a", "c"]
    );
    assert!(
        close(h[0].1, 3.0) && close(h[1].1, 1.0) && close(h[2].1, 0.5),
        "{h:?}"
    );
    let (s, r) = call(
        &b,
        "POST",
        "/os/_search",
        r#"{"query": {"script_score": {"query": {"match_all": {}}, "script": {"source": "dotProduct(params.q, 'v') + 10", "params": {"q": [1, 1]}}}}}"#,
    );
    assert_eq!(s, 200, "{r}");
    let h = hits(&r);
    assert_eq!(h[0], ("b".to_string(), 12.0));
    assert_eq!(h[2], ("c".to_string(), 8.0));
}

#[test]
fn bad_vectors_and_queries_are_refused_with_elasticsearchs_reasons() {
    let b = Engine::new();
    images(&b);
    let (s, r) = call(
        &b,
        "POST",
        "/my-image-index/_doc",
        r#"{"image-vector": [1, 2]}"#,
    );
    assert_eq!(s, 400, "{r}");
    assert!(
        r["error"]["reason"]
            .as_str()
            .unwrap()
            .contains("different number of dimensions"),
        "{r}"
    );
    for (body, said) in [
        (
            r#"{"knn": {"field": "image-vector", "query_vector": [1, 2], "k": 1}}"#,
            "different number of dimensions",
        ),
        (
            r#"{"knn": {"field": "title", "query_vector": [1, 2, 3], "k": 1}}"#,
            "dense_vector",
        ),
        (
            r#"{"knn": {"field": "image-vector", "query_vector": [1, 2, 3], "k": 5, "num_candidates": 2}}"#,
            "num_candidates",
        ),
        (
            r#"{"query": {"script_score": {"query": {"match_all": {}}, "script": "doc['x'].value"}}}"#,
            "No field found for [x] in mapping",
        ),
    ] {
        let (s, r) = call(&b, "POST", "/my-image-index/_search", body);
        assert_eq!(s, 400, "{body}: {r}");
        assert!(r.to_string().contains(said), "{body}: {r}");
    }
    let (s, r) = call(
        &b,
        "PUT",
        "/strange",
        r#"{"mappings": {"properties": {"v": {"type": "dense_vector", "dims": 3, "index_options": {"type": "bbq_hnsw"}}}}}"#,
    );
    assert_eq!(s, 400, "{r}");
    assert!(r.to_string().contains("bbq_hnsw"), "{r}");
}

fn vectors(n: usize, dims: usize, seed: u64) -> Vec<Vec<f32>> {
    let mut state = seed | 1;
    (0..n)
        .map(|_| {
            (0..dims)
                .map(|_| {
                    state ^= state << 13;
                    state ^= state >> 7;
                    state ^= state << 17;
                    (state >> 40) as f32 / (1u64 << 24) as f32 - 0.5
                })
                .collect()
        })
        .collect()
}

/// Many segments, deletions and a merge: the graphs follow the segments, and kNN finds what
/// an exact `script_score` finds for nearly every query.
#[test]
fn graphs_follow_segments_through_deletes_and_merges_on_disk() {
    let home = tempfile::tempdir().unwrap();
    let b = Engine::with_storage(crate::storage::EngineStorage::Disk, home.path()).unwrap();
    let mapping = json!({"mappings": {"properties": {"v": {"type": "dense_vector", "dims": 8, "similarity": "cosine", "index_options": {"type": "hnsw", "m": 12, "ef_construction": 64}}}}});
    assert_eq!(call(&b, "PUT", "/vec", &mapping.to_string()).0, 200);
    let docs = vectors(1200, 8, 7);
    for (part, chunk) in docs.chunks(400).enumerate() {
        let mut bulk = String::new();
        for (i, v) in chunk.iter().enumerate() {
            bulk += &format!(
                "{{\"index\":{{\"_id\":\"{}\"}}}}\n{}\n",
                part * 400 + i,
                json!({"v": v})
            );
        }
        call(&b, "POST", "/vec/_bulk?refresh=true", &bulk);
    }
    let graph_files = || {
        walk(home.path())
            .into_iter()
            .filter(|p| p.extension().is_some_and(|e| e == "hnsw"))
            .count()
    };
    let segments = |b: &Engine| {
        call(b, "GET", "/vec/_stats", "").1["_all"]["primaries"]["segments"]["count"]
            .as_u64()
            .unwrap() as usize
    };
    // A graph per live segment; those of segments merged away go once no searcher holds them.
    let settle = |b: &Engine| {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        while graph_files() != segments(b) && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        assert_eq!(graph_files(), segments(b));
    };
    settle(&b);
    call(&b, "DELETE", "/vec/_doc/5?refresh=true", "");
    let queries = vectors(20, 8, 99);
    let recall = |b: &Engine| {
        let mut found = 0;
        for q in &queries {
            let knn = json!({"knn": {"field": "v", "query_vector": q, "k": 10, "num_candidates": 50}, "_source": false});
            let exact = json!({"size": 10, "_source": false, "query": {"script_score": {"query": {"match_all": {}}, "script": {"source": "cosineSimilarity(params.q, 'v') + 1.0", "params": {"q": q}}}}});
            let a: Vec<String> = hits(&call(b, "POST", "/vec/_search", &knn.to_string()).1)
                .into_iter()
                .map(|h| h.0)
                .collect();
            let e: Vec<String> = hits(&call(b, "POST", "/vec/_search", &exact.to_string()).1)
                .into_iter()
                .map(|h| h.0)
                .collect();
            assert!(
                !a.contains(&"5".to_string()) && !e.contains(&"5".to_string()),
                "deleted"
            );
            found += a.iter().filter(|id| e.contains(id)).count();
        }
        found as f64 / (10 * queries.len()) as f64
    };
    let before = recall(&b);
    assert!(before > 0.9, "recall {before}");
    assert_eq!(
        call(&b, "POST", "/vec/_forcemerge?max_num_segments=1", "").0,
        200
    );
    call(&b, "POST", "/vec/_refresh", "");
    let after = recall(&b);
    assert!(after > 0.9, "recall {after}");
    assert_eq!(segments(&b), 1);
    settle(&b);
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}
