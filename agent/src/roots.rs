//! Paths from GC roots to sampled objects still live: what `roots=true`
//! finds by walking the heap once at the end of a recording, and what the
//! writer turns into each `jdk.OldObjectSample`'s referrer chain and root.
//!
//! JVM-free: the walk itself is the VM's ([`RootsVm::paths_to_roots`],
//! JVMTI `FollowReferences` in `ffi::heap_walk`); this module decides, for
//! each reference the walk reports, what to record and whether to go on
//! ([`Walker`]), and turns what was recorded into [`RootPath`]s
//! ([`Graph::path`]).
//!
//! # The algorithm
//!
//! `FollowReferences` reports every root first (threads, their stack and
//! JNI locals, JNI globals, system classes, the VM's other roots), then
//! pops objects off a stack and reports each reference they hold. It
//! follows an object's references once, and only if the callback asked it
//! to for one of the references to that object. The only state an agent can
//! keep per object is its JVMTI tag, so:
//!
//! - Before the walk every loaded class, every thread and every target (a
//!   sampled object still live) is tagged with a node of a [`Graph`]:
//!   classes first (node = class index), then threads, then targets. The
//!   callback then knows each object's class (its class's tag), a stack
//!   local's thread, and the targets, without any look-up.
//! - The first reference to reach an object records a node for it: how it
//!   was reached (a root, or a field, a static field, an array element or a
//!   class's other reference of an object recorded before), its class and
//!   its depth (the references followed from the root). Its tag becomes the
//!   node's number, and the walk follows its references.
//! - A reference from a class's static field restarts the depth at 1, and
//!   a chain ends there: its root is the class, held by its class loader
//!   (the JDK's leak profiler says "Class Loader Data"), and the last link
//!   is the `java.lang.Class` with the field, as the JDK shows it. So a
//!   static field's chain does not depend on how the walk reached the class.
//! - Objects are not followed beyond `roots_depth` references (classes
//!   always are, for their static fields). An object reached at the limit
//!   and so not followed is re-parented if a shorter path reaches it later:
//!   having no recorded children, it cannot close a cycle. Objects followed
//!   keep their first path: the walk is depth-first, so that path is not
//!   always the shortest.
//! - Primitive arrays, and objects of classes without instance fields of a
//!   reference type (boxed numbers), are leaves: never tagged (unless a
//!   target), never followed.
//! - The `referent` of a `java.lang.ref.Reference` is not followed (JVMTI
//!   reports it as a field): it does not keep its object live, and the JDK's
//!   leak profiler leaves it out too (`DO_FIELDS_EXCEPT_REFERENT`).
//! - The walk stops when every target is reached (their chains are
//!   complete at that moment), when the time budget (`roots_time`) is spent,
//!   or when [`MAX_NODES`] objects are recorded. Targets not reached by then
//!   have no path.
//! - Each target's path follows the recorded parents back to its root.
//!
//! # Memory
//!
//! A node is 16 bytes ([`Graph::memory_bytes`]), one per object recorded,
//! in chunks of 1 MiB, plus 16 or so per object array for its length. The
//! JVM's tag map holds an entry per tagged object on top (about 60 bytes in
//! HotSpot 17: the hash table entry and a weak handle): 70 to 90 MB at the
//! peak per million objects tagged in all (BENCHMARKS.md). Both are bounded
//! by [`MAX_NODES`] (about 1.3 GB) and by the time budget (about 400 MB in
//! the default 10 s on 2 cores), and freed after the walk: the walk tags in
//! a JVMTI environment of its own, disposed of afterwards, which drops every
//! tag at once and never touches the tags the recording uses.
//!
//! The time is JVMTI's: `FollowReferences` looks each reference's object,
//! class and referrer up in the tag map, and pauses the JVM 1.3 to 1.9 s
//! per million objects tagged; even with no tags it pauses 4.6 s on a
//! 1 GiB heap 70% full.

use std::fmt;
use std::time::{Duration, Instant};

use rustc_hash::FxHashMap;

use crate::signature::external_name;

/// What the writer asks of the JVM for the paths to roots, on its thread.
pub trait RootsVm {
    /// The paths from GC roots to the objects behind `handles` (live
    /// liveness handles), one per handle, `None` where the walk found none
    /// within `limits`. Walks the heap: called at the end, and at each leak
    /// suspect the watch raises.
    fn paths_to_roots(&mut self, handles: &[u64], limits: &RootLimits) -> Vec<Option<RootPath>> {
        let _ = limits;
        vec![None; handles.len()]
    }
}

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
    /// The subsystem: `Threads`, `Class Loader Data`, `JNI Global`, `VM
    /// Global` (see [`RootKind::gc_root`]).
    pub system: &'static str,
    /// The kind: `Stack Variable`, `Local JNI Handle`, `Global JNI Handle`,
    /// `Global Object Handle`, `<unknown>`.
    pub kind: &'static str,
    /// What it is, as the JDK says it: `Thread Name: main` for a thread's
    /// root; `None` otherwise.
    pub description: Option<String>,
}

/// One object of a chain and the reference it holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Link {
    /// The holding object's class signature: `Ljava/util/HashMap$Node;`;
    /// `Ljava/lang/Class;` for a class holding a static field.
    pub holder_class: String,
    /// What the JDK's leak profiler says of the holding object
    /// (`jdk.types.OldObject`'s description), when it says anything:
    /// `Class Name: com.example.Cache` for a class, `Thread Name: main` for
    /// a thread.
    pub description: Option<String>,
    /// The holding object's identity in the walk: one object is one
    /// identity in every path of the walk, so that chains through it can be
    /// joined (Mission Control's reference tree joins them by address).
    pub holder: u64,
    /// Where in it the reference is.
    pub reference: Reference,
}

/// Where a reference is held.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reference {
    /// A field: its name and modifiers (`ACC_STATIC`, 0x0008, for a
    /// static field held by its class).
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
    /// Not known: a reference the JVM keeps outside fields (from a class to
    /// its loader, its superclass, its constant pool), or a field that
    /// could not be named.
    Unknown,
}

/// The signature recorded for a holder whose class the walk did not know
/// (a class loaded while the walk was being prepared).
pub const UNKNOWN_CLASS: &str = "Lunknown/UnknownClass;";

/// What the JDK's leak profiler calls a root that holds a class, and so
/// its static fields.
pub const CLASS_ROOT: GcRoot = GcRoot {
    system: "Class Loader Data",
    kind: "<unknown>",
    description: None,
};

