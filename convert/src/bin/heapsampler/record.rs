//! `heapsampler record -- java ...`: runs a Java program with the agent and
//! says where the recording is and what it holds.

use std::path::{Path, PathBuf};
use std::process::Command;

use heapsampler_cli::analysis::liveness::{Ending, ReadEnding};
use heapsampler_cli::analysis::summary::{Summarize, Summary};
use heapsampler_cli::analysis::top::{GroupBy, Grouping, Groups, Query};
use heapsampler_cli::output::human::human_bytes;
use heapsampler_cli::output::text;
use heapsampler_cli::pipeline::Pipeline;
use jfr_format::names::event;
use jfr_reader::file::RecordingFile;

use heapsampler_core::options::{PID, name, with_process_id};

use crate::args::Sampling;

/// The live sites a report shows for a JVM that ran out of heap.
const EXHAUSTED_LIVE_ROWS: usize = 5;

/// The agent's option string for a recording with `sampling`'s options,
/// checked by the agent's own parser so that a bad value is reported here,
/// not on the JVM's stderr.
fn agent_options(
    sampling: &Sampling,
    output: &Path,
    more: &[(&str, String)],
) -> Result<String, String> {
    let options = option_string(output, sampling, more)?;
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
    let duration = duration.map(|d| (name::DURATION, d.to_owned()));
    let options = option_string(output, sampling, duration.as_slice())?;
    let parsed = heapsampler_core::options::Options::parse(Some(&options), std::process::id())
        .map_err(|e| e.to_string())?;
    Ok((options, parsed.duration))
}

/// The agent's option string for a recording of `sampling`'s options into
/// `output`, and `more`. A value holding a comma is refused: the agent's
/// options are separated by commas, so it would cut the value short and
/// pass the rest as another option.
pub fn option_string(
    output: &Path,
    sampling: &Sampling,
    more: &[(&str, String)],
) -> Result<String, String> {
    let mut options = vec![
        (name::FILE, output.display().to_string()),
        (name::INTERVAL, sampling.interval.clone()),
        (name::DEPTH, sampling.depth.to_string()),
        (name::LIVE, (!sampling.no_live).to_string()),
    ];
    if let Some(rate) = sampling.rate {
        options.push((name::RATE, rate.to_string()));
    }
    if sampling.keep_hidden_frames {
        options.push((name::HIDDEN, "true".to_owned()));
    }
    if sampling.no_environment {
        options.push((name::ENVIRONMENT, "false".to_owned()));
    }
    if sampling.old_objects != heapsampler_core::options::DEFAULT_OLD_OBJECTS {
        options.push((name::OLD_OBJECTS, sampling.old_objects.to_string()));
    }
    if let Some(size) = &sampling.bounds.max_size {
        options.push((name::MAXSIZE, size.clone()));
    }
    if let Some(age) = &sampling.bounds.max_age {
        options.push((name::MAXAGE, age.clone()));
    }
    if let Some(size) = &sampling.bounds.chunk_size {
        options.push((name::CHUNK_SIZE, size.clone()));
    }
    if let Some(age) = &sampling.bounds.chunk_age {
        options.push((name::CHUNK_AGE, age.clone()));
    }
    let watch = &sampling.watch;
    if watch.no_watch {
        options.push((name::WATCH, "false".to_owned()));
    }
    for (option, value) in [
        (name::ON_LEAK, &watch.on_leak),
        (name::ON_PEAK, &watch.on_peak),
        (name::PEAK_SHARE, &watch.peak_share),
        (name::AUTO_DUMP_EVERY, &watch.auto_dump_every),
    ] {
        if let Some(value) = value {
            options.push((option, value.clone()));
        }
    }
    if let Some(path) = &watch.auto_dump {
        // The JVM's working directory may not be this one (attach).
        let path = std::path::absolute(path).unwrap_or_else(|_| path.clone());
        options.push((name::AUTO_DUMP, path.display().to_string()));
    }
    let roots = &sampling.roots;
    if roots.roots {
        options.push((name::ROOTS, "true".to_owned()));
        if let Some(depth) = roots.roots_depth {
            options.push((name::ROOTS_DEPTH, depth.to_string()));
        }
        if let Some(time) = &roots.roots_time {
            options.push((name::ROOTS_TIME, time.clone()));
        }
    }
    options.extend(more.iter().cloned());
    if let Some((option, value)) = options.iter().find(|(_, value)| value.contains(',')) {
        let what = if *option == name::FILE {
            "the recording's path"
        } else {
            "a value"
        };
        return Err(format!(
            "bad option '{option}={value}': {what} cannot hold a comma, which separates the \
             agent's options"
        ));
    }
    Ok(options
        .iter()
        .map(|(name, value)| format!("{name}={value}"))
        .collect::<Vec<_>>()
        .join(","))
}

