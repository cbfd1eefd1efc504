// The playground's pure modules and its static server, without a browser.
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { after, before, test } from 'node:test';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { niceTicks, stepTicks } from '../../www/charts.js';
import { cliCall, jsCall } from '../../www/export.js';
import { spillOrder, uniqueMatches } from '../../www/spill-matches.js';
import { doneStatus } from '../../www/status.js';
import { classifyInput } from '../../www/input.js';
import { SAMPLE_OPTIONS } from '../../www/options.js';
import { startServer } from '../../www/serve.mjs';

test('classifyInput tells trajectories from provider requests and explains bad input', () => {
  const tr = classifyInput(JSON.stringify({ id: 'x', task: 't', steps: [{ tool: 'bash' }] }));
  assert.equal(tr.kind, 'trajectory');
  assert.equal(tr.steps, 1);
  assert.equal(classifyInput('{"messages":[]}', 'req.json').kind, 'request');
  assert.equal(classifyInput('{"contents":[]}', 'g.json').kind, 'request');
  assert.throws(() => classifyInput('', 'a'), /empty/);
  assert.throws(() => classifyInput('{', 'a.json'), /a.json is not JSON/);
  assert.throws(() => classifyInput('[1]', 'a.json'), /must be a JSON object/);
});

test('cliCall quotes options for a POSIX shell', () => {
  assert.equal(cliCall('trajectory', {}, 'a b.json'), "npx tracelite replay --json 'a b.json'");
  assert.equal(
    cliCall('trajectory', { compact: { pinned: ["don't"] } }, 't.json'),
    `npx tracelite replay --json 't.json' --options '{"compact":{"pinned":["don'\\''t"]}}'`,
  );
  assert.match(cliCall('request', { budget: 16000 }, 'r.json'), /^npx tracelite compress 'r.json' --options '\{"budget":16000\}' --report$/);
});

test('chart ticks are round, evenly spaced and cover the data', () => {
  assert.deepEqual(niceTicks(123456), [0, 50000, 100000, 150000]);
  assert.deepEqual(niceTicks(0.37), [0, 0.1, 0.2, 0.3, 0.4]);
  assert.deepEqual(niceTicks(7), [0, 2, 4, 6, 8]);
  assert.deepEqual(niceTicks(0), [0, 1]);
  assert.deepEqual(stepTicks(13), [0, 2, 4, 6, 8, 10, 12]);
  assert.deepEqual(stepTicks(22), [0, 5, 10, 15, 20]);
  assert.deepEqual(stepTicks(3), [0, 1, 2]);
  assert.deepEqual(stepTicks(1), [0]);
  for (let n = 2; n < 500; n += 7) {
    const t = stepTicks(n);
    assert.ok(t.length <= 8 && t.at(-1) <= n - 1 && t.at(-1) + (t[1] - t[0]) > n - 1, `n=${n}: ${t}`);
  }
});

test('grep over every blob lists each matching line once, at the most direct blob', () => {
  assert.deepEqual(spillOrder(['compact-1', 'snapshot-2', 'tool-3', 'phase-4', 'other-5', 'tool-0']),
    ['tool-0', 'tool-3', 'phase-4', 'snapshot-2', 'compact-1', 'other-5']);
  const found = [
    { key: 'tool-a', totalMatches: 3, matches: [{ line: 5, text: 'ERROR x' }, { line: 9, text: 'ERROR x' }, { line: 12, text: 'ERROR y' }] },
    { key: 'snapshot-b', totalMatches: 1, matches: [{ line: 2, text: 'ERROR y' }] },
    { key: 'compact-c', totalMatches: 2, matches: [{ line: 40, text: 'ERROR x' }, { line: 41, text: 'ERROR z' }] },
  ];
  const r = uniqueMatches(found);
  assert.deepEqual(r.matches.map((m) => `${m.key}:${m.line}`), ['tool-a:5', 'tool-a:9', 'tool-a:12', 'compact-c:41']);
  assert.deepEqual(r.matches[0].also, [{ key: 'compact-c', line: 40 }]);
  assert.deepEqual(r.matches[2].also, [{ key: 'snapshot-b', line: 2 }]);
  assert.equal(r.total, 4);
  assert.equal(r.copies, 2);
  assert.equal(uniqueMatches(found, 2).truncated, true);
});

test('the status line names the request format and the provider\'s own format', () => {
  const summary = { steps: 13, baseline_tokens: 120000, compressed_tokens: 60000, reduction: 0.5 };
  assert.equal(doneStatus('trajectory', 'openai-chat', 'openai', summary),
    'Replayed 13 steps as OpenAI Chat Completions requests for openai (its own format): 120,000 → 60,000 tokens, 50.0% less.');
  assert.match(doneStatus('trajectory', 'openai-chat', 'anthropic', summary), /for anthropic \(its own format is Anthropic Messages\)/);
  assert.match(doneStatus('request', 'gemini', 'gemini', summary), /^Compressed the Gemini generateContent request for gemini \(its own format\)/);
});