/// A root as JVMTI's `FollowReferences` reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RootKind {
    /// `JVMTI_HEAP_REFERENCE_JNI_GLOBAL`.
    JniGlobal,
    /// `JVMTI_HEAP_REFERENCE_SYSTEM_CLASS`: a class of the boot loader.
    SystemClass,
    /// `JVMTI_HEAP_REFERENCE_MONITOR`.
    Monitor,
    /// `JVMTI_HEAP_REFERENCE_STACK_LOCAL`.
    StackLocal,
    /// `JVMTI_HEAP_REFERENCE_JNI_LOCAL`.
    JniLocal,
    /// `JVMTI_HEAP_REFERENCE_THREAD`: a live thread's `Thread` object.
    Thread,
    /// `JVMTI_HEAP_REFERENCE_OTHER`: the VM's own handles.
    Other,
}

impl RootKind {
    /// The root as the JDK's leak profiler names it (HotSpot's
    /// `rootType.cpp`: the systems are "Threads", "Class Loader Data",
    /// "Universe", "Code Cache" and the strong `OopStorage`s, "JNI Global"
    /// and "VM Global" among them; the types "Stack Variable", "Local JNI
    /// Handle", "Global JNI Handle", "Global Object Handle", "Handle Area"),
    /// with the thread's name for a thread's root, as the JDK writes it.
    pub fn gc_root(self, thread_name: Option<&str>) -> GcRoot {
        let (system, kind) = match self {
            Self::JniGlobal => ("JNI Global", "Global JNI Handle"),
            // Boot classes are held by their class loader data.
            Self::SystemClass => return CLASS_ROOT,
            // An object a thread holds locked is in its frame's monitors,
            // where the JDK's leak profiler finds it.
            Self::Monitor | Self::StackLocal => ("Threads", "Stack Variable"),
            Self::JniLocal => ("Threads", "Local JNI Handle"),
            // The JavaThread's handle to its Thread object.
            Self::Thread => ("Threads", "Global Object Handle"),
            // HotSpot reports `Universe::vm_global()` as OTHER.
            Self::Other => ("VM Global", "Global Object Handle"),
        };
        let description = match self {
            Self::StackLocal | Self::JniLocal | Self::Thread => {
                thread_name.map(|name| format!("Thread Name: {name}"))
            }
            _ => None,
        };
        GcRoot {
            system,
            kind,
            description,
        }
    }
}

/// A node of the [`Graph`]: an object the walk tagged.
pub type NodeId = u32;

/// The tag the walk gives node `id` (0 means untagged).
#[inline]
pub fn tag_of(id: NodeId) -> i64 {
    id as i64 + 1
}

/// The node a tag names, if it is one of the walk's.
#[inline]
pub fn node_of(tag: i64) -> Option<NodeId> {
    (tag > 0 && tag <= NodeId::MAX as i64).then(|| (tag - 1) as NodeId)
}

/// How the walk first reached an object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Via {
    /// Not reached (yet).
    Unreached,
    /// Held by a root; for a thread's root, the thread's node.
    Root {
        /// The kind of root.
        kind: RootKind,
        /// The thread whose stack, JNI locals or `Thread` object it is.
        thread: Option<NodeId>,
    },
    /// An instance field of `holder`, by JVMTI's field index.
    Field {
        /// The holding object.
        holder: NodeId,
        /// JVMTI's index of the field.
        index: i32,
    },
    /// A static field of class `class` (whose node is its class index).
    StaticField {
        /// The class.
        class: NodeId,
        /// JVMTI's index of the field.
        index: i32,
    },
    /// An element of `array`.
    Element {
        /// The array.
        array: NodeId,
        /// The element's index.
        index: i32,
    },
    /// Another reference of `holder`: a class's loader, superclass,
    /// interfaces, constant pool, signers or protection domain, or an
    /// object's class.
    Other {
        /// The holding object.
        holder: NodeId,
    },
}

const UNREACHED: u8 = 0;
const ROOT: u8 = 1; // + RootKind as u8 (1..=7)
const FIELD: u8 = 8;
const STATIC_FIELD: u8 = 9;
const ELEMENT: u8 = 10;
const OTHER: u8 = 11;
const KIND_MASK: u8 = 0x0f;
const EXPANDED: u8 = 0x10;
const TARGET: u8 = 0x20;
const NO_NODE: u32 = u32::MAX;

/// One recorded object, 16 bytes.
#[derive(Debug, Clone, Copy)]
struct Node {
    /// The parent node (the holder), or for a root the thread's node.
    link: u32,
    /// The field or element index.
    index: i32,
    /// The node of the object's class.
    class: u32,
    /// References from the root.
    depth: u16,
    /// The kind of `Via` and the EXPANDED and TARGET flags.
    flags: u8,
}

impl Node {
    const UNREACHED: Self = Self {
        link: NO_NODE,
        index: 0,
        class: NO_NODE,
        depth: 0,
        flags: UNREACHED,
    };
}

/// The nodes in chunks of 64 Ki (1 MiB): growing never copies them, nor
/// holds more than one chunk unused.
#[derive(Debug, Clone, Default)]
struct Nodes {
    chunks: Vec<Vec<Node>>,
    len: usize,
}

const CHUNK_BITS: u32 = 16;
const CHUNK: usize = 1 << CHUNK_BITS;

impl Nodes {
    #[inline]
    fn len(&self) -> usize {
        self.len
    }

    fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Appends a node; returns its number.
    #[inline]
    fn push(&mut self, node: Node) -> NodeId {
        if self.len.is_multiple_of(CHUNK) {
            self.chunks.push(Vec::with_capacity(CHUNK));
        }
        if let Some(chunk) = self.chunks.last_mut() {
            chunk.push(node);
        }
        self.len += 1;
        (self.len - 1) as NodeId
    }

    #[inline]
    fn get(&self, id: usize) -> Option<&Node> {
        self.chunks.get(id >> CHUNK_BITS)?.get(id & (CHUNK - 1))
    }

    #[inline]
    fn get_mut(&mut self, id: usize) -> Option<&mut Node> {
        self.chunks
            .get_mut(id >> CHUNK_BITS)?
            .get_mut(id & (CHUNK - 1))
    }

    fn memory_bytes(&self) -> usize {
        self.chunks.len() * CHUNK * std::mem::size_of::<Node>()
            + self.chunks.capacity() * std::mem::size_of::<Vec<Node>>()
    }
}

fn root_code(kind: RootKind) -> u8 {
    ROOT + kind as u8
}

fn root_kind(code: u8) -> RootKind {
    match code - ROOT {
        0 => RootKind::JniGlobal,
        1 => RootKind::SystemClass,
        2 => RootKind::Monitor,
        3 => RootKind::StackLocal,
        4 => RootKind::JniLocal,
        5 => RootKind::Thread,
        _ => RootKind::Other,
    }
}

fn some(node: u32) -> Option<NodeId> {
    (node != NO_NODE).then_some(node)
}

