// Snapshots sent by URL: the core option `optical.imageUrl` through the wasm
// API (result shape, report, validation, the stateful class), and the edge
// proxy's `imageBaseUrl` in Node: signed image URLs upstream, the image route
// (as the provider fetches it, and as an attacker tries it), the store limits
// and bytes in/out.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { TraceLite, compress } from '../../pkg/entries/node.js';
import { KvSpillStore } from '../../pkg/adapters/kv-store/index.js';
import { IMAGE_CACHE_CONTROL, createProxy, sessionSigner } from '../../pkg/adapters/proxy/index.js';

const TEMPLATE = 'https://img.example.com/i/{id}.png';
// Fixed batches and only the optical stage, so 7 outputs give 3 snapshots.
const OPTIONS = {
  provider: 'openai',
  // A model that reads images (optical.enabled 'auto'); the TraceLite class's history names none.
  model: 'gpt-4o',
  spill: { enabled: false },
  dedup: { enabled: false },
  phase: { enabled: false },
  compact: { enabled: false },
  plan: { enabled: false },
};
const SECRET = 'image-url-test-secret-0f9e8d7c6b5a4321';

/** Dense, code-like output: renders well below half its text tokens. */
function dense(seed) {
  let out = '';
  for (let i = 0; i < 40; i++) {
    const n = seed * 131 + i * 17;
    out += `    self.assertEqual(obj_${n % 97}.get_${n % 13}(x[${n % 7}], y=${n % 29}), {'k${n % 11}': [${n % 5}, ${n % 3}]})  # case ${i}\n`;
  }
  return out;
}

function chat(n = 7) {
  const messages = [{ role: 'system', content: 'You are a coding agent.' }, { role: 'user', content: 'Fix the failing test.' }];
  for (let i = 0; i < n; i++) {
    messages.push({ role: 'assistant', content: null, tool_calls: [{ id: `call_${i}`, type: 'function', function: { name: 'bash', arguments: `{"command":"cat f${i}.py"}` } }] });
    messages.push({ role: 'tool', tool_call_id: `call_${i}`, content: dense(i) });
  }
  return { model: 'gpt-4o', messages };
}

function anthropic(n = 7) {
  const messages = [{ role: 'user', content: 'Fix the failing test.' }];
  for (let i = 0; i < n; i++) {
    messages.push({ role: 'assistant', content: [{ type: 'tool_use', id: `tu_${i}`, name: 'bash', input: { command: `cat f${i}.py` } }] });
    messages.push({ role: 'user', content: [{ type: 'tool_result', tool_use_id: `tu_${i}`, content: dense(i) }] });
  }
  return { model: 'claude-test', max_tokens: 100, system: 'You are a coding agent.', messages };
}

/** Image URLs of an openai-chat request. */
const chatUrls = (request) => request.messages.flatMap((m) => (Array.isArray(m.content) ? m.content : []))
  .filter((p) => p.type === 'image_url').map((p) => p.image_url.url);

test('compress with optical.imageUrl: URL parts, the images to serve, the report, same tokens', () => {
  const inline = compress(chat(), OPTIONS);
  const out = compress(chat(), { ...OPTIONS, optical: { imageUrl: TEMPLATE } });
  assert.deepEqual(inline.images, []);
  assert.equal(inline.report.imageUrls, undefined);
  const urls = chatUrls(out.request);
  assert.equal(urls.length, 3);
  assert.deepEqual(out.images.map((i) => i.url), urls);
  for (const image of out.images) {
    assert.deepEqual(Object.keys(image).sort(), ['bytes', 'data', 'height', 'id', 'mediaType', 'url', 'width']);
    assert.match(image.id, /^[0-9a-f]{32}$/);
    assert.equal(image.url, TEMPLATE.replace('{id}', image.id));
    assert.equal(image.mediaType, 'image/png');
    const png = Buffer.from(image.data, 'base64');
    assert.equal(png.length, image.bytes);
    assert.equal(png.subarray(1, 4).toString(), 'PNG');
    assert.ok(chatUrls(inline.request).includes(`data:image/png;base64,${image.data}`), 'the same pixels as inline');
  }
  assert.equal(out.report.tokensAfter, inline.report.tokensAfter);
  assert.equal(out.report.bytesBefore, inline.report.bytesBefore);
  assert.equal(out.report.bytesAfter, Buffer.byteLength(JSON.stringify(out.request)));
  assert.ok(out.report.bytesAfter < inline.report.bytesAfter);
  assert.deepEqual(out.report.imageUrls, { urls: 3, images: 3, bytes: out.images.reduce((s, i) => s + i.bytes, 0), inline: 0 });
  // Deterministic: the same request gives the same bytes (prompt caches hold).
  assert.deepEqual(compress(chat(), { ...OPTIONS, optical: { imageUrl: TEMPLATE } }).request, out.request);
});

