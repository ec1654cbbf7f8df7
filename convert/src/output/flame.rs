//! `heapsampler flame`: where a recording's bytes were allocated, as an
//! interactive flame graph in one self-contained SVG file (inferno's, with
//! its script: click a frame to zoom, search by regular expression, details
//! on hover) that any browser opens offline.
//!
//! The stacks are [`fold`](crate::analysis::fold)'s, folded on every core
//! through the one event decoder, as `convert --format collapsed` folds
//! them (with `live`, what live means is read in the same pass); a frame
//! is as wide as the estimated bytes allocated under it, or with
//! [`Weight::Samples`] as its number of samples.
//!
//! inferno shows one number per frame. A frame's details (its `<title>`,
//! which the script shows on hover and searches) name its bytes, its share
//! and its samples: each title is rewritten after inferno draws, keyed by
//! the frame's position (its depth and first unit on the x axis), which the
//! same sorted stacks give both here and in inferno; a frame found at a
//! position with another width is an error, never a wrong title.
//!
//! Application frames are drawn in warm colours, the JDK's in blue, the
//! allocated classes on top of the stacks in green ([`origin`]), and the
//! markers [`TRUNCATED_FRAME`] and [`UNKNOWN_FRAME`] in grey.
//!
//! A name too long for its box drops its package before it is cut
//! ([`label`]): `HashMap.putVal`, then `HashMap.pu..`, never inferno's
//! `..hMap.putVal`. The SVG's labels are laid out so for the graph's width,
//! and a script added after inferno's lays them out again as the browser
//! draws and zooms (inferno's own would cut the full name): each box's
//! group carries its short name in `data-short`, its title the full name.

use std::borrow::Cow;
use std::collections::HashSet;
use std::path::Path;

use inferno::flamegraph::color::{BackgroundColor, Color, PaletteMap};

use crate::Error;
use crate::analysis::fold::{
    Fold, FoldJob, Folded, FoldedStacks, Folding, TRUNCATED_FRAME, Totals, UNKNOWN_FRAME,
    class_of_frame,
};
use crate::analysis::liveness::{Ending, ReadEnding};
use crate::model::allocation::{ALLOCATIONS, Source};
use crate::model::filter::Filter;
use crate::model::text::is_jdk_frame;
use crate::output::human::{human_bytes, thousands};
use crate::pipeline::Pipeline;
use jfr_reader::IdMap;
use jfr_reader::file::RecordingFile;

/// What sets a frame's width.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Weight {
    /// The estimated bytes allocated under it: the events' weights.
    #[default]
    Bytes,
    /// The number of samples under it.
    Samples,
}

impl Weight {
    /// A stack's width in this weight: what inferno is given for it.
    pub fn of(self, totals: Totals) -> u64 {
        match self {
            Self::Bytes => u64::try_from(totals.value).unwrap_or(0),
            Self::Samples => totals.events,
        }
    }
}

/// How to draw; by default as `heapsampler flame` does.
#[derive(Debug, Clone)]
pub struct Options {
    /// Frames kept per stack, those nearest the top.
    pub stack_depth: usize,
    /// What sets a frame's width.
    pub weight: Weight,
    /// `Some(min_gcs)`: only objects still live at the recording's end that
    /// outlived at least `min_gcs` collections (as `top --live` counts
    /// them), from heapsampler's `heapsampler.ObjectLifetime` events; what
    /// live means in the recording is said under the title
    /// ([`Ending::live_brief`]).
    pub live: Option<u64>,
    /// Which events to keep.
    pub filter: Filter,
    /// Each stack ends with a box of the allocated class
    /// ([`Fold::class_frame`]), in its own colour.
    pub class_frame: bool,
    /// The subtitle ([`Drawn::subtitle`]) is drawn under the title: one
    /// line of SVG text, which a graph shown narrower than it cuts at both
    /// ends. A page that shows the subtitle in its own text, where it
    /// wraps, draws the graph without.
    pub subtitle_in_graph: bool,
}

impl Default for Options {
    /// 64 frames a stack (the agent's and JFR's depth), by bytes,
    /// everything allocated, with class boxes and the subtitle.
    fn default() -> Self {
        Self {
            stack_depth: 64,
            weight: Weight::Bytes,
            live: None,
            filter: Filter::default(),
            class_frame: true,
            subtitle_in_graph: true,
        }
    }
}

/// A flame graph drawn, and what it was drawn from.
#[derive(Debug)]
pub struct Drawn {
    /// The SVG.
    pub svg: String,
    /// The totals, where they come from, and what the colours mean.
    pub subtitle: String,
    /// What was folded into it.
    pub folded: Folded,
    /// With `live`: what the recording says of its end.
    pub ending: Option<Ending>,
}

impl Drawn {
    /// The whole graph's bytes and samples.
    pub fn totals(&self) -> Totals {
        self.folded.stacks.totals()
    }
}

/// Draws the flame graph of the recording `file` as `options` say, folded
/// through `pipeline` (with `live`, what the recording says of its end is
/// read in the same pass), telling `progress` the bytes read.
pub fn draw(
    file: RecordingFile,
    options: &Options,
    pipeline: &Pipeline,
    progress: &mut (dyn FnMut(u64) + Send),
) -> Result<Drawn, Error> {
    let folding = folding(options);
    let (stacks, ending, truncated, recording) = if options.live.is_some() {
        let both = (&folding, ReadEnding);
        let ran = pipeline.run(file, &both, (folding.start(), Ending::default()), progress)?;
        let (stacks, ending) = ran.merged;
        (stacks, Some(ending), ran.truncated, ran.recording)
    } else {
        let ran = pipeline.run(file, &folding, folding.start(), progress)?;
        (ran.merged, None, ran.truncated, ran.recording)
    };
    let folded = folding.folded(&recording, stacks, truncated, pipeline)?;
    finish(options, folded, ending, recording.path())
}

