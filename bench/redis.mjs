#!/usr/bin/env node
// Issue 55: what Redis costs a turn, and what a second process buys. A
// redis-server of the bench's own (loopback, no persistence) and an agent loop
// (tests/js/support/redis-deployment.mjs: a growing conversation of build logs
// that spill and code that goes as snapshots).
// 1. Latency of a turn: the loop replayed `--rounds` times (a fresh session
//    each) through createProxy in this process, to a stub provider (a fetch
//    that answers at once), with the in-memory store and with a RedisStore;
//    and through the compress API, with a wasm SpillStore and with
//    compressAsync over a RedisStore (or, where compressAsync takes only a
//    SpillStore, compress then `persist` to Redis, what such a host does).
//    Each configuration's rounds interleave with the others'.
// 2. Throughput: `--clients` concurrent agents, each running the loop in
//    fresh sessions for `--seconds`, over HTTP (serveNode) to one proxy
//    process in memory, one with Redis, and two with Redis behind a
//    forwarder: round robin (every turn on the other process than the one
//    before) and sticky (a session's turns on one process, as a load
//    balancer with session affinity sends them).
// Usage: node bench/redis.mjs [--rounds 5] [--turns 12] [--clients 8] [--seconds 15] [--report bench/REDIS.md]
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { SpillStore, compress, compressAsync } from '../pkg/entries/node.js';
import { createProxy } from '../pkg/adapters/proxy/index.js';
import { RedisStore } from '../pkg/adapters/redis-store/index.js';
import { startUpstream } from '../tests/js/support/hosts.mjs';
import { REDIS_MISSING, startRedis } from '../tests/js/support/redis.mjs';
import { agentRequest, startForwarder, startProxy } from '../tests/js/support/redis-deployment.mjs';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '5' },
    turns: { type: 'string', default: '12' },
    clients: { type: 'string', default: '8' },
    seconds: { type: 'string', default: '15' },
    report: { type: 'string' },
  },
});
const ROUNDS = Number(values.rounds);
const TURNS = Number(values.turns);
const CLIENTS = Number(values.clients);
const SECONDS = Number(values.seconds);
const SECRET = 'bench-redis-secret-0123456789abcdef0123';
const OPTIONS = { budget: 16000, provider: 'openai', model: 'gpt-4o' };
const AUTH = 'Bearer sk-bench-000000000000000000000000';

if (REDIS_MISSING) {
  console.error(`bench/redis.mjs: ${REDIS_MISSING}`);
  process.exit(1);
}

const quantile = (xs, q) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))];
};
const ms = (x) => x.toFixed(1);

/** The loop's requests as JSON text, made once (their making is not measured). */
const REQUESTS = Array.from({ length: TURNS }, (_, i) => JSON.stringify(agentRequest(i + 1)));
const answer = () => new Response('{"choices":[{"message":{"role":"assistant","content":"ok"}}]}', { headers: { 'content-type': 'application/json' } });

/** One replay of the loop through a proxy handler in session `session`: each turn's ms. */
async function proxyRound(proxy, session) {
  const times = [];
  let token = session;
  for (const body of REQUESTS) {
    const started = performance.now();
    const res = await proxy(new Request('http://proxy.bench/v1/chat/completions', {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: AUTH, 'x-tracelite-session': token },
      body,
    }));
    await res.arrayBuffer();
    times.push(performance.now() - started);
    if (res.status !== 200 || res.headers.get('x-tracelite-skipped')) throw new Error(`proxy: ${res.status} ${res.headers.get('x-tracelite-skipped')}`);
    token = res.headers.get('x-tracelite-session');
  }
  return times;
}

/** One replay through the compress API: `step(request, session)` per turn; each turn's ms. */
async function apiRound(step, session) {
  const times = [];
  for (const body of REQUESTS) {
    const started = performance.now();
    await step(body, session);
    times.push(performance.now() - started);
  }
  return times;
}