test('optical.imageUrl is checked: INVALID_OPTION naming the field', () => {
  for (const imageUrl of ['http://img.example.com/{id}', 'https://img.example.com/x.png', 'https://a b/{id}', 7]) {
    assert.throws(() => compress(chat(1), { optical: { imageUrl } }), (err) => err.code === 'INVALID_OPTION' && err.path === 'optical.imageUrl', String(imageUrl));
  }
});

test('gemini keeps its snapshots inline, and the report says why', () => {
  const gemini = {
    contents: [
      { role: 'user', parts: [{ text: 'Fix the failing test.' }] },
      ...Array.from({ length: 7 }, (_, i) => [
        { role: 'model', parts: [{ functionCall: { name: 'bash', args: { command: `cat f${i}.py` } } }] },
        { role: 'user', parts: [{ functionResponse: { name: 'bash', response: { output: dense(i) } } }] },
      ]).flat(),
    ],
  };
  const g = compress(gemini, { ...OPTIONS, provider: 'gemini', model: 'gemini-2.5-pro', optical: { imageUrl: TEMPLATE } });
  assert.deepEqual(g.images, []);
  assert.ok(g.report.imageUrls.inline > 0, JSON.stringify(g.report.imageUrls));
  assert.match(g.report.imageUrls.note, /gemini/);
  assert.ok(JSON.stringify(g.request).includes('inlineData'));
});

test('the TraceLite class gives the images of its last assemble', () => {
  const tl = new TraceLite({ ...OPTIONS, optical: { imageUrl: TEMPLATE } });
  try {
    tl.addMessage({ role: 'system', content: 'You are a coding agent.' });
    tl.addMessage({ role: 'user', content: 'Fix the failing test.' });
    for (let i = 0; i < 7; i++) {
      tl.processStep({ id: `c${i}`, name: 'bash', arguments: `{"command":"cat f${i}.py"}` }, dense(i));
    }
    const request = tl.assemble('openai-chat');
    assert.equal(tl.lastImages.length, 3);
    assert.deepEqual(chatUrls(request), tl.lastImages.map((i) => i.url));
  } finally {
    tl.free();
  }
});

// ------------------------------------------------------------------ proxy

/** A proxy in front of a stub provider that records what it received. */
function proxyWith(config = {}) {
  const received = [];
  const proxy = createProxy({
    upstream: 'https://api.test',
    options: OPTIONS,
    secret: SECRET,
    imageBaseUrl: 'https://proxy.example.com/tl/',
    fetch: async (req) => {
      received.push({ url: req.url, body: await req.text() });
      return new Response('{"id":"ok"}', { headers: { 'content-type': 'application/json' } });
    },
    ...config,
  });
  return { proxy, received };
}

