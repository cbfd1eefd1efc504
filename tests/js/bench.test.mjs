// The evaluation harness (bench/): its formulas and one end-to-end run on the
// bundled sample trajectory with a few policies.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as pkg from '../../pkg/entries/node.js';
import { PromptCache } from '../../bench/cost.mjs';
import { criticalItems, editedPaths, legible, recoverable, toolCallsKept } from '../../bench/fidelity.mjs';
import { addImageBytes, countSnapshots, recoveryTokens, recoveryTurns, runBench, sampleLines, spreadPerSource } from '../../bench/harness.mjs';
import { CLEARED_PLACEHOLDER, clearToolUses, geminiMasking, geminiSnippet, geminiTokens, headTail, maskObservations } from '../../bench/policies.mjs';
import { ocrShows } from '../../bench/grounding.mjs';
import { addLegibility, emptyLegibility, factsInside, legibilitySection, legibilityShare, mergeLegibility, readSnapshot, snapshotGroups, snapshotLayout, snapshotTokenRows } from '../../bench/legibility.mjs';
import { decodeGray, encodeGray, ocrReader, upscale } from '../../bench/ocr.mjs';
import { findRenderer } from '../../bench/render.mjs';
import { chainPlan, chainRequests, currentTaskVerbatim, endWindow, hidesAFact, sessionFacts } from '../../bench/long.mjs';
import { dominance, effectiveCostPerTrace, effectiveSection, longSection, rereadShare } from '../../bench/report.mjs';
import { encoder, imageBytes, imageTokens, o200kCounter, pngSize } from '../../bench/tokens.mjs';

const root = new URL('../../', import.meta.url).pathname;
const sample = join(root, 'tests/fixtures/sample-trajectory.json');

test('image formulas agree with src/tokens.rs image_tokens', () => {
  // The values pinned by the Rust unit test `image_formulas_match_reference`.
  assert.equal(imageTokens('anthropic', 750, 1000), 1000);
  assert.equal(imageTokens('openai', 1024, 1024), 85 + 4 * 170);
  assert.equal(imageTokens('gemini', 300, 300), 258);
  assert.equal(imageTokens('gemini', 1000, 700), 258 * 2);
  assert.equal(imageTokens('qwen', 280, 56), 20);
  assert.equal(imageTokens('openai-patch', 64, 64), 7);
  assert.equal(imageTokens('openai', 4000, 4000, { detail: 'low' }), 85);
  // Downscaling: Anthropic caps the long edge at 1568 px and the area at ~1.15 MP.
  assert.equal(imageTokens('anthropic', 3136, 100), Math.ceil((1568 * 50) / 750));
  assert.equal(imageTokens('gemini', 800, 800, { mediaResolution: 'medium' }), 560);
});

test('the piecewise o200k counter equals js-tiktoken on ordinary text', () => {
  const enc = encoder();
  const count = o200kCounter();
  const steps = JSON.parse(readFileSync(sample, 'utf8')).steps;
  const text = steps.map((s) => s.observation).join('\n').split('\n').filter((l) => l.length < 60).join('\n').slice(0, 8000);
  assert.equal(count(text), enc.encode(text, 'all').length);
  assert.equal(count('def f(x):\n    return x  # café\n\n'), enc.encode('def f(x):\n    return x  # café\n\n').length);
  // A 1000-char run is counted in chunks, close to the exact count.
  const run = `x = "${'-'.repeat(1000)}"`;
  assert.ok(Math.abs(count(run) - enc.encode(run).length) <= 16);
  assert.equal(count.stats.longPieces, 1);
});

test('pngSize reads the IHDR of a base64 PNG', () => {
  const png = Buffer.alloc(33);
  Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]).copy(png);
  png.writeUInt32BE(13, 8);
  png.write('IHDR', 12, 'latin1');
  png.writeUInt32BE(578, 16);
  png.writeUInt32BE(700, 20);
  assert.deepEqual(pngSize(`data:image/png;base64,${png.toString('base64')}`), { width: 578, height: 700 });
  assert.equal(pngSize('aGVsbG8='), null);
});

test('imageBytes and addImageBytes: decoded PNG bytes, base64 bytes and image tokens per provider', () => {
  assert.deepEqual(imageBytes('data:image/png;base64,QUJD'), { base64: 4, png: 3 });
  assert.deepEqual(imageBytes('QUI='), { base64: 4, png: 2 });
  assert.deepEqual(imageBytes('QQ=='), { base64: 4, png: 1 });
  // A 1000x500 PNG header (IHDR only: pngSize reads the size from it).
  const head = Buffer.alloc(33);
  Buffer.from('\x89PNG\r\n\x1a\n', 'latin1').copy(head);
  head.writeUInt32BE(13, 8);
  head.write('IHDR', 12, 'latin1');
  head.writeUInt32BE(1000, 16);
  head.writeUInt32BE(500, 20);
  const url = `data:image/png;base64,${head.toString('base64')}`;
  const bytes = { requestsIn: 0, requestsOut: 0, images: 0, png: 0, base64: 0, imageTokens: { anthropic: 0, openai: 0, gemini: 0 } };
  addImageBytes(bytes, { role: 'user', content: [{ type: 'text', text: 'x' }, { type: 'image_url', image_url: { url } }, { type: 'image_url', image_url: { url } }] });
  assert.equal(bytes.images, 2);
  assert.equal(bytes.png, 2 * 33);
  assert.equal(bytes.base64, 2 * 44);
  for (const p of ['anthropic', 'openai', 'gemini']) assert.equal(bytes.imageTokens[p], 2 * imageTokens(p, 1000, 500), p);
});

test('head+tail keeps 5k+5k of long outputs and leaves short ones alone', () => {
  const f = headTail(5000, 5000);
  assert.equal(f('short'), 'short');
  const long = 'a'.repeat(6000) + 'MIDDLE' + 'z'.repeat(6000);
  const out = f(long);
  assert.ok(out.includes('a'.repeat(5000)) && out.includes('z'.repeat(5000)));
  assert.ok(!out.includes('MIDDLE'));
  assert.match(out, /2006 characters elided/);
});

