//! `heapsampler attach PID`, `detach PID` and `dump PID`: start, stop and
//! snapshot a recording in a running JVM with `jcmd PID JVMTI.agent_load`.
//!
//! The agent's own messages go to the JVM's standard error, not back
//! through jcmd, which only prints the agent's return code. So the options
//! are checked here before attaching, and `attach` leaves a note (in the
//! temporary directory, named after the pid) of where the recording goes,
//! for `detach` to report it.

use std::path::{Path, PathBuf};
use std::process::Command;

/// Where `attach` notes the recording's path for `detach`.
fn note_path(pid: u32) -> PathBuf {
    std::env::temp_dir().join(format!("heapsampler-attach-{pid}"))
}

/// Starts a recording in JVM `pid` with the agent's `options` (which name
/// the file, absolute: the JVM's working directory is not ours).
pub fn attach(
    jcmd: &Path,
    pid: u32,
    agent: &Path,
    options: &str,
    output: &Path,
) -> Result<(), String> {
    load(jcmd, pid, agent, options).map_err(|refused| match refused {
        Refusal::Agent => match std::fs::read_to_string(note_path(pid)) {
            Ok(running) => format!(
                "a recording is already running in JVM {pid} (to {running}); stop it first \
                 with `heapsampler detach {pid}`"
            ),
            Err(_) => format!(
                "JVM {pid} refused the agent: a recording started another way may be running, \
                 or the JVM forbids loading agents at run time (-XX:-EnableDynamicAgentLoading); \
                 the JVM's standard error says which"
            ),
        },
        Refusal::Jcmd(message) => message,
    })?;
    std::fs::write(note_path(pid), output.display().to_string())
        .map_err(|e| format!("recording, but cannot note it for detach: {e}"))?;
    Ok(())
}

/// Stops the recording in JVM `pid`, which finishes its file before jcmd
/// returns. Returns the recording's path when `attach` noted it.
pub fn detach(jcmd: &Path, pid: u32, agent: &Path) -> Result<Option<PathBuf>, String> {
    load(jcmd, pid, agent, "stop").map_err(|refused| match refused {
        Refusal::Agent => format!("JVM {pid} has no heapsampler recording running"),
        Refusal::Jcmd(message) => message,
    })?;
    let note = note_path(pid);
    let output = std::fs::read_to_string(&note).ok().map(PathBuf::from);
    let _ = std::fs::remove_file(note);
    Ok(output)
}

/// Asks the recording in JVM `pid` for a snapshot in `output` (absolute),
/// which is written before jcmd returns.
pub fn dump(jcmd: &Path, pid: u32, agent: &Path, output: &Path) -> Result<(), String> {
    let options = format!("dump={}", output.display());
    heapsampler_core::options::Options::parse(Some(&options), std::process::id())
        .map_err(|e| e.to_string())?;
    load(jcmd, pid, agent, &options).map_err(|refused| match refused {
        Refusal::Agent => format!(
            "JVM {pid} wrote no snapshot to {}: no heapsampler recording is running there,              or the snapshot failed; the JVM's standard error says which",
            output.display()
        ),
        Refusal::Jcmd(message) => message,
    })
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
    let output = Command::new(jcmd)
        .arg(pid.to_string())
        .arg("JVMTI.agent_load")
        .arg(agent)
        .arg(format!("\"{options}\""))
        .output()
        .map_err(|e| Refusal::Jcmd(format!("cannot run {}: {e}", jcmd.display())))?;
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    if text.contains("return code: 0") {
        return Ok(());
    }
    if text.contains("return code: ") {
        return Err(Refusal::Agent);
    }
    // JDK 17's jcmd says "No such process", JDK 25's "non existent JVM pid".
    let reason = if ["No such process", "Could not find", "non existent JVM pid"]
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
        format!("jcmd could not load the agent into JVM {pid}: {first}")
    };
    Err(Refusal::Jcmd(reason))
}
