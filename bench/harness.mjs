// The evaluation harness: replays real trajectories under every policy and
// measures tokens, cache-aware cost, fidelity and speed. `bench/run.mjs` is the
// command line; `runBench` is importable (tests/js/bench.test.mjs).
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { PromptCache, loadPrices } from './cost.mjs';
import { criticalItems, legible, ocr, pointersIn, recoverable, toolCallsKept, visibleTexts } from './fidelity.mjs';
import { allPolicies, messageText } from './policies.mjs';
import { findRenderer } from './render.mjs';
import { MESSAGE_OVERHEAD, PROVIDERS, contentParts, messageShape, o200kCounter, shapeTokens } from './tokens.mjs';

/**
 * Where the trajectories are: `TRACELITE_TRACES`, else `../shared/traces` next to
 * the repository (or next to its parent, for a git worktree), or null.
 */
export function defaultTracesDir(root) {
  const candidates = process.env.TRACELITE_TRACES
    ? [process.env.TRACELITE_TRACES]
    : [join(root, '../shared/traces'), join(root, '../../shared/traces')];
  return candidates.find((d) => existsSync(d) && statSync(d).isDirectory()) ?? null;
}

/** Source of a trace: the file name before `__` (agent_model). */
export function sourceOf(file) {
  return basename(file, '.json').split('__')[0];
}

/** Trace files of a directory, sorted; `quick` keeps a spread of `quickCount` per source. */
export function traceFiles(dir, { quick = false, quickCount = 2 } = {}) {
  const files = readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((f) => join(dir, f));
  if (!quick) return files;
  const bySource = new Map();
  for (const f of files) {
    const s = sourceOf(f);
    if (!bySource.has(s)) bySource.set(s, []);
    bySource.get(s).push(f);
  }
  const picked = [];
  for (const list of bySource.values()) {
    // A spread by size: sort by bytes and take evenly spaced files (median first).
    const sized = list.map((f) => [statSync(f).size, f]).sort((a, b) => a[0] - b[0]).map((x) => x[1]);
    for (let k = 0; k < Math.min(quickCount, sized.length); k++) {
      const idx = Math.floor(((k + 0.5) * sized.length) / Math.min(quickCount, sized.length));
      picked.push(sized[idx]);
    }
  }
  return picked.sort();
}

/** The requests an agent loop sends before each step (shared message objects across steps). */
export function stepRequests(pkg, trajectory) {
  const text = JSON.stringify(trajectory);
  const n = trajectory.steps.length;
  const full = pkg.trajectoryToRequest(text, n, 'openai-chat');
  const base = (trajectory.system ? 1 : 0) + 1;
  const requests = [];
  for (let t = 0; t < n; t++) requests.push({ ...full, messages: full.messages.slice(0, base + 2 * t) });
  // The slices must be exactly what the library builds for step t.
  const mid = Math.floor(n / 2);
  if (n > 0 && JSON.stringify(pkg.trajectoryToRequest(text, mid, 'openai-chat')) !== JSON.stringify(requests[mid])) {
    throw new Error(`${trajectory.id}: request slices differ from trajectoryToRequest`);
  }
  return { requests, full, base };
}

function percentile(sorted, p) {
  if (sorted.length === 0) return 0;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i];
}

/** p50/p95/max/mean of numbers. */
export function stats(values) {
  const s = [...values].sort((a, b) => a - b);
  const mean = s.length ? s.reduce((a, b) => a + b, 0) / s.length : 0;
  return { n: s.length, p50: percentile(s, 50), p95: percentile(s, 95), max: s.at(-1) ?? 0, mean };
}

/** Interns message JSON so identical bytes share one small id. */
class MessageTable {
  constructor(count) {
    this.count = count;
    this.ids = new Map();
    this.shapes = [];
    this.byObject = new WeakMap();
  }

  /** `{ id, shape }` of a message. */
  get(message) {
    let hit = this.byObject.get(message);
    if (hit) return hit;
    const key = JSON.stringify(message);
    let id = this.ids.get(key);
    if (id === undefined) {
      id = this.shapes.length;
      this.ids.set(key, id);
      this.shapes.push(messageShape(message, this.count));
    }
    hit = { id, shape: this.shapes[id] };
    this.byObject.set(message, hit);
    return hit;
  }
}

function sessionName(id) {
  return (id || 'bench').replace(/[^A-Za-z0-9._-]/g, '-').replace(/\.\.+/g, '.').slice(0, 100);
}

/**
 * Replays one trajectory under one policy (one provider for per-provider
 * policies) and returns per-step measurements.
 */
