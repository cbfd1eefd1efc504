// Issue 39 on the proxy (Node, in process, a stub provider): fail closed
// (item 3: duplicate keys), the route allowlist (item 4: count_tokens,
// Gemini, trailing slashes, dot segments), no grep oracle (item 5), the
// search budget per request and per session (item 1) and a body too deep to
// serialize (item 8).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DEFAULT_MAX_SEARCH_COST, createProxy, normalizePath } from '../../pkg/adapters/proxy/index.js';
import { bigOutput, conversation } from './support/proxy-tools.mjs';

const AWS_KEY = 'AKIAIOSFODNN7EXAMPLE';
const OPENAI_KEY = 'sk-proj-Zx9Qw8Er7Ty6Ui5Op4As3Df2Gh1Jk0Lz';
const OPTIONS = { budget: 16000, provider: 'openai' };

/** A proxy in front of `answer(request, body)` (default `{"id":"ok"}`), recording what reached it. */
function setup(answer, extra = {}) {
  const received = [];
  const fetch = async (request) => {
    const body = request.method === 'GET' || request.method === 'HEAD' ? '' : await request.text();
    received.push({ method: request.method, path: new URL(request.url).pathname, body });
    const out = answer?.(received.at(-1));
    return out ?? new Response('{"id":"ok"}', { headers: { 'content-type': 'application/json' } });
  };
  const proxy = createProxy({ upstream: 'http://upstream.test', fetch, options: OPTIONS, ...extra });
  return { proxy, received };
}

