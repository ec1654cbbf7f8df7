//! `heapsampler convert` from start to end: reads a recording once, chunk by
//! chunk, keeps the events the [`Filter`] accepts, and writes them as CSV
//! ([`export`](crate::export)) or as folded stacks
//! ([`collapsed`](crate::collapsed)), showing progress on a terminal.

use std::collections::HashMap;
use std::fs::File;
use std::io::{self, BufWriter, IsTerminal, Write};
use std::path::{Path, PathBuf};

use crate::collapsed::FoldedStacks;
use crate::export::{ExportError, write_csv};
use crate::filter::{ChunkFilter, Filter, TimeBound, Window};
use crate::progress::Progress;
use crate::read::chunk::{Chunk, Event};
use crate::read::file::{Container, FileError, RecordingFile};
use crate::read::metadata::ClassInfo;

/// The event type `--format collapsed` folds when none is named.
pub const DEFAULT_COLLAPSED_TYPE: &str = "jdk.ObjectAllocationSample";

/// What to write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum Format {
    /// One row per event, one column per field.
    #[default]
    Csv,
    /// Folded stacks for flame graphs: `root;...;top value` per stack.
    Collapsed,
}

/// How to convert.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Where to write; `-` is standard output; `None`: next to the recording.
    pub output: Option<PathBuf>,
    /// The event types to convert; empty: every type (CSV) or
    /// [`DEFAULT_COLLAPSED_TYPE`] (collapsed).
    pub events: Vec<String>,
    /// Frames kept per stack trace, those nearest the top.
    pub stack_depth: usize,
    /// What to write.
    pub format: Format,
    /// Which events to keep.
    pub filter: Filter,
}

/// Why a conversion failed.
#[derive(Debug, thiserror::Error)]
pub enum ConvertError {
    /// The options contradict each other (exit code 2).
    #[error("{0}")]
    Usage(String),
    /// The recording or the output failed (exit code 1).
    #[error("{0}")]
    Failed(String),
}

/// What a conversion did, for the messages after it.
#[derive(Debug, Clone, Default)]
pub struct Outcome {
    /// Events written (CSV rows, or events folded into stacks).
    pub events: u64,
    /// The event types asked for (empty: all).
    pub types: Vec<String>,
    /// Whether a filter was given.
    pub filtered: bool,
    /// The last chunk was cut short: its offset and how many bytes it had.
    pub truncated: Option<(u64, u64)>,
}

