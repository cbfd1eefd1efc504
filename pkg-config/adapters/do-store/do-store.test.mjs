// Issue 18 item 4: DurableObjectSpillStore and its object (tracelite/do-store)
// in real workerd (Miniflare 4, a durableObjects binding): the KvSpillStore
// rules (content keys, never overwrite, verify on read, limits), read-after-
// write in a session, isolated sessions; then the Worker example with the
// binding, as a proxy whose spills and spill tools go through the objects.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { bundleWorker, projectWithPkg, root, startUpstream, startWorker } from '../../../tests/js/support/hosts.mjs';
import { PATHS, POINTER, bigOutput, clientText, conversation, lastToolResult, model } from '../../../tests/js/support/proxy-tools.mjs';

const PROXY_SECRET = 'do-store-test-secret-7a6b5c4d3e2f1a0b9c8d';
const WORKER = readFileSync(join(root, 'pkg-config/examples/cloudflare-worker/worker.js'), 'utf8');
// A worker that runs one store call per request: `{ op, args, options }` → `{ value } | { error }`.
// With \`{ compress: { request, session } }\`: compressAsync with the store, then
// grep_spill through handleToolCallAsync for each pointer of the output.
const HARNESS = `
import { compressAsync, handleToolCallAsync } from 'tracelite';
import { DurableObjectSpillStore } from 'tracelite/do-store';
export { TraceLiteSpillObject } from 'tracelite/do-store';
export default {
  async fetch(request, env) {
    const { calls, options, compress, grep } = await request.json();
    if (compress || grep) {
      const store = new DurableObjectSpillStore(env.SPILL_OBJECTS);
      const out = compress ? await compressAsync(compress.request, { store, session: compress.session }) : undefined;
      const pointers = grep?.pointers ?? [...new Set(JSON.stringify(out.request).match(/spill:\\/\\/[\\w./-]+/g) ?? [])];
      const session = compress?.session ?? grep.session;
      const replies = [];
      for (const pointer of pointers) replies.push(await handleToolCallAsync('grep_spill', { pointer, pattern: 'FAILED' }, { store, session }));
      return Response.json({ tokens: out && [out.report.tokensBefore, out.report.tokensAfter], pointers, replies });
    }
    let store;
    try {
      store = new DurableObjectSpillStore(env.SPILL_OBJECTS, options);
    } catch (err) {
      return Response.json([{ error: { code: err.code, message: err.message } }]);
    }
    const out = [];
    for (const { op, args, raw } of calls) {
      try {
        if (raw) {
          // The object itself, asked about another session than its own.
          const stub = env.SPILL_OBJECTS.get(env.SPILL_OBJECTS.idFromName(raw.object));
          const res = await stub.fetch('https://tracelite.spill/get', { method: 'POST', body: JSON.stringify({ session: raw.session, key: 'k' }) });
          out.push({ status: res.status, ...(await res.json()) });
        } else {
          out.push({ value: await store[op](...args) });
        }
      } catch (err) {
        out.push({ error: { code: err.code, message: err.message } });
      }
    }
    return Response.json(out);
  },
};`;

let harness;
let proxyMf;
let upstream;

before(async () => {
  const durableObjects = { SPILL_OBJECTS: 'TraceLiteSpillObject' };
  harness = await startWorker(await bundleWorker(projectWithPkg('tracelite-do-'), HARNESS), { durableObjects });
  upstream = await startUpstream(model);
  proxyMf = await startWorker(await bundleWorker(projectWithPkg('tracelite-do-proxy-'), WORKER), {
    durableObjects,
    bindings: { UPSTREAM: upstream.url, TRACELITE_OPTIONS: JSON.stringify({ budget: 16000 }), TRACELITE_SECRET: PROXY_SECRET },
  });
});

after(async () => {
  await harness?.dispose();
  await proxyMf?.dispose();
  await upstream?.close();
});

/** Runs store calls (`[op, ...args]`) in one request of the harness worker. */
async function run(calls, options) {
  const res = await harness.dispatchFetch('http://harness.test/', {
    method: 'POST',
    body: JSON.stringify({ calls: calls.map((c) => (Array.isArray(c) ? { op: c[0], args: c.slice(1) } : c)), options }),
  });
  return res.json();
}

