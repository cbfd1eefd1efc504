// The browser playground (www/) in Debian's Chromium, headless, via playwright-core.
// Needs `make pkg` and /usr/bin/chromium (`apt-get install -y chromium`); fails
// (never skips) when either is missing. Screenshots go to tests/artifacts/.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { CHROMIUM, CHROMIUM_ARGS as ARGS } from './support/chromium.mjs';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const SAMPLE = `${ROOT}tests/fixtures/demo-session.json`;
/** The settings the page opens the sample at (www/options.js SAMPLE_OPTIONS, `make demo`'s). */
const { SAMPLE_OPTIONS } = await import(`${ROOT}www/options.js`);
const ARTIFACTS = `${ROOT}tests/artifacts`;
const WAIT = { timeout: 60_000 };

let browser;
let server;
let page;
let baseUrl;
const consoleErrors = [];

async function shot(name) {
  await page.screenshot({ path: `${ARTIFACTS}/playground-${name}.png`, fullPage: false });
}

/** Runs `action` and waits until the page has finished one more compression run. */
async function afterRun(action) {
  const runs = await page.evaluate(() => Number(document.body.dataset.runs ?? 0));
  await action();
  await page.waitForFunction((n) => Number(document.body.dataset.runs ?? 0) > n, runs, WAIT);
}

async function setControl(id, value) {
  await afterRun(() => page.fill(`#opt-${id}`, String(value)));
}

async function resetAndLoadSample() {
  await afterRun(() => page.click('#reset-options'));
  await afterRun(() => page.click('#load-sample'));
}

function cliReplay(options) {
  const out = execFileSync(process.execPath, [
    `${ROOT}pkg/cli/index.mjs`, 'replay', '--json', SAMPLE, '--options', JSON.stringify(options),
  ], { encoding: 'utf8', maxBuffer: 64 << 20 });
  return JSON.parse(out);
}

async function shownFigures() {
  return page.$eval('#reduction', (el) => ({
    reduction: Number(el.dataset.reduction),
    baseline: Number(el.dataset.baseline),
    compressed: Number(el.dataset.compressed),
  }));
}

before(async () => {
  assert.ok(existsSync(CHROMIUM), `Chromium not found at ${CHROMIUM}: install it (apt-get install -y chromium) or set CHROMIUM_PATH`);
  assert.ok(existsSync(`${ROOT}pkg/entries/browser.js`), 'pkg/ is not built: run `make pkg`');
  mkdirSync(ARTIFACTS, { recursive: true });
  const { chromium } = await import('playwright-core');
  const { startServer } = await import(`${ROOT}www/serve.mjs`);
  ({ server, url: baseUrl } = await startServer({ port: 0 }));
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS, headless: true });
  const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
  page = await context.newPage();
  page.on('console', (m) => { if (m.type() === 'error') consoleErrors.push(`console: ${m.text()}`); });
  page.on('pageerror', (e) => consoleErrors.push(`pageerror: ${e.message}`));
  page.on('worker', (w) => w.on('console', (m) => { if (m.type() === 'error') consoleErrors.push(`worker: ${m.text()}`); }));
  // The page loads the sample trajectory by itself.
  await page.goto(baseUrl);
  await page.waitForFunction(() => Number(document.body.dataset.runs ?? 0) >= 1, null, WAIT);
});

after(async () => {
  await browser?.close();
  await new Promise((resolve) => (server ? server.close(resolve) : resolve()));
});

test('the page loads the sample trajectory with no console errors', async () => {
  await shot('loaded');
  assert.deepEqual(consoleErrors, []);
  assert.equal(await page.$eval('#status', (el) => el.dataset.kind), 'done', await page.textContent('#status'));
  const steps = JSON.parse(readFileSync(SAMPLE, 'utf8')).steps.length;
  assert.equal(await page.$eval('#step', (el) => Number(el.max)), steps - 1);
  assert.ok((await page.$$('#prompt-view article.msg')).length > 2, 'the prompt view shows messages');
  assert.ok((await page.$$('#chart-tokens polyline')).length === 2, 'the token chart has two series');
  const unlabelled = await page.$$eval('input, select, textarea', (els) => els
    .filter((e) => e.labels.length === 0 && !e.getAttribute('aria-label') && !e.getAttribute('aria-labelledby'))
    .map((e) => e.id || e.outerHTML));
  assert.deepEqual(unlabelled, [], 'every control has a label');
  assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth), 'no horizontal scrolling');
});

