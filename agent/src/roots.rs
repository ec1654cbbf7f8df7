//! Paths from GC roots to sampled objects still live: what `roots=true`
//! finds by walking the heap once at the end of a recording, and what the
//! writer turns into each `jdk.OldObjectSample`'s referrer chain and root.
//!
//! JVM-free: the walk itself is the VM's ([`crate::writer::Vm::paths_to_roots`]).

use std::time::Duration;

/// How far and how long the walk may go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RootLimits {
    /// The most references followed from a root.
    pub max_depth: usize,
    /// The longest the walk may take; objects not reached by then have no
    /// path.
    pub budget: Duration,
}

/// The chain of references that keeps an object live.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RootPath {
    /// The root the chain starts at.
    pub root: GcRoot,
    /// The objects holding it, nearest first: `links[0]` holds the sampled
    /// object, the last one is held by the root.
    pub links: Vec<Link>,
}

/// A GC root, as the JDK's leak profiler names roots
/// (`jdk.types.OldObjectGcRoot`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GcRoot {
    /// The subsystem: `Universe`, `Threads`, `Class Loader Data`, `JNI
    /// Handles`, ...
    pub system: &'static str,
    /// The kind: `Stack Variable`, `Global Handle`, `Local JNI Handle`, ...
    pub kind: &'static str,
    /// What it is (a class's static field, a thread's frame), if known.
    pub description: Option<String>,
}

/// One object of a chain and the reference it holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Link {
    /// The holding object's class signature: `Ljava/util/HashMap$Node;`.
    pub holder_class: String,
    /// Where in it the reference is.
    pub reference: Reference,
}

/// Where a reference is held.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reference {
    /// A field: its name and modifiers.
    Field {
        /// The field's name.
        name: String,
        /// Its access modifiers.
        modifiers: i16,
    },
    /// An array element.
    Element {
        /// The array's length.
        length: i32,
        /// The element's index.
        index: i32,
    },
    /// Not known.
    Unknown,
}
