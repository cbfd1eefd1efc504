// Provider formats through the built package: detection, conversion with the
// lossy list, validation errors with code and path, repair mode in compress.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  TraceLiteError, compress, convert, detectFormat, requestConversation, trajectoryToRequest, validateRequest,
} from '../../pkg/entries/node.js';

const root = new URL('../../', import.meta.url).pathname;
const FORMATS = ['openai-chat', 'openai-responses', 'anthropic', 'gemini'];
const fixture = (f) => JSON.parse(readFileSync(join(root, `tests/fixtures/formats/${f}.json`), 'utf8'));
const sample = JSON.parse(readFileSync(join(root, 'tests/fixtures/sample-trajectory.json'), 'utf8'));

function throwsCode(fn, code, path) {
  assert.throws(fn, (err) => {
    assert.ok(err instanceof TraceLiteError, `expected TraceLiteError, got ${err}`);
    assert.equal(err.code, code, err.message);
    if (path !== undefined) assert.equal(err.path, path, err.message);
    return true;
  });
}

test('every fixture is detected and compresses to itself with stages off', () => {
  const off = { enabled: false };
  for (const format of FORMATS) {
    const request = fixture(format);
    assert.equal(detectFormat(request), format);
    const { request: out, report } = compress(request, {
      spill: off, dedup: off, phase: off, optical: off, compact: off,
    });
    assert.equal(report.format, format);
    assert.deepEqual(out, request);
  }
});

test('the sample trajectory renders, compresses and round-trips in every format', () => {
  for (const format of FORMATS) {
    const request = trajectoryToRequest(sample, sample.steps.length, format);
    assert.equal(detectFormat(request), format);
    const { request: out, report } = compress(request, { format, budget: 16000, session: `fmt-${format}` });
    assert.equal(report.format, format);
    assert.ok(report.tokensAfter <= report.tokensBefore);
    assert.equal(validateRequest(out, { format }).repairs.length, 0);
  }
});

test('Anthropic requests get cache_control at the stable prefix, the end and after the task (at most 4)', () => {
  const request = trajectoryToRequest(sample, sample.steps.length, 'anthropic');
  const marks = (v, path = '') => (Array.isArray(v)
    ? v.flatMap((x, i) => marks(x, `${path}[${i}]`))
    : v && typeof v === 'object'
      ? Object.entries(v).flatMap(([k, x]) => (k === 'cache_control' ? [path] : []).concat(marks(x, `${path}.${k}`)))
      : []);
  const { request: out, report } = compress(request, { session: 'bp' });
  assert.ok(report.stableMessages > 0 && report.stableMessages < out.messages.length, String(report.stableMessages));
  assert.equal(report.cacheBreakpoint, report.stableMessages - 1);
  assert.deepEqual(report.cacheBreakpoints, [report.stableMessages - 1, out.messages.length - 1, 0]);
  assert.equal(marks(out).length, 3);
  for (const at of report.cacheBreakpoints) {
    assert.ok(marks(out).some((m) => m.startsWith(`.messages[${at}].content[`)), `${at}: ${marks(out)}`);
  }
  assert.deepEqual(out.messages[report.cacheBreakpoint].content.at(-1).cache_control, { type: 'ephemeral' });
  const plain = compress(request, { session: 'bp', cacheBreakpoint: false });
  assert.equal(plain.report.cacheBreakpoint, undefined);
  assert.equal(marks(plain.request).length, 0);
  assert.throws(() => compress(request, { cacheBreakpoint: 'yes' }), (e) => e.code === 'INVALID_OPTION' && /cacheBreakpoint/.test(e.message));
});

test('convert lists what the target cannot carry', () => {
  const { from, to, request, lossy } = convert(fixture('anthropic'), 'openai-chat');
  assert.equal(from, 'anthropic');
  assert.equal(to, 'openai-chat');
  assert.equal(detectFormat(request), 'openai-chat');
  const paths = lossy.map((l) => l.path);
  assert.ok(paths.includes('messages[1].content[0]'), paths.join());
  assert.ok(paths.includes('system[1].cache_control'), paths.join());
  const back = convert(request, 'anthropic', { from: 'openai-chat' });
  assert.equal(back.request.messages[1].content[1].type, 'tool_use');
  throwsCode(() => convert(fixture('gemini'), 'cohere'), 'UNKNOWN_FORMAT', 'to');
  throwsCode(() => convert('{"prompt": 1}', 'gemini'), 'UNKNOWN_FORMAT');
  throwsCode(() => convert('{nope', 'gemini'), 'INVALID_JSON');
});

