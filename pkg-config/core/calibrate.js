// Optical calibration: does the host's own model read the snapshots TraceLite
// renders? Probe snapshots of realistic tool output (a `cat -n` listing, a
// pytest log, a traceback, a `grep -n` result) go through the host's model call
// in the host's request format; the facts that come back are scored by class
// and font size, and the settings that kept them legible are recommended, in a
// form that can be passed back as options.
import { InputError, OptionError, describe } from './errors.js';
import { renderSnapshot } from './optical.js';
import { defaultOptions } from './config.js';
import { settingsOf } from './settings.js';

/** Options of `calibrateOptical` itself; the rest are compress settings. */
const OWN = ['fontSizes', 'minLegibility', 'maxTokens', 'instruction'];

/** The request formats a probe can be sent in. */
const FORMATS = ['openai-chat', 'openai-responses', 'anthropic', 'gemini'];

/** What the model is asked: the transcription, nothing else. */
export const CALIBRATION_INSTRUCTION = 'Transcribe all the text in the image(s) exactly as shown, line by line, '
  + 'keeping every number, path, identifier and punctuation mark. Reply with the transcription only.';

/** Lines `from..to` of a `cat -n` listing of `lines`. */
function catN(lines, from = 1) {
  return lines.map((l, i) => `${String(from + i).padStart(6)}\t${l}`).join('\n');
}

/**
 * The probes: realistic tool output with the facts an agent quotes back from
 * it, each of a class (`identifier`, `path`, `number`, `message`). Facts sit
 * at the top, in the middle and at the bottom of each output.
 */
