// The CLI's file store (issue 37), each command a fresh process as from a
// fresh shell: `compress --store` keeps spills on disk and prints path
// pointers, `read` and `grep` read them back, `sweep` deletes what expired,
// `replay --store` keeps a trajectory's spills.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const root = new URL('../../', import.meta.url).pathname;
const cli = join(root, 'pkg/cli/index.mjs');
const sample = join(root, 'tests/fixtures/sample-trajectory.json');

/** The CLI through `bash -c` in `cwd`, as a user would run it from a new shell. */
function shell(cwd, command) {
  const r = spawnSync('bash', ['-c', command], { cwd, encoding: 'utf8', timeout: 60000, env: { ...process.env, TRACELITE: cli } });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

const HIDDEN = 'checksum of the release: 5f0c2a9e';
const LOG = Array.from({ length: 20000 }, (_, i) => (i === 12344 ? HIDDEN : `line ${i + 1}: built target_${i} ok`)).join('\n');
const REQUEST = JSON.stringify({
  model: 'm',
  messages: [
    { role: 'user', content: 'build' },
    { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'bash', arguments: '{}' } }] },
    { role: 'tool', tool_call_id: 'c1', content: LOG },
  ],
});

function withDir(fn) {
  const dir = mkdtempSync(join(tmpdir(), 'tracelite-cli-store-'));
  try {
    return fn(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test('compress --store keeps the spill on disk and prints its path; read and grep read it back from a new shell', () => withDir((dir) => {
  writeFileSync(join(dir, 'request.json'), REQUEST);
  const compressed = shell(dir, 'node "$TRACELITE" compress request.json --store spills --session build-1 > out.json');
  assert.equal(compressed.code, 0, compressed.stderr);
  const out = shell(dir, 'cat out.json');
  const excerpt = JSON.parse(out.stdout).messages[2].content;
  const path = /\[full output: (\/\S+\.txt) — /.exec(excerpt)?.[1];
  assert.ok(path?.startsWith(join(dir, 'spills', 'build-1')), excerpt.slice(0, 300));
  assert.ok(!excerpt.includes(HIDDEN));
  assert.equal(statSync(path).mode & 0o777, 0o600);
  assert.equal(shell(dir, `cat '${path}'`).stdout, LOG, 'a normal file holding the whole output');

  const read = shell(dir, `node "$TRACELITE" read spills '${path}' --offset 12344 --limit 2`);
  assert.equal(read.code, 0, read.stderr);
  assert.equal(read.stdout, `${HIDDEN}\nline 12346: built target_12345 ok\n`);
  assert.equal(read.stderr, 'tracelite: lines 12345-12346 of 20000; more with --offset 12346\n');

  const key = path.split('/').at(-1).slice(0, -'.txt'.length);
  const grep = shell(dir, `node "$TRACELITE" grep spills spill://build-1/${key} 'checksum of the' --context 0`);
  assert.equal(grep.code, 0, grep.stderr);
  assert.equal(grep.stdout, `12345:${HIDDEN}\n`);
  const none = shell(dir, `node "$TRACELITE" grep spills '${path}' 'no such line' --literal`);
  assert.equal(none.code, 1);
  assert.equal(none.stdout, '');

  const traversal = shell(dir, 'node "$TRACELITE" read spills spill://../etc/passwd');
  assert.equal(traversal.code, 1);
  assert.match(traversal.stderr, /^tracelite: INVALID_SPILL_KEY/);
}));

test('sweep deletes the spills past their TTL', () => withDir((dir) => {
  writeFileSync(join(dir, 'request.json'), REQUEST);
  assert.equal(shell(dir, 'node "$TRACELITE" compress request.json --store spills > /dev/null').code, 0);
  const sessionDir = join(dir, 'spills', 'default');
  const [file] = readdirSync(sessionDir);
  const kept = shell(dir, 'node "$TRACELITE" sweep spills');
  assert.equal(kept.stdout, 'removed 0 expired spills (0 bytes), 0 leftover temporary files, 0 empty sessions\n');
  const eightDaysAgo = Date.now() / 1000 - 8 * 24 * 3600;
  utimesSync(join(sessionDir, file), eightDaysAgo, eightDaysAgo);
  const swept = shell(dir, 'node "$TRACELITE" sweep spills');
  assert.equal(swept.code, 0, swept.stderr);
  assert.match(swept.stdout, /^removed 1 expired spills \(\d+ bytes\)/);
  assert.deepEqual(readdirSync(sessionDir), []);
}));

test('replay --store keeps every spill of the trajectory as a file the dumped requests point at', () => withDir((dir) => {
  const r = shell(dir, `node "$TRACELITE" replay '${sample}' --json --store spills --dump dump`);
  assert.equal(r.code, 0, r.stderr);
  const [session] = readdirSync(join(dir, 'spills'));
  const files = readdirSync(join(dir, 'spills', session));
  assert.ok(files.length > 0 && files.every((f) => f.endsWith('.txt')), files.join());
  const steps = readdirSync(join(dir, 'dump', session)).sort((a, b) => parseInt(a, 10) - parseInt(b, 10));
  const last = shell(dir, `cat 'dump/${session}/${steps.at(-1)}'`).stdout;
  const named = [...last.matchAll(/\/[^\s"'\\]+\.txt/g)].map((m) => m[0]);
  assert.ok(named.length > 0, 'the last request names spilled files');
  for (const p of named) assert.ok(statSync(p).isFile(), p);
  assert.ok(!last.includes('spill://'), 'no spill:// pointer is left');
}));
