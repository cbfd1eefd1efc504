// An edge proxy: a Fetch-API handler that compresses LLM requests on their way
// to the provider and serves the spilled text back to the agent.
import { TraceLiteError, compress } from '#entry';
import { formatsDetect, requestOpening } from '../../wasm/tracelite.js';
import { guarded } from '../../core/errors.js';
import { STORE_BATCH, SessionStores, compressInto, saveCache, storeSpills } from '../../internal/mirror.js';
import { redactJson, redactText } from '../../core/redact.js';
import { MEMORY_DEFAULTS } from '../../core/memory.js';
import { checkName, grepSpill, readSpill } from '../../internal/spill-reader.js';
import { MaskedBlobs, SearchWindows } from './search-budget.js';
import { defaultIdentity, fromBase64, sessionSigner } from './signing.js';

export { defaultIdentity, sessionSigner };
import {
  DEFAULT_MAX_SPILL_RESPONSE_BYTES,
  DEFAULT_MAX_SPILL_ROUNDS,
  addSpillTools,
  spillResolver,
} from './tools.js';
import { carriesConversation, normalizePath, routeOf } from './routes.js';

export { DEFAULT_MAX_SPILL_RESPONSE_BYTES, DEFAULT_MAX_SPILL_ROUNDS, MAX_SPILL_CALLS } from './tools.js';

export { GEMINI_METHODS, REFUSED_ROUTES, ROUTES, normalizePath } from './routes.js';

/**
 * Provider (prices, image sizing) of each route's format when neither
 * `providers` nor `options.provider` names one.
 */
export const DEFAULT_PROVIDERS = Object.freeze({
  'openai-chat': 'openai',
  'openai-responses': 'openai',
  anthropic: 'anthropic',
  gemini: 'gemini',
});

/**
 * Default request size limit: 8 MiB, 2 MiB on workerd (`MEMORY_DEFAULTS`: a
 * request's wasm peak is up to about 20× its body; the core's own limit may be lower).
 */
export const DEFAULT_MAX_BODY_BYTES = MEMORY_DEFAULTS.maxBodyBytes;

/** Header naming the spill session (also set on responses). */
export const SESSION_HEADER = 'x-tracelite-session';

/**
 * Default most blobs one request may write to an outside store (KV): a
 * Workers invocation has at most 1,000 KV operations (and each first-seen
 * blob costs a read before its write). Over it: `STORE_WRITE_LIMIT`.
 */
export const DEFAULT_MAX_STORE_WRITES = 200;

/**
 * Default work one search may do (`maxSearchCost`; the core's units, program
 * bytes × bytes the regex runs over): 2^24, about 1–15 ms in wasm at the
 * cap, so that a search holds other requests up that long at most. A literal
 * search costs nothing; a regex with a literal pays only for the lines
 * holding it. Over it: `GREP_TOO_COSTLY`.
 */
export const DEFAULT_MAX_SEARCH_COST = 2 ** 24;

/**
 * Default `maxSearchWork`: the search work of one client request across all
 * its spill rounds and searches, in searches at `maxSearchCost`. Over it:
 * `SEARCH_BUDGET_SPENT`.
 */
export const DEFAULT_SEARCHES_PER_REQUEST = 2;

/** Default `maxSearchWorkPerMinute` of a session on the spill routes, in searches at `maxSearchCost`. */
export const DEFAULT_SEARCHES_PER_MINUTE = 8;

/** Default bytes of masked spills the proxy keeps for the spill routes and tools (`maxMaskedBytes`). */
export const DEFAULT_MAX_MASKED_BYTES = 8 * 1024 * 1024;

/** Shortest `secret` accepted (characters); e.g. `openssl rand -base64 32` gives 44. */
export const MIN_SECRET_LENGTH = 32;

/**
 * Path (under `imageBaseUrl`'s own path) of the snapshot images the proxy
 * serves: `<base>/image/<session>/<id>.png?sig=<HMAC>`.
 */
export const IMAGE_ROUTE = '/image/';

/** Key prefix of an image in the spill store: `image-<id>` is its content key. */
const IMAGE_KEY = 'image-';

/**
 * `cache-control` of a served image: its URL names its content (the id is a
 * hash of it), so it never changes; `private` keeps shared caches (a CDN)
 * from holding a tenant's image beyond the store's own expiry.
 */
export const IMAGE_CACHE_CONTROL = 'private, max-age=604800, immutable';

const IMAGE_PATH = /^([A-Za-z0-9._-]{1,128})\/([0-9a-f]{32})\.png$/;