test('masking keeps the last N tool outputs', () => {
  const msgs = [{ role: 'user', content: 'task' }];
  for (let i = 0; i < 7; i++) {
    msgs.push({ role: 'assistant', content: null, tool_calls: [{ id: `c${i}`, type: 'function', function: { name: 'bash', arguments: `{"command":"ls ${i}"}` } }] });
    msgs.push({ role: 'tool', tool_call_id: `c${i}`, content: `line1\nout ${i}` });
  }
  const out = maskObservations(5)(msgs);
  const tools = out.filter((m) => m.role === 'tool').map((m) => m.content);
  assert.deepEqual(tools.slice(0, 2), ['Old environment output: (2 lines omitted)', 'Old environment output: (2 lines omitted)']);
  assert.deepEqual(tools.slice(2), [2, 3, 4, 5, 6].map((i) => `line1\nout ${i}`));
  assert.deepEqual(toolCallsKept(msgs, out), { total: 7, kept: 7, inText: 0 });
  assert.deepEqual(toolCallsKept(msgs, msgs.slice(0, 3)), { total: 7, kept: 1, inText: 0 });
});

/** A conversation of `n` tool steps (`out(i)` the i-th output), as the harness slices it. */
function conversation(n, out = (i) => `line1\nout ${i}`, name = 'bash') {
  const msgs = [{ role: 'system', content: 'sys' }, { role: 'user', content: 'task' }];
  for (let i = 0; i < n; i++) {
    msgs.push({ role: 'assistant', content: null, tool_calls: [{ id: `call_${i}`, type: 'function', function: { name, arguments: `{"command":"ls ${i}"}` } }] });
    msgs.push({ role: 'tool', tool_call_id: `call_${i}`, content: out(i) });
  }
  // The request before step t: system, task and steps 0..t-1.
  return (t) => msgs.slice(0, 2 + 2 * t);
}

const toolTexts = (messages) => messages.filter((m) => m.role === 'tool').map((m) => m.content);

test('cache-friendly masking moves its boundary only in blocks of 10 observations', () => {
  const at = conversation(40);
  const policy = maskObservations(5, { block: 10 });
  const maskedCount = (t) => toolTexts(policy(at(t))).filter((c) => c.startsWith('Old environment output:')).length;
  // Nothing masked until 15 observations; then 10, 20, 30 at once.
  assert.deepEqual([0, 5, 14, 15, 16, 24, 25, 34, 35, 40].map(maskedCount), [0, 0, 0, 10, 10, 10, 20, 20, 30, 30]);
  for (let t = 1; t <= 40; t++) {
    const visible = toolTexts(policy(at(t))).filter((c) => !c.startsWith('Old environment output:')).length;
    assert.ok(visible >= Math.min(t, 5) && visible <= 14, `t=${t}: ${visible} visible`);
  }
  // The placeholder is the masking policy's own, and identical objects come back (cacheable).
  assert.equal(toolTexts(policy(at(15)))[0], 'Old environment output: (2 lines omitted)');
  assert.equal(policy(at(20))[3], policy(at(16))[3]);
  // block 1 is plain last-5 masking.
  assert.deepEqual(maskObservations(5, { block: 1 })(at(7)).map((m) => m.content), maskObservations(5)(at(7)).map((m) => m.content));
});

test('context editing clears only over the trigger, keeps 3, honours clear_at_least and never un-clears', () => {
  // ~1,000 tokens per observation.
  const big = (i) => `obs ${i} ` + 'word '.repeat(1000);
  const at = conversation(60, big);
  const cleared = (msgs) => toolTexts(msgs).filter((c) => c === CLEARED_PLACEHOLDER).length;
  // Under the trigger: the request goes out unedited.
  const policy = clearToolUses({ trigger: 30_000, keep: 3, clearAtLeast: 5_000 });
  const counts = [];
  for (let t = 0; t <= 60; t++) counts.push(cleared(policy(at(t))));
  const first = counts.findIndex((c) => c > 0);
  // The request first exceeds 30k tokens at ~30 observations; then all but the newest 3 go.
  assert.ok(first >= 28 && first <= 31, `first clearing at ${first}`);
  assert.equal(counts[first], first - 3);
  for (let t = 0; t < first; t++) assert.equal(counts[t], 0);
  // Cleared results stay cleared (the point only moves forward) and the next
  // clearing waits for ≥ 5k tokens of new clearable results (5 observations).
  for (let t = first + 1; t <= 60; t++) assert.ok(counts[t] >= counts[t - 1]);
  const steps = counts.slice(first).map((c, k) => (k === 0 ? c : c - counts[first + k - 1])).filter((d) => d > 0);
  assert.ok(steps.slice(1).every((d) => d >= 5), `clearing steps ${steps}`);
  // Without clear_at_least the point moves every step once over the trigger.
  const eager = clearToolUses({ trigger: 30_000, keep: 3 });
  for (let t = 0; t <= 60; t++) {
    const c = cleared(eager(at(t)));
    assert.equal(c, t >= first ? t - 3 : 0, `t=${t}`);
  }
  // The documented default (100k) never fires on a 60k conversation; the newest 3 are never cleared.
  const defaults = clearToolUses();
  for (let t = 0; t <= 60; t++) assert.equal(cleared(defaults(at(t))), 0);
  assert.deepEqual(toolTexts(policy(at(60))).slice(-3), [57, 58, 59].map(big));
  // Tool calls (inputs) stay; a replay from the start begins unedited again.
  assert.equal(policy(at(60)).filter((m) => m.tool_calls).length, 60);
  assert.equal(cleared(policy(at(10))), 0);
});