function replay(ctx, trace, policy, provider, { fidelity }) {
  const { pkg, count } = ctx;
  const table = new MessageTable(count);
  const providers = policy.perProvider ? [provider] : PROVIDERS;
  const caches = Object.fromEntries(providers.map((p) => [p, new PromptCache(ctx.prices.byProvider[p])]));
  const store = policy.kind === 'tracelite' ? new pkg.SpillStore() : null;
  const session = sessionName(`${policy.id}-${trace.id}`);
  const steps = [];
  const items = fidelity ? trace.items : [];
  const recovery = new Map();
  const result = {
    steps,
    toolCalls: { total: 0, kept: 0, inText: 0 },
    critical: { checked: 0, present: 0, byKind: {} },
    recover: { observations: 0, full: 0, removedBytes: 0, recoveredBytes: 0 },
    latencyMs: [],
    perObservationMs: [],
    lastRequest: null,
  };
  try {
    for (let t = 0; t < trace.requests.length; t++) {
      const request = trace.requests[t];
      let messages;
      if (policy.kind === 'baseline') {
        messages = policy.transform(request.messages, { provider });
      } else {
        const started = performance.now();
        const out = pkg.compress(trace.requestTexts[t], { ...policy.options, provider, session, store });
        const ms = performance.now() - started;
        result.latencyMs.push(ms);
        const obs = request.messages.filter((m) => m.role === 'tool').length;
        if (obs > 0) result.perObservationMs.push(ms / obs);
        messages = out.request.messages;
      }
      const ids = [];
      const shapes = [];
      for (const m of messages) {
        const { id, shape } = table.get(m);
        ids.push(id);
        shapes.push(shape);
      }
      const system = messages.findIndex((m) => m.role !== 'system');
      const step = { t, tokens: {}, cached: {}, writes: {}, input: {}, output: {}, images: 0 };
      for (const s of shapes) step.images += s.images.length;
      for (const p of providers) {
        const tokens = shapes.map((s) => shapeTokens(s, p));
        const c = caches[p].request(ids, tokens, { system: Math.max(0, system), outputTokens: trace.outputTokens[t] });
        step.tokens[p] = c.total;
        step.cached[p] = c.cached;
        step.writes[p] = c.writes;
        step.input[p] = c.input;
        step.output[p] = c.output;
      }
      steps.push(step);
      if (fidelity) measureFidelity(result, trace, t, request.messages, messages, items, { store, session, recovery });
      if (t === trace.requests.length - 1 && step.images > 0) result.lastRequest = messages;
    }
  } finally {
    store?.free();
  }
  return result;
}

function measureFidelity(result, trace, t, original, messages, items, { store, session, recovery }) {
  const calls = toolCallsKept(original, messages);
  result.toolCalls.total += calls.total;
  result.toolCalls.kept += calls.kept;
  result.toolCalls.inText += calls.inText;

  // Critical items of earlier steps: in the step's own messages first, else anywhere.
  const byCall = new Map();
  messages.forEach((m, i) => {
    if (m.role === 'tool' && m.tool_call_id) byCall.set(m.tool_call_id, i);
    for (const c of m.tool_calls ?? []) byCall.set(`args:${c.id}`, i);
  });
  const texts = visibleTexts(messages);
  let all = null;
  const missing = [];
  for (const item of items) {
    if (item.step >= t) break;
    const own = [byCall.get(`call_${item.step}`), byCall.get(`args:call_${item.step}`)];
    let found = own.some((i) => i !== undefined && texts[i].includes(item.text));
    if (!found) {
      all ??= texts.join('\n');
      found = all.includes(item.text);
    }
    result.critical.checked++;
    const k = (result.critical.byKind[item.kind] ??= { checked: 0, present: 0 });
    k.checked++;
    if (found) {
      result.critical.present++;
      k.present++;
    } else {
      missing.push(item);
    }
  }
  if (t === trace.requests.length - 1) {
    result.lastMissing = missing;
    result.criticalAtLast = items.filter((i) => i.step < t).length;
  }

  // Recoverability of every changed tool observation through the pointers it shows.
  const live = store ? new Set(store.list(session).map((x) => x.key)) : new Set();
  let requestPointers = null;
  for (const [i, m] of original.entries()) {
    if (m.role !== 'tool') continue;
    const originalText = messageText(m);
    const at = byCall.get(m.tool_call_id);
    const shown = at === undefined ? '' : texts[at];
    if (at !== undefined && messages[at].content === m.content) continue;
    const memoKey = `${i}:${at === undefined ? 'gone' : shown}`;
    let r = recovery.get(memoKey);
    if (!r) {
      let pointers = pointersIn(shown);
      if (pointers.length === 0) {
        requestPointers ??= pointersIn(texts.join('\n'));
        pointers = requestPointers;
      }
      const blobs = [];
      for (const p of pointers) {
        if (!store || !live.has(p.key)) continue;
        try {
          blobs.push(store.get(p.session, p.key));
        } catch {
          // A pointer that does not resolve recovers nothing.
        }
      }
      const visible = recoverable(originalText, shown, []).recovered;
      const withBlobs = recoverable(originalText, shown, blobs);
      r = { removed: withBlobs.total - visible, recovered: withBlobs.recovered - visible, full: withBlobs.full, keys: pointers.map((p) => p.key) };
      recovery.set(memoKey, r);
    } else if (r.keys.some((k) => !live.has(k))) {
      r = { ...r, recovered: 0, full: false };
    }
    result.recover.observations++;
    if (r.full) result.recover.full++;
    result.recover.removedBytes += r.removed;
    result.recover.recoveredBytes += r.recovered;
  }
}

