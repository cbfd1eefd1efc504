// createThreadedProxy (tracelite/proxy/threads): createProxy on Node worker
// threads. The same bytes upstream as one thread, sessions found on their
// thread (spill route, spill tools), bodies pulled (a refused body is never
// read) and responses streamed, typed errors for bad settings, a crashed
// thread answering 503 THREAD_FAILED and started again; and issue 39's
// maximal-body attacker at the default maxCompressMsPerMinute (30 s a minute,
// where one thread stalls every tenant): a normal client's p95 beside it
// stays within 3x of its p95 alone.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { SpillStore, TraceLiteError, compress } from '../../pkg/entries/node.js';
import { DEFAULT_COMPRESS_MS_PER_MINUTE, createProxy } from '../../pkg/adapters/proxy/index.js';
import { MAX_THREADS, createThreadedProxy } from '../../pkg/adapters/proxy/threads.js';
import { serveOnLoopback, startUpstream } from './support/hosts.mjs';
import { manySpills, maximalBody, renderingConversation } from './support/requests.mjs';
import { normalClient, p95, startAttacker } from './support/body-attacker.mjs';

const SETTINGS = new URL('./support/threaded-settings.mjs', import.meta.url);
const SECRET = 'threaded-proxy-test-secret-8c1e4b7a2d9f3065';
const OPTIONS = { budget: 8000, provider: 'openai' };
const SPILLING = { budget: 2000, provider: 'openai' };

function post(url, authorization, body, headers = {}) {
  return new Request(url, { method: 'POST', headers: { 'content-type': 'application/json', authorization, ...headers }, body });
}

const sessionOf = (token) => token.replace(/(\.[0-9a-f]{32})?\.[^.]*$/, '');

/** The spill keys compress gives `body` in `session` (what the proxy stored). */
function spillKeys(body, session) {
  const store = new SpillStore();
  try {
    return compress(body, { ...SPILLING, format: 'openai-chat', session, store }).spills.map((s) => s.key);
  } finally {
    store.free();
  }
}

let upstream;
before(async () => {
  upstream = await startUpstream(() => ({ headers: { 'content-type': 'application/json' }, chunks: ['{"ok":true}'] }));
});
after(() => upstream?.close());

test('the same bytes go upstream as from createProxy on one thread, and the same session token comes back', async () => {
  const body = JSON.stringify(manySpills(6, 6_000));
  const one = createProxy({ upstream: upstream.url, options: SPILLING, secret: SECRET });
  const threaded = await createThreadedProxy(SETTINGS, { threads: 2, data: { upstream: upstream.url, options: SPILLING, secret: SECRET } });
  try {
    assert.equal(threaded.threads, 2);
    const a = await one(post('http://proxy.test/v1/chat/completions', 'Bearer sk-same-0000000000000', body));
    const b = await threaded(post('http://proxy.test/v1/chat/completions', 'Bearer sk-same-0000000000000', body));
    assert.equal(a.status, 200);
    assert.equal(b.status, 200);
    assert.equal(await b.text(), '{"ok":true}');
    await a.text();
    const [viaOne, viaThreads] = upstream.received.slice(-2);
    assert.ok(viaOne.body.includes('spill://'), 'the request spilled');
    assert.equal(viaThreads.body, viaOne.body);
    assert.equal(b.headers.get('x-tracelite-session'), a.headers.get('x-tracelite-session'));
    assert.equal(b.headers.get('x-tracelite-tokens'), a.headers.get('x-tracelite-tokens'));
  } finally {
    await threaded.close();
  }
});

