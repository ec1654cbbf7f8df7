//! Folded stacks ("collapsed" format), the input of flame-graph tools
//! (Brendan Gregg's flamegraph.pl, inferno, speedscope): one line per
//! distinct stack, its frames root first joined with `;`, a space, and the
//! stack's value.
//!
//! The value is the sum of the events' weight field where their type has
//! one (the allocated bytes the events stand for: `weight` of
//! `jdk.ObjectAllocationSample` and `heapsampler.ObjectLifetime`, and the
//! TLAB events' fields as [`crate::model::allocation`] says), otherwise the number
//! of events.
//! Frames are `pkg.Class.method` without line numbers: a flame graph merges
//! a method's calls into one box per caller, where lines would split it into
//! one box per call site. A stack that was cut (by the recorder at its
//! depth, or by the depth asked for here) has lost the frames nearest the
//! root, so its line starts with [`TRUNCATED_FRAME`]: the graph shows the
//! cut rather than a root that is not one.
//!
//! An event of an allocated object (a type with an `objectClass` field)
//! ends its stack with a frame of the class, as async-profiler draws
//! allocations: `app.Main.main;java.util.Arrays.copyOf;byte[]_[k] 4096`.
//! The suffix is async-profiler's ([`class_frame_suffix`]), which
//! flamegraph.pl and inferno read as a kind of frame, colour so, and take
//! off the label. [`Fold::class_frame`] turns it off.
//!
//! Each stack also counts its events, beside their summed value: a flame
//! graph shows both.
//!
//! Events are added up by their stack trace's pool key (two integers to
//! hash), and each key's line is made once per chunk, when the chunk's sums
//! join the recording's.

use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::io::{self, Write};

use jfr_format::names::{event, field};

use crate::model::allocation::weight_field;
use crate::model::filter::ChunkFilter;
use crate::model::samples::Liveness;
use crate::model::text::Flattener;
use jfr_reader::chunk::Chunk;
use jfr_reader::event::{EventPlan, Field, TypeMap};
use jfr_reader::value::Value;
use jfr_reader::{IdMap, ReadError};

/// The frame written for an event without a stack trace, so that its value
/// still counts in the total (perf and inferno use the same name).
pub const UNKNOWN_FRAME: &str = "[unknown]";

/// The frame at the root end of a stack that was cut, where its missing
/// frames would be.
pub const TRUNCATED_FRAME: &str = "[truncated]";

/// The suffix of an allocated class's frame ([`Fold::class_frame`]), as
/// async-profiler writes it: `_[i]` (its "inlined" kind, drawn in its own
/// colour) for an allocation in a new TLAB, `_[k]` (its "kernel" kind) for
/// one outside a TLAB and for a sampled one, whose TLAB is not known.
pub fn class_frame_suffix(event_type: &str) -> &'static str {
    if event_type == event::OBJECT_ALLOCATION_IN_NEW_TLAB {
        "_[i]"
    } else {
        "_[k]"
    }
}

/// The class of a folded frame that is an allocated class's
/// ([`class_frame_suffix`]): `byte[]` of `byte[]_[k]`.
pub fn class_of_frame(frame: &str) -> Option<&str> {
    frame
        .strip_suffix("_[k]")
        .or_else(|| frame.strip_suffix("_[i]"))
}

/// What the events folded into one stack add up to.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Totals {
    /// The sum of the events' weights (see the module's doc), or their
    /// number for a type without a weight.
    pub value: i64,
    /// The number of events.
    pub events: u64,
}

impl Totals {
    /// Adds `other` in (a sum too large for an `i64` stays at its largest).
    pub fn add(&mut self, other: Totals) {
        self.value = self.value.saturating_add(other.value);
        self.events += other.events;
    }
}

/// Stacks and their summed values, gathered over the chunks of a recording.
#[derive(Debug, Default)]
pub struct FoldedStacks {
    stacks: HashMap<String, Totals>,
    /// Events of the types folded here that were read, kept by the filter
    /// or not.
    read: u64,
    /// Events folded.
    folded: u64,
    /// With [`Fold::live`]: events of objects whose liveness was not
    /// tracked, left out.
    untracked: Totals,
}

/// Which events are folded, beyond their type and the filter, and how.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fold {
    /// Frames kept per stack, those nearest the top.
    pub stack_depth: usize,
    /// `Some(min_gcs)`: only objects still live at the recording's end
    /// (`live` true; `tracked` not false) that outlived at least `min_gcs`
    /// collections (`gcsSurvived`), as `top --live` counts them. An event
    /// without a `live` field is not live.
    pub live: Option<u64>,
    /// End the stack of an event of a type with an `objectClass` field
    /// with a frame of that class (see the module's doc).
    pub class_frame: bool,
}

