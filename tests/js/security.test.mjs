// Issue 16 through the built package: grep cost, wrong types at the wasm
// boundary (no trap, no leak), wrapping numbers, lone surrogates, counters
// and option bombs. Key forging against KV is in pkg-config/adapters/kv-store/kv-store.test.mjs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  SpillStore, TraceLite, TraceLiteError, compress, estimateTokens, handleToolCall, wasmMemoryBytes,
} from '../../pkg/entries/node.js';
import { grepLines, grepSpill } from '../../pkg/core/spill-reader.js';

function assertCode(fn, code, path) {
  assert.throws(fn, (err) => {
    assert.ok(err instanceof TraceLiteError, `${err?.name}: ${err?.message}`);
    assert.equal(err.code, code, err.message);
    if (path !== undefined) assert.equal(err.path, path, err.message);
    return true;
  });
}

/** 100 KB of log lines without an `x`. */
const log100k = () => {
  let text = '';
  for (let i = 0; text.length < 100_000; i++) text += `INFO worker-${i} processed request status=200 in 12ms\n`;
  return text;
};

test('grep: (.*){99}x over 100 KB fails fast with GREP_TOO_COSTLY, in every entry', async () => {
  const store = new SpillStore();
  const text = log100k();
  store.put('x', 'k', text);
  let started = performance.now();
  assertCode(() => store.grep('x', 'k', '(.*){99}x'), 'GREP_TOO_COSTLY', 'pattern');
  assert.ok(performance.now() - started < 1000, `${performance.now() - started} ms (was 12 s)`);
  // The agent's tool: an error reply naming the limit, not a stall.
  started = performance.now();
  const reply = store.handleToolCall('grep_spill', { pointer: 'spill://x/k', pattern: '(.*){99}x' }, 'x');
  assert.ok(reply.isError && reply.text.includes('maxGrepCost'), reply.text);
  assert.ok(performance.now() - started < 1000);
  // A store outside wasm (KV, yours) searched through the reader, and a text in hand.
  const outside = { get: async () => text };
  await assert.rejects(grepSpill(outside, 'spill://x/k', '(.*){99}x'), (e) => e.code === 'GREP_TOO_COSTLY');
  assertCode(() => grepLines(text, '(.*){99}x'), 'GREP_TOO_COSTLY');
  // Ordinary searches still work; the limit is a setting of the store and of a call.
  assert.equal(store.grep('x', 'k', 'status=\\d+', { maxMatches: 1 }).totalMatches, text.split('\n').length - 1);
  assertCode(() => store.grep('x', 'k', '\\w+', { maxCost: 1000 }), 'GREP_TOO_COSTLY');
  const strict = new SpillStore({ maxGrepCost: 1000 });
  strict.put('x', 'k', text);
  assertCode(() => strict.grep('x', 'k', '\\w+'), 'GREP_TOO_COSTLY');
  assert.equal(strict.usage().limits.maxGrepCost, 1000);
  assert.equal(strict.grep('x', 'k', 'status', { literal: true, maxMatches: 1 }).returned, 1);
  strict.free();
  store.free();
});

/** Calls `fn`; it must return or throw a TraceLiteError — never a trap or another error. */
function survives(fn, label, failures) {
  try {
    fn();
  } catch (err) {
    if (!(err instanceof TraceLiteError)) failures.add(`${label}: ${err?.name}: ${err?.message}`);
  }
}

const BAD = [5, -1, 2 ** 40, NaN, null, {}, [], true, 10n, () => 1, new Uint8Array(3)];

