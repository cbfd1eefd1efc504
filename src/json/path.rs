//! Where reading a JSON value failed: a path (`messages[0].content`) kept
//! while a value is deserialized, so a typed error names the field.
//!
//! [`from_value`] reads a typed value (options, settings) out of a parsed
//! [`Value`] with the path of whatever it could not read; the strict request
//! parser keeps a [`Path`] the same way.

use std::cell::RefCell;
use std::fmt;

use serde::de::{self, DeserializeOwned, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde_json::{Error, Value};

/// One step of a [`Path`].
enum Segment {
    Key(String),
    Index(usize),
}

/// The path of the value being read: pushed on entering a member or an
/// element, popped once it was read, so after an error it names the place.
#[derive(Default)]
pub struct Path(RefCell<Vec<Segment>>);

impl Path {
    /// Enters member `key`.
    pub fn push_key(&self, key: String) {
        self.0.borrow_mut().push(Segment::Key(key));
    }

    /// Enters element `index`.
    pub fn push_index(&self, index: usize) {
        self.0.borrow_mut().push(Segment::Index(index));
    }

    /// Leaves the innermost member or element; a member gives its key back.
    pub fn pop(&self) -> Option<String> {
        match self.0.borrow_mut().pop() {
            Some(Segment::Key(key)) => Some(key),
            _ => None,
        }
    }
}

/// `a.b[2].c`; `.` for the root.
impl fmt::Display for Path {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let segments = self.0.borrow();
        if segments.is_empty() {
            return f.write_str(".");
        }
        for (i, segment) in segments.iter().enumerate() {
            match segment {
                Segment::Key(key) if i == 0 => f.write_str(key)?,
                Segment::Key(key) => write!(f, ".{key}")?,
                Segment::Index(index) => write!(f, "[{index}]")?,
            }
        }
        Ok(())
    }
}

/// Reads a `T` out of `value`; on failure, the path of the offending field
/// (`.` for `value` itself) and the error.
pub fn from_value<T: DeserializeOwned>(value: &Value) -> Result<T, (String, Error)> {
    let path = Path::default();
    T::deserialize(At { value, path: &path }).map_err(|e| (path.to_string(), e))
}

/// Reads `target` in place out of `value` (the settings keep their values
/// where `value` has none); on failure, the path and error [`from_value`]
/// would give for the same type deserialized with serde.
pub fn read_into<T: ReadInto>(target: &mut T, value: &Value) -> Result<(), (String, Error)> {
    let path = Path::default();
    target
        .read_into(At { value, path: &path })
        .map_err(|e| (path.to_string(), e))
}

/// A value read in place by [`read_into`]: a leaf through its `Deserialize`
/// ([`At::read_leaf`]), a struct member by member ([`At::read_struct`]), so
/// each struct costs a table instead of a serde visitor.
pub trait ReadInto {
    /// Reads `self` from the value `at` points to.
    fn read_into(&mut self, at: At<'_, '_>) -> Result<(), Error>;
}

/// Leaves: read through their `Deserialize`.
macro_rules! read_leaves {
    ($($ty:ty),*) => {$(
        impl ReadInto for $ty {
            fn read_into(&mut self, at: At<'_, '_>) -> Result<(), Error> {
                at.read_leaf(self)
            }
        }
    )*};
}
read_leaves!(bool, u8, u32, u64, usize, f64, String, Vec<String>);

/// A value being read at a place of the [`Path`].
pub struct At<'v, 'p> {
    value: &'v Value,
    path: &'p Path,
}

impl At<'_, '_> {
    /// The value read.
    pub fn value(&self) -> &Value {
        self.value
    }

    /// Replaces `slot` with the value deserialized.
    pub fn read_leaf<T: DeserializeOwned>(self, slot: &mut T) -> Result<(), Error> {
        *slot = T::deserialize(self)?;
        Ok(())
    }

    /// Reads struct `name` (`struct Name` in errors) of the members `fields`
    /// into `slots` (in the same order), as a serde-derived
    /// `deny_unknown_fields` struct reads: an object member by member, an
    /// array element by element; a member the value lacks keeps its slot's
    /// value unless `required`, when it is an error.
    pub fn read_struct(
        self,
        name: &'static str,
        fields: &'static [&'static str],
        slots: &mut [&mut dyn ReadInto],
        required: bool,
    ) -> Result<(), Error> {
        match self.value {
            Value::Object(map) => {
                let mut seen = vec![false; slots.len()];
                for (key, value) in map {
                    self.path.push_key(key.clone());
                    let i = fields
                        .iter()
                        .position(|f| f == key)
                        .ok_or_else(|| de::Error::unknown_field(key, fields))?;
                    if let (Some(slot), Some(seen)) = (slots.get_mut(i), seen.get_mut(i)) {
                        slot.read_into(At {
                            value,
                            path: self.path,
                        })?;
                        *seen = true;
                    }
                    self.path.pop();
                }
                match seen
                    .iter()
                    .zip(fields)
                    .find(|(seen, _)| required && !**seen)
                {
                    Some((_, field)) => Err(de::Error::missing_field(field)),
                    None => Ok(()),
                }
            }
            Value::Array(items) => {
                for (i, slot) in slots.iter_mut().enumerate() {
                    match items.get(i) {
                        Some(value) => {
                            self.path.push_index(i);
                            slot.read_into(At {
                                value,
                                path: self.path,
                            })?;
                            self.path.pop();
                        }
                        None if required => {
                            return Err(de::Error::invalid_length(
                                i,
                                &format!("struct {name} with {} elements", fields.len()).as_str(),
                            ))
                        }
                        None => {}
                    }
                }
                Ok(())
            }
            other => de::Deserializer::deserialize_any(other, NotAStruct { name, fields }),
        }
    }
}

