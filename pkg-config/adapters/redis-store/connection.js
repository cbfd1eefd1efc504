// Internal (RedisStore): the one thing the store asks of a Redis client, to
// run a Lua script (`run(script, keys, args)`), over the clients it takes:
// node-redis (`redis` ≥ 5), ioredis, any object with `sendCommand(args)`
// (RESP replies: strings or bytes), or a REST client with `eval` (and
// optionally `evalsha`), as Upstash's. Scripts go by EVALSHA, sent whole
// (EVAL) once when the server does not know them yet. No Node import: the
// store runs wherever its client does (a client made from `url`: url.js).
import { OptionError, describe } from '../../core/errors.js';

/** RESP's blob string type (`$`): node-redis maps it to a Buffer when asked. */
const BLOB_STRING = 36;

const hex = (bytes) => Array.from(new Uint8Array(bytes), (b) => b.toString(16).padStart(2, '0')).join('');

/** SHA-1 (hex) of each script, as Redis names it for EVALSHA. */
const shas = new Map();
async function sha1(script) {
  let sha = shas.get(script);
  if (sha === undefined) {
    sha = hex(await crypto.subtle.digest('SHA-1', new TextEncoder().encode(script)));
    shas.set(script, sha);
  }
  return sha;
}

const noScript = (err) => /NOSCRIPT/.test(String(err?.message ?? err));

/**
 * `send(args)` of a client that takes raw commands, asking for bytes where
 * the client can (binary-safe replies), else `undefined`.
 */
function sender(client) {
  // node-redis ≥ 5: blob strings as Buffers.
  if (typeof client.sendCommand === 'function' && typeof client.withTypeMapping === 'function' && globalThis.Buffer) {
    const options = { typeMapping: { [BLOB_STRING]: globalThis.Buffer } };
    return (args) => client.sendCommand(args, options);
  }
  // ioredis: replies as Buffers.
  if (typeof client.callBuffer === 'function') return (args) => client.callBuffer(args[0], ...args.slice(1));
  if (typeof client.sendCommand === 'function') return (args) => client.sendCommand(args);
  return undefined;
}

/**
 * `run(script, keys, args)` over `client`, or `INVALID_OPTION` naming
 * `client` when it has none of the shapes above.
 */
export function scriptRunner(client) {
  if (client === null || (typeof client !== 'object' && typeof client !== 'function')) {
    throw notAClient(client);
  }
  const send = sender(client);
  if (send) {
    return async (script, keys, args) => {
      const tail = [String(keys.length), ...keys, ...args];
      try {
        return await send(['EVALSHA', await sha1(script), ...tail]);
      } catch (err) {
        if (!noScript(err)) throw err;
        return send(['EVAL', script, ...tail]);
      }
    };
  }
  if (typeof client.eval === 'function') {
    return async (script, keys, args) => {
      if (typeof client.evalsha === 'function') {
        try {
          return await client.evalsha(await sha1(script), keys, args);
        } catch (err) {
          if (!noScript(err)) throw err;
        }
      }
      return client.eval(script, keys, args);
    };
  }
  throw notAClient(client);
}

function notAClient(client) {
  return new OptionError(
    `must be a Redis client (node-redis, ioredis, or an object with sendCommand(args) or eval(script, keys, args)), got ${describe(client)}`,
    'INVALID_OPTION',
    'client',
  );
}

const decoder = new TextDecoder();

/** A reply as text: bytes are decoded as UTF-8 (what the store wrote), strings are as they came. */
export function replyText(reply) {
  if (typeof reply === 'string') return reply;
  if (reply instanceof Uint8Array) return decoder.decode(reply);
  if (reply === null || reply === undefined || reply === false) return undefined;
  return String(reply);
}

/** A reply as a number (RESP integers may come as numbers, strings or bytes). */
export function replyNumber(reply) {
  return Number(replyText(reply) ?? 0);
}
