//! Each stage's settings (`spill`, `dedup`, `phase`, `optical`, `compact`),
//! the planner's (`plan`) and redaction's (`redact`), with their defaults.

use serde::{Deserialize, Serialize};

/// Spilling settings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct SpillConfig {
    /// Stage switch.
    pub enabled: bool,
    /// Minimum cap per tool result, in tokens.
    pub floor_tokens: u64,
    /// Cap as a share of the budget (default 0.02: 2,560 tokens, about
    /// 10 KB of text, at the default budget; the design's 0.25 measured
    /// worse on every column of `make bench`, see the README).
    pub fraction: f64,
    /// Share of the cap given to the head of the excerpt (the rest goes to the tail).
    pub head_share: f64,
    /// Share of the cap the excerpt may spend naming what its hidden middle
    /// holds (paths and definitions with their lines, the ids of failing
    /// tests the error listing left out); 0 turns the index off.
    pub index_share: f64,
    /// Patterns (small regex dialect, matched ignoring ASCII case; `(?-i)`
    /// restores it) marking error lines of the hidden middle that the excerpt
    /// lists. Default: `Traceback`, `Error`, `FATAL`, `CRITICAL`, `npm ERR!`,
    /// `panic`, `Exception`, `FAILED`, `exit code [1-9]`, `returncode>[1-9]`.
    pub error_patterns: Vec<String>,
    /// How many hidden lines matching the patterns to list besides the
    /// critical ones (every traceback's last line, error lines, failing
    /// tests: all listed, marked `!`, within 1,600 bytes).
    pub max_error_lines: usize,
    /// The host's own critical-line detectors, one table per tool, added to
    /// the built-in ones (jest, vitest, mocha, node:test, TAP, tsc, eslint,
    /// vite, npm, cargo, go, make, rspec: `src/spill/detectors.rs`): lines
    /// they mark are listed with the critical ones. Patterns: the spill
    /// tools' regex dialect, case kept.
    pub detectors: Vec<DetectorTable>,
    /// Where the host keeps spills as files (an absolute directory, e.g. a
    /// `FileStore`'s root): pointers become the file's path,
    /// `<pointerRoot>/<session>/<key>.txt`, and excerpts say how to read it
    /// with ordinary tools (`sed -n`, `grep -n`). Empty: `spill://` pointers.
    pub pointer_root: String,
    /// A tool's own cap in tokens, replacing the computed one for its
    /// outputs (1 to `budget`), e.g. `{ "bash": 1000 }`; also the one cap
    /// of a tool in `excludeTools`. None by default.
    pub tool_caps: std::collections::BTreeMap<String, usize>,
    /// Salience at arrival: fold the lines of an output nothing marks as
    /// likely used behind its pointer (off by default).
    pub salience: super::SalienceConfig,
}

impl SpillConfig {
    /// Default `index_share`: 5% of the cap (about 380 bytes at the default
    /// cap), enough for a dozen paths and definitions.
    pub const INDEX_SHARE: f64 = 0.05;
}

impl Default for SpillConfig {
    fn default() -> Self {
        Self {
            enabled: true,
            floor_tokens: 2_000,
            fraction: 0.02,
            head_share: 0.65,
            index_share: Self::INDEX_SHARE,
            error_patterns: [
                "Traceback",
                "Error",
                "FATAL",
                "CRITICAL",
                "npm ERR!",
                "panic",
                "Exception",
                "FAILED",
                "exit code [1-9]",
                "returncode>[1-9]",
            ]
            .map(String::from)
            .to_vec(),
            max_error_lines: 5,
            detectors: Vec::new(),
            pointer_root: String::new(),
            tool_caps: std::collections::BTreeMap::new(),
            salience: super::SalienceConfig::default(),
        }
    }
}

