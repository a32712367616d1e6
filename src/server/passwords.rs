//! Who may try a link's password, and how many checks run at once.
//!
//! Each check is an Argon2 verification: ~19 MiB of memory and tens of milliseconds of a core,
//! on purpose. Three bounds keep a flood of guesses from taking the server with it:
//! - per visitor and link (a visitor is an IPv4 address or an IPv6 /64, the block one
//!   subscriber gets), every attempt counts;
//! - per link, from all visitors together, wrong guesses count (a right one costs nothing), so
//!   many addresses cannot share out a brute force;
//! - across the server, only a few checks run at once (half the cores), and only a few more
//!   may wait for one; the rest are told the server is busy. Redirects keep the other cores, and
//!   memory stays at a few checks' worth.

use std::net::IpAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use tokio::sync::Semaphore;

use super::limit::RateLimiter;
use super::visitor::network;
use crate::domain::Id;

/// Checks that may wait for a free slot, per slot; beyond them a guess is refused at once.
const WAITING_PER_CHECK: usize = 16;
/// How long a guess waits for a slot before it is refused.
const WAIT: Duration = Duration::from_secs(3);

/// Why a guess was not checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refused {
    /// A limit on attempts; the window opens again after this many seconds.
    TooMany { retry_after: u64 },
    /// Every check slot is taken and enough guesses wait already.
    Busy,
}

pub struct PasswordGate {
    per_visitor: RateLimiter<(IpAddr, Id)>,
    per_link: RateLimiter<Id>,
    slots: Arc<Semaphore>,
    waiting: AtomicUsize,
    max_waiting: usize,
}

impl PasswordGate {
    /// `per_visitor` attempts and `per_link` wrong guesses a minute (0 = no limit), `checks`
    /// verifications at once (0 = half the cores, at least one).
    pub fn new(per_visitor: u32, per_link: u32, checks: usize) -> PasswordGate {
        let checks = if checks == 0 {
            std::thread::available_parallelism().map_or(1, |n| (n.get() / 2).max(1))
        } else {
            checks
        };
        PasswordGate {
            per_visitor: RateLimiter::per_minute(per_visitor),
            per_link: RateLimiter::per_minute(per_link),
            slots: Arc::new(Semaphore::new(checks)),
            waiting: AtomicUsize::new(0),
            max_waiting: checks * WAITING_PER_CHECK,
        }
    }

    /// Counts an attempt by `visitor` on `link`; refuses it when a limit is reached.
    pub fn admit(&self, visitor: IpAddr, link: Id) -> Result<(), Refused> {
        let mine = self.per_visitor.hit(&(network(visitor), link));
        if !mine.allowed {
            return Err(Refused::TooMany {
                retry_after: mine.retry_after,
            });
        }
        let everyone = self.per_link.peek(&link);
        if !everyone.allowed {
            return Err(Refused::TooMany {
                retry_after: everyone.retry_after,
            });
        }
        Ok(())
    }

    /// Whether `given` is the password of `link` (hashed as `hash`), once a slot is free.
    pub async fn verify(&self, link: Id, hash: String, given: String) -> Result<bool, Refused> {
        let permit = match self.slots.clone().try_acquire_owned() {
            Ok(permit) => permit,
            Err(_) => {
                if self.waiting.fetch_add(1, Ordering::AcqRel) >= self.max_waiting {
                    self.waiting.fetch_sub(1, Ordering::AcqRel);
                    return Err(Refused::Busy);
                }
                let waited = tokio::time::timeout(WAIT, self.slots.clone().acquire_owned()).await;
                self.waiting.fetch_sub(1, Ordering::AcqRel);
                match waited {
                    Ok(Ok(permit)) => permit,
                    _ => return Err(Refused::Busy),
                }
            }
        };
        // Argon2 is slow on purpose: off the async threads, holding the slot throughout.
        let right = tokio::task::spawn_blocking(move || {
            let right = crate::backend::local::serving::verify_password(&hash, &given);
            drop(permit);
            right
        })
        .await
        .unwrap_or(false);
        if !right {
            self.per_link.hit(&link);
        }
        Ok(right)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_ipv6_visitor_is_its_64_block() {
        let a: IpAddr = "2001:db8:1:2:aaaa::1".parse().unwrap();
        let b: IpAddr = "2001:db8:1:2:ffff:ffff:ffff:ffff".parse().unwrap();
        let c: IpAddr = "2001:db8:1:3::1".parse().unwrap();
        assert_eq!(network(a), network(b));
        assert_ne!(network(a), network(c));
        let v4: IpAddr = "192.0.2.7".parse().unwrap();
        assert_eq!(network(v4), v4);
        let mapped: IpAddr = "::ffff:192.0.2.7".parse().unwrap();
        assert_eq!(network(mapped), v4);
    }

    #[test]
    fn one_64_block_shares_one_allowance() {
        let gate = PasswordGate::new(2, 0, 1);
        let a: IpAddr = "2001:db8::1".parse().unwrap();
        let b: IpAddr = "2001:db8::2".parse().unwrap();
        assert!(gate.admit(a, 1).is_ok());
        assert!(gate.admit(b, 1).is_ok());
        assert!(matches!(gate.admit(a, 1), Err(Refused::TooMany { .. })));
        assert!(gate.admit("2001:db8:0:1::1".parse().unwrap(), 1).is_ok());
    }
}