export const CALIBRATION_PROBES = Object.freeze([
  {
    id: 'cat -n',
    text: catN([
      '"""Invoice totals for the billing service."""',
      'from decimal import Decimal, ROUND_HALF_UP',
      '',
      'from billing.rates import TaxRateTable, lookup_rate',
      '',
      '',
      'class InvoiceCalculator:',
      '    DEFAULT_CURRENCY = "EUR"',
      '    MAX_LINE_ITEMS = 250',
      '',
      '    def __init__(self, table: TaxRateTable, rounding=ROUND_HALF_UP):',
      '        self.table = table',
      '        self.rounding = rounding',
      '',
      '    def compute_subtotal(self, items):',
      '        if len(items) > self.MAX_LINE_ITEMS:',
      '            raise ValueError("too many line items")',
      '        return sum(Decimal(str(i.unit_price)) * i.quantity for i in items)',
      '',
      '    def apply_discount(self, subtotal, percent):',
      '        if percent > 35:',
      '            raise ValueError("discount over 35% needs approval")',
      '        return subtotal * (Decimal(100) - Decimal(percent)) / Decimal(100)',
      '',
      '    def tax_for(self, subtotal, region_code, posted_at):',
      '        rate = lookup_rate(region_code, on=posted_at)',
      '        return (subtotal * rate.percent / 100).quantize(Decimal("0.01"), self.rounding)',
      '',
      '    def total(self, items, region_code, posted_at, discount=0):',
      '        subtotal = self.apply_discount(self.compute_subtotal(items), discount)',
      '        return subtotal + self.tax_for(subtotal, region_code, posted_at)',
    ], 41),
    facts: [
      ['identifier', 'InvoiceCalculator'],
      ['identifier', 'compute_subtotal'],
      ['identifier', 'apply_discount'],
      ['identifier', 'MAX_LINE_ITEMS'],
      ['path', 'billing.rates'],
      ['number', '250'],
      ['number', '0.01'],
      ['number', '60'],
      ['message', 'discount over 35% needs approval'],
    ],
  },
  {
    id: 'pytest',
    text: [
      '============================= test session starts ==============================',
      'platform linux -- Python 3.11.7, pytest-8.2.1, pluggy-1.5.0',
      'rootdir: /srv/app',
      'collected 47 items',
      '',
      ...Array.from({ length: 18 }, (_, i) => {
        const name = ['test_subtotal_sums_lines', 'test_total_rounds_half_up', 'test_lookup_rate_berlin', 'test_tax_for_zero'][i % 4];
        const file = i % 4 === 2 ? 'tests/test_rates.py' : 'tests/test_invoice.py';
        const pct = String(Math.round(((i + 1) * 100) / 47)).padStart(3);
        return i === 9
          ? `tests/test_invoice.py::test_discount_cap FAILED${' '.repeat(26)}[${pct}%]`
          : `${file}::${name}_${i} PASSED${' '.repeat(Math.max(1, 40 - name.length))}[${pct}%]`;
      }),
      '',
      '=================================== FAILURES ===================================',
      '______________________________ test_discount_cap _______________________________',
      '',
      '    def test_discount_cap():',
      '        calc = InvoiceCalculator(TaxRateTable.default())',
      '>       assert calc.apply_discount(Decimal("200.00"), 40) == Decimal("120.00")',
      'E       ValueError: discount over 35% needs approval',
      '',
      'tests/test_invoice.py:58: ValueError',
      '=========================== short test summary info ============================',
      'FAILED tests/test_invoice.py::test_discount_cap - ValueError: discount over 35% needs approval',
      '========================= 1 failed, 46 passed in 2.31s =========================',
    ].join('\n'),
    facts: [
      ['identifier', 'test_discount_cap'],
      ['identifier', 'test_lookup_rate_berlin_6'],
      ['path', 'tests/test_invoice.py:58'],
      ['path', '/srv/app'],
      ['number', '47'],
      ['number', '2.31'],
      ['number', '200.00'],
      ['message', '1 failed, 46 passed'],
    ],
  },
  {
    id: 'traceback',
    text: [
      '$ python -m billing.cli --batch 8841',
      'INFO billing.batch: loading batch 8841 (312 invoices)',
      'INFO billing.batch: region DE-BE, period 2024-Q3',
      'Traceback (most recent call last):',
      '  File "/usr/lib/python3.11/runpy.py", line 198, in _run_module_as_main',
      '    return _run_code(code, main_globals, None,',
      '  File "/srv/app/billing/cli.py", line 112, in main',
      '    totals = run_batch(args.batch_id)',
      '  File "/srv/app/billing/batch.py", line 67, in run_batch',
      '    tax = calc.tax_for(subtotal, invoice.region_code, invoice.posted_at)',
      '  File "/srv/app/billing/invoice.py", line 66, in tax_for',
      '    rate = lookup_rate(region_code, on=posted_at)',
      '  File "/srv/app/billing/rates.py", line 203, in lookup_rate',
      '    return RATE_TABLE[(region_code, period_of(on))]',
      "KeyError: ('DE-BE', '2024-Q3')",
      'ERROR billing.cli: batch 8841 failed after 2.7s, 0 of 312 invoices posted',
    ].join('\n'),
    facts: [
      ['identifier', 'run_batch'],
      ['identifier', 'RATE_TABLE'],
      ['path', '/srv/app/billing/batch.py'],
      ['path', '/srv/app/billing/rates.py'],
      ['number', '203'],
      ['number', '8841'],
      ['number', '312'],
      ['message', "KeyError: ('DE-BE', '2024-Q3')"],
    ],
  },
  {
    id: 'grep -n',
    text: [
      'src/billing/rates.py:12:RATE_TABLE = load_rates("rates/2024.csv")',
      'src/billing/rates.py:188:def lookup_rate(region_code, on=None):',
      'src/billing/rates.py:203:    return RATE_TABLE[(region_code, period_of(on))]',
      'src/billing/batch.py:9:from billing.rates import lookup_rate',
      'src/billing/invoice.py:4:from billing.rates import TaxRateTable, lookup_rate',
      'src/billing/invoice.py:66:        rate = lookup_rate(region_code, on=posted_at)',
      'src/reports/quarterly.py:17:from billing.rates import lookup_rate, period_of',
      'src/reports/quarterly.py:241:        r = lookup_rate(row.region, on=row.closed_at)',
      'src/reports/quarterly.py:298:        fallback = lookup_rate("DE", on=row.closed_at)',
      'tests/test_rates.py:31:    assert lookup_rate("DE-BE", on=date(2024, 7, 1)).percent == 19',
      'tests/test_rates.py:44:    with pytest.raises(KeyError):',
      'tests/test_rates.py:45:        lookup_rate("XX", on=date(2024, 7, 1))',
    ].join('\n'),
    facts: [
      ['identifier', 'period_of'],
      ['identifier', 'closed_at'],
      ['path', 'src/reports/quarterly.py:241'],
      ['path', 'src/billing/rates.py:188'],
      ['path', 'rates/2024.csv'],
      ['number', '298'],
      ['number', '19'],
      ['message', 'pytest.raises(KeyError)'],
    ],
  },
]);

/** The fact classes, in report order. */
export const FACT_CLASSES = Object.freeze(['identifier', 'path', 'number', 'message']);