/// The folding of a flame graph's stacks as `options` say: the analysis a
/// pass runs, alone ([`draw`]) or beside others (the report's), whose
/// stacks [`finish`] draws.
pub fn folding(options: &Options) -> Folding<'_> {
    let sources: &[Source] = if options.live.is_some() {
        &[Source::ObjectLifetimes]
    } else {
        &ALLOCATIONS
    };
    Folding::new(FoldJob {
        types: &[],
        sources,
        fold: Fold {
            stack_depth: options.stack_depth,
            live: options.live,
            class_frame: options.class_frame,
        },
        filter: &options.filter,
    })
}

/// Draws the graph of the stacks `folded` of the recording at `path`, as
/// `options` say; with `live`, `ending` is what the recording says of its
/// end ([`ReadEnding`]), under the title.
pub fn finish(
    options: &Options,
    folded: Folded,
    ending: Option<Ending>,
    path: &Path,
) -> Result<Drawn, Error> {
    let path = path.to_owned();
    if folded.stacks.read() == 0 {
        // The question does not fit the file: top's error.
        return Err(Error::NoEvents {
            recording: path,
            live: options.live.is_some(),
        });
    }
    if options.weight.of(folded.stacks.totals()) == 0 {
        return Err(Error::NothingToDraw {
            why: nothing_drawn(&folded, options),
            recording: path,
        });
    }
    let live_meaning = ending
        .as_ref()
        .map(|ending| ending.live_brief(&folded.stacks.tracking()));
    let subtitle = subtitle(&folded, options, live_meaning.as_deref());
    let svg = render(
        &folded.stacks,
        options.weight,
        &title(&path, options),
        options.subtitle_in_graph.then_some(subtitle.as_str()),
    )
    .map_err(|why| Error::Draw {
        recording: path.clone(),
        why,
    })?;
    Ok(Drawn {
        svg,
        subtitle,
        folded,
        ending,
    })
}

/// Why a recording with events of the kind looked for has nothing to draw.
fn nothing_drawn(folded: &Folded, options: &Options) -> String {
    let types = folded.types.join(" and ");
    if folded.stacks.folded() > 0 {
        return format!("the weights of its {types} events add up to 0");
    }
    let kept = match options.live {
        None => "passed the filters".to_owned(),
        Some(min_gcs) => format!(
            "is of an object still live at the end{}{}",
            live_since(min_gcs),
            if options.filter.is_empty() {
                ""
            } else {
                " that passed the filters"
            }
        ),
    };
    let read = thousands(folded.stacks.read());
    format!("none of its {read} {types} events {kept}")
}

/// ` after outliving N or more collections` for `--min-gcs N` above 0.
fn live_since(min_gcs: u64) -> String {
    match min_gcs {
        0 => String::new(),
        n => format!(" after outliving {n} or more collections"),
    }
}

/// What the graph shows, and of which recording.
fn title(file: &Path, options: &Options) -> String {
    let what = match (options.live.is_some(), options.weight) {
        (false, Weight::Bytes) => "Allocated bytes",
        (false, Weight::Samples) => "Allocation samples",
        (true, Weight::Bytes) => "Live bytes",
        (true, Weight::Samples) => "Live objects' samples",
    };
    let name = file.file_name().map_or_else(
        || file.display().to_string(),
        |n| n.to_string_lossy().into(),
    );
    format!("{what} by stack: {name}")
}

/// The totals, where they come from, and what the colours mean; with
/// `live`, what live means in the recording.
fn subtitle(folded: &Folded, options: &Options, live_meaning: Option<&str>) -> String {
    let totals = folded.stacks.totals();
    let what = match options.live {
        None => "allocated".to_owned(),
        Some(min_gcs) => format!(
            "still live at the end{}{}",
            live_since(min_gcs),
            live_meaning.map_or(String::new(), |meaning| format!(" ({meaning})"))
        ),
    };
    let filtered = if options.filter.is_empty() {
        ""
    } else {
        ", filtered"
    };
    let classes = if options.class_frame {
        ", green: the class allocated"
    } else {
        ""
    };
    format!(
        "{} {what} (estimated from {} samples of {}{filtered}); warm: application code, blue: the \
         JDK's{classes}",
        human_bytes(totals.value as f64),
        thousands(totals.events),
        folded.types.join(" and ")
    )
}

/// Whose code a frame runs, which its colour shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// The program's own code, or a library's.
    Application,
    /// The JDK's ([`is_jdk_frame`]: `java.`, `javax.`, `jdk.`, `sun.`,
    /// `com.sun.`).
    Jdk,
    /// No code: the class allocated, on top of its stack
    /// ([`class_of_frame`]).
    Class,
    /// No code: the graph's root, [`TRUNCATED_FRAME`] or [`UNKNOWN_FRAME`].
    Marker,
}

/// Whose code `frame` (a folded stack's frame; empty for the root) runs.
pub fn origin(frame: &str) -> Origin {
    if frame.is_empty() || frame == TRUNCATED_FRAME || frame == UNKNOWN_FRAME {
        Origin::Marker
    } else if class_of_frame(frame).is_some() {
        Origin::Class
    } else if is_jdk_frame(frame) {
        Origin::Jdk
    } else {
        Origin::Application
    }
}

