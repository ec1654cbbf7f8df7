//! The metadata event: a chunk's type system, read from its string table and
//! element tree. Only element names the format allows are accepted, nesting
//! is limited, and every string index and count is checked.

use jfr_format::METADATA_EVENT_ID;
use jfr_format::names::{attribute, class, element};

use crate::cursor::Cursor;
use crate::{IdMap, ReadError};

/// Deeper element trees than this are refused (the format needs five
/// levels: root, metadata, class, field, annotation).
const MAX_DEPTH: usize = 16;

/// Vectors sized by a count from the file reserve at most this many items
/// up front; past it they grow with the items really read. Counts are
/// checked against the bytes left, but an element of three bytes is 72
/// bytes in memory, so a corrupt count taken whole could still claim many
/// times the metadata's size before its first item fails.
const MAX_RESERVE: usize = 1024;

/// An annotation on a class or field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AnnotationInfo {
    /// The annotation type's class id.
    pub class_id: u64,
    /// Element values by name (`value`, `value-0`, ...).
    pub values: Vec<(String, String)>,
}

/// How a class's values are encoded, decided once from its name rather
/// than on every value read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Boolean,
    Byte,
    Short,
    Char,
    Int,
    Long,
    Float,
    Double,
    String,
    /// Any other class: its fields, in order.
    Object,
}

impl Kind {
    fn of(name: &str) -> Self {
        match name {
            class::BOOLEAN => Self::Boolean,
            class::BYTE => Self::Byte,
            class::SHORT => Self::Short,
            class::CHAR => Self::Char,
            class::INT => Self::Int,
            class::LONG => Self::Long,
            class::FLOAT => Self::Float,
            class::DOUBLE => Self::Double,
            class::STRING => Self::String,
            _ => Self::Object,
        }
    }
}

/// A field of a class, in encoding order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldInfo {
    /// The field name.
    pub name: String,
    /// The field type's class id.
    pub class_id: u64,
    /// Whether values are constant-pool keys.
    pub constant_pool: bool,
    /// Whether the field is an array.
    pub array: bool,
    /// The field's annotations.
    pub annotations: Vec<AnnotationInfo>,
    /// The index of the field's class in [`Metadata::classes`], found once
    /// when the metadata is read; `None` if it is not declared.
    class_index: Option<usize>,
}

/// A class: a primitive, a value type, an event type or an annotation type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClassInfo {
    /// The class id fields and pools refer to.
    pub id: u64,
    /// The type name (`jdk.ObjectAllocationSample`, `long`).
    pub name: String,
    /// `jdk.jfr.Event` for event types.
    pub super_type: Option<String>,
    /// Whether readers unwrap its single field.
    pub simple_type: bool,
    /// Fields in encoding order.
    pub fields: Vec<FieldInfo>,
    /// The class's annotations.
    pub annotations: Vec<AnnotationInfo>,
    pub(crate) kind: Kind,
}

impl ClassInfo {
    /// Whether this is an event type.
    pub fn is_event(&self) -> bool {
        self.super_type.as_deref() == Some(class::EVENT)
    }
}

/// A chunk's metadata.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Metadata {
    /// The metadata id (equal ids mean equal metadata).
    pub id: u64,
    /// The classes, in declaration order.
    pub classes: Vec<ClassInfo>,
    by_id: IdMap<u64, usize>,
}

impl Metadata {
    /// The class with `id`.
    pub fn class(&self, id: u64) -> Option<&ClassInfo> {
        self.by_id.get(&id).map(|&i| &self.classes[i])
    }

    /// The class of `field`, a field of one of these classes.
    pub fn field_class(&self, field: &FieldInfo) -> Option<&ClassInfo> {
        field.class_index.map(|i| &self.classes[i])
    }

    /// The class named `name`.
    pub fn class_named(&self, name: &str) -> Option<&ClassInfo> {
        self.classes.iter().find(|c| c.name == name)
    }

    /// Reads the metadata event at the cursor (size, type 0, ..., tree).
    pub fn read(cursor: &mut Cursor<'_>) -> Result<Self, ReadError> {
        let start = cursor.offset();
        let size = cursor.varint("the metadata event's size")?;
        let header_len = cursor.offset() - start;
        if size < header_len || size - header_len > cursor.remaining() as u64 {
            return Err(cursor.error(format!("a metadata size within the chunk, found {size}")));
        }
        let mut event = Cursor::new(
            cursor.bytes((size - header_len) as usize, "the metadata event")?,
            cursor.offset() - (size - header_len),
        );
        let type_id = event.varint("the metadata event's type")?;
        if type_id != METADATA_EVENT_ID {
            return Err(ReadError::Malformed {
                offset: start,
                expected: format!("the metadata event (type 0), found type {type_id}"),
            });
        }
        event.varint("the metadata start time")?;
        event.varint("the metadata duration")?;
        let id = event.varint("the metadata id")?;
        let count = event.count("the metadata string count")?;
        let mut strings = Vec::with_capacity(count.min(MAX_RESERVE));
        for _ in 0..count {
            strings.push(event.string("a metadata string")?.unwrap_or_default());
        }
        let root = Element::read(&mut event, &strings, 0)?;
        let mut classes = Vec::new();
        for child in &root.children {
            if child.name == element::METADATA {
                for class in &child.children {
                    classes.push(class_info(class)?);
                }
            }
        }
        // A class id declared twice: the last declaration wins.
        let by_id: IdMap<u64, usize> = classes.iter().enumerate().map(|(i, c)| (c.id, i)).collect();
        for class in &mut classes {
            for field in &mut class.fields {
                field.class_index = by_id.get(&field.class_id).copied();
            }
        }
        Ok(Self { id, classes, by_id })
    }
}

