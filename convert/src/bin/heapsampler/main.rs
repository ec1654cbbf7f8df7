//! `heapsampler`, the command line: one entry point for recording,
//! converting and summarising heap-allocation recordings.
//!
//! `main` parses the arguments ([`args`]), [`run`]s the command, and turns
//! its outcome into an exit code in one place: 0 success, 1 bad input (a
//! file, a JVM or an output that fails), 2 bad usage (clap's own exit code
//! for arguments it rejects, and ours for options that contradict each
//! other). `record` passes the program's exit code through.
//!
//! - [`args`]: the commands and options, with their help.
//! - [`record`](mod@record): `record -- java ...`, finding the agent, and the report
//!   after a recording.
//! - [`attach`](mod@attach): `attach PID` and `detach PID`, through jcmd.
//! - [`watch`](mod@watch): `watch PID`, the live view on a terminal.
//! - [`demo`]: the bundled workload recorded and looked at.
//! - [`convert`](mod@convert): `convert` and `flame`, into files.
//! - [`progress`]: progress of long reads on a terminal.
//! - [`jdk`]: finding the JDK's tools.
//!
//! Reading recordings and making something of them is the library's
//! (`heapsampler_cli`), which creates no file and prints nothing: the
//! paths, the files, the progress and every message are here.

mod agent;
mod args;
mod attach;
mod convert;
mod demo;
mod jdk;
mod progress;
mod record;
mod watch;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Parser;
use heapsampler_cli::Error;
use heapsampler_cli::analysis::diff;
use heapsampler_cli::analysis::leaks::{self, Pass};
use heapsampler_cli::analysis::liveness::{Ending, ReadEnding};
use heapsampler_cli::analysis::summary::summarize;
use heapsampler_cli::analysis::top::{GroupBy, Grouping, Groups, Query, Table};
use heapsampler_cli::model::process;
use heapsampler_cli::output::flame::{self, Weight};
use heapsampler_cli::output::text;
use heapsampler_cli::pipeline::Pipeline;
use heapsampler_core::announcement::Announcement;
use jfr_reader::file::RecordingFile;

use args::{Cli, Command, Sampling};
use progress::Progress;

/// Why a command failed: the line to print, and so the exit code.
#[derive(Debug)]
enum Failure {
    /// The options contradict each other.
    Usage(String),
    /// A JVM, jcmd, the agent or an output failed.
    Failed(String),
    /// A recording could not be read, or made something of.
    Recording(Error),
    /// Standard output's reader went away (`| head`): nothing to say.
    Closed,
}

impl Failure {
    /// The exit code: 2 for bad usage (as clap's own for arguments it
    /// rejects), 1 for everything else.
    fn exit_code(&self) -> ExitCode {
        match self {
            Self::Usage(_) => ExitCode::from(2),
            Self::Failed(_) | Self::Recording(_) => ExitCode::from(1),
            // As a program killed by SIGPIPE would not, but as `rg` and
            // `jq` do: the reader has what it wanted.
            Self::Closed => ExitCode::SUCCESS,
        }
    }
}

impl Failure {
    /// Whether standard output's reader went away: here, or while the
    /// library wrote a conversion there.
    fn is_closed(&self) -> bool {
        match self {
            Self::Closed => true,
            Self::Recording(error) => {
                std::iter::successors(Some(error as &dyn std::error::Error), |e| e.source())
                    .filter_map(|e| e.downcast_ref::<std::io::Error>())
                    .any(|e| e.kind() == std::io::ErrorKind::BrokenPipe)
            }
            Self::Usage(_) | Self::Failed(_) => false,
        }
    }
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Usage(message) | Self::Failed(message) => f.write_str(message),
            Self::Recording(error) => error.fmt(f),
            Self::Closed => f.write_str("standard output was closed"),
        }
    }
}

impl From<String> for Failure {
    fn from(message: String) -> Self {
        Self::Failed(message)
    }
}

impl From<Error> for Failure {
    fn from(error: Error) -> Self {
        Self::Recording(error)
    }
}

/// Writes `text` to standard output, where tables and reports go.
fn out(text: impl std::fmt::Display) -> Result<(), Failure> {
    use std::io::Write as _;
    write!(std::io::stdout().lock(), "{text}").map_err(|error| writing_stdout(&error))
}

