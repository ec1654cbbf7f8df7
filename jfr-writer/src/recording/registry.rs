//! The recording's types: event types and value types registered,
//! checked and declared in its metadata ([`Registry`]), and constants of
//! value types.
//!
//! Invariants: a type's name is registered once; a type's fields are
//! checked before it is declared, so a refused type changes nothing; types
//! are only ever added, so the newest metadata describes every event before
//! it.

use std::sync::atomic::AtomicUsize;

use crate::error::Error;
use crate::event::{
    EventType, EventTypeBuilder, Mismatch, Value, ValueType, ValueTypeBuilder, write_value,
};
use crate::field::{FieldSpec, Unit, ValueTypeId};
use crate::metadata::{Annotation, ClassId, FieldDecl, Metadata, SettingDecl};
use crate::pool::ConstantRef;
use crate::types::{StandardTypes, annotation, annotation_array, marker};
use jfr_format::names::{class as class_name, field as field_name, unit as unit_name};

use super::{Recording, Sink};

/// The types a recording declares: its metadata, with the JDK's standard
/// types and the pooled classes from the start, then each type registered.
#[derive(Debug)]
pub(super) struct Registry {
    /// The recording's id, on every type registered, so that another
    /// recording refuses it.
    recording_id: u64,
    pub(super) metadata: Metadata,
    pub(super) types: StandardTypes,
    /// Value types reserved by name and not registered yet.
    reserved: Vec<ClassId>,
    /// Value types registered, for struct fields given as their fields
    /// ([`crate::EventWriter::struct_fields`]).
    value_types: Vec<ValueType>,
}

impl Registry {
    /// The metadata of a recording `recording_id` before any type is
    /// registered.
    pub(super) fn new(recording_id: u64) -> Self {
        let mut metadata = Metadata::empty();
        let types = StandardTypes::declare(&mut metadata);
        crate::pool::declare_classes(&mut metadata, &types);
        Self {
            recording_id,
            metadata,
            types,
            reserved: Vec::new(),
            value_types: Vec::new(),
        }
    }

    /// See [`Recording::register`].
    fn register(&mut self, builder: EventTypeBuilder) -> Result<EventType, Error> {
        self.check_new_type(&builder.name, &builder.fields)?;
        self.declare_relations(&builder.fields);
        let t = self.types;
        let id = self.metadata.reserve(&builder.name);
        let field = |name: &str, class, constant_pool, annotations| FieldDecl {
            name: name.to_owned(),
            class,
            constant_pool,
            array: false,
            annotations,
        };
        let mut fields = vec![field(
            field_name::START_TIME,
            t.long,
            false,
            vec![
                t.label("Start Time"),
                annotation(t.timestamp, unit_name::TICKS),
            ],
        )];
        if builder.duration {
            fields.push(field(
                field_name::DURATION,
                t.long,
                false,
                vec![
                    t.label("Duration"),
                    annotation(t.timespan, unit_name::TICKS),
                ],
            ));
        }
        if builder.thread {
            fields.push(field(
                field_name::EVENT_THREAD,
                t.thread,
                true,
                vec![
                    t.label("Event Thread"),
                    t.describe("Thread in which event was committed in"),
                ],
            ));
        }
        if builder.stack_trace {
            fields.push(field(
                field_name::STACK_TRACE,
                t.stack_trace,
                true,
                vec![
                    t.label("Stack Trace"),
                    t.describe("Stack Trace starting from the method the event was committed in"),
                ],
            ));
        }
        for spec in &builder.fields {
            fields.push(self.field_decl(spec));
        }

        let mut annotations = Vec::new();
        if !builder.category.is_empty() {
            let path: Vec<&str> = builder.category.iter().map(String::as_str).collect();
            annotations.push(annotation_array(t.category, &path));
        }
        self.label_and_description(&mut annotations, &builder.label, &builder.description);
        if builder.experimental {
            annotations.push(marker(t.experimental));
        }
        let settings = builder
            .settings
            .iter()
            .map(|(setting, default_value)| SettingDecl {
                name: setting.name().to_owned(),
                class: t.setting(*setting),
                default_value: default_value.clone(),
                annotations: Vec::new(),
            })
            .collect();
        let class = self.metadata.class_mut(id);
        class.super_type = Some(class_name::EVENT);
        class.fields = fields;
        class.settings = settings;
        class.annotations = annotations;

        let layout = builder.layout();
        Ok(EventType {
            id,
            name: builder.name.as_str().into(),
            typed_write: std::sync::Arc::new(AtomicUsize::new(0)),
            fields: layout[1..].into(),
            field_names: builder.field_names().into(),
            recording_id: self.recording_id,
        })
    }