test('Gemini CLI masking: newest 50k estimated tokens protected, batches of at least 30k, masked stays masked', () => {
  // 4,000 chars ≈ 1,000 estimated tokens per output, 25 lines each.
  const out = (i) => Array.from({ length: 25 }, (_, k) => `${i}:${k} `.padEnd(159, 'x')).join('\n');
  const at = conversation(120, out);
  const tokens = geminiTokens('bash', out(0));
  assert.ok(tokens > 990 && tokens < 1020, String(tokens));
  const protectedCount = Math.floor(50_000 / tokens);
  const policy = geminiMasking();
  const masked = (msgs) => toolTexts(msgs).map((c) => c.startsWith('<tool_output_masked>'));
  let first = -1;
  let prev = [];
  const fired = [];
  for (let t = 0; t <= 120; t++) {
    const m = masked(policy(at(t)));
    // Once masked, stays masked.
    prev.forEach((was, i) => was && assert.ok(m[i], `t=${t}: output ${i} unmasked`));
    const n = m.filter(Boolean).length;
    if (n > prev.filter(Boolean).length) fired.push([t, n]);
    if (first < 0 && n > 0) first = t;
    // The newest output (the pending request) and the 50k before it are never masked.
    const unmaskedTail = m.slice(Math.max(0, m.length - 1 - protectedCount)).filter(Boolean).length;
    assert.equal(unmaskedTail, 0, `t=${t}`);
    prev = m;
  }
  // The history (without the newest output) needs > 50k protected + ≥ 30k prunable: ~80 outputs.
  assert.equal(first, 1 + protectedCount + Math.ceil(30_000 / tokens));
  assert.ok(fired[0][1] >= 29, `first batch ${fired[0][1]}`);
  // Later batches too are ≥ 30k tokens (≥ 30 outputs), never one at a time.
  assert.ok(fired.every(([, n], k) => n - (k ? fired[k - 1][1] : 0) >= 29), JSON.stringify(fired));
  // The snippet: 10 head + 10 tail lines of a shell output and the file path.
  const snip = geminiSnippet('bash', 'call_3', out(3));
  assert.match(snip, /^<tool_output_masked>\n3:0 /);
  assert.match(snip, /\.\.\. \[5 lines omitted\] \.\.\./);
  assert.match(snip, /Output too large\. Full output available at: .*bash_call_3\.txt\n<\/tool_output_masked>$/);
  assert.equal(policy(at(120)).length, at(120).length);
});

test('long sessions: deterministic chain plan and chained requests', () => {
  // Plan: per source, files sorted by name until the steps reach the minimum.
  const steps = { '/t/a__3.json': 50, '/t/a__1.json': 40, '/t/a__2.json': 30, '/t/b__1.json': 20, '/t/b__2.json': 10 };
  const plan = chainPlan(Object.keys(steps), (f) => steps[f], { minSteps: 60 });
  assert.deepEqual(plan, [{ source: 'a', files: ['/t/a__1.json', '/t/a__2.json'], steps: 70 }]);
  assert.deepEqual(chainPlan(Object.keys(steps), (f) => steps[f], { minSteps: 30 }).map((p) => p.files), [['/t/a__1.json'], ['/t/b__1.json', '/t/b__2.json']]);
  assert.deepEqual([endWindow(313), endWindow(120), endWindow(2)], [100, 40, 1]);

  const one = JSON.parse(readFileSync(sample, 'utf8'));
  const two = { ...one, id: 'second', task: 'Second task: make the report faster.', steps: one.steps.slice(0, 4) };
  const n1 = one.steps.length;
  const { requests, messages } = chainRequests(pkg, [one, two]);
  assert.equal(requests.length, n1 + 4);
  // Trajectory 1's requests are exactly the ones the harness replays.
  const own = (t) => pkg.trajectoryToRequest(JSON.stringify(one), t, 'openai-chat');
  assert.deepEqual(requests[5].request, own(5));
  // Trajectory 2 starts after all of trajectory 1, its task as a new user message.
  const r = requests[n1].request.messages;
  assert.deepEqual(r.slice(0, -1), own(n1).messages);
  assert.deepEqual(r.at(-1), { role: 'user', content: two.task });
  assert.equal(requests[n1].taskAt, r.length - 1);
  // Its step s: trajectory 2's own request before step s, call ids renumbered through the session.
  const second = pkg.trajectoryToRequest(JSON.stringify(two), 3, 'openai-chat').messages.slice(1);
  const tail = requests[n1 + 3].request.messages.slice(own(n1).messages.length);
  assert.deepEqual(tail.map((m) => m.content), second.map((m) => m.content));
  assert.deepEqual(tail.filter((m) => m.role === 'tool').map((m) => m.tool_call_id), [0, 1, 2].map((i) => `call_${n1 + i}`));
  const ids = messages.filter((m) => m.role === 'tool').map((m) => m.tool_call_id);
  assert.equal(new Set(ids).size, ids.length);
  // Shared message objects (cacheable), one system prompt.
  assert.equal(requests[n1 + 3].request.messages[1], requests[2].request.messages[1]);
  assert.throws(() => chainRequests(pkg, [one, { ...two, system: 'another prompt' }]), /another system prompt/);
  // The current task check.
  assert.ok(currentTaskVerbatim(two.task, r));
  assert.ok(!currentTaskVerbatim(two.task, r.slice(0, -1)));
});

test('dominance table: best policy per column and the verdicts are computed', () => {
  const policy = (id, tokens, costs, grounding, critical) => ({
    id,
    label: id,
    byProvider: Object.fromEntries(['anthropic', 'openai', 'gemini'].map((p, i) => [p, { traces: 1, inputTokens: tokens, inputCost: costs[i], outputCost: 0 }])),
    grounding: { facts: 100, text: grounding, image: 0 },
    fidelity: { critical: { checked: 10, present: critical } },
  });
  const result = { policies: [policy('full', 1000, [1, 1, 1], 100, 10), policy('mask5', 400, [3, 0.8, 1.2], 60, 8), policy('tracelite', 500, [0.9, 0.7, 0.9], 80, 10), policy('only-phase', 900, [0.8, 0.95, 0.95], 90, 10)] };
  const d = dominance(result);
  const col = Object.fromEntries(d.columns.map((c) => [c.id, c]));
  assert.equal(col.tokens.best, 'mask5');
  assert.equal(col.tokens.distance, 100);
  assert.equal(col['cost-anthropic'].best, 'only-phase');
  assert.equal(col['cost-openai'].best, 'tracelite');
  assert.equal(col.grounding.best, 'full');
  assert.ok(Math.abs(col.grounding.distance + 0.2) < 1e-9);
  assert.deepEqual(d.baselines, ['full', 'mask5']);
  assert.equal(d.aheadOfEveryBaseline, false);
  assert.deepEqual(d.notAheadOfBaselines, [{ policy: 'mask5', column: 'tokens' }]);
  assert.equal(d.aheadOfEveryStageOnCost, false);
  assert.deepEqual(d.notAheadOfStages, [{ policy: 'only-phase', column: 'cost-anthropic' }]);
  result.policies[1].byProvider.openai.inputTokens = 600;
  result.policies[3].byProvider.anthropic.inputCost = 0.95;
  for (const p of result.policies) for (const b of Object.values(p.byProvider)) b.inputTokens = p.id === 'mask5' ? 600 : b.inputTokens;
  const ok = dominance(result);
  assert.equal(ok.aheadOfEveryBaseline, true);
  assert.equal(ok.aheadOfEveryStageOnCost, true);
  assert.deepEqual(longSection({}), []);
});

