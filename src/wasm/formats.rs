//! wasm exports for provider formats: detection, validation (with repair) and conversion.

use serde_json::Value;
use wasm_bindgen::prelude::*;

use super::{args, to_js};
use crate::error::{Error, ErrorCode};
use crate::formats::{self, FormatName};

fn parse_json(text: &str) -> Result<Value, JsValue> {
    let limits = crate::config::Limits::default();
    if text.len() > limits.max_request_bytes {
        return Err(to_js(Error::new(
            ErrorCode::LimitExceeded,
            "limits.maxRequestBytes",
            "request is over the default size limit",
        )));
    }
    crate::json::parse_strict(text, limits.max_depth).map_err(to_js)
}

fn format_of(name: Option<String>, request: &Value) -> Result<FormatName, JsValue> {
    match name {
        Some(n) => FormatName::from_name(&n).map_err(to_js),
        None => formats::detect(request).map_err(to_js),
    }
}

/// The opening of `request` (JSON text, any format): its system messages and
/// the messages up to and including the first user message
/// ([`formats::opening`]), as JSON text of the neutral model; the same on every
/// later turn of the conversation.
#[wasm_bindgen(js_name = requestOpening)]
pub fn request_opening(request: &str) -> Result<String, JsValue> {
    let value = parse_json(request)?;
    let format = formats::detect(&value).map_err(to_js)?;
    let conv = formats::parse(format, &value).map_err(to_js)?;
    super::json_text(&formats::opening(&conv), "opening")
}

/// `request` (JSON text of `format`, detected when absent) as the neutral
/// conversation it parses into: `{"format", "system": [Message], "messages":
/// [Message & {"index"}], "extra"}` as JSON text, where `index` is the
/// message's position in the request's own list (`messages`, `input` or
/// `contents`; what `report.changes[].message` names).
#[wasm_bindgen(js_name = requestConversation)]
pub fn request_conversation(request: &JsValue, format: &JsValue) -> Result<String, JsValue> {
    let value = parse_json(&args::text(request, "request")?)?;
    let format = format_of(args::optional_text(format, "format")?, &value)?;
    let conv = formats::parse(format, &value).map_err(to_js)?;
    let (_, at) = formats::emit_indexed(format, &conv);
    let mut messages = Vec::with_capacity(conv.messages.len());
    for (msg, index) in conv.messages.iter().zip(at) {
        let mut item = to_value(msg, "messages")?;
        if let Value::Object(obj) = &mut item {
            obj.insert("index".into(), Value::from(index));
        }
        messages.push(item);
    }
    let mut obj = serde_json::Map::new();
    obj.insert("format".into(), Value::String(format.as_str().into()));
    obj.insert("system".into(), to_value(&conv.system, "system")?);
    obj.insert("messages".into(), Value::Array(messages));
    obj.insert("extra".into(), Value::Object(conv.extra.clone()));
    super::json_text(&Value::Object(obj), "conversation")
}

/// `value` as JSON; `SERIALIZATION_FAILED` naming `path` otherwise.
fn to_value(value: &impl serde::Serialize, path: &str) -> Result<Value, JsValue> {
    serde_json::to_value(value).map_err(|e| {
        to_js(Error::new(
            ErrorCode::SerializationFailed,
            path,
            e.to_string(),
        ))
    })
}

/// The format of `request` (JSON text), e.g. `"anthropic"`.
#[wasm_bindgen(js_name = formatsDetect)]
pub fn formats_detect(request: &JsValue) -> Result<String, JsValue> {
    let value = parse_json(&args::text(request, "request")?)?;
    Ok(formats::detect(&value).map_err(to_js)?.as_str().to_string())
}

/// Converts `request` (JSON text) to format `to`; `from` is detected when absent.
/// Returns `{"from", "to", "request", "lossy": [{"path", "what"}]}` as JSON text.
#[wasm_bindgen(js_name = formatsConvert)]
pub fn formats_convert(request: &JsValue, to: &JsValue, from: &JsValue) -> Result<String, JsValue> {
    let value = parse_json(&args::text(request, "request")?)?;
    let from = format_of(args::optional_text(from, "from")?, &value)?;
    let to = FormatName::from_name(&args::text(to, "to")?).map_err(to_js)?;
    let converted = formats::convert(&value, Some(from), to).map_err(to_js)?;
    super::json_text(&converted, "request")
}

/// Validates `request` (JSON text); with `repair`, fixes what it safely can.
/// Returns `{"format", "request", "repairs": [{"code", "path", "action"}]}` as JSON text.
#[wasm_bindgen(js_name = formatsValidate)]
pub fn formats_validate(
    request: &JsValue,
    format: &JsValue,
    repair: &JsValue,
) -> Result<String, JsValue> {
    let value = parse_json(&args::text(request, "request")?)?;
    let format = format_of(args::optional_text(format, "format")?, &value)?;
    let repair = args::flag(repair, "repair")?;
    let mut conv = formats::parse(format, &value).map_err(to_js)?;
    let max_pixels = crate::config::Limits::default().max_image_pixels;
    formats::images::check_pixels(&conv, format, max_pixels).map_err(to_js)?;
    let repairs = if repair {
        formats::repair(&mut conv, format).map_err(to_js)?
    } else {
        formats::validate(&conv, format).map_err(to_js)?;
        Vec::new()
    };
    let out = if repairs.is_empty() {
        value
    } else {
        formats::emit(format, &conv)
    };
    let mut obj = serde_json::Map::new();
    obj.insert("format".into(), Value::String(format.as_str().into()));
    obj.insert("request".into(), out);
    obj.insert("repairs".into(), to_value(&repairs, "repairs")?);
    super::json_text(&Value::Object(obj), "request")
}
