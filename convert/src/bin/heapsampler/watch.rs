//! `heapsampler watch PID`: a recording of a running JVM, shown live on
//! the terminal.
//!
//! Where the figures come from. The agent announces the file it writes
//! (`attach::announced`), a complete recording at each flush (a second by
//! default), and its watch writes what the view shows as it goes: at its
//! judgments the sites of the most live bytes with how fast they grew
//! lately (`heapsampler.WatchedSite`), the suspects it raises, and the
//! heap after each collection. So each refresh reads the file
//! ([`Follow`]): the chunks ended since the last refresh once, the last
//! chunk again; nothing is asked of the agent, and a refresh costs at most
//! a chunk (12 MB by default), however long the recording. What is kept
//! between refreshes is bounded: the heap's last
//! [`HEAP_POINTS`](heapsampler_cli::analysis::follow::HEAP_POINTS)
//! figures, the last judgment's sites and the suspects.
//!
//! The refreshes and the keys each run on a thread of their own, so that
//! the view answers while a refresh runs and sees a signal however the
//! terminal fares. The terminal is put back (raw mode off, the alternate
//! screen left) on every way out: an error (the guard's drop), a panic
//! (ratatui's hook), q or Ctrl-C (a key in raw mode), and SIGINT, SIGTERM
//! or SIGHUP from elsewhere or from a closed window (a flag the loop
//! checks): then the recording is stopped as `heapsampler detach PID`
//! stops it.

use std::io::IsTerminal as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, mpsc};
use std::time::{Duration, Instant};

use heapsampler_cli::analysis::follow::{Follow, Followed};
use heapsampler_cli::output::human::{human_bytes, thousands};
use heapsampler_cli::output::text::leaks::{clock, per_minute, per_minute_interval, site_text};
use ratatui::Frame;
use ratatui::crossterm::event::{self, Event, KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Cell, Paragraph, Row, Sparkline, Table, Wrap};

use crate::args::Sampling;
use crate::{Failure, Recording, agent_in, jdk, say};

/// What `watch` was asked.
pub struct Options {
    /// The JVM.
    pub pid: u32,
    /// The recording to write when one is started here.
    pub output: Option<PathBuf>,
    /// The time from one refresh's end to the next's start.
    pub every: Duration,
    /// Leave a recording started here running at the end.
    pub keep_recording: bool,
}

/// The recording watched: started here, or joined.
struct Watched {
    pid: u32,
    file: PathBuf,
    /// Whether an earlier attach, `record` or -agentpath started it.
    joined: bool,
    /// Whether the end leaves it running.
    keep: bool,
}

/// Runs `watch`: attaches (or joins), shows the view until q, Ctrl-C or
/// a signal, then stops the recording (or leaves it running) and says
/// where it is.
pub fn run(options: &Options, sampling: &Sampling, jcmd: Option<&Path>) -> Result<(), Failure> {
    if !std::io::stdout().is_terminal() {
        return Err(Failure::Usage(
            "watch draws a live view and standard output is not a terminal: run it in one \
             (for a file instead: `heapsampler dump PID -o now.jfr`, then \
             `heapsampler leaks now.jfr`)"
                .to_owned(),
        ));
    }
    if sampling.no_live || sampling.watch.no_watch {
        return Err(Failure::Usage(
            "watch shows what the agent's watch finds live and growing: leave liveness and the \
             watch on (without --no-live and --no-watch)"
                .to_owned(),
        ));
    }
    let pid = options.pid;
    let recording = Recording::new(pid, options.output.clone(), None, sampling)?;
    let jcmd = jdk::find_tool("jcmd", jcmd)?;
    let (agent, announced) = agent_in(&jcmd, pid, sampling.agent.as_deref())?;
    let watched = match announced.as_ref().and_then(|a| a.recording.clone()) {
        Some(file) => Watched {
            pid,
            file,
            joined: true,
            keep: true,
        },
        None => {
            recording.start(&jcmd, pid, &agent, announced.as_ref())?;
            Watched {
                pid,
                file: recording.output,
                joined: false,
                keep: options.keep_recording,
            }
        }
    };
    if watched.joined && options.output.is_some() {
        say(format_args!(
            "JVM {pid} records already, to {}: watching that recording (--output is not used)",
            watched.file.display()
        ));
    }
    let shown = show(&watched, options.every);
    let quit = match shown {
        Ok(quit) => quit,
        Err(failure) => {
            // A view that failed leaves no recording of its own behind.
            if !watched.keep && is_running(pid) {
                let _ = crate::detach(pid, false, Some(&agent), Some(&jcmd));
            }
            return Err(failure);
        }
    };
    if let Quit::Signal = quit {
        say("stopping on a signal");
    }
    if !is_running(pid) {
        // The agent finished the recording as the JVM exited.
        say(format_args!(
            "JVM {pid} exited while watched: its recording is finished"
        ));
        match crate::record::report(&watched.file) {
            Ok(report) => report.lines().for_each(say),
            Err(error) => say(format_args!(
                "{} cannot be read: {error}",
                watched.file.display()
            )),
        }
        return Ok(());
    }
    if watched.keep {
        say(format_args!(
            "recording JVM {pid} to {} goes on{}; stop it with `heapsampler detach {pid}`",
            watched.file.display(),
            if watched.joined {
                " (watch joined it, so leaves it as it was)"
            } else {
                ""
            }
        ));
        return Ok(());
    }
    // As `heapsampler detach PID`: stopped, finished, and summarised, with
    // its path.
    crate::detach(pid, false, Some(&agent), Some(&jcmd))
}

