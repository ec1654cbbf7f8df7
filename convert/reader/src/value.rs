//! Generic values: any value of any declared class, decoded by its class
//! into a [`Value`] tree. Constant pools hold values of arbitrary classes,
//! and an event field that is neither a number, a string nor a pool key
//! (an array, an inline object, a float, a char) is decoded this way too.
//!
//! Decoding is bounded: inline values nest at most 32 deep, and the bytes
//! of one event or checkpoint decode to at most a fixed multiple of their
//! number of values.

use jfr_format::StringEncoding;

use crate::ReadError;
use crate::cursor::Cursor;
use crate::metadata::{ClassInfo, FieldInfo, Kind, Metadata};

/// Inline values nest at most this deep (a hostile metadata could declare a
/// class that contains itself).
pub(crate) const MAX_NESTING: usize = 32;

/// Vectors sized by a count from the file reserve at most this many items
/// up front. Counts are checked against the bytes left, but an item of one
/// byte decodes to a [`Value`] of 40: reserving what a corrupt count says
/// would let it claim 40 bytes of memory per byte of the chunk before the
/// first item fails. Past this, vectors grow with the items really read.
pub(crate) const MAX_RESERVE: usize = 1024;

/// How many values the bytes of one event or checkpoint may decode to.
///
/// Every value either takes bytes of its own (a primitive, a string, a pool
/// key and an array's length each take at least one) or is an object, and an
/// object whose class has a field that takes bytes has such a value among
/// its at most `MAX_NESTING + 1` levels of descendants. So well-formed data
/// of `n` bytes decodes to at most `(MAX_NESTING + 2) * n` values, and this
/// budget never refuses it. What it refuses is a class whose values take no
/// bytes (no fields, or only fields of such classes), which a hostile
/// metadata can nest into billions of values read out of nothing, or repeat
/// in an array as long as the bytes left.
pub(crate) fn value_budget(bytes: usize) -> u64 {
    (MAX_NESTING as u64 + 2) * (bytes as u64 + 1)
}

/// Takes one value from `budget`, or fails at the cursor when none is left.
#[inline]
pub(crate) fn spend(cursor: &Cursor<'_>, budget: &mut u64) -> Result<(), ReadError> {
    match budget.checked_sub(1) {
        Some(left) => {
            *budget = left;
            Ok(())
        }
        None => Err(over_budget(cursor)),
    }
}

#[cold]
fn over_budget(cursor: &Cursor<'_>) -> ReadError {
    cursor.error(
        "values that take bytes, but these bytes decode to more values than they can \
         hold (a class whose values take no bytes?)",
    )
}

/// A value, decoded by its class in the metadata.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// `null` (a null string, or a pool key with no entry).
    Null,
    /// `boolean`.
    Boolean(bool),
    /// `byte`.
    Byte(i8),
    /// `short`.
    Short(i16),
    /// `char`, as a UTF-16 code unit.
    Char(u16),
    /// `int`.
    Int(i32),
    /// `long`.
    Long(i64),
    /// `float`.
    Float(f32),
    /// `double`.
    Double(f64),
    /// `java.lang.String`.
    String(String),
    /// An array.
    Array(Vec<Value>),
    /// An instance of a class with fields, in the metadata's field order.
    Object {
        /// The class id.
        class_id: u64,
        /// The field values.
        fields: Vec<Value>,
    },
    /// A constant-pool reference, resolved with
    /// [`Chunk::resolve`](super::chunk::Chunk::resolve).
    Ref {
        /// The pool's class id.
        class_id: u64,
        /// The key.
        key: u64,
    },
}

/// Decodes one value of `class`, taking one from `budget` (see
/// [`value_budget`]).
pub(crate) fn read_value(
    metadata: &Metadata,
    cursor: &mut Cursor<'_>,
    class: &ClassInfo,
    depth: usize,
    budget: &mut u64,
) -> Result<Value, ReadError> {
    spend(cursor, budget)?;
    Ok(match class.kind {
        Kind::Boolean => Value::Boolean(cursor.u8("a boolean")? != 0),
        Kind::Byte => Value::Byte(cursor.u8("a byte")? as i8),
        Kind::Short => Value::Short(cursor.varint("a short")? as i16),
        Kind::Char => Value::Char(cursor.varint("a char")? as u16),
        Kind::Int => Value::Int(cursor.varint("an int")? as i32),
        Kind::Long => Value::Long(cursor.varint("a long")? as i64),
        Kind::Float => Value::Float(f32::from_be_bytes(cursor.array("a float")?)),
        Kind::Double => Value::Double(f64::from_be_bytes(cursor.array("a double")?)),
        Kind::String => {
            let mut peek = cursor.clone();
            if peek.u8("a string")? == StringEncoding::ConstantPool as u8 {
                *cursor = peek;
                Value::Ref {
                    class_id: class.id,
                    key: cursor.varint("a string pool key")?,
                }
            } else {
                cursor
                    .string("a string")?
                    .map_or(Value::Null, Value::String)
            }
        }
        Kind::Object => Value::Object {
            class_id: class.id,
            fields: read_fields(metadata, cursor, class, depth, budget)?,
        },
    })
}

/// Decodes the fields of a value of `class`, in the metadata's order.
pub(crate) fn read_fields(
    metadata: &Metadata,
    cursor: &mut Cursor<'_>,
    class: &ClassInfo,
    depth: usize,
    budget: &mut u64,
) -> Result<Vec<Value>, ReadError> {
    if depth >= MAX_NESTING {
        return Err(cursor.error(format!("values nested at most {MAX_NESTING} deep")));
    }
    let mut fields = Vec::with_capacity(class.fields.len());
    for field in &class.fields {
        fields.push(read_field(metadata, cursor, field, depth, budget)?);
    }
    Ok(fields)
}

/// Decodes one field of a value at `depth` (below [`MAX_NESTING`]), as
/// [`read_fields`] does: an array of items, or one item, each a pool
/// reference or a value of the field's class. The event decoder reads the
/// fields it has no plan of its own for through this, so both decode (and
/// fail) alike.
// Inlined into `read_fields`: it is the innermost loop of decoding pools.
#[inline(always)]
pub(crate) fn read_field(
    metadata: &Metadata,
    cursor: &mut Cursor<'_>,
    field: &FieldInfo,
    depth: usize,
    budget: &mut u64,
) -> Result<Value, ReadError> {
    let field_class = metadata.field_class(field).ok_or_else(|| {
        cursor.error(format!(
            "field {} of a declared class, found id {}",
            field.name, field.class_id
        ))
    })?;
    let mut one = |cursor: &mut Cursor<'_>| -> Result<Value, ReadError> {
        if field.constant_pool {
            spend(cursor, budget)?;
            Ok(Value::Ref {
                class_id: field.class_id,
                key: cursor.varint("a pool key")?,
            })
        } else {
            read_value(metadata, cursor, field_class, depth + 1, budget)
        }
    };
    Ok(if field.array {
        let count = cursor.count("an array length")?;
        let mut items = Vec::with_capacity(count.min(MAX_RESERVE));
        for _ in 0..count {
            items.push(one(cursor)?);
        }
        Value::Array(items)
    } else {
        one(cursor)?
    })
}
