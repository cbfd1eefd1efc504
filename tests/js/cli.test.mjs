// The CLI as a subprocess, against the attacks of issue 16 (item 10): an
// `--options` that would pollute Object.prototype, a file that is not a
// trajectory, a file that is not there. Each must end in one typed line on
// stderr and exit code 2, never a stack trace or a changed setting.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';

const root = new URL('../../', import.meta.url).pathname;
const cli = join(root, 'pkg/cli/index.mjs');
const sample = join(root, 'tests/fixtures/sample-trajectory.json');

function run(...args) {
  return runWith({}, ...args);
}

/** `input`: text piped to stdin; `nodeArgs`: flags for node itself. */
function runWith({ input, nodeArgs = [] }, ...args) {
  const r = spawnSync(process.execPath, [...nodeArgs, cli, ...args], { encoding: 'utf8', timeout: 60000, input });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** One line on stderr, exit 2, nothing on stdout, no stack. */
function assertUsageError(r, pattern) {
  assert.equal(r.code, 2, r.stderr);
  assert.match(r.stderr, /^tracelite: [^\n]+\n$/);
  assert.match(r.stderr, pattern);
  assert.doesNotMatch(r.stderr, /Error:|    at /);
  assert.equal(r.stdout, '');
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
      // No pointer to a repository file the npm package does not ship.
      assert.equal(r.stderr, `tracelite: ${file} is not a trajectory: it has no "steps" array\n`);
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

// Issue 18 item 10.
test('the replay table shows request bytes in and out beside tokens, as --json counts them', () => {
  const json = JSON.parse(run('replay', '--json', '--budget', '16000', sample).stdout);
  const r = run('replay', '--budget', '16000', sample);
  assert.equal(r.code, 0, r.stderr);
  const lines = r.stdout.split('\n');
  assert.match(lines[1], /^\s+t\s+baseline\s+compressed\s+saved\s+bytes in\s+bytes out\s+ms$/);
  for (const p of json.per_step) {
    const row = lines[2 + p.t].trim().split(/\s+/);
    assert.deepEqual([row[0], row[1], row[2], row[4], row[5]].map(Number), [p.t, p.baseline, p.compressed, p.bytes_before, p.bytes_after]);
  }
  assert.match(r.stdout, new RegExp(`baseline ${json.baseline_tokens} tokens \\(${json.baseline_bytes} bytes\\), compressed ${json.compressed_tokens} tokens \\(${json.compressed_bytes} bytes\\)`));
});

// Issue 18 item 7.
test('--version (and -v) prints the package version, before or after a command', () => {
  const { version } = JSON.parse(readFileSync(join(root, 'pkg/package.json'), 'utf8'));
  assert.match(version, /^\d+\.\d+\.\d+/);
  for (const args of [['--version'], ['-v'], ['replay', '--version']]) {
    const r = run(...args);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, `${version}\n`);
    assert.equal(r.stderr, '');
  }
  assert.match(run('--help').stdout, /--version/);
});

test('"-" reads the request (compress) or the trajectory (replay) from stdin', () => {
  const big = {
    model: 'm',
    messages: [
      { role: 'user', content: 'Run the tests.' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'bash', arguments: '{"cmd":"pytest"}' } }] },
      { role: 'tool', tool_call_id: 'c1', content: Array.from({ length: 3000 }, (_, i) => `test_${i} PASSED`).join('\n') },
    ],
  };
  const r = runWith({ input: JSON.stringify(big) }, 'compress', '-', '--budget', '8000', '--report');
  assert.equal(r.code, 0, r.stderr);
  const out = JSON.parse(r.stdout);
  assert.match(out.messages[2].content, /spill:\/\//);
  assert.ok(JSON.parse(r.stderr).tokensAfter < JSON.parse(r.stderr).tokensBefore);
  const fromStdin = runWith({ input: readFileSync(sample, 'utf8') }, 'replay', '--json', '--budget', '16000', '-');
  const fromFile = run('replay', '--json', '--budget', '16000', sample);
  assert.equal(fromStdin.code, 0, fromStdin.stderr);
  const strip = (o) => ({ ...o, per_step: o.per_step.map(({ ms, ...p }) => p), latency_ms: undefined });
  assert.deepEqual(strip(JSON.parse(fromStdin.stdout)), strip(JSON.parse(fromFile.stdout)));
  // Empty or non-JSON stdin: one line, exit 2.
  assertUsageError(runWith({ input: 'not json' }, 'replay', '-'), /^tracelite: stdin is not JSON: /);
});

