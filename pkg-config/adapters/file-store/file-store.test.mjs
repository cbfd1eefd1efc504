// FileStore on a real temporary directory: modes read back with stat, a
// planted symlink and `../` names refused, a writer killed before its rename,
// quotas and TTL with an injected clock, two processes writing one session,
// and `pointer: 'path'` through the adapters' compress.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { FileStore, STALE_TEMP_SECONDS } from '../../../pkg/adapters/file-store/index.js';
import { compressInto, withPointer } from '../../../pkg/core/stores.js';
import { SpillStore } from '../../../pkg/entries/node.js';

const STORE_MODULE = fileURLToPath(new URL('../../../pkg/adapters/file-store/index.js', import.meta.url));
const DAY_MS = 24 * 3600 * 1000;

const scratch = () => mkdtempSync(join(tmpdir(), 'tracelite-fs-'));
const mode = (path) => statSync(path).mode & 0o777;
const code = (c, path) => (err) => err?.code === c && (path === undefined || err.path === path);

/** Runs `script` (an ES module) in a fresh Node process; resolves `{ code, signal, stderr }`. */
function runNode(script) {
  return new Promise((done) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d) => { stderr += d; });
    child.on('exit', (c, signal) => done({ code: c, signal, stderr }));
  });
}

test('directories are 0700 and files 0600 whatever the umask, under <root>/<session>/<key>.txt', async () => {
  const previous = process.umask(0o000);
  try {
    const root = join(scratch(), 'spills');
    const store = new FileStore({ root });
    assert.equal(await store.put('s1', 'note', 'hello\nworld\n'), true);
    const file = join(root, 's1', 'note.txt');
    assert.equal(store.pathOf('s1', 'note'), file);
    assert.equal(readFileSync(file, 'utf8'), 'hello\nworld\n');
    assert.equal(mode(root), 0o700);
    assert.equal(mode(join(root, 's1')), 0o700);
    assert.equal(mode(file), 0o600);
    assert.equal(await store.get('s1', 'note'), 'hello\nworld\n');
    assert.deepEqual(await store.list('s1'), [{ key: 'note', bytes: 12, lines: 2 }]);
    assert.equal(await store.put('s1', 'note', 'hello\nworld\n'), false, 'the same text is not written again');
    await assert.rejects(store.put('s1', 'note', 'other'), code('STORE_REFUSED'));
    assert.equal((await store.read('s1', 'note', 1, 1)).text, 'world\n');
    assert.equal(await store.delete('s1', 'note'), true);
    await assert.rejects(store.get('s1', 'note'), code('SPILL_NOT_FOUND'));
  } finally {
    process.umask(previous);
  }
});

test('../ session names and keys are refused with a typed error, nothing is written outside the root', async () => {
  const dir = scratch();
  const store = new FileStore({ root: join(dir, 'root') });
  await store.usage(); // the root exists
  for (const [session, key] of [['../x', 'k'], ['..', 'k'], ['s', '../../etc/passwd'], ['a/b', 'k'], ['s', '']]) {
    await assert.rejects(store.put(session, key, 'text'), code('INVALID_SPILL_KEY'), `${session} ${key}`);
    await assert.rejects(store.get(session, key), code('INVALID_SPILL_KEY'), `${session} ${key}`);
  }
  assert.deepEqual(readdirSync(dir), ['root']);
  assert.deepEqual(readdirSync(join(dir, 'root')), []);
});

test('a symlink planted in the root is refused (STORE_UNSAFE), never followed', async () => {
  const dir = scratch();
  const root = join(dir, 'root');
  const outside = join(dir, 'outside');
  mkdirSync(outside);
  writeFileSync(join(outside, 'secret.txt'), 'the secret');
  const store = new FileStore({ root });
  await store.put('mine', 'k', 'x');
  // A session directory that is a symlink to somewhere else.
  symlinkSync(outside, join(root, 'evil'));
  await assert.rejects(store.put('evil', 'k', 'text'), code('STORE_UNSAFE'));
  await assert.rejects(store.get('evil', 'secret'), code('STORE_UNSAFE'));
  assert.deepEqual(readdirSync(outside), ['secret.txt']);
  // A blob's file that is a symlink to another file.
  symlinkSync(join(outside, 'secret.txt'), join(root, 'mine', 'stolen.txt'));
  await assert.rejects(store.get('mine', 'stolen'), code('STORE_UNSAFE'));
  await assert.rejects(store.put('mine', 'stolen', 'overwrite'), code('STORE_UNSAFE'));
  assert.equal(readFileSync(join(outside, 'secret.txt'), 'utf8'), 'the secret');
  // The sweep neither follows nor counts them.
  const usage = await store.usage();
  assert.deepEqual(usage.sessions.map((s) => s.session), ['mine']);
});