test('effective $: a step whose call uses a hidden fact costs one more request like it', () => {
  const step = (input, reread) => ({ input: { anthropic: input, openai: input / 2, gemini: input / 4 }, output: { anthropic: 0.01, openai: 0.01, gemini: 0.01 }, reread });
  const run = { grounding: { facts: 3, text: 1, image: 1 }, steps: [step(1, false), step(2, true), step(4, false), step(8, true)] };
  const r = recoveryTurns([run], 'openai').recovery;
  assert.equal(r.measured, true);
  assert.equal(r.steps, 4);
  assert.equal(r.rereadSteps, 2);
  // Steps 1 and 3 again: (1 + 0.01) + (4 + 0.01).
  assert.ok(Math.abs(r.cost - 5.02) < 1e-9, String(r.cost));
  assert.equal(r.shown, 2);
  // A replay without grounding prices nothing and says so.
  assert.equal(recoveryTurns([{ ...run, grounding: null }], 'openai').recovery.measured, false);
  const b = { traces: 2, inputCost: 10, outputCost: 2, recovery: r };
  assert.ok(Math.abs(effectiveCostPerTrace(b) - (12 + 5.02) / 2) < 1e-9);
  assert.equal(rereadShare(b), 0.5);
  assert.ok(Number.isNaN(effectiveCostPerTrace({ ...b, recovery: { measured: false } })));

  // Dominance on effective $: cheaper in $ but dearer once re-reads are priced.
  const policy = (id, cost, rereadCost, kind) => ({
    id, label: id, kind,
    byProvider: Object.fromEntries(['anthropic', 'openai', 'gemini'].map((p) => [p, { traces: 1, inputTokens: 100, inputCost: cost, outputCost: 0, recovery: { measured: true, steps: 10, rereadSteps: rereadCost > 0 ? 1 : 0, cost: rereadCost } }])),
    grounding: { facts: 10, text: 10, image: 0 },
    fidelity: { critical: { checked: 1, present: 1 } },
  });
  const result = { policies: [policy('full', 1, 0), policy('headtail5k', 0.9, 0), policy('tracelite', 0.8, 0.2)] };
  const d = dominance(result);
  const col = Object.fromEntries(d.columns.map((c) => [c.id, c]));
  assert.equal(col['cost-openai'].best, 'tracelite');
  assert.equal(col['effective-openai'].best, 'headtail5k');
  assert.equal(d.lowestEffectiveCost, false);
  // Tied with full history (0.8 + 0.2), behind head+tail (0.9): at or behind both, on every provider.
  assert.deepEqual(d.notLowestEffective.map((m) => m.policy), ['full', 'full', 'full', 'headtail5k', 'headtail5k', 'headtail5k']);
  const md = effectiveSection(result).join('\n');
  assert.match(md, /\| tracelite \| 10\.0% \| −20\.0 \/ −20\.0 \/ −20\.0 \| [−+]0\.0 \/ [−+]0\.0 \/ [−+]0\.0 \|/);
  result.policies[2].byProvider.openai.recovery.cost = 0.05;
  for (const p of ['anthropic', 'gemini']) result.policies[2].byProvider[p].recovery.cost = 0.05;
  assert.equal(dominance(result).lowestEffectiveCost, true);
});

test('long sessions: facts across the chained trajectories and whether a request hides one', () => {
  const one = { id: 'a', system: 'sys', task: 'fix it', steps: [{ tool: 'bash', args: { command: 'ls' }, observation: 'src/alpha_module.py\nREADME' }] };
  const two = { id: 'b', system: 'sys', task: 'fix more', steps: [{ tool: 'bash', args: { command: 'cat src/alpha_module.py' }, observation: 'x = 1' }] };
  const facts = sessionFacts([one, two]);
  // Session step 1 (trajectory two's first call) uses a path learned at session step 0.
  const entry = facts.get(1);
  assert.deepEqual(entry.facts.map((f) => [f.kind, f.text, f.source]), [['path', 'src/alpha_module.py', 0]]);
  const shown = [{ role: 'tool', tool_call_id: 'call_0', content: 'src/alpha_module.py\nREADME' }];
  const hidden = [{ role: 'tool', tool_call_id: 'call_0', content: '[output cleared]' }];
  assert.equal(hidesAFact(shown, entry, null), false);
  assert.equal(hidesAFact(hidden, entry, null), true);
  assert.equal(hidesAFact(hidden, facts.get(0), null), false);
});

