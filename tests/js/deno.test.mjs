// Deno (the `deno` npm package's binary, a pinned dev dependency): a script
// importing the built package by name runs with read access to the package
// only, and with no permission at all: the `deno` export condition picks
// deno.js, whose wasm comes from a source-phase import (no fetch of a file:
// URL, no node:fs read, no env or net). Skipped, with the reason, when no deno
// binary is available.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pkgDir, root } from './support/hosts.mjs';

/**
 * The deno binary: $DENO, the one the `deno` npm package's postinstall linked, the
 * platform package's own (when install scripts did not run), or `deno` on PATH.
 */
function findDeno() {
  const platform = join(root, 'node_modules/@deno');
  const platformBins = existsSync(platform) ? readdirSync(platform).map((d) => join(platform, d, 'deno')) : [];
  for (const candidate of [process.env.DENO, join(root, 'node_modules/deno/deno'), ...platformBins, 'deno']) {
    if (!candidate) continue;
    const r = spawnSync(candidate, ['--version'], { encoding: 'utf8' });
    if (r.status === 0) return { bin: candidate, version: r.stdout.split('\n')[0] };
  }
  return undefined;
}

const deno = findDeno();
const skip = deno ? false : 'no deno binary (npm ci installs the pinned `deno` dev dependency; or set DENO=/path/to/deno)';

const SCRIPT = `
import { compress, SpillStore, handleToolCall, version } from 'tracelite';
import { createProxy } from 'tracelite/proxy';

const log = Array.from({ length: 3000 }, (_, i) => i === 2000 ? 'FAILED test_price - KeyError' : 'test_' + i + ' PASSED').join('\\n');
const store = new SpillStore();
const { request, report } = compress({
  model: 'm',
  messages: [
    { role: 'user', content: 'Fix it.' },
    { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'bash', arguments: '{}' } }] },
    { role: 'tool', tool_call_id: 'c1', content: log },
  ],
}, { budget: 8000, session: 'deno-1', store });
const pointer = JSON.stringify(request).match(/spill:\\/\\/deno-1\\/[\\w-]+/)![0];
const reply = handleToolCall('grep_spill', { pointer, pattern: 'KeyError', context: 0 }, { store, session: 'deno-1' });
console.log(JSON.stringify({
  version: version(),
  format: report.format,
  spilled: report.spills.length,
  cut: JSON.stringify(request).length < log.length / 2,
  grep: reply.text.split('\\n')[1],
  proxy: typeof createProxy({ upstream: 'https://api.example' }),
  deno: typeof Deno.version.deno,
}));
`;

let project;
let installed;
let cache;

before(() => {
  if (skip) return;
  // The package as npm installs it (a copy in node_modules, which Deno reads as an npm package).
  project = mkdtempSync(join(tmpdir(), 'tracelite-deno-'));
  installed = join(project, 'node_modules', 'tracelite');
  mkdirSync(installed, { recursive: true });
  cpSync(pkgDir, installed, { recursive: true, filter: (src) => !src.includes('node_modules') });
  cache = mkdtempSync(join(tmpdir(), 'tracelite-deno-cache-'));
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'app', private: true, type: 'module' }));
  writeFileSync(join(project, 'main.ts'), SCRIPT);
});

after(() => {
  for (const dir of [project, cache]) if (dir) rmSync(dir, { recursive: true, force: true });
});

function runDeno(args) {
  return spawnSync(deno.bin, args, {
    cwd: project,
    encoding: 'utf8',
    timeout: 120_000,
    // A private cache, no update check (no network), no colour in messages.
    env: { ...process.env, DENO_DIR: cache, DENO_NO_UPDATE_CHECK: '1', NO_COLOR: '1' },
  });
}

const EXPECTED = {
  version: JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8')).version,
  format: 'openai-chat',
  spilled: 1,
  cut: true,
  grep: '2001:FAILED test_price - KeyError',
  proxy: 'function',
  deno: 'string',
};

