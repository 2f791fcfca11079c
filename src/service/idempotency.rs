//! Requests that create something, made safe to retry: sent with an `Idempotency-Key`, the
//! first such request runs, and a retry with the same key gets its answer again instead of
//! creating a second thing (draft-ietf-httpapi-idempotency-key-header, `docs/http.md`).
//!
//! A key is claimed in its own transaction before the request runs, and its answer kept after:
//! two copies of one request sent at once cannot both run, the one that finds the key claimed
//! is told to wait. The answer is kept after the request's own transaction has committed; if
//! the process stops between the two, the claim is taken over by a retry after
//! [`ABANDONED_AFTER`], and that retry runs the request again.
//!
//! An answer may hold a secret shown once (a personal access token, a webhook's signing
//! secret): it is kept sealed (ChaCha20-Poly1305) under a key derived from the server's signing
//! secret and the idempotency key (an answer kept under a secret that now only verifies is still
//! found and opened), and the idempotency key itself is kept only as a digest, so that a
//! copy of the database alone opens no answer.

use base64::Engine as _;
use chacha20poly1305::aead::{Aead, AeadCore, KeyInit, OsRng};
use chacha20poly1305::{ChaCha20Poly1305, Key, Nonce};
use chrono::{DateTime, Duration, Utc};
use hmac::{Hmac, Mac};
use sha2::{Digest, Sha256};

use crate::auth::Credential;
use crate::db::{self, Database};
use crate::service::model::error::{Conflict, ServiceError};

/// How long a key keeps its answer.
pub const KEPT: Duration = Duration::hours(24);
/// How long a claim without an answer holds: far longer than any request may take.
pub const ABANDONED_AFTER: Duration = Duration::seconds(60);
/// The longest key taken; the draft leaves it to the server.
pub const MAX_KEY_CHARS: usize = 255;

/// Who sent a key: the credential, not only the account. An answer is given again only to the
/// login session or personal token that made it: another credential of the same account may
/// hold fewer scopes, and an answer may carry a secret (a token, a webhook's signing secret, a
/// stream ticket) that credential could not have made itself. Before there is an account (a
/// registration), the fingerprint alone tells requests apart: only someone who sent the same
/// body (its password included) gets its answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum KeyOwner {
    Credential { user_id: String, credential: String },
    Anonymous,
}

impl KeyOwner {
    /// The owner of a request made with `credential` by `user_id`.
    pub fn of(user_id: &str, credential: &Credential) -> KeyOwner {
        let credential = match credential {
            Credential::Login(session) => format!("session:{}", session.id),
            Credential::Personal { token_id, .. } => format!("token:{token_id}"),
        };
        KeyOwner::Credential {
            user_id: user_id.to_owned(),
            credential,
        }
    }

    /// As stored: a credential's keys never meet another's.
    fn id(&self) -> String {
        match self {
            KeyOwner::Credential {
                user_id,
                credential,
            } => format!("{user_id}/{credential}"),
            KeyOwner::Anonymous => "-".to_owned(),
        }
    }
}

/// What a request sent, as far as its fingerprint goes.
#[derive(Clone, Copy, Debug)]
pub struct Sent<'a> {
    pub method: &'a str,
    pub path: &'a str,
    pub body: &'a [u8],
}

/// A request sent with a key.
#[derive(Clone)]
pub struct KeyedRequest {
    owner: KeyOwner,
    /// The key's digest, as stored.
    key: String,
    fingerprint: String,
    seal: [u8; 32],
    /// The key's digest and seal under each secret that only verifies: while a secret is being
    /// replaced, an answer kept under the older one is still found and opened.
    older: Vec<(String, [u8; 32])>,
}

