// Issue 49 on the proxy: every route against every body shape (compressed and
// redacted, or refused: never forwarded as it came), a tenant's search work
// per minute shared by all its sessions, a victim's request compressed while
// an attacker fills the FileStore, and one quota across createThreadedProxy's
// threads.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_MAX_SEARCH_COST, createProxy } from '../../pkg/adapters/proxy/index.js';
import { createThreadedProxy } from '../../pkg/adapters/proxy/threads.js';
import { FileStore } from '../../pkg/adapters/file-store/index.js';
import { bigOutput, conversation } from './support/proxy-tools.mjs';
import { startUpstream } from './support/hosts.mjs';

const AWS_KEY = 'AKIAIOSFODNN7EXAMPLE';
const SECRET = 'proxy-tenants-test-secret-5b1d8e0c9a7f4362';
const OPTIONS = { budget: 16000, provider: 'openai' };

/** A proxy in front of a stub provider, recording what reached it. */
function setup(extra = {}) {
  const received = [];
  const fetch = async (request) => {
    received.push({ path: new URL(request.url).pathname, body: request.method === 'POST' ? await request.text() : '' });
    return new Response('{"id":"ok"}', { headers: { 'content-type': 'application/json' } });
  };
  return { proxy: createProxy({ upstream: 'http://upstream.test', fetch, options: OPTIONS, ...extra }), received };
}

function post(proxy, path, body, headers = {}) {
  return proxy(new Request(`http://proxy.test${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer sk-client-000000000000000000000', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  }));
}

/** A tool output with a secret near its top (the excerpt shows it) and enough lines to spill. */
const OUTPUT = (() => {
  const lines = bigOutput('plain').split('\n');
  lines.splice(2, 0, `AWS_ACCESS_KEY_ID=${AWS_KEY}`);
  return lines.join('\n');
})();

const SHAPES = {
  chat: conversation('openai-chat', OUTPUT),
  responses: conversation('openai-responses', OUTPUT),
  anthropic: conversation('anthropic', OUTPUT),
  gemini: {
    contents: [
      { role: 'user', parts: [{ text: 'Why does the build fail?' }] },
      { role: 'model', parts: [{ functionCall: { name: 'bash', args: { command: 'make' } } }] },
      { role: 'user', parts: [{ functionResponse: { name: 'bash', response: { output: OUTPUT } } }] },
    ],
  },
  'chat+responses': { ...conversation('openai-chat', OUTPUT), input: `again: ${AWS_KEY}` },
  'responses+system': { ...conversation('openai-responses', OUTPUT), system: `key ${AWS_KEY}` },
  'gemini snake_case': { ...conversation('openai-chat', 'ok'), system_instruction: { parts: [{ text: `key ${AWS_KEY}` }] } },
  'legacy prompt': { model: 'gpt-test', prompt: `complete: ${AWS_KEY}` },
  'responses+stored prompt': { ...conversation('openai-responses', OUTPUT), prompt: { id: 'pmpt_1', variables: { key: `deploy ${AWS_KEY}` } } },
};

const ROUTES = [
  '/v1/chat/completions',
  '/v1/responses',
  '/v1/responses/input_tokens',
  '/v1/messages',
  '/v1/messages/count_tokens',
  '/v1beta/models/gemini-2.5-pro:generateContent',
  '/v1beta/models/gemini-2.5-pro:countTokens',
];

test('every route × every body shape: compressed and redacted, or refused, never forwarded as it came', async () => {
  const outcomes = [];
  for (const route of ROUTES) {
    for (const [shape, body] of Object.entries(SHAPES)) {
      const { proxy, received } = setup();
      const text = JSON.stringify(body);
      const res = await post(proxy, route, text);
      const answer = await res.text();
      const where = `${shape} on ${route}`;
      if (res.status >= 400) {
        assert.equal(received.length, 0, `${where}: refused, and nothing went upstream`);
        assert.ok(res.status < 500, `${where}: ${res.status} ${answer}`);
        outcomes.push(`${where}: ${res.status} ${JSON.parse(answer).error.code}`);
        continue;
      }
      assert.equal(received.length, 1, where);
      const sent = received[0].body;
      assert.notEqual(sent, text, `${where}: forwarded byte for byte`);
      assert.ok(!sent.includes(AWS_KEY), `${where}: the secret went upstream`);
      outcomes.push(`${where}: forwarded${res.headers.get('x-tracelite-skipped') ? ` (skipped ${res.headers.get('x-tracelite-skipped')})` : ''}`);
    }
  }
  // The shapes of their own routes are compressed, not merely masked.
  for (const [route, shape] of [['/v1/chat/completions', 'chat'], ['/v1/responses', 'responses'], ['/v1/messages', 'anthropic']]) {
    assert.ok(outcomes.includes(`${shape} on ${route}: forwarded`), outcomes.join('\n'));
  }
  assert.ok(outcomes.includes('chat on /v1/responses: forwarded (skipped INVALID_REQUEST)'), outcomes.join('\n'));
  assert.ok(outcomes.includes('responses+stored prompt on /v1/responses: forwarded'), outcomes.join('\n'));
  assert.ok(outcomes.includes('chat on /v1/responses/input_tokens: forwarded (skipped INVALID_REQUEST)'), outcomes.join('\n'));
});

test("with onError: 'reject' a body of another format is refused, naming the member that does not belong", async () => {
  const { proxy, received } = setup({ onError: 'reject' });
  for (const route of ['/v1/responses', '/v1/responses/input_tokens']) {
    const res = await post(proxy, route, SHAPES.chat);
    const { error } = await res.json();
    assert.equal(res.status, 400);
    assert.equal(error.code, 'INVALID_REQUEST');
    assert.equal(error.path, 'body.messages');
    assert.match(error.message, /^body\.messages: a openai-responses request has no "messages"/);
  }
  assert.equal(received.length, 0);
});

test("maxSearchWorkPerMinute is the tenant's: opening more sessions does not buy more search work", async () => {
  const { proxy, received } = setup({ maxSearchWorkPerMinute: 2 * DEFAULT_MAX_SEARCH_COST });
  const costly = encodeURIComponent('a.*b.*c');
  const open = async (name, authorization) => {
    const res = await post(proxy, '/v1/chat/completions', conversation('openai-chat', bigOutput('plain', 1500)), { 'x-tracelite-session': name, authorization });
    await res.text();
    const key = /spill:\/\/[^/]+\/([^\s"\\)\]]+)/.exec(received.at(-1).body)[1];
    return { token: res.headers.get('x-tracelite-session'), key };
  };
  const grep = ({ token, key }) => proxy(new Request(`http://proxy.test/spill/${key}/grep?regex=1&q=${costly}`, { headers: { 'x-tracelite-session': token } }));
  const attacker = 'Bearer sk-attacker-00000000000000000000';
  const sessions = [];
  for (let i = 0; i < 4; i++) sessions.push(await open(`attack-${i}`, attacker));
  const statuses = [];
  for (const s of sessions) {
    for (let i = 0; i < 2; i++) {
      const r = await grep(s);
      statuses.push(r.status);
      await r.text();
    }
  }
  assert.equal(statuses[0], 200, 'a search within the budget is answered');
  assert.ok(statuses.filter((s) => s === 200).length <= 2, `four sessions of one tenant share one budget: ${statuses}`);
  assert.deepEqual(statuses.slice(-4), [429, 429, 429, 429], statuses.join());
  // Another tenant's budget is its own.
  const victim = await open('victim', 'Bearer sk-victim-000000000000000000000');
  const r = await grep(victim);
  assert.equal(r.status, 200, await r.text());
});

/** Bytes of the blob files under `root`. */
function diskBytes(root) {
  let total = 0;
  for (const session of readdirSync(root)) {
    if (session.startsWith('~')) continue;
    for (const name of readdirSync(join(root, session))) if (!name.startsWith('~')) total += statSync(join(root, session, name)).size;
  }
  return total;
}

test("a victim tenant's request is compressed while an attacker fills the FileStore", async () => {
  const root = mkdtempSync(join(tmpdir(), 'tracelite-tenants-'));
  const store = new FileStore({ root, maxBytes: 600_000, maxTenantBytes: 400_000, maxTenantSessions: 20 });
  const { proxy } = setup({ store, secret: SECRET });
  const attacker = 'Bearer sk-attacker-00000000000000000000';
  const victim = 'Bearer sk-victim-000000000000000000000';
  const big = (seed) => conversation('openai-chat', bigOutput(`seed ${seed}`, 4000));
  for (let i = 0; i < 12; i++) {
    const res = await post(proxy, '/v1/chat/completions', big(i), { authorization: attacker, 'x-tracelite-session': `attack-${i}` });
    await res.text();
    assert.equal(res.headers.get('x-tracelite-skipped'), null, `attacker ${i}: its own quota makes room by its oldest sessions`);
  }
  // The victim, beside an attacker holding all it may: its requests are compressed.
  for (let i = 0; i < 3; i++) {
    const res = await post(proxy, '/v1/chat/completions', big(`v${i}`), { authorization: victim, 'x-tracelite-session': `victim-${i}` });
    await res.text();
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('x-tracelite-skipped'), null, `victim ${i}`);
    const [before, after] = res.headers.get('x-tracelite-tokens').split('->').map(Number);
    assert.ok(after < before / 2, `victim ${i}: ${before} -> ${after}`);
  }
  const usage = await store.usage();
  assert.equal(usage.tenants.length, 2, 'one tenant per client');
  assert.ok(usage.tenants.every((t) => t.bytes <= 400_000), JSON.stringify(usage.tenants));
  assert.ok(usage.totalBytes <= 600_000 && usage.totalBytes === diskBytes(root), `${usage.totalBytes} ${diskBytes(root)}`);
});

