//! The standard types every recording declares, named, laid out and annotated
//! exactly as JDK 17 declares them (`jfr metadata`), so every tool that reads
//! JDK recordings reads ours: primitives, `java.lang.String`, the `jdk.jfr`
//! annotation types, and the constant-pool types (`java.lang.Thread`,
//! `java.lang.Class`, `jdk.types.StackTrace`, ...).
//!
//! The classes of the pools are declared with the pools
//! ([`crate::pool`]), each value's fields in the order its entries are
//! encoded; this module gives them their ids.

use crate::field::{FieldType, ValueTypeId};
use crate::metadata::{Annotation, ClassDecl, ClassId, FieldDecl, Metadata};
use jfr_format::names::{
    annotation as annotation_name, attribute, class as class_name, setting as setting_name,
    unit as unit_name,
};

/// A setting of an event type, as the JDK declares them (`jdk.settings.*`):
/// what a recording's configuration may set for the event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Setting {
    /// `enabled`: whether the event is recorded.
    Enabled,
    /// `stackTrace`: whether stack traces are recorded.
    StackTrace,
    /// `threshold`: the shortest duration recorded.
    Threshold,
    /// `period`: how often a periodic event is emitted.
    Period,
    /// `throttle`: the most events per time unit.
    Throttle,
    /// `cutoff`: the longest running time.
    Cutoff,
}

impl Setting {
    /// The setting's name in the metadata.
    pub fn name(self) -> &'static str {
        match self {
            Self::Enabled => setting_name::ENABLED,
            Self::StackTrace => setting_name::STACK_TRACE,
            Self::Threshold => setting_name::THRESHOLD,
            Self::Period => setting_name::PERIOD,
            Self::Throttle => setting_name::THROTTLE,
            Self::Cutoff => setting_name::CUTOFF,
        }
    }
}

/// The ids of the standard classes in one recording's metadata.
#[derive(Debug, Clone, Copy)]
#[allow(missing_docs)] // Each field is the class its name says.
pub struct StandardTypes {
    pub boolean: ClassId,
    pub byte: ClassId,
    pub short: ClassId,
    pub char: ClassId,
    pub int: ClassId,
    pub long: ClassId,
    pub float: ClassId,
    pub double: ClassId,
    pub string: ClassId,

    pub label: ClassId,
    pub description: ClassId,
    pub category: ClassId,
    pub experimental: ClassId,
    pub name: ClassId,
    pub content_type: ClassId,
    pub timestamp: ClassId,
    pub timespan: ClassId,
    pub data_amount: ClassId,
    pub unsigned: ClassId,
    pub percentage: ClassId,
    pub frequency: ClassId,
    pub memory_address: ClassId,
    pub boolean_flag: ClassId,
    pub relational: ClassId,
    pub stack_trace_annotation: ClassId,
    pub enabled: ClassId,

    pub thread: ClassId,
    pub thread_group: ClassId,
    pub class: ClassId,
    pub class_loader: ClassId,
    pub package: ClassId,
    pub module: ClassId,
    pub method: ClassId,
    pub stack_trace: ClassId,
    pub stack_frame: ClassId,
    pub frame_type: ClassId,
    pub symbol: ClassId,

    /// The `jdk.settings.*` classes, in the order of [`Setting`]'s variants.
    pub settings: [ClassId; 6],
}