// Issue 38 item 3: the page opens on the demo session, where every stage acts.
test('the page opens on the demo session at the demo budget: every stage saves tokens and the shown step has a snapshot', async () => {
  assert.equal(await page.inputValue('#opt-budget'), String(SAMPLE_OPTIONS.budget));
  const options = JSON.parse(await page.$eval('#export-cli', (el) => el.dataset.options));
  assert.deepEqual(options, SAMPLE_OPTIONS, 'the page sends the demo settings');
  const saved = await page.evaluate(() => {
    const sums = {};
    for (const s of window.tracelitePlayground.run.steps) for (const x of s.stages) sums[x.stage] = (sums[x.stage] ?? 0) + x.saved;
    return sums;
  });
  for (const stage of ['spill', 'dedup', 'phase', 'optical', 'compact']) assert.ok(saved[stage] > 0, `${stage}: ${JSON.stringify(saved)}`);
  const steps = JSON.parse(readFileSync(SAMPLE, 'utf8')).steps.length;
  assert.equal(await page.$eval('#step', (el) => Number(el.value)), steps - 1);
  // The first snapshot decoded and laid out (under load the layout can lag the decode).
  await page.waitForFunction(() => {
    const i = document.querySelector('#prompt-view img');
    return i !== null && i.complete && i.naturalWidth > 0 && i.getBoundingClientRect().width > 0;
  }, null, WAIT);
  await shot('opens-on-demo');
});

test('the reduction figure equals `replay --json` with the same options', async () => {
  for (const [name, settings] of [['defaults', {}], ['budget-16k', { budget: 16000 }], ['window-1', { window: 1, budget: 32000 }]]) {
    await afterRun(() => page.click('#reset-options'));
    for (const [id, value] of Object.entries(settings)) await setControl(id, value);
    const options = JSON.parse(await page.$eval('#export-cli', (el) => el.dataset.options));
    assert.deepEqual(options, settings, `${name}: the page sends exactly the changed settings`);
    const cli = cliReplay(options);
    const shown = await shownFigures();
    assert.equal(shown.reduction, cli.reduction, `${name}: reduction`);
    assert.equal(shown.baseline, cli.baseline_tokens, `${name}: baseline tokens`);
    assert.equal(shown.compressed, cli.compressed_tokens, `${name}: compressed tokens`);
    assert.equal(await page.textContent('#reduction'), `${(cli.reduction * 100).toFixed(1)}%`);
    await shot(`reduction-${name}`);
  }
  await afterRun(() => page.click('#reset-options'));
});

test('request bytes are shown beside tokens, as `replay --json` counts them', async () => {
  await resetAndLoadSample();
  const cli = cliReplay(SAMPLE_OPTIONS);
  const shown = await page.$eval('#bytes', (el) => ({ before: Number(el.dataset.before), after: Number(el.dataset.after), text: el.textContent }));
  assert.equal(shown.before, cli.baseline_bytes);
  assert.equal(shown.after, cli.compressed_bytes);
  assert.match(shown.text, /^[\d.]+ (B|KB|MB) → [\d.]+ (B|KB|MB)$/);
  const last = cli.per_step.at(-1);
  await page.waitForFunction(() => document.getElementById('step-figures').textContent.includes('JSON'), null, WAIT);
  const kb = (n) => `${(n / 1024).toFixed(1)} KB`;
  assert.ok((await page.textContent('#step-figures')).includes(`${kb(last.bytes_before)} → ${kb(last.bytes_after)} JSON`));
});

test('moving the step slider changes the prompt view', async () => {
  const last = await page.$eval('#step', (el) => Number(el.max));
  const view = async (t) => {
    await page.waitForFunction((s) => document.getElementById('prompt-view').dataset.step === String(s), t, WAIT);
    return {
      text: await page.textContent('#prompt-view'),
      messages: (await page.$$('#prompt-view article.msg')).length,
    };
  };
  await page.focus('#step');
  await page.keyboard.press('End');
  const end = await view(last);
  await page.keyboard.press('Home');
  const start = await view(0);
  assert.notEqual(start.text, end.text);
  assert.ok(start.messages < end.messages, `${start.messages} messages at t=0, ${end.messages} at t=${last}`);
  await page.keyboard.press('ArrowRight');
  const one = await view(1);
  assert.notEqual(one.text, start.text);
  await shot('slider');
});