test('a writer killed between the temporary file and the rename leaves no file under the final name', async () => {
  const root = scratch();
  const text = 'x'.repeat(100_000);
  const { signal } = await runNode(`
    import { FileStore } from ${JSON.stringify(STORE_MODULE)};
    const store = new FileStore({ root: ${JSON.stringify(root)}, onTempWritten: () => process.kill(process.pid, 'SIGKILL') });
    await store.put('s', 'big', ${JSON.stringify(text)});
  `);
  assert.equal(signal, 'SIGKILL');
  const names = readdirSync(join(root, 's'));
  assert.equal(names.length, 1, 'the temporary file is there');
  assert.ok(names[0].startsWith('~tmp-') && !existsSync(join(root, 's', 'big.txt')), names.join());
  let now = Date.now();
  const store = new FileStore({ root, now: () => now, sweepOnOpen: false });
  await assert.rejects(store.get('s', 'big'), code('SPILL_NOT_FOUND'));
  assert.deepEqual(await store.list('s'), []);
  assert.equal((await store.sweep()).temps, 0, 'a fresh temporary file may be a live writer');
  now += (STALE_TEMP_SECONDS + 60) * 1000;
  assert.deepEqual(await store.sweep(), { blobs: 0, bytes: 0, temps: 1, sessions: 1 });
  assert.deepEqual(readdirSync(root), []);
});

test('the per-session quota refuses a put past it; a full store makes room from its oldest sessions', async () => {
  let now = 1_000;
  const store = new FileStore({ root: scratch(), maxSessionBytes: 1000, maxBytes: 1500, now: () => now });
  const blob = 'y'.repeat(600);
  await store.put('a', 'k1', blob);
  await assert.rejects(store.put('a', 'k2', blob), code('STORE_REFUSED', 'maxSessionBytes'));
  now += 1000;
  await store.put('b', 'k1', blob);
  now += 1000;
  await store.put('c', 'k1', blob);
  await assert.rejects(store.get('a', 'k1'), code('SPILL_NOT_FOUND'), 'the least recently written session made room');
  assert.equal(await store.get('b', 'k1'), blob);
  assert.equal((await store.usage()).totalBytes, 1200);
  await store.delete('b', 'k1');
  assert.equal((await store.usage()).totalBytes, 600);
  const big = new FileStore({ root: scratch(), maxSessionBytes: 4000, maxBytes: 1500 });
  await assert.rejects(big.put('s', 'k', 'z'.repeat(1501)), code('STORE_REFUSED', 'maxBytes'), 'a blob no eviction can make room for');
});

test('blobs expire ttlSeconds after they were last written: on read, by sweep() and on open', async () => {
  const root = scratch();
  let now = Date.now();
  const store = new FileStore({ root, now: () => now });
  await store.put('s', 'old', 'old text');
  await store.put('s', 'kept', 'kept text');
  now += 4 * DAY_MS;
  assert.equal(await store.put('s', 'kept', 'kept text'), false, 'rewriting the same text restarts its time');
  now += 4 * DAY_MS; // 8 days after 'old', 4 after 'kept' was written again
  await assert.rejects(store.get('s', 'old'), code('SPILL_NOT_FOUND'));
  assert.equal(existsSync(join(root, 's', 'old.txt')), false, 'an expired blob is removed on read');
  assert.equal(await store.get('s', 'kept'), 'kept text');
  await store.put('t', 'k', 'other session');
  now += 8 * DAY_MS;
  assert.deepEqual(await store.sweep(), { blobs: 2, bytes: 9 + 13, temps: 0, sessions: 2 });
  assert.deepEqual(readdirSync(root), []);
  // A new store sweeps on its first call.
  await store.put('u', 'k', 'soon gone');
  now += 8 * DAY_MS;
  const reopened = new FileStore({ root, now: () => now });
  assert.deepEqual((await reopened.usage()).sessions, []);
  assert.deepEqual(readdirSync(root), []);
  // ttlSeconds 0: forever.
  const forever = new FileStore({ root, now: () => now, ttlSeconds: 0 });
  await forever.put('v', 'k', 'stays');
  now += 1000 * DAY_MS;
  assert.equal(await forever.get('v', 'k'), 'stays');
});

