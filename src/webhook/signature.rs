//! Standard Webhooks signing: a secret is `whsec_` and the base64 of a random key; a signature is
//! `v1,` and the base64 HMAC-SHA256, under that key, of `{id}.{timestamp}.{body}`.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use hmac::{Hmac, Mac};
use rand::RngCore;
use sha2::Sha256;

const PREFIX: &str = "whsec_";
/// 32 bytes, as the specification recommends (24 to 64 are allowed).
const KEY_BYTES: usize = 32;

/// A signing secret, as the endpoint's owner is given it.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Secret(…)")
    }
}

/// A stored secret that does not read as one.
#[derive(Debug, thiserror::Error)]
#[error("a stored webhook secret is not `whsec_` and base64")]
pub struct BadSecret;

impl Secret {
    pub fn generate() -> Secret {
        let mut key = [0u8; KEY_BYTES];
        rand::rng().fill_bytes(&mut key);
        Secret(format!("{PREFIX}{}", STANDARD.encode(key)))
    }

    /// A secret as stored.
    pub fn parse(text: &str) -> Result<Secret, BadSecret> {
        let encoded = text.strip_prefix(PREFIX).ok_or(BadSecret)?;
        match STANDARD.decode(encoded) {
            Ok(key) if !key.is_empty() => Ok(Secret(text.to_owned())),
            _ => Err(BadSecret),
        }
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    fn key(&self) -> Vec<u8> {
        // `parse` and `generate` made sure it decodes.
        STANDARD
            .decode(self.0.strip_prefix(PREFIX).unwrap_or_default())
            .unwrap_or_default()
    }

    /// `v1,<base64 signature>` of one message.
    pub fn sign(&self, id: &str, timestamp: i64, body: &str) -> String {
        self.sign_bytes(id, timestamp, body.as_bytes())
    }

    /// [`Secret::sign`] of a body that need not be text (a raw mail, in any charset).
    pub fn sign_bytes(&self, id: &str, timestamp: i64, body: &[u8]) -> String {
        let mac = self.mac(id, timestamp, body);
        format!("v1,{}", STANDARD.encode(mac.finalize().into_bytes()))
    }

    fn mac(&self, id: &str, timestamp: i64, body: &[u8]) -> Hmac<Sha256> {
        let mut mac =
            Hmac::<Sha256>::new_from_slice(&self.key()).expect("HMAC takes a key of any length");
        mac.update(format!("{id}.{timestamp}.").as_bytes());
        mac.update(body);
        mac
    }

    /// Whether one of the `v1` signatures of a `webhook-signature` header is this secret's for
    /// the message, compared in constant time.
    pub fn verify(&self, id: &str, timestamp: i64, body: &[u8], header: &str) -> bool {
        header.split_whitespace().any(|signature| {
            let Some(encoded) = signature.strip_prefix("v1,") else {
                return false;
            };
            let Ok(signature) = STANDARD.decode(encoded) else {
                return false;
            };
            self.mac(id, timestamp, body)
                .verify_slice(&signature)
                .is_ok()
        })
    }
}

/// The `webhook-signature` header: one signature per secret in force, space-separated, the
/// newest first.
pub fn header(secrets: &[&Secret], id: &str, timestamp: i64, body: &str) -> String {
    secrets
        .iter()
        .map(|secret| secret.sign(id, timestamp, body))
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_signature_verifies_and_nothing_else_does() {
        let secret = Secret::generate();
        let body = b"From: a@example.com\r\n\r\n\xe9t\xe9\r\n";
        let signature = secret.sign_bytes("msg_1", 1_700_000_000, body);
        let header = format!("v1,bm90IGl0 {signature}");
        assert!(secret.verify("msg_1", 1_700_000_000, body, &header));
        assert!(!secret.verify("msg_2", 1_700_000_000, body, &header));
        assert!(!secret.verify("msg_1", 1_700_000_001, body, &header));
        assert!(!secret.verify("msg_1", 1_700_000_000, b"other", &header));
        assert!(!Secret::generate().verify("msg_1", 1_700_000_000, body, &header));
        assert!(!secret.verify("msg_1", 1_700_000_000, body, "v2,xyz not-base64!"));
    }

    #[test]
    fn a_new_secret_is_32_random_bytes_behind_the_prefix() {
        let secret = Secret::generate();
        let encoded = secret.as_str().strip_prefix("whsec_").unwrap();
        assert_eq!(STANDARD.decode(encoded).unwrap().len(), 32);
        assert_ne!(secret, Secret::generate());
        assert!(Secret::parse(secret.as_str()).is_ok());
        assert!(Secret::parse("whsec_not base64!").is_err());
        assert!(Secret::parse("c2VjcmV0").is_err());
        assert!(!format!("{secret:?}").contains(encoded));
    }

    #[test]
    fn the_official_library_accepts_each_signature() {
        let (new, old) = (Secret::generate(), Secret::generate());
        let body = r#"{"id":7,"type":"game.move","time":"2026-11-24T10:00:00.000Z","data":{}}"#;
        let signatures = header(&[&new, &old], "7", 1_790_000_000, body);
        let parts: Vec<&str> = signatures.split(' ').collect();
        assert_eq!(parts.len(), 2);
        for (secret, part) in [(&new, parts[0]), (&old, parts[1])] {
            let official = standardwebhooks::Webhook::new(secret.as_str())
                .unwrap()
                .sign("7", 1_790_000_000, body.as_bytes())
                .unwrap();
            assert_eq!(part, official);
        }
    }
}
