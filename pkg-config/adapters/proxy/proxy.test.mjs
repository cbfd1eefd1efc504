// createProxy in real workerd (Miniflare 4) in front of a stub provider on
// 127.0.0.1 that records what it received.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { SpillStore, compress, trajectoryToRequest } from '../../../pkg/entries/node.js';
import { KvSpillStore } from '../../../pkg/adapters/kv-store/index.js';
import { createProxy, sessionSigner } from '../../../pkg/adapters/proxy/index.js';
import { bundleWorker, projectWithPkg, root, startUpstream, startWorker } from '../../../tests/js/support/hosts.mjs';
import { conversation, withSpillTools } from '../../../tests/js/support/proxy-tools.mjs';

const OPTIONS = { budget: 16000, provider: 'openai' };
const SECRET = 'sk-test-5f1c0ffee-never-log-me';
/** The deployment's TRACELITE_SECRET (HMAC key of sessions and tokens). */
const PROXY_SECRET = 'proxy-test-secret-6b2e9f0c1d4a7e3b5c8f';
/** The session a response's token names (`<session>.<signature>`). */
const sessionOf = (res) => res.headers.get('x-tracelite-session').replace(/(\.[0-9a-f]{32})?\.[^.]*$/, '');
const sample = JSON.parse(readFileSync(join(root, 'tests/fixtures/sample-trajectory.json'), 'utf8'));
const chatRequest = { model: 'gpt-4o', stream: true, ...trajectoryToRequest(sample, sample.steps.length, 'openai-chat') };
const SSE = [
  'data: {"id":"c1","choices":[{"delta":{"content":"Hel"}}]}\n\n',
  'data: {"id":"c1","choices":[{"delta":{"content":"lo"}}]}\n\n',
  'data: [DONE]\n\n',
];

// The Worker example shipped in the docs is the worker under test.
const WORKER = readFileSync(join(root, 'pkg-config/examples/cloudflare-worker/worker.js'), 'utf8');

const GZIPPED = JSON.stringify({ id: 'c2', choices: [{ message: { content: 'y'.repeat(2000) } }] });

let releaseSecond;
const firstChunkRead = new Promise((resolve) => { releaseSecond = resolve; });

let upstream;
let mf;
let kv;
let logs = '';

