// Internal (createProxy): forwarding. A conversation POST goes upstream
// compressed, with the model's spill tool calls answered on the way back;
// any other request goes as it came, unless its body carries a conversation.
import { redactText } from '../../core/redact.js';
import { errorResponse, readLimited, tooLarge } from './http.js';
import { prepare } from './prepare.js';
import { carriesConversation } from './routes.js';
import { SESSION_HEADER } from './signing.js';
import { spillResolver } from './tools.js';
import { debugTurn } from '../../internal/debug.js';

// Hop-by-hop headers (RFC 9110 §7.6.1) and those the runtime recomputes.
const DROP_REQUEST_HEADERS = new Set([
  'host', 'content-length', 'connection', 'keep-alive', 'proxy-connection', 'transfer-encoding',
  'te', 'trailer', 'upgrade', SESSION_HEADER,
]);

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
 * A conversation POST: compressed (`prepare`), sent upstream, the model's
 * spill tool calls answered here, and the response relayed with the
 * `x-tracelite-*` headers.
 */
export async function compressAndForward(px, request, url, routeFormat) {
  const { signer, onReport, debug } = px;
  const { error, session, tenant, forwarded, received, report, cache, skipped, redacted, tools, images: byUrl, imagesInline } =
    await prepare(px, request, routeFormat);
  if (error) return error;
  const headers = forwardHeaders(request.headers);
  const bytes = { received, sent: utf8Length(forwarded) };
  if (report) {
    headers.set('content-type', 'application/json');
    onReport?.({ session, format: report.format, path: url.pathname, report, bytes, ...(cache ? { cache } : {}) });
    debugTurn(debug, session, report);
  }
  const target = upstreamUrl(px.base, url);
  const forward = (body) => px.send(new Request(target, { method: request.method, headers, body, redirect: 'manual' }));
  let upstreamResponse = await forward(forwarded);
  const extra = { [SESSION_HEADER]: await signer.token(session, tenant) };
  if (tools) {
    // The model's read_spill / grep_spill calls are answered here, in this
    // request's session only, and never reach the client.
    const resolved = await spillResolver({
      format: tools,
      store: px.reader,
      session,
      forwarded,
      send: forward,
      maxRounds: px.maxSpillRounds,
      maxBytes: px.maxSpillResponseBytes,
      maxWork: px.maxSearchWork,
      maxCost: px.maxSearchCost,
      // What the model reads goes upstream: masked like the excerpts it stands for.
      mask: px.redacting ? (text) => redactText(text).text : undefined,
    }).resolve(upstreamResponse);
    upstreamResponse = resolved.response;
    if (resolved.rounds !== undefined) extra['x-tracelite-spill-rounds'] = String(resolved.rounds);
  }
  extra['x-tracelite-bytes'] = `${bytes.received}->${bytes.sent}`;
  if (report) {
    extra['x-tracelite-tokens'] = `${report.tokensBefore}->${report.tokensAfter}`;
    if (report.redactions) extra['x-tracelite-redacted'] = String(report.redactions.count);
    const over = report.overBudget;
    if (over) extra['x-tracelite-over-budget'] = `${over.tokens}/${over.budget} ${over.largest}`;
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
export async function forwardOther(px, request, url) {
  const { maxBodyBytes } = px;
  const init = { method: request.method, headers: forwardHeaders(request.headers), redirect: 'manual' };
  const hasBody = request.method !== 'GET' && request.method !== 'HEAD';
  if (hasBody && !/^(multipart|audio|image|video)\/|octet-stream/i.test(request.headers.get('content-type') ?? '')) {
    const read = await readLimited(request, maxBodyBytes);
    if (read === null) return tooLarge(maxBodyBytes);
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
  return relay(await px.send(new Request(upstreamUrl(px.base, url), init)));
}
