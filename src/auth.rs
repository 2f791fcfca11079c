//! Passwords (argon2id), access tokens (HS256 JWTs), and who the caller is. Reading these from
//! an HTTP request is `crate::api::auth`'s business; nothing here knows of HTTP.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard, PoisonError};

use argon2::password_hash::{Output, ParamsString, PasswordHash, SaltString, rand_core::OsRng};
use argon2::{Algorithm, Argon2, Block, Params, Version};
use chrono::{DateTime, Utc};
use jsonwebtoken::{Algorithm as JwtAlgorithm, DecodingKey, EncodingKey, Header, Validation};
use secrecy::{ExposeSecret, SecretString};
use serde::{Deserialize, Serialize};

use crate::scopes::Scopes;

const ISSUER: &str = "kuryr";
const AUDIENCE: &str = "kuryr-api";

/// The one answer to any authentication failure, so a caller learns nothing about which part
/// was wrong.
pub const INVALID_CREDENTIALS: &str = "the username or password is wrong";
pub const TOKEN_REQUIRED: &str = "an access token is required: send `Authorization: Bearer <token>` with a token from POST /api/v1/auth/login, or a personal access token";
/// Sent whenever a request carries a token that does not hold, wherever it is sent: a client is
/// told its token is dead rather than served as if it were nobody.
pub const INVALID_TOKEN: &str = "the access token is not valid: malformed, forged, expired, revoked, or its session ended (a logout, a password change, a deleted account); log in again with POST /api/v1/auth/login";

/// The OWASP Password Storage Cheat Sheet's first recommendation for argon2id: 19 MiB of memory,
/// 2 iterations, 1 lane.
fn params() -> Params {
    Params::new(19 * 1024, 2, 1, None).expect("valid argon2 parameters")
}

fn argon2(params: Params) -> Argon2<'static> {
    Argon2::new(Algorithm::Argon2id, Version::V0x13, params)
}

/// The working memory of argon2, kept by whoever hashes many passwords one after another: its
/// 19 MiB are allocated once, when it is made, instead of once per password.
pub struct HashMemory(Vec<Block>);

impl HashMemory {
    pub fn new() -> Self {
        HashMemory(vec![Block::default(); params().block_count()])
    }

    fn hash_into(
        &mut self,
        argon2: &Argon2<'_>,
        password: &str,
        salt: &[u8],
        out: &mut [u8],
    ) -> argon2::Result<()> {
        let needed = argon2.params().block_count();
        if needed > self.0.len() {
            // A hash stored with more memory than today's parameters: rare enough that its
            // memory is allocated for this one check rather than kept.
            return argon2.hash_password_into(password.as_bytes(), salt, out);
        }
        argon2.hash_password_into_with_memory(password.as_bytes(), salt, out, &mut self.0[..])
    }
}

impl Default for HashMemory {
    fn default() -> Self {
        Self::new()
    }
}

/// Hashes a password into a PHC string. CPU-heavy, and 19 MiB of `memory`.
pub fn hash_password(password: &str, memory: &mut HashMemory) -> anyhow::Result<String> {
    let params = params();
    let argon2 = argon2(params.clone());
    let salt = SaltString::generate(&mut OsRng);
    let mut salt_bytes = [0u8; 64];
    let salt_bytes = salt
        .decode_b64(&mut salt_bytes)
        .map_err(|e| anyhow::anyhow!("cannot read the salt: {e}"))?;
    let hash = Output::init_with(Params::DEFAULT_OUTPUT_LEN, |out| {
        memory
            .hash_into(&argon2, password, salt_bytes, out)
            .map_err(Into::into)
    })
    .map_err(|e| anyhow::anyhow!("cannot hash password: {e}"))?;
    let phc = PasswordHash {
        algorithm: Algorithm::Argon2id.ident(),
        version: Some(Version::V0x13.into()),
        params: ParamsString::try_from(&params)
            .map_err(|e| anyhow::anyhow!("cannot write the parameters: {e}"))?,
        salt: Some(salt.as_salt()),
        hash: Some(hash),
    };
    Ok(phc.to_string())
}

