// Generated from the Rust declarations by tests/ts_types.rs: do not edit.
// `TRACELITE_BLESS=1 cargo test --test ts_types` rewrites it.

/** What `phase.clear` may list (`Reason` in src/phase). */
export type PhaseClear = 'searches' | 'listings' | 'reruns' | 'editedViews';

/** All settings. `Config::default()` is the documented default. */
export interface CompressSettings {
  /**
   * Request format; detected from the request when `null`.
   * Default: `null`.
   */
  format?: FormatName;
  /**
   * Target provider (image pricing and placement).
   * Default: `"openai"`.
   */
  provider?: Provider;
  /**
   * The model the request goes to, as the provider or a router names it
   * (`gpt-4o`, `anthropic/claude-sonnet-4.5`); empty: the request's own
   * `model`. With `optical.enabled: 'auto'` snapshots go only to a model
   * the capability table (or `models`) says reads images.
   * Default: `""`.
   */
  model?: string;
  /**
   * The caller's own models, by id or `*` glob (checked before the
   * capability table): `{ "my-vlm": { "images": true } }`.
   */
  models?: Record<string, DeclaredModel>;
  /**
   * The model's context window in tokens.
   * Default: `128000`.
   */
  budget?: number;
  /**
   * Recent window: the last `window` tool results stay verbatim text.
   * Default: `3`.
   */
  window?: number;
  /**
   * Session name: namespace of spill keys (a string; anything else is
   * `INVALID_OPTION` at `session`).
   * Default: `"default"`.
   */
  session?: string;
  /**
   * Host says this request starts a new task stage (compaction trigger).
   * Default: `false`.
   */
  stageBoundary?: boolean;
  /**
   * Repair mode: fix tool-call pairing problems the request has (orphaned or
   * duplicate results, duplicate ids, misplaced or missing results) instead
   * of rejecting it; each fix is listed in `report.repairs`.
   * Default: `false`.
   */
  repair?: boolean;
  /**
   * Anthropic Messages requests: mark the end of the stable prefix
   * (`report.stableMessages`) with `cache_control`, so the next batch
   * reads everything before it from the prompt cache instead of writing
   * it again. Skipped when the request already has the 4 breakpoints
   * Anthropic allows, and when every stage is off (pass-through).
   * Default: `true`.
   */
  cacheBreakpoint?: boolean;
  /** Stage 1: tool-output spilling. */
  spill?: SpillOptions;
  /** Stage 2: cross-observation line dedup. */
  dedup?: DedupOptions;
  /** Stage 3: edit-triggered diagnosis clean-up. */
  phase?: PhaseOptions;
  /** Stage 4: optical snapshots. */
  optical?: OpticalOptions;
  /** Stage 5: compaction. */
  compact?: CompactOptions;
  /** The planner: when a rewrite of the cached prefix pays. */
  plan?: PlanOptions;
  /** Secret redaction. */
  redact?: RedactOptions;
  /**
   * Tools whose outputs stay as they are (a memory, todo or plan tool):
   * dedup, the phase clean-up and optical snapshots leave them alone, and
   * a compaction keeps them word for word after its summary; spilling
   * caps them only with a cap of their own (`spill.toolCaps`). Exact
   * names, as the calls give them.
   * Default: `[]`.
   */
  excludeTools?: string[];
  /** Resource limits. */
  limits?: LimitOptions;
}

/** Target model family; decides how images are priced and placed. */
export type Provider = 'anthropic' | 'openai' | 'openai-patch' | 'gemini' | 'qwen';

