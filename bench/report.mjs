// Writes bench/REPORT.md from the result object of the harness.
import { legibilitySection } from './legibility.mjs';
import { CLEARED_PLACEHOLDER } from './policies.mjs';
import { BENCH_MODELS, PROVIDERS } from './tokens.mjs';

const pct = (x) => (Number.isFinite(x) ? `${(x * 100).toFixed(1)}%` : 'n/a');
const share = (a, b) => (b > 0 ? a / b : NaN);
const int = (n) => Math.round(n).toLocaleString('en-US');
const usd = (x) => (x >= 1 ? `$${x.toFixed(2)}` : `$${x.toFixed(3)}`);
const ms = (x) => (x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x.toFixed(2));
const PROVIDER_NAMES = { anthropic: 'Anthropic', openai: 'OpenAI', gemini: 'Gemini' };
/** The stages a hidden fact or old_str is attributed to, in pipeline order. */
const HIDERS = ['spill', 'dedup', 'phase', 'optical', 'compact', 'unattributed'];
const signed = (x) => (Number.isFinite(x) ? `${x <= 0 ? '−' : '+'}${Math.abs(x * 100).toFixed(1)}%` : 'n/a');

function table(header, rows) {
  const lines = [`| ${header.join(' | ')} |`, `|${header.map((h, i) => (i === 0 ? '---' : '---:')).join('|')}|`];
  for (const r of rows) lines.push(`| ${r.join(' | ')} |`);
  return lines.join('\n');
}

/** Share of facts shown as text or read by OCR in an image (grounding recall). */
export function groundingShare(g) {
  return g ? share(g.text + g.image, g.facts) : NaN;
}

/** Grounding totals of facts whose source observation is more than 3 steps back. */
export function olderThan3(g) {
  const out = { facts: 0, text: 0, image: 0, pointer: 0, gone: 0, unread: 0 };
  for (const [bucket, v] of Object.entries(g?.byAge ?? {})) {
    if (bucket === '1-3') continue;
    for (const k of Object.keys(out)) out[k] += v[k] ?? 0;
  }
  return out;
}

function costPerTrace(p) {
  return p.traces > 0 ? (p.inputCost + p.outputCost) / p.traces : 0;
}

/**
 * Effective $ per trajectory (EVALUATION.md §3): $ with caching plus one
 * recovery request for every step whose tool call uses a fact the request
 * hides, priced like that step's request. NaN when grounding was not measured.
 */
export function effectiveCostPerTrace(p) {
  if (!p.recovery?.measured) return NaN;
  return p.traces > 0 ? (p.inputCost + p.outputCost + p.recovery.cost) / p.traces : 0;
}

/** Share of steps whose tool call uses a fact the request hides (a recovery turn each). */
export function rereadShare(p) {
  return p.recovery?.measured ? share(p.recovery.rereadSteps, p.recovery.steps) : NaN;
}

/** The headline table (Markdown): tokens, $ and fidelity per policy. */
export function headlineTable(result) {
  const full = result.policies.find((p) => p.id === 'full');
  const rows = result.policies.map((p) => {
    const o = p.byProvider.openai;
    const red = full ? 1 - share(o.inputTokens, full.byProvider.openai.inputTokens) : NaN;
    const costs = PROVIDERS.map((prov) => {
      const c = costPerTrace(p.byProvider[prov]);
      const f = full ? costPerTrace(full.byProvider[prov]) : NaN;
      return p.id === 'full' ? usd(c) : `${usd(c)} (${signed(c / f - 1)})`;
    });
    const f = p.fidelity;
    const removed = f.recover.removedBytes;
    return [
      p.label,
      int(o.inputTokens),
      p.id === 'full' ? '—' : pct(red),
      ...costs,
      pct(share(f.toolCalls.kept, f.toolCalls.total)),
      pct(share(f.critical.present, f.critical.checked)),
      removed > 0 ? pct(share(f.recover.recoveredBytes, removed)) : 'nothing removed',
      pct(groundingShare(p.grounding)),
      pct(share(p.grounding?.taskVerbatim.verbatim, p.grounding?.taskVerbatim.requests)),
    ];
  });
  return table(
    ['policy', 'input tokens', 'reduction', '$/traj Anthropic', '$/traj OpenAI', '$/traj Gemini', 'tool calls verbatim', 'critical lines as text', 'removed bytes recoverable', 'grounding (text+image)', 'task verbatim'],
    rows,
  );
}

const isStage = (p) => p.id.startsWith('only-');
/** TraceLite defaults and its other settings (`tracelite-…`, `variant-…`): neither baseline nor stage. */
const isTraceLite = (p) => p.id === 'tracelite' || p.id.startsWith('tracelite-') || p.id.startsWith('variant-');
/** A bound (`oracle-…`, bench/oracle.mjs): it knows the future, so it shows headroom and competes with nothing. */
export const isBound = (p) => p.id.startsWith('oracle-');
const isBaseline = (p) => !isTraceLite(p) && !isStage(p) && !isBound(p);

/** The columns of the dominance table: value of a policy, and whether lower is better. */
const DOMINANCE_COLUMNS = [
  { id: 'tokens', label: 'input tokens', lower: true, value: (p) => p.byProvider.openai.inputTokens },
  ...PROVIDERS.map((prov) => ({ id: `cost-${prov}`, label: `$/traj ${PROVIDER_NAMES[prov]}`, lower: true, usd: true, value: (p) => costPerTrace(p.byProvider[prov]) })),
  ...PROVIDERS.map((prov) => ({ id: `effective-${prov}`, label: `effective $/traj ${PROVIDER_NAMES[prov]}`, lower: true, usd: true, value: (p) => effectiveCostPerTrace(p.byProvider[prov]) })),
  { id: 'grounding', label: 'grounding recall (text+image)', lower: false, value: (p) => groundingShare(p.grounding) },
  { id: 'critical', label: 'critical lines as text', lower: false, value: (p) => share(p.fidelity.critical.present, p.fidelity.critical.checked) },
];

/**
 * The dominance table (EVALUATION.md §3): per column the best policy of the
 * run and TraceLite defaults' distance to it, and whether TraceLite defaults
 * beat every baseline on tokens and $ and every single stage on $. Null
 * without TraceLite defaults in the run.
 */
