// The CLI as a subprocess, against the attacks of issue 16 (item 10): an
// `--options` that would pollute Object.prototype, a file that is not a
// trajectory, a file that is not there. Each must end in one typed line on
// stderr and exit code 2, never a stack trace or a changed setting.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const root = new URL('../../', import.meta.url).pathname;
const cli = join(root, 'pkg/cli.mjs');
const sample = join(root, 'tests/fixtures/sample-trajectory.json');

function run(...args) {
  const r = spawnSync(process.execPath, [cli, ...args], { encoding: 'utf8', timeout: 60000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

function withFile(name, text, fn) {
  const dir = mkdtempSync(join(tmpdir(), 'tracelite-cli-'));
  try {
    const file = join(dir, name);
    writeFileSync(file, text);
    return fn(file, dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const request = JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hello there' }] });

for (const key of ['__proto__', 'constructor', 'prototype']) {
  test(`--options with a "${key}" key is refused (exit 2), and nothing is switched on through the prototype`, () => {
    withFile('request.json', request, (file) => {
      const nested = JSON.stringify({ spill: { [key]: { report: true } } });
      for (const options of [JSON.stringify({ [key]: { report: true, json: true } }), nested]) {
        const r = run('compress', file, '--options', options);
        assert.equal(r.code, 2, r.stderr);
        assert.equal(r.stderr, `tracelite: --options: "${key}" is not a setting\n`);
        assert.equal(r.stdout, '');
      }
    });
  });
}

test('--options still merges ordinary settings (the guard refuses only prototype keys)', () => {
  withFile('request.json', request, (file) => {
    const r = run('compress', file, '--report', '--options', '{"budget": 64000, "redact": {"store": true}}');
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(JSON.parse(r.stdout), JSON.parse(request));
    assert.match(r.stderr, /"tokensBefore"/);
    // Without --report there is no report: nothing turned it on.
    const quiet = run('compress', file, '--options', '{"budget": 64000}');
    assert.equal(quiet.code, 0, quiet.stderr);
    assert.equal(quiet.stderr, '');
  });
});

test('replay (--json or not) of a JSON file that is not a trajectory: a typed message, exit 2, no stack', () => {
  withFile('not-a-trajectory.json', '{"hello": "world"}', (file) => {
    for (const args of [['replay', '--json', file], ['replay', file]]) {
      const r = run(...args);
      assert.equal(r.code, 2, r.stderr);
      assert.equal(r.stderr, `tracelite: ${file} is not a trajectory: it has no "steps" array (see tests/fixtures/sample-trajectory.json)\n`);
      assert.doesNotMatch(r.stderr, /TypeError|    at /);
      assert.equal(r.stdout, '');
    }
  });
  withFile('null.json', 'null', (file) => {
    const r = run('replay', '--json', file);
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /is not a trajectory/);
  });
});

test('a missing file: "cannot read <path>: no such file or directory", exit 2, for compress and replay', () => {
  const missing = join(tmpdir(), 'tracelite-no-such-dir', 'nope.json');
  for (const args of [['compress', missing], ['replay', missing], ['replay', '--json', missing]]) {
    const r = run(...args);
    assert.equal(r.code, 2, r.stderr);
    assert.equal(r.stderr, `tracelite: cannot read ${missing}: no such file or directory\n`);
    assert.doesNotMatch(r.stderr, /ENOENT|    at /);
  }
});

test('replay --json of a real trajectory still works', () => {
  const r = run('replay', '--json', '--budget', '16000', sample);
  assert.equal(r.code, 0, r.stderr);
  assert.ok(JSON.parse(r.stdout).steps > 0);
});
