//! The redis backend over TLS against a real redis-server with certificates made by openssl
//! for each test: verified by a CA file, refused without it, relaxed by verify_certs:false,
//! and client certificates for a server that asks for them.

use crate::redis::{free_port, wait_for_port};
use crate::util::*;
use std::path::Path;
use std::process::{Child, Command, Stdio};

struct TlsServer {
    child: Child,
    port: u16,
    certs: tempfile::TempDir,
}

impl Drop for TlsServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn openssl(dir: &Path, args: &[&str]) {
    let out = Command::new("openssl")
        .args(args)
        .current_dir(dir)
        .output()
        .expect("openssl runs");
    assert!(
        out.status.success(),
        "openssl {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A CA, a server certificate for localhost / 127.0.0.1, and a client certificate.
pub fn make_certs(dir: &Path) {
    let ec = [
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:prime256v1",
        "-nodes",
    ];
    openssl(
        dir,
        &[
            &["req", "-x509"][..],
            &ec,
            &[
                "-keyout",
                "ca.key",
                "-out",
                "ca.pem",
                "-days",
                "2",
                "-subj",
                "/CN=runner test CA",
            ],
        ]
        .concat(),
    );
    std::fs::write(
        dir.join("server.ext"),
        "subjectAltName=DNS:localhost,IP:127.0.0.1\n",
    )
    .unwrap();
    std::fs::write(dir.join("client.ext"), "extendedKeyUsage=clientAuth\n").unwrap();
    for who in ["server", "client"] {
        openssl(
            dir,
            &[
                &["req"][..],
                &ec,
                &[
                    "-keyout",
                    &format!("{who}.key"),
                    "-out",
                    &format!("{who}.csr"),
                    "-subj",
                    &format!("/CN={who}"),
                ],
            ]
            .concat(),
        );
        let (csr, pem, ext) = (
            format!("{who}.csr"),
            format!("{who}.pem"),
            format!("{who}.ext"),
        );
        openssl(
            dir,
            &[
                "x509",
                "-req",
                "-in",
                &csr,
                "-CA",
                "ca.pem",
                "-CAkey",
                "ca.key",
                "-CAcreateserial",
                "-days",
                "2",
                "-out",
                &pem,
                "-extfile",
                &ext,
            ],
        );
    }
}

fn tls_server(auth_clients: &str) -> Option<TlsServer> {
    let have = |tool: &str| {
        Command::new(tool).arg("--version").output().is_ok()
            || Command::new(tool).arg("version").output().is_ok()
    };
    if !have("redis-server") || !have("openssl") {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI must install redis-server and openssl"
        );
        eprintln!("NOT CHECKED: redis-server or openssl is not installed");
        return None;
    }
    let certs = tempfile::tempdir().unwrap();
    make_certs(certs.path());
    let port = free_port();
    let p = |f: &str| certs.path().join(f).to_str().unwrap().to_string();
    let child = Command::new("redis-server")
        .args([
            "--port",
            "0",
            "--tls-port",
            &port.to_string(),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
        ])
        .args([
            "--tls-cert-file",
            &p("server.pem"),
            "--tls-key-file",
            &p("server.key"),
            "--tls-ca-cert-file",
            &p("ca.pem"),
            "--tls-auth-clients",
            auth_clients,
        ])
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    wait_for_port(port);
    Some(TlsServer { child, port, certs })
}

impl TlsServer {
    fn file(&self, name: &str) -> String {
        self.certs.path().join(name).to_str().unwrap().to_string()
    }

    fn race(&self, env: &Env, host: &str, options: &str) -> std::process::Output {
        let hosts = format!("{host}:{}", self.port);
        env.command(&[
            "race",
            "--track",
            "redis-kv",
            "--backend",
            "redis",
            "--target-hosts",
            &hosts,
            "--client-options",
            options,
            "--quiet",
            "--include-tasks",
            "set",
            "--track-params",
            "requests=500,clients=[4]",
        ])
        .env("RUNNER_REDIS_TIMEOUT_SECS", "3")
        .output()
        .unwrap()
    }
}

#[test]
fn tls_with_a_ca_file_verifies_and_measures() {
    let Some(srv) = tls_server("no") else { return };
    let env = Env::new();
    let out = srv.race(
        &env,
        "localhost",
        &format!("tls:true,tls_ca_file:{}", srv.file("ca.pem")),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let race = env.only_race();
    assert_eq!(race["backend"]["details"]["tls"], true);
    assert_eq!(race["backend"]["details"]["verify_certs"], true);
    let t = &tasks(&race, "set")[0]["trials"][0];
    assert_eq!(
        (t["errors"].as_u64(), t["operations"].as_u64()),
        (Some(0), Some(450)),
        "{t}"
    );
    // An IP address is checked against the certificate's IP SAN, and `rediss://` means TLS.
    let env = Env::new();
    let out = srv.race(
        &env,
        "rediss://127.0.0.1",
        &format!("tls_ca_file:{}", srv.file("ca.pem")),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn an_unknown_ca_is_refused_unless_verification_is_off() {
    let Some(srv) = tls_server("no") else { return };
    let env = Env::new();
    let out = srv.race(&env, "localhost", "tls:true");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("TLS handshake failed") && stderr.contains("UnknownIssuer"),
        "{stderr}"
    );
    assert!(env.race_dirs().is_empty());
    // The wrong name fails too, with the CA trusted.
    let out = srv.race(
        &env,
        "localhost",
        &format!(
            "tls:true,tls_ca_file:{},tls_server_name:cache.example",
            srv.file("ca.pem")
        ),
    );
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("not valid for name \"cache.example\""),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = srv.race(&env, "localhost", "tls:true,verify_certs:false");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(env.only_race()["backend"]["details"]["verify_certs"], false);
}

#[test]
fn client_certificates_for_a_server_that_asks() {
    let Some(srv) = tls_server("yes") else { return };
    let env = Env::new();
    let ca = srv.file("ca.pem");
    let out = srv.race(&env, "localhost", &format!("tls:true,tls_ca_file:{ca}"));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(1),
        "without a client certificate: {stderr}"
    );
    assert!(stderr.contains("redis at localhost"), "{stderr}");
    let out = srv.race(
        &env,
        "localhost",
        &format!(
            "tls:true,tls_ca_file:{ca},tls_cert_file:{},tls_key_file:{}",
            srv.file("client.pem"),
            srv.file("client.key")
        ),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn plain_text_to_a_tls_port_and_bad_options_are_clear() {
    let Some(srv) = tls_server("no") else { return };
    let env = Env::new();
    let out = srv.race(&env, "127.0.0.1", "");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("redis at 127.0.0.1"), "{stderr}");
    let out = srv.race(&env, "localhost", "tls:true,verify_cert:false");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("no client option `verify_cert` (did you mean `verify_certs`?)"),
        "{stderr}"
    );
    let out = srv.race(
        &env,
        "localhost",
        "tls:true,tls_ca_file:/nonexistent/ca.pem",
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("/nonexistent/ca.pem"));
}