/// Whether process `pid` still runs (Linux's /proc, where the agent
/// runs).
fn is_running(pid: u32) -> bool {
    Path::new("/proc").join(pid.to_string()).exists()
}

/// How the view ended.
enum Quit {
    /// q or Ctrl-C.
    Key,
    /// SIGINT, SIGTERM or SIGHUP.
    Signal,
}

/// The terminal in raw mode on the alternate screen, put back when
/// dropped (on an error's way out too; a panic's way is ratatui's hook).
///
/// The terminal itself is never dropped: its drop shows the cursor and
/// prints a failure with `eprintln!`, which panics on a terminal that hung
/// up, and the stop must still follow. Put back here, it holds nothing
/// else: a handle on standard output.
struct Screen(std::mem::ManuallyDrop<ratatui::DefaultTerminal>);

impl Screen {
    fn enter() -> Result<Self, Failure> {
        ratatui::try_init()
            .map(|terminal| Self(std::mem::ManuallyDrop::new(terminal)))
            .map_err(|e| {
                // Raw mode may be on already.
                let _ = ratatui::try_restore();
                Failure::Failed(format!("cannot draw on the terminal: {e}"))
            })
    }
}

impl Drop for Screen {
    fn drop(&mut self) {
        // Not `restore`, which prints its failure with `eprintln!`: see
        // above.
        let _ = self.0.show_cursor();
        let _ = ratatui::try_restore();
    }
}

/// What a refresh hands the view: the figures, or why there are none.
type Refreshed = Result<View, String>;

/// What the view's loop waits for.
enum Message {
    /// A key pressed.
    Key(KeyEvent),
    /// The terminal changed size: draw again.
    Resized,
    /// The keys cannot be read any more.
    InputFailed(String),
    /// A refresh ended, taking this long.
    Refreshed(Refreshed, Duration),
}

