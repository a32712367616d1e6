//! TLS to PostgreSQL as libpq's users know it: `sslmode` and `sslrootcert`, in the URL's query or
//! as a profile's `db_sslmode` and `db_sslrootcert`.
//!
//! | sslmode       | encrypted                    | the certificate is checked              |
//! |---------------|------------------------------|-----------------------------------------|
//! | `disable`     | never                        | —                                       |
//! | `prefer`      | when the server offers TLS   | never                                   |
//! | `require`     | always                       | its chain, only when `sslrootcert` is set (libpq's rule) |
//! | `verify-ca`   | always                       | its chain                               |
//! | `verify-full` | always                       | its chain and that it names the host    |
//!
//! The default is libpq's, `prefer`; `sslrootcert=system` (libpq 16's word for the system's
//! roots) makes it `verify-full` and refuses a weaker mode, as libpq does. The roots are the file
//! `sslrootcert` names (PEM), else the system's (where libpq would look for
//! `~/.postgresql/root.crt`). `allow` (plain first, TLS only if refused) is not offered: the
//! driver cannot try plain first.
//!
//! The TLS is rustls with aws-lc-rs, as the rest of the binary uses for HTTPS; no second stack.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls::DigitallySignedStruct;
use rustls::client::WebPkiServerVerifier;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::WebPkiSupportedAlgorithms;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{CertificateError, RootCertStore, SignatureScheme};
use tokio_postgres_rustls::MakeRustlsConnect;

/// libpq's `sslmode`, less `allow`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SslMode {
    Disable,
    Prefer,
    Require,
    VerifyCa,
    VerifyFull,
}

impl SslMode {
    /// Reads a value as libpq spells it; the error names the parameter, not the value.
    pub fn parse(value: &str, name: &str) -> Result<SslMode, String> {
        Ok(match value {
            "disable" => SslMode::Disable,
            "prefer" => SslMode::Prefer,
            "require" => SslMode::Require,
            "verify-ca" => SslMode::VerifyCa,
            "verify-full" => SslMode::VerifyFull,
            "allow" => {
                return Err(format!(
                    "{name}: allow is not supported (it tries without TLS first); use prefer or \
                     disable"
                ));
            }
            _ => {
                return Err(format!(
                    "{name} must be one of disable, prefer, require, verify-ca, verify-full"
                ));
            }
        })
    }

    pub fn as_str(self) -> &'static str {
        match self {
            SslMode::Disable => "disable",
            SslMode::Prefer => "prefer",
            SslMode::Require => "require",
            SslMode::VerifyCa => "verify-ca",
            SslMode::VerifyFull => "verify-full",
        }
    }
}

/// The roots a server's certificate must lead to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RootCert {
    /// The system's trusted roots (`sslrootcert=system`, or no `sslrootcert` at all).
    System,
    /// The certificates of a PEM file.
    File(PathBuf),
}

/// The TLS settings of one database, as written.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TlsSettings {
    mode: Option<SslMode>,
    root: Option<RootCert>,
}

/// How much of a server's certificate is checked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Check {
    Nothing,
    Chain,
    ChainAndName,
}

impl TlsSettings {
    /// Takes `sslmode` or `sslrootcert` (`key`) from `source` (how the message names where it was
    /// written: "sslmode", "db_sslmode"); `None` when `key` is not one of them. Each may be
    /// written once: in the URL or in the profile, not both.
    pub fn set(&mut self, key: &str, value: &str, source: &str) -> Option<Result<(), String>> {
        let taken = |what: &str| match source == what {
            true => Err(format!(
                "{what} appears twice in the PostgreSQL URL; keep one"
            )),
            false => Err(format!("{source}: the db URL sets {what} too; keep one")),
        };
        Some(match key {
            "sslmode" if self.mode.is_some() => taken("sslmode"),
            "sslmode" => SslMode::parse(value, source).map(|m| self.mode = Some(m)),
            "sslrootcert" if self.root.is_some() => taken("sslrootcert"),
            "sslrootcert" if value.trim().is_empty() => Err(format!("{source} is empty")),
            "sslrootcert" if value == "system" => {
                self.root = Some(RootCert::System);
                Ok(())
            }
            "sslrootcert" => {
                self.root = Some(RootCert::File(value.into()));
                Ok(())
            }
            _ => return None,
        })
    }