test('prompt cache: prefix reuse, minimum size and Anthropic cache writes', () => {
  const openai = new PromptCache({ input: 2, cachedInput: 0.5, output: 8, cache: { mode: 'prefix', minTokens: 1024, granularity: 128 } });
  let r = openai.request([1, 2], [1000, 1000]);
  assert.equal(r.cached, 0);
  assert.equal(r.input, (2000 * 2) / 1e6);
  r = openai.request([1, 2, 3], [1000, 1000, 500]);
  assert.equal(r.cached, 1920); // 2000 rounded down to 128-token steps
  assert.equal(r.input, (1920 * 0.5 + 580 * 2) / 1e6);
  r = openai.request([1, 9, 3], [1000, 1000, 500]);
  assert.equal(r.cached, 0); // 1000 shared tokens are under the minimum

  const anthropic = new PromptCache({ input: 3, cachedInput: 0.3, cacheWrite: 3.75, output: 15, cache: { mode: 'breakpoint', minTokens: 1024 } });
  r = anthropic.request([1, 2], [2000, 1000], { system: 1 });
  assert.equal(r.writes, 3000);
  r = anthropic.request([1, 2, 3], [2000, 1000, 500], { system: 1, outputTokens: 100 });
  assert.equal(r.cached, 3000);
  assert.equal(r.writes, 500);
  assert.equal(r.output, (100 * 15) / 1e6);
  // A change in message 2 falls back to the system-prompt breakpoint.
  r = anthropic.request([1, 7, 3, 4], [2000, 10, 500, 500], { system: 1 });
  assert.equal(r.cached, 2000);

  // A breakpoint inside the request (TraceLite's stable prefix) is read back
  // when the messages after it change; one under the minimum is not written.
  const marked = new PromptCache({ input: 3, cachedInput: 0.3, cacheWrite: 3.75, output: 15, cache: { mode: 'breakpoint', minTokens: 1024 } });
  marked.request([1, 2, 3, 4], [500, 400, 800, 600], { system: 1, breakpoints: [3] });
  r = marked.request([1, 2, 3, 9, 5], [500, 400, 800, 600, 100], { system: 1, breakpoints: [3] });
  assert.equal(r.cached, 1700);
  assert.equal(r.writes, 700);
  marked.request([1, 2, 3, 4], [500, 400, 800, 600], { system: 1, breakpoints: [2] });
  r = marked.request([1, 2, 8], [500, 400, 800], { system: 1 });
  assert.equal(r.cached, 0); // 900 tokens: under the minimum, never written
});

test('critical items: traceback tails, failing tests, edited files', () => {
  const items = criticalItems({
    steps: [
      { tool: 'bash', args: { command: 'python t.py' }, observation: 'Traceback (most recent call last):\n  File "t.py", line 1\n    x()\nNameError: name \'x\' is not defined\n' },
      { tool: 'bash', args: { command: "sed -i 's/a/b/' pkg/mod.py" }, observation: 'FAILED tests/test_a.py::test_b - assert 1 == 2\nFAIL: test_c (app.tests.T)\n' },
      { tool: 'str_replace_editor', args: { command: 'view', path: '/w/x.py' }, observation: '' },
      { tool: 'str_replace_editor', args: { command: 'create', path: '/w/y.py' }, observation: '' },
      // Truncated by the agent's harness: the markup is not the traceback's last line.
      { tool: 'bash', args: { command: 'python m.py' }, observation: 'Traceback (most recent call last):\n  File "m.py", line 3\n</output_head>\n<elided_chars>\n2547 characters elided\n</elided_chars>\n<output_tail>\n    raise E\ndjango.core.exceptions.ImproperlyConfigured: no settings\n</output_tail>' },
    ],
  });
  assert.deepEqual(items.map((i) => [i.step, i.kind, i.text]), [
    [0, 'error', "NameError: name 'x' is not defined"],
    [1, 'test', 'tests/test_a.py::test_b'],
    [1, 'test', 'test_c (app.tests.T)'],
    [1, 'path', 'pkg/mod.py'],
    [3, 'path', '/w/y.py'],
    [4, 'error', 'django.core.exceptions.ImproperlyConfigured: no settings'],
  ]);
  assert.deepEqual(editedPaths({ tool: 'bash', args: { command: 'cat <<EOF > src/a.py\nx\nEOF' } }), ['src/a.py']);
});

test('recoverability counts removed bytes found in pointed blobs', () => {
  const original = 'head\nmiddle line\ntail';
  assert.deepEqual(recoverable(original, 'head\n[...]\ntail', [original]), { total: 21, recovered: 21, full: true });
  const none = recoverable(original, 'head\n[...]\ntail', []);
  assert.equal(none.full, false);
  assert.equal(none.recovered, 10);
  assert.ok(legible("NameError: name 'x_y' is not defined", 'NameErr0r: name x y is not defined'));
  assert.ok(!legible('AssertionError: totally different', 'nothing like it here at all'));
});

test('snapshots are matched to the observations they show', () => {
  const call = (i) => ({ role: 'assistant', content: null, tool_calls: [{ id: `call_${i}`, type: 'function', function: { name: 'bash', arguments: '{}' } }] });
  const original = [{ role: 'user', content: 'task' }, call(0), { role: 'tool', tool_call_id: 'call_0', content: 'A' }, call(1), { role: 'tool', tool_call_id: 'call_1', content: 'B' }];
  const img = (n) => ({ role: 'user', content: Array.from({ length: n }, (_, k) => ({ type: 'image_url', image_url: { url: `data:image/png;base64,X${k}` } })) });
  const out = [original[0], call(0), { role: 'tool', tool_call_id: 'call_0', content: '[shown as 2 images]' }, img(2), call(1), original[4]];
  assert.deepEqual(snapshotGroups(original, out), [{ steps: [0], urls: ['data:image/png;base64,X0', 'data:image/png;base64,X1'], original: 'A', at: [2, 3] }]);
  assert.deepEqual(sampleLines('short\n' + Array.from({ length: 50 }, (_, i) => `line number ${i}`).join('\n'), 2), ['line number 12', 'line number 37']);
  const files = ['/t/a__1.json', '/t/a__2.json', '/t/a__3.json', '/t/b__1.json'];
  assert.deepEqual(spreadPerSource(files, 1), ['/t/a__2.json', '/t/b__1.json']);
});

