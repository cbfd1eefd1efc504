// Issue 48 item 4: calibrateOptical renders probe snapshots of realistic tool
// output, sends them through the host's model call in the host's format and
// scores what comes back by fact class and font size. The model here is a
// deterministic fake (no paid API): it "reads" a probe's text in full, in part
// or not at all, by font size; the recommendation follows what it read, and
// the settings it returns work when passed back to compress.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CALIBRATION_PROBES, SpillStore, calibrateOptical, compress, replyText } from '../../pkg/entries/node.js';
import { RENDER_ALL, chatWithLogs, pngCount } from './support/models.mjs';

const textOf = (id) => CALIBRATION_PROBES.find((p) => p.id === id).text;

/** A fake model that reads every probe at `fontPx >= from` and nothing below; records the requests. */
function reader(from = 0, { keep = () => true } = {}) {
  const calls = [];
  const fake = async (request, probe) => {
    calls.push({ request, probe });
    if (probe.fontPx < from) return 'I cannot read this image.';
    return textOf(probe.probe).split('\n').filter(keep).join('\n');
  };
  fake.calls = calls;
  return fake;
}

test('a model that reads every probe: full legibility, the smallest size probed', async () => {
  const fake = reader();
  const c = await calibrateOptical(fake, { model: 'my-vlm' });
  assert.deepEqual(c.sizes, [10, 12], 'optical.minFontPx and fontPx of the settings in force');
  assert.equal(fake.calls.length, CALIBRATION_PROBES.length * 2);
  assert.equal(c.legibility.overall, 1);
  assert.deepEqual(Object.keys(c.legibility.byClass).sort(), ['identifier', 'message', 'number', 'path']);
  assert.equal(c.legibility.byFontPx[10].overall, 1);
  assert.deepEqual(c.recommended, { enabled: 'auto', minFontPx: 10, fontPx: 12 });
  assert.deepEqual(c.options.models, { 'my-vlm': { images: true } });
  // Every probe sent as an OpenAI Chat request naming the model, with PNG snapshots.
  for (const { request } of fake.calls) {
    assert.equal(request.model, 'my-vlm');
    const images = request.messages[0].content.filter((p) => p.type === 'image_url');
    assert.ok(images.length > 0 && images.every((p) => p.image_url.url.startsWith('data:image/png;base64,iVBORw0KGgo')));
  }
});

test('the recommendation changes when the model reads less', async () => {
  const all = await calibrateOptical(reader(), { model: 'm' });
  const from12 = await calibrateOptical(reader(12), { model: 'm' });
  assert.equal(from12.legibility.byFontPx[10].overall, 0);
  assert.equal(from12.legibility.byFontPx[12].overall, 1);
  assert.equal(from12.recommended.minFontPx, 12);
  assert.notDeepEqual(from12.options, all.options);
  // Reads numbers badly at every size: no size passes, snapshots off for it.
  const noDigits = await calibrateOptical(reader(0, { keep: (l) => !/\d{3}/.test(l) }), { model: 'm' });
  assert.ok(noDigits.legibility.byClass.number < 0.95, JSON.stringify(noDigits.legibility.byClass));
  assert.ok(noDigits.legibility.byClass.identifier > noDigits.legibility.byClass.number);
  const blind = await calibrateOptical(reader(99), { model: 'm' });
  assert.equal(blind.legibility.overall, 0);
  for (const c of [noDigits, blind]) {
    assert.equal(c.recommended.enabled, false);
    assert.deepEqual(c.options.models, { m: { images: false } });
    assert.match(c.reason, /snapshots off/);
  }
  // Larger sizes probed: the smallest that reads.
  const sizes = await calibrateOptical(reader(14), { model: 'm', fontSizes: [16, 8, 14, 12] });
  assert.deepEqual(sizes.sizes, [8, 12, 14, 16]);
  assert.deepEqual(sizes.recommended, { enabled: 'auto', minFontPx: 14, fontPx: 14 });
});

