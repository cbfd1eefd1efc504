// Reading spilled blobs back, a page or the matches at a time, from any store
// with `get(session, key)` (sync or async): the wasm SpillStore, the KV store,
// yours. Paging, search (a linear-time regex dialect, no catastrophic
// backtracking) and the agent tools' replies are the core's (src/spill/): a
// blob from a store outside wasm is copied into a scratch wasm store first.
// Relative imports only (usable from a module worker without an import map);
// the host entry that initializes the wasm must be loaded first.
import { Store, checkSpillName, parseSpillPointer, spillLimits } from '../wasm/tracelite.js';
import { InputError, OptionError, StoreError, guarded, isOutsideStore, describe, syncStoreError } from './errors.js';
import { SpillStore, sharedStore } from './spill.js';

/** Limits of a scratch store: room for any blob a store hands back. */
const SCRATCH_LIMITS = JSON.stringify({ maxBytes: 2 ** 31 - 1, maxSessionBytes: 2 ** 31 - 1, ttlSeconds: 0 });

let limits;
/**
 * The spill tools' default and largest page sizes and grep settings, the
 * core's (`{ readLimit, maxReadLimit, grepContext, maxGrepContext,
 * grepMaxMatches, maxGrepMatches }`); read once, after the wasm is initialized.
 */
export function readerLimits() {
  limits ??= JSON.parse(guarded(() => spillLimits()));
  return limits;
}

/** Checks a session name or key the way the core does (`INVALID_SPILL_KEY` naming `what`). */
export function checkName(what, name) {
  guarded(() => checkSpillName(what, name));
  return name;
}

/**
 * Splits a `spill://<session>/<key>` pointer or a file path pointer
 * (`…/<session>/<key>.txt`, `spill.pointerRoot`), both checked by the core.
 * A bare key is accepted when `session` is given.
 */
export function parsePointer(pointer, session) {
  return JSON.parse(guarded(() => parseSpillPointer(pointer, session)));
}

function intOption(value, name, fallback, min, max) {
  if (value === undefined || value === null || value === '') return fallback;
  const n = typeof value === 'string' ? Number(value) : value;
  if (!Number.isInteger(n) || n < min) {
    throw new OptionError(`must be an integer ≥ ${min}, got ${typeof value === 'string' ? JSON.stringify(value) : typeof value === 'number' ? value : describe(value)}`, 'INVALID_OPTION', name);
  }
  return Math.min(n, max);
}

/** Fetches a blob from any store (`get` may be sync or async). */
export async function loadBlob(store, session, key) {
  checkName('session', session);
  checkName('key', key);
  const text = await store.get(session, key);
  if (typeof text !== 'string') {
    throw new StoreError(`no spill ${session}/${key}`, 'SPILL_NOT_FOUND', 'key');
  }
  return text;
}

/**
 * Runs `fn(wasmStore)` on a wasm store holding `session`/`key`: the
 * store's own when it lives in wasm (a `SessionStores` weighs what the call
 * keeps), else a scratch copy (freed after). With `missingOk`, a blob the
 * store lacks gives an empty scratch session.
 */
async function onBlob(store, session, key, fn, missingOk = false) {
  if (store instanceof SpillStore) return guarded(() => fn(store.wasmStore));
  const held = typeof store.readHeld === 'function' ? store.readHeld(session, key, (own) => guarded(() => fn(own))) : undefined;
  if (held) return held.value;
  let text;
  try {
    text = await loadBlob(store, session, key);
  } catch (err) {
    const missing = err?.code === 'SPILL_NOT_FOUND' || err?.code === 'INVALID_SPILL_KEY';
    if (!(missingOk && missing)) throw err;
  }
  const scratch = guarded(() => Store.withLimits(SCRATCH_LIMITS));
  try {
    // A masked copy does not hash to its key: the masking reader checked the original.
    if (text !== undefined) guarded(() => (store.masked === true ? scratch.putMasked(session, key, new TextEncoder().encode(text)) : scratch.put(session, key, text)));
    return guarded(() => fn(scratch));
  } finally {
    scratch.free();
  }
}

