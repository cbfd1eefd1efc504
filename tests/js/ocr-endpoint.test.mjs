// The playground server's OCR endpoint (www/ocr-endpoint.mjs, POST /ocr of
// www/serve.mjs): what it refuses (not a PNG, too many bytes or pixels, a
// foreign page), its limits (concurrency, timeout; a stand-in program makes
// them deterministic) and that a real snapshot PNG comes back as the text
// `make bench` reads from it (scripts/tesseract.mjs). The real read skips,
// saying why, when tesseract is not installed.
import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const { startServer } = await import(`${ROOT}www/serve.mjs`);
const { OCR_DEFAULTS } = await import(`${ROOT}www/ocr-endpoint.mjs`);
const { encodeGray, readPngSync, decodeGray, tesseractAvailable } = await import(`${ROOT}scripts/tesseract.mjs`);
const { renderSnapshot } = await import(`${ROOT}pkg/entries/node.js`);
const { readFacts } = await import(`${ROOT}www/legibility.js`);

const HAS_TESSERACT = tesseractAvailable();
const servers = [];
let dir;

async function serve(ocr) {
  const s = await startServer({ port: 0, ocr });
  servers.push(s.server);
  return s.url;
}

function post(url, body, headers = { 'content-type': 'image/png' }) {
  return fetch(new URL('ocr', url), { method: 'POST', headers, body });
}