/// One tool's critical-line detectors (`spill.detectors`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct DetectorTable {
    /// The tool whose output the rules read (a name for errors and reports).
    pub tool: String,
    /// Patterns of lines critical in themselves (`^make: \*\*\* `).
    pub lines: Vec<String>,
    /// Patterns of a failing test's line, critical too, the test's id in
    /// the first group (`^--- FAIL: (\S+)`): the excerpt counts those it
    /// could not list and gives the pattern to find them.
    pub tests: Vec<String>,
    /// After each line matching `when`, the first line matching `find`
    /// within `within` lines is critical (the location under a test's heading).
    pub after: Vec<ContextRule>,
    /// Before each line matching `when`, the nearest line matching `find`
    /// within `within` lines is critical (the file heading above an error row).
    pub before: Vec<ContextRule>,
}

/// A detector rule that looks around a line (`spill.detectors[].after`, `.before`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct ContextRule {
    /// Pattern of the line the rule starts from.
    pub when: String,
    /// Pattern of the line it marks critical.
    pub find: String,
    /// How many lines away it looks (1 to 1,000).
    pub within: usize,
}

/// Dedup settings (stage 2). An observation loses the lines (trimmed length
/// above `min_line_chars`) that reappear in a later observation that was inside
/// the recent window (`window`) with it; the newest observation and tool calls
/// are never touched.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct DedupConfig {
    /// Stage switch.
    pub enabled: bool,
    /// Lines whose trimmed length is at most this are never deduplicated. Default 5.
    pub min_line_chars: usize,
    /// Edit earlier observations only on the turns when observations leave
    /// the recent window in a batch (`optical.batch`), so the prompt prefix
    /// changes once per batch instead of every turn (prompt caches keep
    /// working); `false` edits on every new observation. While the window
    /// fills (the first `window` observations) every arrival is settled, so
    /// dedup edits on each of those turns either way.
    pub batched: bool,
}

impl Default for DedupConfig {
    fn default() -> Self {
        Self {
            enabled: true,
            min_line_chars: 5,
            batched: true,
        }
    }
}

/// Why the phase stage clears an output: the entries of `phase.clear`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClearReason {
    /// A search that led to the change.
    Search,
    /// A listing that led to the change.
    Listing,
    /// The same command ran again later.
    Rerun,
    /// A view of a file edited since.
    EditedView,
}

impl ClearReason {
    /// The `phase.clear` name of the reason.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Search => "searches",
            Self::Listing => "listings",
            Self::Rerun => "reruns",
            Self::EditedView => "editedViews",
        }
    }

    /// Every reason, in `phase.clear` order.
    pub const ALL: [ClearReason; 4] = [Self::Search, Self::Listing, Self::Rerun, Self::EditedView];
}

/// Edit-triggered clean-up settings (stage 3).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct PhaseConfig {
    /// Stage switch.
    pub enabled: bool,
    /// Keep clearing after the phase began: outputs a later change consumed
    /// and outputs of commands run again, at each batch (the prompt prefix
    /// then breaks at every such batch). Off: the clean-up happens once.
    pub every_phase: bool,
    /// What the clean-up clears once the phase begins: `searches` and
    /// `listings` that led to the change, `reruns` (outputs of commands run
    /// again later), `editedViews` (views of a file edited since).
    pub clear: Vec<String>,
    /// Tools whose calls are edits: `name` (every call) or `name:command`
    /// (only calls whose `command` argument is `command`, e.g.
    /// `str_replace_editor:create`).
    pub edit_tools: Vec<String>,
    /// Tools that run shell commands (argument `command` or `cmd`, a string or
    /// an argv array); their commands are scanned for file writes (`sed -i`,
    /// `cat > f`, heredocs, `tee`, `echo … > f`, `git apply`, `patch`, Python
    /// `open(…, 'w')`).
    pub shell_tools: Vec<String>,
    /// An edit whose result looks like a failure (`is_error`, "No replacement
    /// was performed", `sed: -e expression`, …) does not start a phase.
    pub skip_failed: bool,
    /// Edits whose target path has a component matching one of these globs
    /// (`*` wildcard, e.g. `reproduce*`, `/tmp`) do not start a phase:
    /// writing a scratch reproduction script is still diagnosis. Empty by
    /// default (every file write counts, as the design says).
    pub ignore_targets: Vec<String>,
}