/// The recordings that a path with `%p` names, with the process id each
/// holds in its name: those new or changed since
/// [`Recordings::existing`] looked.
struct Recordings {
    pattern: PathBuf,
    seen: Vec<(PathBuf, Option<std::time::SystemTime>)>,
}

impl Recordings {
    /// The files that `pattern` names now, to tell the run's own from.
    fn existing(pattern: &Path) -> Self {
        let seen = Self::matching(pattern)
            .into_iter()
            .map(|(path, _)| {
                let modified = std::fs::metadata(&path).and_then(|m| m.modified()).ok();
                (path, modified)
            })
            .collect();
        Self {
            pattern: pattern.to_owned(),
            seen,
        }
    }

    /// The files that `pattern` names that are new or changed since
    /// [`existing`](Self::existing), with their process ids, in order.
    fn written(&self) -> Vec<(PathBuf, Option<u32>)> {
        Self::matching(&self.pattern)
            .into_iter()
            .filter(|(path, _)| {
                let modified = std::fs::metadata(path).and_then(|m| m.modified()).ok();
                !self
                    .seen
                    .iter()
                    .any(|(seen, at)| seen == path && *at == modified)
            })
            .map(|(path, pid)| (path, Some(pid)))
            .collect()
    }

    /// Every file in the pattern's folder whose name is the pattern's with
    /// a number for each `%p`, all the same; sorted by that number.
    fn matching(pattern: &Path) -> Vec<(PathBuf, u32)> {
        let dir = match pattern.parent() {
            Some(dir) if !dir.as_os_str().is_empty() => dir,
            _ => Path::new("."),
        };
        let Some(name) = pattern.file_name().and_then(|name| name.to_str()) else {
            return Vec::new();
        };
        let parts: Vec<&str> = name.split(PID).collect();
        let Ok(entries) = std::fs::read_dir(dir) else {
            return Vec::new();
        };
        let mut found: Vec<(PathBuf, u32)> = entries
            .filter_map(|entry| {
                let file = entry.ok()?.file_name().into_string().ok()?;
                let pid = pid_in(&file, &parts)?;
                Some((dir.join(file), pid))
            })
            .collect();
        found.sort_by_key(|&(_, pid)| pid);
        found
    }
}

/// A file moved out of the way of a run, to be put back if the run
/// writes none in its place.
struct SetAside {
    aside: PathBuf,
}

/// Moves `path` to a hidden name beside it.
fn set_aside(path: &Path) -> Result<SetAside, String> {
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    let aside = path.with_file_name(format!(".{name}.{}.earlier", std::process::id()));
    std::fs::rename(path, &aside)
        .map_err(|e| format!("cannot move the earlier {} aside: {e}", path.display()))?;
    Ok(SetAside { aside })
}

impl SetAside {
    /// Puts the file back at `path` if nothing took its place, else
    /// removes it (the run's file replaces it, as a new recording does).
    fn settle(self, path: &Path) {
        let _ = if path.exists() {
            std::fs::remove_file(&self.aside)
        } else {
            std::fs::rename(&self.aside, path)
        };
    }
}

