// An edge proxy: a Fetch-API handler that compresses LLM requests on their way
// to the provider and serves the spilled text back to the agent.
import { TraceLiteError, compress } from '#entry';
import { SessionStores, compressInto, fnv1a, sessionFromMessages } from './mirror.js';
import { checkName, grepSpill, readSpill } from './spill-reader.js';

/** Request paths (suffixes) the proxy compresses, and their format. */
export const ROUTES = [
  ['/v1/chat/completions', 'openai-chat'],
  ['/v1/responses', 'openai-responses'],
  ['/v1/messages', 'anthropic'],
];

/** Default request size limit: 8 MiB (the core's own limit may be lower). */
export const DEFAULT_MAX_BODY_BYTES = 8 * 1024 * 1024;

/** Header naming the spill session (also set on responses). */
export const SESSION_HEADER = 'x-tracelite-session';

// Hop-by-hop headers (RFC 9110 §7.6.1) and those the runtime recomputes.
const DROP_REQUEST_HEADERS = new Set([
  'host', 'content-length', 'connection', 'keep-alive', 'proxy-connection', 'transfer-encoding',
  'te', 'trailer', 'upgrade', SESSION_HEADER,
]);

function jsonResponse(status, body, headers = {}) {
  return new Response(JSON.stringify(body), {
    status,
    headers: { 'content-type': 'application/json; charset=utf-8', ...headers },
  });
}

function errorResponse(status, code, message, path = '') {
  return jsonResponse(status, { error: { type: 'tracelite_error', code, message, path } });
}

function statusOf(err) {
  switch (err?.code) {
    case 'INVALID_JSON':
    case 'INVALID_SPILL_KEY':
    case 'INVALID_PATTERN':
    case 'INVALID_OPTION':
      return 400;
    case 'SPILL_NOT_FOUND':
      return 404;
    case 'LIMIT_EXCEEDED':
      return 413;
    default:
      return 500;
  }
}

/** Reads a body as text, refusing more than `max` bytes without buffering them. */
async function readLimited(request, max) {
  const declared = Number(request.headers.get('content-length'));
  if (Number.isFinite(declared) && declared > max) return null;
  if (!request.body) return '';
  const reader = request.body.getReader();
  const chunks = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > max) {
      await reader.cancel();
      return null;
    }
    chunks.push(value);
  }
  const bytes = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    bytes.set(c, at);
    at += c.byteLength;
  }
  return new TextDecoder().decode(bytes);
}

/** The opening of a request in any supported format, for a default session name. */
function openingOf(body) {
  if (Array.isArray(body.messages)) {
    return sessionFromMessages(body.system === undefined ? body.messages : [{ role: 'system', content: body.system }, ...body.messages]);
  }
  if (body.input !== undefined) {
    const input = typeof body.input === 'string' ? [{ role: 'user', content: body.input }] : body.input;
    return sessionFromMessages(body.instructions === undefined ? input : [{ role: 'system', content: body.instructions }, ...input]);
  }
  if (Array.isArray(body.contents)) {
    return sessionFromMessages([{ role: 'system', content: body.systemInstruction ?? null }, ...body.contents]);
  }
  return `conv-${fnv1a(JSON.stringify(body))}`;
}

function upstreamUrl(base, url) {
  const target = new URL(base);
  const basePath = target.pathname.replace(/\/+$/, '');
  target.pathname = basePath + url.pathname;
  target.search = url.search;
  return target;
}

function forwardHeaders(headers) {
  const out = new Headers();
  for (const [name, value] of headers) {
    if (!DROP_REQUEST_HEADERS.has(name.toLowerCase())) out.append(name, value);
  }
  return out;
}

/**
 * The upstream response as it streams in, with `extra` headers. fetch (workerd,
 * undici) hands over the body already decoded, so the encoding headers of the
 * compressed bytes are dropped: a host that re-sends the Response (a Node
 * adapter) would otherwise label plain bytes as gzip.
 */
function relay(response, extra = {}) {
  const headers = new Headers(response.headers);
  headers.delete('content-encoding');
  headers.delete('content-length');
  for (const [name, value] of Object.entries(extra)) headers.set(name, value);
  return new Response(response.body, { status: response.status, statusText: response.statusText, headers });
}

/**
 * A Fetch-API handler `(request) => Promise<Response>`.
 *
 * * `POST …/v1/chat/completions`, `…/v1/responses`, `…/v1/messages`: the JSON
 *   body is compressed (format from the path, or `format`) and forwarded to
 *   `upstream` with the same path, query and headers; the response is streamed
 *   back unchanged (status, headers and body, SSE included).
 * * `GET /spill/<key>?offset=&limit=` (offset = lines to skip) and
 *   `GET /spill/<key>/grep?q=&context=&max=&skip=&regex=1&i=1`: read spilled text
 *   of the session named by the `x-tracelite-session` header (or `?session=`).
 * * Anything else is forwarded untouched.
 *
 * Errors: bad JSON → 400, over `maxBodyBytes` or the core's limits → 413, both
 * with `{ error: { type, code, message, path } }`; upstream errors pass through.
 * A body the core cannot read, or whose spills the store failed to keep, is
 * forwarded as it came with `x-tracelite-skipped: <code>` (e.g. `STORE_FAILED`).
 */