test('two Node processes writing one session at once do not corrupt each other', async () => {
  const root = scratch();
  const writer = (name) => `
    import { FileStore } from ${JSON.stringify(STORE_MODULE)};
    const store = new FileStore({ root: ${JSON.stringify(root)} });
    const text = (i, who) => Array.from({ length: 2000 }, (_, n) => who + ' blob ' + i + ' line ' + n).join('\\n');
    const puts = [];
    for (let i = 0; i < 40; i++) {
      puts.push(store.put('shared', 'own-${name}-' + i, text(i, '${name}')));
      puts.push(store.put('shared', 'both-' + i, text(i, 'both')));
    }
    await Promise.all(puts);
  `;
  const [a, b] = await Promise.all([runNode(writer('a')), runNode(writer('b'))]);
  assert.equal(a.code, 0, a.stderr);
  assert.equal(b.code, 0, b.stderr);
  const store = new FileStore({ root });
  const keys = (await store.list('shared')).map((x) => x.key);
  assert.equal(keys.length, 120);
  const text = (i, who) => Array.from({ length: 2000 }, (_, n) => `${who} blob ${i} line ${n}`).join('\n');
  for (let i = 0; i < 40; i++) {
    assert.equal(await store.get('shared', `own-a-${i}`), text(i, 'a'));
    assert.equal(await store.get('shared', `own-b-${i}`), text(i, 'b'));
    assert.equal(await store.get('shared', `both-${i}`), text(i, 'both'));
  }
  assert.deepEqual(readdirSync(join(root, 'shared')).filter((n) => n.startsWith('~tmp-')), []);
});

test("pointer: 'path' names the FileStore's files; other stores and values are refused naming pointer", async () => {
  const files = new FileStore({ root: scratch() });
  const log = Array.from({ length: 5000 }, (_, i) => `step ${i}: ok`).join('\n');
  const request = {
    model: 'm',
    messages: [
      { role: 'user', content: 'go' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'c', type: 'function', function: { name: 'bash', arguments: '{}' } }] },
      { role: 'tool', tool_call_id: 'c', content: log },
    ],
  };
  const out = await compressInto(request, { session: 's', budget: 8000, pointer: 'path' }, files);
  const [spill] = out.report.spills;
  const path = files.pathOf('s', out.spills[0].key);
  assert.equal(spill.pointer, path);
  assert.ok(out.request.messages[2].content.includes(`sed -n 'FIRST,LASTp' '${path}'`));
  assert.equal(readFileSync(path, 'utf8'), log);
  assert.equal(mode(path), 0o600);
  const spillDefault = await compressInto(request, { session: 's', budget: 8000 }, files);
  assert.equal(spillDefault.report.spills[0]?.pointer ?? spillDefault.request.messages[2].content.match(/spill:\/\/\S+/)?.[0], `spill://s/${out.spills[0].key}`);
  assert.throws(() => withPointer({ pointer: 'path' }, new SpillStore()), code('INVALID_OPTION', 'pointer'));
  assert.throws(() => withPointer({ pointer: 'file' }, files), code('INVALID_OPTION', 'pointer'));
});

test('bad options are typed errors naming the option', () => {
  assert.throws(() => new FileStore(), code('INVALID_OPTION', 'root'));
  assert.throws(() => new FileStore({ root: '/tmp', ttlSeconds: -1 }), code('INVALID_OPTION', 'ttlSeconds'));
  assert.throws(() => new FileStore({ root: '/tmp', maxBytes: 1.5 }), code('INVALID_OPTION', 'maxBytes'));
  assert.throws(() => new FileStore({ root: '/tmp', rooot: 1 }), code('INVALID_OPTION', 'rooot'));
});

/** A 2 MB build log with one line in its hidden middle. */
const NEEDLE_LINE = 31338;
const NEEDLE = 'needle: the release checksum is 5f0c2a9e (module_31337)';
const BIG_LOG = Array.from({ length: 60000 }, (_, i) => (i + 1 === NEEDLE_LINE ? NEEDLE : `line ${i + 1}: built target_${i} ok`)).join('\n');

/**
 * An agent loop (AI SDK `generateText`, the `ai/test` mock model) whose
 * model runs `cat build.log` with bash, then reads the hidden line with the
 * call `readCall(excerpt)` makes from the excerpt it was shown, then answers
 * with what that call returned. Resolves `{ answer, excerpt, calls }`.
 */
async function agentLoop(middleware, tools, readCall) {
  const { generateText, stepCountIs, wrapLanguageModel } = await import('ai');
  const { MockLanguageModelV4 } = await import('ai/test');
  const usage = { inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 1, text: 1, reasoning: 0 } };
  const reply = (content, finishReason) => ({ content, finishReason: { unified: finishReason, raw: finishReason }, usage, warnings: [] });
  const call = (id, toolName, input) => reply([{ type: 'tool-call', toolCallId: id, toolName, input: JSON.stringify(input) }], 'tool-calls');
  const toolOutputs = (prompt) => prompt.filter((m) => m.role === 'tool').flatMap((m) => m.content.map((c) => c.output.value));
  let excerpt;
  const mock = new MockLanguageModelV4({
    doGenerate: async ({ prompt }) => {
      const outputs = toolOutputs(prompt);
      if (outputs.length === 0) return call('c1', 'bash', { command: 'cat build.log' });
      if (outputs.length === 1) {
        excerpt = outputs[0];
        const { toolName, input } = readCall(excerpt);
        return call('c2', toolName, input);
      }
      return reply([{ type: 'text', text: `found: ${outputs[1]}` }], 'stop');
    },
  });
  const result = await generateText({
    model: wrapLanguageModel({ model: mock, middleware }),
    messages: [{ role: 'user', content: 'Find the release checksum in the build log.' }],
    tools,
    stopWhen: stepCountIs(4),
  });
  return { answer: result.text, excerpt, calls: mock.doGenerateCalls.length };
}

