//! The event types a command names (`convert --events`): which of them a
//! recording declares.

use std::sync::atomic::{AtomicBool, Ordering};

use jfr_reader::chunk::Chunk;

/// Which of the event types named the chunks of a recording declare, seen
/// chunk by chunk on any thread: a type none declares is a mistake to
/// report (a typo, or a recording made without it), not an empty result.
#[derive(Debug)]
pub struct Declared {
    types: Vec<(String, AtomicBool)>,
}

impl Declared {
    /// None of `types` seen yet.
    pub fn new(types: &[String]) -> Self {
        Self {
            types: types
                .iter()
                .map(|t| (t.clone(), AtomicBool::new(false)))
                .collect(),
        }
    }

    /// Notes the types named that `chunk` declares as event types.
    pub fn see(&self, chunk: &Chunk<'_>) {
        for (name, declared) in &self.types {
            if !declared.load(Ordering::Relaxed)
                && chunk
                    .metadata
                    .class_named(name)
                    .is_some_and(|class| class.is_event())
            {
                declared.store(true, Ordering::Relaxed);
            }
        }
    }

    /// The types named that no chunk declared.
    pub fn missing(&self) -> Vec<String> {
        self.types
            .iter()
            .filter(|(_, declared)| !declared.load(Ordering::Relaxed))
            .map(|(name, _)| name.clone())
            .collect()
    }
}