/// Shows the view of `watched` until it is asked to quit; refreshes from
/// its file, one `every` after the last.
///
/// The keys are read on a thread of their own, not polled here: crossterm
/// can spin inside a read of a terminal that hung up (its window closed,
/// SIGHUP), and this loop must still see the signal and stop the
/// recording. That thread may be left in its read at the end; the process
/// ends soon after.
fn show(watched: &Watched, every: Duration) -> Result<Quit, Failure> {
    let signalled = Arc::new(AtomicBool::new(false));
    for signal in [
        signal_hook::consts::SIGINT,
        signal_hook::consts::SIGTERM,
        signal_hook::consts::SIGHUP,
    ] {
        signal_hook::flag::register(signal, Arc::clone(&signalled))
            .map_err(|e| format!("cannot handle signal {signal}: {e}"))?;
    }
    let quitting = Arc::new(AtomicBool::new(false));
    let (refresh_now, requests) = mpsc::channel::<()>();
    let (send, messages) = mpsc::channel::<Message>();
    let refresher = {
        let pid = watched.pid;
        let mut follow = Follow::new(&watched.file);
        let quitting = Arc::clone(&quitting);
        let send = send.clone();
        std::thread::spawn(move || {
            let mut wait = Duration::ZERO;
            // Ends when the view drops its sender, or after the JVM exited
            // (its recording finished: read once more, then no more).
            while let Ok(()) | Err(mpsc::RecvTimeoutError::Timeout) = requests.recv_timeout(wait) {
                let started = Instant::now();
                let exited = !is_running(pid);
                let refreshed = follow
                    .refresh()
                    .map(|followed| View::of(&followed, exited))
                    .map_err(|e| e.to_string());
                let message = Message::Refreshed(refreshed, started.elapsed());
                if quitting.load(Ordering::SeqCst) || send.send(message).is_err() || exited {
                    break;
                }
                wait = every;
            }
        })
    };
    let mut state = State {
        watched,
        view: None,
        error: None,
        refreshed: None,
        took: None,
    };
    let ended = (|| -> Result<Quit, Failure> {
        let mut screen = Screen::enter()?;
        std::thread::spawn(move || {
            loop {
                let message = match event::read() {
                    Ok(Event::Key(key)) => Message::Key(key),
                    Ok(Event::Resize(..)) => Message::Resized,
                    Ok(_) => continue,
                    Err(error) => Message::InputFailed(error.to_string()),
                };
                let failed = matches!(message, Message::InputFailed(_));
                if send.send(message).is_err() || failed {
                    break;
                }
            }
        });
        loop {
            if signalled.load(Ordering::SeqCst) {
                return Ok(Quit::Signal);
            }
            screen
                .0
                .draw(|frame| draw(frame, &state))
                .map_err(|e| format!("cannot draw on the terminal: {e}"))?;
            // A tenth of a second: the header's "refreshed N s ago" and a
            // signal are seen that soon.
            let key = match messages.recv_timeout(Duration::from_millis(100)) {
                Ok(Message::Key(key)) => key,
                Ok(Message::Refreshed(refreshed, took)) => {
                    state.took = Some(took);
                    state.refreshed = Some(Instant::now());
                    match refreshed {
                        Ok(view) => {
                            state.view = Some(view);
                            state.error = None;
                        }
                        Err(error) => state.error = Some(error),
                    }
                    continue;
                }
                Ok(Message::InputFailed(error)) => {
                    return Err(Failure::Failed(format!(
                        "cannot read the terminal's keys: {error}"
                    )));
                }
                Ok(Message::Resized) | Err(_) => continue,
            };
            if key.kind != KeyEventKind::Press {
                continue;
            }
            match key.code {
                KeyCode::Char('q') | KeyCode::Esc => return Ok(Quit::Key),
                KeyCode::Char('c') if key.modifiers.contains(KeyModifiers::CONTROL) => {
                    return Ok(Quit::Key);
                }
                KeyCode::Char('r') => {
                    let _ = refresh_now.send(());
                }
                _ => {}
            }
        }
    })();
    // The terminal is back (the screen dropped); no refresh reads the
    // file after this, so none races the stop.
    quitting.store(true, Ordering::SeqCst);
    drop(refresh_now);
    let _ = refresher.join();
    ended
}

/// What the view shows of the recording as a refresh read it.
#[derive(Debug, Clone, PartialEq)]
pub struct View {
    /// The recording's length, seconds.
    pub seconds: f64,
    /// The samples the JVM handed the agent, as it last counted them.
    pub samples: Option<u64>,
    /// What the figures say, in a line: suspects, or none so far, or why
    /// there are no figures of live bytes yet.
    pub verdict: String,
    /// When the watch last judged, seconds from the recording's start.
    pub judged_at: Option<f64>,
    /// The sites of the most live bytes then, the other sites last.
    pub sites: Vec<SiteRow>,
    /// The heap in use after each collection, oldest first: the last
    /// [`HEAP_POINTS`](heapsampler_cli::analysis::follow::HEAP_POINTS).
    pub heap: Vec<u64>,
    /// The collections in the recording.
    pub collections: u64,
    /// The sites the agent raised as leak suspects, first raised first.
    pub raised: Vec<RaisedRow>,
}

