// Issue 48: behind the proxy, the model a request names decides whether its
// snapshots go: the body's `model` (OpenAI Chat and Responses, Anthropic), the
// path's (Gemini `…/models/<model>:generateContent`), or the proxy's options.
// createProxy in Node in front of a stub provider on 127.0.0.1 that records
// what it received.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { createProxy } from '../../../pkg/adapters/proxy/index.js';
import { pathModel } from '../../../pkg/adapters/proxy/prepare.js';
import { startUpstream } from '../../../tests/js/support/hosts.mjs';
import { RENDER_ALL, chatWithLogs, pngCount, testLog } from '../../../tests/js/support/models.mjs';

let upstream;

before(async () => {
  upstream = await startUpstream(() => ({ headers: { 'content-type': 'application/json' }, chunks: ['{"choices":[{"message":{"content":"ok"}}]}'] }));
});

after(async () => {
  await upstream?.close();
});

/** What the stub received for one POST of `body` to `path` through a proxy with `options`. */
async function forwarded(path, body, options = {}) {
  const proxy = createProxy({ upstream: upstream.url, options: { ...RENDER_ALL, ...options }, spillTools: false });
  const before = upstream.received.length;
  const res = await proxy(new Request(`http://proxy.test${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer sk-test-model' },
    body: JSON.stringify(body),
  }));
  assert.equal(res.status, 200, await res.clone().text());
  await res.text();
  assert.equal(upstream.received.length, before + 1);
  return JSON.parse(upstream.received.at(-1).body);
}

function gemini() {
  const contents = [{ role: 'user', parts: [{ text: 'Make the tests pass.' }] }];
  for (let i = 0; i < 8; i++) {
    contents.push({ role: 'model', parts: [{ functionCall: { name: 'bash', args: { command: `pytest -k ${i}` } } }] });
    contents.push({ role: 'user', parts: [{ functionResponse: { name: 'bash', response: { output: testLog(i) } } }] });
  }
  return { contents };
}

test('the body’s model: a text-only model gets no image part, a vision model gets snapshots', async () => {
  for (const [model, images] of [['deepseek-chat', false], ['meta-llama/llama-3.3-70b-instruct', false], ['gpt-4.1', true], ['openai/gpt-4o', true]]) {
    const sent = await forwarded('/v1/chat/completions', chatWithLogs(8, model));
    assert.equal(pngCount(sent) > 0, images, model);
    assert.equal(sent.model, model, 'the body goes on naming its model');
  }
  // The proxy's options name the model: they win.
  assert.equal(pngCount(await forwarded('/v1/chat/completions', chatWithLogs(8, 'gpt-4o'), { model: 'deepseek-chat' })), 0);
});

test('Gemini: the model the path names', async () => {
  assert.ok(pngCount(await forwarded('/v1beta/models/gemini-2.5-pro:generateContent', gemini(), { provider: 'gemini' })) > 0);
  assert.equal(pngCount(await forwarded('/v1beta/models/gemini-pro:generateContent', gemini(), { provider: 'gemini' })), 0);
  assert.equal(pathModel('https://x.test/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse'), 'gemini-2.5-flash');
  assert.equal(pathModel('https://x.test/v1/chat/completions'), undefined);
});
