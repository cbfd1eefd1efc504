// Internal (createProxy): which requests carry a conversation, on paths
// normalized the way an upstream server may read them. Fail closed: a
// conversation route is compressed (and redacted) or refused, never
// forwarded as it came.

/**
 * Conversation routes the proxy compresses: `[suffix, format]`, matched
 * (ASCII case ignored) against the end of the normalized path.
 */
export const ROUTES = [
  ['/v1/chat/completions', 'openai-chat'],
  ['/v1/responses', 'openai-responses'],
  ['/v1/responses/input_tokens', 'openai-responses'],
  ['/v1/messages', 'anthropic'],
  ['/v1/messages/count_tokens', 'anthropic'],
];

/** Gemini methods the proxy compresses (`…/models/<model>:<method>`). */
export const GEMINI_METHODS = ['generateContent', 'streamGenerateContent', 'countTokens'];

/**
 * Routes that carry conversations the proxy cannot compress (batches of
 * requests, the legacy prompt API, Vertex's raw Anthropic calls): refused
 * with 400 `UNSUPPORTED_ROUTE`, never forwarded.
 */
export const REFUSED_ROUTES = ['/v1/messages/batches', '/v1/batches', '/v1/completions', ':batchgeneratecontent', ':rawpredict', ':streamrawpredict'];

/** Top-level members by which a JSON body on another route is taken for a conversation. */
export const CONVERSATION_MEMBERS = ['messages', 'input', 'contents', 'system', 'systemInstruction', 'system_instruction', 'prompt', 'requests'];

/**
 * The conversation members each format reads (`CONVERSATION_MEMBERS` of its
 * own); a body on a format's route with any other is handled as one the
 * core cannot read (`INVALID_REQUEST` naming it: masked or refused, `onError`). Responses' `prompt` is a stored prompt's reference
 * (an object, its variables masked like the rest); a string `prompt` is the
 * legacy completions API's, refused.
 */
export const FORMAT_MEMBERS = Object.freeze({
  'openai-chat': ['messages'],
  'openai-responses': ['input', 'prompt'],
  anthropic: ['messages', 'system'],
  gemini: ['contents', 'systemInstruction', 'system_instruction'],
});

const GEMINI = new RegExp(`/models/[^/:]+:(${GEMINI_METHODS.join('|')})$`, 'i');

/** Percent-decodes `text` until it is stable (at most 3 times); a malformed escape stops it. */
function decoded(text) {
  let out = text;
  for (let i = 0; i < 3; i++) {
    let next;
    try {
      next = decodeURIComponent(out);
    } catch {
      return out;
    }
    if (next === out) return out;
    out = next;
  }
  return out;
}

/**
 * A path as an upstream server may read it: escapes decoded, `\` taken for
 * `/`, empty segments (double slashes, a trailing slash) dropped and dot
 * segments resolved. `{ path, ambiguous }`: `ambiguous` when the decoding
 * made new segments or dot segments (`%2e%2e`, `%2f`, `..` a URL parser
 * left), so that the upstream may route it elsewhere than it reads.
 */
export function normalizePath(pathname) {
  const plain = decoded(pathname).replace(/\\/g, '/');
  const out = [];
  let ambiguous = false;
  for (const segment of plain.split('/')) {
    if (segment === '' ) continue;
    if (segment === '.' || segment === '..') {
      ambiguous = true;
      if (segment === '..') out.pop();
      continue;
    }
    out.push(segment);
  }
  const path = `/${out.join('/')}`;
  // Segments the raw path does not have: an encoded slash or backslash.
  const raw = pathname.split('/').filter(Boolean).length;
  if (raw !== plain.split('/').filter(Boolean).length) ambiguous = true;
  return { path, ambiguous };
}

/**
 * The route of a normalized path: `{ format }` of a conversation route,
 * `{ refused: true }` for a conversation route the proxy cannot compress,
 * else `undefined`.
 */
export function routeOf(path) {
  const lower = path.toLowerCase();
  const found = ROUTES.find(([suffix]) => lower.endsWith(suffix));
  if (found) return { format: found[1] };
  if (GEMINI.test(path)) return { format: 'gemini' };
  if (REFUSED_ROUTES.some((suffix) => lower.endsWith(suffix))) return { refused: true };
  return undefined;
}

/** Whether a parsed JSON body has a member of a conversation at its top level. */
export function carriesConversation(body) {
  return body !== null && typeof body === 'object' && !Array.isArray(body) && CONVERSATION_MEMBERS.some((m) => m in body);
}
