// Consistent errors (issue 50, item 7): through the public API, every error's
// message starts with its `path` (`budget: must be …`), and a value of the
// wrong type is named by what it is (`got a string`), for options, request
// shapes, the stateful API's arguments, the spill tools and handleToolCall.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  SpillStore, TraceLite, TraceLiteError, compress, convert, estimateTokens, handleToolCall, trajectoryToRequest, validateRequest,
} from '../../pkg/entries/node.js';
import { spillTools } from '../../pkg/adapters/openai-agents/index.js';

const chat = { messages: [{ role: 'user', content: 'hi' }] };
const call = { id: 'call_1', name: 'bash', arguments: { command: 'ls' } };
const trajectory = { task: 't', steps: [{ tool: 'bash', args: { command: 'ls' }, observation: 'a' }] };

/**
 * `[what, fn, code, path, got]`: `fn()` throws `code` at `path`, its message
 * starts with `path: ` and says `got <got>` (null: the message has nothing
 * to name, e.g. a member that is missing).
 */
const CASES = [
  // Options.
  ['a budget of the wrong type', () => compress(chat, { budget: 'lots' }), 'INVALID_OPTION', 'budget', 'the string "lots"'],
  ['a section that is not an object', () => compress(chat, { spill: 3 }), 'INVALID_OPTION', 'spill', '3'],
  ['options that are a string', () => compress(chat, 'fast'), 'INVALID_OPTION', 'options', 'a string'],
  ['a session that is a number', () => compress(chat, { session: 5 }), 'INVALID_OPTION', 'session', 'a number'],
  ['a counter that is not a function', () => compress(chat, { countTokens: 4 }), 'INVALID_OPTION', 'countTokens', 'a number'],
  ['repair that is not a boolean', () => validateRequest(chat, { repair: 'yes' }), 'INVALID_OPTION', 'repair', 'a string'],
  ['t that is negative', () => trajectoryToRequest(trajectory, -1), 'INVALID_OPTION', 't', '-1'],
  ['an unknown target format', () => convert(chat, 'nope'), 'UNKNOWN_FORMAT', 'to', '"nope"'],
  // The request and its messages.
  ['a request that is a number', () => compress(123), 'INVALID_REQUEST', 'request', 'a number'],
  ['a request that is null', () => compress(null), 'INVALID_REQUEST', 'request', 'null'],
  ['a request that is an array', () => compress([chat]), 'INVALID_REQUEST', 'request', 'an array'],
  ['messages that are a string', () => compress({ messages: 'hello' }), 'UNKNOWN_FORMAT', 'messages', 'a string'],
  ['messages that are a number', () => compress({ messages: 7 }), 'UNKNOWN_FORMAT', 'messages', '7'],
  ['messages that are null', () => compress({ messages: null }), 'UNKNOWN_FORMAT', 'messages', 'null'],
  ['messages a string in a named format', () => compress({ messages: 'hello' }, { format: 'openai-chat' }), 'INVALID_REQUEST', 'messages', 'a string'],
  ['messages of garbage', () => compress({ messages: [1, 'x'] }), 'INVALID_REQUEST', 'messages[0]', '1'],
  ['a message whose content is a number', () => compress({ messages: [{ role: 'user', content: 5 }] }), 'INVALID_REQUEST', 'messages[0].content', '5'],
  ['a message whose role is a number', () => compress({ messages: [{ role: 1, content: 'x' }] }), 'INVALID_REQUEST', 'messages[0].role', '1'],
  ['an Anthropic system that is a number', () => compress({ system: 5, messages: [{ role: 'user', content: 'x' }] }), 'INVALID_REQUEST', 'system', '5'],
  ['a Responses input that is a number', () => compress({ input: 5 }), 'UNKNOWN_FORMAT', 'input', '5'],
  ['Gemini contents that are an object', () => compress({ contents: {} }, { format: 'gemini' }), 'INVALID_REQUEST', 'contents', 'an object'],
  ['a tool call that is a number', () => compress({ messages: [{ role: 'user', content: 'x' }, { role: 'assistant', content: null, tool_calls: [5] }] }), 'INVALID_REQUEST', 'messages[1].tool_calls[0]', '5'],
  ['a tool call id that is a number', () => compress({ messages: [{ role: 'user', content: 'x' }, { role: 'assistant', content: null, tool_calls: [{ id: 1, type: 'function', function: { name: 'a', arguments: '{}' } }] }] }), 'INVALID_REQUEST', 'messages[1].tool_calls[0].id', '1'],
  ['tool call arguments that are an object', () => compress({ messages: [{ role: 'user', content: 'x' }, { role: 'assistant', content: null, tool_calls: [{ id: 'c', type: 'function', function: { name: 'a', arguments: {} } }] }] }), 'INVALID_REQUEST', 'messages[1].tool_calls[0].function.arguments', 'an object'],
  ['an Anthropic block type that is a number', () => compress({ system: 's', messages: [{ role: 'user', content: [{ type: 5 }] }] }), 'INVALID_REQUEST', 'messages[0].content[0].type', '5'],
  ['a Gemini role that is a number', () => compress({ contents: [{ role: 5, parts: [{ text: 'x' }] }] }), 'INVALID_REQUEST', 'contents[0].role', '5'],
  ['Responses instructions that are a number', () => compress({ input: 'x', instructions: 5 }), 'INVALID_REQUEST', 'instructions', '5'],
  ['a request with no conversation', () => compress({ model: 'x' }), 'UNKNOWN_FORMAT', '$', null],
  ['a text that is not a string', () => estimateTokens(5), 'INVALID_REQUEST', 'text', 'a number'],
  // The stateful API.
  ['TraceLite options that are a string', () => new TraceLite('fast'), 'INVALID_OPTION', 'options', 'a string'],
  ['processStep with a number as output', (tl) => tl.processStep(call, 123), 'INVALID_ARGUMENT', 'output', 'a number'],
  ['processStep with a boolean as output', (tl) => tl.processStep(call, true), 'INVALID_ARGUMENT', 'output', 'a boolean'],
  ['processStep with a string as call', (tl) => tl.processStep('bash ls', 'out'), 'INVALID_TOOL_CALL', 'toolCall', 'a string'],
  ['processStep with a nameless call', (tl) => tl.processStep({ name: 5 }, 'out'), 'INVALID_TOOL_CALL', 'toolCall.name', 'a number'],
  ['processStep with an id that is a number', (tl) => tl.processStep({ id: 4, name: 'bash' }, 'out'), 'INVALID_TOOL_CALL', 'toolCall.id', 'a number'],
  ['addMessage with a string', (tl) => tl.addMessage('hello'), 'INVALID_REQUEST', 'message', 'a string'],
  ['assemble in an unknown format', (tl) => tl.assemble('nope'), 'UNKNOWN_FORMAT', 'format', '"nope"'],
  ['assemble with a format that is a number', (tl) => tl.assemble(5), 'UNKNOWN_FORMAT', 'format', 'a number'],
  ['assemble with a base that is a number', (tl) => tl.assemble('openai-chat', 5), 'INVALID_REQUEST', 'base', 'a number'],
  ['pinConstraint with a number', (tl) => tl.pinConstraint(5), 'INVALID_OPTION', 'text', 'a number'],
  ['readSpill with a number', (tl) => tl.readSpill(5), 'INVALID_SPILL_KEY', 'pointer', 'a number'],
  // Spill stores, tools and handleToolCall.
  ['SpillStore options that are a number', () => new SpillStore(5), 'INVALID_OPTION', 'options', 'a number'],
  // The wasm's own last-guard checks name the argument and what it must be.
  ['a SpillStore read at a negative offset', (_, store) => store.read('s', 'k', -1), 'INVALID_ARGUMENT', 'offset', null],
  ['a SpillStore get with a number session', (_, store) => store.get(5, 'k'), 'INVALID_ARGUMENT', 'session', null],
  ['a SpillStore put of a number', (_, store) => store.put('s', 'k', 5), 'INVALID_REQUEST', 'text', 'a number'],
  ['rehydrate with an object', (_, store) => store.rehydrate({}), 'INVALID_REQUEST', 'spills', 'an object'],
  ['handleToolCall with a number as name', (_, store) => handleToolCall(5, {}, { store }), 'INVALID_REQUEST', 'name', 'a number'],
  ['handleToolCall with a number as where', () => handleToolCall('read_spill', {}, 5), 'INVALID_ARGUMENT', 'where', 'a number'],
  ['handleToolCall with a store that is not one', () => handleToolCall('read_spill', {}, { store: {} }), 'INVALID_OPTION', 'store', 'an object'],
  ['spillTools without a store', () => spillTools(null), 'INVALID_ARGUMENT', 'store', 'null'],
  ['spillTools with an object that cannot get', () => spillTools({}), 'INVALID_ARGUMENT', 'store', 'an object without get()'],
  ['spillTools with options that are a string', (_, store) => spillTools(store, 'sess'), 'INVALID_ARGUMENT', 'options', 'a string'],
  ['spillTools with a session that is a number', (_, store) => spillTools(store, { session: 5 }), 'INVALID_ARGUMENT', 'session', 'a number'],
];

