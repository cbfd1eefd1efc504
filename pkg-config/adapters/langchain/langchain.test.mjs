// tracelite/langchain in a real langchain v1 `createAgent` loop, the model
// replaced by LangChain's own fake chat model (`fakeModel()` of langchain /
// @langchain/core/testing) scripted to call tools: what the model receives,
// what the agent's state keeps, and the spill tools the middleware registers.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AIMessage, HumanMessage, SystemMessage, ToolMessage, createAgent, fakeModel, tool } from 'langchain';
import { SpillStore, compress } from '../../../pkg/entries/node.js';
import { fromChatMessages, spillTools, toChatMessages, traceliteMiddleware } from '../../../pkg/adapters/langchain/index.js';

const LOG = Array.from({ length: 4000 }, (_, i) => (i === 2717
  ? 'FAILED tests/test_price.py::test_discount - KeyError: price'
  : `tests/test_mod_${i % 37}.py::test_case_${i} PASSED`)).join('\n');
const POINTER = /spill:\/\/[A-Za-z0-9._-]+\/[A-Za-z0-9._-]+/;

const bash = tool(async () => LOG, {
  name: 'bash',
  description: 'Runs a shell command.',
  schema: { type: 'object', properties: { command: { type: 'string' } }, required: ['command'] },
});

/** The text of everything a model call received. */
const seenText = (messages) => JSON.stringify(messages.map((m) => m.content));

test('createAgent loop: the model sees the tool output spilled behind a pointer, read_spill returns the hidden lines, the state keeps everything', async () => {
  const reports = [];
  const middleware = traceliteMiddleware({ budget: 8000, onReport: (r) => reports.push(r) });
  const model = fakeModel()
    .respondWithTools([{ name: 'bash', args: { command: 'pytest -v' }, id: 'call-1' }])
    .respond((messages) => {
      const pointer = POINTER.exec(seenText(messages))?.[0];
      return new AIMessage({ content: '', tool_calls: [{ id: 'call-2', name: 'read_spill', args: { pointer, offset: 2717, limit: 1 }, type: 'tool_call' }] });
    })
    .respond(new AIMessage('The discount test fails with KeyError: price.'));
  // The spill tools come from the middleware: only `bash` is passed.
  const agent = createAgent({ model, tools: [bash], middleware: [middleware], systemPrompt: 'You fix bugs.' });
  const result = await agent.invoke({ messages: [new HumanMessage('Fix the failing discount test.')] });

  assert.equal(model.callCount, 3);
  const second = model.calls[1].messages;
  const seen = seenText(second);
  assert.match(seen, POINTER, 'the second call names a spill pointer');
  assert.ok(seen.length < LOG.length / 10, `the tool output was cut (${seen.length} chars seen, log ${LOG.length})`);
  // The conversation as the model saw it: the same classes, the tool call id kept on both sides.
  assert.deepEqual(second.map((m) => m.type), ['system', 'human', 'ai', 'tool']);
  assert.equal(second[0].text, 'You fix bugs.');
  assert.equal(second[2].tool_calls[0].id, 'call-1');
  assert.equal(second[3].tool_call_id, 'call-1');
  assert.equal(second[3].name, 'bash');
  assert.ok(ToolMessage.isInstance(second[3]));
  // The agent's state is not rewritten: the full output is there.
  const stateTool = result.messages.find((m) => m.type === 'tool' && m.tool_call_id === 'call-1');
  assert.equal(stateTool.content, LOG);
  // read_spill (registered by the middleware) returned the hidden line to the model.
  const reply = result.messages.find((m) => m.type === 'tool' && m.tool_call_id === 'call-2');
  assert.equal(reply.name, 'read_spill');
  assert.match(reply.content, /^spill:\/\/conv-[0-9a-f]{16}\/tool-[0-9a-f]{32}: lines 2718-2718 of 4000/);
  assert.match(reply.content, /\n {2}2718\tFAILED tests\/test_price\.py::test_discount - KeyError: price\n/);
  assert.ok(seenText(model.calls[2].messages).includes('KeyError: price'));
  assert.equal(result.messages.at(-1).content, 'The discount test fails with KeyError: price.');
  // One compression per model call, one conversation.
  assert.equal(reports.length, 3);
  assert.equal(new Set(reports.map((r) => r.session)).size, 1);
  assert.ok(reports[1].report.tokensBefore > 40000 && reports[1].report.tokensAfter < 4000, JSON.stringify(reports[1].report.stages.map((s) => [s.stage, s.tokensAfter])));
  assert.ok(reports[1].report.spills.length > 0);
});

