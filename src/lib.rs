//! TraceLite keeps an LLM agent's context small without losing what the agent needs.
//!
//! A provider request is parsed into a neutral [`model::Conversation`], run
//! through five stages (spill → dedup → phase → optical → compact) and emitted
//! in the same format, with a [`pipeline::Report`] of every change. Everything a
//! stage removes stays readable through a `spill://` pointer.
//!
//! ```
//! use tracelite::{compress, Config, MemoryStore};
//!
//! let request = r#"{"model":"gpt-4o","messages":[{"role":"user","content":"hi"}]}"#;
//! let mut store = MemoryStore::new();
//! let out = compress(request, &Config::default(), &mut store).unwrap();
//! assert_eq!(out.request, request);
//! assert_eq!(out.report.tokens_before, out.report.tokens_after);
//! ```

pub mod activity;
pub mod compact;
pub mod config;
pub mod controller;
pub mod dedup;
pub mod error;
pub mod formats;
pub mod hash;
pub mod json;
pub mod model;
pub mod optical;
pub mod persist;
pub mod phase;
pub mod pipeline;
pub mod plan;
pub mod provider;
pub mod redact;
pub mod spill;
pub mod stage;
pub mod store;
pub mod text;
pub mod tokens;
pub mod trajectory;
#[cfg(target_arch = "wasm32")]
mod wasm;

pub use config::Config;
pub use controller::TraceLite;
pub use error::{Error, ErrorCode, Result};
pub use pipeline::{compress, compress_with, Env, HostState, Output, Report};
pub use store::{MemoryStore, SpillStore};
pub use trajectory::{trajectory_to_request, Trajectory};
