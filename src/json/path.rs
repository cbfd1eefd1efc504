//! Where reading a JSON value failed: a path (`messages[0].content`) kept
//! while a value is deserialized, so a typed error names the field.
//!
//! [`from_value`] reads a typed value (options, settings) through its serde
//! derive out of a parsed [`Value`], with the path of whatever it could not
//! read; the strict request parser keeps a [`Path`] the same way.
//!
//! Why not `serde_path_to_error` over serde_json's own `&Value`: with
//! `arbitrary_precision` (which requests need, to keep numbers' text) that
//! deserializer answers a mistyped number with `invalid number` or `invalid
//! type: number`, without the value. [`from_value`]'s deserializer hands
//! every leaf to the visitor as what it is (`integer -5`, `floating point
//! 1.5`), which the options' plain words need, and keeps the
//! path as it goes, so a second wrapper for the path would add nothing.

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

/// The value being read at a place of the [`Path`]: a deserializer over a
/// parsed [`Value`] that keeps the path as it enters members and elements.
struct At<'v, 'p> {
    value: &'v Value,
    path: &'p Path,
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

    /// A struct is read from an object only: anything else (an array too,
    /// which serde's derive would read field by field in order) is refused
    /// by its type without reaching `visitor`, so a struct's derived visitor
    /// is built for this deserializer's members only (not also for arrays,
    /// nor for serde_json's arbitrary-precision numbers, which arrive as a
    /// map): about 8 KB of the wasm's gzip size.
    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        match self.value {
            Value::Object(_) => self.deserialize_any(visitor),
            other => de::Deserializer::deserialize_any(
                other,
                Refuse {
                    visitor,
                    value: other,
                },
            ),
        }
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf unit unit_struct seq tuple tuple_struct map identifier
    }
}

/// Expects what `visitor` expects and accepts nothing: every value is an
/// `invalid type` error in `visitor`'s words.
struct Refuse<'v, V> {
    visitor: V,
    value: &'v Value,
}

impl<'de, V: Visitor<'de>> Visitor<'de> for Refuse<'_, V> {
    type Value = V::Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.visitor.expecting(f)
    }

    /// Only a number reaches this (an object does not get here): one
    /// serde_json keeps as text (`1.50`, `1e400`) arrives as a map.
    fn visit_map<A: MapAccess<'de>>(self, _map: A) -> Result<V::Value, A::Error> {
        let number = self.value.to_string();
        Err(de::Error::invalid_type(
            de::Unexpected::Other(&number),
            &self,
        ))
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
