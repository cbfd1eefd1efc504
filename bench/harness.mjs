// The evaluation harness: replays real trajectories under every policy and
// measures tokens, cache-aware cost, fidelity and speed. `bench/run.mjs` is the
// command line; `runBench` is importable (tests/js/bench.test.mjs).
import { existsSync, mkdirSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { spawn } from 'node:child_process';
import { PromptCache, loadPrices } from './cost.mjs';
import { criticalItems, legible, ocr, pointersIn, recoverable, toolCallsKept, visibleTexts } from './fidelity.mjs';
import { classify, countFact, emptyGrounding, extractFacts, hiddenBy, mergeGrounding, occurs, oldStrVisible, stripMarkers, taskVerbatim, viewRequest } from './grounding.mjs';
import { addLegibility, emptyLegibility, mergeLegibility, readFacts, readSnapshot, snapshotFacts, snapshotGroups, snapshotLayout, snapshotOcrText, snapshotText } from './legibility.mjs';
import { OCR_SETTINGS, ocrReader, tesseractAvailable } from './ocr.mjs';
import { allPolicies, messageText } from './policies.mjs';
import { findRenderer } from './render.mjs';
import { percentile } from '../pkg/core/stats.js';
import { MESSAGE_OVERHEAD, PROVIDERS, withBenchModel, contentParts, imageBytes, imageTokens, messageShape, o200kCounter, shapeTokens } from './tokens.mjs';

/** Where OCR text of snapshot images is cached across runs (gitignored). */
export const OCR_CACHE = join(dirname(fileURLToPath(import.meta.url)), 'out/ocr-cache');

/**
 * An OCR reader for grounding recall (tesseract, 2× upscale, cached by image
 * hash), or null when OCR is off or tesseract is missing.
 */
export function groundingOcr(enabled) {
  return enabled && tesseractAvailable() ? ocrReader({ cacheDir: OCR_CACHE }) : null;
}

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

/** `k` evenly spaced files per source out of `files` (kept in order). */
export function spreadPerSource(files, k) {
  const bySource = new Map();
  for (const f of files) {
    if (!bySource.has(sourceOf(f))) bySource.set(sourceOf(f), []);
    bySource.get(sourceOf(f)).push(f);
  }
  const picked = new Set();
  for (const list of bySource.values()) {
    const n = Math.min(k, list.length);
    for (let i = 0; i < n; i++) picked.add(list[Math.floor(((i + 0.5) * list.length) / n)]);
  }
  return files.filter((f) => picked.has(f));
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
function replay(ctx, trace, policy, provider, { fidelity, grounding = fidelity }) {
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
    snapshotGroups: [],
    // Every distinct snapshot the run emits (legibility): TraceLite defaults and variants, with OCR.
    emitted: fidelity && ctx.ocr && (policy.id === 'tracelite' || policy.id.startsWith('variant-')) ? new Map() : null,
    grounding: grounding ? emptyGrounding() : null,
    bytes: emptyBytes(),
  };
  // Messages already counted in `bytes` (each distinct image once per run).
  const counted = new Set();
  // Snapshot changes already counted in `bytes` (each distinct snapshot once per run).
  const seenSnapshots = new Set();
  const blobCache = new Map();
  try {
    for (let t = 0; t < trace.requests.length; t++) {
      const request = trace.requests[t];
      let messages;
      let stable = null;
      let changes = [];
      if (policy.kind === 'baseline') {
        messages = policy.transform(request.messages, { provider, trace });
      } else {
        const started = performance.now();
        const out = pkg.compress(trace.requestTexts[t], withBenchModel({ ...policy.options, provider, session, store }));
        const ms = performance.now() - started;
        result.latencyMs.push(ms);
        const obs = request.messages.filter((m) => m.role === 'tool').length;
        if (obs > 0) result.perObservationMs.push(ms / obs);
        messages = out.request.messages;
        result.bytes.requestsIn += Buffer.byteLength(trace.requestTexts[t]);
        result.bytes.requestsOut += out.report.bytesAfter;
        stable = out.report.stableMessages;
        changes = out.report.changes;
        countSnapshots(result.bytes, changes, seenSnapshots);
      }
      const ids = [];
      const shapes = [];
      for (const m of messages) {
        const { id, shape } = table.get(m);
        ids.push(id);
        shapes.push(shape);
        if (shape.images.length > 0 && !counted.has(id)) {
          counted.add(id);
          addImageBytes(result.bytes, m);
        }
      }
      const system = messages.findIndex((m) => m.role !== 'system');
      // `reread`: the step's tool call uses a fact this request hides (EVALUATION.md §3, effective $).
      const step = { t, tokens: {}, cached: {}, writes: {}, input: {}, output: {}, images: 0, reread: false };
      for (const s of shapes) step.images += s.images.length;
      for (const p of providers) {
        const tokens = shapes.map((s) => shapeTokens(s, p));
        // Anthropic requests get TraceLite's cache_control at the end of the
        // stable prefix (the bench replays OpenAI Chat, where `system` leading
        // messages precede the ones `stableMessages` counts).
        const breakpoints = stable === null || p !== 'anthropic' ? [] : [Math.max(0, system) + stable];
        const c = caches[p].request(ids, tokens, { system: Math.max(0, system), outputTokens: trace.outputTokens[t], breakpoints });
        step.tokens[p] = c.total;
        step.cached[p] = c.cached;
        step.writes[p] = c.writes;
        step.input[p] = c.input;
        step.output[p] = c.output;
      }
      steps.push(step);
      if (fidelity) measureFidelity(result, trace, t, request.messages, messages, items, { store, session, recovery });
      if (grounding) {
        const t0 = performance.now();
        const hidden = measureGrounding(result.grounding, trace, t, request.messages, messages, { store, session, changes, policy, blobCache, ocr: ctx.ocr });
        step.reread = hidden.length > 0;
        if (step.reread) step.recoveryTokens = recoveryTokens(ctx, hidden, request.messages, store);
        result.groundingMs = (result.groundingMs ?? 0) + performance.now() - t0;
      }
      if (fidelity && t === trace.requests.length - 1 && step.images > 0) result.snapshotGroups = snapshotGroups(request.messages, messages);
      if (result.emitted && step.images > 0) collectSnapshots(result.emitted, snapshotGroups(request.messages, messages), { changes, messages, store });
    }
  } finally {
    store?.free();
  }
  return result;
}

/** Request and image bytes of a run (`requestsIn`/`requestsOut` only for TraceLite policies). */
function emptyBytes() {
  return {
    requestsIn: 0, requestsOut: 0, images: 0, png: 0, base64: 0, imageTokens: Object.fromEntries(PROVIDERS.map((p) => [p, 0])),
    snapshots: { count: 0, textTokens: 0, imageTokens: 0 },
  };
}

/**
 * Adds the optical stage's snapshots among `changes` not counted before (by
 * their detail) to `bytes.snapshots`: how many, the text tokens they replaced
 * and their image tokens, as the stage priced them for the run's provider.
 */
export function countSnapshots(bytes, changes, seen) {
  for (const c of changes ?? []) {
    if (c.kind !== 'snapshot') continue;
    const m = /^text (\d+) tokens, image (\d+) tokens/.exec(c.detail ?? '');
    if (!m || seen.has(c.detail)) continue;
    seen.add(c.detail);
    bytes.snapshots.count++;
    bytes.snapshots.textTokens += Number(m[1]);
    bytes.snapshots.imageTokens += Number(m[2]);
  }
}

/** Adds the images of `message` to `bytes`: count, PNG and base64 bytes, image tokens per provider. */
export function addImageBytes(bytes, message) {
  for (const img of contentParts(message.content).images) {
    const b = imageBytes(img.url);
    bytes.images++;
    bytes.png += b.png;
    bytes.base64 += b.base64;
    for (const p of PROVIDERS) bytes.imageTokens[p] += imageTokens(p, img.width, img.height, { detail: img.detail });
  }
}

/** Most blobs read back (following pointers) to recover one observation. */
const MAX_BLOBS = 2000;

/**
 * Texts of the live blobs `pointers` reach in `store`, following pointers
 * inside blobs (at most MAX_BLOBS); `cache` (key → text) saves re-reads.
 * A pointer that does not resolve reaches nothing.
 */
function reachBlobs(store, live, pointers, cache = new Map()) {
  const blobs = [];
  const found = [];
  const seen = new Set();
  const queue = [...pointers];
  while (store && queue.length > 0 && seen.size < MAX_BLOBS) {
    const p = queue.shift();
    if (seen.has(p.key) || !live.has(p.key)) continue;
    seen.add(p.key);
    let text = cache.get(p.key);
    if (text === undefined) {
      try {
        text = store.get(p.session, p.key);
      } catch {
        text = null;
      }
      cache.set(p.key, text);
    }
    if (text == null) continue;
    blobs.push(text);
    found.push({ pointer: p, text });
    queue.push(...pointersIn(text));
  }
  return { blobs, seen, found };
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
      // Pointers are followed through the blobs they name (e.g. a compaction index).
      const { blobs, seen } = reachBlobs(store, live, pointers);
      const visible = recoverable(originalText, shown, []).recovered;
      const withBlobs = recoverable(originalText, shown, blobs);
      r = { removed: withBlobs.total - visible, recovered: withBlobs.recovered - visible, full: withBlobs.full, keys: [...seen] };
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

/**
 * Grounding recall of one request (EVALUATION.md §1): the class of every fact
 * step t's call used, the stage (or baseline) that hid each hidden one, the
 * multi-line old_str of a str_replace edit, and whether every user-authored
 * message is verbatim. Images are OCR'd only for facts not in the text.
 * Returns the step's facts the request hides (POINTER, with the blob that
 * holds it, or GONE): a step with any needs a recovery turn (EVALUATION.md
 * §3, effective $).
 */
function measureGrounding(g, trace, t, original, messages, { store, session, changes, policy, blobCache, ocr: reader }) {
  g.taskVerbatim.requests++;
  if (taskVerbatim(original, messages)) g.taskVerbatim.verbatim++;
  const entry = trace.facts.get(t);
  if (!entry || (entry.facts.length === 0 && !entry.oldStr)) return [];
  const hiddenFacts = [];
  const view = viewRequest(messages);
  let reached = null;
  const reach = (pointers) => {
    // Every blob the request's pointers reach, following pointers inside blobs.
    if (!reached) {
      const live = store ? new Set(store.list(session).map((x) => x.key)) : new Set();
      reached = reachBlobs(store, live, pointers, blobCache);
    }
    return reached;
  };
  const blobs = (pointers) => reach(pointers).blobs;
  const ocrTexts = reader ? (urls) => urls.map((u) => reader.read(u)) : undefined;
  for (const fact of entry.facts) {
    const cls = classify(view, fact, { ocrTexts, blobs });
    const hidden = cls === 'POINTER' || cls === 'GONE';
    if (hidden) {
      const holder = cls === 'POINTER' ? reach(view.pointers).found.find((b) => occurs(stripMarkers(b.text), fact.text, fact.kind)) : null;
      hiddenFacts.push({ fact, pointer: holder?.pointer ?? null });
    }
    const by = hidden ? (policy.kind === 'baseline' ? policy.id : hiddenBy(messages, fact, changes)) : null;
    countFact(g, cls, t - fact.source, by);
  }
  if (entry.oldStr) {
    g.oldStr.checked++;
    if (oldStrVisible(view, entry.oldStr.text)) g.oldStr.visible++;
    else {
      // Attributed like a fact whose source is the latest observation showing it.
      const by = policy.kind === 'baseline' ? policy.id : hiddenBy(messages, entry.oldStr, changes);
      g.oldStr.hiddenBy[by] = (g.oldStr.hiddenBy[by] ?? 0) + 1;
    }
  }
  return hiddenFacts;
}

/** A regular expression matching `text` literally in `grep_spill`'s dialect. */
function literalPattern(text) {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * Tokens one recovery turn reads back to get the step's hidden facts
 * (issue 41 item 3): for a fact a pointer reaches, the reply of a
 * `grep_spill` for it (the store's own tool, as the model would call it);
 * for a fact nothing reaches, the output of its source observation again,
 * as a re-run of the command prints it (once per observation).
 */
export function recoveryTokens(ctx, hidden, original, store) {
  let tokens = 0;
  const rerun = new Set();
  const byCall = new Map(original.filter((m) => m.role === 'tool').map((m) => [m.tool_call_id, m]));
  for (const { fact, pointer } of hidden) {
    if (pointer && store) {
      const args = JSON.stringify({ pointer: `spill://${pointer.session}/${pointer.key}`, pattern: literalPattern(fact.text) });
      const reply = store.handleToolCall('grep_spill', args, pointer.session);
      tokens += ctx.count(args) + ctx.count(reply.text);
    } else if (!rerun.has(fact.source)) {
      rerun.add(fact.source);
      tokens += ctx.count(messageText(byCall.get(`call_${fact.source}`) ?? { content: '' }));
    }
  }
  return tokens;
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
    facts: new Map(extractFacts(trajectory).map((e) => [e.step, e])),
  };
}

/**
 * The policies of a run (ids filter; the renderer decides how image-all is
 * built), plus TraceLite variants `{ name: options }` (`--variant`), each
 * replayed with the OpenAI settings as `variant-<name>`.
 */
export function selectPolicies(pkg, ids, variants = {}) {
  const renderer = findRenderer(pkg);
  let policies = allPolicies({ renderer });
  if (ids) policies = policies.filter((p) => ids.includes(p.id));
  for (const [name, options] of Object.entries(variants)) {
    policies.push({ id: `variant-${name}`, label: `TraceLite variant ${name}`, kind: 'tracelite', options });
  }
  return { policies, renderer };
}

/**
 * Replays one trajectory under every policy (per-provider policies once per
 * provider; fidelity on the OpenAI run). With `ocr`, one snapshot per image
 * policy is read back with tesseract. Returns plain data (JSON-safe).
 */
export function benchTrace(ctx, file, policies, { ocr: doOcr = false } = {}) {
  const trace = prepareTrace(ctx, file);
  const runs = [];
  const errors = [];
  const snapshots = {};
  let legibility = null;
  for (const policy of policies) {
    if (policy.pending) continue;
    for (const provider of policy.perProvider ? PROVIDERS : ['openai']) {
      let r;
      try {
        // Grounding (and so recovery turns) on every provider's replay of a per-provider policy.
        r = replay(ctx, trace, policy, provider, { fidelity: provider === 'openai', grounding: provider === 'openai' || !!policy.perProvider });
      } catch (err) {
        errors.push({ policy: policy.id, provider, trace: trace.id, error: String(err?.message ?? err) });
        continue;
      }
      if (r.emitted) (legibility ??= {})[policy.id] = measureLegibility(ctx, trace, r.emitted, policy.id);
      if (doOcr && provider === 'openai' && r.snapshotGroups.length > 0) {
        const stats = ocrSnapshot(r);
        if (stats) snapshots[policy.id] = stats;
      }
      const { snapshotGroups: _g, lastMissing: _m, emitted: _e, ...rest } = r;
      if (rest.grounding) rest.grounding.ms = r.groundingMs ?? 0;
      delete rest.groundingMs;
      runs.push({ key: `${policy.id}|${provider}`, trace: trace.id, source: trace.source, ...rest });
    }
  }
  return { file, trace: { id: trace.id, source: trace.source, steps: trace.steps, items: trace.items.length }, runs, errors, snapshots, legibility };
}

/**
 * Records the snapshots of one request not seen before (keyed by their
 * images), with their layout and the text they render: the blob of each tool
 * message's first pointer (the snapshot's reference line), null when one
 * does not resolve.
 */
function collectSnapshots(emitted, groups, { changes, messages, store }) {
  for (const g of groups) {
    const key = g.urls.join('\n');
    if (emitted.has(key)) continue;
    const text = snapshotText(messages, g, (p) => store.get(p.session, p.key));
    const detail = changes.filter((c) => c.kind === 'snapshot' && g.at.includes(c.message)).map((c) => c.detail).join('; ');
    emitted.set(key, { steps: g.steps, urls: g.urls, text, detail, layout: snapshotLayout(changes, g.at) });
  }
}

/** OCR of every snapshot a run emitted and the facts inside each it shows (`bench/legibility.mjs`). */
function measureLegibility(ctx, trace, emitted, policyId) {
  const agg = emptyLegibility();
  const entries = [...trace.facts.values()];
  for (const snap of emitted.values()) {
    const texts = snap.urls.map((u) => ctx.ocr.read(u));
    if (texts.some((x) => x == null)) continue;
    const { facts, cut } = snapshotFacts(entries, snap.steps, snap.text);
    const ocrText = snapshotOcrText(texts);
    addLegibility(agg, readSnapshot({ facts, ocrText, layout: snap.layout, cut }));
    if (process.env.TRACELITE_LEGIBILITY_DUMP) dumpSnapshot(join(process.env.TRACELITE_LEGIBILITY_DUMP, policyId), trace, snap, facts, ocrText);
  }
  return agg;
}

/**
 * Writes a snapshot with facts tesseract missed to `dir` (diagnosis,
 * `TRACELITE_LEGIBILITY_DUMP=dir`): its PNGs, the OCR text and the missed facts.
 */
function dumpSnapshot(dir, trace, snap, facts, ocrText) {
  const { missed } = readFacts(facts, ocrText);
  if (missed.length === 0) return;
  mkdirSync(dir, { recursive: true });
  const base = join(dir, `${trace.id}-${snap.steps.join('_')}`.slice(0, 180));
  snap.urls.forEach((u, i) => writeFileSync(`${base}-${i}.png`, Buffer.from(u.slice(u.indexOf(',') + 1), 'base64')));
  const list = missed.map((f) => `${f.kind}\t${f.text}`).join('\n');
  writeFileSync(`${base}.txt`, `layout: ${snap.layout}; ${snap.detail}\nmissed (${missed.length} of ${facts.length}):\n${list}\n\n--- OCR ---\n${ocrText}`);
}

/** Interleaves files by size over `n` workers so each gets a similar load. */
function partition(files, n) {
  const sized = files.map((f) => [statSync(f).size, f]).sort((a, b) => b[0] - a[0]);
  const parts = Array.from({ length: n }, () => []);
  sized.forEach(([, f], i) => parts[i % n].push(f));
  return parts.filter((p) => p.length > 0);
}

/** Runs `bench/worker.mjs` on `files`; resolves to its trace results and stats. */
function runWorker(args, log) {
  return new Promise((resolveRun, reject) => {
    const child = spawn(process.execPath, [new URL('./worker.mjs', import.meta.url).pathname, JSON.stringify(args)], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (d) => (out += d));
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (d) => d.split('\n').filter(Boolean).forEach((l) => log(l.replace(/^\[bench\] /, ''))));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) return reject(new Error(`bench worker exited with ${code}`));
      const lines = out.split('\n').filter(Boolean).map((l) => JSON.parse(l));
      resolveRun({ traces: lines.filter((l) => l.type === 'trace'), stats: lines.find((l) => l.type === 'stats') });
    });
  });
}

