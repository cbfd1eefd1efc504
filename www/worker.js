// The playground's compression engine: runs in a module Web Worker so a replay
// never blocks the page. Holds the spill store and every step's output of the
// current run; the page asks for one step, one spill page or one grep at a time.
import {
  SpillStore,
  compress,
  defaultOptions,
  replayTrajectory,
  requestConversation,
  sessionName,
  summarizeReplay,
  version,
} from './pkg/entries/browser.js';
import { grepLines, pageLines } from './pkg/core/spill-reader.js';
import { spillOrder, uniqueMatches } from './spill-matches.js';
// The package's fact view: the same facts and classes as `make bench` (bench/grounding.mjs totals them).
import { classify, extractFacts, hiddenBy, oldStrVisible, pointersOf, taskVerbatim, viewRequest } from './facts.js';
// The snapshot legibility `make bench` totals (facts inside each snapshot; the page OCRs them).
import { snapshotFacts, snapshotGroups, snapshotLayout, snapshotText } from './legibility.js';

let run = null; // { kind, session, outputs: [{ text, report }], baselines: [text], store, texts: Map, facts: Map | null }

function sharedPrefix(a, b) {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  return i;
}

/** What the page needs of a step to draw charts and figures (no request text). */
function stepSummary(t, report, baselineText, previousBaselineText, ms) {
  const prefix = report.prefix ?? null;
  return {
    t,
    baseline: report.tokensBefore,
    compressed: report.tokensAfter,
    bytesBefore: report.bytesBefore,
    bytesAfter: report.bytesAfter,
    ms,
    format: report.format,
    stages: report.stages.map((s) => ({
      stage: s.stage,
      enabled: s.enabled,
      saved: s.tokensBefore - s.tokensAfter,
    })),
    changes: report.changes.length,
    // Rewrites the planner weighed, and how many it committed.
    planned: report.plan?.candidates.length ?? 0,
    committed: report.plan?.candidates.filter((c) => c.committed).length ?? 0,
    spills: report.spills.length,
    redactions: report.redactions?.count ?? 0,
    // Share of the request a provider could serve from its prompt cache
    // (the byte prefix shared with the previous request).
    cachedShare: prefix && prefix.currentBytes > 0 ? prefix.sharedBytes / prefix.currentBytes : 0,
    baselineCachedShare: previousBaselineText
      ? sharedPrefix(previousBaselineText, baselineText) / Math.max(1, baselineText.length)
      : 0,
  };
}

/** The prices (USD per million input tokens) the planner used, or null when it was off. */
function planPrices(...reports) {
  return reports.findLast((r) => r?.plan?.prices)?.plan.prices ?? null;
}

function freeRun() {
  run?.store.free();
  run = null;
}

function runTrajectory(trajectory, options, runId) {
  const store = new SpillStore();
  const outputs = [];
  const baselines = [];
  const steps = [];
  const session = options.session ?? sessionName(trajectory.id);
  const n = trajectory.steps.length;
  const { result } = replayTrajectory(trajectory, options, {
    store,
    onStep: ({ t, request, output, outputText, ms }) => {
      const baselineText = JSON.stringify(request);
      outputs.push({ text: outputText, report: output.report });
      steps.push(stepSummary(t, output.report, baselineText, baselines.at(-1), ms));
      baselines.push(baselineText);
      postMessage({ type: 'progress', runId, t, n });
    },
  });
  run = { kind: 'trajectory', session, outputs, baselines, store, texts: new Map(), facts: new Map(extractFacts(trajectory).map((e) => [e.step, e])) };
  return { kind: 'trajectory', session, steps, summary: result, id: trajectory.id ?? null, prices: planPrices(...outputs.map((o) => o.report)) };
}

function runRequest(requestText, options) {
  const store = new SpillStore();
  const started = performance.now();
  let output;
  try {
    output = compress(requestText, { ...options, store });
  } catch (err) {
    store.free();
    throw err;
  }
  const ms = performance.now() - started;
  const outputText = JSON.stringify(output.request);
  const session = options.session ?? defaultOptions().session;
  run = { kind: 'request', session, outputs: [{ text: outputText, report: output.report }], baselines: [requestText], store, texts: new Map(), facts: null };
  const steps = [stepSummary(0, output.report, requestText, null, ms)];
  const summary = summarizeReplay([{
    t: 0,
    baseline: output.report.tokensBefore,
    compressed: output.report.tokensAfter,
    bytes_before: output.report.bytesBefore,
    bytes_after: output.report.bytesAfter,
    ms,
  }]);
  return { kind: 'request', session, steps, summary, id: null, prices: planPrices(output.report) };
}

function spillText(key) {
  let text = run.texts.get(key);
  if (text === undefined) {
    text = run.store.get(run.session, key);
    run.texts.set(key, text);
  }
  return text;
}

/** Blob texts the pointers reach in the run's store, following pointers inside blobs. */
function reachBlobs(pointers) {
  const live = new Set(run.store.list(run.session).map((s) => s.key));
  const seen = new Set();
  const out = [];
  const queue = [...pointers];
  while (queue.length > 0 && seen.size < 2000) {
    const p = queue.shift();
    if (seen.has(p.key) || !live.has(p.key) || p.session !== run.session) continue;
    seen.add(p.key);
    const text = spillText(p.key);
    out.push(text);
    queue.push(...pointersOf(text));
  }
  return out;
}