const contentKey = (kind, text) => `${kind}-${createHash('sha256').update(text).digest('hex').slice(0, 32)}`;

test('a blob comes back exactly, across chunk boundaries (multi-byte text, surrogate pairs), with its size and lines', async () => {
  const text = Array.from({ length: 9000 }, (_, i) => `ligne ${i} — 🚀 ünïcödé ${'x'.repeat(i % 17)}`).join('\n');
  const key = contentKey('tool', text);
  const [put, got, again, list] = await run([['put', 'big-1', key, text], ['get', 'big-1', key], ['put', 'big-1', key, text], ['list', 'big-1']]);
  assert.equal(put.value, true);
  assert.equal(got.value, text);
  assert.equal(again.value, false, 'the same text under its key is not written again');
  assert.deepEqual(list.value, [{ key, bytes: Buffer.byteLength(text), lines: 9000 }]);
  // In a later request (a new client, nothing cached) too.
  const [later, page, grep] = await run([['get', 'big-1', key], ['read', 'big-1', key, 4499, 2], ['grep', 'big-1', key, 'ligne 8999 ', { literal: true }]]);
  assert.equal(later.value, text);
  assert.equal(page.value.text, `${text.split('\n').slice(4499, 4501).join('\n')}\n`);
  assert.deepEqual(grep.value.matches.map((m) => m.line), [9000]);
});

test('never another text under a held key; a content key must be the hash of its text', async () => {
  const text = 'the first text\n';
  const key = contentKey('tool', text);
  const [first, other, forged, named, renamed, kept] = await run([
    ['put', 'rules-1', key, text],
    ['put', 'rules-1', key, 'a planted text\n'],
    ['put', 'rules-1', contentKey('tool', 'something else'), text],
    ['put', 'rules-1', 'my-notes', 'one'],
    ['put', 'rules-1', 'my-notes', 'two'],
    ['get', 'rules-1', 'my-notes'],
  ]);
  assert.equal(first.value, true);
  assert.equal(other.error.code, 'SPILL_CORRUPT'); // the planted text does not hash to the key
  assert.equal(forged.error.code, 'SPILL_CORRUPT');
  assert.equal(named.value, true);
  assert.equal(renamed.error.code, 'STORE_REFUSED');
  assert.equal(kept.value, 'one');
  const [missing, bad] = await run([['get', 'rules-1', 'tool-00000000000000000000000000000000'], ['get', 'rules-1', '../x']]);
  assert.equal(missing.error.code, 'SPILL_NOT_FOUND');
  assert.equal(bad.error.code, 'INVALID_SPILL_KEY');
});

test('a read right after a write in the same session sees it, in one request and from parallel ones', async () => {
  const texts = Array.from({ length: 24 }, (_, i) => `blob ${i}\n${'payload '.repeat(200 + i)}`);
  const results = await Promise.all(texts.map((text, i) => run([['put', `rw-${i % 3}`, contentKey('tool', text), text], ['get', `rw-${i % 3}`, contentKey('tool', text)]])));
  results.forEach(([put, got], i) => {
    assert.equal(put.value, true);
    assert.equal(got.value, texts[i]);
  });
  // Every write of a session is listed by the next request.
  const [list] = await run([['list', 'rw-0']]);
  assert.equal(list.value.length, 8);
});

test('sessions are isolated: one session\'s key reads as missing from another, and an object serves only its own session', async () => {
  const text = 'tenant A secret output\n';
  const key = contentKey('tool', text);
  const [put, fromB, listB, fromA] = await run([['put', 'iso-a', key, text], ['get', 'iso-b', key], ['list', 'iso-b'], ['get', 'iso-a', key]]);
  assert.equal(put.value, true);
  assert.equal(fromB.error.code, 'SPILL_NOT_FOUND');
  assert.deepEqual(listB.value, []);
  assert.equal(fromA.value, text);
  const [misrouted] = await run([{ raw: { object: 'iso-a', session: 'iso-b' } }]);
  assert.equal(misrouted.status, 400);
  assert.equal(misrouted.error.code, 'INVALID_REQUEST');
});

