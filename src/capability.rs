//! Which models read images, and the image limits their providers document:
//! a dated table (data, not branches, like the planner's price table), read
//! by model id, overridable with the `models` option.
//!
//! With `optical.enabled: 'auto'` (the default) snapshots go only to a model
//! this table, or the caller's `models`, says reads images; within its
//! provider's limits (images per request, bytes and pixels per image), so a
//! request carries fewer snapshots rather than being rejected.
//!
//! Model ids are read as routers and hosts write them: lowercased, router
//! prefixes dropped (`openrouter/anthropic/claude-sonnet-4.5`,
//! `openai/gpt-4o`, `google/gemini-2.5-pro`, `models/gemini-2.5-pro`,
//! `meta-llama/Llama-3.3-70B-Instruct`), Bedrock's `us.anthropic.` prefixes
//! and tags after `:` (`:free`, Ollama's `:70b`, Bedrock's `:0`) too.
//!
//! Sources, read 2026-12 ([`CAPABILITY_TABLE_DATE`]):
//! * which models read images: each provider's model pages (OpenAI models
//!   "Input: text, image"; Anthropic models overview, "text and image input"
//!   for Claude 3 and later; Gemini models, multimodal input since 1.5;
//!   Alibaba Model Studio, Qwen-VL/QVQ/Omni the vision families), checked
//!   against LiteLLM's `model_prices_and_context_window.json` (`supports_vision`).
//!   Text-only families are listed so the report can say so: DeepSeek V3.x
//!   chat and reasoner, Qwen3 text and coder models, GLM-4.x (not the `v`
//!   variants), Llama 3.x text models, Kimi K2, gpt-3.5, gpt-4 (8k), o1-mini,
//!   o3-mini, gpt-oss.
//! * OpenAI (Chat and Responses): up to 500 images per request, 50 MB of
//!   image bytes per request, 20 MB per image (images guide, "Image input
//!   requirements").
//! * Anthropic (API): up to 100 images per request, each at most 8000×8000 px,
//!   or 2000×2000 px when the request holds more than 20 images; 5 MB per
//!   image; 32 MB per request (vision guide, "General limits"; 600 images on
//!   some platforms, the API's 100 is the one kept).
//! * Gemini API: up to 3,000 images per prompt, 20 MB per request with
//!   inline data (Vertex AI image understanding, Firebase input file
//!   requirements); Gemini 3 Pro preview: 900 images per prompt, 7 MB per
//!   inline image (Vertex AI image understanding).

use std::collections::BTreeMap;

use crate::text::glob;

/// When the table was read from the providers' documentation.
pub const CAPABILITY_TABLE_DATE: &str = "2026-12";

/// Image limits of one provider (or of one request format's API).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ImageLimits {
    /// Most images in one request.
    pub max_images: usize,
    /// Largest decoded image, in bytes.
    pub max_image_bytes: usize,
    /// Most decoded image bytes in one request.
    pub max_total_bytes: usize,
    /// Longest edge in pixels.
    pub max_edge_px: u32,
    /// Longest edge when the request holds more than `many_images` images.
    pub max_edge_px_many: u32,
    /// The image count above which `max_edge_px_many` applies.
    pub many_images: usize,
}

impl ImageLimits {
    /// No limit at all.
    pub const NONE: Self = Self {
        max_images: usize::MAX,
        max_image_bytes: usize::MAX,
        max_total_bytes: usize::MAX,
        max_edge_px: u32::MAX,
        max_edge_px_many: u32::MAX,
        many_images: usize::MAX,
    };

    /// Limits that keep within both `self` and `other` (each bound the
    /// smaller; the many-images edge applies from the smaller count on).
    pub fn tighter(self, other: Self) -> Self {
        Self {
            max_images: self.max_images.min(other.max_images),
            max_image_bytes: self.max_image_bytes.min(other.max_image_bytes),
            max_total_bytes: self.max_total_bytes.min(other.max_total_bytes),
            max_edge_px: self.max_edge_px.min(other.max_edge_px),
            max_edge_px_many: self.max_edge_px_many.min(other.max_edge_px_many),
            many_images: self.many_images.min(other.many_images),
        }
    }

    /// The longest edge every image may have in a request that may hold up
    /// to `count` images.
    pub fn edge_for(&self, count: usize) -> u32 {
        if count > self.many_images {
            self.max_edge_px_many.min(self.max_edge_px)
        } else {
            self.max_edge_px
        }
    }
}

/// OpenAI's documented limits (Chat Completions and Responses).
pub const OPENAI: ImageLimits = ImageLimits {
    max_images: 500,
    max_image_bytes: 20 << 20,
    max_total_bytes: 50 << 20,
    ..ImageLimits::NONE
};