test('an uploaded Anthropic request is parsed and shown', async () => {
  const request = {
    model: 'claude-sonnet-4-5',
    max_tokens: 1024,
    system: 'You are a careful coding agent.',
    messages: [
      { role: 'user', content: 'Fix the failing test in utils.py' },
      { role: 'assistant', content: [
        { type: 'text', text: 'Let me run the tests.' },
        { type: 'tool_use', id: 'toolu_01', name: 'bash', input: { command: 'pytest -q' } },
      ] },
      { role: 'user', content: [
        { type: 'tool_result', tool_use_id: 'toolu_01', content: '1 failed, 3 passed\nFAILED test_utils.py::test_slug' },
      ] },
    ],
  };
  await afterRun(() => page.setInputFiles('#file-input', {
    name: 'anthropic-request.json', mimeType: 'application/json', buffer: Buffer.from(JSON.stringify(request)),
  }));
  await shot('anthropic');
  const format = await page.evaluate(() => window.tracelitePlayground.run.steps[0].format);
  assert.equal(format, 'anthropic', 'the core detected the Anthropic Messages format (src/formats/anthropic.rs)');
  const text = await page.textContent('#prompt-view');
  assert.ok(text.includes('FAILED test_utils.py::test_slug'), 'the tool result is shown');
  assert.ok(text.includes('You are a careful coding agent.'), 'the system prompt is shown');
  assert.equal(await page.$eval('#prompt-view', (el) => el.querySelectorAll('.call').length), 1, 'the tool call is shown');
});

test('a pasted request and a dropped trajectory load', async () => {
  const chat = {
    model: 'gpt-4.1',
    messages: [
      { role: 'system', content: 'Pasted system prompt.' },
      { role: 'user', content: 'Pasted task text.' },
    ],
  };
  await page.click('#paste-box summary');
  await page.fill('#paste-text', JSON.stringify(chat));
  await afterRun(() => page.click('#paste-load'));
  assert.ok((await page.textContent('#prompt-view')).includes('Pasted task text.'));
  assert.equal(await page.evaluate(() => window.tracelitePlayground.run.steps[0].format), 'openai-chat');

  const trajectory = { id: 'dropped-run', task: 'Dropped task.', system: 'sys', steps: [
    { tool: 'bash', args: { command: 'ls' }, observation: 'a.py\nb.py', thought: 'look' },
    { tool: 'bash', args: { command: 'cat a.py' }, observation: 'print(1)', thought: 'read' },
  ] };
  await afterRun(() => page.evaluate((text) => {
    const dt = new DataTransfer();
    dt.items.add(new File([text], 'dropped.json', { type: 'application/json' }));
    document.dispatchEvent(new DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true }));
  }, JSON.stringify(trajectory)));
  assert.equal(await page.$eval('#step', (el) => Number(el.max)), 1);
  assert.match(await page.textContent('#input-label'), /dropped-run \(trajectory, 2 steps\)/);
  assert.ok((await page.textContent('#prompt-view')).includes('Dropped task.'));
});

test('a snapshot image is displayed with a natural size > 0', async () => {
  await resetAndLoadSample();
  // Snapshots pay off only for observations that leave the recent window and
  // whose image costs less than their text: a window of 1 and k = 1 make some.
  await setControl('window', 1);
  await setControl('ratio', 1);
  // Fixed batches: the planner would defer small moves on the short sample.
  await afterRun(() => page.uncheck('#opt-planner'));
  const t = await page.evaluate(() => window.tracelitePlayground.run.steps.findLastIndex(
    (s) => s.stages.some((x) => x.stage === 'optical' && x.saved > 0)));
  assert.ok(t >= 0, 'no step of the sample replay has an optical snapshot (the optical stage made no change)');
  await page.$eval('#step', (el, v) => { el.value = String(v); el.dispatchEvent(new Event('input', { bubbles: true })); }, t);
  await page.waitForFunction((s) => document.getElementById('prompt-view').dataset.step === String(s), t, WAIT);
  // The first snapshot decoded and laid out (under load the layout can lag the decode).
  await page.waitForFunction(() => {
    const i = document.querySelector('#prompt-view img');
    return i !== null && i.complete && i.naturalWidth > 0 && i.getBoundingClientRect().width > 0;
  }, null, WAIT);
  const size = await page.$eval('#prompt-view img', (i) => ({ w: i.naturalWidth, h: i.naturalHeight, shown: i.getBoundingClientRect().width }));
  assert.ok(size.w > 0 && size.h > 0, `natural size ${size.w}×${size.h}`);
  assert.equal(Math.round(size.shown), size.w, 'shown at its real size');
  await page.$eval('#prompt-view img', (i) => i.scrollIntoView());
  await shot('snapshot');
});