function post(proxy, path, body, headers = {}) {
  return proxy(new Request(`http://proxy.test${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer sk-client-000000000000000000000', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  }));
}

const secretChat = {
  model: 'gpt-4o',
  messages: [{ role: 'user', content: `deploy with AWS_ACCESS_KEY_ID=${AWS_KEY} and OPENAI_API_KEY ${OPENAI_KEY}` }],
};

test('item 3: a body with duplicate keys is refused by the strict parser and never forwarded', async () => {
  const { proxy, received } = setup();
  const text = `{"model":"gpt-4o","messages":${JSON.stringify(secretChat.messages)},"messages":5}`;
  const res = await post(proxy, '/v1/chat/completions', text);
  assert.equal(res.status, 400);
  const body = await res.json();
  assert.equal(body.error.code, 'INVALID_REQUEST');
  assert.equal(body.error.path, 'request');
  assert.match(body.error.message, /duplicate key "messages"/);
  assert.equal(received.length, 0);
});

test('item 3: a body the core cannot read goes on re-serialized with its secrets masked, never as the bytes received', async () => {
  const { proxy, received } = setup();
  const text = `{ "model" : "gpt-4o", "prompt": "key ${AWS_KEY}", "suffix": "x" }`;
  const res = await post(proxy, '/v1/chat/completions', text);
  assert.equal(res.status, 200);
  assert.equal(res.headers.get('x-tracelite-skipped'), 'INVALID_REQUEST');
  assert.equal(received.length, 1);
  assert.equal(received[0].body, '{"model":"gpt-4o","prompt":"key [REDACTED:aws-access-key-id]","suffix":"x"}');
});

test('item 4: count_tokens, Gemini, escapes and trailing or doubled slashes are compressed and redacted, on the normalized path', async () => {
  const { proxy, received } = setup();
  // Secrets near the top of a long tool output: the excerpt the core writes shows them masked.
  const lines = bigOutput('plain').split('\n');
  lines.splice(3, 0, `AWS_ACCESS_KEY_ID=${AWS_KEY}`, `OPENAI_API_KEY=${OPENAI_KEY}`);
  const output = lines.join('\n');
  const chat = conversation('openai-chat', output);
  const gemini = {
    contents: [
      { role: 'user', parts: [{ text: 'Why does the build fail?' }] },
      { role: 'model', parts: [{ functionCall: { name: 'bash', args: { command: 'make' } } }] },
      { role: 'user', parts: [{ functionResponse: { name: 'bash', response: { output } } }] },
    ],
  };
  const cases = [
    ['/v1/messages/count_tokens', conversation('anthropic', output), '/v1/messages/count_tokens'],
    ['/v1/chat/completions/', chat, '/v1/chat/completions'],
    ['//v1//chat/completions', chat, '/v1/chat/completions'],
    ['/v1/chat/completion%73', chat, '/v1/chat/completions'],
    ['/V1/Chat/Completions', chat, '/V1/Chat/Completions'],
    ['/v1/responses/input_tokens', conversation('openai-responses', output), '/v1/responses/input_tokens'],
    ['/v1beta/models/gemini-2.0-flash:generateContent', gemini, '/v1beta/models/gemini-2.0-flash:generateContent'],
    ['/v1beta/models/gemini-2.0-flash:streamGenerateContent', gemini, '/v1beta/models/gemini-2.0-flash:streamGenerateContent'],
    ['/v1beta/models/gemini-2.0-flash:countTokens', gemini, '/v1beta/models/gemini-2.0-flash:countTokens'],
  ];
  for (const [path, body, upstreamPath] of cases) {
    received.length = 0;
    const res = await post(proxy, path, body);
    assert.equal(res.status, 200, path);
    assert.ok(res.headers.get('x-tracelite-tokens'), `${path}: compressed`);
    assert.equal(res.headers.get('x-tracelite-skipped'), null, path);
    assert.equal(received.length, 1, path);
    assert.equal(received[0].path, upstreamPath, path);
    assert.ok(!received[0].body.includes(AWS_KEY) && !received[0].body.includes(OPENAI_KEY), `${path}: ${received[0].body}`);
  }
});

test('item 4: conversation routes the proxy cannot compress, other methods on them and conversations on other routes are refused', async () => {
  const { proxy, received } = setup();
  const refused = [
    ['POST', '/v1/messages/batches', { requests: [{ custom_id: 'a', params: secretChat }] }, 400, 'UNSUPPORTED_ROUTE'],
    ['POST', '/v1/completions', { model: 'x', prompt: AWS_KEY }, 400, 'UNSUPPORTED_ROUTE'],
    ['PUT', '/v1/chat/completions', secretChat, 405, 'METHOD_NOT_ALLOWED'],
    ['POST', '/v1/chat/completions;x', secretChat, 400, 'UNSUPPORTED_ROUTE'],
    ['POST', '/v2/anything', secretChat, 400, 'UNSUPPORTED_ROUTE'],
  ];
  for (const [method, path, body, status, code] of refused) {
    const res = await proxy(new Request(`http://proxy.test${path}`, { method, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }));
    assert.equal(res.status, status, path);
    assert.equal((await res.json()).error.code, code, path);
  }
  assert.equal(received.length, 0);
  // Ambiguous paths (an encoded slash or dot segment the upstream may read otherwise) are refused for every method.
  for (const path of ['/v1/chat%2Fcompletions', '/image/%2e%2e%2fv1%2fmodels', '/x/..%2F..%2Fv1/models']) {
    const res = await proxy(new Request(`http://proxy.test${path}`));
    assert.equal(res.status, 400, path);
    assert.equal((await res.json()).error.code, 'INVALID_PATH', path);
  }
  assert.equal(received.length, 0);
  // Anything else goes on as it came.
  const models = await proxy(new Request('http://proxy.test/v1/models'));
  assert.equal(models.status, 200);
  const embeddings = await post(proxy, '/v1/embeddings', { model: 'e', input_text: 'plain' });
  assert.equal(embeddings.status, 200);
  assert.deepEqual(received.map((r) => [r.method, r.path, r.body]), [['GET', '/v1/models', ''], ['POST', '/v1/embeddings', '{"model":"e","input_text":"plain"}']]);
});

test('item 4: normalizePath resolves escapes, dot segments, double and trailing slashes', () => {
  assert.deepEqual(normalizePath('//v1//chat/completions/'), { path: '/v1/chat/completions', ambiguous: false });
  assert.deepEqual(normalizePath('/v1/chat/completion%73'), { path: '/v1/chat/completions', ambiguous: false });
  assert.deepEqual(normalizePath('/image/%2e%2e/v1/messages'), { path: '/v1/messages', ambiguous: true });
  assert.deepEqual(normalizePath('/a/%252e%252e/v1/messages'), { path: '/v1/messages', ambiguous: true });
  assert.deepEqual(normalizePath('/v1/chat%2fcompletions'), { path: '/v1/chat/completions', ambiguous: true });
});

test('item 8: a body nested 5,000 deep is a typed 4xx, not a 500 or a crash', async () => {
  const { proxy, received } = setup();
  const deep = `{"model":"m","messages":[{"role":"user","content":"x","extra":${'['.repeat(5000)}${']'.repeat(5000)}}]}`;
  const res = await post(proxy, '/v1/chat/completions', deep);
  assert.ok(res.status >= 400 && res.status < 500, String(res.status));
  const body = await res.json();
  assert.equal(body.error.type, 'tracelite_error');
  assert.ok(body.error.code, JSON.stringify(body));
  assert.equal(received.length, 0);
});