for (const [name, flags] of [
  ['read access to the package directory only', () => [`--allow-read=${installed}`]],
  ['no permission at all (every prompt refused)', () => ['--no-prompt']],
]) {
  test(`deno run with ${name}: the package loads, compresses and reads a spill back`, { skip }, (t) => {
    t.diagnostic(deno.version);
    const r = runDeno(['run', ...flags(), 'main.ts']);
    assert.equal(r.status, 0, `deno run ${flags().join(' ')} failed:\n${r.stderr}`);
    assert.deepEqual(JSON.parse(r.stdout.trim().split('\n').pop()), EXPECTED);
  });
}

test('the deno condition picks deno.js (source-phase wasm import); node and bundlers keep theirs', { skip }, () => {
  const manifest = JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8'));
  const conditions = Object.keys(manifest.exports['.']);
  // Before `node`, which Deno also matches; after `types`.
  assert.ok(conditions.indexOf('deno') === 1 && conditions.indexOf('deno') < conditions.indexOf('node'), conditions.join(' '));
  assert.equal(manifest.imports['#entry'].deno, './entries/deno.js');
  assert.match(readFileSync(join(pkgDir, 'entries/deno.js'), 'utf8'), /^import source wasm from '\.\.\/wasm\/tracelite_bg\.wasm';$/m);
  const info = runDeno(['info', '--json', 'main.ts']);
  assert.equal(info.status, 0, info.stderr);
  const specifiers = JSON.parse(info.stdout).modules.map((m) => m.specifier);
  assert.ok(specifiers.some((s) => s.endsWith('/entries/deno.js')), specifiers.join(' '));
  assert.ok(!specifiers.some((s) => /\/(node|browser)\.js$/.test(s)), specifiers.join(' '));
  // Node still loads node.js.
  const node = execFileSync(process.execPath, ['--input-type=module', '-e', "import('tracelite').then((m) => console.log(typeof m.compress))"], { cwd: project, encoding: 'utf8' });
  assert.equal(node.trim(), 'function');
});

test('deno check: the script type-checks against the package types', { skip }, () => {
  const r = runDeno(['check', 'main.ts']);
  assert.equal(r.status, 0, `deno check failed:\n${r.stderr}${r.stdout}`);
});

// FileStore under Deno (issue 37): the `deno` condition of 'tracelite/file-store'
// picks the filesystem store (node:fs under Deno), given read and write access
// to its root and read access to the package.
const FILE_STORE_SCRIPT = `
import { FileStore } from 'tracelite/file-store';
const root = Deno.args[0];
const files = new FileStore({ root });
const text = Array.from({ length: 500 }, (_, i) => 'line ' + (i + 1)).join('\\n');
const wrote = await files.put('deno-1', 'log', text);
const page = await files.read('deno-1', 'log', 249, 1);
const mode = (await Deno.stat(files.pathOf('deno-1', 'log'))).mode & 0o777;
let unsafe;
try { await files.get('evil', 'passwd'); } catch (err) { unsafe = err.code; }
console.log(JSON.stringify({ wrote, line: page.text, mode, unsafe }));
`;

test('deno run: FileStore writes 0600 files under its root and refuses a planted symlink', { skip }, () => {
  writeFileSync(join(project, 'files.ts'), FILE_STORE_SCRIPT);
  const spills = mkdtempSync(join(tmpdir(), 'tracelite-deno-spills-'));
  symlinkSync('/etc', join(spills, 'evil'));
  try {
    const r = runDeno(['run', `--allow-read=${installed},${spills}`, `--allow-write=${spills}`, 'files.ts', spills]);
    assert.equal(r.status, 0, r.stderr);
    assert.deepEqual(JSON.parse(r.stdout.trim().split('\n').pop()), { wrote: true, line: 'line 250\n', mode: 0o600, unsafe: 'STORE_UNSAFE' });
  } finally {
    rmSync(spills, { recursive: true, force: true });
  }
});