test('each tenant\'s spills are read on its own thread by the spill route, and not by another tenant', async () => {
  const threaded = await createThreadedProxy(SETTINGS, { threads: 3, data: { upstream: upstream.url, options: SPILLING } });
  try {
    const tenants = [];
    for (let i = 0; i < 6; i++) {
      const body = JSON.stringify(manySpills(3 + i, 5_000));
      const res = await threaded(post('http://proxy.test/v1/chat/completions', `Bearer sk-tenant-${i}-000000000000`, body));
      assert.equal(res.status, 200);
      await res.text();
      const token = res.headers.get('x-tracelite-session');
      tenants.push({ token, keys: spillKeys(JSON.parse(body), sessionOf(token)) });
    }
    for (const [i, { token, keys }] of tenants.entries()) {
      assert.ok(keys.length > 0);
      for (const key of keys) {
        const page = await threaded(new Request(`http://proxy.test/spill/${key}?limit=2`, { headers: { 'x-tracelite-session': token } }));
        assert.equal(page.status, 200, `tenant ${i}, ${key}`);
        assert.ok((await page.json()).text.length > 0);
        const grep = await threaded(new Request(`http://proxy.test/spill/${key}/grep?q=line&session=${encodeURIComponent(token)}`));
        assert.equal(grep.status, 200);
        assert.ok((await grep.json()).totalMatches >= 1);
      }
    }
    // A tenant reads nothing of another's (a blob both hold has one key: only the others').
    let denials = 0;
    for (const [i, { token, keys }] of tenants.entries()) {
      const others = tenants[(i + 1) % tenants.length].keys.filter((k) => !keys.includes(k));
      for (const key of others) {
        const denied = await threaded(new Request(`http://proxy.test/spill/${key}`, { headers: { 'x-tracelite-session': token } }));
        assert.equal(denied.status, 404, `tenant ${i} reads ${key}`);
        await denied.text();
        denials++;
      }
    }
    assert.ok(denials >= tenants.length - 1, `${denials} denials`);
  } finally {
    await threaded.close();
  }
});