test('every method of SpillStore and TraceLite given wrong types: typed errors, no trap, no leak', () => {
  const store = new SpillStore();
  store.put('a', 'k', 'one\ntwo\n');
  assertCode(() => store.get('a', 5), 'INVALID_ARGUMENT', 'key');
  assertCode(() => store.get(5, 'k'), 'INVALID_ARGUMENT', 'session');
  assertCode(() => store.contains('a', {}), 'INVALID_ARGUMENT', 'key');
  assertCode(() => store.delete(null, 'k'), 'INVALID_ARGUMENT', 'session');
  assertCode(() => store.list(7), 'INVALID_ARGUMENT', 'session');
  assertCode(() => store.evict([]), 'INVALID_ARGUMENT', 'session');
  assertCode(() => store.read('a', 'k', 'zero'), 'INVALID_ARGUMENT', 'offset');
  assertCode(() => store.read('a', 'k', 0, -3), 'INVALID_ARGUMENT', 'limit');
  assertCode(() => store.sweep('now'), 'INVALID_ARGUMENT', 'now');
  const session = new TraceLite();
  const calls = {
    get: (v) => store.get('a', v),
    put: (v) => store.put(v, 'k2', 'text'),
    putText: (v) => store.put('a', 'k3', v),
    contains: (v) => store.contains(v, 'k'),
    list: (v) => store.list(v),
    delete: (v) => store.delete('a', v),
    read: (v) => store.read('a', 'k', v, 10),
    readLimit: (v) => store.read('a', 'k', 0, v),
    grep: (v) => store.grep('a', 'k', v),
    grepOptions: (v) => store.grep('a', 'k', 'one', v),
    evict: (v) => store.evict(v),
    sweep: (v) => store.sweep(v),
    rehydrate: (v) => store.rehydrate(v),
    handleToolCall: (v) => store.handleToolCall(v, {}, 'a'),
    handleToolCallSession: (v) => store.handleToolCall('read_spill', { pointer: 'k' }, v),
    spill: (v) => store.spill(v),
    spillOptions: (v) => store.spill('text', v),
    processStep: (v) => session.processStep(v, 'out'),
    processStepOutput: (v) => {
      // Outputs of any type are recorded (as JSON): a fresh session, so nothing accumulates.
      const fresh = new TraceLite();
      try {
        fresh.processStep({ id: 'c', name: 'bash' }, v);
      } finally {
        fresh.free();
      }
    },
    addMessage: (v) => session.addMessage(v),
    assemble: (v) => session.assemble(v),
    assembleBase: (v) => session.assemble('openai-chat', v),
    pinConstraint: (v) => session.pinConstraint(v),
    readSpill: (v) => session.readSpill(v),
    estimateTokens: (v) => estimateTokens(v),
    handleToolCallFn: (v) => handleToolCall('read_spill', { pointer: 'k' }, { store, session: v }),
    construct: (v) => new TraceLite(v).free(),
    constructOption: (v) => new TraceLite({ budget: v }).free(),
    compress: (v) => compress(v),
    compressOption: (v) => compress({ messages: [{ role: 'user', content: 'x' }] }, { budget: v, store }),
    storeOption: (v) => new SpillStore({ maxBytes: v }).free(),
  };
  // Warm up (first calls allocate caches), then measure.
  const failures = new Set();
  for (const [name, call] of Object.entries(calls)) for (const v of BAD) survives(() => call(v), name, failures);
  assert.deepEqual([...failures], []);
  const before = wasmMemoryBytes();
  for (let round = 0; round < 20; round++) {
    for (const [name, call] of Object.entries(calls)) for (const v of BAD) survives(() => call(v), name, failures);
  }
  assert.deepEqual([...failures], []);
  assert.equal(wasmMemoryBytes(), before, 'wasm memory grew');
  assert.ok(before < 256 << 20, `${before} bytes of wasm memory`);
  // Everything still works afterwards (`sweep(2 ** 40)` legitimately expired every session).
  store.put('a', 'k', 'one\ntwo\n');
  store.put('a', 'later', 'fine\n');
  assert.equal(store.get('a', 'later'), 'fine\n');
  assert.equal(store.read('a', 'k', 1, 1).text, 'two\n');
  session.addMessage({ role: 'user', content: 'hi' });
  assert.equal(session.assemble().messages.length, 1);
  const { request } = compress({ messages: [{ role: 'user', content: 'still works' }] });
  assert.equal(request.messages[0].content, 'still works');
  session.free();
  store.free();
});

