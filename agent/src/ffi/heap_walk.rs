//! The walk to GC roots (`roots=true`) in the JVM: JVMTI `FollowReferences`
//! driving a [`Walker`], then the recorded chains named through JVMTI. The
//! algorithm and its memory are described in [`crate::roots`]; this is its
//! contact with the JVM.
//!
//! 1. A JVMTI environment of the walk's own, with `can_tag_objects`: its tag
//!    map is separate from the session's (which tags threads and classes
//!    with its keys), and disposing of it drops every tag the walk set at
//!    once, however many.
//! 2. Preparation, on the writer thread, the application running: every
//!    loaded class tagged with its index (its signature kept, primitive
//!    arrays marked as leaves), every live thread tagged after them (its
//!    name kept), every target (a liveness handle's object) tagged after
//!    them or, if it is itself a class or thread, marked on that node. The
//!    local references are deleted before the walk: `FollowReferences`
//!    would report them as the writer thread's JNI locals, roots that
//!    would hide the real ones.
//! 3. The walk: one `FollowReferences` from the heap roots, a VM operation
//!    (the JVM paused) that calls back on the VM thread for each reference;
//!    the callback only decodes its arguments for the [`Walker`].
//! 4. The chains, named: class signatures from step 2; field names from
//!    JVMTI's field index, counted over the class's interfaces' fields, then
//!    its superclasses' from `java.lang.Object` down (the classes looked up
//!    again by their tags); thread names from step 2.
//!
//! Any JVMTI failure is logged and leaves the paths `None`.

use std::collections::hash_map::Entry;
use std::ffi::c_void;
use std::time::Instant;

use heapsampler_core::options::{LogLevel, Options};
use jni::sys::{jclass, jfieldID, jint, jlong, jobject};
use rustc_hash::{FxHashMap, FxHashSet};

use super::jni::{Jni, LocalFrame, Vm};
use super::jvm::{Jvmti, JvmtiError};
use super::sys::*;
use crate::roots::{
    ClassKind, Edge, Graph, Names, NodeId, RootKind, RootLimits, RootPath, Visit, Walker,
    field_position, node_of, tag_of,
};
use crate::session::log;
use crate::signature::{external_name, is_primitive_array};

