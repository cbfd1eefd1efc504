// traceliteMiddleware and spillTools with the `ai` package's own mock language
// model (MockLanguageModelV4 of ai 7): what the model receives, and a tool loop
// in which the model reads spilled lines back.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { generateText, stepCountIs, wrapLanguageModel } from 'ai';
import { MockLanguageModelV4 } from 'ai/test';
import { SpillStore, compress } from '../../../pkg/entries/node.js';
import { fromChatRequest, spillTools, toChatRequest, traceliteMiddleware } from '../../../pkg/adapters/ai-sdk/index.js';

const root = fileURLToPath(new URL('../../../', import.meta.url));

const LOG = Array.from({ length: 4000 }, (_, i) => (i === 2717
  ? 'FAILED tests/test_price.py::test_discount - KeyError: price'
  : `tests/test_mod_${i % 37}.py::test_case_${i} PASSED [${String(Math.floor((i * 100) / 4000)).padStart(3)}%]`)).join('\n');

const usage = {
  inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 5, text: 5, reasoning: 0 },
};
const finish = (unified) => ({ unified, raw: unified });
const textResult = (text) => ({ content: [{ type: 'text', text }], finishReason: finish('stop'), usage, warnings: [] });
const callResult = (toolCallId, toolName, input) => ({
  content: [{ type: 'tool-call', toolCallId, toolName, input: JSON.stringify(input) }],
  finishReason: finish('tool-calls'),
  usage,
  warnings: [],
});

/** A conversation in the AI SDK's message format with one huge tool result. */
function conversation(task = 'Fix the failing discount test.') {
  return [
    { role: 'user', content: task },
    {
      role: 'assistant',
      content: [
        { type: 'text', text: 'Running the tests.' },
        { type: 'tool-call', toolCallId: 'call-1', toolName: 'bash', input: { command: 'pytest -v' } },
      ],
    },
    { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'call-1', toolName: 'bash', output: { type: 'text', value: LOG } }] },
  ];
}

/** The prompt the SDK hands the model for `messages`, without middleware. */
async function rawPrompt(messages, system) {
  const model = new MockLanguageModelV4({ doGenerate: textResult('ok') });
  await generateText({ model, system, messages });
  return model.doGenerateCalls[0].prompt;
}

const spillLanded = (() => {
  const { request } = toChatRequest([
    { role: 'user', content: [{ type: 'text', text: 'x' }] },
    { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'c', toolName: 'bash', input: {} }] },
    { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'c', toolName: 'bash', output: { type: 'text', value: LOG } }] },
  ]);
  return compress(request, { budget: 8000, store: new SpillStore() }).report.spills.length > 0;
})();

test('the model receives the prompt compress produces, in the AI SDK format', async () => {
  const messages = conversation();
  const raw = await rawPrompt(messages, 'You fix bugs.');
  const mock = new MockLanguageModelV4({ doGenerate: textResult('done') });
  const reports = [];
  const middleware = traceliteMiddleware({ budget: 8000, onReport: (r) => reports.push(r) });
  const model = wrapLanguageModel({ model: mock, middleware });
  const result = await generateText({ model, system: 'You fix bugs.', messages });
  assert.equal(result.text, 'done');
  const seen = mock.doGenerateCalls[0].prompt;
  // Exactly the core's output for the same conversation, converted back.
  const { request, side } = toChatRequest(raw);
  const want = compress(request, { budget: 8000, format: 'openai-chat', session: reports[0].session, store: new SpillStore() });
  assert.deepEqual(seen, fromChatRequest(want.request, side));
  assert.equal(reports.length, 1);
  assert.equal(reports[0].type, 'generate');
  assert.equal(reports[0].report.tokensBefore, want.report.tokensBefore);
  assert.ok(reports[0].report.tokensBefore > 40000);
  // Tool calls are never changed.
  const calls = (p) => p.flatMap((m) => (m.role === 'assistant' ? m.content.filter((c) => c.type === 'tool-call') : []));
  assert.deepEqual(calls(seen), calls(raw));
});

