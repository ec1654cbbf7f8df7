//! `heapsampler report`: one self-contained HTML page that answers "what is
//! leaking?", drawn from plain data ([`Page`]) that the leak analysis fills.
//! The data take three passes over the recording, however many analyses
//! feed the page: one for everything that needs nothing found before, side
//! by side, and the leak analysis's two that need what the pass before
//! found (the collections, then the suspects); [`gather::page`] says which.
//!
//! The page leads with the verdict, then the heap after each collection
//! with the suspects' live bytes stacked under it, the suspects (with when
//! the agent first raised each, and the sites it raised that are none), the
//! peak, the heap peaks the agent wrote, the flame graphs, the top sites, the check of the per-thread estimate
//! against the JVM's counts, and what the recording is and lacks.
//!
//! Everything is inline (one `<style>`, the charts as SVG drawn here with
//! plotters, the flame graphs' own scripts): no network, no external file,
//! so the page opens offline in any browser and prints. Its HTML comes
//! from `templates/report.html` (askama: compiled, escaping on).
//!
//! Each flame graph is embedded whole in an `<iframe srcdoc>`: inferno's
//! script keeps its state in globals and element ids (`frames`,
//! `details`, `search`), takes the document's first `<svg>` as its own and
//! listens on the whole window, so two graphs inline in one page, or one
//! beside the heap chart, would drive each other. In its own frame each
//! script sees only its graph, as in the `flame` command's file. One thing
//! differs there: the frame's address (`about:srcdoc`) cannot take the zoom
//! and search state inferno writes into it, which throws; a small script
//! before inferno's keeps that from being an error.
//!
//! Every chart's data is in the page too, as a table beside the chart
//! (collapsed under `<details>`), each cell naming its series in
//! `data-series` and carrying its figure unformatted in `data-bytes` (with
//! `data-low` and `data-high` for the 95% interval): what a reader checks a
//! chart against, and what tests read.

pub mod gather;

use askama::Template;
use heapsampler_core::estimate::Interval;
use plotters::prelude::*;

use crate::output::human::{human_bytes, human_interval, thousands};

/// Everything the page shows, as plain figures and words. Bytes are `f64`
/// (estimates), times are seconds from the recording's start; an estimate
/// with its 95% interval is an [`Interval`].
#[derive(Debug, Clone, Default)]
pub struct Page {
    /// What is reported on: the recording's file name.
    pub title: String,
    /// The answer, first on the page.
    pub verdict: Verdict,
    /// What the recording is, label then value: "JVM", "Sampling
    /// interval", "Length", "Samples", "Lost", ...
    pub recording: Vec<(String, String)>,
    /// What the recording lacks and so what the page cannot say, one
    /// sentence each (a JDK recording has no liveness).
    pub lacking: Vec<String>,
    /// The heap after each collection and the suspects' live bytes then;
    /// `None` when the recording has no collections or no liveness.
    pub heap: Option<HeapChart>,
    /// The leak suspects, most growth first. Their order is the heap
    /// chart's series' order when both name the same sites.
    pub suspects: Vec<SuspectRow>,
    /// Said under the suspects' table: why root paths are missing (the
    /// recording has none), or how suspects are found.
    pub suspects_notes: Vec<String>,
    /// The live set at the collection with the highest heap after it.
    pub peak: Option<PeakSection>,
    /// What the agent's watch raised and saw while the program ran; `None`
    /// when the recording has none of its events.
    pub watch: Option<WatchSection>,
    /// The flame graphs: heading, and the SVG `output::flame` made
    /// (allocated bytes, live bytes).
    pub flames: Vec<Flame>,
    /// The sites that allocated the most bytes, most first.
    pub top_sites: Vec<SiteRow>,
    /// The bytes each thread allocated, as estimated and as the JVM
    /// counted them (`jdk.ThreadAllocationStatistics`).
    pub threads: Vec<ThreadRow>,
    /// All threads together.
    pub threads_total: Option<ThreadRow>,
    /// Anything else to say, last on the page, one sentence each.
    pub notes: Vec<String>,
}

