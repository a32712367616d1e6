//! Who may try a link's password, and how many checks run at once.
//!
//! Each check is an Argon2 verification: ~19 MiB of memory and tens of milliseconds of a core,
//! on purpose. Four bounds keep a flood of guesses from taking the server with it, or the link
//! from its visitors:
//! - per visitor and link (a visitor is an IPv4 address or an IPv6 /64, the block one
//!   subscriber gets), every attempt counts;
//! - per link, from all visitors together, wrong guesses count (a right one costs nothing), so
//!   many addresses cannot share out a brute force;
//! - once a link's wrong guesses are spent for the minute (the link is shut), a newcomer may
//!   still try, out of a second, smaller allowance per link (a tenth of the first, wrong guesses
//!   only). A newcomer is a visitor that, within the hour, has neither guessed wrong on the link
//!   nor been turned away from it three times while it was shut: a flood's addresses are one or
//!   the other within seconds, while the one who was sent the password, who tries once or
//!   twice, is neither, and gets in. A brute force gains a tenth at most; only a flood that
//!   brings that many addresses new to the link every minute keeps everyone out;
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

/// How long a visitor's strikes on a link are kept after its last one.
const REMEMBERED: Duration = Duration::from_secs(3600);
/// Visitors remembered for their strikes at most (the oldest are forgotten first, which gives
/// them back no more than the newcomers' allowance, itself bounded per link).
const REMEMBERED_MAX: usize = 100_000;
/// Strikes that make a visitor no newcomer: a wrong guess is all of them, being turned away
/// while the link is shut one.
const STRIKES: u32 = 3;
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

/// Which allowance of the link an attempt was let in under.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Admitted {
    /// The link's wrong guesses for the minute.
    Within,
    /// The newcomers', once the link is shut.
    Newcomer,
}

/// A visitor's strikes on a link, and when the last came.
type Strikes = (Instant, u32);

pub struct PasswordGate {
    per_visitor: RateLimiter<(IpAddr, Id)>,
    per_link: RateLimiter<Id>,
    newcomers: RateLimiter<Id>,
    strikes: Mutex<LruCache<(IpAddr, Id), Strikes>>,
    slots: Slots,
}

impl PasswordGate {
    /// `per_visitor` attempts and `per_link` wrong guesses a minute (0 = no limit), `checks`
    /// verifications at once (0 = half the cores, at least one).
    pub fn new(per_visitor: u32, per_link: u32, checks: usize) -> PasswordGate {
        PasswordGate::windowed(per_visitor, per_link, checks, Duration::from_secs(60))
    }

    fn windowed(per_visitor: u32, per_link: u32, checks: usize, window: Duration) -> Self {
        let newcomers = if per_link == 0 {
            0
        } else {
            (per_link / NEWCOMERS_SHARE).max(1)
        };
        PasswordGate {
            per_visitor: RateLimiter::new(per_visitor, window),
            per_link: RateLimiter::new(per_link, window),
            newcomers: RateLimiter::new(newcomers, window),
            strikes: Mutex::new(LruCache::new(
                NonZeroUsize::new(REMEMBERED_MAX).expect("not zero"),
            )),
            slots: Slots::new(checks),
        }
    }

    fn strikes(&self) -> std::sync::MutexGuard<'_, LruCache<(IpAddr, Id), Strikes>> {
        self.strikes.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Whether `visitor` is new to `link`: fewer than [`STRIKES`] within the hour.
    fn newcomer(&self, visitor: IpAddr, link: Id) -> bool {
        self.strikes()
            .peek(&(visitor, link))
            .is_none_or(|(at, n)| at.elapsed() >= REMEMBERED || *n < STRIKES)
    }

    fn strike(&self, visitor: IpAddr, link: Id, n: u32) {
        let mut strikes = self.strikes();
        let now = Instant::now();
        let kept = strikes
            .get(&(visitor, link))
            .filter(|(at, _)| at.elapsed() < REMEMBERED)
            .map_or(0, |(_, kept)| *kept);
        strikes.put((visitor, link), (now, kept.saturating_add(n)));
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
        if self.newcomer(visitor, link) && self.newcomers.peek(&link).allowed {
            return Ok(Admitted::Newcomer);
        }
        self.strike(visitor, link, 1);
        Err(Refused::TooMany {
            retry_after: everyone.retry_after,
        })
    }

    /// Whether `given` is the password of `link` (hashed as `hash`), once a slot is free.
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
            self.guessed_wrong(visitor, link, admitted);
        }
        Ok(right)
    }

    /// A wrong guess counts against the allowance it was let in under, and strikes its visitor
    /// out of the newcomers.
    fn guessed_wrong(&self, visitor: IpAddr, link: Id, admitted: Admitted) {
        match admitted {
            Admitted::Within => self.per_link.hit(&link),
            Admitted::Newcomer => self.newcomers.hit(&link),
        };
        self.strike(network(visitor), link, STRIKES);
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
    fn once_a_link_is_shut_only_newcomers_may_try_out_of_their_own_allowance() {
        let window = Duration::from_millis(200);
        let gate = PasswordGate::windowed(100, 20, 1, window);
        let at = |n: u8| IpAddr::from([192, 0, 2, n]);
        let wrong = |n: u8| {
            let admitted = gate.admit(at(n), 1).expect("let in");
            gate.guessed_wrong(at(n), 1, admitted);
            admitted
        };
        for n in 1..=20 {
            assert_eq!(wrong(n), Admitted::Within);
        }
        // Shut: a visitor that guessed wrong is turned away; a newcomer is let in, twice (a
        // tenth of twenty), and then none.
        assert!(gate.admit(at(1), 1).is_err());
        assert_eq!(wrong(30), Admitted::Newcomer);
        assert_eq!(wrong(31), Admitted::Newcomer);
        assert!(
            gate.admit(at(40), 1).is_err(),
            "the newcomers' allowance is spent"
        );
        // One flood address is turned away three times, another once.
        for _ in 0..3 {
            assert!(gate.admit(at(50), 1).is_err());
        }
        assert!(gate.admit(at(51), 1).is_err());
        // Another link is open.
        assert_eq!(gate.admit(at(1), 2), Ok(Admitted::Within));

        std::thread::sleep(window);
        for n in 1..=20 {
            assert_eq!(wrong(n), Admitted::Within);
        }
        // Shut again, with a fresh allowance for newcomers: the visitors that guessed wrong or
        // were turned away three times are still no newcomers; the others are.
        assert!(gate.admit(at(31), 1).is_err());
        assert!(gate.admit(at(50), 1).is_err());
        assert_eq!(gate.admit(at(51), 1), Ok(Admitted::Newcomer));
        assert_eq!(gate.admit(at(40), 1), Ok(Admitted::Newcomer));
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