test('limits: maxSessionBytes refuses a put over it; an expired blob reads as missing and its alarm frees its bytes', { timeout: 20000 }, async () => {
  const a = 'a'.repeat(800);
  const b = 'b'.repeat(800);
  const options = { maxSessionBytes: 1000, ttlSeconds: 1 };
  const [first, over] = await run([['put', 'lim-1', 'first', a], ['put', 'lim-1', 'second', b]], options);
  assert.equal(first.value, true);
  assert.equal(over.error.code, 'STORE_REFUSED');
  // Later (the object's clock runs on), the blob has expired: the alarm deleted it.
  await new Promise((resolve) => setTimeout(resolve, 2500));
  const [gone, fits] = await run([['get', 'lim-1', 'first'], ['put', 'lim-1', 'second', b]], options);
  assert.equal(gone.error.code, 'SPILL_NOT_FOUND');
  assert.equal(fits.value, true);
  const [bad] = await run([['list', 'x']], { maxSessionBytes: 0 });
  assert.equal(bad.error.code, 'INVALID_OPTION');
});

test('the Worker example with a SPILL_OBJECTS binding: spills are readable at once, and the model\'s spill calls are answered from them', async () => {
  const NEEDLE = 'NEEDLE: segfault in worker 7';
  for (const stream of [false, true]) {
    upstream.received.length = 0;
    const res = await proxyMf.dispatchFetch(`http://proxy.test${PATHS.anthropic}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': 'sk-do-test-key', 'x-tracelite-session': 'do-agent' },
      body: JSON.stringify(conversation('anthropic', bigOutput(NEEDLE), stream ? { stream } : {})),
    });
    assert.equal(clientText('anthropic', await res.text(), stream), `${stream ? 'Let me look.' : ''}final: ${NEEDLE}`);
    assert.equal(upstream.received.length, 2);
    assert.ok(lastToolResult('anthropic', JSON.parse(upstream.received[1].body)).includes(NEEDLE));
    // The spill the placeholder points at is readable right after the POST.
    const key = POINTER.exec(upstream.received[0].body)[0].split('/').pop();
    const token = res.headers.get('x-tracelite-session');
    const page = await proxyMf.dispatchFetch(`http://proxy.test/spill/${key}/grep?q=${encodeURIComponent(NEEDLE)}`, { headers: { 'x-tracelite-session': token } });
    assert.equal(page.status, 200);
    assert.deepEqual((await page.json()).matches, [{ line: 1500, text: NEEDLE }]);
  }
});

test('compressAsync with the Durable Object store: every pointer is written when it resolves and handleToolCallAsync reads it, then and in a later request', async () => {
  const log = Array.from({ length: 4000 }, (_, i) => (i === 3100 ? 'FAILED tests/test_price.py::test_discount - KeyError: price' : `tests/test_shop.py::test_case_${i} PASSED`)).join('\n');
  const request = {
    model: 'gpt-4.1',
    messages: [
      { role: 'user', content: 'The discount test fails; fix it.' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'bash', arguments: '{"command":"pytest"}' } }] },
      { role: 'tool', tool_call_id: 'c1', content: log },
    ],
  };
  const call = async (body) => (await harness.dispatchFetch('http://harness.test/', { method: 'POST', body: JSON.stringify(body) })).json();
  const first = await call({ compress: { request, session: 'async-1' } });
  assert.ok(first.tokens[1] < first.tokens[0] / 5, `compressed: ${first.tokens}`);
  assert.equal(first.pointers.length, 1);
  assert.equal(first.replies[0].isError, false, first.replies[0].text);
  assert.match(first.replies[0].text, /3101:FAILED tests\/test_price\.py::test_discount/);
  const later = await call({ grep: { pointers: first.pointers, session: 'async-1' } });
  assert.equal(later.replies[0].text, first.replies[0].text, 'the object kept it for a later request');
  const other = await call({ grep: { pointers: first.pointers, session: 'async-2' } });
  assert.equal(other.replies[0].isError, true, 'another session does not read it');
});