/** Whitespace runs as one space: a reply may align columns its own way. */
function squeeze(text) {
  return text.replace(/\s+/g, ' ').trim();
}

/**
 * The text of a model's reply: a string, or the response of a provider API
 * (OpenAI Chat `choices`, Responses `output_text`/`output`, Anthropic
 * `content`, Gemini `candidates`) or of the AI SDK (`text`).
 */
export function replyText(reply) {
  if (typeof reply === 'string') return reply;
  if (reply === null || typeof reply !== 'object') return '';
  const parts = (content) => (typeof content === 'string'
    ? content
    : (Array.isArray(content) ? content.map((p) => (typeof p === 'string' ? p : p?.text ?? '')).join('\n') : ''));
  if (typeof reply.text === 'string') return reply.text;
  if (typeof reply.output_text === 'string') return reply.output_text;
  if (Array.isArray(reply.choices)) return reply.choices.map((c) => parts(c?.message?.content)).join('\n');
  if (Array.isArray(reply.output)) return reply.output.map((o) => parts(o?.content)).join('\n');
  if (Array.isArray(reply.candidates)) return reply.candidates.map((c) => parts(c?.content?.parts)).join('\n');
  if (Array.isArray(reply.content)) return parts(reply.content);
  return '';
}

/** The request asking `model` to transcribe `images`, in `format`. */
export function probeRequest(format, images, { model, instruction = CALIBRATION_INSTRUCTION, maxTokens = 4096, detail } = {}) {
  const url = (i) => `data:${i.mediaType};base64,${i.data}`;
  const named = model ? { model } : {};
  switch (format) {
    case 'openai-chat':
      return {
        ...named,
        messages: [{
          role: 'user',
          content: [{ type: 'text', text: instruction }, ...images.map((i) => ({ type: 'image_url', image_url: { url: url(i), ...(detail ? { detail } : {}) } }))],
        }],
      };
    case 'openai-responses':
      return {
        ...named,
        input: [{
          role: 'user',
          content: [{ type: 'input_text', text: instruction }, ...images.map((i) => ({ type: 'input_image', image_url: url(i), ...(detail ? { detail } : {}) }))],
        }],
      };
    case 'anthropic':
      return {
        ...named,
        max_tokens: maxTokens,
        messages: [{
          role: 'user',
          content: [...images.map((i) => ({ type: 'image', source: { type: 'base64', media_type: i.mediaType, data: i.data } })), { type: 'text', text: instruction }],
        }],
      };
    default:
      return { contents: [{ role: 'user', parts: [...images.map((i) => ({ inline_data: { mime_type: i.mediaType, data: i.data } })), { text: instruction }] }] };
  }
}

function ratio(read, total) {
  return total === 0 ? 0 : Math.round((read / total) * 10000) / 10000;
}

/** `{ overall, byClass }` of scored facts `[{ cls, read }]`. */
function score(facts) {
  const byClass = {};
  for (const cls of FACT_CLASSES) {
    const of = facts.filter((f) => f.cls === cls);
    if (of.length > 0) byClass[cls] = ratio(of.filter((f) => f.read).length, of.length);
  }
  return { overall: ratio(facts.filter((f) => f.read).length, facts.length), byClass };
}

/** A wrong option value for a message: a number as written, a string quoted, else its kind. */
function shown(value) {
  if (typeof value === 'number') return String(value);
  if (typeof value === 'string') return JSON.stringify(value.slice(0, 40));
  return describe(value);
}

function checkOwn(options) {
  const { fontSizes, minLegibility, maxTokens } = options;
  if (fontSizes !== undefined && (!Array.isArray(fontSizes) || fontSizes.length === 0
    || !fontSizes.every((px) => Number.isInteger(px) && px >= 4 && px <= 64))) {
    throw new OptionError(`must be a non-empty array of integers between 4 and 64, got ${shown(fontSizes)}`, 'INVALID_OPTION', 'fontSizes');
  }
  if (minLegibility !== undefined && !(typeof minLegibility === 'number' && minLegibility >= 0 && minLegibility <= 1)) {
    throw new OptionError(`must be a number in [0, 1], got ${shown(minLegibility)}`, 'INVALID_OPTION', 'minLegibility');
  }
  if (maxTokens !== undefined && !(Number.isInteger(maxTokens) && maxTokens > 0)) {
    throw new OptionError(`must be a positive integer, got ${shown(maxTokens)}`, 'INVALID_OPTION', 'maxTokens');
  }
  if (options.format !== undefined && !FORMATS.includes(options.format)) {
    throw new OptionError(`must be one of ${FORMATS.join(', ')}, got ${shown(options.format)}`, 'INVALID_OPTION', 'format');
  }
}