/// The process id that `file` holds where `parts` (a name cut at each
/// `%p`) has a `%p`, the same number at each.
fn pid_in(file: &str, parts: &[&str]) -> Option<u32> {
    let (first, rest) = parts.split_first()?;
    let mut left = file.strip_prefix(first)?;
    let mut pid = None;
    for part in rest {
        let digits = left.bytes().take_while(u8::is_ascii_digit).count();
        let number: u32 = left[..digits].parse().ok()?;
        if pid.is_some_and(|pid| pid != number) {
            return None;
        }
        pid = Some(number);
        left = left[digits..].strip_prefix(part)?;
    }
    left.is_empty().then_some(pid?)
}

/// What a `record` run left.
pub struct RecordRun {
    /// The command's exit code (128 + signal if a signal ended it).
    pub code: i32,
    /// The recordings its JVMs wrote, the first to start's first: each
    /// with its process id when its name holds it.
    pub recordings: Vec<(PathBuf, Option<u32>)>,
    /// The names the JVMs were given: `%p` where each puts its process id.
    pub named: PathBuf,
}

impl RecordRun {
    /// The recordings of JVMs that run on after the command (a daemon it
    /// started), with their process ids.
    pub fn still_running(&self) -> impl Iterator<Item = (&Path, u32)> {
        self.recordings.iter().filter_map(|(recording, pid)| {
            let pid = (*pid)?;
            Path::new(&format!("/proc/{pid}"))
                .exists()
                .then_some((recording.as_path(), pid))
        })
    }
}

/// Runs `program` (any command: `java`, `javac`, `mvn`, a script) with
/// the agent given to every JVM it starts, through `JAVA_TOOL_OPTIONS`
/// (added to what the environment has there already), which each JVM
/// reads as it starts. Each JVM records to a file of its own: the first to
/// start to `output` itself (`exclusive=true`), each later one with its
/// process id in the name ([`with_process_id`]); with `%p` in `output`,
/// every one by its process id.
pub fn run(
    agent: &Path,
    sampling: &Sampling,
    output: &Path,
    program: &[String],
) -> Result<RecordRun, String> {
    let (command, args) = program
        .split_first()
        .ok_or("no program to run: give one after --, such as `-- java -jar app.jar`")?;
    // Absolute for the JVMs, as a script may change its folder before it
    // starts one; as given for what is said here.
    let absolute = std::path::absolute(output).map_err(|e| format!("{}: {e}", output.display()))?;
    let each_by_pid = output.to_string_lossy().contains(PID);
    let (options, named) = if each_by_pid {
        (agent_options(sampling, &absolute, &[])?, output.to_owned())
    } else {
        let exclusive = [(name::EXCLUSIVE, "true".to_owned())];
        (
            agent_options(sampling, &absolute, &exclusive)?,
            with_process_id(output, PID),
        )
    };
    let tool_options = tool_options(
        std::env::var_os(JAVA_TOOL_OPTIONS).as_deref(),
        &format!("-agentpath:{}={options}", agent.display()),
    )?;
    let before = Recordings::existing(&named);
    // An earlier run's file would take the name from the first JVM: set
    // aside, and put back if no JVM writes one.
    let earlier = (!each_by_pid && output.exists())
        .then(|| set_aside(output))
        .transpose()?;
    let status = Command::new(command)
        .args(args)
        .env(JAVA_TOOL_OPTIONS, tool_options)
        .status();
    if let Some(earlier) = earlier {
        earlier.settle(output);
    }
    let status = status.map_err(|e| format!("cannot run {command}: {e}"))?;
    let mut recordings = before.written();
    if !each_by_pid && output.exists() {
        recordings.insert(0, (output.to_owned(), None));
    }
    use std::os::unix::process::ExitStatusExt;
    Ok(RecordRun {
        code: status
            .code()
            .unwrap_or_else(|| 128 + status.signal().unwrap_or(0)),
        recordings,
        named,
    })
}

/// The variable every JVM reads its extra options from as it starts,
/// whatever launched it.
const JAVA_TOOL_OPTIONS: &str = "JAVA_TOOL_OPTIONS";

