//! The thread the click writer's batches run on, below the request threads in the kernel's
//! eyes.
//!
//! A batch over many links is a long stretch of CPU. On the blocking pool it competes as an
//! equal with the threads answering redirects, and on a busy machine with few cores a request
//! thread waiting for its turn holds back every connection queued on it. On its own thread
//! with a lower priority (nice 10; on Linux nice is per thread) the batch takes the time the
//! request threads leave, and more redirects are answered a second (`docs/PERFORMANCE.md`). A
//! niced thread is never starved outright, so the batches keep up; on a saturated machine a
//! batch takes longer and the next gathers more visits, which costs memory for a while and
//! never a click.
//!
//! The thread starts with the first batch (a command that never counts clicks never has it)
//! and ends when the last handle of the database is dropped.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::mpsc;

/// How much lower than the request threads: nice 10 weighs about a ninth of nice 0.
#[cfg(target_os = "linux")]
const NICE: libc::c_int = 10;

type Job = Box<dyn FnOnce() + Send>;

const STOPPED: &str = "the click writer's thread has stopped";

/// One thread running jobs in the order given.
pub(crate) struct Background {
    jobs: mpsc::Sender<Job>,
}

impl Background {
    /// Starts the thread, named `name`; `None` if the system refused one.
    pub(crate) fn start(name: &str) -> Option<Background> {
        let (tx, rx) = mpsc::channel::<Job>();
        let spawned = std::thread::Builder::new()
            .name(name.to_owned())
            .spawn(move || {
                lower_priority();
                for job in rx {
                    job();
                }
            });
        match spawned {
            Ok(_) => Some(Background { jobs: tx }),
            Err(e) => {
                tracing::warn!(error = %e, "could not start the click writer's thread");
                None
            }
        }
    }

    /// Runs `f` on the thread and waits for it without blocking the caller's. `Err` says why
    /// it did not finish: it panicked, or the thread is gone.
    pub(crate) async fn run<T: Send + 'static>(
        &self,
        f: impl FnOnce() -> T + Send + 'static,
    ) -> Result<T, String> {
        let (tx, rx) = tokio::sync::oneshot::channel();
        let job: Job = Box::new(move || {
            let _ = tx.send(catch_unwind(AssertUnwindSafe(f)));
        });
        self.jobs.send(job).map_err(|_| STOPPED.to_owned())?;
        match rx.await {
            Ok(Ok(out)) => Ok(out),
            Ok(Err(panic)) => Err(panic
                .downcast_ref::<&str>()
                .map(|s| (*s).to_owned())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "it panicked".to_owned())),
            Err(_) => Err(STOPPED.to_owned()),
        }
    }
}

/// Lowers the calling thread's priority; on Linux nice is per thread. Failing leaves it as it
/// was, which is only slower.
#[cfg(target_os = "linux")]
fn lower_priority() {
    // SAFETY: plain system calls on the calling thread's own id.
    let done = unsafe {
        let tid = libc::gettid();
        libc::setpriority(libc::PRIO_PROCESS, tid as libc::id_t, NICE)
    };
    if done != 0 {
        tracing::debug!(
            error = %std::io::Error::last_os_error(),
            "the click writer's thread keeps its priority"
        );
    }
}

#[cfg(not(target_os = "linux"))]
fn lower_priority() {}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_job_answers_and_a_panic_is_an_error_not_the_end_of_the_thread() {
        let thread = Background::start("test-background").unwrap();
        assert_eq!(thread.run(|| 1 + 1).await, Ok(2));
        let failed = thread.run(|| -> u8 { panic!("the batch broke") }).await;
        assert_eq!(failed, Err("the batch broke".to_owned()));
        let name = thread
            .run(|| std::thread::current().name().map(str::to_owned))
            .await;
        assert_eq!(name, Ok(Some("test-background".to_owned())));
    }

    #[cfg(target_os = "linux")]
    #[tokio::test]
    async fn the_thread_runs_below_the_callers_priority() {
        let thread = Background::start("test-nice").unwrap();
        // SAFETY: reads the calling thread's own nice value.
        let nice =
            || unsafe { libc::getpriority(libc::PRIO_PROCESS, libc::gettid() as libc::id_t) };
        let mine = nice();
        let theirs = thread.run(nice).await.unwrap();
        assert_eq!(theirs, (mine + NICE).min(19));
    }
}