test('grounding OCR: PNG decode and 2x upscale, tesseract reads a rendered snapshot, cached by content', () => {
  // An 8-bit gray round trip and a bilinear 2x upscale.
  const img = { width: 3, height: 2, gray: Uint8Array.from([0, 128, 255, 255, 128, 0]) };
  assert.deepEqual(decodeGray(encodeGray(img)), img);
  const up = upscale(img, 2);
  assert.equal(up.width, 6);
  assert.equal(up.height, 4);
  assert.equal(up.gray[0], 0);
  assert.equal(up.gray[5], 255);
  // A snapshot as the package renders it (2-bit gray), read with the bench's reader.
  const renderer = findRenderer(pkg);
  assert.ok(renderer, 'the package exports a renderer');
  const text = 'def apply_discount(order, rate):\n    total = round_half_even(order.subtotal * 540)\n    return total\n';
  const [png] = renderer(text, { provider: 'openai' });
  const decoded = decodeGray(Buffer.from(png, 'base64'));
  assert.ok(decoded.width > 100 && decoded.gray.some((v) => v < 100));
  const cacheDir = mkdtempSync(join(tmpdir(), 'tl-ocr-cache-'));
  try {
    const reader = ocrReader({ cacheDir });
    const url = `data:image/png;base64,${png}`;
    const read = reader.read(url);
    assert.ok(read != null, 'tesseract is installed (apt-get install tesseract-ocr)');
    assert.ok(ocrShows(read, 'round_half_even'), read);
    assert.ok(ocrShows(read, '540'), read);
    assert.ok(!ocrShows(read, '546'), read);
    assert.equal(reader.read(url), read);
    assert.equal(reader.stats.images, 1);
    assert.equal(reader.stats.memoryHits, 1);
    // A new reader (another worker or run) finds it on disk.
    const again = ocrReader({ cacheDir });
    assert.equal(again.read(url), read);
    assert.deepEqual([again.stats.images, again.stats.diskHits], [0, 1]);
    // The same pixels in other PNG bytes (8-bit, another encoder) are the same entry.
    const reencoded = encodeGray(decoded);
    assert.notDeepEqual(reencoded, Buffer.from(png, 'base64'));
    assert.equal(again.read(`data:image/png;base64,${reencoded.toString('base64')}`), read);
    assert.deepEqual([again.stats.images, again.stats.diskHits, again.stats.memoryHits], [0, 1, 1]);
  } finally {
    rmSync(cacheDir, { recursive: true, force: true });
  }
});

test('runBench replays the sample trajectory under a few policies', async () => {
  const result = await runBench({ pkg, files: [sample], policies: ['full', 'headtail5k', 'mask5', 'tracelite'], ocr: false });
  const byId = Object.fromEntries(result.policies.map((p) => [p.id, p]));
  const steps = JSON.parse(readFileSync(sample, 'utf8')).steps.length;
  assert.equal(result.meta.steps, steps);
  const full = byId.full.byProvider.openai;
  assert.equal(full.steps, steps);
  assert.ok(full.inputTokens > 0);
  assert.ok(full.cachedTokens > 0 && full.cachedTokens < full.inputTokens);
  assert.ok(byId.mask5.byProvider.openai.inputTokens < full.inputTokens);
  for (const p of result.policies) {
    // Every call kept: as a structured call, or in the tool-call log (EVALUATION §2).
    assert.equal(p.fidelity.toolCalls.kept + p.fidelity.toolCalls.inText, p.fidelity.toolCalls.total, p.id);
    assert.ok(p.fidelity.toolCalls.total > 0);
  }
  assert.equal(byId.full.fidelity.critical.present, byId.full.fidelity.critical.checked);
  assert.equal(byId.mask5.fidelity.recover.recoveredBytes, 0);
  // Grounding recall: full history shows every fact as text, masking loses the
  // old ones to itself, TraceLite keeps what it hides behind a pointer.
  const g = Object.fromEntries(result.policies.map((p) => [p.id, p.grounding]));
  assert.ok(g.full.facts > 0);
  assert.equal(g.full.text, g.full.facts);
  assert.equal(g.full.oldStr.visible, g.full.oldStr.checked);
  assert.deepEqual(g.full.taskVerbatim, { requests: steps, verbatim: steps });
  for (const p of result.policies) {
    const x = p.grounding;
    assert.equal(x.facts, g.full.facts, p.id);
    assert.equal(x.text + x.image + x.pointer + x.gone + x.unread, x.facts, p.id);
    assert.equal(Object.values(x.byAge).reduce((n, b) => n + b.facts, 0), x.facts, p.id);
    assert.equal(Object.values(x.hiddenBy).reduce((n, k) => n + k, 0), x.pointer + x.gone, p.id);
    // Every old_str not visible is attributed once (baselines: to themselves).
    assert.equal(Object.values(x.oldStr.hiddenBy).reduce((n, k) => n + k, 0), x.oldStr.checked - x.oldStr.visible, p.id);
  }
  // Masking keeps the last 5 observations: nothing 5 or fewer steps back is lost.
  assert.equal(g.mask5.byAge['1-3'].gone + g.mask5.byAge['4-5'].gone, 0);
  assert.ok(Object.keys(g.mask5.hiddenBy).every((k) => k === 'mask5'));
  assert.equal(g.tracelite.gone, 0);
  assert.ok(byId.tracelite.latency.ms.n === steps);
  // Request bytes in and out are summed for TraceLite; snapshot images are counted once each.
  for (const prov of ['anthropic', 'openai', 'gemini']) {
    const b = byId.tracelite.byProvider[prov].bytes;
    assert.ok(b.requestsIn > 0 && b.requestsOut > 0, prov);
    assert.equal(b.images > 0, b.imageTokens > 0, prov);
    assert.ok(b.png <= b.base64 && b.base64 <= Math.ceil(b.png / 3) * 4 + 3 * b.images, prov);
  }
  assert.equal(byId.full.byProvider.openai.bytes.requestsOut, 0);
  for (const prov of ['anthropic', 'openai', 'gemini']) {
    const b = byId.full.byProvider[prov];
    assert.ok(b.inputCost > 0 && b.outputCost > 0, prov);
  }
  assert.deepEqual(result.errors, []);
});

