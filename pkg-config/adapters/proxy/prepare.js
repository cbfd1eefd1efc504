// Internal (createProxy): a conversation POST made ready to forward: its body
// read within `maxBodyBytes` and checked, its session derived, the request
// compressed (spills and images stored, the spill tools added, image URLs
// signed), or, when the core cannot compress it, forwarded masked or refused.
import { formatsDetect, requestOpening } from '../../wasm/tracelite.js';
import { InputError, guarded } from '../../core/errors.js';
import { redactJson } from '../../core/redact.js';
import { STORE_BATCH, compressInto, saveCache } from '../../core/stores.js';
import { checkName } from '../../core/spill-reader.js';
import { errorOf, errorResponse, readLimited, tooLarge } from './http.js';
import { IMAGE_ROUTE, signUrls, storeImages } from './images.js';
import { SESSION_HEADER } from './signing.js';
import { addSpillTools } from './tools.js';
import { CONVERSATION_MEMBERS, FORMAT_MEMBERS } from './routes.js';

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

/**
 * `{ body }` (the parsed JSON object), or `{ error }` (the response) for a
 * body that is not a JSON object.
 */
function parsedBody(text) {
  let body;
  try {
    body = JSON.parse(text);
  } catch (err) {
    return { error: errorResponse(400, 'INVALID_JSON', `request body is not JSON: ${err.message}`, 'body') };
  }
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    return { error: errorResponse(400, 'INVALID_REQUEST', 'request body must be a JSON object', 'body') };
  }
  return { body };
}

/**
 * The error (`INVALID_REQUEST` naming the member) of a body carrying a
 * conversation member format `fmt` does not read, else `undefined`. Fail
 * closed: chat `messages` sent to the Responses route, say, would pass the
 * core untouched (a Responses request without `input`) to a provider that
 * may read them; such a body is handled as one the core cannot read
 * (`onError`: forwarded masked, or refused), never forwarded as it came.
 */