/// What serde's derived visitor of struct `name` does with a value that is
/// neither object nor array: refuses it by type, or (a number
/// `arbitrary_precision` keeps as text, read as a map) by its first key.
struct NotAStruct {
    name: &'static str,
    fields: &'static [&'static str],
}

impl<'de> Visitor<'de> for NotAStruct {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "struct {}", self.name)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        match map.next_key::<String>()? {
            Some(key) => Err(de::Error::unknown_field(&key, self.fields)),
            None => Ok(()),
        }
    }
}

impl<'de, 'p> de::Deserializer<'de> for At<'de, 'p> {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.value {
            Value::Object(map) => visitor.visit_map(Members {
                members: map.iter(),
                next: None,
                path: self.path,
            }),
            Value::Array(items) => visitor.visit_seq(Elements {
                items: items.iter().enumerate(),
                path: self.path,
            }),
            other => de::Deserializer::deserialize_any(other, visitor),
        }
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.value {
            Value::Null => visitor.visit_none(),
            _ => visitor.visit_some(self),
        }
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        name: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        de::Deserializer::deserialize_enum(self.value, name, variants, visitor)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Error> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_unit()
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf unit unit_struct seq tuple tuple_struct map struct identifier
    }
}

/// Reads the value at the innermost place of `path`, then leaves that place.
fn read_and_leave<'de, S: DeserializeSeed<'de>>(
    seed: S,
    value: &'de Value,
    path: &Path,
) -> Result<S::Value, Error> {
    let read = seed.deserialize(At { value, path })?;
    path.pop();
    Ok(read)
}

struct Members<'v, 'p> {
    members: serde_json::map::Iter<'v>,
    /// The value of the key just read (its key is on the path until it is read).
    next: Option<&'v Value>,
    path: &'p Path,
}

impl<'de, 'p> MapAccess<'de> for Members<'de, 'p> {
    type Error = Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, Error> {
        let Some((key, value)) = self.members.next() else {
            return Ok(None);
        };
        self.next = Some(value);
        // An unknown or malformed key is reported at its own path.
        self.path.push_key(key.clone());
        seed.deserialize(de::value::BorrowedStrDeserializer::new(key))
            .map(Some)
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, Error> {
        let Some(value) = self.next.take() else {
            return Err(de::Error::custom("a value was read before its key"));
        };
        read_and_leave(seed, value, self.path)
    }
}

struct Elements<'v, 'p> {
    items: std::iter::Enumerate<std::slice::Iter<'v, Value>>,
    path: &'p Path,
}

impl<'de, 'p> SeqAccess<'de> for Elements<'de, 'p> {
    type Error = Error;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, Error> {
        let Some((index, value)) = self.items.next() else {
            return Ok(None);
        };
        self.path.push_index(index);
        read_and_leave(seed, value, self.path).map(Some)
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.items.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Debug, Deserialize, PartialEq)]
    #[serde(deny_unknown_fields, rename_all = "camelCase")]
    struct Inner {
        max_bytes: Option<u32>,
        mode: Option<Mode>,
    }

    #[derive(Debug, Deserialize, PartialEq)]
    #[serde(rename_all = "lowercase")]
    enum Mode {
        Fast,
    }

    #[derive(Debug, Deserialize, PartialEq)]
    #[serde(deny_unknown_fields)]
    struct Outer {
        name: String,
        items: Vec<Inner>,
        #[serde(default)]
        price: f64,
    }

    fn err(json: &str) -> String {
        let value: Value = serde_json::from_str(json).unwrap();
        from_value::<Outer>(&value).unwrap_err().0
    }

    #[test]
    fn reads_what_the_value_holds() {
        let value: Value = serde_json::from_str(
            r#"{"name":"n","items":[{"maxBytes":7,"mode":"fast"},{"maxBytes":null}],"price":0.25}"#,
        )
        .unwrap();
        let outer: Outer = from_value(&value).unwrap();
        assert_eq!(outer.items.len(), 2);
        assert_eq!(outer.items[0].max_bytes, Some(7));
        assert_eq!(outer.items[0].mode, Some(Mode::Fast));
        assert_eq!(outer.items[1].max_bytes, None);
        assert_eq!(outer.price, 0.25);
    }

    #[test]
    fn errors_name_the_field() {
        assert_eq!(
            err(r#"{"name":"n","items":[{},{"maxBytes":-1}]}"#),
            "items[1].maxBytes"
        );
        assert_eq!(
            err(r#"{"name":"n","items":[{"bogus":1}]}"#),
            "items[0].bogus"
        );
        assert_eq!(
            err(r#"{"name":"n","items":[{"mode":"slow"}]}"#),
            "items[0].mode"
        );
        assert_eq!(err(r#"{"name":5,"items":[]}"#), "name");
        assert_eq!(err(r#"{"items":[]}"#), ".");
        assert_eq!(err("[]"), ".");
    }
}