test('grep_spill through the agent, and the full blob is readable from middleware.store', async () => {
  const middleware = traceliteMiddleware({ budget: 8000, session: 'agent-7' });
  const model = fakeModel()
    .respondWithTools([{ name: 'bash', args: { command: 'pytest' }, id: 'c1' }])
    .respond((messages) => new AIMessage({
      content: '',
      tool_calls: [{ id: 'c2', name: 'grep_spill', args: { pointer: POINTER.exec(seenText(messages))[0], pattern: 'KeyError', context: 0 }, type: 'tool_call' }],
    }))
    .respond(new AIMessage('done'));
  const agent = createAgent({ model, tools: [bash], middleware: [middleware] });
  const result = await agent.invoke({ messages: [new HumanMessage('Why does it fail?')] });
  const reply = result.messages.find((m) => m.tool_call_id === 'c2');
  assert.match(reply.content, /^spill:\/\/agent-7\/tool-[0-9a-f]{32}: 1 matching lines of 4000 for "KeyError"; showing matches 1-1\n2718:FAILED/);
  const pointer = POINTER.exec(seenText(model.calls[1].messages))[0];
  const key = pointer.split('/').pop();
  assert.equal(middleware.store.get('agent-7', key), LOG);
});

test('unchanged messages come back as the very objects they were; changed ones keep class, ids and fields', () => {
  const system = new SystemMessage('You fix bugs.');
  const messages = [
    new HumanMessage({ content: [{ type: 'text', text: 'look' }, { type: 'image_url', image_url: { url: 'https://example.com/a.png' } }], id: 'h1' }),
    new AIMessage({ content: 'two calls', id: 'a1', tool_calls: [{ id: 't1', name: 'read', args: { path: 'x.py' }, type: 'tool_call' }, { id: 't2', name: 'bash', args: { command: 'pytest' }, type: 'tool_call' }] }),
    new ToolMessage({ content: 'print(1)', tool_call_id: 't1', name: 'read', id: 'm1' }),
    new ToolMessage({ content: LOG, tool_call_id: 't2', name: 'bash', id: 'm2', status: 'error', artifact: { exit: 1 } }),
    new AIMessage({ content: [{ type: 'reasoning', reasoning: 'hmm' }, { type: 'text', text: 'done' }] }),
  ];
  const { request, side } = toChatMessages(messages, system);
  assert.deepEqual(request.messages[2].tool_calls.map((c) => [c.id, c.function.name, c.function.arguments]), [['t1', 'read', '{"path":"x.py"}'], ['t2', 'bash', '{"command":"pytest"}']]);
  // Nothing to do: every message is the same object.
  const untouched = compress(request, { budget: 1_000_000, spill: { fraction: 0.25 }, store: new SpillStore() });
  const same = fromChatMessages(untouched.request, side);
  assert.equal(same.systemMessage, system);
  assert.equal(same.messages.length, messages.length);
  same.messages.forEach((m, i) => assert.equal(m, messages[i], `message ${i}`));
  // Over the budget: the big result is spilled, the rest stays the same objects.
  const out = compress(request, { budget: 8000, store: new SpillStore(), session: 's' });
  const back = fromChatMessages(out.request, side).messages;
  assert.equal(back[0], messages[0]);
  assert.equal(back[1], messages[1]);
  assert.equal(back[2], messages[2]);
  assert.equal(back[4], messages[4]);
  const spilled = back[3];
  assert.ok(ToolMessage.isInstance(spilled));
  assert.notEqual(spilled, messages[3]);
  assert.match(spilled.content, /spill:\/\/s\/tool-[0-9a-f]{32}/);
  assert.deepEqual([spilled.tool_call_id, spilled.name, spilled.id, spilled.status, spilled.artifact], ['t2', 'bash', 'm2', 'error', { exit: 1 }]);
});