/// One element of the tree, with its strings resolved.
struct Element<'s> {
    offset: u64,
    name: &'s str,
    attributes: Vec<(&'s str, &'s str)>,
    children: Vec<Element<'s>>,
}

impl<'s> Element<'s> {
    fn read(
        cursor: &mut Cursor<'_>,
        strings: &'s [String],
        depth: usize,
    ) -> Result<Self, ReadError> {
        let offset = cursor.offset();
        if depth > MAX_DEPTH {
            return Err(cursor.error(format!("metadata elements nested at most {MAX_DEPTH} deep")));
        }
        let string = |cursor: &mut Cursor<'_>, what: &str| -> Result<&'s str, ReadError> {
            let at = cursor.offset();
            let index = cursor.varint(what)?;
            strings
                .get(index as usize)
                .map(String::as_str)
                .ok_or_else(|| ReadError::Malformed {
                    offset: at,
                    expected: format!("{what}: an index below {}, found {index}", strings.len()),
                })
        };
        let name = string(cursor, "an element name")?;
        let attribute_count = cursor.count("an attribute count")?;
        let mut attributes = Vec::with_capacity(attribute_count.min(MAX_RESERVE));
        for _ in 0..attribute_count {
            attributes.push((
                string(cursor, "an attribute name")?,
                string(cursor, "an attribute value")?,
            ));
        }
        let child_count = cursor.count("a child count")?;
        let mut children = Vec::with_capacity(child_count.min(MAX_RESERVE));
        for _ in 0..child_count {
            children.push(Element::read(cursor, strings, depth + 1)?);
        }
        Ok(Self {
            offset,
            name,
            attributes,
            children,
        })
    }

    fn attribute(&self, name: &str) -> Option<&'s str> {
        self.attributes
            .iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| *v)
    }

    /// Present and not "false": the JDK tests presence, Mission Control the value.
    fn flag(&self, name: &str) -> bool {
        self.attribute(name).is_some_and(|v| v != "false")
    }

    fn id(&self, name: &str) -> Result<u64, ReadError> {
        let text = self.attribute(name).ok_or_else(|| ReadError::Malformed {
            offset: self.offset,
            expected: format!("a '{name}' attribute on <{}>", self.name),
        })?;
        text.parse().map_err(|_| ReadError::Malformed {
            offset: self.offset,
            expected: format!("a number in '{name}' of <{}>, found {text:?}", self.name),
        })
    }

    fn annotations(&self) -> Result<Vec<AnnotationInfo>, ReadError> {
        self.children
            .iter()
            .filter(|c| c.name == element::ANNOTATION)
            .map(|a| {
                Ok(AnnotationInfo {
                    class_id: a.id(attribute::CLASS)?,
                    values: a
                        .attributes
                        .iter()
                        .filter(|(k, _)| *k != attribute::CLASS)
                        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                        .collect(),
                })
            })
            .collect()
    }
}

fn class_info(element: &Element<'_>) -> Result<ClassInfo, ReadError> {
    if element.name != element::CLASS {
        return Err(ReadError::Malformed {
            offset: element.offset,
            expected: format!("a <class> element in <metadata>, found <{}>", element.name),
        });
    }
    let name = element
        .attribute(attribute::NAME)
        .ok_or_else(|| ReadError::Malformed {
            offset: element.offset,
            expected: "a 'name' attribute on <class>".to_owned(),
        })?;
    let fields = element
        .children
        .iter()
        .filter(|c| c.name == element::FIELD)
        .map(|f| {
            Ok(FieldInfo {
                name: f.attribute(attribute::NAME).unwrap_or_default().to_owned(),
                class_id: f.id(attribute::CLASS)?,
                constant_pool: f.flag(attribute::CONSTANT_POOL),
                array: f.attribute(attribute::DIMENSION).is_some_and(|d| d == "1"),
                annotations: f.annotations()?,
                class_index: None,
            })
        })
        .collect::<Result<_, ReadError>>()?;
    Ok(ClassInfo {
        id: element.id(attribute::ID)?,
        name: name.to_owned(),
        super_type: element.attribute(attribute::SUPER_TYPE).map(str::to_owned),
        simple_type: element.flag(attribute::SIMPLE_TYPE),
        fields,
        annotations: element.annotations()?,
        kind: Kind::of(name),
    })
}
