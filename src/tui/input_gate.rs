//! The pause of the app's input reader while another program (an editor) reads the terminal.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// Lets another program have the terminal's input for a while (an editor): while it is held,
/// the reader thread reads nothing, so no key meant for that program reaches the app.
#[derive(Debug, Default)]
pub struct InputGate {
    held: AtomicBool,
    /// The reader has seen the gate held and stopped reading.
    idle: AtomicBool,
}

impl InputGate {
    /// Stops the reader, and returns once it has stopped (it finishes a read under way first,
    /// which is short), or after half a second whatever it does.
    pub fn hold(&self) {
        self.held.store(true, Ordering::Release);
        let deadline = std::time::Instant::now() + Duration::from_millis(500);
        while !self.idle.load(Ordering::Acquire) && std::time::Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// The reader's side: whether it must not read now. Its answer is also what [`hold`]
    /// waits for, so a held gate's reader is known to have stopped once it has asked.
    ///
    /// [`hold`]: InputGate::hold
    pub fn reader_must_wait(&self) -> bool {
        let held = self.held.load(Ordering::Acquire);
        self.idle.store(held, Ordering::Release);
        held
    }

    pub fn release(&self) {
        self.held.store(false, Ordering::Release);
    }
}
