//! Fixed-window rate limits kept in memory: one per API key (and per address for requests
//! without a valid key), and those of password attempts (see `passwords`).

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Entries kept before expired windows are swept.
const SWEEP_AT: usize = 10_000;

/// The outcome of one counted request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Decision {
    pub allowed: bool,
    pub limit: u32,
    pub remaining: u32,
    /// Seconds until the window opens again (at least 1).
    pub retry_after: u64,
}

pub struct RateLimiter<K> {
    limit: u32,
    window: Duration,
    windows: Mutex<HashMap<K, (Instant, u32)>>,
}

impl<K: Hash + Eq + Clone> RateLimiter<K> {
    /// `limit` requests per `window`; 0 means no limit.
    pub fn new(limit: u32, window: Duration) -> Self {
        RateLimiter {
            limit,
            window,
            windows: Mutex::new(HashMap::new()),
        }
    }

    pub fn per_minute(limit: u32) -> Self {
        Self::new(limit, Duration::from_secs(60))
    }

    /// Counts one request for `key`.
    pub fn hit(&self, key: &K) -> Decision {
        self.decide(key, 1)
    }

    /// Whether a request for `key` would be allowed, without counting it.
    pub fn peek(&self, key: &K) -> Decision {
        self.decide(key, 0)
    }

    fn decide(&self, key: &K, count: u32) -> Decision {
        if self.limit == 0 {
            return Decision {
                allowed: true,
                limit: 0,
                remaining: 0,
                retry_after: 0,
            };
        }
        let now = Instant::now();
        let mut windows = self.windows.lock().unwrap_or_else(|e| e.into_inner());
        if windows.len() >= SWEEP_AT {
            windows.retain(|_, (start, _)| now.duration_since(*start) < self.window);
        }
        if count == 0 && !windows.contains_key(key) {
            // A peek leaves no trace: only counted requests take memory.
            return Decision {
                allowed: true,
                limit: self.limit,
                remaining: self.limit,
                retry_after: self.window.as_secs().max(1),
            };
        }
        let entry = windows.entry(key.clone()).or_insert((now, 0));
        if now.duration_since(entry.0) >= self.window {
            *entry = (now, 0);
        }
        let retry_after = (self.window.saturating_sub(now.duration_since(entry.0)))
            .as_secs_f64()
            .ceil()
            .max(1.0) as u64;
        if entry.1 >= self.limit {
            return Decision {
                allowed: false,
                limit: self.limit,
                remaining: 0,
                retry_after,
            };
        }
        entry.1 += count;
        Decision {
            allowed: true,
            limit: self.limit,
            remaining: self.limit - entry.1,
            retry_after,
        }
    }
}

/// Remembers when each key's use was last written, so `last_used_at` costs one write a minute
/// per key rather than one per request.
#[derive(Default)]
pub struct KeyUse(Mutex<HashMap<i64, Instant>>);

impl KeyUse {
    const EVERY: Duration = Duration::from_secs(60);

    pub fn should_record(&self, key_id: i64) -> bool {
        let now = Instant::now();
        let mut map = self.0.lock().unwrap_or_else(|e| e.into_inner());
        match map.get(&key_id) {
            Some(at) if now.duration_since(*at) < Self::EVERY => false,
            _ => {
                map.insert(key_id, now);
                true
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_down_then_refuses_until_the_window_passes() {
        let limiter = RateLimiter::new(2, Duration::from_secs(60));
        assert_eq!(limiter.hit(&1).remaining, 1);
        assert_eq!(limiter.hit(&1).remaining, 0);
        let refused = limiter.hit(&1);
        assert!(!refused.allowed);
        assert!(refused.retry_after >= 1 && refused.retry_after <= 60);
        assert!(limiter.hit(&2).allowed, "other keys have their own window");
        let zero = RateLimiter::new(1, Duration::ZERO);
        assert!(zero.hit(&1).allowed && zero.hit(&1).allowed);
    }
}
