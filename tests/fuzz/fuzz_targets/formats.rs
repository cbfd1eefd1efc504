//! Any bytes as a request of every format: whatever parses emits back to equal
//! JSON (lossless), and converts to every other format into a request that
//! parses, and validates whenever the source validated. Never panics.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tracelite::formats::{self, FormatName};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let Ok(value) = tracelite::json::parse_strict(text, 64) else { return };
    for from in FormatName::ALL {
        let Ok(conv) = formats::parse(from, &value) else { continue };
        assert_eq!(formats::emit(from, &conv), value, "{}", from.as_str());
        let valid = formats::validate(&conv, from).is_ok();
        let mut repaired = conv.clone();
        let _ = formats::repair(&mut repaired, from);
        for to in FormatName::ALL {
            let (out, _) = formats::convert_conversation(conv.clone(), from, to);
            let json = formats::emit(to, &out);
            let back = formats::parse(to, &json).expect("converted request parses");
            if valid {
                formats::validate(&back, to).expect("converted request validates");
            }
        }
    }
});
