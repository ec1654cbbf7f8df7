//! Constant pools: the values events refer to by key (threads, classes,
//! methods, stack traces, symbols, ...), deduplicated by value.
//!
//! A value is interned once and keeps its key (and the `*Ref` handle the
//! caller holds) for as long as the recording holds it. JFR pools are per
//! chunk, though: every chunk must carry each constant its events use. So an
//! entry remembers the chunk it was last written in; when an event refers to
//! it in a newer chunk it is marked again, together with what it refers to
//! (a stack trace marks its methods, a method its class and symbols, ...),
//! and the next checkpoint writes every marked entry. Nothing is written
//! twice in a chunk, and no pool is written empty.
//!
//! Marking looks the value up. A profiler that keeps a stack trace's ref
//! can keep the receipt of its mark instead ([`Marked`]), and the events of
//! the same chunk then write the key without the look-up, which in a pool
//! of hundreds of thousands of stack traces is a cache miss.
//!
//! Keys start at 1: key 0 is the conventional null, written for a `None`.
//!
//! Values no chunk uses any more can be dropped
//! ([`crate::Recording::drop_unused`]): a recording left running for days
//! sees new stacks, classes and threads without end, and every chunk writes
//! the values its events use anyway. A dropped value interned again gets a
//! new key (keys are never reused); the refs of the values kept stay valid,
//! and a ref to a dropped value names nothing any more.
//!
//! The pooled types are listed once, in the table of `pooled_types!`, from
//! which this module makes the refs, [`PoolRef`], [`PoolSizes`] and the
//! pools; each value's struct ([`Thread`], [`Class`], ...) is declared once
//! with `pooled_value!`, which makes its entry's encoding, what it refers
//! to, and its class's fields, in one order.

use std::borrow::Borrow;
use std::collections::{BTreeMap, HashMap};
use std::hash::{BuildHasher, Hash};
use std::sync::atomic::{AtomicU32, Ordering};

use hashbrown::{HashTable, hash_table};
use rustc_hash::{FxBuildHasher, FxHashSet};

use crate::metadata::{ClassId, FieldDecl, Metadata};
use crate::types::StandardTypes;
use jfr_format::names::field;
use jfr_format::{read_varint, write_string, write_varint, write_varint_i32};

