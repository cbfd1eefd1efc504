// Reading spilled blobs back in pages and by search, over any store with
// `get(session, key)` (sync or async): the wasm SpillStore, the KV store, yours.
// Same arguments and limits as the core's read_spill / grep_spill tools
// (src/spill/tools.rs): `offset` is the number of lines to skip.
import { TraceLiteError } from './errors.js';

/** Default and largest page sizes (lines). */
export const READ_LIMIT = 200;
export const MAX_READ_LIMIT = 2000;
/** Most bytes of text one page shows; a page stops early rather than exceed it. */
export const MAX_PAGE_BYTES = 16000;
/** grep defaults and limits. */
export const GREP_CONTEXT = 2;
export const MAX_GREP_CONTEXT = 10;
export const GREP_MAX_MATCHES = 50;
export const MAX_GREP_MATCHES = 200;
/** Longest line shown whole in grep output; longer lines are cut with "…". */
export const MAX_LINE_CHARS = 2000;
/** Longest pattern accepted (characters). */
export const MAX_PATTERN_CHARS = 1000;

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
  if (text === '') return [];
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return lines;
}

function intOption(value, name, fallback, min, max) {
  if (value === undefined || value === null || value === '') return fallback;
  const n = typeof value === 'string' ? Number(value) : value;
  if (!Number.isInteger(n) || n < min) {
    throw new TraceLiteError(`${name} must be an integer ≥ ${min}`, 'INVALID_OPTION', name);
  }
  return Math.min(n, max);
}

const encoder = new TextEncoder();

/**
 * One page of a blob's lines: skips `offset` lines (default 0) and returns up
 * to `limit` (default 200, at most 2000) within 16 KB. Returns
 * `{ offset, limit, count, totalLines, nextOffset, text }`; `nextOffset` (the
 * offset that continues) is null at the end.
 */
export function pageLines(blob, { offset, limit } = {}) {
  const lines = splitLines(blob);
  const skip = intOption(offset, 'offset', 0, 0, Number.MAX_SAFE_INTEGER);
  const count = intOption(limit, 'limit', READ_LIMIT, 1, MAX_READ_LIMIT);
  const shown = [];
  let bytes = 0;
  for (const line of lines.slice(skip, skip + count)) {
    const size = encoder.encode(line).length + 1;
    if (shown.length === 0 && size > MAX_PAGE_BYTES) {
      shown.push(`${line.slice(0, MAX_PAGE_BYTES / 4)}… [line cut: ${size - 1} bytes]`);
      break;
    }
    if (bytes + size > MAX_PAGE_BYTES) break;
    bytes += size;
    shown.push(line);
  }
  const end = skip + shown.length;
  return {
    offset: skip,
    limit: count,
    count: shown.length,
    totalLines: lines.length,
    nextOffset: end < lines.length ? end : null,
    text: shown.join('\n'),
  };
}

function escapeRegExp(s) {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

function clip(line) {
  return line.length > MAX_LINE_CHARS ? `${line.slice(0, MAX_LINE_CHARS)}…` : line;
}

/**
 * Lines of a blob matching `pattern` (a JavaScript regular expression, or
 * plain text with `literal`), with `context` lines around each (default 2, at
 * most 10). `maxMatches` (default 50, at most 200) matches are returned after
 * skipping `skip`. Returns `{ pattern, totalLines, totalMatches, skipped,
 * matches: [{ line, text }], nextSkip, text }`; `text` is grep -n style
 * (`12:match`, `11-context`, `--` between groups) and `nextSkip` is null when
 * there are no more matches.
 */
export function grepLines(blob, pattern, { context, maxMatches, skip, literal = false, ignoreCase = false } = {}) {
  if (typeof pattern !== 'string' || pattern === '') {
    throw new TraceLiteError('pattern must be a non-empty string', 'INVALID_PATTERN', 'pattern');
  }
  if (pattern.length > MAX_PATTERN_CHARS) {
    throw new TraceLiteError(`pattern is longer than ${MAX_PATTERN_CHARS} characters`, 'INVALID_PATTERN', 'pattern');
  }
  let re;
  try {
    re = new RegExp(literal ? escapeRegExp(pattern) : pattern, ignoreCase ? 'i' : '');
  } catch (err) {
    throw new TraceLiteError(`invalid pattern: ${err.message}`, 'INVALID_PATTERN', 'pattern');
  }
  const around = intOption(context, 'context', GREP_CONTEXT, 0, MAX_GREP_CONTEXT);
  const max = intOption(maxMatches, 'maxMatches', GREP_MAX_MATCHES, 1, MAX_GREP_MATCHES);
  const skipped = intOption(skip, 'skip', 0, 0, Number.MAX_SAFE_INTEGER);
  const lines = splitLines(blob);
  const hits = [];
  for (let i = 0; i < lines.length; i++) {
    if (re.test(lines[i])) hits.push(i + 1);
  }
  const matches = hits.slice(skipped, skipped + max).map((n) => ({ line: n, text: clip(lines[n - 1]) }));
  const isMatch = new Set(matches.map((m) => m.line));
  const out = [];
  let shownUpTo = 0; // last line number printed
  for (const m of matches) {
    const from = Math.max(1, m.line - around, shownUpTo + 1);
    const to = Math.min(lines.length, m.line + around);
    if (out.length > 0 && from > shownUpTo + 1) out.push('--');
    for (let n = from; n <= to; n++) out.push(`${n}${isMatch.has(n) ? ':' : '-'}${clip(lines[n - 1])}`);
    shownUpTo = Math.max(shownUpTo, to);
  }
  const next = skipped + matches.length;
  return {
    pattern,
    totalLines: lines.length,
    totalMatches: hits.length,
    skipped,
    matches,
    nextSkip: next < hits.length ? next : null,
    text: out.join('\n'),
  };
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

/** A page as the read_spill tool shows it: a header, numbered lines, a hint. */
export function renderPage(page) {
  if (page.count === 0) return `${page.pointer}: offset ${page.offset} is past the end (${page.totalLines} lines)`;
  const body = page.text.split('\n').map((line, i) => `${String(page.offset + i + 1).padStart(6)}\t${line}`);
  const last = page.offset + page.count;
  const hint = page.nextOffset === null
    ? '[end of output]'
    : `[${page.totalLines - last} more lines: read_spill with offset=${last} to continue]`;
  return `${page.pointer}: lines ${page.offset + 1}-${last} of ${page.totalLines}\n${body.join('\n')}\n${hint}`;
}

/** Matches as the grep_spill tool shows them. */
export function renderMatches(found) {
  const head = `${found.pointer}: ${found.totalMatches} matching lines of ${found.totalLines} for ${JSON.stringify(found.pattern)}`;
  if (found.matches.length === 0) {
    return found.totalMatches > 0 ? `${head} (skip=${found.skipped} is past the last)` : head;
  }
  const hint = found.nextSkip === null
    ? '[no more matches]'
    : `[${found.totalMatches - found.nextSkip} more matches: grep_spill with skip=${found.nextSkip}; read a line whole with read_spill]`;
  return `${head}; showing matches ${found.skipped + 1}-${found.skipped + found.matches.length}\n${found.text}\n${hint}`;
}
