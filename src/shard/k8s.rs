//! `runner k8s-job`: the Kubernetes manifests of a sharded race. An Indexed Job runs N pods,
//! each a shard (`JOB_COMPLETION_INDEX`, with `RUNNER_SHARDS` for the count); a headless
//! Service gives pod 0 the stable name the others meet at (`<job>-0.<job>`); the track comes
//! from a ConfigMap and results go to a volume.

use serde_json::{json, Value};
use std::path::{Path, PathBuf};

/// A ConfigMap holds at most 1 MiB; the track must leave room for the object around it.
const MAX_TRACK_BYTES: u64 = 900 * 1024;

pub struct JobSpec {
    pub name: String,
    pub namespace: Option<String>,
    pub image: String,
    pub shards: u32,
    pub port: u16,
    /// A track directory (or file) to ship in a ConfigMap; None: `track` is built in.
    pub track_path: Option<PathBuf>,
    pub track: Option<String>,
    /// A PersistentVolumeClaim for the results; None: an emptyDir (shard 0 prints the merged
    /// report to its log).
    pub results_claim: Option<String>,
    /// More `runner race` arguments (`--challenge`, `--backend`, `--target-hosts`...).
    pub race_args: Vec<String>,
}

/// The manifests, as one multi-document YAML.
pub fn manifests(spec: &JobSpec) -> Result<String, String> {
    check_spec(spec)?;
    let name = &spec.name;
    let metadata = |n: &str| {
        let mut m = json!({ "name": n, "labels": { "app.kubernetes.io/name": "runner", "runner/race": name } });
        if let Some(ns) = &spec.namespace {
            m["namespace"] = json!(ns);
        }
        m
    };
    let mut docs = Vec::new();
    let mut args = vec!["race".to_string()];
    let mut volumes = Vec::new();
    let mut mounts = Vec::new();
    match (&spec.track_path, &spec.track) {
        (Some(path), _) => {
            let (data, binary, items, inside) = pack_track(path)?;
            let mut cm = json!({
                "apiVersion": "v1", "kind": "ConfigMap",
                "metadata": metadata(&format!("{name}-track")), "data": data,
            });
            if !binary.as_object().is_some_and(|b| b.is_empty()) {
                cm["binaryData"] = binary;
            }
            docs.push(cm);
            volumes.push(json!({ "name": "track", "configMap": { "name": format!("{name}-track"), "items": items } }));
            mounts.push(json!({ "name": "track", "mountPath": "/track", "readOnly": true }));
            args.extend(["--track-path".into(), format!("/track/{inside}")]);
        }
        (None, Some(track)) => args.extend(["--track".into(), track.clone()]),
        (None, None) => return Err("give --track-path DIR or --track NAME".into()),
    }
    args.extend(["--results-dir".into(), "/results".into(), "--quiet".into()]);
    args.extend(spec.race_args.iter().cloned());
    volumes.push(match &spec.results_claim {
        Some(claim) => {
            json!({ "name": "results", "persistentVolumeClaim": { "claimName": claim } })
        }
        None => json!({ "name": "results", "emptyDir": {} }),
    });
    mounts.push(json!({ "name": "results", "mountPath": "/results" }));
    let mut service = json!({
        "apiVersion": "v1", "kind": "Service", "metadata": metadata(name),
        "spec": {
            "clusterIP": "None",
            // Pod 0 must be found before it is ready: it is the rendezvous the others wait for.
            "publishNotReadyAddresses": true,
            "selector": { "job-name": name },
            "ports": [{ "name": "rendezvous", "port": spec.port, "targetPort": spec.port }],
        },
    });
    let job = job_manifest(spec, metadata(name), args, mounts, volumes);
    if spec.shards == 1 {
        service["metadata"]["annotations"] =
            json!({ "runner/note": "one shard: no rendezvous is needed" });
    }
    docs.push(service);
    docs.push(job);
    let mut out = format!(
        "# runner k8s-job: {} shard{} of one race. Shard 0 (pod {name}-0) serves the rendezvous on\n\
         # port {}, merges the shards and prints the merged report to its log; every shard\n\
         # stores its own race under /results/races/<race>/shard-<i>.\n",
        spec.shards,
        if spec.shards == 1 { "" } else { "s" },
        spec.port
    );
    for doc in docs {
        out.push_str("---\n");
        out.push_str(&serde_yaml::to_string(&doc).map_err(|e| e.to_string())?);
    }
    Ok(out)
}

