// Only the long sessions of `make bench` (issue 52's fast loop): TraceLite
// defaults, full history and any `--variant`, per session and provider, with
// the re-read table. Uses the worktree's pkg/ (`make pkg` first).
//
//   node bench/long-only.mjs [--no-ocr] [--policies tracelite,mask5]
//        [--variant NAME=JSON]... [--json FILE] [--traces DIR]
import { existsSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defaultTracesDir, traceFiles } from './harness.mjs';
import { runLongParallel } from './long.mjs';
import { PROVIDERS } from './tokens.mjs';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');

function parseArgs(argv) {
  const o = { traces: defaultTracesDir(ROOT), ocr: true, policies: ['tracelite'], variants: {}, json: null };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const next = () => argv[++i];
    if (a === '--no-ocr') o.ocr = false;
    else if (a === '--traces') o.traces = next();
    else if (a === '--policies') o.policies = next().split(',');
    else if (a === '--json') o.json = next();
    else if (a === '--variant') {
      const v = next();
      const eq = v.indexOf('=');
      if (eq < 1) throw new Error(`--variant needs NAME=JSON, got ${v}`);
      o.variants[v.slice(0, eq)] = JSON.parse(v.slice(eq + 1));
    } else throw new Error(`unknown argument ${a}`);
  }
  return o;
}

const money = (x) => `$${x.toFixed(2)}`;
const ratio = (x) => (x == null ? '—' : `×${x.toFixed(2)}`);

/** Lines for one session: a row per policy and provider, then each TraceLite policy's re-read table. */
export function sessionLines(session) {
  const out = [`## ${session.source}: ${session.steps} turns, ${session.trajectories.length} trajectories`, ''];
  out.push('| policy | provider | $ total | effective $ | $/turn last÷first | effective last÷first | re-read turns | max request |');
  out.push('|---|---|---:|---:|---:|---:|---:|---:|');
  for (const p of session.policies) {
    for (const provider of PROVIDERS) {
      const f = p.byProvider[provider];
      if (!f) continue;
      const pct = ((100 * f.rereadTurns) / f.turns).toFixed(1);
      out.push(`| ${p.id} | ${provider} | ${money(f.totalCost)} | ${money(f.effectiveTotalCost)} | ${ratio(f.lastOverFirst)} | ${ratio(f.effectiveLastOverFirst)} | ${f.rereadTurns} (${pct}%) | ${f.maxRequestTokens} |`);
    }
  }
  for (const p of session.policies.filter((q) => q.kind === 'tracelite')) {
    const keys = [...new Set(PROVIDERS.flatMap((v) => Object.keys(p.byProvider[v]?.rereads ?? {})))].sort();
    if (keys.length === 0) continue;
    out.push('', `${p.id}: hidden by | ${PROVIDERS.join(' | ')} (turns / facts) | median age, same task (OpenAI)`);
    for (const k of keys) {
      const cells = PROVIDERS.map((v) => {
        const r = p.byProvider[v]?.rereads?.[k];
        return r ? `${r.turns} / ${r.facts}` : '0';
      });
      const o = p.byProvider.openai?.rereads?.[k];
      const age = o ? `${o.ages[Math.floor(o.ages.length / 2)]}, ${((100 * o.sameTask) / o.facts).toFixed(0)}%` : '—';
      out.push(`  ${k} | ${cells.join(' | ')} | ${age}`);
    }
  }
  return out;
}

async function main() {
  const o = parseArgs(process.argv.slice(2));
  if (!existsSync(join(ROOT, 'pkg/entries/node.js'))) throw new Error('pkg/ is missing: run `make pkg` first');
  const files = statSync(o.traces).isDirectory() ? traceFiles(o.traces) : [o.traces];
  const long = await runLongParallel({ files, policies: o.policies, variants: o.variants, ocr: o.ocr, log: (m) => process.stderr.write(`${m}\n`) });
  for (const s of long.sessions) process.stdout.write(`${sessionLines(s).join('\n')}\n\n`);
  process.stdout.write(`OCR ${long.ocr}; ${long.seconds.toFixed(0)} s\n`);
  if (o.json) writeFileSync(o.json, JSON.stringify(long) + '\n');
}

main().catch((err) => {
  process.stderr.write(`${err?.stack ?? err}\n`);
  process.exit(1);
});