export function createProxy({
  upstream,
  format,
  options = {},
  store,
  fetch: fetchImpl,
  maxBodyBytes = DEFAULT_MAX_BODY_BYTES,
  maxSessions,
  onReport,
} = {}) {
  let base;
  try {
    base = new URL(upstream);
  } catch {
    throw new TraceLiteError('upstream must be an absolute URL', 'INVALID_OPTION', 'upstream');
  }
  if (store !== undefined && (typeof store.get !== 'function' || typeof store.put !== 'function')) {
    throw new TraceLiteError('store must have get(session, key) and put(session, key, text)', 'INVALID_OPTION', 'store');
  }
  if (options.store !== undefined) {
    throw new TraceLiteError('pass the store as createProxy({ store }), not in options', 'INVALID_OPTION', 'options.store');
  }
  if (!Number.isInteger(maxBodyBytes) || maxBodyBytes < 1) {
    throw new TraceLiteError('maxBodyBytes must be a positive integer', 'INVALID_OPTION', 'maxBodyBytes');
  }
  // Fail at start-up, not on the first request, when the settings are wrong.
  compress({ model: 'm', messages: [{ role: 'user', content: 'ok' }] }, {
    ...options, format: 'openai-chat', store: undefined, session: options.session ?? 'check',
  });
  const spills = store ?? new SessionStores({ maxSessions });
  // With an outside store (KV), per-session caches still live here between turns.
  const caches = store === undefined ? undefined : new SessionStores({ maxSessions });
  const send = fetchImpl ?? ((req) => globalThis.fetch(req));

  async function serveSpill(request, url) {
    const session = request.headers.get(SESSION_HEADER) ?? url.searchParams.get('session');
    if (!session) {
      return errorResponse(400, 'MISSING_SESSION', `name the session in the ${SESSION_HEADER} header`, SESSION_HEADER);
    }
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
      const body = m[2]
        ? await grepSpill(spills, pointer, q.get('q') ?? '', {
          context: q.get('context') ?? undefined,
          maxMatches: q.get('max') ?? undefined,
          skip: q.get('skip') ?? undefined,
          literal: q.get('regex') !== '1',
          ignoreCase: q.get('i') === '1',
        })
        : await readSpill(spills, pointer, { offset: q.get('offset') ?? undefined, limit: q.get('limit') ?? undefined });
      return jsonResponse(200, body, { [SESSION_HEADER]: session });
    } catch (err) {
      if (!(err instanceof TraceLiteError) && err?.name !== 'TraceLiteError') throw err;
      return errorResponse(statusOf(err), err.code, err.message, err.path);
    }
  }

  /**
   * Reads, checks and compresses a request body: `{ error }` (a response to
   * send back) or `{ session, forwarded, report, skipped }`. Its own function so
   * that the body text and the parsed request are garbage once it returns: a
   * request waiting for the provider (seconds, for an LLM) holds only the
   * bytes it forwards, not three copies of what it received.
   */
  async function prepare(request, routeFormat) {
    const text = await readLimited(request, maxBodyBytes);
    if (text === null) {
      return { error: errorResponse(413, 'LIMIT_EXCEEDED', `request body over ${maxBodyBytes} bytes`, 'body') };
    }
    let body;
    try {
      body = JSON.parse(text);
    } catch (err) {
      return { error: errorResponse(400, 'INVALID_JSON', `request body is not JSON: ${err.message}`, 'body') };
    }
    if (body === null || typeof body !== 'object' || Array.isArray(body)) {
      return { error: errorResponse(400, 'INVALID_REQUEST', 'request body must be a JSON object', 'body') };
    }
    let session = request.headers.get(SESSION_HEADER);
    if (session) {
      try {
        checkName('session', session);
      } catch (err) {
        return { error: errorResponse(400, err.code, err.message, SESSION_HEADER) };
      }
    } else {
      session = options.session ?? openingOf(body);
    }
    try {
      const pending = compressInto(body, { ...options, format: format ?? routeFormat, session }, store ?? spills, caches);
      body = undefined; // compress has run: while the spills are stored, only the text (for a fallback) is kept
      const out = await pending;
      return { session, forwarded: JSON.stringify(out.request), report: out.report };
    } catch (err) {
      if (err?.name !== 'TraceLiteError') throw err;
      if (err.code === 'LIMIT_EXCEEDED' || err.code === 'INVALID_JSON') {
        return { error: errorResponse(statusOf(err), err.code, err.message, err.path) };
      }
      // A body the core cannot read, or spills the store could not keep (the
      // placeholders would point at nothing), goes to the provider as it came,
      // which answers with its own error: never worse than no proxy.
      return { session, forwarded: text, skipped: err.code };
    }
  }

  async function compressAndForward(request, url, routeFormat) {
    const { error, session, forwarded, report, skipped } = await prepare(request, routeFormat);
    if (error) return error;
    const headers = forwardHeaders(request.headers);
    if (report) {
      headers.set('content-type', 'application/json');
      onReport?.({ session, format: report.format, path: url.pathname, report });
    }
    const upstreamResponse = await send(new Request(upstreamUrl(base, url), {
      method: request.method,
      headers,
      body: forwarded,
      redirect: 'manual',
    }));
    const extra = { [SESSION_HEADER]: session };
    if (report) extra['x-tracelite-tokens'] = `${report.tokensBefore}->${report.tokensAfter}`;
    if (skipped) extra['x-tracelite-skipped'] = skipped;
    return relay(upstreamResponse, extra);
  }

  return async function handle(request) {
    const url = new URL(request.url);
    if (request.method === 'GET' && url.pathname.startsWith('/spill/')) {
      return serveSpill(request, url);
    }
    if (request.method === 'POST') {
      const route = ROUTES.find(([suffix]) => url.pathname.endsWith(suffix));
      if (route || format) return compressAndForward(request, url, route?.[1]);
    }
    const hasBody = request.method !== 'GET' && request.method !== 'HEAD';
    return relay(await send(new Request(upstreamUrl(base, url), {
      method: request.method,
      headers: forwardHeaders(request.headers),
      body: hasBody ? request.body : undefined,
      redirect: 'manual',
      ...(hasBody ? { duplex: 'half' } : {}),
    })));
  };
}