/// The page's answer: a headline ("the live set grows 26.8 MB/min; 2
/// suspects") and how it reads.
#[derive(Debug, Clone, Default)]
pub struct Verdict {
    /// One line, read at a glance.
    pub headline: String,
    /// Sentences under the headline.
    pub details: Vec<String>,
    /// Its colour.
    pub severity: Severity,
}

/// How a verdict reads: what colour its banner is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Severity {
    /// Nothing grows: green.
    Clear,
    /// Sites whose live bytes grow: amber.
    Suspects,
    /// The recording cannot say (no liveness, no collections): grey.
    #[default]
    Unknown,
}

impl Severity {
    /// The banner's CSS class.
    fn class(self) -> &'static str {
        match self {
            Self::Clear => "clear",
            Self::Suspects => "suspects",
            Self::Unknown => "unknown",
        }
    }
}

/// The heap chart's data, one point per collection.
#[derive(Debug, Clone, Default)]
pub struct HeapChart {
    /// When each collection ended, in seconds from the recording's start,
    /// ascending.
    pub times: Vec<f64>,
    /// The heap used after each collection (`jdk.GCHeapSummary`), where
    /// the recording has it; as long as `times`.
    pub heap_after: Vec<Option<f64>>,
    /// Estimated live bytes after each collection, stacked from the first
    /// (at the bottom) up.
    pub series: Vec<Series>,
}

/// One stacked series of the heap chart.
#[derive(Debug, Clone)]
pub struct Series {
    /// What it is: a site's name, as the suspects' table names it.
    pub name: String,
    /// Its live bytes after each collection, with their intervals; as long
    /// as [`HeapChart::times`].
    pub values: Vec<Interval>,
}

/// A leak suspect.
#[derive(Debug, Clone)]
pub struct SuspectRow {
    /// 1 for the fastest growing.
    pub rank: usize,
    /// The site.
    pub site: String,
    /// How fast its live bytes grow, in bytes per minute.
    pub growth_per_minute: Interval,
    /// Its live bytes after the last collection.
    pub live_at_end: Interval,
    /// The classes it keeps live: name and estimated bytes, most first.
    pub classes: Vec<(String, f64)>,
    /// The median age of its live objects at the end, in seconds.
    pub median_age_seconds: Option<f64>,
    /// The median number of collections its live objects survived.
    pub median_gcs_survived: Option<f64>,
    /// What holds its objects, one path to a root each (empty when the
    /// recording has none: [`Page::suspects_notes`] says so).
    pub root_paths: Vec<String>,
    /// When the agent first raised a site of it as a leak suspect, in
    /// seconds from the recording's start; `None` when it did not.
    pub first_raised_seconds: Option<f64>,
}

/// What the agent's watch wrote while the program ran.
#[derive(Debug, Clone, Default)]
pub struct WatchSection {
    /// Whether it raised any leak suspect: the suspects' table then says
    /// when it first raised each.
    pub raised_any: bool,
    /// The sites it raised that are not among the suspects, in the order
    /// first raised.
    pub raised_elsewhere: Vec<RaisedRow>,
    /// The heap peaks it wrote, in time order.
    pub peaks: Vec<HeapPeakRow>,
    /// The sites live at the last peak, most bytes first.
    pub peak_sites: Vec<PeakSiteRow>,
}

/// A site the agent raised as a leak suspect, with the figures it wrote
/// last.
#[derive(Debug, Clone)]
pub struct RaisedRow {
    /// When it first raised it, seconds from the recording's start.
    pub first_raised_seconds: f64,
    /// The site: its top frames, or the other sites.
    pub site: String,
    /// Its objects' class (empty for the other sites).
    pub class: String,
    /// How fast its live bytes grew, bytes per minute.
    pub growth_per_minute: Interval,
    /// Its live bytes.
    pub live: Interval,
}