export function dominance(result) {
  const tl = result.policies.find((p) => p.id === 'tracelite');
  if (!tl) return null;
  const columns = DOMINANCE_COLUMNS.map((c) => {
    const ranked = result.policies.filter((p) => !isBound(p) && Number.isFinite(c.value(p))).sort((a, b) => (c.lower ? c.value(a) - c.value(b) : c.value(b) - c.value(a)));
    const best = ranked[0];
    const v = c.value(tl);
    return { id: c.id, label: c.label, lowerIsBetter: c.lower, usd: !!c.usd, best: best?.id ?? null, bestLabel: best?.label ?? null, bestValue: best ? c.value(best) : null, tracelite: v, distance: best ? v - c.value(best) : null };
  });
  // Strictly ahead: TraceLite defaults' value below the other's on every cost column.
  const behind = (others, ids) => others.flatMap((p) => DOMINANCE_COLUMNS.filter((c) => ids.includes(c.id) && !(c.value(tl) < c.value(p))).map((c) => ({ policy: p.id, column: c.id })));
  const costIds = PROVIDERS.map((prov) => `cost-${prov}`);
  const baselines = result.policies.filter(isBaseline);
  const stages = result.policies.filter(isStage);
  const notAheadOfBaselines = behind(baselines, ['tokens', ...costIds]);
  const notAheadOfStages = behind(stages, costIds);
  // Effective $: TraceLite defaults below every other policy of the run, per provider.
  const effectiveIds = PROVIDERS.map((prov) => `effective-${prov}`);
  const measured = effectiveIds.every((id) => Number.isFinite(DOMINANCE_COLUMNS.find((c) => c.id === id).value(tl)));
  const notLowestEffective = measured ? behind(result.policies.filter((p) => p !== tl && !isBound(p) && effectiveIds.every((id) => Number.isFinite(DOMINANCE_COLUMNS.find((c) => c.id === id).value(p)))), effectiveIds) : null;
  return {
    columns,
    baselines: baselines.map((p) => p.id),
    stages: stages.map((p) => p.id),
    aheadOfEveryBaseline: notAheadOfBaselines.length === 0,
    notAheadOfBaselines,
    aheadOfEveryStageOnCost: notAheadOfStages.length === 0,
    notAheadOfStages,
    lowestEffectiveCost: notLowestEffective ? notLowestEffective.length === 0 : null,
    notLowestEffective,
  };
}

function dominanceValue(c, x) {
  if (!Number.isFinite(x)) return 'n/a';
  if (c.id === 'tokens') return int(x);
  if (c.usd) return usd(x);
  return pct(x);
}

function dominanceDistance(c) {
  if (c.best == null || !Number.isFinite(c.distance)) return 'n/a';
  if (c.best === 'tracelite' || c.distance === 0) return 'best';
  const d = c.distance;
  if (c.id === 'tokens') return `${d > 0 ? '+' : '−'}${int(Math.abs(d))} (${signed(d / c.bestValue)})`;
  if (c.usd) return `${d > 0 ? '+' : '−'}$${Math.abs(d).toFixed(3)} (${signed(d / c.bestValue)})`;
  return `${d > 0 ? '+' : '−'}${Math.abs(d * 100).toFixed(1)} points`;
}

/** The dominance section (Markdown lines). */
export function dominanceSection(result) {
  const d = result.dominance ?? dominance(result);
  if (!d) return [];
  const label = (id) => result.policies.find((p) => p.id === id)?.label ?? id;
  const out = ['## Dominance', ''];
  out.push('For each column, the best policy of this run (baselines, TraceLite stages and variants) and how far TraceLite defaults are from it (tokens and $: lower is better; recall and critical lines: higher is better). Tokens are the OpenAI run; $ per trajectory with prompt caching.');
  out.push('');
  out.push(table(['column', 'best policy', 'best', 'TraceLite defaults', 'distance'], d.columns.map((c) => [c.label, c.bestLabel ?? '—', dominanceValue(c, c.bestValue), dominanceValue(c, c.tracelite), dominanceDistance(c)])));
  out.push('');
  const list = (misses) => {
    const by = new Map();
    for (const m of misses) by.set(m.policy, [...(by.get(m.policy) ?? []), DOMINANCE_COLUMNS.find((c) => c.id === m.column).label]);
    return [...by].map(([id, cols]) => `${label(id)} (${cols.join(', ')})`).join('; ');
  };
  out.push(d.aheadOfEveryBaseline
    ? `* TraceLite defaults **are ahead of every baseline** (${d.baselines.length}) on input tokens and on $ for all three providers.`
    : `* TraceLite defaults **are not ahead of every baseline** on tokens and $: at or behind ${list(d.notAheadOfBaselines)}.`);
  out.push(d.aheadOfEveryStageOnCost
    ? `* TraceLite defaults **cost less than every single stage** (${d.stages.length}) for all three providers.`
    : `* TraceLite defaults **do not cost less than every single stage**: at or behind ${list(d.notAheadOfStages)}.`);
  if (d.lowestEffectiveCost != null) {
    out.push(d.lowestEffectiveCost
      ? '* TraceLite defaults **have the lowest effective $ of every policy** of the run, for all three providers (recovery turns priced, below).'
      : `* TraceLite defaults **do not have the lowest effective $ of every policy**: at or behind ${list(d.notLowestEffective)}.`);
  }
  out.push('');
  return out;
}

const perTurn = (x) => `$${x.toFixed(4)}`;