test('the probes go in the host’s format, the reply may be the provider’s response', async () => {
  const seen = [];
  const answer = {
    anthropic: (t) => ({ content: [{ type: 'text', text: t }] }),
    gemini: (t) => ({ candidates: [{ content: { parts: [{ text: t }] } }] }),
    'openai-responses': (t) => ({ output: [{ type: 'message', content: [{ type: 'output_text', text: t }] }] }),
    'openai-chat': (t) => ({ choices: [{ message: { content: t } }] }),
  };
  for (const format of Object.keys(answer)) {
    const c = await calibrateOptical(async (request, probe) => {
      seen.push({ format, request });
      return answer[format](textOf(probe.probe));
    }, { format, provider: format === 'anthropic' ? 'anthropic' : format === 'gemini' ? 'gemini' : 'openai', fontSizes: [12] });
    assert.equal(c.legibility.overall, 1, format);
    assert.equal(c.recommended.enabled, true, `${format}: no model named, so forced on`);
  }
  const of = (f) => seen.find((s) => s.format === f).request;
  assert.equal(of('anthropic').messages[0].content[0].type, 'image');
  assert.equal(of('anthropic').messages[0].content[0].source.media_type, 'image/png');
  assert.ok(of('gemini').contents[0].parts[0].inline_data.data.startsWith('iVBORw0KGgo'));
  assert.ok(of('openai-responses').input[0].content.some((p) => p.type === 'input_image'));
  assert.equal(replyText({ text: 'ai sdk' }), 'ai sdk');
});

test('the options it returns, passed back, make compress send snapshots to that model at the size it read', async () => {
  const c = await calibrateOptical(reader(12), { model: 'acme-vision-9b' });
  const before = compress(chatWithLogs(8, 'acme-vision-9b'), { ...RENDER_ALL, store: new SpillStore() });
  assert.equal(pngCount(before.request), 0, 'unknown to the table: no snapshots');
  const after = compress(chatWithLogs(8, 'acme-vision-9b'), { ...RENDER_ALL, ...c.options, optical: { ...RENDER_ALL.optical, ...c.options.optical }, store: new SpillStore() });
  assert.ok(pngCount(after.request) > 0);
  for (const ch of after.report.changes.filter((x) => x.kind === 'snapshot')) {
    const px = Number(/(\d+) px font/.exec(ch.detail)[1]);
    assert.ok(px >= 12, ch.detail);
  }
});

test('bad arguments are typed errors', async () => {
  await assert.rejects(calibrateOptical('nope'), (e) => e.code === 'INVALID_ARGUMENT' && e.path === 'callModel');
  await assert.rejects(calibrateOptical(reader(), { fontSizes: [2] }), (e) => e.code === 'INVALID_OPTION' && e.path === 'fontSizes');
  await assert.rejects(calibrateOptical(reader(), { minLegibility: 2 }), (e) => e.code === 'INVALID_OPTION' && e.path === 'minLegibility');
  await assert.rejects(calibrateOptical(reader(), { format: 'cohere' }), (e) => e.code === 'INVALID_OPTION' && e.path === 'format');
  await assert.rejects(calibrateOptical(reader(), { optical: { fontPx: 99 } }), (e) => e.code === 'INVALID_OPTION');
});

test('a real reader: tesseract as the model (make setup installs it) reads the probes, scored by class and size', async () => {
  const { decodeGray, readPng, tesseractAvailable } = await import('../../scripts/tesseract.mjs');
  assert.ok(tesseractAvailable(), 'tesseract is installed (apt-get install tesseract-ocr)');
  // The OpenAI Chat request's images, read without upscaling: what a weak reader gets.
  const ocr = async (request) => {
    const texts = [];
    for (const p of request.messages[0].content.filter((x) => x.type === 'image_url')) {
      const png = Buffer.from(p.image_url.url.replace('data:image/png;base64,', ''), 'base64');
      texts.push(await readPng(png, decodeGray(png), { scale: 1 }));
    }
    return texts.join('\n');
  };
  const c = await calibrateOptical(ocr, { model: 'tesseract', fontSizes: [8, 16] });
  assert.ok(c.legibility.byFontPx[16].overall > 0.8, JSON.stringify(c.legibility));
  assert.ok(c.legibility.byFontPx[16].overall > c.legibility.byFontPx[8].overall, JSON.stringify(c.legibility));
  assert.equal(Object.keys(c.legibility.byClass).length, 4);
});
