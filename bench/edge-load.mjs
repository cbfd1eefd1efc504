#!/usr/bin/env node
// `make bench-edge`: the edge proxy under load. The Cloudflare Worker example
// (pkg-config/examples/cloudflare-worker/worker.js: createProxy + KvSpillStore)
// and a pass-through worker without TraceLite run in real workerd (Miniflare 4)
// in front of a stub OpenAI upstream on 127.0.0.1; autocannon drives both at
// rising concurrency with chat requests built from a real trajectory. Every
// response and every request the upstream sees is checked. Then an
// adversarial client (issue 16) runs beside normal traffic: a catastrophic
// regex grep over a blob of its own session and a huge many-message request;
// normal traffic's p99 is reported with and without it. Loopback only,
// bounded to `--max-seconds` of load (60 by default) plus `--attack-seconds`.
import { existsSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execFileSync } from 'node:child_process';
import { cpus, loadavg } from 'node:os';
import { randomBytes } from 'node:crypto';
import autocannon from 'autocannon';
import { SpillStore, compress, estimateTokens, trajectoryToRequest, version } from '../pkg/entries/node.js';
import { defaultIdentity, sessionSigner } from '../pkg/adapters/proxy/index.js';
import { bundleWorker, projectWithPkg, startWorker, PASS_THROUGH_WORKER as PASS_THROUGH } from '../tests/js/support/hosts.mjs';
import { withSpillTools } from '../tests/js/support/proxy-tools.mjs';
import { defaultTracesDir } from './harness.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

const USAGE = `usage: node bench/edge-load.mjs [options]
  --levels 1,4,16,64   concurrency levels (connections), default 1,4,16,64
  --requests N         requests per level and worker, at least (default 48); each
                       connection sends each of the four requests --cycles times (default 1)
  --max-seconds S      bound on the total seconds of load (default 60): a run still
                       going when its share is used up is stopped, its unfinished
                       requests are reported
  --sessions N         agent sessions the requests rotate through (default 8)
  --trace FILE         trajectory for the ordinary requests (default: the median-sized
                       one of ../shared/traces, else tests/fixtures/sample-trajectory.json)
  --large FILE         trajectory whose last request is the large one (default: the
                       largest of ../shared/traces, else the sample's last request)
  --options JSON       compress settings of the worker, merged into the example's
                       {"budget":128000,"provider":"openai"}, e.g. '{"optical":{"enabled":false}}'
  --json FILE          machine-readable results (default bench/edge-load.json)
  --report FILE        also write a markdown report (e.g. bench/EDGE-LOAD.md)
adversarial client (after the levels; normal traffic measured without, then with it):
  --no-attack          skip it
  --attack-connections N   connections of the normal traffic beside it (default 4)
  --attack-requests N  normal requests per run (default 64)
  --attack-grep-kb K   size of the attacker's blob that GET /spill/<key>/grep?regex=1&q=(.*){99}x
                       searches (default 100)
  --attack-messages N  one-word messages of its compaction request (default 20000)
  --attack-seconds S   bound on each of the four runs (default 30)`;

/** Compress settings of the worker under test (the example's wrangler.toml). */
const DEFAULT_OPTIONS = { budget: 128000, provider: 'openai' };
const MAX_BODY_BYTES = 8 * 1024 * 1024;
const NOTES_MARKER = '<!-- notes: kept when the report is regenerated -->';

function fail(message) {
  console.error(`edge-load: ${message}\n${USAGE}`);
  process.exit(2);
}

function parseArgs(argv) {
  const o = {
    levels: [1, 4, 16, 64], requests: 48, cycles: 1, maxSeconds: 60, sessions: 8, json: join(ROOT, 'bench/edge-load.json'),
    attack: true, attackConnections: 4, attackRequests: 64, attackGrepKb: 100, attackMessages: 20000, attackSeconds: 30,
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const next = () => {
      if (argv[i + 1] === undefined) fail(`${a} needs a value`);
      return argv[++i];
    };
    const positive = (v, name) => {
      const n = Number(v);
      if (!Number.isFinite(n) || n <= 0) fail(`${name} must be a positive number`);
      return n;
    };
    if (a === '--levels') o.levels = next().split(',').map((v) => Math.round(positive(v, '--levels')));
    else if (a === '--requests') o.requests = Math.round(positive(next(), '--requests'));
    else if (a === '--cycles') o.cycles = Math.round(positive(next(), '--cycles'));
    else if (a === '--max-seconds') o.maxSeconds = positive(next(), '--max-seconds');
    else if (a === '--sessions') o.sessions = Math.round(positive(next(), '--sessions'));
    else if (a === '--trace') o.trace = resolve(next());
    else if (a === '--large') o.large = resolve(next());
    else if (a === '--json') o.json = resolve(next());
    else if (a === '--options') {
      try {
        o.options = JSON.parse(next());
      } catch (err) {
        fail(`--options: ${err.message}`);
      }
    }
    else if (a === '--report') o.report = resolve(next());
    else if (a === '--no-attack') o.attack = false;
    else if (a === '--attack-connections') o.attackConnections = Math.round(positive(next(), a));
    else if (a === '--attack-requests') o.attackRequests = Math.round(positive(next(), a));
    else if (a === '--attack-grep-kb') o.attackGrepKb = positive(next(), a);
    else if (a === '--attack-messages') o.attackMessages = Math.round(positive(next(), a));
    else if (a === '--attack-seconds') o.attackSeconds = positive(next(), a);
    else if (a === '--help' || a === '-h') {
      console.log(USAGE);
      process.exit(0);
    } else fail(`unknown option ${a}`);
  }
  if (o.levels.length * 2 > o.maxSeconds) fail(`${o.levels.length} levels do not fit in --max-seconds ${o.maxSeconds}`);
  return o;
}

// ---------------------------------------------------------------- requests