/// A heap peak the agent wrote.
#[derive(Debug, Clone)]
pub struct HeapPeakRow {
    /// When, seconds from the recording's start.
    pub at_seconds: f64,
    /// The collection after which it was seen.
    pub gc_id: u64,
    /// The heap in use.
    pub heap_used: f64,
    /// The heap's maximum.
    pub heap_max: f64,
    /// The share of the maximum in use (0 to 1).
    pub share: f64,
    /// The share a peak had to pass to be written (0 to 1).
    pub threshold: f64,
}

/// A site's live bytes at the agent's last heap peak.
#[derive(Debug, Clone)]
pub struct PeakSiteRow {
    /// The site: its top frames, or the other sites.
    pub site: String,
    /// Its objects' class (empty for the other sites).
    pub class: String,
    /// Its live bytes.
    pub live: Interval,
    /// The tracked samples live there.
    pub samples: u64,
}

/// The live set at the peak.
#[derive(Debug, Clone)]
pub struct PeakSection {
    /// When the collection ended, in seconds from the recording's start.
    pub at_seconds: f64,
    /// The heap used after it.
    pub heap_after: Option<f64>,
    /// The sites most live then, most first.
    pub rows: Vec<PeakRow>,
}

/// A site's live bytes at the peak.
#[derive(Debug, Clone)]
pub struct PeakRow {
    /// The site.
    pub site: String,
    /// Its estimated live bytes.
    pub live: Interval,
}

/// A flame graph to embed.
#[derive(Debug, Clone)]
pub struct Flame {
    /// What it shows: "Allocated bytes", "Live bytes at the end".
    pub heading: String,
    /// Its totals and what its colours mean (`flame::Drawn::subtitle`),
    /// shown above it in the page's text, which wraps to the page's width.
    pub subtitle: String,
    /// The SVG file `output::flame` made, whole, drawn without its
    /// subtitle.
    pub svg: String,
}

/// A site's allocated bytes.
#[derive(Debug, Clone)]
pub struct SiteRow {
    /// The site.
    pub site: String,
    /// Its estimated bytes allocated.
    pub allocated: Interval,
    /// The samples it is estimated from.
    pub samples: u64,
}

/// A thread's allocated bytes, estimated and as the JVM counted them.
#[derive(Debug, Clone)]
pub struct ThreadRow {
    /// The thread's name.
    pub thread: String,
    /// Estimated from the samples.
    pub estimated: Interval,
    /// What the JVM counted over the same time, where the recording has it.
    pub jvm_counted: Option<f64>,
}

/// Writes `page` as one self-contained HTML document into `out`.
pub fn write_page(page: &Page, out: &mut dyn std::io::Write) -> std::io::Result<()> {
    let view = View::of(page)?;
    let html = view.render().map_err(std::io::Error::other)?;
    out.write_all(html.as_bytes())
}

/// Colour-blind safe colours (Okabe and Ito) for the stacked series, in
/// order; more series than these repeat them.
const SERIES_COLOURS: [(u8, u8, u8); 7] = [
    (213, 94, 0),    // vermillion
    (0, 114, 178),   // blue
    (0, 158, 115),   // bluish green
    (230, 159, 0),   // orange
    (204, 121, 167), // reddish purple
    (86, 180, 233),  // sky blue
    (240, 228, 66),  // yellow
];

/// The heap line's colour: near black, apart from every series'.
const HEAP_COLOUR: RGBColor = RGBColor(34, 34, 34);

/// The heap chart's size in pixels: as wide as the page's text column.
const CHART_SIZE: (u32, u32) = (1000, 420);

/// The page's figures as the template shows them.
#[derive(Template)]
#[template(path = "report.html")]
struct View<'p> {
    page: &'p Page,
    severity: &'static str,
    heap: Option<ChartView>,
    suspects: Vec<SuspectView>,
    peak: Option<PeakView>,
    watch: Option<WatchView>,
    /// Whether the suspects' table says when the agent first raised each.
    raised_column: bool,
    flames: Vec<FlameView>,
    top_sites: Vec<SiteView>,
    threads: Vec<ThreadView>,
    threads_total: Option<ThreadView>,
    generator: &'static str,
}

