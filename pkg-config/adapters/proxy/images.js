// Internal (createProxy): the image route. Snapshots go to the provider as
// signed URLs of the proxy (`<imageBaseUrl>/image/<session>/<id>.png?sig=`);
// each PNG is stored in its session and served to whoever holds the signature.
import { OptionError } from '#entry';
import { STORE_BATCH, storeSpills } from '../../core/stores.js';
import { errorOf, errorResponse } from './http.js';
import { fromBase64 } from './signing.js';

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

/**
 * `imageBaseUrl` checked: an absolute https URL (http only for localhost),
 * without credentials, query or fragment. Returns the base, no trailing slash.
 */
export function imageBase(value) {
  const fail = (why) => new OptionError(why, 'INVALID_OPTION', 'imageBaseUrl');
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
export function signUrls(text, prefix, signed) {
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

/**
 * `GET|HEAD <imageBaseUrl path>/image/<session>/<id>.png?sig=<HMAC>`: a
 * snapshot the provider fetches (no session header: the signature, an HMAC
 * of the session and the id, is the capability). Malformed → 404
 * `NOT_FOUND`, missing or wrong signature → 403 `INVALID_IMAGE_SIGNATURE`
 * (checked before the store is read), signed but not stored (expired,
 * evicted) → 404 `IMAGE_NOT_FOUND`.
 */
export async function serveImage(px, request, url) {
  const { imagePrefix, signer, spills } = px;
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
    return errorOf(err, noStore);
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
export async function storeImages(px, out, session) {
  const { store, spills, maxStoreWrites, signer } = px;
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
