#![allow(missing_docs)]
mod common;
fn trunc(v: &mut serde_json::Value) {
    match v {
        serde_json::Value::String(s) => if s.len() > 40 { let mut e = 40; while !s.is_char_boundary(e) { e -= 1; } s.truncate(e); s.push('…') },
        serde_json::Value::Array(a) => a.iter_mut().for_each(trunc),
        serde_json::Value::Object(o) => o.values_mut().for_each(trunc),
        _ => {}
    }
}
#[test]
fn show() {
    let f = common::trace_files();
    let trace = common::load_trace(&f[40]);
    for format in tracelite::formats::FormatName::ALL {
        let mut r = tracelite::trajectory_to_request(&trace, 2, format).unwrap();
        trunc(&mut r);
        println!("=== {}\n{}", format.as_str(), serde_json::to_string(&r).unwrap());
    }
}