/// The walk's record: a node per object it tagged, with how it was first
/// reached. Nodes `0..classes` are the loaded classes (node = class index),
/// the next `threads` the live threads, then the targets, then whatever the
/// walk reached.
#[derive(Debug, Clone)]
pub struct Graph {
    nodes: Nodes,
    /// The lengths of arrays reached (the holders of elements).
    lengths: FxHashMap<NodeId, i32>,
    classes: u32,
    threads: u32,
}

impl Graph {
    /// A graph of `classes` classes and `threads` threads, none reached yet.
    pub fn new(classes: u32, threads: u32) -> Self {
        let mut nodes = Nodes::default();
        for _ in 0..classes as usize + threads as usize {
            nodes.push(Node::UNREACHED);
        }
        Self {
            nodes,
            lengths: FxHashMap::default(),
            classes,
            threads,
        }
    }

    /// Objects recorded so far, reached or not.
    #[inline]
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// Objects the walk reached.
    pub fn reached(&self) -> usize {
        self.nodes
            .chunks
            .iter()
            .flatten()
            .filter(|n| n.flags & KIND_MASK != UNREACHED)
            .count()
    }

    /// Whether no node exists.
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// The bytes the graph holds.
    pub fn memory_bytes(&self) -> usize {
        self.nodes.memory_bytes()
            + self.lengths.capacity()
                * (std::mem::size_of::<(NodeId, i32)>() + std::mem::size_of::<u64>())
    }

    /// Adds a node for an object not reached yet; `None` beyond
    /// [`MAX_NODES`].
    #[inline]
    pub fn add(&mut self) -> Option<NodeId> {
        (self.nodes.len() < MAX_NODES).then(|| self.nodes.push(Node::UNREACHED))
    }

    /// Marks `id` as a target (a sampled object whose path is wanted).
    pub fn mark_target(&mut self, id: NodeId) {
        if let Some(node) = self.nodes.get_mut(id as usize) {
            node.flags |= TARGET;
        }
    }

    /// Whether `id` is a target.
    #[inline]
    pub fn is_target(&self, id: NodeId) -> bool {
        self.nodes
            .get(id as usize)
            .is_some_and(|n| n.flags & TARGET != 0)
    }

    /// Whether `id` is a class (its node is its class index).
    #[inline]
    pub fn is_class(&self, id: NodeId) -> bool {
        id < self.classes
    }

    /// The thread index of `id`, if it is one of the threads.
    #[inline]
    pub fn thread_index(&self, id: NodeId) -> Option<u32> {
        let index = id.checked_sub(self.classes)?;
        (index < self.threads).then_some(index)
    }

    /// How `id` was first reached.
    pub fn via(&self, id: NodeId) -> Via {
        let Some(node) = self.nodes.get(id as usize) else {
            return Via::Unreached;
        };
        match node.flags & KIND_MASK {
            UNREACHED => Via::Unreached,
            FIELD => Via::Field {
                holder: node.link,
                index: node.index,
            },
            STATIC_FIELD => Via::StaticField {
                class: node.link,
                index: node.index,
            },
            ELEMENT => Via::Element {
                array: node.link,
                index: node.index,
            },
            OTHER => Via::Other { holder: node.link },
            code => Via::Root {
                kind: root_kind(code),
                thread: some(node.link),
            },
        }
    }

    /// Whether `id` was reached.
    #[inline]
    pub fn is_reached(&self, id: NodeId) -> bool {
        self.nodes
            .get(id as usize)
            .is_some_and(|n| n.flags & KIND_MASK != UNREACHED)
    }

    /// The class of `id`, if known.
    #[inline]
    pub fn class_of(&self, id: NodeId) -> Option<NodeId> {
        self.nodes.get(id as usize).and_then(|n| some(n.class))
    }

    /// The references from its root by which `id` was reached.
    #[inline]
    pub fn depth(&self, id: NodeId) -> u16 {
        self.nodes.get(id as usize).map_or(0, |n| n.depth)
    }

    /// Records how `id` was reached (again, for a re-parented node).
    #[inline]
    pub fn reach(&mut self, id: NodeId, via: Via, class: Option<NodeId>, depth: u16) {
        let (code, link, index) = match via {
            Via::Unreached => (UNREACHED, NO_NODE, 0),
            Via::Root { kind, thread } => (root_code(kind), thread.unwrap_or(NO_NODE), 0),
            Via::Field { holder, index } => (FIELD, holder, index),
            Via::StaticField { class, index } => (STATIC_FIELD, class, index),
            Via::Element { array, index } => (ELEMENT, array, index),
            Via::Other { holder } => (OTHER, holder, 0),
        };
        if let Some(node) = self.nodes.get_mut(id as usize) {
            *node = Node {
                link,
                index,
                class: class.unwrap_or(NO_NODE),
                depth,
                flags: (node.flags & !KIND_MASK) | code,
            };
        }
    }

    /// Remembers that the walk follows `id`'s references.
    #[inline]
    fn mark_expanded(&mut self, id: NodeId) {
        if let Some(node) = self.nodes.get_mut(id as usize) {
            node.flags |= EXPANDED;
        }
    }

    #[inline]
    fn is_expanded(&self, id: NodeId) -> bool {
        self.nodes
            .get(id as usize)
            .is_some_and(|n| n.flags & EXPANDED != 0)
    }

    /// Records the length of array `id`.
    #[inline]
    pub fn set_length(&mut self, id: NodeId, length: i32) {
        self.lengths.insert(id, length);
    }

    /// The path from a root to `target`, named through `names`; `None`
    /// if the walk did not reach it.
    pub fn path(&self, target: NodeId, names: &mut impl Names) -> Option<RootPath> {
        let mut links = Vec::new();
        let mut node = target;
        // Parents were reached before their children, so the chain ends; the
        // bound only guards against a corrupt graph.
        for _ in 0..=self.nodes.len() {
            let (holder, reference) = match self.via(node) {
                Via::Unreached => return None,
                Via::Root { kind, thread } => {
                    let name = thread
                        .and_then(|t| self.thread_index(t))
                        .and_then(|t| names.thread_name(t));
                    return Some(RootPath {
                        root: kind.gc_root(name.as_deref()),
                        links,
                    });
                }
                Via::StaticField { class, index } => {
                    links.push(self.link(class, field(names, Some(class), index), names));
                    return Some(RootPath {
                        root: CLASS_ROOT,
                        links,
                    });
                }
                Via::Field { holder, index } => {
                    (holder, field(names, self.class_of(holder), index))
                }
                Via::Element { array, index } => {
                    let length = self.lengths.get(&array).copied().unwrap_or(-1);
                    (array, Reference::Element { length, index })
                }
                Via::Other { holder } => (holder, Reference::Unknown),
            };
            links.push(self.link(holder, reference, names));
            node = holder;
        }
        None
    }

