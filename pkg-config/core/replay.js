// Replays a trajectory as an agent loop would: compress the request sent before
// every step with one store per trajectory. Shared by the CLI and the playground,
// so both report the same figures for the same options.
import { compress, trajectoryToRequest } from './compress.js';
import { SpillStore } from './spill.js';
import { defaultOptions } from './config.js';
import { LimitError } from './errors.js';
import { percentile } from './stats.js';

/** The spill session a replay uses for a trajectory id (what `replay` uses by default). */
export function sessionName(id) {
  return (id || 'replay').replace(/[^A-Za-z0-9._-]/g, '-').replace(/\.\.+/g, '.').slice(0, 128);
}

function round(x, digits = 3) {
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}

/** Tokens each stage saved in one compress report (negative if it added some): `{ spill, dedup, phase, optical, compact }`. */
export function stageSavings(report) {
  const saved = {};
  for (const s of report?.stages ?? []) saved[s.stage] = s.tokensBefore - s.tokensAfter;
  return saved;
}

/**
 * Totals of replayed steps (`[{ baseline, compressed, bytes_before?, bytes_after?, ms, saved? }]`): the
 * figures `tracelite replay --json` prints. `reduction` is 1 − compressed/baseline,
 * rounded to 4 digits; `prefix_reuse` the mean shared-prefix fraction;
 * `saved_by_stage` the tokens each stage removed, summed over the steps (with
 * its share of the baseline), so a reduction can be traced to its stages.
 */
export function summarizeReplay(perStep, prefixFractions = []) {
  const baseline = perStep.reduce((s, p) => s + p.baseline, 0);
  const compressed = perStep.reduce((s, p) => s + p.compressed, 0);
  const bytes = (key) => perStep.reduce((s, p) => s + (p[key] ?? 0), 0);
  const ms = perStep.map((p) => p.ms).sort((a, b) => a - b);
  const savedByStage = {};
  for (const p of perStep) {
    for (const [stage, n] of Object.entries(p.saved ?? {})) {
      savedByStage[stage] ??= { tokens: 0, share: 0 };
      savedByStage[stage].tokens += n;
    }
  }
  for (const s of Object.values(savedByStage)) s.share = baseline === 0 ? 0 : round(s.tokens / baseline, 4);
  return {
    steps: perStep.length,
    baseline_tokens: baseline,
    compressed_tokens: compressed,
    baseline_bytes: bytes('bytes_before'),
    compressed_bytes: bytes('bytes_after'),
    reduction: baseline === 0 ? 0 : round(1 - compressed / baseline, 4),
    saved_by_stage: savedByStage,
    prefix_reuse: prefixFractions.length === 0
      ? 0
      : round(prefixFractions.reduce((s, x) => s + x, 0) / prefixFractions.length, 4),
    per_step: perStep,
    latency_ms: { p50: round(percentile(ms, 50)), p95: round(percentile(ms, 95)), max: round(ms.at(-1) ?? 0) },
  };
}

/**
 * Refuses a trajectory of `bytes` bytes (named `what`) over `limits.maxRequestBytes`
 * of `options` before it is parsed: the requests of its last steps hold about all
 * of it, so they would be refused one by one after the earlier steps ran.
 * `LIMIT_EXCEEDED` at `limits.maxRequestBytes`, the option to raise.
 */
export function refuseOversizedTrajectory(bytes, options = {}, what = 'trajectory') {
  const limit = options?.limits?.maxRequestBytes ?? defaultOptions().limits.maxRequestBytes;
  // A limit that is not a count is the core's INVALID_OPTION, reported by the first step.
  if (!Number.isSafeInteger(limit) || bytes <= limit) return;
  throw new LimitError(
    `limits.maxRequestBytes: ${what} is ${bytes} bytes, more than the limit (${limit}): the requests of its ` +
      `last steps would be about as large; raise limits.maxRequestBytes to replay it`,
    'LIMIT_EXCEEDED',
    'limits.maxRequestBytes',
  );
}

/**
 * Replays `trajectory` (object or JSON text in the `../shared/traces` schema):
 * for t = 0..n-1, `trajectoryToRequest(trajectory, t, 'openai-chat')` is
 * compressed with `options`, one `SpillStore` for the whole trajectory and the
 * session `options.session ?? sessionName(trajectory.id)`. The model is
 * `options.model`, else the one the trajectory names (its `model`): with
 * `optical.enabled: 'auto'` snapshots go only to a model that reads images.
 *
 * `host.store` (kept, not freed) replaces the private store; `host.countTokens`
 * is passed to `compress`; `host.onStep({ t, request, output, outputText, ms })`
 * sees every step. Returns `{ result, prefixFractions }`. A trajectory longer than
 * `limits.maxRequestBytes` (in UTF-16 units, so at least as many bytes) is refused
 * before it is parsed ({@link refuseOversizedTrajectory}).
 */
export function replayTrajectory(trajectory, options = {}, host = {}) {
  const text = typeof trajectory === 'string' ? trajectory : JSON.stringify(trajectory);
  refuseOversizedTrajectory(text.length, options);
  const parsed = typeof trajectory === 'string' ? JSON.parse(trajectory) : trajectory;
  const { countTokens, onStep } = host;
  const store = host.store ?? new SpillStore();
  const session = options.session ?? sessionName(parsed.id);
  const model = options.model ?? (typeof parsed.model === 'string' && parsed.model !== '' && parsed.model.length <= 256 ? parsed.model : undefined);
  const clock = globalThis.performance ?? Date;
  const perStep = [];
  const prefixFractions = [];
  let previous;
  try {
    for (let t = 0; t < parsed.steps.length; t++) {
      const request = trajectoryToRequest(text, t, 'openai-chat');
      const started = clock.now();
      const output = compress(request, { ...options, ...(model === undefined ? {} : { model }), session, store, countTokens, previous });
      const ms = clock.now() - started;
      const outputText = JSON.stringify(output.request);
      if (output.report.prefix && output.report.prefix.previousBytes > 0) {
        prefixFractions.push(output.report.prefix.sharedBytes / output.report.prefix.previousBytes);
      }
      previous = outputText;
      perStep.push({
        t,
        baseline: output.report.tokensBefore,
        compressed: output.report.tokensAfter,
        bytes_before: output.report.bytesBefore,
        bytes_after: output.report.bytesAfter,
        ms: round(ms),
        saved: stageSavings(output.report),
      });
      onStep?.({ t, request, output, outputText, ms });
    }
  } finally {
    if (!host.store) store.free();
  }
  return { result: summarizeReplay(perStep, prefixFractions), prefixFractions };
}