/** A raw request (fetch cannot set Host). */
function raw(url, { method = 'GET', headers = {}, body = null } = {}) {
  return new Promise((resolve, reject) => {
    const req = request(new URL('ocr', url), { method, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode, json: JSON.parse(text) }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** A gray PNG of `width` x `height` (white). */
function blank(width, height) {
  return encodeGray({ width, height, gray: new Uint8Array(width * height).fill(255) });
}

const TEXT = 'def reconcile_entries(ledger, statement_rate):\n    total = compute_balance_total(ledger.accounts, 4821)\n    path = "src/ledger/rates_table.py"\n';
const FACTS = [
  { kind: 'identifier', text: 'compute_balance_total' },
  { kind: 'integer', text: '4821' },
  { kind: 'path', text: 'src/ledger/rates_table.py' },
];
const snapshotPng = (text = TEXT) => Buffer.from(renderSnapshot(text, { provider: 'openai' }).images[0].data, 'base64');

/** A stand-in for tesseract: prints a version, or sleeps `ms` and prints its arguments. */
function fakeTesseract(ms) {
  const file = join(dir, `fake-tesseract-${ms}.mjs`);
  writeFileSync(file, `#!${process.execPath}\nif (process.argv[2] === '--version') { console.log('tesseract 0.0 (stand-in)'); process.exit(0); }\nsetTimeout(() => console.log(process.argv.slice(2).join(' ')), ${ms});\n`);
  chmodSync(file, 0o755);
  return file;
}

before(() => {
  dir = mkdtempSync(join(tmpdir(), 'tracelite-ocr-endpoint-'));
});

after(async () => {
  await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
  rmSync(dir, { recursive: true, force: true });
});

test('a body that is not a PNG is refused with 415, a corrupt PNG with 422', async () => {
  const url = await serve({ bin: fakeTesseract(0) });
  let res = await post(url, Buffer.from('hello, not an image'));
  assert.equal(res.status, 415);
  assert.equal((await res.json()).code, 'NOT_PNG');
  // The right bytes under another type: refused too (and a cross-site form cannot send image/png without a preflight).
  res = await post(url, snapshotPng(), { 'content-type': 'text/plain' });
  assert.equal(res.status, 415);
  // A PNG signature over bytes that are not one.
  const png = snapshotPng();
  res = await post(url, Buffer.concat([png.subarray(0, 8), Buffer.from('IHDR but not really')]));
  assert.equal(res.status, 422);
  assert.equal((await res.json()).code, 'PNG_CORRUPT');
  // Truncated image data.
  res = await post(url, png.subarray(0, png.length - 40));
  assert.equal(res.status, 422);
  // Another method: 405 naming the allowed ones.
  res = await fetch(new URL('ocr', url), { method: 'PUT', body: 'x' });
  assert.equal(res.status, 405);
  assert.equal(res.headers.get('allow'), 'GET, POST');
});

test('an oversized body is refused with 413, by its length or as it streams, and so is an image of too many pixels', async () => {
  assert.equal(OCR_DEFAULTS.maxBytes, 8 << 20);
  const url = await serve({ bin: fakeTesseract(0), maxBytes: 64 << 10, maxPixels: 1000 * 1000 });
  let res = await post(url, Buffer.alloc((64 << 10) + 1));
  assert.equal(res.status, 413);
  assert.equal((await res.json()).code, 'TOO_LARGE');
  // No content-length: counted as it comes.
  const stream = new ReadableStream({
    start(c) {
      for (let i = 0; i < 8; i++) c.enqueue(new Uint8Array(16 << 10));
      c.close();
    },
  });
  res = await fetch(new URL('ocr', url), { method: 'POST', headers: { 'content-type': 'image/png' }, body: stream, duplex: 'half' });
  assert.equal(res.status, 413);
  assert.equal((await res.json()).code, 'TOO_LARGE');
  // A small file of many pixels (white compresses well): refused before it is inflated.
  const wide = blank(2000, 1000);
  assert.ok(wide.length < 64 << 10, `${wide.length} bytes`);
  res = await post(url, wide);
  assert.equal(res.status, 413);
  assert.equal((await res.json()).code, 'PNG_TOO_LARGE');
  // Under both limits: read.
  res = await post(url, blank(200, 100));
  assert.equal(res.status, 200);
});

test('only the server\'s own page may use it: another Host or Origin is refused with 403', async () => {
  const url = await serve({ bin: fakeTesseract(0) });
  const { port } = new URL(url);
  const body = blank(20, 20);
  const headers = { 'content-type': 'image/png', 'content-length': body.length };
  assert.equal((await raw(url, { method: 'POST', body, headers: { ...headers, host: `127.0.0.1:${port}` } })).status, 200);
  assert.equal((await raw(url, { method: 'POST', body, headers: { ...headers, host: `127.0.0.1:${port}`, origin: `http://localhost:${port}` } })).status, 200);
  const rebound = await raw(url, { method: 'POST', body, headers: { ...headers, host: `attacker.example:${port}` } });
  assert.deepEqual([rebound.status, rebound.json.code], [403, 'FORBIDDEN']);
  const foreign = await raw(url, { method: 'POST', body, headers: { ...headers, host: `127.0.0.1:${port}`, origin: 'https://attacker.example' } });
  assert.deepEqual([foreign.status, foreign.json.code], [403, 'FORBIDDEN']);
  assert.equal((await raw(url, { headers: { host: `attacker.example:${port}` } })).status, 403);
});

test('at most `concurrency` runs at once and `queue` waiting; a run over `timeoutMs` is stopped (504)', async () => {
  const url = await serve({ bin: fakeTesseract(1500), concurrency: 1, queue: 1 });
  // Three different images at once: one runs, one waits, one is refused.
  const answers = await Promise.all([blank(10, 10), blank(11, 10), blank(12, 10)].map((png) => post(url, png)));
  const statuses = answers.map((r) => r.status).sort();
  assert.deepEqual(statuses, [200, 200, 503]);
  const busy = answers.find((r) => r.status === 503);
  assert.equal(busy.headers.get('retry-after'), '5');
  assert.equal((await busy.json()).code, 'OCR_BUSY');
  // The stand-in prints its arguments: tesseract's own, `--psm 6`, on a file (no shell).
  const ok = await answers.find((r) => r.status === 200).json();
  assert.match(ok.text, /^\/\S+\/snap\.png - --psm 6\n$/);
  assert.equal(ok.settings, 'tesseract, 2x bilinear upscale, --psm 6');
  const slow = await serve({ bin: fakeTesseract(5000), timeoutMs: 300 });
  const res = await post(slow, blank(10, 10));
  assert.equal(res.status, 504);
  assert.equal((await res.json()).code, 'OCR_TIMEOUT');
});

test('without tesseract the endpoint says so: GET 200 available:false, POST 503 TESSERACT_MISSING', async () => {
  const url = await serve({ bin: join(dir, 'no-such-tesseract') });
  const probe = await fetch(new URL('ocr', url));
  assert.equal(probe.status, 200);
  const json = await probe.json();
  assert.equal(json.available, false);
  assert.equal(json.code, 'TESSERACT_MISSING');
  const res = await post(url, snapshotPng());
  assert.equal(res.status, 503);
  const body = await res.json();
  assert.equal(body.code, 'TESSERACT_MISSING');
  assert.match(body.error, /not installed/);
  // And a server started without the endpoint (a static host) has no /ocr at all.
  const none = await serve(false);
  assert.equal((await fetch(new URL('ocr', none))).status, 404);
});

test('a real snapshot PNG is read by tesseract as the bench reads it, then served from the cache', { skip: HAS_TESSERACT ? false : 'tesseract is not installed (apt-get install tesseract-ocr): the real read is not checked' }, async () => {
  const url = await serve({});
  const probe = await (await fetch(new URL('ocr', url))).json();
  assert.equal(probe.available, true);
  assert.match(probe.tesseract, /^tesseract /);
  const png = snapshotPng();
  const res = await post(url, png);
  assert.equal(res.status, 200, await res.clone().text());
  const first = await res.json();
  assert.equal(first.cached, false);
  // The bench's reading of the same image (scripts/tesseract.mjs, as bench/ocr.mjs calls it).
  assert.equal(first.text, readPngSync(png, decodeGray(png)));
  const { read } = readFacts(FACTS, first.text);
  assert.deepEqual(read.map((f) => f.text), FACTS.map((f) => f.text), first.text);
  const again = await (await post(url, png)).json();
  assert.deepEqual([again.cached, again.text, again.key], [true, first.text, first.key]);
});
