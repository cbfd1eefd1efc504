//! Any bytes as a request: compress must return Ok or a typed error, never panic;
//! parse → emit of whatever parses must parse again to the same conversation.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tracelite::{compress_json, formats, Config, Env, HostState, MemoryStore};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let mut config = Config::default();
    config.budget = 8_000;
    let _ = compress_json(
        text,
        &config,
        Env::new(&mut MemoryStore::new(), &mut HostState::default()),
    );
    if let Ok(value) = tracelite::json::parse_strict(text, 64) {
        if let Ok(format) = formats::detect(&value) {
            if let Ok(conv) = formats::parse(format, &value) {
                let emitted = formats::emit(format, &conv);
                let again = formats::parse(format, &emitted).expect("emitted request parses");
                assert_eq!(formats::emit(format, &again), emitted);
            }
        }
    }
});