/// The Indexed Job: N pods of `runner race`, shard i in pod i, shard 0 found by the others
/// through the headless Service.
fn job_manifest(
    spec: &JobSpec,
    metadata: Value,
    args: Vec<String>,
    mounts: Vec<Value>,
    volumes: Vec<Value>,
) -> Value {
    let name = &spec.name;
    let namespace = spec
        .namespace
        .as_deref()
        .map_or(String::new(), |ns| format!(".{ns}"));
    json!({
        "apiVersion": "batch/v1", "kind": "Job", "metadata": metadata,
        "spec": {
            "completionMode": "Indexed",
            "completions": spec.shards,
            "parallelism": spec.shards,
            // A shard restarted after the race began could not rejoin it.
            "backoffLimit": 0,
            "template": {
                "metadata": { "labels": { "app.kubernetes.io/name": "runner", "runner/race": name } },
                "spec": {
                    "subdomain": name,
                    "restartPolicy": "Never",
                    "containers": [{
                        "name": "runner",
                        "image": spec.image,
                        "command": ["runner"],
                        "args": args,
                        "env": [
                            { "name": "RUNNER_SHARDS", "value": spec.shards.to_string() },
                            { "name": "MASTER_ADDR", "value": format!("{name}-0.{name}{namespace}") },
                            { "name": "MASTER_PORT", "value": spec.port.to_string() },
                        ],
                        "ports": [{ "name": "rendezvous", "containerPort": spec.port }],
                        "volumeMounts": mounts,
                    }],
                    "volumes": volumes,
                },
            },
        },
    })
}

/// The Job's name, its shard count, and race arguments that do not set what the manifests
/// set themselves.
fn check_spec(spec: &JobSpec) -> Result<(), String> {
    check_name(&spec.name)?;
    if spec.shards == 0 {
        return Err("--shards must be at least 1".into());
    }
    for arg in &spec.race_args {
        let flag = arg.split('=').next().unwrap_or_default();
        if [
            "--shard",
            "--coordinator",
            "--results-dir",
            "--track",
            "--track-path",
        ]
        .contains(&flag)
        {
            return Err(format!(
                "`{arg}`: the manifests set {flag} themselves; give the other race arguments"
            ));
        }
    }
    Ok(())
}

/// A DNS-1123 label, as Job and Service names must be (and short enough for pod names).
fn check_name(name: &str) -> Result<(), String> {
    let ok = !name.is_empty()
        && name.len() <= 52
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !name.starts_with('-')
        && !name.ends_with('-');
    if ok {
        Ok(())
    } else {
        Err(format!(
            "--name `{name}`: a Job name is lowercase letters, digits and `-`, at most 52 characters, starting and ending with a letter or digit"
        ))
    }
}

/// The track's files as ConfigMap data (text) and binaryData, the volume items that put them
/// back at their paths, and the track's path inside the mount.
fn pack_track(path: &Path) -> Result<(Value, Value, Vec<Value>, String), String> {
    let (root, inside) = if path.is_dir() {
        (path.to_path_buf(), String::new())
    } else {
        let parent = path
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_else(|| ".".into());
        let file = path
            .file_name()
            .and_then(|f| f.to_str())
            .unwrap_or_default()
            .to_string();
        (parent, file)
    };
    let mut files = Vec::new();
    collect(&root, &root, &mut files, 0)?;
    let total: u64 = files.iter().map(|(_, bytes)| bytes.len() as u64).sum();
    if total > MAX_TRACK_BYTES {
        return Err(format!(
            "the track under {} holds {total} bytes, more than a ConfigMap takes ({MAX_TRACK_BYTES}): \
             put large files (corpora) in the image or a volume, and the track alone in its own directory",
            root.display()
        ));
    }
    let (mut data, mut binary, mut items) =
        (serde_json::Map::new(), serde_json::Map::new(), Vec::new());
    for (relative, bytes) in files {
        let key = relative.replace('/', "..");
        if !key
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-._".contains(&b))
        {
            return Err(format!(
                "{}: a ConfigMap key takes letters, digits, `-`, `_` and `.`; rename the file",
                root.join(&relative).display()
            ));
        }
        match String::from_utf8(bytes) {
            Ok(text) => data.insert(key.clone(), json!(text)),
            Err(e) => {
                use base64::Engine as _;
                binary.insert(
                    key.clone(),
                    json!(base64::engine::general_purpose::STANDARD.encode(e.into_bytes())),
                )
            }
        };
        items.push(json!({ "key": key, "path": relative }));
    }
    Ok((Value::Object(data), Value::Object(binary), items, inside))
}

