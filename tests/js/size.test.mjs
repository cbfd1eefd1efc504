// The wasm's size: under the ceiling bench/size.mjs sets (issue 19), and the
// breakdown `make bench` reports adds up to the module's code.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { GZIP_CEILING, breakdown, owner, sections, wasmReport } from '../../bench/size.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

test('the shipped wasm is under its gzip ceiling and carries no name or producers section', () => {
  const r = wasmReport();
  assert.ok(r.gzipBytes <= GZIP_CEILING, `pkg/wasm/tracelite_bg.wasm is ${r.gzipBytes} bytes gzip -9, over the ceiling of ${GZIP_CEILING} (bench/size.mjs)`);
  const names = r.sections.map((s) => s.name);
  assert.ok(names.includes('code') && names.includes('data'), names.join(', '));
  assert.ok(!names.includes('custom "name"') && !names.includes('custom "producers"'), names.join(', '));
  assert.equal(r.sections.reduce((a, s) => a + s.bytes, 0) <= r.rawBytes, true);
});

test('the breakdown attributes every code byte and names TraceLite modules', (t) => {
  const linked = join(ROOT, 'target/wasm32-unknown-unknown/release/tracelite.wasm');
  if (!existsSync(linked) || !existsSync(join(ROOT, '.tools/bin/wasm-bindgen'))) {
    t.skip('needs `make pkg` (the linked module and the wasm-bindgen CLI)');
    return;
  }
  const r = wasmReport();
  const code = r.sections.find((s) => s.name === 'code').bytes;
  const sum = (xs) => xs.reduce((a, x) => a + x.bytes, 0);
  assert.equal(sum(r.code.byCrate), r.code.codeBytes);
  // The names come from the same module as shipped, names kept: same code, within the section header.
  assert.ok(Math.abs(r.code.codeBytes - code) < 16, `${r.code.codeBytes} vs ${code}`);
  assert.ok(r.code.namedBytes / r.code.codeBytes > 0.99);
  const crates = r.code.byCrate.map((c) => c.name);
  for (const c of ['tracelite', 'core', 'serde_json']) assert.ok(crates.includes(c), crates.join(', '));
  const modules = r.code.byModule.map((m) => m.name);
  for (const m of ['tracelite::formats', 'tracelite::optical', 'tracelite::compact']) assert.ok(modules.includes(m), modules.join(', '));
  assert.ok(sum(r.code.byModule) <= r.code.byCrate.find((c) => c.name === 'tracelite').bytes);
});

test('function names are attributed to their crate and TraceLite module', () => {
  assert.deepEqual(owner('tracelite::formats::convert::convert_conversation::h68d5178a3aff26bf'), { crate: 'tracelite', module: 'tracelite::formats' });
  assert.deepEqual(owner('<tracelite::dedup::Dedup as tracelite::stage::Stage>::apply::h5'), { crate: 'tracelite', module: 'tracelite::dedup' });
  assert.deepEqual(owner('<&mut serde_json::de::Deserializer<R> as serde_core::de::Deserializer>::deserialize_any'), { crate: 'serde_json', module: null });
  assert.deepEqual(owner('core[c5930c85a12de822]::num::flt2dec::strategy::dragon::format_shortest'), { crate: 'core', module: null });
  assert.deepEqual(owner('<T as alloc::string::ToString>::to_string'), { crate: '(other)', module: null });
  assert.deepEqual(owner('__wbindgen_malloc'), { crate: '(other)', module: null });
});

test('a module without a name section is read and refused when it is not wasm', () => {
  const wasm = readFileSync(join(ROOT, 'pkg/wasm/tracelite_bg.wasm'));
  const b = breakdown(wasm);
  assert.equal(b.namedBytes, 0);
  assert.equal(b.byCrate[0].name, '(unnamed)');
  assert.throws(() => sections(Buffer.from('not wasm at all')), /not a wasm module/);
});