/// A frame's colour: its origin's hue, a shade from its name, so that the
/// same method has the same colour in every graph.
fn colour(frame: &str) -> Color {
    // FNV-1a: a stable hash, as std's is not across releases.
    let hash = frame.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |hash, byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
    });
    // 0 to 255, from three parts of the hash.
    let shade = |part: u32| (hash >> (part * 8)) as u8 as u16;
    let scale = |base: u16, span: u16, part: u32| (base + span * shade(part) / 255) as u8;
    match origin(frame) {
        // Red to yellow, as flamegraph.pl's "hot".
        Origin::Application => Color {
            r: scale(205, 50, 0),
            g: scale(0, 230, 1),
            b: scale(0, 55, 2),
        },
        // Light blues, where black text still reads.
        Origin::Jdk => Color {
            r: scale(100, 60, 0),
            g: scale(155, 60, 0),
            b: scale(215, 40, 1),
        },
        // Light greens, apart from both.
        Origin::Class => Color {
            r: scale(110, 50, 0),
            g: scale(200, 40, 1),
            b: scale(90, 50, 0),
        },
        // The root lighter than the markers, which stand in for frames.
        Origin::Marker if frame.is_empty() => Color {
            r: 215,
            g: 215,
            b: 215,
        },
        Origin::Marker => Color {
            r: 170,
            g: 170,
            b: 170,
        },
    }
}

/// The height of a frame's row in inferno's drawing, in pixels.
const FRAME_HEIGHT: usize = 16;

/// The flame graph of `stacks` as SVG, frames as wide as `weight` says,
/// under `title` and `subtitle`, if any.
pub fn render(
    stacks: &FoldedStacks,
    weight: Weight,
    title: &str,
    subtitle: Option<&str>,
) -> Result<String, String> {
    let lines = lines(stacks, weight);
    let table = frame_table(&lines, weight);
    let cut = cut_lines(&lines, &table, weight);
    let text: Vec<&str> = match &cut {
        Some(cut) => cut.iter().map(String::as_str).collect(),
        None => lines.iter().map(|(line, _)| line.as_str()).collect(),
    };
    let (svg, char_width) = inferno_svg(&text, &table, weight, title, subtitle)?;
    rewrite_frames(&svg, &table, weight, stacks.totals(), char_width)
}

/// The lines of `stacks` as inferno reads them, `stack count` (the count
/// in `weight`), sorted, each with its stack's totals.
fn lines(stacks: &FoldedStacks, weight: Weight) -> Vec<(String, Totals)> {
    // A space in a frame's name (JVM languages allow one) would read as
    // the start of a count: a no-break space looks the same.
    stacks
        .sorted()
        .iter()
        .map(|(stack, totals)| {
            let stack = match stack.contains(' ') {
                true => Cow::Owned(stack.replace(' ', "\u{a0}")),
                false => Cow::Borrowed(*stack),
            };
            (format!("{stack} {}", weight.of(*totals)), *totals)
        })
        .collect()
}

/// inferno's drawing of `text` (lines `stack count`, sorted), whose frames
/// drawn are in `table`, under `title` and `subtitle`; and the width of a
/// label's character in it, in pixels.
fn inferno_svg(
    text: &[&str],
    table: &FrameTable<'_>,
    weight: Weight,
    title: &str,
    subtitle: Option<&str>,
) -> Result<(String, f64), String> {
    // Every frame drawn has its colour already; none is drawn at random.
    let mut palette = PaletteMap::default();
    let names: HashSet<&str> = table.values().map(|frame| frame.name).collect();
    for name in names {
        palette.insert(name, colour(name));
    }
    let mut options = inferno::flamegraph::Options::default();
    options.title = title.to_owned();
    options.subtitle = subtitle.map(str::to_owned);
    options.count_name = match weight {
        Weight::Bytes => "bytes",
        Weight::Samples => "samples",
    }
    .to_owned();
    options.name_type = "Frame:".to_owned();
    options.frame_height = FRAME_HEIGHT;
    options.bgcolors = Some(BackgroundColor::Grey);
    options.palette_map = Some(&mut palette);
    options.min_width = MIN_WIDTH;
    options.hash = true;
    options.deterministic = true;
    // Sorted already, as the frame table was made.
    options.no_sort = true;
    let char_width = options.font_size as f64 * options.font_width;
    let mut svg = Vec::new();
    inferno::flamegraph::from_lines(&mut options, text.iter().copied(), &mut svg)
        .map_err(|e| format!("drawing the flame graph: {e}"))?;
    let svg = String::from_utf8(svg).map_err(|e| format!("drawing the flame graph: {e}"))?;
    Ok((svg, char_width))
}

/// Frames narrower than this share of the graph, in percent, are not
/// drawn (inferno's default): a graph of many deep stacks would otherwise
/// hold millions of frames too narrow to see.
const MIN_WIDTH: f64 = 0.01;

/// A frame as drawn: its name, how wide, and what its stacks add up to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct FrameTotals<'l> {
    name: &'l str,
    /// Its width in [`Weight`] units.
    width: u64,
    /// The bytes and samples of every stack through it.
    totals: Totals,
}

/// The frames of a flame graph wide enough to be drawn, by depth (0: the
/// root, which every stack goes through) and first unit on the x axis.
type FrameTable<'l> = IdMap<(u64, u64), FrameTotals<'l>>;

/// The stack of a line given to inferno, its frames joined with `;`, as
/// inferno reads it: the line trimmed, the count after its last space
/// taken off; `None` for a line inferno skips (a comment, no frames).
fn stack_of(line: &str) -> Option<&str> {
    let line = line.trim();
    let stack = line[..line.rfind(' ')?].trim_end();
    (!stack.is_empty() && !line.starts_with("# ")).then_some(stack)
}

