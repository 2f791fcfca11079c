//! The address a reply to a turn mail goes to. Its local part is the credential of a move by
//! mail: it names the game, the side, the ply and the player's session generation, signed with
//! the server's secret, so a changed password or "sign out everywhere" (which raise the
//! generation) ends every address mailed before. It is written in lower-case base32 because mail
//! systems may change the case of addresses, and it fits the 64 characters a local part may have.

use data_encoding::{BASE32_NOPAD, Encoding};
use hmac::{Hmac, Mac};
use sha2::Sha256;

use super::secrets::Secrets;

/// What a reply address stands for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReplyTo {
    pub game_id: String,
    /// The side the mail went to: `false` White, `true` Black.
    pub black: bool,
    /// The ply the game was at when the mail asked for a move.
    pub ply: u32,
    /// The player's session generation then.
    pub generation: i32,
}

/// Signs and reads reply addresses' local parts.
#[derive(Clone)]
pub struct ReplyAddresses {
    /// One key per secret, the signing one's first. An address has no room for a key id (it
    /// must fit 64 characters), so reading one tries each: there are rarely more than two.
    keys: Vec<[u8; 32]>,
}

/// Bytes of the signature kept: 96 bits, far beyond guessing by mail.
const MAC_BYTES: usize = 12;
/// Game (16), ply and side (4), generation (4), signature.
const BYTES: usize = 16 + 4 + 4 + MAC_BYTES;

fn base32() -> Encoding {
    BASE32_NOPAD
}

impl ReplyAddresses {
    pub fn new(secrets: &Secrets) -> Self {
        ReplyAddresses {
            keys: secrets.derive_all(b"kuryr reply addresses v1"),
        }
    }

    fn mac(key: &[u8; 32], body: &[u8]) -> Hmac<Sha256> {
        let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(key).expect("a 32-byte key fits HMAC");
        mac.update(body);
        mac
    }

    /// The local part for `reply`; `None` for a game id that is not a UUID (every game's is).
    pub fn local_part(&self, reply: &ReplyTo) -> Option<String> {
        let game = uuid::Uuid::parse_str(&reply.game_id).ok()?;
        let mut bytes = Vec::with_capacity(BYTES);
        bytes.extend_from_slice(game.as_bytes());
        let ply = reply.ply.checked_mul(2)? | u32::from(reply.black);
        bytes.extend_from_slice(&ply.to_be_bytes());
        bytes.extend_from_slice(&reply.generation.to_be_bytes());
        let signature = Self::mac(&self.keys[0], &bytes).finalize().into_bytes();
        bytes.extend_from_slice(&signature[..MAC_BYTES]);
        Some(base32().encode(&bytes).to_ascii_lowercase())
    }

    /// What a local part stands for, if this server signed it; any case.
    pub fn read(&self, local_part: &str) -> Option<ReplyTo> {
        let bytes = base32()
            .decode(local_part.trim().to_ascii_uppercase().as_bytes())
            .ok()?;
        if bytes.len() != BYTES {
            return None;
        }
        let (body, signature) = bytes.split_at(BYTES - MAC_BYTES);
        self.keys.iter().find(|key| {
            Self::mac(key, body)
                .verify_truncated_left(signature)
                .is_ok()
        })?;
        let game = uuid::Uuid::from_slice(&body[..16]).ok()?;
        let ply = u32::from_be_bytes(body[16..20].try_into().ok()?);
        let generation = i32::from_be_bytes(body[20..24].try_into().ok()?);
        Some(ReplyTo {
            game_id: game.hyphenated().to_string(),
            black: ply & 1 == 1,
            ply: ply >> 1,
            generation,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use secrecy::SecretString;

    fn secret(text: &str) -> SecretString {
        SecretString::from(text.to_owned())
    }

    fn addresses(text: &str) -> ReplyAddresses {
        ReplyAddresses::new(&Secrets::one(secret(text)))
    }

    fn reply() -> ReplyTo {
        ReplyTo {
            game_id: "01a22092-1868-7465-b5fa-43bd71be1c4f".into(),
            black: true,
            ply: 13,
            generation: 4,
        }
    }

    #[test]
    fn a_local_part_reads_back_in_any_case_and_fits_an_address() {
        let signer = addresses("a secret of thirty-two bytes or more!!");
        let local = signer.local_part(&reply()).unwrap();
        assert!(local.len() <= 64, "{local}");
        assert!(
            local
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
        );
        assert_eq!(signer.read(&local), Some(reply()));
        assert_eq!(signer.read(&local.to_ascii_uppercase()), Some(reply()));
    }

    #[test]
    fn another_secret_or_a_changed_character_reads_nothing() {
        let signer = addresses("a secret of thirty-two bytes or more!!");
        let local = signer.local_part(&reply()).unwrap();
        assert_eq!(
            addresses("another secret of thirty-two bytes!!").read(&local),
            None
        );
        let mut changed = local.into_bytes();
        changed[5] = if changed[5] == b'a' { b'b' } else { b'a' };
        assert_eq!(signer.read(&String::from_utf8(changed).unwrap()), None);
        assert_eq!(signer.read("postmaster"), None);
        assert_eq!(signer.read(""), None);
    }

    #[test]
    fn an_address_mailed_before_a_rotation_reads_until_its_secret_is_dropped() {
        let (old, new) = (
            "a secret of thirty-two bytes or more!!",
            "a newer secret of thirty-two bytes!!",
        );
        let mailed = addresses(old).local_part(&reply()).unwrap();
        let rotated = ReplyAddresses::new(&Secrets::new(secret(new), [secret(old)]));
        assert_eq!(rotated.read(&mailed), Some(reply()));
        let fresh = rotated.local_part(&reply()).unwrap();
        assert_eq!(addresses(new).read(&fresh), Some(reply()));
        assert_eq!(addresses(new).read(&mailed), None);
    }
}
