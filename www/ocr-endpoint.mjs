// The playground server's OCR endpoint (www/serve.mjs, Node only): POST a
// snapshot PNG to /ocr, get tesseract's text of it, read as `make bench` reads
// snapshots (scripts/tesseract.mjs: 2x upscale, `--psm 6`). The page then
// checks which facts the text shows (www/legibility.js).
// Loopback only, and guarded like a local service: the Host and Origin must
// be the server's own, the body is `image/png` of at most `maxBytes` and must
// decode as a PNG of at most `maxPixels`; at most `concurrency` tesseract runs
// at once (`queue` more wait, beyond that 503), each stopped after
// `timeoutMs`; tesseract runs by execFile (no shell) on a file of our own.
// Texts are cached by the image's pixel hash (`cacheEntries`, oldest out).
import { MAX_PIXELS, OCR_SETTINGS, PngError, TESSERACT, decodeGray, isPng, pixelKey, readPng, tesseractVersion } from '../scripts/tesseract.mjs';

/** Where the endpoint listens and its limits (each can be set in `ocrEndpoint`). */
export const OCR_DEFAULTS = Object.freeze({
  path: '/ocr',
  // A snapshot PNG is tens of KB; 8 MiB leaves room and bounds memory.
  maxBytes: 8 << 20,
  maxPixels: MAX_PIXELS,
  concurrency: 2,
  // Each waiting request holds its decoded image: few wait (the page sends two at a time).
  queue: 8,
  timeoutMs: 60_000,
  cacheEntries: 512,
  bin: TESSERACT,
});

/** HTTP status of each refusal or failure (`code` in the JSON body). */
const STATUS = {
  METHOD: 405,
  FORBIDDEN: 403,
  NOT_PNG: 415,
  TOO_LARGE: 413,
  PNG_TOO_LARGE: 413,
  PNG_UNSUPPORTED: 422,
  PNG_CORRUPT: 422,
  TESSERACT_MISSING: 503,
  OCR_BUSY: 503,
  OCR_TIMEOUT: 504,
  OCR_FAILED: 502,
};

const MISSING = 'tesseract is not installed on the machine serving the playground (apt-get install tesseract-ocr)';

class Refusal extends Error {
  constructor(code, message) {
    super(message);
    this.code = code;
  }
}

function sendJson(res, status, body, headers = {}) {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
    'cache-control': 'no-store',
    'x-content-type-options': 'nosniff',
    ...headers,
  });
  res.end(text);
}

/**
 * The request body, refused past `max` bytes (by its content-length at once,
 * else as it streams). A refused body is read on and dropped, so the client
 * gets the answer instead of a reset connection.
 */
