//! Child processes with a deadline. Every process a test starts (a JVM,
//! `heapsampler`, `jfr`, `go`, `chromium`) runs in a process group of its own
//! under a watchdog: once its deadline passes, the whole group is killed (a
//! `heapsampler record` and the JVM it started go together) and the test
//! fails with what the process printed. A hang costs a test minutes, never
//! CI's 90.
//!
//! The deadlines are far above what the work takes on a loaded 2-core
//! machine: they are there to end hangs, not to time anything.

use std::io::Read;
use std::ops::{Deref, DerefMut};
use std::process::{Child, Command, Output, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::Duration;

use std::os::unix::process::CommandExt as _;

/// The deadline of a command run with [`Deadline::output_in_time`]: the
/// longest of the suite's commands (a JVM recording for some seconds, then
/// the JDK's parser over its file) takes under a minute on a loaded machine.
pub const DEADLINE: Duration = Duration::from_secs(300);

/// A command's run under a deadline.
pub trait Deadline {
    /// Runs the command to its end and returns what it printed and its
    /// status, as [`Command::output`] does, within [`DEADLINE`].
    fn output_in_time(&mut self) -> Output {
        self.output_within(DEADLINE)
    }

    /// As [`output_in_time`](Self::output_in_time), within `limit`. Panics
    /// when the command cannot start, or is still running at `limit` (it is
    /// killed then, and the panic shows what it printed).
    fn output_within(&mut self, limit: Duration) -> Output;

    /// Starts the command, to be killed with its process group at `limit`
    /// or when the returned [`Watched`] is dropped, whichever comes first.
    fn spawn_within(&mut self, limit: Duration) -> Watched;
}

impl Deadline for Command {
    fn output_within(&mut self, limit: Duration) -> Output {
        // Standard input closed, as `Command::output` leaves it.
        self.stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        self.spawn_within(limit).wait_with_output()
    }

    fn spawn_within(&mut self, limit: Duration) -> Watched {
        self.process_group(0);
        let child = self
            .spawn()
            .unwrap_or_else(|e| panic!("cannot run {self:?}: {e}"));
        let (cancel, cancelled) = mpsc::channel::<()>();
        let killed = Arc::new(AtomicBool::new(false));
        let group = child.id();
        let description = format!("{self:?}");
        let watchdog_description = description.clone();
        let watchdog_killed = Arc::clone(&killed);
        std::thread::spawn(move || {
            // Nothing is ever sent: the sender's drop (the child reaped or
            // abandoned) ends the wait early.
            if cancelled.recv_timeout(limit) == Err(mpsc::RecvTimeoutError::Timeout) {
                watchdog_killed.store(true, Ordering::SeqCst);
                eprintln!("{watchdog_description} still running after {limit:?}: killing it");
                kill_group(group);
            }
        });
        Watched {
            child,
            description,
            limit,
            killed,
            _cancel: cancel,
        }
    }
}

/// Kills process group `group` (the group a watched command leads).
fn kill_group(group: u32) {
    let _ = Command::new("kill")
        .args(["-KILL", "--", &format!("-{group}")])
        .stderr(Stdio::null())
        .status();
}

/// A child process under a watchdog: killed with its process group at its
/// deadline, or when this is dropped while it still runs (a test that fails
/// half-way leaves no JVM behind). Derefs to the [`Child`].
pub struct Watched {
    child: Child,
    /// The command, for messages.
    description: String,
    limit: Duration,
    killed: Arc<AtomicBool>,
    // Dropped with this: stops the watchdog.
    _cancel: mpsc::Sender<()>,
}

impl Watched {
    /// Whether the watchdog killed it at its deadline.
    pub fn was_killed(&self) -> bool {
        self.killed.load(Ordering::SeqCst)
    }

    /// Reads what the child prints to its end and waits for it, as
    /// [`Child::wait_with_output`]; panics if it was killed at its deadline,
    /// with what it printed.
    pub fn wait_with_output(mut self) -> Output {
        fn read_all(pipe: Option<impl Read + Send + 'static>) -> JoinHandle<Vec<u8>> {
            std::thread::spawn(move || {
                let mut bytes = Vec::new();
                if let Some(mut pipe) = pipe {
                    let _ = pipe.read_to_end(&mut bytes);
                }
                bytes
            })
        }
        let stdout = read_all(self.stdout.take());
        let stderr = read_all(self.stderr.take());
        let status = self
            .wait()
            .unwrap_or_else(|e| panic!("cannot wait for {}: {e}", self.description));
        let output = Output {
            status,
            stdout: stdout.join().expect("the reader does not panic"),
            stderr: stderr.join().expect("the reader does not panic"),
        };
        if self.was_killed() {
            panic!(
                "{} was still running after {:?}: killed.\n\
                 It printed on stderr:\n{}\nand on stdout:\n{}",
                self.description,
                self.limit,
                String::from_utf8_lossy(&output.stderr),
                String::from_utf8_lossy(&output.stdout),
            );
        }
        output
    }
}

impl Deref for Watched {
    type Target = Child;
    fn deref(&self) -> &Child {
        &self.child
    }
}

impl DerefMut for Watched {
    fn deref_mut(&mut self) -> &mut Child {
        &mut self.child
    }
}

impl Drop for Watched {
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            kill_group(self.child.id());
            let _ = self.child.wait();
        }
    }
}