/** Part 1: rows `{ name, times }` of per-turn latency. */
async function latency(redisUrl) {
  const redisStore = new RedisStore({ url: redisUrl, prefix: 'bench-latency:' });
  const wasm = new SpillStore();
  // compressAsync over the outside store where this build takes one; else compress, then persist.
  let viaAsync = true;
  try {
    await compressAsync(REQUESTS[0], { ...OPTIONS, session: 'probe', store: redisStore });
  } catch (err) {
    if (err?.code !== 'INVALID_OPTION') throw err;
    viaAsync = false;
  }
  const scratch = new Map();
  const configs = [
    { name: 'createProxy, in-memory store', round: (s) => proxyRound(createProxy({ upstream: 'http://up.bench', fetch: answer, secret: SECRET, options: OPTIONS }), s) },
    { name: 'createProxy, RedisStore', round: (s) => proxyRound(createProxy({ upstream: 'http://up.bench', fetch: answer, secret: SECRET, options: OPTIONS, store: redisStore }), s) },
    { name: 'compress, wasm SpillStore', round: (s) => apiRound((body, session) => compress(body, { ...OPTIONS, session, store: wasm }), s) },
    viaAsync
      ? { name: 'compressAsync, RedisStore', round: (s) => apiRound((body, session) => compressAsync(body, { ...OPTIONS, session, store: redisStore }), s) }
      : {
          name: 'compress (wasm SpillStore), then persist to RedisStore',
          round: (s) => apiRound(async (body, session) => {
            if (!scratch.has(session)) scratch.set(session, new SpillStore());
            await redisStore.persist(compress(body, { ...OPTIONS, session, store: scratch.get(session) }));
          }, s),
        },
  ];
  for (const c of configs) c.times = [];
  // One warm-up round each, then the measured rounds interleaved.
  for (let r = 0; r <= ROUNDS; r++) {
    for (const [i, c] of configs.entries()) {
      const times = await c.round(`lat-${i}-${r}`);
      if (r > 0) c.times.push(...times);
    }
  }
  for (const s of scratch.values()) s.free();
  wasm.free();
  await redisStore.close();
  return configs;
}

/** Part 2: turns per second of CLIENTS agents for SECONDS through `url`; `{ turns, rps, p50, p95 }`. */
async function throughput(url, label) {
  const until = performance.now() + SECONDS * 1000;
  const times = [];
  const failed = new Map();
  const agent = async (c) => {
    for (let loop = 0; performance.now() < until; loop++) {
      let token = `tp-${label}-${c}-${loop}`;
      for (const body of REQUESTS) {
        if (performance.now() >= until) return;
        const started = performance.now();
        const res = await fetch(`${url}/v1/chat/completions`, {
          method: 'POST',
          // Each agent its own client (tenant): one tenant's compress budget is not the run's.
          headers: { 'content-type': 'application/json', authorization: `${AUTH}${c}`, 'x-tracelite-session': token },
          body,
        });
        await res.arrayBuffer();
        if (res.status !== 200 || res.headers.get('x-tracelite-skipped')) {
          const why = `${res.status}${res.headers.get('x-tracelite-skipped') ? ` ${res.headers.get('x-tracelite-skipped')}` : ''}`;
          failed.set(why, (failed.get(why) ?? 0) + 1);
        }
        times.push(performance.now() - started);
        token = res.headers.get('x-tracelite-session') ?? token;
      }
    }
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: CLIENTS }, (_, c) => agent(c)));
  const elapsed = (performance.now() - started) / 1000;
  return { turns: times.length, rps: times.length / elapsed, p50: quantile(times, 0.5), p95: quantile(times, 0.95), failed: [...failed].map(([why, n]) => `${why}: ${n}`).join(', ') || '0' };
}

const load = () => loadavg().map((x) => x.toFixed(2)).join(' ');
const commit = (() => {
  try {
    return execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
  } catch {
    return 'unknown';
  }
})();
const redisVersion = execFileSync('redis-server', ['--version'], { encoding: 'utf8' }).match(/v=([\d.]+)/)?.[1];

