// With an outside spill store (KV), the proxy and the AI SDK middleware keep
// each session's caches in memory between turns: the previous request (so
// report.prefix measures prefix reuse) and rendered snapshots; of the spilled
// texts, only what `maxHeldBytes` allows (held-spills.test.mjs).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { trajectoryToRequest } from '../../pkg/entries/node.js';
import { createProxy } from '../../pkg/adapters/proxy/index.js';
import { traceliteMiddleware } from '../../pkg/adapters/ai-sdk/index.js';
import { mapStore } from './support/stores.mjs';

const root = new URL('../../', import.meta.url).pathname;
const sample = JSON.parse(readFileSync(join(root, 'tests/fixtures/sample-trajectory.json'), 'utf8'));
const OPTIONS = { budget: 16000, provider: 'openai' };

test('proxy with an outside store: the second turn of a session reuses its caches', async () => {
  const store = mapStore();
  const reports = [];
  const proxy = createProxy({
    upstream: 'http://upstream.test',
    options: OPTIONS,
    store,
    secret: 'cache-test-secret-0123456789abcdef0123',
    fetch: async () => new Response('{"ok":true}', { headers: { 'content-type': 'application/json' } }),
    onReport: ({ session, report }) => reports.push({ session, report }),
  });
  const turn = async (t, session) => {
    const body = JSON.stringify({ model: 'm', ...trajectoryToRequest(sample, t, 'openai-chat') });
    const res = await proxy(new Request('http://proxy.test/v1/chat/completions', {
      method: 'POST', headers: { 'content-type': 'application/json', 'x-tracelite-session': session }, body,
    }));
    assert.equal(res.status, 200);
    return reports.at(-1).report;
  };
  const first = await turn(sample.steps.length - 1, 'conv-a');
  assert.ok(first.spills.length > 0, 'the sample spills at a 16k budget');
  assert.equal(first.prefix, undefined, 'a first turn has no previous request');
  const second = await turn(sample.steps.length, 'conv-a');
  assert.ok(second.prefix && second.prefix.previousBytes > 0, 'the previous request was kept');
  assert.ok(second.prefix.sharedBytes > 0);
  // Another session starts cold.
  const other = await turn(sample.steps.length, 'conv-b');
  assert.equal(other.prefix, undefined);
  // Every spill of every turn is in the outside store.
  for (const { report } of reports) {
    for (const s of report.spills) assert.ok(store.data.has(`${s.session}/${s.key}`), s.pointer);
  }
});

test('AI SDK middleware with an outside store keeps the previous request per conversation', async () => {
  const store = mapStore();
  const reports = [];
  const mw = traceliteMiddleware({ ...OPTIONS, store, session: 'conv', onReport: ({ report }) => reports.push(report) });
  const prompt = (t) => trajectoryToRequest(sample, t, 'openai-chat').messages.map((m) => {
    if (m.role === 'tool') {
      return { role: 'tool', content: [{ type: 'tool-result', toolCallId: m.tool_call_id, toolName: 'bash', output: { type: 'text', value: m.content } }] };
    }
    if (m.role === 'assistant') {
      return {
        role: 'assistant',
        content: [
          ...(m.content ? [{ type: 'text', text: m.content }] : []),
          ...(m.tool_calls ?? []).map((c) => ({ type: 'tool-call', toolCallId: c.id, toolName: c.function.name, input: JSON.parse(c.function.arguments) })),
        ],
      };
    }
    return { role: m.role, content: m.role === 'system' ? m.content : [{ type: 'text', text: m.content }] };
  });
  await mw.transformParams({ params: { prompt: prompt(sample.steps.length - 1) }, type: 'generate' });
  await mw.transformParams({ params: { prompt: prompt(sample.steps.length) }, type: 'generate' });
  assert.equal(reports[0].prefix, undefined);
  assert.ok(reports[1].prefix && reports[1].prefix.previousBytes > 0);
  for (const r of reports) for (const s of r.spills) assert.ok(store.data.has(`${s.session}/${s.key}`));
});
