//! wasm export of the optical renderer: `renderSnapshot(text, options)`.

use serde_json::{json, Value};
use wasm_bindgen::prelude::*;

use super::{args, to_js};
use crate::config::Config;
use crate::optical::api;

/// Renders `text` as the optical stage would for `options` (JSON text: `provider`
/// and the `optical` section). Returns JSON text: `null` when nothing can be
/// rendered, else `{fontPx, columns, rows, lines, missing, imageTokens, images:
/// [{width, height, mediaType, data}]}` with base64 PNG `data`. Renders even
/// when the image would cost more than the text: callers compare `imageTokens`.
#[wasm_bindgen(js_name = renderSnapshot)]
pub fn render_snapshot(text: &JsValue, options: &JsValue) -> Result<String, JsValue> {
    let text = args::text(text, "text")?;
    let options = args::optional_text(options, "options")?.unwrap_or_default();
    let config = Config::from_json_str(&options).map_err(to_js)?;
    let snapshot = api::render(&text, config.provider, &config.optical).map_err(to_js)?;
    let value = match snapshot {
        None => Value::Null,
        Some(s) => json!({
            "fontPx": s.rendering.font_px,
            "columns": s.rendering.columns,
            "rows": s.rendering.rows,
            "lines": s.lines,
            "missing": s.missing,
            "imageTokens": s.rendering.tokens,
            "images": s.images.iter().map(|i| json!({
                "width": i.width,
                "height": i.height,
                "mediaType": i.media_type,
                "data": i.data,
            })).collect::<Vec<_>>(),
        }),
    };
    Ok(value.to_string())
}
