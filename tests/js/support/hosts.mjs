// Test support: run code in workerd (esbuild bundle with the conditions
// wrangler uses, then Miniflare 4) and a stub upstream HTTP server that records
// what it received.
import { copyFileSync, mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { Miniflare } from 'miniflare';
import { serveNode } from '../../../pkg/adapters/proxy/threads.js';

export const root = fileURLToPath(new URL('../../../', import.meta.url));
export const pkgDir = join(root, 'pkg');

/** A temp project whose node_modules/tracelite is a symlink to pkg/ (the built package). */
export function projectWithPkg(prefix = 'tracelite-host-') {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  mkdirSync(join(dir, 'node_modules'));
  symlinkSync(pkgDir, join(dir, 'node_modules', 'tracelite'), 'dir');
  return dir;
}

/**
 * Bundles `source` (a worker module importing 'tracelite…') found from project
 * `dir` the way wrangler does (conditions workerd, worker, browser; `.wasm`
 * imports stay separate modules) into `dir/dist/worker.js`. With conditions
 * `edge-light, worker, browser` it resolves what Vercel's Edge bundler picks.
 * `entryName` `worker-src.ts` bundles a TypeScript source.
 */
export async function bundleWorker(dir, source, conditions = ['workerd', 'worker', 'browser'], entryName = 'worker-src.js') {
  const entry = join(dir, entryName);
  writeFileSync(entry, source);
  const outdir = join(dir, 'dist');
  mkdirSync(outdir, { recursive: true });
  await build({
    entryPoints: [entry],
    outfile: join(outdir, 'worker.js'),
    bundle: true,
    format: 'esm',
    platform: 'neutral',
    target: 'es2022',
    conditions,
    mainFields: ['module', 'main'],
    logLevel: 'silent',
    plugins: [{
      name: 'wasm-modules',
      setup(b) {
        // `x.wasm` (workerd) and `x.wasm?module` (Vercel Edge) imports.
        b.onResolve({ filter: /\.wasm(\?module)?$/ }, (args) => {
          const file = join(args.resolveDir, args.path.replace(/\?module$/, ''));
          const name = file.split('/').pop();
          copyFileSync(file, join(outdir, name));
          return { path: `./${name}`, external: true };
        });
      },
    }],
  });
  return join(outdir, 'worker.js');
}

/** Starts workerd (Miniflare 4) on a bundled worker. Returns the Miniflare instance. */
export async function startWorker(scriptPath, extra = {}) {
  const mf = new Miniflare({
    modules: true,
    modulesRoot: dirname(scriptPath),
    scriptPath,
    modulesRules: [
      { type: 'ESModule', include: ['**/*.js', '**/*.mjs'] },
      { type: 'CompiledWasm', include: ['**/*.wasm'] },
    ],
    compatibilityDate: '2025-01-01',
    ...extra,
  });
  await mf.ready;
  return mf;
}

/**
 * A stub provider on 127.0.0.1. `respond(req, body)` returns
 * `{ status, headers, chunks }` (a chunk may be a promise of one); every request
 * is recorded in `received`.
 */
export async function startUpstream(respond) {
  const received = [];
  const server = createServer((req, res) => {
    const parts = [];
    req.on('data', (c) => parts.push(c));
    req.on('end', async () => {
      const body = Buffer.concat(parts).toString('utf8');
      received.push({ method: req.method, url: req.url, headers: req.headers, body });
      const { status = 200, headers = {}, chunks = [] } = await respond(req, body);
      res.writeHead(status, headers);
      res.flushHeaders();
      // A chunk may be a promise: the stub waits for it (to test streaming).
      for (const c of chunks) res.write(await c);
      res.end();
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

/**
 * A Fetch-API handler served by the package's `serveNode` (node:http) on
 * 127.0.0.1, as a Node server runs the proxy: the body streams in as the
 * handler reads it; one it never reads (refused first) is drained unbuffered
 * after the answer. Returns `{ url, send(request), close() }`; `send` sends a
 * `Request` to the server with its method, path, headers and body (loopback).
 */
export async function serveOnLoopback(handler) {
  const server = await serveNode(handler, { port: 0 });
  const url = `http://127.0.0.1:${server.address().port}`;
  const send = async (request) => {
    const { pathname, search } = new URL(request.url);
    const hasBody = request.method !== 'GET' && request.method !== 'HEAD';
    return fetch(`${url}${pathname}${search}`, { method: request.method, headers: request.headers, body: hasBody ? await request.arrayBuffer() : undefined });
  };
  return { url, send, close: () => new Promise((resolve) => server.close(resolve)) };
}

/** A worker without TraceLite: forwards every request to `env.UPSTREAM` as it came (the benches' baseline). */
export const PASS_THROUGH_WORKER = `export default {
  fetch(request, env) {
    const url = new URL(request.url);
    return fetch(new Request(env.UPSTREAM + url.pathname + url.search, request));
  },
};
`;