test('the wrong kind of input is a one-line error with exit 2: a request to replay, a trajectory to compress', () => {
  withFile('request.json', request, (file) => {
    for (const args of [['replay', file], ['replay', '--json', file]]) {
      assertUsageError(run(...args), new RegExp(`^tracelite: ${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} is a provider request, not a trajectory: use \`tracelite compress `));
    }
    assertUsageError(runWith({ input: request }, 'replay', '-'), /^tracelite: stdin is a provider request, not a trajectory/);
  });
  for (const body of [{ input: [{ role: 'user', content: 'hi' }] }, { contents: [{ role: 'user', parts: [{ text: 'hi' }] }] }]) {
    withFile('other.json', JSON.stringify(body), (file) => assertUsageError(run('replay', file), /is a provider request, not a trajectory/));
  }
  assertUsageError(run('compress', sample), /^tracelite: \S+sample-trajectory\.json is a trajectory, not a provider request: use `tracelite replay /);
  assertUsageError(runWith({ input: readFileSync(sample, 'utf8') }, 'compress', '-'), /^tracelite: stdin is a trajectory, not a provider request/);
});

test('replaying a directory: a progress line per trajectory on stderr with --progress, none by default off a TTY', () => {
  const trajectory = readFileSync(sample, 'utf8');
  const dir = mkdtempSync(join(tmpdir(), 'tracelite-cli-dir-'));
  try {
    writeFileSync(join(dir, 'a.json'), trajectory);
    writeFileSync(join(dir, 'b.json'), trajectory);
    writeFileSync(join(dir, 'notes.json'), '{"not": "a trajectory"}');
    const quiet = run('replay', '--json', '--budget', '16000', dir);
    assert.equal(quiet.code, 0, quiet.stderr);
    assert.equal(quiet.stderr, '');
    const loud = run('replay', '--json', '--budget', '16000', '--progress', dir);
    assert.equal(loud.code, 0, loud.stderr);
    assert.equal(loud.stderr, 'tracelite: replaying 1/3 a.json\ntracelite: replaying 2/3 b.json\ntracelite: replaying 3/3 notes.json\n');
    // The progress goes to stderr only: stdout is the same JSON either way.
    assert.equal(JSON.parse(loud.stdout).runs.length, 2);
    assert.deepEqual(JSON.parse(loud.stdout).total.baseline_tokens, JSON.parse(quiet.stdout).total.baseline_tokens);
    // A single file shows no progress line even with --progress.
    assert.equal(run('replay', '--json', '--budget', '16000', '--progress', sample).stderr, '');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('replaying a directory with stderr on a terminal shows the progress line without --progress (script(1) pty)', (t) => {
  const script = spawnSync('script', ['--version'], { encoding: 'utf8' });
  if (script.status !== 0) return t.skip('script(1) (util-linux) not installed: no pty to test with');
  const dir = mkdtempSync(join(tmpdir(), 'tracelite-cli-tty-'));
  try {
    writeFileSync(join(dir, 'only.json'), readFileSync(sample, 'utf8'));
    const log = join(dir, 'typescript.log');
    const cmd = `${JSON.stringify(process.execPath)} ${JSON.stringify(cli)} replay --json --budget 16000 ${JSON.stringify(dir)} > ${JSON.stringify(join(dir, 'out.txt'))}`;
    const r = spawnSync('script', ['-qec', cmd, log], { encoding: 'utf8', timeout: 60000 });
    assert.equal(r.status, 0, r.stdout + r.stderr);
    const tty = readFileSync(log, 'utf8');
    assert.match(tty, /\r\x1b\[2Ktracelite: replaying 1\/1 only\.json/);
    assert.ok(JSON.parse(readFileSync(join(dir, 'out.txt'), 'utf8')).runs.length === 1);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('--tokenizer o200k without js-tiktoken installed says how to enable it (exit 2, one line)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tracelite-cli-bare-'));
  try {
    // A resolve hook that finds no js-tiktoken, as in a project that never installed it
    // (a copy of the package elsewhere could still find one in a parent node_modules).
    writeFileSync(join(dir, 'hooks.mjs'), `export async function resolve(specifier, context, next) {
      if (specifier === 'js-tiktoken') throw Object.assign(new Error("Cannot find package 'js-tiktoken'"), { code: 'ERR_MODULE_NOT_FOUND' });
      return next(specifier, context);
    }`);
    writeFileSync(join(dir, 'register.mjs'), `import { register } from 'node:module'; register('./hooks.mjs', import.meta.url);`);
    withFile('request.json', request, (file) => {
      const r = runWith({ nodeArgs: ['--import', join(dir, 'register.mjs')] }, 'compress', file, '--tokenizer', 'o200k');
      assertUsageError(r, /^tracelite: --tokenizer o200k needs the js-tiktoken package: npm install js-tiktoken/);
      // With js-tiktoken resolvable (the repository's devDependency) it counts exactly.
      const ok = run('compress', file, '--tokenizer', 'o200k');
      assert.equal(ok.code, 0, ok.stderr);
      assert.deepEqual(JSON.parse(ok.stdout), JSON.parse(request));
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

// Issue 38 item 5: errors a new user hits.
test('a mistyped option is one line: the code once, the path once, plain words (no Rust type names), exit 1', () => {
  withFile('request.json', request, (file) => {
    for (const args of [['compress', file, '--budget', '-5'], ['replay', sample, '--budget', '-5']]) {
      const r = run(...args);
      assert.equal(r.code, 1, r.stderr);
      assert.equal(r.stderr, 'tracelite: INVALID_OPTION: budget: must be a non-negative integer, got -5\n');
      assert.equal(r.stdout, '');
    }
    const r = run('compress', file, '--options', '{"spill": {"fraction": "half"}}');
    assert.equal(r.stderr, 'tracelite: INVALID_OPTION: spill.fraction: must be a number, got the string "half"\n');
  });
});

// Issue 51: the flags are read by node:util parseArgs, in order.
test('flags: a bad or missing value names the flag and what it got, an unknown flag or a value given to a switch is refused (exit 2), --flag=value reads as --flag value', () => {
  withFile('request.json', request, (file) => {
    assertUsageError(run('compress', file, '--budget', 'lots'), /^tracelite: --budget needs a number, got "lots"\n$/);
    assertUsageError(run('compress', file, '--budget'), /^tracelite: --budget needs a number\n$/);
    assertUsageError(run('compress', file, '--format'), /^tracelite: --format needs a value\n$/);
    assertUsageError(run('compress', file, '--only', 'ocr'), /^tracelite: --only takes one of spill, dedup, phase, optical, compact\n$/);
    for (const [flag, shown] of [['--budgte', '--budgte'], ['--json=yes', '--json=yes'], ['-x', '-x']]) {
      const r = run('compress', file, flag);
      assert.equal(r.code, 2, r.stderr);
      assert.ok(r.stderr.startsWith(`tracelite: unknown option ${shown}\nusage:`), r.stderr);
    }
    // Later flags override what --options merged before them, and the other way round.
    const later = run('compress', file, '--options', '{"budget": 0}', '--budget=-5');
    assert.equal(later.stderr, 'tracelite: INVALID_OPTION: budget: must be a non-negative integer, got -5\n');
    const earlier = run('compress', file, '--budget', '-5', '--options', '{"budget": 0}');
    assert.equal(earlier.stderr, 'tracelite: INVALID_OPTION: budget: must be a positive number of tokens\n');
  });
});

test('replay checks the size before reading: over limits.maxRequestBytes it is refused at once, naming the option to raise', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tracelite-cli-big-'));
  try {
    // 100 MB of zero bytes, sparse: refused by its size (stat), not read (it would be binary too).
    const big = join(dir, 'big.json');
    writeFileSync(big, '');
    truncateSync(big, 100 << 20);
    const r = run('replay', big);
    assert.equal(r.code, 1, r.stderr);
    assert.equal(r.stderr, `tracelite: LIMIT_EXCEEDED: limits.maxRequestBytes: ${big} is ${100 << 20} bytes, more than ` +
      `the limit (${64 << 20}): the requests of its last steps would be about as large; raise limits.maxRequestBytes to replay it\n`);
    // Raising the option lets the size check pass (the zeros are then refused as binary).
    const raised = run('replay', big, '--options', JSON.stringify({ limits: { maxRequestBytes: 200 << 20 } }));
    assert.match(raised.stderr, /is not a text file/);
    // The same check on stdin, and on the sample under a small limit: nothing replayed.
    const small = ['--options', '{"limits": {"maxRequestBytes": 1000}}'];
    const size = statSync(sample).size;
    const file = run('replay', sample, ...small);
    assert.equal(file.code, 1, file.stderr);
    assert.match(file.stderr, new RegExp(`sample-trajectory\\.json is ${size} bytes, more than the limit \\(1000\\)`));
    assert.equal(file.stdout, '');
    const piped = runWith({ input: readFileSync(sample, 'utf8') }, 'replay', '-', ...small);
    assert.match(piped.stderr, /^tracelite: LIMIT_EXCEEDED: limits\.maxRequestBytes: stdin is \d+ bytes, more than the limit \(1000\)/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('replay of a binary file is refused without echoing its bytes', () => {
  const png = Buffer.concat([Buffer.from([0x89]), Buffer.from('PNG\r\n\x1a\n'), Buffer.from([0, 0, 0, 13]), Buffer.from('IHDR-SECRET-PIXELS')]);
  const latin1 = Buffer.from('{"steps": "caf\xe9 SECRET-PIXELS"}', 'latin1');
  for (const bytes of [png, latin1]) {
    withFile('image.json', bytes, (file) => {
      const r = run('replay', file);
      assertUsageError(r, /is not a text file: it holds binary data, not a JSON trajectory\n$/);
      assert.doesNotMatch(r.stderr, /SECRET|PNG|IHDR/);
    });
  }
});

test('a directory replay reports each bad file on its own line, replays the others, and exits 1 after the totals', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tracelite-cli-mixed-'));
  try {
    const trajectory = readFileSync(sample, 'utf8');
    writeFileSync(join(dir, 'a.json'), trajectory);
    writeFileSync(join(dir, 'b-broken.json'), '{"steps": [');
    writeFileSync(join(dir, 'c-binary.json'), Buffer.from([0x7b, 0, 0xff, 0x7d]));
    writeFileSync(join(dir, 'd-bad-step.json'), JSON.stringify({ task: 't', steps: [{ action: 5 }] }));
    writeFileSync(join(dir, 'e.json'), trajectory);
    const json = run('replay', '--json', '--budget', '16000', dir);
    assert.equal(json.code, 1, json.stderr);
    const out = JSON.parse(json.stdout);
    assert.equal(out.runs.length, 2);
    assert.deepEqual(out.errors.map((e) => basename(e.file)), ['b-broken.json', 'c-binary.json', 'd-bad-step.json']);
    const lines = json.stderr.trimEnd().split('\n');
    assert.equal(lines.length, 4, json.stderr);
    assert.match(lines[0], /b-broken\.json is not JSON: /);
    assert.match(lines[1], /c-binary\.json is not a text file/);
    assert.match(lines[2], /d-bad-step\.json: [A-Z_]+: /);
    assert.equal(lines[3], 'tracelite: 3 of 5 trajectories could not be replayed (above)');
    // The table form prints both runs and the totals before failing.
    const table = run('replay', '--budget', '16000', dir);
    assert.equal(table.code, 1);
    assert.match(table.stdout, /^2 trajectories$/m);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a directory without trajectories is an error (exit 2), not "0 trajectories"', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tracelite-cli-empty-'));
  try {
    assertUsageError(run('replay', dir), /holds no trajectories \(no \.json file in it has a "steps" array\)/);
    writeFileSync(join(dir, 'notes.json'), '{"not": "a trajectory"}');
    assertUsageError(run('replay', '--json', dir), /holds no trajectories/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('replayTrajectory refuses a trajectory text over limits.maxRequestBytes before parsing it', async () => {
  const { replayTrajectory } = await import(join(root, 'pkg/entries/node.js'));
  assert.throws(() => replayTrajectory('{"steps": [' + ' '.repeat(5000), { limits: { maxRequestBytes: 4000 } }),
    (e) => e.code === 'LIMIT_EXCEEDED' && e.path === 'limits.maxRequestBytes' && /raise limits\.maxRequestBytes/.test(e.message));
});

// Issue 38 item 3: the demo shows every stage.
test('make demo: the demo session at the Makefile\'s DEMO_ARGS saves tokens in every stage, and the table says so', () => {
  const makefile = readFileSync(join(root, 'Makefile'), 'utf8');
  const demo = /^DEMO := (\S+)$/m.exec(makefile)?.[1];
  const demoArgs = /^DEMO_ARGS := (.+)$/m.exec(makefile)?.[1].trim().split(/\s+/);
  assert.ok(demo && demoArgs, 'DEMO and DEMO_ARGS in the Makefile');
  const session = JSON.parse(readFileSync(join(root, demo), 'utf8'));
  assert.ok(session.steps.length >= 35 && session.steps.length <= 45, `${session.steps.length} steps`);
  const r = run('replay', '--json', join(root, demo), ...demoArgs);
  assert.equal(r.code, 0, r.stderr);
  const saved = JSON.parse(r.stdout).saved_by_stage;
  for (const stage of ['spill', 'dedup', 'phase', 'optical', 'compact']) {
    assert.ok(saved[stage]?.tokens > 0, `${stage} saves nothing at ${demoArgs.join(' ')}: ${JSON.stringify(saved)}`);
  }
  const table = run('replay', join(root, demo), ...demoArgs);
  assert.match(table.stdout, /^saved by stage: spill [1-9]\d* \(.+\), dedup [1-9]\d* \(.+\), phase [1-9]\d* \(.+\), optical [1-9]\d* \(.+\), compact [1-9]\d* \(.+\)$/m);
});
