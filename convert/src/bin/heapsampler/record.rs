//! `heapsampler record -- java ...`: runs a Java program with the agent and
//! says where the recording is and what it holds.

use std::path::{Path, PathBuf};
use std::process::Command;

use heapsampler_convert::summary::summarize;
use heapsampler_convert::top::{self, GroupBy, Query};
use jfr_writer::format::names::event;

use crate::args::Sampling;

/// The agent library's file name.
const AGENT_FILE: &str = "libheapsampler.so";

/// Finds the agent: `--agent`, then `$HEAPSAMPLER_AGENT`, then next to this
/// executable (where `cargo build --release` puts both).
pub fn find_agent(explicit: Option<&Path>) -> Result<PathBuf, String> {
    if let Some(path) = explicit {
        // Asked for by name: that one or an error, never a fallback.
        return if path.is_file() {
            Ok(path.to_owned())
        } else {
            Err(format!("--agent {}: no such file", path.display()))
        };
    }
    let candidates: Vec<PathBuf> = std::env::var_os("HEAPSAMPLER_AGENT")
        .map(PathBuf::from)
        .into_iter()
        .chain(
            std::env::current_exe()
                .ok()
                .and_then(|exe| Some(exe.parent()?.join(AGENT_FILE))),
        )
        .collect();
    candidates
        .iter()
        .find(|p| p.is_file())
        .cloned()
        .ok_or_else(|| {
            format!(
                "cannot find {AGENT_FILE} (looked at {}): build it with `cargo build --release`, \
             or give its path with --agent or HEAPSAMPLER_AGENT",
                candidates
                    .iter()
                    .map(|p| p.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        })
}

/// The agent's option string for a recording with `sampling`'s options,
/// checked by the agent's own parser so that a bad value is reported here,
/// not on the JVM's stderr.
pub fn agent_options(sampling: &Sampling, output: &Path) -> Result<String, String> {
    let options = option_string(output, sampling);
    heapsampler_core::options::Options::parse(Some(&options), std::process::id())
        .map_err(|e| e.to_string())?;
    Ok(options)
}

/// The agent's option string for `attach`: `sampling`'s options and, with
/// `duration` (`--duration`), the agent's `duration=`, checked by the
/// agent's own parser; and the duration as it parsed it.
pub fn attach_options(
    sampling: &Sampling,
    output: &Path,
    duration: Option<&str>,
) -> Result<(String, Option<std::time::Duration>), String> {
    let mut options = option_string(output, sampling);
    if let Some(duration) = duration {
        // A comma would smuggle in another option.
        if duration.contains(',') {
            return Err(format!(
                "bad option 'duration={duration}': expected {}",
                heapsampler_core::options::DURATION
            ));
        }
        options.push_str(&format!(",duration={duration}"));
    }
    let parsed = heapsampler_core::options::Options::parse(Some(&options), std::process::id())
        .map_err(|e| e.to_string())?;
    Ok((options, parsed.duration))
}

/// The agent's option string for a recording.
pub fn option_string(output: &Path, sampling: &Sampling) -> String {
    let mut options = format!(
        "file={},interval={},depth={},live={}",
        output.display(),
        sampling.interval,
        sampling.depth,
        !sampling.no_live
    );
    if let Some(rate) = sampling.rate {
        options.push_str(&format!(",rate={rate}"));
    }
    if sampling.keep_hidden_frames {
        options.push_str(",hidden=true");
    }
    if sampling.old_objects != heapsampler_core::options::DEFAULT_OLD_OBJECTS {
        options.push_str(&format!(",old_objects={}", sampling.old_objects));
    }
    if let Some(size) = &sampling.bounds.max_size {
        options.push_str(&format!(",maxsize={size}"));
    }
    if let Some(age) = &sampling.bounds.max_age {
        options.push_str(&format!(",maxage={age}"));
    }
    let roots = &sampling.roots;
    if roots.roots {
        options.push_str(",roots=true");
        if let Some(depth) = roots.roots_depth {
            options.push_str(&format!(",roots_depth={depth}"));
        }
        if let Some(time) = &roots.roots_time {
            options.push_str(&format!(",roots_time={time}"));
        }
    }
    options
}

/// Runs `program` (a `java` command line) with the agent; returns the
/// program's exit code (128 + signal if a signal ended it).
pub fn run(agent: &Path, options: &str, program: &[String]) -> Result<i32, String> {
    let (java, args) = program
        .split_first()
        .ok_or("no program to run: give one after --, such as `-- java -jar app.jar`")?;
    let status = Command::new(java)
        .arg(format!("-agentpath:{}={options}", agent.display()))
        .args(args)
        .status()
        .map_err(|e| format!("cannot run {java}: {e}"))?;
    use std::os::unix::process::ExitStatusExt;
    Ok(status
        .code()
        .unwrap_or_else(|| 128 + status.signal().unwrap_or(0)))
}

/// Three lines about a finished recording: where, how much, and the top
/// site, named as `top --by app-site` and the demo's table name it: the
/// first frame outside the JDK.
pub fn report(path: &Path) -> Result<String, String> {
    let summary = summarize(path).map_err(|e| e.to_string())?;
    let samples = summary
        .types
        .get(event::OBJECT_ALLOCATION_SAMPLE)
        .map_or(0, |t| t.count);
    let seconds = match (summary.start_nanos, summary.end_nanos) {
        (Some(start), Some(end)) => (end - start) as f64 / 1e9,
        _ => 0.0,
    };
    let query = |live| Query {
        by: GroupBy::AppSite,
        live,
        min_gcs: 0,
    };
    let sites = top::top(path, query(false)).map_err(|e| e.to_string())?;
    let allocated = sites.total.bytes();
    let live = top::top(path, query(true))
        .map_err(|e| e.to_string())?
        .total
        .bytes();
    let mut lines = vec![
        format!(
            "recording: {} ({:.1} s, {} chunk(s))",
            path.display(),
            seconds,
            summary.chunks
        ),
        format!(
            "{samples} allocation samples: about {} allocated, {} still live at the end",
            top::human_bytes(allocated),
            top::human_bytes(live)
        ),
    ];
    lines.push(match sites.entries.first() {
        Some(site) if allocated > 0.0 => {
            format!(
                "top allocation site: {} ({:.0}%, the first frame outside the JDK); more with \
                 `heapsampler top {} --by app-site`",
                site.key,
                100.0 * site.bytes() / allocated,
                path.display()
            )
        }
        _ => "no allocation was sampled".to_owned(),
    });
    Ok(lines.join("\n"))
}
