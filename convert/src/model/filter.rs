//! Which events `heapsampler convert` keeps: a window of start times, and
//! regular expressions on the thread's and the class's names.
//!
//! Names are matched as the CSV shows them (a thread's Java name, a class's
//! Java name such as `java.lang.String` or `int[]`), so what a user reads in
//! one conversion is what they can filter on in the next.

use regex::Regex;

use jfr_format::names::{self, field};

use crate::model::text::{Flattener, epoch_nanos};
use jfr_reader::IdMap;
use jfr_reader::chunk::Chunk;
use jfr_reader::event::{Event, Field};
use jfr_reader::metadata::ClassInfo;
use jfr_reader::value::Value;

/// The forms `--from` and `--to` accept, for help and error messages.
pub const TIME_FORMS: &str = "an RFC 3339 time with a zone (2026-11-22T10:15:00Z, \
     2026-11-22T10:15:00.250+01:00) or an offset from the recording's start: a number \
     and a unit, ns, us, ms, s, m or h (500ms, 30s, 1.5m, 2h)";

/// One end of a time window, as given on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeBound {
    /// A wall-clock instant: nanoseconds since the Unix epoch.
    At(i64),
    /// An offset from the recording's start, in nanoseconds.
    AfterStart(i64),
}

impl TimeBound {
    /// Parses an RFC 3339 time or an offset such as `30s` (see
    /// [`TIME_FORMS`]); the error names the value and the accepted forms.
    pub fn parse(text: &str) -> Result<Self, String> {
        let bad = || format!("'{text}' is not a time: expected {TIME_FORMS}");
        if text.contains('T') || text.contains('t') || text.contains(':') {
            let at = chrono::DateTime::parse_from_rfc3339(text).map_err(|_| bad())?;
            return at.timestamp_nanos_opt().map(Self::At).ok_or_else(bad);
        }
        parse_offset(text).map(Self::AfterStart).ok_or_else(bad)
    }

    /// The instant in nanoseconds since the epoch, for a recording that
    /// started at `recording_start` (nanoseconds since the epoch).
    pub fn resolve(self, recording_start: i64) -> i64 {
        match self {
            Self::At(nanos) => nanos,
            Self::AfterStart(offset) => recording_start.saturating_add(offset),
        }
    }
}

/// `30s`, `1.5m`, `500ms` as nanoseconds. Computed in integers so that
/// `0.1s` is exactly 100 000 000 ns, not the nearest double.
fn parse_offset(text: &str) -> Option<i64> {
    let split = text
        .find(|c: char| !c.is_ascii_digit() && c != '.')
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let scale: i128 = match unit {
        "ns" => 1,
        "us" => 1_000,
        "ms" => 1_000_000,
        "s" => 1_000_000_000,
        "m" => 60_000_000_000,
        "h" => 3_600_000_000_000,
        _ => return None,
    };
    let (whole, fraction) = number.split_once('.').unwrap_or((number, ""));
    if whole.is_empty() && fraction.is_empty()
        || !whole
            .bytes()
            .chain(fraction.bytes())
            .all(|b| b.is_ascii_digit())
        || whole.len() > 20
        || fraction.len() > 20
    {
        return None;
    }
    let whole: i128 = if whole.is_empty() {
        0
    } else {
        whole.parse().ok()?
    };
    let fraction_value: i128 = if fraction.is_empty() {
        0
    } else {
        fraction.parse().ok()?
    };
    let nanos = whole * scale + fraction_value * scale / 10i128.pow(fraction.len() as u32);
    i64::try_from(nanos).ok()
}

/// A regular expression given on the command line; the error names it.
pub fn parse_regex(text: &str) -> Result<Regex, String> {
    Regex::new(text).map_err(|e| format!("'{text}' is not a regular expression: {e}"))
}

/// What to keep, as given on the command line. The empty filter keeps
/// every event.
#[derive(Debug, Clone, Default)]
pub struct Filter {
    /// Keep events that start at or after this.
    pub from: Option<TimeBound>,
    /// Keep events that start before this.
    pub to: Option<TimeBound>,
    /// Keep events whose thread's name matches (anywhere in the name).
    pub thread: Option<Regex>,
    /// Keep events whose class's Java name matches (anywhere in the name).
    pub class: Option<Regex>,
}

impl Filter {
    /// Whether the filter keeps every event.
    pub fn is_empty(&self) -> bool {
        self.from.is_none() && self.to.is_none() && self.thread.is_none() && self.class.is_none()
    }

