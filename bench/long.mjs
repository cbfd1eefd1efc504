// Long sessions (EVALUATION.md §4): trajectories of one source chained into
// one conversation of hundreds of turns, replayed under TraceLite defaults,
// full history and the baselines users would pick instead.
//
// Chaining: the trajectories of a source, sorted by file name, are taken in
// order until they hold at least `minSteps` steps. The conversation is the
// system prompt (shared by the source), then for each trajectory its task as
// a new user message followed by all of its steps (assistant turn + tool
// result, `trajectoryToRequest` of all its steps), tool call ids renumbered
// `call_<step in the session>`. The request before step s of trajectory k is
// that conversation up to the end of trajectory k−1, then trajectory k's
// request before step s (its task and steps 0..s−1): the per-step request the
// harness replays, behind everything the earlier tasks left in the history.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { PromptCache, loadPrices } from './cost.mjs';
import { extractFacts } from './grounding.mjs';
import { groundingOcr, sourceOf } from './harness.mjs';
import { allPolicies } from './policies.mjs';
import { findRenderer } from './render.mjs';
import { hiddenFacts, rereadRecords, rereadTable } from './rereads.mjs';
import { MESSAGE_OVERHEAD, PROVIDERS, messageShape, o200kCounter, shapeTokens, withBenchModel } from './tokens.mjs';

/** Steps per session: full runs and `--quick` ones. */
export const LONG_STEPS = { full: 300, quick: 100 };

/** The policies replayed over long sessions (full history is always one). */
export const LONG_POLICIES = ['full', 'mask5', 'mask5-block10', 'ctxedit-default', 'ctxedit-30k', 'gemini-mask', 'tracelite'];

/** Turns compared at each end of a session: 100, or a third of shorter sessions. */
export function endWindow(turns) {
  return Math.max(1, Math.min(100, Math.floor(turns / 3)));
}

/**
 * Which trajectories make each session: per source (in source order), the
 * files sorted by name, taken until their steps reach `minSteps`; a source
 * whose trajectories together fall short gives no session. `stepsOf(file)` is
 * a trajectory's step count.
 */
export function chainPlan(files, stepsOf, { minSteps = LONG_STEPS.full } = {}) {
  const bySource = new Map();
  for (const f of [...files].sort()) {
    const s = sourceOf(f);
    if (!bySource.has(s)) bySource.set(s, []);
    bySource.get(s).push(f);
  }
  const plans = [];
  for (const [source, list] of [...bySource].sort((a, b) => a[0].localeCompare(b[0]))) {
    const picked = [];
    let steps = 0;
    for (const f of list) {
      if (steps >= minSteps) break;
      picked.push(f);
      steps += stepsOf(f);
    }
    if (steps >= minSteps) plans.push({ source, files: picked, steps });
  }
  return plans;
}

const renumber = (id, offset) => {
  const m = /^call_(\d+)$/.exec(id ?? '');
  return m ? `call_${offset + Number(m[1])}` : id;
};

/**
 * One conversation out of `trajectories` (parsed, in order; one system
 * prompt). Returns `{ requests, messages, tasks }`: `requests[t]` the request
 * before session step t (slices of `messages`, shared objects), with
 * `taskAt` (index of its current task message), `trajectory` and `step`;
 * `outputTokens[t]` the tokens of the assistant turn that answers it.
 */
