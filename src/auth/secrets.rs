//! The server's signing secrets: one that signs, and others that still verify. Everything the
//! server signs (login tokens, mail links, web forms, reply addresses, kept idempotent answers)
//! is signed with the first and checked against all of them, so a secret can be replaced without
//! logging anyone out: a new secret is first accepted everywhere, then made the one that signs,
//! and the old one is dropped once what it signed has expired (docs/security.md).
//!
//! Each secret has a key id derived from it, written into the tokens that carry a header (JWTs)
//! so the right key is tried first; an operator names secrets only, never ids, and the same
//! secret gets the same id on every process.

use hmac::{Hmac, Mac};
use secrecy::{ExposeSecret, SecretString};
use sha2::Sha256;

/// The shortest secret accepted, in bytes.
pub const MIN_SECRET_BYTES: usize = 32;

/// One secret and its key id.
#[derive(Clone)]
pub struct Secret {
    id: String,
    value: SecretString,
}

impl Secret {
    pub fn new(value: SecretString) -> Secret {
        let id = hex::encode(&derive(value.expose_secret().as_bytes(), b"kuryr key id v1")[..4]);
        Secret { id, value }
    }

    /// Eight hexadecimal characters naming the secret without revealing it.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// A key of its own for one use (`label`), so that no two uses share a key.
    pub fn derive(&self, label: &[u8]) -> [u8; 32] {
        derive(self.value.expose_secret().as_bytes(), label)
    }

    pub fn bytes(&self) -> &[u8] {
        self.value.expose_secret().as_bytes()
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Secret({})", self.id)
    }
}

fn derive(secret: &[u8], label: &[u8]) -> [u8; 32] {
    let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(secret).expect("HMAC takes any key");
    mac.update(label);
    mac.finalize().into_bytes().into()
}

/// The secret that signs, then those that only verify, without repeats.
#[derive(Clone, Debug)]
pub struct Secrets {
    all: Vec<Secret>,
}

impl Secrets {
    pub fn new(signing: SecretString, verifying: impl IntoIterator<Item = SecretString>) -> Self {
        let mut all = vec![Secret::new(signing)];
        for value in verifying {
            let secret = Secret::new(value);
            if all.iter().all(|known| known.id != secret.id) {
                all.push(secret);
            }
        }
        Secrets { all }
    }

    /// One secret: tests, and a server without rotation.
    pub fn one(signing: SecretString) -> Self {
        Secrets::new(signing, [])
    }

    pub fn signing(&self) -> &Secret {
        &self.all[0]
    }

    /// Every secret that verifies, the signing one first.
    pub fn all(&self) -> &[Secret] {
        &self.all
    }

    /// The same key for one use under every secret, the signing one's first.
    pub fn derive_all(&self, label: &[u8]) -> Vec<[u8; 32]> {
        self.all.iter().map(|secret| secret.derive(label)).collect()
    }
}

/// Reads a list of secrets written one after another, separated by commas or white space.
pub fn parse_list(text: &str) -> Result<Vec<SecretString>, String> {
    text.split(|c: char| c == ',' || c.is_whitespace())
        .filter(|part| !part.is_empty())
        .map(|part| {
            if part.len() < MIN_SECRET_BYTES {
                Err(format!(
                    "a secret in KURYR_JWT_VERIFY_SECRETS is {} bytes long; each must be at least {MIN_SECRET_BYTES}",
                    part.len()
                ))
            } else {
                Ok(SecretString::from(part.to_owned()))
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secret(text: &str) -> SecretString {
        SecretString::from(text.to_owned())
    }

    #[test]
    fn ids_are_stable_distinct_and_reveal_nothing() {
        let a = Secret::new(secret(&"a".repeat(32)));
        let again = Secret::new(secret(&"a".repeat(32)));
        let b = Secret::new(secret(&"b".repeat(32)));
        assert_eq!(a.id(), again.id());
        assert_ne!(a.id(), b.id());
        assert_eq!(a.id().len(), 8);
        assert!(!format!("{a:?}").contains("aaaa"));
    }

    #[test]
    fn the_signing_secret_comes_first_and_repeats_are_dropped() {
        let secrets = Secrets::new(
            secret(&"n".repeat(32)),
            [secret(&"o".repeat(32)), secret(&"n".repeat(32))],
        );
        assert_eq!(secrets.all().len(), 2);
        assert_eq!(
            secrets.signing().id(),
            Secret::new(secret(&"n".repeat(32))).id()
        );
        assert_ne!(secrets.derive_all(b"x")[0], secrets.derive_all(b"x")[1]);
        assert_ne!(
            secrets.signing().derive(b"x"),
            secrets.signing().derive(b"y")
        );
    }

    #[test]
    fn lists_are_read_and_short_secrets_refused() {
        let long = "k".repeat(32);
        let other = "m".repeat(40);
        assert_eq!(parse_list("").unwrap().len(), 0);
        assert_eq!(parse_list(&format!("{long}, {other}\n")).unwrap().len(), 2);
        assert!(
            parse_list(&format!("{long},short"))
                .unwrap_err()
                .contains("5 bytes")
        );
    }
}
