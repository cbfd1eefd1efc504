// formatReport (issue 50, item 4): a compress report in a few lines of text.
// Every expectation is computed from the report object itself (no figure is
// copied from a run), over the demo session at the demo's settings
// (16,000 tokens, gpt-5: every stage acts), one over-budget request and one
// with path pointers; then the CLI's --explain and one adapter's `debug`.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SpillStore, compress, formatReport, replayTrajectory, trajectoryToRequest } from '../../pkg/entries/node.js';
import { traceliteInputFilter } from '../../pkg/adapters/openai-agents/index.js';
import { createProxy } from '../../pkg/adapters/proxy/index.js';

const root = new URL('../../', import.meta.url).pathname;
const cli = join(root, 'pkg/cli/index.mjs');
const DEMO = join(root, 'tests/fixtures/demo-session.json');
const DEMO_OPTIONS = { budget: 16000, model: 'gpt-5' };
const STAGES = ['spill', 'dedup', 'phase', 'optical', 'compact'];
/** Change kinds and the stage that records them (src/spill, dedup, phase, optical, compact). */
const KIND_STAGE = { excerpt: 'spill', dedup: 'dedup', tombstone: 'phase', snapshot: 'optical', summary: 'compact' };

/** Every step's report of the demo session replayed at the demo's settings. */
function demoReports() {
  const reports = [];
  replayTrajectory(readFileSync(DEMO, 'utf8'), DEMO_OPTIONS, { onStep: ({ output }) => reports.push(output.report) });
  return reports;
}

const reports = demoReports();

/** The line of `stage` in `text` (stage lines are indented by two spaces), or undefined. */
const stageLine = (text, stage) => text.split('\n').find((l) => l.startsWith(`  ${stage} `));

/** A pointer's place (`spill://<session>/` or a directory) and key. */
function split(pointer) {
  const at = pointer.lastIndexOf('/');
  return { base: pointer.slice(0, at + 1), key: pointer.slice(at + 1) };
}

/** Kinds whose first key a stage line showed (over every report checked). */
const keysShown = new Set();

/** Checks every line of `formatReport(report)` against the report's own numbers. */
function checkAgainstReport(report) {
  const text = formatReport(report);
  const lines = text.split('\n');
  const { tokensBefore: before, tokensAfter: after } = report;
  assert.match(lines[0], new RegExp(`^tracelite: ${before} -> ${after} tokens`));
  if (before > 0) {
    const pct = (((after - before) / before) * 100).toFixed(1);
    assert.ok(lines[0].includes(`(${after > before ? '+' : ''}${pct}%)`), lines[0]);
  }
  assert.ok(lines[0].includes(report.format));
  const pointers = new Set();
  for (const stage of STAGES) {
    const s = report.stages.find((x) => x.stage === stage);
    const changes = report.changes.filter((c) => c.stage === stage);
    const saved = s ? s.tokensBefore - s.tokensAfter : 0;
    const line = stageLine(text, stage);
    const acted = saved !== 0 || changes.length > 0 || (stage === 'compact' && report.compaction);
    if (!acted) {
      assert.equal(line, undefined, `${stage} did nothing, yet: ${line}`);
      continue;
    }
    assert.ok(line, `${stage} saved ${saved} with ${changes.length} changes, but has no line:\n${text}`);
    assert.ok(line.includes(`${saved > 0 ? '-' : '+'}${Math.abs(saved)} tokens`), line);
    for (const [kind, owner] of Object.entries(KIND_STAGE)) {
      const mine = changes.filter((c) => c.kind === kind);
      if (owner !== stage || mine.length === 0 || kind === 'summary') continue;
      assert.match(line, new RegExp(`: (?:.*; )?${mine.length} `), `${kind}: ${mine.length} changes in ${line}`);
      const kept = [...new Set(mine.map((c) => c.pointer).filter(Boolean))];
      kept.forEach((p) => pointers.add(p));
      if (kept.length > 0 && line.includes(split(kept[0]).key)) {
        // The first key, and how many more (the line leaves keys out only when too long with them).
        assert.ok(line.includes(`(${split(kept[0]).key}${kept.length > 1 ? ` +${kept.length - 1}` : ''})`), line);
        keysShown.add(kind);
      }
    }
    if (stage === 'compact' && report.compaction) {
      assert.ok(line.includes(`${report.compaction.covered} messages`), line);
      if (report.compaction.pointer) {
        pointers.add(report.compaction.pointer);
        assert.ok(line.includes(`(${split(report.compaction.pointer).key})`), line);
        keysShown.add('summary');
      }
    }
  }
  // One read-back line per place the hidden blobs live.
  const readBack = lines.filter((l) => l.startsWith('  read back: '));
  const bases = [...new Set([...pointers].map((p) => split(p).base))];
  assert.deepEqual(readBack, bases.map((b) => (b.startsWith('spill://')
    ? `  read back: read_spill/grep_spill ${b}<key>`
    : `  read back: sed -n 'FIRST,LASTp' '${b}<key>'`)));
  const plan = lines.find((l) => l.startsWith('  plan: '));
  assert.ok(plan, text);
  for (const c of report.plan.candidates) {
    const range = c.observations ? ` ${c.observations[0]}-${c.observations[1]}` : '';
    assert.ok(plan.includes(`${c.kind}${range} ${c.committed ? 'committed' : 'deferred'}`) || plan.endsWith('…'), plan);
  }
  if (report.plan.candidates.length === 0) assert.ok(plan.includes(`${report.plan.demoted} observations demoted`), plan);
  assert.equal(lines.some((l) => l.startsWith('  over budget')), Boolean(report.overBudget));
  for (const l of lines) {
    // Only a read-back line (never cut) may be longer.
    if (!l.startsWith('  read back: ')) assert.ok(l.length <= 100, `${l.length} characters: ${l}`);
  }
  assert.ok(!text.includes('\x1b'), 'no colors by default');
  assert.equal(formatReport(structuredClone(report)), text, 'deterministic');
  return text;
}

