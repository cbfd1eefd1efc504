// Reading spilled blobs back in pages and by search, over any store with
// `get(session, key)` (sync or async): the wasm SpillStore, the KV store, yours.
import { TraceLiteError } from './errors.js';

/** Default and maximum page sizes (lines) and grep limits. */
export const READ_LIMIT = 200;
export const MAX_READ_LIMIT = 2000;
export const GREP_MAX_MATCHES = 50;
export const MAX_GREP_CONTEXT = 20;
/** Longest line returned verbatim; longer lines are cut with a marker. */
export const MAX_LINE_CHARS = 2000;

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

function splitLines(text) {
  const lines = text.split('\n');
  if (lines.length > 1 && lines[lines.length - 1] === '') lines.pop();
  return lines;
}

function clip(line) {
  return line.length > MAX_LINE_CHARS
    ? `${line.slice(0, MAX_LINE_CHARS)} … [${line.length - MAX_LINE_CHARS} more chars]`
    : line;
}

function intOption(value, name, fallback, min, max) {
  if (value === undefined || value === null || value === '') return fallback;
  const n = typeof value === 'string' ? Number(value) : value;
  if (!Number.isInteger(n) || n < min) {
    throw new TraceLiteError(`${name} must be an integer ≥ ${min}`, 'INVALID_OPTION', name);
  }
  return Math.min(n, max);
}

/**
 * One page of a blob's lines. `offset` is the 1-based first line (default 1),
 * `limit` the number of lines (default 200, at most 2000).
 * Returns `{ offset, limit, totalLines, nextOffset, text }`; `nextOffset` is
 * null at the end.
 */
export function pageLines(blob, { offset, limit } = {}) {
  const lines = splitLines(blob);
  const first = intOption(offset, 'offset', 1, 1, Number.MAX_SAFE_INTEGER);
  const count = intOption(limit, 'limit', READ_LIMIT, 1, MAX_READ_LIMIT);
  const slice = lines.slice(first - 1, first - 1 + count).map(clip);
  const end = first - 1 + slice.length;
  return {
    offset: first,
    limit: count,
    totalLines: lines.length,
    nextOffset: end < lines.length ? end + 1 : null,
    text: slice.join('\n'),
  };
}

function escapeRegExp(s) {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * Lines of a blob matching `pattern` (a regular expression, or a literal
 * string with `literal: true`), with `context` lines around each match.
 * Returns `{ pattern, totalLines, matches: [{ line, text }], truncated, text }`
 * where `text` is grep -n style (`12:match`, `11-context`, `--` between groups).
 */
export function grepLines(blob, pattern, { context, maxMatches, literal = false, ignoreCase = false } = {}) {
  if (typeof pattern !== 'string' || pattern === '') {
    throw new TraceLiteError('pattern must be a non-empty string', 'INVALID_PATTERN', 'pattern');
  }
  let re;
  try {
    re = new RegExp(literal ? escapeRegExp(pattern) : pattern, ignoreCase ? 'i' : '');
  } catch (err) {
    throw new TraceLiteError(`invalid pattern: ${err.message}`, 'INVALID_PATTERN', 'pattern');
  }
  const around = intOption(context, 'context', 0, 0, MAX_GREP_CONTEXT);
  const max = intOption(maxMatches, 'maxMatches', GREP_MAX_MATCHES, 1, 1000);
  const lines = splitLines(blob);
  const matches = [];
  let truncated = false;
  for (let i = 0; i < lines.length; i++) {
    if (!re.test(lines[i])) continue;
    if (matches.length === max) {
      truncated = true;
      break;
    }
    matches.push({ line: i + 1, text: clip(lines[i]) });
  }
  const out = [];
  let shownUpTo = 0; // last line number printed
  for (const m of matches) {
    const from = Math.max(1, m.line - around);
    const to = Math.min(lines.length, m.line + around);
    if (out.length > 0 && from > shownUpTo + 1) out.push('--');
    for (let n = Math.max(from, shownUpTo + 1); n <= to; n++) {
      out.push(`${n}${n === m.line || matches.some((x) => x.line === n) ? ':' : '-'}${clip(lines[n - 1])}`);
    }
    shownUpTo = Math.max(shownUpTo, to);
  }
  return { pattern, totalLines: lines.length, matches, truncated, text: out.join('\n') };
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

/** Reads a page of a spill: `await readSpill(store, 'spill://s/k', { offset, limit })`. */
export async function readSpill(store, pointer, options = {}) {
  const { session, key } = parsePointer(pointer, options.session);
  const page = pageLines(await loadBlob(store, session, key), options);
  return { pointer: `spill://${session}/${key}`, ...page };
}

/** Searches a spill: `await grepSpill(store, 'spill://s/k', 'error', { context: 2 })`. */
export async function grepSpill(store, pointer, pattern, options = {}) {
  const { session, key } = parsePointer(pointer, options.session);
  const found = grepLines(await loadBlob(store, session, key), pattern, options);
  return { pointer: `spill://${session}/${key}`, ...found };
}
