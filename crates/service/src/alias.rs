//! Generated aliases: short, lower-case, random, never reserved.

use rand::Rng;

use linkdeck_domain::{Error, Result, is_reserved_alias};

const ALPHABET: &[u8] = b"0123456789abcdefghijklmnopqrstuvwxyz";
/// Length of a generated alias.
pub const GENERATED_LEN: usize = 5;
/// Collisions after which generation moves to one more character.
pub const COLLISIONS_BEFORE_LONGER: u32 = 10;
/// 36⁶ is two billion: running out means something else is wrong.
const MAX_ATTEMPTS: u32 = 1000;

fn random_alias(len: usize) -> String {
    let mut rng = rand::rng();
    (0..len)
        .map(|_| char::from(ALPHABET[rng.random_range(0..ALPHABET.len())]))
        .collect()
}

/// Candidate aliases, for a store that asks whether each is taken in its own way (a closure
/// for SQLite, an await for PostgreSQL): 5 characters of `[0-9a-z]`, 6 once 10 candidates
/// have collided, never a reserved word.
#[derive(Debug, Default)]
pub struct Candidates {
    collisions: u32,
    attempts: u32,
}

impl Candidates {
    /// The next alias to try, or an error once too many were taken.
    pub fn next_alias(&mut self) -> Result<String> {
        loop {
            if self.attempts >= MAX_ATTEMPTS {
                return Err(Error::Unavailable(
                    "could not find a free alias; choose one".into(),
                ));
            }
            self.attempts += 1;
            let len = if self.collisions < COLLISIONS_BEFORE_LONGER {
                GENERATED_LEN
            } else {
                GENERATED_LEN + 1
            };
            let alias = random_alias(len);
            if is_reserved_alias(&alias) {
                self.collisions += 1;
                continue;
            }
            return Ok(alias);
        }
    }

    /// The last alias given was taken.
    pub fn taken(&mut self) {
        self.collisions += 1;
    }
}

/// A random alias for which `taken` answers false (see [`Candidates`]).
pub fn generate_alias(mut taken: impl FnMut(&str) -> Result<bool>) -> Result<String> {
    let mut candidates = Candidates::default();
    loop {
        let alias = candidates.next_alias()?;
        if !taken(&alias)? {
            return Ok(alias);
        }
        candidates.taken();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_aliases_are_five_lowercase_alphanumerics() {
        for _ in 0..200 {
            let alias = generate_alias(|_| Ok(false)).unwrap();
            assert_eq!(alias.len(), 5);
            assert!(alias.bytes().all(|b| ALPHABET.contains(&b)), "{alias}");
        }
    }

    #[test]
    fn ten_collisions_make_the_alias_longer() {
        let mut calls = 0;
        let alias = generate_alias(|_| {
            calls += 1;
            Ok(calls <= 10)
        })
        .unwrap();
        assert_eq!(alias.len(), 6);
    }

    #[test]
    fn endless_collisions_end_in_an_error() {
        assert!(generate_alias(|_| Ok(true)).is_err());
    }
}