/// `existing` `JAVA_TOOL_OPTIONS` with `option` added, quoted as the JVM
/// splits the variable: at white space, outside single or double quotes.
fn tool_options(existing: Option<&std::ffi::OsStr>, option: &str) -> Result<String, String> {
    let quoted = if !option.contains(|c: char| c.is_whitespace() || c == '\'' || c == '"') {
        option.to_owned()
    } else if !option.contains('\'') {
        format!("'{option}'")
    } else if !option.contains('"') {
        format!("\"{option}\"")
    } else {
        return Err(format!(
            "cannot give the agent to the JVMs through {JAVA_TOOL_OPTIONS}: {option} holds \
             both kinds of quote"
        ));
    };
    let existing = existing
        .map(|existing| {
            existing.to_str().map(str::to_owned).ok_or_else(|| {
                format!("{JAVA_TOOL_OPTIONS} is not text: cannot add the agent to it")
            })
        })
        .transpose()?;
    Ok(match existing.as_deref().map(str::trim) {
        Some(existing) if !existing.is_empty() => format!("{existing} {quoted}"),
        _ => quoted,
    })
}

/// Lines about a finished recording: where, how much, the top site (named
/// as `top --by app-site` and the demo's table name it: the first frame
/// outside the JDK), and what live means in it. When its JVM ran out of
/// heap, a line that says so and the top live sites.
pub fn report(path: &Path) -> Result<String, String> {
    let query = |live| Query {
        by: GroupBy::AppSite,
        live,
        min_gcs: 0,
    };
    // One pass: the summary, what was allocated, what is live, and what
    // live means.
    let (allocated, live) = (query(false), query(true));
    let file = RecordingFile::open(path).map_err(|e| e.to_string())?;
    let ran = Pipeline::default()
        .run(
            file,
            &(
                Summarize,
                (Grouping::new(allocated), (Grouping::new(live), ReadEnding)),
            ),
            (
                Summary::default(),
                (
                    Groups::new(allocated),
                    (Groups::new(live), Ending::default()),
                ),
            ),
            &mut |_| {},
        )
        .map_err(|e| e.to_string())?;
    let (summary, (sites, (live_sites, ending))) = ran.merged;
    let (sites, live_sites) = (sites.table(), live_sites.table());
    let samples = summary
        .types
        .get(event::OBJECT_ALLOCATION_SAMPLE)
        .map_or(0, |t| t.count);
    let seconds = match (summary.start_nanos, summary.end_nanos) {
        (Some(start), Some(end)) => (end - start) as f64 / 1e9,
        _ => 0.0,
    };
    let allocated = sites.total.bytes();
    let live = live_sites.total.bytes();
    let mut lines = vec![
        format!(
            "recording: {} ({:.1} s, {} chunk(s))",
            path.display(),
            seconds,
            summary.chunks
        ),
        format!(
            "{samples} allocation samples: about {} allocated, {} still live at the end",
            human_bytes(allocated),
            human_bytes(live)
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
    // Where a leak shows first: the site that holds the most of what is live.
    if let Some(site) = live_sites.entries.first().filter(|_| live > 0.0) {
        lines.push(format!(
            "top live site: {} ({}, {:.0}% of the live bytes); more with `heapsampler top {} \
             --live --by app-site`",
            site.key,
            human_bytes(site.bytes()),
            100.0 * site.bytes() / live,
            path.display()
        ));
    }
    if let Some(exhausted) = ending.exhaustion_statement() {
        lines.push(exhausted);
        lines.push(format!(
            "still live at the end, by the first frame outside the JDK (`heapsampler top {} \
             --live --by app-site`):",
            path.display()
        ));
        lines.extend(
            text::top::render(&live_sites, EXHAUSTED_LIVE_ROWS)
                .lines()
                .map(str::to_owned),
        );
    }
    // A recording without liveness (--no-live) has nothing live to explain.
    if live_sites.events > 0 {
        lines.push(ending.live_statement(&live_sites.tracking));
    }
    Ok(lines.join("\n"))
}