test('the step view shows what the planner committed and deferred, in dollars, and the turn\'s cost with caching', async () => {
  await resetAndLoadSample();
  await setControl('window', 1);
  await afterRun(() => page.selectOption('#opt-provider', 'anthropic'));
  const shown = await page.evaluate(() => window.tracelitePlayground.run.steps.findIndex((s) => s.planned > 0));
  assert.ok(shown >= 0, 'some step of the sample weighs a rewrite');
  await page.$eval('#step', (el, v) => { el.value = String(v); el.dispatchEvent(new Event('input', { bubbles: true })); }, shown);
  await page.waitForFunction((s) => document.getElementById('prompt-view').dataset.step === String(s), shown, WAIT);
  const { plan } = await page.evaluate(() => window.tracelitePlayground.stepData.report);
  const rows = await page.$$eval('#plan-table tbody tr', (trs) => trs.map((r) => ({ cls: r.className, cells: [...r.cells].map((c) => c.textContent) })));
  assert.equal(rows.length, plan.candidates.length);
  rows.forEach((r, i) => {
    const c = plan.candidates[i];
    assert.equal(r.cls, c.committed ? 'committed' : 'deferred');
    assert.equal(r.cells[0], c.kind);
    assert.equal(r.cells[7], c.committed ? 'committed' : 'deferred');
    assert.equal(r.cells[8], c.reason);
    assert.match(r.cells[4], /\$\d/);
  });
  const committed = plan.candidates.filter((c) => c.committed).length;
  assert.equal(await page.textContent('#plan-summary'), `${committed} committed, ${plan.candidates.length - committed} deferred`);
  assert.match(await page.textContent('#plan .plan-note'), /list prices|configured prices/);
  const figures = await page.textContent('#step-figures');
  assert.match(figures, /this turn with caching \$\d+\.\d{4} → \$\d+\.\d{4}/);
  assert.ok(Number(await page.getAttribute('#step-figures', 'data-turn-cost')) > 0);
});

test('spill grep finds a known line of a spilled observation', async () => {
  await resetAndLoadSample();
  await setControl('budget', 16000);
  // A line from the middle of the sample's largest observation: hidden by the excerpt, kept in the store.
  const steps = JSON.parse(readFileSync(SAMPLE, 'utf8')).steps;
  const big = steps.map((s) => s.observation ?? '').sort((a, b) => b.length - a.length)[0];
  const lines = big.split('\n');
  const known = lines.slice(Math.floor(lines.length / 2)).find((l) => l.trim().length > 20 && lines.indexOf(l) === lines.lastIndexOf(l));
  assert.ok(known, 'the fixture has a distinctive middle line');
  const spills = await page.$$eval('#spill-list option', (os) => os.length);
  assert.ok(spills > 0, 'the replay at budget 16000 spilled something (spill stage)');
  await page.fill('#spill-pattern', known.trim());
  await page.check('#spill-all');
  await page.click('#spill-grep-form button[type=submit]');
  await page.waitForFunction(() => document.querySelectorAll('#spill-matches li').length > 0, null, WAIT);
  const hits = await page.$$eval('#spill-matches li code', (cs) => cs.map((c) => c.textContent));
  assert.ok(hits.includes(known), `grep shows the line ${JSON.stringify(known)}`);
  // Reading from the match shows the same line at the top of the page.
  await page.click('#spill-matches li button');
  await page.waitForFunction((k) => document.getElementById('spill-text').textContent.split('\n')[0].endsWith(k), known, WAIT);
  await page.$eval('#spills', (el) => el.scrollIntoView());
  await shot('spill-grep');
});

test('an invalid setting is reported at its control, and fixing it runs again', async () => {
  await resetAndLoadSample();
  await page.fill('#opt-spillFraction', '2');
  await page.waitForFunction(() => document.getElementById('status').dataset.kind === 'error', null, WAIT);
  const message = await page.textContent('#opt-spillFraction-error');
  assert.match(message, /./, 'the error shows next to the control');
  assert.equal(await page.getAttribute('#opt-spillFraction', 'aria-invalid'), 'true');
  await shot('invalid-setting');
  await setControl('spillFraction', 0.25);
  assert.equal(await page.textContent('#opt-spillFraction-error'), '');
  assert.equal(await page.$eval('#status', (el) => el.dataset.kind), 'done');
});