/// A site's line in the table.
#[derive(Debug, Clone, PartialEq)]
pub struct SiteRow {
    /// The site in words: its top frames and its class.
    pub site: String,
    /// Its estimated live bytes when the watch judged.
    pub live: f64,
    /// How fast they grew lately, bytes per second with its 95% interval,
    /// and over how many seconds; `None` before the watch held a window.
    pub growth: Option<(heapsampler_core::estimate::Interval, f64)>,
    /// Whether the agent raised it as a leak suspect.
    pub suspect: bool,
}

/// A site the agent raised, with what it wrote last of it.
#[derive(Debug, Clone, PartialEq)]
pub struct RaisedRow {
    /// When it was first raised, seconds from the recording's start.
    pub first: f64,
    /// Its growth, bytes per second, with its 95% interval.
    pub growth: heapsampler_core::estimate::Interval,
    /// Its live bytes then.
    pub live: f64,
    /// The site in words: its top frames and its class.
    pub site: String,
}

impl View {
    /// The view of what a refresh read; `exited` when the JVM is gone (and
    /// its recording finished).
    pub fn of(followed: &Followed, exited: bool) -> Self {
        let watch = &followed.watch;
        let raised: Vec<RaisedRow> = watch
            .raised
            .iter()
            .map(|raised| RaisedRow {
                first: followed.seconds(raised.first_nanos),
                growth: raised.latest.growth,
                live: raised.latest.live.estimate,
                site: site_text(&raised.site),
            })
            .collect();
        let sites = watch.judged.as_ref().map_or(Vec::new(), |judged| {
            judged
                .sites
                .iter()
                .map(|watched| SiteRow {
                    site: site_text(&watched.site),
                    live: watched.live.estimate,
                    growth: watched
                        .growth
                        .map(|(growth, window)| (growth, window as f64 / 1e9)),
                    suspect: watch.raised.iter().any(|r| r.site == watched.site),
                })
                .collect()
        });
        let judged_at = watch.judged.as_ref().map(|j| followed.seconds(j.nanos));
        let mut verdict = match (raised.last(), judged_at) {
            (Some(latest), _) => format!(
                "{} leak suspect{} raised by the agent's watch; the latest at {}, growing {} \
                 ({}): {}",
                raised.len(),
                if raised.len() == 1 { "" } else { "s" },
                clock(latest.first),
                per_minute(latest.growth.estimate),
                per_minute_interval(&latest.growth),
                latest.site
            ),
            (None, Some(at)) => format!(
                "no leak suspect so far: the watch last judged what is live at {}",
                clock(at)
            ),
            (None, None) => "no live bytes judged yet: the agent's watch judges after a \
                             collection that marks the whole heap (G1: its concurrent markings, \
                             which can be minutes apart), or that an object of its own shows \
                             marked (the README's \"Leaving it on\"); a recording started with \
                             watch=false never does"
                .to_owned(),
        };
        if exited {
            // First: the verdict may be cut at the screen's edge.
            verdict = format!(
                "the JVM has exited and the agent finished its recording (q to quit); {verdict}"
            );
        }
        Self {
            seconds: followed.length(),
            samples: followed.samples,
            verdict,
            judged_at,
            sites,
            heap: followed.heap.iter().copied().collect(),
            collections: followed.collections,
            raised,
        }
    }
}

/// All the screen shows: the recording, the last view, and how the last
/// refresh went.
struct State<'a> {
    watched: &'a Watched,
    view: Option<View>,
    /// Why the last refresh failed, if it did.
    error: Option<String>,
    /// When the last refresh ended, and how long it took.
    refreshed: Option<Instant>,
    took: Option<Duration>,
}

