// Internal (createThreadedProxy): one worker thread. It makes `createProxy`
// from the settings module and answers the requests the main thread sends,
// pulling each request body from it and giving the response body back chunk
// by chunk as the main thread asks (backpressure both ways).
import { parentPort, workerData } from 'node:worker_threads';
import { MEMORY_DEFAULTS, wasmMemoryBytes } from '../../core/memory.js';
import { REMOTE_LEDGER } from '../file-store/ledger.js';
import { ownChunk } from './http.js';
import { createProxy } from './index.js';
import { settingsOf } from './thread-settings.js';

const { href, data, secret, threads } = workerData;

/** Requests in flight: the body stream's pull waiting for a chunk, the response's reader. */
const flights = new Map();

function post(message, transfer) {
  parentPort.postMessage(message, transfer);
}

/** `{ code, message, path }` of an error, to cross to the main thread. */
function plain(err) {
  return { code: err?.code, message: String(err?.message ?? err), path: err?.path ?? '' };
}

/** This thread's share of the process's `maxMemoryBytes` (left as given when it is not a count: createProxy names it). */
function memoryShare(total) {
  const bytes = total ?? MEMORY_DEFAULTS.maxMemoryBytes;
  return Number.isSafeInteger(bytes) && bytes > 0 ? Math.max(1, Math.floor(bytes / threads)) : bytes;
}

/** A request body pulled from the main thread chunk by chunk. */
function bodyStream(id, flight) {
  return new ReadableStream({
    pull: (c) => new Promise((resolve) => {
      flight.body = { c, resolve };
      post({ type: 'pull', id });
    }),
  }, { highWaterMark: 0 });
}

async function run(proxy, { id, method, url, headers, body }) {
  const flight = {};
  flights.set(id, flight);
  let response;
  try {
    const request = new Request(url, { method, headers, body: body ? bodyStream(id, flight) : undefined, duplex: 'half' });
    response = await proxy(request);
  } catch (err) {
    flights.delete(id);
    post({ type: 'error', id, error: plain(err) });
    return;
  }
  post({ type: 'head', id, status: response.status, statusText: response.statusText, headers: [...response.headers], body: response.body !== null });
  if (response.body === null) flights.delete(id);
  else flight.reader = response.body.getReader();
}

/** The next chunk of a response body, asked for by the main thread. */
async function more(id) {
  const flight = flights.get(id);
  if (flight?.reader === undefined) return;
  try {
    const { done, value } = await flight.reader.read();
    if (done) {
      flights.delete(id);
      post({ type: 'end', id });
    } else {
      const chunk = ownChunk(value);
      post({ type: 'data', id, chunk }, [chunk.buffer]);
    }
  } catch (err) {
    flights.delete(id);
    post({ type: 'error', id, error: plain(err) });
  }
}

function bodyMessage(m) {
  const pending = flights.get(m.id)?.body;
  if (pending === undefined) return;
  if (m.type === 'bodyChunk') pending.c.enqueue(m.chunk);
  else if (m.type === 'bodyEnd') pending.c.close();
  else pending.c.error(new TypeError(`the request body failed: ${m.message}`));
  pending.resolve();
}

// A FileStore made in this thread counts its root's bytes in the main
// thread's ledger, so the threads share one count (ledger.js).
const ledgerCalls = new Map();
let ledgerSeq = 0;
globalThis[REMOTE_LEDGER] = (op, root, args) => new Promise((resolve, reject) => {
  const id = ++ledgerSeq;
  ledgerCalls.set(id, { resolve, reject });
  post({ type: 'ledger', id, op, root, args });
});
// One listener from the start: ledger replies are answered at once (the
// settings module may use its store while it loads); the main thread's
// requests (sent to a restarted thread before it is ready) wait for the proxy.
const waiting = [];
let serve;
parentPort.on('message', (m) => {
  if (m.type === 'ledgerReply') {
    const call = ledgerCalls.get(m.id);
    ledgerCalls.delete(m.id);
    if (m.error === undefined) call?.resolve(m.result);
    else call?.reject(Object.assign(new Error(m.error.message), { code: m.error.code, path: m.error.path }));
  } else if (serve === undefined) {
    waiting.push(m);
  } else {
    serve(m);
  }
});

let proxy;
try {
  const settings = await settingsOf(href, data);
  proxy = createProxy({ ...settings, secret: settings.secret ?? secret, maxMemoryBytes: memoryShare(settings.maxMemoryBytes) });
} catch (err) {
  post({ type: 'failed', error: plain(err) });
}
if (proxy !== undefined) {
  serve = (m) => {
    switch (m.type) {
      case 'request':
        run(proxy, m);
        break;
      case 'more':
        more(m.id);
        break;
      case 'stats':
        post({ type: 'stats', id: m.id, wasmMemoryBytes: wasmMemoryBytes(), inFlight: flights.size });
        break;
      case 'cancel': {
        const flight = flights.get(m.id);
        flights.delete(m.id);
        flight?.reader?.cancel().catch(() => {});
        break;
      }
      default:
        bodyMessage(m);
    }
  };
  post({ type: 'ready' });
  for (const m of waiting.splice(0)) serve(m);
}