test('streaming calls are compressed too', async () => {
  const mock = new MockLanguageModelV4({
    doStream: {
      stream: new ReadableStream({
        start(c) {
          c.enqueue({ type: 'text-start', id: 't' });
          c.enqueue({ type: 'text-delta', id: 't', delta: 'hi' });
          c.enqueue({ type: 'text-end', id: 't' });
          c.enqueue({ type: 'finish', finishReason: finish('stop'), usage });
          c.close();
        },
      }),
    },
  });
  const types = [];
  const { streamText } = await import('ai');
  const result = streamText({
    model: wrapLanguageModel({ model: mock, middleware: traceliteMiddleware({ budget: 8000, onReport: (r) => types.push(r.type) }) }),
    messages: conversation(),
  });
  assert.equal(await result.text, 'hi');
  assert.deepEqual(types, ['stream']);
  assert.equal(mock.doStreamCalls.length, 1);
});

test('each conversation keeps its own spill session, stable across turns', async () => {
  const sessions = [];
  const middleware = traceliteMiddleware({ onReport: (r) => sessions.push(r.session) });
  const model = wrapLanguageModel({ model: new MockLanguageModelV4({ doGenerate: textResult('ok') }), middleware });
  await generateText({ model, messages: conversation() });
  await generateText({ model, messages: [...conversation(), { role: 'assistant', content: 'ok' }, { role: 'user', content: 'next?' }] });
  await generateText({ model, messages: conversation('Another task.') });
  const named = traceliteMiddleware({ session: (params) => `user-${params.prompt.length}`, onReport: (r) => sessions.push(r.session) });
  await generateText({ model: wrapLanguageModel({ model: new MockLanguageModelV4({ doGenerate: textResult('ok') }), middleware: named }), messages: conversation() });
  assert.equal(sessions[0], sessions[1]);
  assert.notEqual(sessions[0], sessions[2]);
  assert.match(sessions[0], /^conv-[0-9a-f]{16}$/);
  assert.equal(sessions[3], 'user-3');
});

test('the default store keeps one store per conversation, the most recent maxSessions of them', async () => {
  const reports = [];
  const middleware = traceliteMiddleware({ maxSessions: 2, onReport: (r) => reports.push(r) });
  const model = wrapLanguageModel({ model: new MockLanguageModelV4({ doGenerate: textResult('ok') }), middleware });
  await generateText({ model, messages: conversation('Task A.') });
  await generateText({ model, messages: [...conversation('Task A.'), { role: 'assistant', content: 'ok' }, { role: 'user', content: 'more' }] });
  // The second turn of a conversation is measured against the first.
  assert.equal(reports[0].report.prefix, undefined);
  const { sharedBytes, previousBytes } = reports[1].report.prefix;
  assert.ok(previousBytes > 5000 && sharedBytes > previousBytes - 100, JSON.stringify(reports[1].report.prefix));
  const [a] = middleware.store.sessions();
  middleware.store.put(a, 'note-1', 'kept for A');
  await generateText({ model, messages: conversation('Task B.') });
  assert.equal(middleware.store.get(a, 'note-1'), 'kept for A');
  await generateText({ model, messages: conversation('Task C.') });
  assert.equal(middleware.store.sessions().length, 2);
  assert.ok(!middleware.store.sessions().includes(a));
  assert.throws(() => middleware.store.get(a, 'note-1'), (e) => e.code === 'SPILL_NOT_FOUND');
  assert.throws(() => traceliteMiddleware({ maxSessions: 0 }), (e) => e.code === 'INVALID_OPTION');
});

