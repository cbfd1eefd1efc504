//! Helpers shared by integration tests.
#![allow(
    dead_code,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use std::path::{Path, PathBuf};

use tracelite::Trajectory;

/// `../shared/traces` next to the repository, or `TRACELITE_TRACES` if set.
pub fn traces_dir() -> Option<PathBuf> {
    let dir = std::env::var_os("TRACELITE_TRACES")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/traces"));
    dir.is_dir().then_some(dir)
}

/// Every trace file, sorted.
pub fn trace_files() -> Vec<PathBuf> {
    let Some(dir) = traces_dir() else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    files
}

/// Every trace file, for the tests marked
/// `#[cfg_attr(tracelite_no_traces, ignore = "…")]`: build.rs ignores them when
/// the directory is missing, so finding none here is a failure, not a pass.
pub fn required_trace_files() -> Vec<PathBuf> {
    let files = trace_files();
    assert!(
        !files.is_empty(),
        "no trajectories (*.json) in ../shared/traces or TRACELITE_TRACES, though build.rs found the directory"
    );
    files
}

/// Loads one trajectory.
pub fn load_trace(path: &Path) -> Trajectory {
    Trajectory::from_json(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// `compress_json` in a session: the in-memory `store` and `state` carry over
/// between calls, tokens come from the built-in estimator.
pub fn compress_in(
    request: &str,
    config: &tracelite::Config,
    store: &mut tracelite::MemoryStore,
    state: &mut tracelite::HostState,
) -> tracelite::Output {
    tracelite::compress_json(
        request,
        config,
        tracelite::Env {
            store,
            counter: &tracelite::tokens::Estimator,
            state,
            previous: None,
            format: None,
            known: Default::default(),
        },
    )
    .unwrap()
}

/// The image of `png_bytes` as the `png` crate decodes it: size, bit depth
/// and packed scanlines.
pub fn decode_png(png_bytes: &[u8]) -> tracelite::optical::raster::Bitmap {
    let mut reader = png::Decoder::new(std::io::Cursor::new(png_bytes))
        .read_info()
        .unwrap();
    let mut data = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut data).unwrap();
    data.truncate(info.buffer_size());
    tracelite::optical::raster::Bitmap::new(info.width, info.height, info.bit_depth as u8, data)
}

/// A conversation of `turns` tool calls, each reading a different dense
/// 70-line file: older outputs are rendered at the defaults.
pub fn reading_conversation(turns: usize) -> String {
    use serde_json::json;
    let mut messages = vec![
        json!({"role": "system", "content": "You are a coding agent."}),
        json!({"role": "user", "content": "Fix the failing parser tests in src/parse.py."}),
    ];
    for i in 0..turns {
        let id = format!("call_{i}");
        messages.push(json!({"role": "assistant", "content": null, "tool_calls": [{"id": id, "type": "function",
            "function": {"name": "bash", "arguments": json!({"command": format!("cat src/module_{i}.py")}).to_string()}}]}));
        let lines: Vec<String> = (0..70)
            .map(|l| format!("def handler_{i}_{l}(request, response, timeout={}):  # line {l} of module {i}: return response.status_code == {}", l * 7 % 60, 200 + l % 5))
            .collect();
        messages.push(json!({"role": "tool", "tool_call_id": id, "content": lines.join("\n")}));
    }
    json!({"model": "gpt-4o", "messages": messages}).to_string()
}

/// The text of every `tool` message of an OpenAI chat request, in order.
pub fn tool_texts(request: &str) -> Vec<String> {
    let v: serde_json::Value = serde_json::from_str(request).unwrap();
    v["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap().to_string())
        .collect()
}
