// The playground's per-snapshot legibility (issue 40 item 2) in Debian's
// Chromium, headless, via playwright-core: a pasted session whose first
// observation (a `cat -n` listing holding known facts a later call uses) is
// drawn as a snapshot; the step view lists those facts under the image and
// which of them real tesseract reads, through `make playground`'s POST /ocr.
// The expected read / missed split is computed here from the same image by
// the bench's reader (bench/ocr.mjs). On a static host (no endpoint) and
// without tesseract the facts are listed with no figure. Skips, saying why,
// when Chromium, tesseract or the built package is missing.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync } from 'node:fs';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { CHROMIUM, CHROMIUM_ARGS as ARGS } from './support/chromium.mjs';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const ARTIFACTS = `${ROOT}tests/artifacts`;
const WAIT = { timeout: 120_000 };
const { tesseractAvailable } = await import(`${ROOT}scripts/tesseract.mjs`);

const missing = [
  !existsSync(CHROMIUM) && `Chromium not found at ${CHROMIUM} (apt-get install -y chromium, or set CHROMIUM_PATH)`,
  !tesseractAvailable() && 'tesseract is not installed (apt-get install tesseract-ocr)',
  !existsSync(`${ROOT}pkg/entries/browser.js`) && 'pkg/ is not built (make pkg)',
].filter(Boolean);
const skip = missing.length ? `not run: ${missing.join('; ')}` : false;

/** Lines of a `cat -n` listing with the known facts at lines 12, 30, 47 and 63. */
function listing() {
  const lines = [];
  for (let i = 1; i <= 90; i++) {
    let l = `    value_${i} = base_rate * ${i + 100}`;
    if (i === 12) l = 'def reconcile_entries(ledger, statement_rate):';
    if (i === 30) l = '    from ledger.tables import currency_table_v2';
    if (i === 47) l = '    total = compute_balance_total(ledger.accounts, 4821)';
    if (i === 63) l = '    path = "src/ledger/rates_table.py"';
    lines.push(`${String(i).padStart(6)}\t${l}`);
  }
  return lines.join('\n');
}

const TRAJECTORY = {
  id: 'legibility-probe', task: 'Fix the rounding bug in the ledger.', system: 'You are a coding agent.',
  steps: [
    { thought: 'Read it.', tool: 'bash', args: { command: 'cat -n src/ledger/core.py' }, observation: listing() },
    { thought: 'Look.', tool: 'bash', args: { command: 'ls' }, observation: 'src\ntests' },
    { thought: 'Status.', tool: 'bash', args: { command: 'git status' }, observation: 'clean' },
    { thought: 'Search.', tool: 'bash', args: { command: 'grep -n reconcile_entries src/ledger/rates_table.py' }, observation: 'none' },
    { thought: 'Use them.', tool: 'bash', args: { command: 'python -c "from ledger import compute_balance_total, currency_table_v2; print(4821)"' }, observation: 'ok' },
  ],
};
/** The facts later calls take from step 0's listing (EVALUATION.md §1), as the bench finds them. */
const FACTS = ['4821', 'compute_balance_total', 'currency_table_v2', 'reconcile_entries', 'src/ledger/rates_table.py'];

let browser;
const servers = [];
const pageErrors = [];

async function serve(ocr) {
  const { startServer } = await import(`${ROOT}www/serve.mjs`);
  const s = await startServer({ port: 0, ocr });
  servers.push(s.server);
  return s.url;
}

/**
 * A fresh page on `url` showing the pasted session's last step with step 0
 * drawn as a snapshot (no recent window, snapshots accepted at k = 0.1,
 * phase and compaction off).
 */
async function openSession(url) {
  const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
  const page = await context.newPage();
  page.on('pageerror', (e) => pageErrors.push(e.message));
  await page.goto(url);
  const runs = () => page.evaluate(() => Number(document.body.dataset.runs ?? 0));
  await page.waitForFunction(() => Number(document.body.dataset.runs ?? 0) >= 1, null, WAIT);
  const afterRun = async (action) => {
    const n = await runs();
    await action();
    await page.waitForFunction((k) => Number(document.body.dataset.runs ?? 0) > k, n, WAIT);
  };
  await page.click('#paste-box summary');
  await page.fill('#paste-text', JSON.stringify(TRAJECTORY));
  await afterRun(() => page.click('#paste-load'));
  await afterRun(() => page.uncheck('#opt-compact'));
  await afterRun(() => page.uncheck('#opt-phase'));
  await afterRun(() => page.fill('#opt-window', '0'));
  await afterRun(() => page.fill('#opt-ratio', '0.1'));
  await page.waitForFunction((t) => document.getElementById('prompt-view').dataset.step === String(t), TRAJECTORY.steps.length - 1, WAIT);
  return { page, context };
}

