// Test support: a deployment of proxy processes sharing Redis (issue 55), for
// tests/js/redis-multiprocess.test.mjs and bench/redis.mjs: the agent loop's
// requests, a proxy process (redis-proxy-process.mjs) and a round-robin
// forwarder in front of them (the load balancer), all on loopback.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer, request as httpRequest } from 'node:http';
import { createInterface } from 'node:readline';

const PROCESS = new URL('./redis-proxy-process.mjs', import.meta.url);

/** A build log of `lines` lines with `NEEDLE <n>` on line 1500: spilled. */
const log = (n, lines = 3000) => Array.from({ length: lines }, (_, i) => (i === 1499 ? `NEEDLE ${n}: step ${n} failed` : `build ${n} step ${i + 1}: ok`)).join('\n');

/** Dense, code-like output: renders well below half its text tokens. */
function dense(seed) {
  let out = '';
  for (let i = 0; i < 40; i++) {
    const n = seed * 131 + i * 17;
    out += `    self.assertEqual(obj_${n % 97}.get_${n % 13}(x[${n % 7}], y=${n % 29}), {'k${n % 11}': [${n % 5}, ${n % 3}]})  # case ${i}\n`;
  }
  return out;
}

/** The agent's request before turn `t` (1-based): a tool call and its output per earlier turn, logs and code in turn. */
export function agentRequest(t) {
  const messages = [{ role: 'system', content: 'You fix builds.' }, { role: 'user', content: 'Why does the build fail?' }];
  for (let i = 1; i <= t; i++) {
    messages.push({ role: 'assistant', content: null, tool_calls: [{ id: `call_${i}`, type: 'function', function: { name: 'bash', arguments: JSON.stringify({ command: i % 2 ? `make step${i}` : `cat f${i}.py` }) } }] });
    messages.push({ role: 'tool', tool_call_id: `call_${i}`, content: i % 2 ? log(i) : dense(i) });
  }
  return { model: 'gpt-4o', messages };
}

/** A proxy process (redis-proxy-process.mjs, `settings` as it reads them); resolves `{ url, stop() }` once it listens. */
export async function startProxy(settings) {
  const child = spawn(process.execPath, [PROCESS.pathname], {
    stdio: ['pipe', 'pipe', 'inherit'],
    env: { ...process.env, TRACELITE_PROXY: JSON.stringify(settings) },
  });
  const [line] = await once(createInterface({ input: child.stdout }), 'line');
  return {
    url: JSON.parse(line).url,
    stop: async () => {
      child.stdin.end();
      if (child.exitCode === null) await once(child, 'exit');
    },
  };
}

/**
 * The load balancer: an HTTP server on loopback sending each request to the
 * next of `targets` (settable), round robin; with `sticky` set, a request
 * naming a session (`x-tracelite-session`, its first dot-separated part) to
 * the target that session hashes to. `served` counts requests per target.
 */
export async function startForwarder() {
  const fwd = { targets: [], next: 0, sticky: false, served: new Map() };
  const pick = (req) => {
    const session = String(req.headers['x-tracelite-session'] ?? '').split('.')[0];
    if (!fwd.sticky || session === '') return fwd.targets[fwd.next++ % fwd.targets.length];
    let h = 0;
    for (const c of session) h = (h * 31 + c.charCodeAt(0)) >>> 0;
    return fwd.targets[h % fwd.targets.length];
  };
  const server = createServer((req, res) => {
    const target = pick(req);
    fwd.served.set(target, (fwd.served.get(target) ?? 0) + 1);
    const out = httpRequest(new URL(req.url, target), { method: req.method, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode, answer.headers);
      answer.pipe(res);
    });
    out.on('error', () => res.destroy());
    req.pipe(out);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  fwd.url = `http://127.0.0.1:${server.address().port}`;
  fwd.close = () => new Promise((resolve) => server.close(resolve));
  return fwd;
}
