//! `convert` and `flame`: a recording read through the library's pipeline
//! into files. Here are the paths (next to the recording unless told
//! otherwise, `-` for standard output), the files made only once there is
//! something to put in them, the progress on a terminal, and the warnings
//! after.

use std::fs::File;
use std::io::{self, BufWriter, IsTerminal, Write};
use std::path::{Path, PathBuf};

use heapsampler_cli::Error;
use heapsampler_cli::analysis::fold::Totals;
use heapsampler_cli::analysis::liveness::Ending;
use heapsampler_cli::analysis::top::GroupBy;
use heapsampler_cli::model::allocation::Source;
use heapsampler_cli::model::filter::Filter;
use heapsampler_cli::model::samples::Tracking;
use heapsampler_cli::output;
use heapsampler_cli::output::Outputs;
use heapsampler_cli::output::convert::{Conversion, Converted, Format};
use heapsampler_cli::output::csv::CsvError;
use heapsampler_cli::output::flame;
use heapsampler_cli::output::human::{describe, human_bytes, thousands};
use heapsampler_cli::output::parquet;
use heapsampler_cli::output::pprof::Contents;
use heapsampler_cli::output::report::{self, gather::Step};
use heapsampler_cli::pipeline::Pipeline;
use jfr_reader::file::RecordingFile;

use crate::Failure;
use crate::args::FormatArg;
use crate::progress::Progress;

/// How to convert.
#[derive(Debug, Clone)]
pub struct Options {
    /// Where to write; `-` is standard output; `None`: next to the recording.
    pub output: Option<PathBuf>,
    /// The event types to convert; empty: every type (CSV), or one kind of
    /// allocation events (collapsed, pprof): the first of
    /// [`ALLOCATIONS`](heapsampler_cli::model::allocation::ALLOCATIONS)
    /// the recording has events of.
    pub events: Vec<String>,
    /// Frames kept per stack trace, those nearest the top.
    pub stack_depth: usize,
    /// What to write.
    pub format: FormatArg,
    /// Which events to keep.
    pub filter: Filter,
    /// Threads reading chunks; 0: one per core.
    pub threads: usize,
    /// Folded stacks of allocations end with a frame of the allocated
    /// class
    /// ([`Fold::class_frame`](heapsampler_cli::analysis::fold::Fold::class_frame)); only `false` with collapsed.
    pub class_frame: bool,
}

impl Options {
    /// Refuses what contradicts itself before any recording is read:
    /// folded stacks of several named types (they would add up bytes and
    /// counts in one graph), a pprof profile of named types, class frames
    /// left out of what has none, and an empty window.
    fn check(&self) -> Result<(), Failure> {
        match (self.format, self.events.len()) {
            (FormatArg::Csv | FormatArg::Parquet, _)
            | (FormatArg::Collapsed, 0 | 1)
            | (FormatArg::Pprof | FormatArg::Otlp, 0) => {}
            (FormatArg::Collapsed, _) => {
                return Err(Failure::Usage(format!(
                    "--format collapsed folds one event type, not {}: name one with --events",
                    self.events.join(",")
                )));
            }
            (format @ (FormatArg::Pprof | FormatArg::Otlp), _) => {
                let format = if format == FormatArg::Otlp {
                    "otlp"
                } else {
                    "pprof"
                };
                return Err(Failure::Usage(format!(
                    "--format {} reads the allocation events itself (as top does) and takes \
                     no --events: leave it out",
                    format
                )));
            }
        }
        let unknown = parquet::unknown_types(&self.events);
        if self.format == FormatArg::Parquet && !unknown.is_empty() {
            return Err(Failure::Usage(format!(
                "--format parquet writes allocation events, not {}: --events takes {}",
                unknown.join(","),
                parquet::EVENT_TYPES.join(", ")
            )));
        }
        if !self.class_frame && !matches!(self.format, FormatArg::Collapsed) {
            return Err(Failure::Usage(
                "--no-class-frame leaves the allocated class's frame out of folded stacks: it \
                 goes with --format collapsed"
                    .to_owned(),
            ));
        }
        self.filter.check_window().map_err(Failure::Usage)
    }
}