/// What is done with the events of one type in a chunk.
struct TypeFold<'c> {
    plan: EventPlan<'c>,
    /// The stacks its events are folded into; without, they are read (so
    /// a malformed one fails the conversion) but not folded.
    into: Option<usize>,
    stack_trace: Option<usize>,
    weight: Option<usize>,
    live: Option<usize>,
    tracked: Option<usize>,
    gcs_survived: Option<usize>,
    /// With [`Fold::class_frame`]: the `objectClass` field, and the suffix
    /// of its frame.
    class: Option<(usize, &'static str)>,
}

/// What a line of one chunk is made of: the pool keys of its stack trace
/// (`None`: the event has none) and of its class frame's class, with the
/// frame's suffix (`None`: no class frame).
type LineKey = (Option<(u64, u64)>, Option<((u64, u64), &'static str)>);

/// One chunk's sums for one set of stacks, before their lines are made.
type ChunkSums = IdMap<LineKey, Totals>;

impl FoldedStacks {
    /// No stacks yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds the events of `chunk` whose type `wanted` accepts and that
    /// `filter` keeps, keeping the `stack_depth` frames nearest the top of
    /// each stack, with their class frames; returns how many were added.
    pub fn add_chunk(
        &mut self,
        chunk: &Chunk<'_>,
        stack_depth: usize,
        wanted: &dyn Fn(&str) -> bool,
        filter: &ChunkFilter<'_, '_, '_>,
    ) -> Result<u64, ReadError> {
        let before = self.folded;
        let fold = Fold {
            stack_depth,
            live: None,
            class_frame: true,
        };
        fold_chunk(
            chunk,
            fold,
            &|name| wanted(name).then_some(0),
            std::slice::from_mut(self),
            filter,
        )?;
        Ok(self.folded - before)
    }

    /// Adds `totals` to the stack `line` (frames root first, joined with
    /// `;`), as if events of it had been folded.
    pub fn add(&mut self, line: &str, totals: Totals) {
        match self.stacks.get_mut(line) {
            Some(sum) => sum.add(totals),
            None => {
                self.stacks.insert(line.to_owned(), totals);
            }
        }
        self.folded += totals.events;
    }

    /// [`add`](Self::add) for a line already made.
    fn add_owned(&mut self, line: String, totals: Totals) {
        match self.stacks.entry(line) {
            Entry::Occupied(mut sum) => sum.get_mut().add(totals),
            Entry::Vacant(slot) => {
                slot.insert(totals);
            }
        }
        self.folded += totals.events;
    }

    /// Adds the stacks and counts of `other`, folded from other chunks.
    pub fn merge(&mut self, other: FoldedStacks) {
        self.read += other.read;
        self.untracked.add(other.untracked);
        for (line, totals) in other.stacks {
            self.add_owned(line, totals);
        }
    }

    /// Events of the types folded here that were read, whether the filter
    /// kept them or not.
    pub fn read(&self) -> u64 {
        self.read
    }

    /// Events folded.
    pub fn folded(&self) -> u64 {
        self.folded
    }

    /// With [`Fold::live`]: the events of objects whose liveness the agent
    /// did not track (objects at or above its `live_max` size), left out.
    pub fn untracked(&self) -> Totals {
        self.untracked
    }

    /// The number of distinct stacks.
    pub fn len(&self) -> usize {
        self.stacks.len()
    }

    /// Whether no event was added.
    pub fn is_empty(&self) -> bool {
        self.stacks.is_empty()
    }

    /// The sum of every stack's value.
    pub fn total(&self) -> i64 {
        self.totals().value
    }

    /// The sums of every stack's value and events.
    pub fn totals(&self) -> Totals {
        let mut sum = Totals::default();
        self.stacks.values().for_each(|totals| sum.add(*totals));
        sum
    }

    /// The stacks and their totals, sorted by stack (byte order), so that
    /// the same recording always gives the same output.
    pub fn sorted(&self) -> Vec<(&str, Totals)> {
        let mut lines: Vec<(&str, Totals)> = self
            .stacks
            .iter()
            .map(|(stack, totals)| (stack.as_str(), *totals))
            .collect();
        lines.sort_unstable_by(|a, b| a.0.cmp(b.0));
        lines
    }

    /// Writes `stack value` lines, sorted by stack.
    pub fn write(&self, out: &mut dyn Write) -> io::Result<()> {
        let mut number = itoa::Buffer::new();
        for (stack, totals) in self.sorted() {
            out.write_all(stack.as_bytes())?;
            out.write_all(b" ")?;
            out.write_all(number.format(totals.value).as_bytes())?;
            out.write_all(b"\n")?;
        }
        Ok(())
    }
}

/// Adds each event of `chunk` that `filter` keeps (and, with
/// [`Fold::live`], that is of an object still live) to the stacks of
/// `stacks` that `into` names for its type (none: the event is read but not
/// folded), keeping the [`Fold::stack_depth`] frames nearest the top of
/// each stack. The chunk is read once, whatever the number of stacks; each
/// pooled stack (the JDK's and ours) is folded into its line once.
pub fn fold_chunk<'a>(
    chunk: &Chunk<'a>,
    fold: Fold,
    into: &dyn Fn(&str) -> Option<usize>,
    stacks: &mut [FoldedStacks],
    filter: &ChunkFilter<'_, '_, '_>,
) -> Result<(), ReadError> {
    let flattener = Flattener::new(chunk, fold.stack_depth);
    let mut sums: Vec<ChunkSums> = stacks.iter().map(|_| ChunkSums::default()).collect();
    let mut types: TypeMap<Option<TypeFold<'_>>> = TypeMap::default();
    for raw in chunk.raw_events() {
        let mut raw = raw?;
        let Some(fold_type) = types.get_or_insert_with(raw.type_id, || {
            let plan = chunk.plan(raw.type_id)?;
            let name = &plan.class().name;
            Some(TypeFold {
                into: into(name).filter(|&at| at < stacks.len()),
                stack_trace: plan.field_index(field::STACK_TRACE),
                weight: plan.field_index(weight_field(name)),
                live: plan.field_index(field::LIVE),
                tracked: plan.field_index(field::TRACKED),
                gcs_survived: plan.field_index(field::GCS_SURVIVED),
                class: plan
                    .field_index(field::OBJECT_CLASS)
                    .filter(|_| fold.class_frame)
                    .map(|index| (index, class_frame_suffix(name))),
                plan,
            })
        }) else {
            continue; // undeclared: skipped, as the JDK does
        };
        let Some(at) = fold_type.into else {
            fold_type.plan.skip(&mut raw)?;
            continue;
        };
        let mut check = filter.check(raw.type_id);
        let mut stack = Field::Null;
        let mut class = None;
        let mut value = 1;
        let (mut live, mut tracked, mut gcs_survived) = (false, true, 0);
        fold_type
            .plan
            .read(&mut raw, &mut |index: usize, field: Field<'a>| {
                filter.see(&mut check, index, &field);
                if Some(index) == fold_type.weight {
                    value = field.integer().unwrap_or(0);
                } else if Some(index) == fold_type.stack_trace {
                    stack = field;
                } else if Some(index) == fold_type.live {
                    live = field == Field::Boolean(true);
                } else if Some(index) == fold_type.tracked {
                    tracked = field != Field::Boolean(false);
                } else if Some(index) == fold_type.gcs_survived {
                    gcs_survived = field.count().unwrap_or(0);
                } else if let Some((_, suffix)) = fold_type.class.filter(|&(at, _)| at == index) {
                    // A class outside the pool (never seen) has no frame.
                    class = match field {
                        Field::Pooled { class_id, key } => Some(((class_id, key), suffix)),
                        _ => None,
                    };
                }
            })?;
        stacks[at].read += 1;
        if !filter.keeps(check) {
            continue;
        }
        let totals = Totals { value, events: 1 };
        if let Some(min_gcs) = fold.live {
            match Liveness::of(live, tracked, gcs_survived, min_gcs) {
                Liveness::Live => {}
                Liveness::Not => continue,
                Liveness::Untracked => {
                    stacks[at].untracked.add(totals);
                    continue;
                }
            }
        }
        let stack = match stack {
            Field::Pooled { class_id, key } => Some((class_id, key)),
            Field::Null => None,
            // Not pooled: rare enough to fold as it comes.
            inline => {
                let line = fold_stack(&flattener, &inline.into_value());
                stacks[at].add_owned(with_class(&flattener, line, class), totals);
                continue;
            }
        };
        sums[at].entry((stack, class)).or_default().add(totals);
    }
    for (stacks, sums) in stacks.iter_mut().zip(sums) {
        for ((stack, class), totals) in sums {
            let line = match stack {
                Some((class_id, key)) => fold_stack(&flattener, &Value::Ref { class_id, key }),
                None => UNKNOWN_FRAME.to_owned(),
            };
            stacks.add_owned(with_class(&flattener, line, class), totals);
        }
    }
    Ok(())
}