/// The frames inferno draws for `lines` (`stack count` in this order, each
/// with its stack's totals): consecutive stacks that share their first
/// frames share those frames' boxes, as in inferno's merge. Frames too
/// narrow for inferno to draw are left out, with a margin: every frame it
/// draws is here.
fn frame_table<'l>(lines: &'l [(String, Totals)], weight: Weight) -> FrameTable<'l> {
    let mut table = FrameTable::default();
    let whole: u64 = lines.iter().map(|(_, totals)| weight.of(*totals)).sum();
    let narrowest = MIN_WIDTH / 100.0 * whole as f64 / 2.0;
    // The frames of the stack before, root first, each with where it
    // started and what it has summed so far; the root is always open.
    let mut open: Vec<(&'l str, u64, Totals)> = vec![("", 0, Totals::default())];
    let mut x = 0;
    let mut close = |open: &mut Vec<(&'l str, u64, Totals)>, keep: usize, x: u64| {
        for (depth, (name, start, totals)) in open.drain(keep..).enumerate() {
            let width = x - start;
            if width as f64 >= narrowest {
                let frame = FrameTotals {
                    name,
                    width,
                    totals,
                };
                table.insert(((keep + depth) as u64, start), frame);
            }
        }
    };
    for (line, totals) in lines {
        let Some(stack) = stack_of(line) else {
            continue;
        };
        let frames: Vec<&str> = stack.split(';').collect();
        let shared = open[1..]
            .iter()
            .zip(&frames)
            .take_while(|((name, _, _), frame)| name == *frame)
            .count();
        close(&mut open, 1 + shared, x);
        open.extend(frames[shared..].iter().map(|f| (*f, x, Totals::default())));
        for (_, _, sum) in &mut open {
            sum.add(*totals);
        }
        x += weight.of(*totals);
    }
    close(&mut open, 0, x);
    table
}

/// The lines to give inferno for `lines` (`stack count`, as [`frame_table`]
/// reads them into `table`): each stack cut after its first frame too
/// narrow to be in `table`, and consecutive stacks cut to the same one made
/// one line of their summed count.
///
/// inferno lays out every frame of every line, then leaves out those too
/// narrow to draw: most of a deep graph's (all but 230 of 38,698 boxes, on
/// a JDK recording of 3,344 stacks 43 frames deep). The frames past a cut
/// are such, and those before it keep their places and widths, as the
/// lines keep their order and counts: the SVG is the same. The first narrow
/// frame stays, so that a stack cut where it parts from the one before it
/// still sorts after it, as inferno requires. `None` when the cut stacks
/// would not sort even so (a frame's name the start of another's, followed
/// by a character before `;`: `m` and `m$1`), or when one would end in
/// white space, which inferno trims at a line's end: then every frame is
/// given.
fn cut_lines(
    lines: &[(String, Totals)],
    table: &FrameTable<'_>,
    weight: Weight,
) -> Option<Vec<String>> {
    let mut cut: Vec<(&str, u64)> = Vec::new();
    // The frames of the stack before, root first, each with where its box
    // started, as far as it was read; the root is always open.
    let mut open: Vec<(&str, u64)> = vec![("", 0)];
    let mut x = 0;
    for (line, totals) in lines {
        let Some(stack) = stack_of(line) else {
            continue;
        };
        // Read up to the first narrow frame, whose box is not in the table;
        // a frame is no wider than the one under it. A stack read further
        // than the one before it shares its boxes up to that one's first
        // narrow frame, and stops there too.
        let (mut depth, mut end) = (0, 0);
        for frame in stack.split(';') {
            depth += 1;
            if open.get(depth).is_none_or(|(name, _)| *name != frame) {
                open.truncate(depth);
                open.push((frame, x));
            }
            end += frame.len() + 1;
            if !table.contains_key(&(depth as u64, open[depth].1)) {
                break;
            }
        }
        // Deeper frames are another stack's.
        open.truncate(depth + 1);
        let stack = &stack[..end - 1];
        let count = weight.of(*totals);
        x += count;
        match cut.last_mut() {
            Some((last, sum)) if *last == stack => *sum += count,
            Some((last, _)) if *last > stack => return None,
            _ if stack.trim_end() != stack => return None,
            _ => cut.push((stack, count)),
        }
    }
    Some(
        cut.into_iter()
            .map(|(stack, count)| format!("{stack} {count}"))
            .collect(),
    )
}

/// One frame as inferno drew it: where its group's start tag, its
/// title's text and its label are, and its box.
struct DrawnFrame {
    group: std::ops::Range<usize>,
    title: std::ops::Range<usize>,
    label: std::ops::Range<usize>,
    y: usize,
    x: u64,
    width: u64,
}