impl KeyedRequest {
    /// Reads the key and takes the request's fingerprint: the method, the path and the body.
    ///
    /// `answers`: the answer keys derived from each secret, the signing one's first.
    pub fn new(
        answers: &[[u8; 32]],
        owner: KeyOwner,
        key: &str,
        sent: Sent<'_>,
    ) -> Result<KeyedRequest, ServiceError> {
        let Sent { method, path, body } = sent;
        let printable = key.bytes().all(|b| (0x20..0x7f).contains(&b));
        if key.is_empty() || key.len() > MAX_KEY_CHARS || !printable {
            return Err(ServiceError::invalid(
                "Idempotency-Key",
                format!(
                    "an Idempotency-Key is 1 to {MAX_KEY_CHARS} printable ASCII characters, such as a UUID"
                ),
            ));
        }
        let mut digest = Sha256::new();
        for part in [method.as_bytes(), b" ", path.as_bytes(), b"\n", body] {
            digest.update(part);
        }
        let owner_id = owner.id();
        let mut under = answers.iter().map(|answers| {
            let derive = |label: &[u8]| -> [u8; 32] {
                let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(answers)
                    .expect("HMAC takes a key of any length");
                for part in [label, owner_id.as_bytes(), b"\0", key.as_bytes()] {
                    mac.update(part);
                }
                mac.finalize().into_bytes().into()
            };
            (hex::encode(derive(b"key ")), derive(b"seal "))
        });
        let (key, seal) = under
            .next()
            .ok_or_else(|| ServiceError::internal("the server has no secret"))?;
        Ok(KeyedRequest {
            key,
            seal,
            older: under.collect(),
            owner,
            fingerprint: hex::encode(digest.finalize()),
        })
    }

    pub fn owner(&self) -> &KeyOwner {
        &self.owner
    }

    fn cipher(&self) -> ChaCha20Poly1305 {
        ChaCha20Poly1305::new(&Key::from(self.seal))
    }

    /// This request as it was keyed under an older secret, if a key was kept that way.
    fn kept_under_older_secret(
        &self,
        conn: &mut db::DbConn,
    ) -> Result<Option<(KeyedRequest, db::idempotency::StoredKey)>, ServiceError> {
        for (key, seal) in &self.older {
            if let Some(stored) = db::idempotency::find(conn, &self.owner.id(), key)? {
                let older = KeyedRequest {
                    key: key.clone(),
                    seal: *seal,
                    older: Vec::new(),
                    ..self.clone()
                };
                return Ok(Some((older, stored)));
            }
        }
        Ok(None)
    }

    /// The answer's body sealed: base64 of the nonce and the ciphertext.
    fn seal(&self, body: &str) -> Result<String, ServiceError> {
        let nonce = ChaCha20Poly1305::generate_nonce(&mut OsRng);
        let sealed = self
            .cipher()
            .encrypt(&nonce, body.as_bytes())
            .map_err(|_| ServiceError::internal("an answer could not be sealed"))?;
        let mut out = nonce.to_vec();
        out.extend(sealed);
        Ok(base64::engine::general_purpose::STANDARD.encode(out))
    }

    fn open(&self, sealed: &str) -> Result<String, ServiceError> {
        let unreadable =
            || ServiceError::internal("a kept answer does not open with this server's secret");
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(sealed)
            .map_err(|_| unreadable())?;
        if bytes.len() < 12 {
            return Err(unreadable());
        }
        let (nonce, sealed) = bytes.split_at(12);
        let nonce: [u8; 12] = nonce.try_into().map_err(|_| unreadable())?;
        let body = self
            .cipher()
            .decrypt(&Nonce::from(nonce), sealed)
            .map_err(|_| unreadable())?;
        String::from_utf8(body).map_err(|_| unreadable())
    }
}

/// The first answer to a key, kept.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeptAnswer {
    pub status: u16,
    pub location: Option<String>,
    pub body: String,
}

/// What to do with a keyed request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Claim {
    /// Run it: the key is this request's now.
    Run,
    /// Answer it with the first answer.
    Replay(KeptAnswer),
}

/// The answer kept under `request`'s key, if it has one, once the request is known to be the
/// one it was kept for.
fn kept_answer(
    request: &KeyedRequest,
    stored: &db::idempotency::StoredKey,
) -> Result<Option<Claim>, ServiceError> {
    if stored.fingerprint != request.fingerprint {
        return Err(ServiceError::invalid(
            "Idempotency-Key",
            "this Idempotency-Key was sent with another request (another endpoint or body); a key names one request, so send a new key with a new request",
        ));
    }
    match (stored.status, &stored.body) {
        (Some(status), Some(body)) => Ok(Some(Claim::Replay(KeptAnswer {
            status: u16::try_from(status).unwrap_or(200),
            location: stored.location.clone(),
            body: request.open(body)?,
        }))),
        _ => Ok(None),
    }
}