/** What to do with a request the proxy cannot compress: see `createProxy`. */
export const ON_ERROR = ['forward', 'reject'];

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

function errorResponse(status, code, message, path = '', headers = {}) {
  return jsonResponse(status, { error: { type: 'tracelite_error', code, message, path } }, headers);
}

function statusOf(err) {
  switch (err?.code) {
    case 'INVALID_JSON':
    case 'INVALID_REQUEST':
    case 'UNKNOWN_FORMAT':
    case 'INVALID_TOOL_CALL':
    case 'INVALID_SPILL_KEY':
    case 'INVALID_PATTERN':
    case 'INVALID_OPTION':
    case 'INVALID_ARGUMENT':
      return 400;
    case 'GREP_TOO_COSTLY':
      return 422;
    case 'SEARCH_BUDGET_SPENT':
      return 429;
    case 'SPILL_NOT_FOUND':
      return 404;
    case 'LIMIT_EXCEEDED':
    case 'STORE_WRITE_LIMIT':
      return 413;
    case 'STORE_FAILED':
    case 'SPILL_CORRUPT':
      return 503;
    default:
      return 500;
  }
}

/**
 * `imageBaseUrl` checked: an absolute https URL (http only for localhost),
 * without credentials, query or fragment. Returns the base, no trailing slash.
 */
function imageBase(value) {
  const fail = (why) => new TraceLiteError(`imageBaseUrl ${why}`, 'INVALID_OPTION', 'imageBaseUrl');
  let url;
  try {
    url = new URL(value);
  } catch {
    throw fail('must be an absolute URL, e.g. https://proxy.example.com');
  }
  const loopback = ['localhost', '127.0.0.1', '[::1]'].includes(url.hostname);
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && loopback)) {
    throw fail('must be an https URL (http only for localhost): the provider fetches the images from it');
  }
  if (url.username || url.password || url.search || url.hash) {
    throw fail('must not carry credentials, a query or a fragment');
  }
  return `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
}

/**
 * `text` (a request as JSON text) with every object member whose value is a
 * URL of `signed` (they all start with `prefix`) given its signed URL. In
 * JSON text `:"` opens a member's value (inside a string a quote is always
 * escaped), so a string that merely contains such a URL is left alone.
 */
function signUrls(text, prefix, signed) {
  const needle = `:"${prefix}`;
  let out = '';
  let from = 0;
  for (let at = text.indexOf(needle); at !== -1; at = text.indexOf(needle, at + needle.length)) {
    const start = at + 2;
    const end = text.indexOf('"', start);
    if (end === -1) break;
    const url = signed.get(text.slice(start, end));
    if (url === undefined) continue;
    out += text.slice(from, start) + url;
    from = end;
  }
  return from === 0 ? text : out + text.slice(from);
}

/** UTF-8 length of a string, without encoding it. */
function utf8Length(text) {
  let n = text.length;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
      const d = text.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        n += 2; // 4 bytes for 2 units
        i++;
        continue;
      }
    }
    if (c >= 0x800) n += 2;
    else if (c >= 0x80) n += 1;
  }
  return n;
}


/** Reads a body as text, refusing more than `max` bytes without buffering them. */
async function readLimited(request, max) {
  const declared = Number(request.headers.get('content-length'));
  if (Number.isFinite(declared) && declared > max) return null;
  if (!request.body) return { text: '', size: 0 };
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
  return { text: new TextDecoder().decode(bytes), size };
}

/**
 * The opening of a request (JSON text) in any supported format (its system
 * messages and the messages up to the first user message, read by the core's
 * strict parser; the same on every later turn). A body the core cannot read
 * is its own opening: compress refuses it later with the reason.
 */
function openingOf(text) {
  try {
    return requestOpening(text);
  } catch {
    return text;
  }
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
 * The error of the core's strict parser for `text` (duplicate keys, nesting,
 * lone surrogates), else `undefined` (an unknown format is not its error).
 */
function strictError(text) {
  try {
    guarded(() => formatsDetect(text));
    return undefined;
  } catch (err) {
    return err?.code === 'UNKNOWN_FORMAT' ? undefined : err;
  }
}

/** The error response for a body that is not a JSON object, else `undefined`. */
function bodyError(text) {
  let body;
  try {
    body = JSON.parse(text);
  } catch (err) {
    return errorResponse(400, 'INVALID_JSON', `request body is not JSON: ${err.message}`, 'body');
  }
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    return errorResponse(400, 'INVALID_REQUEST', 'request body must be a JSON object', 'body');
  }
  return undefined;
}