export function chainRequests(pkg, trajectories, count) {
  const messages = [];
  const requests = [];
  let shell = null;
  let systemKey = null;
  let offset = 0;
  trajectories.forEach((trajectory, k) => {
    const n = trajectory.steps.length;
    const full = pkg.trajectoryToRequest(JSON.stringify(trajectory), n, 'openai-chat');
    const base = full.messages.findIndex((m) => m.role !== 'system');
    const key = JSON.stringify(full.messages.slice(0, base));
    if (k === 0) {
      ({ messages: shell, ...shell } = full);
      systemKey = key;
      messages.push(...full.messages.slice(0, base));
    } else if (key !== systemKey) {
      throw new Error(`${trajectory.id}: a chained trajectory has another system prompt`);
    }
    const taskAt = messages.length;
    for (const m of full.messages.slice(base)) {
      if (m.role === 'tool') messages.push({ ...m, tool_call_id: renumber(m.tool_call_id, offset) });
      else if (m.tool_calls) messages.push({ ...m, tool_calls: m.tool_calls.map((c) => ({ ...c, id: renumber(c.id, offset) })) });
      else messages.push(m);
    }
    for (let s = 0; s < n; s++) requests.push({ taskAt, end: taskAt + 1 + 2 * s, trajectory: k, step: s });
    offset += n;
  });
  for (const r of requests) r.request = { ...shell, messages: messages.slice(0, r.end) };
  const outputTokens = count
    ? requests.map((r) => (messages[r.end]?.role === 'assistant' ? messageShape(messages[r.end], count).text - MESSAGE_OVERHEAD : 0))
    : null;
  return { requests, messages, outputTokens };
}

/**
 * Facts of a session's steps (EVALUATION.md §1), by session step: the
 * trajectories' steps in order as one trajectory whose user-stated texts are
 * the system prompt and every task (a fact stated in any task is not one
 * learned from tool output).
 */
export function sessionFacts(trajectories) {
  const chained = {
    system: trajectories[0]?.system ?? '',
    task: trajectories.map((t) => t.task ?? '').join('\n\n'),
    steps: trajectories.flatMap((t) => t.steps ?? []),
  };
  return new Map(extractFacts(chained).map((e) => [e.step, e]));
}

/**
 * Whether the request `messages` hides a fact of `entry` (a step's facts):
 * shown neither as text nor in an image tesseract reads (`ocr`, null: an
 * image counts as shown), so the step needs a recovery turn.
 */
export function hidesAFact(messages, entry, ocr) {
  return hiddenFacts(messages, entry, ocr).length > 0;
}

/** Text of every part of a message (content strings, text parts, tool call arguments). */
function texts(m) {
  const c = m.content;
  const out = typeof c === 'string' ? [c] : Array.isArray(c) ? c.filter((p) => p?.type === 'text').map((p) => p.text) : [];
  for (const call of m.tool_calls ?? []) out.push(call.function?.arguments ?? '');
  return out;
}

/** Whether the current task (the latest user-authored task message) is word for word in `messages`. */
export function currentTaskVerbatim(task, messages) {
  return messages.some((m) => texts(m).some((t) => t.includes(task)));
}

/**
 * Replays one session under one policy (per-provider policies: `provider`
 * only). Returns per-step `{ tokens, cost }` by provider and how many
 * requests show the current task verbatim.
 */