/// `line` ended with the frame of `class` (its pool key and the frame's
/// suffix), if there is one and the pool names it.
fn with_class(
    flattener: &Flattener<'_, '_>,
    mut line: String,
    class: Option<((u64, u64), &'static str)>,
) -> String {
    let Some(((class_id, key), suffix)) = class else {
        return line;
    };
    let name = flattener.text(&Value::Ref { class_id, key });
    if !name.is_empty() {
        line.push(';');
        line.push_str(&frame_name(&name));
        line.push_str(suffix);
    }
    line
}

/// A stack trace as one line: root first, frames joined with `;`, after
/// [`TRUNCATED_FRAME`] if the stack was cut.
fn fold_stack(flattener: &Flattener<'_, '_>, stack_trace: &Value) -> String {
    let mut line = Line::default();
    let cut = flattener.frames_root_first(stack_trace, &mut |frame| line.push(frame));
    line.finish(cut)
}

/// A folded line being made, root first.
#[derive(Default)]
struct Line {
    text: String,
    frames: usize,
}

impl Line {
    /// Adds the frame after those added, nearer the top.
    fn push(&mut self, frame: &str) {
        if self.frames > 0 {
            self.text.push(';');
        }
        self.text.push_str(&frame_name(frame));
        self.frames += 1;
    }

    /// The line; `cut`: frames nearest the root are missing.
    fn finish(mut self, cut: bool) -> String {
        if self.frames == 0 {
            return UNKNOWN_FRAME.to_owned();
        }
        if cut {
            self.text.insert(0, ';');
            self.text.insert_str(0, TRUNCATED_FRAME);
        }
        self.text
    }
}

/// A frame as the folded format can carry it: `;` separates frames and a
/// line ends a stack, so neither may appear inside one (JVM languages other
/// than Java allow almost any character in a method name); an empty name
/// (a method missing from the pool) would merge with its neighbours.
fn frame_name(frame: &str) -> std::borrow::Cow<'_, str> {
    // Printable ASCII without `;`, as almost every name is: no char by char
    // look.
    if !frame.is_empty()
        && frame
            .bytes()
            .all(|b| (b' '..=b'~').contains(&b) && b != b';')
    {
        frame.into()
    } else if frame.is_empty() {
        UNKNOWN_FRAME.into()
    } else if frame.contains(|c: char| c == ';' || c.is_control()) {
        frame
            .replace(|c: char| c == ';' || c.is_control(), "_")
            .into()
    } else {
        frame.into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frame_names_cannot_break_the_format() {
        assert_eq!(frame_name("a.B.c"), "a.B.c");
        assert_eq!(frame_name("a.B.ünïcode"), "a.B.ünïcode");
        assert_eq!(frame_name("a.B.c\u{85}"), "a.B.c_");
        assert_eq!(frame_name("a.B.`odd; name`"), "a.B.`odd_ name`");
        assert_eq!(frame_name("a.B.two\nlines"), "a.B.two_lines");
        assert_eq!(frame_name(""), UNKNOWN_FRAME);
    }

    #[test]
    fn a_cut_stack_starts_with_the_truncated_marker() {
        let line = |frames: &[&str], cut: bool| {
            let mut line = Line::default();
            frames.iter().for_each(|frame| line.push(frame));
            line.finish(cut)
        };
        assert_eq!(
            line(&["a.B.caller", "a.B.alloc"], false),
            "a.B.caller;a.B.alloc"
        );
        assert_eq!(
            line(&["a.B.caller", "a.B.alloc"], true),
            "[truncated];a.B.caller;a.B.alloc"
        );
        assert_eq!(
            line(&["a.B.odd;name", ""], true),
            "[truncated];a.B.odd_name;[unknown]"
        );
        assert_eq!(line(&[], true), UNKNOWN_FRAME);
    }

    #[test]
    fn output_is_sorted_and_totals_add_up() {
        let mut stacks = FoldedStacks::new();
        let totals = |value, events| Totals { value, events };
        stacks.add("main;b", totals(5, 1));
        stacks.add("main;a", totals(7, 2));
        stacks.add(UNKNOWN_FRAME, totals(1, 1));
        let mut other = FoldedStacks::new();
        other.add("main;a", totals(3, 1));
        stacks.merge(other);
        let mut out = Vec::new();
        stacks.write(&mut out).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "[unknown] 1\nmain;a 10\nmain;b 5\n"
        );
        assert_eq!(stacks.total(), 16);
        assert_eq!(stacks.totals(), totals(16, 5));
        assert_eq!(stacks.folded(), 5);
        assert_eq!(stacks.len(), 3);
    }
}