/** The long-session section (EVALUATION.md §4), Markdown lines; empty without `result.long`. */
export function longSection(result) {
  const L = result.long;
  if (!L) return [];
  const out = ['## Long sessions', ''];
  out.push(`SWE-bench runs are short; users\' sessions are not. Each source\'s trajectories, sorted by file name, are taken in order until they hold at least ${int(L.minSteps)} steps, and chained into one conversation (\`bench/long.mjs\`): the shared system prompt, then each trajectory\'s task as a new user message after the previous trajectory\'s last step, followed by all of its steps (tool call ids renumbered through the session). ` +
    'The request before step s of trajectory k is everything the earlier trajectories left, then trajectory k\'s own request before step s (its task and steps 0..s−1): one request per step, replayed in order. ' +
    'Each policy is priced per provider as in the rest of the report (prompt caching; TraceLite defaults replayed per provider); a **turn** is one request with its output. ' +
    `**$/turn** compares the mean cost of the first and the last ${L.sessions[0] ? int(L.sessions[0].policies[0]?.byProvider.openai.window ?? 100) : 100} turns (flat = ×1.0). **Max request** is the largest request in tokens (the provider\'s count; images by its formula), against TraceLite\'s default budget (${int(L.budget ?? 0)} tokens). **Current task verbatim**: requests that show the latest user-authored task message word for word. ` +
    'TraceLite\'s compaction is extractive (no model call), so what it costs is the prefix it rewrites, priced here like every other cache miss. ' +
    `**Effective $/turn** adds a recovery turn, priced like the turn, to every turn whose tool call uses a fact the request hides (as in the effective-$ section; facts learned from any earlier tool output of the session; OCR ${L.ocr === 'off' ? 'off: an image counts as shown' : 'by tesseract'}).`);
  out.push('');
  if (L.sessions.length === 0) {
    out.push(`No source has trajectories adding up to ${int(L.minSteps)} steps in this run.`);
    out.push('');
    return out;
  }
  for (const s of L.sessions) {
    out.push(`### ${s.source}: ${int(s.steps)} turns, ${s.trajectories.length} trajectories`);
    out.push('');
    const rows = s.policies.map((p) => {
      const cells = [p.label];
      for (const prov of PROVIDERS) {
        const f = p.byProvider[prov];
        cells.push(f ? `${usd(f.totalCost)}` : '—');
        cells.push(f ? `${perTurn(f.costPerTurnFirst)} → ${perTurn(f.costPerTurnLast)} (×${(f.lastOverFirst ?? NaN).toFixed(2)})` : '—');
      }
      for (const prov of PROVIDERS) {
        const f = p.byProvider[prov];
        cells.push(f?.effectivePerTurnFirst != null ? `${perTurn(f.effectivePerTurnFirst)} → ${perTurn(f.effectivePerTurnLast)} (×${(f.effectiveLastOverFirst ?? NaN).toFixed(2)})` : '—');
      }
      const rereads = p.byProvider.openai?.rereadTurns;
      cells.push(rereads != null ? `${int(rereads)} (${pct(share(rereads, s.steps))})` : '—');
      const maxTokens = Math.max(...PROVIDERS.map((prov) => p.byProvider[prov]?.maxRequestTokens ?? 0));
      const over = Math.max(...PROVIDERS.map((prov) => p.byProvider[prov]?.overBudget ?? 0));
      cells.push(int(maxTokens), over ? `${int(over)} (${pct(share(over, s.steps))})` : '0');
      cells.push(`${int(p.taskVerbatim.verbatim)} / ${int(p.taskVerbatim.requests)} (${pct(share(p.taskVerbatim.verbatim, p.taskVerbatim.requests))})`);
      return cells;
    });
    out.push(table(['policy', ...PROVIDERS.flatMap((prov) => [`${PROVIDER_NAMES[prov]} $ total`, `${PROVIDER_NAMES[prov]} $/turn first → last`]), ...PROVIDERS.map((prov) => `${PROVIDER_NAMES[prov]} effective $/turn first → last`), 'turns needing a re-read (OpenAI)', 'max request tokens', 'requests over budget', 'current task verbatim'], rows));
    out.push('');
    const tl = s.policies.find((p) => p.id === 'tracelite');
    if (tl) {
      const checks = PROVIDERS.filter((prov) => tl.byProvider[prov]).map((prov) => {
        const f = tl.byProvider[prov];
        return `${PROVIDER_NAMES[prov]} ${int(f.maxRequestTokens)} ${f.maxRequestTokens <= L.budget ? '≤' : '>'} ${int(L.budget)}`;
      });
      const ok = PROVIDERS.every((prov) => !tl.byProvider[prov] || tl.byProvider[prov].maxRequestTokens <= L.budget);
      const full = s.policies.find((p) => p.id === 'full');
      const verbatimAll = tl.taskVerbatim.verbatim === tl.taskVerbatim.requests;
      out.push(`* TraceLite defaults: max request ${ok ? '**within the budget**' : '**over the budget**'} (${checks.join(', ')}); current task verbatim in ${verbatimAll ? '**every** request' : `${int(tl.taskVerbatim.verbatim)} of ${int(tl.taskVerbatim.requests)} requests`}.`);
      if (full) {
        out.push(`* Cost per turn, last vs first turns: TraceLite defaults ${PROVIDERS.map((prov) => `${PROVIDER_NAMES[prov]} ×${(tl.byProvider[prov]?.lastOverFirst ?? NaN).toFixed(2)}`).join(', ')}; full history ${PROVIDERS.map((prov) => `×${(full.byProvider[prov]?.lastOverFirst ?? NaN).toFixed(2)}`).join(', ')}.`);
      }
      out.push('');
      out.push(...rereadLines(tl, s.steps));
    }
  }
  out.push(`Long-session replay time: ${L.seconds.toFixed(0)} s (one process per session).`);
  out.push('');
  return out;
}

/**
 * Why TraceLite defaults' turns need a re-read in a long session (issue 52):
 * per hiding stage (compaction by its number), per provider the turns and
 * facts, and on the OpenAI replay how long ago the fact was shown and how
 * much of it belongs to the current task. Empty without the records.
 */
