//! `heapsampler attach PID`, `detach PID` and `dump PID`: start, stop and
//! snapshot a recording in a running JVM with `jcmd PID JVMTI.agent_load`.
//!
//! The agent's own messages go to the JVM's standard error, not back
//! through jcmd, which only prints the agent's return code. So the options
//! are checked here before attaching, and `attach` leaves a note (in the
//! temporary directory, named after the pid) of where the recording goes
//! and, with `--duration`, when it stops by itself, for `detach` (and a
//! refused `attach`) to say what happened.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use heapsampler_core::announcement::Announcement;
use heapsampler_core::options::name;

/// Where `attach` notes the recording for `detach`.
fn note_path(pid: u32) -> PathBuf {
    std::env::temp_dir().join(format!("heapsampler-attach-{pid}"))
}

/// What `attach` noted: the recording's path and, for a recording with a
/// duration, the duration and the time (ms since the epoch) by which the
/// agent has stopped it by itself.
struct Note {
    recording: String,
    ends: Option<(Duration, u128)>,
}

impl Note {
    /// The note's text: the path, then with a duration a last line
    /// `ends MILLIS SECONDS`.
    fn write(pid: u32, recording: &Path, duration: Option<Duration>) -> std::io::Result<()> {
        let mut text = recording.display().to_string();
        if let Some(duration) = duration {
            // The agent's clock starts before jcmd returns: by this time
            // it has stopped.
            let ends = now_millis() + duration.as_millis();
            text.push_str(&format!("\nends {ends} {}", duration.as_secs()));
        }
        std::fs::write(note_path(pid), text)
    }

    fn read(pid: u32) -> Option<Self> {
        let text = std::fs::read_to_string(note_path(pid)).ok()?;
        let ends = text.rsplit_once('\n').and_then(|(recording, last)| {
            let mut words = last.strip_prefix("ends ")?.split(' ');
            let ends = words.next()?.parse().ok()?;
            let seconds = words.next()?.parse().ok()?;
            Some((recording, (Duration::from_secs(seconds), ends)))
        });
        Some(match ends {
            Some((recording, ends)) => Self {
                recording: recording.to_owned(),
                ends: Some(ends),
            },
            None => Self {
                recording: text,
                ends: None,
            },
        })
    }

    /// The duration, if the recording has stopped by itself by now (within
    /// a second's slack for the agent's own timing).
    fn ended_by_itself(&self) -> Option<Duration> {
        self.ends
            .filter(|&(_, ends)| now_millis() + 1000 >= ends)
            .map(|(duration, _)| duration)
    }
}

fn now_millis() -> u128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |since| since.as_millis())
}

/// A duration as a person says it: `90 s`, `10 min`, `2 h`, `1 h 30 min`.
pub fn describe(duration: Duration) -> String {
    let seconds = duration.as_secs();
    let (h, m, s) = (seconds / 3600, seconds / 60 % 60, seconds % 60);
    let parts: Vec<String> = [(h, "h"), (m, "min"), (s, "s")]
        .into_iter()
        .filter(|&(n, _)| n > 0)
        .map(|(n, unit)| format!("{n} {unit}"))
        .collect();
    if parts.is_empty() {
        "0 s".to_owned()
    } else {
        parts.join(" ")
    }
}

