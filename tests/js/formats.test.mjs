// Provider formats through the built package: detection, conversion with the
// lossy list, validation errors with code and path, repair mode in compress.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  TraceLiteError, compress, convert, detectFormat, trajectoryToRequest, validateRequest,
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