function pickTraces(o) {
  const sample = join(ROOT, 'tests/fixtures/sample-trajectory.json');
  const dir = defaultTracesDir(ROOT);
  const files = dir ? readdirSync(dir).filter((f) => f.endsWith('.json')).map((f) => join(dir, f)) : [];
  const bySize = files.map((f) => [f, statSync(f).size]).sort((a, b) => a[1] - b[1] || (a[0] < b[0] ? -1 : 1));
  const trace = o.trace ?? (bySize.length ? bySize[Math.floor(bySize.length / 2)][0] : sample);
  const large = o.large ?? (bySize.length ? bySize.at(-1)[0] : sample);
  return { trace, large };
}

/** The assistant turn a provider would answer with: the trajectory's next action as a tool call. */
function nextAction(trajectory, t) {
  const step = trajectory.steps[t] ?? trajectory.steps.at(-1) ?? {};
  const command = typeof step.action === 'string' ? step.action : JSON.stringify(step.action ?? 'ls');
  return { thought: typeof step.thought === 'string' ? step.thought.slice(0, 400) : 'Looking at the failure next.', command: command.slice(0, 400) };
}

/** A realistic non-streaming chat.completion body. */
function completionBody(id, model, action, usage) {
  return JSON.stringify({
    id,
    object: 'chat.completion',
    created: 1764547200,
    model,
    choices: [{
      index: 0,
      message: {
        role: 'assistant',
        content: action.thought,
        tool_calls: [{ id: `call_${id.slice(-12)}`, type: 'function', function: { name: 'bash', arguments: JSON.stringify({ command: action.command }) } }],
        refusal: null,
        annotations: [],
      },
      logprobs: null,
      finish_reason: 'tool_calls',
    }],
    usage: {
      prompt_tokens: usage.prompt,
      completion_tokens: usage.completion,
      total_tokens: usage.prompt + usage.completion,
      prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
      completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
    },
    service_tier: 'default',
    system_fingerprint: 'fp_7c2ba1e5d3',
  });
}

/** The same answer as an SSE stream of chat.completion.chunk events (one write each). */
function completionChunks(id, model, action, usage) {
  const chunk = (delta, finish = null, extra = {}) => `data: ${JSON.stringify({
    id, object: 'chat.completion.chunk', created: 1764547200, model, system_fingerprint: 'fp_7c2ba1e5d3',
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }], ...extra,
  })}\n\n`;
  const words = action.thought.match(/\S+\s*/g) ?? [action.thought];
  const args = JSON.stringify({ command: action.command });
  const out = [chunk({ role: 'assistant', content: '', refusal: null })];
  for (const w of words) out.push(chunk({ content: w }));
  out.push(chunk({ tool_calls: [{ index: 0, id: `call_${id.slice(-12)}`, type: 'function', function: { name: 'bash', arguments: '' } }] }));
  for (let i = 0; i < args.length; i += 24) out.push(chunk({ tool_calls: [{ index: 0, function: { arguments: args.slice(i, i + 24) } }] }));
  out.push(chunk({}, 'tool_calls'));
  out.push(`data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created: 1764547200, model, choices: [], usage: { prompt_tokens: usage.prompt, completion_tokens: usage.completion, total_tokens: usage.prompt + usage.completion } })}\n\n`);
  out.push('data: [DONE]\n\n');
  return out;
}

/**
 * The request mix: three turns of one trajectory (a quarter in, half way, the
 * last step; JSON, SSE, JSON) and the last turn of the large one (SSE), whose
 * tool outputs spill into KV. For each, what the upstream must receive per
 * session (compress is deterministic; pointers name the session) and what the
 * client must get back.
 */
function buildVariants(traceFile, largeFile, sessionNames, OPTIONS) {
  const sessions = sessionNames.length;
  const trace = JSON.parse(readFileSync(traceFile, 'utf8'));
  const large = JSON.parse(readFileSync(largeFile, 'utf8'));
  const n = trace.steps.length;
  const picks = [
    { name: 'quarter', trajectory: trace, file: traceFile, t: Math.max(1, Math.floor(n / 4)), stream: false },
    { name: 'half', trajectory: trace, file: traceFile, t: Math.max(1, Math.floor(n / 2)), stream: true },
    { name: 'last', trajectory: trace, file: traceFile, t: n, stream: false },
    { name: 'large', trajectory: large, file: largeFile, t: large.steps.length, stream: true },
  ];
  return picks.map((p, index) => {
    const model = 'gpt-4o-2024-08-06';
    const request = { model, stream: p.stream, ...(p.stream ? { stream_options: { include_usage: true } } : {}), ...trajectoryToRequest(p.trajectory, p.t, 'openai-chat') };
    const body = JSON.stringify(request);
    const perSession = [];
    let spills = 0;
    let spilledBytes = 0;
    for (let s = 0; s < sessions; s++) {
      const store = new SpillStore();
      try {
        const out = compress(body, { ...OPTIONS, format: 'openai-chat', session: sessionNames[s], store });
        // With the read_spill / grep_spill definitions the proxy adds when the request points at its spills.
        const forwarded = JSON.stringify(withSpillTools(out.request, 'openai-chat', sessionNames[s]));
        perSession.push({
          forwarded: Buffer.from(forwarded),
          tokensHeader: `${out.report.tokensBefore}->${out.report.tokensAfter}`,
          tokensBefore: out.report.tokensBefore,
          tokensAfter: out.report.tokensAfter,
        });
        spills = out.spills.length;
        spilledBytes = out.spills.reduce((a, x) => a + Buffer.byteLength(x.text), 0);
      } finally {
        store.free();
      }
    }
    const id = `chatcmpl-bench${String(index).padStart(2, '0')}Qx7Kp2Lm9Zt4`;
    const action = nextAction(p.trajectory, p.t);
    const usage = { prompt: perSession[0].tokensAfter, completion: 96 };
    const chunks = p.stream ? completionChunks(id, model, action, usage) : [completionBody(id, model, action, usage)];
    const sent = Buffer.from(body);
    return {
      index,
      name: p.name,
      source: `${basename(p.file)} t=${p.t}`,
      stream: p.stream,
      body,
      sent,
      bytes: sent.length,
      sentTokens: estimateTokens(body),
      forwardedTokens: estimateTokens(perSession[0].forwarded.toString('utf8')),
      tokensBefore: perSession[0].tokensBefore,
      tokensAfter: perSession[0].tokensAfter,
      spills,
      spilledBytes,
      perSession,
      chunks,
      response: chunks.join(''),
      contentType: p.stream ? 'text/event-stream; charset=utf-8' : 'application/json',
    };
  });
}

