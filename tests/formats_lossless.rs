//! Unknown members anywhere in a request survive parse → emit: every fixture,
//! with random members added to random objects, emits back equal.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use proptest::prelude::*;
use serde_json::Value;
use tracelite::formats::{self, FormatName};

fn fixture(format: FormatName) -> Value {
    let path = format!(
        "{}/tests/fixtures/formats/{}.json",
        env!("CARGO_MANIFEST_DIR"),
        format.as_str()
    );
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// Number of objects in `v` (the root included).
fn objects(v: &Value) -> usize {
    match v {
        Value::Object(o) => 1 + o.values().map(objects).sum::<usize>(),
        Value::Array(a) => a.iter().map(objects).sum(),
        _ => 0,
    }
}

fn add_member(v: &mut Value, pick: usize, key: &str, value: Value) {
    // Insert at the pick-th object in document order.
    fn walk(v: &mut Value, pick: usize, n: &mut usize, key: &str, value: &Value) -> bool {
        match v {
            Value::Object(o) => {
                if *n == pick {
                    o.insert(key.to_string(), value.clone());
                    return true;
                }
                *n += 1;
                o.values_mut().any(|x| walk(x, pick, n, key, value))
            }
            Value::Array(a) => a.iter_mut().any(|x| walk(x, pick, n, key, value)),
            _ => false,
        }
    }
    let mut n = 0;
    walk(v, pick, &mut n, key, &value);
}

fn json_value() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        "\\PC{0,8}".prop_map(Value::String),
        prop::collection::vec(any::<i32>().prop_map(Value::from), 0..3).prop_map(Value::Array),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn unknown_members_survive_anywhere(
        picks in prop::collection::vec((any::<prop::sample::Index>(), "x_[a-z]{1,5}", json_value()), 1..4)
    ) {
        for format in FormatName::ALL {
            let mut request = fixture(format);
            let count = objects(&request);
            for (index, key, value) in &picks {
                add_member(&mut request, index.index(count), key, value.clone());
            }
            let conv = formats::parse(format, &request).unwrap();
            prop_assert_eq!(formats::emit(format, &conv), request, "{}", format.as_str());
        }
    }
}