test("createThreadedProxy's threads share one FileStore count: the total stays within maxBytes", async () => {
  const upstream = await startUpstream(() => ({ headers: { 'content-type': 'application/json' }, chunks: ['{"ok":true}'] }));
  const root = mkdtempSync(join(tmpdir(), 'tracelite-threads-store-'));
  const maxBytes = 300_000;
  const threaded = await createThreadedProxy(new URL('./support/threaded-settings.mjs', import.meta.url), {
    threads: 2,
    data: { upstream: upstream.url, options: { budget: 2000, provider: 'openai' }, secret: SECRET, fileStore: { root, maxBytes, maxTenantBytes: maxBytes } },
  });
  try {
    // Tenants spread over both threads, all writing at once.
    const requests = [];
    for (let t = 0; t < 6; t++) {
      for (let i = 0; i < 4; i++) {
        requests.push(threaded(new Request('http://proxy.test/v1/chat/completions', {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer sk-tenant-${t}-0000000000000000`, 'x-tracelite-session': `s${i}` },
          body: JSON.stringify(conversation('openai-chat', bigOutput(`tenant ${t} request ${i}`, 2500))),
        })).then((r) => r.text()));
      }
    }
    await Promise.all(requests);
    const threadsUsed = (await threaded.stats()).filter((s) => s.running).length;
    assert.equal(threadsUsed, 2);
    assert.ok(diskBytes(root) <= maxBytes, `${diskBytes(root)} bytes on disk > maxBytes ${maxBytes}`);
    assert.ok(diskBytes(root) > maxBytes / 2, `the store was filled: ${diskBytes(root)}`);
  } finally {
    await threaded.close();
    await upstream.close();
  }
});