/// The warnings to show, one line each, about the conversion of `file`.
pub fn warnings(converted: &Converted, file: &Path) -> Vec<String> {
    let mut warnings = Vec::new();
    if let Some((offset, bytes)) = converted.truncated {
        warnings.push(format!(
            "warning: {}: the {bytes} bytes from byte {offset} are not a complete chunk \
             (a write cut short); converted the complete chunks before them",
            file.display()
        ));
    }
    if converted.folded == Some(Source::TlabAllocations) && converted.events > 0 {
        let weights: Vec<&str> = Source::TlabAllocations
            .types()
            .iter()
            .map(|t| t.weight)
            .collect();
        warnings.push(format!(
            "{}: folded {} events by {} (the recording has no {} events)",
            file.display(),
            Source::TlabAllocations.names(),
            weights.join(" and "),
            Source::AllocationSamples.names(),
        ));
    }
    if let Some(made) = &converted.profile {
        warnings.extend(profile_notes(made, file));
    }
    for (source, events) in &converted.left_out {
        warnings.push(format!(
            "{}: left out {events} {} events, which record the same allocations",
            file.display(),
            source.names()
        ));
    }
    if converted.events == 0 {
        let types = if converted.types.is_empty() {
            "the requested types".to_owned()
        } else {
            converted.types.join(", ")
        };
        let filtered = if converted.filtered {
            " passed the filters"
        } else {
            ""
        };
        warnings.push(format!(
            "{}: no events of {types}{filtered}",
            file.display()
        ));
    }
    warnings
}

/// What to say after writing a profile of `file`, one line each.
fn profile_notes(made: &Contents, file: &Path) -> Vec<String> {
    let file = file.display();
    let mut notes = Vec::new();
    if !made.objects_known() {
        notes.push(format!(
            "{file}: no alloc_objects: these allocation samples do not carry their object's \
             size (the JDK's sampler, a throttled one, or TLAB events), so objects cannot be \
             estimated; the profile counts samples instead (sample type samples)"
        ));
    }
    if made.live.is_none() {
        notes.push(format!(
            "{file}: no inuse_objects or inuse_space: the recording has no {} events \
             (record with heapsampler's agent and liveness on, the default)",
            Source::ObjectLifetimes.names()
        ));
    }
    if made.untracked.samples() > 0 {
        notes.push(format!(
            "{file}: not in inuse_space: {} of objects not tracked for liveness, at or \
             above the agent's live_max size (by default G1's humongous objects)",
            describe(&made.untracked)
        ));
    }
    // Said where it is news; the profile's comment says it always.
    if let Some(meaning) = made.live_meaning.as_ref().filter(|_| made.live_qualified) {
        notes.push(format!("{file}: inuse_: {meaning}"));
    }
    notes
}

/// Converts the recording `file` as `options` say.
pub fn convert(file: &Path, options: &Options) -> Result<Converted, Failure> {
    options.check()?;
    let recording = RecordingFile::open(file).map_err(Error::from)?;
    let mut progress = progress(file, options.output.as_deref());
    let format = Format::from(options.format);
    let destination = Destination::of(file, options, format)?;
    let mut outputs = Files {
        destination: destination.clone(),
        made: 0,
        // CSV's and Parquet's errors say what was being written.
        labeled: !matches!(format, Format::Csv | Format::Parquet),
    };
    let conversion = Conversion {
        format,
        events: &options.events,
        stack_depth: options.stack_depth,
        filter: &options.filter,
        class_frame: options.class_frame,
        recording_name: &file.display().to_string(),
    };
    let converted = output::convert::convert(
        recording,
        &conversion,
        &mut outputs,
        &Pipeline::on(options.threads),
        &mut |bytes| progress.update(bytes),
    );
    match (converted, &destination) {
        (Err(error), Destination::Single(output)) if format == Format::Parquet => {
            // Not a Parquet file without its footer: none rather than one
            // that fails whatever reads it.
            if outputs.made > 0 && !is_stdout(output) {
                let _ = std::fs::remove_file(output);
            }
            Err(error.into())
        }
        (Err(error), _) => Err(error.into()),
        (Ok(converted), _) => {
            if format == Format::Csv && converted.outputs == 0 {
                destination.create_empty().map_err(|source| Error::Csv {
                    recording: file.to_owned(),
                    source,
                })?;
            }
            Ok(converted)
        }
    }
}