/// Anthropic's documented limits (Messages API).
pub const ANTHROPIC: ImageLimits = ImageLimits {
    max_images: 100,
    max_image_bytes: 5 << 20,
    max_total_bytes: 32 << 20,
    max_edge_px: 8000,
    max_edge_px_many: 2000,
    many_images: 20,
};

/// The Gemini API's documented limits (inline data).
pub const GEMINI: ImageLimits = ImageLimits {
    max_images: 3000,
    max_image_bytes: 20 << 20,
    max_total_bytes: 20 << 20,
    ..ImageLimits::NONE
};

/// Gemini 3 Pro preview's documented limits (900 images, 7 MB inline each).
pub const GEMINI_3: ImageLimits = ImageLimits {
    max_images: 900,
    max_image_bytes: 7 << 20,
    ..GEMINI
};

/// One row of the table: model ids matching `pattern` (a `*` glob over the
/// normalized id, see [`normalize`]) come from `vendor` and read images
/// or not, within `limits` (`None`: what the request format's API allows).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Row {
    /// `*` glob over the normalized model id.
    pub pattern: &'static str,
    /// Who serves the model (the limits' source).
    pub vendor: &'static str,
    /// Whether the model accepts image input.
    pub images: bool,
    /// The provider's documented image limits, when it documents them.
    pub limits: Option<ImageLimits>,
}

const fn row(
    pattern: &'static str,
    vendor: &'static str,
    images: bool,
    limits: Option<ImageLimits>,
) -> Row {
    Row {
        pattern,
        vendor,
        images,
        limits,
    }
}

/// The table, first match wins (text-only exceptions before the family
/// that reads images).
pub const TABLE: &[Row] = &[
    // OpenAI.
    row("gpt-3.5*", "openai", false, None),
    row("gpt-4", "openai", false, None),
    row("gpt-4-0*", "openai", false, None),
    row("gpt-4-32k*", "openai", false, None),
    row("gpt-oss*", "openai", false, None),
    row("o1-mini*", "openai", false, None),
    row("o1-preview*", "openai", false, None),
    row("o3-mini*", "openai", false, None),
    row("gpt-4o*", "openai", true, Some(OPENAI)),
    row("chatgpt-4o*", "openai", true, Some(OPENAI)),
    row("gpt-4-turbo*", "openai", true, Some(OPENAI)),
    row("gpt-4-vision*", "openai", true, Some(OPENAI)),
    row("gpt-4.1*", "openai", true, Some(OPENAI)),
    row("gpt-4.5*", "openai", true, Some(OPENAI)),
    row("gpt-5*", "openai", true, Some(OPENAI)),
    row("o1", "openai", true, Some(OPENAI)),
    row("o1-2*", "openai", true, Some(OPENAI)),
    row("o3", "openai", true, Some(OPENAI)),
    row("o3-2*", "openai", true, Some(OPENAI)),
    row("o3-pro*", "openai", true, Some(OPENAI)),
    row("o4-mini*", "openai", true, Some(OPENAI)),
    // Anthropic: Claude 3 and later read images, Claude 2 and Instant do not.
    row("claude-1*", "anthropic", false, None),
    row("claude-2*", "anthropic", false, None),
    row("claude-instant*", "anthropic", false, None),
    row("claude-*", "anthropic", true, Some(ANTHROPIC)),
    // Google: Gemini 1.0 Pro was text-only; every later Gemini is multimodal.
    row("gemini-1.0-pro", "google", false, None),
    row("gemini-1.0-pro-0*", "google", false, None),
    row("gemini-pro", "google", false, None),
    row("gemini-embedding*", "google", false, None),
    row("gemini-3*", "google", true, Some(GEMINI_3)),
    row("gemini-*", "google", true, Some(GEMINI)),
    // Alibaba Qwen: the VL, QVQ and Omni families read images.
    row("qwen*-vl*", "qwen", true, None),
    row("qwen*vl-*", "qwen", true, None),
    row("qwen*vl", "qwen", true, None),
    row("qvq*", "qwen", true, None),
    row("qwen*-omni*", "qwen", true, None),
    row("qwen*", "qwen", false, None),
    // Text-only families served behind OpenAI-compatible endpoints.
    row("deepseek-vl*", "deepseek", true, None),
    row("deepseek-*", "deepseek", false, None),
    row("glm-*v", "zhipu", true, None),
    row("glm-*v-*", "zhipu", true, None),
    row("glm-*", "zhipu", false, None),
    row("llama-3.2-*vision*", "meta", true, None),
    row("llama-3*", "meta", false, None),
    row("llama3*", "meta", false, None),
    row("meta-llama-3*", "meta", false, None),
    row("kimi-k2", "moonshot", false, None),
    row("kimi-k2-*", "moonshot", false, None),
    row("codestral*", "mistral", false, None),
    row("devstral*", "mistral", false, None),
];

