//! Login tokens: HS256 JWTs, each naming the login session it belongs to.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard, PoisonError};

use chrono::{DateTime, Utc};
use jsonwebtoken::{Algorithm as JwtAlgorithm, DecodingKey, EncodingKey, Header, Validation};
use serde::{Deserialize, Serialize};

use super::secrets::Secrets;

const ISSUER: &str = "kuryr";
const AUDIENCE: &str = "kuryr-api";

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Claims {
    pub sub: String,
    pub iss: String,
    pub aud: String,
    pub iat: i64,
    pub exp: i64,
    /// The user's session version when the token was issued.
    pub sv: i32,
    /// The login session this token belongs to: logging out ends it alone.
    pub sid: String,
}

/// A new login token, and the session it begins.
#[derive(Clone, Debug)]
pub struct IssuedToken {
    pub token: String,
    pub session_id: String,
    pub expires_at: DateTime<Utc>,
}

/// Signs and checks access tokens.
pub struct TokenKeys {
    encoding: EncodingKey,
    /// The key id written into every token's header: the signing secret's.
    key_id: String,
    /// Every secret that verifies, by key id, the signing one first.
    decoding: Vec<(String, DecodingKey)>,
    validation: Validation,
    pub ttl: chrono::Duration,
    /// Seal the answers kept for idempotency keys (`service::idempotency`), one key per secret,
    /// the signing one's first: derived from the server's secrets, so that a copy of the database
    /// alone opens none of them.
    pub answers: Vec<[u8; 32]>,
    /// Sign the web client's form tokens (`web::forms`) under a label of their own, one key per
    /// secret, the signing one's first.
    pub forms: Vec<[u8; 32]>,
    /// The tokens found genuine so far, with their claims. A client sends its token with every
    /// request, and checking the signature and decoding the token again cost about a twentieth
    /// of a move's time. Keyed by the whole token, so that only a token that was checked can
    /// match; its expiry is checked at every use all the same. Bounded by [`VERIFIED_TOKENS`].
    verified: Mutex<HashMap<Box<str>, Claims>>,
}

/// Most tokens [`TokenKeys`] remembers as genuine; when full, it forgets them all and starts
/// over, which costs each client one more check.
const VERIFIED_TOKENS: usize = 4096;

impl TokenKeys {
    pub fn new(secrets: &Secrets, ttl_hours: u32) -> Self {
        // The algorithm is pinned: a token signed any other way (or `none`) is refused.
        let mut validation = Validation::new(JwtAlgorithm::HS256);
        validation.set_issuer(&[ISSUER]);
        validation.set_audience(&[AUDIENCE]);
        validation.set_required_spec_claims(&["exp", "iss", "aud", "sub"]);
        // `sv` and `sid` are required by `Claims` itself: a token without them does not decode.
        // Expiry is checked in `verify` against the server's clock, which tests can move.
        validation.validate_exp = false;
        let signing = secrets.signing();
        TokenKeys {
            encoding: EncodingKey::from_secret(signing.bytes()),
            key_id: signing.id().to_owned(),
            decoding: secrets
                .all()
                .iter()
                .map(|secret| {
                    (
                        secret.id().to_owned(),
                        DecodingKey::from_secret(secret.bytes()),
                    )
                })
                .collect(),
            validation,
            ttl: chrono::Duration::hours(i64::from(ttl_hours)),
            answers: secrets.derive_all(b"kuryr idempotent answers v1"),
            forms: secrets.derive_all(b"kuryr web forms v1"),
            verified: Mutex::default(),
        }
    }

    /// A token for a new login session of the user.
    pub fn issue(
        &self,
        user_id: &str,
        session_version: i32,
        now: DateTime<Utc>,
    ) -> anyhow::Result<IssuedToken> {
        use rand::RngCore;
        let mut sid = [0u8; 16];
        rand::rng().fill_bytes(&mut sid);
        let expires_at = now + self.ttl;
        let claims = Claims {
            sub: user_id.to_owned(),
            iss: ISSUER.into(),
            aud: AUDIENCE.into(),
            iat: now.timestamp(),
            exp: expires_at.timestamp(),
            sv: session_version,
            sid: hex::encode(sid),
        };
        let mut header = Header::new(JwtAlgorithm::HS256);
        header.kid = Some(self.key_id.clone());
        let token = jsonwebtoken::encode(&header, &claims, &self.encoding)
            .map_err(|e| anyhow::anyhow!("cannot sign token: {e}"))?;
        Ok(IssuedToken {
            token,
            session_id: claims.sid,
            expires_at,
        })
    }