test('a prompt the stages leave alone comes back identical, exotic parts included', () => {
  const prompt = [
    { role: 'system', content: 'sys', providerOptions: { anthropic: { cacheControl: { type: 'ephemeral' } } } },
    { role: 'user', content: [{ type: 'text', text: 'look', providerOptions: { x: { y: 1 } } }, { type: 'file', mediaType: 'image/png', data: { type: 'data', data: new Uint8Array([1, 2, 3]) } }] },
    {
      role: 'assistant',
      content: [
        { type: 'reasoning', text: 'thinking' },
        { type: 'text', text: 'two calls' },
        { type: 'tool-call', toolCallId: 'a', toolName: 'read', input: { path: 'x.py' } },
        { type: 'tool-call', toolCallId: 'b', toolName: 'grep', input: { q: 'price' }, providerOptions: { p: { q: 2 } } },
      ],
    },
    {
      role: 'tool',
      content: [
        { type: 'tool-result', toolCallId: 'a', toolName: 'read', output: { type: 'json', value: { lines: ['a', 'b'] } } },
        { type: 'tool-result', toolCallId: 'b', toolName: 'grep', output: { type: 'error-text', value: 'no match' } },
      ],
    },
    { role: 'assistant', content: [{ type: 'text', text: 'done' }] },
  ];
  const { request, side } = toChatRequest(prompt);
  assert.equal(request.messages.filter((m) => m.role === 'tool').length, 2);
  const { request: out } = compress(request, { store: new SpillStore() });
  assert.deepEqual(fromChatRequest(out, side), prompt);
});

