//! Signed links sent by email: confirming an address, resetting a password, unsubscribing.
//!
//! Each is an HS256 token whose audience names its purpose, so a link made for one purpose is
//! refused for another and can never pass for an access token. The signing key is derived from
//! the server secret under its own label, for the same reason. A token is bound to the state it
//! acts on (`bound`): the address being confirmed, or the session version a reset will bump, so
//! a link stops working once that state has changed (a reset link is usable once).

use chrono::{DateTime, Duration, Utc};
use hmac::{Hmac, Mac};
use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, Header, Validation};
use secrecy::{ExposeSecret, SecretString};
use serde::{Deserialize, Serialize};
use sha2::Sha256;

/// What a link does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LinkPurpose {
    VerifyEmail,
    PasswordReset,
    Unsubscribe,
    /// Sent to the address a change replaces: undoes the change, ends every session.
    UndoEmailChange,
}

impl LinkPurpose {
    fn audience(self) -> &'static str {
        match self {
            LinkPurpose::VerifyEmail => "kuryr-verify-email",
            LinkPurpose::PasswordReset => "kuryr-password-reset",
            LinkPurpose::Unsubscribe => "kuryr-unsubscribe",
            LinkPurpose::UndoEmailChange => "kuryr-undo-email-change",
        }
    }

    /// How long a link stays valid. An unsubscribe link must keep working in old mail (RFC 8058
    /// expects it to), so it lasts for years; the others are short.
    pub fn lifetime(self) -> Duration {
        match self {
            LinkPurpose::VerifyEmail => Duration::days(7),
            LinkPurpose::PasswordReset => Duration::hours(1),
            LinkPurpose::Unsubscribe => Duration::days(3650),
            LinkPurpose::UndoEmailChange => Duration::days(7),
        }
    }
}

#[derive(Debug, Serialize, Deserialize)]
pub struct LinkClaims {
    /// The user the link is for.
    pub sub: String,
    pub aud: String,
    pub iat: i64,
    pub exp: i64,
    /// The state the link is bound to (see the module comment).
    pub bound: String,
}

/// Signs and checks link tokens.
#[derive(Clone)]
pub struct LinkSigner {
    encoding: EncodingKey,
    decoding: DecodingKey,
}

impl LinkSigner {
    pub fn new(secret: &SecretString) -> Self {
        let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(secret.expose_secret().as_bytes())
            .expect("HMAC takes a key of any length");
        mac.update(b"kuryr email links v1");
        let key = mac.finalize().into_bytes();
        LinkSigner {
            encoding: EncodingKey::from_secret(&key),
            decoding: DecodingKey::from_secret(&key),
        }
    }

    pub fn sign(
        &self,
        purpose: LinkPurpose,
        user_id: &str,
        bound: &str,
        now: DateTime<Utc>,
    ) -> String {
        let claims = LinkClaims {
            sub: user_id.to_owned(),
            aud: purpose.audience().to_owned(),
            iat: now.timestamp(),
            exp: (now + purpose.lifetime()).timestamp(),
            bound: bound.to_owned(),
        };
        jsonwebtoken::encode(&Header::new(Algorithm::HS256), &claims, &self.encoding)
            .expect("HS256 signing cannot fail")
    }

    /// The claims of a genuine, unexpired link token made for `purpose`.
    pub fn verify(
        &self,
        purpose: LinkPurpose,
        token: &str,
        now: DateTime<Utc>,
    ) -> Option<LinkClaims> {
        let mut validation = Validation::new(Algorithm::HS256);
        validation.set_audience(&[purpose.audience()]);
        validation.set_required_spec_claims(&["exp", "aud", "sub"]);
        // Expiry is checked against the server's clock, which tests can move.
        validation.validate_exp = false;
        let claims = jsonwebtoken::decode::<LinkClaims>(token, &self.decoding, &validation)
            .ok()?
            .claims;
        (claims.exp > now.timestamp()).then_some(claims)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn signer(secret: &str) -> LinkSigner {
        LinkSigner::new(&SecretString::from(secret.to_owned()))
    }

    #[test]
    fn a_link_works_for_its_purpose_only_until_it_expires() {
        let now = Utc::now();
        let links = signer("secret");
        let token = links.sign(LinkPurpose::VerifyEmail, "u1", "a@example.org", now);
        let claims = links.verify(LinkPurpose::VerifyEmail, &token, now).unwrap();
        assert_eq!(
            (claims.sub.as_str(), claims.bound.as_str()),
            ("u1", "a@example.org")
        );
        assert!(
            links
                .verify(LinkPurpose::PasswordReset, &token, now)
                .is_none()
        );
        assert!(
            links
                .verify(LinkPurpose::Unsubscribe, &token, now)
                .is_none()
        );
        let later = now + LinkPurpose::VerifyEmail.lifetime() + Duration::seconds(1);
        assert!(
            links
                .verify(LinkPurpose::VerifyEmail, &token, later)
                .is_none()
        );
        assert!(
            signer("other")
                .verify(LinkPurpose::VerifyEmail, &token, now)
                .is_none()
        );
        let mut tampered = token.clone();
        tampered.insert(token.len() / 2, 'x');
        assert!(
            links
                .verify(LinkPurpose::VerifyEmail, &tampered, now)
                .is_none()
        );
    }

    #[test]
    fn an_access_token_is_not_a_link() {
        let now = Utc::now();
        let secret = SecretString::from("secret".to_owned());
        let access = crate::auth::TokenKeys::new(&secret, 1)
            .issue("u1", 0, now)
            .unwrap()
            .token;
        for purpose in [
            LinkPurpose::VerifyEmail,
            LinkPurpose::PasswordReset,
            LinkPurpose::Unsubscribe,
            LinkPurpose::UndoEmailChange,
        ] {
            assert!(
                LinkSigner::new(&secret)
                    .verify(purpose, &access, now)
                    .is_none()
            );
        }
    }
}