    /// The claims of a genuine, unexpired token.
    pub fn verify(&self, token: &str, now: DateTime<Utc>) -> Option<Claims> {
        let known = self.verified().get(token).cloned();
        let claims = match known {
            Some(claims) => claims,
            None => {
                let claims = self.decode(token)?;
                let mut verified = self.verified();
                if verified.len() >= VERIFIED_TOKENS {
                    verified.clear();
                }
                verified.insert(token.into(), claims.clone());
                claims
            }
        };
        (claims.exp > now.timestamp()).then_some(claims)
    }

    /// The claims of a token signed with one of the secrets: the one its key id names, or, for
    /// a token without one (signed before secrets had ids), any.
    fn decode(&self, token: &str) -> Option<Claims> {
        let kid = jsonwebtoken::decode_header(token).ok()?.kid;
        self.decoding
            .iter()
            .filter(|(id, _)| kid.as_ref().is_none_or(|kid| kid == id))
            .find_map(|(_, key)| {
                jsonwebtoken::decode::<Claims>(token, key, &self.validation)
                    .ok()
                    .map(|data| data.claims)
            })
    }

    fn verified(&self) -> MutexGuard<'_, HashMap<Box<str>, Claims>> {
        // Nothing can be left half-done under the lock: a panic elsewhere does not poison it.
        self.verified.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use secrecy::SecretString;

    fn secret(text: &str) -> SecretString {
        SecretString::from(text.to_owned())
    }

    fn keys() -> TokenKeys {
        TokenKeys::new(&Secrets::one(secret("0123456789abcdef0123456789abcdef")), 1)
    }

    #[test]
    fn tokens_round_trip_and_expire() {
        let keys = keys();
        let now = Utc::now();
        let token = keys.issue("u1", 3, now).unwrap().token;
        let claims = keys.verify(&token, now).unwrap();
        assert_eq!((claims.sub.as_str(), claims.sv), ("u1", 3));
        assert_eq!(claims.sid.len(), 32);
        let again = keys.issue("u1", 3, now).unwrap().token;
        assert_ne!(keys.verify(&again, now).unwrap().sid, claims.sid);
        assert!(
            keys.verify(&token, now + chrono::Duration::minutes(59))
                .is_some()
        );
        assert!(
            keys.verify(&token, now + chrono::Duration::hours(1))
                .is_none()
        );
    }

    #[test]
    fn a_remembered_token_matches_only_itself_and_still_expires() {
        let keys = keys();
        let now = Utc::now();
        let token = keys.issue("u1", 3, now).unwrap().token;
        assert!(keys.verify(&token, now).is_some());
        // The same token with the first character of its signature changed (the last one
        // carries padding bits), and with its claims swapped for another's under the same
        // signature: neither was checked, so neither is taken for the one that was.
        let at = token.rfind('.').unwrap() + 1;
        let swapped = if token[at..].starts_with('A') {
            "B"
        } else {
            "A"
        };
        let tampered = format!("{}{swapped}{}", &token[..at], &token[at + 1..]);
        assert!(keys.verify(&tampered, now).is_none());
        let other = keys.issue("u2", 3, now).unwrap().token;
        let [_, other_claims, _]: [&str; 3] =
            other.split('.').collect::<Vec<_>>().try_into().unwrap();
        let [header, _, signature]: [&str; 3] =
            token.split('.').collect::<Vec<_>>().try_into().unwrap();
        let spliced = format!("{header}.{other_claims}.{signature}");
        assert!(keys.verify(&spliced, now).is_none());
        assert_eq!(keys.verify(&token, now).unwrap().sub, "u1");
        assert!(
            keys.verify(&token, now + chrono::Duration::hours(1))
                .is_none()
        );
    }