impl From<FormatArg> for Format {
    fn from(format: FormatArg) -> Self {
        match format {
            FormatArg::Csv => Self::Csv,
            FormatArg::Collapsed => Self::Collapsed,
            FormatArg::Pprof => Self::Pprof,
            FormatArg::Otlp => Self::Otlp,
            FormatArg::Parquet => Self::Parquet,
        }
    }
}

/// How to draw a flame graph, and where.
#[derive(Debug, Clone, Default)]
pub struct FlameOptions {
    /// The SVG to write; `-` is standard output; `None`: next to the
    /// recording, as `NAME.svg`.
    pub output: Option<PathBuf>,
    /// Threads reading chunks; 0: one per core.
    pub threads: usize,
    /// What to draw.
    pub draw: flame::Options,
}

/// A flame graph written.
#[derive(Debug)]
pub struct FlameGraph {
    /// Where the SVG went.
    pub output: PathBuf,
    /// The whole graph's bytes and samples.
    pub totals: Totals,
    /// Distinct stacks drawn.
    pub stacks: usize,
    /// What the folding did, for its warnings.
    pub folded: Converted,
    /// With `live`: samples of objects whose liveness was not tracked.
    pub untracked: Totals,
    /// With `live`: how the liveness samples were tracked.
    pub tracking: Tracking,
    /// With `live`: what the recording says of its end.
    pub ending: Option<Ending>,
}

impl FlameGraph {
    /// One line saying what the graph shows.
    pub fn summary(&self) -> String {
        format!(
            "{}: a flame graph of {} {} (from {} samples, {} stacks); open it in a browser",
            self.output.display(),
            human_bytes(self.totals.value as f64),
            if self.ending.is_some() {
                "still live"
            } else {
                "allocated"
            },
            thousands(self.totals.events),
            thousands(self.stacks as u64)
        )
    }

    /// The warnings to show, one line each, about the graph of `file`.
    pub fn warnings(&self, file: &Path) -> Vec<String> {
        let mut warnings = warnings(&self.folded, file);
        if self.untracked.events > 0 {
            warnings.push(format!(
                "{}: left out {} samples ({}) of objects the agent did not track for liveness \
                 (at or above its live_max size, by default G1's humongous objects)",
                file.display(),
                thousands(self.untracked.events),
                human_bytes(self.untracked.value as f64)
            ));
        }
        warnings
    }
}

/// Draws the flame graph of the recording `file` as `options` say.
pub fn flame(file: &Path, options: &FlameOptions) -> Result<FlameGraph, Failure> {
    options.draw.filter.check_window().map_err(Failure::Usage)?;
    let output = options
        .output
        .clone()
        .unwrap_or_else(|| beside(file, ".svg"));
    let recording = RecordingFile::open(file).map_err(Error::from)?;
    let mut progress = progress(file, Some(&output));
    let drawn = flame::draw(
        recording,
        &options.draw,
        &Pipeline::on(options.threads),
        &mut |bytes| progress.update(bytes),
    )?;
    drop(progress);
    let mut out = create(&output)?;
    out.write_all(drawn.svg.as_bytes())
        .and_then(|()| out.flush())
        .map_err(|e| writing(&output, e))?;
    Ok(FlameGraph {
        output,
        totals: drawn.totals(),
        stacks: drawn.folded.stacks.len(),
        folded: Converted::of_folded(&drawn.folded, &options.draw.filter),
        untracked: drawn.folded.stacks.untracked(),
        tracking: drawn.folded.stacks.tracking(),
        ending: drawn.ending,
    })
}