// The lists of pooled types in this module, from the one table
// (`pooled_types!`): the refs, `PoolRef`, `PoolSizes`, the pools, and the
// methods of `Pools` that go through every pool or pick one by ref.
macro_rules! pool_lists {
    ($(
        $group:ident {
            $( $(#[$doc:meta])* $variant:ident($reference:ident) in $pool:ident, $one:ident; )*
        }
    )*) => {
        $($(
            $(#[$doc])*
            ///
            /// Obtained only from a recording's pools. It names its value
            /// until [`crate::Recording::drop_unused`] drops the value, after
            /// which [`crate::Recording::holds`] is false for it and an event
            /// given it fails.
            #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
            pub struct $reference(u32);

            impl $reference {
                /// The key written in the file.
                pub fn key(self) -> u64 {
                    self.0 as u64 + 1
                }
            }

            impl From<$reference> for PoolRef {
                fn from(reference: $reference) -> Self {
                    Self::$variant(reference)
                }
            }
        )*)*

        /// A reference to any pooled value, as an event field holds it.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        #[allow(missing_docs)] // Each variant holds the ref its name says.
        pub enum PoolRef {
            $($( $variant($reference), )*)*
        }

        impl PoolRef {
            /// The key written in the file.
            pub fn key(self) -> u64 {
                match self {
                    $($( Self::$variant(r) => r.key(), )*)*
                }
            }
        }

        /// How many values each pool of a recording holds
        /// ([`crate::Recording::pool_sizes`]).
        #[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
        pub struct PoolSizes {
            $($(
                #[doc = concat!("Values of the `", stringify!($pool), "` pool.")]
                pub $pool: usize,
            )*)*
        }

        impl PoolSizes {
            /// Every pool's values together.
            pub fn total(&self) -> usize {
                0 $($( + self.$pool )*)*
            }
        }

        /// Every pool of a recording.
        #[derive(Debug, Default)]
        pub(crate) struct Pools {
            /// The chunk being built (1, 2, ...); entries marked with it are
            /// in (or pending for) this chunk.
            chunk: u32,
            /// The chunk's stamp ([`next_stamp`]), which its [`Marked`]
            /// receipts hold.
            stamp: u32,
            $($( $pool: Pool<pool_lists!(@held $group $variant)>, )*)*
            /// Reused to encode a stack trace before looking it up.
            stack_trace_scratch: Vec<u8>,
            /// Reused to list a stack trace's distinct methods.
            stack_trace_methods: Vec<u32>,
            /// Reused for the values marking follows.
            referent_scratch: Vec<Referent>,
            frame_types_marked_in: [u32; 5],
            constants: Constants,
        }

        impl Pools {
            $($( pool_lists!(@intern $group $variant $reference $pool $one); )*)*

            /// The chunk `reference`'s value was last marked in (0: never),
            /// or `None` if the pools do not hold it.
            fn marked_in(&self, reference: PoolRef) -> Option<u32> {
                match reference {
                    $($( PoolRef::$variant(r) => self.$pool.marked_in(r.0), )*)*
                }
            }

            /// Marks `reference`'s value for this chunk: whether it was not
            /// marked yet, or `None` if the pools do not hold it. Inlined:
            /// every pooled field of every event comes here.
            #[inline(always)]
            fn try_mark(&mut self, reference: PoolRef) -> Option<bool> {
                let chunk = self.chunk;
                match reference {
                    $($( PoolRef::$variant(r) => self.$pool.try_mark(r.0, chunk), )*)*
                }
            }

            /// Appends what the value of `reference` refers to.
            fn referents(&self, reference: PoolRef, out: &mut Vec<Referent>) {
                match reference {
                    $($( PoolRef::$variant(r) => self.$pool.get(r.0).referents(out), )*)*
                }
            }

            /// Drops from every pool the values not marked in chunk `since`
            /// or later that `pinned` does not hold.
            fn retain(&mut self, since: u32, pinned: impl Fn(PoolRef) -> bool) {
                $($(
                    self.$pool.retain(since, |slot| pinned(PoolRef::$variant($reference(slot))));
                )*)*
            }

            /// Writes every pool's pending values, a section per pool that
            /// has any; returns how many sections were written.
            fn write_pools(&mut self, types: &StandardTypes, out: &mut Vec<u8>) -> u64 {
                let mut sections = 0;
                $($(
                    sections += u64::from(self.$pool.write_pending(types.$one, out));
                )*)*
                sections
            }

            /// How many values each pool holds.
            pub(crate) fn sizes(&self) -> PoolSizes {
                PoolSizes {
                    $($( $pool: self.$pool.len(), )*)*
                }
            }

            fn has_nothing_pending(&self) -> bool {
                $($( self.$pool.pending.is_empty() && )*)* self.constants.pending.is_empty()
            }
        }
    };
    (@held text $variant:ident) => { Box<str> };
    (@held value $variant:ident) => { $variant };
    (@held stack $variant:ident) => { EncodedStackTrace };
    (@intern text $variant:ident $reference:ident $pool:ident $one:ident) => {
        pub(crate) fn $one(&mut self, text: &str) -> $reference {
            $reference(self.$pool.intern(text, |text: &str| text.into()).0)
        }
    };
    (@intern value $variant:ident $reference:ident $pool:ident $one:ident) => {
        pub(crate) fn $one(&mut self, value: $variant) -> $reference {
            $reference(self.$pool.intern(&value, Clone::clone).0)
        }
    };
    // Stack traces are encoded before they are looked up: see
    // `Pools::stack_trace`.
    (@intern stack $variant:ident $reference:ident $pool:ident $one:ident) => {};
}

pooled_types!(pool_lists);

/// Declares a pooled value's struct (one of the table's `value` rows) from
/// one list of fields: the struct; its [`PoolValue`] implementation, which
/// encodes the fields in order and refers to the pooled values they hold;
/// and its class's fields, declared in the same order ([`declare_classes`]).
/// Each field reads `name: Type => NAME, "Label";`, `NAME` its name in the
/// format; the class is labelled after the struct's name.
macro_rules! pooled_value {
    (
        $(#[$attr:meta])*
        pub struct $name:ident: $label:literal {
            $(
                $(#[$field_attr:meta])*
                pub $field:ident: $type:ty => $($field_name:ident)::+, $field_label:literal;
            )*
        }
    ) => {
        $(#[$attr])*
        pub struct $name {
            $(
                $(#[$field_attr])*
                pub $field: $type,
            )*
        }

        impl PoolValue for $name {
            fn encode(&self, out: &mut Vec<u8>) {
                $( PoolField::encode(&self.$field, out); )*
            }

            fn referents(&self, out: &mut Vec<Referent>) {
                $( PoolField::referents(&self.$field, out); )*
            }
        }

        impl $name {
            /// The class's label.
            const LABEL: &str = $label;

            /// The class's fields, in the order [`PoolValue::encode`] writes
            /// them.
            fn fields(types: &StandardTypes) -> Vec<FieldDecl> {
                vec![$( field_decl::<$type>(types, $($field_name)::+, $field_label), )*]
            }
        }
    };
}

pooled_value! {
    /// A `java.lang.Thread`: as JDK 17 declares it.
    #[derive(Debug, Clone, PartialEq, Eq, Hash)]
    pub struct Thread: "Thread" {
        /// The operating system's name for the thread.
        pub os_name: String => field::OS_NAME, "OS Thread Name";
        /// The operating system's thread id. Mission Control tells threads
        /// apart by this alone: give each thread a distinct one.
        pub os_thread_id: i64 => field::OS_THREAD_ID, "OS Thread Id";
        /// The name Java gave the thread (`Thread.getName()`).
        pub java_name: String => field::JAVA_NAME, "Java Thread Name";
        /// The Java thread id (`Thread.getId()`).
        pub java_thread_id: i64 => field::JAVA_THREAD_ID, "Java Thread Id";
        /// The thread's group, if known.
        pub group: Option<ThreadGroupRef> => field::GROUP, "Java Thread Group";
    }
}

pooled_value! {
    /// A `jdk.types.ThreadGroup`.
    #[derive(Debug, Clone, PartialEq, Eq, Hash)]
    pub struct ThreadGroup: "Thread Group" {
        /// The parent group; `None` for the root (`system`).
        pub parent: Option<ThreadGroupRef> => field::PARENT, "Parent";
        /// The group's name.
        pub name: String => field::NAME, "Name";
    }
}

pooled_value! {
    /// A `java.lang.Class`.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
    pub struct Class: "Java Class" {
        /// The class loader that defined the class; `None` for the bootstrap
        /// loader.
        pub class_loader: Option<ClassLoaderRef> => field::CLASS_LOADER, "Class Loader";
        /// The class name in the JVM's internal form: `java/lang/String`,
        /// `[I`. The JDK's tools show it as `java.lang.String`, `int[]`.
        pub name: SymbolRef => field::NAME, "Name";
        /// The class's package.
        pub package: Option<PackageRef> => field::PACKAGE, "Package";
        /// Access modifiers, as `Class.getModifiers()`.
        pub modifiers: i32 => field::MODIFIERS, "Access Modifiers";
        /// Whether the class is hidden (lambda forms and the like).
        pub hidden: bool => field::HIDDEN, "Hidden";
    }
}

pooled_value! {
    /// A `jdk.types.ClassLoader`.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
    pub struct ClassLoader: "Java Class Loader" {
        /// The loader's own class.
        pub class: Option<ClassRef> => field::TYPE, "Type";
        /// The loader's name, if it has one.
        pub name: Option<SymbolRef> => field::NAME, "Name";
    }
}

pooled_value! {
    /// A `jdk.types.Package`.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
    pub struct Package: "Package" {
        /// The package name in internal form: `java/lang`.
        pub name: SymbolRef => field::NAME, "Name";
        /// The package's module.
        pub module: Option<ModuleRef> => field::MODULE, "Module";
        /// Whether the module exports the package.
        pub exported: bool => field::EXPORTED, "Exported";
    }
}

pooled_value! {
    /// A `jdk.types.Module`.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
    pub struct Module: "Module" {
        /// The module name: `java.base`.
        pub name: SymbolRef => field::NAME, "Name";
        /// The module version.
        pub version: Option<SymbolRef> => field::VERSION, "Version";
        /// Where the module was loaded from: `jrt:/java.base`.
        pub location: Option<SymbolRef> => field::LOCATION, "Location";
        /// The module's class loader.
        pub class_loader: Option<ClassLoaderRef> => field::CLASS_LOADER, "Class Loader";
    }
}

pooled_value! {
    /// A `jdk.types.Method`.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
    pub struct Method: "Java Method" {
        /// The declaring class.
        pub class: ClassRef => field::TYPE, "Type";
        /// The method name: `<init>`, `toString`.
        pub name: SymbolRef => field::NAME, "Name";
        /// The JVM descriptor: `(ILjava/lang/String;)V`. The JDK's tools show
        /// parameter types from it.
        pub descriptor: SymbolRef => field::DESCRIPTOR, "Descriptor";
        /// Access modifiers, as `Method.getModifiers()`.
        pub modifiers: i32 => field::MODIFIERS, "Access Modifiers";
        /// Whether the method is hidden.
        pub hidden: bool => field::HIDDEN, "Hidden";
    }
}

/// How a frame was executing: the `jdk.types.FrameType` pool.
///
/// Two kinds of reader look at a frame type differently. The JDK's tools
/// and Mission Control show the description pooled under the frame's key,
/// whatever the key. async-profiler's converter (`one.jfr.JfrReader`) keeps
/// only the raw key and gives it its own meaning (`one.convert.Frame`:
/// 0 interpreted, 1 JIT compiled, 2 inlined, 3 native, 4 C++, 5 kernel,
/// 6 C1 compiled); for keys 4 and 5 it drops the class from the frame's
/// name, and if the pool defines key 5 it takes the file for one of its own
/// and reads key 3 as a C function too (`JfrConverter.isNativeFrame`).
///
/// So the four types the JDK writes keep HotSpot's keys (0 Interpreted,
/// 1 JIT compiled, 2 Inlined, 3 Native: `JfrStackFrame`'s numbering), which
/// both readers read alike. [`FrameType::Unknown`] has no key of its own in
/// async-profiler's numbering: it gets key 6, the one key left that
/// async-profiler reads as a Java frame (class and method kept), which it
/// counts as compiled; the JDK's tools show "Unknown". Keys 4 and 5 are
/// never written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FrameType {
    /// Running in the interpreter.
    Interpreted,
    /// Running compiled code.
    JitCompiled,
    /// Inlined into a compiled caller.
    Inlined,
    /// A native method.
    Native,
    /// Not known: what a sampler that cannot see how a frame runs (JVMTI's
    /// `GetStackTrace`) should say. Mission Control recognises it.
    Unknown,
}

impl FrameType {
    /// Every frame type.
    pub const ALL: [FrameType; 5] = [
        Self::Interpreted,
        Self::JitCompiled,
        Self::Inlined,
        Self::Native,
        Self::Unknown,
    ];

    /// The description the JDK writes, which Mission Control recognises.
    pub fn description(self) -> &'static str {
        match self {
            Self::Interpreted => "Interpreted",
            Self::JitCompiled => "JIT compiled",
            Self::Inlined => "Inlined",
            Self::Native => "Native",
            Self::Unknown => "Unknown",
        }
    }

    /// The key the frame type is pooled under (see the type's
    /// documentation for why these). Key 0 is a value here, as in HotSpot's
    /// recordings, not the null reference.
    pub fn key(self) -> u64 {
        match self {
            Self::Interpreted => 0,
            Self::JitCompiled => 1,
            Self::Inlined => 2,
            Self::Native => 3,
            Self::Unknown => 6,
        }
    }

    /// The position in [`FrameType::ALL`].
    fn index(self) -> usize {
        self as usize
    }
}

/// One frame of a stack trace, as `jdk.types.StackFrame` lays it out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct StackFrame {
    /// The method.
    pub method: MethodRef,
    /// The source line, or -1 when unknown (the JDK's tools then omit it).
    pub line_number: i32,
    /// The bytecode index in the method.
    pub bytecode_index: i32,
    /// How the frame was executing.
    pub frame_type: FrameType,
}

/// A `jdk.types.StackTrace`: frames from the top (the allocating method) down.
/// The default is empty and not truncated.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct StackTrace {
    /// Whether frames below the last one were left out.
    pub truncated: bool,
    /// The frames, top first.
    pub frames: Vec<StackFrame>,
}

/// A value a pool holds: how a checkpoint encodes its entry, and what it
/// refers to: the one definition of the pools' reference graph, which
/// marking and dropping follow.
trait PoolValue {
    /// Appends the entry's fields (after its key), in the order its class
    /// declares them ([`crate::types`]).
    fn encode(&self, out: &mut Vec<u8>);

    /// Appends the pooled values (and frame types) it refers to.
    fn referents(&self, out: &mut Vec<Referent>);
}

/// A field of a pooled value's struct ([`pooled_value!`]): its class in
/// the metadata, its encoding, and what it refers to.
trait PoolField {
    /// The field's class, and whether the field holds a key of its pool.
    fn class(types: &StandardTypes) -> (ClassId, bool);

    /// Appends the field's value.
    fn encode(&self, out: &mut Vec<u8>);

    /// Appends the pooled value it refers to, if any.
    fn referents(&self, _: &mut Vec<Referent>) {}
}

/// The declaration of a field of type `F` named `name`, labelled `label`.
fn field_decl<F: PoolField>(types: &StandardTypes, name: &str, label: &str) -> FieldDecl {
    let (class, constant_pool) = F::class(types);
    labelled(types, name, class, constant_pool, label)
}

/// The declaration of a field of `class` named `name`, labelled `label`.
fn labelled(
    types: &StandardTypes,
    name: &str,
    class: ClassId,
    constant_pool: bool,
    label: &str,
) -> FieldDecl {
    FieldDecl {
        name: name.to_owned(),
        class,
        constant_pool,
        array: false,
        annotations: vec![types.label(label)],
    }
}

impl PoolField for String {
    fn class(types: &StandardTypes) -> (ClassId, bool) {
        (types.string, false)
    }

    fn encode(&self, out: &mut Vec<u8>) {
        write_string(out, Some(self));
    }
}

impl PoolField for i64 {
    fn class(types: &StandardTypes) -> (ClassId, bool) {
        (types.long, false)
    }

    fn encode(&self, out: &mut Vec<u8>) {
        write_varint(out, *self as u64);
    }
}

impl PoolField for i32 {
    fn class(types: &StandardTypes) -> (ClassId, bool) {
        (types.int, false)
    }

    fn encode(&self, out: &mut Vec<u8>) {
        write_varint_i32(out, *self);
    }
}

impl PoolField for bool {
    fn class(types: &StandardTypes) -> (ClassId, bool) {
        (types.boolean, false)
    }

    fn encode(&self, out: &mut Vec<u8>) {
        out.push(*self as u8);
    }
}

// A ref, and an optional one (0 for null), of each pooled type as a field
// of a pooled value, from the one table (`pooled_types!`).
macro_rules! pool_fields {
    ($(
        $group:ident {
            $( $(#[$doc:meta])* $variant:ident($reference:ident) in $pool:ident, $one:ident; )*
        }
    )*) => {
        $($(
            impl PoolField for $reference {
                fn class(types: &StandardTypes) -> (ClassId, bool) {
                    (types.$one, true)
                }

                fn encode(&self, out: &mut Vec<u8>) {
                    write_varint(out, self.key());
                }

                fn referents(&self, out: &mut Vec<Referent>) {
                    out.push(Referent::Pooled(PoolRef::$variant(*self)));
                }
            }

            impl PoolField for Option<$reference> {
                fn class(types: &StandardTypes) -> (ClassId, bool) {
                    (types.$one, true)
                }

                fn encode(&self, out: &mut Vec<u8>) {
                    write_varint(out, self.map_or(0, $reference::key));
                }

                fn referents(&self, out: &mut Vec<Referent>) {
                    out.extend(self.map(|r| Referent::Pooled(PoolRef::$variant(r))));
                }
            }
        )*)*
    };
}

pooled_types!(pool_fields);

impl PoolValue for Box<str> {
    fn encode(&self, out: &mut Vec<u8>) {
        write_string(out, Some(self));
    }

    fn referents(&self, _: &mut Vec<Referent>) {}
}

impl PoolValue for EncodedStackTrace {
    fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(EncodedStackTrace::split(&self.0).1);
    }

    fn referents(&self, out: &mut Vec<Referent>) {
        let (head, _) = EncodedStackTrace::split(&self.0);
        out.extend(head.methods().map(|m| Referent::Pooled(PoolRef::Method(m))));
        out.extend(head.frame_types().map(Referent::FrameType));
    }
}

/// Declares the classes of the pools, whose ids `types` holds: the fields of
/// each value's class, in the order its entries are encoded.
pub(crate) fn declare_classes(metadata: &mut Metadata, types: &StandardTypes) {
    let t = types;
    let mut fill = |id: ClassId, simple: bool, label: Option<&str>, fields: Vec<FieldDecl>| {
        let class = metadata.class_mut(id);
        class.simple_type = simple;
        class.fields = fields;
        class.annotations = label.map(|text| t.label(text)).into_iter().collect();
    };
    macro_rules! value_classes {
        (
            text { $($text:tt)* }
            value { $( $(#[$doc:meta])* $variant:ident($reference:ident) in $pool:ident, $one:ident; )* }
            stack { $($stack:tt)* }
        ) => {
            $( fill(t.$one, false, Some($variant::LABEL), $variant::fields(t)); )*
        };
    }
    pooled_types!(value_classes);
    // Stack traces are encoded as a whole (`EncodedStackTrace`), frame types
    // as a fixed set, symbols as strings.
    fill(
        t.stack_trace,
        false,
        Some("Stacktrace"),
        vec![
            field_decl::<bool>(t, field::TRUNCATED, "Truncated"),
            FieldDecl {
                array: true,
                ..labelled(t, field::FRAMES, t.stack_frame, false, "Stack Frames")
            },
        ],
    );
    fill(
        t.stack_frame,
        false,
        None,
        vec![
            field_decl::<MethodRef>(t, field::METHOD, "Java Method"),
            field_decl::<i32>(t, field::LINE_NUMBER, "Line Number"),
            field_decl::<i32>(t, field::BYTECODE_INDEX, "Bytecode Index"),
            labelled(t, field::TYPE, t.frame_type, true, "Frame Type"),
        ],
    );
    fill(
        t.frame_type,
        true,
        Some("Frame type"),
        vec![field_decl::<String>(t, field::DESCRIPTION, "Description")],
    );
    fill(
        t.symbol,
        true,
        Some("Symbol"),
        vec![field_decl::<String>(t, field::STRING, "String")],
    );
}

/// One pool: each value under its slot (its key - 1), an index to find a
/// value's slot, and which values are to be written in the chunk being
/// built.
///
/// A dropped value's slot is never given to another value: the JDK's parser
/// takes a key it saw in the previous chunk to mean the same value there
/// (it reuses what it resolved, without reading the new one), so a key must
/// keep its meaning for the whole recording.
#[derive(Debug)]
struct Pool<V> {
    entries: Slots<V>,
    /// The slots held, found by their value's hash. Hashed with Fx: the
    /// values come from the program, not from an adversary, and SipHash was
    /// a tenth of a busy writer's time.
    index: HashTable<Indexed>,
    /// Values marked in this chunk and not yet written.
    pending: Vec<u32>,
}

/// A slot in a pool's index, with its value's hash: the index grows (and
/// shrinks after a drop) without reading every value again, which in a
/// large pool of stack traces cost a cache miss or two per value.
#[derive(Debug, Clone, Copy)]
struct Indexed {
    hash: u64,
    slot: u32,
}

#[derive(Debug)]
struct Entry<V> {
    value: V,
    /// The chunk the value was last marked in (0: never).
    marked_in: u32,
}

impl<V> Default for Pool<V> {
    fn default() -> Self {
        Self {
            entries: Slots::default(),
            index: HashTable::new(),
            pending: Vec::new(),
        }
    }
}

/// A pool's entries by slot. Slots are handed out in order and never
/// reused, so the entries made since the last compaction sit in vectors,
/// at `slot - base`: one memory access reaches one, where a hash map takes
/// two, and on recursive code a miss per frame is the writer's largest
/// cost. The chunks values were last marked in sit apart from the values,
/// four bytes a slot: every pooled field of every event marks its value,
/// and a dense vector of marks stays in cache where the values do not. A
/// drop leaves a hole; once holes are the most of the vectors, the entries
/// held before their longest tail that is still half held move to a map,
/// so that memory follows the entries held, while the newest entries, and
/// all of them after a drop that keeps most (a program whose stacks
/// repeat), stay where they are fastest to reach.
#[derive(Debug)]
struct Slots<V> {
    /// The values of slots `base..`, in order; `None` where dropped.
    recent: Vec<Option<V>>,
    /// The chunk each of `recent` was last marked in (0: never), [`HOLE`]
    /// where dropped.
    recent_marks: Vec<u32>,
    /// The slot of `recent[0]`.
    base: u32,
    /// How many of `recent` are held.
    recent_held: usize,
    /// The entries moved out of `recent` at compactions, by slot (all
    /// below `base`).
    kept: HashMap<u32, Entry<V>, FxBuildHasher>,
}

/// The mark of a dropped slot in [`Slots::recent_marks`]: no chunk has
/// that number (a chunk takes at least a flush).
const HOLE: u32 = u32::MAX;

impl<V> Default for Slots<V> {
    fn default() -> Self {
        Self {
            recent: Vec::new(),
            recent_marks: Vec::new(),
            base: 0,
            recent_held: 0,
            kept: HashMap::default(),
        }
    }
}

impl<V> Slots<V> {
    #[inline]
    fn value(&self, slot: u32) -> Option<&V> {
        match slot.checked_sub(self.base) {
            Some(at) => self.recent.get(at as usize)?.as_ref(),
            None => self.kept.get(&slot).map(|entry| &entry.value),
        }
    }

    /// The chunk the value in `slot` was last marked in, or `None` if the
    /// slot is not held.
    fn marked_in(&self, slot: u32) -> Option<u32> {
        match slot.checked_sub(self.base) {
            Some(at) => self
                .recent_marks
                .get(at as usize)
                .copied()
                .filter(|&mark| mark != HOLE),
            None => self.kept.get(&slot).map(|entry| entry.marked_in),
        }
    }

    /// The chunk the value in `slot` was last marked in, to read or set;
    /// `None` if the slot is not held. Touches no value.
    #[inline]
    fn mark(&mut self, slot: u32) -> Option<&mut u32> {
        match slot.checked_sub(self.base) {
            Some(at) => self
                .recent_marks
                .get_mut(at as usize)
                .filter(|mark| **mark != HOLE),
            None => self.kept.get_mut(&slot).map(|entry| &mut entry.marked_in),
        }
    }

    /// Adds a value, never marked, under the next slot, and returns that
    /// slot.
    fn push(&mut self, value: V) -> u32 {
        // Every value is written at least once, in at least 3 bytes: a
        // recording would need 12 GB of one type's constants first.
        // `u32::MAX` is never a slot: stack trace encoding takes it for none.
        let slot = u32::try_from(self.recent.len())
            .ok()
            .and_then(|len| self.base.checked_add(len))
            .filter(|&slot| slot != u32::MAX)
            .expect("fewer than 2^32 - 1 values of one type in a recording");
        self.recent.push(Some(value));
        self.recent_marks.push(0);
        self.recent_held += 1;
        slot
    }

    fn len(&self) -> usize {
        self.recent_held + self.kept.len()
    }

    /// Keeps the entries for which `keep(slot, marked_in)` is true and
    /// hands the others' values to `dropped`. Their slots are not given out
    /// again.
    fn retain(&mut self, mut keep: impl FnMut(u32, u32) -> bool, mut dropped: impl FnMut(u32, &V)) {
        self.kept.retain(|&slot, entry| {
            let kept = keep(slot, entry.marked_in);
            if !kept {
                dropped(slot, &entry.value);
            }
            kept
        });
        let places = self.recent.iter_mut().zip(self.recent_marks.iter_mut());
        for (slot, (place, mark)) in (self.base..).zip(places) {
            if *mark != HOLE && !keep(slot, *mark) {
                let value = place.take().expect("a slot not marked a hole is held");
                dropped(slot, &value);
                *mark = HOLE;
                self.recent_held -= 1;
            }
        }
        if self.recent_held * 2 < self.recent.len() {
            // The longest tail still at least half held stays; what is held
            // before it moves to the map. Values mostly die in the order
            // they came, so the tail is the newest chunk's values, marked
            // again soon, and the map gets the few long-lived ones.
            let mut cut = self.recent.len();
            let mut tail_held = 0;
            let mut held_after_cut = 0;
            for (at, mark) in self.recent_marks.iter().enumerate().rev() {
                tail_held += usize::from(*mark != HOLE);
                if tail_held * 2 >= self.recent.len() - at {
                    cut = at;
                    held_after_cut = tail_held;
                }
            }
            let base = self.base;
            let places = self.recent.drain(..cut).zip(self.recent_marks.drain(..cut));
            for (slot, (value, marked_in)) in (base..).zip(places) {
                if let Some(value) = value {
                    self.kept.insert(slot, Entry { value, marked_in });
                }
            }
            self.base = base + cut as u32;
            self.recent_held = held_after_cut;
            if self.recent.capacity() > 4 * self.recent.len() {
                self.recent.shrink_to(self.recent.capacity() / 4);
                self.recent_marks
                    .shrink_to(self.recent_marks.capacity() / 4);
            }
        }
        // Give the memory back after a large drop.
        if self.kept.capacity() > 64 && self.kept.len() < self.kept.capacity() / 4 {
            self.kept.shrink_to(self.kept.len() * 2);
        }
    }
}

fn hash<Q: Hash + ?Sized>(value: &Q) -> u64 {
    FxBuildHasher.hash_one(value)
}

impl<V: Hash + Eq> Pool<V> {
    /// The slot holding `value`, and whether it is new: if the pool does
    /// not hold it, `own(value)` is added under a new slot. One hash and one
    /// probe of the index either way.
    fn intern<Q>(&mut self, value: &Q, own: impl FnOnce(&Q) -> V) -> (u32, bool)
    where
        V: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        let hash = hash(value);
        let entries = &self.entries;
        let found = self.index.entry(
            hash,
            |indexed| {
                indexed.hash == hash
                    && entries
                        .value(indexed.slot)
                        .is_some_and(|held| held.borrow() == value)
            },
            |indexed| indexed.hash,
        );
        match found {
            hash_table::Entry::Occupied(held) => (held.get().slot, false),
            hash_table::Entry::Vacant(place) => {
                let slot = self.entries.push(own(value));
                place.insert(Indexed { hash, slot });
                (slot, true)
            }
        }
    }

    /// Adds `value` under a new slot, not indexed: [`Pool::intern`] never
    /// finds it.
    fn add(&mut self, value: V) -> u32 {
        self.entries.push(value)
    }

    /// Drops every value not marked in chunk `since` or later for which
    /// `keep` is false.
    fn retain(&mut self, since: u32, mut keep: impl FnMut(u32) -> bool) {
        let index = &mut self.index;
        self.entries.retain(
            |slot, marked_in| marked_in >= since || keep(slot),
            |slot, value| {
                // An empty index (a pool only added to) has nothing to find.
                if index.is_empty() {
                    return;
                }
                if let Ok(found) = index.find_entry(hash(value), |i| i.slot == slot) {
                    found.remove();
                }
            },
        );
        // Give the memory back after a large drop.
        let held = self.entries.len();
        if self.index.capacity() > 64 && held < self.index.capacity() / 4 {
            self.index.shrink_to(held * 2, |indexed| indexed.hash);
        }
    }

    /// How many values are held.
    fn len(&self) -> usize {
        self.entries.len()
    }

    /// The chunk the value in `slot` was last marked in (0: never), or
    /// `None` if the pool does not hold it.
    fn marked_in(&self, slot: u32) -> Option<u32> {
        self.entries.marked_in(slot)
    }

    /// Marks a value for this chunk: whether it was not marked yet, or
    /// `None` if the pool does not hold it (one look-up for both).
    #[inline]
    fn try_mark(&mut self, index: u32, chunk: u32) -> Option<bool> {
        let mark = self.entries.mark(index)?;
        if *mark == chunk {
            return Some(false);
        }
        *mark = chunk;
        self.pending.push(index);
        Some(true)
    }

    fn get(&self, index: u32) -> &V {
        self.entries
            .value(index)
            .expect("a value in use is never dropped")
    }

    /// Writes the pending values as one pool section (class id, count,
    /// key-value pairs), unless there are none: never an empty pool.
    fn write_pending(&mut self, class: ClassId, out: &mut Vec<u8>) -> bool
    where
        V: PoolValue,
    {
        if self.pending.is_empty() {
            return false;
        }
        write_varint(out, class.get());
        write_varint(out, self.pending.len() as u64);
        for &index in &self.pending {
            write_varint(out, index as u64 + 1);
            self.get(index).encode(out);
        }
        self.pending.clear();
        true
    }
}

/// What a pooled value refers to ([`PoolValue::referents`]).
#[derive(Debug, Clone, Copy)]
enum Referent {
    Pooled(PoolRef),
    /// Frame types are written with the stack traces that use them.
    FrameType(FrameType),
}

/// A constant of a value type that fields hold by key
/// ([`crate::FieldType::Constant`]), made with [`crate::Recording::constant`].
///
/// Unlike the standard pools' values, a constant lives for one chunk: it is
/// written in the chunk it was made in and forgotten when the chunk ends.
/// Such values (an old object and its referrers, a collector's name) are
/// written where they are made, so nothing is kept for later chunks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ConstantRef {
    pub(crate) class: ClassId,
    pub(crate) key: u64,
    pub(crate) chunk: u32,
    pub(crate) recording: u64,
}

impl ConstantRef {
    /// The key written in the file.
    pub fn key(self) -> u64 {
        self.key
    }
}

/// The constants of the chunk being built: each distinct value once per
/// chunk, under a key never used before in the recording.
#[derive(Debug, Default)]
struct Constants {
    /// The chunk `by_value` holds the constants of.
    chunk: u32,
    /// (class, encoded value) -> key, for this chunk.
    by_value: HashMap<(ClassId, Box<[u8]>), u64>,
    /// Per class, the entries not yet written: count and key-value bytes.
    pending: BTreeMap<ClassId, (u64, Vec<u8>)>,
    last_key: u64,
}

/// A stack trace kept as what it refers to, then its pool entry's encoding.
///
/// The head: the number of distinct methods, their slots (varints, in the
/// order they first appear, or ascending in a stack deeper than
/// [`SEEN_PLACES`] frames), and a byte with a bit per frame type used
/// ([`FrameType::index`]). The entry: the truncated flag, the frame count,
/// then per frame the method key, line, bytecode index and frame type key
/// ([`FrameType::key`]), all varints. A stack trace used again in a later
/// chunk is marked from its head, a few bytes, where following its frames
/// would decode four varints a frame; a checkpoint writes the entry by
/// copying. A recording keeps the distinct stacks it sees until they are
/// dropped, and profiles of recursive code see tens of thousands: this
/// takes about a third of the memory of [`StackTrace`]'s frames.
#[derive(Debug, PartialEq, Eq, Hash)]
struct EncodedStackTrace(Box<[u8]>);

/// Lets a pool find an encoded stack trace by its bytes (hashed alike).
impl Borrow<[u8]> for EncodedStackTrace {
    fn borrow(&self) -> &[u8] {
        &self.0
    }
}

/// The places [`EncodedStackTrace::encode`] finds a stack's methods in
/// when it has at most this many frames: the agent's and JFR's default
/// depth limit.
const SEEN_PLACES: usize = 64;

/// [`EncodedStackTrace`]'s head, read.
struct StackTraceHead<'a> {
    /// The distinct methods' slots, as varints.
    methods: &'a [u8],
    /// A bit per frame type used.
    frame_types: u8,
}

impl EncodedStackTrace {
    /// Encodes `trace` into `out`; `methods` is scratch space.
    fn encode(trace: &StackTrace, methods: &mut Vec<u32>, out: &mut Vec<u8>) {
        methods.clear();
        let mut frame_types = 0u8;
        for frame in &trace.frames {
            frame_types |= 1 << frame.frame_type.index();
        }
        if trace.frames.len() <= SEEN_PLACES {
            // Recursion repeats a few methods for many frames. Each place
            // holds a method seen, the one whose slot's low bits name it
            // (`u32::MAX`, a slot no value gets, when none has): a frame's
            // method is found seen in one look, or, when two of the
            // stack's methods share a place, by a scan of the few seen.
            let mut seen = [u32::MAX; SEEN_PLACES];
            for frame in &trace.frames {
                let method = frame.method.0;
                let place = &mut seen[method as usize % SEEN_PLACES];
                if *place != method {
                    if *place == u32::MAX {
                        *place = method;
                        methods.push(method);
                    } else if !methods.contains(&method) {
                        methods.push(method);
                    }
                }
            }
        } else {
            // Deeper than the default limit: sorting bounds the work where
            // scans of hundreds of methods would not.
            for frame in &trace.frames {
                if methods.last() != Some(&frame.method.0) {
                    methods.push(frame.method.0);
                }
            }
            methods.sort_unstable();
            methods.dedup();
        }
        write_varint(out, methods.len() as u64);
        for &method in methods.iter() {
            write_varint(out, method.into());
        }
        out.push(frame_types);
        out.push(trace.truncated as u8);
        write_varint(out, trace.frames.len() as u64);
        for frame in &trace.frames {
            write_varint(out, frame.method.key());
            write_varint_i32(out, frame.line_number);
            write_varint_i32(out, frame.bytecode_index);
            write_varint(out, frame.frame_type.key());
        }
    }

    /// The head and the pool entry after it.
    fn split(encoded: &[u8]) -> (StackTraceHead<'_>, &[u8]) {
        // Only `encode` wrote these bytes.
        let varint = |at: usize| read_varint(&encoded[at..]).expect("an encoded stack trace");
        let (count, mut at) = varint(0);
        let start = at;
        for _ in 0..count {
            at += varint(at).1;
        }
        let head = StackTraceHead {
            methods: &encoded[start..at],
            frame_types: encoded[at],
        };
        (head, &encoded[at + 1..])
    }
}

impl StackTraceHead<'_> {
    fn methods(&self) -> impl Iterator<Item = MethodRef> + '_ {
        let mut rest = self.methods;
        std::iter::from_fn(move || {
            let (slot, len) = read_varint(rest).ok()?;
            rest = &rest[len..];
            Some(MethodRef(slot as u32))
        })
    }

    fn frame_types(&self) -> impl Iterator<Item = FrameType> + '_ {
        FrameType::ALL
            .into_iter()
            .filter(|t| self.frame_types & (1 << t.index()) != 0)
    }
}

impl Pools {
    pub(crate) fn new() -> Self {
        Self {
            chunk: 1,
            stamp: next_stamp(),
            ..Self::default()
        }
    }

    /// Starts a new chunk: everything must be marked (and written) again.
    pub(crate) fn start_chunk(&mut self) {
        self.chunk += 1;
        self.stamp = next_stamp();
        // Constants live for their chunk.
        self.constants.by_value = HashMap::new();
        debug_assert!(
            self.has_nothing_pending(),
            "a chunk ended with unwritten constants"
        );
    }

    /// The key of the constant of `class` whose fields encode as `encoded`,
    /// in this chunk; pending for the next checkpoint if it is new.
    pub(crate) fn constant(&mut self, class: ClassId, encoded: &[u8]) -> (u64, u32) {
        let constants = &mut self.constants;
        if constants.chunk != self.chunk {
            constants.chunk = self.chunk;
            constants.by_value.clear();
        }
        if let Some(&key) = constants.by_value.get(&(class, Box::from(encoded))) {
            return (key, self.chunk);
        }
        constants.last_key += 1;
        let key = constants.last_key;
        constants.by_value.insert((class, Box::from(encoded)), key);
        let (count, bytes) = constants.pending.entry(class).or_default();
        *count += 1;
        write_varint(bytes, key);
        bytes.extend_from_slice(encoded);
        (key, self.chunk)
    }

    /// Whether `constant` was made in the chunk being built.
    pub(crate) fn is_current(&self, constant: ConstantRef) -> bool {
        constant.chunk == self.chunk
    }

    /// Marks a stack trace for this chunk, with a receipt; `None` if the
    /// pools do not hold it.
    pub(crate) fn mark_stack_trace(
        &mut self,
        reference: StackTraceRef,
    ) -> Option<Marked<StackTraceRef>> {
        self.mark(PoolRef::StackTrace(reference)).then_some(Marked {
            reference,
            stamp: self.stamp,
        })
    }

    /// Whether `marked` was marked in the chunk being built: its value is
    /// held, marked and written in this chunk.
    #[inline]
    pub(crate) fn is_marked<R>(&self, marked: Marked<R>) -> bool {
        marked.stamp != NO_STAMP && marked.stamp == self.stamp
    }

    /// Interns a stack trace, and marks it for this chunk if it is new: a
    /// new stack trace is interned for an event about to use it.
    pub(crate) fn stack_trace(&mut self, value: &StackTrace) -> StackTraceRef {
        self.put_stack_trace(value, true)
    }

    /// Adds a stack trace under a new slot, unindexed, and marks it for
    /// this chunk. See [`crate::Recording::add_stack_trace`].
    pub(crate) fn add_stack_trace(&mut self, value: &StackTrace) -> Marked<StackTraceRef> {
        Marked {
            reference: self.put_stack_trace(value, false),
            stamp: self.stamp,
        }
    }

    /// Interns (`indexed`) or adds a stack trace, marking it if it is new.
    fn put_stack_trace(&mut self, value: &StackTrace, indexed: bool) -> StackTraceRef {
        let mut encoded = std::mem::take(&mut self.stack_trace_scratch);
        encoded.clear();
        EncodedStackTrace::encode(value, &mut self.stack_trace_methods, &mut encoded);
        let (slot, new) = if indexed {
            self.stack_traces
                .intern(encoded.as_slice(), |encoded: &[u8]| {
                    EncodedStackTrace(encoded.into())
                })
        } else {
            (
                self.stack_traces
                    .add(EncodedStackTrace(encoded.as_slice().into())),
                true,
            )
        };
        let reference = StackTraceRef(slot);
        if new {
            self.mark(PoolRef::StackTrace(reference));
        }
        self.stack_trace_scratch = encoded;
        reference
    }

    /// Drops every value not marked in the chunk being built or the one
    /// before it, unless `pinned` holds it or refers to it (through any
    /// chain of values). See [`crate::Recording::drop_unused`].
    pub(crate) fn drop_unused(&mut self, pinned: impl IntoIterator<Item = PoolRef>) {
        // A value marked in a chunk has what it refers to marked in that
        // chunk too, so only the pinned values not marked lately need their
        // references followed.
        let since = self.chunk.saturating_sub(1).max(1);
        let mut pinned_old: FxHashSet<PoolRef> = FxHashSet::default();
        let mut work: Vec<Referent> = pinned.into_iter().map(Referent::Pooled).collect();
        let mut referents = Vec::new();
        while let Some(next) = work.pop() {
            match next {
                Referent::Pooled(reference) => {
                    let marked_in = self.marked_in(reference);
                    // Not held (dropped before, or from another
                    // recording), or kept anyway.
                    if marked_in.is_none_or(|chunk| chunk >= since) {
                        continue;
                    }
                    if pinned_old.insert(reference) {
                        self.referents(reference, &mut referents);
                        work.append(&mut referents);
                    }
                }
                Referent::FrameType(_) => {}
            }
        }
        self.retain(since, |reference| pinned_old.contains(&reference));
    }

    /// Whether the pools hold `reference`'s value.
    pub(crate) fn holds(&self, reference: PoolRef) -> bool {
        self.marked_in(reference).is_some()
    }

    /// The chunk events now go to: 1, 2, ...
    pub(crate) fn chunk(&self) -> u32 {
        self.chunk
    }

    /// Marks `reference` and everything it refers to for this chunk.
    /// Returns false, marking nothing, if `reference` is not from these
    /// pools (a ref from another recording may name a value this one does
    /// not have).
    #[inline]
    pub(crate) fn mark(&mut self, reference: PoolRef) -> bool {
        let chunk = self.chunk;
        let marked = self.try_mark(reference);
        if marked == Some(true) {
            // Newly marked: what it refers to is marked too, and what that
            // refers to, each value once per chunk.
            let mut work = std::mem::take(&mut self.referent_scratch);
            self.referents(reference, &mut work);
            while let Some(next) = work.pop() {
                match next {
                    Referent::Pooled(held) => {
                        let newly = self.try_mark(held);
                        debug_assert!(newly.is_some(), "a value in use is never dropped");
                        if newly == Some(true) {
                            self.referents(held, &mut work);
                        }
                    }
                    Referent::FrameType(frame_type) => {
                        self.frame_types_marked_in[frame_type.index()] = chunk;
                    }
                }
            }
            self.referent_scratch = work;
        }
        marked.is_some()
    }

    /// Writes every pending entry as pool sections; returns how many pool
    /// sections were written (0: nothing to write, so no checkpoint needed).
    ///
    /// Frame types are written with the first stack trace of each chunk, and
    /// again only if a new kind appears: they are a fixed set of five.
    pub(crate) fn write_pending(
        &mut self,
        types: &StandardTypes,
        frame_types_written: &mut [bool; 5],
        out: &mut Vec<u8>,
    ) -> u64 {
        let mut sections = self.write_pools(types, out);
        let new_frame_types: Vec<FrameType> = FrameType::ALL
            .into_iter()
            .filter(|t| {
                self.frame_types_marked_in[t.index()] == self.chunk
                    && !frame_types_written[t.index()]
            })
            .collect();
        if !new_frame_types.is_empty() {
            write_varint(out, types.frame_type.get());
            write_varint(out, new_frame_types.len() as u64);
            for frame_type in new_frame_types {
                write_varint(out, frame_type.key());
                write_string(out, Some(frame_type.description()));
                frame_types_written[frame_type.index()] = true;
            }
            sections += 1;
        }
        for (class, (count, bytes)) in std::mem::take(&mut self.constants.pending) {
            write_varint(out, class.get());
            write_varint(out, count);
            out.extend_from_slice(&bytes);
            sections += 1;
        }
        sections
    }
}

/// A pooled value's ref with a receipt for its mark in one chunk
/// ([`crate::Recording::mark_stack_trace`],
/// [`crate::Recording::add_stack_trace`]): an event of that chunk given it
/// writes the key without looking the value up, where a look-up of one
/// value among hundreds of thousands (a profile of recursive code holds
/// that many stack traces) is a cache miss. In a later chunk, or another
/// recording, the value is marked again as a plain ref's is. Stack traces
/// are the one pool that grows that large, and the one that takes receipts
/// ([`StackTraceField`]).
///
/// Sound because a value marked in a chunk is written in that chunk and
/// never dropped before it ends, and a receipt names its chunk by a stamp
/// no other chunk of any recording in the process has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Marked<R> {
    reference: R,
    stamp: u32,
}