// `StandardTypes::class_of`, with an arm for each pooled type a field can
// hold, from the one table (`pooled_field_types!`).
macro_rules! class_of {
    ($( $(#[$doc:meta])* $variant:ident($reference:ident) in $pool:ident, $one:ident; )*) => {
        impl StandardTypes {
            /// The class of a field of type `field_type`, and whether the
            /// field holds it by key (in a pool).
            pub(crate) fn class_of(&self, field_type: FieldType) -> (ClassId, bool) {
                match field_type {
                    FieldType::Boolean => (self.boolean, false),
                    FieldType::Byte => (self.byte, false),
                    FieldType::Short => (self.short, false),
                    FieldType::Char => (self.char, false),
                    FieldType::Int => (self.int, false),
                    FieldType::Long => (self.long, false),
                    FieldType::Float => (self.float, false),
                    FieldType::Double => (self.double, false),
                    FieldType::String => (self.string, false),
                    $( FieldType::$variant => (self.$one, true), )*
                    FieldType::Struct(ValueTypeId(class)) => (class, false),
                    FieldType::Constant(ValueTypeId(class)) => (class, true),
                }
            }
        }
    };
}

pooled_field_types!(class_of);

/// An annotation with one element, `value`.
pub(crate) fn annotation(class: ClassId, value: &str) -> Annotation {
    Annotation {
        class,
        values: vec![(attribute::VALUE.to_owned(), value.to_owned())],
    }
}

/// An annotation with an array element: `value-0`, `value-1`, ...
pub(crate) fn annotation_array(class: ClassId, values: &[&str]) -> Annotation {
    Annotation {
        class,
        values: values
            .iter()
            .enumerate()
            .map(|(i, value)| (format!("{}-{i}", attribute::VALUE), (*value).to_owned()))
            .collect(),
    }
}

/// An annotation without elements (`Unsigned`, `ContentType`, ...).
pub(crate) fn marker(class: ClassId) -> Annotation {
    Annotation {
        class,
        values: Vec::new(),
    }
}

fn field(name: &str, class: ClassId, annotations: Vec<Annotation>) -> FieldDecl {
    FieldDecl {
        name: name.to_owned(),
        class,
        constant_pool: false,
        array: false,
        annotations,
    }
}

impl StandardTypes {
    /// Declares the standard types in `metadata` and returns their ids.
    pub(crate) fn declare(metadata: &mut Metadata) -> Self {
        let mut reserve = |name: &str| metadata.reserve(name);
        let primitives = [
            class_name::BOOLEAN,
            class_name::BYTE,
            class_name::SHORT,
            class_name::CHAR,
            class_name::INT,
            class_name::LONG,
            class_name::FLOAT,
            class_name::DOUBLE,
        ]
        .map(&mut reserve);
        let string = reserve(class_name::STRING);
        let annotations = [
            annotation_name::LABEL,
            annotation_name::DESCRIPTION,
            annotation_name::CATEGORY,
            annotation_name::EXPERIMENTAL,
            annotation_name::NAME,
            annotation_name::CONTENT_TYPE,
            annotation_name::TIMESTAMP,
            annotation_name::TIMESPAN,
            annotation_name::DATA_AMOUNT,
            annotation_name::UNSIGNED,
            annotation_name::PERCENTAGE,
            annotation_name::FREQUENCY,
            annotation_name::MEMORY_ADDRESS,
            annotation_name::BOOLEAN_FLAG,
            annotation_name::RELATIONAL,
            annotation_name::STACK_TRACE,
            annotation_name::ENABLED,
        ]
        .map(&mut reserve);
        let pools = [
            class_name::THREAD,
            class_name::THREAD_GROUP,
            class_name::CLASS,
            class_name::CLASS_LOADER,
            class_name::PACKAGE,
            class_name::MODULE,
            class_name::METHOD,
            class_name::STACK_TRACE,
            class_name::STACK_FRAME,
            class_name::FRAME_TYPE,
            class_name::SYMBOL,
        ]
        .map(&mut reserve);
        let settings = [
            setting_name::ENABLED_CLASS,
            setting_name::STACK_TRACE_CLASS,
            setting_name::THRESHOLD_CLASS,
            setting_name::PERIOD_CLASS,
            setting_name::THROTTLE_CLASS,
            setting_name::CUTOFF_CLASS,
        ]
        .map(&mut reserve);
        let [boolean, byte, short, char, int, long, float, double] = primitives;
        let [
            label,
            description,
            category,
            experimental,
            name,
            content_type,
            timestamp,
            timespan,
            data_amount,
            unsigned,
            percentage,
            frequency,
            memory_address,
            boolean_flag,
            relational,
            stack_trace_annotation,
            enabled,
        ] = annotations;
        let [
            thread,
            thread_group,
            class,
            class_loader,
            package,
            module,
            method,
            stack_trace,
            stack_frame,
            frame_type,
            symbol,
        ] = pools;
        let types = Self {
            boolean,
            byte,
            short,
            char,
            int,
            long,
            float,
            double,
            string,
            label,
            description,
            category,
            experimental,
            name,
            content_type,
            timestamp,
            timespan,
            data_amount,
            unsigned,
            percentage,
            frequency,
            memory_address,
            boolean_flag,
            relational,
            stack_trace_annotation,
            enabled,
            thread,
            thread_group,
            class,
            class_loader,
            package,
            module,
            method,
            stack_trace,
            stack_frame,
            frame_type,
            symbol,
            settings,
        };
        types.fill_annotation_types(metadata);
        types.fill_setting_types(metadata);
        types
    }

    /// `@Label(text)`.
    pub fn label(&self, text: &str) -> Annotation {
        annotation(self.label, text)
    }

    /// `@Description(text)`.
    pub fn describe(&self, text: &str) -> Annotation {
        annotation(self.description, text)
    }

    fn fill_annotation_types(&self, metadata: &mut Metadata) {
        let t = *self;
        let annotation_type = |metadata: &mut Metadata,
                               id: ClassId,
                               fields: Vec<FieldDecl>,
                               annotations: Vec<Annotation>| {
            let decl: &mut ClassDecl = metadata.class_mut(id);
            decl.super_type = Some(class_name::ANNOTATION);
            decl.fields = fields;
            decl.annotations = annotations;
        };
        let value = |class: ClassId| vec![field(attribute::VALUE, class, Vec::new())];
        let string_array = vec![FieldDecl {
            array: true,
            ..field(attribute::VALUE, t.string, Vec::new())
        }];
        // A unit annotation: marked @ContentType so `jfr print` formats units.
        let unit = |label: &str, description: Option<&str>| {
            let mut annotations = vec![marker(t.content_type), t.label(label)];
            annotations.extend(description.map(|d| t.describe(d)));
            annotations
        };

        annotation_type(metadata, t.label, value(t.string), Vec::new());
        annotation_type(metadata, t.description, value(t.string), Vec::new());
        annotation_type(metadata, t.category, string_array, Vec::new());
        annotation_type(
            metadata,
            t.experimental,
            Vec::new(),
            vec![
                t.label("Experimental"),
                t.describe("Element is not to be shown to a user by default"),
            ],
        );
        annotation_type(metadata, t.name, value(t.string), Vec::new());
        annotation_type(
            metadata,
            t.content_type,
            Vec::new(),
            vec![
                t.label("Content Type"),
                t.describe("Semantic meaning of a value"),
            ],
        );
        annotation_type(
            metadata,
            t.timestamp,
            value(t.string),
            unit("Timestamp", Some("A point in time")),
        );
        annotation_type(
            metadata,
            t.timespan,
            value(t.string),
            unit(
                "Timespan",
                Some("A duration, measured in nanoseconds by default"),
            ),
        );
        annotation_type(
            metadata,
            t.data_amount,
            value(t.string),
            unit("Data Amount", Some("Amount of data")),
        );
        annotation_type(
            metadata,
            t.unsigned,
            Vec::new(),
            unit(
                "Unsigned Value",
                Some("Value should be interpreted as unsigned data type"),
            ),
        );
        annotation_type(
            metadata,
            t.percentage,
            Vec::new(),
            unit(
                "Percentage",
                Some("Percentage, represented as a number between 0 and 1"),
            ),
        );
        annotation_type(
            metadata,
            t.frequency,
            Vec::new(),
            unit(
                "Frequency",
                Some("Measure of how often something occurs, in Hertz"),
            ),
        );
        annotation_type(
            metadata,
            t.memory_address,
            Vec::new(),
            unit(
                "Memory Address",
                Some("Represents a physical memory address"),
            ),
        );
        annotation_type(metadata, t.boolean_flag, Vec::new(), unit("Flag", None));
        annotation_type(
            metadata,
            t.relational,
            Vec::new(),
            vec![t.label("Relation")],
        );
        annotation_type(
            metadata,
            t.stack_trace_annotation,
            value(t.boolean),
            Vec::new(),
        );
        annotation_type(metadata, t.enabled, value(t.boolean), Vec::new());
    }

    /// The class of `setting`.
    pub fn setting(&self, setting: Setting) -> ClassId {
        self.settings[setting as usize]
    }

    fn fill_setting_types(&self, metadata: &mut Metadata) {
        let t = *self;
        let nanos = annotation(t.timespan, unit_name::NANOSECONDS);
        let flag = marker(t.boolean_flag);
        for (setting, label, description, unit) in [
            (
                Setting::Enabled,
                "Enabled",
                "Record event",
                Some(flag.clone()),
            ),
            (
                Setting::StackTrace,
                "Stack Trace",
                "Record stack traces",
                Some(flag),
            ),
            (
                Setting::Threshold,
                "Threshold",
                "Record event with duration above or equal to threshold",
                Some(nanos.clone()),
            ),
            (Setting::Period, "Period", "Record event at interval", None),
            (
                Setting::Throttle,
                "Event Emission Throttle",
                "Throttles the emission rate for an event",
                None,
            ),
            (
                Setting::Cutoff,
                "Cutoff",
                "Limit running time of event",
                Some(nanos),
            ),
        ] {
            let decl = metadata.class_mut(t.setting(setting));
            decl.super_type = Some(class_name::SETTING_CONTROL);
            decl.annotations = vec![t.label(label), t.describe(description)];
            decl.annotations.extend(unit);
        }
    }
}
