//! Passwords, hashed with argon2id: the only form in which they are stored.

use argon2::password_hash::{Output, ParamsString, PasswordHash, SaltString, rand_core::OsRng};
use argon2::{Algorithm, Argon2, Block, Params, Version};

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

#[cfg(test)]
mod tests {
    use super::*;

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
}