/** A real bash tool run in `cwd`. */
async function bashTool(cwd) {
  const { tool, jsonSchema } = await import('ai');
  const { execFileSync } = await import('node:child_process');
  return tool({
    description: 'Runs a bash command in the project directory.',
    inputSchema: jsonSchema({ type: 'object', properties: { command: { type: 'string' } }, required: ['command'] }),
    execute: async ({ command }) => execFileSync('bash', ['-c', command], { cwd, encoding: 'utf8', maxBuffer: 64 << 20 }),
  });
}

test("an agent whose only tool is bash reads a hidden line of a 2 MB output with sed -n on the excerpt's path (pointer: 'path')", async () => {
  const { traceliteMiddleware } = await import('../../../pkg/adapters/ai-sdk/index.js');
  const work = scratch();
  writeFileSync(join(work, 'build.log'), BIG_LOG);
  const files = new FileStore({ root: join(work, '.spills') });
  const middleware = traceliteMiddleware({ store: files, pointer: 'path', session: 'agent' });
  const { answer, excerpt } = await agentLoop(middleware, { bash: await bashTool(work) }, (shown) => {
    const path = /\[full output: (\/\S+\.txt) — /.exec(shown)?.[1];
    assert.ok(path, shown.slice(0, 400));
    return { toolName: 'bash', input: { command: `sed -n '${NEEDLE_LINE}p' '${path}'` } };
  });
  assert.ok(!excerpt.includes(NEEDLE) && excerpt.length < BIG_LOG.length / 20, `the line is in the hidden middle: ${excerpt.length} ${excerpt.slice(0, 300)}`);
  assert.match(excerpt, /sed -n 'FIRST,LASTp'/);
  assert.equal(answer, `found: ${NEEDLE}\n`);
});

test('the same loop with the default store reads the hidden line with read_spill', async () => {
  const { spillTools, traceliteMiddleware } = await import('../../../pkg/adapters/ai-sdk/index.js');
  const work = scratch();
  writeFileSync(join(work, 'build.log'), BIG_LOG);
  const middleware = traceliteMiddleware({ session: 'agent' });
  const tools = { bash: await bashTool(work), ...spillTools(middleware.store) };
  const { answer, excerpt } = await agentLoop(middleware, tools, (shown) => {
    const pointer = /spill:\/\/agent\/[A-Za-z0-9._-]+/.exec(shown)?.[0];
    assert.ok(pointer, shown.slice(0, 400));
    return { toolName: 'read_spill', input: { pointer, offset: NEEDLE_LINE - 1, limit: 1 } };
  });
  assert.ok(!excerpt.includes(NEEDLE));
  assert.ok(answer.startsWith('found: spill://agent/') && answer.includes(`\n ${NEEDLE_LINE}\t${NEEDLE}\n`), answer);
});

test('two processes putting different texts under one key: one wins whole, the other is refused', async () => {
  const root = scratch();
  const writer = (who) => `
    import { FileStore } from ${JSON.stringify(STORE_MODULE)};
    const store = new FileStore({ root: ${JSON.stringify(root)} });
    const results = await Promise.allSettled(Array.from({ length: 30 }, (_, i) => store.put('s', 'k' + i, '${who} '.repeat(20000))));
    process.stdout.write(JSON.stringify(results.map((r) => r.status === 'fulfilled' ? 'ok' : r.reason.code)));
  `;
  const run = (who) => new Promise((done) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', writer(who)], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d) => { out += d; });
    child.on('exit', () => done(JSON.parse(out)));
  });
  const [a, b] = await Promise.all([run('a'), run('b')]);
  const store = new FileStore({ root });
  for (let i = 0; i < 30; i++) {
    const text = await store.get('s', `k${i}`);
    const winner = text === 'a '.repeat(20000) ? 'a' : 'b';
    assert.equal(text, `${winner} `.repeat(20000));
    assert.deepEqual([a[i], b[i]], winner === 'a' ? ['ok', 'STORE_REFUSED'] : ['STORE_REFUSED', 'ok'], `k${i}`);
  }
});
