//! `heapsampler convert`: a recording written in one of five formats, all
//! behind one signature ([`convert`]): CSV of any events ([`csv`]), folded
//! stacks ([`fold`]), a pprof heap profile ([`pprof`]), its OpenTelemetry
//! request ([`otlp`]), and a Parquet table of the allocation events
//! ([`parquet`]). Each reads the recording once through the pipeline
//! (Parquet twice: what the agent raised, then the rows) and writes into
//! outputs the caller makes when asked ([`Outputs`]), so that what is
//! written, and where, are apart.

use std::io::{self, Write};

use crate::Error;
use crate::analysis::fold::{self, Fold, FoldJob, Folded};
use crate::error::CsvError;
use crate::model::allocation::{ALLOCATIONS, Source};
use crate::model::filter::Filter;
use crate::output::Outputs;
use crate::output::csv::{self, CsvOptions};
use crate::output::otlp;
use crate::output::parquet::{self, Identity, ParquetOptions};
use crate::output::pprof::{self, Contents, Profiled};
use crate::pipeline::Pipeline;
use jfr_reader::file::RecordingFile;

/// What a recording is converted to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// CSV, one output per event type ([`csv`]).
    Csv,
    /// Folded stacks of one kind of events, for flame-graph tools.
    Collapsed,
    /// A gzipped pprof heap profile of the allocation events.
    Pprof,
    /// The pprof profile as an OpenTelemetry profiles request.
    Otlp,
    /// A Parquet table of the allocation events.
    Parquet,
}

impl Format {
    /// The name of the format's one output, which [`Outputs::create`] is
    /// asked for (CSV's outputs are named by their event types).
    pub fn name(self) -> &'static str {
        match self {
            Self::Csv => "csv",
            Self::Collapsed => "collapsed",
            Self::Pprof => "pprof",
            Self::Otlp => "otlp",
            Self::Parquet => "parquet",
        }
    }
}

/// How to convert: what every format is given; each reads what it needs.
#[derive(Debug, Clone)]
pub struct Conversion<'o> {
    /// What to write.
    pub format: Format,
    /// The event types to convert; empty: every type (CSV), the allocation
    /// events (Parquet), or one kind of allocation events (collapsed,
    /// pprof, OTLP): the first of [`ALLOCATIONS`] the recording has events
    /// of.
    pub events: &'o [String],
    /// Frames kept per stack trace, those nearest the top.
    pub stack_depth: usize,
    /// Which events to keep.
    pub filter: &'o Filter,
    /// Folded stacks of allocations end with a frame of the allocated
    /// class ([`Fold::class_frame`]).
    pub class_frame: bool,
    /// What the Parquet table calls the recording, on every row.
    pub recording_name: &'o str,
}

/// What a conversion wrote.
#[derive(Debug, Clone, Default)]
pub struct Converted {
    /// Events written (CSV rows, events folded into stacks, samples in a
    /// profile, Parquet rows).
    pub events: u64,
    /// Outputs made.
    pub outputs: usize,
    /// The event types asked for (empty: all), or for folded allocation
    /// events, those of the kind folded.
    pub types: Vec<String>,
    /// The kind of allocation events folded or profiled, when no type was
    /// named.
    pub folded: Option<Source>,
    /// Other kinds of allocation events the recording has, and how many:
    /// not converted, as they record the same allocations.
    pub left_out: Vec<(Source, u64)>,
    /// Whether a filter was given.
    pub filtered: bool,
    /// The last chunk was cut short: its offset and how many bytes it had.
    pub truncated: Option<(u64, u64)>,
    /// For a profile (pprof, OTLP), what it was made of.
    pub profile: Option<Contents>,
}

impl Converted {
    /// What folding `folded` with `filter` did.
    pub fn of_folded(folded: &Folded, filter: &Filter) -> Self {
        Self {
            events: folded.stacks.folded(),
            outputs: 0,
            types: folded.types.clone(),
            folded: folded.source,
            left_out: folded.left_out.clone(),
            filtered: !filter.is_empty(),
            truncated: folded.truncated,
            profile: None,
        }
    }

    /// What making a profile (pprof, OTLP) did.
    fn of_profile(made: Contents, filtered: bool) -> Self {
        Self {
            events: made.allocations.samples(),
            outputs: 1,
            types: made.types.clone(),
            folded: made.source,
            left_out: made.left_out.clone(),
            filtered,
            truncated: made.truncated,
            profile: Some(made),
        }
    }
}

