// The attacks of issue 16 on the edge proxy, replayed against the Cloudflare
// Worker example in real workerd (Miniflare 4): shared default sessions (item
// 4), fail-open forwarding of secrets (5), raw text on the spill routes under
// `redact.store` (6) and the many-message request that ended in a 500 (2).
// Two workers: the example as documented (onError forward, default limits) and
// the same file configured to reject, with `redact.store` and a low write limit.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { SpillStore, compress, trajectoryToRequest } from '../../pkg/entries/node.js';
import { KvSpillStore } from '../../pkg/adapters/kv-store/index.js';
import { createProxy, sessionSigner } from '../../pkg/adapters/proxy/index.js';
import { bundleWorker, projectWithPkg, root, startUpstream, startWorker } from './support/hosts.mjs';
import { manyMessages, manySpills } from './support/requests.mjs';

const OPTIONS = { budget: 16000, provider: 'openai' };
const PROXY_SECRET = 'security-test-secret-4c1f7a9e2b6d8035';
const KEY_A = 'Bearer sk-tenant-a-0000000000000000000000';
const KEY_B = 'Bearer sk-tenant-b-1111111111111111111111';
const AWS_KEY = 'AKIAIOSFODNN7EXAMPLE';
const OPENAI_KEY = 'sk-proj-Zx9Qw8Er7Ty6Ui5Op4As3Df2Gh1Jk0Lz';
const WORKER = readFileSync(join(root, 'pkg-config/examples/cloudflare-worker/worker.js'), 'utf8');
const sample = JSON.parse(readFileSync(join(root, 'tests/fixtures/sample-trajectory.json'), 'utf8'));

let upstream;
let forwardMf;
let rejectMf;
let forwardKv;
let rejectKv;
const REJECT_WRITES = 50;

before(async () => {
  upstream = await startUpstream(() => ({ headers: { 'content-type': 'application/json' }, chunks: ['{"id":"ok"}'] }));
  const script = await bundleWorker(projectWithPkg('tracelite-security-'), WORKER);
  const bindings = { UPSTREAM: upstream.url, TRACELITE_SECRET: PROXY_SECRET, MAX_BODY_BYTES: String(4 * 1024 * 1024) };
  forwardMf = await startWorker(script, { kvNamespaces: ['SPILLS'], bindings: { ...bindings, TRACELITE_OPTIONS: JSON.stringify(OPTIONS) } });
  rejectMf = await startWorker(script, {
    kvNamespaces: ['SPILLS'],
    bindings: {
      ...bindings,
      TRACELITE_OPTIONS: JSON.stringify({ ...OPTIONS, redact: { store: true } }),
      TRACELITE_ON_ERROR: 'reject',
      MAX_STORE_WRITES: String(REJECT_WRITES),
    },
  });
  forwardKv = await forwardMf.getKVNamespace('SPILLS');
  rejectKv = await rejectMf.getKVNamespace('SPILLS');
});

after(async () => {
  await forwardMf?.dispose();
  await rejectMf?.dispose();
  await upstream?.close();
});

