//! Who may try a link's password, and how many checks run at once.
//!
//! Each check is an Argon2 verification: ~19 MiB of memory and tens of milliseconds of a core,
//! on purpose. Four bounds keep a flood of guesses from taking the server with it, or the link
//! from its visitors:
//! - per visitor and link (a visitor is an IPv4 address or an IPv6 /64, the block one
//!   subscriber gets), every attempt counts;
//! - per link, from all visitors together, wrong guesses count (a right one costs nothing), so
//!   many addresses cannot share out a brute force;
//! - once a link's wrong guesses are spent for the minute, a visitor who has not guessed wrong
//!   on it for an hour may still try, out of a second, smaller allowance per link (a tenth of
//!   the first): the flood's own addresses have all guessed wrong by then, so the one who was
//!   sent the password still gets in, while a brute force gains a tenth at most. Only a flood
//!   that brings that many addresses new to the link every minute keeps everyone out;
//! - across the server, only a few checks run at once (half the cores), and only a few more
//!   may wait for one (`slots`); the rest are told the server is busy. Redirects keep the other
//!   cores, and memory stays at a few checks' worth.

use std::net::IpAddr;
use std::num::NonZeroUsize;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use lru::LruCache;

use super::limit::RateLimiter;
use super::slots::{Declined, Slots};
use super::visitor::network;
use crate::domain::Id;

/// How long a wrong guess keeps a visitor from a link's newcomers' allowance.
const REMEMBERED: Duration = Duration::from_secs(3600);
/// Visitors remembered for their wrong guesses at most (the oldest are forgotten first, which
/// gives them back no more than the newcomers' allowance, itself bounded per link).
const REMEMBERED_MAX: usize = 100_000;
/// The newcomers' allowance per link, as a share of the link's allowance of wrong guesses.
const NEWCOMERS_SHARE: u32 = 10;

/// Why a guess was not checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refused {
    /// A limit on attempts; the window opens again after this many seconds.
    TooMany { retry_after: u64 },
    /// Every check slot is taken and enough guesses wait already.
    Busy,
}

/// Whether an attempt came in past the link's allowance of wrong guesses, from a newcomer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Admitted {
    Within,
    Newcomer,
}

pub struct PasswordGate {
    per_visitor: RateLimiter<(IpAddr, Id)>,
    per_link: RateLimiter<Id>,
    newcomers: RateLimiter<Id>,
    /// When each visitor last guessed wrong on each link.
    wrong: Mutex<LruCache<(IpAddr, Id), Instant>>,
    slots: Slots,
}

impl PasswordGate {
    /// `per_visitor` attempts and `per_link` wrong guesses a minute (0 = no limit), `checks`
    /// verifications at once (0 = half the cores, at least one).
    pub fn new(per_visitor: u32, per_link: u32, checks: usize) -> PasswordGate {
        PasswordGate {
            per_visitor: RateLimiter::per_minute(per_visitor),
            per_link: RateLimiter::per_minute(per_link),
            newcomers: RateLimiter::per_minute(if per_link == 0 {
                0
            } else {
                (per_link / NEWCOMERS_SHARE).max(1)
            }),
            wrong: Mutex::new(LruCache::new(
                NonZeroUsize::new(REMEMBERED_MAX).expect("not zero"),
            )),
            slots: Slots::new(checks),
        }
    }

    fn wrong(&self) -> std::sync::MutexGuard<'_, LruCache<(IpAddr, Id), Instant>> {
        self.wrong.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Whether `visitor` guessed wrong on `link` within the last hour.
    fn guessed_wrong(&self, visitor: IpAddr, link: Id) -> bool {
        self.wrong()
            .peek(&(visitor, link))
            .is_some_and(|at| at.elapsed() < REMEMBERED)
    }

    /// Counts an attempt by `visitor` on `link`; refuses it when a limit is reached.
    pub fn admit(&self, visitor: IpAddr, link: Id) -> Result<Admitted, Refused> {
        let visitor = network(visitor);
        let mine = self.per_visitor.hit(&(visitor, link));
        if !mine.allowed {
            return Err(Refused::TooMany {
                retry_after: mine.retry_after,
            });
        }
        let everyone = self.per_link.peek(&link);
        if everyone.allowed {
            return Ok(Admitted::Within);
        }
        let refused = Err(Refused::TooMany {
            retry_after: everyone.retry_after,
        });
        if self.guessed_wrong(visitor, link) || !self.newcomers.peek(&link).allowed {
            return refused;
        }
        Ok(Admitted::Newcomer)
    }

    /// Whether `given` is the password of `link` (hashed as `hash`), once a slot is free. A
    /// wrong guess is counted against the allowance it was admitted under, and remembered.
    pub async fn verify(
        &self,
        visitor: IpAddr,
        link: Id,
        admitted: Admitted,
        hash: String,
        given: String,
    ) -> Result<bool, Refused> {
        // Argon2 is slow on purpose: off the async threads.
        let right = match self
            .slots
            .run(move || crate::backend::local::serving::verify_password(&hash, &given))
            .await
        {
            Ok(right) => right,
            Err(Declined::Busy) => return Err(Refused::Busy),
            Err(Declined::Failed) => false,
        };
        if !right {
            match admitted {
                Admitted::Within => self.per_link.hit(&link),
                Admitted::Newcomer => self.newcomers.hit(&link),
            };
            self.wrong().put((network(visitor), link), Instant::now());
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