/** The panel under the snapshot of step 0, scrolled into view, once it left `states`. */
async function panelAfter(page, states) {
  const panel = page.locator('section.legibility[data-steps="0"]');
  await panel.scrollIntoViewIfNeeded(WAIT);
  await page.waitForFunction((s) => {
    const p = document.querySelector('section.legibility[data-steps="0"]');
    return p && !s.includes(p.dataset.state);
  }, states, WAIT);
  return panel;
}

const factsShown = (page) => page.$$eval('section.legibility[data-steps="0"] li[data-fact]', (lis) => lis.map((li) => ({ fact: li.dataset.fact, read: li.dataset.read ?? null })));

before(async () => {
  if (skip) return;
  mkdirSync(ARTIFACTS, { recursive: true });
  const { chromium } = await import('playwright-core');
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS, headless: true });
});

after(async () => {
  await browser?.close();
  await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
});

test('each snapshot shows the facts inside it and which of them real tesseract reads, as the bench reads the same image', { skip }, async () => {
  const { ocrReader } = await import(`${ROOT}bench/ocr.mjs`);
  const { readFacts, snapshotGroups } = await import(`${ROOT}bench/legibility.mjs`);
  const { page, context } = await openSession(await serve({}));
  try {
    const panel = await panelAfter(page, ['waiting', 'reading']);
    assert.equal(await panel.getAttribute('data-state'), 'read', await panel.textContent());
    // The facts inside: the known ones, each once.
    const shown = await factsShown(page);
    assert.deepEqual(shown.map((r) => r.fact).sort(), FACTS);
    // The bench's reading of the very images the page shows (the exported request).
    const request = JSON.parse(await page.inputValue('#export-request'));
    const group = snapshotGroups([], request.messages).find((g) => g.steps.includes(0));
    assert.ok(group, 'step 0 is drawn as a snapshot');
    const ocrText = group.urls.map((u) => ocrReader().read(u)).join('\n');
    const expected = readFacts(FACTS.map((text) => ({ text })), ocrText);
    const byFact = Object.fromEntries(shown.map((r) => [r.fact, r.read]));
    assert.deepEqual(FACTS.filter((f) => byFact[f] === 'true'), expected.read.map((f) => f.text), ocrText);
    assert.deepEqual(FACTS.filter((f) => byFact[f] === 'false'), expected.missed.map((f) => f.text), ocrText);
    assert.ok(expected.read.length >= 3, `tesseract reads most of the facts: ${ocrText}`);
    const summary = await panel.locator('.legibility-summary').textContent();
    const share = ((100 * expected.read.length) / FACTS.length).toFixed(1);
    assert.match(summary, new RegExp(`tesseract reads ${expected.read.length} of 5 facts inside \\(${share.replace('.', '\\.')}%;`));
    assert.match(summary, /lines kept line by line|lines run together/);
    assert.equal(await panel.locator('.ocr-text pre').textContent(), ocrText);
    await panel.screenshot({ path: `${ARTIFACTS}/playground-legibility.png` });
    // Back to a step and forth again: the texts come from the page's cache (no new POST).
    let posts = 0;
    page.on('request', (r) => { if (r.method() === 'POST' && r.url().endsWith('/ocr')) posts++; });
    await page.click('#step-prev');
    await page.waitForFunction(() => document.getElementById('prompt-view').dataset.step === '3', null, WAIT);
    await panelAfter(page, ['waiting', 'reading']);
    assert.deepEqual(await factsShown(page), shown);
    assert.equal(posts, 0);
  } finally {
    await context.close();
  }
  assert.deepEqual(pageErrors, []);
});

test('on a static host (no /ocr) and without tesseract the facts are listed with no figure', { skip }, async () => {
  for (const [name, ocr, reason] of [
    ['static', false, /legibility needs tesseract \(`make playground`\): this server has no OCR endpoint/],
    ['no tesseract', { bin: '/nonexistent/tesseract' }, /legibility needs tesseract \(`make playground`\): tesseract is not installed/],
  ]) {
    const { page, context } = await openSession(await serve(ocr));
    try {
      const panel = await panelAfter(page, ['waiting']);
      assert.equal(await panel.getAttribute('data-state'), 'unavailable', name);
      const text = await panel.textContent();
      assert.match(text, reason, name);
      assert.doesNotMatch(text, /tesseract reads \d|%/, `${name}: no figure`);
      const shown = await factsShown(page);
      assert.deepEqual(shown.map((r) => r.fact).sort(), FACTS, name);
      assert.ok(shown.every((r) => r.read === null), `${name}: no fact marked read or missed`);
      await panel.screenshot({ path: `${ARTIFACTS}/playground-legibility-${name.replace(' ', '-')}.png` });
    } finally {
      await context.close();
    }
  }
  assert.deepEqual(pageErrors, []);
});
