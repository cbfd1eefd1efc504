// Issue 18 item 3: behind the proxy, spill pointers lead somewhere. The
// Worker example in real workerd (Miniflare 4) in front of a stub model on
// 127.0.0.1 that calls grep_spill on the first pointer it sees and answers
// with the line it found once it gets the tool's result: the proxy defines the
// tools, runs the call against the session's spills and sends the follow-up;
// the client gets only the final answer. Every format, JSON and SSE.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { SpillStore, compress, trajectoryToRequest } from '../../../pkg/entries/node.js';
import { createProxy } from '../../../pkg/adapters/proxy/index.js';
import { bundleWorker, projectWithPkg, root, startUpstream, startWorker } from '../../../tests/js/support/hosts.mjs';
import {
  PATHS, POINTER, bigOutput, clientText, conversation, lastToolResult, model, parseSse, withSpillTools,
} from '../../../tests/js/support/proxy-tools.mjs';

const PROXY_SECRET = 'proxy-tools-test-secret-1f9e8d7c6b5a4f3e';
const KEY_A = 'Bearer sk-tenant-a-tools-000000000000000';
const KEY_B = 'Bearer sk-tenant-b-tools-111111111111111';
const NEEDLE = 'NEEDLE: error E1234 in src/parser.c line 88';
const WORKER = readFileSync(join(root, 'pkg-config/examples/cloudflare-worker/worker.js'), 'utf8');
const FORMATS = Object.keys(PATHS);

let upstream;
let mf;

before(async () => {
  upstream = await startUpstream(model);
  const script = await bundleWorker(projectWithPkg('tracelite-tools-'), WORKER);
  mf = await startWorker(script, {
    kvNamespaces: ['SPILLS'],
    bindings: { UPSTREAM: upstream.url, TRACELITE_OPTIONS: JSON.stringify({ budget: 16000 }), TRACELITE_SECRET: PROXY_SECRET },
  });
});

after(async () => {
  await mf?.dispose();
  await upstream?.close();
});