fn collect(
    root: &Path,
    dir: &Path,
    out: &mut Vec<(String, Vec<u8>)>,
    depth: u32,
) -> Result<(), String> {
    if depth > 8 {
        return Err(format!(
            "{}: directories nested too deep for a track",
            dir.display()
        ));
    }
    let entries =
        std::fs::read_dir(dir).map_err(|e| format!("cannot read {}: {e}", dir.display()))?;
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name();
        if name.to_str().is_some_and(|n| n.starts_with('.')) {
            continue;
        }
        if path.is_dir() {
            collect(root, &path, out, depth + 1)?;
        } else if path.is_file() {
            let len = entry.metadata().map(|m| m.len()).unwrap_or(0);
            if len > MAX_TRACK_BYTES {
                return Err(format!(
                    "{} is {len} bytes, more than a ConfigMap takes: put it in the image or a volume",
                    path.display()
                ));
            }
            let bytes =
                std::fs::read(&path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
            let relative = path
                .strip_prefix(root)
                .map_err(|e| e.to_string())?
                .to_string_lossy()
                .replace('\\', "/");
            out.push((relative, bytes));
        }
    }
    out.sort();
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(dir: &Path) -> JobSpec {
        JobSpec {
            name: "geo".into(),
            namespace: Some("bench".into()),
            image: "registry.example/runner:1".into(),
            shards: 4,
            port: 29500,
            track_path: Some(dir.to_path_buf()),
            track: None,
            results_claim: Some("results".into()),
            race_args: vec!["--challenge".into(), "quick".into()],
        }
    }

    #[test]
    fn an_indexed_job_a_headless_service_and_the_track() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("track.yaml"), "name: t\n").unwrap();
        std::fs::create_dir(dir.path().join("parts")).unwrap();
        std::fs::write(dir.path().join("parts/q.json"), "{}").unwrap();
        let text = manifests(&spec(dir.path())).unwrap();
        let docs: Vec<serde_json::Value> = text
            .split("\n---\n")
            .skip(1)
            .map(|d| serde_yaml::from_str(d).unwrap())
            .collect();
        let kinds: Vec<&str> = docs.iter().map(|d| d["kind"].as_str().unwrap()).collect();
        assert_eq!(kinds, ["ConfigMap", "Service", "Job"]);
        assert_eq!(docs[0]["data"]["parts..q.json"], "{}");
        assert_eq!(docs[1]["spec"]["clusterIP"], "None");
        let job = &docs[2]["spec"];
        assert_eq!(job["completionMode"], "Indexed");
        assert_eq!(
            (job["completions"].as_u64(), job["parallelism"].as_u64()),
            (Some(4), Some(4))
        );
        let pod = &job["template"]["spec"];
        assert_eq!(pod["subdomain"], "geo");
        let env = &pod["containers"][0]["env"];
        assert_eq!(env[1]["value"], "geo-0.geo.bench");
        let args: Vec<&str> = pod["containers"][0]["args"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a.as_str().unwrap())
            .collect();
        assert_eq!(args[..3], ["race", "--track-path", "/track/"]);
        assert!(args.ends_with(&["--challenge", "quick"]));
    }

    #[test]
    fn what_a_job_cannot_hold_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("track.yaml"), "name: t\n").unwrap();
        let mut s = spec(dir.path());
        s.name = "Geo_Names".into();
        assert!(manifests(&s).unwrap_err().contains("lowercase"));
        let mut s = spec(dir.path());
        s.race_args = vec!["--shard=1/2".into()];
        assert!(manifests(&s).unwrap_err().contains("--shard"));
        std::fs::write(dir.path().join("corpus.json"), vec![b'x'; 1_000_000]).unwrap();
        assert!(manifests(&spec(dir.path()))
            .unwrap_err()
            .contains("ConfigMap"));
    }
}