function replaySession(ctx, chain, policy, provider) {
  const { pkg, count, prices } = ctx;
  const providers = policy.perProvider ? [provider] : PROVIDERS;
  const caches = Object.fromEntries(providers.map((p) => [p, new PromptCache(prices.byProvider[p])]));
  const store = policy.kind === 'tracelite' ? new pkg.SpillStore() : null;
  const ids = new Map();
  const shapes = new WeakMap();
  const shapeOf = (m) => {
    let hit = shapes.get(m);
    if (!hit) {
      const key = JSON.stringify(m);
      if (!ids.has(key)) ids.set(key, ids.size);
      shapes.set(m, (hit = { id: ids.get(key), shape: messageShape(m, count) }));
    }
    return hit;
  };
  const steps = [];
  let verbatim = 0;
  let ms = 0;
  let compactions = 0;
  const taskOf = (step) => chain.requests[step]?.trajectory;
  try {
    chain.requests.forEach((r, t) => {
      let messages;
      let stable = null;
      let changes = null;
      if (policy.kind === 'baseline') {
        messages = policy.transform(r.request.messages, { provider });
      } else {
        const t0 = performance.now();
        const out = pkg.compress(JSON.stringify(r.request), withBenchModel({ ...policy.options, provider, session: `long-${policy.id}`, store }));
        ms += performance.now() - t0;
        messages = out.request.messages;
        stable = out.report.stableMessages;
        changes = out.report.changes;
        if (out.report.compaction?.outcome === 'compacted') compactions++;
      }
      const task = chain.messages[r.taskAt].content;
      if (currentTaskVerbatim(typeof task === 'string' ? task : texts(chain.messages[r.taskAt]).join('\n'), messages)) verbatim++;
      const hits = messages.map(shapeOf);
      const system = Math.max(0, messages.findIndex((m) => m.role !== 'system'));
      // A recovery turn (effective $): the step's tool call uses a fact this request hides.
      const hidden = chain.facts ? hiddenFacts(messages, chain.facts.get(t), ctx.ocr) : [];
      const step = { tokens: {}, cost: {}, reread: hidden.length > 0 };
      if (step.reread) step.rereads = rereadRecords(messages, hidden, { t, changes, baseline: policy.kind === 'baseline' ? policy.id : undefined, compactions, taskOf });
      for (const p of providers) {
        const tokens = hits.map((h) => shapeTokens(h.shape, p));
        const breakpoints = stable === null || p !== 'anthropic' ? [] : [system + stable];
        const c = caches[p].request(hits.map((h) => h.id), tokens, { system, outputTokens: chain.outputTokens[t], breakpoints });
        step.tokens[p] = c.total;
        step.cost[p] = c.input + c.output;
      }
      steps.push(step);
    });
  } finally {
    store?.free();
  }
  return { steps, verbatim, ms };
}

function stepsOf(file) {
  return JSON.parse(readFileSync(file, 'utf8')).steps.length;
}

/** Per-provider figures of one policy over one session. */
function sessionFigures(steps, provider, budget) {
  const n = steps.length;
  const w = endWindow(n);
  const cost = steps.map((s) => s.cost[provider]);
  const tokens = steps.map((s) => s.tokens[provider]);
  // Effective $ per turn: a turn's cost plus, when it hides a fact its call uses, one more like it.
  const effective = steps.map((s) => s.cost[provider] * (s.reread ? 2 : 1));
  const mean = (xs) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
  const first = mean(cost.slice(0, w));
  const last = mean(cost.slice(n - w));
  const effFirst = mean(effective.slice(0, w));
  const effLast = mean(effective.slice(n - w));
  const maxTokens = Math.max(0, ...tokens);
  return {
    turns: n,
    window: w,
    totalCost: cost.reduce((a, b) => a + b, 0),
    costPerTurnFirst: first,
    costPerTurnLast: last,
    lastOverFirst: first > 0 ? last / first : null,
    maxRequestTokens: maxTokens,
    overBudget: tokens.filter((x) => x > budget).length,
    rereadTurns: steps.filter((s) => s.reread).length,
    effectiveTotalCost: effective.reduce((a, b) => a + b, 0),
    effectivePerTurnFirst: effFirst,
    effectivePerTurnLast: effLast,
    effectiveLastOverFirst: effFirst > 0 ? effLast / effFirst : null,
    rereads: rereadTable(steps),
  };
}

/**
 * Builds the sessions from the trajectories of `dir` and replays them.
 * Returns `{ budget, minSteps, sessions: [{ source, trajectories, steps,
 * policies: [{ id, label, taskVerbatim, byProvider }] }] }`.
 */