/** Spilling settings. */
export interface SpillOptions {
  /**
   * Stage switch.
   * Default: `true`.
   */
  enabled?: boolean;
  /**
   * Minimum cap per tool result, in tokens.
   * Default: `2000`.
   */
  floorTokens?: number;
  /**
   * Cap as a share of the budget (default 0.02: 2,560 tokens, about
   * 10 KB of text, at the default budget; the design's 0.25 measured
   * worse on every column of `make bench`, see the README).
   * Default: `0.02`.
   */
  fraction?: number;
  /**
   * Share of the cap given to the head of the excerpt (the rest goes to the tail).
   * Default: `0.65`.
   */
  headShare?: number;
  /**
   * Share of the cap the excerpt may spend naming what its hidden middle
   * holds (paths and definitions with their lines, the ids of failing
   * tests the error listing left out); 0 turns the index off.
   * Default: `0.05`.
   */
  indexShare?: number;
  /**
   * Patterns (small regex dialect, matched ignoring ASCII case; `(?-i)`
   * restores it) marking error lines of the hidden middle that the excerpt
   * lists. Default: `Traceback`, `Error`, `FATAL`, `CRITICAL`, `npm ERR!`,
   * `panic`, `Exception`, `FAILED`, `exit code [1-9]`, `returncode>[1-9]`.
   * Default: `["Traceback","Error","FATAL","CRITICAL","npm ERR!","panic","Exception","FAILED","exit code [1-9]","returncode>[1-9]"]`.
   */
  errorPatterns?: string[];
  /**
   * How many hidden lines matching the patterns to list besides the
   * critical ones (every traceback's last line, error lines, failing
   * tests: all listed, marked `!`, within 1,600 bytes).
   * Default: `5`.
   */
  maxErrorLines?: number;
  /**
   * The host's own critical-line detectors, one table per tool, added to
   * the built-in ones (jest, vitest, mocha, node:test, TAP, tsc, eslint,
   * vite, npm, cargo, go, make, rspec: `src/spill/detectors.rs`): lines
   * they mark are listed with the critical ones. Patterns: the spill
   * tools' regex dialect, case kept.
   * Default: `[]`.
   */
  detectors?: DetectorTable[];
  /**
   * Where the host keeps spills as files (an absolute directory, e.g. a
   * `FileStore`'s root): pointers become the file's path,
   * `<pointerRoot>/<session>/<key>.txt`, and excerpts say how to read it
   * with ordinary tools (`sed -n`, `grep -n`). Empty: `spill://` pointers.
   * Default: `""`.
   */
  pointerRoot?: string;
  /**
   * A tool's own cap in tokens, replacing the computed one for its
   * outputs (1 to `budget`), e.g. `{ "bash": 1000 }`; also the one cap
   * of a tool in `excludeTools`. None by default.
   */
  toolCaps?: Record<string, number>;
  /**
   * Salience at arrival: fold the lines of an output nothing marks as
   * likely used behind its pointer (off by default).
   */
  salience?: SalienceOptions;
}

/**
 * Salience settings: every output of at least `minLines` lines is judged
 * line by line when it arrives; runs of at least `minRun` lines nothing
 * marks as likely used are folded behind one marker each, the full output
 * is kept in the spill store.
 */
export interface SalienceOptions {
  /**
   * Switch (off by default: see `bench/SALIENCE.md` for the frontier).
   * Default: `false`.
   */
  enabled?: boolean;
  /**
   * Outputs with fewer lines stay whole.
   * Default: `40`.
   */
  minLines?: number;
  /**
   * Lines kept on either side of a salient line.
   * Default: `1`.
   */
  context?: number;
  /**
   * Lines always kept at the start and at the end of an output.
   * Default: `2`.
   */
  ends?: number;
  /**
   * Shortest run of unmarked lines that is folded (a marker costs about
   * as much as two short lines).
   * Default: `4`.
   */
  minRun?: number;
  /**
   * How many steps before an output give names (their calls' arguments
   * and the assistant's text), besides the task and the producing call.
   * Default: `3`.
   */
  recentSteps?: number;
  /**
   * A name on more than this share of an output's lines (and more than
   * 3) marks none of them: the project's name in every path tells no
   * line apart.
   * Default: `0.2`.
   */
  maxNameShare?: number;
  /**
   * Outputs of calls that show a file (`cat`, `sed -n`, an editor
   * `view`) stay whole: an edit quotes their lines.
   * Default: `true`.
   */
  keepViews?: boolean;
}

/**
 * Dedup settings (stage 2). An observation loses the lines (trimmed length
 * above `min_line_chars`) that reappear in a later observation that was inside
 * the recent window (`window`) with it; the newest observation and tool calls
 * are never touched.
 */
