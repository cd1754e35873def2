//! Downloading a corpus file (a Rally track's `base-url`): HTTP(S) with the runner's own TLS
//! settings, streamed to a temp file beside the target and renamed when complete, so that an
//! interrupted download never looks like a corpus.

use std::io::Write;
use std::path::Path;

/// Fetches `url` into `target` (its directory is created).
pub fn fetch(url: &str, target: &Path) -> Result<(), String> {
    if let Some(dir) = target.parent() {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    }
    let tmp = target.with_extension(format!(
        "{}.part",
        target
            .extension()
            .and_then(|e| e.to_str())
            .unwrap_or("download")
    ));
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    let result = runtime.block_on(async {
        let tls = crate::backend::tls::client_config(&crate::backend::tls::TlsOptions {
            verify: true,
            ..Default::default()
        })?;
        let client = reqwest::Client::builder()
            .tls_backend_preconfigured((*tls).clone())
            .build()
            .map_err(|e| e.to_string())?;
        let mut response = client.get(url).send().await.map_err(|e| e.to_string())?;
        if !response.status().is_success() {
            return Err(format!("HTTP {}", response.status()));
        }
        let mut out = std::fs::File::create(&tmp)
            .map_err(|e| format!("cannot write {}: {e}", tmp.display()))?;
        while let Some(chunk) = response.chunk().await.map_err(|e| e.to_string())? {
            out.write_all(&chunk)
                .map_err(|e| format!("cannot write {}: {e}", tmp.display()))?;
        }
        out.sync_all().map_err(|e| e.to_string())
    });
    match result {
        Ok(()) => std::fs::rename(&tmp, target)
            .map_err(|e| format!("cannot move the download into place: {e}")),
        Err(e) => {
            let _ = std::fs::remove_file(&tmp);
            Err(e)
        }
    }
}
