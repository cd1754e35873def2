use super::*;
use crate::ingest::doc::doc;
use serde_json::json;

fn grok(config: Value) -> Result<Grok, String> {
    let mut o = Options::new("grok", config.as_object().unwrap().clone());
    let g = Grok::parse(&mut o)?;
    o.finish()?;
    Ok(g)
}

fn run(config: Value, message: &str) -> Result<Value, String> {
    let g = grok(config)?;
    let mut d = doc(json!({"message": message}));
    g.run(&mut d)?;
    Ok(Value::Object(d.source))
}

#[test]
fn an_apache_access_line_as_the_apache_integration_reads_it() {
    let config = json!({"field": "message", "patterns": [
        "(%{IPORHOST:destination.domain} )?%{IPORHOST:source.address} %{DATA:apache.access.identity} %{DATA:user.name} \\[%{HTTPDATE:apache.access.time}\\] \"(?:%{WORD:http.request.method} %{DATA:_tmp.url_orig} HTTP/%{NUMBER:http.version}|-)?\" %{NUMBER:http.response.status_code:long} (?:%{NUMBER:http.response.body.bytes:long}|-)( \"%{DATA:http.request.referrer}\")?( \"%{DATA:user_agent.original}\")?"]});
    let line = r#"127.0.0.1 - frank [10/Oct/2000:13:55:36 -0700] "GET /apache_pb.gif?x=1 HTTP/1.0" 200 2326 "http://www.example.com/start.html" "Mozilla/4.08""#;
    let out = run(config, line).unwrap();
    assert_eq!(out["source"]["address"], "127.0.0.1");
    assert_eq!(out["user"]["name"], "frank");
    assert_eq!(out["apache"]["access"]["identity"], "-");
    assert_eq!(
        out["apache"]["access"]["time"],
        "10/Oct/2000:13:55:36 -0700"
    );
    assert_eq!(out["http"]["request"]["method"], "GET");
    assert_eq!(out["_tmp"]["url_orig"], "/apache_pb.gif?x=1");
    assert_eq!(out["http"]["version"], "1.0");
    assert_eq!(out["http"]["response"]["status_code"], 200);
    assert_eq!(out["http"]["response"]["body"]["bytes"], 2326);
    assert_eq!(
        out["http"]["request"]["referrer"],
        "http://www.example.com/start.html"
    );
    assert_eq!(out["user_agent"]["original"], "Mozilla/4.08");
    // The optional destination did not take part: no field.
    assert!(out.get("destination").is_none());
}

#[test]
fn ip_v4_and_v6_and_hostnames_are_told_apart() {
    let config =
        json!({"field": "message", "patterns": ["^(%{IP:source.ip}|%{HOSTNAME:source.domain})$"]});
    for (text, field) in [
        ("10.1.2.3", "ip"),
        ("2001:db8::ff00:42:8329", "ip"),
        ("::1", "ip"),
        ("fe80::1%eth0", "ip"),
        ("::ffff:192.0.2.128", "ip"),
        ("www.example.com", "domain"),
    ] {
        let out = run(config.clone(), text).unwrap();
        assert_eq!(out["source"][field], text, "{text}");
    }
    assert!(run(config, "not an address!")
        .unwrap_err()
        .contains("do not match"));
}

#[test]
fn ruby_flags_quoted_names_and_line_ends_read_as_elasticsearch_reads_them() {
    // Kafka's pattern: `(?m)` lets `.` cross lines, `$` ends a line, `(?'a.b'...)` captures.
    let config = json!({"field": "message", "trace_match": true, "patterns": [
        "(?m)%{TIMESTAMP_ISO8601:kafka.log.timestamp}. %{LOGLEVEL:log.level} +%{JAVALOGMESSAGE:message} \\(%{JAVACLASS:kafka.log.class}\\)$[ \\n]*(?'kafka.log.trace.full'.*)"]});
    let line = "[2024-05-01 10:00:00,123] ERROR Failed to start (kafka.server.KafkaServer)\njava.lang.IllegalStateException: boom\n\tat kafka.Main.run(Main.java:1)";
    let g = grok(config).unwrap();
    let mut d = doc(json!({"message": line}));
    g.run(&mut d).unwrap();
    let out = Value::Object(d.source.clone());
    assert_eq!(out["kafka"]["log"]["timestamp"], "2024-05-01 10:00:00,123");
    assert_eq!(out["log"]["level"], "ERROR");
    assert_eq!(out["message"], "Failed to start");
    assert_eq!(out["kafka"]["log"]["class"], "kafka.server.KafkaServer");
    assert_eq!(
        out["kafka"]["log"]["trace"]["full"],
        "java.lang.IllegalStateException: boom\n\tat kafka.Main.run(Main.java:1)"
    );
    assert_eq!(
        d.get("_ingest._grok_match_index").unwrap().as_ref(),
        &json!("0")
    );
}