test('every line of each demo step matches its report, and over the session every stage has one', () => {
  assert.equal(reports.length, 40);
  const seen = new Set();
  for (const report of reports) {
    const text = checkAgainstReport(report);
    for (const stage of STAGES) if (stageLine(text, stage)) seen.add(stage);
  }
  assert.deepEqual([...seen].sort(), [...STAGES].sort(), 'the demo settings make every stage act');
  assert.deepEqual([...keysShown].sort(), Object.keys(KIND_STAGE).sort(), 'each kind names its first blob somewhere');
});

test('with color, the same text with ANSI codes; a label goes on the first line', () => {
  const report = reports.at(-1);
  const plain = formatReport(report);
  const colored = formatReport(report, { color: true });
  assert.ok(colored.includes('\x1b['));
  assert.equal(colored.replace(/\x1b\[[0-9;]*m/g, ''), plain);
  assert.ok(formatReport(report, { label: 'step 39' }).startsWith('tracelite step 39: '));
});

test('an over-budget request names its tokens, the budget and the largest message', () => {
  const request = { messages: [{ role: 'system', content: 'You help.' }, { role: 'user', content: 'word '.repeat(40000) }] };
  const { report } = compress(request, { budget: 2000, store: new SpillStore() });
  assert.ok(report.overBudget, 'a user message over the budget stays over it');
  const { tokens, budget, largest, largestTokens } = report.overBudget;
  const line = formatReport(report).split('\n').find((l) => l.startsWith('  over budget'));
  assert.equal(line, `  over budget: ${tokens} tokens > budget ${budget}; largest ${largest} (${largestTokens} tokens)`);
  checkAgainstReport(report);
});

test('path pointers are read back with sed -n on the file', () => {
  const request = trajectoryToRequest(readFileSync(DEMO, 'utf8'), 39);
  const dir = mkdtempSync(join(tmpdir(), 'tracelite-explain-'));
  try {
    const { report } = compress(request, { ...DEMO_OPTIONS, spill: { pointerRoot: dir }, store: new SpillStore() });
    const spilled = report.changes.filter((c) => c.kind === 'excerpt' && c.pointer);
    assert.ok(spilled.length > 0);
    const text = formatReport(report);
    assert.ok(spilled[0].pointer.startsWith(`${dir}/`));
    assert.ok(text.includes(`  read back: sed -n 'FIRST,LASTp' '${split(spilled[0].pointer).base}<key>'`), text);
    checkAgainstReport(report);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('snapshots sent by URL are counted with the bytes to serve', () => {
  const request = trajectoryToRequest(readFileSync(DEMO, 'utf8'), 39);
  const { report } = compress(request, { ...DEMO_OPTIONS, optical: { imageUrl: 'https://img.example/i/{id}.png' }, store: new SpillStore() });
  const { urls, images, bytes } = report.imageUrls;
  assert.ok(urls > 0, 'the demo sends snapshots at step 39');
  const line = formatReport(report).split('\n').find((l) => l.startsWith('  images: '));
  assert.equal(line, `  images: ${urls} snapshot parts by URL (${images} images, ${bytes} bytes to serve)`);
  checkAgainstReport(report);
});

test('a value that is not a report is INVALID_ARGUMENT naming the field', () => {
  assert.throws(() => formatReport(null), { code: 'INVALID_ARGUMENT', path: 'report', message: /^report: .*got null/ });
  assert.throws(() => formatReport('{}'), { code: 'INVALID_ARGUMENT', path: 'report', message: /got a string/ });
  assert.throws(() => formatReport({ tokensBefore: 1 }), { code: 'INVALID_ARGUMENT', path: 'report.tokensAfter' });
  assert.throws(() => formatReport(reports[0], 'color'), { code: 'INVALID_ARGUMENT', path: 'options' });
});

test('the CLI: compress --explain prints formatReport of its report on stderr; replay --explain, one per step', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tracelite-explain-cli-'));
  try {
    const request = trajectoryToRequest(readFileSync(DEMO, 'utf8'), 30);
    const file = join(dir, 'request.json');
    writeFileSync(file, JSON.stringify(request));
    const r = spawnSync(process.execPath, [cli, 'compress', file, '--budget', '16000', '--model', 'gpt-5', '--explain'], { encoding: 'utf8', timeout: 120000 });
    assert.equal(r.status, 0, r.stderr);
    const { report } = compress(request, { ...DEMO_OPTIONS, store: new SpillStore() });
    assert.equal(r.stderr, `${formatReport(report)}\n`);
    assert.deepEqual(JSON.parse(r.stdout).messages.length > 0, true);
    const without = spawnSync(process.execPath, [cli, 'compress', file, '--budget', '16000', '--model', 'gpt-5'], { encoding: 'utf8', timeout: 120000 });
    assert.equal(without.stderr, '', 'nothing on stderr without --explain');

    const replay = spawnSync(process.execPath, [cli, 'replay', DEMO, '--budget', '16000', '--model', 'gpt-5', '--explain', '--json'], { encoding: 'utf8', timeout: 300000 });
    assert.equal(replay.status, 0, replay.stderr);
    const firsts = replay.stderr.split('\n').filter((l) => l.startsWith('tracelite step '));
    assert.equal(firsts.length, reports.length);
    reports.forEach((rep, t) => assert.ok(replay.stderr.includes(formatReport(rep, { label: `step ${t}` })), `step ${t}`));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

/** An OpenAI Agents input: the task, one bash call and its long output. */
function agentsInput(log) {
  return [
    { role: 'user', content: 'Fix the failing test.' },
    { type: 'function_call', callId: 'call_1', name: 'bash', arguments: '{"command":"pytest"}', status: 'completed' },
    { type: 'function_call_result', callId: 'call_1', name: 'bash', status: 'completed', output: log },
  ];
}

test('an adapter\'s debug option writes formatReport of each turn (a function, or console.error with true)', async () => {
  const log = Array.from({ length: 3000 }, (_, i) => `tests/test_mod_${i % 37}.py::test_case_${i} PASSED`).join('\n');
  const texts = [];
  const reported = [];
  const filter = traceliteInputFilter({
    budget: 16000, session: 'dbg', debug: (text) => texts.push(text), onReport: ({ report }) => reported.push(report),
  });
  const args = { modelData: { input: agentsInput(log), instructions: 'You fix bugs.' }, agent: { model: 'gpt-5' }, context: {} };
  await filter(args);
  await filter(args);
  assert.equal(texts.length, 2);
  assert.deepEqual(texts, reported.map((r) => formatReport(r, { label: '[dbg]' })));
  assert.ok(texts[0].includes('  read back: read_spill/grep_spill spill://dbg/<key>'), texts[0]);

  const errors = [];
  const original = console.error;
  console.error = (...a) => errors.push(a.join(' '));
  try {
    await traceliteInputFilter({ budget: 16000, session: 'dbg', debug: true })(args);
    await traceliteInputFilter({ budget: 16000, session: 'dbg' })(args);
  } finally {
    console.error = original;
  }
  assert.equal(errors.length, 1, 'debug: true writes once per turn; off by default');
  assert.ok(errors[0].startsWith('tracelite [dbg]: '));
  assert.throws(() => traceliteInputFilter({ debug: 'yes' }), { code: 'INVALID_OPTION', path: 'debug', message: /^debug: .*got a string$/ });
});

test('the proxy\'s debug option: each compressed request\'s report, labelled with its session', async () => {
  const texts = [];
  const infos = [];
  const proxy = createProxy({
    upstream: 'https://api.example', fetch: async () => Response.json({ ok: true }),
    options: { budget: 16000 }, debug: (text) => texts.push(text), onReport: (info) => infos.push(info),
  });
  const request = trajectoryToRequest(readFileSync(DEMO, 'utf8'), 20);
  const res = await proxy(new Request('https://proxy.test/v1/chat/completions', {
    method: 'POST', headers: { 'content-type': 'application/json', authorization: 'Bearer sk-test' }, body: JSON.stringify(request),
  }));
  assert.equal(res.status, 200);
  assert.equal(infos.length, 1);
  assert.deepEqual(texts, [formatReport(infos[0].report, { label: `[${infos[0].session}]` })]);
  assert.throws(() => createProxy({ upstream: 'https://api.example', debug: 1 }), { code: 'INVALID_OPTION', path: 'debug', message: /got a number$/ });
});
