//! Gathers the report's [`Page`] from a recording: the leak analysis
//! ([`analysis::leaks`](crate::analysis::leaks)), `top`'s allocation sites
//! and threads, the two flame graphs, and what the recording is, read in
//! three passes ([`page`] says why three).

use heapsampler_core::estimate::{Estimate, Interval};

use super::{
    Flame, HeapChart, HeapPeakRow, Page, PeakRow, PeakSection, PeakSiteRow, RaisedRow, Series,
    Severity, SiteRow, SuspectRow, ThreadRow, Verdict, WatchSection,
};
use crate::Error;
use crate::analysis::leaks::{self, Leaks, Pass, Timeline, Unanswered};
use crate::analysis::liveness::Ending;
use crate::analysis::summary::{Summarize, Summary};
use crate::analysis::top::{GroupBy, Grouping, Groups, Query, Table};
use crate::output::flame;
use crate::output::human::{human_bytes, thousands};
use crate::output::text::leaks::{self as answer, clock, per_minute};
use crate::pipeline::Pipeline;
use jfr_format::names::field;
use jfr_reader::file::RecordingFile;

/// How many top sites and threads the page lists.
const TOP_ROWS: usize = 20;

/// What the report is working on, for a progress line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// The first pass: what needs nothing found before (the leak
    /// analysis's collections, the top sites and threads, the flame
    /// graphs, the agent's statistics).
    First,
    /// One of the leak analysis's later passes.
    Leaks(Pass),
}

impl Step {
    /// What the step reads, for a progress line.
    pub fn what(self) -> &'static str {
        match self {
            Self::First => "collections, allocations and flame graphs, 1 of 3",
            Self::Leaks(pass) => pass.what(),
        }
    }
}

/// Makes the page of `recording`, its groups by `by`, telling `progress`
/// each step and the bytes it has read.
///
/// The recording is read at most three times, each time on every core
/// through the [`Pipeline`]: once for everything that needs nothing found
/// before (the leak analysis's [first pass](leaks::FIRST_PASS), `top`'s
/// sites and threads, both flame graphs' stacks and the agent's
/// statistics, side by side), then for the leak analysis's two later
/// passes, which cannot join it: the second (for a recording with liveness
/// events) follows each group's live bytes after the collections the first
/// found, and the third (when there are suspects) describes the suspects
/// the second found. Memory is what the first pass's analyses hold
/// together: their merged figures, none of them events.
pub fn page(
    recording: RecordingFile,
    by: GroupBy,
    progress: &mut (dyn FnMut(Step, u64) + Send),
) -> Result<Page, Error> {
    let pipeline = Pipeline::default();
    let path = recording.path().to_owned();
    let query = |by| Query {
        by,
        live: false,
        min_gcs: 0,
    };
    // The page shows the subtitle above the graph, where it wraps.
    let (allocated, live) = (
        flame::Options {
            subtitle_in_graph: false,
            ..flame::Options::default()
        },
        flame::Options {
            live: Some(0),
            subtitle_in_graph: false,
            ..flame::Options::default()
        },
    );
    let (allocated_folding, live_folding) = (flame::folding(&allocated), flame::folding(&live));
    let first = (
        leaks::FIRST_PASS,
        (
            Grouping::new(query(by)),
            (
                Grouping::new(query(GroupBy::Thread)),
                (&allocated_folding, (&live_folding, Summarize)),
            ),
        ),
    );
    let start = (
        (Timeline::default(), Ending::default()),
        (
            Groups::new(query(by)),
            (
                Groups::new(query(GroupBy::Thread)),
                (
                    allocated_folding.start(),
                    (live_folding.start(), Summary::default()),
                ),
            ),
        ),
    );
    let ran = pipeline.run(recording, &first, start, &mut |bytes| {
        progress(Step::First, bytes)
    })?;
    let (timeline, (sites, (threads, (allocated_stacks, (live_stacks, summary))))) = ran.merged;
    let found = leaks::answer(
        Timeline::of(timeline),
        &ran.recording,
        by,
        &pipeline,
        &mut |pass, bytes| progress(Step::Leaks(pass), bytes),
    )?;
    let (sites, threads) = (allocations(sites), allocations(threads));
    let mut flames = Vec::new();
    for (heading, options, folding, stacks) in [
        (
            "Allocated bytes",
            &allocated,
            &allocated_folding,
            allocated_stacks,
        ),
        ("Live bytes at the end", &live, &live_folding, live_stacks),
    ] {
        let ending = options.live.map(|_| found.timeline.ending.clone());
        if ending.is_some() && found.timeline.lifetimes == 0 {
            continue;
        }
        let drawn = folding
            .folded(&ran.recording, stacks, ran.truncated, &pipeline)
            .and_then(|folded| flame::finish(options, folded, ending, &path));
        match drawn {
            Ok(drawn) => flames.push(Flame {
                heading: heading.to_owned(),
                subtitle: drawn.subtitle,
                svg: drawn.svg,
            }),
            // A recording without allocation events has no flame graph:
            // the page says what it lacks.
            Err(Error::NoEvents { .. }) => {}
            Err(error) => return Err(error),
        }
    }
    let statistics = summary.agent_statistics;
    let statistic = |name: &str| {
        statistics
            .as_ref()
            .and_then(|fields| fields.iter().find(|(n, _)| n == name))
            .map(|(_, value)| *value)
    };
    let lost = statistic(field::LOST_SAMPLES);
    Ok(Page {
        title: path.file_name().map_or_else(
            || path.display().to_string(),
            |n| n.to_string_lossy().into_owned(),
        ),
        verdict: verdict(&found),
        recording: recording_rows(&found, sites.as_ref(), lost),
        lacking: lacking(&found, sites.as_ref()),
        heap: heap_chart(&found),
        suspects: suspect_rows(&found),
        suspects_notes: suspects_notes(&found),
        peak: peak(&found),
        watch: watch(&found),
        flames,
        top_sites: sites
            .as_ref()
            .map(|table| {
                table
                    .entries
                    .iter()
                    .take(TOP_ROWS)
                    .map(|entry| SiteRow {
                        site: entry.key.clone(),
                        allocated: entry.estimate.bytes_interval(),
                        samples: entry.samples(),
                    })
                    .collect()
            })
            .unwrap_or_default(),
        threads: thread_rows(&found, threads.as_ref()),
        threads_total: threads_total(&found, threads.as_ref()),
        notes: notes(&found),
    })
}

