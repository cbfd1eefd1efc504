// Spilling through the built package: compress with a store and a session,
// report.spills, read/grep, the agent tools, isolation, quotas, TTL, rehydration.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  SPILL_TOOL_NAMES, SpillStore, TraceLiteError, compress, handleToolCall, isSpillTool, spillToolDefinitions,
} from '../../pkg/entries/node.js';

function log(n) {
  const lines = [];
  for (let i = 1; i <= n; i++) {
    if (i === n / 2) lines.push('Traceback (most recent call last):');
    else if (i === n / 2 + 3) lines.push('ValueError: boom');
    else lines.push(`line ${i}: collected item test_${i} passed in 0.${String(i).padStart(3, '0')}s`);
  }
  lines.push('== 1 failed, 2 passed ==');
  return lines.join('\n');
}

function request(output) {
  return {
    model: 'm',
    messages: [
      { role: 'user', content: 'run the tests' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'bash', arguments: '{"command":"pytest"}' } }] },
      { role: 'tool', content: output, tool_call_id: 'c1' },
    ],
  };
}

function throwsCode(fn, code) {
  assert.throws(fn, (err) => {
    assert.ok(err instanceof TraceLiteError, `expected TraceLiteError, got ${err}`);
    assert.equal(err.code, code, err.message);
    return true;
  });
}