impl Default for PhaseConfig {
    fn default() -> Self {
        Self {
            enabled: true,
            every_phase: false,
            clear: ["searches", "listings", "reruns", "editedViews"]
                .map(String::from)
                .to_vec(),
            edit_tools: [
                "str_replace_editor:create",
                "str_replace_editor:str_replace",
                "str_replace_editor:insert",
                "edit_file",
                "apply_patch",
                "write_file",
                "Edit",
                "MultiEdit",
                "Write",
            ]
            .map(String::from)
            .to_vec(),
            shell_tools: [
                "bash",
                "execute_bash",
                "shell",
                "run_shell_command",
                "run_terminal_cmd",
                "exec_command",
                "Bash",
            ]
            .map(String::from)
            .to_vec(),
            skip_failed: true,
            ignore_targets: Vec::new(),
        }
    }
}

/// The optical stage's switch (`optical.enabled`): `'auto'`, `true` or `false`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OpticalSwitch {
    /// Snapshots only for a model that reads images (the capability table,
    /// or the caller's `models`); for any other the stage does not apply.
    #[default]
    Auto,
    /// Snapshots whatever the model.
    On,
    /// No snapshots.
    Off,
}

impl Serialize for OpticalSwitch {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Auto => s.serialize_str("auto"),
            Self::On => s.serialize_bool(true),
            Self::Off => s.serialize_bool(false),
        }
    }
}

impl<'de> Deserialize<'de> for OpticalSwitch {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Switch;
        impl serde::de::Visitor<'_> for Switch {
            type Value = OpticalSwitch;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("true, false or \"auto\"")
            }
            fn visit_bool<E: serde::de::Error>(self, v: bool) -> Result<OpticalSwitch, E> {
                Ok(if v {
                    OpticalSwitch::On
                } else {
                    OpticalSwitch::Off
                })
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<OpticalSwitch, E> {
                if v == "auto" {
                    Ok(OpticalSwitch::Auto)
                } else {
                    Err(E::invalid_value(serde::de::Unexpected::Str(v), &self))
                }
            }
        }
        d.deserialize_any(Switch)
    }
}