function post(mf, body, headers = {}) {
  return mf.dispatchFetch('http://proxy.test/v1/chat/completions', {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

function spillGet(mf, key, token, suffix = '') {
  return mf.dispatchFetch(`http://proxy.test/spill/${key}${suffix}`, token === undefined ? {} : { headers: { 'x-tracelite-session': token } });
}

const sessionOf = (token) => token.replace(/(\.[0-9a-f]{32})?\.[^.]*$/, '');

function spillsOf(body, session) {
  const store = new SpillStore();
  try {
    return compress(body, { ...OPTIONS, format: 'openai-chat', session, store }).spills;
  } finally {
    store.free();
  }
}

// Tenant A's conversation: the opening every tenant of the product shares, then A's own tool output.
const full = { model: 'gpt-4o', ...trajectoryToRequest(sample, sample.steps.length, 'openai-chat') };
const opening = { ...full, messages: full.messages.slice(0, 2) };

test('item 4: two tenants with the same opening get different sessions, and one cannot read the other\'s spills', async () => {
  const a = await post(forwardMf, full, { authorization: KEY_A });
  const b = await post(forwardMf, opening, { authorization: KEY_B });
  await Promise.all([a.text(), b.text()]);
  const tokenA = a.headers.get('x-tracelite-session');
  const tokenB = b.headers.get('x-tracelite-session');
  assert.match(tokenA, /^conv-[0-9a-f]{32}\.[0-9a-f]{32}\.[A-Za-z0-9_-]{43}$/);
  assert.notEqual(sessionOf(tokenA), sessionOf(tokenB), 'the same opening with another key is another session');
  // A's own spills are readable with A's token.
  const keys = spillsOf(full, sessionOf(tokenA)).map((s) => s.key);
  assert.ok(keys.length > 0);
  const own = await spillGet(forwardMf, keys[0], tokenA);
  assert.equal(own.status, 200);
  // B, with everything B can get: its own token reads nothing of A's …
  for (const key of keys) assert.equal((await spillGet(forwardMf, key, tokenB)).status, 404);
  // … A's session name is not a token (403), nor is it with B's signature or a made-up one …
  const attempts = [
    sessionOf(tokenA),
    `${sessionOf(tokenA)}.${tokenB.split('.').at(-1)}`,
    `${sessionOf(tokenA)}.${'A'.repeat(43)}`,
    await sessionSigner('another-deployment-secret-0123456789ab').token(sessionOf(tokenA)),
  ];
  for (const forged of attempts) {
    const res = await spillGet(forwardMf, keys[0], forged);
    assert.equal(res.status, 403, forged);
    assert.deepEqual((await res.json()).error.code, 'INVALID_SESSION_TOKEN');
    const grep = await spillGet(forwardMf, keys[0], forged, '/grep?q=a');
    assert.equal(grep.status, 403);
    const query = await forwardMf.dispatchFetch(`http://proxy.test/spill/${keys[0]}?session=${encodeURIComponent(forged)}`);
    assert.equal(query.status, 403);
  }
  // … and without a token the route answers 401.
  const none = await spillGet(forwardMf, keys[0]);
  assert.equal(none.status, 401);
  assert.deepEqual(await none.json(), {
    error: { type: 'tracelite_error', code: 'MISSING_SESSION', message: 'x-tracelite-session: send the session token a POST returned in the x-tracelite-session header', path: 'x-tracelite-session' },
  });
  // The same tenant on its next turn stays in its session (caches, pointers).
  const again = await post(forwardMf, full, { authorization: KEY_A });
  await again.text();
  assert.equal(again.headers.get('x-tracelite-session'), tokenA);
});

test('item 4: a session name the client chose is scoped to the client; a token sent back keeps its session', async () => {
  const a = await post(forwardMf, full, { authorization: KEY_A, 'x-tracelite-session': 'agent-1' });
  // B and an anonymous caller name the same session and send the shared opening only.
  const b = await post(forwardMf, opening, { 'x-api-key': 'sk-ant-tenant-b-222222222222222222', 'x-tracelite-session': 'agent-1' });
  const anonymous = await post(forwardMf, opening, { 'x-tracelite-session': 'agent-1' });
  await Promise.all([a.text(), b.text(), anonymous.text()]);
  const sessions = [a, b, anonymous].map((r) => sessionOf(r.headers.get('x-tracelite-session')));
  for (const s of sessions) assert.match(s, /^agent-1-[0-9a-f]{32}$/);
  assert.equal(new Set(sessions).size, 3, 'one name, three callers, three sessions');
  const key = spillsOf(full, sessions[0])[0].key;
  for (const other of [b, anonymous]) assert.equal((await spillGet(forwardMf, key, other.headers.get('x-tracelite-session'))).status, 404);
  assert.equal((await spillGet(forwardMf, key, a.headers.get('x-tracelite-session'))).status, 200);
  // A client may send the token back instead of its name: same session, whoever sends it.
  const back = await post(forwardMf, full, { 'x-tracelite-session': a.headers.get('x-tracelite-session') });
  await back.text();
  assert.equal(back.headers.get('x-tracelite-session'), a.headers.get('x-tracelite-session'));
  // A forged token on a POST is refused before anything reaches the provider.
  upstream.received.length = 0;
  const forged = await post(forwardMf, full, { 'x-tracelite-session': `${sessions[0]}.${'B'.repeat(43)}` });
  assert.equal(forged.status, 403);
  assert.equal((await forged.json()).error.code, 'INVALID_SESSION_TOKEN');
  assert.equal(upstream.received.length, 0);
});

test('item 4: without a secret a proxy with an outside store does not start (fail closed)', () => {
  const store = new KvSpillStore({ get() {}, put() {} });
  assert.throws(() => createProxy({ upstream: 'http://u.test', store }), (err) => err.code === 'INVALID_OPTION' && err.path === 'secret');
  assert.throws(() => createProxy({ upstream: 'http://u.test', store, secret: 'short' }), (err) => err.code === 'INVALID_OPTION' && err.path === 'secret');
  // The in-memory store gets a random key per instance: another instance's tokens do not verify.
  assert.equal(typeof createProxy({ upstream: 'http://u.test' }), 'function');
});

// A legacy completions body the core cannot read, with two secrets in it.
const legacy = { model: 'gpt-4o', prompt: `deploy with AWS_ACCESS_KEY_ID=${AWS_KEY} and OPENAI_API_KEY ${OPENAI_KEY}`, suffix: 'plain' };

test('item 5: onError forward (default) still masks the secrets of a body it cannot compress, and says so', async () => {
  upstream.received.length = 0;
  const res = await post(forwardMf, legacy, { authorization: KEY_A });
  assert.equal(res.status, 200);
  await res.text();
  assert.equal(res.headers.get('x-tracelite-skipped'), 'INVALID_REQUEST');
  assert.equal(res.headers.get('x-tracelite-redacted'), '2');
  const got = upstream.received[0].body;
  assert.ok(!got.includes(AWS_KEY) && !got.includes(OPENAI_KEY), got);
  const sent = JSON.parse(got);
  assert.equal(sent.prompt, 'deploy with AWS_ACCESS_KEY_ID=[REDACTED:aws-access-key-id] and OPENAI_API_KEY [REDACTED:openai-key]');
  assert.equal(sent.suffix, 'plain');
  assert.equal(sent.model, 'gpt-4o');
});

test('item 5: onError reject answers a body it cannot compress with the typed error and sends nothing', async () => {
  upstream.received.length = 0;
  const res = await post(rejectMf, legacy, { authorization: KEY_A });
  assert.equal(res.status, 400);
  const body = await res.json();
  assert.equal(body.error.type, 'tracelite_error');
  assert.equal(body.error.code, 'INVALID_REQUEST');
  assert.ok(!JSON.stringify(body).includes(AWS_KEY));
  assert.equal(upstream.received.length, 0);
});

test('item 6 (issue 39 item 5): GET /spill serves and searches the masked text whenever redaction is on: no oracle for a secret', async () => {
  const text = `export AWS_ACCESS_KEY_ID=${AWS_KEY}\nline two\nkey ${OPENAI_KEY}\n`;
  // A blob stored raw (before the setting, or by another writer).
  for (const kv of [forwardKv, rejectKv]) await new KvSpillStore(kv).put('legacy-session', 'tool-0a1b2c3d', text);
  const token = await sessionSigner(PROXY_SECRET).token('legacy-session');
  for (const mf of [forwardMf, rejectMf]) {
    const masked = await spillGet(mf, 'tool-0a1b2c3d', token);
    assert.equal(masked.status, 200);
    const page = await masked.json();
    assert.equal(page.text, 'export AWS_ACCESS_KEY_ID=[REDACTED:aws-access-key-id]\nline two\nkey [REDACTED:openai-key]\n');
    // grep sees the masked text too: a pattern of the secret's characters finds nothing.
    const grep = await (await spillGet(mf, 'tool-0a1b2c3d', token, '/grep?q=AKIA')).json();
    assert.equal(grep.totalMatches, 0);
  }
});

async function keysOf(kv, session) {
  let n = 0;
  let cursor;
  do {
    const page = await kv.list({ prefix: `tracelite/${session}/`, cursor });
    n += page.keys.length;
    cursor = page.list_complete ? undefined : page.cursor;
  } while (cursor);
  return n;
}

test('item 2: two 6,000-message requests at once: each compacted with one KV write (before: ~6,000 each, a 500), no 500', { timeout: 120000 }, async () => {
  const body = JSON.stringify(manyMessages(6000));
  const probe = spillsOf(body, 'probe');
  assert.equal(probe.length, 1, 'one blob for the whole compaction');
  assert.match(probe[0].text, /^--- message 5993 \(assistant\) ---\n\[assistant\]\nword5993$/m);
  upstream.received.length = 0;
  const [r1, r2] = await Promise.all([
    post(forwardMf, body, { authorization: KEY_A, 'x-tracelite-session': 'flood-1' }),
    post(forwardMf, body, { authorization: KEY_A, 'x-tracelite-session': 'flood-2' }),
  ]);
  for (const res of [r1, r2]) {
    assert.equal(res.status, 200);
    assert.equal(await res.text(), '{"id":"ok"}');
    assert.equal(res.headers.get('x-tracelite-skipped'), null);
    assert.equal(await keysOf(forwardKv, sessionOf(res.headers.get('x-tracelite-session'))), 1);
  }
  // The provider got the compacted request: smaller, with the summary and its pointer.
  assert.equal(upstream.received.length, 2);
  for (const { body: sent } of upstream.received) {
    assert.ok(sent.length < body.length / 2, `${sent.length} bytes sent of ${body.length}`);
    assert.match(sent, /TraceLite summary of earlier turns; originals: spill:\/\//);
  }
});

test('item 2: with onError reject a request of more spills than maxStoreWrites is a 413 STORE_WRITE_LIMIT, at most maxStoreWrites written', { timeout: 120000 }, async () => {
  upstream.received.length = 0;
  // More tool outputs over the spill cap than maxStoreWrites: one blob each.
  const res = await post(rejectMf, manySpills(REJECT_WRITES + 10, 20000), { authorization: KEY_A, 'x-tracelite-session': 'flood-3' });
  assert.equal(res.status, 413);
  const err = (await res.json()).error;
  assert.equal(err.code, 'STORE_WRITE_LIMIT');
  assert.equal(err.path, 'maxStoreWrites');
  assert.equal(upstream.received.length, 0);
  const token = res.headers.get('x-tracelite-session');
  assert.equal(token, null, 'an error response names no session');
  let written = 0;
  for (const { name } of (await rejectKv.list({ prefix: 'tracelite/flood-3-' })).keys) written += name ? 1 : 0;
  assert.equal(written, REJECT_WRITES);
});

test('item 1: a catastrophic regex on the grep route is a 422 GREP_TOO_COSTLY, answered fast', async () => {
  const a = await post(forwardMf, full, { authorization: KEY_A });
  await a.text();
  const token = a.headers.get('x-tracelite-session');
  const [key] = spillsOf(full, sessionOf(token)).map((s) => s.key);
  const started = Date.now();
  const r = await spillGet(forwardMf, key, token, `/grep?regex=1&q=${encodeURIComponent('(.*){99}x')}`);
  const body = await r.json();
  assert.equal(r.status, 422);
  assert.equal(body.error.code, 'GREP_TOO_COSTLY');
  assert.ok(Date.now() - started < 5000, `took ${Date.now() - started} ms`);
  // An ordinary search of the same blob still answers.
  const ok = await spillGet(forwardMf, key, token, '/grep?q=def');
  assert.equal(ok.status, 200);
});

test('issue 39 items 3 and 4 in workerd: duplicate keys are refused, count_tokens and a trailing slash are compressed, a conversation elsewhere is refused', async () => {
  upstream.received.length = 0;
  const dup = `{"model":"gpt-4o","messages":${JSON.stringify(full.messages)},"messages":5}`;
  const refused = await forwardMf.dispatchFetch('http://proxy.test/v1/chat/completions', { method: 'POST', headers: { 'content-type': 'application/json', authorization: KEY_A }, body: dup });
  assert.equal(refused.status, 400);
  assert.equal((await refused.json()).error.code, 'INVALID_REQUEST');
  assert.equal(upstream.received.length, 0, 'nothing forwarded');
  const anthropic = { model: 'claude-test', max_tokens: 10, ...trajectoryToRequest(sample, sample.steps.length, 'anthropic') };
  for (const [path, body] of [['/v1/messages/count_tokens', anthropic], ['/v1/chat/completions/', full]]) {
    const res = await forwardMf.dispatchFetch(`http://proxy.test${path}`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: KEY_A }, body: JSON.stringify(body) });
    assert.equal(res.status, 200, path);
    await res.text();
    const [before, after] = res.headers.get('x-tracelite-tokens').split('->').map(Number);
    assert.ok(after < before, `${path}: ${before} -> ${after}`);
  }
  assert.deepEqual(upstream.received.map((r) => new URL(r.url, 'http://u').pathname), ['/v1/messages/count_tokens', '/v1/chat/completions']);
  const elsewhere = await forwardMf.dispatchFetch('http://proxy.test/v1/other', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(full) });
  assert.equal(elsewhere.status, 400);
  assert.equal((await elsewhere.json()).error.code, 'UNSUPPORTED_ROUTE');
  assert.equal(upstream.received.length, 2);
});
