//! The listener's connection settings, read from the libpq URL the rest of the storage connects
//! with, so that it encrypts and checks the server as libpq does for the same URL. tokio-postgres
//! knows fewer `sslmode`s than libpq and refuses libpq's certificate options, so the URL is
//! translated: `sslmode` and `sslrootcert` are read here, and TLS is rustls.
//!
//! | `sslmode` | encrypted | server checked |
//! |---|---|---|
//! | `disable` | no | - |
//! | `allow`, `prefer` (libpq's default) | when the server offers it | no |
//! | `require` | yes | no; against `sslrootcert` when one is given (as libpq does) |
//! | `verify-ca` | yes | its certificate chains to `sslrootcert` |
//! | `verify-full` | yes | that, and it is the certificate of the host connected to |
//!
//! `sslrootcert` is a PEM file, or `system` for the Mozilla roots built in; when a mode that
//! checks is given none, libpq's default `~/.postgresql/root.crt` is read.

use std::path::PathBuf;
use std::str::FromStr;
use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::{ClientConfig, WebPkiServerVerifier};
use rustls::crypto::WebPkiSupportedAlgorithms;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{CertificateError, DigitallySignedStruct, RootCertStore, SignatureScheme};
use tokio_postgres::config::SslMode;
use tokio_postgres_rustls::MakeRustlsConnect;

/// How the listener connects: where, and with what TLS.
pub(super) struct ListenerTarget {
    pub config: tokio_postgres::Config,
    pub tls: MakeRustlsConnect,
}

/// How much of the server's certificate is checked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Check {
    Nothing,
    Chain,
    ChainAndName,
}

/// libpq options tokio-postgres does not know; read here or, for a client certificate, not
/// supported by the listener (it then fails to connect and says why).
const LIBPQ_ONLY: &[&str] = &[
    "sslrootcert",
    "sslcrl",
    "sslcrldir",
    "sslsni",
    "sslcompression",
    "gssencmode",
    "requirepeer",
    "ssl_min_protocol_version",
    "ssl_max_protocol_version",
];

impl ListenerTarget {
    pub fn from_url(url: &str) -> Result<ListenerTarget, String> {
        let form = Form::of(url)?;
        let mut pairs = form.pairs();
        let value = |pairs: &[(String, String)], key: &str| {
            pairs
                .iter()
                .rev()
                .find(|(k, _)| k == key)
                .map(|(_, v)| v.clone())
        };
        let mode = value(&pairs, "sslmode").unwrap_or_else(|| "prefer".to_owned());
        let root = value(&pairs, "sslrootcert");
        let (ssl_mode, check) = match (mode.as_str(), &root) {
            ("disable", _) => (SslMode::Disable, Check::Nothing),
            ("allow" | "prefer", _) => (SslMode::Prefer, Check::Nothing),
            ("require", None) => (SslMode::Require, Check::Nothing),
            ("require" | "verify-ca", _) => (SslMode::Require, Check::Chain),
            ("verify-full", _) => (SslMode::Require, Check::ChainAndName),
            (other, _) => return Err(format!("sslmode `{other}` is not one libpq knows")),
        };
        pairs.retain(|(key, _)| key != "sslmode" && !LIBPQ_ONLY.contains(&key.as_str()));
        let mut config = tokio_postgres::Config::from_str(&form.with(&pairs)).map_err(|e| {
            // tokio-postgres says only "invalid connection string"; its source says what.
            let why = std::error::Error::source(&e).map(ToString::to_string);
            format!("{e}: {}", why.unwrap_or_default())
        })?;
        config.ssl_mode(ssl_mode);
        let tls = MakeRustlsConnect::new(client_config(check, root.as_deref())?);
        Ok(ListenerTarget { config, tls })
    }
}

/// The two ways libpq takes connection settings.
enum Form {
    /// `postgres://user@host/db?option=value`.
    Url(url::Url),
    /// `host=... user=... option=value`, values without spaces.
    KeyValue(String),
}

impl Form {
    fn of(text: &str) -> Result<Form, String> {
        if text.contains("://") {
            let url = url::Url::parse(text).map_err(|e| format!("the database URL: {e}"))?;
            Ok(Form::Url(url))
        } else {
            Ok(Form::KeyValue(text.to_owned()))
        }
    }

    fn pairs(&self) -> Vec<(String, String)> {
        match self {
            Form::Url(url) => url.query_pairs().into_owned().collect(),
            Form::KeyValue(text) => text
                .split_whitespace()
                .filter_map(|pair| pair.split_once('='))
                .map(|(k, v)| (k.to_owned(), v.to_owned()))
                .collect(),
        }
    }