/// Optical snapshot settings: older tool results become images of their text
/// when that costs at most `1/ratio` of the text's tokens.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct OpticalConfig {
    /// Stage switch: `'auto'` renders snapshots only for a model that reads
    /// images (the model capability table, or `models`), `true` for any
    /// model, `false` never.
    pub enabled: OpticalSwitch,
    /// Render only if image tokens (plus the one-line reference) ≤ text tokens / ratio.
    pub ratio: f64,
    /// Observations leave the recent window in batches of this many, so the
    /// prompt prefix stays byte-identical between batches (prefix cache).
    pub batch: usize,
    /// Largest font pixel height the layout may use (4–64).
    pub font_px: u32,
    /// Smallest font pixel height the layout may use; the layout takes the
    /// largest size in `minFontPx..=fontPx` that reaches the lowest image cost.
    pub min_font_px: u32,
    /// Blank pixel rows between text lines (0–3).
    pub line_gap: u32,
    /// Narrowest wrap width in columns the layout may choose (lines shorter
    /// than this are never padded to it).
    pub min_columns: usize,
    /// PNG grayscale bit depth: 1, 2, 4 or 8.
    pub bit_depth: u8,
    /// An observation whose share of glyphs missing from the font exceeds this stays text.
    pub max_missing_share: f64,
    /// When the line-by-line image costs more than `1/ratio` of the text, try
    /// the lines run together with `»` marking each break (every row full, so
    /// fewer image tokens; indentation no longer lines up).
    pub reflow: bool,
    /// OpenAI `detail` (`high` or `low`).
    pub detail: String,
    /// Gemini 3 `media_resolution` (`low`, `medium`, `high`), or empty for tile pricing.
    pub media_resolution: String,
    /// Multiplier for OpenAI patch models (mini 1.62, nano 2.46, o4-mini 1.72).
    pub patch_multiplier: f64,
    /// Keep views of files not edited since (what an edit may quote in its
    /// `old_str`) as text instead of rendering them.
    pub keep_live_views: bool,
    /// Live views kept as text (`keepLiveViews`): the newest this many;
    /// older live views are rendered. 0: no bound. A count, not tokens: the
    /// set must change only when the planner moves the rendered boundary,
    /// and the text of a view may still change in between (unbatched dedup).
    pub max_live_views: usize,
    /// Maximum images per request (images already in the request count too).
    pub max_images: usize,
    /// Bytes of rendered images a session keeps in its render cache.
    pub cache_bytes: usize,
    /// Send snapshots by URL where the format takes image URLs (OpenAI Chat
    /// and Responses, Anthropic; Gemini stays inline): an `https` URL
    /// template (`http` for localhost) holding `{id}`, which each snapshot's
    /// content id replaces; the result's `images` holds the PNGs the host
    /// must serve there ([`crate::formats::image_urls`]). Empty: inline
    /// base64 (default).
    pub image_url: String,
}

impl Default for OpticalConfig {
    fn default() -> Self {
        Self {
            enabled: OpticalSwitch::Auto,
            ratio: 2.0,
            batch: 3,
            font_px: 12,
            min_font_px: 10,
            line_gap: 1,
            min_columns: 60,
            bit_depth: 2,
            max_missing_share: 0.05,
            reflow: true,
            detail: "high".into(),
            media_resolution: String::new(),
            patch_multiplier: 1.62,
            keep_live_views: false,
            max_live_views: 1,
            max_images: 50,
            cache_bytes: 32 << 20,
            image_url: String::new(),
        }
    }
}

/// Compaction settings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct CompactConfig {
    /// Stage switch (off means off: no trigger, no re-applied summary).
    pub enabled: bool,
    /// Token threshold that triggers compaction; the effective threshold is
    /// never closer to the budget than one capped tool result.
    pub threshold: u64,
    /// Messages kept verbatim at the end (the cut moves so that no tool call
    /// is separated from its result).
    pub keep: usize,
    /// Never compact again within this many turns (assistant turns since the
    /// last summary) unless the budget forces it.
    pub min_turns: usize,
    /// Phrases marking user constraints kept word for word (matched
    /// case-insensitively at word boundaries in user messages).
    pub constraint_patterns: Vec<String>,
    /// Constraints pinned by the host, archived word for word.
    pub pinned: Vec<String>,
    /// Compact only when the cache-aware cost estimate (prices and horizon
    /// of [`crate::plan`]) says it pays, or the budget forces it; `false`
    /// compacts whenever a trigger fires.
    pub planner: bool,
    /// Do not compact unless it removes at least this many tokens.
    pub min_saving: u64,
    /// Detect stage boundaries (a successful test or run after an edit).
    pub detect_stages: bool,
    /// Keep every compacted tool call (name and arguments, verbatim, in
    /// order) in a tool-call log after the summary: tool calls stay text.
    /// Secrets in the arguments are masked like all text reaching the model
    /// when `redact.enabled` (default); the originals stay in the spill store.
    pub keep_tool_calls: bool,
    /// Share of the budget the user's own messages (the task, later
    /// instructions) may fill when compaction keeps them word for word;
    /// beyond it the oldest (never the first nor the newest) go behind a
    /// pointer and their constraints into the archive.
    pub user_share: f64,
    /// Tokens of file views a compaction keeps as they were shown: the
    /// newest output showing each file the compacted turns read or edited,
    /// unless a later turn shows it again ([`crate::compact::views`]);
    /// 0 keeps none.
    pub live_views: u64,
    /// Share of the budget the tool-call log may fill; beyond it its oldest
    /// calls are folded into one line citing the compaction's blob, which
    /// holds them verbatim (a session of any length stays in the budget).
    pub call_log_share: f64,
    /// Share of the budget the summary may fill; beyond it the oldest lines
    /// of Progress, Key facts and Decisions (critical lines last) leave it,
    /// readable in the previous summary that the compaction's blob keeps.
    /// With `userShare` and `callLogShare` it bounds what compactions carry
    /// forward, so a long session's requests (and cost per turn) stay flat.
    pub summary_share: f64,
}