before(async () => {
  upstream = await startUpstream((req) => {
    if (req.url.startsWith('/v1/chat/completions?fail')) {
      return { status: 429, headers: { 'content-type': 'application/json', 'retry-after': '7' }, chunks: ['{"error":{"message":"slow down"}}'] };
    }
    if (req.url.startsWith('/v1/chat/completions?gzip')) {
      return { headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' }, chunks: [gzipSync(GZIPPED)] };
    }
    if (req.url.startsWith('/v1/chat/completions?handshake')) {
      // The second event is sent only after the client has read the first.
      return { headers: { 'content-type': 'text/event-stream' }, chunks: [SSE[0], firstChunkRead.then(() => SSE[1]), SSE[2]] };
    }
    if (req.url === '/v1/models') {
      return { headers: { 'content-type': 'application/json' }, chunks: ['{"data":[]}'] };
    }
    return { headers: { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' }, chunks: SSE };
  });
  const dir = projectWithPkg('tracelite-proxy-');
  const script = await bundleWorker(dir, WORKER);
  mf = await startWorker(script, {
    kvNamespaces: ['SPILLS'],
    bindings: { UPSTREAM: upstream.url, TRACELITE_OPTIONS: JSON.stringify(OPTIONS), MAX_BODY_BYTES: String(1024 * 1024), TRACELITE_SECRET: PROXY_SECRET },
    handleRuntimeStdio(stdout, stderr) {
      stdout.on('data', (d) => { logs += d; });
      stderr.on('data', (d) => { logs += d; });
    },
  });
  kv = await mf.getKVNamespace('SPILLS');
});

after(async () => {
  releaseSecond(); // never leave the stub waiting, even when the streaming test failed
  await mf?.dispose();
  await upstream?.close();
});

function expected(body, format, session) {
  const store = new SpillStore();
  try {
    return compress(body, { ...OPTIONS, format, session, store });
  } finally {
    store.free();
  }
}

function post(path, body, headers = {}) {
  return mf.dispatchFetch(`http://proxy.test${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${SECRET}`, ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

test('chat completions: the compressed body goes upstream with the headers, SSE comes back unchanged', async () => {
  upstream.received.length = 0;
  const res = await post('/v1/chat/completions?trace=1', chatRequest, { 'x-tracelite-session': 'agent-7', 'x-custom': 'kept' });
  assert.equal(res.status, 200);
  assert.equal(res.headers.get('content-type'), 'text/event-stream');
  assert.equal(res.headers.get('cache-control'), 'no-cache');
  const token = res.headers.get('x-tracelite-session');
  assert.match(token, /^agent-7-[0-9a-f]{32}\.[0-9a-f]{32}\.[A-Za-z0-9_-]{43}$/);
  const session = sessionOf(res);
  assert.equal(await res.text(), SSE.join(''));
  assert.equal(upstream.received.length, 1);
  const got = upstream.received[0];
  assert.equal(got.method, 'POST');
  assert.equal(got.url, '/v1/chat/completions?trace=1');
  assert.equal(got.headers.authorization, `Bearer ${SECRET}`);
  assert.equal(got.headers['x-custom'], 'kept');
  assert.equal(got.headers['x-tracelite-session'], undefined);
  const want = expected(chatRequest, 'openai-chat', session);
  assert.equal(got.body, JSON.stringify(withSpillTools(want.request, 'openai-chat', session)));
  assert.equal(res.headers.get('x-tracelite-tokens'), `${want.report.tokensBefore}->${want.report.tokensAfter}`);
  assert.ok(want.report.tokensBefore > 5000);
  // Everything the core spilled is readable through the proxy from KV.
  assert.equal(want.spills.length, want.report.spills.length);
  for (const spill of want.spills) {
    const lines = spill.text.split('\n');
    const page = await mf.dispatchFetch(`http://proxy.test/spill/${spill.key}?offset=1&limit=3`, { headers: { 'x-tracelite-session': token } });
    assert.equal((await page.json()).text, `${lines.slice(1, 4).join('\n')}\n`);
  }
  // The report was logged, the key never.
  assert.match(logs, new RegExp(`tracelite .*"session":"${session}"`));
  assert.ok(!logs.includes(SECRET));
});

test('without a session header the session is derived from the conversation opening and returned', async () => {
  const a = await post('/v1/chat/completions', chatRequest);
  const turn2 = { ...chatRequest, messages: [...chatRequest.messages, { role: 'user', content: 'and now?' }] };
  const b = await post('/v1/chat/completions', turn2);
  const other = await post('/v1/chat/completions', { ...chatRequest, messages: [{ role: 'user', content: 'other task' }] });
  await Promise.all([a, b, other].map((r) => r.text()));
  assert.match(a.headers.get('x-tracelite-session'), /^conv-[0-9a-f]{32}\.[0-9a-f]{32}\.[A-Za-z0-9_-]{43}$/);
  assert.equal(a.headers.get('x-tracelite-session'), b.headers.get('x-tracelite-session'));
  assert.notEqual(a.headers.get('x-tracelite-session'), other.headers.get('x-tracelite-session'));
});

test('bad JSON → 400, too large → 413, both with a JSON error body and nothing sent upstream', async () => {
  upstream.received.length = 0;
  const bad = await post('/v1/chat/completions', '{"messages": [');
  assert.equal(bad.status, 400);
  assert.equal(bad.headers.get('content-type'), 'application/json; charset=utf-8');
  const badBody = await bad.json();
  assert.equal(badBody.error.code, 'INVALID_JSON');
  assert.equal(badBody.error.type, 'tracelite_error');
  const huge = await post('/v1/chat/completions', { messages: [{ role: 'user', content: 'x'.repeat(1024 * 1024) }] });
  assert.equal(huge.status, 413);
  assert.equal((await huge.json()).error.code, 'LIMIT_EXCEEDED');
  const badSession = await post('/v1/chat/completions', chatRequest, { 'x-tracelite-session': '../etc' });
  assert.equal(badSession.status, 400);
  assert.equal((await badSession.json()).error.code, 'INVALID_SPILL_KEY');
  assert.equal(upstream.received.length, 0);
});

test('SSE is streamed: the first event reaches the client before the upstream sends the second', { timeout: 30000 }, async () => {
  const res = await post('/v1/chat/completions?handshake=1', chatRequest);
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  let seen = '';
  while (!seen.includes('\n\n')) {
    const { value, done } = await reader.read();
    assert.ok(!done, 'the stream ended before the first event');
    seen += decoder.decode(value, { stream: true });
  }
  assert.equal(seen, SSE[0]);
  releaseSecond();
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    seen += decoder.decode(value, { stream: true });
  }
  assert.equal(seen, SSE.join(''));
});

test('upstream errors pass through with status, headers and body', async () => {
  const res = await post('/v1/chat/completions?fail=1', chatRequest);
  assert.equal(res.status, 429);
  assert.equal(res.headers.get('retry-after'), '7');
  assert.deepEqual(await res.json(), { error: { message: 'slow down' } });
});

test('a gzip-encoded upstream response reaches the client intact', async () => {
  const res = await post('/v1/chat/completions?gzip=1', { ...chatRequest, stream: false });
  assert.equal(res.status, 200);
  assert.equal(await res.text(), GZIPPED);
});

test('in Node (undici fetch) too, a gzip response comes back decoded without its encoding headers', async () => {
  const proxy = createProxy({ upstream: upstream.url, options: OPTIONS });
  for (const path of ['/v1/chat/completions?gzip=1', '/v1/chat/completions?gzip=2']) {
    const res = await proxy(new Request(`http://proxy.test${path}`, { method: 'POST', body: JSON.stringify({ ...chatRequest, stream: false }) }));
    assert.equal(res.headers.get('content-encoding'), null);
    assert.equal(res.headers.get('content-length'), null);
    assert.equal(await res.text(), GZIPPED);
  }
  // A GET is forwarded untouched, and relayed the same way.
  const passthrough = await proxy(new Request('http://proxy.test/v1/chat/completions?gzip=3'));
  assert.equal(upstream.received.at(-1).method, 'GET');
  assert.equal(passthrough.headers.get('content-encoding'), null);
  assert.equal(await passthrough.text(), GZIPPED);
});

test('a JSON body the core cannot read is forwarded as it came, marked skipped', async () => {
  upstream.received.length = 0;
  const body = '{"model":"m","prompt":"legacy completions body"}';
  const res = await post('/v1/chat/completions', body);
  await res.text();
  assert.equal(upstream.received[0].body, body);
  assert.equal(res.headers.get('x-tracelite-skipped'), 'INVALID_REQUEST');
  assert.equal(res.headers.get('x-tracelite-redacted'), '0');
});

test('other routes are forwarded untouched', async () => {
  upstream.received.length = 0;
  const res = await mf.dispatchFetch('http://proxy.test/v1/models', { headers: { authorization: `Bearer ${SECRET}` } });
  assert.deepEqual(await res.json(), { data: [] });
  assert.equal(upstream.received[0].url, '/v1/models');
  assert.equal(upstream.received[0].headers.authorization, `Bearer ${SECRET}`);
});

test('GET /spill/<key> pages and /spill/<key>/grep searches the session\'s blobs in KV', async () => {
  const text = Array.from({ length: 500 }, (_, i) => (i === 321 ? 'Traceback: KeyError: price' : `line ${i}`)).join('\n');
  await new KvSpillStore(kv).put('agent-9', 'tool-0123abcd', text);
  // A token signed with the deployment's secret anywhere (here in Node) is valid in the worker.
  const session = { 'x-tracelite-session': await sessionSigner(PROXY_SECRET).token('agent-9') };
  const page = await mf.dispatchFetch('http://proxy.test/spill/tool-0123abcd?offset=319&limit=3', { headers: session });
  assert.equal(page.status, 200);
  assert.deepEqual(await page.json(), {
    pointer: 'spill://agent-9/tool-0123abcd', offset: 319, limit: 3, count: 3, totalLines: 500, totalBytes: Buffer.byteLength(text), nextOffset: 322,
    text: 'line 319\nline 320\nTraceback: KeyError: price\n',
  });
  const grep = await mf.dispatchFetch('http://proxy.test/spill/tool-0123abcd/grep?q=KeyError:%20price&context=1', { headers: session });
  const found = await grep.json();
  assert.deepEqual(found.matches, [{ line: 322, text: 'Traceback: KeyError: price' }]);
  assert.equal(found.text, '321-line 320\n322:Traceback: KeyError: price\n323-line 322');
  // Patterns are literal unless regex=1.
  const literal = await (await mf.dispatchFetch('http://proxy.test/spill/tool-0123abcd/grep?q=line%20.9$', { headers: session })).json();
  assert.equal(literal.matches.length, 0);
  const regex = await (await mf.dispatchFetch('http://proxy.test/spill/tool-0123abcd/grep?q=line%20.9$&regex=1', { headers: session })).json();
  assert.deepEqual(regex.matches.map((m) => m.text), ['line 19', 'line 29', 'line 39', 'line 49', 'line 59', 'line 69', 'line 79', 'line 89', 'line 99']);
  const missing = await mf.dispatchFetch('http://proxy.test/spill/tool-ffff', { headers: session });
  assert.equal(missing.status, 404);
  assert.equal((await missing.json()).error.code, 'SPILL_NOT_FOUND');
  const badKey = await mf.dispatchFetch('http://proxy.test/spill/%E0%A4%A', { headers: session });
  assert.equal(badKey.status, 400);
  assert.equal((await badKey.json()).error.code, 'INVALID_SPILL_KEY');
  const noSession = await mf.dispatchFetch('http://proxy.test/spill/tool-0123abcd');
  assert.equal(noSession.status, 401);
  assert.equal((await noSession.json()).error.code, 'MISSING_SESSION');
  const otherSession = await mf.dispatchFetch('http://proxy.test/spill/tool-0123abcd', { headers: { 'x-tracelite-session': await sessionSigner(PROXY_SECRET).token('agent-10') } });
  assert.equal(otherSession.status, 404);
});

function formatLanded(format, body) {
  try {
    expected(body, format, 'probe');
    return true;
  } catch (err) {
    if (err.code === 'UNKNOWN_FORMAT' || err.code === 'INVALID_OPTION') return false;
    throw err;
  }
}

// The sample's tool output as the last result of an Anthropic and a Responses conversation.
const sampleOutput = sample.steps.map((s) => s.observation ?? '').join('\n');
const anthropicRequest = conversation('anthropic', sampleOutput);
const responsesRequest = conversation('openai-responses', sampleOutput);

for (const [path, format, body] of [
  ['/v1/messages', 'anthropic', anthropicRequest],
  ['/v1/responses', 'openai-responses', responsesRequest],
]) {
  const landed = formatLanded(format, body);
  test(`${path} is compressed as ${format}`, { skip: !landed && `the ${format} format is not in the core yet` }, async () => {
    upstream.received.length = 0;
    const res = await post(path, body, { 'x-tracelite-session': 'agent-8', 'x-api-key': SECRET, 'anthropic-version': '2023-06-01' });
    assert.equal(await res.text(), SSE.join(''));
    const session = sessionOf(res);
    assert.match(session, /^agent-8-[0-9a-f]{32}$/);
    const got = upstream.received[0];
    assert.equal(got.url, path);
    assert.equal(got.headers['x-api-key'], SECRET);
    assert.equal(got.headers['anthropic-version'], '2023-06-01');
    assert.equal(got.body, JSON.stringify(withSpillTools(expected(body, format, session).request, format, session)));
  });
}