export function runLong(ctx, files, { minSteps = LONG_STEPS.full, policies: ids = LONG_POLICIES, variants = {}, sources = null, log = () => {} } = {}) {
  const started = performance.now();
  const budget = ctx.pkg.defaultOptions().budget;
  const plans = chainPlan(files, stepsOf, { minSteps }).filter((p) => !sources || sources.includes(p.source));
  const wanted = LONG_POLICIES.filter((id) => id === 'full' || ids.includes(id));
  const sessions = [];
  for (const plan of plans) {
    const trajectories = plan.files.map((f) => JSON.parse(readFileSync(f, 'utf8')));
    const chain = chainRequests(ctx.pkg, trajectories, ctx.count);
    chain.facts = sessionFacts(trajectories);
    const session = { source: plan.source, trajectories: trajectories.map((t) => t.id), steps: chain.requests.length, policies: [] };
    // Fresh policy objects: stateful baselines keep per-conversation state.
    const policies = allPolicies({ renderer: findRenderer(ctx.pkg) }).filter((p) => wanted.includes(p.id));
    // TraceLite variants (`{ name: options }`), replayed per provider like the defaults.
    for (const [name, options] of Object.entries(variants)) {
      policies.push({ id: `variant-${name}`, label: `TraceLite variant ${name}`, kind: 'tracelite', perProvider: true, options });
    }
    for (const policy of policies) {
      const t0 = performance.now();
      const entry = { id: policy.id, label: policy.label, kind: policy.kind, byProvider: {} };
      for (const provider of policy.perProvider ? PROVIDERS : ['openai']) {
        const r = replaySession(ctx, chain, policy, provider);
        if (provider === 'openai') entry.taskVerbatim = { requests: r.steps.length, verbatim: r.verbatim };
        for (const p of policy.perProvider ? [provider] : PROVIDERS) entry.byProvider[p] = sessionFigures(r.steps, p, budget);
      }
      session.policies.push(entry);
      log(`long session ${plan.source} (${session.steps} turns): ${policy.id} ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    }
    sessions.push(session);
  }
  return { budget, minSteps, sessions, seconds: (performance.now() - started) / 1000, ocr: ctx.ocr ? 'tesseract' : 'off' };
}

/**
 * `runLong` with one child process per session (at most `workers` at once):
 * the sessions are independent and TraceLite's replays are the slow part.
 */
export async function runLongParallel({ files, minSteps = LONG_STEPS.full, policies = LONG_POLICIES, variants = {}, prices, workers = 2, ocr = true, log = () => {} }) {
  const started = performance.now();
  const plans = chainPlan(files, stepsOf, { minSteps });
  const queue = plans.map((p) => p.source);
  const results = new Map();
  const run = (source) =>
    new Promise((resolveRun, reject) => {
      const args = JSON.stringify({ files, minSteps, policies, variants, prices, sources: [source], ocr });
      const child = spawn(process.execPath, [fileURLToPath(import.meta.url), args], { stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      child.stdout.setEncoding('utf8');
      child.stdout.on('data', (d) => (out += d));
      child.stderr.setEncoding('utf8');
      child.stderr.on('data', (d) => d.split('\n').filter(Boolean).forEach((l) => log(l)));
      child.on('error', reject);
      child.on('close', (code) => (code === 0 ? resolveRun(JSON.parse(out)) : reject(new Error(`long-session worker exited with ${code}`))));
    });
  const lanes = Array.from({ length: Math.max(1, Math.min(workers, queue.length)) }, async () => {
    while (queue.length > 0) {
      const source = queue.shift();
      results.set(source, await run(source));
    }
  });
  await Promise.all(lanes);
  const parts = plans.map((p) => results.get(p.source));
  return {
    budget: parts[0]?.budget ?? null,
    minSteps,
    sessions: parts.flatMap((r) => r.sessions),
    seconds: (performance.now() - started) / 1000,
    ocr: parts[0]?.ocr ?? (ocr ? 'tesseract' : 'off'),
  };
}

// As a worker: `node bench/long.mjs '{"files":[...],"minSteps":300,"sources":[...]}'` prints the result.
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { files, minSteps, policies, variants, prices, sources, ocr = true } = JSON.parse(process.argv[2]);
  const pkg = await import('../pkg/entries/node.js');
  const ctx = { pkg, count: o200kCounter(), prices: loadPrices(prices), ocr: groundingOcr(ocr) };
  const r = runLong(ctx, files, { minSteps, policies, variants, sources, log: (m) => process.stderr.write(`${m}\n`) });
  process.stdout.write(JSON.stringify(r) + '\n');
}
