// Internal (createProxy): the spill routes, where a client reads and searches
// the spilled text of its own session (a signed session token is the key), and
// the masked view of a store they and the spill tools read through.
import { TraceLiteError } from '#entry';
import { redactText } from '../../core/redact.js';
import { checkName, grepSpill, readSpill } from '../../core/spill-reader.js';
import { errorOf, errorResponse, jsonResponse } from './http.js';
import { SESSION_HEADER } from './signing.js';

/**
 * `GET /spill/<key>?offset=&limit=` and `GET /spill/<key>/grep?q=…`: the
 * spilled text of the session whose token the request carries, searched
 * within the `maxSearchWorkPerMinute` of the tenant the token names (all its
 * sessions together; a token of an earlier version: its session's).
 */
export async function serveSpill(px, request, url) {
  const { signer, searchWindows, maxSearchCost, reader } = px;
  const token = request.headers.get(SESSION_HEADER) ?? url.searchParams.get('session');
  if (!token) {
    return errorResponse(401, 'MISSING_SESSION', `send the session token a POST returned in the ${SESSION_HEADER} header`, SESSION_HEADER);
  }
  const verified = await signer.verifyToken(token);
  if (verified === undefined) {
    return errorResponse(403, 'INVALID_SESSION_TOKEN', `${SESSION_HEADER} is not a session token of this proxy`, SESSION_HEADER);
  }
  const { session, tenant } = verified;
  // Search work is the tenant's, whichever of its sessions spends it.
  const spender = tenant === undefined ? `session:${session}` : `tenant:${tenant}`;
  const m = /^\/spill\/([^/]+)(\/grep)?\/?$/.exec(url.pathname);
  if (!m) return errorResponse(404, 'NOT_FOUND', 'use /spill/<key> or /spill/<key>/grep', 'path');
  const q = url.searchParams;
  try {
    let key = m[1];
    try {
      key = decodeURIComponent(key);
    } catch {
      // A malformed escape is left as is and refused as a key below.
    }
    const pointer = `spill://${checkName('session', session)}/${checkName('key', key)}`;
    if (!m[2]) {
      return jsonResponse(200, await readSpill(reader, pointer, { offset: q.get('offset') ?? undefined, limit: q.get('limit') ?? undefined }));
    }
    const left = searchWindows.left(spender);
    if (left <= 0) {
      return errorResponse(429, 'SEARCH_BUDGET_SPENT', `this client's search work per minute (maxSearchWorkPerMinute) is used up`, 'q',
        { 'retry-after': String(searchWindows.retryAfter(spender)) });
    }
    let body;
    try {
      body = await grepSpill(reader, pointer, q.get('q') ?? '', {
        context: q.get('context') ?? undefined,
        maxMatches: q.get('max') ?? undefined,
        skip: q.get('skip') ?? undefined,
        literal: q.get('regex') !== '1',
        ignoreCase: q.get('i') === '1',
        maxCost: Math.min(left, maxSearchCost),
      });
    } catch (err) {
      // Ran out part way, or refused before: counted as all it was given.
      if (err?.code === 'GREP_TOO_COSTLY') searchWindows.spend(spender, Math.min(left, maxSearchCost));
      throw err;
    }
    searchWindows.spend(spender, body.work);
    return jsonResponse(200, body);
  } catch (err) {
    if (!(err instanceof TraceLiteError) && err?.name !== 'TraceLiteError') throw err;
    return errorOf(err);
  }
}

/**
 * A store whose `get` masks secrets, each blob once while `cache` (a
 * `MaskedBlobs`) holds it: a blob's text never changes under its key.
 */
export function redactedReader(store, cache) {
  return {
    // What it hands back does not hash to its key: outside stores check the original on read.
    masked: true,
    async get(session, key) {
      const held = cache.get(session, key);
      if (held !== undefined) return held;
      const text = await store.get(session, key);
      if (typeof text !== 'string') return text;
      return cache.put(session, key, redactText(text).text);
    },
  };
}