test('validation errors carry a specific code and the JSON path', () => {
  const orphan = { messages: [{ role: 'user', content: 'hi' }, { role: 'tool', tool_call_id: 'x', content: 'y' }] };
  throwsCode(() => validateRequest(orphan), 'ORPHAN_TOOL_RESULT', 'messages[1].tool_call_id');
  throwsCode(() => compress(orphan), 'ORPHAN_TOOL_RESULT', 'messages[1].tool_call_id');
  const missing = { contents: [
    { role: 'model', parts: [{ functionCall: { name: 'f' } }] },
    { role: 'user', parts: [{ text: 'and?' }] },
  ] };
  throwsCode(() => validateRequest(missing), 'MISSING_TOOL_RESULT', 'contents[0].parts[0]');
  throwsCode(() => validateRequest({ input: [{ type: 'function_call', call_id: 1 }] }), 'INVALID_REQUEST', 'input[0].call_id');
  throwsCode(() => validateRequest(orphan, { repair: 'yes' }), 'INVALID_OPTION', 'repair');
});

test('repair mode fixes and reports, in validateRequest and in compress', () => {
  const orphan = { messages: [{ role: 'user', content: 'hi' }, { role: 'tool', tool_call_id: 'x', content: 'y' }] };
  const fixed = validateRequest(orphan, { repair: true });
  assert.deepEqual(fixed.repairs.map((r) => [r.code, r.path]), [['ORPHAN_TOOL_RESULT', 'messages[1].tool_call_id']]);
  assert.equal(fixed.request.messages[1].role, 'user');
  const { request, report } = compress(orphan, { repair: true });
  assert.equal(report.repairs[0].code, 'ORPHAN_TOOL_RESULT');
  assert.deepEqual(request, fixed.request);
});

/** The request's own list of messages of each format. */
const LIST = { 'openai-chat': 'messages', 'openai-responses': 'input', anthropic: 'messages', gemini: 'contents' };

test('requestConversation: the neutral conversation, each message at its index in the request (what report.changes names)', () => {
  for (const format of FORMATS) {
    const request = trajectoryToRequest(sample, sample.steps.length, format);
    const { request: out, report } = compress(request, { format, budget: 16000, session: `neutral-${format}` });
    const conv = requestConversation(out, { format });
    assert.equal(conv.format, format);
    assert.equal(requestConversation(JSON.stringify(out)).format, format, 'detected when not given');
    const list = out[LIST[format]];
    const indices = conv.messages.map((m) => m.index);
    assert.deepEqual(indices, [...indices].sort((a, b) => a - b), `${format}: in request order`);
    assert.ok(indices.every((i) => Number.isInteger(i) && i >= 0 && i < list.length), format);
    // Every call of the request is a tool_call part of the message at its index, with the same id.
    const calls = conv.messages.flatMap((m) => m.parts.filter((p) => p.type === 'tool_call').map((p) => ({ id: p.id, at: m.index })));
    assert.ok(calls.length >= sample.steps.length, `${format}: ${calls.length} calls`);
    for (const { id, at } of calls) assert.ok(JSON.stringify(list[at]).includes(JSON.stringify(id)), `${format}: call ${id} at ${LIST[format]}[${at}]`);
    // The changes of the report name messages the conversation has.
    const known = new Set(indices);
    for (const c of report.changes) assert.ok(known.has(c.message), `${format}: change at ${c.message}`);
    assert.ok(conv.system.length > 0 && conv.system[0].parts.some((p) => p.type === 'text'), `${format}: the system prompt`);
  }
  // Leading system messages of Chat Completions are the system prompt: the first message after them is at its index.
  const chat = { model: 'm', messages: [{ role: 'system', content: 'a' }, { role: 'developer', content: 'b' }, { role: 'user', content: 'hi' }] };
  const conv = requestConversation(chat);
  assert.deepEqual(conv.system.map((m) => m.role), ['system', 'developer']);
  assert.deepEqual(conv.messages.map((m) => [m.role, m.index, m.parts[0].text]), [['user', 2, 'hi']]);
  throwsCode(() => requestConversation(chat, { format: 'nope' }), 'UNKNOWN_FORMAT', 'format');
  // The core's strict parser: a duplicate key is refused, as compress refuses it.
  throwsCode(() => requestConversation('{"model":"m","messages":[],"messages":[]}'), 'INVALID_REQUEST');
});
