//! Folded stacks ("collapsed" format), the input of flame-graph tools
//! (Brendan Gregg's flamegraph.pl, inferno, speedscope): one line per
//! distinct stack, its frames root first joined with `;`, a space, and the
//! stack's value.
//!
//! The value is the sum of the events' weight field where their type has
//! one (the allocated bytes the events stand for: `weight` of
//! `jdk.ObjectAllocationSample` and `heapsampler.ObjectLifetime`, and the
//! TLAB events' fields as [`crate::allocation`] says), otherwise the number
//! of events.
//! Frames are `pkg.Class.method` without line numbers: a flame graph merges
//! a method's calls into one box per caller, where lines would split it into
//! one box per call site.

use std::collections::HashMap;
use std::io::{self, Write};

use jfr_writer::format::names::field;

use crate::allocation::weight_field;
use crate::export::Flattener;
use crate::filter::ChunkFilter;
use crate::read::chunk::Chunk;
use crate::read::event::{EventPlan, Field, TypeMap};
use crate::read::value::Value;
use crate::read::{IdMap, ReadError};

/// The frame written for an event without a stack trace, so that its value
/// still counts in the total (perf and inferno use the same name).
pub const UNKNOWN_FRAME: &str = "[unknown]";

/// The frame at the root end of a stack that was cut, where its missing
/// frames would be.
pub const TRUNCATED_FRAME: &str = "[truncated]";

/// Stacks and their summed values, gathered over the chunks of a recording.
#[derive(Debug, Default)]
pub struct FoldedStacks {
    stacks: HashMap<String, i64>,
    /// Events of the types folded here that were read, kept by the filter
    /// or not.
    read: u64,
    /// Events folded.
    folded: u64,
}

/// What is done with the events of one type in a chunk.
struct TypeFold<'c> {
    plan: EventPlan<'c>,
    /// The stacks its events are folded into; without, they are read (so
    /// a malformed one fails the conversion) but not folded.
    into: Option<usize>,
    stack_trace: Option<usize>,
    weight: Option<usize>,
}

impl FoldedStacks {
    /// No stacks yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds the events of `chunk` whose type `wanted` accepts and that
    /// `filter` keeps, keeping the `stack_depth` frames nearest the top of
    /// each stack; returns how many were added.
    pub fn add_chunk(
        &mut self,
        chunk: &Chunk<'_>,
        stack_depth: usize,
        wanted: &dyn Fn(&str) -> bool,
        filter: &ChunkFilter<'_, '_, '_>,
    ) -> Result<u64, ReadError> {
        let before = self.folded;
        fold_chunk(
            chunk,
            stack_depth,
            &|name| wanted(name).then_some(0),
            std::slice::from_mut(self),
            filter,
        )?;
        Ok(self.folded - before)
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
        self.stacks
            .values()
            .fold(0, |sum, v| sum.saturating_add(*v))
    }

    /// The stacks and their values, sorted by stack (byte order), so that
    /// the same recording always gives the same output.
    pub fn sorted(&self) -> Vec<(&str, i64)> {
        let mut lines: Vec<(&str, i64)> = self
            .stacks
            .iter()
            .map(|(stack, value)| (stack.as_str(), *value))
            .collect();
        lines.sort_unstable();
        lines
    }

    /// Writes `stack value` lines, sorted by stack.
    pub fn write(&self, out: &mut dyn Write) -> io::Result<()> {
        for (stack, value) in self.sorted() {
            writeln!(out, "{stack} {value}")?;
        }
        Ok(())
    }
}

/// Adds each event of `chunk` that `filter` keeps to the stacks of
/// `stacks` that `into` names for its type (none: the event is read but
/// not folded), keeping the `stack_depth` frames nearest the top of each
/// stack. Pooled stacks (the JDK's and ours) are folded once per key; the
/// chunk is read once, whatever the number of stacks.
pub fn fold_chunk<'a>(
    chunk: &Chunk<'a>,
    stack_depth: usize,
    into: &dyn Fn(&str) -> Option<usize>,
    stacks: &mut [FoldedStacks],
    filter: &ChunkFilter<'_, '_, '_>,
) -> Result<(), ReadError> {
    let flattener = Flattener::new(chunk, stack_depth);
    let mut folded: IdMap<(u64, u64), String> = IdMap::default();
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
        let mut stack = None;
        let mut value = 1;
        fold_type
            .plan
            .read(&mut raw, &mut |index: usize, field: Field<'a>| {
                filter.see(&mut check, index, &field);
                if Some(index) == fold_type.weight {
                    value = weight(chunk.resolve(&field.clone().into_value()));
                }
                if Some(index) == fold_type.stack_trace {
                    stack = Some(field);
                }
            })?;
        let stacks = &mut stacks[at];
        stacks.read += 1;
        if !filter.keeps(check) {
            continue;
        }
        let inline;
        let line = match stack {
            Some(Field::Pooled { class_id, key }) => folded
                .entry((class_id, key))
                .or_insert_with(|| fold(&flattener, &Value::Ref { class_id, key }))
                .as_str(),
            Some(field) => {
                inline = fold(&flattener, &field.into_value());
                inline.as_str()
            }
            None => UNKNOWN_FRAME,
        };
        match stacks.stacks.get_mut(line) {
            Some(sum) => *sum = sum.saturating_add(value),
            None => {
                stacks.stacks.insert(line.to_owned(), value);
            }
        }
        stacks.folded += 1;
    }
    Ok(())
}

/// An integer weight; anything else (null, a floating-point field) adds 0.
fn weight(value: &Value) -> i64 {
    match *value {
        Value::Long(v) => v,
        Value::Int(v) => v.into(),
        Value::Short(v) => v.into(),
        Value::Byte(v) => v.into(),
        _ => 0,
    }
}

/// A stack trace as one line: root first, frames joined with `;`.
fn fold(flattener: &Flattener<'_, '_>, stack_trace: &Value) -> String {
    let frames = flattener.frames(stack_trace, false);
    if frames.is_empty() {
        return UNKNOWN_FRAME.to_owned();
    }
    let mut line = String::new();
    for (n, frame) in frames.iter().rev().enumerate() {
        if n > 0 {
            line.push(';');
        }
        line.push_str(&frame_name(frame));
    }
    line
}

/// A frame as the folded format can carry it: `;` separates frames and a
/// line ends a stack, so neither may appear inside one (JVM languages other
/// than Java allow almost any character in a method name); an empty name
/// (a method missing from the pool) would merge with its neighbours.
fn frame_name(frame: &str) -> std::borrow::Cow<'_, str> {
    if frame.is_empty() {
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
        assert_eq!(frame_name("a.B.`odd; name`"), "a.B.`odd_ name`");
        assert_eq!(frame_name("a.B.two\nlines"), "a.B.two_lines");
        assert_eq!(frame_name(""), UNKNOWN_FRAME);
    }

    #[test]
    fn output_is_sorted_and_totals_add_up() {
        let mut stacks = FoldedStacks::new();
        stacks.stacks.insert("main;b".to_owned(), 5);
        stacks.stacks.insert("main;a".to_owned(), 7);
        stacks.stacks.insert(UNKNOWN_FRAME.to_owned(), 1);
        let mut out = Vec::new();
        stacks.write(&mut out).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "[unknown] 1\nmain;a 7\nmain;b 5\n"
        );
        assert_eq!(stacks.total(), 13);
        assert_eq!(stacks.len(), 3);
    }
}