    /// libpq's rule for the system's roots: they vouch for names, so only `verify-full` uses them.
    pub fn check(&self) -> Result<(), String> {
        match (self.root.as_ref(), self.mode) {
            (Some(RootCert::System), Some(mode)) if mode != SslMode::VerifyFull => Err(format!(
                "sslmode={} may not be used with sslrootcert=system (use verify-full)",
                mode.as_str()
            )),
            _ => Ok(()),
        }
    }

    /// A relative `sslrootcert` made absolute by `resolve` (a profile's, against the config
    /// file's directory).
    pub fn resolve_root(&mut self, resolve: impl FnOnce(&Path) -> PathBuf) {
        if let Some(RootCert::File(path)) = &mut self.root {
            *path = resolve(path);
        }
    }

    /// The mode in effect: as written, else libpq's default.
    pub fn mode(&self) -> SslMode {
        match (self.mode, &self.root) {
            (Some(mode), _) => mode,
            (None, Some(RootCert::System)) => SslMode::VerifyFull,
            (None, _) => SslMode::Prefer,
        }
    }

    /// What the driver itself does: whether it asks for TLS and whether it settles for none.
    pub fn driver_mode(&self) -> tokio_postgres::config::SslMode {
        use tokio_postgres::config::SslMode as Driver;
        match self.mode() {
            SslMode::Disable => Driver::Disable,
            SslMode::Prefer => Driver::Prefer,
            SslMode::Require | SslMode::VerifyCa | SslMode::VerifyFull => Driver::Require,
        }
    }

    fn check_level(&self) -> Check {
        match self.mode() {
            SslMode::Disable | SslMode::Prefer => Check::Nothing,
            // libpq: "if a root CA file exists, require behaves as verify-ca".
            SslMode::Require if matches!(self.root, Some(RootCert::File(_))) => Check::Chain,
            SslMode::Require => Check::Nothing,
            SslMode::VerifyCa => Check::Chain,
            SslMode::VerifyFull => Check::ChainAndName,
        }
    }

    fn roots(&self) -> &RootCert {
        self.root.as_ref().unwrap_or(&RootCert::System)
    }