/// Claims the key of a request about to run, or finds the answer it already has.
pub async fn claim(
    db: &Database,
    request: KeyedRequest,
    now: DateTime<Utc>,
) -> Result<Claim, ServiceError> {
    let now = now.naive_utc();
    db.write(move |conn| {
        let owner = &request.owner.id();
        if let Some((older, stored)) = request.kept_under_older_secret(conn)?
            && let Some(replay) = kept_answer(&older, &stored)?
        {
            return Ok(replay);
        }
        if db::idempotency::claim(conn, owner, &request.key, &request.fingerprint, now)? {
            return Ok(Claim::Run);
        }
        let stored = db::idempotency::find(conn, owner, &request.key)?
            .ok_or(ServiceError::Conflict {
                kind: Conflict::ConcurrentUpdate,
                detail: "the Idempotency-Key was given back while this request read it; send it again".into(),
            })?;
        if let Some(replay) = kept_answer(&request, &stored)? {
            return Ok(replay);
        }
        if now - stored.created_at >= ABANDONED_AFTER
            && db::idempotency::reclaim(conn, owner, &request.key, stored.created_at, now)?
        {
            return Ok(Claim::Run);
        }
        Err(ServiceError::Conflict {
            kind: Conflict::IdempotencyKeyInUse,
            detail: "a request with this Idempotency-Key is still running; send it again in a moment to get its answer".into(),
        })
    })
    .await
}

/// Something a kept answer made that its owner may delete since: a personal token, a webhook.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Made {
    Token(String),
    Webhook(String),
}

/// Refuses to give a kept answer again when what it made has since been deleted by its owner:
/// the answer would name, and a client would go on to use, a thing that is gone. The client
/// deleted it, so it knows; a new key makes a new one.
pub async fn ensure_still_there(
    db: &Database,
    owner: &KeyOwner,
    made: Made,
) -> Result<(), ServiceError> {
    let KeyOwner::Credential { user_id, .. } = owner.clone() else {
        return Ok(());
    };
    db.read(move |conn| {
        let (there, what) = match &made {
            Made::Token(id) => (
                db::tokens::find_of_user(conn, id, &user_id)?.is_some(),
                format!("the personal access token {id}"),
            ),
            Made::Webhook(id) => (
                db::webhooks::find_of_user(conn, id, &user_id)?.is_some(),
                format!("the webhook {id}"),
            ),
        };
        if there {
            Ok(())
        } else {
            Err(ServiceError::conflict(
                Conflict::IdempotentCreationGone,
                format!("the request sent with this Idempotency-Key made {what}, which has since been deleted; send a new key to make another"),
            ))
        }
    })
    .await
}

/// Keeps the answer of a request that ran with its key.
pub async fn complete(
    db: &Database,
    request: KeyedRequest,
    answer: KeptAnswer,
) -> Result<(), ServiceError> {
    let sealed = request.seal(&answer.body)?;
    db.write(move |conn| {
        db::idempotency::complete(
            conn,
            &request.owner.id(),
            &request.key,
            i32::from(answer.status),
            answer.location.as_deref(),
            &sealed,
        )?;
        Ok(())
    })
    .await
}

/// Gives the key of a request that failed back: the request changed nothing (its own
/// transaction did not commit), so the same key may be sent again.
pub async fn release(db: &Database, request: KeyedRequest) -> Result<(), ServiceError> {
    db.write(move |conn| {
        db::idempotency::release(conn, &request.owner.id(), &request.key)?;
        Ok(())
    })
    .await
}

/// Forgets the keys older than [`KEPT`].
pub async fn prune(db: &Database, now: DateTime<Utc>) -> Result<usize, ServiceError> {
    let before = (now - KEPT).naive_utc();
    db.write(move |conn| Ok(db::idempotency::prune(conn, before)?))
        .await
}