/// A hash of a random password, checked when the user does not exist so that a wrong username
/// takes as long as a wrong password. Written out rather than computed at start, so that argon2
/// runs only where passwords are hashed; a test keeps its parameters those of [`params`].
const DUMMY_HASH: &str = "$argon2id$v=19$m=19456,t=2,p=1$bj9UHYj0jJqQEVavP1P2zQ$O18xE8xgLpSwj1tJYJTC5b3wfVKwVSRBfwIuDyODS8Y";

/// Checks a password against a stored hash, or against the dummy hash when there is no user
/// (which never matches). CPU-heavy, and 19 MiB of `memory`.
pub fn verify_password(password: &str, stored: Option<&str>, memory: &mut HashMemory) -> bool {
    match stored {
        Some(stored) => matches(password, stored, memory),
        None => {
            // Only the time it takes matters; `black_box` keeps it from being optimised away.
            std::hint::black_box(matches(password, DUMMY_HASH, memory));
            false
        }
    }
}

fn matches(password: &str, stored: &str, memory: &mut HashMemory) -> bool {
    let Ok(hash) = PasswordHash::new(stored) else {
        return false;
    };
    let (Some(salt), Some(expected)) = (hash.salt, hash.hash) else {
        return false;
    };
    let (Ok(algorithm), Ok(version), Ok(params)) = (
        Algorithm::try_from(hash.algorithm),
        hash.version
            .map_or(Ok(Version::default()), Version::try_from),
        Params::try_from(&hash),
    ) else {
        return false;
    };
    let mut salt_bytes = [0u8; 64];
    let Ok(salt_bytes) = salt.decode_b64(&mut salt_bytes) else {
        return false;
    };
    let argon2 = Argon2::new(algorithm, version, params);
    Output::init_with(expected.len(), |out| {
        memory
            .hash_into(&argon2, password, salt_bytes, out)
            .map_err(Into::into)
    })
    // `Output`'s equality takes the same time wherever the first difference is.
    .is_ok_and(|computed| computed == expected)
}

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
    ) -> anyhow::Result<String> {
        use rand::RngCore;
        let mut sid = [0u8; 16];
        rand::rng().fill_bytes(&mut sid);
        let claims = Claims {
            sub: user_id.to_owned(),
            iss: ISSUER.into(),
            aud: AUDIENCE.into(),
            iat: now.timestamp(),
            exp: (now + self.ttl).timestamp(),
            sv: session_version,
            sid: hex::encode(sid),
        };
        jsonwebtoken::encode(&Header::new(JwtAlgorithm::HS256), &claims, &self.encoding)
            .map_err(|e| anyhow::anyhow!("cannot sign token: {e}"))
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

/// The authenticated caller: a login token whose session holds (genuine, unexpired, of an
/// account that still exists with the same session version, not logged out), or a personal
/// access token that is stored and unexpired.
#[derive(Clone, Debug)]
pub struct AuthUser {
    pub id: String,
    pub username: String,
}

/// A caller whose token is genuine and unexpired. For a login token, before the database has
/// confirmed its session (that the account exists, its password has not changed and the session
/// was not ended since): the move endpoint takes this and confirms the session inside its own
/// query, saving one on the hot path; every other endpoint takes [`AuthUser`]. A personal token
/// has been found in the database already, since nothing else tells whether it holds.
#[derive(Clone, Debug)]
pub struct Caller {
    pub id: String,
    pub credential: Credential,
    /// When the token runs out, in Unix seconds (what outlives the request, such as an event
    /// stream, ends then).
    pub expires_at: i64,
}

/// What kind of token a caller sent.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Credential {
    /// A login token (`POST /api/v1/auth/login`): all the account's powers, while its session
    /// holds.
    Login(LoginSession),
    /// A personal access token, confirmed: only its scopes.
    Personal { token_id: String, scopes: Scopes },
}

/// The login session a login token names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoginSession {
    /// The account's session version when the token was issued; a password change or the end
    /// of every session moves it on.
    pub version: i32,
    /// This session's own id, which logging out revokes.
    pub id: String,
}