test('compress spills a long tool output and the agent reads it back', () => {
  const output = log(20000);
  const store = new SpillStore();
  const { request: out, report, spills } = compress(request(output), { store, session: 's1', budget: 16000 });
  const excerpt = out.messages[2].content;
  assert.equal(report.spills.length, 1);
  const { pointer, key, session, lines } = report.spills[0];
  assert.equal(session, 's1');
  assert.deepEqual(spills, [{ session: 's1', key, text: output }]);
  assert.equal(lines, 20001);
  assert.ok(excerpt.includes(pointer), excerpt.slice(0, 400));
  assert.match(excerpt, /^\[output too long: 20001 lines, /);
  assert.ok(excerpt.includes('  10000: Traceback (most recent call last):'));
  assert.ok(excerpt.endsWith('== 1 failed, 2 passed =='));
  assert.equal(store.get('s1', key), output);

  // Page through it with the tool: every line back, in order.
  const got = [];
  let offset = 0;
  for (;;) {
    const reply = handleToolCall('read_spill', { pointer, offset, limit: 500 }, { store, session: 's1' });
    assert.equal(reply.isError, false, reply.text);
    for (const line of reply.text.split('\n').slice(1)) {
      const tab = line.indexOf('\t');
      if (tab >= 0) got.push(line.slice(tab + 1));
    }
    const next = /offset=(\d+) to continue/.exec(reply.text);
    if (!next) break;
    offset = Number(next[1]);
  }
  assert.equal(got.join('\n'), output);

  const grep = store.handleToolCall('grep_spill', JSON.stringify({ pointer, pattern: 'ValueError' }), 's1');
  assert.match(grep.text, /^spill:\/\/s1\/\S+: 1 matching lines of 20001/);
  assert.ok(grep.text.includes('\n10003:ValueError: boom\n'));

  const page = store.read('s1', key, 9999, 2);
  assert.deepEqual(page, { offset: 9999, count: 2, totalLines: 20001, totalBytes: output.length, nextOffset: 10001, text: 'Traceback (most recent call last):\nline 10001: collected item test_10001 passed in 0.10001s\n' });
  const found = store.grep('s1', key, 'test_1000\\d passed', { context: 0 });
  // Lines 10000 and 10003 are the traceback and the error.
  assert.equal(found.totalMatches, 8);
  assert.deepEqual(found.lines.map((l) => l.number), [10001, 10002, 10004, 10005, 10006, 10007, 10008, 10009]);
  throwsCode(() => store.grep('s1', key, 'bad('), 'INVALID_PATTERN');
  throwsCode(() => store.grep('s1', key, 'x', { bogus: 1 }), 'INVALID_OPTION');
});

test('the same history twice gives the same output and stores nothing new', () => {
  const store = new SpillStore();
  const opts = { store, session: 's1', budget: 16000 };
  const a = compress(request(log(8000)), opts);
  const b = compress(request(log(8000)), opts);
  assert.deepEqual(a.request, b.request);
  assert.equal(b.report.spills.length, 0);
  assert.equal(store.list('s1').length, 1);
});

test('sessions are isolated and keys validated', () => {
  const store = new SpillStore();
  store.put('alice', 'k1', 'secret');
  throwsCode(() => store.get('bob', 'k1'), 'SPILL_NOT_FOUND');
  throwsCode(() => store.get('alice', 'nope'), 'SPILL_NOT_FOUND');
  throwsCode(() => store.put('alice', '../bob/k1', 'x'), 'INVALID_SPILL_KEY');
  throwsCode(() => store.read('bob', 'k1'), 'SPILL_NOT_FOUND');
  const reply = store.handleToolCall('read_spill', { pointer: 'spill://alice/k1' }, 'bob');
  assert.equal(reply.isError, true);
  assert.ok(!reply.text.includes('secret'));
  throwsCode(() => store.handleToolCall('rm', {}, 'bob'), 'INVALID_TOOL_CALL');
});

test('a full store refuses explicitly, and the excerpt says so', () => {
  const store = new SpillStore({ maxSessionBytes: 1000 });
  const { request: out, report } = compress(request(log(20000)), { store, session: 's1', budget: 16000 });
  assert.match(out.messages[2].content, /\[full output could not be kept: the session's spill quota is full/);
  assert.equal(report.spills.length, 0);
  throwsCode(() => store.put('s1', 'k', 'x'.repeat(1001)), 'STORE_REFUSED');
  throwsCode(() => new SpillStore({ maxByts: 1 }), 'INVALID_OPTION');
});

test('least-recently-used sessions are evicted and the TTL sweeps by host time', () => {
  let now = 1000;
  const store = new SpillStore({ maxBytes: 300, ttlSeconds: 100, now: () => now });
  store.put('a', 'k', 'a'.repeat(100));
  store.put('b', 'k', 'b'.repeat(100));
  store.put('c', 'k', 'c'.repeat(100));
  store.get('a', 'k');
  store.put('d', 'k', 'd'.repeat(100));
  assert.deepEqual(store.usage().sessions, ['a', 'c', 'd']);
  now = 1050;
  store.get('d', 'k');
  assert.equal(store.sweep(1120), 2); // a and c were last used at 1000
  assert.deepEqual(store.usage().sessions, ['d']);
  assert.equal(store.evict('d'), 100);
  assert.equal(store.usage().totalBytes, 0);
});

test('the spills a compress call returns rehydrate a fresh store (e.g. from a KV store)', () => {
  const first = new SpillStore();
  const { report, spills } = compress(request(log(9000)), { store: first, session: 'kv', budget: 16000 });
  const persisted = JSON.parse(JSON.stringify(spills));
  const second = new SpillStore();
  assert.equal(second.rehydrate(persisted), 1);
  const reply = second.handleToolCall('grep_spill', { pointer: report.spills[0].pointer, pattern: 'Traceback' }, 'kv');
  assert.ok(reply.text.includes('4500:Traceback'), reply.text);
});

test('tool definitions in each provider format', () => {
  assert.deepEqual(SPILL_TOOL_NAMES, ['read_spill', 'grep_spill']);
  assert.ok(isSpillTool('grep_spill') && !isSpillTool('bash'));
  const chat = spillToolDefinitions();
  assert.equal(chat[0].type, 'function');
  assert.equal(chat[0].function.name, 'read_spill');
  assert.deepEqual(chat[1].function.parameters.required, ['pointer', 'pattern']);
  assert.equal(spillToolDefinitions('anthropic')[1].input_schema.type, 'object');
  assert.equal(spillToolDefinitions('openai-responses')[0].name, 'read_spill');
  throwsCode(() => spillToolDefinitions('cohere'), 'INVALID_OPTION');
});

test('spill() caps one text outside a conversation; the default store serves the tools', () => {
  const store = new SpillStore();
  const small = store.spill('short', { session: 's' });
  assert.deepEqual([small.spilled, small.text], [false, 'short']);
  const big = store.spill(log(20000), { session: 's', budget: 16000 });
  assert.equal(big.spilled, true);
  assert.ok(big.tokensAfter <= 4000 && big.tokensBefore > 100000);
  assert.ok(big.text.includes(big.pointer));
  const counted = store.spill(log(20000), { session: 's', budget: 16000, countTokens: (t) => Math.ceil(t.length / 4) });
  assert.ok(counted.text.length / 4 <= 4000);
  // handleToolCall(name, args, session) uses the store compress uses by default.
  const { report } = compress(request(log(9000)), { session: 'dflt', budget: 16000 });
  const reply = handleToolCall('read_spill', { pointer: report.spills[0].pointer, limit: 1 }, 'dflt');
  assert.match(reply.text, /lines 1-1 of 9001/);
});