// ------------------------------------------------------- the model's searches

const SECRET_LINE = `export AWS_ACCESS_KEY_ID=${AWS_KEY}`;

/** A stub model that calls `calls(round)` (spill tool calls) while it has rounds left, then answers. */
function model(calls) {
  let round = 0;
  return ({ path, body }) => {
    if (path !== '/v1/chat/completions') return undefined;
    const request = JSON.parse(body);
    const pointer = /spill:\/\/[^\s"\\)\]]+/.exec(body)?.[0];
    const next = pointer && request.tools ? calls(round++, pointer) : [];
    const message = next.length
      ? { role: 'assistant', content: null, tool_calls: next.map((c, i) => ({ id: `call${round}-${i}`, type: 'function', function: { name: c.name, arguments: JSON.stringify({ pointer, ...c.args }) } })) }
      : { role: 'assistant', content: 'done' };
    return new Response(JSON.stringify({ choices: [{ index: 0, message, finish_reason: next.length ? 'tool_calls' : 'stop' }] }), { headers: { 'content-type': 'application/json' } });
  };
}

/** The tool results the proxy sent in its last follow-up. */
function toolResults(received) {
  const last = JSON.parse(received.at(-1).body);
  return last.messages.filter((m) => m.role === 'tool' && m.tool_call_id !== 'c1').map((m) => m.content);
}

function secretOutput() {
  const lines = bigOutput('plain line', 3000).split('\n');
  lines[1200] = SECRET_LINE;
  return lines.join('\n');
}

test('item 5: with redaction on, the model\'s grep finds nothing that matches only a secret, and read shows it masked', async () => {
  const { proxy, received } = setup(model((round) => (round === 0
    ? [
      { name: 'grep_spill', args: { pattern: 'AKIAIOSF', literal: true } },
      { name: 'grep_spill', args: { pattern: 'AKIA[A-Z0-9]{16}' } },
      { name: 'grep_spill', args: { pattern: 'AWS_ACCESS_KEY_ID', literal: true } },
      { name: 'read_spill', args: { offset: 1200, limit: 1 } },
    ]
    : [])));
  const res = await post(proxy, '/v1/chat/completions', conversation('openai-chat', secretOutput()), { 'x-tracelite-session': 'oracle' });
  assert.equal(res.status, 200);
  assert.equal(res.headers.get('x-tracelite-spill-rounds'), '1');
  const [literal, regex, name, read] = toolResults(received);
  assert.match(literal, /: 0 matching lines/);
  assert.match(regex, /: 0 matching lines/);
  // The line is there, masked: the model learns a key was there, not what it was.
  assert.match(name, /AWS_ACCESS_KEY_ID=\[REDACTED:aws-access-key-id\]/);
  assert.match(read, /AWS_ACCESS_KEY_ID=\[REDACTED:aws-access-key-id\]/);
  assert.ok(!received.some((r) => r.body.includes(AWS_KEY)));
  // The spill routes the client reads serve the masked text too.
  const token = res.headers.get('x-tracelite-session');
  const key = /spill:\/\/[^/]+\/([^\s"\\)\]]+)/.exec(received[0].body)[1];
  const get = (suffix) => proxy(new Request(`http://proxy.test/spill/${key}${suffix}`, { headers: { 'x-tracelite-session': token } }));
  assert.equal((await (await get('/grep?q=AKIAIOSF')).json()).totalMatches, 0);
  const page = await (await get('?offset=1200&limit=1')).json();
  assert.equal(page.text, 'export AWS_ACCESS_KEY_ID=[REDACTED:aws-access-key-id]\n');
});

test('item 5: with redaction off the model searches the originals (nothing to hide)', async () => {
  const { proxy, received } = setup(model((round) => (round === 0 ? [{ name: 'grep_spill', args: { pattern: 'AKIAIOSF', literal: true } }] : [])), {
    options: { ...OPTIONS, redact: { enabled: false } },
  });
  await (await post(proxy, '/v1/chat/completions', conversation('openai-chat', secretOutput()), { 'x-tracelite-session': 'plain' })).text();
  assert.match(toolResults(received)[0], /: 1 matching lines/);
});

// No literal, 256 units a byte: over 64 KB (1,500 lines) it runs at about the proxy's per-search limit.
const COSTLY = 'a.*b.*c';
const SEARCHED_LINES = 1500;

test('item 1: 16 costly greps a round for 4 rounds stop at the request\'s search budget with a typed reply the model sees', async () => {
  const { proxy, received } = setup(model(() => Array.from({ length: 16 }, () => ({ name: 'grep_spill', args: { pattern: COSTLY } }))));
  const output = bigOutput('plain', SEARCHED_LINES);
  const started = performance.now();
  const res = await post(proxy, '/v1/chat/completions', conversation('openai-chat', output), { 'x-tracelite-session': 'greedy' });
  assert.equal(res.status, 200);
  const elapsed = performance.now() - started;
  assert.equal(res.headers.get('x-tracelite-spill-rounds'), '4');
  const replies = toolResults(received);
  const searched = replies.filter((r) => /: \d+ matching lines/.test(r));
  const spent = replies.filter((r) => r.includes('SEARCH_BUDGET_SPENT'));
  // At most the default budget's worth of searches ran (4 at the per-search
  // limit); the one after them had too little left and was refused before it ran.
  assert.equal(replies.length, 64);
  assert.ok(searched.length <= 4, `${searched.length} ran`);
  assert.ok(spent.length >= 64 - searched.length - 1, `${spent.length} refused as spent`);
  assert.ok(replies.every((r) => searched.includes(r) || spent.includes(r) || r.includes('maxGrepCost')));
  // Before: 64 searches at 2^32 each, minutes of CPU; now well under 2 s (loaded test machine).
  assert.ok(elapsed < 2000, `${elapsed} ms`);
});

test('item 1: a pattern with a repetition over the limit is refused before it runs', async () => {
  const { proxy, received } = setup(model((round) => (round === 0 ? [{ name: 'grep_spill', args: { pattern: '[\\s\\S]{500}x' } }] : [])));
  await (await post(proxy, '/v1/chat/completions', conversation('openai-chat', bigOutput('plain')), { 'x-tracelite-session': 'repeat' })).text();
  assert.match(toolResults(received)[0], /counted repetition of 500 is over 100/);
});

test('item 1: GET /spill/<key>/grep is budgeted per session and minute: over it a 429 SEARCH_BUDGET_SPENT, fast', async () => {
  const { proxy, received } = setup(undefined, { maxSearchWorkPerMinute: 2 * DEFAULT_MAX_SEARCH_COST });
  const res = await post(proxy, '/v1/chat/completions', conversation('openai-chat', bigOutput('plain', SEARCHED_LINES)), { 'x-tracelite-session': 'route' });
  const token = res.headers.get('x-tracelite-session');
  const key = /spill:\/\/[^/]+\/([^\s"\\)\]]+)/.exec(received[0].body)[1];
  const grep = () => proxy(new Request(`http://proxy.test/spill/${key}/grep?regex=1&q=${encodeURIComponent(COSTLY)}`, { headers: { 'x-tracelite-session': token } }));
  const statuses = [];
  for (let i = 0; i < 6; i++) {
    const r = await grep();
    statuses.push(r.status);
    if (r.status === 429) {
      assert.equal((await r.json()).error.code, 'SEARCH_BUDGET_SPENT');
      assert.ok(Number(r.headers.get('retry-after')) >= 1);
    } else {
      await r.text();
    }
  }
  assert.ok(statuses.filter((s) => s === 200).length <= 2, statuses.join());
  assert.equal(statuses.at(-1), 429);
  // A literal search costs no regex work: still answered.
  const literal = await proxy(new Request(`http://proxy.test/spill/${key}/grep?q=plain`, { headers: { 'x-tracelite-session': token } }));
  assert.equal(literal.status, 429, 'the window is spent for every search of the session');
});

test('createProxy: the search budgets are positive integers', () => {
  for (const maxSearchWork of [0, -1, 1.5, '10']) {
    assert.throws(() => createProxy({ upstream: 'http://u.test', maxSearchWork }), (e) => e.code === 'INVALID_OPTION' && e.path === 'maxSearchWork');
  }
  for (const name of ['maxSearchCost', 'maxSearchWorkPerMinute', 'maxMaskedBytes']) {
    assert.throws(() => createProxy({ upstream: 'http://u.test', [name]: 0 }), (e) => e.code === 'INVALID_OPTION' && e.path === name);
  }
});
