//! Work too heavy for the async threads that answer redirects — a password check, drawing a
//! QR code — runs on the blocking pool, a few jobs at once. A few more may wait for a turn, for
//! a few seconds; the rest are turned away at once, so a flood can neither take every core nor
//! queue work without end.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use tokio::sync::Semaphore;

/// Jobs that may wait for a turn, per job running.
const WAITING_PER_SLOT: usize = 16;
/// How long a job waits for its turn before it is turned away.
const WAIT: Duration = Duration::from_secs(3);

/// Why a job did not run to its end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Declined {
    /// Every slot is taken and enough jobs wait already.
    Busy,
    /// The job panicked.
    Failed,
}

pub struct Slots {
    slots: Arc<Semaphore>,
    waiting: AtomicUsize,
    max_waiting: usize,
    wait: Duration,
}

impl Slots {
    /// `at_once` jobs at a time; 0 = half the cores, at least one.
    pub fn new(at_once: usize) -> Slots {
        Slots::with_wait(at_once, WAIT)
    }

    fn with_wait(at_once: usize, wait: Duration) -> Slots {
        let at_once = if at_once == 0 {
            std::thread::available_parallelism().map_or(1, |n| (n.get() / 2).max(1))
        } else {
            at_once
        };
        Slots {
            slots: Arc::new(Semaphore::new(at_once)),
            waiting: AtomicUsize::new(0),
            max_waiting: at_once * WAITING_PER_SLOT,
            wait,
        }
    }

    /// Runs `job` on the blocking pool once a slot is free, holding the slot throughout.
    pub async fn run<T, F>(&self, job: F) -> Result<T, Declined>
    where
        T: Send + 'static,
        F: FnOnce() -> T + Send + 'static,
    {
        let permit = match self.slots.clone().try_acquire_owned() {
            Ok(permit) => permit,
            Err(_) => {
                if self.waiting.fetch_add(1, Ordering::AcqRel) >= self.max_waiting {
                    self.waiting.fetch_sub(1, Ordering::AcqRel);
                    return Err(Declined::Busy);
                }
                let waited =
                    tokio::time::timeout(self.wait, self.slots.clone().acquire_owned()).await;
                self.waiting.fetch_sub(1, Ordering::AcqRel);
                match waited {
                    Ok(Ok(permit)) => permit,
                    _ => return Err(Declined::Busy),
                }
            }
        };
        tokio::task::spawn_blocking(move || {
            let done = job();
            drop(permit);
            done
        })
        .await
        .map_err(|_| Declined::Failed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Takes `slots`' only slot with a job that runs until the returned sender is dropped or
    /// sent to; returns once the job runs, with the job's task.
    async fn hold(
        slots: &Arc<Slots>,
    ) -> (
        std::sync::mpsc::Sender<()>,
        tokio::task::JoinHandle<Result<u8, Declined>>,
    ) {
        let (release, held) = std::sync::mpsc::channel::<()>();
        let (started, running) = tokio::sync::oneshot::channel();
        let slots = slots.clone();
        let job = tokio::spawn(async move {
            slots
                .run(move || {
                    let _ = started.send(());
                    held.recv().ok();
                    1
                })
                .await
        });
        running.await.unwrap();
        (release, job)
    }

    #[tokio::test]
    async fn one_runs_a_few_wait_and_the_rest_are_turned_away() {
        let slots = Arc::new(Slots::with_wait(1, Duration::from_secs(30)));
        let (release, first) = hold(&slots).await;
        let waiting: Vec<_> = (0..WAITING_PER_SLOT)
            .map(|n| {
                let slots = slots.clone();
                tokio::spawn(async move { slots.run(move || n + 2).await })
            })
            .collect();
        while slots.waiting.load(Ordering::Acquire) < WAITING_PER_SLOT {
            tokio::task::yield_now().await;
        }
        assert_eq!(slots.run(|| 0).await, Err(Declined::Busy));
        release.send(()).unwrap();
        assert_eq!(first.await.unwrap(), Ok(1));
        for (n, job) in waiting.into_iter().enumerate() {
            assert_eq!(job.await.unwrap(), Ok(n + 2));
        }
        assert_eq!(slots.run(|| 7).await, Ok(7));
    }

    #[tokio::test]
    async fn a_job_that_waits_too_long_is_turned_away() {
        let slots = Arc::new(Slots::with_wait(1, Duration::from_millis(50)));
        let (release, first) = hold(&slots).await;
        assert_eq!(slots.run(|| ()).await, Err(Declined::Busy));
        release.send(()).unwrap();
        assert_eq!(first.await.unwrap(), Ok(1));
    }

    #[tokio::test]
    async fn a_job_that_panics_fails_and_gives_its_slot_back() {
        let slots = Slots::with_wait(1, Duration::from_secs(30));
        assert_eq!(
            slots.run(|| -> u8 { panic!("drawn wrong") }).await,
            Err(Declined::Failed)
        );
        assert_eq!(slots.run(|| 3).await, Ok(3));
    }
}