/// The paths from GC roots to the objects behind `handles` (liveness weak
/// references), one per handle, within `limits`; logs what the walk did
/// at `info`, and each path found at `debug`.
pub fn paths_to_roots(
    vm: Vm,
    jni: Jni,
    handles: &[u64],
    limits: &RootLimits,
    options: &Options,
) -> Vec<Option<RootPath>> {
    let start = Instant::now();
    let mut paths = vec![None; handles.len()];
    if handles.is_empty() {
        log(
            options,
            LogLevel::Info,
            "paths to roots: no old object to find paths for (live=true and old_objects \
             above 0 give them), nothing to walk",
        );
        return paths;
    }
    let env = match TagEnv::new(vm) {
        Ok(env) => env,
        Err(message) => {
            log(
                options,
                LogLevel::Quiet,
                format_args!("paths to roots: {message}"),
            );
            return paths;
        }
    };
    let prepared = match prepare(env.0, jni, handles) {
        Ok(prepared) => prepared,
        Err(error) => {
            log(
                options,
                LogLevel::Quiet,
                format_args!("paths to roots: cannot prepare the walk: {error}"),
            );
            return paths;
        }
    };
    let Prepared {
        graph,
        kinds,
        signatures,
        thread_names,
        targets,
    } = prepared;
    let prepared_nodes = graph.len();
    let mut walker = Walker::new(graph, kinds, limits, start);
    let callbacks = jvmtiHeapCallbacks {
        heap_reference_callback: Some(on_reference),
        ..jvmtiHeapCallbacks::default()
    };
    let walk_start = Instant::now();
    let prepare_time = walk_start - start;
    // SAFETY: `on_reference` reads `user_data` as the `Walker` passed here,
    // which lives on this frame until the call returns and is not touched
    // meanwhile: the VM thread calls back one reference at a time.
    let walked = unsafe {
        env.0
            .follow_references(&callbacks, (&mut walker as *mut Walker).cast())
    };
    let walk_time = walk_start.elapsed();
    if let Err(error) = walked {
        log(
            options,
            LogLevel::Quiet,
            format_args!("paths to roots: the heap walk failed: {error}"),
        );
        return paths;
    }
    let (stop, calls) = (walker.stop(), walker.calls());
    let graph = walker.into_graph();
    let memory = graph.memory_bytes();
    let reached = graph.reached();
    let naming_start = Instant::now();
    let Some(frame) = LocalFrame::push(jni, (signatures.len() as jint + 256).max(16)) else {
        log(
            options,
            LogLevel::Quiet,
            "paths to roots: no memory for local references",
        );
        return paths;
    };
    let classes = classes_by_node(env.0, jni, signatures.len());
    let mut names = JvmNames::new(env.0, jni, classes, &signatures, &thread_names);
    for (path, target) in paths.iter_mut().zip(&targets) {
        let Some(target) = *target else { continue };
        *path = graph.path(target, &mut names);
        let class = graph
            .class_of(target)
            .and_then(|class| signatures.get(class as usize)?.as_deref())
            .map_or_else(|| "an object".to_owned(), external_name);
        match path {
            Some(found) => log(
                options,
                LogLevel::Debug,
                format_args!("path to root of {class}: {found}"),
            ),
            // Garbage not collected yet, held only through a weak or soft
            // reference, beyond roots_depth, or not reached in time.
            None => log(
                options,
                LogLevel::Debug,
                format_args!("no path to root of {class}"),
            ),
        }
    }
    drop(names);
    drop(frame);
    let naming_time = naming_start.elapsed();
    let freeing_start = Instant::now();
    drop(env);
    let freeing_time = freeing_start.elapsed();
    let found = paths.iter().filter(|p| p.is_some()).count();
    log(
        options,
        LogLevel::Info,
        format_args!(
            "paths to roots: {found} of {} objects in {} ms, {} objects visited \
             (the walk paused the JVM {} ms: {} references, {} objects tagged, {:.1} MiB of nodes; \
             {stop}; preparing {} ms, naming {} ms, freeing the tags {} ms)",
            handles.len(),
            start.elapsed().as_millis(),
            reached,
            walk_time.as_millis(),
            calls,
            graph.len() - prepared_nodes,
            memory as f64 / (1 << 20) as f64,
            prepare_time.as_millis(),
            naming_time.as_millis(),
            freeing_time.as_millis(),
        ),
    );
    paths
}

/// A JVMTI environment for one walk's tags, disposed of (with every tag)
/// when dropped.
struct TagEnv(Jvmti);