/**
 * A forwarded body with its secrets masked: `{ text, redacted }`. The text is
 * the masked value serialized again, never the bytes received: what the
 * provider parses is what was searched for secrets.
 */
function redactBody(parsed) {
  const r = redactJson(parsed);
  return { text: JSON.stringify(r.value), redacted: r.count };
}

/**
 * A Fetch-API handler `(request) => Promise<Response>`.
 *
 * * `POST` to a conversation route (`ROUTES`, Gemini's `GEMINI_METHODS`;
 *   matched on the path normalized as an upstream may read it): the JSON body
 *   is compressed (format from the path, or `format`) and forwarded to
 *   `upstream` with the normalized path and the same query and headers; the response is streamed
 *   back unchanged (status, headers and body, SSE included), with
 *   `x-tracelite-session: <token>`. The compress provider is per route:
 *   `providers[format]`, else `options.provider`, else `DEFAULT_PROVIDERS`.
 * * Spill tools (`spillTools`, default on): a forwarded request with a
 *   `spill://` pointer of its session gets the `read_spill` / `grep_spill`
 *   definitions (unless it defines those names); a model turn calling only
 *   them is answered here, in the request's own session, and followed up
 *   upstream (`maxSpillRounds`), so the client gets the final answer
 *   (adapters/proxy/tools.js). A turn mixing them with the client's tools passes
 *   unchanged.
 * * `GET /spill/<key>?offset=&limit=` (offset = lines to skip) and
 *   `GET /spill/<key>/grep?q=&context=&max=&skip=&regex=1&i=1`: read spilled text
 *   of the session whose token is in the `x-tracelite-session` header (or
 *   `?session=`): 401 `MISSING_SESSION` without one, 403
 *   `INVALID_SESSION_TOKEN` for anything but a token this deployment signed.
 * * `imageBaseUrl` (the proxy's public URL): snapshots go to OpenAI and
 *   Anthropic as URLs `<imageBaseUrl>/image/<session>/<id>.png?sig=<HMAC>`
 *   (`optical.imageUrl`); each PNG is stored as `image-<id>` of the session
 *   (with the spills, within `maxStoreWrites` and the store's quota, else the
 *   request goes with its snapshots inline) and served at that route by
 *   `GET`/`HEAD` without a session header: 403 `INVALID_IMAGE_SIGNATURE`
 *   for a missing or wrong `sig`, 404 `IMAGE_NOT_FOUND` when not stored,
 *   404 `NOT_FOUND` for any other path under it.
 * * Fail closed: a route of `REFUSED_ROUTES`, or any other whose JSON body
 *   has a conversation member at its top level, is 400 `UNSUPPORTED_ROUTE`;
 *   another method with a body on a conversation route 405
 *   `METHOD_NOT_ALLOWED`; a path with an encoded slash or dot segment 400
 *   `INVALID_PATH`. Anything else is forwarded untouched.
 * * Searches: one at most `maxSearchCost`, a client request's at most
 *   `maxSearchWork` (then the tool result `SEARCH_BUDGET_SPENT`), a
 *   session's on the grep route at most `maxSearchWorkPerMinute` (then 429).
 *   With redaction on, the model's calls and the spill routes read and search
 *   the masked text (no oracle for a secret).
 * * Responses to compressed POSTs carry `x-tracelite-bytes: received->sent`.
 *
 * Caches between isolates (`persistCache`, default true, with an outside
 * `store` that has `list`): after a request that rendered snapshots, they and
 * the token counts it made are stored in the session beside its spills as
 * one segment `cache-<SHA-256>`, last, and only when the request's writes
 * (spills, images) leave room within `maxStoreWrites` (a failed write only
 * loses the cache). An isolate seeing the session for the first time imports
 * them, so it does not render or count them again; outputs are the same with
 * or without them. `onReport` gets `cache: { rendered, loaded? }`.
 *
 * Sessions: an HMAC keyed with `secret` of the caller's identity (`identify`,
 * by default its provider credentials) and the session name it sent (or
 * `options.session`), else the conversation's opening. `secret` is required
 * with an outside `store` (spills outlive this instance); with the default
 * in-memory store it defaults to 32 random bytes per instance (tokens then
 * stop working when the instance, and with it the spills, goes).
 *
 * Errors: bad JSON → 400, over `maxBodyBytes` or the core's limits → 413, both
 * with `{ error: { type, code, message, path } }`; upstream errors pass through.
 * A body the core cannot read, whose spills the store failed to keep
 * (`STORE_FAILED`) or which would write more than `maxStoreWrites` blobs
 * (`STORE_WRITE_LIMIT`) is, with `onError: 'forward'` (default), forwarded
 * uncompressed with its secrets masked (re-serialized, never the bytes
 * received), marked `x-tracelite-skipped: <code>` and `x-tracelite-redacted:
 * <n>`; with `onError: 'reject'` it gets that error (400, 503 or 413) and
 * nothing goes upstream. A body the core's strict parser refuses (duplicate
 * keys, nesting, lone surrogates) is refused whatever `onError` says.
 */
