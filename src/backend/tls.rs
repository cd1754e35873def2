//! TLS for network backends (rustls, ring): certificates verified by default against the
//! bundled Mozilla roots or a CA file; relaxing that is an explicit client option.

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::{ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme};
use std::path::PathBuf;
use std::sync::Arc;

#[derive(Debug, Clone, Default, PartialEq)]
pub struct TlsOptions {
    /// Check the server's certificate chain and name (on unless `verify_certs:false`).
    pub verify: bool,
    /// PEM file of CA certificates to trust instead of the bundled roots.
    pub ca_file: Option<PathBuf>,
    /// PEM client certificate and key, for servers that authenticate clients.
    pub cert_file: Option<PathBuf>,
    pub key_file: Option<PathBuf>,
    /// Name to verify the certificate against, when it differs from the host.
    pub server_name: Option<String>,
}

fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

pub fn client_config(opts: &TlsOptions) -> Result<Arc<ClientConfig>, String> {
    let builder = ClientConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?;
    let builder = if opts.verify {
        let mut roots = RootCertStore::empty();
        match &opts.ca_file {
            Some(path) => {
                let certs = CertificateDer::pem_file_iter(path)
                    .map_err(|e| format!("cannot read CA file {}: {e}", path.display()))?;
                for cert in certs {
                    let cert = cert.map_err(|e| format!("CA file {}: {e}", path.display()))?;
                    roots
                        .add(cert)
                        .map_err(|e| format!("CA file {}: {e}", path.display()))?;
                }
                if roots.is_empty() {
                    return Err(format!("CA file {} holds no certificates", path.display()));
                }
            }
            None => roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned()),
        }
        builder.with_root_certificates(roots)
    } else {
        builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(NoVerification))
    };
    let config = match (&opts.cert_file, &opts.key_file) {
        (Some(cert), Some(key)) => {
            let chain = CertificateDer::pem_file_iter(cert)
                .and_then(|certs| certs.collect::<Result<Vec<_>, _>>())
                .map_err(|e| format!("cannot read client certificate {}: {e}", cert.display()))?;
            let key_der = PrivateKeyDer::from_pem_file(key)
                .map_err(|e| format!("cannot read client key {}: {e}", key.display()))?;
            builder
                .with_client_auth_cert(chain, key_der)
                .map_err(|e| format!("client certificate {}: {e}", cert.display()))?
        }
        (None, None) => builder.with_no_client_auth(),
        _ => return Err("give both tls_cert_file and tls_key_file, or neither".into()),
    };
    Ok(Arc::new(config))
}

/// A server's TLS config from a PEM certificate chain and key (`runner serve --tls-cert`).
pub fn server_config(
    cert: &std::path::Path,
    key: &std::path::Path,
) -> Result<Arc<rustls::ServerConfig>, String> {
    let chain = CertificateDer::pem_file_iter(cert)
        .and_then(|certs| certs.collect::<Result<Vec<_>, _>>())
        .map_err(|e| format!("cannot read certificate {}: {e}", cert.display()))?;
    if chain.is_empty() {
        return Err(format!("{} holds no certificates", cert.display()));
    }
    let key_der = PrivateKeyDer::from_pem_file(key)
        .map_err(|e| format!("cannot read key {}: {e}", key.display()))?;
    let mut config = rustls::ServerConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?
        .with_no_client_auth()
        .with_single_cert(chain, key_der)
        .map_err(|e| {
            format!(
                "certificate {} with key {}: {e}",
                cert.display(),
                key.display()
            )
        })?;
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(Arc::new(config))
}

/// The name to check the certificate against: the option, else the host part of `host:port`.
pub fn server_name(opts: &TlsOptions, host: &str) -> Result<ServerName<'static>, String> {
    let name = match &opts.server_name {
        Some(n) => n.clone(),
        None => host
            .rsplit_once(':')
            .map_or(host, |(h, _)| h)
            .trim_start_matches('[')
            .trim_end_matches(']')
            .to_string(),
    };
    ServerName::try_from(name.clone())
        .map_err(|_| format!("`{name}` is not a valid TLS server name (set tls_server_name)"))
}

/// `verify_certs:false`: accept any certificate. Signatures are still checked, so the
/// handshake is real; only the identity of the server is not.
#[derive(Debug)]
struct NoVerification;

impl ServerCertVerifier for NoVerification {
    fn verify_server_cert(
        &self,
        _: &CertificateDer<'_>,
        _: &[CertificateDer<'_>],
        _: &ServerName<'_>,
        _: &[u8],
        _: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &provider().signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &provider().signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        provider()
            .signature_verification_algorithms
            .supported_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn server_names_come_from_the_host_or_the_option() {
        let opts = TlsOptions::default();
        assert_eq!(
            server_name(&opts, "localhost:6379").unwrap(),
            ServerName::try_from("localhost").unwrap()
        );
        assert!(matches!(
            server_name(&opts, "127.0.0.1:6379").unwrap(),
            ServerName::IpAddress(_)
        ));
        let named = TlsOptions {
            server_name: Some("cache.internal".into()),
            ..opts
        };
        assert_eq!(
            server_name(&named, "10.0.0.1:6379").unwrap(),
            ServerName::try_from("cache.internal").unwrap()
        );
    }

    #[test]
    fn bad_files_are_named() {
        let opts = TlsOptions {
            verify: true,
            ca_file: Some("/nonexistent/ca.pem".into()),
            ..Default::default()
        };
        assert!(client_config(&opts)
            .unwrap_err()
            .contains("/nonexistent/ca.pem"));
        let half = TlsOptions {
            verify: true,
            cert_file: Some("c.pem".into()),
            ..Default::default()
        };
        assert!(client_config(&half).unwrap_err().contains("both"));
        assert!(client_config(&TlsOptions {
            verify: true,
            ..Default::default()
        })
        .is_ok());
    }
}