test('read offsets never wrap modulo 2^32', () => {
  const store = new SpillStore();
  store.put('s', 'k', 'l1\nl2\nl3\nl4\nl5\nl6\n');
  const page = store.read('s', 'k', 2 ** 32 + 5, 1);
  assert.equal(page.count, 0, `offset 2^32+5 read ${JSON.stringify(page.text)}`);
  assert.equal(page.offset, 6);
  assert.equal(store.read('s', 'k', 5, 1).text, 'l6\n');
  assertCode(() => store.read('s', 'k', 2 ** 53, 1), 'INVALID_ARGUMENT', 'offset');
  assertCode(() => store.read('s', 'k', 1.5, 1), 'INVALID_ARGUMENT', 'offset');
  store.free();
});

test('limits.maxRequestBytes: -1 is INVALID_OPTION, not LIMIT_EXCEEDED', () => {
  const request = { messages: [{ role: 'user', content: 'hi' }] };
  assertCode(() => compress(request, { limits: { maxRequestBytes: -1 } }), 'INVALID_OPTION', 'limits.maxRequestBytes');
  assertCode(() => compress(request, { limits: { maxRequestBytes: 'big' } }), 'INVALID_OPTION', 'limits.maxRequestBytes');
  assertCode(() => compress(request, { limits: { maxRequestBytes: 3 } }), 'LIMIT_EXCEEDED', 'limits.maxRequestBytes');
});

test('a lone surrogate names its field; in a tool output it becomes U+FFFD', () => {
  const call = { id: 'c1', type: 'function', function: { name: 'bash', arguments: '{}' } };
  const request = {
    messages: [
      { role: 'user', content: 'go' },
      { role: 'assistant', content: null, tool_calls: [call] },
      { role: 'tool', tool_call_id: 'c1', content: 'binary \uD800 junk \uDFFF end' },
      { role: 'user', content: 'and then?' },
    ],
  };
  for (const input of [request, JSON.stringify(request).replace('\\ud800', '\uD800')]) {
    const { request: out } = compress(input);
    assert.equal(out.messages[2].content, 'binary \uFFFD junk \uFFFD end');
    assert.equal(out.messages[3].content, 'and then?');
  }
  const bad = structuredClone(request);
  bad.messages[3].content = 'user text \uDC00';
  assertCode(() => compress(bad), 'INVALID_REQUEST', 'messages[3].content');
  assertCode(() => compress(JSON.stringify(bad).replace('\\udc00', '\uDC00')), 'INVALID_REQUEST', 'messages[3].content');
});

test('countTokens returning ≥ 2^64, NaN, negative or a non-number is COUNTER_FAILED; fractions round up', () => {
  const request = { messages: [{ role: 'user', content: 'hello there' }] };
  for (const value of [2 ** 64, 2 ** 40, NaN, -1, Infinity, 'five', undefined]) {
    assertCode(() => compress(request, { countTokens: () => value }), 'COUNTER_FAILED', 'countTokens');
  }
  const { report } = compress(request, { countTokens: () => 1.2 });
  assert.ok(report.tokensBefore >= 2 && report.tokensBefore < 100, `${report.tokensBefore}`);
});

test('10,000 spill.errorPatterns are refused at once (limits.maxErrorPatterns)', () => {
  const errorPatterns = Array.from({ length: 10_000 }, (_, i) => `error${i}`);
  const started = performance.now();
  assertCode(() => compress({ messages: [{ role: 'user', content: 'x' }] }, { spill: { errorPatterns } }), 'LIMIT_EXCEEDED', 'spill.errorPatterns');
  assert.ok(performance.now() - started < 1000, `${performance.now() - started} ms (was 168 s)`);
});
