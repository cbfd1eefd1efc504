//! Per-tool rules, as Anthropic's `exclude_tools`, LangChain's
//! `excludeTools` and the AI SDK's `pruneMessages` offer: `excludeTools`
//! (outputs no stage takes away) and `spill.toolCaps` (a tool's own spill
//! cap, checked with the `spill` section). A tool result's tool is the name
//! of the call it answers (every format links the two by the call's id).

use super::Config;
use crate::error::{invalid_option, Error, ErrorCode, Result};

/// Longest tool name the rules take, in bytes.
const MAX_NAME_BYTES: usize = 256;

/// Whether `name` is not a tool name the rules take (1-256 bytes, not only
/// blanks).
pub(crate) fn malformed_tool(name: &str) -> bool {
    name.trim().is_empty() || name.len() > MAX_NAME_BYTES
}

/// What a malformed tool name is told.
pub(crate) const TOOL_NAME: &str = "must be a tool name of 1-256 bytes, not only blanks";

/// `LIMIT_EXCEEDED` at `path` when `rules` is over `limits.maxToolRules`.
pub(crate) fn check_rule_count(config: &Config, path: &str, rules: usize) -> Result<()> {
    let most = config.limits.max_tool_rules;
    if rules > most {
        return Err(Error::new(
            ErrorCode::LimitExceeded,
            path,
            format!("{rules} tools, limits.maxToolRules is {most}"),
        ));
    }
    Ok(())
}

impl Config {
    /// Whether `tool`'s outputs are kept from every stage but spilling
    /// (`excludeTools`).
    pub fn excludes(&self, tool: &str) -> bool {
        self.exclude_tools.iter().any(|t| t == tool)
    }

    /// Whether a per-tool rule is set (else no stage needs the tools' names).
    pub fn has_tool_rules(&self) -> bool {
        !self.exclude_tools.is_empty() || !self.spill.tool_caps.is_empty()
    }

    /// The spill cap of an output of `tool` (`None`: a tool result whose
    /// call is not in the request): the tool's own (`spill.toolCaps`), else
    /// none for an excluded tool, else [`Config::result_cap`].
    pub fn spill_cap(&self, tool: Option<&str>) -> Option<u64> {
        match tool {
            Some(t) => match self.spill.tool_caps.get(t) {
                Some(&cap) => Some(cap as u64),
                None if self.excludes(t) => None,
                None => Some(self.result_cap()),
            },
            None => Some(self.result_cap()),
        }
    }

    /// Checks `excludeTools`: at most `limits.maxToolRules` names of 1-256
    /// bytes, not only blanks.
    pub(super) fn validate_exclude_tools(&self) -> Result<()> {
        check_rule_count(self, "excludeTools", self.exclude_tools.len())?;
        match self.exclude_tools.iter().position(|t| malformed_tool(t)) {
            Some(i) => invalid_option(&format!("excludeTools[{i}]"), TOOL_NAME),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn rules_are_read_and_caps_replace_the_computed_one() {
        let c = Config::from_json(json!({
            "excludeTools": ["todo", "memory"],
            "spill": {"toolCaps": {"bash": 300, "memory": 900}}
        }))
        .unwrap();
        assert!(c.excludes("todo") && !c.excludes("bash") && c.has_tool_rules());
        assert_eq!(c.spill_cap(Some("bash")), Some(300));
        assert_eq!(c.spill_cap(Some("todo")), None, "excluded: not spilled");
        assert_eq!(c.spill_cap(Some("memory")), Some(900), "its own cap");
        assert_eq!(c.spill_cap(Some("ls")), Some(c.result_cap()));
        assert_eq!(c.spill_cap(None), Some(c.result_cap()));
        assert!(!Config::default().has_tool_rules());
        let back = serde_json::to_value(&c).unwrap();
        assert_eq!(
            back["spill"]["toolCaps"],
            json!({"bash": 300, "memory": 900})
        );
        assert_eq!(back["excludeTools"], json!(["todo", "memory"]));
    }

    #[test]
    fn bad_rules_name_their_path() {
        let caps = |caps| json!({ "spill": { "toolCaps": caps } });
        let too_many: serde_json::Map<String, serde_json::Value> =
            (0..257).map(|i| (format!("t{i}"), json!(1))).collect();
        for (options, code, path, message) in [
            (
                json!({"excludeTools": ["a", "b", ""]}),
                ErrorCode::InvalidOption,
                "excludeTools[2]",
                TOOL_NAME,
            ),
            (
                json!({"excludeTools": ["  "]}),
                ErrorCode::InvalidOption,
                "excludeTools[0]",
                TOOL_NAME,
            ),
            (
                json!({"excludeTools": ["x".repeat(257)]}),
                ErrorCode::InvalidOption,
                "excludeTools[0]",
                TOOL_NAME,
            ),
            (
                json!({"excludeTools": [3]}),
                ErrorCode::InvalidOption,
                "excludeTools[0]",
                "must be a string, got 3",
            ),
            (
                json!({"excludeTools": "todo"}),
                ErrorCode::InvalidOption,
                "excludeTools",
                "must be an array, got the string \"todo\"",
            ),
            (
                json!({"excludeTools": vec!["t"; 257]}),
                ErrorCode::LimitExceeded,
                "excludeTools",
                "257 tools, limits.maxToolRules is 256",
            ),
            (
                caps(json!({"bash": 0})),
                ErrorCode::InvalidOption,
                "spill.toolCaps.bash",
                "must be between 1 and budget (128000) tokens, got 0",
            ),
            (
                caps(json!({"bash": 128_001})),
                ErrorCode::InvalidOption,
                "spill.toolCaps.bash",
                "must be between 1 and budget (128000) tokens, got 128001",
            ),
            (
                caps(json!({"bash": "1k"})),
                ErrorCode::InvalidOption,
                "spill.toolCaps.bash",
                "must be a non-negative integer, got the string \"1k\"",
            ),
            (
                caps(json!({"": 10})),
                ErrorCode::InvalidOption,
                "spill.toolCaps",
                TOOL_NAME,
            ),
            (
                caps(too_many.into()),
                ErrorCode::LimitExceeded,
                "spill.toolCaps",
                "257 tools, limits.maxToolRules is 256",
            ),
        ] {
            let e = Config::from_json(options.clone()).unwrap_err();
            assert_eq!(
                (e.code, e.path.as_str(), e.message.as_str()),
                (code, path, message),
                "{options}"
            );
        }
        let e = Config::from_json(json!({
            "limits": {"maxToolRules": 1}, "excludeTools": ["a", "b"]
        }))
        .unwrap_err();
        assert_eq!(e.message, "2 tools, limits.maxToolRules is 1");
        let small = json!({"budget": 500, "spill": {"toolCaps": {"b": 500}}});
        assert!(Config::from_json(small).is_ok());
    }
}