    /// The connector every connection of this database uses; reads the roots now. The error
    /// names the file that could not be read.
    pub fn connector(&self) -> Result<MakeRustlsConnect, String> {
        // Named rather than rustls's process default, which is ambiguous when a build enables
        // two providers.
        let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
        let check = self.check_level();
        let webpki = match check {
            Check::Nothing => None,
            Check::Chain | Check::ChainAndName => Some(
                WebPkiServerVerifier::builder_with_provider(
                    Arc::new(load_roots(self.roots())?),
                    provider.clone(),
                )
                .build()
                .map_err(|e| format!("the root certificates: {e}"))?,
            ),
        };
        let verifier = Verifier {
            webpki,
            check_name: check == Check::ChainAndName,
            algorithms: provider.signature_verification_algorithms,
        };
        let config = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| format!("TLS: {e}"))?
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(verifier))
            .with_no_client_auth();
        Ok(MakeRustlsConnect::new(config))
    }

    /// What a person can do about a connection that failed for TLS's sake, naming the server
    /// (`host:port`) and the mode; `None` when the failure is not about TLS.
    pub fn explain(&self, e: &tokio_postgres::Error, server: &str) -> Option<String> {
        let mode = self.mode().as_str();
        if let Some(rustls) = rustls_error(e) {
            let roots = match self.roots() {
                RootCert::System => "the system's trusted roots".to_owned(),
                RootCert::File(path) => format!("the root certificate in {}", path.display()),
            };
            let why = match rustls {
                rustls::Error::InvalidCertificate(
                    CertificateError::UnknownIssuer | CertificateError::BadSignature,
                ) => format!("is not signed by {roots}"),
                rustls::Error::InvalidCertificate(CertificateError::NotValidForNameContext {
                    expected,
                    presented,
                }) => format!(
                    "is not valid for {} (it names {})",
                    expected.to_str(),
                    presented
                        .iter()
                        .map(|n| bare_name(n))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
                rustls::Error::InvalidCertificate(CertificateError::NotValidForName) => {
                    "is not valid for the host name".to_owned()
                }
                rustls::Error::InvalidCertificate(other) => format!("was refused: {other}"),
                other => {
                    return Some(format!(
                        "TLS with {server} failed: {other} (sslmode={mode})"
                    ));
                }
            };
            return Some(format!(
                "the certificate of the server at {server} {why} (sslmode={mode})"
            ));
        }
        // The driver's own words when the server answers "no" to its request for TLS.
        let refused = std::iter::successors(Some(e as &(dyn std::error::Error + 'static)), |e| {
            e.source()
        })
        .any(|e| e.to_string() == "server does not support TLS");
        refused.then(|| format!("the server at {server} does not offer TLS (sslmode={mode})"))
    }
}

/// The rustls error under a failed connection: the driver wraps the TLS connector's
/// `io::Error`, which wraps rustls's (and `io::Error::source` skips over what it wraps).
fn rustls_error(e: &tokio_postgres::Error) -> Option<&rustls::Error> {
    let mut next = Some(e as &(dyn std::error::Error + 'static));
    while let Some(e) = next {
        if let Some(found) = e.downcast_ref::<rustls::Error>() {
            return Some(found);
        }
        let wrapped = e
            .downcast_ref::<std::io::Error>()
            .and_then(|io| io.get_ref())
            .and_then(|inner| inner.downcast_ref::<rustls::Error>());
        if wrapped.is_some() {
            return wrapped;
        }
        next = e.source();
    }
    None
}

/// A name a certificate presents as rustls spells it (`DnsName("db.internal")`,
/// `IpAddress(10.0.0.5)`), as a person writes it.
fn bare_name(presented: &str) -> &str {
    let inner = |prefix: &str| {
        presented
            .strip_prefix(prefix)
            .and_then(|rest| rest.strip_suffix(')'))
    };
    inner("DnsName(")
        .map(|n| n.trim_matches('"'))
        .or_else(|| inner("IpAddress("))
        .unwrap_or(presented)
}

/// The trust anchors of `root`; errors name the file, or say the system has none.
fn load_roots(root: &RootCert) -> Result<RootCertStore, String> {
    let mut store = RootCertStore::empty();
    match root {
        RootCert::File(path) => {
            let name = path.display();
            let pem =
                std::fs::read(path).map_err(|e| format!("cannot read sslrootcert {name}: {e}"))?;
            for cert in CertificateDer::pem_slice_iter(&pem) {
                let cert = cert.map_err(|e| format!("sslrootcert {name}: {e}"))?;
                store
                    .add(cert)
                    .map_err(|e| format!("sslrootcert {name}: {e}"))?;
            }
            if store.is_empty() {
                return Err(format!("sslrootcert {name} holds no PEM certificate"));
            }
        }
        RootCert::System => {
            // Honours SSL_CERT_FILE and SSL_CERT_DIR, as OpenSSL does.
            let found = rustls_native_certs::load_native_certs();
            store.add_parsable_certificates(found.certs);
            if store.is_empty() {
                let why = found
                    .errors
                    .first()
                    .map_or_else(String::new, |e| format!(" ({e})"));
                return Err(format!(
                    "no trusted root certificates found on this system{why}; name a PEM file \
                     with sslrootcert"
                ));
            }
        }
    }
    Ok(store)
}

/// Checks as much of the server's certificate as the mode asks for. The handshake's own
/// signatures are always checked: the server holds the key of the certificate it sent, so a
/// `require` session is encrypted to that server and no one in between.
#[derive(Debug)]
struct Verifier {
    /// The chain and name check; `None` when the certificate is taken as it comes.
    webpki: Option<Arc<WebPkiServerVerifier>>,
    check_name: bool,
    algorithms: WebPkiSupportedAlgorithms,
}

impl ServerCertVerifier for Verifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        let Some(webpki) = &self.webpki else {
            return Ok(ServerCertVerified::assertion());
        };
        match webpki.verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now)
        {
            // The name is checked after the chain, so this failure means the chain held.
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) if !self.check_name => Ok(ServerCertVerified::assertion()),
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

    fn settings(pairs: &[(&str, &str)]) -> Result<TlsSettings, String> {
        let mut s = TlsSettings::default();
        for (k, v) in pairs {
            s.set(k, v, k).expect("a TLS key")?;
        }
        s.check().map(|()| s)
    }

    #[test]
    fn modes_default_and_checks_follow_libpq() {
        let none = settings(&[]).unwrap();
        assert_eq!(none.mode(), SslMode::Prefer);
        assert_eq!(none.check_level(), Check::Nothing);
        let require = settings(&[("sslmode", "require")]).unwrap();
        assert_eq!(require.check_level(), Check::Nothing);
        let require_with_root =
            settings(&[("sslmode", "require"), ("sslrootcert", "/ca.pem")]).unwrap();
        assert_eq!(require_with_root.check_level(), Check::Chain);
        assert_eq!(
            settings(&[("sslmode", "verify-ca")]).unwrap().check_level(),
            Check::Chain
        );
        let system = settings(&[("sslrootcert", "system")]).unwrap();
        assert_eq!(system.mode(), SslMode::VerifyFull);
        let weak = settings(&[("sslmode", "require"), ("sslrootcert", "system")]).unwrap_err();
        assert!(
            weak.contains("sslmode=require") && weak.contains("verify-full"),
            "{weak}"
        );
    }

    #[test]
    fn bad_values_name_the_parameter_not_the_value() {
        let bad = settings(&[("sslmode", "verify_full_hunter2")]).unwrap_err();
        assert!(bad.starts_with("sslmode must be one of"), "{bad}");
        assert!(!bad.contains("hunter2"), "{bad}");
        let allow = settings(&[("sslmode", "allow")]).unwrap_err();
        assert!(allow.contains("allow is not supported"), "{allow}");
        assert!(
            settings(&[("sslrootcert", " ")])
                .unwrap_err()
                .contains("sslrootcert is empty")
        );
        let mut twice = settings(&[("sslmode", "require")]).unwrap();
        let err = twice
            .set("sslmode", "disable", "db_sslmode")
            .unwrap()
            .unwrap_err();
        assert_eq!(err, "db_sslmode: the db URL sets sslmode too; keep one");
        assert!(twice.set("sslcert", "x", "sslcert").is_none());
    }

    #[test]
    fn presented_names_read_as_written() {
        assert_eq!(bare_name("DnsName(\"db.internal\")"), "db.internal");
        assert_eq!(bare_name("IpAddress(10.0.0.5)"), "10.0.0.5");
        assert_eq!(bare_name("*.example.com"), "*.example.com");
    }

    #[test]
    fn an_unreadable_or_empty_root_file_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("missing.pem");
        let s = settings(&[
            ("sslmode", "verify-full"),
            ("sslrootcert", missing.to_str().unwrap()),
        ])
        .unwrap();
        let err = s.connector().err().unwrap();
        assert!(
            err.starts_with(&format!("cannot read sslrootcert {}", missing.display())),
            "{err}"
        );
        let empty = dir.path().join("empty.pem");
        std::fs::write(&empty, "not a certificate\n").unwrap();
        let s = settings(&[
            ("sslmode", "verify-ca"),
            ("sslrootcert", empty.to_str().unwrap()),
        ])
        .unwrap();
        let err = s.connector().err().unwrap();
        assert!(err.contains("holds no PEM certificate"), "{err}");
        // Unread when nothing is checked.
        let s = settings(&[
            ("sslmode", "disable"),
            ("sslrootcert", missing.to_str().unwrap()),
        ])
        .unwrap();
        assert!(s.connector().is_ok());
    }
}