export function createProxy({
  upstream,
  format,
  options = {},
  store,
  fetch: fetchImpl,
  maxBodyBytes = DEFAULT_MAX_BODY_BYTES,
  maxSessions,
  maxHeldBytes,
  maxMemoryBytes,
  maxStoreWrites = DEFAULT_MAX_STORE_WRITES,
  onError = 'forward',
  secret,
  identify = defaultIdentity,
  onReport,
  providers = {},
  spillTools = true,
  maxSpillRounds = DEFAULT_MAX_SPILL_ROUNDS,
  maxSpillResponseBytes = DEFAULT_MAX_SPILL_RESPONSE_BYTES,
  imageBaseUrl,
  persistCache = true,
  maxSearchCost = DEFAULT_MAX_SEARCH_COST,
  maxSearchWork,
  maxSearchWorkPerMinute,
  maxMaskedBytes = DEFAULT_MAX_MASKED_BYTES,
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
  if (!Number.isInteger(maxStoreWrites) || maxStoreWrites < 1) {
    throw new TraceLiteError('maxStoreWrites must be a positive integer', 'INVALID_OPTION', 'maxStoreWrites');
  }
  if (!ON_ERROR.includes(onError)) {
    throw new TraceLiteError(`onError must be one of ${ON_ERROR.join(', ')}`, 'INVALID_OPTION', 'onError');
  }
  if (typeof identify !== 'function') {
    throw new TraceLiteError('identify must be a function (request) => string', 'INVALID_OPTION', 'identify');
  }
  if (secret !== undefined && (typeof secret !== 'string' || secret.length < MIN_SECRET_LENGTH)) {
    throw new TraceLiteError(
      `secret must be a string of at least ${MIN_SECRET_LENGTH} characters (e.g. openssl rand -base64 32)`,
      'INVALID_OPTION',
      'secret',
    );
  }
  if (secret === undefined && store !== undefined) {
    // Fail closed: a per-instance secret would make the spills of an outside
    // store, which outlive the instance, unreadable on the next one, and a
    // fixed default would make every deployment's tokens forgeable.
    throw new TraceLiteError(
      'secret is required with an outside store: set createProxy({ secret }) (e.g. env.TRACELITE_SECRET)',
      'INVALID_OPTION',
      'secret',
    );
  }
  if (providers === null || typeof providers !== 'object' || Array.isArray(providers)) {
    throw new TraceLiteError('providers must be an object { [format]: provider }', 'INVALID_OPTION', 'providers');
  }
  if (typeof persistCache !== 'boolean') {
    throw new TraceLiteError('persistCache must be a boolean', 'INVALID_OPTION', 'persistCache');
  }
  if (typeof spillTools !== 'boolean') {
    throw new TraceLiteError('spillTools must be a boolean', 'INVALID_OPTION', 'spillTools');
  }
  if (!Number.isInteger(maxSpillRounds) || maxSpillRounds < 1) {
    throw new TraceLiteError('maxSpillRounds must be a positive integer (spillTools: false turns the tools off)', 'INVALID_OPTION', 'maxSpillRounds');
  }
  if (!Number.isInteger(maxSpillResponseBytes) || maxSpillResponseBytes < 1) {
    throw new TraceLiteError('maxSpillResponseBytes must be a positive integer', 'INVALID_OPTION', 'maxSpillResponseBytes');
  }
  if (!Number.isSafeInteger(maxSearchCost) || maxSearchCost < 1) {
    throw new TraceLiteError('maxSearchCost must be a positive integer (the core\'s search work units)', 'INVALID_OPTION', 'maxSearchCost');
  }
  maxSearchWork ??= DEFAULT_SEARCHES_PER_REQUEST * maxSearchCost;
  maxSearchWorkPerMinute ??= DEFAULT_SEARCHES_PER_MINUTE * maxSearchCost;
  for (const [name, value] of [['maxSearchWork', maxSearchWork], ['maxSearchWorkPerMinute', maxSearchWorkPerMinute], ['maxMaskedBytes', maxMaskedBytes]]) {
    if (!Number.isSafeInteger(value) || value < 1) {
      throw new TraceLiteError(`${name} must be a positive integer`, 'INVALID_OPTION', name);
    }
  }
  if (options.session !== undefined) checkName('session', options.session);
  if (options.optical?.imageUrl) {
    // The proxy builds the template itself (signed per image) and serves what it names.
    throw new TraceLiteError('set createProxy({ imageBaseUrl }) instead: the proxy signs and serves the image URLs', 'INVALID_OPTION', 'options.optical.imageUrl');
  }
  const imagesAt = imageBaseUrl === undefined ? undefined : imageBase(imageBaseUrl);
  /** The path prefix of the image route (`imageBaseUrl`'s path + `/image/`). */
  const imagePrefix = imagesAt === undefined ? undefined : `${new URL(imagesAt).pathname.replace(/\/+$/, '')}${IMAGE_ROUTE}`;
  /** Compress options for a session: with `imageBaseUrl`, snapshots go by URL. */
  const optionsFor = (session) => (imagesAt === undefined ? options : {
    ...options,
    optical: { ...options.optical, imageUrl: `${imagesAt}${IMAGE_ROUTE}${session}/{id}.png` },
  });
  /** The provider (prices, image sizing) of a format: `providers`, else `options.provider`, else the route's. */
  const providerOf = (fmt) => providers[fmt] ?? options.provider ?? DEFAULT_PROVIDERS[fmt];
  // Fail at start-up, not on the first request, when the settings are wrong.
  for (const fmt of new Set([...Object.keys(DEFAULT_PROVIDERS), ...Object.keys(providers)])) {
    const provider = providerOf(fmt);
    try {
      compress({ model: 'm', messages: [{ role: 'user', content: 'ok' }] }, {
        ...optionsFor('check'), format: 'openai-chat', provider, store: undefined, session: options.session ?? 'check',
      });
    } catch (err) {
      if (err?.path === 'provider' && provider !== options.provider) err.path = `providers.${fmt}`;
      if (err?.path === 'optical.imageUrl') err.path = 'imageBaseUrl';
      throw err;
    }
  }
  const signer = sessionSigner(secret);
  const spills = store ?? new SessionStores({ maxSessions, maxMemoryBytes });
  // With an outside store (KV), per-session caches still live here between turns.
  const caches = store === undefined ? undefined : new SessionStores({ maxSessions, maxHeldBytes, maxMemoryBytes });
  const send = fetchImpl ?? ((req) => globalThis.fetch(req));
  const redacting = options.redact?.enabled !== false;
  // No oracle: with redaction on, what the model and the client read or search
  // (the spill tools, the spill routes) is the masked text, so a pattern that
  // matches only a secret finds nothing. Only the host reads originals.
  const masking = redacting || options.redact?.store === true;
  // Masked once per blob, not once per read or search (LRU within maxMaskedBytes).
  const maskedBlobs = new MaskedBlobs(maxMaskedBytes);
  const readerOf = () => (masking ? redactedReader(spills, maskedBlobs) : spills);
  // Search work on the spill routes, per session and minute.
  const searchWindows = new SearchWindows({ limit: maxSearchWorkPerMinute, windowMs: 60_000 });

  async function serveSpill(request, url) {
    const token = request.headers.get(SESSION_HEADER) ?? url.searchParams.get('session');
    if (!token) {
      return errorResponse(401, 'MISSING_SESSION', `send the session token a POST returned in the ${SESSION_HEADER} header`, SESSION_HEADER);
    }
    const session = await signer.verify(token);
    if (session === undefined) {
      return errorResponse(403, 'INVALID_SESSION_TOKEN', `${SESSION_HEADER} is not a session token of this proxy`, SESSION_HEADER);
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
      if (!m[2]) {
        return jsonResponse(200, await readSpill(readerOf(), pointer, { offset: q.get('offset') ?? undefined, limit: q.get('limit') ?? undefined }));
      }
      const left = searchWindows.left(session);
      if (left <= 0) {
        return errorResponse(429, 'SEARCH_BUDGET_SPENT', `this session's search work per minute (maxSearchWorkPerMinute) is used up`, 'q',
          { 'retry-after': String(searchWindows.retryAfter(session)) });
      }
      let body;
      try {
        body = await grepSpill(readerOf(), pointer, q.get('q') ?? '', {
          context: q.get('context') ?? undefined,
          maxMatches: q.get('max') ?? undefined,
          skip: q.get('skip') ?? undefined,
          literal: q.get('regex') !== '1',
          ignoreCase: q.get('i') === '1',
          maxCost: Math.min(left, maxSearchCost),
        });
      } catch (err) {
        // Ran out part way, or refused before: counted as all it was given.
        if (err?.code === 'GREP_TOO_COSTLY') searchWindows.spend(session, Math.min(left, maxSearchCost));
        throw err;
      }
      searchWindows.spend(session, body.work);
      return jsonResponse(200, body);
    } catch (err) {
      if (!(err instanceof TraceLiteError) && err?.name !== 'TraceLiteError') throw err;
      return errorResponse(statusOf(err), err.code, err.message, err.path);
    }
  }

  /**
   * `GET|HEAD <imageBaseUrl path>/image/<session>/<id>.png?sig=<HMAC>`: a
   * snapshot the provider fetches (no session header: the signature, an HMAC
   * of the session and the id, is the capability). Malformed → 404
   * `NOT_FOUND`, missing or wrong signature → 403 `INVALID_IMAGE_SIGNATURE`
   * (checked before the store is read), signed but not stored (expired,
   * evicted) → 404 `IMAGE_NOT_FOUND`.
   */
  async function serveImage(request, url) {
    const noStore = { 'cache-control': 'no-store' };
    const m = IMAGE_PATH.exec(url.pathname.slice(imagePrefix.length));
    if (!m || m[1].includes('..')) {
      return errorResponse(404, 'NOT_FOUND', `use ${imagePrefix}<session>/<id>.png?sig=<signature>`, 'path', noStore);
    }
    const [, session, id] = m;
    if (!(await signer.verifyImage(session, id, url.searchParams.get('sig')))) {
      return errorResponse(403, 'INVALID_IMAGE_SIGNATURE', 'sig is not this proxy\'s signature of this image', 'sig', noStore);
    }
    let text;
    try {
      text = await spills.get(session, IMAGE_KEY + id);
    } catch (err) {
      if (err?.code === 'SPILL_NOT_FOUND') {
        return errorResponse(404, 'IMAGE_NOT_FOUND', 'no such image (expired or evicted)', 'id', noStore);
      }
      if (err?.name !== 'TraceLiteError') throw err;
      return errorResponse(statusOf(err), err.code, err.message, err.path, noStore);
    }
    if (typeof text !== 'string') {
      return errorResponse(404, 'IMAGE_NOT_FOUND', 'no such image (expired or evicted)', 'id', noStore);
    }
    const headers = {
      'content-type': 'image/png',
      'cache-control': IMAGE_CACHE_CONTROL,
      etag: `"${id}"`,
      'x-content-type-options': 'nosniff',
    };
    if (request.headers.get('if-none-match') === `"${id}"`) return new Response(null, { status: 304, headers });
    const bytes = fromBase64(text);
    headers['content-length'] = String(bytes.byteLength);
    return new Response(request.method === 'HEAD' ? null : bytes, { status: 200, headers });
  }

  /**
   * Stores the images a compress call sends by URL (`image-<id>` in the
   * session, counted against `maxStoreWrites` with the call's spills and
   * against the store's own per-session limits). Returns each URL's signed
   * form (`?sig=`), or `undefined` when there are none.
   */
  async function storeImages(out, session) {
    const list = out.images ?? [];
    if (list.length === 0) return undefined;
    const blobs = list.map((img) => ({ session, key: IMAGE_KEY + img.id, text: img.data }));
    if (store === undefined) {
      // The in-memory store: synchronous, its per-session quota applies.
      for (const b of blobs) spills.put(b.session, b.key, b.text);
    } else {
      out.written = (out.written ?? 0) + await storeSpills(store, blobs, { maxWrites: maxStoreWrites - (out.written ?? 0), batch: STORE_BATCH });
    }
    const signed = new Map();
    for (const img of list) signed.set(img.url, `${img.url}?sig=${await signer.imageSignature(session, img.id)}`);
    return signed;
  }

  /** The session of a POST (`text` its body): `{ session }` or `{ error }`. */
  async function sessionOf(request, text) {
    const sent = request.headers.get(SESSION_HEADER);
    if (sent && signer.isToken(sent)) {
      // A token from an earlier response names its session as it is.
      const session = await signer.verify(sent);
      if (session !== undefined) return { session };
      return { error: errorResponse(403, 'INVALID_SESSION_TOKEN', `${SESSION_HEADER} is not a session token of this proxy`, SESSION_HEADER) };
    }
    const name = sent || options.session;
    if (name) {
      try {
        checkName('session', name);
      } catch (err) {
        return { error: errorResponse(400, err.code, err.message, SESSION_HEADER) };
      }
    }
    const identity = String(await identify(request) ?? '');
    return { session: await signer.session(identity, name ? { name } : { opening: openingOf(text) }) };
  }

  /**
   * Reads, checks and compresses a request body: `{ error }` (a response to
   * send back) or `{ session, forwarded, report, skipped, redacted }`. Its own
   * function so that the body text and the parsed request are garbage once it
   * returns: a request waiting for the provider (seconds, for an LLM) holds
   * only the bytes it forwards, not three copies of what it received.
   */
  async function prepare(request, routeFormat) {
    const read = await readLimited(request, maxBodyBytes);
    if (read === null) {
      return { error: errorResponse(413, 'LIMIT_EXCEEDED', `request body over ${maxBodyBytes} bytes`, 'body') };
    }
    const { text, size: received } = read;
    const shape = bodyError(text);
    if (shape) return { error: shape };
    const { session, error } = await sessionOf(request, text);
    if (error) return { error };
    const fmt = format ?? routeFormat;
    const provider = providerOf(fmt);
    const run = (req, opts) => compressInto(req, { ...opts, format: fmt, ...(provider ? { provider } : {}), session }, store ?? spills, caches, {
      maxWrites: maxStoreWrites,
      batch: STORE_BATCH,
      persistCache,
      // Written last (below), with what the request's writes leave.
      deferCache: true,
    });
    try {
      // The text itself, read by the core's strict parser (duplicate keys,
      // nesting): what it refuses is never forwarded.
      const pending = run(text, optionsFor(session));
      let out = await pending;
      let imagesInline;
      let signed;
      let cacheSegment = out.cacheSegment;
      try {
        signed = await storeImages(out, session);
      } catch (err) {
        // The images could not be kept (the store's quota, maxStoreWrites, a
        // failing store): the same compression with the snapshots inline,
        // never a URL that leads nowhere.
        imagesInline = err?.code === 'STORE_WRITE_LIMIT' || err?.code === 'STORE_REFUSED' ? err.code : 'STORE_FAILED';
        out = await run(text, options);
        // The request's writes are spent: no cache segment.
        cacheSegment = undefined;
      }
      // The caches for the next isolate, when the request's writes leave room for them.
      if (cacheSegment !== undefined && (out.written ?? 0) < maxStoreWrites) await saveCache(store, session, cacheSegment);
      let forwarded = JSON.stringify(out.request);
      // Pointers lead somewhere: the proxy defines read_spill / grep_spill and answers them.
      const tools = spillTools && addSpillTools(out.request, fmt, session, forwarded);
      if (tools) forwarded = JSON.stringify(out.request);
      // Last, on the text: the session's cache keeps the request as the core made it.
      if (signed) forwarded = signUrls(forwarded, `${imagesAt}${IMAGE_ROUTE}${session}/`, signed);
      return { session, forwarded, received, report: out.report, cache: out.cache, tools: tools ? fmt : undefined, images: signed?.size ?? 0, imagesInline };
    } catch (err) {
      if (err?.name !== 'TraceLiteError') throw err;
      if (err.code === 'LIMIT_EXCEEDED' || err.code === 'INVALID_JSON' || onError === 'reject') {
        return { error: errorResponse(statusOf(err), err.code, err.message, err.path) };
      }
      // Fail closed: a body the core's strict parser refuses (duplicate keys,
      // nesting, lone surrogates) is never forwarded, however it was refused.
      const strict = strictError(text);
      if (strict) return { error: errorResponse(statusOf(strict), strict.code, strict.message, strict.path) };
      // A body the core cannot read, or spills the store could not keep (the
      // placeholders would point at nothing), goes to the provider
      // uncompressed, which answers with its own error: never worse than no
      // proxy. Its secrets are masked all the same (unless redaction is off),
      // and it goes re-serialized (no duplicate key the provider may read otherwise).
      let masked;
      try {
        const parsed = JSON.parse(text);
        masked = redacting ? redactBody(parsed) : { text: JSON.stringify(parsed) };
      } catch {
        // Too deep to serialize again: refused, not forwarded as it came.
        return { error: errorResponse(statusOf(err), err.code, err.message, err.path) };
      }
      return { session, forwarded: masked.text, received, skipped: err.code, redacted: masked.redacted };
    }
  }

  async function compressAndForward(request, url, routeFormat) {
    const { error, session, forwarded, received, report, cache, skipped, redacted, tools, images: byUrl, imagesInline } =
      await prepare(request, routeFormat);
    if (error) return error;
    const headers = forwardHeaders(request.headers);
    const bytes = { received, sent: utf8Length(forwarded) };
    if (report) {
      headers.set('content-type', 'application/json');
      onReport?.({ session, format: report.format, path: url.pathname, report, bytes, ...(cache ? { cache } : {}) });
    }
    const target = upstreamUrl(base, url);
    const forward = (body) => send(new Request(target, { method: request.method, headers, body, redirect: 'manual' }));
    let upstreamResponse = await forward(forwarded);
    const extra = { [SESSION_HEADER]: await signer.token(session) };
    if (tools) {
      // The model's read_spill / grep_spill calls are answered here, in this
      // request's session only, and never reach the client.
      const resolved = await spillResolver({
        format: tools,
        store: readerOf(),
        session,
        forwarded,
        send: forward,
        maxRounds: maxSpillRounds,
        maxBytes: maxSpillResponseBytes,
        maxWork: maxSearchWork,
        maxCost: maxSearchCost,
        // What the model reads goes upstream: masked like the excerpts it stands for.
        mask: redacting ? (text) => redactText(text).text : undefined,
      }).resolve(upstreamResponse);
      upstreamResponse = resolved.response;
      if (resolved.rounds !== undefined) extra['x-tracelite-spill-rounds'] = String(resolved.rounds);
    }
    extra['x-tracelite-bytes'] = `${bytes.received}->${bytes.sent}`;
    if (report) {
      extra['x-tracelite-tokens'] = `${report.tokensBefore}->${report.tokensAfter}`;
      if (report.redactions) extra['x-tracelite-redacted'] = String(report.redactions.count);
    }
    if (imagesInline) extra['x-tracelite-images'] = `inline; ${imagesInline}`;
    else if (byUrl) extra['x-tracelite-images'] = `${byUrl} by url`;
    if (skipped) extra['x-tracelite-skipped'] = skipped;
    if (redacted !== undefined) extra['x-tracelite-redacted'] = String(redacted);
    return relay(upstreamResponse, extra);
  }

  /**
   * A request to a route that is not a conversation's: forwarded as it came,
   * unless its JSON body carries a conversation (`UNSUPPORTED_ROUTE`).
   */
  async function forwardOther(request, url) {
    const init = { method: request.method, headers: forwardHeaders(request.headers), redirect: 'manual' };
    const hasBody = request.method !== 'GET' && request.method !== 'HEAD';
    if (hasBody && !/^(multipart|audio|image|video)\/|octet-stream/i.test(request.headers.get('content-type') ?? '')) {
      const read = await readLimited(request, maxBodyBytes);
      if (read === null) return errorResponse(413, 'LIMIT_EXCEEDED', `request body over ${maxBodyBytes} bytes`, 'body');
      let body;
      try {
        body = JSON.parse(read.text);
      } catch {
        // Not JSON: not a conversation this proxy knows of.
      }
      if (carriesConversation(body)) {
        return errorResponse(400, 'UNSUPPORTED_ROUTE', `${url.pathname} is not a route this proxy compresses; a conversation is never forwarded unredacted`, 'path');
      }
      init.body = read.text;
    } else if (hasBody) {
      init.body = request.body;
      init.duplex = 'half';
    }
    return relay(await send(new Request(upstreamUrl(base, url), init)));
  }

  return async function handle(request) {
    const url = new URL(request.url);
    const { path, ambiguous } = normalizePath(url.pathname);
    if (ambiguous) {
      return errorResponse(400, 'INVALID_PATH', 'the path has dot segments or encoded slashes: send it plain', 'path', { 'cache-control': 'no-store' });
    }
    if (request.method === 'GET' && url.pathname.startsWith('/spill/')) {
      return serveSpill(request, url);
    }
    if (imagePrefix !== undefined && (request.method === 'GET' || request.method === 'HEAD') && url.pathname.startsWith(imagePrefix)) {
      return serveImage(request, url);
    }
    const route = routeOf(path);
    if (request.method === 'POST' && (route?.format || format)) {
      // Forwarded to the normalized path: the one the route was matched on.
      return compressAndForward(request, new URL(`${path}${url.search}`, url), route?.format);
    }
    if (route && request.method !== 'GET' && request.method !== 'HEAD') {
      return errorResponse(route.refused ? 400 : 405, route.refused ? 'UNSUPPORTED_ROUTE' : 'METHOD_NOT_ALLOWED',
        `${request.method} ${url.pathname} carries a conversation this proxy cannot compress; it is not forwarded`, 'path');
    }
    return forwardOther(request, url);
  };
}

/**
 * A store whose `get` masks secrets, each blob once while `cache` (a
 * `MaskedBlobs`) holds it: a blob's text never changes under its key.
 */
function redactedReader(store, cache) {
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