struct ChartView {
    svg: String,
    legend: Vec<LegendEntry>,
    /// The series' names, after the heap's column.
    columns: Vec<String>,
    rows: Vec<ChartRow>,
}

struct LegendEntry {
    name: String,
    colour: String,
}

struct ChartRow {
    seconds: f64,
    time: String,
    heap: Option<f64>,
    heap_text: String,
    cells: Vec<Cell>,
}

/// A figure with its interval, formatted and raw.
struct Cell {
    series: String,
    value: f64,
    low: f64,
    high: f64,
    text: String,
    interval: String,
}

impl Cell {
    fn bytes(series: &str, interval: &Interval) -> Self {
        Self {
            series: series.to_owned(),
            value: interval.estimate,
            low: interval.low,
            high: interval.high,
            text: human_bytes(interval.estimate),
            interval: human_interval(interval, human_bytes),
        }
    }
}

struct SuspectView {
    rank: usize,
    site: String,
    /// The site cut after each `.` and `(`, where a narrow column may wrap
    /// it.
    site_parts: Vec<String>,
    colour: Option<String>,
    growth: Cell,
    live: Cell,
    classes: Vec<(String, String)>,
    age: String,
    gcs: String,
    root_paths: Vec<String>,
    /// When the agent first raised it (`raised_seconds` unformatted), or
    /// empty.
    raised: String,
    raised_seconds: String,
}

struct WatchView {
    raised_elsewhere: Vec<RaisedView>,
    peaks: Vec<HeapPeakView>,
    peak_sites: Vec<PeakSiteView>,
}

struct RaisedView {
    raised: String,
    raised_seconds: f64,
    site: String,
    class: String,
    growth: Cell,
    live: Cell,
}

struct HeapPeakView {
    at: String,
    gc_id: u64,
    heap_used: String,
    heap_max: String,
    share: String,
    threshold: String,
}

struct PeakSiteView {
    site: String,
    class: String,
    live: Cell,
    samples: String,
}

struct PeakView {
    at: String,
    heap_after: String,
    rows: Vec<(String, Cell)>,
}

struct FlameView {
    heading: String,
    subtitle: String,
    /// The whole document of the frame.
    document: String,
    height: u32,
}

struct SiteView {
    site: String,
    allocated: Cell,
    samples: String,
}

struct ThreadView {
    thread: String,
    estimated: Cell,
    counted: String,
    /// Whether the JVM's count lies in the interval: "yes", "no", or
    /// empty without a count.
    within: &'static str,
}

