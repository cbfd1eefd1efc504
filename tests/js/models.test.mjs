// Issue 48: snapshots only where the model reads them. The model capability
// table (src/capability.rs) read through `compress`: at the defaults
// (`optical.enabled: 'auto'`) no request for a model outside its vision list
// carries an image part, whatever the format or router prefix; a vision model
// gets snapshots; `true` forces, `false` turns them off; `models` declares the
// caller's own models and their limits; the report says why, once.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SpillStore, compress, defaultOptions } from '../../pkg/entries/node.js';
import { RENDER_ALL, TEXT_MODELS, VISION_MODELS, chatWithLogs, pngCount, testLog } from './support/models.mjs';

const run = (request, options = {}) => compress(request, { store: new SpillStore(), ...options });
const optical = (report) => report.stages.find((s) => s.stage === 'optical');

test('the default is auto', () => {
  assert.equal(defaultOptions().optical.enabled, 'auto');
  assert.equal(defaultOptions().model, '');
});

test(`at the defaults no request for a model outside the vision list carries an image part (${TEXT_MODELS.length} ids), a vision model gets snapshots (${VISION_MODELS.length} ids)`, () => {
  assert.ok(TEXT_MODELS.length + VISION_MODELS.length >= 20);
  for (const model of [...TEXT_MODELS, undefined]) {
    for (const options of [{}, RENDER_ALL]) {
      const { request, report } = run(chatWithLogs(8, model), options);
      assert.equal(pngCount(request), 0, `${model}: no image part`);
      const stage = optical(report);
      assert.equal(stage.enabled, false, `${model}: the stage does not apply`);
      assert.equal(stage.notes.length, 1, `${model}: the report says why, once`);
      assert.match(stage.notes[0], model === undefined ? /no model named/ : new RegExp(`\`${model.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}\``));
    }
  }
  for (const model of VISION_MODELS) {
    const { request, report } = run(chatWithLogs(8, model), RENDER_ALL);
    assert.ok(pngCount(request) > 0, `${model}: snapshots`);
    assert.equal(optical(report).enabled, true);
    assert.ok(!optical(report).notes.some((n) => n.startsWith('not applied')), model);
  }
});

test('the model option wins over the request’s own model; Anthropic and Gemini requests', () => {
  assert.equal(pngCount(run(chatWithLogs(8, 'deepseek-chat'), { ...RENDER_ALL, model: 'openai/gpt-4o' }).request) > 0, true);
  assert.equal(pngCount(run(chatWithLogs(8, 'gpt-4o'), { ...RENDER_ALL, model: 'deepseek/deepseek-chat' }).request), 0);
  const anthropic = (model) => {
    const messages = [{ role: 'user', content: 'Make the tests pass.' }];
    for (let i = 0; i < 8; i++) {
      messages.push({ role: 'assistant', content: [{ type: 'tool_use', id: `t${i}`, name: 'bash', input: { command: `pytest -k ${i}` } }] });
      messages.push({ role: 'user', content: [{ type: 'tool_result', tool_use_id: `t${i}`, content: testLog(i) }] });
    }
    return { model, max_tokens: 100, messages };
  };
  assert.ok(pngCount(run(anthropic('claude-sonnet-4-5'), { ...RENDER_ALL, provider: 'anthropic' }).request) > 0);
  assert.equal(pngCount(run(anthropic('glm-4.6'), { ...RENDER_ALL, provider: 'anthropic' }).request), 0);
  // Gemini names its model in the URL: the host passes it as the option.
  const contents = [{ role: 'user', parts: [{ text: 'Make the tests pass.' }] }];
  for (let i = 0; i < 8; i++) {
    contents.push({ role: 'model', parts: [{ functionCall: { name: 'bash', args: { command: `pytest -k ${i}` } } }] });
    contents.push({ role: 'user', parts: [{ functionResponse: { name: 'bash', response: { output: testLog(i) } } }] });
  }
  const gemini = { contents };
  assert.ok(pngCount(run(gemini, { ...RENDER_ALL, provider: 'gemini', model: 'models/gemini-2.5-pro' }).request) > 0);
  assert.equal(pngCount(run(gemini, { ...RENDER_ALL, provider: 'gemini', model: 'gemini-pro' }).request), 0);
  assert.equal(pngCount(run(gemini, { ...RENDER_ALL, provider: 'gemini' }).request), 0, 'no model named');
});