    fn link(&self, holder: NodeId, reference: Reference, names: &mut impl Names) -> Link {
        let holder_class = self
            .class_of(holder)
            .and_then(|class| names.class_signature(class))
            .unwrap_or_else(|| UNKNOWN_CLASS.to_owned());
        let description = if self.is_class(holder) {
            names
                .class_signature(holder)
                .filter(|signature| signature.starts_with('L'))
                .map(|signature| format!("Class Name: {}", external_name(&signature)))
        } else {
            self.thread_index(holder)
                .and_then(|thread| names.thread_name(thread))
                .map(|name| format!("Thread Name: {name}"))
        };
        Link {
            holder_class,
            description,
            holder: holder.into(),
            reference,
        }
    }
}

fn field(names: &mut impl Names, class: Option<NodeId>, index: i32) -> Reference {
    class.and_then(|class| names.field(class, index)).map_or(
        Reference::Unknown,
        |(name, modifiers)| Reference::Field { name, modifiers },
    )
}

/// What a path needs named by the JVM.
pub trait Names {
    /// The signature of class `class` (its node).
    fn class_signature(&mut self, class: NodeId) -> Option<String>;
    /// The name and modifiers of the field JVMTI numbers `index` in class
    /// `class` (see [`field_position`]).
    fn field(&mut self, class: NodeId, index: i32) -> Option<(String, i16)>;
    /// The name of thread `thread` (its index among the threads).
    fn thread_name(&mut self, thread: u32) -> Option<String>;
}

/// Where JVMTI's field `index` is: the class it belongs to, as a position
/// in `chain` (the class and its superclasses, `java.lang.Object` first,
/// by their own field counts), and its position among that class's fields
/// (`GetClassFields` order). JVMTI counts the fields of every interface the
/// class implements (each once, superinterfaces included:
/// `interface_fields`) first, then the chain's. For an interface, the chain
/// is the interface alone and `interface_fields` its superinterfaces'.
pub fn field_position(
    interface_fields: usize,
    chain: &[usize],
    index: i32,
) -> Option<(usize, usize)> {
    let mut at = usize::try_from(index).ok()?.checked_sub(interface_fields)?;
    for (position, &count) in chain.iter().enumerate() {
        if at < count {
            return Some((position, at));
        }
        at -= count;
    }
    None
}

/// An array's name with its length, as the JDK's `jfr print` shows a
/// referrer array: `java.util.HashMap$Node[16]`, `int[3][]`.
fn array_name(signature: &str, length: i32) -> String {
    let name = external_name(signature);
    match name.find("[]") {
        Some(at) if length >= 0 => format!("{}[{length}]{}", &name[..at], &name[at + 2..]),
        _ => name,
    }
}

impl fmt::Display for GcRoot {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}, {}", self.system, self.kind)?;
        if let Some(description) = &self.description {
            write!(f, ", {description}")?;
        }
        Ok(())
    }
}

impl fmt::Display for Link {
    /// As `jfr print` shows a referrer: `value : java.util.HashMap$Node`,
    /// `[1] : java.util.HashMap$Node[16]`, `MAP : java.lang.Class Class
    /// Name: Cache`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.reference {
            Reference::Field { name, .. } => {
                write!(f, "{name} : {}", external_name(&self.holder_class))?
            }
            Reference::Element { length, index } => {
                write!(f, "[{index}] : {}", array_name(&self.holder_class, *length))?
            }
            Reference::Unknown => write!(f, "? : {}", external_name(&self.holder_class))?,
        }
        if let Some(description) = &self.description {
            write!(f, " {description}")?;
        }
        Ok(())
    }
}

impl fmt::Display for RootPath {
    /// The links nearest first, then the root: `value :
    /// java.util.HashMap$Node <- ... <- root: Class Loader Data, <unknown>`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for link in &self.links {
            write!(f, "{link} <- ")?;
        }
        write!(f, "root: {}", self.root)
    }
}

/// The most objects the walk records: 16 bytes each here, and an entry
/// in the JVM's tag map each, about 1.3 GB in all at the limit. Beyond it
/// the walk stops, and targets not reached by then have no path.
pub const MAX_NODES: usize = 1 << 24;

/// A reference as `FollowReferences` reports it to the callback.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Edge {
    /// From a root; `thread_tag` is the tag of the thread of a stack or
    /// JNI local (0 if none or untagged).
    Root {
        /// The kind of root.
        kind: RootKind,
        /// The tag of the root's thread.
        thread_tag: i64,
    },
    /// An instance field.
    Field {
        /// JVMTI's field index.
        index: i32,
    },
    /// A static field (the referrer is a class).
    StaticField {
        /// JVMTI's field index.
        index: i32,
    },
    /// An array element.
    Element {
        /// The element's index.
        index: i32,
    },
    /// Any other reference (class, class loader, superclass, ...).
    Other,
}

/// What the callback answers the walk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Visit {
    /// Do not follow the object's references (now).
    Skip,
    /// Follow them.
    Follow,
    /// End the walk.
    Abort,
}

/// Why a walk ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// It reached everything it was allowed to.
    Finished,
    /// It reached every target.
    AllFound,
    /// The time budget was spent.
    TimeBudget,
    /// [`MAX_NODES`] objects were recorded.
    NodeLimit,
}

impl fmt::Display for Stop {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Finished => "walked all it could reach",
            Self::AllFound => "reached every object",
            Self::TimeBudget => "stopped at the time budget (roots_time)",
            Self::NodeLimit => "stopped at the object limit",
        })
    }
}

/// What the objects of a class hold, for the walk.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ClassKind {
    /// References, all followed.
    #[default]
    Plain,
    /// No references: a primitive array.
    Leaf,
    /// A `java.lang.ref.Reference`: its field `referent` (JVMTI's index in
    /// the class) is not followed.
    Reference {
        /// The referent's field index.
        referent: i32,
    },
}

/// The callback's decisions over one walk, on a [`Graph`] prepared with
/// the classes, threads and targets.
#[derive(Debug)]
pub struct Walker {
    graph: Graph,
    /// Per class node: whether its objects hold no references.
    kinds: Vec<ClassKind>,
    max_depth: u16,
    max_nodes: usize,
    deadline: Instant,
    targets_left: usize,
    calls: u64,
    stop: Option<Stop>,
}

impl Walker {
    /// A walk over `graph` (its targets marked), within `limits` from
    /// `start`; `kinds` says what each class (by node) holds.
    pub fn new(graph: Graph, kinds: Vec<ClassKind>, limits: &RootLimits, start: Instant) -> Self {
        let targets_left = (0..graph.len() as NodeId)
            .filter(|&id| graph.is_target(id))
            .count();
        Self {
            graph,
            kinds,
            max_depth: limits.max_depth.min(u16::MAX as usize) as u16,
            max_nodes: MAX_NODES,
            deadline: start + limits.budget,
            targets_left,
            calls: 0,
            stop: None,
        }
    }