test('runBench prices recovery turns: masking hides facts the demo session uses next, full history none', async () => {
  const result = await runBench({ pkg, files: [join(root, 'tests/fixtures/demo-session.json')], policies: ['full', 'mask5'], ocr: false });
  const [full, mask] = result.policies;
  assert.deepEqual(full.byProvider.openai.recovery, { ...full.byProvider.openai.recovery, rereadSteps: 0, cost: 0 });
  const r = mask.byProvider.openai.recovery;
  assert.ok(r.rereadSteps > 0 && r.rereadSteps < r.steps, JSON.stringify(r));
  // Each recovery turn is priced like its step: a re-read step costs at least the cheapest step, at most the dearest.
  for (const prov of ['anthropic', 'openai', 'gemini']) {
    const b = mask.byProvider[prov];
    assert.equal(b.recovery.rereadSteps, r.rereadSteps, prov);
    const perStep = (b.inputCost + b.outputCost) / b.steps;
    assert.ok(b.recovery.cost > 0 && b.recovery.cost < r.rereadSteps * 10 * perStep, prov);
  }
  assert.equal(r.facts - r.shown, mask.grounding.pointer + mask.grounding.gone);
  // Masked outputs have no pointer: getting them back re-runs the command.
  assert.ok(r.tokens > 0, JSON.stringify(r));
});

test('tokens a recovery reads back: a grep_spill reply for a fact a pointer reaches, a re-run for one nothing reaches', () => {
  const store = new pkg.SpillStore();
  try {
    const text = Array.from({ length: 400 }, (_, i) => `line ${i} value_${i} path/to/file_${i}.py`).join('\n');
    const kept = store.spill(text, { session: 'rec', budget: 8000 });
    assert.ok(kept.spilled);
    const [, session, key] = /^spill:\/\/([^/]+)\/(.+)$/.exec(kept.pointer);
    const count = o200kCounter();
    const ctx = { count };
    const fact = { kind: 'path', text: 'path/to/file_123.py', source: 0 };
    const grep = recoveryTokens(ctx, [{ fact, pointer: { session, key } }], [], store);
    const reply = store.handleToolCall('grep_spill', { pointer: kept.pointer, pattern: 'path/to/file_123\\.py' }, 'rec');
    assert.ok(!reply.isError && reply.text.includes('124:line 123 value_123 path/to/file_123.py'), reply.text);
    assert.ok(grep > count(reply.text) && grep < count(text) / 10, `${grep} tokens`);
    // Nothing reaches it: its source observation is read again, once for two facts of it.
    const original = [{ role: 'tool', tool_call_id: 'call_1', content: text }];
    const gone = (t) => ({ fact: { kind: 'identifier', text: t, source: 1 }, pointer: null });
    assert.equal(recoveryTokens(ctx, [gone('value_7'), gone('value_9')], original, store), count(text));
  } finally {
    store.free();
  }
});

