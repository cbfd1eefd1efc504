#!/usr/bin/env node
// A normal client beside a maximal-body attacker, both at once over loopback
// (serveNode: node:http on 127.0.0.1), at the proxy's defaults (issue 39): the attacker,
// in its own process, sends bodies of tiny tool calls filling `maxBodyBytes`
// back to back, each a new session, with its whole `maxCompressMsPerMinute`
// (30 s a minute) to spend; the normal client sends a growing conversation.
// Each host is measured in turn in the same run: `createProxy` on the main
// thread, then `createThreadedProxy` with 1, 2, … threads. A row: the normal
// client's p50/p95 alone and beside, their ratio, the attacker's admitted
// requests and their mean time.
//
//   node bench/proxy-threads.mjs                 # defaults: 8 MiB bodies, threads 1 and 2
//   node bench/proxy-threads.mjs --quick         # 256 KiB bodies
//   node bench/proxy-threads.mjs --threads 1,2,4 --report bench/PROXY-THREADS.md
//   node bench/proxy-threads.mjs --requests 48 --gap 250   # the normal client (default; --quick: no gap)
//
// Build the package first: `make pkg`.
import { writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { MEMORY_DEFAULTS } from '../pkg/entries/node.js';
import { createProxy } from '../pkg/adapters/proxy/index.js';
import { createThreadedProxy, serveNode } from '../pkg/adapters/proxy/threads.js';
import { normalClient, p95, startAttacker } from '../tests/js/support/body-attacker.mjs';

const args = process.argv.slice(2);
const option = (name, fallback) => (args.includes(name) ? args[args.indexOf(name) + 1] : fallback);
const quick = args.includes('--quick');
const threadCounts = option('--threads', '1,2').split(',').map(Number);
const report = option('--report', undefined);
const bodyBytes = quick ? 256 << 10 : MEMORY_DEFAULTS.maxBodyBytes;
const requests = Number(option('--requests', 48));
/** Between two normal requests (ms): the attacker's compresses take seconds at 8 MiB, so the client spans several. */
const gapMs = Number(option('--gap', quick ? 0 : 250));
const SETTINGS = new URL('../tests/js/support/threaded-settings.mjs', import.meta.url);
const DATA = { options: { budget: 8000, provider: 'openai' }, stub: true, maxBodyBytes: bodyBytes };

const p50 = (xs) => [...xs].sort((a, b) => a - b)[Math.ceil(xs.length / 2) - 1];

/** One host: the normal client alone, then beside the attacker (once it has a compress admitted). */
async function measure(name, handler) {
  const server = await serveNode(handler, { port: 0 });
  const url = `http://127.0.0.1:${server.address().port}`;
  try {
    await normalClient(url, 12); // warm-up: the normal tenant has its thread and caches
    const alone = await normalClient(url, requests, gapMs);
    const statuses = {};
    let admittedAt;
    const admitted = new Promise((resolve) => { admittedAt = resolve; });
    const attack = startAttacker({ url, bytes: bodyBytes - 1024, seconds: 120, onStatus: (s) => {
      statuses[s] = (statuses[s] ?? 0) + 1;
      if (s === '200') admittedAt();
    } });
    await Promise.race([admitted, attack.done]);
    const beside = await normalClient(url, requests, gapMs).finally(attack.stop);
    await attack.done;
    const again = await normalClient(url, requests, gapMs);
    const aloneP95 = Math.max(p95(alone), p95(again));
    return {
      host: name,
      aloneP50: p50(alone), aloneP95, besideP50: p50(beside), besideP95: p95(beside),
      ratio: p95(beside) / aloneP95, statuses,
    };
  } finally {
    await new Promise((resolve) => server.close(resolve));
  }
}

const rows = [];
rows.push(await measure('createProxy (main thread)', createProxy({ upstream: 'http://upstream.test', ...DATA, fetch: async () => new Response('{"ok":true}', { headers: { 'content-type': 'application/json' } }) })));
for (const threads of threadCounts) {
  const handler = await createThreadedProxy(SETTINGS, { threads, data: DATA });
  try {
    rows.push(await measure(`createThreadedProxy, ${threads} thread${threads > 1 ? 's' : ''}`, handler));
  } finally {
    await handler.close();
  }
}
const ms = (x) => x.toFixed(1);
const lines = [
  `Normal client beside a maximal-body attacker, concurrently over loopback, Node ${process.version}, ${availableParallelism()} cores; bodies ${(bodyBytes / 2 ** 20).toFixed(2)} MiB, maxCompressMsPerMinute at its default (30 s); ${requests} normal requests each phase, ${gapMs} ms apart:`,
  '',
  '| host | normal p50 / p95 alone (ms) | p50 / p95 beside (ms) | p95 beside ÷ alone | attacker requests (status: count) |',
  '|---|---:|---:|---:|---|',
  ...rows.map((r) => `| ${r.host} | ${ms(r.aloneP50)} / ${ms(r.aloneP95)} | ${ms(r.besideP50)} / ${ms(r.besideP95)} | ${r.ratio.toFixed(2)}× | ${Object.entries(r.statuses).map(([s, n]) => `${s}: ${n}`).join(', ')} |`),
  '',
];
process.stdout.write(lines.join('\n'));
if (report) {
  writeFileSync(report, [
    '# Proxy threads: a normal client beside a maximal-body attacker (issue 39)',
    '',
    `\`node bench/proxy-threads.mjs ${args.join(' ')}\` (\`make pkg\` first), ${new Date().toISOString().slice(0, 10)}. Both clients send at once to the proxy served by \`serveNode\`; the attacker (its own process) sends bodies of tiny tool calls filling \`maxBodyBytes\` back to back, each a new session; each host in turn in the same run. A 429 is an attacker POST refused once its compress time was spent.`,
    '',
    ...lines,
  ].join('\n'));
}
