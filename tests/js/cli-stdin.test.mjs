// `tracelite compress -` reads standard input of any size through a real pipe (issue 50,
// item 3). A writer process sends the request in chunks with pauses, so the CLI finds the
// pipe empty many times before the end; once with the pipe as the shell makes it, once
// switched to non-blocking (as a parent that holds it as a stream leaves it), where
// `readFileSync(0)` failed with `cannot read stdin: EAGAIN`. The output must be the
// bytes `compress FILE` prints for the same request.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const root = new URL('../../', import.meta.url).pathname;
const cli = join(root, 'pkg/cli/index.mjs');

/** Writes the file named by its argument to stdout in 64 KiB chunks, pausing 2 ms after every fourth. */
const WRITER = `
const { readFileSync } = require('node:fs');
const data = readFileSync(process.argv[2]);
let at = 0, n = 0;
(function next() {
  while (at < data.length) {
    const ok = process.stdout.write(data.subarray(at, at += 65536));
    if (++n % 4 === 0) return setTimeout(next, 2);
    if (!ok) return process.stdout.once('drain', next);
  }
})();`;

/** Sets O_NONBLOCK on stdin (shared with the pipe's reader), then runs the command. */
const NONBLOCK = 'use Fcntl; my $f = fcntl(STDIN, F_GETFL, 0); fcntl(STDIN, F_SETFL, $f | O_NONBLOCK) or die $!; exec @ARGV or die $!';
const hasPerl = spawnSync('perl', ['-e', '1']).status === 0;

/** A chat request of about `bytes` bytes: a task, then turns of tool calls and their logs. */
function requestOf(bytes) {
  const messages = [{ role: 'system', content: 'You are a coding agent.' }, { role: 'user', content: 'Fix the failing test.' }];
  let size = 0;
  for (let i = 0; size < bytes; i++) {
    const log = Array.from({ length: 400 }, (_, j) => `tests/test_mod_${i}.py::test_case_${j} ${j % 37 === 0 ? 'FAILED' : 'PASSED'} [${j % 100}%]`).join('\n');
    messages.push(
      { role: 'assistant', content: null, tool_calls: [{ id: `c${i}`, type: 'function', function: { name: 'bash', arguments: JSON.stringify({ cmd: `pytest tests/test_mod_${i}.py` }) } }] },
      { role: 'tool', tool_call_id: `c${i}`, content: log },
    );
    size += log.length + 200;
  }
  return JSON.stringify({ model: 'gpt-4o', messages });
}

/** Runs `sh -c script` with $CLI, $FILE, $NODE set; resolves with its exit code and output. */
function shell(script, env) {
  return new Promise((resolve, reject) => {
    const child = spawn('sh', ['-c', script], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    const out = [];
    const err = [];
    child.stdout.on('data', (c) => out.push(c));
    child.stderr.on('data', (c) => err.push(c));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(err).toString('utf8') }));
  });
}

for (const mb of [2, 20]) {
  test(`compress - reads ${mb} MB piped in chunks with pauses, blocking or not, and prints what compress FILE prints`, { timeout: 600000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tracelite-stdin-'));
    try {
      const file = join(dir, 'request.json');
      const text = requestOf(mb * 1024 * 1024);
      assert.ok(text.length >= mb * 1024 * 1024, `${text.length} bytes`);
      writeFileSync(file, text);
      const writer = join(dir, 'writer.cjs');
      writeFileSync(writer, WRITER);
      const env = { NODE: process.execPath, CLI: cli, FILE: file, WRITER: writer, NONBLOCK };
      const direct = await shell('"$NODE" "$CLI" compress "$FILE"', env);
      assert.equal(direct.code, 0, direct.stderr);
      assert.ok(direct.stdout.length > 1000 && direct.stdout.length < text.length, `${direct.stdout.length} of ${text.length} bytes`);
      const piped = await shell('"$NODE" "$WRITER" "$FILE" | "$NODE" "$CLI" compress -', env);
      assert.equal(piped.code, 0, piped.stderr);
      assert.equal(piped.stdout, direct.stdout);
      if (!hasPerl) return;
      const nonBlocking = await shell('"$NODE" "$WRITER" "$FILE" | perl -e "$NONBLOCK" "$NODE" "$CLI" compress -', env);
      assert.equal(nonBlocking.code, 0, nonBlocking.stderr);
      assert.equal(nonBlocking.stdout, direct.stdout);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
}