test('bench/run.mjs writes REPORT.md, report.json and chart.svg', () => {
  const out = mkdtempSync(join(tmpdir(), 'tl-bench-'));
  try {
    execFileSync(process.execPath, [join(root, 'bench/run.mjs'), '--traces', sample, '--out', out, '--policies', 'mask10,only-spill', '--no-criterion', '--no-ocr'], { stdio: ['ignore', 'pipe', 'pipe'] });
    const md = readFileSync(join(out, 'REPORT.md'), 'utf8');
    assert.match(md, /## Headline/);
    assert.match(md, /\| Observation masking, last 10 \|/);
    assert.match(md, /wasm: \*\*[\d,]+ bytes raw/);
    assert.match(md, /## Grounding recall/);
    assert.match(md, /## Effective \$ \(recovery turns priced\)[\s\S]*\| Observation masking, last 10 \| [\d.]+% \| [−+][\d.]+ \/ [−+][\d.]+ \/ [−+][\d.]+ \|/);
    assert.match(md, /\| policy \| facts \| TEXT \| TEXT\+IMAGE \| POINTER \| GONE \|/);
    assert.match(md, /## Bytes[\s\S]*\| policy \| provider \| request bytes in \| request bytes out \|/);
    const json = JSON.parse(readFileSync(join(out, 'report.json'), 'utf8'));
    assert.deepEqual(json.policies.map((p) => p.id), ['full', 'mask10', 'only-spill']);
    assert.ok(json.policies.every((p) => p.byProvider.openai.recovery.measured));
    assert.equal(json.policies[0].grounding.text, json.policies[0].grounding.facts);
    assert.ok(json.policies[0].grounding.taskVerbatim.requests > 0);
    assert.ok(json.speed.latency.configs[0].ms.n > 0);
    assert.ok(readFileSync(join(out, 'chart.svg'), 'utf8').startsWith('<svg'));
    assert.ok(existsSync(join(out, 'chart.svg')));
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
});

test('bench/windows.mjs: stage savings add up to each reduction', () => {
  const out = mkdtempSync(join(tmpdir(), 'tracelite-windows-'));
  try {
    execFileSync('node', [join(root, 'bench/windows.mjs'), '--quick', '--traces', sample, '--out', out, '--rounds', '5'], {
      encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'],
    });
    const { runs, overhead, meta } = JSON.parse(readFileSync(join(out, 'windows.json'), 'utf8'));
    assert.equal(meta.trajectories, 1);
    assert.deepEqual(runs.map((r) => `${r.provider}/${r.window}${r.variant ? ` ${r.variant}` : ''}`), [
      'openai/3', 'openai/5', 'openai/3 no tool-call log', 'anthropic/3', 'anthropic/5', 'anthropic/3 no tool-call log',
    ]);
    for (const r of runs) {
      const s = r.summary;
      const saved = Object.values(s.saved_by_stage).reduce((a, x) => a + x.tokens, 0);
      assert.equal(saved, s.baseline_tokens - s.compressed_tokens, `${r.provider}/${r.window}`);
      assert.ok(s.reduction > 0 && s.prefix_reuse > 0 && s.prefix_reuse <= 1);
    }
    // The sample has a 4 KB observation: both timings are real measurements.
    assert.ok(overhead.render.openai.p50 > 0 && overhead.render.anthropic.p50 > 0);
    assert.ok(overhead.dedup.withDedup.p50 > 0 && overhead.dedup.parseEmit.p50 > 0);
    const md = readFileSync(join(out, 'WINDOWS.md'), 'utf8');
    assert.match(md, /\| anthropic \| 5 \|/);
    assert.match(md, /render \+ encode, openai/);
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
});

test('snapshot legibility: facts inside a snapshot, the share OCR reads, by layout and kind', () => {
  const entries = [
    { step: 3, facts: [
      { kind: 'path', text: 'astropy/io/fits/card.py', source: 1, sources: [1] },
      { kind: 'identifier', text: 'parse_value', source: 2, sources: [2, 1] },
      { kind: 'integer', text: '540', source: 2, sources: [2] },
    ] },
    // The same identifier again (counted once) and a fact from an observation outside the snapshot.
    { step: 4, facts: [{ kind: 'identifier', text: 'parse_value', source: 1, sources: [1] }, { kind: 'identifier', text: 'Outside', source: 0, sources: [0] }] },
  ];
  const inside = factsInside(entries, [1]);
  assert.deepEqual(inside.map((f) => f.text).sort(), ['astropy/io/fits/card.py', 'parse_value']);
  assert.equal(factsInside(entries, [1, 2]).length, 3);
  // Line by line: both read (`_` read as a space). Run together: the number misread, the identifier read.
  const a = readSnapshot({ facts: inside, ocrText: 'astropy/io/fits/card.py\ndef parse value(self):', layout: 'line by line' });
  assert.deepEqual([a.facts, a.read], [2, 2]);
  const b = readSnapshot({ facts: factsInside(entries, [2]), ocrText: 'x = parse_value(5460) » return', layout: 'run together' });
  assert.deepEqual([b.facts, b.read], [2, 1]);
  const agg = addLegibility(addLegibility(emptyLegibility(), a), b);
  assert.deepEqual(agg.overall, { facts: 4, read: 3, snapshots: 2 });
  assert.equal(legibilityShare(agg.overall), 0.75);
  assert.deepEqual(agg.byLayout['line by line'], { facts: 2, read: 2, snapshots: 1 });
  assert.deepEqual(agg.byLayout['run together'], { facts: 2, read: 1, snapshots: 1 });
  assert.deepEqual(agg.byKind.integer, { facts: 1, read: 0, snapshots: 1 });
  assert.deepEqual(agg.byKind.identifier, { facts: 2, read: 2, snapshots: 2 });
  assert.deepEqual(agg.byKind.path, { facts: 1, read: 1, snapshots: 1 });
  // Aggregates add up (worker results merged).
  const twice = mergeLegibility(mergeLegibility(emptyLegibility(), agg), agg);
  assert.deepEqual(twice.overall, { facts: 8, read: 6, snapshots: 4 });
  assert.deepEqual(twice.byKind.integer, { facts: 2, read: 0, snapshots: 2 });
  // Only facts in the text the snapshot rendered are inside it; the rest are counted as cut.
  const shown = 'astropy/io/fits/card.py\n[12 lines hidden]';
  const kept = factsInside(entries, [1, 2], shown);
  assert.deepEqual(kept.map((f) => f.text), ['astropy/io/fits/card.py']);
  const c = readSnapshot({ facts: kept, cut: factsInside(entries, [1, 2]).filter((f) => !kept.some((k) => k.text === f.text)), ocrText: shown, layout: 'line by line' });
  assert.deepEqual([c.facts, c.read, c.cut.facts, c.cut.read], [1, 1, 2, 0]);
  assert.deepEqual(addLegibility(emptyLegibility(), c).cut, { facts: 2, read: 0 });
  assert.match(legibilitySection(addLegibility(emptyLegibility(), c)), /Not counted: 2 facts/);
  const md = legibilitySection(agg);
  assert.doesNotMatch(md, /Not counted/);
  assert.match(md, /\| overall \| 75\.0% \| 3 \/ 4 \| 2 \|/);
  assert.match(md, /\| run together \| 50\.0% \| 1 \/ 2 \| 1 \|/);
  assert.match(md, /\| number \| 0\.0% \| 0 \/ 1 \| 1 \|/);
  // Layout from the optical stage's change at the snapshot's messages.
  const changes = [{ kind: 'snapshot', message: 5, detail: 'text 900 tokens, image 300 tokens (9 px font, 120 columns, 800x400, reflowed), ratio 3.00' }, { kind: 'snapshot', message: 8, detail: 'text 900 tokens, image 300 tokens' }];
  assert.equal(snapshotLayout(changes, [4, 5]), 'run together');
  assert.equal(snapshotLayout(changes, [7, 8]), 'line by line');
  assert.equal(snapshotLayout(changes, [9]), 'unknown');
});

test('snapshot tokens per provider: each distinct snapshot once, text tokens replaced and image tokens', () => {
  const bytes = { snapshots: { count: 0, textTokens: 0, imageTokens: 0 } };
  const seen = new Set();
  const snap = (text, image) => ({ kind: 'snapshot', message: 3, detail: `text ${text} tokens, image ${image} tokens (10 px font, 80 columns, 500x300), ratio 2.50` });
  countSnapshots(bytes, [snap(1000, 300), { kind: 'spill', detail: 'text 5 tokens, image 1 tokens' }], seen);
  // The next request shows the same snapshot again, and a new one.
  countSnapshots(bytes, [snap(1000, 300), snap(600, 200)], seen);
  assert.deepEqual(bytes.snapshots, { count: 2, textTokens: 1600, imageTokens: 500 });
  const result = { policies: [{ id: 'tracelite', byProvider: { openai: { bytes }, gemini: { bytes: { snapshots: { count: 0, textTokens: 0, imageTokens: 0 } } } } }] };
  const rows = snapshotTokenRows(result);
  assert.ok(rows.includes('| OpenAI | 2 | 250 | 800 | 3.20× |'), rows.join('\n'));
  assert.ok(!rows.some((r) => r.startsWith('| Gemini')));
  assert.deepEqual(snapshotTokenRows({ policies: [] }), []);
});
