// The playground's pure modules and its static server, without a browser.
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { after, before, test } from 'node:test';
import { cliCall } from '../../www/export.js';
import { classifyInput } from '../../www/input.js';
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
  const sample = await get('/sample-trajectory.json');
  assert.equal(sample.status, 200);
  assert.ok(Array.isArray(JSON.parse(sample.body).steps));
  assert.match((await get('/app.js')).type, /^text\/javascript/);
  // The worker imports the bench's grounding module: browser-safe (no node: imports).
  const grounding = await get('/grounding.js');
  assert.equal(grounding.status, 200);
  assert.match(grounding.type, /^text\/javascript/);
  assert.match(grounding.body, /export function extractFacts/);
  assert.doesNotMatch(grounding.body, /from ['"]node:/);
  assert.equal((await get('/bench/harness.mjs')).status, 404, 'only that one bench file is served');
  const wasm = await get('/pkg/tracelite_bg.wasm');
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
