//! The portable top-level settings of a conversion (`model`, `temperature`,
//! `top_p`, the output-token limit, stop sequences, `stream`) and function
//! tools: read from the source format, written in the target's spelling, the
//! rest listed as [`Lossy`].

use serde_json::{Map, Value};

use super::{is_empty, Lossy};
use crate::formats::FormatName;
use crate::model::Extra;

/// Whether `key: value` is one of `from`'s slots (see the `formats` module docs).
fn is_own_slot(from: FormatName, key: &str, value: &Value) -> bool {
    match (from, key) {
        (FormatName::OpenaiChat, "messages") => value.is_null(),
        (FormatName::OpenaiResponses, "input") => {
            value.is_null() || value == &Value::String("text".into())
        }
        (FormatName::OpenaiResponses, "instructions") => value == &Value::Bool(true),
        (FormatName::Anthropic, "messages" | "system") => value.is_null(),
        (FormatName::Gemini, "contents" | "systemInstruction" | "system_instruction") => {
            value.is_null()
        }
        _ => false,
    }
}

/// A function tool.
#[derive(Debug, Clone)]
struct Tool {
    name: String,
    description: Option<Value>,
    parameters: Option<Value>,
}

/// The portable top-level settings.
#[derive(Debug, Default)]
pub(super) struct Settings {
    model: Option<Value>,
    temperature: Option<Value>,
    top_p: Option<Value>,
    max_tokens: Option<Value>,
    stop: Option<Value>,
    stream: Option<Value>,
    tools: Vec<Tool>,
    has_tools: bool,
}

impl Settings {
    pub(super) fn extract(extra: &Extra, from: FormatName, lossy: &mut Vec<Lossy>) -> Self {
        let mut s = Settings::default();
        for (key, value) in extra {
            if is_own_slot(from, key, value) {
                continue;
            }
            let taken = match (from, key.as_str()) {
                (_, "model") if from != FormatName::Gemini => {
                    s.model = Some(value.clone());
                    true
                }
                (FormatName::Gemini, "generationConfig" | "generation_config") => {
                    s.take_generation_config(value, key, lossy);
                    true
                }
                (FormatName::Gemini, "tools") => {
                    s.take_gemini_tools(value, lossy);
                    true
                }
                (FormatName::Gemini, _) => false,
                (_, "temperature") => {
                    s.temperature = Some(value.clone());
                    true
                }
                (_, "top_p") => {
                    s.top_p = Some(value.clone());
                    true
                }
                (_, "stream") => {
                    s.stream = Some(value.clone());
                    true
                }
                (FormatName::OpenaiChat, "max_tokens" | "max_completion_tokens")
                | (FormatName::OpenaiResponses, "max_output_tokens")
                | (FormatName::Anthropic, "max_tokens") => {
                    s.max_tokens = Some(value.clone());
                    true
                }
                (FormatName::OpenaiChat, "stop") => {
                    s.stop = Some(match value {
                        Value::String(_) => Value::Array(vec![value.clone()]),
                        other => other.clone(),
                    });
                    true
                }
                (FormatName::Anthropic, "stop_sequences") => {
                    s.stop = Some(value.clone());
                    true
                }
                (_, "tools") => {
                    s.take_tools(value, from, lossy);
                    true
                }
                _ => false,
            };
            if !taken && !is_empty(value) {
                lossy.push(Lossy {
                    path: key.clone(),
                    what: "setting without an equivalent dropped".into(),
                });
            }
        }
        s
    }

    fn take_generation_config(&mut self, value: &Value, key: &str, lossy: &mut Vec<Lossy>) {
        let Some(cfg) = value.as_object() else {
            return;
        };
        for (k, v) in cfg {
            match k.as_str() {
                "temperature" => self.temperature = Some(v.clone()),
                "topP" | "top_p" => self.top_p = Some(v.clone()),
                "maxOutputTokens" | "max_output_tokens" => self.max_tokens = Some(v.clone()),
                "stopSequences" | "stop_sequences" => self.stop = Some(v.clone()),
                _ => lossy.push(Lossy {
                    path: format!("{key}.{k}"),
                    what: "setting without an equivalent dropped".into(),
                }),
            }
        }
    }

    fn take_tools(&mut self, value: &Value, from: FormatName, lossy: &mut Vec<Lossy>) {
        self.has_tools = true;
        for (i, tool) in value.as_array().into_iter().flatten().enumerate() {
            let found = match from {
                FormatName::OpenaiChat => tool
                    .get("function")
                    .filter(|_| tool.get("type").and_then(Value::as_str) == Some("function"))
                    .and_then(|f| {
                        Some(Tool {
                            name: f.get("name")?.as_str()?.to_string(),
                            description: f.get("description").cloned(),
                            parameters: f.get("parameters").cloned(),
                        })
                    }),
                FormatName::OpenaiResponses => (tool.get("type").and_then(Value::as_str)
                    == Some("function"))
                .then(|| {
                    Some(Tool {
                        name: tool.get("name")?.as_str()?.to_string(),
                        description: tool.get("description").cloned(),
                        parameters: tool.get("parameters").cloned(),
                    })
                })
                .flatten(),
                FormatName::Anthropic => tool
                    .get("input_schema")
                    .filter(|_| {
                        tool.get("type")
                            .and_then(Value::as_str)
                            .map_or(true, |t| t == "custom")
                    })
                    .and_then(|schema| {
                        Some(Tool {
                            name: tool.get("name")?.as_str()?.to_string(),
                            description: tool.get("description").cloned(),
                            parameters: Some(schema.clone()),
                        })
                    }),
                FormatName::Gemini => None,
            };
            match found {
                Some(t) => self.tools.push(t),
                None => lossy.push(Lossy {
                    path: format!("tools[{i}]"),
                    what: "non-function tool dropped".into(),
                }),
            }
        }
    }