impl<R: Copy> Marked<R> {
    /// The ref.
    pub fn reference(self) -> R {
        self.reference
    }
}

/// The value of a stack trace field: null, a ref, or a ref with the
/// receipt of its mark ([`Marked`]). Made from any of these.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StackTraceField(Option<Marked<StackTraceRef>>);

impl StackTraceField {
    /// The stack trace, or `None` for null.
    pub fn reference(self) -> Option<StackTraceRef> {
        self.0.map(Marked::reference)
    }

    /// The ref with its receipt; a plain ref's holds for no chunk.
    pub(crate) fn marked(self) -> Option<Marked<StackTraceRef>> {
        self.0
    }
}

impl From<Marked<StackTraceRef>> for StackTraceField {
    fn from(marked: Marked<StackTraceRef>) -> Self {
        Self(Some(marked))
    }
}

impl From<Option<StackTraceRef>> for StackTraceField {
    fn from(reference: Option<StackTraceRef>) -> Self {
        Self(reference.map(|reference| Marked {
            reference,
            stamp: NO_STAMP,
        }))
    }
}

impl From<StackTraceRef> for StackTraceField {
    fn from(reference: StackTraceRef) -> Self {
        Some(reference).into()
    }
}

/// The stamp no chunk has: the stamps ran out.
const NO_STAMP: u32 = 0;