test('messages the compression writes (a summary, a snapshot) become LangChain messages by role', () => {
  const messages = [new HumanMessage('task')];
  const { side } = toChatMessages(messages);
  const { messages: back } = fromChatMessages({
    messages: [
      { role: 'user', content: 'task', tracelite_langchain: 0 },
      { role: 'user', content: '## Goal\nFix it.' },
      { role: 'user', content: [{ type: 'text', text: 'snapshot' }, { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0K' } }] },
      { role: 'assistant', content: 'ok', tool_calls: [{ id: 'x1', type: 'function', function: { name: 'bash', arguments: '{"command":"ls"}' } }] },
      { role: 'tool', tool_call_id: 'x1', content: 'a.py' },
    ],
  }, side);
  assert.equal(back[0], messages[0]);
  assert.deepEqual(back.map((m) => m.type), ['human', 'human', 'human', 'ai', 'tool']);
  assert.equal(back[1].content, '## Goal\nFix it.');
  assert.deepEqual(back[2].content[1], { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0K' } });
  assert.deepEqual(back[3].tool_calls, [{ id: 'x1', name: 'bash', args: { command: 'ls' }, type: 'tool_call' }]);
  assert.equal(back[4].tool_call_id, 'x1');
});

test('spillTools: LangChain tools over any store, scoped to a session when asked; spillTools: false registers none', async () => {
  const store = new SpillStore();
  store.put('user-a', 'tool-1', 'alpha\nbeta');
  store.put('user-b', 'tool-2', 'secret of b');
  const [read, grep] = spillTools(store, { session: 'user-a' });
  assert.deepEqual([read.name, grep.name], ['read_spill', 'grep_spill']);
  assert.match(await read.invoke({ pointer: 'spill://user-a/tool-1', offset: 1 }), /^spill:\/\/user-a\/tool-1: lines 2-2 of 2 \(0\.0 KB\)\n +2\tbeta/);
  assert.equal(await read.invoke({ pointer: 'spill://user-b/tool-2' }), 'no spilled output at spill://user-b/tool-2 in this session (it may have expired)');
  assert.match(await spillTools(store)[1].invoke({ pointer: 'spill://user-b/tool-2', pattern: 'secret' }), /1:secret of b/);
  // A mistake is a reply the model can act on, not an exception.
  assert.match(await grep.invoke({ pointer: 'spill://user-a/tool-1', pattern: '(' }), /invalid regex/);
  assert.equal(traceliteMiddleware({ spillTools: false }).tools, undefined);
  assert.deepEqual(traceliteMiddleware().tools.map((t) => t.name), ['read_spill', 'grep_spill']);
  store.free();
});

test('a store outside wasm (KV-like) receives every spill and the registered tools read it back', async () => {
  const blobs = new Map();
  const kvLike = { get: async (s, k) => blobs.get(`${s}/${k}`), put: async (s, k, t) => { blobs.set(`${s}/${k}`, t); } };
  const middleware = traceliteMiddleware({ budget: 8000, store: kvLike, session: 'kv-1' });
  assert.equal(middleware.store, kvLike);
  const model = fakeModel()
    .respondWithTools([{ name: 'bash', args: { command: 'pytest' }, id: 'c1' }])
    .respond((messages) => new AIMessage({
      content: '',
      tool_calls: [{ id: 'c2', name: 'read_spill', args: { pointer: POINTER.exec(seenText(messages))[0], offset: 2717, limit: 1 }, type: 'tool_call' }],
    }))
    .respond(new AIMessage('done'));
  const result = await createAgent({ model, tools: [bash], middleware: [middleware] }).invoke({ messages: [new HumanMessage('go')] });
  assert.equal(blobs.size, 1);
  assert.equal([...blobs.values()][0], LOG);
  assert.match(result.messages.find((m) => m.tool_call_id === 'c2').content, /2718\tFAILED tests\/test_price\.py/);
});

test('stacks with contextEditingMiddleware listed after it: clearing sees the compressed request, the state keeps everything', async () => {
  const { ClearToolUsesEdit, contextEditingMiddleware } = await import('langchain');
  const clearing = contextEditingMiddleware({
    edits: [new ClearToolUsesEdit({ trigger: { tokens: 500 }, keep: { messages: 1 }, excludeTools: ['read_spill', 'grep_spill'] })],
  });
  const reports = [];
  const model = fakeModel()
    .respondWithTools([{ name: 'bash', args: { command: 'pytest -v' }, id: 'call-1' }])
    .respondWithTools([{ name: 'bash', args: { command: 'pytest -x' }, id: 'call-2' }])
    .respond((messages) => new AIMessage({
      content: '',
      tool_calls: [{ id: 'call-3', name: 'grep_spill', args: { pointer: POINTER.exec(seenText(messages))[0], pattern: 'KeyError', context: 0 }, type: 'tool_call' }],
    }))
    .respond(new AIMessage('done'));
  const agent = createAgent({ model, tools: [bash], middleware: [traceliteMiddleware({ budget: 8000, onReport: (r) => reports.push(r) }), clearing] });
  const result = await agent.invoke({ messages: [new HumanMessage('Fix it.')] });
  assert.equal(result.messages.at(-1).content, 'done');
  // Third call: the older bash result was cleared by LangChain, the newer one is TraceLite's excerpt with its pointer.
  const third = model.calls[2].messages.filter((m) => m.type === 'tool');
  assert.equal(third[0].content, '[cleared]');
  assert.match(third[1].content, POINTER);
  // grep_spill read the spilled output back, and the agent's state was not edited by either middleware.
  assert.match(result.messages.find((m) => m.tool_call_id === 'call-3').content, /2718:FAILED tests\/test_price\.py/);
  assert.deepEqual(result.messages.filter((m) => m.type === 'tool' && m.name === 'bash').map((m) => m.content), [LOG, LOG]);
  assert.equal(reports.length, 4);
});

test('the call’s model decides: a text-only model gets no image part, a vision model gets snapshots', async () => {
  const { RENDER_ALL, chatWithLogs, pngCount } = await import('../../../tests/js/support/models.mjs');
  const { modelNameOf } = await import('../../../pkg/internal/framework.js');
  // Eight test runs as LangChain messages.
  const history = [];
  for (const m of chatWithLogs(8).messages) {
    if (m.role === 'user') history.push(new HumanMessage(m.content));
    else if (m.role === 'assistant') history.push(new AIMessage({ content: '', tool_calls: [{ id: m.tool_calls[0].id, name: 'bash', args: JSON.parse(m.tool_calls[0].function.arguments), type: 'tool_call' }] }));
    else history.push(new ToolMessage({ content: m.content, tool_call_id: m.tool_call_id }));
  }
  for (const [name, images] of [['deepseek-chat', false], ['llama-3.1-70b', false], ['gpt-4o', true], ['claude-sonnet-4-5', true]]) {
    const model = fakeModel().respond(new AIMessage('ok'));
    // As ChatOpenAI / ChatAnthropic name theirs.
    model.model = name;
    const reports = [];
    const agent = createAgent({ model, tools: [bash], middleware: [traceliteMiddleware({ ...RENDER_ALL, onReport: (r) => reports.push(r) })] });
    await agent.invoke({ messages: history });
    assert.equal(pngCount(model.calls[0].messages.map((m) => m.content)) > 0, images, `${name}`);
    assert.equal(reports[0].report.stages.find((s) => s.stage === 'optical').enabled, images, name);
  }
  // Model names as LangChain gives them.
  assert.equal(modelNameOf('openai:gpt-4o'), 'gpt-4o');
  assert.equal(modelNameOf('anthropic:claude-sonnet-4-5'), 'claude-sonnet-4-5');
  assert.equal(modelNameOf('llama3.1:70b'), 'llama3.1:70b');
  assert.equal(modelNameOf({ modelName: 'gpt-4.1' }), 'gpt-4.1');
  assert.equal(modelNameOf({ model: { model: 'gemini-2.5-pro' } }), 'gemini-2.5-pro');
  assert.equal(modelNameOf({}), undefined);
});

test('a conversation still over budget after every stage: onReport gets report.overBudget once per model call, one within it none', async () => {
  const reports = [];
  const middleware = traceliteMiddleware({ budget: 2000, onReport: (r) => reports.push(r.report) });
  const agent = createAgent({ model: fakeModel().respond(new AIMessage('ok')).respond(new AIMessage('ok')), tools: [], middleware: [middleware] });
  await agent.invoke({ messages: [new HumanMessage('hi'), new AIMessage('hello'), new HumanMessage(LOG)] });
  assert.equal(reports.length, 1);
  assert.equal(reports[0].overBudget.budget, 2000);
  assert.equal(reports[0].overBudget.largest, 'messages[2]');
  assert.ok(reports[0].overBudget.tokens > 2000);
  await agent.invoke({ messages: [new HumanMessage('hi')] });
  assert.equal(reports.length, 2);
  assert.equal(reports[1].overBudget, undefined);
});
