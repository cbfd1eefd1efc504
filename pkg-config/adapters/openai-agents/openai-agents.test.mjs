// tracelite/openai-agents with the real @openai/agents runner and a fake Model
// (no network, tracing off): the callModelInputFilter compresses what each
// model call receives, the spill tools read the hidden lines back, and the run's
// items and a Session keep everything.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Agent, MemorySession, Runner, Usage, run, setTracingDisabled, tool } from '@openai/agents';
import { SpillStore, compress } from '../../../pkg/entries/node.js';
import { fromResponsesRequest, spillTools, toResponsesRequest, traceliteInputFilter } from '../../../pkg/adapters/openai-agents/index.js';

setTracingDisabled(true);

const LOG = Array.from({ length: 4000 }, (_, i) => (i === 2717
  ? 'FAILED tests/test_price.py::test_discount - KeyError: price'
  : `tests/test_mod_${i % 37}.py::test_case_${i} PASSED`)).join('\n');
const POINTER = /spill:\/\/[A-Za-z0-9._-]+\/[A-Za-z0-9._-]+/;

const usage = () => new Usage({ requests: 1, inputTokens: 1, outputTokens: 1, totalTokens: 2 });
const call = (callId, name, args) => ({ type: 'function_call', callId, name, arguments: JSON.stringify(args), status: 'completed' });
const say = (text) => ({ type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text }] });

/** A Model whose every step is `script(request, step)`: the model output items. Records each request. */
function fakeModel(script) {
  const requests = [];
  return {
    requests,
    async getResponse(request) {
      requests.push(request);
      return { usage: usage(), output: script(request, requests.length - 1) };
    },
    async *getStreamedResponse() {
      throw new Error('not used');
    },
  };
}

const bash = tool({
  name: 'bash',
  description: 'Runs a shell command.',
  parameters: { type: 'object', properties: { command: { type: 'string' } }, required: ['command'], additionalProperties: true },
  strict: false,
  execute: async () => LOG,
});

/** Runs pytest, then reads line 2718 of the spilled log through read_spill, then answers. */
const readBack = (request, step) => [
  () => [call('call-1', 'bash', { command: 'pytest -v' })],
  () => [call('call-2', 'read_spill', { pointer: POINTER.exec(JSON.stringify(request.input))?.[0], offset: 2717, limit: 1 })],
  () => [say('The discount test fails with KeyError: price.')],
][step]();