/// The stamp of the next chunk any recording in the process starts.
static NEXT_STAMP: AtomicU32 = AtomicU32::new(1);

/// A stamp for a new chunk, unique in the process: receipts from one
/// recording are never taken for another's. After 2^32 - 2 chunks,
/// [`NO_STAMP`], for which no receipt holds, so events mark every value as
/// they would without one.
fn next_stamp() -> u32 {
    // Relaxed: only uniqueness matters, which the atomic update gives.
    NEXT_STAMP
        .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |stamp| {
            stamp.checked_add(1)
        })
        .unwrap_or(NO_STAMP)
}

#[cfg(test)]
mod tests {
    use super::{EncodedStackTrace, FrameType, MethodRef, Slots, StackFrame, StackTrace};

    /// What the encoding of a stack whose frames are of the methods in
    /// `slots` says: its head's methods and frame types, and the first
    /// byte of its entry (the truncated flag).
    fn encoded(slots: &[u32], truncated: bool) -> (Vec<u32>, Vec<FrameType>, u8) {
        let trace = StackTrace {
            truncated,
            frames: slots
                .iter()
                .map(|&slot| StackFrame {
                    method: MethodRef(slot),
                    line_number: 1,
                    bytecode_index: 2,
                    frame_type: FrameType::Inlined,
                })
                .collect(),
        };
        let mut encoded = Vec::new();
        EncodedStackTrace::encode(&trace, &mut Vec::new(), &mut encoded);
        let (head, entry) = EncodedStackTrace::split(&encoded);
        let methods = head.methods().map(|method| method.0).collect();
        (methods, head.frame_types().collect(), entry[0])
    }