/// What `report` is asked.
#[derive(Debug, Clone)]
pub struct ReportOptions {
    /// Where the page goes; by default beside the recording, `.html`.
    pub output: Option<PathBuf>,
    /// What the leak analysis groups by.
    pub by: GroupBy,
}

/// A report written.
#[derive(Debug, Clone)]
pub struct Reported {
    /// Where.
    pub output: PathBuf,
    /// Its verdict's headline.
    pub verdict: String,
}

/// `heapsampler report`: the page of `file`, written where `options` say.
pub fn report(file: &Path, options: &ReportOptions) -> Result<Reported, Failure> {
    let output = options
        .output
        .clone()
        .unwrap_or_else(|| beside(file, ".html"));
    let mut shown: Option<(Step, Progress)> = None;
    let recording = RecordingFile::open(file).map_err(Error::from)?;
    let page = report::gather::page(recording, options.by, &mut |step, bytes| {
        if shown.as_ref().is_none_or(|(at, _)| *at != step) {
            let mut line = progress(file, Some(&output));
            line.set_stage(step.what());
            shown = Some((step, line));
        }
        if let Some((_, line)) = shown.as_mut() {
            line.update(bytes);
        }
    })?;
    drop(shown);
    let mut out = create(&output)?;
    report::write_page(&page, &mut out)
        .and_then(|()| out.flush())
        .map_err(|e| writing(&output, e))?;
    Ok(Reported {
        output,
        verdict: page.verdict.headline,
    })
}

/// Where CSV goes: one file (or standard output) for a single event type,
/// or a folder with a file per type.
#[derive(Debug, Clone)]
enum Destination {
    /// A file; `-` is standard output.
    Single(PathBuf),
    /// A folder of `TYPE.csv` files.
    Folder(PathBuf),
}

impl Destination {
    /// Where `format` of `options.events` from `file` goes, or a usage
    /// error: several types of CSV cannot share standard output.
    fn of(file: &Path, options: &Options, format: Format) -> Result<Self, Failure> {
        let extension = match format {
            Format::Csv => return Self::csv(file, options),
            Format::Collapsed => ".collapsed",
            Format::Pprof => ".pb.gz",
            Format::Otlp => ".otlp.pb",
            Format::Parquet => ".parquet",
        };
        let output = options.output.clone();
        Ok(Self::Single(
            output.unwrap_or_else(|| beside(file, extension)),
        ))
    }

    /// Where CSV of `options.events` from `file` goes, or a usage error:
    /// several types cannot share standard output.
    fn csv(file: &Path, options: &Options) -> Result<Self, Failure> {
        match (&options.output, options.events.len() == 1) {
            (Some(path), true) => Ok(Self::Single(path.clone())),
            (None, true) => Ok(Self::Single(beside(file, ".csv"))),
            (Some(path), false) if is_stdout(path) => Err(Failure::Usage(
                "several event types cannot go to standard output: name one with --events"
                    .to_owned(),
            )),
            (Some(folder), false) => Ok(Self::Folder(folder.clone())),
            (None, false) => Ok(Self::Folder(beside(file, "-csv"))),
        }
    }

    /// Makes what a conversion that found no rows leaves: an empty file, or
    /// an empty folder.
    fn create_empty(&self) -> Result<(), CsvError> {
        match self {
            Self::Single(path) => create_csv(path)?.flush()?,
            Self::Folder(folder) => create_folder(folder)?,
        }
        Ok(())
    }
}