/// `top`'s table of the bytes allocated, or `None` for a recording without
/// allocation events.
fn allocations(groups: Groups) -> Option<Table> {
    let table = groups.table();
    (table.events > 0).then_some(table)
}

fn verdict(found: &Leaks) -> Verdict {
    let severity = match (found.unanswered(), found.suspects.is_empty()) {
        (Some(_), _) => Severity::Unknown,
        (None, true) => Severity::Clear,
        (None, false) => Severity::Suspects,
    };
    let mut details = Vec::new();
    if let Some(basis) = answer::basis(found) {
        details.push(format!("{}.", capitalized(&basis)));
    }
    if let Some(meaning) = answer::live_meaning(found) {
        details.push(format!("{}.", capitalized(&meaning)));
    }
    if let Some(sentence) = answer::against_the_heap(found) {
        details.push(format!("{}.", capitalized(&sentence)));
    }
    Verdict {
        headline: answer::verdict(found),
        details,
        severity,
    }
}

/// `sentence` with its first letter capital.
fn capitalized(sentence: &str) -> String {
    let mut chars = sentence.chars();
    chars.next().map_or_else(String::new, |first| {
        first.to_uppercase().chain(chars).collect()
    })
}

fn recording_rows(
    found: &Leaks,
    sites: Option<&Table>,
    lost: Option<i64>,
) -> Vec<(String, String)> {
    let mut rows = Vec::new();
    let timeline = &found.timeline;
    if let Some(jvm) = &timeline.jvm {
        rows.push(("JVM".to_owned(), jvm.clone()));
    }
    rows.push(("Length".to_owned(), clock(timeline.length())));
    if let Some(table) = sites {
        if let Some(interval) = table.interval {
            rows.push((
                "Sampling interval".to_owned(),
                format!(
                    "{} (mean bytes between samples)",
                    human_bytes(interval as f64)
                ),
            ));
        }
        rows.push((
            "Allocation samples".to_owned(),
            format!(
                "{}, standing for {} allocated",
                thousands(table.total.samples()),
                human_bytes(table.total.bytes())
            ),
        ));
    }
    rows.push((
        "Collections".to_owned(),
        match &timeline.ending.generational_zgc {
            // The agent's collections are ZGC's pauses.
            Some(zgc) => format!(
                "{} major (generational ZGC; {} pauses)",
                thousands(zgc.majors.len() as u64),
                thousands(timeline.collections.len() as u64)
            ),
            None => thousands(timeline.collections.len() as u64),
        },
    ));
    if let Some(lost) = lost {
        rows.push(("Samples lost".to_owned(), thousands(lost.max(0) as u64)));
    }
    rows.push((
        "Live at the end".to_owned(),
        timeline
            .ending
            .live_statement(&found.tracking)
            .trim_start_matches("live: ")
            .to_owned(),
    ));
    rows
}