/// `svg` with each frame's title text replaced by its name, bytes, share
/// and samples, from `table` (`total` is the root's); its group given its
/// short name (`data-short`, where it has one) and its label laid out by
/// [`label`] for the graph's width, at `char_width` pixels a character; and
/// [`LABEL_SCRIPT`] after inferno's script.
fn rewrite_frames(
    svg: &str,
    table: &FrameTable<'_>,
    weight: Weight,
    total: Totals,
    char_width: f64,
) -> Result<String, String> {
    let broken = |what: &str| format!("the flame graph inferno drew has no {what}");
    let frames_at = svg
        .find("<svg id=\"frames\"")
        .ok_or_else(|| broken("frames element"))?;
    let number = |tag: &str, name: &str| -> Result<u64, String> {
        let key = format!(" {name}=\"");
        let value = tag
            .find(&key)
            .map(|i| &tag[i + key.len()..])
            .and_then(|v| v.split('"').next())
            .ok_or_else(|| broken(name))?;
        value.parse().map_err(|_| broken(name))
    };
    let frames_tag = &svg[frames_at..frames_at + svg[frames_at..].find('>').unwrap_or(0)];
    let frames_width = number(frames_tag, "width")? as f64;
    let script_end = svg[..frames_at]
        .rfind("</script>")
        .ok_or_else(|| broken("script"))?
        + "</script>".len();
    let mut drawn = Vec::new();
    let mut at = frames_at;
    while let Some(found) = svg[at..].find("<title>") {
        let start = at + found + "<title>".len();
        // The group's start tag, right before the title (`<g>` as
        // inferno writes it).
        let title_tag = start - "<title>".len();
        let group = svg[..title_tag]
            .rfind("<g")
            .filter(|&g| {
                let tag = &svg[g..title_tag];
                tag.ends_with('>') && !tag[1..].contains('<')
            })
            .map(|g| g..title_tag)
            .ok_or_else(|| broken("frame group"))?;
        let end = start
            + svg[start..]
                .find("</title>")
                .ok_or_else(|| broken("title's end"))?;
        let rect = end
            + svg[end..]
                .find("<rect ")
                .ok_or_else(|| broken("frame box"))?;
        let rect_end = rect + svg[rect..].find("/>").ok_or_else(|| broken("box's end"))?;
        let tag = &svg[rect..rect_end];
        let text = rect_end
            + svg[rect_end..]
                .find("<text ")
                .ok_or_else(|| broken("label"))?;
        let label_start = text + svg[text..].find('>').ok_or_else(|| broken("label"))? + 1;
        let label_end = label_start
            + svg[label_start..]
                .find("</text>")
                .ok_or_else(|| broken("label's end"))?;
        drawn.push(DrawnFrame {
            group,
            title: start..end,
            label: label_start..label_end,
            y: number(tag, "y")? as usize,
            x: number(tag, "fg:x")?,
            width: number(tag, "fg:w")?,
        });
        at = label_end;
    }
    // The root is the lowest row, and rows are FRAME_HEIGHT apart.
    let root_y = drawn
        .iter()
        .map(|f| f.y)
        .max()
        .ok_or_else(|| broken("frame"))?;
    let mut out = String::with_capacity(svg.len() + LABEL_SCRIPT.len() + drawn.len() * 64);
    out.push_str(&svg[..script_end]);
    out.push_str(LABEL_SCRIPT);
    let mut copied = script_end;
    let whole = weight.of(total).max(1) as f64;
    for frame in &drawn {
        let depth = (root_y - frame.y) / FRAME_HEIGHT;
        let found = table
            .get(&(depth as u64, frame.x))
            .filter(|f| f.width == frame.width && (root_y - frame.y).is_multiple_of(FRAME_HEIGHT))
            .ok_or_else(|| {
                format!(
                    "the flame graph's frame at depth {depth}, x {} is not one folded",
                    frame.x
                )
            })?;
        let name = shown_name(found.name);
        let short = short_name(found.name);
        out.push_str(&svg[copied..frame.group.start]);
        if short == name {
            out.push_str("<g>");
        } else {
            out.push_str("<g data-short=\"");
            escape_xml(short, &mut out);
            out.push_str("\">");
        }
        // inferno's title: `name (count unit, share%)`; the name is kept,
        // escaped as inferno wrote it.
        out.push_str(&svg[frame.group.end..frame.title.start]);
        let old = &svg[frame.title.clone()];
        let title_name = old.rfind(" (").map_or(old, |i| &old[..i]);
        out.push_str(title_name);
        out.push_str(" (");
        out.push_str(&details(
            found.totals,
            weight,
            weight.of(found.totals) as f64 / whole,
        ));
        out.push(')');
        out.push_str(&svg[frame.title.end..frame.label.start]);
        // The room inferno's script gives a label: the box less 3 pixels.
        let room = frame.width as f64 / whole * frames_width - 3.0;
        let fit = (room / char_width).max(0.0) as usize;
        escape_xml(&label(name, short, fit), &mut out);
        copied = frame.label.end;
    }
    out.push_str(&svg[copied..]);
    Ok(out)
}

/// The name a frame is shown by: the class of a class frame, without its
/// suffix; `all` for the root.
fn shown_name(frame: &str) -> &str {
    if frame.is_empty() {
        return "all";
    }
    class_of_frame(frame).unwrap_or(frame)
}

/// A name without its package: `HashMap.putVal` of
/// `java.util.HashMap.putVal` (a method: its class and itself), `String`
/// of the class `java.lang.String`; a name without one is itself.
/// `is_class`: the name is a class's, not a method's.
fn short_of(name: &str, is_class: bool) -> &str {
    let owner_end = if is_class {
        Some(name.len())
    } else {
        name.rfind('.')
    };
    match owner_end.and_then(|end| name[..end].rfind('.')) {
        Some(dot) => &name[dot + 1..],
        None => name,
    }
}

/// The short name of a folded frame: a class frame's simple class name, a
/// method's class and name ([`short_of`]); the root and markers as shown.
fn short_name(frame: &str) -> &str {
    match class_of_frame(frame) {
        Some(class) => short_of(class, true),
        None => short_of(shown_name(frame), false),
    }
}

/// A frame's label in `fit` characters, as inferno lays them out (a name
/// shorter than `fit` is whole, `..` marks a cut, under 3 characters none):
/// the name as `shown` if it fits, else its `short` name, else the short
/// name cut at the right.
pub fn label(shown: &str, short: &str, fit: usize) -> String {
    if fit < 3 {
        return String::new();
    }
    for candidate in [shown, short] {
        if candidate.chars().count() < fit {
            return candidate.to_owned();
        }
    }
    let mut cut: String = short.chars().take(fit - 2).collect();
    cut.push_str("..");
    cut
}

/// Appends `text` escaped for XML text and attribute values.
fn escape_xml(text: &str, out: &mut String) {
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            c => out.push(c),
        }
    }
}