/**
 * Calibrates the optical stage against the host's own model: renders each
 * probe (`CALIBRATION_PROBES`) at each font size of `options.fontSizes`
 * (default: `optical.minFontPx` and `optical.fontPx` of the settings in force),
 * sends the snapshots through `callModel(request, { probe, fontPx, format })`
 * (the request in `options.format`, default `'openai-chat'`, naming
 * `options.model`; the reply a string or the provider's response), and scores
 * the facts that came back by class and font size. Resolves
 * `{ model, format, provider, sizes, minLegibility, legibility, probes,
 * recommended, options, reason }`: `options` are settings to pass back to
 * `compress` (`{ ...yours, ...result.options }`): the smallest font size whose
 * every fact class read at least `minLegibility` (default 0.95) becomes
 * `optical.minFontPx` and the model is declared as reading images; when no size
 * does, snapshots are turned off for it. Deterministic for a deterministic model.
 */
export async function calibrateOptical(callModel, options = {}) {
  if (typeof callModel !== 'function') {
    throw new InputError(`must be a function (request, probe) => reply, got ${describe(callModel)}`, 'INVALID_ARGUMENT', 'callModel');
  }
  const all = settingsOf(options);
  checkOwn(all);
  const own = Object.fromEntries(OWN.map((k) => [k, all[k]]));
  const settings = Object.fromEntries(Object.entries(all).filter(([k]) => !OWN.includes(k)));
  const format = settings.format ?? 'openai-chat';
  delete settings.format;
  const defaults = defaultOptions();
  const optical = { ...defaults.optical, ...(settings.optical ?? {}) };
  const sizes = [...new Set(own.fontSizes ?? [optical.minFontPx, optical.fontPx])].sort((a, b) => a - b);
  const minLegibility = own.minLegibility ?? 0.95;
  const model = typeof settings.model === 'string' && settings.model !== '' ? settings.model : undefined;
  const provider = settings.provider ?? defaults.provider;
  const probes = [];
  const scored = [];
  for (const fontPx of sizes) {
    for (const probe of CALIBRATION_PROBES) {
      const render = renderSnapshot(probe.text, { ...settings, optical: { ...(settings.optical ?? {}), fontPx, minFontPx: fontPx } });
      const images = render?.images ?? [];
      const request = probeRequest(format, images, {
        model,
        instruction: own.instruction,
        maxTokens: own.maxTokens,
        detail: provider === 'openai' ? optical.detail : undefined,
      });
      const reply = squeeze(replyText(await callModel(request, { probe: probe.id, fontPx, format })));
      const facts = probe.facts.map(([cls, fact]) => ({ cls, fact, read: reply.includes(squeeze(fact)) }));
      scored.push(...facts.map((f) => ({ ...f, fontPx })));
      probes.push({
        probe: probe.id,
        fontPx,
        images: images.length,
        imageTokens: render?.imageTokens ?? 0,
        facts: facts.length,
        read: facts.filter((f) => f.read).length,
        missed: facts.filter((f) => !f.read).map((f) => f.fact),
      });
    }
  }
  const byFontPx = {};
  for (const px of sizes) byFontPx[px] = score(scored.filter((f) => f.fontPx === px));
  const legibility = { ...score(scored), byFontPx };
  const passes = (px) => Object.values(byFontPx[px].byClass).every((x) => x >= minLegibility);
  const best = sizes.find(passes);
  const models = { ...(settings.models ?? {}) };
  let recommended;
  let reason;
  if (best === undefined) {
    recommended = { enabled: false };
    reason = `no font size read every fact class at ${minLegibility} or better (best overall ${Math.max(...sizes.map((px) => byFontPx[px].overall))}): snapshots off`;
    if (model) models[model] = { images: false };
  } else {
    recommended = { enabled: model ? 'auto' : true, minFontPx: best, fontPx: Math.max(optical.fontPx, best) };
    reason = `${best} px is the smallest size whose every fact class read at ${minLegibility} or better`;
    if (model) models[model] = { ...(models[model] ?? {}), images: true };
  }
  const passBack = { optical: { ...(settings.optical ?? {}), ...recommended } };
  if (model) passBack.models = models;
  return { model, format, provider, sizes, minLegibility, legibility, probes, recommended, options: passBack, reason };
}