fn lacking(found: &Leaks, sites: Option<&Table>) -> Vec<String> {
    let mut lacking = Vec::new();
    if found.unanswered() == Some(Unanswered::NoLiveness) {
        lacking.push(
            "No liveness events (heapsampler.ObjectLifetime): the JDK's own recorder does not \
             say when sampled objects die, so there are no live bytes by site, no suspects, \
             no peak by site and no live flame graph. Record with heapsampler for those."
                .to_owned(),
        );
    }
    if let Some(Unanswered::TooFewCollections(reason)) = found.unanswered() {
        lacking.push(format!(
            "{}.",
            capitalized(&answer::too_few_collections(found, &reason))
        ));
    }
    if found.timeline.heap_after.is_empty() {
        lacking.push(
            "No heap summaries (jdk.GCHeapSummary): the heap after each collection is not \
             shown."
                .to_owned(),
        );
    }
    if found.timeline.threads.is_empty() {
        lacking.push(
            "No jdk.ThreadAllocationStatistics: the estimates cannot be checked against the \
             JVM's own per-thread counts."
                .to_owned(),
        );
    }
    if sites.is_none() {
        lacking.push(
            "No allocation events: no top sites, allocation flame graph or per-thread \
             estimate."
                .to_owned(),
        );
    }
    lacking
}

/// Bytes per second to bytes per minute.
fn per_minute_of(interval: &Interval) -> Interval {
    Interval {
        estimate: interval.estimate * 60.0,
        low: interval.low * 60.0,
        high: interval.high * 60.0,
    }
}

fn heap_chart(found: &Leaks) -> Option<HeapChart> {
    let timeline = &found.timeline;
    if found.checkpoints.is_empty() {
        // No liveness to stack: the heap after each collection alone.
        if timeline.heap_after.is_empty() {
            return None;
        }
        return Some(HeapChart {
            times: timeline
                .heap_after
                .iter()
                .map(|h| timeline.seconds(h.nanos))
                .collect(),
            heap_after: timeline
                .heap_after
                .iter()
                .map(|h| Some(h.used as f64))
                .collect(),
            series: Vec::new(),
        });
    }
    Some(HeapChart {
        times: found.seconds(),
        heap_after: (0..found.checkpoints.len())
            .map(|at| found.heap_after(at).map(|used| used as f64))
            .collect(),
        series: found
            .suspects
            .iter()
            .map(|suspect| Series {
                name: suspect.key.clone(),
                values: suspect.live.iter().map(Estimate::bytes_interval).collect(),
            })
            .collect(),
    })
}

fn suspect_rows(found: &Leaks) -> Vec<SuspectRow> {
    found
        .suspects
        .iter()
        .enumerate()
        .map(|(at, suspect)| SuspectRow {
            rank: at + 1,
            site: suspect.key.clone(),
            growth_per_minute: per_minute_of(&suspect.growth.interval),
            live_at_end: suspect.live_at_end().bytes_interval(),
            classes: suspect
                .classes
                .iter()
                .map(|(class, e)| (class.clone(), e.bytes()))
                .collect(),
            median_age_seconds: suspect.median_age_seconds,
            median_gcs_survived: suspect.median_collections.map(|n| n as f64),
            root_paths: suspect
                .held_by
                .iter()
                .map(|held| {
                    format!(
                        "{} ({} of {} old objects with a path)",
                        held.path, held.objects, held.of
                    )
                })
                .collect(),
            first_raised_seconds: suspect
                .first_raised_nanos
                .map(|nanos| found.timeline.seconds(nanos)),
        })
        .collect()
}

