#![allow(missing_docs)]
use tracelite::formats::{self, FormatName};
#[test]
fn show() {
    for (from, to) in [(FormatName::Anthropic, FormatName::OpenaiChat), (FormatName::OpenaiResponses, FormatName::Anthropic), (FormatName::Gemini, FormatName::OpenaiResponses), (FormatName::OpenaiChat, FormatName::Anthropic)] {
        let p = format!("{}/tests/fixtures/formats/{}.json", env!("CARGO_MANIFEST_DIR"), from.as_str());
        let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap();
        let out = formats::convert(&v, None, to).unwrap();
        let mut r = out.request.clone();
        r.as_object_mut().unwrap().remove("tools");
        println!("=== {} -> {}\n{}", from.as_str(), to.as_str(), serde_json::to_string(&r).unwrap());
    }
}
