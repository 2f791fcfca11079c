//! Provably fair dice.
//!
//! Each game that uses dice gets a secret 32-byte seed when it is created. Its SHA-256 hash, the
//! commitment, is public from the start; the seed itself is revealed when the game ends. Die
//! number `n` of the game (counting from 1 over the whole game) is derived as
//!
//! ```text
//! mac = HMAC-SHA-256(key = seed, message = "kuryr-die:" + n in decimal)
//! die = 1 + (b mod 6), for the first byte b of mac with b < 252
//! ```
//!
//! Skipping the bytes 252–255 keeps every face exactly equally likely (252 = 6 × 42). If all 32
//! bytes were 252 or more (a chance of 1 in 2^192), the message gets a suffix `:1`, `:2`, … until
//! one byte fits. Nothing a player sends goes into a roll, so no request, retried or not, can
//! change one; and a roll is only computed when the game needs it. `docs/fair-dice.md` shows how
//! to check a finished game.

use hmac::{Hmac, Mac};
use rand::RngCore;
use sha2::{Digest, Sha256};

/// A game's secret seed.
#[derive(Clone, PartialEq, Eq)]
pub struct Seed([u8; 32]);

impl std::fmt::Debug for Seed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Seed(…)")
    }
}

impl Seed {
    /// A new seed from the operating system's random source.
    pub fn generate() -> Seed {
        let mut bytes = [0u8; 32];
        rand::rng().fill_bytes(&mut bytes);
        Seed(bytes)
    }

    pub fn from_hex(text: &str) -> Option<Seed> {
        let bytes = hex::decode(text).ok()?;
        Some(Seed(bytes.try_into().ok()?))
    }

    pub fn to_hex(&self) -> String {
        hex::encode(self.0)
    }

    /// The public commitment: the SHA-256 of the seed's 32 bytes, in hex.
    pub fn commitment(&self) -> String {
        hex::encode(Sha256::digest(self.0))
    }

    /// Die number `n` (from 1) of the game.
    pub fn die(&self, n: u64) -> u8 {
        for retry in 0u64.. {
            let mut mac =
                Hmac::<Sha256>::new_from_slice(&self.0).expect("HMAC takes any key length");
            mac.update(format!("kuryr-die:{n}").as_bytes());
            if retry > 0 {
                mac.update(format!(":{retry}").as_bytes());
            }
            let bytes = mac.finalize().into_bytes();
            if let Some(b) = bytes.iter().find(|&&b| b < 252) {
                return 1 + b % 6;
            }
        }
        unreachable!("the loop only ends by returning")
    }

    /// `count` dice starting at die number `first`.
    pub fn dice(&self, first: u64, count: usize) -> Vec<u8> {
        (first..first + count as u64).map(|n| self.die(n)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The worked example of `docs/fair-dice.md`.
    const EXAMPLE_SEED: &str = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f";

    #[test]
    fn the_documented_example_holds() {
        let seed = Seed::from_hex(EXAMPLE_SEED).unwrap();
        let doc = include_str!("../docs/fair-dice.md");
        assert!(
            doc.contains(&seed.commitment()),
            "the doc shows the commitment"
        );
        let dice: Vec<String> = seed.dice(1, 10).iter().map(u8::to_string).collect();
        assert!(
            doc.contains(&format!("dice 1–10: {}", dice.join(" "))),
            "the doc shows dice 1–10: {}",
            dice.join(" ")
        );
    }

    #[test]
    fn the_commitment_is_the_sha256_of_the_seed() {
        // SHA-256 of 32 zero bytes, a published test value.
        let zero = Seed([0; 32]);
        assert_eq!(
            zero.commitment(),
            "66687aadf862bd776c8fc18b8e9f8e20089714856ee233b3902a591d0d5f2925"
        );
        assert_eq!(Seed::from_hex(&zero.to_hex()), Some(zero));
        assert_eq!(Seed::from_hex("00"), None);
        assert_eq!(Seed::from_hex("zz"), None);
    }

    #[test]
    fn dice_are_uniform_by_a_chi_square_test() {
        // 60 fixed seeds × 2000 dice. With 5 degrees of freedom, chi-square above 20.52 has a
        // probability of 0.1 %; the seeds are fixed, so the test is deterministic.
        let mut counts = [0u64; 6];
        for s in 0..60u8 {
            let seed = Seed([s; 32]);
            for die in seed.dice(1, 2000) {
                counts[usize::from(die - 1)] += 1;
            }
        }
        let total: u64 = counts.iter().sum();
        let expected = total as f64 / 6.0;
        let chi_square: f64 = counts
            .iter()
            .map(|&c| (c as f64 - expected).powi(2) / expected)
            .sum();
        assert!(
            chi_square < 20.52,
            "chi-square {chi_square:.2} for counts {counts:?}"
        );
        // Pairs of consecutive dice are independent too: 35 degrees of freedom, 0.1 % at 66.62.
        let mut pairs = [[0u64; 6]; 6];
        for s in 0..60u8 {
            let dice = Seed([s; 32]).dice(1, 2000);
            for pair in dice.chunks_exact(2) {
                pairs[usize::from(pair[0] - 1)][usize::from(pair[1] - 1)] += 1;
            }
        }
        let expected = (60 * 1000) as f64 / 36.0;
        let chi_square: f64 = pairs
            .iter()
            .flatten()
            .map(|&c| (c as f64 - expected).powi(2) / expected)
            .sum();
        assert!(chi_square < 66.62, "pair chi-square {chi_square:.2}");
    }

    #[test]
    fn generated_seeds_differ() {
        assert_ne!(Seed::generate(), Seed::generate());
    }
}