/// What the agent's watch raised and saw, or `None` when the recording has
/// none of its events.
fn watch(found: &Leaks) -> Option<WatchSection> {
    let watch = &found.timeline.watch;
    if watch.is_empty() {
        return None;
    }
    let seconds = |nanos| found.timeline.seconds(nanos);
    let last = watch.last_peak();
    let mut peaks: Vec<HeapPeakRow> = watch
        .peaks
        .iter()
        .map(|peak| HeapPeakRow {
            at_seconds: seconds(peak.nanos),
            gc_id: peak.gc_id,
            heap_used: peak.heap_used as f64,
            heap_max: peak.heap_max as f64,
            share: peak.share,
            threshold: peak.threshold,
        })
        .collect();
    peaks.sort_by(|a, b| a.at_seconds.total_cmp(&b.at_seconds));
    Some(WatchSection {
        raised_any: !watch.raised.is_empty(),
        raised_elsewhere: found
            .raised_elsewhere
            .iter()
            .map(|raised| RaisedRow {
                first_raised_seconds: seconds(raised.first_nanos),
                site: answer::site_frames(&raised.site),
                class: raised.site.class.clone(),
                growth_per_minute: per_minute_of(&raised.latest.growth),
                live: raised.latest.live,
            })
            .collect(),
        peaks,
        peak_sites: last
            .map(|(_, sites)| {
                sites
                    .into_iter()
                    .map(|site| PeakSiteRow {
                        site: answer::site_frames(&site.site),
                        class: site.site.class.clone(),
                        live: site.live,
                        samples: site.live_samples,
                    })
                    .collect()
            })
            .unwrap_or_default(),
    })
}

fn suspects_notes(found: &Leaks) -> Vec<String> {
    let mut notes = Vec::new();
    if found.unanswered().is_some() {
        return notes;
    }
    notes.push(
        "A suspect's live bytes grow significantly after the warm-up: the lower end of the \
         95% interval of their growth is above zero, and what they held in the window's \
         first half is still live at the end."
            .to_owned(),
    );
    if found
        .suspects
        .iter()
        .any(|s| s.first_raised_nanos.is_some())
    {
        notes.push(format!(
            "First raised: {}; empty when it did not.",
            answer::FIRST_RAISED
        ));
    }
    if !found.suspects.is_empty() && !found.paths_to_roots {
        notes.push(
            "No paths to GC roots recorded: record with --roots to see what holds the \
             suspects' objects."
                .to_owned(),
        );
    }
    for (key, growth) in &found.freed {
        notes.push(format!(
            "{key} grew {} but what it held in the first half is gone at the end: old \
             garbage not yet collected, or a cache turning over, not a leak.",
            per_minute(growth.bytes_per_second)
        ));
    }
    notes
}

fn peak(found: &Leaks) -> Option<PeakSection> {
    let peak = found.peak.as_ref()?;
    Some(PeakSection {
        at_seconds: found.checkpoints[peak.checkpoint].seconds,
        heap_after: peak.heap_used.map(|used| used as f64),
        rows: peak
            .groups
            .iter()
            .map(|(site, live)| PeakRow {
                site: site.clone(),
                live: live.bytes_interval(),
            })
            .collect(),
    })
}

fn thread_rows(found: &Leaks, threads: Option<&Table>) -> Vec<ThreadRow> {
    let Some(table) = threads else {
        return Vec::new();
    };
    table
        .entries
        .iter()
        .take(TOP_ROWS)
        .map(|entry| ThreadRow {
            thread: entry.key.clone(),
            estimated: entry.estimate.bytes_interval(),
            jvm_counted: found
                .timeline
                .threads
                .iter()
                .find(|t| t.thread == entry.key)
                .map(|t| t.allocated as f64),
        })
        .collect()
}

/// Every thread the JVM counted and the samples estimate, together.
fn threads_total(found: &Leaks, threads: Option<&Table>) -> Option<ThreadRow> {
    let table = threads?;
    let mut estimated = Estimate::new();
    let mut counted = 0.0;
    for entry in &table.entries {
        if let Some(count) = found
            .timeline
            .threads
            .iter()
            .find(|t| t.thread == entry.key)
        {
            estimated.merge(&entry.estimate);
            counted += count.allocated as f64;
        }
    }
    (estimated.samples() > 0).then(|| ThreadRow {
        thread: "threads the JVM counted".to_owned(),
        estimated: estimated.bytes_interval(),
        jvm_counted: Some(counted),
    })
}

fn notes(found: &Leaks) -> Vec<String> {
    let mut notes = Vec::new();
    if !found.timeline.threads.is_empty() {
        notes.push(
            "The JVM counts a thread's bytes from its start, at each flush; the samples \
             count from the recording's start. They agree for threads that started after \
             the recording did (an agent loaded at the JVM's start) and were alive at the \
             last flush."
                .to_owned(),
        );
    }
    if found.untracked.samples() > 0 {
        notes.push(format!(
            "Not followed for liveness: {} of objects at or above the agent's live_max size \
             (by default G1's humongous objects).",
            human_bytes(found.untracked.bytes())
        ));
    }
    notes
}