impl<'p> View<'p> {
    fn of(page: &'p Page) -> std::io::Result<Self> {
        let colour_of = |site: &str| {
            let series = &page.heap.as_ref()?.series;
            let at = series.iter().position(|s| s.name == site)?;
            Some(css_colour(SERIES_COLOURS[at % SERIES_COLOURS.len()]))
        };
        let heap = match &page.heap {
            Some(chart) if !chart.times.is_empty() => Some(chart_view(chart)?),
            _ => None,
        };
        Ok(Self {
            page,
            severity: page.verdict.severity.class(),
            heap,
            suspects: page
                .suspects
                .iter()
                .map(|s| SuspectView {
                    rank: s.rank,
                    site: s.site.clone(),
                    site_parts: s
                        .site
                        .split_inclusive(['.', '('])
                        .map(str::to_owned)
                        .collect(),
                    colour: colour_of(&s.site),
                    growth: Cell {
                        series: s.site.clone(),
                        value: s.growth_per_minute.estimate,
                        low: s.growth_per_minute.low,
                        high: s.growth_per_minute.high,
                        text: rate(s.growth_per_minute.estimate),
                        interval: rate_interval(&s.growth_per_minute),
                    },
                    live: Cell::bytes(&s.site, &s.live_at_end),
                    classes: s
                        .classes
                        .iter()
                        .map(|(class, bytes)| (class.clone(), human_bytes(*bytes)))
                        .collect(),
                    age: s.median_age_seconds.map(duration).unwrap_or_default(),
                    gcs: s
                        .median_gcs_survived
                        .map(|gcs| format!("{gcs:.0}"))
                        .unwrap_or_default(),
                    root_paths: s.root_paths.clone(),
                    raised: s.first_raised_seconds.map(clock).unwrap_or_default(),
                    raised_seconds: s
                        .first_raised_seconds
                        .map(|seconds| seconds.to_string())
                        .unwrap_or_default(),
                })
                .collect(),
            watch: page.watch.as_ref().map(watch_view),
            raised_column: page.watch.as_ref().is_some_and(|w| w.raised_any),
            peak: page.peak.as_ref().map(|peak| PeakView {
                at: clock(peak.at_seconds),
                heap_after: peak.heap_after.map(human_bytes).unwrap_or_default(),
                rows: peak
                    .rows
                    .iter()
                    .map(|row| (row.site.clone(), Cell::bytes(&row.site, &row.live)))
                    .collect(),
            }),
            flames: page
                .flames
                .iter()
                .map(|flame| FlameView {
                    heading: flame.heading.clone(),
                    subtitle: flame.subtitle.clone(),
                    document: frame_document(&flame.svg),
                    height: svg_height(&flame.svg).unwrap_or(600) + 4,
                })
                .collect(),
            top_sites: page
                .top_sites
                .iter()
                .map(|row| SiteView {
                    site: row.site.clone(),
                    allocated: Cell::bytes(&row.site, &row.allocated),
                    samples: thousands(row.samples),
                })
                .collect(),
            threads: page.threads.iter().map(thread_view).collect(),
            threads_total: page.threads_total.as_ref().map(thread_view),
            generator: concat!("heapsampler ", env!("CARGO_PKG_VERSION")),
        })
    }
}

fn watch_view(watch: &WatchSection) -> WatchView {
    let percent = |share: f64| format!("{:.0}%", 100.0 * share);
    WatchView {
        raised_elsewhere: watch
            .raised_elsewhere
            .iter()
            .map(|row| RaisedView {
                raised: clock(row.first_raised_seconds),
                raised_seconds: row.first_raised_seconds,
                site: row.site.clone(),
                class: row.class.clone(),
                growth: Cell {
                    series: row.site.clone(),
                    value: row.growth_per_minute.estimate,
                    low: row.growth_per_minute.low,
                    high: row.growth_per_minute.high,
                    text: rate(row.growth_per_minute.estimate),
                    interval: rate_interval(&row.growth_per_minute),
                },
                live: Cell::bytes(&row.site, &row.live),
            })
            .collect(),
        peaks: watch
            .peaks
            .iter()
            .map(|peak| HeapPeakView {
                at: clock(peak.at_seconds),
                gc_id: peak.gc_id,
                heap_used: human_bytes(peak.heap_used),
                heap_max: human_bytes(peak.heap_max),
                share: percent(peak.share),
                threshold: percent(peak.threshold),
            })
            .collect(),
        peak_sites: watch
            .peak_sites
            .iter()
            .map(|row| PeakSiteView {
                site: row.site.clone(),
                class: row.class.clone(),
                live: Cell::bytes(&row.site, &row.live),
                samples: thousands(row.samples),
            })
            .collect(),
    }
}

fn thread_view(row: &ThreadRow) -> ThreadView {
    ThreadView {
        thread: row.thread.clone(),
        estimated: Cell::bytes(&row.thread, &row.estimated),
        counted: row.jvm_counted.map(human_bytes).unwrap_or_default(),
        within: match row.jvm_counted {
            Some(counted) if row.estimated.contains(counted) => "yes",
            Some(_) => "no",
            None => "",
        },
    }
}

