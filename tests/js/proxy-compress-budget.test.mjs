// Issue 39, CPU: a tenant's compress time per minute (`maxCompressMsPerMinute`).
// Once its time is spent the proxy refuses its POSTs with 429
// `COMPRESS_BUDGET_SPENT` before reading their body, so a client sending
// maximal bodies (tiny tool calls filling `maxBodyBytes`) cannot hold the
// event loop. Measured concurrently in Node: the proxy behind a node:http
// server on 127.0.0.1, a normal client and a maximal-body attacker sending at
// the same time (bounded loops); the normal client's p95 stays within 3x of
// its p95 alone. (The grep attacker, concurrent in Node and workerd, is
// tests/js/proxy-grep-attacker.test.mjs.)
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { TraceLiteError } from '../../pkg/entries/node.js';
import { DEFAULT_COMPRESS_MS_PER_MINUTE, createProxy } from '../../pkg/adapters/proxy/index.js';
import { serveOnLoopback } from './support/hosts.mjs';
import { manySpills } from './support/requests.mjs';
import { normalClient, p95, startAttacker } from './support/body-attacker.mjs';

const SECRET = 'compress-budget-test-secret-5b2e8c1d9f4a7063';
const OPTIONS = { budget: 8000, provider: 'openai' };
const BODY_BYTES = 256 << 10;
/** The attacker's budget in this test: 2 s a minute (3% of a core). */
const ATTACKER_BUDGET_MS = 2_000;
const MAX_ATTACKS = 400;
const upstreamFetch = async () => new Response('{"ok":true}', { headers: { 'content-type': 'application/json' } });

function post(url, authorization, body) {
  return new Request(url, { method: 'POST', headers: { 'content-type': 'application/json', authorization, 'x-tracelite-session': 'budget' }, body });
}

test('a tenant over maxCompressMsPerMinute gets 429 COMPRESS_BUDGET_SPENT before its body is read; others go on', async () => {
  let upstreamCalls = 0;
  const proxy = createProxy({
    upstream: 'http://upstream.test', options: OPTIONS, secret: SECRET, maxCompressMsPerMinute: 1,
    fetch: async () => { upstreamCalls++; return upstreamFetch(); },
  });
  const body = JSON.stringify(manySpills(4, 6_000));
  const first = await proxy(post('http://proxy.test/v1/chat/completions', 'Bearer sk-heavy-000000000000000', body));
  assert.equal(first.status, 200);
  await first.text();
  // A body whose reading would be seen: refused without a read.
  let pulled = 0;
  const stream = new ReadableStream({ pull(c) { pulled++; c.enqueue(new TextEncoder().encode(body)); c.close(); } }, { highWaterMark: 0 });
  const refused = await proxy(new Request('http://proxy.test/v1/chat/completions', {
    method: 'POST', headers: { 'content-type': 'application/json', authorization: 'Bearer sk-heavy-000000000000000' }, body: stream, duplex: 'half',
  }));
  assert.equal(refused.status, 429);
  assert.equal(pulled, 0, 'the body was not read');
  const retry = Number(refused.headers.get('retry-after'));
  assert.ok(retry >= 1 && retry <= 60, `retry-after ${retry}`);
  const { error } = await refused.json();
  assert.equal(error.code, 'COMPRESS_BUDGET_SPENT');
  assert.equal(error.type, 'tracelite_error');
  assert.equal(upstreamCalls, 1, 'the refused request never went upstream');
  // Another tenant (other credentials) has its own budget.
  const other = await proxy(post('http://proxy.test/v1/chat/completions', 'Bearer sk-light-111111111111111', body));
  assert.equal(other.status, 200);
  await other.text();
});

test('maxCompressMsPerMinute: a positive integer, default 30 s a minute', () => {
  assert.equal(DEFAULT_COMPRESS_MS_PER_MINUTE, 30_000);
  for (const bad of [0, -1, 1.5, '10', Infinity]) {
    assert.throws(() => createProxy({ upstream: 'http://upstream.test', maxCompressMsPerMinute: bad }),
      (e) => e instanceof TraceLiteError && e.code === 'INVALID_OPTION' && e.path === 'maxCompressMsPerMinute', String(bad));
  }
});

let served;

before(async () => {
  served = await serveOnLoopback(createProxy({
    upstream: 'http://upstream.test', options: OPTIONS, secret: SECRET, fetch: upstreamFetch,
    maxBodyBytes: BODY_BYTES, maxCompressMsPerMinute: ATTACKER_BUDGET_MS,
  }));
});

after(() => served?.close());

test('Node, concurrently: a normal client\'s p95 beside a maximal-body attacker stays within 3x of its p95 alone', { timeout: 240_000 }, async () => {
  await normalClient(served.url); // warm-up
  const before = p95(await normalClient(served.url));
  const statuses = {};
  let spent;
  const budgetSpent = new Promise((resolve) => { spent = resolve; });
  const attack = startAttacker({ url: served.url, bytes: BODY_BYTES - 1024, max: MAX_ATTACKS, onStatus: (status) => {
    statuses[status] = (statuses[status] ?? 0) + 1;
    if (status === '429' || status === 'reset') spent();
  } });
  // The attacker runs its minute's budget down first (its compresses hold the
  // loop, about 60-110 ms each); then both send at once while it is refused.
  await Promise.race([budgetSpent, attack.done]);
  const beside = p95(await normalClient(served.url).finally(attack.stop));
  await attack.done;
  const alone = Math.max(before, p95(await normalClient(served.url)));
  console.log(`node: p95 alone ${alone.toFixed(1)} ms, beside the maximal-body attacker ${beside.toFixed(1)} ms; attacker statuses ${JSON.stringify(statuses)}`);
  assert.ok(statuses[200] > 0 && (statuses[429] ?? 0) + (statuses.reset ?? 0) > 10, JSON.stringify(statuses));
  assert.ok(beside <= 3 * alone, `p95 ${beside.toFixed(1)} ms beside the attacker, ${alone.toFixed(1)} ms alone`);
});