test('the exported JS is a valid module importing the npm package by name', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tracelite-jscall-'));
  try {
    for (const [kind, options] of [['trajectory', {}], ['trajectory', { budget: 16000, compact: { pinned: ["don't `x` ${y}"] } }], ['request', { format: 'anthropic' }]]) {
      const code = jsCall(kind, options, 'sess-1', "it's a file.json");
      assert.match(code, /^import \{ [^}]+ \} from 'tracelite';$/m);
      assert.doesNotMatch(code, /from '\.{0,2}\//);
      const file = join(dir, `${kind}.mjs`);
      writeFileSync(file, code);
      execFileSync(process.execPath, ['--check', file]);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

let server;
let base;
before(async () => {
  ({ server, url: base } = await startServer({ port: 0 }));
});
after(() => new Promise((resolve) => server.close(resolve)));

function get(path) {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    // A raw path (no URL normalisation) so traversal attempts reach the server as sent.
    const req = request({ host: url.hostname, port: url.port, path, method: 'GET' }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c) => { body += c; });
      res.on('end', () => resolve({ status: res.statusCode, type: res.headers['content-type'], body }));
    });
    req.on('error', reject);
    req.end();
  });
}

test('the static server listens on 127.0.0.1 and serves www/, the sample and pkg/', async () => {
  assert.equal(server.address().address, '127.0.0.1');
  const index = await get('/');
  assert.equal(index.status, 200);
  assert.match(index.type, /^text\/html/);
  assert.match(index.body, /TraceLite playground/);
  const sample = await get('/demo-session.json');
  assert.equal(sample.status, 200);
  assert.ok(Array.isArray(JSON.parse(sample.body).steps));
  assert.match((await get('/app.js')).type, /^text\/javascript/);
  // The worker's fact view (www/facts.js): browser-safe (no node: imports); no bench file is served.
  const facts = await get('/facts.js');
  assert.equal(facts.status, 200);
  assert.match(facts.type, /^text\/javascript/);
  assert.match(facts.body, /export function extractFacts/);
  assert.doesNotMatch(facts.body, /from ['"]node:/);
  assert.equal((await get('/grounding.js')).status, 404, 'the bench module is not served');
  assert.equal((await get('/bench/harness.mjs')).status, 404, 'no bench file is served');
  const wasm = await get('/pkg/wasm/tracelite_bg.wasm');
  assert.equal(wasm.status, 200, 'pkg/ is built (make pkg)');
  assert.equal(wasm.type, 'application/wasm');
});

test('the static server refuses paths outside www/ and pkg/', async () => {
  for (const path of ['/../Cargo.toml', '/%2e%2e/Cargo.toml', '/pkg/../../Cargo.toml', '/pkg/%2e%2e/Cargo.toml', '/..%2fCargo.toml', '/%00']) {
    const res = await get(path);
    assert.ok(res.status === 404 || res.status === 400, `${path} → ${res.status}`);
    assert.doesNotMatch(res.body, /\[package\]/, path);
  }
  assert.equal((await get('/nope.js')).status, 404);
});

test('the sample opens at the settings of `make demo` (Makefile DEMO_ARGS)', () => {
  const makefile = readFileSync(new URL('../../Makefile', import.meta.url), 'utf8');
  const args = /^DEMO_ARGS := (.+)$/m.exec(makefile)?.[1].trim().split(/\s+/) ?? [];
  const fromMake = {};
  for (let i = 0; i < args.length; i += 2) {
    const v = args[i + 1];
    fromMake[args[i].replace(/^--/, '')] = Number.isFinite(Number(v)) ? Number(v) : v;
  }
  assert.deepEqual({ ...SAMPLE_OPTIONS }, fromMake);
});

test('the prompt view reads no provider format: it shows the neutral conversation the core exports', () => {
  const www = (f) => readFileSync(new URL(`../../www/${f}`, import.meta.url), 'utf8');
  // Members only a provider format has (Chat, Responses, Anthropic, Gemini).
  const providerMembers = /tool_calls|tool_call_id|function_call_output|tool_use|input_image|image_url|functionCall|functionResponse|inline_data|inlineData|systemInstruction|\.contents\b/;
  for (const file of ['prompt-view.js', 'app.js']) assert.doesNotMatch(www(file), providerMembers, file);
  assert.match(www('worker.js'), /requestConversation\(/, 'the worker asks the core for the conversation');
});
