//! The type system a chunk declares in its metadata event: classes with
//! fields, annotations and settings, and the `region` element.
//!
//! [`Metadata`] holds the declarations and encodes the metadata event. It
//! starts with the standard types (primitives, `java.lang.String`, the
//! `jdk.jfr` annotations and the JDK's constant-pool types, see
//! [`crate::types`]); event types are added with
//! [`crate::Recording::register`].

use std::collections::HashMap;

use crate::sized::write_sized;
use jfr_format::names::{attribute, element};
use jfr_format::{METADATA_EVENT_ID, write_string, write_varint};

/// A class id in the metadata: what fields, annotations and pools refer to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ClassId(pub(crate) u64);

impl ClassId {
    /// The id as written in the file.
    pub fn get(self) -> u64 {
        self.0
    }
}

/// An annotation on a class, field or setting: its type and element values.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Annotation {
    pub(crate) class: ClassId,
    /// `(name, value)` pairs: `value` for a single element, `value-0`,
    /// `value-1`, ... for an array.
    pub(crate) values: Vec<(String, String)>,
}

/// A field of a class, in the order its values are encoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldDecl {
    pub(crate) name: String,
    pub(crate) class: ClassId,
    pub(crate) constant_pool: bool,
    pub(crate) array: bool,
    pub(crate) annotations: Vec<Annotation>,
}

/// A setting of an event type (`enabled`, `stackTrace`, `throttle`, ...).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SettingDecl {
    pub(crate) name: String,
    pub(crate) class: ClassId,
    pub(crate) default_value: String,
    pub(crate) annotations: Vec<Annotation>,
}

/// A class: a primitive, a value type, an event type or an annotation type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClassDecl {
    pub(crate) id: ClassId,
    pub(crate) name: String,
    pub(crate) super_type: Option<&'static str>,
    pub(crate) simple_type: bool,
    pub(crate) fields: Vec<FieldDecl>,
    pub(crate) settings: Vec<SettingDecl>,
    pub(crate) annotations: Vec<Annotation>,
}

/// The first class id handed out: events must not use 0 or 1 (the metadata
/// and checkpoint ids), and low ids are easy to mistake for them.
const FIRST_CLASS_ID: u64 = 20;

/// Every class a recording declares.
#[derive(Debug, Clone)]
pub struct Metadata {
    classes: Vec<ClassDecl>,
    by_name: HashMap<String, ClassId>,
    /// Changes with every declaration: the metadata id written in the file,
    /// since readers reuse the previous chunk's metadata when the id is equal.
    version: u64,
}

impl Metadata {
    /// Metadata with no classes at all; [`crate::types::StandardTypes`]
    /// declares the standard ones. Its id, 1, is no recording's (each
    /// declares the standard types before it writes): the spacer chunks of
    /// [`crate::tail`] write it.
    pub(crate) fn empty() -> Self {
        Self {
            classes: Vec::new(),
            by_name: HashMap::new(),
            version: 1,
        }
    }

    /// The id of the class named `name`, if declared.
    pub fn class_id(&self, name: &str) -> Option<ClassId> {
        self.by_name.get(name).copied()
    }

    /// The metadata id: changes whenever a class is declared.
    pub fn version(&self) -> u64 {
        self.version
    }

    /// Reserves an id for a class named `name` so that classes can refer to
    /// each other (and to themselves) before they are complete.
    pub(crate) fn reserve(&mut self, name: &str) -> ClassId {
        assert!(
            !self.by_name.contains_key(name),
            "class {name} declared twice"
        );
        let id = ClassId(FIRST_CLASS_ID + self.classes.len() as u64);
        self.classes.push(ClassDecl {
            id,
            name: name.to_owned(),
            super_type: None,
            simple_type: false,
            fields: Vec::new(),
            settings: Vec::new(),
            annotations: Vec::new(),
        });
        self.by_name.insert(name.to_owned(), id);
        self.version += 1;
        id
    }

    /// Mutable access to a reserved class, to fill it in.
    pub(crate) fn class_mut(&mut self, id: ClassId) -> &mut ClassDecl {
        self.version += 1;
        &mut self.classes[(id.0 - FIRST_CLASS_ID) as usize]
    }