export interface DedupOptions {
  /**
   * Stage switch.
   * Default: `true`.
   */
  enabled?: boolean;
  /**
   * Lines whose trimmed length is at most this are never deduplicated. Default 5.
   * Default: `5`.
   */
  minLineChars?: number;
  /**
   * Edit earlier observations only on the turns when observations leave
   * the recent window in a batch (`optical.batch`), so the prompt prefix
   * changes once per batch instead of every turn (prompt caches keep
   * working); `false` edits on every new observation. While the window
   * fills (the first `window` observations) every arrival is settled, so
   * dedup edits on each of those turns either way.
   * Default: `true`.
   */
  batched?: boolean;
}

/** Edit-triggered clean-up settings (stage 3). */
export interface PhaseOptions {
  /**
   * Stage switch.
   * Default: `true`.
   */
  enabled?: boolean;
  /**
   * Keep clearing after the phase began: outputs a later change consumed
   * and outputs of commands run again, at each batch (the prompt prefix
   * then breaks at every such batch). Off: the clean-up happens once.
   * Default: `false`.
   */
  everyPhase?: boolean;
  /**
   * What the clean-up clears once the phase begins: `searches` and
   * `listings` that led to the change, `reruns` (outputs of commands run
   * again later), `editedViews` (views of a file edited since).
   * Default: `["searches","listings","reruns","editedViews"]`.
   */
  clear?: PhaseClear[];
  /**
   * Tools whose calls are edits: `name` (every call) or `name:command`
   * (only calls whose `command` argument is `command`, e.g.
   * `str_replace_editor:create`).
   * Default: `["str_replace_editor:create","str_replace_editor:str_replace","str_replace_editor:insert","edit_file","apply_patch","write_file","Edit","MultiEdit","Write"]`.
   */
  editTools?: string[];
  /**
   * Tools that run shell commands (argument `command` or `cmd`, a string or
   * an argv array); their commands are scanned for file writes (`sed -i`,
   * `cat > f`, heredocs, `tee`, `echo … > f`, `git apply`, `patch`, Python
   * `open(…, 'w')`).
   * Default: `["bash","execute_bash","shell","run_shell_command","run_terminal_cmd","exec_command","Bash"]`.
   */
  shellTools?: string[];
  /**
   * An edit whose result looks like a failure (`is_error`, "No replacement
   * was performed", `sed: -e expression`, …) does not start a phase.
   * Default: `true`.
   */
  skipFailed?: boolean;
  /**
   * Edits whose target path has a component matching one of these globs
   * (`*` wildcard, e.g. `reproduce*`, `/tmp`) do not start a phase:
   * writing a scratch reproduction script is still diagnosis. Empty by
   * default (every file write counts, as the design says).
   * Default: `[]`.
   */
  ignoreTargets?: string[];
}

/**
 * Optical snapshot settings: older tool results become images of their text
 * when that costs at most `1/ratio` of the text's tokens.
 */