const TITLE: Style = Style::new().add_modifier(Modifier::BOLD);
const SUSPECT: Style = Style::new().fg(Color::Red).add_modifier(Modifier::BOLD);
const DIM: Style = Style::new().fg(Color::DarkGray);

/// Draws the whole screen: the header, the verdict, the sites, the heap,
/// the suspects and the keys.
fn draw(frame: &mut Frame, state: &State) {
    let raised = state.view.as_ref().map_or(0, |v| v.raised.len());
    let [header, verdict, sites, heap, suspects, footer] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Length(2),
        Constraint::Min(5),
        Constraint::Length(6),
        Constraint::Length(raised.clamp(1, 5) as u16 + 3),
        Constraint::Length(1),
    ])
    .areas(frame.area());
    frame.render_widget(Paragraph::new(header_line(state)), header);
    let status = match (&state.error, &state.view) {
        (Some(error), _) => Line::styled(format!("refresh failed: {error}"), SUSPECT),
        (None, Some(view)) => Line::from(view.verdict.clone()),
        (None, None) => Line::styled("reading the recording...", DIM),
    };
    frame.render_widget(Paragraph::new(status).wrap(Wrap { trim: true }), verdict);
    let Some(view) = &state.view else {
        frame.render_widget(Paragraph::new(footer_line(state.watched)), footer);
        return;
    };
    draw_sites(frame, sites, view);
    draw_heap(frame, heap, view);
    draw_raised(frame, suspects, view);
    frame.render_widget(Paragraph::new(footer_line(state.watched)), footer);
}

/// `heapsampler watch  JVM 4242  /tmp/service.jfr  recorded 2:13  48,221
/// samples  refreshed 1 s ago in 0.3 s`.
fn header_line(state: &State) -> Line<'static> {
    let watched = state.watched;
    let mut spans = vec![
        Span::styled("heapsampler watch", TITLE),
        Span::raw(format!("  JVM {}  ", watched.pid)),
        Span::raw(watched.file.display().to_string()),
        Span::styled(if watched.joined { " (joined)" } else { "" }, DIM),
    ];
    if let Some(view) = &state.view {
        spans.push(Span::raw(format!("  recorded {}", clock(view.seconds))));
        if let Some(samples) = view.samples {
            spans.push(Span::raw(format!("  {} samples", thousands(samples))));
        }
    }
    if let (Some(at), Some(took)) = (state.refreshed, state.took) {
        spans.push(Span::styled(
            format!(
                "  refreshed {} s ago in {:.1} s",
                at.elapsed().as_secs(),
                took.as_secs_f64()
            ),
            DIM,
        ));
    }
    Line::from(spans)
}

fn footer_line(watched: &Watched) -> Line<'static> {
    let quit = if watched.keep {
        "quit, the recording goes on"
    } else {
        "stop the recording, finish its file and quit"
    };
    Line::from(vec![
        Span::styled(" q ", Style::new().add_modifier(Modifier::REVERSED)),
        Span::raw(" or "),
        Span::styled(" Ctrl-C ", Style::new().add_modifier(Modifier::REVERSED)),
        Span::raw(format!(" {quit}   ")),
        Span::styled(" r ", Style::new().add_modifier(Modifier::REVERSED)),
        Span::raw(" refresh now"),
    ])
}

fn draw_sites(frame: &mut Frame, area: Rect, view: &View) {
    let rows = view.sites.iter().map(|row| {
        let (growth, interval, over) = match &row.growth {
            Some((growth, seconds)) => (
                per_minute(growth.estimate),
                per_minute_interval(growth),
                human_duration(*seconds),
            ),
            None => ("-".to_owned(), String::new(), String::new()),
        };
        let style = if row.suspect { SUSPECT } else { Style::new() };
        Row::new([
            Cell::from(human_bytes(row.live)),
            Cell::from(growth),
            Cell::from(interval),
            Cell::from(over),
            Cell::from(row.site.clone()),
        ])
        .style(style)
    });
    let when = view
        .judged_at
        .map_or(String::new(), |at| format!(" judged at {}", clock(at)));
    let table = Table::new(
        rows,
        [
            Constraint::Length(10),
            Constraint::Length(14),
            Constraint::Length(27),
            Constraint::Length(7),
            Constraint::Fill(1),
        ],
    )
    .header(Row::new(["live", "growth", "95% interval", "over", "site"]).style(TITLE))
    .block(Block::default().borders(Borders::TOP).title(format!(
        " live after the collection{when}, by site; growth over up to the last 10 min \
         (red: a leak suspect) "
    )));
    frame.render_widget(table, area);
}

