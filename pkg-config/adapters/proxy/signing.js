// Internal (createProxy): session derivation and signing with the
// deployment's `secret` (HMAC-SHA256): sessions, their tokens, image URL
// signatures. Web Crypto only, so it runs in Node and in workerd alike.

/** Header naming the spill session (also set on responses). */
export const SESSION_HEADER = 'x-tracelite-session';

const SIGNATURE = /^[A-Za-z0-9_-]{43}$/;

// ---------------------------------------------------------------- sessions
//
// Every session the proxy stores spills under is an HMAC (SHA-256, keyed with
// the deployment's `secret`) of the client's identity and either the name the
// client gave it or the conversation's opening: two tenants with the same
// prompt, or the same session name, never share one. The response carries a
// token, `<session>.<tenant>.<signature>`, the spill routes require: only
// whoever got it from a POST (or knows the secret) can read the session's
// spills, and what they spend (search work) counts against the tenant the
// token names. A token of an earlier version, `<session>.<signature>`, still
// reads its session; its budgets are then the session's own.

const encoder = new TextEncoder();
const TOKEN = /^(.+)\.([A-Za-z0-9_-]{43})$/;
/** A token naming its tenant (`signer.tenant`: 32 hex digits). */
const TENANT_TOKEN = /^(.+)\.([0-9a-f]{32})\.([A-Za-z0-9_-]{43})$/;

/**
 * The parts of a token as it reads, unverified: `{ session, tenant }`
 * (`tenant` undefined for a token of an earlier version), else `undefined`.
 * Only for routing a token this proxy just issued; `verifyToken` checks one.
 */
export function tokenParts(token) {
  if (typeof token !== 'string') return undefined;
  const m = TENANT_TOKEN.exec(token);
  if (m) return { session: m[1], tenant: m[2] };
  const legacy = TOKEN.exec(token);
  return legacy ? { session: legacy[1], tenant: undefined } : undefined;
}

/** Unambiguous HMAC input: a label, then each part with its length. */
function message(label, ...parts) {
  return encoder.encode(`tracelite/${label}\n${parts.map((p) => `${p.length}:${p}`).join('')}`);
}

function hex(bytes, n) {
  let out = '';
  for (const b of new Uint8Array(bytes).subarray(0, n)) out += b.toString(16).padStart(2, '0');
  return out;
}

function base64url(bytes) {
  let bin = '';
  for (const b of new Uint8Array(bytes)) bin += String.fromCharCode(b);
  return btoa(bin).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

export function fromBase64(text) {
  const bin = atob(text);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

function fromBase64url(text) {
  return fromBase64(text.replace(/-/g, '+').replace(/_/g, '/'));
}

/** The HMAC key of a secret (a string), or of 32 random bytes (`undefined`). */
function hmacKey(secret) {
  const raw = secret === undefined ? crypto.getRandomValues(new Uint8Array(32)) : encoder.encode(secret);
  return crypto.subtle.importKey('raw', raw, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign', 'verify']);
}

/**
 * Who is calling, for scoping sessions: the provider credentials the request
 * carries (Authorization, x-api-key, x-goog-api-key, Gemini's `?key=`). Only
 * ever an HMAC input; never logged, never stored.
 */
export function defaultIdentity(request) {
  const h = request.headers;
  const key = new URL(request.url).searchParams.get('key') ?? '';
  return [h.get('authorization') ?? '', h.get('x-api-key') ?? '', h.get('x-goog-api-key') ?? '', key]
    .map((p) => `${p.length}:${p}`)
    .join('');
}

/**
 * Session signing with one key. `session(identity, { name } | { opening })`
 * derives a session, `token(session)` signs it, `verify(token)` gives back
 * the session of a genuine token (else `undefined`).
 */
export function sessionSigner(secret) {
  const key = hmacKey(secret);
  const sign = async (label, ...parts) => crypto.subtle.sign('HMAC', await key, message(label, ...parts));
  /** `{ session, tenant }` of a genuine token (`tenant` undefined for one of an earlier version), else `undefined`. */
  async function verifyToken(token) {
    if (typeof token !== 'string') return undefined;
    // crypto.subtle.verify compares in constant time.
    const k = await key;
    const m = TENANT_TOKEN.exec(token);
    if (m && await crypto.subtle.verify('HMAC', k, fromBase64url(m[3]), message('tenant-token', m[1], m[2]))) {
      return { session: m[1], tenant: m[2] };
    }
    const legacy = TOKEN.exec(token);
    if (legacy && await crypto.subtle.verify('HMAC', k, fromBase64url(legacy[2]), message('token', legacy[1]))) {
      return { session: legacy[1], tenant: undefined };
    }
    return undefined;
  }
  return {
    verifyToken,
    async session(identity, { name, opening }) {
      if (name !== undefined) {
        // The name stays readable (logs, KV listings); the suffix scopes it to the client.
        return `${name.slice(0, 95)}-${hex(await sign('named', identity, name), 16)}`;
      }
      return `conv-${hex(await sign('opening', identity, opening), 16)}`;
    },
    /**
     * The token of `session` for `tenant` (`tenant(identity)`):
     * `<session>.<tenant>.<signature>`; without a tenant, one of the earlier
     * form, `<session>.<signature>` (its budgets are the session's own).
     */
    async token(session, tenant) {
      if (tenant === undefined) return `${session}.${base64url(await sign('token', session))}`;
      if (!/^[0-9a-f]{32}$/.test(tenant)) throw new TypeError('tenant must be a tenant key (signer.tenant)');
      return `${session}.${tenant}.${base64url(await sign('tenant-token', session, tenant))}`;
    },
    /** Whether `value` has the shape of a token (`….<43 base64url chars>`). */
    isToken(value) {
      return TOKEN.test(value);
    },
    /** The session of a genuine token, else `undefined`. */
    async verify(token) {
      return (await verifyToken(token))?.session;
    },
    /** A tenant's key for budgets: an HMAC of its identity (the identity itself is never kept). */
    async tenant(identity) {
      return hex(await sign('tenant', identity), 16);
    },
    /** The capability of one image URL: 43 base64url chars of an HMAC of (session, id). */
    async imageSignature(session, id) {
      return base64url(await sign('image', session, id));
    },
    /** Whether `signature` is the one of (session, id) (constant-time check). */
    async verifyImage(session, id, signature) {
      if (typeof signature !== 'string' || !SIGNATURE.test(signature)) return false;
      return crypto.subtle.verify('HMAC', await key, fromBase64url(signature), message('image', session, id));
    },
  };
}