    /// Appends the metadata event (size, type id 0, start ticks, duration 0,
    /// metadata id, string table, element tree) to `out`.
    pub(crate) fn encode_event(&self, start_ticks: i64, out: &mut Vec<u8>) {
        let mut strings = StringTable::default();
        let root = self.element_tree(&mut strings);

        let mut body = Vec::with_capacity(16 * 1024);
        write_varint(&mut body, METADATA_EVENT_ID);
        write_varint(&mut body, start_ticks as u64);
        write_varint(&mut body, 0); // duration
        write_varint(&mut body, self.version);
        write_varint(&mut body, strings.strings.len() as u64);
        for text in &strings.strings {
            write_string(&mut body, Some(text));
        }
        root.encode(&mut body);
        write_sized(out, &body);
    }

    fn element_tree(&self, strings: &mut StringTable) -> Element {
        let mut metadata = Element::new(strings, element::METADATA);
        for class in &self.classes {
            metadata.children.push(class_element(strings, class));
        }
        let mut region = Element::new(strings, element::REGION);
        region.attribute(strings, attribute::LOCALE, "en_US");
        region.attribute(strings, attribute::GMT_OFFSET, "0");
        let mut root = Element::new(strings, element::ROOT);
        root.children = vec![metadata, region];
        root
    }
}

fn class_element(strings: &mut StringTable, class: &ClassDecl) -> Element {
    let mut element = Element::new(strings, element::CLASS);
    element.attribute(strings, attribute::NAME, &class.name);
    element.attribute(strings, attribute::ID, &class.id.0.to_string());
    if let Some(super_type) = class.super_type {
        element.attribute(strings, attribute::SUPER_TYPE, super_type);
    }
    if class.simple_type {
        // Presence is what the JDK tests; never write "false".
        element.attribute(strings, attribute::SIMPLE_TYPE, "true");
    }
    // HotSpot's order: settings, fields, then the class's annotations.
    for setting in &class.settings {
        let mut child = Element::new(strings, element::SETTING);
        child.attribute(strings, attribute::NAME, &setting.name);
        child.attribute(strings, attribute::CLASS, &setting.class.0.to_string());
        child.attribute(strings, attribute::DEFAULT_VALUE, &setting.default_value);
        child.children = annotation_elements(strings, &setting.annotations);
        element.children.push(child);
    }
    for field in &class.fields {
        let mut child = Element::new(strings, element::FIELD);
        child.attribute(strings, attribute::NAME, &field.name);
        child.attribute(strings, attribute::CLASS, &field.class.0.to_string());
        if field.constant_pool {
            child.attribute(strings, attribute::CONSTANT_POOL, "true");
        }
        if field.array {
            child.attribute(strings, attribute::DIMENSION, "1");
        }
        child.children = annotation_elements(strings, &field.annotations);
        element.children.push(child);
    }
    element
        .children
        .extend(annotation_elements(strings, &class.annotations));
    element
}

fn annotation_elements(strings: &mut StringTable, annotations: &[Annotation]) -> Vec<Element> {
    annotations
        .iter()
        .map(|annotation| {
            let mut element = Element::new(strings, element::ANNOTATION);
            element.attribute(strings, attribute::CLASS, &annotation.class.0.to_string());
            for (name, value) in &annotation.values {
                element.attribute(strings, name, value);
            }
            element
        })
        .collect()
}

/// The metadata's string table: every name and attribute value, once.
#[derive(Default)]
struct StringTable {
    strings: Vec<String>,
    index: HashMap<String, u32>,
}

impl StringTable {
    fn intern(&mut self, text: &str) -> u32 {
        if let Some(&index) = self.index.get(text) {
            return index;
        }
        let index = self.strings.len() as u32;
        self.strings.push(text.to_owned());
        self.index.insert(text.to_owned(), index);
        index
    }
}

/// One element of the metadata tree, by string-table indices.
struct Element {
    name: u32,
    attributes: Vec<(u32, u32)>,
    children: Vec<Element>,
}

impl Element {
    fn new(strings: &mut StringTable, name: &str) -> Self {
        Self {
            name: strings.intern(name),
            attributes: Vec::new(),
            children: Vec::new(),
        }
    }

    fn attribute(&mut self, strings: &mut StringTable, key: &str, value: &str) {
        self.attributes
            .push((strings.intern(key), strings.intern(value)));
    }

    fn encode(&self, out: &mut Vec<u8>) {
        write_varint(out, self.name as u64);
        write_varint(out, self.attributes.len() as u64);
        for &(key, value) in &self.attributes {
            write_varint(out, key as u64);
            write_varint(out, value as u64);
        }
        write_varint(out, self.children.len() as u64);
        for child in &self.children {
            child.encode(out);
        }
    }
}