#[test]
fn custom_definitions_types_and_captures_inside_built_in_patterns() {
    // The system integration's syslog pattern: a possessive `?+`, definitions of its own.
    let config = json!({"field": "message", "pattern_definitions": {"TIMESTAMP": "(?:%{TIMESTAMP_ISO8601}|%{SYSLOGTIMESTAMP})"},
        "patterns": ["^<%{NONNEGINT:log.syslog.priority:int}>(?:%{NONNEGINT:version} )?+%{TIMESTAMP:ts} %{SYSLOGHOST:host.hostname}? %{DATA:process.name}(?:\\[%{POSINT:process.pid:long}\\])?:%{SPACE}%{GREEDYDATA:rest}$"]});
    let out = run(
        config,
        "<34>Oct 11 22:14:15 mymachine su[230]: 'su root' failed",
    )
    .unwrap();
    assert_eq!(out["log"]["syslog"]["priority"], 34);
    assert_eq!(out["ts"], "Oct 11 22:14:15");
    assert_eq!(out["host"]["hostname"], "mymachine");
    assert_eq!(out["process"]["name"], "su");
    assert_eq!(out["process"]["pid"], 230);
    assert_eq!(out["rest"], "'su root' failed");
    // URIHOST captures `port` wherever it is used (the legacy patterns do).
    let out = run(
        json!({"field": "message", "patterns": ["%{URI:url}"]}),
        "http://example.com:8080/a/b?c=d",
    )
    .unwrap();
    assert_eq!(
        (out["url"].as_str(), out["port"].as_str()),
        (Some("http://example.com:8080/a/b?c=d"), Some("8080"))
    );
    // A float keeps its digits.
    let out = run(
        json!({"field": "message", "patterns": ["%{NUMBER:d:float}"]}),
        "t=0.1",
    )
    .unwrap();
    assert_eq!(out["d"], json!(0.1));
}

#[test]
fn bad_patterns_are_refused_when_put() {
    let e = grok(json!({"field": "m", "patterns": ["%{NOPE:x}"]}))
        .err()
        .unwrap();
    assert!(e.contains("Unable to find pattern [NOPE]"), "{e}");
    let e = grok(json!({"field": "m", "patterns": ["%{A}"], "pattern_definitions": {"A": "%{B}", "B": "%{A}"}})).err().unwrap();
    assert!(e.contains("circular reference"), "{e}");
    let e = grok(json!({"field": "m", "patterns": ["(unclosed"]}))
        .err()
        .unwrap();
    assert!(e.contains("not a regular expression"), "{e}");
    assert!(grok(json!({"field": "m", "patterns": ["x"], "ecs_compatibility": "v1"})).is_err());
    // A missing field: an error, or nothing with ignore_missing.
    let g = grok(json!({"field": "nope", "patterns": ["x"], "ignore_missing": true})).unwrap();
    assert!(g.run(&mut doc(json!({}))).is_ok());
}

#[test]
fn the_date_processor_reads_and_writes_on_its_zones_clock() {
    let mut pipelines = crate::ingest::Pipelines::default();
    pipelines
        .put("p", json!({"processors": [{"date": {"field": "t", "formats": ["yyyy-MM-dd HH:mm:ss", "ISO8601"], "timezone": "{{ event.timezone }}"}}]}))
        .unwrap();
    let mut d = doc(json!({"t": "2024-07-01 12:00:00", "event": {"timezone": "Europe/Vienna"}}));
    pipelines.run("p", &mut d).unwrap();
    // Noon in Vienna in summer is 10:00 UTC, written with Vienna's offset.
    assert_eq!(d.source["@timestamp"], "2024-07-01T12:00:00.000+02:00");
    // A date naming its offset is that instant, written on the zone's clock.
    let mut d = doc(json!({"t": "2024-01-01T00:00:00Z", "event": {"timezone": "-05:00"}}));
    pipelines.run("p", &mut d).unwrap();
    assert_eq!(d.source["@timestamp"], "2023-12-31T19:00:00.000-05:00");
    let mut d = doc(json!({"t": "2024-01-01T00:00:00Z", "event": {"timezone": "Mars/Olympus"}}));
    assert!(pipelines.run("p", &mut d).is_err());
}

#[test]
fn foreach_geoip_and_the_text_processors_run_in_a_pipeline() {
    let mut pipelines = crate::ingest::Pipelines::default();
    pipelines
        .put("p", json!({"processors": [
            {"foreach": {"field": "hosts", "processor": {"uppercase": {"field": "_ingest._value"}}}},
            {"foreach": {"field": "ports", "processor": {"convert": {"field": "_ingest._value", "type": "integer"}}}},
            {"geoip": {"field": "source.ip"}},
            {"geoip": {"field": "source.ip", "database_file": "GeoLite2-ASN.mmdb", "target_field": "source.as"}},
            {"uri_parts": {"field": "request"}},
            {"registered_domain": {"field": "url.domain", "target_field": "url"}},
            {"kv": {"field": "pairs", "field_split": "&", "value_split": "=", "target_field": "q"}}
        ]}))
        .unwrap();
    let mut d = doc(
        json!({"hosts": ["a", "b"], "ports": {"http": "80", "https": "443"}, "source": {"ip": "89.160.20.128"},
        "request": "https://www.shop.example.co.uk/cart.php?id=1", "pairs": "x=1&y=2"}),
    );
    pipelines.run("p", &mut d).unwrap();
    let out = Value::Object(d.source);
    assert_eq!(out["hosts"], json!(["A", "B"]));
    assert_eq!(out["ports"], json!({"http": 80, "https": 443}));
    // No database: tagged, as Elasticsearch tags documents before its databases download.
    assert_eq!(
        out["tags"],
        json!([
            "_geoip_database_unavailable_GeoLite2-City.mmdb",
            "_geoip_database_unavailable_GeoLite2-ASN.mmdb"
        ])
    );
    assert!(out["source"].get("geo").is_none());
    assert_eq!(out["url"]["path"], "/cart.php");
    assert_eq!(out["url"]["extension"], "php");
    assert_eq!(out["url"]["registered_domain"], "example.co.uk");
    assert_eq!(out["url"]["subdomain"], "www.shop");
    assert_eq!(out["url"]["top_level_domain"], "co.uk");
    assert_eq!(out["q"], json!({"x": "1", "y": "2"}));
    // `_ingest._value` is gone once the foreach ends.
    assert!(d.ingest.is_empty());
}
