//! Which system a race measures, from esrally's flags as a Rally user types them:
//! `--target-hosts` (a list, or Rally's JSON of cluster names), `--pipeline`, `--backend`.
//! Hosts mean a cluster: never the embedded engine with hosts ignored.

use super::CliError;
use crate::backend::BackendKind;

/// esrally 2.13's pipelines; runner runs only `benchmark-only` (it never provisions).
const RALLY_PIPELINES: [&str; 4] = [
    "benchmark-only",
    "from-distribution",
    "from-sources",
    "from-sources-skip-build",
];

/// The backend and hosts the flags name, or why they contradict each other.
pub fn resolve(
    backend: Option<BackendKind>,
    target_hosts: Option<&str>,
    pipeline: Option<&str>,
) -> Result<(BackendKind, Vec<String>), CliError> {
    let hosts = match target_hosts {
        Some(text) => parse_hosts(text)?,
        None => Vec::new(),
    };
    let benchmark_only = check_pipeline(pipeline)?;
    let kind = match (backend, hosts.is_empty()) {
        (Some(BackendKind::Embedded), false) => {
            return Err(CliError::Usage(format!(
                "--backend embedded runs the engine inside runner and takes no --target-hosts (given {}); drop --backend embedded to race the cluster at those hosts, or drop --target-hosts",
                shown(&hosts)
            )))
        }
        (Some(BackendKind::Embedded), true) if benchmark_only => {
            return Err(CliError::Usage(
                "--pipeline benchmark-only races a cluster that is running, --backend embedded the engine inside runner; drop one of them".into(),
            ))
        }
        (Some(kind), _) => kind,
        (None, false) if hosts.iter().all(|h| is_redis_url(h)) => BackendKind::Redis,
        (None, false) => BackendKind::Elasticsearch,
        // As esrally: benchmark-only without hosts is the cluster at localhost:9200.
        (None, true) if benchmark_only => BackendKind::Elasticsearch,
        (None, true) => BackendKind::Embedded,
    };
    Ok((kind, hosts))
}

fn is_redis_url(h: &str) -> bool {
    h.starts_with("redis://") || h.starts_with("rediss://")
}

/// Hosts as they may be shown: a URL's user information is masked.
fn shown(hosts: &[String]) -> String {
    hosts
        .iter()
        .map(|h| crate::backend::masked_host(h))
        .collect::<Vec<_>>()
        .join(",")
}

/// `benchmark-only` is true; esrally's other pipelines provision Elasticsearch and are refused.
fn check_pipeline(pipeline: Option<&str>) -> Result<bool, CliError> {
    match pipeline.map(str::trim) {
        None | Some("") => Ok(false),
        Some("benchmark-only") => Ok(true),
        Some(p) if RALLY_PIPELINES.contains(&p) => Err(CliError::Usage(format!(
            "--pipeline {p} installs and starts Elasticsearch; runner never provisions a cluster: race one that is running (--pipeline benchmark-only --target-hosts HOST:PORT), or drop --pipeline to race the embedded engine"
        ))),
        Some(p) => {
            let hint = crate::suggest::did_you_mean(p, RALLY_PIPELINES);
            Err(CliError::Usage(format!(
                "--pipeline {p} is not one of esrally's pipelines{hint}; runner runs benchmark-only"
            )))
        }
    }
}

