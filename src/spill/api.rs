//! The spill stage's host API: what a host (the wasm bindings, the
//! `TraceLite` controller) may ask of spilling outside a compress call. A
//! host reaches the stage through this module only (`tests/layers.rs`
//! checks it); the store it keeps spills in is the base layer's
//! [`crate::store`].
//!
//! * [`spill_text`]: caps one tool output on demand (`spillText`, the
//!   controller's `limits.maxHistoryBytes`), with the cap of its tool;
//! * the agent's tools over the store: [`tool_definitions`] of `read_spill`
//!   and `grep_spill` in each [`ToolFormat`], [`handle_tool_call_within`]
//!   to answer a call, and the tools' paging and search limits.

pub use super::tools::{
    handle_tool_call_within, tool_definitions, ToolFormat, DEFAULT_LIMIT, MAX_CONTEXT, MAX_LIMIT,
    MAX_MATCHES,
};

use super::{compile_signals, spill_one, ExcerptCache, Spilled};
use crate::config::Config;
use crate::error::Result;
use crate::stage::{SharedCaches, StageContext};
use crate::store::SpillStore;
use crate::tokens::TokenCounter;

/// Caps one text outside a conversation (e.g. a tool output before the
/// agent loop adds it), as the stage caps a tool result: over the cap of
/// `tool` ([`Config::spill_cap`]: its own `spill.toolCaps` entry, none for
/// a tool in `excludeTools` without one, else [`Config::result_cap`]; `None`,
/// a text of no known tool, has the computed cap) it is kept in `store`
/// under `config.session` and replaced by its excerpt.
pub fn spill_text(
    text: &str,
    tool: Option<&str>,
    config: &Config,
    store: &mut dyn SpillStore,
    counter: &dyn TokenCounter,
) -> Result<Spilled> {
    let (mut keys, mut redacted, mut activities) = Default::default();
    let caches = SharedCaches {
        keys: &mut keys,
        redacted: &mut redacted,
        activities: &mut activities,
    };
    let mut excerpts = ExcerptCache::default();
    let mut cx = StageContext::new(config, counter, store, caches, &mut excerpts);
    let spilled = match config.spill_cap(tool) {
        Some(cap) => spill_one(text, &compile_signals(&config.spill)?, &mut cx, None, cap)?,
        None => None,
    };
    match spilled {
        Some(spilled) => Ok(spilled),
        None => {
            let tokens = cx.meter.text(text)?;
            Ok(Spilled {
                text: text.to_string(),
                spilled: false,
                pointer: None,
                refused: None,
                tokens_before: tokens,
                tokens_after: tokens,
                detail: String::new(),
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{MemoryStore, SpillStore};
    use crate::tokens::Estimator;
    use serde_json::json;

    /// A tool in `excludeTools` is not spilled unless it has a cap of its
    /// own; another tool's own cap replaces the computed one.
    #[test]
    fn spill_text_takes_the_cap_of_its_tool() {
        let config = Config::from_json(json!({
            "budget": 4000,
            "excludeTools": ["todo", "memory"],
            "spill": {"toolCaps": {"memory": 3000, "bash": 3000}}
        }))
        .unwrap();
        let text: String = (0..900)
            .map(|i| format!("line {i} of the output\n"))
            .collect();
        let spilled = |tool| {
            let mut store = MemoryStore::new();
            let out = spill_text(&text, tool, &config, &mut store, &Estimator).unwrap();
            (out.spilled, store.list(&config.session).len())
        };
        assert_eq!(
            spilled(Some("todo")),
            (false, 0),
            "excluded, no cap of its own"
        );
        assert_eq!(
            spilled(Some("memory")),
            (true, 1),
            "excluded, with a cap of its own"
        );
        assert_eq!(spilled(Some("grep")), (true, 1), "the computed cap");
        assert_eq!(spilled(None), (true, 1), "no tool: the computed cap");
        let (mut a, mut b) = (MemoryStore::new(), MemoryStore::new());
        let own = spill_text(&text, Some("bash"), &config, &mut a, &Estimator).unwrap();
        let computed = spill_text(&text, Some("grep"), &config, &mut b, &Estimator).unwrap();
        assert!(
            own.tokens_after > computed.tokens_after,
            "bash keeps its larger cap"
        );
    }
}