/** The session name request `s` sends (`x-tracelite-session`). */
function sessionName(s) {
  return `agent-${s}`;
}

/** The API key every normal request carries (the proxy scopes sessions by it). */
const BENCH_AUTHORIZATION = 'Bearer sk-bench-not-a-real-key';

/**
 * The session the worker stores session `name` of a caller with
 * `authorization` under (an HMAC with the deployment's secret, which the
 * bench sets): what the compressed requests' pointers name.
 */
async function derivedSession(signer, name, authorization) {
  const request = new Request('http://proxy.bench/v1/chat/completions', { method: 'POST', headers: { authorization } });
  return signer.session(defaultIdentity(request), { name });
}

// ---------------------------------------------------------------- hosts

/**
 * A stub OpenAI endpoint on 127.0.0.1 that checks every body it receives
 * (`?v=<variant>&s=<session>`): `expect(variant, session)` is the exact body
 * it must see. Keeps counters only, never the bodies.
 */
async function startStubUpstream(variants, expect) {
  const stats = { requests: 0, matched: 0, wrong: 0, bytes: 0, firstWrong: null, attack: 0 };
  const server = createServer((req, res) => {
    const parts = [];
    req.on('data', (c) => parts.push(c));
    req.on('end', () => {
      const url = new URL(req.url, 'http://stub');
      if (url.searchParams.has('attack')) {
        // The adversarial client's requests: counted apart, answered at once.
        stats.attack++;
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{"id":"attack"}');
        return;
      }
      const variant = variants[Number(url.searchParams.get('v'))];
      const session = Number(url.searchParams.get('s'));
      const body = Buffer.concat(parts);
      stats.requests++;
      stats.bytes += body.length;
      if (variant && expect(variant, session)?.equals(body)) {
        stats.matched++;
      } else {
        stats.wrong++;
        stats.firstWrong ??= `${req.method} ${req.url}: ${body.length} bytes`;
      }
      if (!variant) {
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end('{"error":{"message":"unknown variant"}}');
        return;
      }
      res.writeHead(200, { 'content-type': variant.contentType, 'x-request-id': `req_${variant.index}` });
      if (variant.stream) res.flushHeaders();
      for (const c of variant.chunks) res.write(c);
      res.end();
    });
  });
  server.keepAliveTimeout = 30000;
  await new Promise((done) => server.listen(0, '127.0.0.1', done));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    stats,
    close: () => new Promise((done) => {
      server.closeAllConnections?.();
      server.close(done);
    }),
  };
}

/** PIDs of this process's descendants named `workerd`. */
function workerdPids() {
  const parents = new Map();
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
      const close = stat.lastIndexOf(')');
      const comm = stat.slice(stat.indexOf('(') + 1, close);
      const ppid = Number(stat.slice(close + 2).split(' ')[1]);
      parents.set(Number(d), { ppid, comm });
    } catch {
      // The process ended while we looked.
    }
  }
  const mine = (pid) => {
    for (let p = pid, hops = 0; p > 1 && hops < 16; hops++) {
      p = parents.get(p)?.ppid;
      if (p === process.pid) return true;
    }
    return false;
  };
  return [...parents].filter(([pid, { comm }]) => comm === 'workerd' && mine(pid)).map(([pid]) => pid);
}

