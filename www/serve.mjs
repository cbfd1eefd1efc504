#!/usr/bin/env node
// Static server for the playground, bound to 127.0.0.1 only:
//   /                           → www/
//   /pkg/                       → pkg/ (the built package: `make pkg`)
//   /demo-session.json          → tests/fixtures/demo-session.json (the sample the page opens on)
//   POST /ocr                   → tesseract's text of a snapshot PNG (www/ocr-endpoint.mjs), for
//                                 the step view's legibility; 503 TESSERACT_MISSING without tesseract
// Usage: node www/serve.mjs [--port N]   (N = 0 picks a free port)
import { createReadStream, statSync } from 'node:fs';
import { createServer } from 'node:http';
import { extname, join, normalize, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ocrEndpoint } from './ocr-endpoint.mjs';

const WWW = fileURLToPath(new URL('.', import.meta.url));
const ROOT = resolve(WWW, '..');
const MOUNTS = [
  ['/pkg/', join(ROOT, 'pkg')],
  ['/', WWW],
];
const FILES = {
  '/demo-session.json': join(ROOT, 'tests', 'fixtures', 'demo-session.json'),
};
const TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.wasm': 'application/wasm',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ts': 'text/plain; charset=utf-8',
  '.md': 'text/plain; charset=utf-8',
};

/** The file a URL path maps to, or null when it is outside every mount. */
function locate(pathname) {
  if (FILES[pathname]) return FILES[pathname];
  for (const [prefix, dir] of MOUNTS) {
    if (!pathname.startsWith(prefix)) continue;
    const rel = normalize(pathname.slice(prefix.length) || 'index.html');
    const file = resolve(dir, rel);
    if (file !== dir && !file.startsWith(dir.endsWith(sep) ? dir : dir + sep)) return null;
    return file;
  }
  return null;
}

function handle(req, res, ocr) {
  const send = (status, text) => {
    res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8' });
    res.end(text);
  };
  let pathname;
  try {
    pathname = decodeURIComponent(new URL(req.url, 'http://127.0.0.1').pathname);
  } catch {
    return send(400, 'bad request\n');
  }
  if (pathname.includes('\0')) return send(400, 'bad request\n');
  if (ocr?.handles(pathname)) return ocr.handle(req, res, req.socket.localPort);
  if (req.method !== 'GET' && req.method !== 'HEAD') return send(405, 'method not allowed\n');
  let file = locate(pathname);
  if (!file) return send(404, 'not found\n');
  let stat;
  try {
    stat = statSync(file);
    if (stat.isDirectory()) {
      file = join(file, 'index.html');
      stat = statSync(file);
    }
  } catch {
    return send(404, pathname.startsWith('/pkg/') ? 'not found (build the package with `make pkg`)\n' : 'not found\n');
  }
  res.writeHead(200, {
    'content-type': TYPES[extname(file)] ?? 'application/octet-stream',
    'content-length': stat.size,
    'cache-control': 'no-store',
    'x-content-type-options': 'nosniff',
  });
  if (req.method === 'HEAD') return res.end();
  createReadStream(file).pipe(res);
}

/**
 * Starts the server on 127.0.0.1; resolves to `{ server, url }`. `ocr`: the
 * OCR endpoint's options (www/ocr-endpoint.mjs `OCR_DEFAULTS`), or false for
 * none (as on a static host).
 */
export function startServer({ port = 8080, ocr = {} } = {}) {
  const endpoint = ocr === false ? null : ocrEndpoint(ocr);
  return new Promise((resolvePromise, reject) => {
    const server = createServer((req, res) => handle(req, res, endpoint));
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      const { port: actual } = server.address();
      resolvePromise({ server, url: `http://127.0.0.1:${actual}/` });
    });
  });
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const i = process.argv.indexOf('--port');
  const port = i > 0 ? Number(process.argv[i + 1]) : Number(process.env.PORT ?? 8080);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    process.stderr.write('serve: --port needs an integer 0..65535\n');
    process.exit(2);
  }
  const { url } = await startServer({ port });
  process.stdout.write(`TraceLite playground: ${url}  (Ctrl-C to stop)\n`);
}