/// The files of a conversion, made as the library asks for them.
struct Files {
    destination: Destination,
    /// Outputs made so far.
    made: usize,
    /// Whether the errors of writing into an output name it (CSV's and
    /// Parquet's own errors say what was written).
    labeled: bool,
}

impl Outputs for Files {
    fn create(&mut self, name: &str) -> Result<Box<dyn Write + Send>, CsvError> {
        let output = match &self.destination {
            Destination::Single(path) => {
                if self.made > 0 {
                    return Err(io::Error::other("one output for one event type").into());
                }
                let output = create_csv(path)?;
                if self.labeled {
                    Box::new(Labeled {
                        output: path.clone(),
                        inner: output,
                    })
                } else {
                    output
                }
            }
            Destination::Folder(folder) => {
                create_folder(folder)?;
                create_csv(&folder.join(format!("{name}.csv")))?
            }
        };
        self.made += 1;
        Ok(output)
    }
}

/// An output whose errors say which it is: `writing OUTPUT: ...`, or
/// `writing to standard output: ...` (of the same kind, so that a reader
/// gone away is still one).
struct Labeled {
    output: PathBuf,
    inner: Box<dyn Write + Send>,
}

impl Labeled {
    fn label(&self, error: io::Error) -> io::Error {
        let message = if is_stdout(&self.output) {
            format!("writing to standard output: {error}")
        } else {
            format!("writing {}: {error}", self.output.display())
        };
        io::Error::new(error.kind(), message)
    }
}

impl Write for Labeled {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        self.inner.write(bytes).map_err(|e| self.label(e))
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush().map_err(|e| self.label(e))
    }
}

/// Makes `folder` and the folders above it, if they are not there.
fn create_folder(folder: &Path) -> Result<(), CsvError> {
    std::fs::create_dir_all(folder).map_err(|source| CsvError::Create {
        path: folder.to_owned(),
        source,
    })
}

/// Opens `path` for an output (`-`: standard output).
fn create_csv(path: &Path) -> Result<Box<dyn Write + Send>, CsvError> {
    open(path).map_err(|source| CsvError::Create {
        path: path.to_owned(),
        source,
    })
}

/// Opens `path` for writing (`-`: standard output), or says why not.
fn create(path: &Path) -> Result<Box<dyn Write + Send>, Failure> {
    open(path).map_err(|e| Failure::Failed(format!("cannot create {}: {e}", path.display())))
}

fn open(path: &Path) -> io::Result<Box<dyn Write + Send>> {
    if is_stdout(path) {
        return Ok(Box::new(BufWriter::new(io::stdout())));
    }
    Ok(Box::new(BufWriter::new(File::create(path)?)))
}

/// Writing `output` failed.
fn writing(output: &Path, error: io::Error) -> Failure {
    if is_stdout(output) {
        return crate::writing_stdout(&error);
    }
    Failure::Failed(format!("writing {}: {error}", output.display()))
}

fn is_stdout(path: &Path) -> bool {
    path.as_os_str() == "-"
}

/// `DIR/recording.jfr` -> `DIR/recording{extension}`.
fn beside(file: &Path, extension: &str) -> PathBuf {
    let name = file
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("recording");
    let stem = name.split('.').next().unwrap_or("recording");
    file.with_file_name(format!("{stem}{extension}"))
}

/// The progress of reading `file`, on a terminal, unless the output
/// (`output`, `-` for standard output) goes to that terminal too.
fn progress(file: &Path, output: Option<&Path>) -> Progress {
    // Progress counts bytes of the file as stored, compressed or not (a
    // pipe has no length: its progress is a count).
    let total = std::fs::metadata(file)
        .ok()
        .filter(|m| m.is_file())
        .map(|m| m.len());
    let name = file.file_name().map_or_else(
        || file.display().to_string(),
        |n| n.to_string_lossy().into(),
    );
    let output_on_terminal = output.is_some_and(is_stdout) && io::stdout().is_terminal();
    Progress::new(name, total, !output_on_terminal)
}