test('the step view lists the facts the next call uses and where the prompt shows each', async () => {
  await resetAndLoadSample();
  const { classify, extractFacts } = await import(`${ROOT}bench/grounding.mjs`);
  const trajectory = JSON.parse(readFileSync(SAMPLE, 'utf8'));
  const entry = extractFacts(trajectory).find((e) => e.facts.length >= 3);
  assert.ok(entry, 'a step of the sample uses facts learned from earlier output');
  const rowsAt = async (t) => {
    await page.$eval('#step', (el, v) => { el.value = String(v); el.dispatchEvent(new Event('input', { bubbles: true })); }, t);
    await page.waitForFunction((s) => document.getElementById('prompt-view').dataset.step === String(s), t, WAIT);
    return page.$$eval('#facts-table tbody tr', (rows) => rows.map((r) => ({ fact: r.dataset.fact, cls: r.dataset.class, label: r.textContent })));
  };
  const check = async (t, name) => {
    const rows = await rowsAt(t);
    assert.deepEqual(rows.map((r) => r.fact), entry.facts.map((f) => f.text), `${name}: every fact of step ${t}'s call is listed`);
    assert.equal(await page.textContent('#grounding .fact-count'), String(entry.facts.length));
    // The page's class is bench/grounding.mjs's on the exact request it exports
    // (Node has no spill store here: POINTER shows as GONE).
    const request = JSON.parse(await page.inputValue('#export-request'));
    rows.forEach((r, i) => {
      const node = classify(request.messages, entry.facts[i]);
      assert.equal(r.cls === 'POINTER' ? 'GONE' : r.cls, node, `${name}: ${r.fact}`);
    });
    return rows;
  };
  const defaults = await check(entry.step, 'defaults');
  assert.ok(defaults.every((r) => ['TEXT', 'IMAGE_UNREAD', 'POINTER', 'GONE'].includes(r.cls)));
  assert.match(await page.textContent('#grounding .grounding-note'), new RegExp(`Step ${entry.step}'s call \\(bash\\) uses ${entry.facts.length} facts`));
  await page.$eval('#grounding', (el) => el.scrollIntoView());
  await shot('grounding');
  // No recent window and snapshots accepted at k = 0.1, optical the only
  // stage that removes text (the compaction summary names the symbols of
  // what it compacts): the observations the facts came from are shown as
  // images, which the browser cannot read.
  await afterRun(() => page.uncheck('#opt-compact'));
  await afterRun(() => page.uncheck('#opt-phase'));
  await setControl('window', 0);
  await setControl('ratio', 0.1);
  const images = await check(entry.step, 'window 0, k 0.1');
  assert.ok(images.some((r) => r.cls === 'IMAGE_UNREAD'), JSON.stringify(images));
  assert.ok(images.filter((r) => r.cls === 'IMAGE_UNREAD').every((r) => /not OCR'd/.test(r.label)));
  await page.$eval('#grounding', (el) => el.scrollIntoView());
  await shot('grounding-images');
  // The sample keeps every fact visible at a 4k budget (spill excerpts and
  // the compaction summary name them), so a pasted run shows a hidden one: a
  // search the first change consumed is cleared, and a later call uses a name
  // only that search showed.
  const grepOut = Array.from({ length: 40 }, (_, i) => `src/deep/module_${i}.py:${i + 10}:    value = compute_${i}(x)`).join('\n');
  const pasted = {
    id: 'pasted', task: 'Fix the bug.', system: 'You are a coding agent.',
    steps: [
      { thought: 'Search.', tool: 'bash', args: { command: 'grep -rn compute_ src' }, observation: grepOut },
      { thought: 'Change it.', tool: 'bash', args: { command: "sed -i 's/x/y/' src/app.py" }, observation: '' },
      { thought: 'List.', tool: 'bash', args: { command: 'ls' }, observation: 'src\ntests' },
      { thought: 'Status.', tool: 'bash', args: { command: 'git status' }, observation: 'modified: src/app.py' },
      { thought: 'Run it.', tool: 'bash', args: { command: 'python -c "import src.deep.module_7 as m; m.compute_7(1)"' }, observation: 'ok' },
    ],
  };
  await afterRun(() => page.click('#reset-options'));
  await page.click('#paste-box summary');
  await page.fill('#paste-text', JSON.stringify(pasted));
  await afterRun(() => page.click('#paste-load'));
  await afterRun(() => page.selectOption('#opt-optical', 'false'));
  await afterRun(() => page.uncheck('#opt-compact'));
  await setControl('window', 0);
  const tight = await rowsAt(4);
  const hidden = tight.filter((r) => r.cls === 'POINTER' || r.cls === 'GONE');
  assert.ok(hidden.some((r) => r.fact === 'compute_7'), JSON.stringify(tight));
  const hiddenBy = await page.$$eval('#facts-table tbody tr', (rows) => rows.filter((r) => ['POINTER', 'GONE'].includes(r.dataset.class)).map((r) => r.lastElementChild.textContent));
  assert.deepEqual([...new Set(hiddenBy)], ['phase'], JSON.stringify(hiddenBy));
  await shot('grounding-hidden');
  // A single request has no next call: the panel is hidden.
  await page.$eval('#paste-box', (el) => { el.open = true; });
  await page.fill('#paste-text', JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hi' }] }));
  await afterRun(() => page.click('#paste-load'));
  assert.equal(await page.$eval('#grounding', (el) => el.hidden), true);
});

/** A fresh page of its own context (the shared page keeps its state); closed by the caller. */
async function freshPage(viewport, setup) {
  const context = await browser.newContext({ viewport });
  const p = await context.newPage();
  p.on('console', (m) => { if (m.type() === 'error') consoleErrors.push(`console (${viewport.width}px): ${m.text()}`); });
  p.on('pageerror', (e) => consoleErrors.push(`pageerror (${viewport.width}px): ${e.message}`));
  await setup?.(p);
  await p.goto(baseUrl);
  return { p, context };
}

test('the first paint shows the bundled sample before the package has loaded', async () => {
  let release;
  const held = new Promise((resolve) => { release = resolve; });
  const { p, context } = await freshPage({ width: 1440, height: 900 }, (q) =>
    // Hold the wasm back: whatever shows now was drawn without the package.
    q.route('**/tracelite_bg.wasm', async (route) => { await held; await route.continue(); }));
  try {
    await p.waitForSelector('#prompt-view article.msg', { timeout: 10_000 });
    assert.equal(await p.evaluate(() => document.body.dataset.runs), undefined, 'no run has finished yet');
    const sample = JSON.parse(readFileSync(SAMPLE, 'utf8'));
    assert.match(await p.textContent('#input-label'), new RegExp(`^${sample.id} \\(trajectory, ${sample.steps.length} steps\\)`));
    const view = await p.textContent('#prompt-view');
    assert.ok(view.includes(sample.task), 'the prompt view shows the sample task');
    assert.ok((await p.$$('#prompt-view article.msg')).length >= 2 + 2 * sample.steps.length, 'every step is shown');
    await p.screenshot({ path: `${ARTIFACTS}/playground-first-paint.png` });
    release();
    await p.waitForFunction(() => Number(document.body.dataset.runs ?? 0) >= 1, null, WAIT);
    assert.equal(await p.$eval('#prompt-view', (el) => el.dataset.view), 'compressed');
  } finally {
    release();
    await context.close();
  }
});

/** A chart tick label as a number (`12.5k`, `$0.50`, `1M`). */
function tickValue(text) {
  const m = /^\$?(-?[\d.]+)([kM]?)$/.exec(text.trim());
  assert.ok(m, `tick label ${JSON.stringify(text)}`);
  return Number(m[1]) * { '': 1, k: 1e3, M: 1e6 }[m[2]];
}

function assertRegular(values, what) {
  assert.ok(values.length >= 2, `${what}: ${values.length} ticks`);
  assert.equal(values[0], 0, `${what} starts at 0`);
  const step = values[1] - values[0];
  for (let i = 1; i < values.length; i++) {
    assert.ok(Math.abs(values[i] - values[i - 1] - step) < 1e-9 * Math.max(1, step), `${what}: ${values.join(', ')}`);
  }
  const mantissa = step / 10 ** Math.floor(Math.log10(step) + 1e-9);
  assert.ok([1, 2, 5].some((m) => Math.abs(mantissa - m) < 1e-6), `${what}: step ${step} is not 1, 2 or 5 × 10^k`);
}

test('chart ticks are evenly spaced round steps', async () => {
  await resetAndLoadSample();
  for (const id of ['chart-tokens', 'chart-cumulative', 'chart-cost']) {
    const xs = await page.$$eval(`#${id} text.x-tick`, (ts) => ts.map((t) => Number(t.textContent)));
    assertRegular(xs, `${id} steps`);
    assert.ok(xs.length <= 8);
    const ys = await page.$$eval(`#${id} text.y-tick`, (ts) => ts.map((t) => t.textContent));
    assertRegular(ys.map(tickValue), `${id} values`);
  }
});

test('spill grep lists each match once, with the other blobs that hold it', async () => {
  await resetAndLoadSample();
  // With a cap of 25% of the budget the build logs' excerpts are long enough to
  // be rendered: their closing lines are kept in the tool blobs and in the
  // snapshots of the excerpts, and listed once each.
  await setControl('spillFraction', 0.25);
  await page.fill('#spill-pattern', '[balance] ops ');
  await page.check('#spill-all');
  await page.click('#spill-grep-form button[type=submit]');
  await page.waitForFunction(() => document.querySelectorAll('#spill-matches li').length > 0, null, WAIT);
  const hits = await page.$$eval('#spill-matches li', (lis) => lis.map((li) => ({
    text: li.querySelector('code').textContent,
    key: li.querySelector('button').textContent.split(':')[0],
    also: li.querySelectorAll('.also button').length,
  })));
  const texts = hits.map((h) => h.text);
  assert.equal(new Set(texts).size, texts.length, 'a line is listed once');
  assert.ok(hits.some((h) => h.also > 0), 'copies in other blobs are named beside the match');
  assert.ok(hits.every((h) => h.key.startsWith('tool-')), 'listed at the tool output itself');
  assert.match(await page.textContent('#spill-grep-info'), /each listed once/);
  await afterRun(() => page.click('#reset-options'));
});

test('the status line names the request format and the selected provider\'s own format', async () => {
  await resetAndLoadSample();
  assert.match(await page.textContent('#status'), /as OpenAI Chat Completions requests for openai \(its own format\)/);
  await afterRun(() => page.selectOption('#opt-provider', 'anthropic'));
  assert.match(await page.textContent('#status'), /as OpenAI Chat Completions requests for anthropic \(its own format is Anthropic Messages\)/);
  await afterRun(() => page.selectOption('#opt-provider', 'gemini'));
  assert.match(await page.textContent('#status'), /for gemini \(its own format is Gemini generateContent\)/);
  await afterRun(() => page.click('#reset-options'));
});

test('at 390 px wide nothing overflows horizontally', async () => {
  const { p, context } = await freshPage({ width: 390, height: 844 });
  try {
    await p.waitForFunction(() => Number(document.body.dataset.runs ?? 0) >= 1, null, WAIT);
    const check = () => p.evaluate(() => {
      const width = document.documentElement.clientWidth;
      const wide = [...document.querySelectorAll('body *')]
        .filter((e) => e.getClientRects().length > 0 && !e.closest('.visually-hidden, .skip'))
        .filter((e) => e.getBoundingClientRect().right > width + 0.5)
        .filter((e) => ![...document.querySelectorAll('.table-wrap, .image-frame, .spill-text, .prompt-view, .matches, pre, textarea')]
          .some((box) => box !== e && box.contains(e)))
        .map((e) => `${e.tagName.toLowerCase()}${e.id ? `#${e.id}` : ''}.${e.className?.baseVal ?? e.className}`);
      return { scroll: document.documentElement.scrollWidth, width, wide: wide.slice(0, 10) };
    });
    let r = await check();
    assert.ok(r.scroll <= r.width, `page is ${r.scroll}px wide in a ${r.width}px viewport: ${r.wide.join(', ')}`);
    assert.deepEqual(r.wide, []);
    await p.screenshot({ path: `${ARTIFACTS}/playground-390.png`, fullPage: true });
    // Usable, not just contained: the header scrolls away instead of covering the
    // small screen, each chart gets the full width and its axis labels stay legible.
    assert.notEqual(await p.$eval('.top', (el) => getComputedStyle(el).position), 'sticky');
    // The figures come before the controls.
    const tops = await p.evaluate(() => ({
      figures: document.querySelector('.figures').getBoundingClientRect().top,
      controls: document.querySelector('.controls').getBoundingClientRect().top,
    }));
    assert.ok(tops.figures < tops.controls, JSON.stringify(tops));
    const charts = await p.$$eval('svg.chart', (svgs) => svgs.map((svg) => ({
      width: svg.getBoundingClientRect().width,
      tick: Math.min(...[...svg.querySelectorAll('text.tick')].map((t) => t.getBoundingClientRect().height)),
    })));
    for (const c of charts) {
      assert.ok(c.width >= 300, `a chart is ${c.width}px wide`);
      assert.ok(c.tick >= 9, `axis labels are ${c.tick.toFixed(1)}px high`);
    }
    // The spill browser and the export, scrolled to.
    await p.fill('#spill-pattern', 'build/accounts/ops/2026-06.html');
    await p.click('#spill-grep-form button[type=submit]');
    await p.waitForFunction(() => document.querySelectorAll('#spill-matches li').length > 0, null, WAIT);
    r = await check();
    assert.ok(r.scroll <= r.width, `after a grep the page is ${r.scroll}px wide: ${r.wide.join(', ')}`);
  } finally {
    await context.close();
  }
});

test('the exported JS imports the npm package `tracelite` and runs, printing the page\'s figures', async () => {
  await resetAndLoadSample();
  await setControl('budget', 16000);
  await afterRun(() => page.selectOption('#opt-provider', 'anthropic'));
  const code = await page.textContent('#export-js');
  assert.match(code, /from 'tracelite';/);
  assert.doesNotMatch(code, /from '\.{0,2}\//, 'no relative import');
  // As an npm user has it: node_modules/tracelite is the built package.
  const dir = mkdtempSync(join(tmpdir(), 'tracelite-export-'));
  try {
    mkdirSync(join(dir, 'node_modules'));
    symlinkSync(join(ROOT, 'pkg'), join(dir, 'node_modules', 'tracelite'), 'dir');
    writeFileSync(join(dir, 'tracelite-run.mjs'), code);
    const out = execFileSync(process.execPath, [join(dir, 'tracelite-run.mjs')], { cwd: ROOT, encoding: 'utf8' });
    const options = JSON.parse(await page.$eval('#export-cli', (el) => el.dataset.options));
    // The sample's options (its model among them: snapshots need a vision model) and the provider chosen.
    assert.deepEqual(options, { ...SAMPLE_OPTIONS, budget: 16000, provider: 'anthropic' });
    const cli = cliReplay(options);
    assert.equal(out.trim(), `${cli.baseline_tokens} → ${cli.compressed_tokens} tokens, ${(cli.reduction * 100).toFixed(1)}% less`);
    const shown = await shownFigures();
    assert.equal(shown.compressed, cli.compressed_tokens);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  await afterRun(() => page.click('#reset-options'));
});

// Issue 38 item 7.
test('the pricing boxes hold the planner\'s prices for the provider until edited, so the cost figures and the plan rows agree', async () => {
  await resetAndLoadSample();
  const planPrices = () => page.evaluate(() => window.tracelitePlayground.stepData.report.plan.prices);
  const boxes = async () => ({ input: Number(await page.inputValue('#price')), mult: Number(await page.inputValue('#cache-mult')) });
  await page.waitForFunction(() => window.tracelitePlayground.stepData?.report?.plan, null, WAIT);
  const openai = await planPrices();
  assert.deepEqual(await boxes(), { input: openai.input, mult: Math.round((openai.cachedInput / openai.input) * 1000) / 1000 });
  assert.equal(await page.textContent('#price-note'), "the planner's prices for openai");
  await afterRun(() => page.selectOption('#opt-provider', 'anthropic'));
  await page.waitForFunction((p) => window.tracelitePlayground.stepData?.report?.plan?.prices.input !== p, openai.input, WAIT);
  const anthropic = await planPrices();
  assert.notEqual(anthropic.input, openai.input);
  assert.equal((await boxes()).input, anthropic.input);
  // A typed price stays through later runs, until Reset to defaults.
  const before = await page.textContent('#cost');
  await page.fill('#price', '7');
  assert.notEqual(await page.textContent('#cost'), before);
  assert.equal(await page.textContent('#price-note'), 'your prices');
  await setControl('budget', 20000);
  assert.equal((await boxes()).input, 7);
  await afterRun(() => page.click('#reset-options'));
  assert.equal((await boxes()).input, openai.input);
});

test('a jump to the prompt (the skip link) leaves "Prompt at step N" below the sticky header', async () => {
  await page.evaluate(() => { window.scrollTo(0, 0); location.hash = ''; });
  await page.evaluate(() => { location.hash = '#prompt'; });
  await page.waitForFunction(() => window.scrollY > 0, null, WAIT);
  const r = await page.evaluate(() => ({
    header: document.querySelector('.top').getBoundingClientRect().bottom,
    heading: document.getElementById('prompt-h').getBoundingClientRect().top,
  }));
  assert.ok(r.heading >= r.header, `the heading (top ${r.heading}px) is under the header (bottom ${r.header}px)`);
  await page.evaluate(() => { history.replaceState(null, '', location.pathname); window.scrollTo(0, 0); });
});

test('the busy status shows a drawn spinner, not an emoji glyph', async () => {
  const style = await page.evaluate(() => {
    const probe = document.createElement('p');
    probe.className = 'status';
    probe.dataset.kind = 'busy';
    document.body.append(probe);
    const s = getComputedStyle(probe, '::before');
    const out = { content: s.content, border: s.borderTopStyle, width: s.width };
    probe.remove();
    return out;
  });
  assert.equal(style.content, '""');
  assert.equal(style.border, 'solid');
  assert.notEqual(style.width, '0px');
});

test('a single pasted request shows the stage bars, not one-point line charts', async () => {
  await page.$eval('#paste-box', (el) => { el.open = true; });
  await page.fill('#paste-text', JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hi' }] }));
  await afterRun(() => page.click('#paste-load'));
  const shown = await page.$$eval('svg.chart', (svgs) => Object.fromEntries(svgs.map((s) => [s.id, s.getBoundingClientRect().width > 0])));
  assert.deepEqual(shown, { 'chart-tokens': false, 'chart-cumulative': false, 'chart-cost': false, 'chart-stages': true });
  await resetAndLoadSample();
  assert.ok(await page.$eval('#chart-tokens', (s) => s.getBoundingClientRect().width > 0), 'a trajectory shows them again');
});

test('no console errors during the session', () => {
  assert.deepEqual(consoleErrors, []);
});