    #[test]
    fn remembered_tokens_stay_bounded() {
        let keys = keys();
        let now = Utc::now();
        let first = keys.issue("u0", 0, now).unwrap().token;
        for n in 0..VERIFIED_TOKENS + 10 {
            let token = keys.issue(&format!("u{n}"), 0, now).unwrap().token;
            assert!(keys.verify(&token, now).is_some());
            assert!(keys.verified().len() <= VERIFIED_TOKENS);
        }
        // Forgotten or not, a genuine token is still taken.
        assert_eq!(keys.verify(&first, now).unwrap().sub, "u0");
    }

    #[test]
    fn tokens_without_a_session_id_are_refused() {
        // As issued before sessions had ids: logging out could not end them.
        #[derive(Serialize)]
        struct Older {
            sub: String,
            iss: String,
            aud: String,
            iat: i64,
            exp: i64,
            sv: i32,
        }
        let now = Utc::now();
        let older = Older {
            sub: "u1".into(),
            iss: ISSUER.into(),
            aud: AUDIENCE.into(),
            iat: now.timestamp(),
            exp: now.timestamp() + 600,
            sv: 0,
        };
        let token = jsonwebtoken::encode(
            &Header::new(JwtAlgorithm::HS256),
            &older,
            &EncodingKey::from_secret(b"0123456789abcdef0123456789abcdef"),
        )
        .unwrap();
        assert!(keys().verify(&token, now).is_none());
    }

    #[test]
    fn tokens_signed_with_another_secret_or_algorithm_are_refused() {
        let keys = keys();
        let other = TokenKeys::new(
            &Secrets::one(secret("another secret of 32 bytes or more!")),
            1,
        );
        let forged = other.issue("u1", 0, Utc::now()).unwrap().token;
        assert!(keys.verify(&forged, Utc::now()).is_none());
        let claims = Claims {
            sub: "u1".into(),
            iss: ISSUER.into(),
            aud: AUDIENCE.into(),
            iat: Utc::now().timestamp(),
            exp: Utc::now().timestamp() + 600,
            sv: 0,
            sid: "0".repeat(32),
        };
        let hs512 = jsonwebtoken::encode(
            &Header::new(JwtAlgorithm::HS512),
            &claims,
            &EncodingKey::from_secret(b"0123456789abcdef0123456789abcdef"),
        )
        .unwrap();
        assert!(keys.verify(&hs512, Utc::now()).is_none());
    }

    #[test]
    fn a_rotated_secret_verifies_until_it_is_dropped() {
        let old = "0123456789abcdef0123456789abcdef";
        let new = "a newer secret of 32 bytes or more";
        let now = Utc::now();
        let before = keys().issue("u1", 0, now).unwrap().token;
        // As signed before secrets had key ids: no `kid` in the header.
        let claims = keys().verify(&before, now).unwrap();
        let unnamed = jsonwebtoken::encode(
            &Header::new(JwtAlgorithm::HS256),
            &claims,
            &EncodingKey::from_secret(old.as_bytes()),
        )
        .unwrap();
        // The new secret is accepted first, everywhere, while the old one still signs.
        let accepting = TokenKeys::new(&Secrets::new(secret(old), [secret(new)]), 1);
        let rotated = TokenKeys::new(&Secrets::new(secret(new), [secret(old)]), 1);
        let after = rotated.issue("u2", 0, now).unwrap().token;
        assert_eq!(
            jsonwebtoken::decode_header(&after).unwrap().kid.as_deref(),
            Some(crate::auth::secrets::Secret::new(secret(new)).id())
        );
        for token in [&before, &unnamed, &after] {
            assert!(accepting.verify(token, now).is_some());
            assert!(rotated.verify(token, now).is_some());
        }
        // Once the old secret is dropped, what it signed is refused.
        let dropped = TokenKeys::new(&Secrets::one(secret(new)), 1);
        assert!(dropped.verify(&before, now).is_none());
        assert!(dropped.verify(&unnamed, now).is_none());
        assert!(dropped.verify(&after, now).is_some());
        // A key id names a key: a token claiming the new id but signed with the old is refused.
        let mut header = Header::new(JwtAlgorithm::HS256);
        header.kid = Some(
            crate::auth::secrets::Secret::new(secret(new))
                .id()
                .to_owned(),
        );
        let misnamed =
            jsonwebtoken::encode(&header, &claims, &EncodingKey::from_secret(old.as_bytes()))
                .unwrap();
        assert!(rotated.verify(&misnamed, now).is_none());
    }
}