/// Converts `recording` as `conversion` says, through `pipeline`, into
/// `outputs`, telling `progress` the bytes read.
pub fn convert(
    recording: RecordingFile,
    conversion: &Conversion<'_>,
    outputs: &mut dyn Outputs,
    pipeline: &Pipeline,
    progress: &mut (dyn FnMut(u64) + Send),
) -> Result<Converted, Error> {
    let filtered = !conversion.filter.is_empty();
    let name = conversion.format.name();
    match conversion.format {
        Format::Csv => {
            let options = CsvOptions {
                events: conversion.events.to_vec(),
                stack_depth: conversion.stack_depth,
                filter: conversion.filter.clone(),
            };
            let written = csv::write_csv(recording, &options, outputs, pipeline, progress)?;
            Ok(Converted {
                events: written.rows,
                outputs: written.outputs,
                types: conversion.events.to_vec(),
                filtered,
                truncated: written.truncated,
                ..Converted::default()
            })
        }
        Format::Collapsed => {
            let job = FoldJob {
                types: conversion.events,
                sources: &ALLOCATIONS,
                fold: Fold {
                    stack_depth: conversion.stack_depth,
                    live: None,
                    class_frame: conversion.class_frame,
                },
                filter: conversion.filter,
            };
            let folded = fold::fold(recording, job, pipeline, progress)?;
            let mut out = create(outputs, name)?;
            folded
                .stacks
                .write(&mut out)
                .and_then(|()| out.flush())
                .map_err(|source| Error::Write { source })?;
            Ok(Converted {
                outputs: 1,
                ..Converted::of_folded(&folded, conversion.filter)
            })
        }
        Format::Pprof => profile_into(
            recording,
            conversion,
            pprof::profile,
            pprof::write,
            outputs,
            pipeline,
            progress,
        ),
        Format::Otlp => profile_into(
            recording,
            conversion,
            otlp::request,
            otlp::write,
            outputs,
            pipeline,
            progress,
        ),
        Format::Parquet => {
            let identity = Identity::read(&recording, conversion.recording_name.to_owned());
            let options = ParquetOptions {
                events: conversion.events,
                filter: conversion.filter,
                stack_depth: conversion.stack_depth,
                identity: &identity,
            };
            let out = create(outputs, name)?;
            let written = parquet::write(recording, &options, out, pipeline, progress)?;
            let types = if conversion.events.is_empty() {
                parquet::EVENT_TYPES.map(str::to_owned).to_vec()
            } else {
                conversion.events.to_vec()
            };
            Ok(Converted {
                events: written.total_rows(),
                outputs: 1,
                types,
                filtered,
                truncated: written.truncated,
                ..Converted::default()
            })
        }
    }
}

/// The one output of a format other than CSV.
fn create(outputs: &mut dyn Outputs, name: &str) -> Result<Box<dyn Write + Send>, Error> {
    outputs.create(name).map_err(|error| match error {
        CsvError::Create { path, source } => Error::Create { path, source },
        other => Error::Write {
            source: io::Error::other(other.to_string()),
        },
    })
}

/// A profile (pprof's or OTLP's): `make` reads it from `recording`, and
/// `write` writes it into its output, made only once the profile is known
/// to hold allocation events (a recording with none of the kinds it reads
/// is an error, and leaves no empty file).
fn profile_into<P>(
    recording: RecordingFile,
    conversion: &Conversion<'_>,
    make: Make<P>,
    write: fn(&P, &mut dyn Write) -> io::Result<()>,
    outputs: &mut dyn Outputs,
    pipeline: &Pipeline,
    progress: &mut (dyn FnMut(u64) + Send),
) -> Result<Converted, Error> {
    let path = recording.path().to_owned();
    let Profiled { profile, contents } = make(
        recording,
        conversion.filter,
        conversion.stack_depth,
        pipeline,
        progress,
    )?;
    if contents.source.is_none() {
        return Err(Error::NoEvents {
            recording: path,
            live: false,
        });
    }
    let mut out = create(outputs, conversion.format.name())?;
    write(&profile, &mut out).map_err(|source| Error::Write { source })?;
    Ok(Converted::of_profile(
        contents,
        !conversion.filter.is_empty(),
    ))
}

/// How pprof's and OTLP's profiles are made ([`pprof::profile`],
/// [`otlp::request`]).
type Make<P> = fn(
    RecordingFile,
    &Filter,
    usize,
    &Pipeline,
    &mut (dyn FnMut(u64) + Send),
) -> Result<Profiled<P>, Error>;
