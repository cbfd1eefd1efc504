// Compaction in JS: the async summarizer flow (`compressAsync`), pinned
// constraints and stage ends. The core is synchronous; a host summarizer is
// async. So: (1) `compress` runs the pipeline; when it compacts, the core puts
// an extractive summary in the request and keeps the prepared summarization
// prompt in the session state; (2) the summarizer answers that prompt; the
// answer must have the five sections (Goal, Progress, Key facts, Decisions,
// Next steps), else it is asked once more; (3) the core swaps the answer in
// (`adoptSummary`) and re-applies it on later calls. If both attempts fail,
// the extractive summary stays.
import { validateSummary as wasmValidateSummary } from '../wasm/tracelite.js';
import { compress } from './compress.js';
import { OptionError, guarded, isOutsideStore, jsonArg, describe, syncStoreError } from './errors.js';
import { settingsOf } from './settings.js';
import { SpillStore } from './spill.js';
import { compressInto, sessionCachesOf, withPointer } from './stores.js';

let defaultStore;

/**
 * The wasm store holding `session`'s compaction state in `store`: the store
 * itself when it lives in wasm; for an outside store (files, KV, Durable
 * Objects, Redis, yours), the session's in-memory store among the ones
 * `compressAsync` keeps for it (`sessionCachesOf`).
 */
function stateOf(store, session, what = 'store') {
  if (store instanceof SpillStore) return store;
  if (isOutsideStore(store)) return sessionCachesOf(store).entry(session).store;
  throw syncStoreError(store, what, 'compressAsync');
}

function sessionOf(session) {
  if (session === undefined || session === null) return 'default';
  if (typeof session !== 'string') {
    throw new OptionError(`must be a string, got ${describe(session)}`, 'INVALID_OPTION', 'session');
  }
  return session;
}

/**
 * Checks a summary text. Returns `{ ok: true }` or `{ ok: false, problem }`
 * naming the missing, empty or repeated sections.
 */
export function validateSummary(text) {
  if (typeof text !== 'string') return { ok: false, problem: 'the summary must be a string' };
  const problem = wasmValidateSummary(text);
  return problem ? { ok: false, problem } : { ok: true };
}

/**
 * Like `compress`, but when the call compacts and `options.summarizer` is
 * given, the summary comes from `await summarizer(prompt, { attempt, problem })`.
 * An answer that throws or lacks one of the five sections is retried once
 * (the retry prompt says what was wrong); then the extractive summary stays.
 * Resolves to `{ request, report, spills, summary }` where `summary` is
 * `{ source: 'none' | 'reapplied' | 'extractive' | 'summarizer', attempts }`.
 * Spills and compaction state live in `options.store` (a module-wide store
 * of this function by default); pass the same store on every turn.
 */
export async function compressAsync(request, options = {}) {
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw new OptionError(`must be an object, got ${describe(options)}`, 'INVALID_OPTION', 'options');
  }
  const { summarizer, ...rest } = options;
  if (summarizer !== undefined && typeof summarizer !== 'function') {
    throw new OptionError(
      `must be a function (prompt) => Promise<string>, got ${describe(summarizer)}`,
      'INVALID_OPTION',
      'summarizer',
    );
  }
  const { cacheKey, ...hostOptions } = rest;
  const store = hostOptions.store === undefined ? (defaultStore ??= new SpillStore()) : hostOptions.store;
  const session = sessionOf(hostOptions.session);
  const outside = isOutsideStore(store) && !(store instanceof SpillStore);
  if (!outside && cacheKey !== undefined) {
    throw new OptionError('options.cacheKey: only a store outside wasm (files, KV, Redis) keeps cache segments', 'INVALID_OPTION', 'cacheKey');
  }
  // The pointer option read once: the call and the summary's settings both take it.
  const { store: _, ...callOptions } = withPointer(hostOptions, store);
  let out;
  let state;
  if (outside) {
    // Spills go to the outside store before this resolves (a pointer never
    // names a blob it lacks); caches and compaction state stay in memory per session.
    const caches = sessionCachesOf(store);
    out = await compressInto(request, { ...callOptions, session }, store, caches, { cacheKey });
    state = caches.wasmStoreFor(session);
  } else {
    out = compress(request, { ...callOptions, store: stateOf(store, session, 'options.store') });
    state = store.wasmStore;
  }
  // The core says what compaction did (`report.compaction`).
  const outcome = out.report.compaction?.outcome;
  if (outcome !== 'compacted') {
    return { ...out, summary: { source: outcome ?? 'none', attempts: [] } };
  }
  // `state` is gone when the session was freed from memory meanwhile: the extractive summary stays.
  const prompt = summarizer && state ? guarded(() => state.pendingSummaryPrompt(session)) : undefined;
  if (!prompt) return { ...out, summary: { source: 'extractive', attempts: [] } };
  const settings = settingsOf(callOptions);
  const attempts = [];
  let problem;
  for (let attempt = 0; attempt < 2; attempt++) {
    const asked = problem === undefined
      ? prompt
      : `${prompt}\nYour previous answer was rejected (${problem}). Answer again with exactly the five sections, each non-empty.\n`;
    let text;
    try {
      text = await summarizer(asked, { attempt, problem });
    } catch (err) {
      problem = `the summarizer threw: ${err?.message ?? String(err)}`;
      attempts.push({ ok: false, problem });
      continue;
    }
    const check = validateSummary(text);
    if (!check.ok) {
      problem = check.problem;
      attempts.push({ ok: false, problem });
      continue;
    }
    const json = guarded(() =>
      state.adoptSummary(JSON.stringify(out.request), jsonArg(settings, 'options'), text),
    );
    attempts.push({ ok: true });
    return { ...out, request: JSON.parse(json), summary: { source: 'summarizer', attempts } };
  }
  return { ...out, summary: { source: 'extractive', attempts } };
}

/**
 * Pins a constraint for `session` in `store`: archived word for word at the
 * next compaction (and added to an existing archive on the next call).
 * Returns whether it was new. (`TraceLite#pinConstraint(text)` calls this.)
 */
export function pinConstraint(store, session, text) {
  if (typeof text !== 'string') {
    throw new OptionError(`must be a string, got ${describe(text)}`, 'INVALID_OPTION', 'text');
  }
  return guarded(() => stateOf(store, sessionOf(session)).wasmStore.pinConstraint(sessionOf(session), text));
}

/** Constraints pinned for `session` in `store`. */
export function pinnedConstraints(store, session) {
  return JSON.parse(guarded(() => stateOf(store, sessionOf(session)).wasmStore.pinnedConstraints(sessionOf(session))));
}

/**
 * Marks the end of a task stage: the next compress call of `session` with
 * `store` is a stage boundary (it compacts if the planner agrees, or always
 * with `compact.planner: false`). (`TraceLite#finishStage()` calls this.)
 */
export function finishStage(store, session) {
  guarded(() => stateOf(store, sessionOf(session)).wasmStore.finishStage(sessionOf(session)));
}