impl Credential {
    /// The scopes of a personal token; `None` for a login token, which holds every one.
    pub fn scopes(&self) -> Option<Scopes> {
        match self {
            Credential::Login(_) => None,
            Credential::Personal { scopes, .. } => Some(*scopes),
        }
    }

    pub fn login_session(&self) -> Option<&LoginSession> {
        match self {
            Credential::Login(session) => Some(session),
            Credential::Personal { .. } => None,
        }
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
    fn passwords_verify_only_with_the_right_password() {
        let mut memory = HashMemory::new();
        let hash = hash_password("correct horse battery staple", &mut memory).unwrap();
        assert!(hash.starts_with("$argon2id$v=19$m=19456,t=2,p=1$"));
        let mut verify =
            |password: &str, stored: Option<&str>| verify_password(password, stored, &mut memory);
        assert!(verify("correct horse battery staple", Some(&hash)));
        assert!(!verify("Correct horse battery staple", Some(&hash)));
        assert!(!verify("no user has this password", None));
        assert!(!verify("x", Some("not a hash")));
        // The same memory serves the next password: a new salt, a new hash, still verified.
        let again = hash_password("correct horse battery staple", &mut memory).unwrap();
        assert_ne!(again, hash);
        assert!(verify_password(
            "correct horse battery staple",
            Some(&again),
            &mut memory
        ));
        assert!(verify_password(
            "correct horse battery staple",
            Some(&hash),
            &mut memory
        ));
    }

    #[test]
    fn hashes_written_by_the_argon2_crate_itself_verify() {
        use argon2::password_hash::PasswordHasher;
        let salt = SaltString::generate(&mut OsRng);
        let theirs = argon2(params())
            .hash_password(b"correct horse battery staple", &salt)
            .unwrap()
            .to_string();
        let mut memory = HashMemory::new();
        assert!(verify_password(
            "correct horse battery staple",
            Some(&theirs),
            &mut memory
        ));
        assert!(!verify_password("wrong", Some(&theirs), &mut memory));
        // Hashes stored with other parameters, more memory or less, still verify.
        for (m_cost, lanes) in [(32 * 1024, 1), (8 * 1024, 2)] {
            let other = Params::new(m_cost, 1, lanes, None).unwrap();
            let stored = argon2(other)
                .hash_password(b"correct horse battery staple", &salt)
                .unwrap()
                .to_string();
            assert!(verify_password(
                "correct horse battery staple",
                Some(&stored),
                &mut memory
            ));
            assert!(!verify_password("wrong", Some(&stored), &mut memory));
        }
    }

    #[test]
    fn the_dummy_hash_costs_what_a_real_one_does() {
        let dummy = PasswordHash::new(DUMMY_HASH).unwrap();
        let real = hash_password("anything at all", &mut HashMemory::new()).unwrap();
        let real = PasswordHash::new(&real).unwrap();
        assert_eq!(dummy.algorithm, real.algorithm);
        assert_eq!(dummy.version, real.version);
        assert_eq!(dummy.params, real.params);
        assert_eq!(dummy.hash.unwrap().len(), real.hash.unwrap().len());
    }

    #[test]
    fn tokens_round_trip_and_expire() {
        let keys = keys();
        let now = Utc::now();
        let token = keys.issue("u1", 3, now).unwrap();
        let claims = keys.verify(&token, now).unwrap();
        assert_eq!((claims.sub.as_str(), claims.sv), ("u1", 3));
        assert_eq!(claims.sid.len(), 32);
        let again = keys.issue("u1", 3, now).unwrap();
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
        let token = keys.issue("u1", 3, now).unwrap();
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
        let other = keys.issue("u2", 3, now).unwrap();
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
        let first = keys.issue("u0", 0, now).unwrap();
        for n in 0..VERIFIED_TOKENS + 10 {
            let token = keys.issue(&format!("u{n}"), 0, now).unwrap();
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
        let forged = other.issue("u1", 0, Utc::now()).unwrap();
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
