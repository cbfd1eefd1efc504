// Reading spilled blobs back, a page or the matches at a time, from any store
// with `get(session, key)` (sync or async): the wasm SpillStore, the KV store,
// yours. Paging, search (a linear-time regex dialect, no catastrophic
// backtracking) and the agent tools' replies are the core's (src/spill/): a
// blob from a store outside wasm is copied into a scratch wasm session first.
// Relative imports only (usable from a module worker without an import map);
// the host entry that initializes the wasm must be loaded first.
import { Session } from '../wasm/tracelite.js';
import { SpillStore } from '../core/spill.js';
import { TraceLiteError, guarded } from '../core/errors.js';

/** Default and largest page sizes (lines) of `readSpill`. */
export const READ_LIMIT = 200;
export const MAX_READ_LIMIT = 2000;
/** `grepSpill` defaults and limits (as the core's grep_spill tool). */
export const GREP_CONTEXT = 2;
export const MAX_GREP_CONTEXT = 10;
export const GREP_MAX_MATCHES = 50;
export const MAX_GREP_MATCHES = 200;

/** Limits of a scratch session: room for any blob a store hands back. */
const SCRATCH_LIMITS = JSON.stringify({ maxBytes: 2 ** 31 - 1, maxSessionBytes: 2 ** 31 - 1, ttlSeconds: 0 });

const NAME = /^[A-Za-z0-9._-]{1,128}$/;

/** Checks a session name or key the way the core does. */
export function checkName(what, name) {
  if (typeof name !== 'string' || !NAME.test(name) || name.includes('..')) {
    throw new TraceLiteError(
      `${what} must be 1-128 characters of [A-Za-z0-9._-] without ".."`,
      'INVALID_SPILL_KEY',
      what,
    );
  }
  return name;
}

/**
 * Splits a `spill://<session>/<key>` pointer. A bare key is accepted when
 * `session` is given.
 */
export function parsePointer(pointer, session) {
  if (typeof pointer !== 'string') {
    throw new TraceLiteError('pointer must be a string', 'INVALID_SPILL_KEY', 'pointer');
  }
  const m = /^spill:\/\/([^/]+)\/(.+)$/.exec(pointer.trim());
  if (m) return { session: checkName('session', m[1]), key: checkName('key', m[2]) };
  if (session !== undefined) return { session: checkName('session', session), key: checkName('key', pointer.trim()) };
  throw new TraceLiteError('pointer must look like spill://<session>/<key>', 'INVALID_SPILL_KEY', 'pointer');
}

function intOption(value, name, fallback, min, max) {
  if (value === undefined || value === null || value === '') return fallback;
  const n = typeof value === 'string' ? Number(value) : value;
  if (!Number.isInteger(n) || n < min) {
    throw new TraceLiteError(`${name} must be an integer ≥ ${min}`, 'INVALID_OPTION', name);
  }
  return Math.min(n, max);
}

/** Fetches a blob from any store (`get` may be sync or async). */
export async function loadBlob(store, session, key) {
  checkName('session', session);
  checkName('key', key);
  const text = await store.get(session, key);
  if (typeof text !== 'string') {
    throw new TraceLiteError(`no spill ${session}/${key}`, 'SPILL_NOT_FOUND', 'key');
  }
  return text;
}

/**
 * Runs `fn(wasmSession)` on a wasm session holding `session`/`key`: the
 * store's own when it lives in wasm, else a scratch copy (freed after). With
 * `missingOk`, a blob the store lacks gives an empty scratch session.
 */