/// Starts a recording in JVM `pid` with the agent's `options` (which name
/// the file, absolute: the JVM's working directory is not ours, and the
/// `duration`, if any, the options give); refused at once when the agent
/// `announced` in the JVM records.
pub fn attach(
    jcmd: &Path,
    pid: u32,
    agent: &Path,
    announced: Option<&Announcement>,
    options: &str,
    output: &Path,
    duration: Option<Duration>,
) -> Result<(), String> {
    if let Some(running) = announced
        && let Some(recording) = &running.recording
    {
        return Err(format!(
            "a recording is already running in JVM {pid} (to {}), by the agent loaded from \
                 {}; stop it first with `heapsampler detach {pid}`",
            recording.display(),
            running.library.display()
        ));
    }
    // A recording that stopped by itself: its note is stale.
    let running = Note::read(pid).filter(|note| note.ended_by_itself().is_none());
    load(jcmd, pid, agent, options).map_err(|refused| match refused {
        Refusal::Agent => match running {
            Some(running) => format!(
                "a recording is already running in JVM {pid} (to {}); stop it first \
                 with `heapsampler detach {pid}`",
                running.recording
            ),
            None => format!(
                "JVM {pid} refused the agent: a recording started another way may be running, \
                 or the JVM forbids loading agents at run time (-XX:-EnableDynamicAgentLoading); \
                 the JVM's standard error says which"
            ),
        },
        Refusal::Jcmd(message) => message,
    })?;
    Note::write(pid, output, duration)
        .map_err(|e| format!("recording, but cannot note it for detach: {e}"))?;
    Ok(())
}

/// Stops the recording in JVM `pid`, which finishes its file before jcmd
/// returns; with `collect`, after a forced collection. Returns the
/// recording's path when `attach` noted it.
pub fn detach(
    jcmd: &Path,
    pid: u32,
    agent: &Path,
    collect: bool,
) -> Result<Option<PathBuf>, String> {
    let note = Note::read(pid);
    let stopped = load(
        jcmd,
        pid,
        agent,
        &with_collect(name::STOP.to_owned(), collect),
    );
    // Stopped now or by itself before: either way the note is done with.
    if !matches!(stopped, Err(Refusal::Jcmd(_))) {
        let _ = std::fs::remove_file(note_path(pid));
    }
    stopped.map_err(|refused| match refused {
        Refusal::Agent => match note.as_ref().and_then(|n| Some((n, n.ended_by_itself()?))) {
            Some((note, duration)) => format!(
                "JVM {pid} has no heapsampler recording running: the recording to {} \
                 stopped by itself after its --duration of {}, and its file is finished",
                note.recording,
                describe(duration)
            ),
            None => format!("JVM {pid} has no heapsampler recording running"),
        },
        Refusal::Jcmd(message) => message,
    })?;
    Ok(note.map(|note| PathBuf::from(note.recording)))
}

/// Asks the recording in JVM `pid` for a snapshot in `output` (absolute),
/// which is written before jcmd returns; with `collect`, after a forced
/// collection.
pub fn dump(
    jcmd: &Path,
    pid: u32,
    agent: &Path,
    output: &Path,
    collect: bool,
) -> Result<(), String> {
    let options = with_collect(format!("{}={}", name::DUMP, output.display()), collect);
    heapsampler_core::options::Options::parse(Some(&options), std::process::id())
        .map_err(|e| e.to_string())?;
    load(jcmd, pid, agent, &options).map_err(|refused| match refused {
        Refusal::Agent => format!(
            "JVM {pid} wrote no snapshot to {}: no heapsampler recording is running there, \
             or the snapshot failed; the JVM's standard error says which",
            output.display()
        ),
        Refusal::Jcmd(message) => message,
    })
}

/// The agent's `options`, with `collect=true` when asked for (left out
/// otherwise: the agent's own default then holds).
fn with_collect(options: String, collect: bool) -> String {
    if collect {
        format!("{options},{}=true", name::COLLECT)
    } else {
        options
    }
}

/// Why a load failed.
enum Refusal {
    /// The agent returned an error (its reason is on the JVM's stderr).
    Agent,
    /// jcmd could not do it; the message says why.
    Jcmd(String),
}

fn load(jcmd: &Path, pid: u32, agent: &Path, options: &str) -> Result<(), Refusal> {
    // JDK 17's jcmd splits `name=value` into its own arguments unless the
    // agent's options are quoted once more.
    let quoted = format!("\"{options}\"");
    let text = run_jcmd(
        jcmd,
        pid,
        &[
            "JVMTI.agent_load".as_ref(),
            agent.as_os_str(),
            quoted.as_ref(),
        ],
    )
    .map_err(Refusal::Jcmd)?;
    if text.contains("return code: 0") {
        return Ok(());
    }
    if text.contains("return code: ") {
        return Err(Refusal::Agent);
    }
    Err(Refusal::Jcmd(jcmd_failure(pid, &text)))
}

