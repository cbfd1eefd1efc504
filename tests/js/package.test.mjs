// The npm package as users get it: `npm pack` of pkg/, installed offline from
// the tarball into a fresh project, then imported in Node (ESM), in Chromium
// (playwright-core, Debian's /usr/bin/chromium) and in workerd (bundled the way
// wrangler does, run by Miniflare 4).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { extname, join, normalize } from 'node:path';
import { gzipSync } from 'node:zlib';
import { chromium } from 'playwright-core';
import { bundleWorker, pkgDir, root, startWorker } from './support/hosts.mjs';
import { readmeSnippets, suiteOf } from './support/readme-snippets.mjs';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const REQUEST = {
  model: 'm',
  messages: [
    { role: 'system', content: 'You fix bugs.' },
    { role: 'user', content: 'Fix it.' },
    { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'bash', arguments: '{"cmd":"pytest"}' } }] },
    { role: 'tool', tool_call_id: 'c1', content: Array.from({ length: 3000 }, (_, i) => `test_${i} PASSED`).join('\n') },
  ],
};

let work;
let project;
let packed;

before(() => {
  work = mkdtempSync(join(tmpdir(), 'tracelite-package-'));
  const [info] = JSON.parse(execFileSync('npm', ['pack', pkgDir, '--json', '--pack-destination', work], { encoding: 'utf8' }));
  packed = info;
  project = join(work, 'app');
  mkdirSync(project);
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'app', private: true, type: 'module' }));
  // --offline: the install must not need the network (no dependencies, no scripts, no downloads).
  execFileSync('npm', ['install', '--offline', '--no-audit', '--no-fund', join(work, info.filename)], { cwd: project, stdio: 'pipe' });
  // The optional peers `ai`, `langchain` and `@openai/agents`, for the ai-sdk, langchain and
  // openai-agents entries: the copies this repo installed.
  symlinkSync(join(root, 'node_modules', 'ai'), join(project, 'node_modules', 'ai'), 'dir');
  symlinkSync(join(root, 'node_modules', 'langchain'), join(project, 'node_modules', 'langchain'), 'dir');
  mkdirSync(join(project, 'node_modules', '@openai'));
  symlinkSync(join(root, 'node_modules', '@openai', 'agents'), join(project, 'node_modules', '@openai', 'agents'), 'dir');
  // ai's types (which the ai-sdk entry's types are) name Node's http and Buffer: an AI SDK
  // TypeScript project has @types/node.
  mkdirSync(join(project, 'node_modules', '@types'));
  symlinkSync(join(root, 'node_modules', '@types', 'node'), join(project, 'node_modules', '@types', 'node'), 'dir');
});

after(() => {
  rmSync(work, { recursive: true, force: true });
});

