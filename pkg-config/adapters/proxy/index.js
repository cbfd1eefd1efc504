// An edge proxy: a Fetch-API handler that compresses LLM requests on their way
// to the provider and serves the spilled text back to the agent. By concern:
// settings.js (options and defaults), forward.js and prepare.js (forwarding),
// spill-routes.js, images.js (image route), signing.js (sessions, tokens,
// signatures), routes.js (which paths carry a conversation), tools.js (the
// spill tools answered on the model's behalf), search-budget.js (search and
// compress budgets), http.js (responses, bounded body reads).
import { compress } from '#entry';
import { SessionStores } from '../../core/stores.js';
import { compressAndForward, forwardOther } from './forward.js';
import { IMAGE_ROUTE, imageBase, serveImage } from './images.js';
import { normalizePath, routeOf } from './routes.js';
import { MaskedBlobs, WorkWindows } from './search-budget.js';
import { DEFAULT_PROVIDERS, proxySettings } from './settings.js';
import { sessionSigner } from './signing.js';
import { redactedReader, serveSpill } from './spill-routes.js';
import { errorResponse } from './http.js';

export { DEFAULT_MAX_SPILL_RESPONSE_BYTES, DEFAULT_MAX_SPILL_ROUNDS, MAX_SPILL_CALLS } from './tools.js';
export { GEMINI_METHODS, REFUSED_ROUTES, ROUTES, normalizePath } from './routes.js';
export { SESSION_HEADER, defaultIdentity, sessionSigner } from './signing.js';
export { IMAGE_CACHE_CONTROL, IMAGE_ROUTE } from './images.js';
export {
  DEFAULT_COMPRESS_MS_PER_MINUTE,
  DEFAULT_MAX_BODY_BYTES,
  DEFAULT_MAX_MASKED_BYTES,
  DEFAULT_MAX_SEARCH_COST,
  DEFAULT_MAX_STORE_WRITES,
  DEFAULT_PROVIDERS,
  DEFAULT_SEARCHES_PER_MINUTE,
  DEFAULT_SEARCHES_PER_REQUEST,
  MIN_SECRET_LENGTH,
  ON_ERROR,
} from './settings.js';

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
 * * Compress time: a tenant's (its credentials, `identify`) POSTs may spend
 *   `maxCompressMsPerMinute` compressing a minute (wall time of the compress
 *   step; with an outside store its round trips count too); once spent, a
 *   POST is refused before its body is read: 429 `COMPRESS_BUDGET_SPENT`
 *   with `retry-after`.
 * * Responses to compressed POSTs carry `x-tracelite-bytes: received->sent`;
 *   a request still over `budget` after every stage (`report.overBudget`) adds
 *   `x-tracelite-over-budget: <tokens>/<budget> <path of its largest message>`.
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
 * Errors: bad JSON → 400, over `maxBodyBytes` or the core's limits → 413 (and
 * `OVER_BUDGET` with `limits.overBudget: 'error'`, whatever `onError` says), both
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
export function createProxy(settings = {}) {
  const px = proxyContext(proxySettings(settings));
  return async function handle(request) {
    const url = new URL(request.url);
    const { path, ambiguous } = normalizePath(url.pathname);
    if (ambiguous) {
      return errorResponse(400, 'INVALID_PATH', 'the path has dot segments or encoded slashes: send it plain', 'path', { 'cache-control': 'no-store' });
    }
    if (request.method === 'GET' && url.pathname.startsWith('/spill/')) {
      return serveSpill(px, request, url);
    }
    if (px.imagePrefix !== undefined && (request.method === 'GET' || request.method === 'HEAD') && url.pathname.startsWith(px.imagePrefix)) {
      return serveImage(px, request, url);
    }
    const route = routeOf(path);
    if (request.method === 'POST' && (route?.format || px.format)) {
      // Forwarded to the normalized path: the one the route was matched on.
      return compressAndForward(px, request, new URL(`${path}${url.search}`, url), route?.format);
    }
    if (route && request.method !== 'GET' && request.method !== 'HEAD') {
      return errorResponse(route.refused ? 400 : 405, route.refused ? 'UNSUPPORTED_ROUTE' : 'METHOD_NOT_ALLOWED',
        `${request.method} ${url.pathname} carries a conversation this proxy cannot compress; it is not forwarded`, 'path');
    }
    return forwardOther(px, request, url);
  };
}

/**
 * What the proxy's parts share: the checked settings, the upstream, the
 * stores, the signer, the image route, the search budgets and the masked
 * view of the spills.
 */
function proxyContext(s) {
  const { options, store, imageBaseUrl, maxSessions, maxHeldBytes, maxMemoryBytes } = s;
  const imagesAt = imageBaseUrl === undefined ? undefined : imageBase(imageBaseUrl);
  /** Compress options for a session: with `imageBaseUrl`, snapshots go by URL. */
  const optionsFor = (session) => (imagesAt === undefined ? options : {
    ...options,
    optical: { ...options.optical, imageUrl: `${imagesAt}${IMAGE_ROUTE}${session}/{id}.png` },
  });
  /** The provider (prices, image sizing) of a format: `providers`, else `options.provider`, else the route's. */
  const providerOf = (fmt) => s.providers[fmt] ?? options.provider ?? DEFAULT_PROVIDERS[fmt];
  checkProviders(s, optionsFor, providerOf);
  const spills = store ?? new SessionStores({ maxSessions, maxMemoryBytes });
  const redacting = options.redact?.enabled !== false;
  // No oracle: with redaction on, what the model and the client read or search
  // (the spill tools, the spill routes) is the masked text, so a pattern that
  // matches only a secret finds nothing. Only the host reads originals.
  const masking = redacting || options.redact?.store === true;
  return {
    ...s,
    base: new URL(s.upstream),
    imagesAt,
    /** The path prefix of the image route (`imageBaseUrl`'s path + `/image/`). */
    imagePrefix: imagesAt === undefined ? undefined : `${new URL(imagesAt).pathname.replace(/\/+$/, '')}${IMAGE_ROUTE}`,
    optionsFor,
    providerOf,
    signer: sessionSigner(s.secret),
    spills,
    // With an outside store (KV), per-session caches still live here between turns.
    caches: store === undefined ? undefined : new SessionStores({ maxSessions, maxHeldBytes, maxMemoryBytes }),
    send: s.fetch ?? ((req) => globalThis.fetch(req)),
    redacting,
    // Masked once per blob, not once per read or search (LRU within maxMaskedBytes).
    reader: masking ? redactedReader(spills, new MaskedBlobs(s.maxMaskedBytes)) : spills,
    // Search work on the spill routes, per session and minute.
    searchWindows: new WorkWindows({ limit: s.maxSearchWorkPerMinute, windowMs: 60_000 }),
    // Compress time per tenant and minute.
    compressWindows: new WorkWindows({ limit: s.maxCompressMsPerMinute, windowMs: 60_000 }),
  };
}

/** Fails at start-up, not on the first request, when a format's provider or the image URL is wrong. */
function checkProviders({ options, providers }, optionsFor, providerOf) {
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
}
