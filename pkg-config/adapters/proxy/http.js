// Internal (createProxy): the proxy's own responses (JSON, typed errors with
// the status of each code) and bounded reading of a request body.
import { atPath } from '../../core/errors.js';

export function jsonResponse(status, body, headers = {}) {
  return new Response(JSON.stringify(body), {
    status,
    headers: { 'content-type': 'application/json; charset=utf-8', ...headers },
  });
}

/** A typed error body `{ error: { type, code, message, path } }`; `message` starts with `path: ` as a `TraceLiteError`'s does. */
export function errorResponse(status, code, message, path = '', headers = {}) {
  return jsonResponse(status, { error: { type: 'tracelite_error', code, message: atPath(message, path), path } }, headers);
}

/** The HTTP status of a `TraceLiteError` code. */
export function statusOf(err) {
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
    case 'COMPRESS_BUDGET_SPENT':
      return 429;
    case 'SPILL_NOT_FOUND':
      return 404;
    case 'LIMIT_EXCEEDED':
    case 'OVER_BUDGET':
    case 'STORE_WRITE_LIMIT':
      return 413;
    case 'STORE_FAILED':
    case 'SPILL_CORRUPT':
      return 503;
    default:
      return 500;
  }
}

/** The error response of a `TraceLiteError`, with its status. */
export function errorOf(err, headers = {}) {
  return errorResponse(statusOf(err), err.code, err.message, err.path, headers);
}

/** Reads a body as text, refusing more than `max` bytes without buffering them. */
export async function readLimited(request, max) {
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

/** The 413 of a body over `max` bytes. */
export function tooLarge(max) {
  return errorResponse(413, 'LIMIT_EXCEEDED', `request body over ${max} bytes`, 'body');
}

/**
 * A chunk that owns its whole buffer, so it can be transferred to another
 * thread (`postMessage(m, [chunk.buffer])`) without taking bytes that are
 * not its own: the chunk itself, else a copy.
 */
export function ownChunk(value) {
  return value.byteOffset === 0 && value.byteLength === value.buffer.byteLength ? value : value.slice();
}
