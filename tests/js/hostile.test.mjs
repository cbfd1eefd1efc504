// Hostile inputs through the wasm boundary: each gets a typed error or a correct
// result within the limits; never a wasm trap, never silent loss.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SpillStore, TraceLiteError, compress } from '../../pkg/node.js';

const call = (id, command) => ({ id, type: 'function', function: { name: 'bash', arguments: JSON.stringify({ command }) } });
const toolTurn = (id, output) => [
  { role: 'assistant', content: null, tool_calls: [call(id, `step ${id}`)] },
  { role: 'tool', tool_call_id: id, content: output },
];

function assertCode(fn, code, pathPrefix) {
  assert.throws(fn, (err) => {
    assert.ok(err instanceof TraceLiteError, String(err));
    assert.equal(err.code, code, err.message);
    if (pathPrefix) assert.ok(err.path.startsWith(pathPrefix), `${err.path} !~ ${pathPrefix}`);
    return true;
  });
}

/** Every tool call of the input is in the output, in order, with identical arguments. */
function assertCallsKept(input, output) {
  const calls = (r) => r.messages.flatMap((m) => (m.tool_calls ?? []).map((c) => `${c.id}:${c.function.arguments}`));
  assert.deepEqual(calls(output), calls(input));
}

test('a 1 MB single-line tool output compresses without loss', () => {
  const line = 'x'.repeat(1 << 20);
  const request = { messages: [{ role: 'user', content: 'go' }, ...toolTurn('a', line)] };
  const store = new SpillStore();
  const { request: out, report } = compress(request, { store, session: 'hostile' });
  assertCallsKept(request, out);
  assert.ok(report.tokensAfter <= report.tokensBefore);
  // Whatever was removed is readable back.
  for (const c of report.changes.filter((c) => c.pointer)) {
    const key = c.pointer.split('/').pop();
    assert.ok(store.get('hostile', key).includes('xxxx'));
  }
  store.free();
});

test('NUL, control characters, ANSI bombs, RTL overrides and zero-width characters survive', () => {
  const nasty = 'a\u0000b\u0007c\u001b[31;1;4mred\u001b[0m\u202Eevil\u200B\u200D\uFEFF' + '\u001b['.repeat(5000);
  const request = { messages: [{ role: 'user', content: nasty }, ...toolTurn('a', nasty)] };
  const { request: out } = compress(request);
  assert.equal(out.messages[0].content, nasty);
  assertCallsKept(request, out);
});

test('lone surrogates are a typed error, never silently replaced', () => {
  const text = JSON.stringify({ messages: [{ role: 'user', content: 'ok' }] }).replace('ok', 'ok\uD800');
  assertCode(() => compress(text), 'INVALID_REQUEST', 'request');
  assertCode(() => compress({ messages: [{ role: 'user', content: 'x\uDC00' }] }), 'INVALID_JSON');
});

test('numbers beyond i64/f64 are kept exactly', () => {
  const text = '{"messages":[{"role":"user","content":"hi"}],"seed":123456789012345678901234567890,"temperature":0.30000000000000004}';
  const { request } = compress(text, { format: 'openai-chat' });
  const back = compress(text).request;
  assert.deepEqual(request, back);
  // JSON.parse on the JS side rounds, but the emitted text inside wasm kept every digit:
  assert.equal(request.seed, JSON.parse(text).seed);
});

test('duplicate keys and deep nesting are typed errors with paths', () => {
  assertCode(() => compress('{"messages":[{"role":"user","role":"system","content":"x"}]}'), 'INVALID_REQUEST', 'messages[0]');
  const deep = `{"messages":[{"role":"user","content":"x"}],"metadata":${'['.repeat(10000)}${']'.repeat(10000)}}`;
  assertCode(() => compress(deep), 'LIMIT_EXCEEDED');
});

test('wrong types everywhere name the field', () => {
  assertCode(() => compress({ messages: 'hello' }, { format: 'openai-chat' }), 'INVALID_REQUEST', 'messages');
  assertCode(() => compress({ messages: [null] }), 'INVALID_REQUEST', 'messages[0]');
  assertCode(() => compress({ messages: [{ role: 5 }] }), 'INVALID_REQUEST', 'messages[0].role');
  assertCode(() => compress({ messages: [{ role: 'assistant', tool_calls: {} }] }), 'INVALID_REQUEST', 'messages[0].tool_calls');
  assertCode(() => compress({ messages: [{ role: 'assistant', tool_calls: [{ id: 1 }] }] }), 'INVALID_REQUEST', 'messages[0].tool_calls[0].id');
  assertCode(() => compress({ messages: [{ role: 'tool', tool_call_id: 'a', content: [{ type: 'text', text: 7 }] }] }), 'INVALID_REQUEST', 'messages[0].content[0].text');
  assertCode(() => compress({ messages: [] }, { optical: { ratio: -1 } }), 'INVALID_OPTION', 'optical.ratio');
  assertCode(() => compress({ messages: [] }, { limits: { maxDepth: 1e9 } }), 'INVALID_OPTION', 'limits.maxDepth');
});

test('10,000 steps compress within the message limit and keep every call', () => {
  const messages = [{ role: 'user', content: 'loop' }];
  for (let i = 0; i < 10000; i++) messages.push(...toolTurn(`c${i}`, `output ${i}\nline two of ${i}`));
  const request = { messages };
  const { request: out } = compress(request);
  assertCallsKept(request, out);
  assertCode(() => compress(request, { limits: { maxMessages: 1000 } }), 'LIMIT_EXCEEDED', 'limits.maxMessages');
});

test('a 100 MB tool output is refused by the byte limit, and accepted when the limit allows it', () => {
  const big = 'log line with some text 0123456789\n'.repeat(3_000_000); // ~105 MB
  const request = { messages: [{ role: 'user', content: 'go' }, ...toolTurn('a', big)] };
  assertCode(() => compress(request), 'LIMIT_EXCEEDED', 'limits.maxRequestBytes');
  const store = new SpillStore();
  const { request: out } = compress(request, { store, limits: { maxRequestBytes: 200 << 20 }, budget: 16000 });
  assertCallsKept(request, out);
  store.free();
});