    /// The head lists each of a stack's methods once, in the order they
    /// first appear, whatever their slots: recursion through a few, slots
    /// sharing their low bits, as many methods as frames.
    #[test]
    fn a_stack_traces_head_lists_each_method_once_in_order_of_appearance() {
        let recursion = [7, 3, 7, 3, 3, 9, 7, 9];
        let colliding = [5, 69, 133, 5, 69, 1, 133, 197, 197, 5];
        let many: Vec<u32> = (0..64).map(|i| (i * 37) % 150).collect();
        let slot_zero = [0, 64, 0, 128, 64];
        let colliding_64: Vec<u32> = (0..64).map(|i| (i % 5) * 64 + 3).collect();
        let stacks: [&[u32]; 6] = [
            &recursion,
            &colliding,
            &colliding_64,
            &slot_zero,
            &many,
            &[],
        ];
        for slots in stacks {
            assert!(slots.len() <= super::SEEN_PLACES);
            let mut expected: Vec<u32> = Vec::new();
            for &slot in slots {
                if !expected.contains(&slot) {
                    expected.push(slot);
                }
            }
            let (methods, frame_types, truncated) = encoded(slots, false);
            assert_eq!(methods, expected, "{slots:?}");
            let used: &[FrameType] = if slots.is_empty() {
                &[]
            } else {
                &[FrameType::Inlined]
            };
            assert_eq!(frame_types, used);
            assert_eq!(truncated, 0);
        }
    }

