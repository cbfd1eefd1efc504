// Hostile inputs through the wasm boundary: each gets a typed error or a correct
// result within the limits; never a wasm trap, never silent loss.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SpillStore, TraceLiteError, compress, convert, validateRequest, wasmMemoryBytes } from '../../pkg/entries/node.js';

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

test('lone surrogates outside tool outputs are a typed error naming the field (security.test.mjs: tool outputs)', () => {
  const text = JSON.stringify({ messages: [{ role: 'user', content: 'ok' }] }).replace('ok', 'ok\uD800');
  assertCode(() => compress(text), 'INVALID_REQUEST', 'messages[0].content');
  assertCode(() => compress({ messages: [{ role: 'user', content: 'x\uDC00' }] }), 'INVALID_REQUEST', 'messages[0].content');
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
  const { request: out } = compress(request, { compact: { enabled: false } });
  assertCallsKept(request, out);
  // With compaction on (the default), old pairs become a summary; the kept tail has no orphans.
  const { request: compacted, report } = compress(request);
  assert.ok(report.tokensAfter < report.tokensBefore);
  const ids = new Set(compacted.messages.flatMap((m) => (m.tool_calls ?? []).map((c) => c.id)));
  for (const m of compacted.messages.filter((m) => m.role === 'tool')) assert.ok(ids.has(m.tool_call_id), m.tool_call_id);
  assertCode(() => compress(request, { limits: { maxMessages: 1000 } }), 'LIMIT_EXCEEDED', 'limits.maxMessages');
});

test('a 100 MB tool output is refused by the byte limit, and accepted when the limit allows it', () => {
  const big = 'log line with some text 0123456789\n'.repeat(3_000_000); // ~105 MB
  const request = { messages: [{ role: 'user', content: 'go' }, ...toolTurn('a', big)] };
  const wasmBefore = wasmMemoryBytes();
  assertCode(() => compress(request), 'LIMIT_EXCEEDED', 'limits.maxRequestBytes');
  // Refused before the text is copied into wasm memory (which never shrinks).
  assert.equal(wasmMemoryBytes(), wasmBefore);
  const store = new SpillStore();
  const { request: out } = compress(request, { store, limits: { maxRequestBytes: 200 << 20 }, budget: 16000 });
  assertCallsKept(request, out);
  store.free();
});

/** A PNG signature and IHDR chunk claiming w×h (no image data follows). */
function pngHeader(w, h) {
  const b = Buffer.alloc(33);
  Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13]).copy(b, 0);
  b.write('IHDR', 12, 'latin1');
  b.writeUInt32BE(w, 16);
  b.writeUInt32BE(h, 20);
  b[24] = 8;
  return b.toString('base64');
}

/** The same user image in each format, with the JSON path of its data field. */
const imageRequests = (data) => [
  [{ messages: [{ role: 'user', content: [{ type: 'text', text: 'see' }, { type: 'image_url', image_url: { url: `data:image/png;base64,${data}` } }] }] }, 'messages[0].content[1].image_url.url'],
  [{ input: [{ role: 'user', content: [{ type: 'input_image', image_url: `data:image/png;base64,${data}` }] }] }, 'input[0].content[0].image_url'],
  [{ max_tokens: 5, messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'base64', media_type: 'image/png', data } }] }] }, 'messages[0].content[0].source.data'],
  [{ contents: [{ role: 'user', parts: [{ inline_data: { mime_type: 'image/png', data } }] }] }, 'contents[0].parts[0].inline_data.data'],
];

function assertError(fn, code, path, messagePart) {
  assert.throws(fn, (err) => {
    assert.ok(err instanceof TraceLiteError, String(err));
    assert.equal(err.code, code, err.message);
    assert.equal(err.path, path, err.message);
    assert.ok(err.message.includes(messagePart), err.message);
    return true;
  });
}

test('a 50-megapixel-plus image part is LIMIT_EXCEEDED naming the part and limits.maxImagePixels', () => {
  for (const [request, path] of imageRequests(pngHeader(8000, 7000))) {
    assertError(() => compress(request), 'LIMIT_EXCEEDED', path, 'limits.maxImagePixels');
  }
  // validateRequest applies the default limit; convert rejects only invalid base64.
  for (const [request, path] of imageRequests(pngHeader(8000, 7000))) {
    assertError(() => validateRequest(request), 'LIMIT_EXCEEDED', path, 'limits.maxImagePixels');
  }
  // Just under the limit (7071² = 49,999,041 px) passes unchanged, and the limit is a setting.
  const under = pngHeader(7071, 7071);
  for (const [request, path] of imageRequests(under)) {
    assert.ok(JSON.stringify(compress(request).request).includes(under));
    assertError(() => compress(request, { limits: { maxImagePixels: 1_000_000 } }), 'LIMIT_EXCEEDED', path, path);
  }
});

test('invalid base64 in an image part is INVALID_REQUEST naming the field, in every format', () => {
  for (const bad of ['iVBORw0K GgoAAAA', 'iVBORw0KGgo!', 'iVBORw0KG', 'iV=BORw0', '']) {
    for (const [request, path] of imageRequests(bad)) {
      assertError(() => compress(request), 'INVALID_REQUEST', path, 'image data');
      assertError(() => validateRequest(request), 'INVALID_REQUEST', path, 'image data');
      assertError(() => convert(request, 'gemini'), 'INVALID_REQUEST', path, 'image data');
    }
  }
});

test('image parts of unknown format and image URLs pass through', () => {
  const notAnImage = Buffer.from('plain text, not an image').toString('base64');
  for (const [request] of imageRequests(notAnImage)) {
    assert.ok(JSON.stringify(compress(request).request).includes(notAnImage));
  }
  const url = { messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://example.com/x.png' } }] }] };
  assert.deepEqual(compress(url).request, url);
});