/// `45 s`, `8 min`: a window's length.
fn human_duration(seconds: f64) -> String {
    if seconds < 120.0 {
        format!("{seconds:.0} s")
    } else {
        format!("{:.0} min", seconds / 60.0)
    }
}

fn draw_heap(frame: &mut Frame, area: Rect, view: &View) {
    // One bar a column: the latest collections that fit.
    let width = area.width.saturating_sub(2) as usize;
    let shown = &view.heap[view.heap.len().saturating_sub(width)..];
    let (Some(&last), Some(&lowest), Some(&highest)) =
        (shown.last(), shown.iter().min(), shown.iter().max())
    else {
        let none = Paragraph::new(Line::styled("no collection yet", DIM)).block(
            Block::default()
                .borders(Borders::ALL)
                .title(" heap in use after each collection "),
        );
        frame.render_widget(none, area);
        return;
    };
    // The bars rise from a little under the lowest, so that a heap that
    // changes by a tenth does not draw as full bars all alike.
    let floor = lowest.saturating_sub((highest - lowest).max(highest / 100) / 4);
    let bars: Vec<u64> = shown.iter().map(|used| used - floor).collect();
    let title = format!(
        " heap in use after each collection: {} now ",
        human_bytes(last as f64)
    );
    let range = format!(
        " the last {} figures: {} to {} (bars from {}); {} collections in all ",
        shown.len(),
        human_bytes(lowest as f64),
        human_bytes(highest as f64),
        human_bytes(floor as f64),
        thousands(view.collections),
    );
    let sparkline = Sparkline::default()
        .block(
            Block::default()
                .borders(Borders::ALL)
                .title(title)
                .title_bottom(Line::styled(range, DIM)),
        )
        .data(&bars)
        .style(Style::new().fg(Color::Cyan));
    frame.render_widget(sparkline, area);
}

fn draw_raised(frame: &mut Frame, area: Rect, view: &View) {
    let block = Block::default().borders(Borders::TOP).title(format!(
        " leak suspects the agent raised: {} ",
        view.raised.len()
    ));
    if view.raised.is_empty() {
        let none = Paragraph::new(Line::styled("none so far", DIM)).block(block);
        frame.render_widget(none, area);
        return;
    }
    // The latest first: what was raised last matters most.
    let rows = view.raised.iter().rev().map(|raised| {
        Row::new([
            Cell::from(clock(raised.first)),
            Cell::from(per_minute(raised.growth.estimate)),
            Cell::from(per_minute_interval(&raised.growth)),
            Cell::from(human_bytes(raised.live)),
            Cell::from(raised.site.clone()),
        ])
        .style(SUSPECT)
    });
    let table = Table::new(
        rows,
        [
            Constraint::Length(8),
            Constraint::Length(14),
            Constraint::Length(27),
            Constraint::Length(10),
            Constraint::Fill(1),
        ],
    )
    .header(Row::new(["raised", "growth", "95% interval", "live", "site"]).style(TITLE))
    .block(block);
    frame.render_widget(table, area);
}

#[cfg(test)]
mod tests {
    use super::*;
    use heapsampler_core::estimate::Interval;
    use ratatui::Terminal;
    use ratatui::backend::TestBackend;

    fn interval(low: f64, estimate: f64, high: f64) -> Interval {
        Interval {
            estimate,
            low,
            high,
        }
    }