test('changed tool results come back as text outputs; rendered images as file parts', () => {
  const prompt = conversation();
  prompt[2].content[0].output = { type: 'error-json', value: { log: 'x' } };
  const { request, side } = toChatRequest([{ role: 'user', content: [{ type: 'text', text: 'go' }] }, ...prompt.slice(1)]);
  request.messages[2].content = '[head]\n… 3998 lines in spill://s/k …\n[tail]';
  request.messages.push({ role: 'user', content: [{ type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0K' } }] });
  const back = fromChatRequest(request, side);
  assert.deepEqual(back[2], {
    role: 'tool',
    content: [{ type: 'tool-result', toolCallId: 'call-1', toolName: 'bash', output: { type: 'error-text', value: '[head]\n… 3998 lines in spill://s/k …\n[tail]' } }],
  });
  assert.deepEqual(back[3], { role: 'user', content: [{ type: 'file', mediaType: 'image/png', data: { type: 'data', data: 'iVBORw0K' } }] });
});

test('tool loop: the model calls read_spill and grep_spill and gets the hidden lines', async () => {
  const store = new SpillStore();
  store.put('agent-1', 'tool-0042', LOG);
  const mock = new MockLanguageModelV4({
    doGenerate: [
      callResult('r1', 'grep_spill', { pointer: 'spill://agent-1/tool-0042', pattern: 'FAILED', context: 1 }),
      callResult('r2', 'read_spill', { pointer: 'spill://agent-1/tool-0042', offset: 2717, limit: 2 }),
      callResult('r3', 'read_spill', { pointer: 'spill://agent-1/tool-9999' }),
      callResult('r4', 'grep_spill', { pointer: 'spill://agent-1/tool-0042', pattern: '(' }),
      textResult('The discount test fails with KeyError: price.'),
    ],
  });
  const middleware = traceliteMiddleware({ store, session: 'agent-1' });
  const result = await generateText({
    model: wrapLanguageModel({ model: mock, middleware }),
    messages: [{ role: 'user', content: 'Why does the test fail? See spill://agent-1/tool-0042' }],
    tools: spillTools(middleware.store),
    stopWhen: stepCountIs(6),
  });
  assert.equal(result.text, 'The discount test fails with KeyError: price.');
  const lastPrompt = mock.doGenerateCalls[4].prompt;
  const outputs = lastPrompt.filter((m) => m.role === 'tool').flatMap((m) => m.content.map((c) => c.output.value));
  const lines = LOG.split('\n');
  assert.deepEqual(outputs, [
    'spill://agent-1/tool-0042: 1 matching lines of 4000 for "FAILED"; showing matches 1-1\n'
      + `2717-${lines[2716]}\n2718:FAILED tests/test_price.py::test_discount - KeyError: price\n2719-${lines[2718]}\n[no more matches; read_spill with offset=2717 reads from line 2718]`,
    `spill://agent-1/tool-0042: lines 2718-2719 of 4000 (${(Buffer.byteLength(LOG) / 1000).toFixed(1)} KB)\n`
      + `  2718\t${lines[2717]}\n  2719\t${lines[2718]}\n[1281 more lines: read_spill with offset=2719 to continue]`,
    'no spilled output at spill://agent-1/tool-9999 in this session (it may have expired)',
    'grep_spill: invalid regex: found open group without closing \')\'; pass "literal": true to search the text as written',
  ]);
  store.free();
});

test('spillTools scoped to a session read only that session\'s spills, bare keys included', async () => {
  const store = new SpillStore();
  store.put('user-a', 'tool-1', 'alpha\nbeta');
  store.put('user-b', 'tool-2', 'secret of b');
  const tools = spillTools(store, { session: 'user-a' });
  assert.match(await tools.read_spill.execute({ pointer: 'spill://user-a/tool-1' }), /1\talpha\n +2\tbeta\n\[end of output\]$/);
  assert.match(await tools.read_spill.execute({ pointer: 'tool-1', offset: 1 }), /^tool-1: lines 2-2 of 2 \(0\.0 KB\)\n +2\tbeta/);
  assert.equal(await tools.read_spill.execute({ pointer: 'spill://user-b/tool-2' }), 'no spilled output at spill://user-b/tool-2 in this session (it may have expired)');
  assert.equal(await tools.grep_spill.execute({ pointer: 'spill://user-b/tool-2', pattern: 'secret' }), 'no spilled output at spill://user-b/tool-2 in this session (it may have expired)');
  // Unscoped tools read any session of the store.
  assert.match(await spillTools(store).grep_spill.execute({ pointer: 'spill://user-b/tool-2', pattern: 'secret' }), /1:secret of b/);
  store.free();
});

test('a store that is not the wasm one (KV-like) receives every spill', async () => {
  const blobs = new Map();
  const kvLike = {
    get: async (s, k) => blobs.get(`${s}/${k}`),
    put: async (s, k, t) => { blobs.set(`${s}/${k}`, t); },
  };
  const reports = [];
  const middleware = traceliteMiddleware({ budget: 8000, store: kvLike, onReport: (r) => reports.push(r.report) });
  const mock = new MockLanguageModelV4({ doGenerate: textResult('ok') });
  await generateText({ model: wrapLanguageModel({ model: mock, middleware }), messages: conversation() });
  assert.equal(middleware.store, kvLike);
  assert.equal(blobs.size, reports[0].spills.length);
  for (const s of reports[0].spills) assert.equal(Buffer.byteLength(blobs.get(`${s.session}/${s.key}`)), s.bytes);
  assert.ok(reports[0].spills.length > 0, 'the huge tool result was spilled');
  // The core's tools read it back from the outside store (through a scratch wasm session).
  const tools = spillTools(kvLike);
  const [first] = reports[0].spills;
  const page = await tools.read_spill.execute({ pointer: first.pointer, offset: 2717, limit: 1 });
  assert.match(page, /\n  2718\tFAILED tests\/test_price.py::test_discount - KeyError: price\n/);
  const found = await tools.grep_spill.execute({ pointer: first.pointer, pattern: 'KeyError', context: 0 });
  assert.match(found, /^spill:\/\/.+: 1 matching lines of 4000 for "KeyError"; showing matches 1-1\n2718:FAILED/);
  assert.match(await tools.read_spill.execute({ pointer: `spill://${first.session}/tool-none` }), /^no spilled output at /);
  assert.equal(mock.doGenerateCalls.length, 1);
});

test('end to end: a spilled tool result is replaced by a pointer and read_spill returns the hidden lines',
  { skip: !spillLanded && 'the spill stage is not in the core yet (compress spills nothing)' }, async () => {
    const pointers = [];
    const mock = new MockLanguageModelV4({
      doGenerate: async ({ prompt }) => {
        const seen = JSON.stringify(prompt);
        if (pointers.length === 0) {
          const m = /spill:\/\/[A-Za-z0-9._-]+\/[A-Za-z0-9._-]+/.exec(seen);
          assert.ok(m, 'the compressed prompt names a spill pointer');
          pointers.push(m[0]);
          assert.ok(seen.length < LOG.length / 4, `the tool result was cut (${seen.length} chars seen)`);
          return callResult('r1', 'grep_spill', { pointer: m[0], pattern: 'KeyError', context: 0 });
        }
        return textResult('found it');
      },
    });
    const middleware = traceliteMiddleware({ budget: 8000 });
    const result = await generateText({
      model: wrapLanguageModel({ model: mock, middleware }),
      messages: conversation(),
      tools: spillTools(middleware.store),
      stopWhen: stepCountIs(3),
    });
    assert.equal(result.text, 'found it');
    const toolOutput = result.steps[0].toolResults[0].output;
    assert.match(toolOutput, /2718:FAILED tests\/test_price.py::test_discount - KeyError: price/);
  });

test('ai 6 (LanguageModelV3, specificationVersion v3): the same middleware and tools work', async () => {
  // A child process in which 'ai' means ai 6 (installed as the alias ai-v6).
  const dir = mkdtempSync(join(tmpdir(), 'tracelite-ai6-'));
  try {
    writeFileSync(join(dir, 'hooks.mjs'), `
      export async function resolve(specifier, context, next) {
        if (specifier === 'ai' || specifier.startsWith('ai/')) {
          return next(specifier.replace(/^ai/, 'ai-v6'), { ...context, parentURL: ${JSON.stringify(pathToFileURL(join(root, 'package.json')).href)} });
        }
        return next(specifier, context);
      }`);
    writeFileSync(join(dir, 'register.mjs'), `
      import { register } from 'node:module';
      register(${JSON.stringify(pathToFileURL(join(dir, 'hooks.mjs')).href)});`);
    writeFileSync(join(dir, 'run.mjs'), `
      import { generateText, stepCountIs, wrapLanguageModel } from 'ai';
      import { MockLanguageModelV3 } from 'ai/test';
      import { SpillStore } from ${JSON.stringify(pathToFileURL(join(root, 'pkg/entries/node.js')).href)};
      import { traceliteMiddleware, spillTools } from ${JSON.stringify(pathToFileURL(join(root, 'pkg/adapters/ai-sdk/index.js')).href)};
      const usage = { inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 1, text: 1, reasoning: 0 } };
      const finishReason = { unified: 'stop', raw: 'stop' };
      const store = new SpillStore();
      store.put('s6', 'tool-6', 'one\\ntwo\\nthree');
      const mock = new MockLanguageModelV3({ doGenerate: [
        { content: [{ type: 'tool-call', toolCallId: 't', toolName: 'read_spill', input: JSON.stringify({ pointer: 'spill://s6/tool-6', offset: 1 }) }], finishReason: { unified: 'tool-calls', raw: 'tool_calls' }, usage, warnings: [] },
        { content: [{ type: 'text', text: 'ok' }], finishReason, usage, warnings: [] },
      ] });
      const middleware = traceliteMiddleware({ store, session: 's6', specificationVersion: 'v3' });
      const result = await generateText({
        model: wrapLanguageModel({ model: mock, middleware }),
        messages: [{ role: 'user', content: 'read it' }],
        tools: spillTools(store),
        stopWhen: stepCountIs(3),
      });
      const tool = mock.doGenerateCalls[1].prompt.find((m) => m.role === 'tool').content[0].output;
      console.log(JSON.stringify({ text: result.text, tool, calls: mock.doGenerateCalls.length, spec: mock.specificationVersion }));
    `);
    const out = execFileSync(process.execPath, ['--import', pathToFileURL(join(dir, 'register.mjs')).href, join(dir, 'run.mjs')], {
      cwd: root, encoding: 'utf8', env: { ...process.env, NODE_PATH: '' },
    });
    assert.deepEqual(JSON.parse(out), {
      text: 'ok',
      tool: { type: 'text', value: 'spill://s6/tool-6: lines 2-3 of 3 (0.0 KB)\n     2\ttwo\n     3\tthree\n[end of output]' },
      calls: 2,
      spec: 'v3',
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the wrapped model’s modelId decides: a text-only model gets no image part, a vision model gets snapshots', async () => {
  const { RENDER_ALL, chatWithLogs, pngCount } = await import('../../../tests/js/support/models.mjs');
  // The AI SDK conversation of eight test runs.
  const messages = [{ role: 'user', content: 'Make the test suite pass.' }];
  for (const [i, m] of chatWithLogs(8).messages.entries()) {
    if (m.role === 'assistant') {
      messages.push({ role: 'assistant', content: [{ type: 'tool-call', toolCallId: m.tool_calls[0].id, toolName: 'bash', input: JSON.parse(m.tool_calls[0].function.arguments) }] });
    } else if (m.role === 'tool') {
      messages.push({ role: 'tool', content: [{ type: 'tool-result', toolCallId: m.tool_call_id, toolName: 'bash', output: { type: 'text', value: m.content } }] });
    } else assert.equal(i, 0);
  }
  for (const [modelId, images] of [['deepseek-chat', false], ['qwen/qwen3-coder', false], ['gpt-4o', true], ['anthropic/claude-sonnet-4.5', true]]) {
    const mock = new MockLanguageModelV4({ modelId, doGenerate: textResult('ok') });
    const reports = [];
    const model = wrapLanguageModel({ model: mock, middleware: traceliteMiddleware({ ...RENDER_ALL, onReport: (r) => reports.push(r) }) });
    await generateText({ model, messages });
    const seen = mock.doGenerateCalls[0].prompt;
    assert.equal(pngCount(seen) > 0, images, `${modelId}: ${pngCount(seen)} images`);
    const optical = reports[0].report.stages.find((s) => s.stage === 'optical');
    assert.equal(optical.enabled, images, modelId);
  }
  // The options name the model: they win over the wrapped model's id.
  const mock = new MockLanguageModelV4({ modelId: 'gpt-4o', doGenerate: textResult('ok') });
  await generateText({ model: wrapLanguageModel({ model: mock, middleware: traceliteMiddleware({ ...RENDER_ALL, model: 'deepseek-chat' }) }), messages });
  assert.equal(pngCount(mock.doGenerateCalls[0].prompt), 0);
});

test('a prompt still over budget after every stage: onReport gets report.overBudget once per call, a prompt within it none', async () => {
  const reports = [];
  const model = wrapLanguageModel({
    model: new MockLanguageModelV4({ doGenerate: textResult('ok') }),
    middleware: traceliteMiddleware({ budget: 2000, onReport: (r) => reports.push(r.report) }),
  });
  await generateText({ model, messages: [{ role: 'user', content: 'hi' }, { role: 'assistant', content: 'hello' }, { role: 'user', content: LOG }] });
  assert.equal(reports.length, 1);
  assert.equal(reports[0].overBudget.budget, 2000);
  assert.equal(reports[0].overBudget.largest, 'messages[2]');
  assert.ok(reports[0].overBudget.tokens > 2000);
  await generateText({ model, messages: [{ role: 'user', content: 'hi' }] });
  assert.equal(reports.length, 2);
  assert.equal(reports[1].overBudget, undefined);
});
