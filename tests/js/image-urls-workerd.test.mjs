// The Worker example with IMAGE_BASE_URL in real workerd (Miniflare 4, a
// Durable Object store): snapshots go upstream as signed URLs, the provider's
// fetch of each gets the PNG, a forged signature gets 403.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { compress } from '../../pkg/entries/node.js';
import { bundleWorker, projectWithPkg, root, startUpstream, startWorker } from './support/hosts.mjs';

const WORKER = readFileSync(join(root, 'pkg-config/examples/cloudflare-worker/worker.js'), 'utf8');
const PROXY_SECRET = 'image-workerd-secret-7a6b5c4d3e2f1a0b9c8d';
const BASE = 'https://proxy.test';
// Fixed batches and only the optical stage: 7 dense outputs give 3 snapshots.
const OPTIONS = {
  spill: { enabled: false }, dedup: { enabled: false }, phase: { enabled: false },
  compact: { enabled: false }, plan: { enabled: false },
};

function dense(seed) {
  let out = '';
  for (let i = 0; i < 40; i++) {
    const n = seed * 131 + i * 17;
    out += `    self.assertEqual(obj_${n % 97}.get_${n % 13}(x[${n % 7}], y=${n % 29}), {'k${n % 11}': [${n % 5}, ${n % 3}]})  # case ${i}\n`;
  }
  return out;
}

const messages = [{ role: 'system', content: 'You are a coding agent.' }, { role: 'user', content: 'Fix it.' }];
for (let i = 0; i < 7; i++) {
  messages.push({ role: 'assistant', content: null, tool_calls: [{ id: `c${i}`, type: 'function', function: { name: 'bash', arguments: '{}' } }] });
  messages.push({ role: 'tool', tool_call_id: `c${i}`, content: dense(i) });
}
const body = { model: 'gpt-4o', messages };

let upstream;
let mf;

before(async () => {
  upstream = await startUpstream(() => ({ headers: { 'content-type': 'application/json' }, chunks: ['{"id":"ok"}'] }));
  mf = await startWorker(await bundleWorker(projectWithPkg('tracelite-images-'), WORKER), {
    durableObjects: { SPILL_OBJECTS: 'TraceLiteSpillObject' },
    bindings: {
      UPSTREAM: upstream.url,
      TRACELITE_OPTIONS: JSON.stringify(OPTIONS),
      TRACELITE_SECRET: PROXY_SECRET,
      IMAGE_BASE_URL: BASE,
    },
  });
});

after(async () => {
  await mf?.dispose();
  await upstream?.close();
});

test('workerd: the Worker example with IMAGE_BASE_URL sends signed image URLs and serves them from its Durable Object store', async () => {
  const res = await mf.dispatchFetch(`${BASE}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer sk-tenant' },
    body: JSON.stringify(body),
  });
  assert.equal(res.status, 200);
  await res.text();
  assert.equal(res.headers.get('x-tracelite-images'), '3 by url');
  const sent = upstream.received.at(-1).body;
  const [received, forwarded] = res.headers.get('x-tracelite-bytes').split('->').map(Number);
  assert.equal(received, Buffer.byteLength(JSON.stringify(body)));
  assert.equal(forwarded, Buffer.byteLength(sent));
  const urls = JSON.parse(sent).messages.flatMap((m) => (Array.isArray(m.content) ? m.content : [])).map((p) => p.image_url.url);
  assert.equal(urls.length, 3);
  const pngs = compress(body, { ...OPTIONS, format: 'openai-chat' }).request.messages
    .flatMap((m) => (Array.isArray(m.content) ? m.content : [])).map((p) => p.image_url.url.replace('data:image/png;base64,', ''));
  for (const url of urls) {
    assert.match(url, /^https:\/\/proxy\.test\/image\/conv-[0-9a-f]{32}\/[0-9a-f]{32}\.png\?sig=[A-Za-z0-9_-]{43}$/);
    const image = await mf.dispatchFetch(url);
    assert.equal(image.status, 200);
    assert.equal(image.headers.get('content-type'), 'image/png');
    assert.ok(pngs.includes(Buffer.from(await image.arrayBuffer()).toString('base64')));
    const forged = await mf.dispatchFetch(url.replace(/sig=.*/, `sig=${'A'.repeat(43)}`));
    assert.equal(forged.status, 403);
    assert.equal((await forged.json()).error.code, 'INVALID_IMAGE_SIGNATURE');
  }
});
