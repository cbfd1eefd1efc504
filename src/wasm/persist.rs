//! wasm exports of the persisted caches (`src/persist.rs`): a store's
//! `exportCache`, `importCache` and `cacheStats`.

use wasm_bindgen::prelude::*;

use super::{args, json_text, to_js, WasmStore};
use crate::config::Config;
use crate::persist;

/// What a store's caches hold and did (`cacheStats`).
#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct CacheStats {
    snapshots: usize,
    snapshot_bytes: usize,
    rendered: u64,
    counts: usize,
    counted_bytes: u64,
}

#[wasm_bindgen(js_class = Store)]
impl WasmStore {
    /// The rendered snapshots and token counts made since the last call (on
    /// the first call, or with `all`, everything held) as a segment for a host
    /// to keep, sealed with `key` (a `Uint8Array` of at least 16 bytes) for
    /// `session`; `undefined` when there is nothing new (with `renderedOnly`:
    /// no new rendered snapshot; the rest waits for the next call).
    #[wasm_bindgen(js_name = exportCache)]
    pub fn export_cache(
        &mut self,
        all: &JsValue,
        rendered_only: &JsValue,
        key: &JsValue,
        session: &JsValue,
    ) -> Result<Option<String>, JsValue> {
        let all = args::flag(all, "all")?;
        let rendered_only = args::flag(rendered_only, "renderedOnly")?;
        let key = args::bytes(key, "key")?;
        let session = args::text(session, "session")?;
        let seal = persist::Seal {
            key: &key,
            session: &session,
        };
        persist::export(&mut self.state, all, rendered_only, seal).map_err(to_js)
    }

    /// Adds a segment `exportCache` wrote with `key` (a `Uint8Array`) for
    /// the session of `options` (JSON text, as for `compress`, which also
    /// bound the snapshots by `optical.cacheBytes` and the segment by
    /// `limits.maxRequestBytes`, checked before the segment is copied into
    /// wasm memory). Returns JSON text `{snapshots, counts, stale}`;
    /// `INVALID_CACHE` for a segment whose MAC does not verify (naming
    /// `cache.mac`) or that is malformed.
    #[wasm_bindgen(js_name = importCache)]
    pub fn import_cache(
        &mut self,
        segment: &JsValue,
        options: &JsValue,
        key: &JsValue,
    ) -> Result<String, JsValue> {
        let options = args::optional_text(options, "options")?.unwrap_or_default();
        let config = Config::from_json_str(&options).map_err(to_js)?;
        let key = args::bytes(key, "key")?;
        // Refused before it is copied in: a huge segment never grows wasm memory
        // (its UTF-8 bytes are at least its UTF-16 length).
        if let Some(js) = segment.dyn_ref::<js_sys::JsString>() {
            persist::check_size(js.length() as usize, &config).map_err(to_js)?;
        }
        let segment = args::text(segment, "segment")?;
        let imported = persist::import(&mut self.state, &segment, &config, &key).map_err(to_js)?;
        json_text(&imported, "importCache")
    }

    /// Empties the caches (snapshots, token counts, keys, redactions,
    /// activities, dedup and excerpt layouts, proposals), keeping the spills
    /// and the compaction state (records, pinned constraints): outputs do not
    /// change, the next call only does again what the caches saved. A host
    /// frees a session's memory so without losing its spills.
    #[wasm_bindgen(js_name = clearCaches)]
    pub fn clear_caches(&mut self) {
        let compact = std::mem::take(&mut self.state.compact);
        self.state = crate::pipeline::HostState {
            compact,
            ..Default::default()
        };
    }

    /// What the caches hold: JSON text `{snapshots, snapshotBytes, rendered,
    /// counts, countedBytes}` (`rendered`: snapshots drawn here, not imported;
    /// `countedBytes`: text the counter priced, not found in the cache).
    #[wasm_bindgen(js_name = cacheStats)]
    pub fn cache_stats(&self) -> Result<String, JsValue> {
        let state = &self.state;
        json_text(
            &CacheStats {
                snapshots: state.optical.snapshots.len(),
                snapshot_bytes: state.optical.snapshots.bytes(),
                rendered: state.optical.snapshots.rendered,
                counts: state.counts.len(),
                counted_bytes: state.counts.counted_bytes(),
            },
            "cacheStats",
        )
    }
}