/// The heapsampler agent that announces itself in JVM `pid`
/// ([`Announcement`]), and its recording if one runs, read from the JVM's
/// system properties; `None` when none is announced.
pub fn announced(jcmd: &Path, pid: u32) -> Result<Option<Announcement>, String> {
    let text = run_jcmd(jcmd, pid, &["VM.system_properties".as_ref()])?;
    // `KEY=VALUE` lines as `Properties.store` writes them, after jcmd's own
    // `PID:` line and the store's `#date` comment.
    let properties: Vec<(&str, &str)> = text
        .lines()
        .filter_map(|line| line.split_once('='))
        .collect();
    if properties.is_empty() {
        return Err(jcmd_failure(pid, &text));
    }
    Ok(Announcement::from_properties(|name| {
        properties
            .iter()
            .find(|(key, _)| *key == name)
            .map(|(_, value)| unescape_property(value))
    }))
}

/// A value as `Properties.store` escaped it: `\\`, `\=`, `\:`, `\#`,
/// `\!`, `\t`, `\n`, `\r`, `\f` and `\uXXXX` (UTF-16, so a character
/// past the first 65,536 is two).
fn unescape_property(value: &str) -> String {
    let mut units: Vec<u16> = Vec::with_capacity(value.len());
    let mut chars = value.chars();
    while let Some(c) = chars.next() {
        let unescaped = if c != '\\' {
            c
        } else {
            match chars.next() {
                Some('t') => '\t',
                Some('n') => '\n',
                Some('r') => '\r',
                Some('f') => '\u{c}',
                Some('u') => {
                    let hex: String = chars.by_ref().take(4).collect();
                    if let Ok(unit) = u16::from_str_radix(&hex, 16) {
                        units.push(unit);
                    }
                    continue;
                }
                Some(other) => other,
                None => break,
            }
        };
        units.extend(unescaped.encode_utf16(&mut [0; 2]).iter());
    }
    char::decode_utf16(units)
        .map(|c| c.unwrap_or(char::REPLACEMENT_CHARACTER))
        .collect()
}

/// `jcmd PID ARGS...`: what it printed, or why it could not run.
fn run_jcmd(jcmd: &Path, pid: u32, args: &[&std::ffi::OsStr]) -> Result<String, String> {
    let output = Command::new(jcmd)
        .arg(pid.to_string())
        .args(args)
        .output()
        .map_err(|e| format!("cannot run {}: {e}", jcmd.display()))?;
    Ok(format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    ))
}

/// Why jcmd, which printed `text`, could not do what it was asked in JVM
/// `pid`.
fn jcmd_failure(pid: u32, text: &str) -> String {
    // JDK 17's jcmd says "No such process", JDK 25's "non existent JVM pid".
    if ["No such process", "Could not find", "non existent JVM pid"]
        .iter()
        .any(|says| text.contains(says))
    {
        format!("no JVM with pid {pid} that this user may attach to")
    } else if text.contains("AttachNotSupportedException") || text.contains("Unable to open socket")
    {
        format!(
            "JVM {pid} does not accept attaching: it runs with -XX:+DisableAttachMechanism, or \
             as another user (attach as the JVM's user)"
        )
    } else if text.contains("Dynamic agent loading is not enabled") {
        format!(
            "JVM {pid} forbids loading agents at run time: start it with -XX:+EnableDynamicAgentLoading"
        )
    } else {
        let first = text
            .lines()
            .map(str::trim)
            .find(|line| !line.is_empty() && !line.starts_with(&format!("{pid}:")))
            .unwrap_or("no output");
        format!("jcmd could not reach JVM {pid}: {first}")
    }
}