    /// A view of a leaking service's recording.
    fn view() -> View {
        View {
            seconds: 133.0,
            samples: Some(48_221),
            verdict: "1 leak suspect raised by the agent's watch; the latest at 0:46".to_owned(),
            judged_at: Some(131.0),
            sites: vec![
                SiteRow {
                    site: "LateLeak$Cache.put(120) < LateLeak.main(70)  (byte[])".to_owned(),
                    live: 41_943_040.0,
                    growth: Some((interval(-100.0, 10.0, 120.0), 98.0)),
                    suspect: false,
                },
                SiteRow {
                    site: "LateLeak$Leak.keep(150) < LateLeak.main(70)  (byte[])".to_owned(),
                    live: 18_000_000.0,
                    growth: Some((interval(416_666.0, 500_000.0, 583_333.0), 98.0)),
                    suspect: true,
                },
                SiteRow {
                    site: "the other sites".to_owned(),
                    live: 1_000_000.0,
                    growth: None,
                    suspect: false,
                },
            ],
            heap: vec![40, 50, 45, 60, 55, 70, 65, 80],
            collections: 8,
            raised: vec![RaisedRow {
                first: 46.0,
                growth: interval(277_000.0, 412_000.0, 546_000.0),
                live: 18_000_000.0,
                site: "LateLeak$Leak.keep(150) < LateLeak.main(70)  (byte[])".to_owned(),
            }],
        }
    }

    fn screen(state: &State, width: u16, height: u16) -> String {
        let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
        terminal.draw(|frame| draw(frame, state)).unwrap();
        let buffer = terminal.backend().buffer();
        (0..height)
            .map(|y| {
                (0..width)
                    .map(|x| buffer[(x, y)].symbol())
                    .collect::<String>()
                    .trim_end()
                    .to_owned()
            })
            .collect::<Vec<_>>()
            .join("\n")
    }