/// Why the walk has no environment of its own.
#[derive(Debug, thiserror::Error)]
enum TagEnvError {
    #[error("no JVMTI environment for the walk (status {0})")]
    NoEnvironment(jint),
    #[error("cannot tag objects for the walk: {0}")]
    CannotTag(#[source] JvmtiError),
}

impl TagEnv {
    fn new(vm: Vm) -> Result<Self, TagEnvError> {
        let jvmti = Jvmti::new(vm).map_err(TagEnvError::NoEnvironment)?;
        if let Err(error) = jvmti.add_capabilities(&jvmtiCapabilities::of(&[CAN_TAG_OBJECTS])) {
            jvmti.dispose();
            return Err(TagEnvError::CannotTag(error));
        }
        Ok(Self(jvmti))
    }
}

impl Drop for TagEnv {
    fn drop(&mut self) {
        self.0.dispose();
    }
}

/// What the walk is prepared with.
struct Prepared {
    graph: Graph,
    /// Per class node: what its objects hold.
    kinds: Vec<ClassKind>,
    /// Per class node: its signature.
    signatures: Vec<Option<String>>,
    /// Per thread index: its name.
    thread_names: Vec<String>,
    /// Per handle: the target's node, `None` if its object was collected.
    targets: Vec<Option<NodeId>>,
}

/// Tags the classes, threads and targets in `env` (see the module's doc).
fn prepare(env: Jvmti, jni: Jni, handles: &[u64]) -> Result<Prepared, JvmtiError> {
    let no_memory = JvmtiError {
        code: JVMTI_ERROR_OUT_OF_MEMORY,
    };
    let frame = LocalFrame::push(jni, 64).ok_or(no_memory)?;
    // The classes' local references live until the frame ends, for their
    // kinds; none is left for the walk.
    let classes = env.loaded_classes()?;
    let class_count = classes.len() as NodeId;
    let mut signatures = Vec::with_capacity(classes.len());
    for (index, &class) in classes.iter().enumerate() {
        signatures.push(env.class_signature(class).ok());
        env.set_tag(class, tag_of(index as NodeId))?;
    }
    let kinds = class_kinds(env, jni, classes, &signatures);
    let threads = env.all_threads()?;
    let mut tagged = Ok(());
    let mut thread_names = Vec::with_capacity(threads.len());
    for (index, &thread) in threads.iter().enumerate() {
        if tagged.is_ok() {
            thread_names.push(env.thread_name(jni, thread).unwrap_or_default());
            tagged = env.set_tag(thread, tag_of(class_count + index as NodeId));
        }
        jni.delete_local_ref(thread);
    }
    tagged?;
    let mut graph = Graph::new(class_count, threads.len() as NodeId);
    let mut targets = Vec::with_capacity(handles.len());
    for &handle in handles {
        let object = jni.new_local_ref(handle as jobject);
        if object.is_null() {
            targets.push(None);
            continue;
        }
        let node = match env.tag(object).map(node_of) {
            // A class or a thread, tagged above: the same node.
            Ok(Some(node)) => Ok(Some(node)),
            Ok(None) => match graph.add() {
                Some(node) => env.set_tag(object, tag_of(node)).map(|()| Some(node)),
                None => Ok(None),
            },
            Err(error) => Err(error),
        };
        jni.delete_local_ref(object);
        let node = node?;
        if let Some(node) = node {
            graph.mark_target(node);
        }
        targets.push(node);
    }
    drop(frame);
    Ok(Prepared {
        graph,
        kinds,
        signatures,
        thread_names,
        targets,
    })
}

/// What each class's objects hold (by node): primitive arrays and classes
/// without reference fields (boxed numbers, say) are leaves;
/// `java.lang.ref.Reference`s have a referent the walk does not follow,
/// whose JVMTI index depends on the class's interfaces.
fn class_kinds(
    env: Jvmti,
    jni: Jni,
    classes: Vec<jclass>,
    signatures: &[Option<String>],
) -> Vec<ClassKind> {
    let mut names = JvmNames::new(env, jni, classes, signatures, &[]);
    let mut holds = vec![None; signatures.len()];
    let mut kinds: Vec<ClassKind> = (0..signatures.len())
        .map(|node| match signatures[node].as_deref() {
            Some(signature) if is_primitive_array(signature) => ClassKind::Leaf,
            Some(signature)
                if signature.starts_with('L')
                    && !holds_references(&mut names, &mut holds, node as NodeId) =>
            {
                ClassKind::Leaf
            }
            _ => ClassKind::Plain,
        })
        .collect();
    let Some(reference) = signatures
        .iter()
        .position(|s| s.as_deref() == Some("Ljava/lang/ref/Reference;"))
    else {
        return kinds;
    };
    let Some(reference_class) = names.class(reference as NodeId) else {
        return kinds;
    };
    let Some(referent) = names.fields(reference as NodeId).and_then(|fields| {
        let fields = fields.clone();
        fields.iter().position(|&field| {
            env.field_name(reference_class, field)
                .is_ok_and(|(name, _)| name == "referent")
        })
    }) else {
        return kinds;
    };
    for (node, kind) in kinds.iter_mut().enumerate() {
        let Some(class) = names.class(node as NodeId) else {
            continue;
        };
        if *kind != ClassKind::Plain || !jni.is_assignable_from(class, reference_class) {
            continue;
        }
        // The referent's index: the interfaces' fields, then those of the
        // classes above Reference (Object's), then its place in Reference.
        let Some(layout) = names.layout(node as NodeId) else {
            continue;
        };
        let mut index = layout.interface_fields;
        for &above in &layout.chain {
            if above == reference as NodeId {
                *kind = ClassKind::Reference {
                    referent: (index + referent) as i32,
                };
                break;
            }
            match names.fields(above) {
                Some(fields) => index += fields.len(),
                None => break,
            }
        }
    }
    kinds
}

/// Whether the objects of class `node` may hold references: it or a
/// superclass has an instance field of a class or array type. Unknown
/// counts as true. Memoized in `holds`.
fn holds_references(names: &mut JvmNames, holds: &mut [Option<bool>], node: NodeId) -> bool {
    // The class and its superclasses up to one already known.
    let mut chain = Vec::new();
    let mut known = None;
    let mut current = names.class(node);
    let mut owned = false;
    while let Some(class) = current {
        let Some(at) = names.node(class) else {
            known = Some(true);
            break;
        };
        if let Some(answer) = holds[at as usize] {
            known = Some(answer);
            break;
        }
        chain.push((at, class));
        let next = names.jni.superclass(class);
        if owned {
            names.jni.delete_local_ref(class);
        }
        owned = true;
        current = (!next.is_null()).then_some(next);
    }
    if let Some(last) = current.filter(|_| owned) {
        names.jni.delete_local_ref(last);
    }
    // From the top down: a class holds references if its superclass does
    // or one of its own instance fields is a reference.
    let mut answer = known.unwrap_or(false);
    for &(at, _) in chain.iter().rev() {
        if !answer {
            answer = names.own_reference_fields(at).unwrap_or(true);
        }
        holds[at as usize] = Some(answer);
    }
    holds[node as usize].unwrap_or(true)
}

/// Local references to the loaded classes, by node (their tags), null for
/// a class not tagged; they live until the caller's local frame ends.
fn classes_by_node(env: Jvmti, jni: Jni, count: usize) -> Vec<jclass> {
    let mut classes = vec![std::ptr::null_mut(); count];
    for class in env.loaded_classes().unwrap_or_default() {
        match env.tag(class).ok().and_then(node_of) {
            Some(node) if (node as usize) < count => classes[node as usize] = class,
            _ => jni.delete_local_ref(class),
        }
    }
    classes
}

/// `FollowReferences`' callback: decodes a reference for the [`Walker`].
unsafe extern "system" fn on_reference(
    reference_kind: jvmtiHeapReferenceKind,
    reference_info: *const jvmtiHeapReferenceInfo,
    class_tag: jlong,
    _referrer_class_tag: jlong,
    _size: jlong,
    tag_ptr: *mut jlong,
    referrer_tag_ptr: *mut jlong,
    length: jint,
    user_data: *mut c_void,
) -> jint {
    if tag_ptr.is_null() || user_data.is_null() {
        return 0;
    }
    // SAFETY: `user_data` is the `Walker` `paths_to_roots` passed, alive
    // and used by nobody else while the walk calls back.
    let walker = unsafe { &mut *user_data.cast::<Walker>() };
    // SAFETY: the JVM passes the info the kind calls for (a field or array
    // index, a stack or JNI local's thread), or null, checked here.
    let info = unsafe { reference_info.as_ref() };
    // SAFETY: every member of the union starts with a jint or a jlong the
    // JVM wrote for the kinds read here.
    let index = || info.map_or(0, |info| unsafe { info.field.index });
    let root = |kind| Edge::Root {
        kind,
        thread_tag: 0,
    };
    let edge = match reference_kind {
        JVMTI_HEAP_REFERENCE_FIELD => Edge::Field { index: index() },
        JVMTI_HEAP_REFERENCE_STATIC_FIELD => Edge::StaticField { index: index() },
        JVMTI_HEAP_REFERENCE_ARRAY_ELEMENT => Edge::Element { index: index() },
        JVMTI_HEAP_REFERENCE_JNI_GLOBAL => root(RootKind::JniGlobal),
        JVMTI_HEAP_REFERENCE_SYSTEM_CLASS => root(RootKind::SystemClass),
        JVMTI_HEAP_REFERENCE_MONITOR => root(RootKind::Monitor),
        JVMTI_HEAP_REFERENCE_THREAD => root(RootKind::Thread),
        JVMTI_HEAP_REFERENCE_OTHER => root(RootKind::Other),
        JVMTI_HEAP_REFERENCE_STACK_LOCAL => Edge::Root {
            kind: RootKind::StackLocal,
            // SAFETY: a stack local's info is a jvmtiHeapReferenceInfoStackLocal.
            thread_tag: info.map_or(0, |info| unsafe { info.stack_local.thread_tag }),
        },
        JVMTI_HEAP_REFERENCE_JNI_LOCAL => Edge::Root {
            kind: RootKind::JniLocal,
            // SAFETY: a JNI local's info is a jvmtiHeapReferenceInfoJniLocal.
            thread_tag: info.map_or(0, |info| unsafe { info.jni_local.thread_tag }),
        },
        _ => Edge::Other,
    };
    // SAFETY: the referrer's tag, for a reference from an object; read
    // before the referenced object's tag is borrowed (they are one for a
    // reference of an object to itself).
    let referrer_tag = unsafe { referrer_tag_ptr.as_ref() }.map_or(0, |&tag| tag);
    // SAFETY: the JVM's slot for the referenced object's tag, non-null
    // (checked), which the callback may set.
    let tag = unsafe { &mut *tag_ptr };
    match walker.reference(edge, referrer_tag, tag, class_tag, length) {
        Visit::Skip => 0,
        Visit::Follow => JVMTI_VISIT_OBJECTS,
        Visit::Abort => JVMTI_VISIT_ABORT,
    }
}

/// `ACC_STATIC` of a field's modifiers.
const ACC_STATIC: jint = 0x0008;

/// Which classes JVMTI's field indices of a class count over.
struct Layout {
    /// The fields of all its interfaces (each once).
    interface_fields: usize,
    /// The class and its superclasses, `java.lang.Object` first (for an
    /// interface: itself alone).
    chain: Vec<NodeId>,
}

/// Names for [`Graph::path`], through JVMTI and JNI on the writer thread,
/// inside a local frame that frees the class references they take.
struct JvmNames<'a> {
    env: Jvmti,
    jni: Jni,
    /// Per class node: a local reference, null if unloaded since.
    classes: Vec<jclass>,
    signatures: &'a [Option<String>],
    thread_names: &'a [String],
    fields: FxHashMap<NodeId, Option<Vec<jfieldID>>>,
    layouts: FxHashMap<NodeId, Option<Layout>>,
    named: FxHashMap<(NodeId, i32), Option<(String, i16)>>,
}