/// A model the caller declares (`models` in the options): whether it reads
/// images and, optionally, its limits (the request format's apply too).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct DeclaredModel {
    /// Whether the model accepts image input (required).
    pub images: bool,
    /// Most images it takes in one request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_images: Option<usize>,
    /// Largest image it takes, in decoded bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_image_bytes: Option<usize>,
    /// Longest image edge it takes, in pixels.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_edge_px: Option<u32>,
}

impl DeclaredModel {
    /// The limits declared (`None` when none is).
    fn limits(&self) -> Option<ImageLimits> {
        if self.max_images.is_none() && self.max_image_bytes.is_none() && self.max_edge_px.is_none()
        {
            return None;
        }
        let edge = self.max_edge_px.unwrap_or(u32::MAX);
        Some(ImageLimits {
            max_images: self.max_images.unwrap_or(usize::MAX),
            max_image_bytes: self.max_image_bytes.unwrap_or(usize::MAX),
            max_edge_px: edge,
            max_edge_px_many: edge,
            ..ImageLimits::NONE
        })
    }
}

/// Where a model's capability was read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// No model was named (no `model` option, none in the request).
    Unnamed,
    /// The caller's `models` entry with this key.
    Declared(String),
    /// The table's row with this pattern.
    Table(&'static str),
    /// Neither the caller's `models` nor the table knows it.
    Unknown,
}

/// What the model a request goes to accepts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Capability {
    /// The model id as named (empty when none was).
    pub model: String,
    /// Whether it reads images.
    pub images: bool,
    /// Its provider's documented image limits (`None`: the request format's).
    pub limits: Option<ImageLimits>,
    /// Where this was read.
    pub source: Source,
}

impl Capability {
    /// Why snapshots do not go to this model, for the report (`None` when
    /// the model reads images).
    pub fn why_no_images(&self) -> Option<String> {
        if self.images {
            return None;
        }
        let how = "snapshots go only to a model that reads images; `optical.enabled: true` \
                   forces them, `models: { \"<id>\": { images: true } }` declares a model";
        Some(match &self.source {
            Source::Unnamed => format!(
                "not applied: no model named (the `model` option, or the request's `model`); {how}"
            ),
            Source::Declared(key) => format!(
                "not applied: `{}` is declared text-only (`models[\"{key}\"]`); {how}",
                self.model
            ),
            Source::Table(pattern) => format!(
                "not applied: `{}` does not read images (model capability table \
                 {CAPABILITY_TABLE_DATE}, `{pattern}`); {how}",
                self.model
            ),
            Source::Unknown => format!(
                "not applied: `{}` is not in the model capability table \
                 ({CAPABILITY_TABLE_DATE}) nor in `models`; {how}",
                self.model
            ),
        })
    }
}

/// A model id as the table reads it: lowercased, without router prefixes
/// (up to the last `/`), region and vendor prefixes ending in `.` (Bedrock's
/// `us.anthropic.`) or tags after `:`.
pub fn normalize(model: &str) -> String {
    let id = model.trim().to_ascii_lowercase();
    let id = id.rsplit('/').next().unwrap_or_default();
    let mut id = id.split(':').next().unwrap_or_default();
    // `us.anthropic.claude-…`, `meta.llama3-…`: leading all-letter segments.
    while let Some((head, rest)) = id.split_once('.') {
        if head.is_empty() || !head.bytes().all(|b| b.is_ascii_lowercase()) {
            break;
        }
        id = rest;
    }
    id.to_string()
}

