// Internal (tracelite/proxy/threads): a Fetch-API handler served by
// node:http. The request body streams in as the handler reads it (one it never
// reads, refused first, is drained unbuffered after the answer) and the
// response body streams out as the client takes it.
import { once } from 'node:events';
import { createServer } from 'node:http';
import { Readable } from 'node:stream';

/** A request body read from `req` only when the handler reads it; `read()` says whether it was. */
function lazyBody(req) {
  let reader;
  const body = new ReadableStream({
    async pull(c) {
      reader ??= Readable.toWeb(req).getReader();
      const { done, value } = await reader.read();
      if (done) c.close();
      else c.enqueue(value);
    },
    cancel() {
      req.destroy();
    },
  }, { highWaterMark: 0 });
  return { body, read: () => reader !== undefined };
}

/** The Fetch API's headers of a node:http request (repeated names kept). */
function headersOf(req) {
  const headers = new Headers();
  for (let i = 0; i < req.rawHeaders.length; i += 2) headers.append(req.rawHeaders[i], req.rawHeaders[i + 1]);
  return headers;
}

/** Writes `response` to `res`, its body as the client takes it; a client gone cancels it. */
async function send(response, res) {
  const head = {};
  for (const [name, value] of response.headers) if (name !== 'set-cookie') head[name] = value;
  const cookies = response.headers.getSetCookie();
  if (cookies.length > 0) head['set-cookie'] = cookies;
  res.writeHead(response.status, response.statusText || undefined, head);
  if (response.body === null) {
    res.end();
    return;
  }
  const reader = response.body.getReader();
  res.once('close', () => {
    if (!res.writableFinished) reader.cancel().catch(() => {});
  });
  try {
    for (let r = await reader.read(); !r.done; r = await reader.read()) {
      if (!res.write(r.value)) await once(res, 'drain');
    }
    res.end();
  } catch {
    // The body failed (a thread ended, upstream broke): the client sees the cut connection.
    res.destroy();
  }
}

/**
 * Serves `handler` (`(Request) => Promise<Response>`: `createProxy`'s or
 * `createThreadedProxy`'s) with node:http on `host`:`port` (default
 * 127.0.0.1:8787; port 0 picks a free one). Resolves to the listening
 * `http.Server` once it listens. Requests reach the handler as
 * `http://<host>:<port><path>` (the Host header is not trusted); a handler
 * that throws answers a bare 500.
 */
export async function serveNode(handler, { port = 8787, host = '127.0.0.1' } = {}) {
  const server = createServer(async (req, res) => {
    const address = server.address();
    const base = `http://${address.family === 'IPv6' ? `[${address.address}]` : address.address}:${address.port}`;
    const hasBody = req.method !== 'GET' && req.method !== 'HEAD';
    const lazy = hasBody ? lazyBody(req) : undefined;
    let response;
    try {
      response = await handler(new Request(new URL(req.url, base), { method: req.method, headers: headersOf(req), body: lazy?.body, duplex: 'half' }));
    } catch {
      response = new Response('internal error\n', { status: 500, headers: { 'content-type': 'text/plain' } });
    }
    await send(response, res);
    if (lazy && !lazy.read()) req.resume();
  });
  server.listen(port, host);
  await once(server, 'listening');
  return server;
}