function readBody(req, max) {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared > max) {
      req.resume();
      reject(new Refusal('TOO_LARGE', `the body is ${declared} bytes, over the ${max}-byte limit`));
      return;
    }
    const chunks = [];
    let size = 0;
    req.on('data', (chunk) => {
      size += chunk.length;
      if (size > max) {
        chunks.length = 0;
        reject(new Refusal('TOO_LARGE', `the body is over the ${max}-byte limit`));
      } else chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

/** Whether the Host (and the Origin, when sent) name this loopback server: no other site nor a rebound name. */
function sameServer(req, port) {
  const own = new Set([`127.0.0.1:${port}`, `localhost:${port}`]);
  if (!own.has(String(req.headers.host ?? '').toLowerCase())) return false;
  const origin = req.headers.origin;
  return origin === undefined || [...own].some((h) => origin.toLowerCase() === `http://${h}`);
}

/** Runs `task` when fewer than `concurrency` run; refuses when `queue` already wait. */
function limiter(concurrency, queue) {
  let active = 0;
  const waiting = [];
  const next = () => {
    if (active >= concurrency || waiting.length === 0) return;
    active++;
    const { task, resolve, reject } = waiting.shift();
    task().then(resolve, reject).finally(() => {
      active--;
      next();
    });
  };
  return (task) => {
    if (active >= concurrency && waiting.length >= queue) {
      return Promise.reject(new Refusal('OCR_BUSY', `${active} OCR runs and ${waiting.length} waiting: try again shortly`));
    }
    return new Promise((resolve, reject) => {
      waiting.push({ task, resolve, reject });
      next();
    });
  };
}

/**
 * The endpoint: `handles(req)` says whether a request is its (its path),
 * `handle(req, res, port)` answers it. JSON either way: `{ text, key, cached,
 * settings, ms }`, or `{ code, error }` with the status of `STATUS`.
 */
export function ocrEndpoint(options = {}) {
  const o = { ...OCR_DEFAULTS, ...options };
  const run = limiter(o.concurrency, o.queue);
  const cache = new Map();
  const inFlight = new Map();
  let version = null;
  const available = async () => {
    // Checked until found, so installing tesseract needs no restart.
    version ??= await tesseractVersion(o.bin);
    return version;
  };
  const ocr = async (png, gray) => {
    const started = Date.now();
    try {
      const text = await run(() => readPng(png, gray, { timeout: o.timeoutMs, bin: o.bin }));
      return { text, ms: Date.now() - started };
    } catch (err) {
      if (err instanceof Refusal) throw err;
      if (err.code === 'ENOENT') {
        version = null;
        throw new Refusal('TESSERACT_MISSING', MISSING);
      }
      if (err.killed) throw new Refusal('OCR_TIMEOUT', `tesseract ran over ${o.timeoutMs} ms`);
      throw new Refusal('OCR_FAILED', `tesseract failed: ${String(err.message).split('\n')[0]}`);
    }
  };
  const answer = async (req, port) => {
    if (!sameServer(req, port)) throw new Refusal('FORBIDDEN', 'only this server\'s own page may use /ocr');
    const type = String(req.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
    if (type !== 'image/png') throw new Refusal('NOT_PNG', 'send the snapshot as image/png');
    const png = await readBody(req, o.maxBytes);
    if (!isPng(png)) throw new Refusal('NOT_PNG', 'the body is not a PNG');
    const gray = decodeGray(png, { maxPixels: o.maxPixels });
    if (!(await available())) throw new Refusal('TESSERACT_MISSING', MISSING);
    const key = pixelKey(gray);
    if (cache.has(key)) return { text: cache.get(key), key, cached: true, settings: OCR_SETTINGS, ms: 0 };
    let pending = inFlight.get(key);
    if (!pending) {
      pending = ocr(png, gray).finally(() => inFlight.delete(key));
      inFlight.set(key, pending);
    }
    const { text, ms } = await pending;
    cache.set(key, text);
    if (cache.size > o.cacheEntries) cache.delete(cache.keys().next().value);
    return { text, key, cached: false, settings: OCR_SETTINGS, ms };
  };
  return {
    options: o,
    handles: (pathname) => pathname === o.path,
    async handle(req, res, port) {
      if (req.method === 'GET') {
        // What the page asks first: whether a POST can be read (200 either way, so a
        // machine without tesseract logs no failed request; the POST says 503).
        const found = sameServer(req, port) ? await available() : null;
        if (!sameServer(req, port)) sendJson(res, STATUS.FORBIDDEN, { code: 'FORBIDDEN', error: 'only this server\'s own page may use /ocr' });
        else if (found) sendJson(res, 200, { available: true, tesseract: found, settings: OCR_SETTINGS, maxBytes: o.maxBytes, maxPixels: o.maxPixels });
        else sendJson(res, 200, { available: false, code: 'TESSERACT_MISSING', error: MISSING, settings: OCR_SETTINGS });
        return;
      }
      if (req.method !== 'POST') {
        sendJson(res, STATUS.METHOD, { code: 'METHOD', error: 'POST a PNG (GET: whether tesseract is there)' }, { allow: 'GET, POST' });
        return;
      }
      try {
        sendJson(res, 200, await answer(req, port));
      } catch (err) {
        const code = err instanceof Refusal || err instanceof PngError ? err.code : 'OCR_FAILED';
        const headers = code === 'OCR_BUSY' ? { 'retry-after': '5' } : {};
        // A refused body is dropped as it comes: do not keep the connection for more.
        if (code === 'TOO_LARGE') headers.connection = 'close';
        sendJson(res, STATUS[code] ?? 500, { code, error: err.message }, headers);
      }
    },
  };
}
