// What the JS glue reads from the core instead of copying it (issue 20): spill
// limits, name and pointer checks, blob facts, content keys, FNV-1a, a request's
// opening. Each is checked against the core's own behaviour, not a copy of it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SpillStore, compress } from '../../pkg/entries/node.js';
import { fnv1a, requestOpening } from '../../pkg/wasm/tracelite.js';
import { checkName, parsePointer, readerLimits, readSpill } from '../../pkg/core/spill-reader.js';
import { facts, isContentKey, matchesKey, verified } from '../../pkg/internal/blob-keys.js';

test('spill limits are the core tools\' own: a page larger than the largest is cut to it', async () => {
  const limits = readerLimits();
  assert.deepEqual(Object.keys(limits).sort(), ['grepContext', 'grepMaxMatches', 'maxGrepContext', 'maxGrepMatches', 'maxReadLimit', 'readLimit']);
  const store = new SpillStore();
  const text = Array.from({ length: limits.maxReadLimit + 10 }, (_, i) => `line ${i}`).join('\n');
  store.put('s', 'big', text);
  const page = await readSpill(store, 'spill://s/big', { limit: limits.maxReadLimit * 5 });
  assert.equal(page.limit, limits.maxReadLimit);
  assert.equal(page.count, limits.maxReadLimit);
  assert.equal(page.nextOffset, limits.maxReadLimit);
  const first = await readSpill(store, 'spill://s/big');
  assert.equal(first.count, limits.readLimit);
  store.free();
});

test('names and pointers are checked by the core, with the offending part named', () => {
  assert.equal(checkName('session', 'ok-1.2_x'), 'ok-1.2_x');
  for (const [bad, what] of [['', 'key'], ['a/b', 'key'], ['..', 'session'], ['x'.repeat(129), 'key'], [42, 'key']]) {
    assert.throws(() => checkName(what, bad), { code: 'INVALID_SPILL_KEY', path: what });
  }
  assert.deepEqual(parsePointer('spill://s1/tool-abc'), { session: 's1', key: 'tool-abc' });
  assert.deepEqual(parsePointer('  tool-abc ', 's2'), { session: 's2', key: 'tool-abc' });
  assert.throws(() => parsePointer('tool-abc'), { code: 'INVALID_SPILL_KEY', path: 'pointer' });
  assert.throws(() => parsePointer('spill://s1/../x'), { code: 'INVALID_SPILL_KEY', path: 'key' });
  assert.throws(() => parsePointer(7), { code: 'INVALID_SPILL_KEY', path: 'pointer' });
});

test('blob facts agree with what the core\'s store reports, and content keys are its keys', () => {
  const store = new SpillStore();
  const output = `${'é'.repeat(3)}\nsecond line\n${'x'.repeat(30000)}\n`;
  const big = { messages: [
    { role: 'user', content: 'task' },
    { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'bash', arguments: '{"command":"cat"}' } }] },
    { role: 'tool', tool_call_id: 'c1', content: output },
  ] };
  const { spills, report } = compress(big, { store, session: 'f', budget: 8000 });
  assert.equal(spills.length, 1);
  const [{ key, text }] = spills;
  const listed = store.list('f').find((b) => b.key === key);
  const f = facts(text);
  assert.equal(f.bytes, new TextEncoder().encode(text).length);
  assert.equal(f.bytes, listed.bytes);
  assert.equal(f.lines, listed.lines);
  assert.equal(f.lines, report.spills[0].lines);
  assert.ok(isContentKey(key), key);
  assert.ok(key.endsWith(`-${f.hash}`) && matchesKey(key, f.hash));
  assert.ok(!matchesKey(key, facts(`${text}!`).hash));
  assert.ok(!isContentKey('my-notes') && matchesKey('my-notes', f.hash));
  assert.deepEqual([facts('').lines, facts('a').lines, facts('a\n').lines, facts('a\nb').lines], [0, 1, 1, 2]);
  return verified('f', key, `${text}!`).then(
    () => assert.fail('a forged text must not verify'),
    (err) => assert.equal(err.code, 'SPILL_CORRUPT'),
  ).finally(() => store.free());
});

test('FNV-1a is the published 64-bit function over UTF-8 bytes', () => {
  assert.equal(fnv1a(''), 'cbf29ce484222325');
  assert.equal(fnv1a('a'), 'af63dc4c8601ec8c');
  assert.equal(fnv1a('foobar'), '85944171f73967e8');
  let h = 0xcbf29ce484222325n;
  for (const b of new TextEncoder().encode('é∑😀')) h = ((h ^ BigInt(b)) * 0x100000001b3n) & 0xffffffffffffffffn;
  assert.equal(fnv1a('é∑😀'), h.toString(16).padStart(16, '0'));
});

test('a request\'s opening is the same on every later turn, in every format', () => {
  const turn1 = { model: 'm', messages: [{ role: 'system', content: 'be brief' }, { role: 'user', content: 'fix it' }] };
  const turn2 = { ...turn1, messages: [...turn1.messages, { role: 'assistant', content: 'ok' }, { role: 'user', content: 'more' }] };
  assert.equal(requestOpening(JSON.stringify(turn1)), requestOpening(JSON.stringify(turn2)));
  const other = { ...turn1, messages: [{ role: 'system', content: 'be brief' }, { role: 'user', content: 'another task' }] };
  assert.notEqual(requestOpening(JSON.stringify(turn1)), requestOpening(JSON.stringify(other)));
  const claude = { model: 'c', system: 'be brief', messages: [{ role: 'user', content: 'fix it' }, { role: 'assistant', content: 'ok' }] };
  const gemini = { contents: [{ role: 'user', parts: [{ text: 'fix it' }] }, { role: 'model', parts: [{ text: 'ok' }] }] };
  for (const r of [claude, gemini]) {
    const opening = JSON.parse(requestOpening(JSON.stringify(r)));
    assert.equal(opening.at(-1).role, 'user');
  }
  assert.throws(() => requestOpening('{"nope": 1}'), { code: 'UNKNOWN_FORMAT' });
});