test('signed image URLs are served by the thread of their session; a forged signature is refused', async () => {
  const threaded = await createThreadedProxy(SETTINGS, { threads: 3, data: { upstream: upstream.url, options: { provider: 'openai' }, extra: { imageBaseUrl: 'https://proxy.example.com/tl/' } } });
  try {
    let images = 0;
    for (let i = 0; i < 4; i++) {
      const res = await threaded(post('https://proxy.example.com/v1/chat/completions', `Bearer sk-images-${i}-00000000000`, JSON.stringify(renderingConversation(12 + i))));
      assert.equal(res.status, 200);
      await res.text();
      const urls = [...upstream.received.at(-1).body.matchAll(/https:\/\/proxy\.example\.com\/tl\/image\/[^"]+/g)].map((m) => m[0]);
      assert.ok(urls.length > 0, 'snapshots went by URL');
      for (const url of urls) {
        const image = await threaded(new Request(url));
        assert.equal(image.status, 200, url);
        assert.equal(image.headers.get('content-type'), 'image/png');
        await image.arrayBuffer();
        images++;
      }
      const forged = await threaded(new Request(urls[0].replace(/sig=[A-Za-z0-9_-]{4}/, 'sig=AAAA')));
      assert.equal(forged.status, 403);
      await forged.text();
    }
    assert.ok(images >= 4);
  } finally {
    await threaded.close();
  }
});

test('a body is pulled as the thread reads it: one refused over the budget is never read', async () => {
  const threaded = await createThreadedProxy(SETTINGS, { threads: 2, data: { upstream: upstream.url, options: OPTIONS, maxCompressMsPerMinute: 1 } });
  try {
    const body = JSON.stringify(manySpills(4, 6_000));
    const first = await threaded(post('http://proxy.test/v1/chat/completions', 'Bearer sk-heavy-000000000000000', body));
    assert.equal(first.status, 200);
    await first.text();
    let pulled = 0;
    const stream = new ReadableStream({ pull(c) { pulled++; c.enqueue(new TextEncoder().encode(body)); c.close(); } }, { highWaterMark: 0 });
    const refused = await threaded(new Request('http://proxy.test/v1/chat/completions', {
      method: 'POST', headers: { 'content-type': 'application/json', authorization: 'Bearer sk-heavy-000000000000000' }, body: stream, duplex: 'half',
    }));
    assert.equal(refused.status, 429);
    assert.equal((await refused.json()).error.code, 'COMPRESS_BUDGET_SPENT');
    assert.equal(pulled, 0, 'the body was not read');
  } finally {
    await threaded.close();
  }
});

test('a streamed response reaches the client chunk by chunk while upstream still sends (threads, then node:http)', async () => {
  let release;
  const held = new Promise((resolve) => { release = resolve; });
  const sse = await startUpstream(() => ({ headers: { 'content-type': 'text/event-stream', 'set-cookie': 'a=1' }, chunks: ['data: {"a":1}\n\n', held.then(() => 'data: [DONE]\n\n')] }));
  const threaded = await createThreadedProxy(SETTINGS, { threads: 1, data: { upstream: sse.url, options: OPTIONS } });
  const server = await serveOnLoopback(threaded);
  try {
    const res = await fetch(`${server.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: 'Bearer sk-stream-00000000000000' }, body: JSON.stringify({ model: 'm', stream: true, messages: [{ role: 'user', content: 'hi' }] }) });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'text/event-stream');
    const reader = res.body.getReader();
    const decoder = new TextDecoder();
    let seen = '';
    while (!seen.includes('"a":1')) seen += decoder.decode((await reader.read()).value);
    release();
    for (let r = await reader.read(); !r.done; r = await reader.read()) seen += decoder.decode(r.value);
    assert.equal(seen, 'data: {"a":1}\n\ndata: [DONE]\n\n');
    assert.equal(res.headers.get('set-cookie'), 'a=1');
    assert.match(res.headers.get('x-tracelite-session'), /^conv-/);
  } finally {
    release();
    await server.close();
    await threaded.close();
    await sse.close();
  }
});

test('serveNode (serveOnLoopback): the handler sees the server\'s own address (not the Host header), a throw is a bare 500, an unread body is drained', async () => {
  const seen = [];
  const server = await serveOnLoopback(async (request) => {
    seen.push(request.url);
    if (request.url.endsWith('/throw')) throw new Error('boom');
    if (request.method === 'POST') return new Response('refused unread', { status: 429 });
    return new Response('ok');
  });
  try {
    const ok = await fetch(`${server.url}/a?b=1`, { headers: { host: 'evil.test' } });
    assert.equal(await ok.text(), 'ok');
    assert.equal(seen[0], `${server.url}/a?b=1`);
    const thrown = await fetch(`${server.url}/throw`);
    assert.equal(thrown.status, 500);
    assert.equal(await thrown.text(), 'internal error\n');
    // A large body the handler never reads: answered, and the server goes on.
    const refused = await fetch(`${server.url}/post`, { method: 'POST', body: 'x'.repeat(4 << 20) });
    assert.equal(refused.status, 429);
    assert.equal(await refused.text(), 'refused unread');
    assert.equal((await fetch(`${server.url}/after`)).status, 200);
  } finally {
    await server.close();
  }
});

test('memory: maxMemoryBytes is shared among the threads; each thread\'s wasm stays within its bound after 24 maximal sessions', { timeout: 240_000 }, async () => {
  const MiB = 1 << 20;
  const maxBodyBytes = 256 << 10;
  const maxMemoryBytes = 4 * MiB;
  const threaded = await createThreadedProxy(SETTINGS, { threads: 2, data: { options: OPTIONS, stub: true, maxBodyBytes, extra: { maxMemoryBytes } } });
  try {
    const before = await threaded.stats();
    assert.deepEqual(before.map((t) => [t.thread, t.running, t.inFlight]), [[0, true, 0], [1, true, 0]]);
    // Two attackers (two credentials: a thread each), 12 sessions each.
    for (let s = 0; s < 12; s++) {
      await Promise.all([0, 1].map(async (a) => {
        const res = await threaded(post('http://proxy.test/v1/chat/completions', `Bearer sk-memory-${a}-0000000000`, maximalBody(maxBodyBytes - 1024, `m${a}-${s}`)));
        assert.equal(res.status, 200);
        await res.text();
      }));
    }
    const after = await threaded.stats();
    // The documented bound per thread (bench/HOSTILE-MEMORY.md): 16 MiB + its share of
    // maxMemoryBytes + 24 x maxBodyBytes over its start.
    for (const t of after) {
      const bound = before[t.thread].wasmMemoryBytes + 16 * MiB + maxMemoryBytes / 2 + 24 * maxBodyBytes;
      assert.ok(t.wasmMemoryBytes > before[t.thread].wasmMemoryBytes, `thread ${t.thread} served`);
      assert.ok(t.wasmMemoryBytes <= bound, `thread ${t.thread}: ${t.wasmMemoryBytes} > ${bound}`);
    }
    console.log(`threads' wasm after 24 maximal sessions: ${after.map((t) => (t.wasmMemoryBytes / MiB).toFixed(1)).join(', ')} MiB (from ${before.map((t) => (t.wasmMemoryBytes / MiB).toFixed(1)).join(', ')})`);
  } finally {
    await threaded.close();
  }
});

test('memory: each thread keeps maxMemoryBytes / threads of sessions (one thread keeps two sessions where each of two keeps one)', async () => {
  // 150–180 KB bodies: with a request's reserve (15x its bytes) and what a
  // session keeps (heap-measured), 7 MiB holds both sessions on one thread,
  // and a thread's half of it (3.5 MiB) one (measured: one thread keeps both
  // from 6 MiB, two threads each one up to 8 MiB).
  const body = (n) => JSON.stringify(manySpills(n, 40_000));
  const kept = async (threads) => {
    const threaded = await createThreadedProxy(SETTINGS, { threads, data: { upstream: upstream.url, options: SPILLING, extra: { maxMemoryBytes: 7 << 20 } } });
    try {
      const tokens = [];
      for (const [name, n] of [['one', 5], ['two', 6]]) {
        const res = await threaded(post('http://proxy.test/v1/chat/completions', 'Bearer sk-share-0000000000000', body(n), { 'x-tracelite-session': name }));
        assert.equal(res.status, 200);
        await res.text();
        tokens.push(res.headers.get('x-tracelite-session'));
      }
      const [key] = spillKeys(JSON.parse(body(5)), sessionOf(tokens[0]));
      const page = await threaded(new Request(`http://proxy.test/spill/${key}?limit=1`, { headers: { 'x-tracelite-session': tokens[0] } }));
      const answer = await page.json();
      return page.status === 200 ? 'kept' : `${page.status} ${answer.error.code}: ${answer.error.message}`;
    } finally {
      await threaded.close();
    }
  };
  assert.equal(await kept(1), 'kept');
  assert.match(await kept(2), /^404 SPILL_NOT_FOUND: .*expired/);
});

test('bad settings are typed errors naming them, before any request', async () => {
  const rejects = (promise, path) => assert.rejects(promise, (e) => e instanceof TraceLiteError && e.code === 'INVALID_OPTION' && e.path === path, path);
  await rejects(createThreadedProxy(SETTINGS, { threads: 0 }), 'threads');
  await rejects(createThreadedProxy(SETTINGS, { threads: MAX_THREADS + 1 }), 'threads');
  await rejects(createThreadedProxy(SETTINGS, { threads: 1.5 }), 'threads');
  await rejects(createThreadedProxy(5), 'settingsModule');
  await rejects(createThreadedProxy('data:text/javascript,export default 5'), 'settingsModule');
  await rejects(createThreadedProxy(SETTINGS, { threads: 1, data: { fn: () => 1 } }), 'data');
  // What createProxy refuses, each thread refuses: the error names the setting.
  await rejects(createThreadedProxy(SETTINGS, { threads: 2, data: { options: OPTIONS, extra: { maxCompressMsPerMinute: -1 } } }), 'maxCompressMsPerMinute');
  await rejects(createThreadedProxy(SETTINGS, { threads: 1, data: { options: OPTIONS, extra: { secret: 'short' } } }), 'secret');
});

test('a thread that ends under a request answers 503 THREAD_FAILED and is started again', async () => {
  const threaded = await createThreadedProxy(SETTINGS, { threads: 1, data: { upstream: upstream.url, options: OPTIONS, crashOn: 'crash-now' } });
  try {
    const crash = await threaded(post('http://proxy.test/v1/chat/completions', 'Bearer sk-crash-0000000000000', JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'crash-now' }] })));
    assert.equal(crash.status, 503);
    assert.equal((await crash.json()).error.code, 'THREAD_FAILED');
    let ok;
    for (let i = 0; i < 50 && ok?.status !== 200; i++) {
      ok = await threaded(post('http://proxy.test/v1/chat/completions', 'Bearer sk-crash-0000000000000', JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'fine' }] })));
      await ok.text();
    }
    assert.equal(ok.status, 200, 'the thread serves again');
  } finally {
    await threaded.close();
  }
});