/** Loads one trace and everything shared by its policy replays. */
function prepareTrace(ctx, file) {
  const trajectory = JSON.parse(readFileSync(file, 'utf8'));
  const id = trajectory.id || basename(file, '.json');
  const { requests, full, base } = stepRequests(ctx.pkg, trajectory);
  const outputTokens = trajectory.steps.map((_, t) => {
    const m = full.messages[base + 2 * t];
    return m ? messageShape(m, ctx.count).text - MESSAGE_OVERHEAD : 0;
  });
  return {
    id,
    file,
    source: sourceOf(file),
    steps: trajectory.steps.length,
    requests,
    requestTexts: requests.map((r) => JSON.stringify(r)),
    outputTokens,
    items: criticalItems(trajectory),
  };
}

/** Runs the evaluation. Returns the result object written to JSON. */
export async function runBench(opts) {
  const log = opts.log ?? (() => {});
  const started = performance.now();
  const pkg = opts.pkg ?? (await import('../pkg/node.js'));
  const count = o200kCounter();
  const prices = loadPrices(opts.prices);
  const renderer = findRenderer(pkg);
  let policies = allPolicies({ renderer });
  if (opts.policies) policies = policies.filter((p) => opts.policies.includes(p.id));
  const files = opts.files ?? traceFiles(opts.tracesDir, { quick: opts.quick, quickCount: opts.quickCount });
  const ctx = { pkg, count, prices };
  const runs = new Map();
  const traces = [];
  const errors = [];
  let peakRss = 0;
  for (const file of files) {
    const trace = prepareTrace(ctx, file);
    const traceStarted = performance.now();
    traces.push({ id: trace.id, source: trace.source, steps: trace.steps, items: trace.items.length });
    for (const policy of policies) {
      if (policy.pending) continue;
      for (const provider of policy.perProvider ? PROVIDERS : ['openai']) {
        const key = `${policy.id}|${provider}`;
        let r;
        try {
          r = replay(ctx, trace, policy, provider, { fidelity: provider === 'openai' });
        } catch (err) {
          errors.push({ policy: policy.id, provider, trace: trace.id, error: String(err?.message ?? err) });
          continue;
        }
        if (!runs.has(key)) runs.set(key, []);
        runs.get(key).push({ trace: trace.id, source: trace.source, ...r });
      }
    }
    peakRss = Math.max(peakRss, process.memoryUsage().rss);
    log(`${trace.id}: ${trace.steps} steps, ${((performance.now() - traceStarted) / 1000).toFixed(1)} s`);
  }
  const snapshots = opts.ocr === false ? null : ocrSample(policies, runs, opts.ocrImages ?? 12, log);
  const result = summarize({ policies, runs, traces, prices, snapshots });
  result.errors = errors;
  result.meta = {
    generated: new Date().toISOString(),
    quick: !!opts.quick,
    traces: traces.length,
    steps: traces.reduce((s, t) => s + t.steps, 0),
    tokenizer: 'o200k_base (js-tiktoken), counted once per distinct text',
    tokenizerStats: { distinctTexts: count.stats.distinct, chars: count.stats.chars, seconds: count.stats.ms / 1000 },
    renderer: renderer ? renderer.exportName : null,
    harnessSeconds: (performance.now() - started) / 1000,
    harnessPeakRssBytes: peakRss,
  };
  return result;
}

/**
 * OCR of snapshots: on the last request of each trace of every image policy
 * (OpenAI run), critical items missing from the text are looked for in the
 * tesseract text of its images, up to `maxImages` images per policy.
 */