    /// Refuses a window that is empty whatever the recording: both ends of
    /// one kind, the start not before the end.
    pub fn check_window(&self) -> Result<(), String> {
        let (Some(from), Some(to)) = (self.from, self.to) else {
            return Ok(());
        };
        let empty = match (from, to) {
            (TimeBound::At(from), TimeBound::At(to))
            | (TimeBound::AfterStart(from), TimeBound::AfterStart(to)) => from >= to,
            _ => false,
        };
        if empty {
            return Err("--from must come before --to: the window [from, to) is empty".to_owned());
        }
        Ok(())
    }

    /// The window in nanoseconds since the epoch, `[from, to)`, for a
    /// recording that started at `recording_start`.
    pub fn window(&self, recording_start: i64) -> Window {
        Window {
            from: self.from.map(|b| b.resolve(recording_start)),
            to: self.to.map(|b| b.resolve(recording_start)),
        }
    }
}

/// A time window in nanoseconds since the epoch: `[from, to)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Window {
    /// Inclusive start; `None`: unbounded.
    pub from: Option<i64>,
    /// Exclusive end; `None`: unbounded.
    pub to: Option<i64>,
}

impl Window {
    /// Whether `nanos` lies in the window.
    pub fn contains(&self, nanos: i64) -> bool {
        self.from.is_none_or(|from| nanos >= from) && self.to.is_none_or(|to| nanos < to)
    }

    /// Whether the window is unbounded on both sides.
    pub fn is_unbounded(&self) -> bool {
        self.from.is_none() && self.to.is_none()
    }
}

/// Where an event type keeps what the filter looks at: indexes into its
/// fields.
#[derive(Debug, Clone, Copy, Default)]
struct Fields {
    start_time: Option<usize>,
    thread: Option<usize>,
    class: Option<usize>,
}

impl Fields {
    fn of(chunk: &Chunk<'_>, class: &ClassInfo) -> Self {
        let named = |name: &str| class.fields.iter().position(|f| f.name == name);
        Self {
            start_time: named(field::START_TIME),
            // Sampling events (jdk.ExecutionSample) name the thread they
            // sampled, not the one that wrote the event.
            thread: named(field::EVENT_THREAD).or_else(|| named(field::SAMPLED_THREAD)),
            // The first class-valued field: objectClass for allocations.
            class: class.fields.iter().position(|f| {
                !f.array
                    && chunk
                        .metadata
                        .class(f.class_id)
                        .is_some_and(|c| c.name == names::class::CLASS)
            }),
        }
    }
}

/// The filter applied to one chunk's events: field positions are looked up
/// once per event type, since every chunk has its own metadata.
pub struct ChunkFilter<'f, 'c, 'a> {
    filter: &'f Filter,
    window: Window,
    chunk: &'c Chunk<'a>,
    flattener: Flattener<'c, 'a>,
    /// The fields each event type's conditions look at; a type missing
    /// here has none to see.
    fields: IdMap<u64, Fields>,
}

/// One event on its way through a [`ChunkFilter`]: which conditions it
/// has passed so far. A condition with nothing to look at is failed until
/// the field it looks at is seen.
#[derive(Debug, Clone, Copy)]
pub struct Check {
    fields: Fields,
    time: bool,
    thread: bool,
    class: bool,
}

impl<'f, 'c, 'a> ChunkFilter<'f, 'c, 'a> {
    /// The filter for `chunk`, with the time window already resolved.
    pub fn new(filter: &'f Filter, window: Window, chunk: &'c Chunk<'a>) -> Self {
        // Only the fields a condition looks at are seen: none for the empty
        // filter, which then costs an event nothing but a lookup in an
        // empty map.
        let used = |field: Option<usize>, used: bool| field.filter(|_| used);
        let fields = chunk
            .metadata
            .classes
            .iter()
            .filter(|c| c.is_event())
            .map(|c| {
                let all = Fields::of(chunk, c);
                let used = Fields {
                    start_time: used(all.start_time, !window.is_unbounded()),
                    thread: used(all.thread, filter.thread.is_some()),
                    class: used(all.class, filter.class.is_some()),
                };
                (c.id, used)
            })
            .filter(|(_, used)| used.start_time.or(used.thread).or(used.class).is_some())
            .collect();
        Self {
            filter,
            window,
            chunk,
            flattener: Flattener::new(chunk, 0),
            fields,
        }
    }

    /// The check of an event of type `type_id`, before its fields are seen.
    pub fn check(&self, type_id: u64) -> Check {
        Check {
            fields: self.fields.get(&type_id).copied().unwrap_or_default(),
            time: self.window.is_unbounded(),
            thread: self.filter.thread.is_none(),
            class: self.filter.class.is_none(),
        }
    }

