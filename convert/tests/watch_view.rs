//! `heapsampler watch PID` as a person runs it: in a pseudo-terminal, its
//! screen read back as a terminal shows it (vt100), beside a real JVM
//! running a service that leaks (`LateLeak`); and its refusal without a
//! terminal.

use heapsampler_test_support as support;

use heapsampler_test_support::{Deadline as _, Watched, heapsampler_exit};
use portable_pty::{CommandBuilder, PtySize, native_pty_system};
use std::io::{Read as _, Write as _};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// The pseudo-terminal's size: room for the whole view.
const ROWS: u16 = 40;
const COLS: u16 = 140;

/// How long the view may take to show what a test waits for: the watch's
/// first judgment (about 30 s in) on a loaded 2-core machine, with room.
const SHOWN_WITHIN: Duration = Duration::from_secs(120);

/// `LateLeak` (leaking from its 5th second) in JDK 17, with a small young
/// generation so that it collects every second or two and G1 marking from
/// a fifth of the heap (every 12 to 30 s, where its defaults wait a minute
/// and a half for the first: the view has sites once the watch judged a
/// marking), and `jvm`'s options first; for 10 minutes.
fn late_leak(jvm: &[String]) -> Watched {
    late_leak_for(jvm, 600)
}

/// [`late_leak`] for `seconds`, after which it exits.
fn late_leak_for(jvm: &[String], seconds: u32) -> Watched {
    Command::new("java")
        .args(jvm)
        .args(["-Xmx256m", "-Xmn8m", "-XX:+UseG1GC"])
        .args([
            "-XX:-G1UseAdaptiveIHOP",
            "-XX:InitiatingHeapOccupancyPercent=20",
        ])
        .arg("-cp")
        .arg(support::compiled_workload("LateLeak"))
        .args(["LateLeak", &seconds.to_string(), "5"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn_within(Duration::from_secs(600))
}

/// `heapsampler ARGS...` in a pseudo-terminal: its screen as a terminal
/// keeps it, everything it wrote, and its keyboard. Killed when dropped.
struct InTerminal {
    child: Box<dyn portable_pty::Child + Send + Sync>,
    keys: Box<dyn std::io::Write + Send>,
    output: mpsc::Receiver<Vec<u8>>,
    screen: vt100::Parser,
    written: Vec<u8>,
    // Kept open: the child's terminal.
    _master: Box<dyn portable_pty::MasterPty + Send>,
}

impl InTerminal {
    fn start(args: &[&str]) -> Self {
        let pair = native_pty_system()
            .openpty(PtySize {
                rows: ROWS,
                cols: COLS,
                pixel_width: 0,
                pixel_height: 0,
            })
            .expect("a pseudo-terminal");
        let mut command = CommandBuilder::new(support::heapsampler_exe());
        command.args(args);
        command.env("TERM", "xterm-256color");
        command.env("HEAPSAMPLER_AGENT", support::agent_library());
        let child = pair.slave.spawn_command(command).expect("heapsampler runs");
        drop(pair.slave);
        let mut reader = pair.master.try_clone_reader().unwrap();
        let (send, output) = mpsc::channel();
        std::thread::spawn(move || {
            let mut buffer = [0; 8192];
            // Ends at the terminal's end (EIO once the child is gone).
            while let Ok(read @ 1..) = reader.read(&mut buffer) {
                if send.send(buffer[..read].to_vec()).is_err() {
                    break;
                }
            }
        });
        Self {
            child,
            keys: pair.master.take_writer().unwrap(),
            output,
            screen: vt100::Parser::new(ROWS, COLS, 0),
            written: Vec::new(),
            _master: pair.master,
        }
    }

    /// Takes in what it wrote until `within` has passed.
    fn read_for(&mut self, within: Duration) {
        if let Ok(bytes) = self.output.recv_timeout(within) {
            self.screen.process(&bytes);
            self.written.extend_from_slice(&bytes);
        }
        while let Ok(bytes) = self.output.try_recv() {
            self.screen.process(&bytes);
            self.written.extend_from_slice(&bytes);
        }
    }

    fn contents(&self) -> String {
        self.screen.screen().contents()
    }

    /// Waits until the screen passes `shows`, within [`SHOWN_WITHIN`].
    fn wait_for(&mut self, what: &str, shows: impl Fn(&str) -> bool) {
        let deadline = Instant::now() + SHOWN_WITHIN;
        loop {
            self.read_for(Duration::from_millis(200));
            if shows(&self.contents()) {
                return;
            }
            if let Ok(Some(status)) = self.child.try_wait() {
                self.read_for(Duration::from_millis(500));
                panic!(
                    "heapsampler watch exited ({status:?}) before showing {what}:\n{}",
                    self.contents()
                );
            }
            assert!(
                Instant::now() < deadline,
                "no {what} on the screen within {SHOWN_WITHIN:?}:\n{}",
                self.contents()
            );
        }
    }

    fn press(&mut self, keys: &[u8]) {
        self.keys.write_all(keys).unwrap();
        self.keys.flush().unwrap();
    }

    /// Waits for its exit (within a minute: the stop finishes the file),
    /// taking in all it wrote; its exit code.
    fn exit_code(&mut self) -> u32 {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            self.read_for(Duration::from_millis(200));
            if let Some(status) = self.child.try_wait().unwrap() {
                // What it wrote last, after the view.
                self.read_for(Duration::from_millis(500));
                return status.exit_code();
            }
            assert!(
                Instant::now() < deadline,
                "heapsampler watch still runs a minute after it was asked to quit:\n{}",
                self.contents()
            );
        }
    }

    /// Whether it left the terminal as it found it: the alternate screen
    /// left (as entered, once) and the cursor shown again.
    fn assert_restored(&self) {
        let written = String::from_utf8_lossy(&self.written);
        assert!(written.contains("\x1b[?1049h"), "never entered the view");
        assert!(
            written.rfind("\x1b[?1049l") > written.rfind("\x1b[?1049h"),
            "the alternate screen was not left"
        );
        assert!(!self.screen.screen().alternate_screen());
        assert!(!self.screen.screen().hide_cursor(), "the cursor is hidden");
    }
}

impl Drop for InTerminal {
    fn drop(&mut self) {
        let _ = self.child.kill();
    }
}

/// The sparkline's bars.
fn has_bars(screen: &str) -> bool {
    screen.contains(['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'])
}

#[test]
fn watch_attaches_shows_the_view_and_stops_on_ctrl_c() {
    let dir = support::temp_dir("convert_watch_view");
    let file = dir.join("watched.jfr");
    let jvm = late_leak(&[]);
    let pid = jvm.id().to_string();
    let mut watch = InTerminal::start(&[
        "watch",
        &pid,
        "-o",
        file.to_str().unwrap(),
        "--interval",
        "64k",
        "--every",
        "1s",
    ]);
    watch.wait_for("the header", |screen| {
        screen.contains(&format!("heapsampler watch  JVM {pid}  {}", file.display()))
    });
    watch.wait_for(
        "a site the watch judged and the heap's sparkline",
        |screen| {
            (screen.contains("LateLeak$Cache.put") || screen.contains("LateLeak$Leak.keep"))
                && screen.contains("live after the collection judged at")
                && screen.contains("heap in use after each collection")
                && has_bars(screen)
        },
    );
    let shown = watch.contents();
    assert!(shown.contains(" samples"), "{shown}");
    assert!(shown.contains("Ctrl-C"), "{shown}");
    // Ctrl-C as a terminal sends it: the byte, read as a key in raw mode.
    watch.press(b"\x03");
    assert_eq!(watch.exit_code(), 0, "{}", watch.contents());
    watch.assert_restored();
    // What detach prints: the recording's report, with its path.
    let after = watch.contents();
    assert!(
        after.contains(&format!("recording: {}", file.display())),
        "{after}"
    );
    assert!(
        support::is_finished(&file),
        "{} is not finished",
        file.display()
    );
    let summary = support::summary(&file);
    assert!(
        support::summary_count(&summary, "heapsampler.ObjectLifetime") > 0,
        "{summary}"
    );
    // The JVM runs on.
    let mut jvm = jvm;
    assert!(jvm.try_wait().unwrap().is_none(), "the JVM still runs");
}

/// A recording started with -agentpath is joined, not refused, and left
/// running at the end (it is not watch's); `q` quits too.
#[test]
fn watch_joins_a_running_recording_and_leaves_it_running() {
    let dir = support::temp_dir("convert_watch_view_joined");
    let file = dir.join("started.jfr");
    let agentpath = format!(
        "-agentpath:{}=file={},interval=64k",
        support::agent_library().display(),
        file.display()
    );
    let mut jvm = late_leak(&[agentpath]);
    let pid = jvm.id().to_string();
    // The agent announces its recording once it runs.
    let deadline = Instant::now() + Duration::from_secs(60);
    while !file.exists() {
        assert!(
            Instant::now() < deadline,
            "no {} in a minute",
            file.display()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let mut watch = InTerminal::start(&["watch", &pid, "--every", "1s"]);
    watch.wait_for("the joined recording and a site", |screen| {
        screen.contains(&format!("JVM {pid}  {} (joined)", file.display()))
            && screen.contains("LateLeak$")
            && screen.contains("quit, the recording goes on")
    });
    watch.press(b"q");
    assert_eq!(watch.exit_code(), 0, "{}", watch.contents());
    watch.assert_restored();
    let after = watch.contents();
    assert!(
        after.contains(&format!("stop it with `heapsampler detach {pid}`")),
        "{after}"
    );
    detach_finishes(&pid, &file, &mut jvm);
}

/// SIGTERM (as a service manager or `kill` sends it) ends the view as q
/// does, the terminal put back; with --keep-recording the recording it
/// started goes on.
#[test]
fn watch_stops_on_sigterm_and_keeps_the_recording_when_asked() {
    let dir = support::temp_dir("convert_watch_view_sigterm");
    let file = dir.join("kept.jfr");
    let mut jvm = late_leak(&[]);
    let pid = jvm.id().to_string();
    let mut watch = InTerminal::start(&[
        "watch",
        &pid,
        "-o",
        file.to_str().unwrap(),
        "--keep-recording",
        "--every",
        "1s",
    ]);
    watch.wait_for("a site", |screen| {
        screen.contains("LateLeak$") && screen.contains("quit, the recording goes on")
    });
    let watch_pid = watch.child.process_id().expect("the child's pid");
    let killed = Command::new("kill")
        .args(["-TERM", &watch_pid.to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    assert_eq!(watch.exit_code(), 0, "{}", watch.contents());
    watch.assert_restored();
    let after = watch.contents();
    assert!(after.contains("stopping on a signal"), "{after}");
    assert!(
        after.contains(&format!("{} goes on; stop it with", file.display())),
        "{after}"
    );
    detach_finishes(&pid, &file, &mut jvm);
}

/// A recording left running: `detach` stops it and finishes the file,
/// which the JDK reads, and the JVM goes on.
fn detach_finishes(pid: &str, file: &Path, jvm: &mut Watched) {
    assert!(!support::is_finished(file));
    let (code, stderr) = heapsampler_exit([
        "detach",
        pid,
        "--agent",
        support::agent_library().to_str().unwrap(),
    ]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(support::is_finished(file));
    support::summary(file);
    assert!(jvm.try_wait().unwrap().is_none(), "the JVM still runs");
}

/// A JVM that exits while watched: the view says so and keeps its last
/// figures, and the end reports the recording the agent finished.
#[test]
fn watch_says_when_the_jvm_exits() {
    let dir = support::temp_dir("convert_watch_view_exit");
    let file = dir.join("exited.jfr");
    let jvm = late_leak_for(&[], 20);
    let pid = jvm.id().to_string();
    let mut watch =
        InTerminal::start(&["watch", &pid, "-o", file.to_str().unwrap(), "--every", "1s"]);
    // 20 s: before the watch's first judgment, the heap's figures.
    watch.wait_for("the heap's sparkline", has_bars);
    let output = jvm.wait_with_output();
    assert!(output.status.success(), "{output:?}");
    watch.wait_for("that the JVM exited", |screen| {
        screen.contains("the JVM has exited and the agent finished its recording")
            && has_bars(screen)
    });
    watch.press(b"q");
    assert_eq!(watch.exit_code(), 0, "{}", watch.contents());
    watch.assert_restored();
    let after = watch.contents();
    assert!(
        after.contains(&format!("JVM {pid} exited while watched"))
            && after.contains(&format!("recording: {}", file.display())),
        "{after}"
    );
    assert!(support::is_finished(&file));
    support::summary(&file);
}

#[test]
fn watch_without_a_terminal_says_to_run_it_in_one() {
    // Before any JVM is asked: this pid need not be one.
    let (code, stderr) = heapsampler_exit(["watch", "1"]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("standard output is not a terminal: run it in one"),
        "{stderr}"
    );
}

#[test]
fn watch_refuses_no_live_and_no_watch() {
    // The view is of what the agent's watch finds live; refused in a
    // terminal, before any JVM.
    for refused in ["--no-live", "--no-watch"] {
        let mut watch = InTerminal::start(&["watch", "1", refused]);
        assert_eq!(watch.exit_code(), 2, "{}", watch.contents());
        assert!(
            watch
                .contents()
                .contains("leave liveness and the watch on (without --no-live and --no-watch)"),
            "{refused}: {}",
            watch.contents()
        );
    }
}