impl Outcome {
    /// The warnings to show, one line each, about the conversion of `file`.
    pub fn warnings(&self, file: &Path) -> Vec<String> {
        let mut warnings = Vec::new();
        if let Some((offset, bytes)) = self.truncated {
            warnings.push(format!(
                "warning: {}: the last chunk (at byte {offset}) is cut short after {bytes} bytes; \
                 converted the complete chunks before it",
                file.display()
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

impl Options {
    /// The event types to read, or a usage error: folded stacks of several
    /// types would add up bytes and counts in one graph.
    fn types(&self) -> Result<Vec<String>, ConvertError> {
        match (self.format, self.events.len()) {
            (Format::Collapsed, 0) => Ok(vec![DEFAULT_COLLAPSED_TYPE.to_owned()]),
            (Format::Collapsed, 1) | (Format::Csv, _) => Ok(self.events.clone()),
            (Format::Collapsed, _) => Err(ConvertError::Usage(format!(
                "--format collapsed folds one event type, not {}: name one with --events",
                self.events.join(",")
            ))),
        }
    }

    /// Refuses a window that is empty before any recording is read: both
    /// ends of one kind, the start not before the end.
    fn check_window(&self) -> Result<(), ConvertError> {
        let (Some(from), Some(to)) = (self.filter.from, self.filter.to) else {
            return Ok(());
        };
        let empty = match (from, to) {
            (TimeBound::At(from), TimeBound::At(to))
            | (TimeBound::AfterStart(from), TimeBound::AfterStart(to)) => from >= to,
            _ => false,
        };
        if empty {
            return Err(ConvertError::Usage(
                "--from must come before --to: the window [from, to) is empty".to_owned(),
            ));
        }
        Ok(())
    }
}

/// Where CSV goes: one writer for a single event type, or a folder with a
/// file per type.
enum Destination {
    Single(Option<Box<dyn Write>>),
    Folder(PathBuf),
}

/// What is written as the chunks are read.
enum Sink {
    Csv {
        destination: Destination,
        writers: HashMap<String, csv::Writer<Box<dyn Write>>>,
        rows: HashMap<String, u64>,
    },
    Collapsed {
        out: Box<dyn Write>,
        stacks: FoldedStacks,
        events: u64,
    },
}

fn create(path: &Path) -> Result<Box<dyn Write>, ConvertError> {
    let file = File::create(path)
        .map_err(|e| ConvertError::Failed(format!("cannot create {}: {e}", path.display())))?;
    Ok(Box::new(BufWriter::new(file)))
}

fn is_stdout(path: &Path) -> bool {
    path.as_os_str() == "-"
}

impl Sink {
    /// Opens the output: for CSV one file (or standard output) when one type
    /// is asked for, otherwise a folder; for folded stacks always one file.
    fn open(file: &Path, options: &Options, types: &[String]) -> Result<Self, ConvertError> {
        let name = file
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("recording");
        let stem = name.split('.').next().unwrap_or("recording");
        let beside = |extension: &str| file.with_file_name(format!("{stem}{extension}"));
        let single = |path: Option<&PathBuf>, extension| match path {
            Some(path) if is_stdout(path) => {
                Ok(Box::new(BufWriter::new(io::stdout())) as Box<dyn Write>)
            }
            Some(path) => create(path),
            None => create(&beside(extension)),
        };
        if options.format == Format::Collapsed {
            return Ok(Self::Collapsed {
                out: single(options.output.as_ref(), ".collapsed")?,
                stacks: FoldedStacks::new(),
                events: 0,
            });
        }
        let destination = match (&options.output, types.len() == 1) {
            (output, true) => Destination::Single(Some(single(output.as_ref(), ".csv")?)),
            (Some(path), false) if is_stdout(path) => {
                return Err(ConvertError::Failed(
                    "several event types cannot go to standard output: name one with --events"
                        .to_owned(),
                ));
            }
            (Some(folder), false) => Destination::Folder(folder.clone()),
            (None, false) => Destination::Folder(beside("-csv")),
        };
        if let Destination::Folder(folder) = &destination {
            std::fs::create_dir_all(folder).map_err(|e| {
                ConvertError::Failed(format!("cannot create {}: {e}", folder.display()))
            })?;
        }
        Ok(Self::Csv {
            destination,
            writers: HashMap::new(),
            rows: HashMap::new(),
        })
    }

    /// Writes (or folds) the events of `chunk` that `keep` accepts.
    fn chunk(
        &mut self,
        chunk: &Chunk<'_>,
        keep: &dyn Fn(&ClassInfo, &Event) -> bool,
        stack_depth: usize,
    ) -> Result<(), ExportError> {
        match self {
            Self::Csv {
                destination,
                writers,
                rows,
            } => {
                let mut open = |type_name: &str| -> io::Result<Box<dyn Write>> {
                    match destination {
                        Destination::Single(writer) => writer
                            .take()
                            .ok_or_else(|| io::Error::other("one output for one event type")),
                        Destination::Folder(folder) => Ok(Box::new(BufWriter::new(File::create(
                            folder.join(format!("{type_name}.csv")),
                        )?))),
                    }
                };
                write_csv(chunk, keep, stack_depth, writers, &mut open, rows)
            }
            Self::Collapsed { stacks, events, .. } => {
                let mut folder = stacks.chunk(chunk, stack_depth);
                for event in chunk.events() {
                    let event = event?;
                    let Some(class) = chunk.metadata.class(event.type_id) else {
                        continue;
                    };
                    if keep(class, &event) {
                        folder.add(&event);
                        *events += 1;
                    }
                }
                Ok(())
            }
        }
    }

    /// Writes what is left and flushes; returns the events written.
    fn finish(self) -> io::Result<u64> {
        match self {
            Self::Csv {
                mut writers, rows, ..
            } => {
                for writer in writers.values_mut() {
                    writer.flush()?;
                }
                Ok(rows.values().sum())
            }
            Self::Collapsed {
                mut out,
                stacks,
                events,
            } => {
                stacks.write(&mut out)?;
                out.flush()?;
                Ok(events)
            }
        }
    }
}

/// Converts the recording `file` as `options` say.
pub fn convert(file: &Path, options: &Options) -> Result<Outcome, ConvertError> {
    let types = options.types()?;
    options.check_window()?;
    let failed = |e: FileError| ConvertError::Failed(e.to_string());
    let mut recording = RecordingFile::open(file).map_err(failed)?;
    let mut sink = Sink::open(file, options, &types)?;
    // Progress counts bytes of the file as stored; a compressed file's
    // position is not known, so its progress counts decompressed bytes.
    let size = std::fs::metadata(file).ok().map(|m| m.len());
    let total = size.filter(|_| recording.container() == Container::Plain);
    let name = file.file_name().map_or_else(
        || file.display().to_string(),
        |n| n.to_string_lossy().into(),
    );
    let output_on_terminal =
        options.output.as_deref().is_some_and(is_stdout) && io::stdout().is_terminal();
    let mut progress = Progress::new(name, total, !output_on_terminal);
    let wanted = |type_name: &str| types.is_empty() || types.iter().any(|t| t == type_name);
    // Offsets such as --from 30s count from the recording's start: the
    // first chunk's.
    let mut window: Option<Window> = None;
    while let Some(raw) = recording.next_chunk().map_err(failed)? {
        let chunk = Chunk::read(&raw.bytes, raw.offset).map_err(|source| {
            failed(FileError::Malformed {
                path: file.to_owned(),
                source,
            })
        })?;
        let window = *window.get_or_insert_with(|| options.filter.window(chunk.header.start_nanos));
        let filter = ChunkFilter::new(&options.filter, window, &chunk);
        let keep = |class: &ClassInfo, event: &Event| wanted(&class.name) && filter.keep(event);
        sink.chunk(&chunk, &keep, options.stack_depth)
            .map_err(|e| ConvertError::Failed(format!("{}: {e}", file.display())))?;
        progress.update(raw.offset + raw.bytes.len() as u64);
    }
    drop(progress);
    let events = sink
        .finish()
        .map_err(|e| ConvertError::Failed(format!("writing the output: {e}")))?;
    Ok(Outcome {
        events,
        types,
        filtered: !options.filter.is_empty(),
        truncated: recording.truncated(),
    })
}