export interface OpticalOptions {
  /**
   * Stage switch: `'auto'` renders snapshots only for a model that reads
   * images (the model capability table, or `models`), `true` for any
   * model, `false` never.
   * Default: `"auto"`.
   */
  enabled?: boolean | 'auto';
  /**
   * Render only if image tokens (plus the one-line reference) ≤ text tokens / ratio.
   * Default: `2.0`.
   */
  ratio?: number;
  /**
   * Observations leave the recent window in batches of this many, so the
   * prompt prefix stays byte-identical between batches (prefix cache).
   * Default: `3`.
   */
  batch?: number;
  /**
   * Largest font pixel height the layout may use (4–64).
   * Default: `12`.
   */
  fontPx?: number;
  /**
   * Smallest font pixel height the layout may use; the layout takes the
   * largest size in `minFontPx..=fontPx` that reaches the lowest image cost.
   * Default: `10`.
   */
  minFontPx?: number;
  /**
   * Blank pixel rows between text lines (0–3).
   * Default: `1`.
   */
  lineGap?: number;
  /**
   * Narrowest wrap width in columns the layout may choose (lines shorter
   * than this are never padded to it).
   * Default: `60`.
   */
  minColumns?: number;
  /**
   * PNG grayscale bit depth: 1, 2, 4 or 8.
   * Default: `2`.
   */
  bitDepth?: 1 | 2 | 4 | 8;
  /**
   * An observation whose share of glyphs missing from the font exceeds this stays text.
   * Default: `0.05`.
   */
  maxMissingShare?: number;
  /**
   * When the line-by-line image costs more than `1/ratio` of the text, try
   * the lines run together with `»` marking each break (every row full, so
   * fewer image tokens; indentation no longer lines up).
   * Default: `true`.
   */
  reflow?: boolean;
  /**
   * OpenAI `detail` (`high` or `low`).
   * Default: `"high"`.
   */
  detail?: 'high' | 'low';
  /**
   * Gemini 3 `media_resolution` (`low`, `medium`, `high`), or empty for tile pricing.
   * Default: `""`.
   */
  mediaResolution?: '' | 'low' | 'medium' | 'high';
  /**
   * Multiplier for OpenAI patch models (mini 1.62, nano 2.46, o4-mini 1.72).
   * Default: `1.62`.
   */
  patchMultiplier?: number;
  /**
   * Keep views of files not edited since (what an edit may quote in its
   * `old_str`) as text instead of rendering them.
   * Default: `false`.
   */
  keepLiveViews?: boolean;
  /**
   * Live views kept as text (`keepLiveViews`): the newest this many;
   * older live views are rendered. 0: no bound. A count, not tokens: the
   * set must change only when the planner moves the rendered boundary,
   * and the text of a view may still change in between (unbatched dedup).
   * Default: `1`.
   */
  maxLiveViews?: number;
  /**
   * Maximum images per request (images already in the request count too).
   * Default: `50`.
   */
  maxImages?: number;
  /**
   * Bytes of rendered images a session keeps in its render cache.
   * Default: `33554432`.
   */
  cacheBytes?: number;
  /**
   * Send snapshots by URL where the format takes image URLs (OpenAI Chat
   * and Responses, Anthropic; Gemini stays inline): an `https` URL
   * template (`http` for localhost) holding `{id}`, which each snapshot's
   * content id replaces; the result's `images` holds the PNGs the host
   * must serve there (`formats::image_urls`). Empty: inline
   * base64 (default).
   * Default: `""`.
   */
  imageUrl?: string;
}

/** Compaction settings. */
export interface CompactOptions {
  /**
   * Stage switch (off means off: no trigger, no re-applied summary).
   * Default: `true`.
   */
  enabled?: boolean;
  /**
   * Token threshold that triggers compaction; the effective threshold is
   * never closer to the budget than one capped tool result.
   * Default: `100000`.
   */
  threshold?: number;
  /**
   * Messages kept verbatim at the end (the cut moves so that no tool call
   * is separated from its result).
   * Default: `6`.
   */
  keep?: number;
  /**
   * Never compact again within this many turns (assistant turns since the
   * last summary) unless the budget forces it.
   * Default: `5`.
   */
  minTurns?: number;
  /**
   * Phrases marking user constraints kept word for word (matched
   * case-insensitively at word boundaries in user messages).
   * Default: `["must","never","don't","do not","only","always","should not","avoid"]`.
   */
  constraintPatterns?: string[];
  /**
   * Constraints pinned by the host, archived word for word.
   * Default: `[]`.
   */
  pinned?: string[];
  /**
   * Compact only when the cache-aware cost estimate (prices and horizon
   * of `plan`) says it pays, or the budget forces it; `false`
   * compacts whenever a trigger fires.
   * Default: `true`.
   */
  planner?: boolean;
  /**
   * Do not compact unless it removes at least this many tokens.
   * Default: `2000`.
   */
  minSaving?: number;
  /**
   * Detect stage boundaries (a successful test or run after an edit).
   * Default: `true`.
   */
  detectStages?: boolean;
  /**
   * Keep every compacted tool call (name and arguments, verbatim, in
   * order) in a tool-call log after the summary: tool calls stay text.
   * Secrets in the arguments are masked like all text reaching the model
   * when `redact.enabled` (default); the originals stay in the spill store.
   * Default: `true`.
   */
  keepToolCalls?: boolean;
  /**
   * Share of the budget the user's own messages (the task, later
   * instructions) may fill when compaction keeps them word for word;
   * beyond it the oldest (never the first nor the newest) go behind a
   * pointer and their constraints into the archive.
   * Default: `0.05`.
   */
  userShare?: number;
  /**
   * Tokens of file views a compaction keeps as they were shown: the
   * newest output showing each file the compacted turns read or edited,
   * unless a later turn shows it again (`compact::views`);
   * 0 keeps none.
   * Default: `2000`.
   */
  liveViews?: number;
  /**
   * Share of the budget the tool-call log may fill; beyond it its oldest
   * calls are folded into one line citing the compaction's blob, which
   * holds them verbatim (a session of any length stays in the budget).
   * Default: `0.04`.
   */
  callLogShare?: number;
  /**
   * Share of the budget the summary may fill; beyond it the oldest lines
   * of Progress, Key facts and Decisions (critical lines last) leave it,
   * readable in the previous summary that the compaction's blob keeps.
   * With `userShare` and `callLogShare` it bounds what compactions carry
   * forward, so a long session's requests (and cost per turn) stay flat.
   * Default: `0.04`.
   */
  summaryShare?: number;
  /**
   * In a session of several tasks (each message the user writes starts
   * one), a compaction of a request under this many tokens takes only
   * the earlier tasks' messages and leaves the current task's outputs as
   * they are, waiting when nothing else is left (`compact::tasks`);
   * 0 compacts every task alike.
   * Default: `0`.
   */
  taskFirst?: number;
  /**
   * In a session of several tasks, the share of `callLogShare` and
   * `summaryShare` its compactions keep: what they carry forward is
   * mostly the earlier tasks', which the current one seldom uses again,
   * and it is read at every turn. 1 keeps the full shares.
   * Default: `0.5`.
   */
  severalTasksShare?: number;
}