function post(proxy, body, headers = {}, path = '/v1/chat/completions') {
  return proxy(new Request(`https://proxy.example.com${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer sk-tenant-a', ...headers },
    body: JSON.stringify(body),
  }));
}

const get = (proxy, url, init = {}) => proxy(new Request(url, init));
const IMAGE_URL = /^https:\/\/proxy\.example\.com\/tl\/image\/([A-Za-z0-9._-]+)\/([0-9a-f]{32})\.png\?sig=([A-Za-z0-9_-]{43})$/;

test('proxy imageBaseUrl: snapshots go upstream as signed URLs the provider can fetch', async () => {
  const { proxy, received } = proxyWith();
  const body = chat();
  const res = await post(proxy, body);
  assert.equal(res.status, 200);
  await res.text();
  const sent = JSON.parse(received[0].body);
  const urls = chatUrls(sent);
  assert.equal(urls.length, 3);
  assert.ok(!received[0].body.includes('base64'), 'no inline image left');
  assert.equal(res.headers.get('x-tracelite-images'), '3 by url');
  // Bytes in and out: what the client sent, what went upstream.
  const [inBytes, outBytes] = res.headers.get('x-tracelite-bytes').split('->').map(Number);
  assert.equal(inBytes, Buffer.byteLength(JSON.stringify(body)));
  assert.equal(outBytes, Buffer.byteLength(received[0].body));
  const session = res.headers.get('x-tracelite-session').replace(/(\.[0-9a-f]{32})?\.[^.]*$/, '');
  const inline = compress(body, { ...OPTIONS, format: 'openai-chat' });
  const pngs = chatUrls(inline.request).map((u) => u.replace('data:image/png;base64,', ''));
  for (const url of urls) {
    const [, s, id] = IMAGE_URL.exec(url);
    assert.equal(s, session);
    // The provider fetches it: no session header, no credentials.
    const image = await get(proxy, url);
    assert.equal(image.status, 200);
    assert.equal(image.headers.get('content-type'), 'image/png');
    assert.equal(image.headers.get('cache-control'), IMAGE_CACHE_CONTROL);
    assert.equal(image.headers.get('etag'), `"${id}"`);
    assert.equal(image.headers.get('x-content-type-options'), 'nosniff');
    const bytes = Buffer.from(await image.arrayBuffer());
    assert.equal(Number(image.headers.get('content-length')), bytes.length);
    assert.ok(pngs.includes(bytes.toString('base64')), 'the PNG the inline request would carry');
    const head = await get(proxy, url, { method: 'HEAD' });
    assert.equal(head.status, 200);
    assert.equal((await head.arrayBuffer()).byteLength, 0);
    const again = await get(proxy, url, { headers: { 'if-none-match': `"${id}"` } });
    assert.equal(again.status, 304);
  }
  // The next turn sends the same bytes: URLs and signatures are stable (prompt caches hold).
  await (await post(proxy, body)).text();
  assert.equal(received[1].body, received[0].body);
  // The image route is the proxy's own: nothing went upstream for it.
  assert.equal(received.length, 2);
});

test('proxy imageBaseUrl: anthropic gets url sources, signed', async () => {
  const { proxy, received } = proxyWith({ options: { ...OPTIONS, provider: 'anthropic' } });
  await (await post(proxy, anthropic(), { 'x-api-key': 'sk-ant-a' }, '/v1/messages')).text();
  const sources = [];
  JSON.parse(received[0].body, (k, v) => {
    if (k === 'source') sources.push(v);
    return v;
  });
  assert.ok(sources.length >= 3);
  for (const s of sources) {
    assert.deepEqual(Object.keys(s), ['type', 'url']);
    assert.equal(s.type, 'url');
    assert.match(s.url, IMAGE_URL);
    assert.equal((await get(proxy, s.url)).status, 200);
  }
});

test('proxy image route as an attacker: forged, swapped, foreign and missing signatures are 403; odd paths 404; unknown ids 404', async () => {
  const { proxy, received } = proxyWith();
  const a = await post(proxy, chat());
  await a.text();
  const urls = chatUrls(JSON.parse(received[0].body));
  const [, session, id, sig] = IMAGE_URL.exec(urls[0]);
  const [, , otherId, otherSig] = IMAGE_URL.exec(urls[1]);
  const base = 'https://proxy.example.com/tl/image';
  const expect = async (url, status, code, init) => {
    const res = await get(proxy, url, init);
    assert.equal(res.status, status, url);
    assert.equal(res.headers.get('cache-control'), 'no-store', url);
    const body = await res.json();
    assert.equal(body.error.type, 'tracelite_error', url);
    assert.equal(body.error.code, code, url);
    return body;
  };
  // Missing, empty, forged, truncated signatures.
  const missing = await expect(`${base}/${session}/${id}.png`, 403, 'INVALID_IMAGE_SIGNATURE');
  assert.equal(missing.error.path, 'sig');
  for (const bad of ['', 'A'.repeat(43), sig.slice(0, 42), `${sig}A`, sig.replace(/^./, (c) => (c === 'A' ? 'B' : 'A'))]) {
    await expect(`${base}/${session}/${id}.png?sig=${bad}`, 403, 'INVALID_IMAGE_SIGNATURE');
  }
  // A signature of another image of the same session does not open this one.
  await expect(`${base}/${session}/${id}.png?sig=${otherSig}`, 403, 'INVALID_IMAGE_SIGNATURE');
  await expect(`${base}/${session}/${otherId}.png?sig=${sig}`, 403, 'INVALID_IMAGE_SIGNATURE');
  // Another tenant (same prompt, another key) gets another session: its signature does not open A's image.
  await (await post(proxy, chat(), { authorization: 'Bearer sk-tenant-b' })).text();
  const [, sessionB, idB, sigB] = IMAGE_URL.exec(chatUrls(JSON.parse(received[1].body))[0]);
  assert.notEqual(sessionB, session);
  assert.equal(idB, id, 'same pixels, same id');
  await expect(`${base}/${session}/${id}.png?sig=${sigB}`, 403, 'INVALID_IMAGE_SIGNATURE');
  await expect(`${base}/${sessionB}/${id}.png?sig=${sig}`, 403, 'INVALID_IMAGE_SIGNATURE');
  // A signature made with another deployment's secret, and the session token as a signature.
  const foreign = await sessionSigner('another-deployment-secret-0123456789ab').imageSignature(session, id);
  await expect(`${base}/${session}/${id}.png?sig=${foreign}`, 403, 'INVALID_IMAGE_SIGNATURE');
  const tokenSig = a.headers.get('x-tracelite-session').split('.').at(-1);
  await expect(`${base}/${session}/${id}.png?sig=${tokenSig}`, 403, 'INVALID_IMAGE_SIGNATURE');
  // Traversal and odd ids never reach a store or the provider.
  const n = received.length;
  for (const path of [
    `${session}/../${id}.png`,
    `${session}/${id.toUpperCase()}.png`,
    `${session}/${id}`,
    `${session}/${id}.png/x`,
    `${session}/${id.slice(1)}.png`,
    `${session}/${id}0.png`,
    `${session}/${'0'.repeat(100000)}.png`,
    `${'s'.repeat(129)}/${id}.png`,
    `..-x/${id}.png`,
    `${session}/${id}.png%00`,
    '',
  ]) {
    await expect(`${base}/${path}?sig=${sig}`, 404, 'NOT_FOUND');
  }
  // An encoded slash the upstream may read as one: refused before any route (issue 39 item 4).
  for (const path of [`..%2f${session}/${id}.png`, `${session}/..%2f${id}.png`]) {
    await expect(`${base}/${path}?sig=${sig}`, 400, 'INVALID_PATH');
  }
  assert.equal(received.length, n, 'nothing forwarded');
  // Correctly signed, but never stored (or expired): 404 IMAGE_NOT_FOUND.
  const signer = sessionSigner(SECRET);
  const ghost = 'f'.repeat(32);
  await expect(`${base}/${session}/${ghost}.png?sig=${await signer.imageSignature(session, ghost)}`, 404, 'IMAGE_NOT_FOUND');
  const nobody = 'nobody-0123';
  await expect(`${base}/${nobody}/${id}.png?sig=${await signer.imageSignature(nobody, id)}`, 404, 'IMAGE_NOT_FOUND');
  // The genuine URL still works.
  assert.equal((await get(proxy, urls[0])).status, 200);
});

/** A KV namespace in memory (get, getWithMetadata, put, list) that counts writes. */
function memoryKv() {
  const map = new Map();
  return {
    map,
    writes: 0,
    async get(name) {
      return map.get(name)?.value ?? null;
    },
    async getWithMetadata(name) {
      const e = map.get(name);
      return { value: e?.value ?? null, metadata: e?.metadata ?? null };
    },
    async put(name, value, { metadata } = {}) {
      this.writes++;
      map.set(name, { value, metadata });
    },
  };
}

test('proxy imageBaseUrl with KV: images stored under image-<id> of the session, checked against their key; cannot be overwritten', async () => {
  const kv = memoryKv();
  const store = new KvSpillStore(kv);
  const { proxy, received } = proxyWith({ store });
  const res = await post(proxy, chat());
  await res.text();
  const session = res.headers.get('x-tracelite-session').replace(/(\.[0-9a-f]{32})?\.[^.]*$/, '');
  const urls = chatUrls(JSON.parse(received[0].body));
  for (const url of urls) {
    const [, , id] = IMAGE_URL.exec(url);
    assert.ok(kv.map.has(`tracelite/${session}/image-${id}`));
    const image = await get(proxy, url);
    assert.equal(image.status, 200);
    // Nobody can put other bytes under the image's key: refused, the original stays.
    await assert.rejects(store.put(session, `image-${id}`, Buffer.from('not the image').toString('base64')), (err) => err.code === 'SPILL_CORRUPT');
  }
  // A tampered value in KV is refused on the way out, not served.
  const [, , id] = IMAGE_URL.exec(urls[0]);
  kv.map.get(`tracelite/${session}/image-${id}`).value = Buffer.from('tampered').toString('base64');
  const tampered = await get(proxy, urls[0]);
  assert.equal(tampered.status, 503);
  assert.equal((await tampered.json()).error.code, 'SPILL_CORRUPT');
});

test('proxy imageBaseUrl: images count against maxStoreWrites; over it the snapshots go inline', async () => {
  const kv = memoryKv();
  // 3 snapshot texts (the spills behind the pointers) + 3 images > 4.
  const { proxy, received } = proxyWith({ store: new KvSpillStore(kv), maxStoreWrites: 4 });
  const res = await post(proxy, chat());
  assert.equal(res.status, 200);
  await res.text();
  assert.equal(res.headers.get('x-tracelite-images'), 'inline; STORE_WRITE_LIMIT');
  assert.equal(res.headers.get('x-tracelite-skipped'), null, 'still compressed');
  const sent = JSON.parse(received[0].body);
  const urls = chatUrls(sent);
  assert.equal(urls.length, 3);
  for (const url of urls) assert.match(url, /^data:image\/png;base64,/);
  assert.ok(kv.writes <= 4, `${kv.writes} writes`);
});

test('proxy imageBaseUrl: a store that fails keeps the snapshots inline, never a URL to nothing', async () => {
  const store = {
    async get() { throw new Error('down'); },
    async put(session, key) {
      if (key.startsWith('image-')) throw new Error('quota');
      return true;
    },
  };
  const { proxy, received } = proxyWith({ store });
  const res = await post(proxy, chat());
  await res.text();
  assert.equal(res.headers.get('x-tracelite-images'), 'inline; STORE_FAILED');
  assert.ok(!received[0].body.includes('/image/'));
  assert.ok(received[0].body.includes('data:image/png;base64,'));
});

test('proxy imageBaseUrl: checked at start-up', () => {
  for (const imageBaseUrl of ['http://proxy.example.com', 'proxy.example.com', 'https://u:p@proxy.example.com', 'https://proxy.example.com/?x=1', 'ftp://proxy.example.com']) {
    assert.throws(() => createProxy({ upstream: 'https://api.test', imageBaseUrl }), (err) => err.code === 'INVALID_OPTION' && err.path === 'imageBaseUrl', imageBaseUrl);
  }
  assert.throws(
    () => createProxy({ upstream: 'https://api.test', options: { optical: { imageUrl: TEMPLATE } } }),
    (err) => err.code === 'INVALID_OPTION' && err.path === 'options.optical.imageUrl',
  );
  assert.equal(typeof createProxy({ upstream: 'https://api.test', imageBaseUrl: 'http://localhost:8787' }), 'function');
});

test('proxy without imageBaseUrl: snapshots inline, /image/ is not served, bytes still reported', async () => {
  const { proxy, received } = proxyWith({ imageBaseUrl: undefined });
  const body = chat();
  const res = await post(proxy, body);
  await res.text();
  assert.equal(res.headers.get('x-tracelite-images'), null);
  assert.ok(chatUrls(JSON.parse(received[0].body)).every((u) => u.startsWith('data:image/png;base64,')));
  const [inBytes, outBytes] = res.headers.get('x-tracelite-bytes').split('->').map(Number);
  assert.equal(inBytes, Buffer.byteLength(JSON.stringify(body)));
  assert.equal(outBytes, Buffer.byteLength(received[0].body));
  // Anything else is forwarded, as before.
  await (await get(proxy, 'https://proxy.example.com/tl/image/x/y.png')).text();
  assert.equal(received.at(-1).url, 'https://api.test/tl/image/x/y.png');
});