/**
 * Grounding of step t (EVALUATION.md §1): the facts step t's call used and
 * where the request sent before it shows each: TEXT, POINTER, GONE, or
 * IMAGE_UNREAD (only in a snapshot: the browser has no OCR to check it).
 */
function stepGrounding(r, t, output, original) {
  const entry = r.facts?.get(t);
  const result = { executed: !!entry, taskVerbatim: taskVerbatim(original, output), facts: [], oldStr: null };
  if (!entry) return result;
  const view = viewRequest(output);
  const changes = r.outputs[t].report.changes;
  result.tool = entry.tool;
  result.facts = entry.facts.map((f) => {
    const cls = classify(view, f, { blobs: reachBlobs });
    const hidden = cls === 'POINTER' || cls === 'GONE';
    return { kind: f.kind, text: f.text, source: f.source, age: t - f.source, cls, hiddenBy: hidden ? hiddenBy(output, f, changes) : null };
  });
  if (entry.oldStr) {
    const visible = oldStrVisible(view, entry.oldStr.text);
    result.oldStr = { source: entry.oldStr.source, visible, hiddenBy: visible ? null : hiddenBy(output, entry.oldStr, changes) };
  }
  return result;
}

/**
 * The snapshots of step t's request and the facts inside each (issue 40,
 * bench/legibility.mjs's measure): for each, the message index of its
 * images, the steps it shows, its layout, the facts a later call uses that
 * are inside the text it rendered, and those an earlier stage cut. The page
 * reads them against tesseract's text of the images (www/legibility-view.js).
 */
function stepSnapshots(r, t, output, original) {
  const entries = [...r.facts.values()];
  const changes = r.outputs[t].report.changes;
  const blob = (p) => (p.session === r.session ? spillText(p.key) : r.store.get(p.session, p.key));
  return snapshotGroups(original, output).map((g) => {
    const shown = snapshotText(output, g, blob);
    const { facts, cut } = snapshotFacts(entries, g.steps, shown);
    return { message: g.at.at(-1), steps: g.steps, images: g.urls.length, layout: snapshotLayout(changes, g.at), rendered: shown != null, facts, cut };
  });
}

function requireRun() {
  if (!run) throw Object.assign(new Error('nothing loaded yet'), { code: 'NO_RUN' });
  return run;
}

const handlers = {
  init: () => ({ version: version(), defaults: defaultOptions() }),
  run: ({ input, options, runId }) => {
    freeRun();
    if (input.kind === 'trajectory') return runTrajectory(JSON.parse(input.text), options, runId);
    return runRequest(input.text, options);
  },
  step: ({ t }) => {
    const r = requireRun();
    const out = r.outputs[t];
    if (!out) throw Object.assign(new Error(`no step ${t}`), { code: 'NO_STEP' });
    let grounding = null;
    let snapshots = null;
    if (r.kind === 'trajectory') {
      const output = JSON.parse(out.text).messages ?? [];
      const original = JSON.parse(r.baselines[t]).messages ?? [];
      grounding = stepGrounding(r, t, output, original);
      snapshots = stepSnapshots(r, t, output, original);
    }
    // The neutral conversations the core parses them into: the page shows these, whatever the format.
    const format = { format: out.report.format };
    const conversation = requestConversation(out.text, format);
    const originalConversation = requestConversation(r.baselines[t], format);
    return { t, request: out.text, original: r.baselines[t], conversation, originalConversation, report: out.report, grounding, snapshots };
  },
  spills: () => {
    const r = requireRun();
    return { session: r.session, spills: r.store.list(r.session) };
  },
  // Paging and grep as the agent's read_spill / grep_spill tools do them
  // (pkg-config/core/spill-reader.js: offset = lines to skip, pages of ≤ 16 KB).
  read: ({ key, offset, limit }) => {
    const text = spillText(key);
    return { key, bytes: new TextEncoder().encode(text).length, ...pageLines(text, { offset, limit }) };
  },
  grep: ({ key, pattern, regex, ignoreCase, maxMatches }) => {
    const r = requireRun();
    const keys = key ? [key] : spillOrder(r.store.list(r.session).map((s) => s.key));
    const found = keys.map((k) => ({
      key: k,
      ...grepLines(spillText(k), pattern, { literal: !regex, ignoreCase, context: 0, maxMatches: 200 }),
    }));
    return uniqueMatches(found, maxMatches);
  },
};

onmessage = (event) => {
  const { id, type, ...args } = event.data;
  try {
    const handler = handlers[type];
    if (!handler) throw new Error(`unknown request ${type}`);
    postMessage({ id, ok: true, value: handler(args) });
  } catch (err) {
    postMessage({
      id,
      ok: false,
      error: { name: err?.name ?? 'Error', message: err?.message ?? String(err), code: err?.code ?? '', path: err?.path ?? '' },
    });
  }
};

postMessage({ type: 'ready' });