test('run(): the model sees the tool output spilled behind a pointer, read_spill returns the hidden lines, the session keeps everything', async () => {
  const reports = [];
  const filter = traceliteInputFilter({ budget: 8000, onReport: (r) => reports.push(r) });
  const model = fakeModel(readBack);
  const agent = new Agent({ name: 'fixer', instructions: 'You fix bugs.', model, tools: [bash, ...spillTools(filter.store)] });
  const session = new MemorySession();
  const result = await run(agent, 'Fix the failing discount test.', { callModelInputFilter: filter, session });
  assert.equal(result.finalOutput, 'The discount test fails with KeyError: price.');
  assert.equal(model.requests.length, 3);

  const second = model.requests[1];
  assert.equal(second.systemInstructions, 'You fix bugs.');
  const seen = JSON.stringify(second.input);
  assert.match(seen, POINTER);
  assert.ok(seen.length < LOG.length / 10, `the tool output was cut (${seen.length} chars seen)`);
  // Items keep their SDK shape and call ids.
  assert.deepEqual(second.input.map((i) => i.type ?? i.role), ['message', 'function_call', 'function_call_result']);
  assert.equal(second.input[1].callId, 'call-1');
  assert.equal(second.input[2].callId, 'call-1');
  assert.equal(second.input[2].name, 'bash');
  assert.equal(second.input[2].output.type, 'text');
  assert.match(second.input[2].output.text, /^\[output too long: 4000 lines/);
  // read_spill answered with the hidden line.
  const reply = model.requests[2].input.find((i) => i.type === 'function_call_result' && i.callId === 'call-2');
  assert.match(reply.output.text, /^spill:\/\/conv-[0-9a-f]{16}\/tool-[0-9a-f]{32}: lines 2718-2718 of 4000/);
  assert.match(reply.output.text, /\n {2}2718\tFAILED tests\/test_price\.py::test_discount - KeyError: price\n/);
  // The run and the session keep the full output.
  const full = (items) => items.find((i) => i.type === 'function_call_result' && i.callId === 'call-1');
  assert.equal(full(result.history).output.text, LOG);
  assert.equal(full(await session.getItems()).output.text, LOG);
  assert.equal(reports.length, 3);
  assert.equal(new Set(reports.map((r) => r.session)).size, 1);
  assert.ok(reports[1].report.tokensBefore > 40000 && reports[1].report.tokensAfter < 4000);

  // A second turn of the same session: the history is compressed again, under the same spill session.
  const next = fakeModel((request) => [say(POINTER.test(JSON.stringify(request.input)) ? 'still spilled' : 'full')]);
  const again = await run(agent.clone({ model: next }), 'Thanks. Anything else?', { callModelInputFilter: filter, session });
  assert.equal(again.finalOutput, 'still spilled');
  assert.equal(reports.at(-1).session, reports[0].session);
});

test('Runner config: grep_spill through a Runner-wide filter with a named session; the blob is in filter.store', async () => {
  const filter = traceliteInputFilter({ budget: 8000, session: ({ context }) => `user-${context.user}` });
  const model = fakeModel((request, step) => [
    () => [call('c1', 'bash', { command: 'pytest' })],
    () => [call('c2', 'grep_spill', { pointer: POINTER.exec(JSON.stringify(request.input))[0], pattern: 'KeyError', context: 0 })],
    () => [say('done')],
  ][step]());
  const runner = new Runner({ callModelInputFilter: filter });
  const agent = new Agent({ name: 'a', model, tools: [bash, ...spillTools(filter.store, { session: 'user-42' })] });
  await runner.run(agent, 'Why does it fail?', { context: { user: 42 } });
  const reply = model.requests[2].input.find((i) => i.callId === 'c2' && i.type === 'function_call_result');
  assert.match(reply.output.text, /^spill:\/\/user-42\/tool-[0-9a-f]{32}: 1 matching lines of 4000 for "KeyError"; showing matches 1-1\n2718:FAILED/);
  const key = POINTER.exec(JSON.stringify(model.requests[1].input))[0].split('/').pop();
  assert.equal(filter.store.get('user-42', key), LOG);
});

test('unchanged items come back as the very objects they were; changed outputs keep their shape, ids and fields', () => {
  const items = [
    { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'look' }, { type: 'input_image', image: 'https://example.com/a.png' }] },
    { type: 'reasoning', id: 'rs_1', content: [], providerData: { encrypted: 'x' } },
    call('t1', 'read', { path: 'x.py' }),
    { type: 'function_call_result', callId: 't1', name: 'read', status: 'completed', output: 'print(1)' },
    call('t2', 'bash', { command: 'pytest' }),
    { type: 'function_call_result', callId: 't2', name: 'bash', status: 'completed', output: LOG, providerData: { p: 1 } },
    call('t3', 'bash', { command: 'pytest -x' }),
    { type: 'function_call_result', callId: 't3', name: 'bash', status: 'completed', output: { type: 'text', text: LOG.replaceAll('tests/', 'unit/') } },
    call('t4', 'bash', { command: 'pytest -q' }),
    { type: 'function_call_result', callId: 't4', name: 'bash', status: 'completed', output: [{ type: 'input_text', text: LOG.replaceAll('tests/', 'e2e/') }] },
    say('done'),
  ];
  const { request, side } = toResponsesRequest(items, 'You fix bugs.');
  assert.equal(request.instructions, 'You fix bugs.');
  assert.deepEqual(request.input[3], { type: 'function_call_output', call_id: 't1', output: 'print(1)', tracelite_agents: 3 });
  const untouched = fromResponsesRequest(compress(request, { budget: 1_000_000, spill: { fraction: 0.25 }, store: new SpillStore() }).request, side);
  assert.equal(untouched.instructions, 'You fix bugs.');
  untouched.input.forEach((item, i) => assert.equal(item, items[i], `item ${i}`));
  // Without snapshots, compaction writes a summary (SDK message items); the rest are originals or changed copies.
  const compacted = fromResponsesRequest(compress(request, { budget: 8000, store: new SpillStore(), session: 's', window: 1, optical: { enabled: false } }).request, side);
  assert.ok(compacted.input.some((i) => i.type === 'message' && i.role === 'user' && /^\[TraceLite summary of earlier turns/.test(i.content)), JSON.stringify(compacted.input).slice(0, 300));
  for (const i of compacted.input.filter((x) => x.type === 'function_call')) assert.ok(items.includes(i), `${i.callId} is the original item`);
  // A snapshot of an older output (optical stage) comes back as SDK image parts.
  const out = fromResponsesRequest(compress(request, { budget: 8000, store: new SpillStore(), session: 's', window: 1, model: 'gpt-4.1' }).request, side);
  const imaged = out.input.filter((i) => Array.isArray(i.output) && i.output.some((p) => p.type === 'input_image'));
  assert.ok(imaged.length > 0, 'an older output became a snapshot');
  for (const i of imaged) assert.ok(i.output.every((p) => p.type === 'input_text' || (p.type === 'input_image' && /^data:image\/png;base64,/.test(p.image))), JSON.stringify(i.output).slice(0, 300));
  const text = fromResponsesRequest(compress(request, { budget: 8000, store: new SpillStore(), session: 's', window: 1, optical: { enabled: false }, compact: { enabled: false } }).request, side);
  for (const i of [0, 1, 2, 3, 4, 6, 8, 10]) assert.equal(text.input[i], items[i], `item ${i}`);
  const [a, b, c] = [text.input[5], text.input[7], text.input[9]];
  assert.equal(typeof a.output, 'string');
  assert.match(a.output, /spill:\/\/s\/tool-[0-9a-f]{32}/);
  assert.deepEqual([a.callId, a.name, a.status, a.providerData], ['t2', 'bash', 'completed', { p: 1 }]);
  assert.equal(b.output.type, 'text');
  assert.match(b.output.text, /spill:\/\/s\//);
  assert.ok(Array.isArray(c.output) && c.output[0].type === 'input_text' && /spill:\/\/s\//.test(c.output[0].text), JSON.stringify(c.output).slice(0, 200));
});

test('items the compression writes (a summary, a snapshot) become SDK message items', () => {
  const items = [{ type: 'message', role: 'user', content: 'task' }];
  const { side } = toResponsesRequest(items);
  const back = fromResponsesRequest({
    input: [
      { type: 'message', role: 'user', content: 'task', tracelite_agents: 0 },
      { role: 'user', content: '## Goal\nFix it.' },
      { role: 'user', content: [{ type: 'input_text', text: 'snapshot' }, { type: 'input_image', image_url: 'data:image/png;base64,iVBORw0K' }] },
      { role: 'assistant', content: 'noted' },
    ],
  }, side);
  assert.equal(back.input[0], items[0]);
  assert.deepEqual(back.input.slice(1), [
    { type: 'message', role: 'user', content: '## Goal\nFix it.' },
    { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'snapshot' }, { type: 'input_image', image: 'data:image/png;base64,iVBORw0K' }] },
    { type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'noted' }] },
  ]);
  assert.equal(back.instructions, undefined);
});

