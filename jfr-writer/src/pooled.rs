//! The pooled types, listed once.
//!
//! Every list of the pooled types (their `*Ref` handles, [`PoolRef`]'s
//! variants, the pools that hold the values and their sizes,
//! [`Recording`]'s interning methods, [`FieldType`]'s and [`Value`]'s
//! variants, [`EventWriter`]'s setters, the class of a field of each, the
//! Rust types of typed events' fields) is generated from the table in
//! [`pooled_types!`]: each module that needs one defines a small macro that
//! takes the table and writes its list, and calls `pooled_types!` (or
//! [`pooled_field_types!`]) with it. Those calls are the lists.
//!
//! # Adding a pooled type
//!
//! Add its row to the table, declare its value struct beside the others in
//! [`crate::pool`] with `pooled_value!` (each field once: the struct, the
//! entry's encoding, what it refers to and its class's fields follow), and
//! give it a class in [`crate::types`] (a field of `StandardTypes` named as
//! the row's singular, reserved with the other pool classes). Every list
//! follows from the row.
//!
//! [`PoolRef`]: crate::PoolRef
//! [`Recording`]: crate::Recording
//! [`FieldType`]: crate::FieldType
//! [`Value`]: crate::Value
//! [`EventWriter`]: crate::EventWriter

/// Calls `$generate!` with the table of pooled types, in the order a
/// checkpoint writes their pools.
///
/// The rows come in three groups, by how a value is given:
///
/// - `text`: a string, held as `Box<str>`; interned from a `&str`.
/// - `value`: a struct of the same name as the row (`Thread` for
///   `Thread(ThreadRef)`), interned by value; events hold these by ref, so
///   each is a [`crate::FieldType`] and has an [`crate::EventWriter`] setter.
/// - `stack`: stack traces, which have their own encoding, interning and
///   setter; a field type too.
///
/// Tokens after `$generate` are passed first (see
/// [`pooled_field_types!`]).
///
/// A row reads `Name(NameRef) in pool_field, one;`: the variant of
/// [`crate::PoolRef`] (and of [`crate::FieldType`] for fields), the handle,
/// the field of the pools holding the values (and of
/// [`crate::PoolSizes`]), and the singular that names the interning
/// method, the setter, and the class in [`crate::types`]'s standard types.
macro_rules! pooled_types {
    ($generate:ident $(, $first:tt)*) => {
        $generate! {
            $($first)*
            text {
                /// A `jdk.types.Symbol`: an interned string such as a class
                /// or method name.
                Symbol(SymbolRef) in symbols, symbol;
                /// A `java.lang.String` pool entry, for string fields
                /// written by reference.
                String(StringRef) in strings, string;
            }
            value {
                /// A `jdk.types.ThreadGroup`.
                ThreadGroup(ThreadGroupRef) in thread_groups, thread_group;
                /// A `java.lang.Thread`.
                Thread(ThreadRef) in threads, thread;
                /// A `jdk.types.Module`.
                Module(ModuleRef) in modules, module;
                /// A `jdk.types.Package`.
                Package(PackageRef) in packages, package;
                /// A `jdk.types.ClassLoader`.
                ClassLoader(ClassLoaderRef) in class_loaders, class_loader;
                /// A `java.lang.Class`.
                Class(ClassRef) in classes, class;
                /// A `jdk.types.Method`.
                Method(MethodRef) in methods, method;
            }
            stack {
                /// A `jdk.types.StackTrace`.
                StackTrace(StackTraceRef) in stack_traces, stack_trace;
            }
        }
    };
}

/// Calls `$generate!` with the rows of the pooled types an event field can
/// hold: `value` and `stack`, as one list.
macro_rules! pooled_field_types {
    ($generate:ident) => {
        pooled_types!(field_type_rows, $generate);
    };
}

/// [`pooled_field_types!`]'s step: keeps the rows of field types.
macro_rules! field_type_rows {
    ($generate:ident text { $($text:tt)* } value { $($value:tt)* } stack { $($stack:tt)* }) => {
        $generate! { $($value)* $($stack)* }
    };
}