    /// See [`Recording::reserve_value_type`].
    fn reserve_value_type(&mut self, name: &str) -> Result<ValueTypeId, Error> {
        if self.metadata.class_id(name).is_some() {
            return Err(Error::DuplicateType {
                name: name.to_owned(),
            });
        }
        let id = self.metadata.reserve(name);
        self.reserved.push(id);
        Ok(ValueTypeId(id))
    }

    /// See [`Recording::register_value_type`].
    fn register_value_type(&mut self, builder: ValueTypeBuilder) -> Result<ValueType, Error> {
        let reserved = self
            .metadata
            .class_id(&builder.name)
            .filter(|id| self.reserved.contains(id));
        if reserved.is_none() {
            self.check_new_type(&builder.name, &builder.fields)?;
        } else {
            self.check_fields(&builder.name, &builder.fields)?;
        }
        if builder.simple && builder.fields.len() != 1 {
            return Err(Error::NotSimple {
                type_name: builder.name.clone(),
                fields: builder.fields.len(),
            });
        }
        self.declare_relations(&builder.fields);
        let id = match reserved {
            Some(id) => {
                self.reserved.retain(|&r| r != id);
                id
            }
            None => self.metadata.reserve(&builder.name),
        };
        let fields = builder
            .fields
            .iter()
            .map(|spec| self.field_decl(spec))
            .collect();
        let mut annotations = Vec::new();
        self.label_and_description(&mut annotations, &builder.label, &builder.description);
        let class = self.metadata.class_mut(id);
        class.fields = fields;
        class.annotations = annotations;
        class.simple_type = builder.simple;
        let value_type = ValueType {
            id: ValueTypeId(id),
            name: builder.name.as_str().into(),
            fields: builder.fields.iter().map(FieldSpec::slot).collect(),
            field_names: builder.fields.iter().map(|f| f.name.clone()).collect(),
            recording_id: self.recording_id,
        };
        self.value_types.push(value_type.clone());
        Ok(value_type)
    }

    /// The registered value type `id`.
    fn value_type(&self, id: ValueTypeId) -> Option<&ValueType> {
        self.value_types
            .iter()
            .find(|value_type| value_type.id == id)
    }

    /// Declares the relation annotations `fields` use and the recording
    /// does not declare yet.
    fn declare_relations(&mut self, fields: &[FieldSpec]) {
        for name in fields.iter().filter_map(|f| f.relation.as_deref()) {
            if self.metadata.class_id(name).is_none() {
                let id = self.metadata.reserve(name);
                let relational = marker(self.types.relational);
                let class = self.metadata.class_mut(id);
                class.super_type = Some(class_name::ANNOTATION);
                class.annotations = vec![relational];
            }
        }
    }

    /// A new type needs a new name, and no array of pooled values.
    fn check_new_type(&self, name: &str, fields: &[FieldSpec]) -> Result<(), Error> {
        if self.metadata.class_id(name).is_some() {
            return Err(Error::DuplicateType {
                name: name.to_owned(),
            });
        }
        self.check_fields(name, fields)
    }

    /// No array of pooled values, which the JDK cannot read.
    fn check_fields(&self, name: &str, fields: &[FieldSpec]) -> Result<(), Error> {
        if let Some(field) = fields
            .iter()
            .find(|f| f.array && self.field_decl(f).constant_pool)
        {
            return Err(Error::PooledArray {
                type_name: name.to_owned(),
                field: field.name.clone(),
            });
        }
        Ok(())
    }

    /// The metadata declaration of a field.
    fn field_decl(&self, spec: &FieldSpec) -> FieldDecl {
        let t = self.types;
        let (class, constant_pool) = t.class_of(spec.field_type);
        let mut annotations = Vec::new();
        if spec.unsigned {
            annotations.push(marker(t.unsigned));
        }
        annotations.extend(spec.relation.as_deref().map(|name| {
            marker(
                self.metadata
                    .class_id(name)
                    .expect("relations are declared before their fields"),
            )
        }));
        if let Some(unit) = spec.unit {
            annotations.extend(self.unit_annotations(unit));
        }
        self.label_and_description(&mut annotations, &spec.label, &spec.description);
        FieldDecl {
            name: spec.name.clone(),
            class,
            constant_pool,
            array: spec.array,
            annotations,
        }
    }