    /// A deeper stack lists each method once too, in ascending order.
    #[test]
    fn a_deep_stack_traces_head_lists_each_method_once_in_ascending_order() {
        let slots: Vec<u32> = (0..2048).map(|i| (i * 37) % 300).collect();
        let (methods, _, truncated) = encoded(&slots, true);
        assert_eq!(methods, (0..300).collect::<Vec<u32>>());
        assert_eq!(truncated, 1);
    }

    /// Slots come in order, survive drops when kept, and are never given
    /// out twice: through three rounds of drops, some kept each time. A
    /// drop keeping a third of the entries compacts them into the map; one
    /// keeping four in five leaves holes where they were.
    #[test]
    fn slots_are_never_reused_and_kept_entries_stay_reachable() {
        let keep_a_third: fn(u32) -> bool = |slot| slot % 3 == 0;
        let keep_most: fn(u32) -> bool = |slot| slot % 5 != 0;
        for keep in [keep_a_third, keep_most] {
            let mut slots = Slots::default();
            let mut held = std::collections::BTreeMap::new();
            let mut given = std::collections::BTreeSet::new();
            for round in 0..3u32 {
                for n in 0..50 {
                    let value = round * 1000 + n;
                    let slot = slots.push(value);
                    assert!(given.insert(slot), "slot {slot} given twice");
                    held.insert(slot, value);
                }
                // Marks live apart from values: they must follow them
                // through drops and compactions.
                for &slot in held.keys() {
                    *slots.mark(slot).expect("held") = round + 1;
                }
                let mut dropped = Vec::new();
                slots.retain(
                    |slot, _| keep(slot),
                    |slot, value| dropped.push((slot, *value)),
                );
                for &(slot, value) in &dropped {
                    assert_eq!(held.remove(&slot), Some(value));
                }
                assert_eq!(slots.len(), held.len());
                for (&slot, &value) in &held {
                    assert_eq!(slots.value(slot), Some(&value));
                    assert_eq!(slots.marked_in(slot), Some(round + 1));
                }
                for &(slot, _) in &dropped {
                    assert!(
                        slots.value(slot).is_none(),
                        "dropped slot {slot} still held"
                    );
                    assert!(
                        slots.marked_in(slot).is_none(),
                        "dropped slot {slot} marked"
                    );
                }
            }
            assert_eq!(given.len(), 150);
            assert_eq!(*given.iter().next_back().unwrap(), 149);
        }
        // Kept mostly: no compaction, every entry still in the vector.
        let mut slots = Slots::default();
        for n in 0..10 {
            slots.push(n);
        }
        slots.retain(|slot, _| slot != 3, |_, _| {});
        assert!(slots.kept.is_empty() && slots.recent.len() == 10);
        assert_eq!(slots.len(), 9);
    }

    /// A compaction moves the old survivors to the map and leaves the
    /// newest entries in the vectors, at least half of them held: as when
    /// a chunk's end drops most of the chunk before it and none of its own.
    #[test]
    fn a_compaction_leaves_the_newest_entries_in_the_vectors() {
        let mut slots = Slots::default();
        for n in 0..300 {
            slots.push(n);
        }
        // The two older hundreds keep one entry in ten; the newest, all.
        slots.retain(|slot, _| slot >= 200 || slot % 10 == 0, |_, _| {});
        assert_eq!(slots.len(), 120);
        assert!(slots.base > 0, "no compaction");
        assert!(slots.base <= 200, "the newest entries moved to the map");
        assert!(slots.recent.len() <= 2 * slots.recent_held);
        assert_eq!(slots.kept.len() + slots.recent_held, 120);
        assert!(slots.kept.keys().all(|&slot| slot < slots.base));
        for slot in (0..300).filter(|&slot| slot >= 200 || slot % 10 == 0) {
            assert_eq!(slots.value(slot), Some(&slot));
        }
        // The next slot follows the last one given.
        assert_eq!(slots.push(300), 300);
    }
}