    /// Caps the objects recorded below [`MAX_NODES`] (for tests).
    pub fn set_max_nodes(&mut self, nodes: usize) {
        self.max_nodes = nodes.min(MAX_NODES);
    }

    /// What was recorded.
    pub fn graph(&self) -> &Graph {
        &self.graph
    }

    /// The record, once the walk is over.
    pub fn into_graph(self) -> Graph {
        self.graph
    }

    /// References reported so far.
    pub fn calls(&self) -> u64 {
        self.calls
    }

    /// Why the walk ended ([`Stop::Finished`] if the callback never
    /// stopped it).
    pub fn stop(&self) -> Stop {
        self.stop.unwrap_or(Stop::Finished)
    }

    /// Targets not reached yet.
    pub fn targets_left(&self) -> usize {
        self.targets_left
    }

    /// One reference: `referrer_tag` is the holder's tag (0 for a root),
    /// `tag` the referenced object's (which this may set), `class_tag` its
    /// class's, `length` its length if it is an array (else -1).
    #[inline]
    pub fn reference(
        &mut self,
        edge: Edge,
        referrer_tag: i64,
        tag: &mut i64,
        class_tag: i64,
        length: i32,
    ) -> Visit {
        self.calls += 1;
        if self.calls.is_multiple_of(1024) && Instant::now() >= self.deadline {
            return self.end(Stop::TimeBudget);
        }
        let (via, depth) = match edge {
            Edge::Root { kind, thread_tag } => {
                // A thread root is the thread's own object.
                let thread = match kind {
                    RootKind::Thread => node_of(*tag),
                    _ => node_of(thread_tag),
                };
                let thread = thread.filter(|&t| self.graph.thread_index(t).is_some());
                (Via::Root { kind, thread }, 0)
            }
            _ => {
                let Some(holder) = node_of(referrer_tag) else {
                    return Visit::Skip;
                };
                let depth = self.graph.depth(holder).saturating_add(1);
                match edge {
                    Edge::Field { index } => {
                        let holder_class = self.graph.class_of(holder);
                        if holder_class.map(|c| self.kind(c))
                            == Some(ClassKind::Reference { referent: index })
                        {
                            return Visit::Skip;
                        }
                        (Via::Field { holder, index }, depth)
                    }
                    // A static field's chain ends at its class.
                    Edge::StaticField { index } => (
                        Via::StaticField {
                            class: holder,
                            index,
                        },
                        1,
                    ),
                    Edge::Element { index } => (
                        Via::Element {
                            array: holder,
                            index,
                        },
                        depth,
                    ),
                    _ => (Via::Other { holder }, depth),
                }
            }
        };
        let class = node_of(class_tag).filter(|&c| self.graph.is_class(c));
        let id = match node_of(*tag) {
            Some(id) if self.graph.is_reached(id) => {
                // Reached before: only an object not followed (it was at
                // the depth limit) takes a shorter path, having no
                // children recorded.
                if self.graph.is_expanded(id) || depth >= self.graph.depth(id) {
                    return Visit::Skip;
                }
                id
            }
            Some(id) => id,
            None => {
                if class.is_some_and(|c| self.kind(c) == ClassKind::Leaf) || depth > self.max_depth
                {
                    return Visit::Skip;
                }
                if self.graph.len() >= self.max_nodes {
                    return self.end(Stop::NodeLimit);
                }
                let Some(id) = self.graph.add() else {
                    return self.end(Stop::NodeLimit);
                };
                *tag = tag_of(id);
                id
            }
        };
        let is_class = self.graph.is_class(id);
        if depth > self.max_depth && !is_class {
            return Visit::Skip;
        }
        let first = !self.graph.is_reached(id);
        self.graph.reach(id, via, class, depth);
        if length >= 0 {
            self.graph.set_length(id, length);
        }
        if first && self.graph.is_target(id) {
            self.targets_left = self.targets_left.saturating_sub(1);
            if self.targets_left == 0 {
                return self.end(Stop::AllFound);
            }
        }
        if is_class || depth < self.max_depth {
            self.graph.mark_expanded(id);
            Visit::Follow
        } else {
            Visit::Skip
        }
    }

    #[inline]
    fn kind(&self, class: NodeId) -> ClassKind {
        self.kinds.get(class as usize).copied().unwrap_or_default()
    }