    fn take_gemini_tools(&mut self, value: &Value, lossy: &mut Vec<Lossy>) {
        self.has_tools = true;
        for (i, tool) in value.as_array().into_iter().flatten().enumerate() {
            let Some(obj) = tool.as_object() else {
                continue;
            };
            for (k, v) in obj {
                if k == "functionDeclarations" || k == "function_declarations" {
                    for decl in v.as_array().into_iter().flatten() {
                        if let Some(name) = decl.get("name").and_then(Value::as_str) {
                            self.tools.push(Tool {
                                name: name.to_string(),
                                description: decl.get("description").cloned(),
                                parameters: decl
                                    .get("parameters")
                                    .or_else(|| decl.get("parametersJsonSchema"))
                                    .cloned(),
                            });
                        }
                    }
                } else {
                    lossy.push(Lossy {
                        path: format!("tools[{i}].{k}"),
                        what: "non-function tool dropped".into(),
                    });
                }
            }
        }
    }

    pub(super) fn emit(self, to: FormatName, lossy: &mut Vec<Lossy>) -> Extra {
        let mut out = Extra::new();
        let put = |out: &mut Extra, k: &str, v: Option<Value>| {
            if let Some(v) = v {
                out.insert(k.into(), v);
            }
        };
        match to {
            FormatName::OpenaiChat | FormatName::OpenaiResponses | FormatName::Anthropic => {
                put(&mut out, "model", self.model);
                if to == FormatName::Anthropic {
                    put(&mut out, "max_tokens", self.max_tokens.clone());
                    out.insert("system".into(), Value::Null);
                }
                let slot = if to == FormatName::OpenaiResponses {
                    "input"
                } else {
                    "messages"
                };
                out.insert(slot.into(), Value::Null);
                put(&mut out, "temperature", self.temperature);
                put(&mut out, "top_p", self.top_p);
                match to {
                    FormatName::OpenaiChat => {
                        put(&mut out, "max_completion_tokens", self.max_tokens);
                        put(&mut out, "stop", self.stop);
                    }
                    FormatName::OpenaiResponses => {
                        put(&mut out, "max_output_tokens", self.max_tokens);
                        if self.stop.is_some() {
                            lossy.push(Lossy {
                                path: "stop".into(),
                                what: "stop sequences are not supported by openai-responses".into(),
                            });
                        }
                    }
                    _ => put(&mut out, "stop_sequences", self.stop),
                }
                put(&mut out, "stream", self.stream);
            }
            FormatName::Gemini => {
                if self.model.is_some() {
                    lossy.push(Lossy {
                        path: "model".into(),
                        what: "gemini takes the model in the URL".into(),
                    });
                }
                if self.stream.is_some() {
                    lossy.push(Lossy {
                        path: "stream".into(),
                        what: "gemini streams through the streamGenerateContent URL".into(),
                    });
                }
                out.insert("systemInstruction".into(), Value::Null);
                out.insert("contents".into(), Value::Null);
                let mut cfg = Map::new();
                put(&mut cfg, "temperature", self.temperature);
                put(&mut cfg, "topP", self.top_p);
                put(&mut cfg, "maxOutputTokens", self.max_tokens);
                put(&mut cfg, "stopSequences", self.stop);
                if !cfg.is_empty() {
                    out.insert("generationConfig".into(), Value::Object(cfg));
                }
            }
        }
        if self.has_tools {
            let tools: Vec<Value> = self.tools.into_iter().map(|t| t.emit(to)).collect();
            let value = if to == FormatName::Gemini {
                let mut decls = Map::new();
                decls.insert("functionDeclarations".into(), Value::Array(tools));
                Value::Array(vec![Value::Object(decls)])
            } else {
                Value::Array(tools)
            };
            out.insert("tools".into(), value);
        }
        out
    }
}

impl Tool {
    fn emit(self, to: FormatName) -> Value {
        let mut f = Map::new();
        if to == FormatName::OpenaiResponses {
            f.insert("type".into(), Value::String("function".into()));
        }
        f.insert("name".into(), Value::String(self.name));
        if let Some(d) = self.description {
            f.insert("description".into(), d);
        }
        let schema_key = if to == FormatName::Anthropic {
            "input_schema"
        } else {
            "parameters"
        };
        let schema = self.parameters.unwrap_or_else(|| {
            let mut empty = Map::new();
            empty.insert("type".into(), Value::String("object".into()));
            Value::Object(empty)
        });
        f.insert(schema_key.into(), schema);
        if to == FormatName::OpenaiChat {
            let mut wrapper = Map::new();
            wrapper.insert("type".into(), Value::String("function".into()));
            wrapper.insert("function".into(), Value::Object(f));
            Value::Object(wrapper)
        } else {
            Value::Object(f)
        }
    }
}