impl<'a> JvmNames<'a> {
    /// Names through `classes`, local references by node.
    fn new(
        env: Jvmti,
        jni: Jni,
        classes: Vec<jclass>,
        signatures: &'a [Option<String>],
        thread_names: &'a [String],
    ) -> Self {
        Self {
            env,
            jni,
            classes,
            signatures,
            thread_names,
            fields: FxHashMap::default(),
            layouts: FxHashMap::default(),
            named: FxHashMap::default(),
        }
    }

    fn class(&self, node: NodeId) -> Option<jclass> {
        self.classes
            .get(node as usize)
            .copied()
            .filter(|c| !c.is_null())
    }

    /// The node of a class reference (its tag).
    fn node(&self, class: jclass) -> Option<NodeId> {
        let node = self.env.tag(class).ok().and_then(node_of)?;
        ((node as usize) < self.classes.len()).then_some(node)
    }

    fn fields(&mut self, node: NodeId) -> Option<&Vec<jfieldID>> {
        if let Entry::Vacant(entry) = self.fields.entry(node) {
            let fields = self
                .classes
                .get(node as usize)
                .filter(|c| !c.is_null())
                .and_then(|&class| self.env.class_fields(class).ok());
            entry.insert(fields);
        }
        self.fields.get(&node)?.as_ref()
    }

