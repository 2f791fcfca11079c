//! Signed links sent by email: confirming an address, resetting a password, unsubscribing.
//!
//! Each is an HS256 token whose audience names its purpose, so a link made for one purpose is
//! refused for another and can never pass for an access token. The signing key is derived from
//! the server secret under its own label, for the same reason. A token is bound to the state it
//! acts on (`bound`): the address being confirmed, or the session version a reset will bump, so
//! a link stops working once that state has changed (a reset link is usable once).

use chrono::{DateTime, Duration, Utc};
use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, Header, Validation};
use serde::{Deserialize, Serialize};

use super::secrets::Secrets;

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
    /// The signing secret's key id, written into every link's header.
    key_id: String,
    /// Every secret that verifies, by key id, the signing one first.
    decoding: Vec<(String, DecodingKey)>,
}

const LABEL: &[u8] = b"kuryr email links v1";

impl LinkSigner {
    pub fn new(secrets: &Secrets) -> Self {
        LinkSigner {
            encoding: EncodingKey::from_secret(&secrets.signing().derive(LABEL)),
            key_id: secrets.signing().id().to_owned(),
            decoding: secrets
                .all()
                .iter()
                .map(|secret| {
                    let key = DecodingKey::from_secret(&secret.derive(LABEL));
                    (secret.id().to_owned(), key)
                })
                .collect(),
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
        let mut header = Header::new(Algorithm::HS256);
        header.kid = Some(self.key_id.clone());
        jsonwebtoken::encode(&header, &claims, &self.encoding).expect("HS256 signing cannot fail")
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
        // The key the link names, or any for a link signed before keys had ids.
        let kid = jsonwebtoken::decode_header(token).ok()?.kid;
        let claims = self
            .decoding
            .iter()
            .filter(|(id, _)| kid.as_ref().is_none_or(|kid| kid == id))
            .find_map(|(_, key)| jsonwebtoken::decode::<LinkClaims>(token, key, &validation).ok())?
            .claims;
        (claims.exp > now.timestamp()).then_some(claims)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use secrecy::SecretString;

    fn secrets(secret: &str) -> Secrets {
        Secrets::one(SecretString::from(secret.to_owned()))
    }

    fn signer(secret: &str) -> LinkSigner {
        LinkSigner::new(&secrets(secret))
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
        let secret = secrets("secret");
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

    #[test]
    fn a_link_signed_before_a_rotation_works_until_its_secret_is_dropped() {
        let now = Utc::now();
        let (old, new) = ("old secret", "new secret");
        let link = signer(old).sign(LinkPurpose::Unsubscribe, "u1", "x", now);
        let rotated = LinkSigner::new(&Secrets::new(
            SecretString::from(new.to_owned()),
            [SecretString::from(old.to_owned())],
        ));
        assert!(
            rotated
                .verify(LinkPurpose::Unsubscribe, &link, now)
                .is_some()
        );
        let fresh = rotated.sign(LinkPurpose::Unsubscribe, "u1", "x", now);
        assert!(
            signer(new)
                .verify(LinkPurpose::Unsubscribe, &fresh, now)
                .is_some()
        );
        assert!(
            signer(new)
                .verify(LinkPurpose::Unsubscribe, &link, now)
                .is_none()
        );
    }
}
