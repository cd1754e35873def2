//! Machine-learning jobs and datafeeds: one call each, on the job or datafeed the operation
//! names, with the URL parameters Rally's runners send.

use super::{enc, required, Call, Calls, Declared};
use serde_json::{json, Map, Value};

/// One ML operation type: its id key, method, path (`{id}` for the id), whether it sends the
/// operation's `body`, whether a 404 is no error, and the URL parameters it passes on
/// (`force` defaulting to false where Rally's runner sends it always).
struct MlCall {
    kind: &'static str,
    id_key: &'static str,
    method: &'static str,
    path: &'static str,
    body: bool,
    ignore_404: bool,
    params: &'static [&'static str],
    force_default: bool,
}

const fn ml(
    kind: &'static str,
    id_key: &'static str,
    method: &'static str,
    path: &'static str,
) -> MlCall {
    MlCall {
        kind,
        id_key,
        method,
        path,
        body: false,
        ignore_404: false,
        params: &[],
        force_default: false,
    }
}

const CALLS: &[MlCall] = &[
    MlCall {
        body: true,
        ..ml(
            "create-ml-datafeed",
            "datafeed-id",
            "PUT",
            "/_ml/datafeeds/{id}",
        )
    },
    MlCall {
        ignore_404: true,
        force_default: true,
        ..ml(
            "delete-ml-datafeed",
            "datafeed-id",
            "DELETE",
            "/_ml/datafeeds/{id}",
        )
    },
    MlCall {
        params: &["start", "end", "timeout"],
        ..ml(
            "start-ml-datafeed",
            "datafeed-id",
            "POST",
            "/_ml/datafeeds/{id}/_start",
        )
    },
    MlCall {
        params: &["force", "timeout"],
        ..ml(
            "stop-ml-datafeed",
            "datafeed-id",
            "POST",
            "/_ml/datafeeds/{id}/_stop",
        )
    },
    MlCall {
        body: true,
        ..ml(
            "create-ml-job",
            "job-id",
            "PUT",
            "/_ml/anomaly_detectors/{id}",
        )
    },
    MlCall {
        ignore_404: true,
        force_default: true,
        ..ml(
            "delete-ml-job",
            "job-id",
            "DELETE",
            "/_ml/anomaly_detectors/{id}",
        )
    },
    ml(
        "open-ml-job",
        "job-id",
        "POST",
        "/_ml/anomaly_detectors/{id}/_open",
    ),
    MlCall {
        params: &["force", "timeout"],
        ..ml(
            "close-ml-job",
            "job-id",
            "POST",
            "/_ml/anomaly_detectors/{id}/_close",
        )
    },
];

pub(super) fn calls(kind: &str, op: &Map<String, Value>, _declared: &Declared) -> Option<Calls> {
    let spec = CALLS.iter().find(|c| c.kind == kind)?;
    Some(call(spec, op))
}

fn call(spec: &MlCall, op: &Map<String, Value>) -> Calls {
    let id = required(op, spec.kind, spec.id_key)?;
    let mut c = Call::new(spec.method, spec.path.replace("{id}", &enc(&id)));
    if spec.body {
        let body = op
            .get("body")
            .cloned()
            .ok_or_else(|| format!("`{}` needs `body`", spec.kind))?;
        c = c.body(body);
    }
    if spec.force_default {
        c = c.param(
            "force",
            Some(op.get("force").cloned().unwrap_or(json!(false))),
        );
    }
    for p in spec.params {
        c = c.param(p, op.get(*p).cloned());
    }
    Ok((vec![c], spec.ignore_404))
}
