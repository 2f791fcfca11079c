//! The text of a personal access token (`docs/tokens.md`): `kyr_pat_`, 30 random base62
//! characters (about 178 bits) and a checksum of them, 6 base62 characters of their CRC32 — the
//! shape of GitHub's `ghp_` tokens. The prefix lets secret scanners find a leaked token and tells
//! the server which kind of token it was sent; the checksum lets both refuse a mistyped or made-up
//! token without asking anyone (the server without a query). Only the token's SHA-256 is stored:
//! with this much randomness a fast hash is enough, since nothing can be guessed from it.

use rand::Rng;
use sha2::{Digest, Sha256};

pub const PREFIX: &str = "kyr_pat_";
const RANDOM_CHARS: usize = 30;
/// 62^6 is above 2^32: every CRC32 fits, written with leading zeros.
const CHECKSUM_CHARS: usize = 6;
/// The whole token's length.
pub const LENGTH: usize = PREFIX.len() + RANDOM_CHARS + CHECKSUM_CHARS;

const BASE62: &[u8; 62] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/// A new token, from the thread's cryptographically secure generator.
pub fn generate() -> String {
    let random: String = rand::rng()
        .sample_iter(rand::distr::Alphanumeric)
        .take(RANDOM_CHARS)
        .map(char::from)
        .collect();
    let checksum = checksum(&random);
    format!("{PREFIX}{random}{checksum}")
}

/// Whether a bearer token is meant as a personal access token (it may still be a bad one).
pub fn is_personal(token: &str) -> bool {
    token.starts_with(PREFIX)
}

/// Whether a token has the length, the characters and the checksum of one this server makes.
pub fn well_formed(token: &str) -> bool {
    let Some(rest) = token.strip_prefix(PREFIX) else {
        return false;
    };
    if rest.len() != RANDOM_CHARS + CHECKSUM_CHARS || !rest.bytes().all(|b| BASE62.contains(&b)) {
        return false;
    }
    let (random, sum) = rest.split_at(RANDOM_CHARS);
    checksum(random) == sum
}

/// What is stored of a token: its SHA-256, in hex.
pub fn hash(token: &str) -> String {
    hex::encode(Sha256::digest(token.as_bytes()))
}

fn checksum(random: &str) -> String {
    let mut value = crc32fast::hash(random.as_bytes());
    let mut digits = [BASE62[0]; CHECKSUM_CHARS];
    for digit in digits.iter_mut().rev() {
        *digit = BASE62[(value % 62) as usize];
        value /= 62;
    }
    String::from_utf8_lossy(&digits).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn new_tokens_are_well_formed_and_differ() {
        let a = generate();
        let b = generate();
        assert_ne!(a, b);
        for token in [&a, &b] {
            assert_eq!(token.len(), LENGTH);
            assert!(is_personal(token));
            assert!(well_formed(token), "{token}");
        }
    }

    #[test]
    fn the_checksum_catches_a_changed_character() {
        let token = generate();
        let bytes = token.as_bytes();
        for at in PREFIX.len()..token.len() {
            let mut changed = bytes.to_vec();
            changed[at] = if bytes[at] == b'a' { b'b' } else { b'a' };
            let changed = String::from_utf8(changed).unwrap();
            assert!(!well_formed(&changed), "{changed}");
        }
        assert!(!well_formed(&token[..token.len() - 1]));
        assert!(!well_formed(&format!("{token}0")));
        assert!(!well_formed(&token.replace(PREFIX, "kyr_pax_")));
    }

    #[test]
    fn the_checksum_is_the_crc32_in_six_base62_digits() {
        // CRC32("123456789") is the classic check value 0xCBF43926 = 3421780262, which is
        // 3 × 62^5 + 45 × 62^4 + 35 × 62^3 + 27 × 62^2 + 22 × 62 + 14.
        assert_eq!(checksum("123456789"), "3jZRME");
        // CRC32 of nothing is 0: the leading zeros are kept.
        assert_eq!(checksum(""), "000000");
    }

    #[test]
    fn only_the_hash_is_kept() {
        let token = generate();
        let hash = hash(&token);
        assert_eq!(hash.len(), 64);
        assert!(!hash.contains(&token[PREFIX.len()..]));
    }
}
