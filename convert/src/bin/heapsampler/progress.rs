//! Progress of a long read, on standard error, for a person watching a
//! terminal. Nothing at all is written when standard error is not a
//! terminal (a pipe, a file, a test), nor during the first half second, so
//! short work stays silent.

use std::io::IsTerminal;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// How long work runs before progress is shown.
const QUIET_START: Duration = Duration::from_millis(500);

/// The time between redraws: enough to see movement, little enough to cost
/// nothing. (indicatif's own rate limit lets bursts through.)
const REDRAW_EVERY: Duration = Duration::from_millis(250);

/// Progress through a file of known size (the bytes of it as stored, read
/// so far: for a compressed recording, compressed bytes), or through a
/// stream of unknown length (a pipe).
#[derive(Debug)]
pub struct Progress {
    what: String,
    total: Option<u64>,
    next_draw: Instant,
    enabled: bool,
    bar: Option<ProgressBar>,
}

impl Progress {
    /// Progress of `what` (a file name), out of `total` bytes if known;
    /// silent unless standard error is a terminal and `allowed` (false
    /// when the output itself goes to the terminal, which the progress line
    /// would cut through).
    pub fn new(what: impl Into<String>, total: Option<u64>, allowed: bool) -> Self {
        Self {
            what: what.into(),
            total,
            next_draw: Instant::now() + QUIET_START,
            enabled: allowed && std::io::stderr().is_terminal(),
            bar: None,
        }
    }

    /// Says which stage of a work of several reads this is: `reading
    /// FILE (STAGE)`.
    pub fn set_stage(&mut self, stage: &str) {
        self.what = format!("{} ({stage})", self.what);
    }

    /// `bytes` have been read.
    pub fn update(&mut self, bytes: u64) {
        if !self.enabled {
            return;
        }
        let now = Instant::now();
        if now < self.next_draw {
            return;
        }
        self.next_draw = now + REDRAW_EVERY;
        match &self.bar {
            Some(bar) => bar.set_position(bytes),
            None => self.bar = Some(self.make_bar(bytes)),
        }
    }

    /// The bar, drawn for the first time at `bytes`.
    fn make_bar(&self, bytes: u64) -> ProgressBar {
        let template = match self.total {
            Some(_) => {
                "{msg}: {bytes} of {total_bytes} ({percent}%), {elapsed} [{wide_bar}] eta {eta}"
            }
            None => "{msg}: {bytes} read, {elapsed} {spinner}",
        };
        let style = ProgressStyle::with_template(template)
            .expect("the templates are valid")
            .progress_chars("=> ");
        // Set up unseen, then shown: the first line drawn is complete.
        let bar = ProgressBar::with_draw_target(self.total, ProgressDrawTarget::hidden())
            .with_style(style)
            .with_message(format!("reading {}", self.what))
            .with_position(bytes);
        bar.set_draw_target(ProgressDrawTarget::stderr());
        bar
    }
}

impl Drop for Progress {
    /// The work is done, or failed: the progress line is erased, so what is
    /// printed next (a warning, an error) starts on a clean line.
    fn drop(&mut self) {
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
    }
}
