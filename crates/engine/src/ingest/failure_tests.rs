//! Failures and their handlers as Elasticsearch runs them: `_ingest.on_failure_*` for the
//! handlers, `set_security_user` on a cluster without security, Fleet's final pipeline.

use super::*;
use crate::ingest::doc::doc;
use serde_json::json;

#[test]
fn handlers_read_what_failed_and_it_is_gone_after() {
    let mut p = Pipelines::default();
    p.put(
        "p",
        json!({"processors": [
            {"convert": {"field": "ip", "type": "ip", "tag": "check-ip", "on_failure": [
                {"set": {"field": "why", "value": "{{ _ingest.on_failure_processor_type }}/{{ _ingest.on_failure_processor_tag }} in {{ _ingest.on_failure_pipeline }}: {{ _ingest.on_failure_message }}"}}]}},
            {"set": {"field": "after", "value": "[{{ _ingest.on_failure_message }}]"}}]}),
    )
    .unwrap();
    let mut d = doc(json!({"ip": "10.0.0.300"}));
    assert!(p.run("p", &mut d).unwrap());
    assert_eq!(
        d.source["why"],
        json!("convert/check-ip in p: [10.0.0.300] is not a valid ipv4/ipv6 address")
    );
    assert_eq!(d.source["after"], json!("[]"));
    let mut d = doc(json!({"ip": "fe80::1%eth0"}));
    assert!(p.run("p", &mut d).unwrap());
    assert!(d.source.get("why").is_none());
}

#[test]
fn fleets_final_pipeline_runs_as_on_a_cluster_without_security() {
    // The shape of elastic/logs' `.fleet_final_pipeline-1`: its scripts, then
    // `set_security_user`, which fails with no user; the pipeline's handlers note it.
    let mut p = Pipelines::default();
    p.put("final", json!({
        "processors": [
            {"script": {"ignore_failure": true, "source": "if (ctx?.event == null) { ctx.event = [:]; } ctx.event.ingested = metadata().now.withNano(0).format(DateTimeFormatter.ISO_OFFSET_DATE_TIME);"}},
            {"set_security_user": {"field": "_security", "properties": ["authentication_type", "username", "realm", "api_key"]}},
            {"script": {"source": "ctx.event.agent_id_status = 'unreached'"}}],
        "on_failure": [
            {"remove": {"field": "_security", "ignore_missing": true, "ignore_failure": true}},
            {"append": {"field": "error.message", "value": ["failed in Fleet agent final_pipeline: {{ _ingest.on_failure_message }}"]}}]
    })).unwrap();
    let mut d = doc(json!({"message": "hello"}));
    assert!(p.run("final", &mut d).unwrap());
    assert_eq!(
        d.source["event"],
        json!({"ingested": "2026-12-05T10:00:00Z"})
    );
    assert_eq!(
        d.source["error"]["message"],
        json!(["failed in Fleet agent final_pipeline: Security (authentication) is not enabled on this cluster, so there is no active user - the [set_security_user] processor cannot be used without security"])
    );
    let bad = Pipelines::default()
        .put("x", json!({"processors": [{"set_security_user": {"field": "u", "properties": ["colour"]}}]}))
        .unwrap_err();
    assert!(bad.contains("Property value [colour] is in valid"), "{bad}");
    // An ingest script calls its context's functions only.
    let bad = Pipelines::default()
        .put(
            "x",
            json!({"processors": [{"script": {"source": "emit(1)"}}]}),
        )
        .unwrap_err();
    assert!(bad.contains("function `emit`"), "{bad}");
}