function foreignMember(body, fmt) {
  const own = FORMAT_MEMBERS[fmt] ?? [];
  const foreign = CONVERSATION_MEMBERS.find((m) => Object.hasOwn(body, m)
    && (!own.includes(m) || (m === 'prompt' && (body.prompt === null || typeof body.prompt !== 'object'))));
  if (foreign === undefined) return undefined;
  return new InputError(
    `body.${foreign}: a ${fmt} request has no "${foreign}" (its conversation is ${own.map((m) => `"${m}"`).join(' or ')}): send the body to its own format's route`,
    'INVALID_REQUEST',
    `body.${foreign}`,
  );
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
 * The session of a POST (`text` its body): `{ session, owner }` (`owner`: the
 * tenant a token names, whose quotas the session's spills count against) or `{ error }`.
 */
async function sessionOf(px, request, text, identity) {
  const { signer, options } = px;
  const sent = request.headers.get(SESSION_HEADER);
  if (sent && signer.isToken(sent)) {
    // A token from an earlier response names its session as it is.
    const verified = await signer.verifyToken(sent);
    if (verified !== undefined) return { session: verified.session, owner: verified.tenant };
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
  return { session: await signer.session(identity, name ? { name } : { opening: openingOf(text) }) };
}

/**
 * Reads, checks and compresses a request body: `{ error }` (a response to
 * send back) or `{ session, forwarded, report, skipped, redacted }`. Its own
 * function so that the body text and the parsed request are garbage once it
 * returns: a request waiting for the provider (seconds, for an LLM) holds
 * only the bytes it forwards, not three copies of what it received.
 */
export async function prepare(px, request, routeFormat) {
  const { maxBodyBytes, compressWindows } = px;
  const identity = String(await px.identify(request) ?? '');
  const tenant = await px.signer.tenant(identity);
  if (compressWindows.left(tenant) <= 0) {
    // Refused before the body is read: a refusal costs the attacker's tenant nothing here.
    return { error: errorResponse(429, 'COMPRESS_BUDGET_SPENT', 'this client\'s compress time per minute (maxCompressMsPerMinute) is used up', 'body',
      { 'retry-after': String(compressWindows.retryAfter(tenant)) }) };
  }
  const read = await readLimited(request, maxBodyBytes);
  if (read === null) return { error: tooLarge(maxBodyBytes) };
  const { text, size: received } = read;
  const fmt = px.format ?? routeFormat;
  const { body, error: shape } = parsedBody(text);
  if (shape) return { error: shape };
  const { session, owner = tenant, error } = await sessionOf(px, request, text, identity);
  if (error) return { error };
  const mismatch = foreignMember(body, fmt);
  if (mismatch) return { session, tenant: owner, received, ...unreadable(px, text, mismatch) };
  // An outside store that keeps tenants (FileStore) counts the session's spills against its owner.
  const tpx = typeof px.store?.forTenant === 'function' ? { ...px, store: px.store.forTenant(owner) } : px;
  const started = performance.now();
  try {
    return { session, tenant: owner, received, ...(await compressed(tpx, text, fmt, session, pathModel(request.url))) };
  } catch (err) {
    if (err?.name !== 'TraceLiteError') throw err;
    return { session, tenant: owner, received, ...unreadable(px, text, err) };
  } finally {
    compressWindows.spend(tenant, performance.now() - started);
  }
}

/**
 * The model a Gemini route names in its path (`…/models/<model>:<method>`),
 * else `undefined` (the other formats name it in the body's `model`, which
 * the core reads).
 */
export function pathModel(url) {
  let path;
  try {
    path = new URL(url, 'http://proxy.invalid').pathname;
  } catch {
    return undefined;
  }
  const m = /\/models\/([^/:]+):[A-Za-z]+$/.exec(path);
  if (!m || m[1].length > 256) return undefined;
  try {
    return decodeURIComponent(m[1]);
  } catch {
    return undefined;
  }
}

/**
 * `text` compressed in `session` and made ready to forward: `{ forwarded,
 * report, cache, tools, images, imagesInline }`. `model` is the one the path
 * names (Gemini), used unless the options name one.
 */
async function compressed(px, text, fmt, session, model) {
  const { store, spills, caches, maxStoreWrites, persistCache } = px;
  const provider = px.providerOf(fmt);
  const named = (opts) => (model !== undefined && opts?.model === undefined ? { model } : {});
  const run = (req, opts) => compressInto(req, { ...opts, ...named(opts), format: fmt, ...(provider ? { provider } : {}), session }, store ?? spills, caches, {
    maxWrites: maxStoreWrites,
    batch: STORE_BATCH,
    persistCache,
    // Segments are sealed with the deployment's secret (required with an outside store).
    cacheKey: px.secret,
    // Written last (below), with what the request's writes leave.
    deferCache: true,
  });
  // The text itself, read by the core's strict parser (duplicate keys,
  // nesting): what it refuses is never forwarded.
  let out = await run(text, px.optionsFor(session));
  let imagesInline;
  let signed;
  let cacheSegment = out.cacheSegment;
  try {
    signed = await storeImages(px, out, session);
  } catch (err) {
    // The images could not be kept (the store's quota, maxStoreWrites, a
    // failing store): the same compression with the snapshots inline,
    // never a URL that leads nowhere.
    imagesInline = err?.code === 'STORE_WRITE_LIMIT' || err?.code === 'STORE_REFUSED' ? err.code : 'STORE_FAILED';
    out = await run(text, px.options);
    // The request's writes are spent: no cache segment.
    cacheSegment = undefined;
  }
  // The caches for the next isolate, when the request's writes leave room for them.
  if (cacheSegment !== undefined && (out.written ?? 0) < maxStoreWrites) await saveCache(store, session, cacheSegment);
  // A stored prompt's variables (Responses) are the client's text too: masked like the rest.
  if (px.redacting && out.request?.prompt !== undefined && typeof out.request.prompt === 'object') {
    out.request.prompt = redactJson(out.request.prompt).value;
  }
  let forwarded = JSON.stringify(out.request);
  // Pointers lead somewhere: the proxy defines read_spill / grep_spill and answers them.
  const tools = px.spillTools && addSpillTools(out.request, fmt, session, forwarded);
  if (tools) forwarded = JSON.stringify(out.request);
  // Last, on the text: the session's cache keeps the request as the core made it.
  if (signed) forwarded = signUrls(forwarded, `${px.imagesAt}${IMAGE_ROUTE}${session}/`, signed);
  return { forwarded, report: out.report, cache: out.cache, tools: tools ? fmt : undefined, images: signed?.size ?? 0, imagesInline };
}

/**
 * A body the core refused (`err`): `{ error }`, or `{ forwarded, skipped,
 * redacted }` to send uncompressed (`onError: 'forward'`).
 */
function unreadable(px, text, err) {
  // OVER_BUDGET: the caller asked for it (limits.overBudget: 'error'); forwarding would undo that.
  if (err.code === 'LIMIT_EXCEEDED' || err.code === 'OVER_BUDGET' || err.code === 'INVALID_JSON' || px.onError === 'reject') {
    return { error: errorOf(err) };
  }
  // Fail closed: a body the core's strict parser refuses (duplicate keys,
  // nesting, lone surrogates) is never forwarded, however it was refused.
  const strict = strictError(text);
  if (strict) return { error: errorOf(strict) };
  // A body the core cannot read, or spills the store could not keep (the
  // placeholders would point at nothing), goes to the provider
  // uncompressed, which answers with its own error: never worse than no
  // proxy. Its secrets are masked all the same (unless redaction is off),
  // and it goes re-serialized (no duplicate key the provider may read otherwise).
  let masked;
  try {
    const parsed = JSON.parse(text);
    masked = px.redacting ? redactBody(parsed) : { text: JSON.stringify(parsed) };
  } catch {
    // Too deep to serialize again: refused, not forwarded as it came.
    return { error: errorOf(err) };
  }
  return { forwarded: masked.text, skipped: err.code, redacted: masked.redacted };
}