/**
 * Runs the evaluation. `workers` > 1 splits the trajectories over child
 * processes. Returns the result object written to JSON.
 */
export async function runBench(opts) {
  const log = opts.log ?? (() => {});
  const started = performance.now();
  const pkg = opts.pkg ?? (await import('../pkg/entries/node.js'));
  const prices = loadPrices(opts.prices);
  const { policies, renderer } = selectPolicies(pkg, opts.policies, opts.variants);
  const files = opts.files ?? traceFiles(opts.tracesDir, { quick: opts.quick, quickCount: opts.quickCount });
  const ocrFiles = opts.ocr === false ? [] : opts.ocrFiles ?? files;
  const workers = Math.max(1, Math.min(opts.workers ?? 1, files.length));
  let traceResults = [];
  const tokenizer = { distinctTexts: 0, chars: 0, seconds: 0 };
  let peakRss = 0;
  const ocrStats = { images: 0, memoryHits: 0, diskHits: 0, failed: 0, seconds: 0 };
  if (workers === 1) {
    const count = o200kCounter();
    const ctx = { pkg, count, prices, ocr: groundingOcr(opts.ocr !== false) };
    for (const file of files) {
      const t0 = performance.now();
      const r = benchTrace(ctx, file, policies, { ocr: ocrFiles.includes(file) });
      traceResults.push(r);
      peakRss = Math.max(peakRss, process.memoryUsage().rss);
      log(`${r.trace.id}: ${r.trace.steps} steps, ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    }
    Object.assign(tokenizer, { distinctTexts: count.stats.distinct, chars: count.stats.chars, seconds: count.stats.ms / 1000 });
    if (ctx.ocr) addOcrStats(ocrStats, ctx.ocr.stats);
  } else {
    const parts = partition(files, workers);
    const results = await Promise.all(parts.map((part) => runWorker({ files: part, policies: opts.policies, variants: opts.variants, ocrFiles, prices: opts.prices, ocr: opts.ocr !== false }, log)));
    const order = new Map(files.map((f, i) => [f, i]));
    for (const r of results) {
      traceResults.push(...r.traces);
      tokenizer.distinctTexts += r.stats.tokenizer.distinct;
      tokenizer.chars += r.stats.tokenizer.chars;
      tokenizer.seconds += r.stats.tokenizer.ms / 1000;
      peakRss = Math.max(peakRss, r.stats.peakRss);
      if (r.stats.ocr) addOcrStats(ocrStats, r.stats.ocr);
    }
    traceResults = traceResults.sort((a, b) => order.get(a.file) - order.get(b.file));
  }
  const runs = new Map();
  const errors = [];
  const snapshots = {};
  // Per policy (TraceLite defaults and variants).
  const legibility = {};
  for (const r of traceResults) {
    for (const [id, agg] of Object.entries(r.legibility ?? {})) legibility[id] = mergeLegibility(legibility[id] ?? emptyLegibility(), agg);
    for (const run of r.runs) {
      if (!runs.has(run.key)) runs.set(run.key, []);
      runs.get(run.key).push(run);
    }
    errors.push(...r.errors);
    for (const [id, s] of Object.entries(r.snapshots)) {
      if (s.unavailable) snapshots.unavailable = s.unavailable;
      else addSnapshot((snapshots[id] ??= emptySnapshot()), s);
    }
  }
  const traces = traceResults.map((r) => r.trace);
  const result = summarize({ policies, runs, traces, prices, snapshots: opts.ocr === false ? null : snapshots });
  result.errors = errors;
  result.legibility = legibility.tracelite ?? null;
  result.legibilityByPolicy = legibility;
  result.meta = {
    generated: new Date().toISOString(),
    quick: !!opts.quick,
    traces: traces.length,
    steps: traces.reduce((s, t) => s + t.steps, 0),
    workers,
    tokenizer: 'o200k_base (js-tiktoken), counted once per distinct text',
    tokenizerStats: tokenizer,
    renderer: renderer ? renderer.exportName : null,
    harnessSeconds: (performance.now() - started) / 1000,
    harnessPeakRssBytes: peakRss,
    grounding: {
      ocr: opts.ocr === false ? 'off (--no-ocr)' : tesseractAvailable() ? OCR_SETTINGS : 'tesseract not installed',
      ocrStats,
      // Replay time spent measuring grounding (worker processes added up).
      seconds: traceResults.reduce((s, r) => s + r.runs.reduce((a, run) => a + (run.grounding?.ms ?? 0), 0), 0) / 1000,
    },
  };
  return result;
}

function addOcrStats(into, s) {
  for (const k of Object.keys(into)) into[k] += s[k] ?? 0;
}

function emptySnapshot() {
  return { snapshots: 0, images: 0, lines: 0, linesLegible: 0, criticalMissing: 0, criticalLegible: 0 };
}

function addSnapshot(into, s) {
  for (const k of Object.keys(into)) into[k] += s[k] ?? 0;
}

/** Up to `n` evenly spaced lines of `text` long enough to test legibility. */
export function sampleLines(text, n = 20) {
  const lines = text.split('\n').map((l) => l.trim()).filter((l) => l.length >= 10);
  if (lines.length <= n) return lines;
  return Array.from({ length: n }, (_, k) => lines[Math.floor(((k + 0.5) * lines.length) / n)]);
}

/**
 * OCR of one snapshot of a run's last request (tesseract is slow: seconds per
 * image): the snapshot showing the most critical items missing from the text,
 * else the smallest one. Measures sampled lines of the original observation
 * legible in the OCR text, and those critical items.
 */
function ocrSnapshot(run) {
  const groups = run.snapshotGroups;
  const missing = run.lastMissing ?? [];
  const missingIn = (g) => missing.filter((i) => g.steps.includes(i.step)).length;
  // Without missing items: the snapshot with the fewest images, nearest the middle.
  const mid = (groups.length - 1) / 2;
  let group = groups.reduce((a, g, i) => {
    const ai = groups.indexOf(a);
    const better = g.urls.length < a.urls.length || (g.urls.length === a.urls.length && Math.abs(i - mid) < Math.abs(ai - mid));
    return better ? g : a;
  });
  let best = 0;
  for (const g of groups) {
    const n = missingIn(g);
    if (n > best) [best, group] = [n, g];
  }
  const texts = [];
  for (const url of group.urls) {
    const text = ocr(url.slice(url.indexOf(',') + 1));
    if (text == null) return { unavailable: 'tesseract failed, timed out or is not installed' };
    texts.push(text);
  }
  const ocrText = texts.join('\n');
  const s = { ...emptySnapshot(), snapshots: 1, images: group.urls.length };
  for (const line of sampleLines(group.original)) {
    s.lines++;
    if (legible(line, ocrText)) s.linesLegible++;
  }
  for (const item of missing) {
    if (!group.steps.includes(item.step)) continue;
    s.criticalMissing++;
    if (legible(item.text, ocrText)) s.criticalLegible++;
  }
  return s;
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
        bytes: {
          requestsIn: sum(list, (r) => r.bytes.requestsIn),
          requestsOut: sum(list, (r) => r.bytes.requestsOut),
          images: sum(list, (r) => r.bytes.images),
          png: sum(list, (r) => r.bytes.png),
          base64: sum(list, (r) => r.bytes.base64),
          imageTokens: sum(list, (r) => r.bytes.imageTokens[p]),
          snapshots: {
            count: sum(list, (r) => r.bytes.snapshots?.count ?? 0),
            textTokens: sum(list, (r) => r.bytes.snapshots?.textTokens ?? 0),
            imageTokens: sum(list, (r) => r.bytes.snapshots?.imageTokens ?? 0),
          },
        },
        bySource,
        ...recoveryTurns(list, p),
      };
      entry.perTrace[p] = list.map((r) => ({
        trace: r.trace,
        inputTokens: sum(r.steps, (s) => s.tokens[p]),
        cachedTokens: sum(r.steps, (s) => s.cached[p]),
        cost: sum(r.steps, (s) => s.input[p] + s.output[p]),
        recoveryCost: sum(r.steps, (s) => (s.reread ? s.input[p] + s.output[p] : 0)),
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
    entry.grounding = mergeGrounding(fid.map((r) => r.grounding));
    if (policy.kind === 'tracelite') {
      entry.latency = {
        ms: stats(fid.flatMap((r) => r.latencyMs)),
        perObservationMs: stats(fid.flatMap((r) => r.perObservationMs)),
      };
    }
    if (policy.id === 'image-all' && PROVIDERS.every((p) => entry.byProvider[p].images === 0)) {
      out.pending.push({
        id: policy.id,
        label: policy.label,
        reason: 'no image was emitted: the package exports no render function and its optical stage rendered nothing in this build',
      });
      continue;
    }
    out.policies.push(entry);
  }
  return out;
}

/**
 * Recovery turns of a policy's replays for `provider` (EVALUATION.md §3):
 * every step whose tool call uses a fact its request hides (`step.reread`,
 * measured on the replay the steps come from) costs one more request,
 * priced like that step's request with caching (input and output).
 * `measured` is false when no replay measured grounding (then nothing is priced).
 */
export function recoveryTurns(runs, provider) {
  const measured = runs.length > 0 && runs.every((r) => r.grounding);
  let steps = 0;
  let rereadSteps = 0;
  let cost = 0;
  let tokens = 0;
  for (const r of runs) {
    for (const s of r.steps) {
      steps++;
      if (!s.reread) continue;
      rereadSteps++;
      cost += (s.input[provider] ?? 0) + (s.output[provider] ?? 0);
      tokens += s.recoveryTokens ?? 0;
    }
  }
  // Grounding of these very replays (a per-provider policy's differ by provider).
  const facts = measured ? sum(runs, (r) => r.grounding.facts) : 0;
  const shown = measured ? sum(runs, (r) => r.grounding.text + r.grounding.image) : 0;
  return { recovery: { measured, steps, rereadSteps, cost, facts, shown, tokens } };
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
