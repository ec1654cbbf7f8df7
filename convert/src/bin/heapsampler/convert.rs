//! `convert` and `flame`: a recording read through the library's pipeline
//! into files. Here are the paths (next to the recording unless told
//! otherwise, `-` for standard output), the files made only once there is
//! something to put in them, the progress on a terminal, and the warnings
//! after.

use std::fs::File;
use std::io::{self, BufWriter, IsTerminal, Write};
use std::path::{Path, PathBuf};

use heapsampler_convert::Error;
use heapsampler_convert::analysis::fold::{self, Fold, FoldJob, Folded, Totals};
use heapsampler_convert::analysis::liveness::Ending;
use heapsampler_convert::analysis::top::GroupBy;
use heapsampler_convert::model::allocation::{ALLOCATIONS, Source};
use heapsampler_convert::model::filter::Filter;
use heapsampler_convert::model::samples::Tracking;
use heapsampler_convert::output::csv::{self, CsvError, CsvOptions, CsvOutputs};
use heapsampler_convert::output::flame;
use heapsampler_convert::output::human::{describe, human_bytes, thousands};
use heapsampler_convert::output::otlp;
use heapsampler_convert::output::parquet::{self, Identity, ParquetOptions};
use heapsampler_convert::output::pprof::{self, Made};
use heapsampler_convert::output::report::{self, build::Step};
use heapsampler_convert::pipeline::Pipeline;
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
    /// allocation events (collapsed, pprof): the first of [`ALLOCATIONS`]
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
    /// class ([`Fold::class_frame`]); only `false` with collapsed.
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

/// What a conversion did, for the messages after it.
#[derive(Debug, Clone, Default)]
pub struct Outcome {
    /// Events written (CSV rows, events folded into stacks, or samples in
    /// a profile).
    pub events: u64,
    /// The event types asked for (empty: all), or for folded allocation
    /// events, those of the kind folded.
    pub types: Vec<String>,
    /// The kind of allocation events folded, when no type was named.
    pub folded: Option<Source>,
    /// Other kinds of allocation events the recording has, and how many:
    /// not folded, as they record the same allocations.
    pub left_out: Vec<(Source, u64)>,
    /// Whether a filter was given.
    pub filtered: bool,
    /// The last chunk was cut short: its offset and how many bytes it had.
    pub truncated: Option<(u64, u64)>,
    /// For a pprof profile, what it was made of.
    pub profile: Option<Made>,
}

impl Outcome {
    /// What folding did.
    fn of_folded(folded: &Folded, filter: &Filter) -> Self {
        Self {
            events: folded.stacks.folded(),
            types: folded.types.clone(),
            folded: folded.source,
            left_out: folded.left_out.clone(),
            filtered: !filter.is_empty(),
            truncated: folded.truncated,
            profile: None,
        }
    }

    /// What making a profile (pprof, OTLP) did.
    fn of_profile(made: Made, filtered: bool) -> Self {
        Self {
            events: made.allocations.samples(),
            types: made.types.clone(),
            folded: made.source,
            left_out: made.left_out.clone(),
            filtered,
            truncated: made.truncated,
            profile: Some(made),
        }
    }