/** Resident set size of a process in bytes (0 when it is gone). */
function rssOf(pid) {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

/** Starts a worker in its own workerd; returns `{ mf, url, pid, logLines }`. */
async function startHost(name, source, upstream, extra = {}) {
  const before = new Set(workerdPids());
  const dir = projectWithPkg(`tracelite-edge-${name}-`);
  const script = await bundleWorker(dir, source);
  const host = { logLines: 0, stderr: '', dir };
  host.mf = await startWorker(script, {
    bindings: { UPSTREAM: upstream, ...(extra.bindings ?? {}) },
    ...(extra.kv ? { kvNamespaces: ['SPILLS'] } : {}),
    handleRuntimeStdio(stdout, stderr) {
      // The example logs one line per request: count them, do not print them.
      stdout.on('data', (d) => {
        for (const line of String(d).split('\n').slice(0, -1)) {
          if (line.startsWith('tracelite ')) host.logLines++;
          else host.stderr = `${host.stderr}${line}\n`.slice(-4000);
        }
      });
      host.drained = new Promise((done) => { stdout.on('end', done); stdout.on('close', done); });
      stderr.on('data', (d) => { host.stderr = (host.stderr + d).slice(-4000); });
    },
  });
  host.url = String(await host.mf.ready).replace(/\/$/, '');
  const started = workerdPids().filter((p) => !before.has(p));
  host.pid = started[0] ?? null;
  return host;
}

// ---------------------------------------------------------------- load

/**
 * One autocannon run of `connections` against `host`: requests cycle through
 * the variants, each naming one of `sessions` agent sessions in turn. Every
 * response is checked (status 200, the upstream's body, the token header).
 */
async function runLevel(host, variants, { connections, amount, capSeconds, sessions, tracelite, pidOf }) {
  let turn = 0;
  let lastResponse = 0;
  const check = { wrongBody: 0, misattributed: 0, wrongStatus: 0, wrongTokens: 0, responses: 0, firstProblem: null, errorKinds: {} };
  const requests = variants.map((v) => ({
    method: 'POST',
    path: '/v1/chat/completions',
    headers: { 'content-type': 'application/json', authorization: BENCH_AUTHORIZATION },
    body: v.body,
    setupRequest(req, context) {
      const s = turn++ % sessions;
      context.session = s;
      return { ...req, path: `/v1/chat/completions?v=${v.index}&s=${s}`, headers: { ...req.headers, 'x-tracelite-session': sessionName(s) } };
    },
    onResponse(status, body, context, headers) {
      check.responses++;
      lastResponse = performance.now();
      const problem = (what) => {
        check.firstProblem ??= `${v.name} (session ${context.session}): ${what}`;
      };
      if (status !== 200) {
        check.wrongStatus++;
        problem(`status ${status}: ${String(body).slice(0, 200)}`);
        return;
      }
      const tokens = headers['x-tracelite-tokens'];
      const right = body === v.response && (!tracelite || tokens === v.perSession[context.session].tokensHeader);
      if (right) return;
      // After a connection reset autocannon may pair a response with the wrong
      // request of that connection: a response that is exactly another
      // request's (body and token header) is counted apart, not as wrong.
      const owner = variants.find((x) => x.response === body && (!tracelite || x.perSession.some((p) => p.tokensHeader === tokens)));
      if (owner && owner !== v) {
        check.misattributed++;
        return;
      }
      if (body !== v.response) check.wrongBody++;
      else check.wrongTokens++;
      problem(`body of ${String(body).length} chars (expected ${v.response.length}), x-tracelite-tokens ${tokens} (expected ${tracelite ? v.perSession[context.session].tokensHeader : 'none'}): ${JSON.stringify(String(body).slice(0, 120))}`);
    },
  }));
  const memory = { node: 0, workerd: 0, workerdStart: rssOf(pidOf()), samples: 0 };
  const sample = () => {
    memory.node = Math.max(memory.node, process.memoryUsage.rss());
    memory.workerd = Math.max(memory.workerd, rssOf(pidOf()));
    memory.samples++;
  };
  sample();
  const timer = setInterval(sample, 100);
  let capped = false;
  const started = performance.now();
  let result;
  try {
    // A fixed number of requests (every one completes, so no slow request is
    // left out of the latencies), stopped at `capSeconds` whatever happens.
    result = await new Promise((done, reject) => {
      const run = autocannon({ url: host.url, connections, amount, timeout: 30, requests }, (err, res) => (err ? reject(err) : done(res)));
      const cap = setTimeout(() => {
        capped = true;
        run.stop();
      }, capSeconds * 1000);
      run.on('done', () => clearTimeout(cap));
      run.on('reqError', (err) => {
        check.errorKinds[err?.code ?? err?.message ?? String(err)] = (check.errorKinds[err?.code ?? err?.message ?? String(err)] ?? 0) + 1;
      });
    });
  } finally {
    clearInterval(timer);
  }
  // autocannon ends a run on its 1 s tick: time up to the last response instead.
  const seconds = ((lastResponse || performance.now()) - started) / 1000;
  sample();
  memory.workerdEnd = rssOf(pidOf());
  return {
    connections,
    seconds,
    requests: result.requests.total,
    unfinished: Math.max(0, result.requests.sent - result.requests.total),
    capped,
    rps: result.requests.total / seconds,
    p50: result.latency.p50,
    p90: result.latency.p90,
    p99: result.latency.p99,
    max: result.latency.max,
    mean: result.latency.mean,
    errors: result.errors,
    timeouts: result.timeouts,
    non2xx: result.non2xx,
    mismatches: check.wrongBody + check.wrongStatus + check.wrongTokens,
    check,
    memory,
  };
}


// ---------------------------------------------------------------- adversary

/** The attacker's API key: its sessions are its own. */
const ATTACKER_AUTHORIZATION = 'Bearer sk-attacker-not-a-real-key';
/** The grep of issue 16: catastrophic for a backtracking engine, costly for any without a cost bound. */
const ATTACK_PATTERN = '(.*){99}x';

/**
 * A chat request whose one tool result the proxy spills: at least `kb` KiB of
 * token-dense lines, and more tokens than the per-result cap of `options`
 * (max(floorTokens, fraction × budget)), so that it is spilled whole.
 */
function attackBlobRequest(kb, options) {
  const cap = Math.max(options.spill?.floorTokens ?? 2000, (options.spill?.fraction ?? 0.25) * (options.budget ?? 128000));
  const lines = [];
  let bytes = 0;
  let x = 0x2545f491;
  const word = () => {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0;
    return x.toString(16).padStart(8, '0');
  };
  for (let i = 0; bytes < kb * 1024 || (i % 256 === 0 && estimateTokens(lines.join('\n')) <= 1.1 * cap) || i % 256 !== 0; i++) {
    const line = `attacker ${i} ${word()} ${word()} ${word()} ${word()} ${word()} ${word()}`;
    lines.push(line);
    bytes += line.length + 1;
  }
  return {
    model: 'gpt-4o-2024-08-06',
    messages: [
      { role: 'system', content: 'You are an agent.' },
      { role: 'user', content: 'Read the log.' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_a1', type: 'function', function: { name: 'bash', arguments: '{"command":"cat log"}' } }] },
      { role: 'tool', tool_call_id: 'call_a1', content: lines.join('\n') },
      { role: 'user', content: 'Go on.' },
    ],
  };
}

/** `n` one-word messages: the compaction attack (one KV blob per compacted message before the fix). */
function attackManyMessages(n) {
  const messages = [{ role: 'system', content: 'You are terse.' }];
  for (let i = 0; i < n; i++) messages.push({ role: i % 2 ? 'assistant' : 'user', content: `word${i}` });
  return JSON.stringify({ model: 'gpt-4o-2024-08-06', messages });
}

function summarize(samples) {
  const sorted = samples.map((x) => x.ms).sort((a, b) => a - b);
  const byOutcome = {};
  for (const x of samples) byOutcome[x.outcome] = (byOutcome[x.outcome] ?? 0) + 1;
  return {
    requests: samples.length,
    outcomes: byOutcome,
    p50: sorted.length ? sorted[Math.floor((sorted.length - 1) / 2)] : null,
    max: sorted.length ? sorted.at(-1) : null,
  };
}

/**
 * Normal traffic (`runLevel` at `attackConnections`) measured alone, then with
 * one attacker connection beside it that alternates the two attacks until the
 * normal run ends. The attacker uses its own key and session, as a tenant of
 * the proxy would. Outcomes are recorded as they come (a status, the error
 * code of a typed error, `x-tracelite-skipped`), so a cost limit in the core
 * shows up as a code here without a change to the bench.
 */
async function runAttack(host, variants, o, signer, OPTIONS) {
  const blobRequest = attackBlobRequest(o.attackGrepKb, OPTIONS);
  const attackerSession = await derivedSession(signer, 'attacker', ATTACKER_AUTHORIZATION);
  const store = new SpillStore();
  let key;
  try {
    const spills = compress(blobRequest, { ...OPTIONS, format: 'openai-chat', session: attackerSession, store }).spills;
    key = spills.sort((a, b) => b.text.length - a.text.length)[0]?.key;
  } finally {
    store.free();
  }
  if (!key) throw new Error('the attacker\'s blob was not spilled');
  const setup = await fetch(`${host.url}/v1/chat/completions?attack=setup`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: ATTACKER_AUTHORIZATION, 'x-tracelite-session': 'attacker' },
    body: JSON.stringify(blobRequest),
  });
  await setup.text();
  const token = setup.headers.get('x-tracelite-session');
  if (setup.status !== 200 || !token) throw new Error(`attacker set-up: status ${setup.status}`);
  const grepUrl = `${host.url}/spill/${key}/grep?regex=1&q=${encodeURIComponent(ATTACK_PATTERN)}`;
  const flood = attackManyMessages(o.attackMessages);

  const common = { connections: o.attackConnections, amount: o.attackRequests, sessions: o.sessions, tracelite: true, pidOf: () => host.pid, capSeconds: o.attackSeconds };
  const quiet = await runLevel(host, variants, common);

  const attempt = async (samples, kind, url, init) => {
    const t0 = performance.now();
    let outcome;
    try {
      const res = await fetch(url, { ...init, signal: AbortSignal.timeout(o.attackSeconds * 1000) });
      const text = await res.text();
      let code;
      try {
        code = JSON.parse(text)?.error?.code;
      } catch {
        // Not JSON: the upstream's answer to a forwarded request.
      }
      const skipped = res.headers.get('x-tracelite-skipped');
      outcome = `${res.status}${code ? ` ${code}` : ''}${skipped ? ` skipped ${skipped}` : ''}`;
    } catch (err) {
      outcome = `error ${err?.cause?.code ?? err?.name ?? err}`;
    }
    samples[kind].push({ ms: performance.now() - t0, outcome });
  };
  const send = {
    grep: (samples) => attempt(samples, 'grep', grepUrl, { headers: { authorization: ATTACKER_AUTHORIZATION, 'x-tracelite-session': token } }),
    compaction: (samples) => attempt(samples, 'compaction', `${host.url}/v1/chat/completions?attack=compaction`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: ATTACKER_AUTHORIZATION, 'x-tracelite-session': 'attacker-flood' },
      body: flood,
    }),
  };
  // Both attacks alternating, then each alone: which one moves the normal p99.
  const runs = [];
  for (const kinds of [['grep', 'compaction'], ['grep'], ['compaction']]) {
    const samples = { grep: [], compaction: [] };
    let stop = false;
    const attacker = (async () => {
      while (!stop) {
        for (const kind of kinds) {
          if (stop) break;
          await send[kind](samples);
        }
      }
    })();
    // Let the first attack reach the worker before the normal traffic starts.
    await new Promise((done) => setTimeout(done, 200));
    const normal = await runLevel(host, variants, common);
    stop = true;
    await attacker;
    runs.push({
      attacks: kinds.join('+'),
      normal,
      p99Ratio: quiet.p99 > 0 ? normal.p99 / quiet.p99 : null,
      grep: summarize(samples.grep),
      compaction: summarize(samples.compaction),
    });
  }
  return {
    connections: o.attackConnections,
    requests: o.attackRequests,
    grepBlobBytes: Buffer.byteLength(blobRequest.messages[3].content),
    pattern: ATTACK_PATTERN,
    messages: o.attackMessages,
    floodBytes: Buffer.byteLength(flood),
    quiet,
    runs,
  };
}