/// `#d55e00`.
fn css_colour((r, g, b): (u8, u8, u8)) -> String {
    format!("#{r:02x}{g:02x}{b:02x}")
}

/// Bytes that may be negative (a growth): `-1.2 MB`.
fn signed_bytes(bytes: f64) -> String {
    if bytes < 0.0 {
        format!("-{}", human_bytes(-bytes))
    } else {
        human_bytes(bytes)
    }
}

/// A growth per minute: `26.8 MB/min`.
fn rate(bytes_per_minute: f64) -> String {
    format!("{}/min", signed_bytes(bytes_per_minute))
}

/// A growth's interval: `20.1-33.0 MB/min`, or `-1.0 MB to 2.0 MB/min`
/// when it holds zero.
fn rate_interval(interval: &Interval) -> String {
    if interval.low >= 0.0 {
        format!("{}/min", human_interval(interval, human_bytes))
    } else {
        format!(
            "{} to {}/min",
            signed_bytes(interval.low),
            signed_bytes(interval.high)
        )
    }
}

/// A time from the recording's start: `4:05`, `1:02:03`.
fn clock(seconds: f64) -> String {
    let whole = seconds.max(0.0).round() as u64;
    let (hours, minutes, seconds) = (whole / 3600, whole / 60 % 60, whole % 60);
    if hours > 0 {
        format!("{hours}:{minutes:02}:{seconds:02}")
    } else {
        format!("{minutes}:{seconds:02}")
    }
}

/// A length of time: `42 s`, `3 min 20 s`, `2 h 5 min`.
fn duration(seconds: f64) -> String {
    let whole = seconds.max(0.0).round() as u64;
    match whole {
        0..60 => format!("{whole} s"),
        60..3600 => format!("{} min {} s", whole / 60, whole % 60),
        _ => format!("{} h {} min", whole / 3600, whole / 60 % 60),
    }
}

/// The unit of the time axis, in seconds, for a recording `span` seconds
/// long: seconds, minutes from 2 of them, hours from 2 of them.
fn time_unit(span: f64) -> f64 {
    match span {
        ..120.0 => 1.0,
        ..7200.0 => 60.0,
        _ => 3600.0,
    }
}

fn chart_view(chart: &HeapChart) -> std::io::Result<ChartView> {
    let svg =
        draw_heap(chart).map_err(|e| std::io::Error::other(format!("the heap chart: {e}")))?;
    let rows = chart
        .times
        .iter()
        .enumerate()
        .map(|(at, &seconds)| {
            let heap = chart.heap_after.get(at).copied().flatten();
            ChartRow {
                seconds,
                time: clock(seconds),
                heap,
                heap_text: heap.map(human_bytes).unwrap_or_default(),
                cells: chart
                    .series
                    .iter()
                    .filter_map(|series| Some(Cell::bytes(&series.name, series.values.get(at)?)))
                    .collect(),
            }
        })
        .collect();
    Ok(ChartView {
        svg,
        legend: chart
            .series
            .iter()
            .enumerate()
            .map(|(at, series)| LegendEntry {
                name: series.name.clone(),
                colour: css_colour(SERIES_COLOURS[at % SERIES_COLOURS.len()]),
            })
            .collect(),
        columns: chart.series.iter().map(|s| s.name.clone()).collect(),
        rows,
    })
}