function post(path, body, headers = {}) {
  return mf.dispatchFetch(`http://proxy.test${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: KEY_A, ...headers },
    body: JSON.stringify(body),
  });
}

const toolNames = (format, tools = []) => tools.map((t) => (format === 'openai-chat' ? t.function.name : t.name));
const sent = () => upstream.received.map((r) => JSON.parse(r.body));

for (const format of FORMATS) {
  for (const stream of [false, true]) {
    test(`${format} ${stream ? 'SSE' : 'JSON'}: the model's grep_spill is answered by the proxy from the session's spills; the client gets the final answer only`, async () => {
      upstream.received.length = 0;
      const res = await post(`${PATHS[format]}?mode=read`, conversation(format, bigOutput(NEEDLE), stream ? { stream } : {}), { 'x-tracelite-session': `tools-${stream}` });
      assert.equal(res.status, 200);
      const text = await res.text();
      const [first, second, ...more] = sent();
      assert.equal(more.length, 0);
      // The forwarded request defined the tools the placeholders name…
      assert.deepEqual(toolNames(format, first.tools), ['read_spill', 'grep_spill']);
      assert.match(JSON.stringify(first), POINTER);
      // …the follow-up carries the model's call and the proxy's result (the spilled line)…
      assert.ok(lastToolResult(format, second).includes(NEEDLE), lastToolResult(format, second));
      assert.ok(JSON.stringify(second).includes('grep_spill'));
      assert.deepEqual(second.tools, first.tools);
      // …and the client sees the final answer, never the call.
      assert.equal(clientText(format, text, stream), `${stream ? 'Let me look.' : ''}final: ${NEEDLE}`);
      assert.ok(!text.includes('grep_spill'), text);
      assert.equal(res.headers.get('x-tracelite-spill-rounds'), stream ? null : '1');
      if (!stream) return;
      const events = parseSse(text);
      if (format === 'openai-chat') {
        assert.equal(events.filter((e) => e.data === '[DONE]').length, 1);
        assert.equal(events.at(-1).data, '[DONE]');
        assert.ok(events.every((e) => e.data === '[DONE]' || !e.data.choices[0].delta.tool_calls));
      } else if (format === 'anthropic') {
        // One message, its blocks numbered on from the text the client already had.
        assert.deepEqual(events.map((e) => e.event).filter((e) => e === 'message_start' || e === 'message_stop'), ['message_start', 'message_stop']);
        assert.deepEqual(events.filter((e) => e.event === 'content_block_start').map((e) => [e.data.index, e.data.content_block.type]), [[0, 'text'], [1, 'text']]);
        assert.ok(events.every((e) => e.event !== 'content_block_delta' || [0, 1].includes(e.data.index)));
      } else {
        assert.equal(events.filter((e) => e.data.type === 'response.created').length, 1);
        assert.deepEqual(events.map((e) => e.data.sequence_number), events.map((_, i) => i));
        assert.deepEqual(events.filter((e) => e.data.type === 'response.output_item.added').map((e) => e.data.output_index), [0, 1]);
        const done = events.at(-1).data;
        assert.equal(done.type, 'response.completed');
        assert.deepEqual(done.response.output.map((o) => o.content[0].text), ['Let me look.', `final: ${NEEDLE}`]);
      }
    });
  }
}

test('a spill call naming another tenant\'s spill reads nothing: the tool result is an error and the text stays where it was', async () => {
  upstream.received.length = 0;
  const SECRET_LINE = 'NEEDLE: tenant B password hunter2-b-only';
  // Tenant B's conversation spills its secret line.
  const b = await post(`${PATHS['openai-chat']}?mode=read`, conversation('openai-chat', bigOutput(SECRET_LINE)), { authorization: KEY_B, 'x-tracelite-session': 'shared-name' });
  assert.equal(clientText('openai-chat', await b.text(), false), `final: ${SECRET_LINE}`);
  const pointerB = POINTER.exec(upstream.received[0].body)[0];
  // Tenant A, same session name, gets its model to read B's pointer.
  for (const format of FORMATS) {
    for (const stream of [false, true]) {
      upstream.received.length = 0;
      const a = await post(
        `${PATHS[format]}?mode=attack&pointer=${encodeURIComponent(pointerB)}`,
        conversation(format, bigOutput('NEEDLE: tenant A line'), stream ? { stream } : {}),
        { 'x-tracelite-session': 'shared-name' },
      );
      const text = await a.text();
      assert.ok(!text.includes('hunter2'), text);
      const [, second] = sent();
      const result = lastToolResult(format, second);
      assert.ok(!result.includes('hunter2'), result);
      assert.match(result, /not found|no spill|unknown/i);
      if (format === 'anthropic') assert.equal(second.messages.at(-1).content[0].is_error, true);
    }
  }
});

test('over maxSpillRounds (4) the proxy stops asking and the client gets what the model said last', async () => {
  for (const [format, stream] of [['openai-chat', false], ['anthropic', true], ['openai-responses', true]]) {
    upstream.received.length = 0;
    const res = await post(`${PATHS[format]}?mode=loop`, conversation(format, bigOutput(NEEDLE), stream ? { stream } : {}));
    const text = await res.text();
    assert.equal(upstream.received.length, 5, format); // the request and 4 follow-ups
    // Each follow-up carries one more call and result.
    assert.ok(sent().every((body, i) => (JSON.stringify(body).match(/"call_s1"/g) ?? []).length === 2 * i), format);
    assert.ok(text.includes('grep_spill'), `${format}: the last turn reaches the client as the model said it`);
    if (!stream) {
      assert.equal(res.headers.get('x-tracelite-spill-rounds'), '4');
      assert.equal(JSON.parse(text).choices[0].message.tool_calls[0].function.name, 'grep_spill');
    } else if (format === 'anthropic') {
      const events = parseSse(text);
      assert.equal(events.filter((e) => e.event === 'message_start').length, 1);
      const starts = events.filter((e) => e.event === 'content_block_start').map((e) => e.data.index);
      assert.deepEqual(starts, starts.map((_, i) => i));
    }
  }
});

test('a turn that mixes spill calls with the client\'s own reaches the client unchanged', async () => {
  for (const [format, stream] of [['openai-chat', true], ['anthropic', false], ['openai-responses', true]]) {
    upstream.received.length = 0;
    const body = conversation(format, bigOutput(NEEDLE), stream ? { stream } : {});
    const res = await post(`${PATHS[format]}?mode=mixed`, body);
    const text = await res.text();
    assert.equal(upstream.received.length, 1);
    const want = model({ url: `${PATHS[format]}?mode=mixed` }, upstream.received[0].body);
    assert.equal(text, want.chunks.join(''), format);
  }
});

test('no pointer, or the caller\'s own read_spill: no tools added, nothing answered by the proxy', async () => {
  upstream.received.length = 0;
  const small = conversation('openai-chat', 'all good', { stream: true });
  await (await post(PATHS['openai-chat'], small)).text();
  assert.equal(sent()[0].tools, undefined);
  upstream.received.length = 0;
  const mine = { type: 'function', function: { name: 'read_spill', parameters: { type: 'object' } } };
  const res = await post(PATHS['openai-chat'], conversation('openai-chat', bigOutput(NEEDLE), { tools: [mine] }));
  const body = await res.json();
  assert.equal(upstream.received.length, 1);
  assert.deepEqual(sent()[0].tools, [mine]);
  assert.equal(body.choices[0].message.tool_calls[0].function.name, 'grep_spill');
});

test('provider per route: anthropic for /v1/messages, openai for the OpenAI routes, overridable per format', async () => {
  const received = [];
  const fetch = async (req) => {
    received.push(await req.text());
    return new Response('{}', { headers: { 'content-type': 'application/json' } });
  };
  // The sample trajectory: older outputs are rendered as images (in fixed batches: the
  // planner defers them on a run this short), sized and priced by provider; forced on
  // (the trajectory names no model).
  const base = { budget: 16000, spill: { fraction: 0.25 }, plan: { enabled: false }, optical: { enabled: true } };
  const sample = JSON.parse(readFileSync(join(root, 'tests/fixtures/sample-trajectory.json'), 'utf8'));
  const requestOf = (format) => trajectoryToRequest(sample, sample.steps.length, format);
  const expectedFor = (format, provider, session) => {
    const store = new SpillStore();
    try {
      return JSON.stringify(withSpillTools(compress(requestOf(format), { ...base, format, provider, session, store }).request, format, session));
    } finally {
      store.free();
    }
  };
  const sessionOf = (res) => res.headers.get('x-tracelite-session').replace(/(\.[0-9a-f]{32})?\.[^.]*$/, '');
  const call = async (proxy, format) => {
    received.length = 0;
    const res = await proxy(new Request(`http://proxy.test${PATHS[format]}`, { method: 'POST', body: JSON.stringify(requestOf(format)) }));
    await res.text();
    return { body: received[0], session: sessionOf(res) };
  };
  const byRoute = createProxy({ upstream: 'http://upstream.test', options: base, fetch });
  const messages = await call(byRoute, 'anthropic');
  assert.equal(messages.body, expectedFor('anthropic', 'anthropic', messages.session));
  assert.notEqual(messages.body, expectedFor('anthropic', 'openai', messages.session));
  const chat = await call(byRoute, 'openai-chat');
  assert.equal(chat.body, expectedFor('openai-chat', 'openai', chat.session));
  // providers[format] wins; options.provider applies to the routes without one.
  const overridden = createProxy({ upstream: 'http://upstream.test', options: { ...base, provider: 'openai-patch' }, providers: { anthropic: 'openai' }, fetch });
  const m2 = await call(overridden, 'anthropic');
  assert.equal(m2.body, expectedFor('anthropic', 'openai', m2.session));
  const c2 = await call(overridden, 'openai-chat');
  assert.equal(c2.body, expectedFor('openai-chat', 'openai-patch', c2.session));
  assert.throws(() => createProxy({ upstream: 'http://u.test', providers: { anthropic: 'cohere' } }), (err) => err.code === 'INVALID_OPTION' && err.path === 'providers.anthropic');
});