/// The label layout as [`label`] does it, for the browser: defined after
/// inferno's script, its two functions replace inferno's, which every
/// redraw (load, resize, zoom, unzoom) calls. A box's name is its title
/// without the details; its short name, its group's `data-short`.
const LABEL_SCRIPT: &str = r#"<script type="text/ecmascript"><![CDATA[
function update_text_for_elements(elements) {
    var fw = frames.attributes.width.value;
    var laid = [];
    for (var i = 0; i < elements.length; i++) {
        var e = elements[i];
        var r = find_child(e, "rect");
        var w = parseFloat(r.attributes.width.value) * fw / 100 - 3;
        var x = format_percent(parseFloat(r.attributes.x.value) + (100 * 3 / fw));
        laid.push([x, w]);
    }
    for (var i = 0; i < elements.length; i++) {
        var t = find_child(elements[i], "text");
        t.attributes.x.value = laid[i][0];
        t.textContent = fitted_label(elements[i], t, laid[i][1]);
    }
}
function update_text(e) {
    update_text_for_elements([e]);
}
function fitted_label(e, t, w) {
    if (w < 2 * fontsize * fontwidth) return "";
    var width = function (text) {
        if (known_font_width > 0) return text.length * known_font_width;
        t.textContent = text;
        return t.getComputedTextLength();
    };
    var name = find_child(e, "title").textContent.replace(/ \([^(]*\)$/, "");
    if (width(name) < w) return name;
    var short = e.getAttribute("data-short") || name;
    if (width(short) < w) return short;
    for (var n = short.length - 1; n > 0; n--) {
        var cut = short.substring(0, n) + "..";
        if (width(cut) <= w) return cut;
    }
    return "";
}
]]></script>"#;