/// esrally's `--target-hosts`: `host:port,...`, a JSON object of cluster names
/// (`{"default": ["host:port"]}`) or a `.json` file holding one. runner races one cluster.
pub fn parse_hosts(text: &str) -> Result<Vec<String>, CliError> {
    let trimmed = text.trim();
    let (json, source) = if trimmed.starts_with('{') {
        (trimmed.to_string(), "--target-hosts".to_string())
    } else if trimmed.ends_with(".json") {
        let path = std::path::Path::new(trimmed);
        let text = crate::backend::read_bounded(path).map_err(CliError::Usage)?;
        (text, path.display().to_string())
    } else {
        return Ok(trimmed
            .split(',')
            .map(str::trim)
            .filter(|h| !h.is_empty())
            .map(str::to_string)
            .collect());
    };
    let value: serde_json::Value = serde_json::from_str(&json).map_err(|e| {
        CliError::Usage(format!(
            "{source}: not a JSON object of cluster names (line {}, column {})",
            e.line(),
            e.column()
        ))
    })?;
    let clusters = value.as_object().ok_or_else(|| {
        CliError::Usage(format!(
            "{source}: not a JSON object of cluster names such as {{\"default\": [\"127.0.0.1:9200\"]}}"
        ))
    })?;
    if let Some(other) = clusters.keys().find(|k| *k != "default") {
        return Err(CliError::Usage(format!(
            "{source}: names the cluster `{other}`; runner races one cluster, `default` (multi-cluster races are not run)"
        )));
    }
    let list = clusters
        .get("default")
        .and_then(|v| v.as_array())
        .ok_or_else(|| CliError::Usage(format!("{source}: holds no `default` list of hosts")))?;
    list.iter()
        .map(|h| match h {
            serde_json::Value::String(s) => Ok(s.clone()),
            // Rally also takes {"host": ..., "port": ...}.
            serde_json::Value::Object(o) => {
                match (o.get("host").and_then(|v| v.as_str()), o.get("port")) {
                    (Some(host), Some(port)) => Ok(format!("{host}:{port}")),
                    (Some(host), None) => Ok(host.to_string()),
                    _ => Err(CliError::Usage(format!(
                        "{source}: a host object needs `host` (and `port`)"
                    ))),
                }
            }
            _ => Err(CliError::Usage(format!(
                "{source}: each host is \"host:port\" or {{\"host\": ..., \"port\": ...}}"
            ))),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn usage(r: Result<(BackendKind, Vec<String>), CliError>) -> String {
        match r {
            Err(CliError::Usage(m)) => m,
            other => panic!("expected a usage error, got {other:?}"),
        }
    }

    #[test]
    fn hosts_select_a_cluster_never_the_embedded_engine() {
        assert_eq!(
            resolve(None, Some("https://es:9200"), None).unwrap(),
            (
                BackendKind::Elasticsearch,
                vec!["https://es:9200".to_string()]
            )
        );
        assert_eq!(resolve(None, None, None).unwrap().0, BackendKind::Embedded);
        assert_eq!(
            resolve(None, Some("redis://127.0.0.1:6379"), None)
                .unwrap()
                .0,
            BackendKind::Redis
        );
        assert_eq!(
            resolve(None, None, Some("benchmark-only")).unwrap(),
            (BackendKind::Elasticsearch, vec![])
        );
        let e = usage(resolve(Some(BackendKind::Embedded), Some("es:9200"), None));
        assert!(
            e.contains("--backend embedded") && e.contains("--target-hosts"),
            "{e}"
        );
        let e = usage(resolve(
            Some(BackendKind::Embedded),
            None,
            Some("benchmark-only"),
        ));
        assert!(e.contains("drop one"), "{e}");
    }

    #[test]
    fn provisioning_pipelines_are_refused_in_esrallys_words() {
        let e = usage(resolve(None, None, Some("from-distribution")));
        assert!(e.contains("never provisions"), "{e}");
        let e = usage(resolve(None, None, Some("benchmark-onyl")));
        assert!(e.contains("did you mean `benchmark-only`"), "{e}");
    }

    #[test]
    fn reads_rallys_json_hosts_of_one_cluster() {
        assert_eq!(
            parse_hosts(r#"{"default": ["10.0.0.1:9200", {"host": "10.0.0.2", "port": 9200}]}"#)
                .unwrap(),
            vec!["10.0.0.1:9200", "10.0.0.2:9200"]
        );
        let e = parse_hosts(r#"{"default": ["a:1"], "remote": ["b:1"]}"#).unwrap_err();
        assert!(e.to_string().contains("`remote`"));
        assert_eq!(parse_hosts(" a:1 , b:2,").unwrap(), vec!["a:1", "b:2"]);
    }
}