    /// The warnings to show, one line each, about the conversion of `file`.
    pub fn warnings(&self, file: &Path) -> Vec<String> {
        let mut warnings = Vec::new();
        if let Some((offset, bytes)) = self.truncated {
            warnings.push(format!(
                "warning: {}: the {bytes} bytes from byte {offset} are not a complete chunk \
                 (a write cut short); converted the complete chunks before them",
                file.display()
            ));
        }
        if self.folded == Some(Source::TlabAllocations) && self.events > 0 {
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
        if let Some(made) = &self.profile {
            warnings.extend(profile_notes(made, file));
        }
        for (source, events) in &self.left_out {
            warnings.push(format!(
                "{}: left out {events} {} events, which record the same allocations",
                file.display(),
                source.names()
            ));
        }
        if self.events == 0 {
            let types = if self.types.is_empty() {
                "the requested types".to_owned()
            } else {
                self.types.join(", ")
            };
            let filtered = if self.filtered {
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
}

/// What to say after writing a profile of `file`, one line each.
fn profile_notes(made: &Made, file: &Path) -> Vec<String> {
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
pub fn convert(file: &Path, options: &Options) -> Result<Outcome, Failure> {
    options.check()?;
    let recording = RecordingFile::open(file).map_err(Error::from)?;
    let mut progress = progress(file, options.output.as_deref());
    let mut progress = |bytes| progress.update(bytes);
    let pipeline = Pipeline::on(options.threads);
    let filtered = !options.filter.is_empty();
    match options.format {
        FormatArg::Csv => {
            let mut outputs = CsvFiles {
                destination: Destination::csv(file, options)?,
                made: 0,
            };
            let csv_options = CsvOptions {
                events: options.events.clone(),
                stack_depth: options.stack_depth,
                filter: options.filter.clone(),
            };
            let written = csv::write_csv(
                recording,
                &csv_options,
                &mut outputs,
                &pipeline,
                &mut progress,
            )?;
            if written.outputs == 0 {
                outputs
                    .destination
                    .create_empty()
                    .map_err(|source| Error::Csv {
                        recording: file.to_owned(),
                        source,
                    })?;
            }
            Ok(Outcome {
                events: written.rows,
                types: options.events.clone(),
                folded: None,
                left_out: Vec::new(),
                filtered,
                truncated: written.truncated,
                profile: None,
            })
        }
        FormatArg::Collapsed => {
            let output = options
                .output
                .clone()
                .unwrap_or_else(|| beside(file, ".collapsed"));
            let job = FoldJob {
                types: &options.events,
                sources: &ALLOCATIONS,
                fold: Fold {
                    stack_depth: options.stack_depth,
                    live: None,
                    class_frame: options.class_frame,
                },
                filter: &options.filter,
            };
            let folded = fold::fold(recording, job, &pipeline, &mut progress)?;
            let mut out = create(&output)?;
            folded
                .stacks
                .write(&mut out)
                .and_then(|()| out.flush())
                .map_err(|e| writing(&output, e))?;
            Ok(Outcome::of_folded(&folded, &options.filter))
        }
        FormatArg::Pprof => {
            let output = options
                .output
                .clone()
                .unwrap_or_else(|| beside(file, ".pb.gz"));
            let pprof::Pprof { profile, made } = pprof::profile(
                recording,
                &options.filter,
                options.stack_depth,
                &pipeline,
                &mut progress,
            )?;
            made_of_events(&made, file)?;
            let mut out = create(&output)?;
            pprof::write(&profile, &mut out).map_err(|e| writing(&output, e))?;
            Ok(Outcome::of_profile(made, filtered))
        }
        FormatArg::Otlp => {
            let output = options
                .output
                .clone()
                .unwrap_or_else(|| beside(file, ".otlp.pb"));
            let otlp::Otlp { request, made } = otlp::request(
                recording,
                &options.filter,
                options.stack_depth,
                &pipeline,
                &mut progress,
            )?;
            made_of_events(&made, file)?;
            let mut out = create(&output)?;
            otlp::write(&request, &mut out).map_err(|e| writing(&output, e))?;
            Ok(Outcome::of_profile(made, filtered))
        }
        FormatArg::Parquet => {
            let output = options
                .output
                .clone()
                .unwrap_or_else(|| beside(file, ".parquet"));
            let identity = Identity::read(&recording, file.display().to_string());
            let parquet_options = ParquetOptions {
                events: &options.events,
                filter: &options.filter,
                stack_depth: options.stack_depth,
                identity: &identity,
            };
            let out = create(&output)?;
            let written =
                parquet::write(recording, &parquet_options, out, &pipeline, &mut progress)
                    .inspect_err(|_| {
                        // Not a Parquet file without its footer: none rather
                        // than one that fails whatever reads it.
                        if !is_stdout(&output) {
                            let _ = std::fs::remove_file(&output);
                        }
                    })?;
            let types = if options.events.is_empty() {
                parquet::EVENT_TYPES.map(str::to_owned).to_vec()
            } else {
                options.events.clone()
            };
            Ok(Outcome {
                events: written.total_rows(),
                types,
                folded: None,
                left_out: Vec::new(),
                filtered,
                truncated: written.truncated,
                profile: None,
            })
        }
    }
}

/// Fails when a profile (pprof's or OTLP's) was made of no allocation
/// events: the recording has none of the kinds it reads.
fn made_of_events(made: &Made, file: &Path) -> Result<(), Failure> {
    match made.source {
        Some(_) => Ok(()),
        None => Err(Error::NoEvents {
            recording: file.to_owned(),
            live: false,
        }
        .into()),
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
pub struct Flamed {
    /// Where the SVG went.
    pub output: PathBuf,
    /// The whole graph's bytes and samples.
    pub totals: Totals,
    /// Distinct stacks drawn.
    pub stacks: usize,
    /// What the folding did, for its warnings.
    pub outcome: Outcome,
    /// With `live`: samples of objects whose liveness was not tracked.
    pub untracked: Totals,
    /// With `live`: how the liveness samples were tracked.
    pub tracking: Tracking,
    /// With `live`: what the recording says of its end.
    pub ending: Option<Ending>,
}

impl Flamed {
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
        let mut warnings = self.outcome.warnings(file);
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
pub fn flame(file: &Path, options: &FlameOptions) -> Result<Flamed, Failure> {
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
    Ok(Flamed {
        output,
        totals: drawn.totals(),
        stacks: drawn.folded.stacks.len(),
        outcome: Outcome::of_folded(&drawn.folded, &options.draw.filter),
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
    let page = report::build::build(recording, options.by, &mut |step, bytes| {
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

/// The CSV files of a conversion, made as the library asks for them.
struct CsvFiles {
    destination: Destination,
    /// Outputs made so far.
    made: usize,
}

impl CsvOutputs for CsvFiles {
    fn create(&mut self, name: &str) -> Result<Box<dyn Write + Send>, CsvError> {
        let output = match &self.destination {
            Destination::Single(path) => {
                if self.made > 0 {
                    return Err(io::Error::other("one output for one event type").into());
                }
                create_csv(path)?
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

/// Makes `folder` and the folders above it, if they are not there.
fn create_folder(folder: &Path) -> Result<(), CsvError> {
    std::fs::create_dir_all(folder).map_err(|source| CsvError::Create {
        path: folder.to_owned(),
        source,
    })
}

/// Opens `path` for CSV (`-`: standard output).
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