function attackSection(results) {
  const a = results.attack;
  if (!a) return '';
  const row = (label, r, ratio) => `| ${label} | ${r.requests} | ${r.seconds.toFixed(1)} | ${r.rps.toFixed(1)} | ${ms(r.p50)} | ${ms(r.p99)} | ${ratio} | ${ms(r.max)} | ${r.errors} | ${r.non2xx} | ${r.mismatches} | ${r.unfinished}${r.capped ? ' (time cap)' : ''} |`;
  const outcomes = (x) => Object.entries(x.outcomes).map(([k, n]) => `${n}× ${k}`).join(', ') || 'none finished';
  const verdict = (r) => (r.p99Ratio === null ? '—' : `**${r.p99Ratio.toFixed(2)}×** (${r.p99Ratio <= 2 ? 'within' : 'over'} 2×)`);
  const label = { 'grep+compaction': 'both attacks, alternating', grep: 'grep attack only', compaction: 'compaction attack only' };
  const attackRows = [];
  for (const r of a.runs) {
    for (const kind of ['grep', 'compaction']) {
      const x = r[kind];
      if (x.requests === 0 && !r.attacks.includes(kind)) continue;
      attackRows.push(`| ${label[r.attacks]} | ${kind === 'grep' ? `grep \`${a.pattern}\`` : `compaction, ${a.messages.toLocaleString('en-US')} messages`} | ${x.requests} | ${outcomes(x)} | ${ms(x.p50)} | ${ms(x.max)} |`);
    }
  }
  return `
## Adversarial client

Normal traffic (the four requests above, ${a.connections} connections, ${a.requests} requests per run) alone, then with one
attacker connection beside it: both attacks alternating, then each alone. The attacker is a tenant with its own API key
and session. Grep attack: \`GET /spill/<key>/grep?regex=1&q=${a.pattern}\` over a ${(a.grepBlobBytes / 1024).toFixed(0)} KiB blob of its own session.
Compaction attack: a request of ${a.messages.toLocaleString('en-US')} one-word messages (${(a.floodBytes / 1048576).toFixed(2)} MB). Each attacker
request starts when its previous one has ended, until the normal run ends. Target: normal p99 moves by no more than 2×.

| normal traffic | requests | s | req/s | p50 ms | p99 ms | p99 ÷ without | max ms | errors | non-2xx | wrong responses | unfinished |
|---|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|
${[row('without attacker', a.quiet, '—'), ...a.runs.map((r) => row(`with ${label[r.attacks]}`, r.normal, verdict(r)))].join('\n')}

| run | attack | requests | outcomes | p50 ms | max ms |
|---|---|---:|---|---:|---:|
${attackRows.join('\n')}

Outcomes: the status, the code of a typed JSON error, and \`x-tracelite-skipped\` of a request forwarded uncompressed
(\`STORE_WRITE_LIMIT\`: the request would have written more than \`maxStoreWrites\` blobs to KV). A grep is one synchronous
call into the core, so while it runs every other request of the isolate waits: only a cost bound in the core's grep
(pattern cost × text size, with its own error) keeps it short; this bench reports its code once it has one.
`;
}

// ---------------------------------------------------------------- report

const mb = (bytes) => (bytes / 1048576).toFixed(0);
const ms = (v) => (v === null || v === undefined ? '—' : v >= 100 ? v.toFixed(0) : v.toFixed(1));
const ratio = (a, b) => (b > 0 && a !== null && b !== null ? `${(a / b).toFixed(2)}×` : '—');

function markdownTables(results) {
  const lines = [
    '| connections | worker | requests | s | req/s | p50 ms | p99 ms | max ms | errors | non-2xx | timeouts | wrong responses | unfinished | workerd RSS peak MB | Node RSS peak MB |',
    '|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  ];
  for (const level of results.levels) {
    for (const [label, r] of [['pass-through', level.baseline], ['TraceLite', level.tracelite]]) {
      lines.push(`| ${level.connections} | ${label} | ${r.requests} | ${r.seconds.toFixed(1)} | ${r.rps.toFixed(1)} | ${ms(r.p50)} | ${ms(r.p99)} | ${ms(r.max)} | ${r.errors} | ${r.non2xx} | ${r.timeouts} | ${r.mismatches}${r.check.misattributed ? ` (${r.check.misattributed} mispaired†)` : ''} | ${r.unfinished}${r.capped ? ' (time cap)' : ''} | ${mb(r.memory.workerd)} | ${mb(r.memory.node)} |`);
    }
  }
  lines.push('', '| connections | req/s TraceLite ÷ pass-through | p50 ratio | p99 ratio | workerd RSS peak ratio |', '|---:|---:|---:|---:|---:|');
  for (const level of results.levels) {
    const t = level.tracelite;
    const b = level.baseline;
    lines.push(`| ${level.connections} | ${ratio(t.rps, b.rps)} | ${ratio(t.p50, b.p50)} | ${ratio(t.p99, b.p99)} | ${ratio(t.memory.workerd, b.memory.workerd)} |`);
  }
  return lines.join('\n');
}

function variantTable(results) {
  const lines = [
    '| request | from | stream | bytes sent | bytes upstream saw | tokens sent | tokens upstream saw | blobs spilled to KV |',
    '|---|---|---|---:|---:|---:|---:|---:|',
  ];
  for (const v of results.variants) {
    lines.push(`| ${v.name} | ${v.source} | ${v.stream ? 'SSE' : 'JSON'} | ${v.bytes.toLocaleString('en-US')} | ${v.forwardedBytes.toLocaleString('en-US')} | ${v.tokensBefore.toLocaleString('en-US')} | ${v.tokensAfter.toLocaleString('en-US')} | ${v.spills} (${(v.spilledBytes / 1024).toFixed(0)} KiB) |`);
  }
  return lines.join('\n');
}

function markdownReport(results) {
  const env = results.environment;
  const upstream = results.upstream;
  return `# Edge proxy under load

Generated ${results.generatedAt} from commit \`${results.commit}\` (TraceLite ${results.version}) by \`make bench-edge\`
(\`node bench/edge-load.mjs --report bench/EDGE-LOAD.md\`). Machine: ${env.cpus} cores (${env.cpuModel}), load average
${env.loadBefore.map((l) => l.toFixed(2)).join(' ')} before the run and ${env.loadAfter.map((l) => l.toFixed(2)).join(' ')} after,
shared with other jobs: absolute numbers are noisy, the ratios to the pass-through worker measured in the same run less so.

Setup: the Cloudflare Worker example (\`pkg-config/examples/cloudflare-worker/worker.js\`: \`createProxy\` with a
\`KvSpillStore\`, settings \`${JSON.stringify(results.options)}\`) and a pass-through worker without TraceLite, each in its own
workerd (Miniflare ${env.miniflare}), in front of a stub OpenAI endpoint on 127.0.0.1 (Node, same process as the load
generator) that answers with a chat.completion or its SSE stream. autocannon ${env.autocannon} sends POST
/v1/chat/completions over loopback, closed loop: at each level a fixed number of requests
(${results.requestsPerLevel.join(', ')}) per worker (pass-through first), each waited for to the end (so the slow ones are in
the latencies, unlike a fixed-duration run), all runs together bounded to ${results.maxSeconds} s. Each connection cycles through the four requests below; each request names one of
${results.sessions} agent sessions in turn (\`x-tracelite-session\`), so from 16 connections on several requests of one session are in
flight at once.

${variantTable(results)}

## Results

${markdownTables(results)}

${results.problems.length ? `**Not clean**: ${results.problems.join('; ')}.` : 'No errors, no non-2xx, no timeouts, no wrong responses at any level.'}

Wrong responses: a status other than 200, a body other than the upstream's (byte for byte, SSE included), or an
\`x-tracelite-tokens\` header other than the one \`compress\` gives for that request and session. † After a
connection reset autocannon can pair a response with the wrong request of that connection; a response that is exactly
another request's (body and token header) is counted as mispaired, not wrong. Unfinished: sent, never answered (the
connection was reset, or the time cap stopped the run). The upstream checked
every body it received against the exact compressed request for its session: ${upstream.tracelite.matched} of
${upstream.tracelite.requests} matched for TraceLite, ${upstream.baseline.matched} of ${upstream.baseline.requests} were the untouched body for
the pass-through. Workerd RSS is the peak of the worker's own workerd process (\`/proc/<pid>/status\`, sampled every
100 ms); Node RSS is the load generator + stub upstream + Miniflare host. TraceLite's workerd RSS grew from
${mb(results.levels[0]?.tracelite.memory.workerdStart ?? 0)} MB before the first level to ${mb(results.levels.at(-1)?.tracelite.memory.workerdEnd ?? 0)} MB after the last.

${attackSection(results)}
This run: \`${results.command}\`. Reproduce: \`make bench-edge\` (at most ${results.maxSeconds} s of load plus ~15 s of set-up; \`node bench/edge-load.mjs --help\` for the options).
`;
}

// ---------------------------------------------------------------- main

async function main() {
  const o = parseArgs(process.argv.slice(2));
  // A hard bound on the whole run, whatever hangs.
  const watchdog = setTimeout(() => {
    console.error('edge-load: over time, giving up');
    process.exit(3);
  }, (o.maxSeconds + 90 + (o.attack ? 6 * o.attackSeconds : 0)) * 1000);
  watchdog.unref();

  const loadBefore = loadavg();
  const { trace, large } = pickTraces(o);
  const OPTIONS = { ...DEFAULT_OPTIONS, ...o.options };
  // The deployment's TRACELITE_SECRET, new every run.
  const secret = randomBytes(32).toString('base64');
  const signer = sessionSigner(secret);
  const sessionNames = await Promise.all(Array.from({ length: o.sessions }, (_, s) => derivedSession(signer, sessionName(s), BENCH_AUTHORIZATION)));
  const variants = buildVariants(trace, large, sessionNames, OPTIONS);
  for (const v of variants) {
    if (v.bytes > MAX_BODY_BYTES) fail(`${v.source} is ${v.bytes} bytes, over the worker's ${MAX_BODY_BYTES}`);
  }

  const tlUpstream = await startStubUpstream(variants, (v, s) => v.perSession[s]?.forwarded);
  const baseUpstream = await startStubUpstream(variants, (v) => v.sent);
  const worker = readFileSync(join(ROOT, 'pkg-config/examples/cloudflare-worker/worker.js'), 'utf8');
  let tl;
  let base;
  const results = {
    generatedAt: new Date().toISOString(),
    commit: gitCommit(),
    version: version(),
    requestsPerLevel: o.levels.map((c) => Math.max(o.requests, c * variants.length * o.cycles)),
    maxSeconds: o.maxSeconds,
    sessions: o.sessions,
    options: OPTIONS,
    command: ['node', 'bench/edge-load.mjs', ...process.argv.slice(2).map((a) => (/^[\w./,:=-]+$/.test(a) ? a : `'${a}'`))].join(' '),
    variants: variants.map((v) => ({
      name: v.name, source: v.source, stream: v.stream, bytes: v.bytes, forwardedBytes: v.perSession[0].forwarded.length,
      tokensBefore: v.tokensBefore, tokensAfter: v.tokensAfter, sentTokensEstimate: v.sentTokens, forwardedTokensEstimate: v.forwardedTokens,
      spills: v.spills, spilledBytes: v.spilledBytes,
    })),
    levels: [],
  };
  try {
    base = await startHost('base', PASS_THROUGH, baseUpstream.url);
    tl = await startHost('tracelite', worker, tlUpstream.url, {
      kv: true,
      bindings: { TRACELITE_OPTIONS: JSON.stringify(OPTIONS), MAX_BODY_BYTES: String(MAX_BODY_BYTES), TRACELITE_SECRET: secret },
    });
    if (!tl.pid || !base.pid) console.error('edge-load: workerd process not found; its RSS is reported as 0');
    // Warm-up (JIT, wasm instantiation, the first KV writes), one of each request per session: checked, not timed.
    for (const host of [base, tl]) {
      for (let s = 0; s < o.sessions; s++) {
        for (const v of variants) {
          const res = await fetch(`${host.url}/v1/chat/completions?v=${v.index}&s=${s}`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', authorization: BENCH_AUTHORIZATION, 'x-tracelite-session': sessionName(s) },
            body: v.body,
          });
          const text = await res.text();
          if (res.status !== 200 || text !== v.response) {
            throw new Error(`warm-up ${v.name} on ${host === tl ? 'TraceLite' : 'pass-through'}: status ${res.status}, ${text.slice(0, 300)} ${host.stderr}`);
          }
        }
      }
    }
    results.kvKeysAfterWarmup = (await (await tl.mf.getKVNamespace('SPILLS')).list()).keys.length;
    let loadSeconds = 0;
    let runsLeft = o.levels.length * 2;
    for (const connections of o.levels) {
      const amount = Math.max(o.requests, connections * variants.length * o.cycles);
      const common = { connections, amount, sessions: o.sessions };
      // Each run may use what is left of the budget, keeping 2 s for every later run.
      const capSeconds = () => Math.max(1, o.maxSeconds - loadSeconds - 2 * (runsLeft - 1));
      let t0 = performance.now();
      const baseline = await runLevel(base, variants, { ...common, capSeconds: capSeconds(), tracelite: false, pidOf: () => base.pid });
      loadSeconds += (performance.now() - t0) / 1000;
      runsLeft--;
      t0 = performance.now();
      const tracelite = await runLevel(tl, variants, { ...common, capSeconds: capSeconds(), tracelite: true, pidOf: () => tl.pid });
      loadSeconds += (performance.now() - t0) / 1000;
      runsLeft--;
      results.levels.push({ connections, baseline, tracelite });
      console.error(`edge-load: ${connections} connections: TraceLite ${tracelite.rps.toFixed(1)} req/s p50 ${ms(tracelite.p50)} ms p99 ${ms(tracelite.p99)} ms, pass-through ${baseline.rps.toFixed(1)} req/s`);
    }
    results.kvKeys = (await (await tl.mf.getKVNamespace('SPILLS')).list()).keys.length;
    if (o.attack) {
      results.attack = await runAttack(tl, variants, o, signer, OPTIONS);
      const a = results.attack;
      for (const r of a.runs) {
        console.error(`edge-load: adversarial client (${r.attacks}): normal p99 ${ms(a.quiet.p99)} ms without, ${ms(r.normal.p99)} ms with (${r.p99Ratio?.toFixed(2)}×); grep ${JSON.stringify(r.grep.outcomes)}, compaction ${JSON.stringify(r.compaction.outcomes)}`);
      }
    }
  } finally {
    await tl?.mf.dispose();
    // Every line the worker logged, once its workerd has exited.
    if (tl?.drained) results.reportLogLines = await Promise.race([tl.drained.then(() => tl.logLines), new Promise((done) => setTimeout(() => done(tl.logLines), 2000))]);
    await base?.mf.dispose();
    for (const host of [tl, base]) if (host) rmSync(host.dir, { recursive: true, force: true });
    await tlUpstream.close();
    await baseUpstream.close();
  }
  results.upstream = { tracelite: tlUpstream.stats, baseline: baseUpstream.stats };
  results.workerdStderr = { tracelite: tl?.stderr ?? '', baseline: base?.stderr ?? '' };
  results.environment = {
    cpus: cpus().length,
    cpuModel: cpus()[0]?.model?.trim() ?? 'unknown',
    loadBefore,
    loadAfter: loadavg(),
    node: process.version,
    miniflare: packageVersion('miniflare'),
    autocannon: packageVersion('autocannon'),
  };
  const problems = [];
  for (const level of results.levels) {
    for (const [label, r] of [['pass-through', level.baseline], ['TraceLite', level.tracelite]]) {
      const bad = r.errors + r.timeouts + r.non2xx + r.mismatches;
      if (bad > 0) problems.push(`${label} at ${level.connections} connections: ${r.errors} errors ${JSON.stringify(r.check.errorKinds)}, ${r.timeouts} timeouts, ${r.non2xx} non-2xx, ${r.mismatches} wrong responses${r.check.firstProblem ? ` (first: ${r.check.firstProblem})` : ''}`);
    }
  }
  if (results.attack) {
    for (const [label, r] of [['normal traffic without attacker', results.attack.quiet], ...results.attack.runs.map((x) => [`normal traffic with ${x.attacks} attacker`, x.normal])]) {
      if (r.mismatches > 0 || r.non2xx > 0) problems.push(`${label}: ${r.non2xx} non-2xx, ${r.mismatches} wrong responses${r.check.firstProblem ? ` (first: ${r.check.firstProblem})` : ''}`);
    }
  }
  for (const [label, s] of Object.entries(results.upstream)) {
    if (s.wrong > 0) problems.push(`${label} upstream received ${s.wrong} unexpected bodies (first: ${s.firstWrong})`);
  }
  results.problems = problems;

  writeFileSync(o.json, `${JSON.stringify(results, null, 2)}\n`);
  const md = markdownReport(results);
  if (o.report) {
    // Hand-written notes below the marker survive a regeneration.
    const old = existsSync(o.report) ? readFileSync(o.report, 'utf8') : '';
    const at = old.indexOf(NOTES_MARKER);
    writeFileSync(o.report, `${md}\n${at === -1 ? `${NOTES_MARKER}\n` : old.slice(at)}`);
  }
  console.log(`${variantTable(results)}\n\n${markdownTables(results)}`);
  console.error(`edge-load: results in ${relative(process.cwd(), o.json) || o.json}${o.report ? ` and ${relative(process.cwd(), o.report)}` : ''}`);
  if (problems.length) {
    console.error(`edge-load: FAILED\n  ${problems.join('\n  ')}`);
    process.exitCode = 1;
  }
}

function gitCommit() {
  try {
    return execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).trim();
  } catch {
    return 'unknown';
  }
}

function packageVersion(name) {
  const file = join(ROOT, 'node_modules', name, 'package.json');
  return existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')).version : 'unknown';
}

await main();
