// Issue 39 item 8: arguments the entry points cannot use are typed errors
// (a stable `code`, the offending field as `path`), never a plain TypeError
// or a silent fallback.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SpillStore, compress } from '../../pkg/entries/node.js';
import { spillTools as aiSpillTools, toChatRequest } from '../../pkg/adapters/ai-sdk/index.js';
import { spillTools as lcSpillTools, toChatMessages } from '../../pkg/adapters/langchain/index.js';
import { spillTools as agentsSpillTools, toResponsesRequest } from '../../pkg/adapters/openai-agents/index.js';

const typed = (code, path) => (err) => err?.name === 'TraceLiteError' && err.code === code && err.path === path;

test('compress({ session }) of a function, object or null is INVALID_OPTION, not the shared session "default"', () => {
  const request = { model: 'm', messages: [{ role: 'user', content: 'hi' }] };
  const store = new SpillStore();
  try {
    for (const session of [() => 'a', { name: 'a' }, null, 5]) {
      assert.throws(() => compress(request, { session, store }), typed('INVALID_OPTION', 'session'), String(session));
    }
    assert.equal(typeof compress(request, { session: 'a', store }).request, 'object');
  } finally {
    store.free();
  }
});

test('the adapters\' entry points answer bad arguments with INVALID_ARGUMENT naming the argument', () => {
  for (const bad of [undefined, null, 5, 'x', {}]) {
    assert.throws(() => toChatRequest(bad), typed('INVALID_ARGUMENT', 'prompt'));
    assert.throws(() => toChatMessages(bad), typed('INVALID_ARGUMENT', 'messages'));
    assert.throws(() => toResponsesRequest(bad), typed('INVALID_ARGUMENT', 'input'));
    for (const spillTools of [aiSpillTools, lcSpillTools, agentsSpillTools]) {
      assert.throws(() => spillTools(bad), typed('INVALID_ARGUMENT', 'store'));
    }
  }
});