test('the tarball ships the entries, the wasm and the types, and nothing runs at install', (t) => {
  const files = packed.files.map((f) => f.path).sort();
  for (const f of [
    'package.json', 'README.md', 'wasm/tracelite_bg.wasm', 'wasm/tracelite.js',
    'entries/node.js', 'entries/browser.js', 'entries/workerd.js', 'entries/edge.js', 'entries/deno.js',
    'core/api.js', 'core/index.d.ts', 'cli/index.mjs',
    'core/spill-reader.js', 'core/stores.js', 'internal/framework.js', 'internal/blob-keys.js', 'internal/lru.js', 'internal/quota.js', 'internal/quota.d.ts', 'core/stats.js',
    ...['ai-sdk', 'proxy', 'kv-store', 'langchain', 'openai-agents', 'do-store', 'file-store', 'redis-store'].flatMap((a) => [`adapters/${a}/index.js`, `adapters/${a}/index.d.ts`]),
    'adapters/proxy/tools.js', 'adapters/file-store/unsupported.js', 'adapters/redis-store/scripts.js', 'adapters/redis-store/connection.js',
  ]) assert.ok(files.includes(f), `${f} missing from the tarball: ${files.join(' ')}`);
  // The playground's and the bench's fact and legibility modules (www/) run in no package path: not shipped.
  for (const f of ['facts.js', 'legibility.js']) assert.ok(!files.some((p) => p.endsWith(f)), `${f} in the tarball: ${files.join(' ')}`);
  // Every file the manifest names (exports, #entry, main, types, bin, sideEffects) is in the tarball.
  const source = JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8'));
  const named = [source.main, source.types, ...Object.values(source.bin), ...source.sideEffects,
    ...[...Object.values(source.exports), ...Object.values(source.imports)].flatMap((e) => (typeof e === 'string' ? [e] : Object.values(e)))];
  for (const f of named) assert.ok(files.includes(f.replace(/^\.\//, '')), `${f} (named in package.json) missing from the tarball`);
  assert.ok(!files.some((f) => f.includes('test')), files.join(' '));
  // The published manifest only: the dev manifest (pkg-config/dev/) and its lock stay in the repository.
  assert.ok(!files.some((f) => f.startsWith('dev/') || f.endsWith('package-lock.json')), files.join(' '));
  const manifest = JSON.parse(readFileSync(join(project, 'node_modules/tracelite/package.json'), 'utf8'));
  assert.equal(manifest.scripts, undefined);
  assert.equal(manifest.dependencies, undefined);
  assert.equal(manifest.devDependencies, undefined);
  assert.deepEqual(Object.keys(manifest.exports['.']), ['types', 'deno', 'workerd', 'edge-light', 'node', 'browser', 'default']);
  // The framework peers are optional: installing the package never pulls them in.
  for (const peer of ['ai', 'langchain', '@openai/agents', 'redis']) assert.deepEqual(manifest.peerDependenciesMeta[peer], { optional: true }, peer);
  const wasm = readFileSync(join(pkgDir, 'wasm/tracelite_bg.wasm'));
  t.diagnostic(`tarball ${packed.size} bytes (unpacked ${packed.unpackedSize}), wasm ${wasm.length} bytes raw, ${gzipSync(wasm, { level: 9 }).length} bytes gzip -9`);
  assert.ok(statSync(join(work, packed.filename)).size === packed.size);
});

test('Node ESM: the root and every subpath import from the installed package', () => {
  writeFileSync(join(project, 'node-check.mjs'), `
    import { compress, version, SpillStore } from 'tracelite';
    import { createProxy } from 'tracelite/proxy';
    import { KvSpillStore } from 'tracelite/kv-store';
    import { traceliteMiddleware, spillTools } from 'tracelite/ai-sdk';
    import * as langchain from 'tracelite/langchain';
    import * as agents from 'tracelite/openai-agents';
    import { FileStore } from 'tracelite/file-store';
    import { RedisStore } from 'tracelite/redis-store';
    const files = new FileStore({ root: 'spills' });
    await files.put('s', 'k', 'kept on disk');
    // The optional peer 'redis' is not installed: { url } says so, typed; a client of one's own needs nothing.
    const viaUrl = await new RedisStore({ url: 'redis://127.0.0.1:1' }).get('s', 'k').catch((err) => err.code + ' ' + err.path);
    const rest = new RedisStore({ client: { eval: async () => null } });
    const viaRest = await rest.get('s', 'k').catch((err) => err.code);
    const store = new SpillStore();
    const { request, report } = compress(${JSON.stringify(REQUEST)}, { store, budget: 8000 });
    console.log(JSON.stringify({
      version: version(), format: report.format, messages: request.messages.length,
      proxy: typeof createProxy({ upstream: 'https://api.example' }),
      kv: typeof KvSpillStore, mw: typeof traceliteMiddleware({}).transformParams,
      tools: Object.keys(spillTools(store)),
      langchain: langchain.spillTools(store).map((t) => t.name), lcMiddleware: typeof langchain.traceliteMiddleware({}).wrapModelCall,
      agents: agents.spillTools(store).map((t) => t.name), filter: typeof agents.traceliteInputFilter({}),
      file: await files.get('s', 'k'),
      redis: [viaUrl, viaRest],
    }));
  `);
  const out = JSON.parse(execFileSync(process.execPath, ['node-check.mjs'], { cwd: project, encoding: 'utf8' }));
  assert.deepEqual(out, {
    version: '0.1.0', format: 'openai-chat', messages: 4, proxy: 'function', kv: 'function', mw: 'function',
    tools: ['read_spill', 'grep_spill'],
    langchain: ['read_spill', 'grep_spill'], lcMiddleware: 'function', agents: ['read_spill', 'grep_spill'], filter: 'function',
    file: 'kept on disk',
    redis: ['INVALID_OPTION url', 'SPILL_NOT_FOUND'],
  });
});

const MIME = { '.html': 'text/html', '.js': 'text/javascript', '.mjs': 'text/javascript', '.wasm': 'application/wasm', '.json': 'application/json' };

test('browser: Chromium loads the package as plain ES modules with an import map', async () => {
  assert.ok(existsSync(CHROMIUM), `Chromium not found at ${CHROMIUM}: apt-get install -y chromium (or set CHROMIUM_PATH)`);
  writeFileSync(join(project, 'index.html'), `<!doctype html>
<script type="importmap">{
  "imports": {
    "tracelite": "/node_modules/tracelite/entries/browser.js",
    "tracelite/proxy": "/node_modules/tracelite/adapters/proxy/index.js",
    "tracelite/kv-store": "/node_modules/tracelite/adapters/kv-store/index.js"
  },
  "scopes": { "/node_modules/tracelite/": { "#entry": "/node_modules/tracelite/entries/browser.js" } }
}</script>
<script type="module">
  import { compress, version, estimateTokens } from 'tracelite';
  import { createProxy } from 'tracelite/proxy';
  import { KvSpillStore } from 'tracelite/kv-store';
  const request = ${JSON.stringify(REQUEST)};
  const { report } = compress(request, { budget: 8000 });
  const proxy = createProxy({ upstream: 'https://api.example', fetch: async (r) => new Response(await r.text()) });
  const echoed = await (await proxy(new Request('https://proxy.example/v1/chat/completions', { method: 'POST', body: JSON.stringify(request) }))).json();
  window.result = { version: version(), tokens: estimateTokens('hello world'), format: report.format,
    echoed: echoed.messages.length, kv: typeof KvSpillStore };
</script>`);
  const server = createServer((req, res) => {
    if (req.url === '/favicon.ico') { res.writeHead(204); res.end(); return; }
    const path = normalize(join(project, decodeURIComponent(new URL(req.url, 'http://x').pathname)));
    if (!path.startsWith(project) || !existsSync(path) || statSync(path).isDirectory()) {
      const index = join(project, 'index.html');
      if (req.url === '/') { res.writeHead(200, { 'content-type': 'text/html' }); res.end(readFileSync(index)); return; }
      res.writeHead(404); res.end(); return;
    }
    res.writeHead(200, { 'content-type': MIME[extname(path)] ?? 'application/octet-stream' });
    res.end(readFileSync(path));
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  try {
    const page = await browser.newPage();
    const errors = [];
    page.on('pageerror', (e) => errors.push(e.message));
    page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
    await page.goto(`http://127.0.0.1:${server.address().port}/`);
    await page.waitForFunction(() => window.result !== undefined, null, { timeout: 20000 })
      .catch((err) => assert.fail(`the page did not finish: ${errors.join('; ') || err.message}`));
    const result = await page.evaluate(() => window.result);
    assert.deepEqual(errors, []);
    assert.equal(result?.version, '0.1.0', JSON.stringify(result));
    assert.equal(result.format, 'openai-chat');
    assert.equal(result.echoed, 4);
    assert.equal(result.kv, 'function');
    assert.ok(result.tokens > 0);
  } finally {
    await browser.close();
    await new Promise((resolve) => server.close(resolve));
  }
});

test('workerd: a worker bundled with the workerd condition imports the installed package', async () => {
  const script = await bundleWorker(project, `
    import { compress, version } from 'tracelite';
    import { createProxy } from 'tracelite/proxy';
    import { KvSpillStore } from 'tracelite/kv-store';
    import { FileStore } from 'tracelite/file-store';
    import { RedisStore } from 'tracelite/redis-store';
    export default {
      async fetch(request, env) {
        const { report } = compress(await request.json(), { budget: 8000 });
        let files;
        try { new FileStore({ root: '/tmp' }); } catch (err) { files = err.code; }
        // A REST client (Upstash's shape) answering nil: the store runs in the isolate.
        const redis = [await new RedisStore({ client: { eval: async () => null } }).get('s', 'k').catch((err) => err.code)];
        // { url } needs node-redis: refused at once here.
        try { new RedisStore({ url: 'redis://127.0.0.1:6379' }); } catch (err) { redis.push(err.code); }
        return Response.json({ version: version(), format: report.format, proxy: typeof createProxy, kv: typeof new KvSpillStore(env.SPILLS).get, files, redis });
      },
    };`);
  const bundled = readFileSync(script, 'utf8');
  assert.match(bundled, /workerd\.js/, 'the workerd entry was chosen');
  assert.ok(!bundled.includes('readFileSync'), 'the Node entry was not bundled');
  const mf = await startWorker(script, { kvNamespaces: ['SPILLS'] });
  try {
    const res = await mf.dispatchFetch('http://w/', { method: 'POST', body: JSON.stringify(REQUEST) });
    assert.deepEqual(await res.json(), { version: '0.1.0', format: 'openai-chat', proxy: 'function', kv: 'function', files: 'UNSUPPORTED_HOST', redis: ['SPILL_NOT_FOUND', 'UNSUPPORTED_HOST'] });
  } finally {
    await mf.dispose();
  }
});

test('Vercel Edge: the edge-light entry (a `?module` wasm import) runs in an isolate that forbids compiling wasm from bytes', async () => {
  const script = await bundleWorker(project, `
    import { compress, version } from 'tracelite';
    export default {
      async fetch(request) {
        let compileRefused = false;
        try { await WebAssembly.compile(new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0])); } catch { compileRefused = true; }
        const { report } = compress(await request.json(), { budget: 8000 });
        return Response.json({ version: version(), format: report.format, compileRefused });
      },
    };`, ['edge-light', 'worker', 'browser']);
  const bundled = readFileSync(script, 'utf8');
  assert.match(bundled, /edge\.js/, 'the edge-light entry was chosen');
  const mf = await startWorker(script);
  try {
    const res = await mf.dispatchFetch('http://w/', { method: 'POST', body: JSON.stringify(REQUEST) });
    assert.deepEqual(await res.json(), { version: '0.1.0', format: 'openai-chat', compileRefused: true });
  } finally {
    await mf.dispose();
  }
});

test('TypeScript resolves the types of the root and every subpath (node16 and bundler resolution)', () => {
  writeFileSync(join(project, 'types-check.ts'), `
    import { compress, formatReport, SpillStore, TraceLite, type Report } from 'tracelite';
    import {
      TraceLiteError, InputError, OptionError, LimitError, StoreError, InternalError, ProxyError, HostError,
      type ErrorCode, type ErrorCodeOf, type ErrorGroup,
    } from 'tracelite';
    import { createProxy, type ProxyOptions } from 'tracelite/proxy';
    import { KvSpillStore, type SpillPage } from 'tracelite/kv-store';
    import { traceliteMiddleware, spillTools } from 'tracelite/ai-sdk';
    import { FileStore, type FileStoreSweep } from 'tracelite/file-store';
    import { RedisStore, type RedisStoreUsage, type RedisClientLike } from 'tracelite/redis-store';
    const store = new SpillStore();
    const redis = new RedisStore({ url: 'redis://127.0.0.1:6379', prefix: 'tl:{prod}:', timeoutMs: 1000, maxTenantBytes: 1 << 20 });
    const usage: Promise<RedisStoreUsage> = redis.usage();
    const upstash: RedisClientLike = { eval: async (script: string, keys: string[], args: string[]) => [script, keys, args] };
    const viaProxy = createProxy({ upstream: 'https://api.example', store: new RedisStore({ client: upstash }), secret: 's'.repeat(32) });
    const tenantPut: Promise<boolean> = redis.forTenant('t').put('s', 'k', 'text');
    void [usage, viaProxy, tenantPut, redis.close(), redis.delete('s', 'k') satisfies Promise<boolean>];
    // @ts-expect-error: timeoutMs is a number
    new RedisStore({ url: 'redis://x', timeoutMs: '1000' });
    const out = compress({ messages: [] }, { budget: 8000, store });
    const files = new FileStore({ root: '/tmp/spills', ttlSeconds: 3600, now: () => 0 });
    const swept: Promise<FileStoreSweep> = files.sweep();
    const onDisk = traceliteMiddleware({ store: files, pointer: 'path' });
    void [swept, onDisk, files.pathOf('s', 'k') satisfies string];
    // @ts-expect-error: pointer is 'spill' or 'path'
    traceliteMiddleware({ store: files, pointer: 'file' });
    const report: Report = out.report;
    const blobs: { session: string; key: string; text: string }[] = out.spills;
    const options: ProxyOptions = { upstream: 'https://api.example', options: { budget: 1000 }, store };
    const handler: (r: Request) => Promise<Response> = createProxy(options);
    declare const kv: { get(k: string, o: { type: 'text' }): Promise<string | null>; put(k: string, v: string, o?: { expirationTtl?: number }): Promise<void> };
    const kvStore = new KvSpillStore(kv, { ttlSeconds: 3600 });
    const page: Promise<SpillPage> = kvStore.read('s', 'k', 1, 10);
    const mw = traceliteMiddleware({ budget: 8000, store: kvStore, session: (p) => String(p.prompt.length) });
    const tools = spillTools(mw.store);
    void [report, blobs, handler, page, tools.read_spill.execute({ pointer: 'spill://s/k' })];
    // @ts-expect-error: budget must be a number
    compress({ messages: [] }, { budget: 'big' });
    // A report in words (issue 50 item 4), and the adapters' debug option.
    const explained: string = formatReport(report, { color: false, label: 'turn 1' });
    const debugged = [traceliteMiddleware({ debug: true }), traceliteMiddleware({ debug: (text) => void text.length }), createProxy({ upstream: 'https://api.example', debug: true })];
    void [explained, debugged];
    // @ts-expect-error: debug is a boolean or a function of the text
    traceliteMiddleware({ debug: 'yes' });
    // processStep's output is text, an object or none (issue 50 item 7).
    const tl = new TraceLite();
    tl.processStep({ name: 'bash', arguments: { command: 'ls' } }, 'a.py');
    tl.processStep({ name: 'bash' }, { exitCode: 0 });
    // @ts-expect-error: a number is not an output
    tl.processStep({ name: 'bash' }, 123);
    // Errors by fault: each group's class narrows the code; every code is typed.
    try { compress({ messages: [] }); } catch (err) {
      if (err instanceof OptionError) { const code: 'INVALID_OPTION' = err.code; const group: 'option' = err.group; void [code, group, err.path]; }
      else if (err instanceof StoreError) { const code: 'SPILL_NOT_FOUND' | 'STORE_REFUSED' | 'SPILL_CORRUPT' | 'STORE_FAILED' | 'STORE_UNSAFE' = err.code; void code; }
      else if (err instanceof TraceLiteError) { const code: ErrorCode = err.code; const group: ErrorGroup | undefined = err.group; void [code, group]; }
    }
    const proxyError: ProxyError = new ProxyError('forged', 'INVALID_SESSION_TOKEN', 'x-tracelite-session');
    const rebuilt: TraceLiteError = TraceLiteError.from({ code: 'NOT_FOUND', message: 'm' });
    const limit: ErrorCodeOf<'limit'>[] = ['LIMIT_EXCEEDED', 'GREP_TOO_COSTLY', 'STORE_WRITE_LIMIT'];
    void [proxyError, rebuilt, limit, InputError, LimitError, InternalError, HostError];
    // @ts-expect-error: INVALID_JSON is an input code, not an option code
    new OptionError('m', 'INVALID_JSON');
    // @ts-expect-error: codes are the documented ones
    const nope: ErrorCode = 'NOPE';
  `);
  const tsc = join(root, 'node_modules/typescript/bin/tsc');
  for (const [module, resolution] of [['node16', 'node16'], ['esnext', 'bundler']]) {
    try {
      execFileSync(process.execPath, [tsc, '--noEmit', '--strict', '--lib', 'es2022,dom,esnext.disposable', 
        '--target', 'es2022', '--module', module, '--moduleResolution', resolution, 'types-check.ts'], { cwd: project, encoding: 'utf8' });
    } catch (err) {
      assert.fail(`tsc (${resolution}): ${err.stdout}${err.stderr}`);
    }
  }
});

// Issue 18 item 6: the package ships its own README for npm users (not the repo's),
// the LICENSE and the examples, and the README only points at what the package holds.
const packedFiles = () => packed.files.map((f) => f.path);
const npmReadme = () => readFileSync(join(project, 'node_modules/tracelite/README.md'), 'utf8');
const installedManifest = () => JSON.parse(readFileSync(join(project, 'node_modules/tracelite/package.json'), 'utf8'));

test('the tarball ships README.md (the npm README), LICENSE and the examples, and no tests', () => {
  const files = packedFiles();
  for (const f of ['README.md', 'REFERENCE.md', 'LICENSE', 'examples/cloudflare-worker/worker.js', 'examples/cloudflare-worker/wrangler.toml',
    'examples/vercel-edge/README.md', 'examples/vercel-edge/app/[...path]/route.js',
    'examples/sdk-loop/openai.mjs', 'examples/sdk-loop/anthropic.mjs']) {
    assert.ok(files.includes(f), `${f} missing from the tarball: ${files.join(' ')}`);
  }
  assert.ok(!files.some((f) => /(^|\/)(tests?|__tests__)\/|\.(test|spec)\.[cm]?[jt]s$/.test(f)), files.join(' '));
  assert.equal(npmReadme(), readFileSync(join(root, 'pkg-config/README.md'), 'utf8'), 'pkg/README.md is not pkg-config/README.md');
  const license = readFileSync(join(project, 'node_modules/tracelite/LICENSE'), 'utf8');
  const manifest = installedManifest();
  assert.equal(manifest.license, 'MIT');
  assert.match(license, /^MIT License\n\nCopyright \(c\) \d{4} TraceLite contributors\n/);
  assert.match(readFileSync(join(root, 'Cargo.toml'), 'utf8'), /^license = "MIT"$/m);
  assert.match(manifest.repository.url, /^git\+https:\/\/github\.com\/.+\.git$/);
  assert.match(manifest.homepage, /^https:\/\//);
  assert.ok(manifest.keywords.length >= 5, String(manifest.keywords));
});

test('the npm README has no `make` commands and no relative links to files the package does not ship', () => {
  const readme = npmReadme();
  const files = new Set(packedFiles());
  // A make command in a code block line or inline code (`make pkg`, `$ make test`).
  const makes = readme.split('\n').filter((l) => /(^\s*(\$\s*)?|`)make\s+[\w-]/.test(l));
  assert.deepEqual(makes, []);
  // Markdown links and images, HTML href/src: every relative target is a shipped file (or a folder of them).
  const targets = [
    ...[...readme.matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((m) => m[1]),
    ...[...readme.matchAll(/\b(?:href|src)\s*=\s*["']([^"']+)["']/g)].map((m) => m[1]),
  ];
  const missing = targets
    .filter((t) => !/^([a-z][a-z0-9+.-]*:|#|\/)/i.test(t))
    .map((t) => normalize(decodeURIComponent(t.split('#')[0])).replace(/\\/g, '/').replace(/\/$/, ''))
    .filter((t) => t && !files.has(t) && ![...files].some((f) => f.startsWith(`${t}/`)));
  assert.deepEqual(missing, []);
  // Paths named in inline code under examples/ (the ones the README tells users to open) are shipped too.
  const named = [...readme.matchAll(/`(examples\/[^`\s]*)`/g)].map((m) => m[1].replace(/\/$/, ''));
  assert.ok(named.length > 0);
  for (const t of named) assert.ok(files.has(t) || [...files].some((f) => f.startsWith(`${t}/`)), `${t} is not in the package`);
});

test('every `import … from \'tracelite…\'` of the npm README is an export, and the names it imports exist', () => {
  const readme = npmReadme();
  const manifest = installedManifest();
  const imports = [...readme.matchAll(/import\s*\{([^}]*)\}\s*from\s*['"](tracelite(?:\/[^'"]*)?)['"]/g)]
    .map((m) => ({ names: m[1].split(',').map((n) => n.trim()).filter((n) => n && !n.startsWith('type ')).map((n) => n.split(/\s+as\s+/)[0]), spec: m[2] }));
  const specs = new Set(imports.map((i) => i.spec));
  for (const spec of ['tracelite', 'tracelite/proxy', 'tracelite/kv-store', 'tracelite/ai-sdk', 'tracelite/langchain', 'tracelite/openai-agents']) {
    assert.ok(specs.has(spec), `the README never imports ${spec}`);
  }
  for (const spec of specs) {
    const sub = spec === 'tracelite' ? '.' : `.${spec.slice('tracelite'.length)}`;
    assert.ok(Object.hasOwn(manifest.exports, sub), `${spec}: "${sub}" is not in package.json exports`);
  }
  // Each imported name resolves in the installed package (the optional peers are linked in before()).
  writeFileSync(join(project, 'readme-imports.mjs'), `
    const wanted = ${JSON.stringify(imports)};
    const missing = [];
    for (const { names, spec } of wanted) {
      const mod = await import(spec);
      for (const n of names) if (!(n in mod)) missing.push(spec + ' ' + n);
    }
    console.log(JSON.stringify(missing));
  `);
  const missing = JSON.parse(execFileSync(process.execPath, ['readme-imports.mjs'], { cwd: project, encoding: 'utf8' }));
  assert.deepEqual(missing, []);
});

test('engines: node is the core\'s minimum (>=20); the README gives the AI SDK 7 minimum (Node ≥ 22) per subpath', () => {
  assert.deepEqual(installedManifest().engines, { node: '>=20' });
  const readme = npmReadme();
  const row = (spec) => readme.split('\n').find((l) => l.startsWith(`| \`${spec}\` |`));
  assert.match(row('tracelite') ?? '', /Node ≥ 20/);
  assert.match(row('tracelite/ai-sdk') ?? '', /ai 7 needs Node ≥ 22/);
});

// The npm README's examples that need only this package run as written against the
// installed tarball, each with the README's own prelude when it uses it (shown there);
// only the summarizer's model call is a stub (the provider SDK loop: tests/js/sdk-loop.test.mjs).
const MODEL_STUB = `
process.env.OPENAI_API_KEY ??= 'sk-test';
globalThis.fetch = async () => Response.json({ choices: [{ message: { role: 'assistant', content:
  '## Goal\\nFix it.\\n## Progress\\nRan pytest.\\n## Key facts\\nAll pass.\\n## Decisions\\nNone.\\n## Next steps\\nSubmit.' } }] });
`;

test('the npm README\'s examples that import only `tracelite` run as written', () => {
  const blocks = readmeSnippets().filter((s) => s.name.startsWith('pkg-config/README.md:') && s.lang === 'js').map((s) => s.code)
    .filter((code) => suiteOf(code) === 'readme' && /from\s+'tracelite'/.test(code) && [...code.matchAll(/from\s+'([^']+)'/g)].every((m) => m[1] === 'tracelite'));
  const names = blocks.map((code) => code.match(/import\s*\{([^}]*)\}/)[1].trim());
  // The quick start, compress, the error classes, calibrateOptical, compressAsync, TraceLite and the trajectory replay.
  assert.equal(blocks.length, 7, names.join(' | '));
  for (const [i, code] of blocks.entries()) {
    const lines = code.split('\n');
    const imports = lines.filter((l) => l.startsWith('import '));
    const body = lines.filter((l) => !l.startsWith('import '));
    const file = join(project, `readme-example-${i}.mjs`);
    writeFileSync(file, [...imports, MODEL_STUB, ...body, "console.log('example ok');"].join('\n'));
    let out;
    try {
      out = execFileSync(process.execPath, [file], { cwd: project, encoding: 'utf8', stdio: 'pipe' });
    } catch (err) {
      assert.fail(`README example ${i} (${names[i]}) failed:\n${code}\n${err.stderr}`);
    }
    assert.match(out, /example ok\n$/, `example ${i}`);
  }
});