    /// Every interface `class` implements (or, for an interface, extends),
    /// superinterfaces included, by node; `None` if one is not known.
    fn interfaces(&self, class: jclass, into: &mut FxHashSet<NodeId>) -> Option<()> {
        for interface in self.env.implemented_interfaces(class).ok()? {
            let node = self.node(interface);
            if let Some(node) = node
                && into.insert(node)
            {
                self.interfaces(interface, into)?;
            }
            self.jni.delete_local_ref(interface);
            node?;
        }
        Some(())
    }

    /// Whether class `node` declares an instance field of a class or array
    /// type.
    fn own_reference_fields(&mut self, node: NodeId) -> Option<bool> {
        let class = self.class(node)?;
        let fields = self.fields(node)?.clone();
        for field in fields {
            let modifiers = self.env.field_modifiers(class, field).ok()?;
            let (_, signature) = self.env.field_name(class, field).ok()?;
            if modifiers & ACC_STATIC == 0
                && matches!(signature.as_bytes().first(), Some(b'L' | b'['))
            {
                return Some(true);
            }
        }
        Some(false)
    }

    fn layout(&mut self, node: NodeId) -> Option<Layout> {
        let class = self.class(node)?;
        let mut interfaces = FxHashSet::default();
        let chain = if self.env.is_interface(class).ok()? {
            self.interfaces(class, &mut interfaces)?;
            vec![node]
        } else {
            let mut chain = vec![node];
            self.interfaces(class, &mut interfaces)?;
            let mut current = self.jni.superclass(class);
            while !current.is_null() {
                let found = self.node(current);
                if found.is_some() {
                    self.interfaces(current, &mut interfaces)?;
                }
                let next = self.jni.superclass(current);
                self.jni.delete_local_ref(current);
                chain.push(found?);
                current = next;
            }
            chain.reverse();
            chain
        };
        let mut interface_fields = 0;
        for interface in interfaces {
            interface_fields += self.fields(interface)?.len();
        }
        Some(Layout {
            interface_fields,
            chain,
        })
    }