function readArgs(options) {
  const { readLimit, maxReadLimit } = readerLimits();
  return {
    offset: intOption(options.offset, 'offset', 0, 0, 2 ** 31 - 1),
    limit: intOption(options.limit, 'limit', readLimit, 1, maxReadLimit),
  };
}

function grepArgs(pattern, options) {
  if (typeof pattern !== 'string') {
    throw new InputError(`must be a string, got ${describe(pattern)}`, 'INVALID_PATTERN', 'pattern');
  }
  const { grepContext, maxGrepContext, grepMaxMatches, maxGrepMatches } = readerLimits();
  return JSON.stringify({
    literal: Boolean(options.literal),
    ignoreCase: Boolean(options.ignoreCase),
    context: intOption(options.context, 'context', grepContext, 0, maxGrepContext),
    maxMatches: intOption(options.maxMatches, 'maxMatches', grepMaxMatches, 1, maxGrepMatches),
    skip: intOption(options.skip, 'skip', 0, 0, 2 ** 31 - 1),
    // Work budget (program bytes × bytes searched); the core's default when absent.
    maxCost: intOption(options.maxCost, 'maxCost', undefined, 0, Number.MAX_SAFE_INTEGER),
  });
}

/** A page as the core read it (`nextOffset` is null after the last line). */
function shapePage(json, limit) {
  const { offset, count, totalLines, totalBytes, nextOffset, text } = JSON.parse(json);
  return { offset, limit, count, totalLines, totalBytes, nextOffset, text };
}

/** Matches as the core found and rendered them (`text` grep -n style). */
function shapeMatches(json, pattern) {
  const found = JSON.parse(json);
  return {
    pattern,
    totalLines: found.totalLines,
    totalMatches: found.totalMatches,
    skipped: found.skipped,
    matches: found.lines.filter((l) => l.isMatch).map((l) => ({ line: l.number, text: l.text })),
    lines: found.lines,
    nextSkip: found.nextSkip,
    text: found.text,
    work: found.work,
  };
}

/** Runs `fn(wasmStore)` on a scratch session holding `text` as `t/t`. */
function onText(text, fn) {
  if (typeof text !== 'string') throw new InputError(`must be a string, got ${describe(text)}`, 'INVALID_REQUEST', 'text');
  const scratch = guarded(() => Store.withLimits(SCRATCH_LIMITS));
  try {
    guarded(() => scratch.put('t', 't', text));
    return guarded(() => fn(scratch));
  } finally {
    scratch.free();
  }
}

/**
 * A page of a text's lines, by the core (synchronous; for a text already in
 * hand): skips `offset` lines, returns up to `limit`. Like `readSpill`, but
 * `text` holds the lines joined by "\n" without a final line end.
 */
export function pageLines(text, options = {}) {
  const { offset, limit } = readArgs(options);
  const page = shapePage(onText(text, (s) => s.read('t', 't', offset, limit)), limit);
  return { ...page, text: page.text.endsWith('\n') ? page.text.slice(0, -1) : page.text };
}

/** Lines of a text matching `pattern`, by the core (synchronous); as `grepSpill`. */
export function grepLines(text, pattern, options = {}) {
  const args = grepArgs(pattern, options);
  return shapeMatches(onText(text, (s) => s.grep('t', 't', pattern, args)), pattern);
}

/**
 * A page of a spill: skips `offset` lines (default 0) and returns up to
 * `limit` (default 200, at most 2000). Resolves `{ pointer, offset, limit,
 * count, totalLines, totalBytes, nextOffset, text }`; `text` holds the lines as
 * stored (line ends included) and `nextOffset` is null after the last line.
 */