test('each error starts with its path and says what it got', () => {
  const tl = new TraceLite();
  const store = new SpillStore();
  try {
    for (const [what, fn, code, path, got] of CASES) {
      let err;
      try {
        fn(tl, store);
      } catch (e) {
        err = e;
      }
      assert.ok(err instanceof TraceLiteError, `${what}: threw ${err}`);
      assert.equal(err.code, code, `${what}: ${err.message}`);
      assert.equal(err.path, path, `${what}: ${err.message}`);
      assert.ok(err.message.startsWith(`${path}: `), `${what}: "${err.message}" does not start with "${path}: "`);
      assert.ok(!err.message.startsWith(`${path}: ${path} `), `${what}: the path twice: ${err.message}`);
      if (got !== null) assert.ok(err.message.includes(`got ${got}`), `${what}: "${err.message}" does not say it got ${got}`);
    }
  } finally {
    tl.free();
    store.free();
  }
});

test('a message given without its path gets it; one that starts with it is kept', () => {
  assert.equal(new TraceLiteError('must be a string', 'INVALID_OPTION', 'session').message, 'session: must be a string');
  assert.equal(new TraceLiteError('session: must be a string', 'INVALID_OPTION', 'session').message, 'session: must be a string');
  assert.equal(new TraceLiteError('no path here', 'INVALID_OPTION').message, 'no path here');
  const back = TraceLiteError.from({ code: 'INVALID_OPTION', message: 'budget: must be positive', path: 'budget' });
  assert.equal(back.message, 'budget: must be positive');
});

test('processStep still takes text, an object or none as output', () => {
  const tl = new TraceLite();
  try {
    assert.equal(tl.processStep(call, 'text').step, 1);
    assert.equal(tl.processStep({ ...call, id: 'call_2' }, { ok: true }).step, 2);
    assert.equal(tl.processStep({ ...call, id: 'call_3' }, [1, 2]).step, 3);
    assert.equal(tl.processStep({ ...call, id: 'call_4' }).outputTokens, 0);
  } finally {
    tl.free();
  }
});