    /// Shows `check` the event's field number `index`, as
    /// [`EventPlan::read`](jfr_reader::event::EventPlan::read) hands it on.
    #[inline]
    pub fn see(&self, check: &mut Check, index: usize, field: &Field<'_>) {
        let fields = check.fields;
        let wanted = [fields.start_time, fields.thread, fields.class];
        if wanted.contains(&Some(index)) {
            self.see_value(check, index, &field.clone().into_value());
        }
    }

    /// Whether the event passes every condition, its fields seen. An event
    /// that lacks what a condition looks at (a start time, a thread, a
    /// class) fails it.
    pub fn keeps(&self, check: Check) -> bool {
        check.time && check.thread && check.class
    }

    /// Whether a decoded event passes every condition.
    pub fn keep(&self, event: &Event) -> bool {
        let mut check = self.check(event.type_id);
        for (index, value) in event.fields.iter().enumerate() {
            self.see_value(&mut check, index, value);
        }
        self.keeps(check)
    }

    fn see_value(&self, check: &mut Check, index: usize, value: &Value) {
        let fields = check.fields;
        if fields.start_time == Some(index) && !self.window.is_unbounded() {
            check.time = match self.chunk.resolve(value) {
                Value::Long(ticks) => self
                    .window
                    .contains(epoch_nanos(&self.chunk.header, *ticks)),
                _ => false,
            };
        }
        let matches = |regex: &Regex| {
            !matches!(self.chunk.resolve(value), Value::Null)
                && regex.is_match(&self.flattener.text(value))
        };
        if let (true, Some(regex)) = (fields.thread == Some(index), &self.filter.thread) {
            check.thread = matches(regex);
        }
        if let (true, Some(regex)) = (fields.class == Some(index), &self.filter.class) {
            check.class = matches(regex);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_are_exact_nanoseconds() {
        let offset = |text| match TimeBound::parse(text) {
            Ok(TimeBound::AfterStart(nanos)) => nanos,
            other => panic!("{text}: {other:?}"),
        };
        assert_eq!(offset("500ms"), 500_000_000);
        assert_eq!(offset("30s"), 30_000_000_000);
        assert_eq!(offset("2m"), 120_000_000_000);
        assert_eq!(offset("1h"), 3_600_000_000_000);
        assert_eq!(offset("0.1s"), 100_000_000);
        assert_eq!(offset("1.5m"), 90_000_000_000);
        assert_eq!(offset(".5s"), 500_000_000);
        assert_eq!(offset("250us"), 250_000);
        assert_eq!(offset("7ns"), 7);
        assert_eq!(offset("0s"), 0);
    }

    #[test]
    fn times_are_rfc_3339_with_a_zone() {
        assert_eq!(
            TimeBound::parse("2026-11-22T10:15:00Z"),
            Ok(TimeBound::At(1_795_342_500_000_000_000))
        );
        assert_eq!(
            TimeBound::parse("2026-11-22T11:15:00.000000250+01:00"),
            Ok(TimeBound::At(1_795_342_500_000_000_250))
        );
    }

    #[test]
    fn bad_times_name_the_value_and_the_forms() {
        for bad in [
            "",
            "30",
            "s",
            "30x",
            "3 s",
            "-5s",
            "1.2.3s",
            "2026-11-22T10:15:00", // no zone
            "2026-13-22T10:15:00Z",
            "yesterday",
            "1e3s",
            "99999999999999999999h",
        ] {
            let error = TimeBound::parse(bad).expect_err(bad);
            assert!(error.contains(&format!("'{bad}'")), "{error}");
            assert!(error.contains("500ms, 30s"), "{error}");
        }
    }

    #[test]
    fn windows_are_half_open() {
        let filter = Filter {
            from: Some(TimeBound::AfterStart(10)),
            to: Some(TimeBound::At(1_000_050)),
            ..Filter::default()
        };
        let window = filter.window(1_000_000);
        assert_eq!(
            window,
            Window {
                from: Some(1_000_010),
                to: Some(1_000_050)
            }
        );
        assert!(!window.contains(1_000_009));
        assert!(window.contains(1_000_010));
        assert!(window.contains(1_000_049));
        assert!(!window.contains(1_000_050));
        assert!(Window::default().contains(i64::MIN));
    }

    #[test]
    fn bad_regexes_are_named() {
        let error = parse_regex("worker-[0-").unwrap_err();
        assert!(error.starts_with("'worker-[0-' is not a regular expression"));
    }
}