    /// The same settings with their options replaced by `pairs`.
    fn with(&self, pairs: &[(String, String)]) -> String {
        match self {
            Form::Url(url) => {
                let mut url = url.clone();
                url.set_query(None);
                if !pairs.is_empty() {
                    url.query_pairs_mut().extend_pairs(pairs);
                }
                url.to_string()
            }
            Form::KeyValue(_) => pairs
                .iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect::<Vec<_>>()
                .join(" "),
        }
    }
}

fn client_config(check: Check, root: Option<&str>) -> Result<ClientConfig, String> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?;
    let chain = match check {
        Check::Nothing => None,
        Check::Chain | Check::ChainAndName => Some(
            WebPkiServerVerifier::builder_with_provider(Arc::new(roots(root)?), provider.clone())
                .build()
                .map_err(|e| e.to_string())?,
        ),
    };
    let verifier = Arc::new(ServerCheck {
        check,
        chain,
        algorithms: provider.signature_verification_algorithms,
    });
    Ok(builder
        .dangerous()
        .with_custom_certificate_verifier(verifier)
        .with_no_client_auth())
}

fn roots(root: Option<&str>) -> Result<RootCertStore, String> {
    let mut store = RootCertStore::empty();
    if root == Some("system") {
        store.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
        return Ok(store);
    }
    let path = match root {
        Some(path) => PathBuf::from(path),
        None => std::env::var_os("HOME")
            .map(|home| PathBuf::from(home).join(".postgresql/root.crt"))
            .ok_or("no sslrootcert, and no home folder for ~/.postgresql/root.crt")?,
    };
    let certificates = CertificateDer::pem_file_iter(&path)
        .map_err(|e| format!("cannot read sslrootcert {}: {e}", path.display()))?;
    for certificate in certificates {
        let certificate =
            certificate.map_err(|e| format!("sslrootcert {}: {e}", path.display()))?;
        store
            .add(certificate)
            .map_err(|e| format!("sslrootcert {}: {e}", path.display()))?;
    }
    if store.is_empty() {
        return Err(format!(
            "sslrootcert {} holds no certificate",
            path.display()
        ));
    }
    Ok(store)
}

/// The server's certificate checked as far as `check` says. The handshake's signatures are
/// checked whatever the mode: even `require`, which trusts any certificate, talks only to the
/// holder of the certificate's key.
#[derive(Debug)]
struct ServerCheck {
    check: Check,
    /// The chain's check against the roots; none for [`Check::Nothing`].
    chain: Option<Arc<WebPkiServerVerifier>>,
    algorithms: WebPkiSupportedAlgorithms,
}

impl ServerCertVerifier for ServerCheck {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        let Some(chain) = &self.chain else {
            return Ok(ServerCertVerified::assertion());
        };
        match chain.verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now) {
            // `verify-ca`: a certificate for another name is taken when its chain holds.
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) if self.check == Check::Chain => Ok(ServerCertVerified::assertion()),
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(message, cert, dss, &self.algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(message, cert, dss, &self.algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.algorithms.supported_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mode(url: &str) -> Result<SslMode, String> {
        ListenerTarget::from_url(url).map(|target| target.config.get_ssl_mode())
    }

    #[test]
    fn libpq_urls_are_translated() {
        let ca = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/tls/ca.pem");
        assert_eq!(mode("postgres://u@db/k"), Ok(SslMode::Prefer));
        assert_eq!(
            mode("postgres://u@db/k?sslmode=disable"),
            Ok(SslMode::Disable)
        );
        assert_eq!(mode("postgres://u@db/k?sslmode=allow"), Ok(SslMode::Prefer));
        assert_eq!(
            mode("postgres://u@db/k?sslmode=require"),
            Ok(SslMode::Require)
        );
        let full = format!(
            "postgres://u:p@db:5433/k?sslmode=verify-full&sslrootcert={ca}&application_name=x"
        );
        assert_eq!(mode(&full), Ok(SslMode::Require));
        let target = ListenerTarget::from_url(&full).unwrap();
        assert_eq!(target.config.get_dbname(), Some("k"));
        assert_eq!(target.config.get_ports(), &[5433]);
        assert_eq!(target.config.get_application_name(), Some("x"));
        assert_eq!(
            mode(&format!(
                "host=db user=u sslmode=verify-ca sslrootcert={ca}"
            )),
            Ok(SslMode::Require)
        );
        assert!(mode("postgres://u@db/k?sslmode=sometimes").is_err());
        assert!(mode("postgres://u@db/k?sslmode=verify-full&sslrootcert=/nonexistent").is_err());
        assert_eq!(
            mode("postgres://u@db/k?sslmode=verify-full&sslrootcert=system"),
            Ok(SslMode::Require)
        );
    }
}