    /// The annotations of a unit: one, or for a rate two (see
    /// [`Unit::BytesPerSecond`] for their order).
    fn unit_annotations(&self, unit: Unit) -> Vec<Annotation> {
        let t = self.types;
        let one = match unit {
            Unit::BytesPerSecond => {
                return vec![
                    marker(t.frequency),
                    annotation(t.data_amount, unit_name::BYTES),
                ];
            }
            Unit::Bytes => annotation(t.data_amount, unit_name::BYTES),
            Unit::Bits => annotation(t.data_amount, unit_name::BITS),
            Unit::TimestampTicks => annotation(t.timestamp, unit_name::TICKS),
            Unit::TimestampMillisSinceEpoch => {
                annotation(t.timestamp, unit_name::MILLISECONDS_SINCE_EPOCH)
            }
            Unit::TimespanTicks => annotation(t.timespan, unit_name::TICKS),
            Unit::TimespanNanos => annotation(t.timespan, unit_name::NANOSECONDS),
            Unit::TimespanMillis => annotation(t.timespan, unit_name::MILLISECONDS),
            Unit::TimespanSeconds => annotation(t.timespan, unit_name::SECONDS),
            Unit::Percentage => marker(t.percentage),
            Unit::Frequency => marker(t.frequency),
            Unit::MemoryAddress => marker(t.memory_address),
        };
        vec![one]
    }

    /// The label and description annotations a type or field is given, if
    /// any.
    fn label_and_description(
        &self,
        annotations: &mut Vec<Annotation>,
        label: &Option<String>,
        description: &Option<String>,
    ) {
        annotations.extend(label.as_deref().map(|l| self.types.label(l)));
        annotations.extend(description.as_deref().map(|d| self.types.describe(d)));
    }
}

impl<S: Sink> Recording<S> {
    /// Registers an event type. Registering the same name twice is an error.
    pub fn register(&mut self, builder: EventTypeBuilder) -> Result<EventType, Error> {
        self.registry.register(builder)
    }

    /// Reserves the name of a value type, to declare fields of it before it
    /// is registered: value types that refer to each other
    /// (`jdk.types.OldObject` and `jdk.types.Reference`). Register it later
    /// with [`Recording::register_value_type`] under the same name.
    pub fn reserve_value_type(&mut self, name: &str) -> Result<ValueTypeId, Error> {
        self.registry.reserve_value_type(name)
    }

    /// Registers a value type: a struct that fields of events (and of other
    /// value types) hold inline, declared with [`FieldType::Struct`](crate::FieldType::Struct), or by
    /// key as a constant of the chunk, declared with [`FieldType::Constant`](crate::FieldType::Constant).
    pub fn register_value_type(&mut self, builder: ValueTypeBuilder) -> Result<ValueType, Error> {
        self.registry.register_value_type(builder)
    }

    /// The registered value type `id`.
    pub(crate) fn value_type(&self, id: ValueTypeId) -> Option<&ValueType> {
        self.registry.value_type(id)
    }

    /// Makes a constant of `value_type` from its fields, for
    /// [`FieldType::Constant`](crate::FieldType::Constant) fields of events and other constants in this
    /// chunk. Equal constants made in one chunk share one key. The constant
    /// is written with the chunk's next flush and is valid until the chunk
    /// ends: an event or constant of a later chunk that refers to it fails
    /// with [`Error::StaleConstant`]. So make constants right before the
    /// events that use them.
    pub fn constant(
        &mut self,
        value_type: &ValueType,
        fields: &[Value<'_>],
    ) -> Result<ConstantRef, Error> {
        if value_type.recording_id != self.id {
            return Err(Error::ForeignEventType {
                event: value_type.name.to_string(),
            });
        }
        let mut encoded = std::mem::take(&mut self.constant_scratch);
        encoded.clear();
        let mut result = Ok(());
        for (index, slot) in value_type.fields.iter().enumerate() {
            let field = || value_type.field_names[index].clone();
            let written = match fields.get(index) {
                Some(value) => write_value(&mut encoded, &mut self.pools, self.id, *slot, value),
                None => {
                    result = Err(Error::MissingField {
                        event: value_type.name.to_string(),
                        field: field(),
                    });
                    break;
                }
            };
            match written {
                Ok(()) => {}
                Err(Mismatch::Type) => {
                    result = Err(Error::FieldMismatch {
                        event: value_type.name.to_string(),
                        field: field(),
                        declared: Some(format!("{:?}", slot.field_type)),
                        written: fields[index].field_type().map_or_else(
                            || "an array, struct or array element of another type".to_owned(),
                            |w| format!("{w:?}"),
                        ),
                    });
                    break;
                }
                Err(Mismatch::Stale) => {
                    result = Err(Error::StaleConstant {
                        event: value_type.name.to_string(),
                        field: field(),
                    });
                    break;
                }
            }
        }
        if result.is_ok() && fields.len() > value_type.fields.len() {
            result = Err(Error::FieldMismatch {
                event: value_type.name.to_string(),
                field: "(none: all fields are written)".to_owned(),
                declared: None,
                written: format!("{} fields", fields.len()),
            });
        }
        let made = result.map(|()| {
            let (key, chunk) = self.pools.constant(value_type.id.0, &encoded);
            ConstantRef {
                class: value_type.id.0,
                key,
                chunk,
                recording: self.id,
            }
        });
        self.constant_scratch = encoded;
        made
    }
}