/** Planner settings (`plan` in the options). */
export interface PlanOptions {
  /**
   * Price-aware demotion: move the boundary of the rewritten history only
   * when it pays. Off: in fixed batches of `optical.batch` observations.
   * Default: `true`.
   */
  enabled?: boolean;
  /**
   * Turns still to come; 0 derives it from the turns so far.
   * Default: `0`.
   */
  horizon?: number;
  /**
   * Smallest derived horizon.
   * Default: `10`.
   */
  minHorizon?: number;
  /**
   * Largest derived horizon (default 15): a rewrite must pay back within
   * 15 turns. The turns so far overestimate what is left of a task that
   * is nearly done, and a rewrite's cost is certain while its saving is
   * not; `make bench` measured caps of 10, 15, 20, 30 and 200 (README).
   * Default: `15`.
   */
  maxHorizon?: number;
  /**
   * Prices (USD per million input tokens); the dated table of
   * `plan::prices::default_prices` for the provider when absent.
   * Default: `null`.
   */
  prices?: Prices;
  /**
   * Weigh each demotion's expected cost of getting back what it hides
   * (`plan::recovery`): it commits only when its saving minus that
   * cost pays for the rewrite. Off: the cost is reported, not weighed.
   * Default: `false`.
   */
  recovery?: boolean;
  /**
   * The same for a compaction the planner prices (not a forced one): it
   * waits while its saving over the horizon does not exceed the recovery
   * it adds (until the budget would force it). On: with
   * `compact.liveViews` 2,000 it lowers effective $ for every provider
   * and hides fewer facts (`bench/FIDELITY-TUNING.md`).
   * Default: `true`.
   */
  compactionRecovery?: boolean;
}

/** Secret redaction settings. */
export interface RedactOptions {
  /**
   * Mask secrets in excerpts, snapshots and summaries.
   * Default: `true`.
   */
  enabled?: boolean;
  /**
   * Also mask them in the spill store (the original is then lost).
   * Default: `false`.
   */
  store?: boolean;
}

