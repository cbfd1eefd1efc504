// The playground's compression engine: runs in a module Web Worker so a replay
// never blocks the page. Holds the spill store and every step's output of the
// current run; the page asks for one step, one spill page or one grep at a time.
import {
  SpillStore,
  compress,
  defaultOptions,
  replayTrajectory,
  sessionName,
  summarizeReplay,
  version,
} from './pkg/browser.js';
import { grepLines, pageLines } from './pkg/spill-reader.js';

let run = null; // { kind, session, outputs: [{ text, report }], baselines: [text], store, texts: Map }

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
    ms,
    format: report.format,
    stages: report.stages.map((s) => ({
      stage: s.stage,
      enabled: s.enabled,
      saved: s.tokensBefore - s.tokensAfter,
    })),
    changes: report.changes.length,
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
  run = { kind: 'trajectory', session, outputs, baselines, store, texts: new Map() };
  return { kind: 'trajectory', session, steps, summary: result, id: trajectory.id ?? null };
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
  run = { kind: 'request', session, outputs: [{ text: outputText, report: output.report }], baselines: [requestText], store, texts: new Map() };
  const steps = [stepSummary(0, output.report, requestText, null, ms)];
  const summary = summarizeReplay([{ t: 0, baseline: output.report.tokensBefore, compressed: output.report.tokensAfter, ms }]);
  return { kind: 'request', session, steps, summary, id: null };
}

function spillText(key) {
  let text = run.texts.get(key);
  if (text === undefined) {
    text = run.store.get(run.session, key);
    run.texts.set(key, text);
  }
  return text;
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
    return { t, request: out.text, original: r.baselines[t], report: out.report };
  },
  spills: () => {
    const r = requireRun();
    return { session: r.session, spills: r.store.list(r.session) };
  },
  // Paging and grep as the agent's read_spill / grep_spill tools do them
  // (pkg-config/spill-reader.js: offset = lines to skip, pages of ≤ 16 KB).
  read: ({ key, offset, limit }) => {
    const text = spillText(key);
    return { key, bytes: new TextEncoder().encode(text).length, ...pageLines(text, { offset, limit }) };
  },
  grep: ({ key, pattern, regex, ignoreCase, maxMatches }) => {
    const r = requireRun();
    const keys = key ? [key] : r.store.list(r.session).map((s) => s.key);
    const matches = [];
    let total = 0;
    for (const k of keys) {
      const found = grepLines(spillText(k), pattern, { literal: !regex, ignoreCase, context: 0, maxMatches: 200 });
      total += found.totalMatches;
      matches.push(...found.matches.slice(0, Math.max(0, maxMatches - matches.length)).map((m) => ({ key: k, ...m })));
    }
    return { matches, total, truncated: total > matches.length };
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