    fn name_field(&mut self, class: NodeId, index: i32) -> Option<(String, i16)> {
        if !self.layouts.contains_key(&class) {
            let layout = self.layout(class);
            self.layouts.insert(class, layout);
        }
        let layout = self.layouts.get(&class)?.as_ref()?;
        let chain = layout.chain.clone();
        let interface_fields = layout.interface_fields;
        let mut counts = Vec::with_capacity(chain.len());
        for &node in &chain {
            counts.push(self.fields(node)?.len());
        }
        let (position, at) = field_position(interface_fields, &counts, index)?;
        let holder = chain[position];
        let field = *self.fields(holder)?.get(at)?;
        let jclass = self.class(holder)?;
        let (name, _) = self.env.field_name(jclass, field).ok()?;
        let modifiers = self.env.field_modifiers(jclass, field).unwrap_or(0);
        Some((name, modifiers as i16))
    }
}

impl Names for JvmNames<'_> {
    fn class_signature(&mut self, class: NodeId) -> Option<String> {
        self.signatures.get(class as usize)?.clone()
    }

    fn field(&mut self, class: NodeId, index: i32) -> Option<(String, i16)> {
        if let Some(named) = self.named.get(&(class, index)) {
            return named.clone();
        }
        let named = self.name_field(class, index);
        self.named.insert((class, index), named.clone());
        named
    }

    fn thread_name(&mut self, thread: u32) -> Option<String> {
        self.thread_names.get(thread as usize).cloned()
    }
}