/** Resource limits; exceeding one is a `LIMIT_EXCEEDED` error naming it. */
export interface LimitOptions {
  /**
   * Largest request accepted, in bytes.
   * Default: `67108864`.
   */
  maxRequestBytes?: number;
  /**
   * Most messages accepted.
   * Default: `100000`.
   */
  maxMessages?: number;
  /**
   * Deepest JSON nesting accepted.
   * Default: `100`.
   */
  maxDepth?: number;
  /**
   * Largest inline image accepted, in pixels (width × height read from the
   * PNG, JPEG, GIF or WebP header in the base64 payload); over it the request
   * is refused with `LIMIT_EXCEEDED` naming the image's JSON path. Images by
   * URL and payloads whose size cannot be read pass (see
   * `formats::images::check_pixels`).
   * Default: `50000000`.
   */
  maxImagePixels?: number;
  /**
   * Spill bytes kept per session.
   * Default: `16777216`.
   */
  maxSpillBytesPerSession?: number;
  /**
   * Most `spill.errorPatterns` accepted (each is checked against every
   * hidden line of every spilled output). Default 64.
   * Default: `64`.
   */
  maxErrorPatterns?: number;
  /**
   * Most per-tool rules accepted: names in `excludeTools`, and tools in
   * `spill.toolCaps`.
   * Default: `256`.
   */
  maxToolRules?: number;
  /**
   * Bytes of raw tool output the stateful `TraceLite` session holds
   * (default 32 MiB). Past it, the oldest outputs outside the recent window
   * are spilled in the raw history itself: their full text goes to the
   * spill store and the history keeps their excerpt and pointer (or, when
   * the store is full, an excerpt saying the rest could not be kept).
   * Default: `33554432`.
   */
  maxHistoryBytes?: number;
  /**
   * Most messages one compaction replaces (default 10,000). A longer
   * history is compacted in chunks, oldest first: up to this many messages
   * (moved earlier so no tool call loses its result) on this call, the next
   * ones on later calls; the compact stage's notes say so. Bounds the work
   * of a hostile many-message request instead of failing it.
   * Default: `10000`.
   */
  maxCompactMessages?: number;
  /**
   * Most bytes of one compaction's spill blob (default 4 MiB): the
   * originals plus about 100 bytes of index and header per message;
   * chunked like `max_compact_messages`. (The blob also holds the previous
   * summary, and user messages that stop being kept word for word.)
   * Default: `4194304`.
   */
  maxCompactBytes?: number;
  /**
   * What a request still over `budget` after every stage does: `"report"`
   * (default) sets `report.overBudget` (tokens, budget, path of the largest
   * message); `"error"` fails the call with `OVER_BUDGET` at that path.
   * Default: `"report"`.
   */
  overBudget?: OverBudgetMode;
}

/** `limits.overBudget`: report a request still over budget, or refuse it. */
export type OverBudgetMode = 'report' | 'error';

/** A supported request format. */
export type FormatName = 'openai-chat' | 'openai-responses' | 'anthropic' | 'gemini';

/**
 * A model the caller declares (`models` in the options): whether it reads
 * images and, optionally, its limits (the request format's apply too).
 */
export interface DeclaredModel {
  /** Whether the model accepts image input (required). */
  images?: boolean;
  /** Most images it takes in one request. */
  maxImages?: number;
  /** Largest image it takes, in decoded bytes. */
  maxImageBytes?: number;
  /** Longest image edge it takes, in pixels. */
  maxEdgePx?: number;
}

/** One tool's critical-line detectors (`spill.detectors`). */
export interface DetectorTable {
  /** The tool whose output the rules read (a name for errors and reports). */
  tool?: string;
  /** Patterns of lines critical in themselves (`^make: \*\*\* `). */
  lines?: string[];
  /**
   * Patterns of a failing test's line, critical too, the test's id in
   * the first group (`^--- FAIL: (\S+)`): the excerpt counts those it
   * could not list and gives the pattern to find them.
   */
  tests?: string[];
  /**
   * After each line matching `when`, the first line matching `find`
   * within `within` lines is critical (the location under a test's heading).
   */
  after?: ContextRule[];
  /**
   * Before each line matching `when`, the nearest line matching `find`
   * within `within` lines is critical (the file heading above an error row).
   */
  before?: ContextRule[];
}

/** Token prices in US dollars per million tokens. */
export interface Prices {
  /** Uncached input. */
  input?: number;
  /** Input read from the prompt cache. */
  cachedInput?: number;
  /**
   * Input written to the prompt cache (what a cache miss costs where
   * writes are billed separately; equal to `input` elsewhere).
   */
  cacheWrite?: number;
}

/** A detector rule that looks around a line (`spill.detectors[].after`, `.before`). */
export interface ContextRule {
  /** Pattern of the line the rule starts from. */
  when?: string;
  /** Pattern of the line it marks critical. */
  find?: string;
  /** How many lines away it looks (1 to 1,000). */
  within?: number;
}

