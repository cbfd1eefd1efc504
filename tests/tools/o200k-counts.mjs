// Writes exact o200k_base token counts of every observation in ../shared/traces
// to tests/fixtures/o200k-counts.json (counts only, no trace text), the reference
// for the Rust estimator test. Usage: node tests/tools/o200k-counts.mjs [tracesDir]
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { getEncoding } from 'js-tiktoken';

const dir = process.argv[2] ?? new URL('../../../shared/traces', import.meta.url).pathname;
const enc = getEncoding('o200k_base');
const out = {};
for (const file of readdirSync(dir).filter((f) => f.endsWith('.json')).sort()) {
  const trace = JSON.parse(readFileSync(join(dir, file), 'utf8'));
  out[file] = trace.steps.map((s) => enc.encode(s.observation ?? '').length);
}
writeFileSync(new URL('../fixtures/o200k-counts.json', import.meta.url), JSON.stringify(out) + '\n');
console.log(`wrote counts for ${Object.keys(out).length} traces`);
