//! Passwords (argon2id), access tokens (HS256 JWTs), and who the caller is. Reading these from
//! an HTTP request is `crate::api::auth`'s business; nothing here knows of HTTP.

use std::sync::LazyLock;

use argon2::password_hash::{
    PasswordHash, PasswordHasher, PasswordVerifier, SaltString, rand_core::OsRng,
};
use argon2::{Algorithm, Argon2, Params, Version};
use chrono::{DateTime, Utc};
use jsonwebtoken::{Algorithm as JwtAlgorithm, DecodingKey, EncodingKey, Header, Validation};
use secrecy::{ExposeSecret, SecretString};
use serde::{Deserialize, Serialize};

const ISSUER: &str = "kuryr";
const AUDIENCE: &str = "kuryr-api";

/// The one answer to any authentication failure, so a caller learns nothing about which part
/// was wrong.
pub const INVALID_CREDENTIALS: &str = "the username or password is wrong";
pub const INVALID_TOKEN: &str = "a valid access token is required: send `Authorization: Bearer <token>` with a token from POST /api/v1/auth/login";

/// argon2id with the OWASP Password Storage Cheat Sheet's first recommendation:
/// 19 MiB of memory, 2 iterations, 1 lane.
fn argon2() -> Argon2<'static> {
    let params = Params::new(19 * 1024, 2, 1, None).expect("valid argon2 parameters");
    Argon2::new(Algorithm::Argon2id, Version::V0x13, params)
}

/// Hashes a password into a PHC string. CPU-heavy: call it on a blocking thread.
pub fn hash_password(password: &str) -> anyhow::Result<String> {
    let salt = SaltString::generate(&mut OsRng);
    argon2()
        .hash_password(password.as_bytes(), &salt)
        .map(|hash| hash.to_string())
        .map_err(|e| anyhow::anyhow!("cannot hash password: {e}"))
}

/// A hash of a random password, checked when the user does not exist so that a wrong username
/// takes as long as a wrong password.
static DUMMY_HASH: LazyLock<String> =
    LazyLock::new(|| hash_password("no user has this password").expect("hashing works"));

/// Checks a password against a stored hash, or against the dummy hash when there is no user.
/// CPU-heavy: call it on a blocking thread.
pub fn verify_password(password: &str, stored: Option<&str>) -> bool {
    let stored = stored.unwrap_or(&DUMMY_HASH);
    let Ok(hash) = PasswordHash::new(stored) else {
        return false;
    };
    argon2().verify_password(password.as_bytes(), &hash).is_ok()
        && !std::ptr::eq(stored, DUMMY_HASH.as_str())
}

#[derive(Debug, Serialize, Deserialize)]
pub struct Claims {
    pub sub: String,
    pub iss: String,
    pub aud: String,
    pub iat: i64,
    pub exp: i64,
    /// The user's session version when the token was issued.
    pub sv: i32,
}

/// Signs and checks access tokens.
pub struct TokenKeys {
    encoding: EncodingKey,
    decoding: DecodingKey,
    validation: Validation,
    pub ttl: chrono::Duration,
}

impl TokenKeys {
    pub fn new(secret: &SecretString, ttl_hours: u32) -> Self {
        let bytes = secret.expose_secret().as_bytes();
        // The algorithm is pinned: a token signed any other way (or `none`) is refused.
        let mut validation = Validation::new(JwtAlgorithm::HS256);
        validation.set_issuer(&[ISSUER]);
        validation.set_audience(&[AUDIENCE]);
        validation.set_required_spec_claims(&["exp", "iss", "aud", "sub"]);
        // Expiry is checked in `verify` against the server's clock, which tests can move.
        validation.validate_exp = false;
        TokenKeys {
            encoding: EncodingKey::from_secret(bytes),
            decoding: DecodingKey::from_secret(bytes),
            validation,
            ttl: chrono::Duration::hours(i64::from(ttl_hours)),
        }
    }

    pub fn issue(
        &self,
        user_id: &str,
        session_version: i32,
        now: DateTime<Utc>,
    ) -> anyhow::Result<String> {
        let claims = Claims {
            sub: user_id.to_owned(),
            iss: ISSUER.into(),
            aud: AUDIENCE.into(),
            iat: now.timestamp(),
            exp: (now + self.ttl).timestamp(),
            sv: session_version,
        };
        jsonwebtoken::encode(&Header::new(JwtAlgorithm::HS256), &claims, &self.encoding)
            .map_err(|e| anyhow::anyhow!("cannot sign token: {e}"))
    }

    /// The claims of a genuine, unexpired token.
    pub fn verify(&self, token: &str, now: DateTime<Utc>) -> Option<Claims> {
        let claims = jsonwebtoken::decode::<Claims>(token, &self.decoding, &self.validation)
            .ok()?
            .claims;
        (claims.exp > now.timestamp()).then_some(claims)
    }
}

/// The authenticated caller: a genuine, unexpired token (signature, expiry, issuer and audience
/// checked) of an account that still exists with the same session version.
#[derive(Clone, Debug)]
pub struct AuthUser {
    pub id: String,
    pub username: String,
}

/// A caller whose token is genuine and unexpired, before the database has confirmed the session
/// (that the account exists and its password has not changed since). The move endpoint takes
/// this and confirms the session inside its own transaction, saving a query on the hot path;
/// every other endpoint takes [`AuthUser`].
#[derive(Clone, Debug)]
pub struct Caller {
    pub id: String,
    pub session_version: i32,
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
    fn passwords_verify_only_with_the_right_password() {
        let hash = hash_password("correct horse battery staple").unwrap();
        assert!(hash.starts_with("$argon2id$v=19$m=19456,t=2,p=1$"));
        assert!(verify_password("correct horse battery staple", Some(&hash)));
        assert!(!verify_password(
            "Correct horse battery staple",
            Some(&hash)
        ));
        assert!(!verify_password("no user has this password", None));
        assert!(!verify_password("x", Some("not a hash")));
    }

    #[test]
    fn tokens_round_trip_and_expire() {
        let keys = keys();
        let now = Utc::now();
        let token = keys.issue("u1", 3, now).unwrap();
        let claims = keys.verify(&token, now).unwrap();
        assert_eq!((claims.sub.as_str(), claims.sv), ("u1", 3));
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
    fn tokens_signed_with_another_secret_or_algorithm_are_refused() {
        let keys = keys();
        let other = TokenKeys::new(
            &SecretString::from("another secret of 32 bytes or more!".to_owned()),
            1,
        );
        let forged = other.issue("u1", 0, Utc::now()).unwrap();
        assert!(keys.verify(&forged, Utc::now()).is_none());
        let claims = Claims {
            sub: "u1".into(),
            iss: ISSUER.into(),
            aud: AUDIENCE.into(),
            iat: Utc::now().timestamp(),
            exp: Utc::now().timestamp() + 600,
            sv: 0,
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
