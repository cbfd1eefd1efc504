//! TraceLite keeps an LLM agent's context small without losing what the agent needs.
//!
//! A provider request is parsed into a neutral [`model::Conversation`], run
//! through five stages (spill → dedup → phase → optical → compact; the
//! stages propose, the planner commits what pays, the stages apply it) and
//! emitted in the same format by one emit step, with a [`pipeline::Report`]
//! of every change. Everything a stage removes stays readable through a
//! `spill://` pointer. [`compress`] is the one entry point (a conversation
//! in, an [`Output`] out); [`compress_json`] wraps it for request text.
//!
//! ```
//! use tracelite::{compress_json, Config, Env, HostState, MemoryStore};
//!
//! let request = r#"{"model":"gpt-4o","messages":[{"role":"user","content":"hi"}]}"#;
//! let (mut store, mut state) = (MemoryStore::new(), HostState::default());
//! let env = Env::new(&mut store, &mut state);
//! let out = compress_json(request, &Config::default(), env).unwrap();
//! assert_eq!(out.request, request);
//! assert_eq!(out.report.tokens_before, out.report.tokens_after);
//! ```
//!
//! # Layers
//!
//! A module imports only from its own layer or the layers below it, no
//! stage imports another, and the planner imports no stage
//! (`tests/layers.rs` checks every `crate::` path):
//!
//! | layer | modules |
//! |---|---|
//! | 5 host | `wasm` (the only code touching wasm-bindgen), [`controller`] (the stateful [`TraceLite`]); a host reaches a stage only through its `api` module ([`spill::api`], [`compact::api`], [`optical::api`]) |
//! | 4 pipeline | [`pipeline`] ([`compress`] and [`compress_json`]; runs the stages, owns [`HostState`], builds the [`Report`] once), [`persist`] (export/import of `HostState` caches) |
//! | 3 planner | [`plan`] ([`plan::commit`] and the demotion round [`plan::commit_demotions`]: demotions and compactions priced in one place; its candidates and decisions, [`plan::decision`]); the pipeline alone calls it |
//! | 2 stages | [`spill`], [`dedup`], [`phase`], [`optical`], [`compact`]: each owns its state type, returns its changes and proposals, and never imports the planner |
//! | 1 contract | [`stage`] (the `Stage` trait; `StageContext`: what a stage reads and uses; `StageOutput`: what it returns, its changes, spills and proposal; the committed `Schedule` and the `Verdict` it reads), [`activity`] |
//! | 0 base | in tiers, lowest first, each importing only from a lower one: [`error`], [`model`], [`provider`], [`text`] < [`hash`], [`json`], [`capability`] < [`redact`], [`store`], [`formats`] (parse ⇄ emit, and the emit step [`formats::emit_request`]) < [`config`], [`trajectory`] < [`tokens`] |
//!
//! No folder holds an import circle among its files (its `mod.rs` aside).

pub mod activity;
pub mod capability;
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
pub use pipeline::{compress, compress_json, Env, HostState, Known, Output, Report};
pub use store::{MemoryStore, SpillStore};
pub use trajectory::{trajectory_to_request, Trajectory};