test('with the default in-memory store (Node) too: own spills are answered, another session\'s are not, and what goes upstream is masked', async () => {
  const received = [];
  const fetch = async (req) => {
    const text = await req.text();
    received.push(text);
    const { headers, chunks } = model({ url: new URL(req.url).pathname + new URL(req.url).search }, text);
    return new Response(chunks.join(''), { headers });
  };
  const proxy = createProxy({ upstream: 'http://upstream.test', options: { budget: 16000 }, fetch });
  const post = (path, body, session) => proxy(new Request(`http://proxy.test${path}`, {
    method: 'POST', headers: { authorization: KEY_A, 'x-tracelite-session': session }, body: JSON.stringify(body),
  }));
  const KEY_LINE = 'NEEDLE: deploy key sk-proj-Zx9Qw8Er7Ty6Ui5Op4As3Df2Gh1Jk0Lz';
  const own = await post(PATHS['openai-chat'], conversation('openai-chat', bigOutput(KEY_LINE)), 'mem-1');
  const answer = clientText('openai-chat', await own.text(), false);
  assert.match(answer, /^final: NEEDLE: deploy key \[REDACTED:[\w-]+\]$/);
  assert.ok(!received.join('').includes('Zx9Qw8Er7Ty6'), 'the key never went upstream');
  const pointer = POINTER.exec(received[0])[0];
  received.length = 0;
  const other = await post(`${PATHS.anthropic}?mode=attack&pointer=${encodeURIComponent(pointer)}`, conversation('anthropic', bigOutput('NEEDLE: mine')), 'mem-2');
  await other.text();
  const result = lastToolResult('anthropic', JSON.parse(received[1]));
  assert.match(result, /not found|no spill|unknown/i);
  assert.ok(!result.includes('deploy key'));
  assert.throws(() => createProxy({ upstream: 'http://u.test', maxSpillRounds: 0 }), (err) => err.path === 'maxSpillRounds');
  // A response longer than maxSpillResponseBytes is not held: it passes on as it came.
  const small = createProxy({ upstream: 'http://upstream.test', options: { budget: 16000 }, fetch, maxSpillResponseBytes: 64 });
  for (const stream of [false, true]) {
    received.length = 0;
    const res = await small(new Request(`http://proxy.test${PATHS['openai-chat']}`, {
      method: 'POST', headers: { authorization: KEY_A }, body: JSON.stringify(conversation('openai-chat', bigOutput(NEEDLE), stream ? { stream } : {})),
    }));
    const text = await res.text();
    assert.equal(received.length, 1);
    assert.equal(text, model({ url: PATHS['openai-chat'] }, received[0]).chunks.join(''));
  }
});