test('spillTools: function tools over any store, scoped to a session when asked', async () => {
  const store = new SpillStore();
  store.put('user-a', 'tool-1', 'alpha\nbeta');
  store.put('user-b', 'tool-2', 'secret of b');
  const [read, grep] = spillTools(store, { session: 'user-a' });
  assert.deepEqual([read.name, grep.name, read.type, read.strict], ['read_spill', 'grep_spill', 'function', false]);
  assert.deepEqual(read.parameters.required, ['pointer']);
  const invoke = (t, args) => t.invoke({}, JSON.stringify(args));
  assert.match(await invoke(read, { pointer: 'spill://user-a/tool-1', offset: 1 }), /^spill:\/\/user-a\/tool-1: lines 2-2 of 2 \(0\.0 KB\)\n +2\tbeta/);
  assert.equal(await invoke(read, { pointer: 'spill://user-b/tool-2' }), 'no spilled output at spill://user-b/tool-2 in this session (it may have expired)');
  assert.match(await invoke(spillTools(store)[1], { pointer: 'spill://user-b/tool-2', pattern: 'secret' }), /1:secret of b/);
  assert.match(await invoke(grep, { pointer: 'spill://user-a/tool-1', pattern: '(' }), /invalid regex/);
  store.free();
});

test('the agent’s model decides: a text-only model gets no image part, a vision model gets snapshots', async () => {
  const { RENDER_ALL, chatWithLogs, pngCount } = await import('../../../tests/js/support/models.mjs');
  const { agentModel } = await import('../../../pkg/adapters/openai-agents/index.js');
  // Eight test runs as Agents SDK items.
  const items = [];
  for (const m of chatWithLogs(8).messages) {
    if (m.role === 'user') items.push({ type: 'message', role: 'user', content: m.content });
    else if (m.role === 'assistant') items.push(call(m.tool_calls[0].id, 'bash', JSON.parse(m.tool_calls[0].function.arguments)));
    else items.push({ type: 'function_call_result', callId: m.tool_call_id, name: 'bash', status: 'completed', output: { type: 'text', text: m.content } });
  }
  for (const [name, images] of [['deepseek-chat', false], ['qwen3-coder-480b', false], ['gpt-4.1', true], ['gpt-5', true]]) {
    const model = fakeModel(() => [say('ok')]);
    const reports = [];
    const filter = traceliteInputFilter({ ...RENDER_ALL, onReport: (r) => reports.push(r) });
    // A model named by string, resolved by the run's model provider.
    const runner = new Runner({ callModelInputFilter: filter, modelProvider: { getModel: async () => model } });
    await runner.run(new Agent({ name: 'fixer', instructions: 'You fix tests.', model: name }), items);
    assert.equal(pngCount(model.requests[0].input) > 0, images, `${name}: ${pngCount(model.requests[0].input)} images`);
    assert.equal(reports[0].report.stages.find((s) => s.stage === 'optical').enabled, images, name);
  }
  assert.equal(agentModel({ model: 'gpt-4o' }), 'gpt-4o');
  assert.equal(agentModel({ model: { _model: 'o4-mini' } }), 'o4-mini');
  assert.equal(typeof agentModel({ model: '' }), 'string', 'the SDK default model');
});

test('an input still over budget after every stage: onReport gets report.overBudget once per model call, one within it none', async () => {
  const reports = [];
  const filter = traceliteInputFilter({ budget: 2000, onReport: (r) => reports.push(r.report) });
  const agent = new Agent({ name: 'reader', instructions: 'You read.', model: fakeModel(() => [say('ok')]) });
  await run(agent, LOG, { callModelInputFilter: filter });
  assert.equal(reports.length, 1);
  assert.equal(reports[0].overBudget.budget, 2000);
  assert.equal(reports[0].overBudget.largest, 'input[0]');
  assert.ok(reports[0].overBudget.tokens > 2000);
  await run(agent, 'hi', { callModelInputFilter: filter });
  assert.equal(reports.length, 2);
  assert.equal(reports[1].overBudget, undefined);
});
