//! Login tokens: HS256 JWTs, each naming the login session it belongs to.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard, PoisonError};

use chrono::{DateTime, Utc};
use jsonwebtoken::{Algorithm as JwtAlgorithm, DecodingKey, EncodingKey, Header, Validation};
use secrecy::{ExposeSecret, SecretString};
use serde::{Deserialize, Serialize};

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
    decoding: DecodingKey,
    validation: Validation,
    pub ttl: chrono::Duration,
    /// Seals the answers kept for idempotency keys (`service::idempotency`): derived from the
    /// server's secret, so that a copy of the database alone opens none of them.
    pub answers: [u8; 32],
    /// Signs the web client's form tokens (`web::forms`), under a label of its own.
    pub forms: [u8; 32],
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
    pub fn new(secret: &SecretString, ttl_hours: u32) -> Self {
        let bytes = secret.expose_secret().as_bytes();
        // The algorithm is pinned: a token signed any other way (or `none`) is refused.
        let mut validation = Validation::new(JwtAlgorithm::HS256);
        validation.set_issuer(&[ISSUER]);
        validation.set_audience(&[AUDIENCE]);
        validation.set_required_spec_claims(&["exp", "iss", "aud", "sub"]);
        // `sv` and `sid` are required by `Claims` itself: a token without them does not decode.
        // Expiry is checked in `verify` against the server's clock, which tests can move.
        validation.validate_exp = false;
        let mut answers = <hmac::Hmac<sha2::Sha256> as hmac::Mac>::new_from_slice(bytes)
            .expect("HMAC takes a key of any length");
        hmac::Mac::update(&mut answers, b"kuryr idempotent answers v1");
        let mut forms = <hmac::Hmac<sha2::Sha256> as hmac::Mac>::new_from_slice(bytes)
            .expect("HMAC takes a key of any length");
        hmac::Mac::update(&mut forms, b"kuryr web forms v1");
        TokenKeys {
            forms: hmac::Mac::finalize(forms).into_bytes().into(),
            encoding: EncodingKey::from_secret(bytes),
            decoding: DecodingKey::from_secret(bytes),
            validation,
            ttl: chrono::Duration::hours(i64::from(ttl_hours)),
            answers: hmac::Mac::finalize(answers).into_bytes().into(),
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
        let token =
            jsonwebtoken::encode(&Header::new(JwtAlgorithm::HS256), &claims, &self.encoding)
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
                let claims =
                    jsonwebtoken::decode::<Claims>(token, &self.decoding, &self.validation)
                        .ok()?
                        .claims;
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

    fn verified(&self) -> MutexGuard<'_, HashMap<Box<str>, Claims>> {
        // Nothing can be left half-done under the lock: a panic elsewhere does not poison it.
        self.verified.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys() -> TokenKeys {
        TokenKeys::new(
            &SecretString::from("0123456789abcdef0123456789abcdef".to_owned()),
            1,
        )
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
            &SecretString::from("another secret of 32 bytes or more!".to_owned()),
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
}
