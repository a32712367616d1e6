//! Link passwords at rest: Argon2id hashes in the PHC string format, never the plain text.

use argon2::password_hash::SaltString;
use argon2::{Algorithm, Argon2, Params, PasswordHash, PasswordHasher, PasswordVerifier, Version};
use rand::RngCore;

use linkdeck_domain::{Error, Result};

/// OWASP's recommended Argon2id cost (19 MiB, 2 passes, 1 lane): tens of milliseconds per hash,
/// which is why hashing runs on the blocking pool.
fn hasher() -> Argon2<'static> {
    let params = Params::new(19 * 1024, 2, 1, None).expect("constant Argon2 parameters are valid");
    Argon2::new(Algorithm::Argon2id, Version::V0x13, params)
}

/// Hashes `password` with a fresh random salt. Blocking: call it off the async threads.
pub fn hash_password(password: &str) -> Result<String> {
    let mut salt = [0u8; 16];
    rand::rng().fill_bytes(&mut salt);
    let salt = SaltString::encode_b64(&salt)
        .map_err(|e| Error::Unavailable(format!("cannot hash the password: {e}")))?;
    hasher()
        .hash_password(password.as_bytes(), &salt)
        .map(|h| h.to_string())
        .map_err(|e| Error::Unavailable(format!("cannot hash the password: {e}")))
}

/// Whether `password` matches a hash made by [`hash_password`]. Blocking, like hashing; the
/// comparison inside is constant-time.
pub fn verify_password(hash: &str, password: &str) -> bool {
    PasswordHash::new(hash).is_ok_and(|parsed| {
        hasher()
            .verify_password(password.as_bytes(), &parsed)
            .is_ok()
    })
}

/// [`hash_password`] on the blocking pool.
pub async fn hash_password_async(password: String) -> Result<String> {
    tokio::task::spawn_blocking(move || hash_password(&password))
        .await
        .map_err(|e| Error::Unavailable(format!("password hashing failed: {e}")))?
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hash_verifies_only_its_password() {
        let hash = hash_password("s3cret pass").unwrap();
        assert!(hash.starts_with("$argon2id$"));
        assert!(!hash.contains("s3cret"));
        assert!(verify_password(&hash, "s3cret pass"));
        assert!(!verify_password(&hash, "s3cret pasS"));
        assert!(!verify_password("not a hash", "s3cret pass"));
    }

    #[test]
    fn the_same_password_hashes_differently_each_time() {
        assert_ne!(hash_password("x").unwrap(), hash_password("x").unwrap());
    }
}