async function onBlob(store, session, key, fn, missingOk = false) {
  const own = store instanceof SpillStore
    ? store.wasmSession
    : (typeof store.wasmSessionFor === 'function' ? store.wasmSessionFor(session) : undefined);
  if (own) return guarded(() => fn(own));
  let text;
  try {
    text = await loadBlob(store, session, key);
  } catch (err) {
    const missing = err?.code === 'SPILL_NOT_FOUND' || err?.code === 'INVALID_SPILL_KEY';
    if (!(missingOk && missing)) throw err;
  }
  const scratch = guarded(() => Session.withLimits(SCRATCH_LIMITS));
  try {
    if (text !== undefined) guarded(() => scratch.put(session, key, text));
    return guarded(() => fn(scratch));
  } finally {
    scratch.free();
  }
}

function readArgs(options) {
  return {
    offset: intOption(options.offset, 'offset', 0, 0, 2 ** 31 - 1),
    limit: intOption(options.limit, 'limit', READ_LIMIT, 1, MAX_READ_LIMIT),
  };
}

function grepArgs(pattern, options) {
  if (typeof pattern !== 'string') {
    throw new TraceLiteError('pattern must be a string', 'INVALID_PATTERN', 'pattern');
  }
  return JSON.stringify({
    literal: Boolean(options.literal),
    ignoreCase: Boolean(options.ignoreCase),
    context: intOption(options.context, 'context', GREP_CONTEXT, 0, MAX_GREP_CONTEXT),
    maxMatches: intOption(options.maxMatches, 'maxMatches', GREP_MAX_MATCHES, 1, MAX_GREP_MATCHES),
    skip: intOption(options.skip, 'skip', 0, 0, 2 ** 31 - 1),
    // Work budget (program bytes × bytes searched); the core's default when absent.
    maxCost: intOption(options.maxCost, 'maxCost', undefined, 0, Number.MAX_SAFE_INTEGER),
  });
}

function shapePage(json, limit) {
  const page = JSON.parse(json);
  const end = page.offset + page.count;
  return {
    offset: page.offset,
    limit,
    count: page.count,
    totalLines: page.totalLines,
    totalBytes: page.totalBytes,
    nextOffset: end < page.totalLines ? end : null,
    text: page.text,
  };
}

function shapeMatches(json, pattern) {
  const found = JSON.parse(json);
  const out = [];
  let previous;
  for (const line of found.lines) {
    if (previous !== undefined && line.number !== previous + 1) out.push('--');
    previous = line.number;
    out.push(`${line.number}${line.isMatch ? ':' : '-'}${line.text}`);
  }
  const next = found.skipped + found.returned;
  return {
    pattern,
    totalLines: found.totalLines,
    totalMatches: found.totalMatches,
    skipped: found.skipped,
    matches: found.lines.filter((l) => l.isMatch).map((l) => ({ line: l.number, text: l.text })),
    lines: found.lines,
    nextSkip: next < found.totalMatches ? next : null,
    text: out.join('\n'),
  };
}

/** Runs `fn(wasmSession)` on a scratch session holding `text` as `t/t`. */
function onText(text, fn) {
  if (typeof text !== 'string') throw new TraceLiteError('text must be a string', 'INVALID_REQUEST', 'text');
  const scratch = guarded(() => Session.withLimits(SCRATCH_LIMITS));
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
 * Resolves `{ text, isError }`.
 */
export async function runSpillTool(store, name, args, session) {
  const parsed = typeof args === 'string' ? safeJson(args) : args;
  const json = typeof args === 'string' ? args : JSON.stringify(args ?? {});
  const m = /^\s*spill:\/\/([^/]+)\/(.*)$/.exec(String(parsed?.pointer ?? ''));
  const scope = session ?? m?.[1] ?? 'default';
  const key = (m ? m[2] : String(parsed?.pointer ?? '')).trim();
  const readable = (!m || m[1] === scope) && NAME.test(key) && NAME.test(scope) && !key.includes('..');
  const reply = await onBlob(
    readable ? store : { get: () => undefined },
    scope,
    readable ? key : 'missing',
    (s) => s.handleToolCall(name, json, scope),
    true,
  );
  return JSON.parse(reply);
}

function safeJson(text) {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