/// The heap chart as SVG: the series' live bytes stacked as areas, the
/// heap after each collection as a line with a point at each collection
/// over them. The legend is the page's (site names are long, and HTML
/// wraps them).
fn draw_heap(chart: &HeapChart) -> Result<String, Box<dyn std::error::Error>> {
    let times = &chart.times;
    let end = times.last().copied().unwrap_or(0.0).max(1.0);
    // The stack's top edge after each series: bottom first.
    let mut stacked: Vec<Vec<f64>> = Vec::with_capacity(chart.series.len());
    let mut below = vec![0.0; times.len()];
    for series in &chart.series {
        let top: Vec<f64> = below
            .iter()
            .enumerate()
            .map(|(at, low)| low + series.values.get(at).map_or(0.0, |v| v.estimate.max(0.0)))
            .collect();
        stacked.push(top.clone());
        below = top;
    }
    let highest = chart
        .heap_after
        .iter()
        .flatten()
        .chain(&below)
        .fold(0.0f64, |a, &b| a.max(b));
    let top = if highest > 0.0 { highest * 1.08 } else { 1.0 };

    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, CHART_SIZE).into_drawing_area();
        root.fill(&WHITE)?;
        // In whole minutes or hours from two of them on, so that the
        // axis' round numbers are round times.
        let unit = time_unit(end);
        let mut plot = ChartBuilder::on(&root)
            .margin(12)
            .x_label_area_size(48)
            .y_label_area_size(84)
            .build_cartesian_2d(0.0..end / unit, 0.0..top)?;
        plot.configure_mesh()
            .light_line_style(WHITE.mix(0.0))
            .bold_line_style(RGBColor(0, 0, 0).mix(0.1))
            .x_label_formatter(&|at| clock(*at * unit))
            // No more ticks than whole units: a short recording's would
            // fall between seconds, and read as the same second twice.
            .x_labels(((end / unit).ceil() as usize + 1).clamp(2, 12))
            .y_label_formatter(&|bytes| human_bytes(*bytes))
            .x_desc("time since the recording started (m:ss)")
            .y_desc("bytes")
            .label_style(("sans-serif", 16))
            .axis_desc_style(("sans-serif", 16))
            .draw()?;
        let mut bottom = vec![0.0; times.len()];
        for (at, top) in stacked.iter().enumerate() {
            let (r, g, b) = SERIES_COLOURS[at % SERIES_COLOURS.len()];
            let outline: Vec<(f64, f64)> = times
                .iter()
                .zip(top)
                .map(|(&t, &v)| (t / unit, v))
                .chain(
                    times
                        .iter()
                        .zip(&bottom)
                        .rev()
                        .map(|(&t, &v)| (t / unit, v)),
                )
                .collect();
            plot.draw_series(std::iter::once(Polygon::new(
                outline,
                RGBColor(r, g, b).mix(0.85).filled(),
            )))?;
            bottom.clone_from(top);
        }
        // The heap line, broken where a collection has no summary.
        let points: Vec<Option<(f64, f64)>> = times
            .iter()
            .zip(&chart.heap_after)
            .map(|(&t, heap)| heap.map(|h| (t / unit, h)))
            .collect();
        for run in points.split(Option::is_none) {
            let run: Vec<(f64, f64)> = run.iter().flatten().copied().collect();
            plot.draw_series(LineSeries::new(run, HEAP_COLOUR.stroke_width(2)))?;
        }
        plot.draw_series(
            points
                .iter()
                .flatten()
                .map(|&point| Circle::new(point, 3, HEAP_COLOUR.filled())),
        )?;
        root.present()?;
    }
    // Drawn at its own size, shown at the page's width: the browser scales.
    let svg = svg.replacen(
        &format!("width=\"{}\" height=\"{}\"", CHART_SIZE.0, CHART_SIZE.1),
        "class=\"chart\" role=\"img\"",
        1,
    );
    Ok(name_series(&svg, &chart.series))
}

