//! Per-tool rules (`tools`): the tools whose outputs no stage takes away,
//! and spill caps of a tool's own. A tool result's tool is the name of the
//! call it answers (every format links the two by the call's id).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::Config;
use crate::error::{invalid_option, Error, ErrorCode, Result};

/// Longest tool name the rules take, in bytes.
const MAX_NAME_BYTES: usize = 256;

/// Per-tool rules, as Anthropic's `exclude_tools` and LangChain's
/// `excludeTools` offer (`tools` in the options).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct ToolsConfig {
    /// Tools whose outputs stay as they are (a memory, todo or plan tool):
    /// dedup, the phase clean-up and optical snapshots leave them alone, and
    /// a compaction keeps them word for word after its summary. Spilling
    /// caps them only when `spillCaps` names them. Exact names, as the
    /// calls give them.
    pub exclude: Vec<String>,
    /// A tool's own spill cap in tokens, replacing
    /// `max(spill.floorTokens, spill.fraction × budget)` for its outputs
    /// (1 to `budget`), e.g. `{ "bash": 1000 }`; none by default.
    pub spill_caps: BTreeMap<String, u64>,
}

impl ToolsConfig {
    /// Whether `tool`'s outputs are kept from every stage but spilling.
    pub fn excludes(&self, tool: &str) -> bool {
        self.exclude.iter().any(|t| t == tool)
    }

    /// Whether no rule is set (then no stage needs the tools' names).
    pub fn is_empty(&self) -> bool {
        self.exclude.is_empty() && self.spill_caps.is_empty()
    }

    /// Checks the rules: names of 1-256 bytes (not only blanks), at most
    /// `limits.maxToolRules` of them in all, caps in 1..=`budget`.
    pub(super) fn validate(&self, config: &Config) -> Result<()> {
        let rules = self.exclude.len() + self.spill_caps.len();
        let most = config.limits.max_tool_rules;
        if rules > most {
            return Err(Error::new(
                ErrorCode::LimitExceeded,
                "tools",
                format!("{rules} tool rules, limits.maxToolRules is {most}"),
            ));
        }
        let malformed = |name: &str| name.trim().is_empty() || name.len() > MAX_NAME_BYTES;
        for (i, name) in self.exclude.iter().enumerate() {
            if malformed(name) {
                return invalid_option(
                    &format!("tools.exclude[{i}]"),
                    "must be a tool name of 1-256 bytes, not only blanks",
                );
            }
        }
        for (name, &cap) in &self.spill_caps {
            if malformed(name) {
                return invalid_option(
                    "tools.spillCaps",
                    "each key must be a tool name of 1-256 bytes, not only blanks",
                );
            }
            if !(1..=config.budget).contains(&cap) {
                return invalid_option(
                    &format!("tools.spillCaps.{name}"),
                    &format!(
                        "must be between 1 and budget ({}) tokens, got {cap}",
                        config.budget
                    ),
                );
            }
        }
        Ok(())
    }
}

impl Config {
    /// The spill cap of an output of `tool` (`None`: a tool result whose
    /// call is not in the request): the tool's own (`tools.spillCaps`), else
    /// none for an excluded tool, else [`Config::result_cap`].
    pub fn spill_cap(&self, tool: Option<&str>) -> Option<u64> {
        match tool {
            Some(t) => match self.tools.spill_caps.get(t) {
                Some(&cap) => Some(cap),
                None if self.tools.excludes(t) => None,
                None => Some(self.result_cap()),
            },
            None => Some(self.result_cap()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn rules_are_read_and_caps_replace_the_computed_one() {
        let c = Config::from_json(json!({"tools": {
            "exclude": ["todo", "memory"], "spillCaps": {"bash": 300, "memory": 900}
        }}))
        .unwrap();
        assert!(c.tools.excludes("todo") && !c.tools.excludes("bash"));
        assert_eq!(c.spill_cap(Some("bash")), Some(300));
        assert_eq!(c.spill_cap(Some("todo")), None, "excluded: not spilled");
        assert_eq!(c.spill_cap(Some("memory")), Some(900), "its own cap");
        assert_eq!(c.spill_cap(Some("ls")), Some(c.result_cap()));
        assert_eq!(c.spill_cap(None), Some(c.result_cap()));
        assert!(Config::default().tools.is_empty());
    }

    #[test]
    fn bad_rules_name_their_path() {
        for (tools, code, path) in [
            (
                json!({"exclude": ["a", "b", ""]}),
                ErrorCode::InvalidOption,
                "tools.exclude[2]",
            ),
            (
                json!({"exclude": ["  "]}),
                ErrorCode::InvalidOption,
                "tools.exclude[0]",
            ),
            (
                json!({"exclude": ["x".repeat(257)]}),
                ErrorCode::InvalidOption,
                "tools.exclude[0]",
            ),
            (
                json!({"exclude": [3]}),
                ErrorCode::InvalidOption,
                "tools.exclude[0]",
            ),
            (
                json!({"spillCaps": {"bash": 0}}),
                ErrorCode::InvalidOption,
                "tools.spillCaps.bash",
            ),
            (
                json!({"spillCaps": {"bash": 128_001}}),
                ErrorCode::InvalidOption,
                "tools.spillCaps.bash",
            ),
            (
                json!({"spillCaps": {"bash": 1.5}}),
                ErrorCode::InvalidOption,
                "tools.spillCaps.bash",
            ),
            (
                json!({"spillCaps": {"": 10}}),
                ErrorCode::InvalidOption,
                "tools.spillCaps",
            ),
            (
                json!({"exclude": vec!["t"; 257]}),
                ErrorCode::LimitExceeded,
                "tools",
            ),
            (
                json!({"keep": ["t"]}),
                ErrorCode::InvalidOption,
                "tools.keep",
            ),
        ] {
            let e = Config::from_json(json!({ "tools": tools })).unwrap_err();
            assert_eq!((e.code, e.path.as_str()), (code, path), "{tools}: {e}");
            assert!(e.to_string().contains(path), "{e}");
        }
        let e = Config::from_json(json!({
            "limits": {"maxToolRules": 1}, "tools": {"exclude": ["a"], "spillCaps": {"b": 5}}
        }))
        .unwrap_err();
        assert_eq!(e.message, "2 tool rules, limits.maxToolRules is 1");
        assert!(
            Config::from_json(json!({"budget": 500, "tools": {"spillCaps": {"b": 500}}})).is_ok()
        );
    }
}