test('a thread that ends while a response streams errors that body with THREAD_FAILED', async () => {
  const threaded = await createThreadedProxy(SETTINGS, { threads: 1, data: { options: OPTIONS, crashMidStream: true } });
  try {
    const res = await threaded(post('http://proxy.test/v1/chat/completions', 'Bearer sk-crash-0000000000000', JSON.stringify({ model: 'm', stream: true, messages: [{ role: 'user', content: 'hi' }] })));
    assert.equal(res.status, 200);
    const reader = res.body.getReader();
    assert.equal(new TextDecoder().decode((await reader.read()).value), 'data: {"a":1}\n\n');
    await assert.rejects(reader.read(), (e) => e instanceof TraceLiteError && e.code === 'THREAD_FAILED' && e.group === 'host');
  } finally {
    await threaded.close();
  }
});

// Issue 39: the maximal-body attacker at the default compress budget.
const BODY_BYTES = 256 << 10;
const ATTACK_SECONDS = 20;

test('Node, concurrently, at the default compress budget: a normal client\'s p95 beside a maximal-body attacker stays within 3x of alone', { timeout: 240_000 }, async () => {
  assert.equal(DEFAULT_COMPRESS_MS_PER_MINUTE, 30_000);
  const threaded = await createThreadedProxy(SETTINGS, { threads: Number(process.env.TRACELITE_TEST_THREADS ?? 2), data: { options: OPTIONS, stub: true, maxBodyBytes: BODY_BYTES } });
  const server = await serveOnLoopback(threaded);
  try {
    await normalClient(server.url); // warm-up: the normal tenant has its thread
    const before = p95(await normalClient(server.url));
    const statuses = {};
    let admitted;
    const attacking = new Promise((resolve) => { admitted = resolve; });
    const attack = startAttacker({ url: server.url, bytes: BODY_BYTES - 1024, seconds: ATTACK_SECONDS, onStatus: (status) => {
      statuses[status] = (statuses[status] ?? 0) + 1;
      if (status === '200') admitted();
    } });
    // Both send at once while the attacker's compresses are admitted (its budget is 30 s of them).
    await Promise.race([attacking, attack.done]);
    const beside = p95(await normalClient(server.url).finally(attack.stop));
    await attack.done;
    const alone = Math.max(before, p95(await normalClient(server.url)));
    console.log(`node, ${threaded.threads} threads, default budget: p95 alone ${alone.toFixed(1)} ms, beside the maximal-body attacker ${beside.toFixed(1)} ms; attacker statuses ${JSON.stringify(statuses)}`);
    assert.ok(statuses[200] > 0, JSON.stringify(statuses));
    assert.ok(beside <= 3 * alone, `p95 ${beside.toFixed(1)} ms beside the attacker, ${alone.toFixed(1)} ms alone`);
  } finally {
    await server.close();
    await threaded.close();
  }
});