/// Writing to standard output failed: [`Failure::Closed`] if its reader
/// went away.
fn writing_stdout(error: &std::io::Error) -> Failure {
    match error.kind() {
        std::io::ErrorKind::BrokenPipe => Failure::Closed,
        _ => Failure::Failed(format!("writing to standard output: {error}")),
    }
}

/// A line on standard error, as every message of ours is: `heapsampler: ...`.
fn say(message: impl std::fmt::Display) {
    use std::io::Write as _;
    // Not eprintln!, which panics when standard error is gone (the terminal
    // of `watch` hung up): the message is lost, what follows it is not.
    let _ = writeln!(std::io::stderr().lock(), "heapsampler: {message}");
}

fn main() -> ExitCode {
    match run(Cli::parse()) {
        Ok(code) => code,
        Err(failure) if failure.is_closed() => Failure::Closed.exit_code(),
        Err(failure) => {
            say(&failure);
            failure.exit_code()
        }
    }
}

/// Runs the command; the exit code of success is 0 but for `record`.
fn run(cli: Cli) -> Result<ExitCode, Failure> {
    match cli.command {
        Command::Record {
            output,
            sampling,
            program,
        } => return record(&output, &sampling, &program),
        Command::Attach {
            pid,
            output,
            duration,
            sampling,
            jcmd,
        } => attach(pid, output, duration.as_deref(), &sampling, jcmd.as_deref())?,
        Command::Detach {
            pid,
            collect,
            agent,
            jcmd,
        } => detach(pid, collect, agent.as_deref(), jcmd.as_deref())?,
        Command::Dump {
            target,
            output,
            collect,
            agent,
            jcmd,
        } => dump(&target, &output, collect, agent.as_deref(), jcmd.as_deref())?,
        Command::Watch {
            pid,
            output,
            every,
            keep_recording,
            sampling,
            jcmd,
        } => {
            let options = watch::Options {
                pid,
                output,
                every,
                keep_recording,
            };
            watch::run(&options, &sampling, jcmd.as_deref())?
        }
        Command::Demo {
            dir,
            seconds,
            grace,
            agent,
        } => demo::run(
            &dir,
            seconds,
            std::time::Duration::from_secs(grace),
            agent.as_deref(),
        )?,
        Command::Summary { file } => summary(&file)?,
        Command::Leaks { file, by, limit } => leaks(&file, by.into(), limit)?,
        Command::Report { file, output, by } => {
            let options = convert::ReportOptions {
                output,
                by: by.into(),
            };
            let reported = convert::report(&file, &options)?;
            say(&reported.verdict);
            say(format!(
                "wrote {}: open it in a browser",
                reported.output.display()
            ));
        }
        Command::Top {
            file,
            question,
            limit,
        } => top(&file, (&question).into(), limit)?,
        Command::Diff {
            base,
            new,
            question,
            limit,
        } => diff(&base, &new, (&question).into(), limit)?,
        Command::Convert {
            file,
            output,
            events,
            stack_depth,
            format,
            filters,
            threads,
            no_class_frame,
        } => {
            let options = convert::Options {
                output,
                events,
                stack_depth,
                format,
                filter: filters.into(),
                threads,
                class_frame: !no_class_frame,
            };
            let converted = convert::convert(&file, &options)?;
            for warning in convert::warnings(&converted, &file) {
                say(warning);
            }
        }
        Command::Flame {
            file,
            output,
            samples,
            live,
            min_gcs,
            depth,
            filters,
            threads,
            no_class_frame,
        } => {
            let options = convert::FlameOptions {
                output,
                threads,
                draw: flame::Options {
                    stack_depth: depth,
                    weight: if samples {
                        Weight::Samples
                    } else {
                        Weight::Bytes
                    },
                    live: live.then_some(min_gcs),
                    filter: filters.into(),
                    class_frame: !no_class_frame,
                    subtitle_in_graph: true,
                },
            };
            flame(&file, &options)?
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `record -o OUTPUT -- COMMAND...`: runs the command with the agent in
/// each JVM it starts ([`record::run`]), then reports on each recording.
fn record(output: &Path, sampling: &Sampling, program: &[String]) -> Result<ExitCode, Failure> {
    let agent = crate::agent::find(sampling.agent.as_deref())?;
    let ran = record::run(&agent, sampling, output, program)?;
    match ran.recordings.as_slice() {
        [] => say(format_args!(
            "no JVM wrote a recording ({}): the command started none, or each refused the \
             agent (its standard error says why)",
            ran.named.display()
        )),
        [(recording, _)] => report_recording(recording),
        several => {
            say(format_args!(
                "{} JVMs recorded, each to a file of its own:",
                several.len()
            ));
            for (recording, _) in several {
                report_recording(recording);
            }
        }
    }
    for (recording, pid) in ran.still_running() {
        say(format_args!(
            "JVM {pid} still runs (the command left it behind): {} goes on until it exits or \
             `heapsampler detach {pid}`",
            recording.display()
        ));
    }
    Ok(ExitCode::from(ran.code.clamp(0, 255) as u8))
}

/// What a finished recording holds ([`record::report`]), or why it cannot
/// be read.
fn report_recording(recording: &Path) {
    match record::report(recording) {
        Ok(report) => report.lines().for_each(say),
        Err(error) => say(format_args!(
            "no readable recording in {}: {error}",
            recording.display()
        )),
    }
}

fn attach(
    pid: u32,
    output: Option<PathBuf>,
    duration: Option<&str>,
    sampling: &Sampling,
    jcmd: Option<&Path>,
) -> Result<(), Failure> {
    let recording = Recording::new(pid, output, duration, sampling)?;
    let jcmd = jdk::find_tool("jcmd", jcmd)?;
    let (agent, announced) = agent_in(&jcmd, pid, sampling.agent.as_deref())?;
    recording.start(&jcmd, pid, &agent, announced.as_ref())?;
    let output = recording.output.display();
    match recording.duration {
        Some(duration) => say(format_args!(
            "recording JVM {pid} to {output} for {}; it stops by itself then, or sooner with \
             `heapsampler detach {pid}`",
            attach::describe(duration)
        )),
        None => say(format_args!(
            "recording JVM {pid} to {output}; stop with `heapsampler detach {pid}`"
        )),
    }
    Ok(())
}

/// A recording to start in a running JVM, its options checked before any
/// JVM is asked: `attach`'s and `watch`'s.
struct Recording {
    /// Where it goes, absolute: the JVM has its own working directory.
    output: PathBuf,
    /// The agent's options.
    options: String,
    /// How long it runs, if it stops by itself.
    duration: Option<std::time::Duration>,
}

impl Recording {
    /// A recording of `sampling`'s options into `output` (by default
    /// heapsampler-PID.jfr here), for `duration` if given.
    fn new(
        pid: u32,
        output: Option<PathBuf>,
        duration: Option<&str>,
        sampling: &Sampling,
    ) -> Result<Self, Failure> {
        let output = output.unwrap_or_else(|| PathBuf::from(format!("heapsampler-{pid}.jfr")));
        let output =
            std::path::absolute(&output).map_err(|e| format!("{}: {e}", output.display()))?;
        let (options, duration) = record::attach_options(sampling, &output, duration)?;
        Ok(Self {
            output,
            options,
            duration,
        })
    }

    /// Starts it in JVM `pid` with `agent`, as [`agent_in`] found it with
    /// what the JVM `announced`.
    fn start(
        &self,
        jcmd: &Path,
        pid: u32,
        agent: &Path,
        announced: Option<&Announcement>,
    ) -> Result<(), Failure> {
        attach::attach(
            jcmd,
            pid,
            agent,
            announced,
            &self.options,
            &self.output,
            self.duration,
        )?;
        Ok(())
    }
}

fn detach(
    pid: u32,
    collect: bool,
    agent: Option<&Path>,
    jcmd: Option<&Path>,
) -> Result<(), Failure> {
    let jcmd = jdk::find_tool("jcmd", jcmd)?;
    let (agent, announced) = agent_in(&jcmd, pid, agent)?;
    let noted = attach::detach(&jcmd, pid, &agent, collect)?;
    match announced.and_then(|running| running.recording).or(noted) {
        Some(recording) => match record::report(&recording) {
            Ok(report) => report.lines().for_each(say),
            Err(error) => say(format_args!(
                "stopped, but the recording cannot be read: {error}"
            )),
        },
        None => say(format_args!("stopped the recording in JVM {pid}")),
    }
    Ok(())
}

/// The agent library to load into JVM `pid`, and the agent there as it
/// announces itself: the copy that samples there (the only one that can,
/// and the one that knows its recording), loaded from whatever file
/// (`-agentpath:`, another heapsampler's `attach`), said when it is another
/// version than this command's or another file than `named`. With none
/// announced, the agent `named` (else the carried one).
fn agent_in(
    jcmd: &Path,
    pid: u32,
    named: Option<&Path>,
) -> Result<(PathBuf, Option<Announcement>), Failure> {
    let Some(announced) = attach::announced(jcmd, pid)? else {
        return Ok((crate::agent::find(named)?, None));
    };
    let ours = env!("CARGO_PKG_VERSION");
    if announced.version != ours {
        say(format_args!(
            "JVM {pid} samples with heapsampler {}'s agent ({}); this is heapsampler {ours}: \
             asking that agent",
            announced.version,
            announced.library.display()
        ));
    } else if let Some(named) = named.filter(|named| *named != announced.library) {
        say(format_args!(
            "JVM {pid} samples with the agent loaded from {}, not --agent's {}: asking that one",
            announced.library.display(),
            named.display()
        ));
    }
    Ok((announced.library.clone(), Some(announced)))
}

/// `dump TARGET -o OUTPUT`: a snapshot of a file being written, or of the
/// recording in the JVM whose pid `target` is (`collect`: after a forced
/// collection).
fn dump(
    target: &str,
    output: &Path,
    collect: bool,
    agent: Option<&Path>,
    jcmd: Option<&Path>,
) -> Result<(), Failure> {
    let as_file = Path::new(target);
    let pid = target.parse::<u32>().ok().filter(|_| !as_file.is_file());
    let Some(pid) = pid else {
        if collect {
            return Err(Failure::Usage(format!(
                "--collect asks a running JVM to collect: give its pid, not a file ({target})"
            )));
        }
        let snapshot =
            jfr_writer::snapshot::write_snapshot(as_file, output).map_err(|e| e.to_string())?;
        let mut line = format!(
            "wrote {} ({} chunks, {} bytes) from {target}",
            output.display(),
            snapshot.chunks,
            snapshot.bytes
        );
        if snapshot.left_out > 0 {
            line.push_str(&format!(
                "; left out {} bytes not flushed yet",
                snapshot.left_out
            ));
        }
        say(line);
        return Ok(());
    };
    // The JVM has its own working directory: give it an absolute path.
    let output = std::path::absolute(output).map_err(|e| format!("{}: {e}", output.display()))?;
    let jcmd = jdk::find_tool("jcmd", jcmd)?;
    let (agent, _) = agent_in(&jcmd, pid, agent)?;
    attach::dump(&jcmd, pid, &agent, &output, collect)?;
    match record::report(&output) {
        Ok(report) => report.lines().for_each(say),
        Err(error) => say(format_args!(
            "wrote {}, but it cannot be read: {error}",
            output.display()
        )),
    }
    Ok(())
}

fn summary(file: &Path) -> Result<(), Failure> {
    let summary = summarize(
        RecordingFile::open(file).map_err(Error::from)?,
        &Pipeline::default(),
    )?;
    out(text::summary::render(&summary, file))?;
    if let Some((offset, bytes)) = summary.truncated {
        say(format_args!(
            "warning: {}: the {bytes} bytes from byte {offset} are not a complete chunk \
             (a write cut short); the summary covers the complete chunks before them",
            file.display()
        ));
    }
    Ok(())
}

/// The table `top` makes of `file`, or why the question does not fit it;
/// with `live`, and what the recording says of its end, read in the same
/// pass.
fn table(file: &Path, query: Query) -> Result<(Table, Option<Ending>), Failure> {
    let recording = RecordingFile::open(file).map_err(Error::from)?;
    let pipeline = Pipeline::default();
    let (groups, ending) = if query.live {
        let ran = pipeline.run(
            recording,
            &(Grouping::new(query), ReadEnding),
            (Groups::new(query), Ending::default()),
            &mut |_| {},
        )?;
        let (groups, ending) = ran.merged;
        (groups, Some(ending))
    } else {
        let ran = pipeline.run(
            recording,
            &Grouping::new(query),
            Groups::new(query),
            &mut |_| {},
        )?;
        (ran.merged, None)
    };
    let table = groups.table();
    if table.events == 0 {
        // Not an empty table: the question does not fit the file.
        return Err(Error::NoEvents {
            recording: file.to_owned(),
            live: query.live,
        }
        .into());
    }
    Ok((table, ending))
}

fn leaks(file: &Path, by: GroupBy, limit: usize) -> Result<(), Failure> {
    let size = std::fs::metadata(file).ok().map(|m| m.len());
    let mut shown: Option<(Pass, Progress)> = None;
    let recording = RecordingFile::open(file).map_err(Error::from)?;
    let found = leaks::leaks(recording, by, &Pipeline::default(), &mut |pass, bytes| {
        if shown.as_ref().is_none_or(|(at, _)| *at != pass) {
            let mut line = Progress::new(file.display().to_string(), size, true);
            line.set_stage(pass.what());
            shown = Some((pass, line));
        }
        if let Some((_, progress)) = shown.as_mut() {
            progress.update(bytes);
        }
    })?;
    drop(shown);
    out(text::leaks::render(&found, limit))?;
    // The growths' intervals come from the agent's samples as top's do.
    if found.unanswered().is_none()
        && let Some(note) = sampler_note(file)
    {
        out(format_args!("{note}\n"))?;
    }
    Ok(())
}

fn top(file: &Path, query: Query, limit: usize) -> Result<(), Failure> {
    let (table, ending) = table(file, query)?;
    out(text::top::render(&table, limit))?;
    if let Some(ending) = ending {
        out(format_args!("{}\n", ending.live_statement(&table.tracking)))?;
    }
    out_sampler_note(file, &table)?;
    Ok(())
}

fn diff(base: &Path, new: &Path, query: Query, limit: usize) -> Result<(), Failure> {
    let ((base_table, base_ending), (new_table, new_ending)) =
        (table(base, query)?, table(new, query)?);
    let describe = |path: &Path, table: &Table| {
        format!(
            "{} ({:.1} s, {} samples)",
            path.display(),
            table.seconds,
            table.total.samples()
        )
    };
    out(format_args!(
        "{} by {}: {} -> {}\n",
        if query.live {
            "bytes live at the end"
        } else {
            "allocation rate"
        },
        query.by.name(),
        describe(base, &base_table),
        describe(new, &new_table)
    ))?;
    if base_table.source != new_table.source {
        say(format_args!(
            "warning: {} counts {} events, {} counts {} events",
            base.display(),
            base_table.source.names(),
            new.display(),
            new_table.source.names()
        ));
    }
    let diff = diff::diff(&base_table, &new_table, !query.live);
    out(text::diff::render(&diff, limit))?;
    for (file, table, ending) in [
        (base, &base_table, base_ending),
        (new, &new_table, new_ending),
    ] {
        if let Some(ending) = ending {
            out(format_args!(
                "{}: {}\n",
                file.display(),
                ending.live_statement(&table.tracking)
            ))?;
        }
    }
    if !out_sampler_note(base, &base_table)? {
        out_sampler_note(new, &new_table)?;
    }
    Ok(())
}

/// What `file`'s JVM says of its sampler, if its estimates need a note
/// ([`Process::sampler_note`](process::Process::sampler_note)).
fn sampler_note(file: &Path) -> Option<String> {
    let recording = RecordingFile::open(file).ok()?;
    process::of_recording(&recording).sampler_note()
}

/// Says under a table of the agent's samples (a recording that names its
/// interval) when their JVM's sampler is one before JDK 25, whose
/// estimates can be off by more than their intervals; whether it said so.
fn out_sampler_note(file: &Path, table: &Table) -> Result<bool, Failure> {
    if table.interval.is_none() {
        return Ok(false);
    }
    let Some(note) = sampler_note(file) else {
        return Ok(false);
    };
    out(format_args!("{note}\n"))?;
    Ok(true)
}

fn flame(file: &Path, options: &convert::FlameOptions) -> Result<(), Failure> {
    let graph = convert::flame(file, options)?;
    for warning in graph.warnings(file) {
        say(warning);
    }
    // What live means, said on the terminal as under the graph's title.
    if let Some(ending) = &graph.ending {
        say(ending.live_statement(&graph.tracking));
    }
    // Where it went, unless to standard output.
    if graph.output.as_os_str() != "-" {
        say(graph.summary());
    }
    Ok(())
}