export async function readSpill(store, pointer, options = {}) {
  const { session, key } = parsePointer(pointer, options.session);
  const { offset, limit } = readArgs(options);
  const json = await onBlob(store, session, key, (s) => s.read(session, key, offset, limit));
  return { pointer: `spill://${session}/${key}`, ...shapePage(json, limit) };
}

/**
 * Lines of a spill matching `pattern` (the core's regex dialect, or plain text
 * with `literal`), with `context` lines around each (default 2, at most 10);
 * `maxMatches` (default 50, at most 200) after skipping `skip`. Resolves
 * `{ pointer, pattern, totalLines, totalMatches, skipped, matches: [{ line, text }],
 * lines, nextSkip, text }`: `lines` are the core's (matches and context),
 * `text` is grep -n style (`12:match`, `11-context`, `--` between groups).
 */
export async function grepSpill(store, pointer, pattern, options = {}) {
  const { session, key } = parsePointer(pointer, options.session);
  const args = grepArgs(pattern, options);
  const json = await onBlob(store, session, key, (s) => s.grep(session, key, pattern, args));
  return { pointer: `spill://${session}/${key}`, ...shapeMatches(json, pattern) };
}

/**
 * Runs an agent's `read_spill` / `grep_spill` call (`args` an object or JSON
 * text) with the core's tool, over any store. The session is `session` when
 * given (another session's pointer then reads as missing), else the pointer's.
 * `maxCost`: the search's work budget (at most the store's `maxGrepCost`).
 * Resolves `{ text, isError, work }` (`work`: what the search took).
 */
export async function runSpillTool(store, name, args, session, { maxCost } = {}) {
  const parsed = typeof args === 'string' ? safeJson(args) : args;
  const json = typeof args === 'string' ? args : JSON.stringify(args ?? {});
  const text = String(parsed?.pointer ?? '');
  const named = namedPointer(text);
  const scope = session ?? named?.session ?? 'default';
  const key = named ? named.key : text.trim();
  const readable = (!named || named.session === scope) && isName(key) && isName(scope);
  const reply = await onBlob(
    readable ? store : { get: () => undefined },
    scope,
    readable ? key : 'missing',
    (s) => s.handleToolCall(name, json, scope, maxCost),
    true,
  );
  return JSON.parse(reply);
}

/** `{ session, key }` of a pointer naming its session (`spill://` or a file path), else undefined. */
function namedPointer(text) {
  try {
    return parsePointer(text);
  } catch {
    return undefined;
  }
}

function isName(name) {
  try {
    checkSpillName('key', name);
    return true;
  } catch {
    return false;
  }
}

function safeJson(text) {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * Runs a `read_spill` / `grep_spill` call the model made, over any store:
 * `handleToolCallAsync(name, args, { store, session })` (or `session` as a
 * string, with the store `compress` uses by default). The async peer of
 * `handleToolCall`, for the stores outside wasm (`FileStore`, `KvSpillStore`,
 * `DurableObjectSpillStore`, yours). Resolves `{ text, isError, work }` (as `handleToolCall`): `text` to send back
 * as the tool result: a mistake the model can fix (a missing pointer, a bad
 * pattern) is a reply with `isError`, not a rejection.
 */
export async function handleToolCallAsync(name, args, where) {
  const { store, session } = typeof where === 'string' ? { session: where } : (where ?? {});
  const target = store ?? sharedStore();
  if (!(target instanceof SpillStore) && !isOutsideStore(target)) {
    throw syncStoreError(target, 'store', 'handleToolCallAsync');
  }
  if (typeof name !== 'string') {
    throw new InputError(`must be a string, got ${describe(name)}`, 'INVALID_ARGUMENT', 'name');
  }
  if (session !== undefined && typeof session !== 'string') {
    throw new InputError(`must be a string, got ${describe(session)}`, 'INVALID_ARGUMENT', 'session');
  }
  return runSpillTool(target, name, args ?? {}, session ?? 'default');
}