/// The heap chart's SVG with each series' elements named, in
/// `data-series` as the figures' table names them: the areas (its only
/// polygons, drawn in the series' order) with their site as a tooltip too,
/// the heap's line and points (the only elements of [`HEAP_COLOUR`]).
fn name_series(svg: &str, series: &[Series]) -> String {
    let heap_colour = format!(
        "\"#{:02X}{:02X}{:02X}\"",
        HEAP_COLOUR.0, HEAP_COLOUR.1, HEAP_COLOUR.2
    );
    let mut areas = series.iter();
    let mut out = String::with_capacity(svg.len() + series.len() * 200);
    // Text in the SVG has its `<` escaped: each piece is one element.
    for (at, element) in svg.split('<').enumerate() {
        if at > 0 {
            out.push('<');
        }
        if let Some(rest) = element.strip_prefix("polygon ")
            && let Some(series) = areas.next()
            && let Some(attributes) = rest.trim_end().strip_suffix("/>")
        {
            let name = askama::filters::escape(&series.name, askama::filters::Html)
                .map(|name| name.to_string())
                .unwrap_or_default();
            out.push_str(&format!(
                "polygon class=\"series\" data-series=\"{name}\" {attributes}>\
                 <title>{name}</title></polygon>"
            ));
            // What followed the element (a line break) is kept.
            out.push_str(&rest[rest.trim_end().len()..]);
        } else if (element.starts_with("polyline ") || element.starts_with("circle "))
            && element.contains(&heap_colour)
        {
            let (name, rest) = element.split_once(' ').unwrap_or((element, ""));
            out.push_str(&format!("{name} data-series=\"heap\" {rest}"));
        } else {
            out.push_str(element);
        }
    }
    out
}

/// The height the SVG's root element declares, in pixels.
fn svg_height(svg: &str) -> Option<u32> {
    let root = &svg[svg.find("<svg")?..];
    let root = &root[..root.find('>')?];
    let at = root.find(" height=\"")? + " height=\"".len();
    let value = root[at..].split('"').next()?;
    value
        .trim_end_matches("px")
        .parse::<f64>()
        .ok()
        .map(|h| h.ceil() as u32)
}

/// What goes before a flame graph in its frame: no margin, the graph as
/// wide as the frame (inferno's script takes its width off for that, and in
/// an HTML document an SVG without one is 300 pixels wide), and inferno's
/// writes of its state into the frame's address (which an `about:srcdoc`
/// frame refuses, throwing) made harmless; the graph works the same
/// without them.
const FRAME_HEAD: &str = "<!DOCTYPE html><html><head><meta charset=\"utf-8\">\
<style>html,body{margin:0;overflow:hidden}svg{display:block;width:100%}</style><script>\
(function(){var replace=history.replaceState.bind(history);\
history.replaceState=function(s,t,u){try{replace(s,t,u)}catch(e){}};})();\
</script></head><body>";

/// A flame graph's SVG file as the document of its own frame: the XML
/// prologue dropped (HTML reads the `<svg>` element itself, its script's
/// CDATA included).
fn frame_document(svg: &str) -> String {
    let root = svg.find("<svg").unwrap_or(0);
    format!("{FRAME_HEAD}{}</body></html>", &svg[root..])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_read_as_clocks_and_durations() {
        assert_eq!(clock(0.4), "0:00");
        assert_eq!(clock(245.0), "4:05");
        assert_eq!(clock(3723.0), "1:02:03");
        assert_eq!(duration(42.0), "42 s");
        assert_eq!(duration(200.0), "3 min 20 s");
        assert_eq!(duration(7500.0), "2 h 5 min");
    }

    #[test]
    fn rates_keep_their_sign() {
        assert_eq!(rate(26.8e6), "26.8 MB/min");
        let holds_zero = Interval {
            estimate: 1e6,
            low: -1e6,
            high: 3e6,
        };
        assert_eq!(rate_interval(&holds_zero), "-1.0 MB to 3.0 MB/min");
        let above = Interval {
            estimate: 26.8e6,
            low: 20.1e6,
            high: 33.0e6,
        };
        assert_eq!(rate_interval(&above), "20.1-33.0 MB/min");
    }

    #[test]
    fn svg_heights_are_read_from_the_root() {
        assert_eq!(
            svg_height("<?xml?><svg version=\"1.1\" height=\"518\" x=\"1\"><rect height=\"3\"/>"),
            Some(518)
        );
        assert_eq!(svg_height("<svg width=\"3\">"), None);
    }
}