    fn end(&mut self, stop: Stop) -> Visit {
        self.stop = Some(stop);
        Visit::Abort
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Names from tables: classes by node, fields by (class, index).
    #[derive(Default)]
    struct Table {
        classes: FxHashMap<NodeId, &'static str>,
        fields: FxHashMap<(NodeId, i32), (&'static str, i16)>,
        threads: Vec<&'static str>,
    }

    impl Names for Table {
        fn class_signature(&mut self, class: NodeId) -> Option<String> {
            self.classes.get(&class).map(|s| s.to_string())
        }
        fn field(&mut self, class: NodeId, index: i32) -> Option<(String, i16)> {
            self.fields
                .get(&(class, index))
                .map(|&(n, m)| (n.to_owned(), m))
        }
        fn thread_name(&mut self, thread: u32) -> Option<String> {
            self.threads.get(thread as usize).map(|s| s.to_string())
        }
    }

    /// A toy heap and the traversal `FollowReferences` makes of it
    /// (HotSpot's: each root reported, then objects popped off a stack and
    /// each reference they hold reported; an object's references followed
    /// once, when pushed by a reference the callback said to follow).
    struct Heap {
        /// Per object: its class (an object index) and its references.
        objects: Vec<(usize, Vec<(Edge, usize)>)>,
        tags: Vec<i64>,
        lengths: Vec<i32>,
    }

    impl Heap {
        fn new() -> Self {
            Self {
                objects: Vec::new(),
                tags: Vec::new(),
                lengths: Vec::new(),
            }
        }

        fn object(&mut self, class: usize) -> usize {
            self.objects.push((class, Vec::new()));
            self.tags.push(0);
            self.lengths.push(-1);
            self.objects.len() - 1
        }

        fn refer(&mut self, from: usize, edge: Edge, to: usize) {
            self.objects[from].1.push((edge, to));
        }

        /// Walks from `roots` (kind, thread object, object) as HotSpot does.
        fn walk(&mut self, roots: &[(RootKind, Option<usize>, usize)], walker: &mut Walker) {
            let mut stack = Vec::new();
            let mut visited = vec![false; self.objects.len()];
            for &(kind, thread, object) in roots {
                let thread_tag = thread.map_or(0, |t| self.tags[t]);
                let class_tag = self.tags[self.objects[object].0];
                match walker.reference(
                    Edge::Root { kind, thread_tag },
                    0,
                    &mut self.tags[object],
                    class_tag,
                    self.lengths[object],
                ) {
                    Visit::Abort => return,
                    Visit::Follow => stack.push(object),
                    Visit::Skip => {}
                }
            }
            while let Some(object) = stack.pop() {
                if visited[object] {
                    continue;
                }
                visited[object] = true;
                for (edge, to) in self.objects[object].1.clone() {
                    let referrer_tag = self.tags[object];
                    let class_tag = self.tags[self.objects[to].0];
                    let length = self.lengths[to];
                    match walker.reference(
                        edge,
                        referrer_tag,
                        &mut self.tags[to],
                        class_tag,
                        length,
                    ) {
                        Visit::Abort => return,
                        Visit::Follow if !visited[to] => stack.push(to),
                        _ => {}
                    }
                }
            }
        }
    }

    fn limits(max_depth: usize) -> RootLimits {
        RootLimits {
            max_depth,
            budget: Duration::from_secs(3600),
        }
    }

    /// The JVMTI specification's example of field indices: I0 { p },
    /// I1 extends I0 { x }, I2 extends I0 { y }, C1 implements I1 { a, b },
    /// C2 extends C1 implements I2 { q, r }.
    #[test]
    fn field_positions_follow_the_jvmti_specification() {
        // C1: interfaces I1 and I0 hold 2 fields; chain Object (0), C1 (2).
        assert_eq!(field_position(2, &[0, 2], 2), Some((1, 0))); // a
        assert_eq!(field_position(2, &[0, 2], 3), Some((1, 1))); // b
        assert_eq!(field_position(2, &[0, 2], 1), None);
        assert_eq!(field_position(2, &[0, 2], 4), None);
        // C2: I0, I1, I2 hold 3 (p counted once); chain Object, C1, C2.
        assert_eq!(field_position(3, &[0, 2, 2], 3), Some((1, 0))); // a
        assert_eq!(field_position(3, &[0, 2, 2], 4), Some((1, 1))); // b
        assert_eq!(field_position(3, &[0, 2, 2], 5), Some((2, 0))); // q
        assert_eq!(field_position(3, &[0, 2, 2], 6), Some((2, 1))); // r
        // I1: its superinterface I0 holds 1.
        assert_eq!(field_position(1, &[1], 1), Some((0, 0))); // x
        assert_eq!(field_position(1, &[1], -1), None);
    }

    #[test]
    fn names_as_java_and_jfr_print_write_them() {
        assert_eq!(
            array_name("[Ljava/util/HashMap$Node;", 16),
            "java.util.HashMap$Node[16]"
        );
        assert_eq!(array_name("[[I", 3), "int[3][]");
        assert_eq!(node_of(tag_of(0)), Some(0));
        assert_eq!(node_of(tag_of(77)), Some(77));
        assert_eq!(node_of(0), None);
        assert_eq!(node_of(-5), None);
    }

    #[test]
    fn roots_are_named_as_the_jdk_names_them() {
        let root = RootKind::StackLocal.gc_root(Some("worker"));
        assert_eq!(
            (root.system, root.kind, root.description.as_deref()),
            ("Threads", "Stack Variable", Some("Thread Name: worker"))
        );
        let root = RootKind::JniGlobal.gc_root(Some("ignored"));
        assert_eq!(
            (root.system, root.kind, root.description),
            ("JNI Global", "Global JNI Handle", None)
        );
        assert_eq!(RootKind::SystemClass.gc_root(None), CLASS_ROOT);
        assert_eq!(RootKind::JniLocal.gc_root(None).kind, "Local JNI Handle");
        assert_eq!(RootKind::Thread.gc_root(None).system, "Threads");
        assert_eq!(RootKind::Other.gc_root(None).system, "VM Global");
        for kind in [
            RootKind::JniGlobal,
            RootKind::SystemClass,
            RootKind::Monitor,
            RootKind::StackLocal,
            RootKind::JniLocal,
            RootKind::Thread,
            RootKind::Other,
        ] {
            assert_eq!(root_kind(root_code(kind)), kind);
        }
    }

    #[test]
    fn nodes_are_16_bytes_in_chunks() {
        assert_eq!(std::mem::size_of::<Node>(), 16);
        let mut graph = Graph::new(3, 2);
        assert_eq!(graph.len(), 5);
        for expected in 5..(2 * CHUNK + 7) as NodeId {
            assert_eq!(graph.add(), Some(expected));
        }
        for id in [
            0,
            4,
            CHUNK as NodeId - 1,
            CHUNK as NodeId,
            2 * CHUNK as NodeId + 6,
        ] {
            let via = Via::Field {
                holder: id / 2,
                index: id as i32,
            };
            graph.reach(id, via, Some(1), 7);
            assert_eq!(graph.via(id), via);
            assert_eq!((graph.class_of(id), graph.depth(id)), (Some(1), 7));
        }
        assert_eq!(graph.via(2 * CHUNK as NodeId + 7), Via::Unreached);
        assert_eq!(graph.reached(), 5);
        assert_eq!(graph.memory_bytes(), 3 * CHUNK * 16 + 4 * 24);
    }

    /// The classes of the toy heaps, by node.
    const CLASS: usize = 0;
    const CACHE: usize = 1;
    const MAP: usize = 2;
    const NODE_ARRAY: usize = 3;
    const NODE: usize = 4;
    const BYTES: usize = 5;
    const THREAD: usize = 6;
    const SOFT: usize = 7;
    const CLASSES: usize = 8;

    fn table() -> Table {
        let mut table = Table::default();
        for (class, signature) in [
            (CLASS, "Ljava/lang/Class;"),
            (CACHE, "Lcom/example/Cache;"),
            (MAP, "Ljava/util/HashMap;"),
            (NODE_ARRAY, "[Ljava/util/HashMap$Node;"),
            (NODE, "Ljava/util/HashMap$Node;"),
            (BYTES, "[B"),
            (THREAD, "Ljava/lang/Thread;"),
            (SOFT, "Ljava/lang/ref/SoftReference;"),
        ] {
            table.classes.insert(class as NodeId, signature);
        }
        table.fields.insert((CACHE as NodeId, 3), ("ENTRIES", 0x18));
        table.fields.insert((MAP as NodeId, 9), ("table", 0x80));
        table.fields.insert((NODE as NodeId, 2), ("value", 0x00));
        table.fields.insert((NODE as NodeId, 3), ("next", 0x00));
        table.threads = vec!["main", "holder"];
        table
    }

    /// A heap with classes 0..CLASSES (each tagged with its node, as the
    /// walk prepares them) and `threads` thread objects tagged after them.
    fn prepared(threads: usize) -> (Heap, Graph, Vec<usize>) {
        let mut heap = Heap::new();
        for class in 0..CLASSES {
            let object = heap.object(CLASS);
            assert_eq!(object, class);
            heap.tags[class] = tag_of(class as NodeId);
        }
        let mut thread_objects = Vec::new();
        for t in 0..threads {
            let object = heap.object(THREAD);
            heap.tags[object] = tag_of((CLASSES + t) as NodeId);
            thread_objects.push(object);
        }
        (
            heap,
            Graph::new(CLASSES as u32, threads as u32),
            thread_objects,
        )
    }

    fn target(heap: &mut Heap, graph: &mut Graph, object: usize) -> NodeId {
        let id = graph.add().unwrap();
        graph.mark_target(id);
        heap.tags[object] = tag_of(id);
        id
    }

    fn leaves() -> Vec<ClassKind> {
        (0..CLASSES)
            .map(|c| match c {
                BYTES => ClassKind::Leaf,
                SOFT => ClassKind::Reference { referent: 0 },
                _ => ClassKind::Plain,
            })
            .collect()
    }

    /// Cache.ENTRIES (static) -> HashMap -> table -> Node[] -> [1] -> Node
    /// -> value -> byte[] (the target); the Cache class is a system class.
    fn map_heap(heap: &mut Heap) -> (usize, usize) {
        let map = heap.object(MAP);
        let table = heap.object(NODE_ARRAY);
        heap.lengths[table] = 16;
        let node = heap.object(NODE);
        let bytes = heap.object(BYTES);
        heap.lengths[bytes] = 100;
        heap.refer(CACHE, Edge::StaticField { index: 3 }, map);
        heap.refer(map, Edge::Other, MAP);
        heap.refer(map, Edge::Field { index: 9 }, table);
        heap.refer(table, Edge::Element { index: 1 }, node);
        heap.refer(node, Edge::Field { index: 2 }, bytes);
        (node, bytes)
    }

    #[test]
    fn a_static_maps_value_has_the_chain_through_the_map_to_its_class() {
        let (mut heap, mut graph, _) = prepared(0);
        let (_, bytes) = map_heap(&mut heap);
        let id = target(&mut heap, &mut graph, bytes);
        let mut walker = Walker::new(graph, leaves(), &limits(64), Instant::now());
        heap.walk(&[(RootKind::SystemClass, None, CACHE)], &mut walker);
        assert_eq!(walker.stop(), Stop::AllFound);
        let path = walker.graph().path(id, &mut table()).unwrap();
        assert_eq!(path.root, CLASS_ROOT);
        let shown: Vec<String> = path.links.iter().map(Link::to_string).collect();
        assert_eq!(
            shown,
            [
                "value : java.util.HashMap$Node",
                "[1] : java.util.HashMap$Node[16]",
                "table : java.util.HashMap",
                "ENTRIES : java.lang.Class Class Name: com.example.Cache",
            ]
        );
        assert_eq!(
            path.links[3].reference,
            Reference::Field {
                name: "ENTRIES".to_owned(),
                modifiers: 0x18
            }
        );
        assert_eq!(
            path.links[1].reference,
            Reference::Element {
                length: 16,
                index: 1
            }
        );
        assert_eq!(
            path.to_string(),
            "value : java.util.HashMap$Node <- [1] : java.util.HashMap$Node[16] <- \
             table : java.util.HashMap <- ENTRIES : java.lang.Class Class Name: com.example.Cache \
             <- root: Class Loader Data, <unknown>"
        );
    }

    #[test]
    fn a_stack_local_is_its_own_root_with_the_threads_name() {
        let (mut heap, mut graph, threads) = prepared(2);
        let bytes = heap.object(BYTES);
        let id = target(&mut heap, &mut graph, bytes);
        let mut walker = Walker::new(graph, leaves(), &limits(64), Instant::now());
        heap.walk(
            &[
                (RootKind::Thread, None, threads[0]),
                (RootKind::Thread, None, threads[1]),
                (RootKind::StackLocal, Some(threads[1]), bytes),
            ],
            &mut walker,
        );
        let path = walker.graph().path(id, &mut table()).unwrap();
        assert!(path.links.is_empty());
        assert_eq!(
            path.to_string(),
            "root: Threads, Stack Variable, Thread Name: holder"
        );
    }

    #[test]
    fn a_threads_field_names_the_thread() {
        let (mut heap, mut graph, threads) = prepared(2);
        let map = heap.object(MAP);
        heap.refer(threads[1], Edge::Field { index: 9 }, map);
        let id = target(&mut heap, &mut graph, map);
        let mut walker = Walker::new(graph, leaves(), &limits(64), Instant::now());
        heap.walk(&[(RootKind::Thread, None, threads[1])], &mut walker);
        let mut names = table();
        names
            .fields
            .insert((THREAD as NodeId, 9), ("threadLocals", 0));
        let path = walker.graph().path(id, &mut names).unwrap();
        assert_eq!(
            path.to_string(),
            "threadLocals : java.lang.Thread Thread Name: holder \
             <- root: Threads, Global Object Handle, Thread Name: holder"
        );
    }

    /// A chain of `length` nodes from a stack root: node i -> next -> node
    /// i+1; returns the nodes.
    fn list(heap: &mut Heap, length: usize) -> Vec<usize> {
        let nodes: Vec<usize> = (0..length).map(|_| heap.object(NODE)).collect();
        for pair in nodes.windows(2) {
            heap.refer(pair[0], Edge::Field { index: 3 }, pair[1]);
        }
        nodes
    }

    #[test]
    fn objects_beyond_the_depth_limit_have_no_path() {
        let (mut heap, mut graph, _) = prepared(0);
        let nodes = list(&mut heap, 10);
        // Node i is i references from the root.
        let within = target(&mut heap, &mut graph, nodes[4]);
        let beyond = target(&mut heap, &mut graph, nodes[5]);
        let mut walker = Walker::new(graph, leaves(), &limits(4), Instant::now());
        heap.walk(&[(RootKind::JniGlobal, None, nodes[0])], &mut walker);
        assert_eq!(walker.stop(), Stop::Finished);
        assert_eq!(walker.targets_left(), 1);
        let graph = walker.graph();
        assert_eq!(graph.path(within, &mut table()).unwrap().links.len(), 4);
        assert_eq!(graph.path(beyond, &mut table()), None);
        // Nothing past the limit was tagged.
        assert_eq!(heap.tags[nodes[6]], 0);
    }

    #[test]
    fn an_object_stopped_at_the_limit_takes_a_shorter_path_found_later() {
        let (mut heap, mut graph, _) = prepared(0);
        // Root A: a long list whose 3rd node (at the limit) points to X; X
        // -> Y (the target). Root B, walked later: B -> X directly.
        let nodes = list(&mut heap, 3);
        let x = heap.object(NODE);
        let y = heap.object(NODE);
        let b = heap.object(MAP);
        heap.refer(nodes[2], Edge::Field { index: 3 }, x);
        heap.refer(x, Edge::Field { index: 2 }, y);
        heap.refer(b, Edge::Field { index: 9 }, x);
        let id = target(&mut heap, &mut graph, y);
        let mut walker = Walker::new(graph, leaves(), &limits(3), Instant::now());
        // The stack pops the last root first: list the short root first so
        // the long one is walked first.
        heap.walk(
            &[
                (RootKind::JniGlobal, None, b),
                (RootKind::JniGlobal, None, nodes[0]),
            ],
            &mut walker,
        );
        assert_eq!(walker.stop(), Stop::AllFound);
        let path = walker.graph().path(id, &mut table()).unwrap();
        assert_eq!(
            path.to_string(),
            "value : java.util.HashMap$Node <- table : java.util.HashMap \
             <- root: JNI Global, Global JNI Handle"
        );
    }

    #[test]
    fn leaves_are_neither_tagged_nor_followed() {
        let (mut heap, mut graph, _) = prepared(0);
        let (node, bytes) = map_heap(&mut heap);
        let other = heap.object(BYTES);
        heap.refer(node, Edge::Field { index: 3 }, other);
        let id = target(&mut heap, &mut graph, node);
        let mut walker = Walker::new(graph, leaves(), &limits(64), Instant::now());
        heap.walk(&[(RootKind::SystemClass, None, CACHE)], &mut walker);
        assert_eq!(walker.stop(), Stop::AllFound);
        assert!(walker.graph().path(id, &mut table()).is_some());
        assert_eq!((heap.tags[bytes], heap.tags[other]), (0, 0));
    }

    #[test]
    fn a_references_referent_does_not_keep_its_object() {
        let (mut heap, mut graph, _) = prepared(0);
        // Root -> SoftReference -referent-> X; root -> map -> table (field
        // 9) -> X, walked later: X's path is the strong one.
        let soft = heap.object(SOFT);
        let x = heap.object(NODE);
        let map = heap.object(MAP);
        heap.refer(soft, Edge::Field { index: 0 }, x);
        heap.refer(map, Edge::Field { index: 9 }, x);
        let id = target(&mut heap, &mut graph, x);
        let mut walker = Walker::new(graph, leaves(), &limits(64), Instant::now());
        heap.walk(
            &[
                (RootKind::JniGlobal, None, map),
                (RootKind::JniGlobal, None, soft),
            ],
            &mut walker,
        );
        let path = walker.graph().path(id, &mut table()).unwrap();
        assert_eq!(
            path.to_string(),
            "table : java.util.HashMap <- root: JNI Global, Global JNI Handle"
        );
        // Held only by the referent: no path.
        let (mut heap, mut graph, _) = prepared(0);
        let soft = heap.object(SOFT);
        let x = heap.object(NODE);
        heap.refer(soft, Edge::Field { index: 0 }, x);
        let id = target(&mut heap, &mut graph, x);
        let mut walker = Walker::new(graph, leaves(), &limits(64), Instant::now());
        heap.walk(&[(RootKind::JniGlobal, None, soft)], &mut walker);
        assert_eq!(walker.graph().path(id, &mut table()), None);
    }

    #[test]
    fn the_object_limit_stops_the_walk() {
        let (mut heap, mut graph, _) = prepared(0);
        let nodes = list(&mut heap, 10);
        let id = target(&mut heap, &mut graph, nodes[9]);
        let mut walker = Walker::new(graph, leaves(), &limits(64), Instant::now());
        let prepared_nodes = walker.graph().len();
        walker.set_max_nodes(prepared_nodes + 3);
        heap.walk(&[(RootKind::JniGlobal, None, nodes[0])], &mut walker);
        assert_eq!(walker.stop(), Stop::NodeLimit);
        assert_eq!(walker.graph().len(), prepared_nodes + 3);
        assert_eq!(walker.graph().path(id, &mut table()), None);
    }

    #[test]
    fn a_spent_budget_stops_the_walk() {
        let (mut heap, mut graph, _) = prepared(0);
        let nodes = list(&mut heap, 3000);
        let id = target(&mut heap, &mut graph, nodes[2999]);
        let spent = RootLimits {
            max_depth: 4096,
            budget: Duration::ZERO,
        };
        let mut walker = Walker::new(graph, leaves(), &spent, Instant::now());
        heap.walk(&[(RootKind::JniGlobal, None, nodes[0])], &mut walker);
        assert_eq!(walker.stop(), Stop::TimeBudget);
        assert_eq!(walker.calls(), 1024);
        assert_eq!(walker.graph().path(id, &mut table()), None);
    }

    #[test]
    fn cycles_and_shared_objects_keep_the_first_path() {
        let (mut heap, mut graph, _) = prepared(0);
        let nodes = list(&mut heap, 4);
        // A cycle back to the first node, and a second root to the last.
        heap.refer(nodes[3], Edge::Field { index: 3 }, nodes[0]);
        let id = target(&mut heap, &mut graph, nodes[3]);
        let mut walker = Walker::new(graph, leaves(), &limits(64), Instant::now());
        heap.walk(
            &[
                (RootKind::JniGlobal, None, nodes[0]),
                (RootKind::Other, None, nodes[2]),
            ],
            &mut walker,
        );
        // nodes[2] is a root itself (roots come first): one link.
        let path = walker.graph().path(id, &mut table()).unwrap();
        assert_eq!(path.links.len(), 1);
        assert_eq!(path.root.system, "VM Global");
    }

    #[test]
    fn a_target_that_is_a_class_or_thread_keeps_its_node() {
        let (mut heap, mut graph, threads) = prepared(1);
        // The walk reuses the node a class or thread already has.
        let thread_node = node_of(heap.tags[threads[0]]).unwrap();
        graph.mark_target(thread_node);
        let mut walker = Walker::new(graph, leaves(), &limits(64), Instant::now());
        assert_eq!(walker.targets_left(), 1);
        heap.walk(&[(RootKind::Thread, None, threads[0])], &mut walker);
        assert_eq!(walker.stop(), Stop::AllFound);
        let path = walker.graph().path(thread_node, &mut table()).unwrap();
        assert_eq!(path.root.kind, "Global Object Handle");
    }

    #[test]
    fn unknown_classes_and_fields_still_make_a_path() {
        let (mut heap, mut graph, _) = prepared(0);
        let (_, bytes) = map_heap(&mut heap);
        let id = target(&mut heap, &mut graph, bytes);
        let mut walker = Walker::new(graph, leaves(), &limits(64), Instant::now());
        heap.walk(&[(RootKind::SystemClass, None, CACHE)], &mut walker);
        let path = walker.graph().path(id, &mut Table::default()).unwrap();
        assert_eq!(path.links.len(), 4);
        assert_eq!(path.links[0].holder_class, UNKNOWN_CLASS);
        assert_eq!(path.links[0].reference, Reference::Unknown);
        assert_eq!(path.links[3].description, None);
    }
}