/// What `model` accepts: the caller's `declared` models first (by the id as
/// named or normalized, then their `*` globs in key order), then the table.
pub fn lookup(model: &str, declared: &BTreeMap<String, DeclaredModel>) -> Capability {
    if model.trim().is_empty() {
        return Capability {
            model: String::new(),
            images: false,
            limits: None,
            source: Source::Unnamed,
        };
    }
    let id = normalize(model);
    let raw = model.trim().to_ascii_lowercase();
    let matches = |key: &str| {
        let key = key.to_ascii_lowercase();
        key == raw || key == id || glob(&key, &raw) || glob(&key, &id)
    };
    let found = declared
        .iter()
        .find(|(k, _)| {
            let k = k.to_ascii_lowercase();
            k == raw || k == id
        })
        .or_else(|| declared.iter().find(|(k, _)| matches(k)));
    if let Some((key, d)) = found {
        return Capability {
            model: model.to_string(),
            images: d.images,
            limits: d.limits(),
            source: Source::Declared(key.clone()),
        };
    }
    match TABLE.iter().find(|r| glob(r.pattern, &id)) {
        Some(r) => Capability {
            model: model.to_string(),
            images: r.images,
            limits: r.limits,
            source: Source::Table(r.pattern),
        },
        None => Capability {
            model: model.to_string(),
            images: false,
            limits: None,
            source: Source::Unknown,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reads(model: &str) -> bool {
        lookup(model, &BTreeMap::new()).images
    }

    #[test]
    fn router_prefixes_and_tags_are_dropped() {
        assert_eq!(
            normalize("openrouter/anthropic/claude-sonnet-4.5"),
            "claude-sonnet-4.5"
        );
        assert_eq!(
            normalize("us.anthropic.claude-3-5-sonnet-20240620-v1:0"),
            "claude-3-5-sonnet-20240620-v1"
        );
        assert_eq!(normalize("models/Gemini-2.5-Pro"), "gemini-2.5-pro");
        assert_eq!(
            normalize("deepseek/deepseek-chat-v3.1:free"),
            "deepseek-chat-v3.1"
        );
        assert_eq!(normalize("gpt-4.1"), "gpt-4.1");
    }

    /// At least 20 ids across the three providers, their router prefixes
    /// and the text-only families routers serve.
    #[test]
    fn the_table_knows_vision_and_text_only_models() {
        let vision = [
            "gpt-4o",
            "gpt-4o-mini",
            "openai/gpt-4o",
            "gpt-4.1",
            "gpt-4.1-mini",
            "gpt-5",
            "gpt-5-mini",
            "o4-mini",
            "o3",
            "claude-sonnet-4-5",
            "claude-3-5-sonnet-20241022",
            "anthropic/claude-sonnet-4.5",
            "anthropic/claude-opus-4.1",
            "us.anthropic.claude-3-7-sonnet-20250219-v1:0",
            "gemini-2.5-pro",
            "google/gemini-2.5-flash",
            "gemini-3-pro-preview",
            "models/gemini-2.0-flash",
            "openrouter/google/gemini-2.5-pro",
            "qwen3-vl-plus",
            "qwen2.5-vl-72b-instruct",
            "glm-4.6v",
        ];
        let text = [
            "deepseek-chat",
            "deepseek-reasoner",
            "deepseek/deepseek-chat-v3.1",
            "qwen3-coder-480b",
            "Qwen/Qwen3-Coder-480B-A35B-Instruct",
            "qwen3-max",
            "llama-3.1-70b",
            "meta-llama/Llama-3.3-70B-Instruct",
            "glm-4.6",
            "z-ai/glm-4.6",
            "moonshotai/kimi-k2",
            "gpt-3.5-turbo",
            "gpt-4",
            "o3-mini",
            "openai/gpt-oss-120b",
            "claude-2.1",
            "gemini-pro",
            "my-vlm",
            "",
        ];
        for m in vision {
            assert!(reads(m), "{m} reads images");
        }
        for m in text {
            assert!(!reads(m), "{m} does not read images");
        }
        assert_eq!(
            lookup("gemini-3-pro-preview", &BTreeMap::new()).limits,
            Some(GEMINI_3)
        );
        assert_eq!(
            lookup("anthropic/claude-sonnet-4.5", &BTreeMap::new()).limits,
            Some(ANTHROPIC)
        );
    }

    #[test]
    fn declared_models_come_first() {
        let mut declared = BTreeMap::new();
        declared.insert(
            "my-vlm".to_string(),
            DeclaredModel {
                images: true,
                max_images: Some(4),
                max_image_bytes: None,
                max_edge_px: None,
            },
        );
        declared.insert(
            "gpt-4o*".to_string(),
            DeclaredModel {
                images: false,
                max_images: None,
                max_image_bytes: None,
                max_edge_px: None,
            },
        );
        let c = lookup("vllm/my-vlm", &declared);
        assert!(c.images);
        assert_eq!(c.limits.map(|l| l.max_images), Some(4));
        assert_eq!(c.source, Source::Declared("my-vlm".into()));
        let c = lookup("openai/gpt-4o-mini", &declared);
        assert!(!c.images, "a declaration overrides the table");
        assert!(c.why_no_images().unwrap().contains("declared text-only"));
        assert!(lookup("deepseek-chat", &declared)
            .why_no_images()
            .unwrap()
            .contains("`deepseek-*`"));
        assert!(lookup("", &declared)
            .why_no_images()
            .unwrap()
            .contains("no model named"));
    }

    #[test]
    fn tighter_limits_keep_within_both() {
        let both = OPENAI.tighter(ANTHROPIC);
        assert_eq!(both.max_images, 100);
        assert_eq!(both.max_image_bytes, 5 << 20);
        assert_eq!(both.edge_for(20), 8000);
        assert_eq!(both.edge_for(21), 2000);
        assert_eq!(ImageLimits::NONE.tighter(GEMINI), GEMINI);
    }
}