function ocrSample(policies, runs, maxImages, log) {
  const out = {};
  const cache = new Map();
  for (const policy of policies) {
    const list = runs.get(`${policy.id}|openai`) ?? [];
    let images = 0;
    let checked = 0;
    let legibleCount = 0;
    let textPresent = 0;
    let traces = 0;
    for (const run of list) {
      const urls = (run.lastRequest ?? []).flatMap((m) => contentParts(m.content).images.map((i) => i.url));
      if (urls.length === 0) continue;
      if (images + urls.length > maxImages && images > 0) break;
      const texts = [];
      for (const url of urls) {
        if (!cache.has(url)) {
          cache.set(url, ocr(url.slice(url.indexOf(',') + 1)));
          images++;
        }
        const t = cache.get(url);
        if (t == null) return { unavailable: 'tesseract failed or is not installed' };
        texts.push(t);
      }
      const ocrText = texts.join('\n');
      traces++;
      // Items checked at the last step: present as text, else legible in a snapshot.
      const missing = run.lastMissing ?? [];
      checked += run.criticalAtLast ?? 0;
      textPresent += (run.criticalAtLast ?? 0) - missing.length;
      for (const item of missing) if (legible(item.text, ocrText)) legibleCount++;
    }
    if (traces > 0) {
      out[policy.id] = { traces, images, checked, textPresent, legibleInSnapshot: legibleCount };
      log(`ocr ${policy.id}: ${images} images; of ${checked} items ${textPresent} in text, ${legibleCount} more legible`);
    }
  }
  return out;
}

function sum(list, f) {
  return list.reduce((s, x) => s + f(x), 0);
}

/** Aggregates runs into per-policy, per-provider and per-source results. */
function summarize({ policies, runs, traces, prices, snapshots }) {
  const out = { policies: [], pending: [], prices: prices.rows, snapshots, traces };
  for (const policy of policies) {
    if (policy.pending) {
      out.pending.push({ id: policy.id, label: policy.label, reason: policy.pending });
      continue;
    }
    const entry = { id: policy.id, label: policy.label, kind: policy.kind, perProvider: !!policy.perProvider, byProvider: {}, perTrace: {} };
    for (const p of PROVIDERS) {
      const list = runs.get(`${policy.id}|${policy.perProvider ? p : 'openai'}`) ?? [];
      const steps = list.flatMap((r) => r.steps);
      const agg = (field) => sum(steps, (s) => s[field][p] ?? 0);
      const bySource = {};
      for (const r of list) {
        const b = (bySource[r.source] ??= { traces: 0, inputTokens: 0, cost: 0 });
        b.traces++;
        b.inputTokens += sum(r.steps, (s) => s.tokens[p]);
        b.cost += sum(r.steps, (s) => s.input[p] + s.output[p]);
      }
      entry.byProvider[p] = {
        traces: list.length,
        steps: steps.length,
        inputTokens: agg('tokens'),
        cachedTokens: agg('cached'),
        cacheWriteTokens: agg('writes'),
        inputCost: agg('input'),
        outputCost: agg('output'),
        images: sum(steps, (s) => s.images),
        bySource,
      };
      entry.perTrace[p] = list.map((r) => ({
        trace: r.trace,
        inputTokens: sum(r.steps, (s) => s.tokens[p]),
        cachedTokens: sum(r.steps, (s) => s.cached[p]),
        cost: sum(r.steps, (s) => s.input[p] + s.output[p]),
      }));
      if (p === 'openai') {
        // Cumulative tokens per step, for the chart (not written to JSON).
        entry._cumulative = Object.fromEntries(
          list.map((r) => [r.trace, r.steps.reduce((acc, s) => (acc.push((acc.at(-1) ?? 0) + s.tokens[p]), acc), [])]),
        );
      }
    }
    const fid = runs.get(`${policy.id}|openai`) ?? [];
    entry.fidelity = {
      toolCalls: {
        total: sum(fid, (r) => r.toolCalls.total),
        kept: sum(fid, (r) => r.toolCalls.kept),
        inText: sum(fid, (r) => r.toolCalls.inText),
      },
      critical: {
        checked: sum(fid, (r) => r.critical.checked),
        present: sum(fid, (r) => r.critical.present),
        byKind: mergeKinds(fid.map((r) => r.critical.byKind)),
      },
      recover: {
        observations: sum(fid, (r) => r.recover.observations),
        full: sum(fid, (r) => r.recover.full),
        removedBytes: sum(fid, (r) => r.recover.removedBytes),
        recoveredBytes: sum(fid, (r) => r.recover.recoveredBytes),
      },
    };
    if (policy.kind === 'tracelite') {
      entry.latency = {
        ms: stats(fid.flatMap((r) => r.latencyMs)),
        perObservationMs: stats(fid.flatMap((r) => r.perObservationMs)),
      };
    }
    out.policies.push(entry);
  }
  return out;
}

function mergeKinds(list) {
  const out = {};
  for (const k of list) {
    for (const [kind, v] of Object.entries(k)) {
      const o = (out[kind] ??= { checked: 0, present: 0 });
      o.checked += v.checked;
      o.present += v.present;
    }
  }
  return out;
}