    fn state(watched: &Watched, view: Option<View>) -> State<'_> {
        State {
            watched,
            view,
            error: None,
            refreshed: None,
            took: None,
        }
    }

    fn watched(keep: bool) -> Watched {
        Watched {
            pid: 4242,
            file: PathBuf::from("/tmp/service.jfr"),
            joined: false,
            keep,
        }
    }

    #[test]
    fn the_view_shows_the_header_sites_heap_suspects_and_keys() {
        let watched = watched(false);
        let state = state(&watched, Some(view()));
        let text = screen(&state, 120, 30);
        let has = |what: &str| assert!(text.contains(what), "no {what:?} in\n{text}");
        has("heapsampler watch  JVM 4242  /tmp/service.jfr  recorded 2:13  48,221 samples");
        has("1 leak suspect raised by the agent's watch; the latest at 0:46");
        // The site that leaks, its growth per minute with its interval and
        // its window, on the line of its live bytes.
        let leak = text
            .lines()
            .find(|line| line.contains("LateLeak$Leak.keep(150)") && line.contains("MB/min"))
            .unwrap_or_else(|| panic!("no leaking site in\n{text}"));
        assert!(
            leak.contains("18.0 MB")
                && leak.contains("+30.0 MB/min")
                && leak.contains("+25.0 MB to +35.0 MB/min")
                && leak.contains("98 s"),
            "{leak}"
        );
        has("live after the collection judged at 2:11, by site");
        // Sites as written, by live bytes, the other sites last, with no
        // growth before a window.
        assert!(text.find("Cache.put").unwrap() < text.find("Leak.keep").unwrap());
        let others = text
            .lines()
            .find(|line| line.contains("the other sites"))
            .unwrap_or_else(|| panic!("no other sites in\n{text}"));
        assert!(
            others.contains("1000.0 kB") || others.contains("1.0 MB"),
            "{others}"
        );
        assert!(others.contains(" - "), "{others}");
        // The heap's bars: the highest last, full.
        has("heap in use after each collection: 80 B now");
        has("the last 8 figures: 40 B to 80 B (bars from 30 B); 8 collections in all");
        assert!(text.contains('█'), "no sparkline in\n{text}");
        has("leak suspects the agent raised: 1");
        has("0:46");
        has("LateLeak$Leak.keep(150) < LateLeak.main(70)  (byte[])");
        has("stop the recording, finish its file and quit");
        has("refresh now");
    }

    #[test]
    fn before_the_first_refresh_and_after_a_failed_one_it_says_so() {
        let watched = watched(true);
        let mut state = state(&watched, None);
        let text = screen(&state, 100, 20);
        assert!(text.contains("reading the recording..."), "{text}");
        assert!(text.contains("quit, the recording goes on"), "{text}");
        state.view = Some(view());
        state.error = Some("/tmp/service.jfr: No such file or directory".to_owned());
        let text = screen(&state, 100, 20);
        assert!(
            text.contains("refresh failed: /tmp/service.jfr: No such file"),
            "{text}"
        );
        // The last figures stay.
        assert!(text.contains("Leak.keep"), "{text}");
    }

    /// What a refresh read, in the view: the last judgment's sites in
    /// their order, a raised one red, the verdict from none judged to
    /// suspects, and the JVM's exit said.
    #[test]
    fn the_view_of_a_refresh_marks_the_raised_sites_and_says_how_far_the_watch_got() {
        use heapsampler_cli::model::watch::{Judged, Raise, Raised, Site, WatchedSite};
        let site = |stack: &str| Site {
            stack: stack.to_owned(),
            class: "byte[]".to_owned(),
            other_sites: false,
        };
        let second = 1_000_000_000i64;
        let mut followed = Followed {
            start_nanos: Some(100 * second),
            end_nanos: 200 * second,
            ..Followed::default()
        };
        let view = View::of(&followed, false);
        assert!(
            view.verdict.starts_with("no live bytes judged yet"),
            "{}",
            view.verdict
        );
        assert!(view.sites.is_empty());
        let watched = |stack: &str, live: f64| WatchedSite {
            site: site(stack),
            live: interval(live, live, live),
            live_samples: 3,
            growth: Some((interval(1.0, 2.0, 3.0), 600 * second)),
        };
        followed.watch.judged = Some(Judged {
            nanos: 190 * second,
            gc_id: 9,
            sites: vec![watched("Big.a(1)", 9.0), watched("Leak.b(2)", 5.0)],
        });
        let view = View::of(&followed, false);
        assert_eq!(
            view.verdict,
            "no leak suspect so far: the watch last judged what is live at 1:30"
        );
        assert_eq!(view.judged_at, Some(90.0));
        assert_eq!(view.sites[1].growth, Some((interval(1.0, 2.0, 3.0), 600.0)));
        assert!(!view.sites[1].suspect);
        followed.watch.raised.push(Raised {
            site: site("Leak.b(2)"),
            first_nanos: 150 * second,
            times: 1,
            latest: Raise {
                nanos: 150 * second,
                gc_id: 5,
                growth: interval(400.0, 500.0, 600.0),
                window_nanos: Some(30 * second),
                live: interval(4.0, 5.0, 6.0),
                live_samples: 3,
                heap_used: None,
                heap_max: None,
                time_to_heap_max_nanos: None,
            },
        });
        let view = View::of(&followed, true);
        let marked: Vec<bool> = view.sites.iter().map(|s| s.suspect).collect();
        assert_eq!(marked, [false, true]);
        assert_eq!(view.raised[0].first, 50.0);
        assert!(
            view.verdict.starts_with(
                "the JVM has exited and the agent finished its recording (q to quit); 1 leak \
                 suspect raised by the agent's watch; the latest at 0:50"
            ),
            "{}",
            view.verdict
        );
        assert_eq!(view.seconds, 100.0);
    }

    #[test]
    fn the_sparkline_shows_the_latest_collections_that_fit() {
        let watched = watched(false);
        let mut shown = view();
        // Rising: the last bar is the highest, the first ones cut off.
        shown.heap = (1..=500).collect();
        shown.collections = 500;
        let state = state(&watched, Some(shown));
        let text = screen(&state, 100, 30);
        assert!(
            text.contains("the last 98 figures: 403 B to 500 B"),
            "{text}"
        );
        let bars = text
            .lines()
            .rev()
            .find(|line| line.contains('█'))
            .unwrap_or_else(|| panic!("no bars in\n{text}"));
        assert!(bars.trim_end().ends_with("█│"), "{bars}");
    }
}