export function rereadLines(tl, turns) {
  const tables = Object.fromEntries(PROVIDERS.map((prov) => [prov, tl.byProvider[prov]?.rereads]).filter(([, t]) => t));
  if (Object.keys(tables).length === 0) return [];
  const keys = [...new Set(Object.values(tables).flatMap((t) => Object.keys(t)))].sort((a, b) => {
    const n = (k) => Number(/#(\d+)$/.exec(k)?.[1] ?? 0);
    return a.replace(/ #\d+$/, '').localeCompare(b.replace(/ #\d+$/, '')) || n(a) - n(b);
  });
  const at = (arr, q) => (arr.length ? arr[Math.min(arr.length - 1, Math.floor(q * arr.length))] : NaN);
  const rows = keys.map((k) => {
    const o = tables.openai?.[k];
    return [
      k,
      ...PROVIDERS.map((prov) => (tables[prov]?.[k] ? `${int(tables[prov][k].turns)} / ${int(tables[prov][k].facts)}` : '0')),
      o ? `${int(at(o.ages, 0.5))} / ${int(at(o.ages, 0.9))}` : '—',
      o ? pct(share(o.sameTask, o.facts)) : '—',
    ];
  });
  const totals = PROVIDERS.map((prov) => `${PROVIDER_NAMES[prov]} ${int(tl.byProvider[prov]?.rereadTurns ?? 0)} (${pct(share(tl.byProvider[prov]?.rereadTurns ?? 0, turns))})`);
  return [
    `Why TraceLite defaults' turns need a re-read (turns with one: ${totals.join(', ')}). Per stage that hid the fact (\`compact #n\`: the n-th compaction of the session was in force), turns / hidden facts per provider; on the OpenAI replay, turns since the output that showed the fact (median / p90) and the share of hidden facts from the current task's own outputs (the rest come from earlier tasks). A turn counts once per stage.`,
    '',
    table(['hidden by', ...PROVIDERS.map((prov) => `${PROVIDER_NAMES[prov]} turns / facts`), 'turns since shown (median / p90, OpenAI)', 'current task (OpenAI)'], rows),
    '',
  ];
}

/** Whether context editing at its documented defaults changed any request of the run (a sentence). */
function defaultEditing(result) {
  const at = (id) => result.policies.find((p) => p.id === id)?.byProvider.openai.inputTokens;
  const edited = at('ctxedit-default');
  if (edited === undefined || at('full') === undefined) return '';
  return edited === at('full')
    ? 'At the documented default trigger (100k input tokens) it never fired in this run (SWE-bench prompts stay under it), so that row is full history. '
    : `At the documented default trigger (100k input tokens) it fired on the longest trajectories (${pct(1 - share(edited, at('full')))} fewer tokens than full history). `;
}

/** The whole report. `extra`: { speed, criterion, chartFile, command, commit }. */
/** The wasm's size and what its code is made of (`bench/size.mjs`). */
export function sizeSection(w) {
  const out = [`wasm: **${int(w.rawBytes)} bytes raw, ${int(w.gzipBytes)} bytes gzip** (\`pkg/wasm/tracelite_bg.wasm\`, gzip -9; CI ceiling ${int(w.ceilingGzipBytes)}).`, ''];
  if (!w.code) return out;
  const kib = (b) => `${(b / 1024).toFixed(1)} KiB`;
  const share = (b) => `${((100 * b) / w.code.codeBytes).toFixed(1)}%`;
  const data = w.sections.find((x) => x.name === 'data')?.bytes ?? 0;
  out.push(`Code ${kib(w.code.codeBytes)} and data ${kib(data)} (strings, tables, the 35 KiB font subset) of ${kib(w.rawBytes)}. Code by crate and by TraceLite module, from the function names of the same module built with its name section kept (\`node bench/size.mjs\`):`);
  out.push('');
  const crates = w.code.byCrate.slice(0, 12);
  const modules = w.code.byModule.slice(0, 12);
  const rows = [];
  for (let i = 0; i < Math.max(crates.length, modules.length); i++) {
    const c = crates[i];
    const m = modules[i];
    rows.push([c?.name ?? '', c ? kib(c.bytes) : '', c ? share(c.bytes) : '', m?.name ?? '', m ? kib(m.bytes) : '', m ? share(m.bytes) : '']);
  }
  out.push(table(['crate', 'code', 'share', 'TraceLite module', 'code', 'share'], rows));
  out.push('');
  return out;
}

/** `−11.9 / −13.1 / −10.1`: a figure per provider, as % vs full history. */
function perProviderVsFull(p, full, value) {
  return PROVIDERS.map((prov) => {
    const f = value(full.byProvider[prov]);
    const v = value(p.byProvider[prov]);
    return Number.isFinite(v) && f > 0 ? signed(v / f - 1).replace('%', '') : 'n/a';
  }).join(' / ');
}

/**
 * The effective-$ section (EVALUATION.md §3), Markdown lines: per policy the
 * share of steps needing a recovery turn, $ and effective $ vs full history
 * with caching per provider, and $ per trajectory. Empty when no policy's
 * grounding was measured.
 */
function recoveryTokensCell(r) {
  return r?.rereadSteps > 0 ? int(r.tokens / r.rereadSteps) : '—';
}

export function effectiveSection(result) {
  const full = result.policies.find((p) => p.id === 'full');
  const measured = result.policies.filter((p) => PROVIDERS.every((prov) => p.byProvider[prov].recovery?.measured));
  if (!full || measured.length === 0) return [];
  const G = result.meta?.grounding;
  const out = ['## Effective $ (recovery turns priced)', ''];
  out.push('Hiding a fact the agent acts on next is not free: it spends a turn reading it back (`read_spill`, `grep_spill`) or running the command again. ' +
    'Every step whose tool call uses a fact (grounding, below) that its request shows neither as text nor as an image tesseract reads (class POINTER or GONE) costs one more request, priced like that step\'s request with caching (input and output). ' +
    '**Effective $** = $ + those recovery turns. A per-provider policy (TraceLite defaults) is measured on each provider\'s own replay; the others replay once, so their recovery steps are the same for every provider.');
  if (G && /off|not installed/.test(String(G.ocr))) out.push(`OCR: ${G.ocr}; facts shown only in an image count as shown, so effective $ is a lower bound here.`);
  out.push('');
  const rows = measured.map((p) => {
    const rr = PROVIDERS.map((prov) => pct(rereadShare(p.byProvider[prov])));
    const rereads = p.perProvider ? rr.join(' / ') : rr[0];
    return [
      p.label,
      rereads,
      p.id === 'full' ? '—' : perProviderVsFull(p, full, costPerTrace),
      p.id === 'full' ? '—' : perProviderVsFull(p, full, effectiveCostPerTrace),
      PROVIDERS.map((prov) => usd(effectiveCostPerTrace(p.byProvider[prov]))).join(' / '),
      recoveryTokensCell(p.byProvider.openai.recovery),
    ];
  });
  out.push(table(['policy', 'steps needing a re-read', '$ vs full, % (A / O / G)', 'effective $ vs full, % (A / O / G)', 'effective $/traj (A / O / G)', 'tokens read back per recovery (OpenAI)'], rows));
  out.push('');
  for (const p of measured.filter((x) => x.perProvider)) {
    const g = PROVIDERS.map((prov) => pct(share(p.byProvider[prov].recovery.shown, p.byProvider[prov].recovery.facts)));
    out.push(`${p.label}, grounding recall (text+image) on each provider's own replay: ${g.join(' / ')} (A / O / G; their snapshots and so what tesseract reads differ).`);
    out.push('');
  }
  out.push('A / O / G: Anthropic, OpenAI, Gemini. Re-read shares of a per-provider policy are per provider in that order. ' +
    '**Tokens read back per recovery**: the mean, over the steps needing one, of what getting the hidden facts back reads: a `grep_spill` call and its reply for each fact a pointer reaches (run on the store, as the model would), the source observation again for a fact nothing reaches (a re-run of the command, once per observation).');
  out.push('');
  return out;
}

/**
 * The headroom at arrival (issue 54): per provider, effective $ of full
 * history, TraceLite defaults and the at-arrival oracle, and the share of
 * the gap from full history to the oracle that TraceLite defaults close.
 * Null without the three in the run.
 */
export function headroom(result) {
  const by = (id) => result.policies.find((p) => p.id === id);
  const [full, tl, oracle] = ['full', 'tracelite', 'oracle-arrival'].map(by);
  if (!full || !tl || !oracle) return null;
  const value = (p, prov) => {
    const e = effectiveCostPerTrace(p.byProvider[prov]);
    return Number.isFinite(e) ? e : costPerTrace(p.byProvider[prov]);
  };
  return Object.fromEntries(PROVIDERS.map((prov) => {
    const [f, t, o] = [full, tl, oracle].map((p) => value(p, prov));
    return [prov, { full: f, tracelite: t, oracle: o, closed: f > o ? (f - t) / (f - o) : NaN, gap: t - o }];
  }));
}

/** The headroom section (Markdown lines). */
export function headroomSection(result) {
  const h = headroom(result);
  if (!h) return [];
  const oracle = result.policies.find((p) => p.id === 'oracle-arrival');
  const out = ['## Headroom at arrival (the oracle bound)', ''];
  out.push('**Oracle at arrival** (`bench/oracle.mjs`) knows the future: when an output arrives it keeps only the lines holding a fact a later step acts on (the grounding facts), one line either side, the output\'s first and last two lines and the lines of a multi-line `old_str` a later edit quotes, and folds every other run into a marker. It never rewrites history, so the prompt cache holds, and grounding is 100% by construction ' +
    `(measured here: ${pct(groundingShare(oracle.grounding))}). It is a bound, not a policy: it is left out of the dominance table. ` +
    '**Closed**: the share of the gap from full history to the oracle that TraceLite defaults close; **gap**: what is left per trajectory (effective $, recovery turns priced).');
  out.push('');
  out.push(table(['provider', 'full history', 'TraceLite defaults', 'oracle at arrival', 'closed', 'gap left $/traj'],
    PROVIDERS.map((prov) => [PROVIDER_NAMES[prov], usd(h[prov].full), usd(h[prov].tracelite), usd(h[prov].oracle), pct(h[prov].closed), usd(h[prov].gap)])));
  out.push('');
  return out;
}

export function reportMarkdown(result, extra = {}) {
  const m = result.meta;
  const out = [];
  out.push('# TraceLite evaluation report');
  out.push('');
  out.push(
    `Generated ${m.generated} from commit \`${extra.commit ?? '?'}\` by \`${extra.command ?? 'make bench'}\`` +
      `${m.quick ? ' (**quick mode**: a subset of traces)' : ''}. ` +
      `${m.traces} trajectories, ${int(m.steps)} requests (one per step), replayed as the agent sent them. ` +
      `Harness time ${m.harnessSeconds.toFixed(0)} s.`,
  );
  out.push('');
  out.push('Tokens are exact o200k_base counts (js-tiktoken) of every message (+4 per message, +3 per tool call) summed over all requests; images use each provider\'s formula (`bench/tokens.mjs`, the same as `src/tokens.rs`). ' +
    'Where a column shows one token count for policies that emit images, it is the OpenAI run. ' +
    '$ per trajectory is input (with prompt caching, below) plus output at the prices of `bench/prices.json`. ' +
    `Each provider's requests name the model it is priced for (\`model\`: ${Object.entries(BENCH_MODELS).map(([p, m]) => `${p} \`${m}\``).join(', ')}; \`BENCH_MODELS\` of \`bench/tokens.mjs\`), ` +
    'vision models, so that `optical.enabled: \'auto\'` renders snapshots as runs before the capability table did and the figures stay comparable.');
  out.push('');
  out.push('## Headline');
  out.push('');
  out.push(headlineTable(result));
  out.push('');
  out.push(...dominanceSection(result));
  out.push(...effectiveSection(result));
  out.push(...headroomSection(result));
  if (result.pending.length) {
    out.push('Pending policies (not measured in this run):');
    for (const p of result.pending) out.push(`* ${p.label}: ${p.reason}.`);
    out.push('');
  }
  if (result.errors?.length) {
    out.push(`**${result.errors.length} replays failed** (see \`errors\` in the JSON): ` +
      [...new Set(result.errors.map((e) => `${e.policy}: ${e.error}`))].slice(0, 5).join('; '));
    out.push('');
  }
  if (extra.chartFile) {
    out.push(`![cumulative tokens](${extra.chartFile})`);
    out.push('');
    out.push(`Cumulative input tokens per policy over the median trajectory (${result.chart?.trace ?? '?'}, by full-history tokens).`);
    out.push('');
  }

  out.push('## Tokens per source');
  out.push('');
  const sources = [...new Set(result.traces.map((t) => t.source))];
  const full = result.policies.find((p) => p.id === 'full');
  out.push(
    table(
      ['policy', ...sources.flatMap((s) => [`${s} tokens`, 'reduction'])],
      result.policies.map((p) => [
        p.label,
        ...sources.flatMap((s) => {
          const b = p.byProvider.openai.bySource[s];
          const f = full?.byProvider.openai.bySource[s];
          return [b ? int(b.inputTokens) : '—', b && f ? pct(1 - share(b.inputTokens, f.inputTokens)) : '—'];
        }),
      ]),
    ),
  );
  out.push('');
  out.push(sources.map((s) => `\`${s}\`: ${result.traces.filter((t) => t.source === s).length} trajectories`).join(', ') + '.');
  out.push('');

  out.push('## Cost and prompt caching');
  out.push('');
  out.push('Cached input is modelled per message: a message counts as cached when it and every message before it are byte-identical to the cached prefix. ' +
    'OpenAI and Gemini cache the prefix shared with the previous request automatically (minimum 1024 / 2048 tokens; OpenAI in 128-token steps; no write charge). ' +
    'Anthropic caches at explicit breakpoints, assumed after the system prompt and at the end of every request, plus, for TraceLite policies, the `cache_control` TraceLite puts at the end of the stable prefix (`report.stableMessages`, option `cacheBreakpoint`): a request reads the longest prefix an earlier request wrote and writes the rest at the cache-write price. ' +
    'Prices above 200k prompt tokens use the long-context rows.');
  out.push('');
  const rows = [];
  for (const p of result.policies) {
    const cells = [p.label];
    for (const prov of PROVIDERS) {
      const b = p.byProvider[prov];
      cells.push(int(b.inputTokens), pct(share(b.cachedTokens, b.inputTokens)), usd(b.inputCost / Math.max(1, b.traces)));
    }
    rows.push(cells);
  }
  out.push(table(['policy', ...PROVIDERS.flatMap((p) => [`${p} tokens`, 'cached', 'input $/traj'])], rows));
  out.push('');
  out.push(table(['provider', 'model', 'input', 'cached input', 'cache write', 'output', 'price date', 'source'],
    result.prices.map((r) => [r.provider, r.model, `$${r.input}`, `$${r.cachedInput}`, r.cacheWrite ? `$${r.cacheWrite}` : '—', `$${r.output}`, r.date, r.source])));
  out.push('');
  out.push('Prices are USD per 1M tokens (`bench/prices.json`).');
  out.push('');

  out.push('## Fidelity');
  out.push('');
  out.push('* **Tool calls verbatim**: every tool call of the original request present in the output with the same id, name and arguments, in order (checked at every step); "as text" counts the others whose arguments still appear in the text (e.g. quoted by a summary).');
  out.push('* **Critical lines**: the last line of every Python traceback, other `...Error:` lines, failing test names (pytest `FAILED a::b`, unittest `FAIL: test (mod.Class)`), and files the agent edited; checked at every later step for presence as text anywhere in the request.');
  out.push('* **Recoverable**: for every observation a policy changed, the share of its removed bytes (lines no longer shown) found in the blobs its `spill://` pointers name (the pointers in its own message, else every pointer of the request; pointers inside blobs are followed), read back from the SpillStore. Baselines keep nothing, so 0%.');
  out.push('');
  const kinds = ['error', 'test', 'path'];
  out.push(
    table(
      ['policy', 'tool calls kept', 'critical (all)', ...kinds.map((k) => `${k} lines`), 'observations changed', 'fully recoverable', 'removed bytes', 'recovered'],
      result.policies.map((p) => {
        const f = p.fidelity;
        return [
          p.label,
          `${int(f.toolCalls.kept)} / ${int(f.toolCalls.total)}${f.toolCalls.inText ? ` (+${int(f.toolCalls.inText)} as text)` : ''}`,
          pct(share(f.critical.present, f.critical.checked)),
          ...kinds.map((k) => pct(share(f.critical.byKind[k]?.present ?? 0, f.critical.byKind[k]?.checked ?? 0))),
          int(f.recover.observations),
          pct(share(f.recover.full, f.recover.observations)),
          int(f.recover.removedBytes),
          pct(share(f.recover.recoveredBytes, f.recover.removedBytes)),
        ];
      }),
    ),
  );
  out.push('');
  const snaps = result.snapshots;
  if (snaps?.unavailable) {
    out.push(`Snapshot legibility: not measured (${snaps.unavailable}).`);
  } else if (snaps && Object.keys(snaps).length) {
    out.push('Snapshot legibility (tesseract 5, `--psm 6`; tesseract takes seconds per image, so one snapshot per policy in each of a few sampled trajectories: the snapshot of the last request that shows the most critical items missing from the text, else the middle one). ' +
      'A line is legible when its normalized text (case, whitespace, `_`, quotes, 0/o, 1/l folded) is a substring of the OCR text or ≥ 90% of its 4-grams are:');
    out.push('');
    out.push(table(['policy', 'snapshots', 'images', 'sampled lines legible', 'critical items missing from text', 'of those legible in the snapshot'],
      Object.entries(snaps).map(([id, v]) => [id, v.snapshots, v.images, `${v.linesLegible} / ${v.lines} (${pct(share(v.linesLegible, v.lines))})`, v.criticalMissing, `${v.criticalLegible} (${pct(share(v.criticalLegible, v.criticalMissing))})`])));
  } else {
    out.push('Snapshot legibility: no policy emitted images in this run, so nothing was OCR\'d.');
  }
  out.push('');
  out.push(legibilitySection(result.legibility, { result }));

  out.push(...groundingSection(result));
  out.push(...longSection(result));

  out.push('## Speed and size');
  out.push('');
  const s = extra.speed;
  if (s) {
    out.push(...sizeSection(s.wasm));
    if (s.latency) {
      const L = s.latency;
      out.push(`Compress latency in wasm under Node (${L.node}), one call per step, TraceLite defaults, separate process (\`bench/latency.mjs\`, ${L.traces} trajectories, ${int(L.steps)} calls):`);
      out.push('');
      out.push(table(['configuration', 'p50 ms/step', 'p95 ms/step', 'max ms', 'p50 ms/observation', 'p95 ms/observation'],
        L.configs.map((c) => [c.label, ms(c.ms.p50), ms(c.ms.p95), ms(c.ms.max), ms(c.perObservationMs.p50), ms(c.perObservationMs.p95)])));
      out.push('');
      out.push(`Peak memory: wasm linear memory ${int(L.wasmMemoryBytes)} bytes; process max RSS ${L.maxRssKb ? `${int(L.maxRssKb)} KB (\`/usr/bin/time -v\`)` : `${int(L.rssBytes / 1024)} KB (process.memoryUsage)`}.`);
      out.push('');
    }
  }
  const c = extra.criterion;
  if (c?.length) {
    out.push('Native (Criterion, `cargo bench`; per-iteration times of the samples):');
    out.push('');
    out.push(table(['benchmark', 'p50', 'p95', 'mean'], c.map((b) => [b.id, fmtNs(b.p50), fmtNs(b.p95), fmtNs(b.mean)])));
    out.push('');
  } else if (extra.criterionNote) {
    out.push(`Native benchmarks: ${extra.criterionNote}`);
    out.push('');
  }
  out.push('In-harness wasm latency per TraceLite policy (same process as the tokenizer, so noisier):');
  out.push('');
  out.push(table(['policy', 'p50 ms/step', 'p95 ms/step', 'p50 ms/observation'],
    result.policies.filter((p) => p.latency).map((p) => [p.label, ms(p.latency.ms.p50), ms(p.latency.ms.p95), ms(p.latency.perObservationMs.p50)])));
  out.push('');
  out.push(...bytesSection(result));
  out.push('## Method notes');
  out.push('');
  out.push('* Replay: the request before step t holds the system prompt, the task and steps 0..t−1 (`trajectoryToRequest`, OpenAI chat format). TraceLite policies call `compress` on it with one SpillStore per trajectory; baselines transform its messages in `bench/policies.mjs`.');
  out.push('* Head truncation keeps the first 10,000 chars of a tool output plus a one-line note; head+tail keeps 5,000 + 5,000 chars with mini-swe-agent\'s elision markers; masking replaces all but the last N tool outputs with `Old environment output: (K lines omitted)` (SWE-agent).');
  out.push('* Masking moves its boundary every step, so the cached prefix ends at the newest masked observation and everything after it is re-sent uncached (Anthropic: re-written at 1.25× input). That is why masking saves tokens but can cost more than full history once caching is priced.');
  out.push('* Cache-friendly masking (last 5, blocks of 10) masks the oldest ⌊(n − 5) / 10⌋ × 10 of the n observations with the same placeholder: 5 to 14 stay visible and the masked prefix changes once every 10 steps.');
  out.push(`* Anthropic context editing (\`clear_tool_uses_20250919\`) is modelled client-side: when the request the agent sends exceeds the trigger, every tool result older than the newest 3 is replaced by the placeholder \`${CLEARED_PLACEHOLDER}\` (the API does not publish its own text; this is Claude Code's), but only if that removes at least \`clear_at_least\` tokens; cleared results stay cleared, so the edited prefix is cached between firings and each firing is a cache write from the first newly cleared result on. Tool inputs stay. ${defaultEditing(result)}The 30k row is Anthropic's documented example configuration (trigger 30k, keep 3, clear_at_least 5k).`);
  out.push('* Gemini CLI masking ports `ToolOutputMaskingService` (gemini-cli `packages/core/src/context/toolOutputMaskingService.ts`): before each request, outside the pending tool result and the latest turn, the newest 50,000 estimated tokens of unmasked tool output are protected; once the older ones reach 30,000 they are all masked to a `<tool_output_masked>` snippet (10 head + 10 tail lines of a shell output, 250 + 250 chars of other tools\' JSON response, and the path of the file holding the output); masked outputs stay masked. Tokens are the CLI\'s estimate, characters / 4. Its file path is not a `spill://` pointer, so what it hides counts as GONE.');
  out.push('* The traces were already clipped at run time by their agents (mini-swe-agent head+tail at 10k chars, OpenHands at 30k), so truncation baselines change little on them.');
  out.push(`* Tokenizer work: ${int(m.tokenizerStats.distinctTexts)} distinct texts, ${int(m.tokenizerStats.chars)} chars, ${m.tokenizerStats.seconds.toFixed(0)} s. ` +
    'Texts are split with o200k\'s pre-tokenizer regex and each distinct piece is encoded once (exact); pre-tokenizer pieces over 64 chars (runs of dashes or spaces; js-tiktoken is quadratic on them) are counted in 64-char chunks, ±1 token per chunk.');
  out.push('* Text is counted with o200k_base for every provider; Anthropic and Gemini tokenizers differ by a few percent.');
  out.push('* Only "TraceLite defaults" is replayed once per provider (its optical stage sizes and accepts images for the target provider). The other policies are replayed once with OpenAI settings and any images they emit are priced with each provider\'s formula.');
  out.push(`* "Every observation as an image" ${m.renderer ? `renders every non-empty tool output with the package's \`${m.renderer}\` (default optical settings, OpenAI sizing) into a user message right after a one-line stub (Chat Completions accepts images only in user messages); outputs with nothing to draw stay text` : 'runs through the optical stage with every other stage off, no recent window, batch 1, no image cap and a ratio of 10⁻⁶ (any image accepted); observations the renderer cannot draw stay text'}.`);
  out.push('* Replays run in worker processes; compress latency is measured separately (`bench/latency.mjs`) and natively (Criterion). The machine is shared, so absolute times vary between runs.');
  out.push('');
  return out.join('\n');
}

/** The grounding recall section (EVALUATION.md §1). */
/** Request bytes in and out of the TraceLite policies, and bytes per image token of their snapshots. */
export function bytesSection(result) {
  const rows = [];
  for (const p of result.policies.filter((x) => x.kind === 'tracelite')) {
    for (const prov of PROVIDERS) {
      const b = p.byProvider[prov]?.bytes;
      if (!b) continue;
      const perToken = (x) => (b.imageTokens > 0 ? (x / b.imageTokens).toFixed(1) : 'n/a');
      rows.push([p.label, PROVIDER_NAMES[prov], int(b.requestsIn), int(b.requestsOut), b.requestsIn > 0 ? `${(b.requestsOut / b.requestsIn).toFixed(2)}×` : 'n/a',
        int(b.images), int(b.png), int(b.base64), int(b.imageTokens), perToken(b.png), perToken(b.base64)]);
    }
  }
  if (rows.length === 0) return [];
  return ['## Bytes', '',
    'Request JSON bytes as the agent sent them (in) and as TraceLite emits them (out), summed over all requests; ' +
    'snapshot images counted once each (PNG bytes, their base64 as sent, and the image tokens of the provider\'s formula). ' +
    'Bytes matter for edge bandwidth; the providers bill tokens.', '',
    table(['policy', 'provider', 'request bytes in', 'request bytes out', 'out / in', 'images', 'PNG bytes', 'base64 bytes', 'image tokens', 'PNG bytes / image token', 'base64 bytes / image token'], rows), ''];
}

export function groundingSection(result) {
  const out = ['## Grounding recall', ''];
  const G = result.meta?.grounding;
  out.push('Does the prompt still show what the agent used next? For each executed tool call (not `format_error` turns, which ran nothing, nor `message` turns), ' +
    'the facts of its arguments (`bench/grounding.mjs`): paths (the longest `/`-suffix of a path token seen in an earlier observation), identifiers (`[A-Za-z_][A-Za-z0-9_]{3,}`, minus a stoplist of common English words, shell commands, Python keywords and builtins) and integers of ≥ 2 digits, ' +
    'kept when an earlier observation shows them (at identifier boundaries) and neither the system prompt, the task, a user turn nor the arguments, thoughts or assistant text of an earlier step do. ' +
    'Each is classified in the request the policy sent before that call: **TEXT** (in its text, markers and `spill://` URIs removed), **IMAGE** (else tesseract, 2× upscale, `--psm 6`, reads it in an image shown for one of its source observations; case, `_`, 0/o and 1/l folded, at word boundaries), ' +
    '**POINTER** (else a `spill://` pointer of the request reaches, through pointers inside blobs, a blob holding it), **GONE**. Age: steps between the call and the newest observation showing the fact. ' +
    'Measured on the OpenAI replay of each policy.');
  out.push('');
  const rows = result.policies.filter((p) => p.grounding).map((p) => {
    const g = p.grounding;
    const old = olderThan3(g);
    return [
      p.label,
      int(g.facts),
      pct(share(g.text, g.facts)),
      pct(groundingShare(g)),
      pct(share(g.pointer, g.facts)),
      pct(share(g.gone, g.facts)),
      pct(share(old.text + old.image, old.facts)),
      `${g.oldStr.visible} / ${g.oldStr.checked}`,
      pct(share(g.taskVerbatim.verbatim, g.taskVerbatim.requests)),
    ];
  });
  out.push(table(['policy', 'facts', 'TEXT', 'TEXT+IMAGE', 'POINTER', 'GONE', '> 3 steps back TEXT+IMAGE', 'multi-line old_str visible', 'task verbatim'], rows));
  out.push('');
  const unread = result.policies.reduce((n, p) => n + (p.grounding?.unread ?? 0), 0);
  if (unread > 0) {
    out.push(`**${int(unread)} facts were shown only in images that were not OCR'd** (${G?.ocr ?? 'OCR off'}); they count in neither TEXT+IMAGE nor GONE above.`);
    out.push('');
  }
  out.push('TEXT+IMAGE by age of the source observation (facts in parentheses):');
  out.push('');
  const buckets = Object.keys(result.policies.find((p) => p.grounding)?.grounding.byAge ?? {});
  out.push(table(['policy', ...buckets.map((b) => `${b} steps`)], result.policies.filter((p) => p.grounding).map((p) => [
    p.label,
    ...buckets.map((b) => {
      const v = p.grounding.byAge[b];
      return `${pct(share(v.text + v.image, v.facts))} (${int(v.facts)})`;
    }),
  ])));
  out.push('');
  const stages = [...new Set(result.policies.flatMap((p) => Object.keys(p.grounding?.hiddenBy ?? {})))];
  const tl = result.policies.filter((p) => p.kind === 'tracelite' && p.grounding && p.grounding.pointer + p.grounding.gone > 0);
  if (tl.length > 0) {
    const known = HIDERS.filter((s) => stages.includes(s));
    out.push('Hidden facts (POINTER + GONE) of TraceLite policies by the stage that hid them: `compact` when the source observation\'s tool message left the request; else the last of spill, dedup, phase whose change touched it (`report.changes`); else `optical` when it is shown as an image that tesseract did not read. Baselines hide everything they hide themselves.');
    out.push('');
    out.push(table(['policy', 'hidden', ...known], tl.map((p) => {
      const g = p.grounding;
      const hidden = g.pointer + g.gone;
      return [p.label, int(hidden), ...known.map((s) => (g.hiddenBy[s] ? `${int(g.hiddenBy[s])} (${pct(share(g.hiddenBy[s], hidden))})` : '—'))];
    })));
    out.push('');
    out.push('Multi-line `old_str` not visible as text, by the stage that hid the latest observation showing it (same attribution):');
    out.push('');
    const oldStrStages = new Set(tl.flatMap((p) => Object.keys(p.grounding.oldStr.hiddenBy ?? {})));
    const hiders = HIDERS.filter((s) => oldStrStages.has(s));
    out.push(table(['policy', 'not visible', ...hiders], tl.map((p) => {
      const o = p.grounding.oldStr;
      const by = o.hiddenBy ?? {};
      return [p.label, int(o.checked - o.visible), ...hiders.map((s) => (by[s] ? int(by[s]) : '—'))];
    })));
    out.push('');
  }
  out.push('* **Multi-line old_str**: `str_replace` edits whose `old_str` spans lines and appears in an earlier observation (`cat -n` line numbers ignored); visible when the request before the edit shows it as text, the same way.');
  out.push('* **Task verbatim**: requests in which every user-authored message of the original request (the task and any later user turn) is a substring of some message of the policy\'s request.');
  if (G) {
    const o = G.ocrStats;
    out.push(`* Cost: ${G.seconds.toFixed(0)} s of replay time measuring grounding (worker processes added up), of which tesseract ${o.seconds.toFixed(0)} s for ${int(o.images)} images read (${int(o.diskHits)} read from \`bench/out/ocr-cache/\`, ${int(o.memoryHits)} repeats in memory${o.failed ? `, ${o.failed} failed` : ''}); OCR: ${G.ocr}.`);
  }
  out.push('');
  return out;
}

function fmtNs(ns) {
  if (ns >= 1e6) return `${(ns / 1e6).toFixed(2)} ms`;
  if (ns >= 1e3) return `${(ns / 1e3).toFixed(1)} µs`;
  return `${ns.toFixed(0)} ns`;
}