/// A frame's details, the measure that sets its width first: `12.3 MB,
/// 45.67%, 1,234 samples`, or `1,234 samples, 45.67%, 12.3 MB`. No
/// parenthesis: the script takes the title's last parenthesised part off
/// for the frame's label.
fn details(totals: Totals, weight: Weight, share: f64) -> String {
    let bytes = human_bytes(totals.value as f64);
    let samples = format!(
        "{} sample{}",
        thousands(totals.events),
        if totals.events == 1 { "" } else { "s" }
    );
    let share = format!("{:.2}%", 100.0 * share);
    match weight {
        Weight::Bytes => format!("{bytes}, {share}, {samples}"),
        Weight::Samples => format!("{samples}, {share}, {bytes}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each frame of a drawn graph: title, fill, fg:x, fg:w.
    fn frames(svg: &str) -> Vec<(String, String, u64, u64)> {
        let frames = &svg[svg.find("<svg id=\"frames\"").unwrap()..];
        frames
            .split("<title>")
            .skip(1)
            .map(|frame| {
                let (title, rest) = frame.split_once("</title>").unwrap();
                let attribute = |name: &str| {
                    let key = format!(" {name}=\"");
                    let at = rest.find(&key).unwrap() + key.len();
                    rest[at..].split('"').next().unwrap().to_owned()
                };
                (
                    title.to_owned(),
                    attribute("fill"),
                    attribute("fg:x").parse().unwrap(),
                    attribute("fg:w").parse().unwrap(),
                )
            })
            .collect()
    }

    fn stacks() -> FoldedStacks {
        let mut stacks = FoldedStacks::new();
        for (line, value, events) in [
            ("app.Main.main;app.A.a;app.X.x", 100, 1),
            ("app.Main.main;app.A.a;app.Y.y", 50, 2),
            ("app.Main.main;app.B.b", 30, 3),
            ("[truncated];java.util.Arrays.copyOf", 20, 4),
            // Recursion: one name at three depths, boxes at the same x.
            ("r.R.r;r.R.r;r.R.r", 7, 1),
            ("r.R.r", 3, 1),
        ] {
            stacks.add(line, Totals { value, events });
        }
        stacks
    }

    /// The title of the frame named `name` at `x`.
    fn title_of(frames: &[(String, String, u64, u64)], name: &str, x: u64) -> String {
        let found: Vec<&String> = frames
            .iter()
            .filter(|(title, _, at, _)| *at == x && title.starts_with(&format!("{name} (")))
            .map(|(title, ..)| title)
            .collect();
        assert_eq!(found.len(), 1, "{name} at {x}: {frames:?}");
        found[0].clone()
    }

    #[test]
    fn titles_give_bytes_share_and_samples_of_each_frame() {
        let svg = render(&stacks(), Weight::Bytes, "t", Some("s")).unwrap();
        let frames = frames(&svg);
        // Sorted stacks, root first: [truncated] 0-20, app.Main 20-200, r 200-210.
        let expected = [
            ("all", 0, 210, "210 B, 100.00%, 12 samples"),
            ("[truncated]", 0, 20, "20 B, 9.52%, 4 samples"),
            ("java.util.Arrays.copyOf", 0, 20, "20 B, 9.52%, 4 samples"),
            ("app.Main.main", 20, 180, "180 B, 85.71%, 6 samples"),
            ("app.A.a", 20, 150, "150 B, 71.43%, 3 samples"),
            ("app.X.x", 20, 100, "100 B, 47.62%, 1 sample"),
            ("app.Y.y", 120, 50, "50 B, 23.81%, 2 samples"),
            ("app.B.b", 170, 30, "30 B, 14.29%, 3 samples"),
        ];
        for (name, x, width, details) in expected {
            assert_eq!(title_of(&frames, name, x), format!("{name} ({details})"));
            let drawn = frames
                .iter()
                .find(|f| f.0.starts_with(&format!("{name} (")))
                .unwrap();
            assert_eq!((drawn.2, drawn.3), (x, width), "{name}");
        }
        // The recursion's three boxes, one per depth: `r.R.r 3` sorts
        // first, so the two deeper ones start after it.
        let mut recursion: Vec<(u64, u64, &str)> = frames
            .iter()
            .filter(|f| f.0.starts_with("r.R.r ("))
            .map(|(title, _, x, width)| (*x, *width, title.as_str()))
            .collect();
        recursion.sort();
        assert_eq!(
            recursion,
            [
                (200, 10, "r.R.r (10 B, 4.76%, 2 samples)"),
                (203, 7, "r.R.r (7 B, 3.33%, 1 sample)"),
                (203, 7, "r.R.r (7 B, 3.33%, 1 sample)"),
            ]
        );
    }

    #[test]
    fn by_samples_widths_and_shares_count_samples() {
        let svg = render(&stacks(), Weight::Samples, "t", Some("s")).unwrap();
        let frames = frames(&svg);
        assert_eq!(
            title_of(&frames, "all", 0),
            "all (12 samples, 100.00%, 210 B)"
        );
        // [truncated] 0-4, app.Main 4-10.
        assert_eq!(
            title_of(&frames, "app.Main.main", 4),
            "app.Main.main (6 samples, 50.00%, 180 B)"
        );
        assert_eq!(
            title_of(&frames, "app.X.x", 4),
            "app.X.x (1 sample, 8.33%, 100 B)"
        );
        let main = frames
            .iter()
            .find(|f| f.0.starts_with("app.Main.main"))
            .unwrap();
        assert_eq!(main.3, 6);
    }

    #[test]
    fn frames_are_coloured_by_whose_code_they_run() {
        assert_eq!(origin("app.Main.main"), Origin::Application);
        assert_eq!(origin("javafx.scene.Node.draw"), Origin::Application);
        for jdk in [
            "java.util.ArrayList.grow",
            "javax.crypto.Cipher.doFinal",
            "jdk.internal.misc.Unsafe.allocate",
            "sun.nio.ch.Util.getTemporaryDirectBuffer",
            "com.sun.tools.javac.Main.compile",
        ] {
            assert_eq!(origin(jdk), Origin::Jdk, "{jdk}");
        }
        for marker in ["", TRUNCATED_FRAME, UNKNOWN_FRAME] {
            assert_eq!(origin(marker), Origin::Marker, "{marker:?}");
        }
        // Warm for the application, blue for the JDK, grey for markers,
        // the same colour for the same name every time.
        let svg = render(&stacks(), Weight::Bytes, "t", Some("s")).unwrap();
        for (title, fill, ..) in frames(&svg) {
            let name = &title[..title.rfind(" (").unwrap()];
            let rgb: Vec<u16> = fill
                .trim_start_matches("rgb(")
                .trim_end_matches(')')
                .split(',')
                .map(|c| c.parse().unwrap())
                .collect();
            let (r, g, b) = (rgb[0], rgb[1], rgb[2]);
            match name {
                "all" => assert_eq!((r, g, b), (215, 215, 215)),
                "[truncated]" => assert_eq!((r, g, b), (170, 170, 170)),
                "java.util.Arrays.copyOf" => assert!(b >= 215 && r < 160, "{name}: {fill}"),
                _ => assert!(r >= 205 && b <= 55, "{name}: {fill}"),
            }
            let again = colour(if name == "all" { "" } else { name });
            assert_eq!(
                fill,
                format!("rgb({},{},{})", again.r, again.g, again.b),
                "{name}"
            );
        }
    }

    #[test]
    fn a_frame_drawn_elsewhere_than_folded_is_an_error() {
        let stacks = stacks();
        let svg = render(&stacks, Weight::Bytes, "t", Some("s")).unwrap();
        let table = FrameTable::default();
        let error = rewrite_frames(&svg, &table, Weight::Bytes, stacks.totals(), 7.0).unwrap_err();
        assert!(error.contains("is not one folded"), "{error}");
    }

    #[test]
    fn spaces_in_names_are_not_counts() {
        // Kotlin allows `fun `two words`()`: with a plain space, inferno
        // would read `words 5` as a second count.
        let mut stacks = FoldedStacks::new();
        stacks.add(
            "k.T.two 3;k.T.x",
            Totals {
                value: 5,
                events: 1,
            },
        );
        let svg = render(&stacks, Weight::Bytes, "t", Some("s")).unwrap();
        let frames = frames(&svg);
        assert_eq!(
            title_of(&frames, "k.T.two\u{a0}3", 0),
            "k.T.two\u{a0}3 (5 B, 100.00%, 1 sample)"
        );
    }

    /// 2,000 stacks of four methods, up to 30 frames deep, from a fixed
    /// generator: a few wide, most narrow, as a JVM's are.
    fn deep_stacks() -> FoldedStacks {
        let names = ["a.A.a", "b.B.b", "c.C.c", "d.D.d"];
        let mut state = 0x2545_f491_4f6c_dd1d_u64;
        let mut next = |below: u64| {
            // xorshift64
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state % below
        };
        let mut stacks = FoldedStacks::new();
        for _ in 0..2000 {
            let depth = 1 + next(30);
            let frames: Vec<&str> = (0..depth)
                .map(|_| names[next(names.len() as u64) as usize])
                .collect();
            let totals = match next(20) {
                0 => Totals {
                    value: 100_000,
                    events: 5_000,
                },
                _ => Totals {
                    value: 1 + next(50) as i64,
                    events: 1 + next(5),
                },
            };
            stacks.add(&frames.join(";"), totals);
        }
        stacks
    }

    /// inferno's SVG of `stacks` from every frame, and from the lines cut
    /// to the frames drawn, with the frames given in each; `None` for the
    /// cut when [`cut_lines`] gives every frame.
    fn drawn_whole_and_cut(
        stacks: &FoldedStacks,
        weight: Weight,
    ) -> ((String, usize), Option<(String, usize)>) {
        let lines = lines(stacks, weight);
        let table = frame_table(&lines, weight);
        let drawn = |text: &[&str]| {
            let frames = text.iter().map(|line| line.matches(';').count() + 1).sum();
            (
                inferno_svg(text, &table, weight, "t", None).unwrap().0,
                frames,
            )
        };
        let whole: Vec<&str> = lines.iter().map(|(line, _)| line.as_str()).collect();
        let cut = cut_lines(&lines, &table, weight).map(|cut| {
            let cut: Vec<&str> = cut.iter().map(String::as_str).collect();
            drawn(&cut)
        });
        (drawn(&whole), cut)
    }

    #[test]
    fn frames_too_narrow_to_draw_are_not_given_to_inferno() {
        for weight in [Weight::Bytes, Weight::Samples] {
            let ((whole, all), cut) = drawn_whole_and_cut(&deep_stacks(), weight);
            let (cut, given) = cut.unwrap();
            assert!(given * 4 < all, "{weight:?}: {given} of {all} frames");
            assert!(frames(&whole).len() > 20, "{weight:?}: {whole}");
            assert!(cut == whole, "{weight:?}: another drawing");
        }
    }

    #[test]
    fn stacks_whose_cut_would_not_sort_are_given_whole() {
        let wide = Totals {
            value: 1_000_000,
            events: 1_000,
        };
        let narrow = Totals {
            value: 1,
            events: 1,
        };
        // `m$1` sorts before `m;`, and `m` before `m$1`; a name ending in
        // a space would end a line.
        for (narrow_stacks, why) in [
            (
                [
                    "app.Main.main;app.M.m$1;a.A.a",
                    "app.Main.main;app.M.m;b.B.b",
                ],
                "order",
            ),
            (
                [
                    "app.Main.main;app.M.m\u{a0};a.A.a",
                    "app.Main.main;app.M.n;b.B.b",
                ],
                "space",
            ),
        ] {
            let mut stacks = FoldedStacks::new();
            stacks.add("app.Main.main;c.C.c", wide);
            for stack in narrow_stacks {
                stacks.add(stack, narrow);
            }
            let ((whole, _), cut) = drawn_whole_and_cut(&stacks, Weight::Bytes);
            assert!(cut.is_none(), "{why}");
            assert!(whole.contains("c.C.c ("), "{why}: {whole}");
        }
    }

    #[test]
    fn short_names_drop_the_package() {
        assert_eq!(short_name("java.util.HashMap.putVal"), "HashMap.putVal");
        assert_eq!(
            short_name("java.util.HashMap$TreeNode.<init>"),
            "HashMap$TreeNode.<init>"
        );
        // A class of the unnamed package, and a marker, have none.
        assert_eq!(short_name("Main.lambda$main$0"), "Main.lambda$main$0");
        assert_eq!(short_name(TRUNCATED_FRAME), TRUNCATED_FRAME);
        assert_eq!(short_name(""), "all");
        // A class frame is its class's simple name, arrays and all.
        assert_eq!(short_name("java.lang.String_[k]"), "String");
        assert_eq!(short_name("java.util.HashMap$Node[]_[i]"), "HashMap$Node[]");
        assert_eq!(short_name("byte[]_[k]"), "byte[]");
        assert_eq!(shown_name("byte[]_[k]"), "byte[]");
    }

    #[test]
    fn labels_drop_the_package_before_they_cut() {
        let name = "java.util.HashMap.putVal";
        let short = short_name(name);
        let label = |fit| label(name, short, fit);
        // Whole where it fits (shorter than the room, as inferno counts).
        assert_eq!(label(25), name);
        assert_eq!(label(24), "HashMap.putVal");
        assert_eq!(label(15), "HashMap.putVal");
        // Then the short name, cut at the right to the room.
        assert_eq!(label(14), "HashMap.putV..");
        assert_eq!(label(3), "H..");
        assert_eq!(label(2), "");
        // Never the full name cut in the middle of a word.
        for fit in 0..40 {
            let label = label(fit);
            assert!(!label.starts_with(".."), "{fit}: {label}");
            assert!(label.len() <= fit, "{fit}: {label}");
            assert!(
                label == name || short.starts_with(label.trim_end_matches("..")),
                "{fit}: {label}"
            );
        }
    }

    #[test]
    fn labels_in_the_svg_fit_their_boxes() {
        let mut stacks = FoldedStacks::new();
        for (line, value) in [
            (
                "app.Main.main;java.util.HashMap.putVal;java.lang.String_[k]",
                11,
            ),
            ("app.Main.main;app.Other.run", 89),
        ] {
            stacks.add(line, Totals { value, events: 1 });
        }
        let svg = render(&stacks, Weight::Bytes, "t", Some("s")).unwrap();
        // 11% of 1180 pixels less 3, at 7.08 a character: 17 characters,
        // too few for the 24 of the name, enough for its 14 without the
        // package.
        let group = svg
            .split("<g")
            .find(|g| g.contains("<title>java.util.HashMap.putVal ("))
            .unwrap();
        assert!(
            group.starts_with(" data-short=\"HashMap.putVal\">"),
            "{group}"
        );
        assert!(group.contains(">HashMap.putVal</text>"), "{group}");
        let class = svg
            .split("<g")
            .find(|g| g.contains("<title>java.lang.String ("))
            .unwrap();
        assert!(class.starts_with(" data-short=\"String\">"), "{class}");
        assert!(class.contains(">java.lang.String</text>"), "{class}");
        // The script that lays labels out so in the browser follows
        // inferno's.
        let inferno = svg.find("function update_text(").unwrap();
        let ours = svg.find(LABEL_SCRIPT).unwrap();
        assert!(inferno < ours && ours < svg.find("<svg id=\"frames\"").unwrap());
    }

    #[test]
    fn allocated_classes_are_green() {
        assert_eq!(origin("byte[]_[k]"), Origin::Class);
        assert_eq!(origin("java.lang.String_[i]"), Origin::Class);
        assert_eq!(origin("java.lang.String.<init>"), Origin::Jdk);
        for class in ["byte[]_[k]", "java.lang.String_[i]", "app.Order_[k]"] {
            let Color { r, g, b } = colour(class);
            assert!(g >= 200 && r <= 160 && b <= 140, "{class}: {r} {g} {b}");
        }
    }
}