/// Token prices in US dollars per million tokens.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Prices {
    /// Uncached input.
    pub input: f64,
    /// Input read from the prompt cache.
    pub cached_input: f64,
    /// Input written to the prompt cache (what a cache miss costs where
    /// writes are billed separately; equal to `input` elsewhere).
    pub cache_write: f64,
}

impl Default for CompactConfig {
    fn default() -> Self {
        Self {
            enabled: true,
            threshold: 100_000,
            keep: 6,
            min_turns: 5,
            constraint_patterns: [
                "must",
                "never",
                "don't",
                "do not",
                "only",
                "always",
                "should not",
                "avoid",
            ]
            .map(String::from)
            .to_vec(),
            pinned: Vec::new(),
            planner: true,
            min_saving: 2_000,
            detect_stages: true,
            keep_tool_calls: true,
            user_share: 0.05,
            live_views: 2_000,
            call_log_share: 0.04,
            summary_share: 0.04,
        }
    }
}

/// Secret redaction settings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct RedactConfig {
    /// Mask secrets in excerpts, snapshots and summaries.
    pub enabled: bool,
    /// Also mask them in the spill store (the original is then lost).
    pub store: bool,
}

impl Default for RedactConfig {
    fn default() -> Self {
        Self {
            enabled: true,
            store: false,
        }
    }
}

/// Planner settings (`plan` in the options).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct PlanConfig {
    /// Price-aware demotion: move the boundary of the rewritten history only
    /// when it pays. Off: in fixed batches of `optical.batch` observations.
    pub enabled: bool,
    /// Turns still to come; 0 derives it from the turns so far.
    pub horizon: usize,
    /// Smallest derived horizon.
    pub min_horizon: usize,
    /// Largest derived horizon (default 15): a rewrite must pay back within
    /// 15 turns. The turns so far overestimate what is left of a task that
    /// is nearly done, and a rewrite's cost is certain while its saving is
    /// not; `make bench` measured caps of 10, 15, 20, 30 and 200 (README).
    pub max_horizon: usize,
    /// Prices (USD per million input tokens); the dated table of
    /// [`crate::plan::prices::default_prices`] for the provider when absent.
    pub prices: Option<Prices>,
    /// Weigh each demotion's expected cost of getting back what it hides
    /// (`crate::plan::recovery`): it commits only when its saving minus that
    /// cost pays for the rewrite. Off: the cost is reported, not weighed.
    pub recovery: bool,
    /// The same for a compaction the planner prices (not a forced one): it
    /// waits while its saving over the horizon does not exceed the recovery
    /// it adds (until the budget would force it). On: with
    /// `compact.liveViews` 2,000 it lowers effective $ for every provider
    /// and hides fewer facts (`bench/FIDELITY-TUNING.md`).
    pub compaction_recovery: bool,
}

impl Default for PlanConfig {
    fn default() -> Self {
        Self {
            enabled: true,
            horizon: 0,
            min_horizon: 10,
            max_horizon: 15,
            prices: None,
            recovery: false,
            compaction_recovery: true,
        }
    }
}