const loadBefore = load();
const redis = await startRedis();
const upstream = await startUpstream(() => ({ headers: { 'content-type': 'application/json' }, chunks: ['{"choices":[{"message":{"role":"assistant","content":"ok"}}]}'] }));
const fwd = await startForwarder();
let rows;
const tp = [];
try {
  rows = await latency(redis.url);
  const settings = (redisUrl, prefix) => ({ ...(redisUrl ? { redisUrl } : {}), upstream: upstream.url, secret: SECRET, prefix, options: OPTIONS });
  for (const { label, processes, redisUrl, sticky = false } of [
    { label: 'one process, in-memory store', processes: 1 },
    { label: 'one process, RedisStore', processes: 1, redisUrl: redis.url },
    { label: 'two processes, RedisStore, round robin (each turn on the other process)', processes: 2, redisUrl: redis.url },
    { label: 'two processes, RedisStore, sticky (a session\'s turns on one process)', processes: 2, redisUrl: redis.url, sticky: true },
  ]) {
    const procs = await Promise.all(Array.from({ length: processes }, () => startProxy(settings(redisUrl, `bench-tp-${tp.length}:`))));
    fwd.targets = procs.map((p) => p.url);
    fwd.sticky = sticky;
    try {
      tp.push({ label, ...(await throughput(fwd.url, tp.length)) });
    } finally {
      await Promise.all(procs.map((p) => p.stop()));
    }
  }
} finally {
  await fwd.close();
  await upstream.close();
  await redis.stop();
}
const loadAfter = load();

const lines = [
  '# Redis store: a turn\'s latency, and two processes against one (issue 55)',
  '',
  `\`node bench/redis.mjs --rounds ${ROUNDS} --turns ${TURNS} --clients ${CLIENTS} --seconds ${SECONDS}\` at commit ${commit}, ${new Date().toISOString()}. `
    + `Machine: ${cpus().length} cores, Node ${process.version}, redis-server ${redisVersion} on loopback (no persistence); `
    + `load average ${loadBefore} before, ${loadAfter} after (the machine is shared: absolute times are noisy, ratios within one run less so).`,
  '',
  `An agent loop of ${TURNS} turns (a conversation growing by a 3,000-line build log or 40 lines of code a turn; budget 16,000, gpt-4o: logs spill, code goes as snapshots), `
    + `replayed ${ROUNDS} times per configuration in fresh sessions, the configurations interleaved round by round after one warm-up round each; p50 and p95 over all turns.`,
  '',
  '| configuration | turn p50 ms | turn p95 ms |',
  '|---|---:|---:|',
  ...rows.map((r) => `| ${r.name} | ${ms(quantile(r.times, 0.5))} | ${ms(quantile(r.times, 0.95))} |`),
  '',
  `Throughput: ${CLIENTS} concurrent agents, each running the loop in fresh sessions for ${SECONDS} s, over HTTP (serveNode) through a round-robin forwarder to the proxy processes, a stub provider answering at once. `
    + 'Each agent is its own client (tenant). The bench itself (the agents, the forwarder, the stub) and Redis share the same cores. '
    + 'Round robin sends each turn to the process that did not see the turn before: it compresses the session from what Redis and its own older state hold (its caches miss); sticky keeps a session on one process (its first turn excepted), Redis holding what another process would need.',
  '',
  '| deployment | turns | turns/s | turn p50 ms | turn p95 ms | not compressed (status: count) |',
  '|---|---:|---:|---:|---:|---:|',
  ...tp.map((r) => `| ${r.label} | ${r.turns} | ${r.rps.toFixed(1)} | ${ms(r.p50)} | ${ms(r.p95)} | ${r.failed} |`),
  '',
  `Two processes ÷ one (both Redis), turns per second: **${(tp[3].rps / tp[1].rps).toFixed(2)}×** sticky, ${(tp[2].rps / tp[1].rps).toFixed(2)}× round robin; RedisStore ÷ in-memory, one process: ${(tp[1].rps / tp[0].rps).toFixed(2)}×.`,
  '',
];
const text = lines.join('\n');
console.log(text);
if (values.report) writeFileSync(values.report, text);
