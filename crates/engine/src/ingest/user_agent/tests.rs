//! Elasticsearch's own user_agent cases (UserAgentProcessorTests, its REST test), with the
//! answers Elasticsearch gives.

use super::*;
use crate::ingest::doc::doc;
use crate::ingest::Pipelines;
use serde_json::json;

fn parsed(ua: &str, options: Value) -> Value {
    let mut p = Pipelines::default();
    let mut config = json!({"field": "source_field", "target_field": "target_field"});
    for (k, v) in options.as_object().into_iter().flatten() {
        config[k] = v.clone();
    }
    p.put("ua", json!({"processors": [{"user_agent": config}]}))
        .unwrap();
    let mut d = doc(json!({"source_field": ua}));
    assert!(p.run("ua", &mut d).unwrap());
    d.source["target_field"].clone()
}

#[test]
fn browsers_systems_and_devices_as_elasticsearch_names_them() {
    let mac = "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_9_2) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/33.0.1750.149 Safari/537.36";
    assert_eq!(
        parsed(mac, json!({})),
        json!({"name": "Chrome", "os": {"name": "Mac OS X", "version": "10.9.2", "full": "Mac OS X 10.9.2"},
               "device": {"name": "Mac"}, "original": mac, "version": "33.0.1750.149"})
    );
    let win = parsed("Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/87.0.4280.141 Safari/537.36", json!({}));
    assert_eq!(win["version"], json!("87.0.4280.141"));
    assert_eq!(
        win["os"],
        json!({"name": "Windows", "version": "10", "full": "Windows 10"})
    );
    assert_eq!(win["device"], json!({"name": "Other"}));
    let xoom = parsed("Mozilla/5.0 (Linux; U; Android 3.0; en-us; Xoom Build/HRI39) AppleWebKit/525.10+ (KHTML, like Gecko) Version/3.0.4 Mobile Safari/523.12.2", json!({}));
    assert_eq!(
        (xoom["name"].clone(), xoom["version"].clone()),
        (json!("Android"), json!("3.0"))
    );
    assert_eq!(xoom["os"]["full"], json!("Android 3.0"));
    assert_eq!(xoom["device"]["name"], json!("Motorola Xoom"));
    let spider = parsed(
        "Mozilla/5.0 (compatible; EasouSpider; +http://www.easou.com/search/spider.html)",
        json!({}),
    );
    assert_eq!(spider["name"], json!("EasouSpider"));
    assert!(spider.get("version").is_none() && spider.get("os").is_none());
    assert_eq!(spider["device"]["name"], json!("Spider"));
    let ipad = parsed("Mozilla/5.0 (iPad; CPU OS 12_2 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/12.1 Mobile/15E148 Safari/604.1", json!({}));
    assert_eq!(
        (ipad["name"].clone(), ipad["version"].clone()),
        (json!("Mobile Safari"), json!("12.1"))
    );
    assert_eq!(
        ipad["os"],
        json!({"name": "iOS", "version": "12.2", "full": "iOS 12.2"})
    );
    assert_eq!(ipad["device"]["name"], json!("iPad"));
    let made_up = parsed("Something I made up v42.0.1", json!({}));
    assert_eq!(made_up["name"], json!("Other"));
    assert!(made_up.get("version").is_none() && made_up.get("os").is_none());
    assert_eq!(made_up["device"], json!({"name": "Other"}));
    let firefox = parsed(
        "Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:128.0) Gecko/20100101 Firefox/128.0",
        json!({}),
    );
    assert_eq!(
        (firefox["name"].clone(), firefox["version"].clone()),
        (json!("Firefox"), json!("128.0"))
    );
    // Only the properties asked for.
    assert_eq!(
        parsed(mac, json!({"properties": ["os"]})),
        json!({"os": {"name": "Mac OS X", "version": "10.9.2", "full": "Mac OS X 10.9.2"}})
    );
}

#[test]
fn missing_values_and_options_are_answered_as_elasticsearch_does() {
    let mut p = Pipelines::default();
    p.put(
        "ua",
        json!({"processors": [{"user_agent": {"field": "source_field"}}]}),
    )
    .unwrap();
    let e = p.run("ua", &mut doc(json!({}))).unwrap_err();
    assert!(
        e.contains("field [source_field] not present as part of path [source_field]"),
        "{e}"
    );
    let e = p
        .run("ua", &mut doc(json!({"source_field": null})))
        .unwrap_err();
    assert!(
        e.contains("field [source_field] is null, cannot parse user-agent."),
        "{e}"
    );
    p.put(
        "quiet",
        json!({"processors": [{"user_agent": {"field": "source_field", "ignore_missing": true}}]}),
    )
    .unwrap();
    assert!(p.run("quiet", &mut doc(json!({}))).unwrap());
    let bad = Pipelines::default()
        .put(
            "x",
            json!({"processors": [{"user_agent": {"field": "f", "properties": ["colour"]}}]}),
        )
        .unwrap_err();
    assert!(bad.contains("illegal property value [colour]"), "{bad}");
    let bad = Pipelines::default()
        .put(
            "x",
            json!({"processors": [{"user_agent": {"field": "f", "extract_device_type": true}}]}),
        )
        .unwrap_err();
    assert!(bad.contains("extract_device_type"), "{bad}");
}

#[test]
fn java_classes_are_ascii() {
    assert_eq!(
        java_ascii_classes(r"(\d+)\.(\w)[\d\s]"),
        "([0-9]+)\\.([a-zA-Z_0-9])[0-9 \\t\\n\\x0B\\f\\r]"
    );
    assert_eq!(java_ascii_classes(r"[^]\d]"), "[^\\]0-9]");
}