test('true forces snapshots, false turns them off, models declares the caller’s own', () => {
  assert.ok(pngCount(run(chatWithLogs(8, 'my-vlm'), { ...RENDER_ALL, optical: { ...RENDER_ALL.optical, enabled: true } }).request) > 0);
  const off = run(chatWithLogs(8, 'gpt-4o'), { ...RENDER_ALL, optical: { ...RENDER_ALL.optical, enabled: false } });
  assert.equal(pngCount(off.request), 0);
  assert.deepEqual(optical(off.report).notes ?? [], [], 'turned off: nothing to explain');
  assert.ok(pngCount(run(chatWithLogs(8, 'vllm/my-vlm'), { ...RENDER_ALL, models: { 'my-vlm': { images: true } } }).request) > 0);
  assert.ok(pngCount(run(chatWithLogs(8, 'acme-vl-7b'), { ...RENDER_ALL, models: { 'acme-vl-*': { images: true } } }).request) > 0, 'a glob');
  const declaredText = run(chatWithLogs(8, 'gpt-4o'), { ...RENDER_ALL, models: { 'gpt-4o': { images: false } } });
  assert.equal(pngCount(declaredText.request), 0, 'a declaration overrides the table');
  assert.match(optical(declaredText.report).notes[0], /declared text-only/);
});

test('a model’s image limits: fewer snapshots, never more than it takes', () => {
  const all = run(chatWithLogs(8, 'my-vlm'), { ...RENDER_ALL, models: { 'my-vlm': { images: true } } });
  assert.ok(pngCount(all.request) > 2);
  const capped = run(chatWithLogs(8, 'my-vlm'), { ...RENDER_ALL, models: { 'my-vlm': { images: true, maxImages: 2 } } });
  assert.ok(pngCount(capped.request) <= 2 && pngCount(capped.request) > 0, `${pngCount(capped.request)} images`);
  assert.match(optical(capped.report).notes[0], /over the 2-image cap/);
  const narrow = run(chatWithLogs(8, 'my-vlm'), { ...RENDER_ALL, models: { 'my-vlm': { images: true, maxEdgePx: 64 } } });
  assert.equal(pngCount(narrow.request), 0, 'no snapshot fits 64 px');
  const small = run(chatWithLogs(8, 'my-vlm'), { ...RENDER_ALL, models: { 'my-vlm': { images: true, maxImageBytes: 100 } } });
  assert.equal(pngCount(small.request), 0, 'no snapshot fits 100 bytes');
  assert.equal(capped.report.repairs?.length ?? 0, 0, 'the stage kept within them: nothing for the emit guard to drop');
});

test('bad model options are typed errors naming the option', () => {
  const bad = [
    [{ optical: { enabled: 'yes' } }, 'optical.enabled'],
    [{ optical: { enabled: 1 } }, 'optical.enabled'],
    [{ model: 7 }, 'model'],
    [{ model: 'x'.repeat(300) }, 'model'],
    [{ models: { m: { images: 'yes' } } }, 'models.m.images'],
    [{ models: { m: {} } }, 'models.m'],
    [{ models: { m: { images: true, maxImages: 0 } } }, 'models.m.maxImages'],
    [{ models: { m: { images: true, colour: 1 } } }, 'models.m'],
    [{ models: [] }, 'models'],
  ];
  for (const [options, path] of bad) {
    assert.throws(() => run(chatWithLogs(1, 'gpt-4o'), options), (err) => {
      assert.equal(err.code, 'INVALID_OPTION', JSON.stringify(options));
      assert.ok(err.path.startsWith(path), `${JSON.stringify(options)}: ${err.path}`);
      assert.ok(err.message.startsWith(err.path), err.message);
      return true;
    });
  }
});
