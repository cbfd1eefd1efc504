#!/usr/bin/env node
// tracelite CLI: `compress` a request file, `replay` trajectories as an agent loop would, read the spills a `--store` kept, or run the `proxy`.
import { mkdirSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { isUtf8 } from 'node:buffer';
import { parseArgs as parseArgv } from 'node:util';
import {
  TraceLiteError, compress, formatReport, refuseOversizedTrajectory, replayTrajectory, sessionName, summarizeReplay,
} from '../entries/node.js';
import { FileStore } from '../adapters/file-store/index.js';
import { parsePointer } from '../core/spill-reader.js';

const USAGE = `usage:
  tracelite compress <request.json | -> [options] [--report] [--explain]
  tracelite replay <trajectory.json | dir | -> [--json] [--dump DIR] [--progress] [--explain] [options]
  tracelite read DIR POINTER [--offset N] [--limit N]
  tracelite grep DIR POINTER PATTERN [--context N] [--max-matches N] [--skip N] [--ignore-case] [--literal]
  tracelite sweep DIR [--ttl SECONDS]
  tracelite proxy --upstream URL [--port N] [--host H] [--threads N] [--store DIR] [--max-body-bytes N] [--explain] [options]
  tracelite --version

  -                   read the request or trajectory from stdin

options:
  --format F          openai-chat | openai-responses | anthropic | gemini (default: detect)
  --provider P        anthropic | openai | openai-patch | gemini | qwen (default: openai)
  --model M           the model the requests go to (default: the request's, a trajectory's);
                      snapshots go only to a model that reads images (optical.enabled 'auto')
  --budget N          context window in tokens (default 128000)
  --window N          tool results kept verbatim (default 3)
  --ratio K           optical: render only if image tokens <= text tokens / K (default 2)
  --session NAME      spill namespace
  --no-spill --no-dedup --no-phase --no-optical --no-compact   turn a stage off
  --only STAGE        run only this stage
  --tokenizer T       estimate (built-in, default) | o200k (exact, js-tiktoken)
  --options JSON      any other settings as JSON (merged)
  --progress          a progress line on stderr while a directory replays (default: when stderr is a TTY)
  --report            compress: the report as JSON on stderr
  --explain           compress, replay, proxy: what each call did, in a few lines on stderr (per
                      step for replay, per request for proxy): tokens, each stage's saving,
                      how to read hidden output back
  --store DIR         compress, replay: keep spills as files under DIR (FileStore) and
                      print their paths as pointers; read, grep, sweep read them back
  --ttl SECONDS       how long a spill lives after it was written (default 7 days)

proxy: the OpenAI/Anthropic/Gemini-compatible proxy (tracelite/proxy) on Node worker
threads, serving until SIGINT/SIGTERM; point an agent's base URL at it.
  --upstream URL      the provider's base URL, e.g. https://api.openai.com (required)
  --port N --host H   where to listen (default 8787 on 127.0.0.1)
  --threads N         worker threads (default: the cores available)
  --store DIR         spills as files under DIR (needs TRACELITE_SECRET, at least 32
                      characters, so sessions and tokens outlive the process); default in memory
  --max-body-bytes N  largest request body (default 8 MiB)
  TRACELITE_SECRET    the key of sessions and tokens (default: random per process)`;

const STAGES = ['spill', 'dedup', 'phase', 'optical', 'compact'];

function fail(message, code = 2) {
  process.stderr.write(`tracelite: ${message}\n`);
  process.exit(code);
}

/** A flag's value as a number (`--budget needs a number, got "x"`). */
function number(name, v) {
  const n = Number(v);
  if (v === undefined) fail(`--${name} needs a number`);
  if (!Number.isFinite(n)) fail(`--${name} needs a number, got ${JSON.stringify(v)}`);
  return n;
}

const value = (name, v) => (v === undefined ? fail(`--${name} needs a value`) : v);

/** A flag without a value, setting `args[group][key]`. */
const toggle = (group, key) => ({ type: 'boolean', read: (args) => { args[group][key] = true; } });
/** A flag with a text value, handed to `set`. */
const text = (set) => ({ type: 'string', read: (args, v, name) => set(args, value(name, v)) });
/** A flag with a number value, handed to `set`. */
const count = (set) => ({ type: 'string', read: (args, v, name) => set(args, number(name, v)) });

/**
 * Every flag: its `node:util` `parseArgs` type (and short name), and where its
 * value goes (`read`, called in command-line order, so a later flag overrides
 * what `--options` merged before it and the other way round).
 */
const FLAGS = {
  json: toggle('flags', 'json'),
  report: toggle('flags', 'report'),
  progress: toggle('flags', 'progress'),
  explain: toggle('flags', 'explain'),
  dump: text((args, v) => { args.flags.dump = v; }),
  tokenizer: text((args, v) => { args.flags.tokenizer = v; }),
  upstream: text((args, v) => { args.flags.upstream = v; }),
  host: text((args, v) => { args.flags.host = v; }),
  port: count((args, v) => { args.flags.port = v; }),
  threads: count((args, v) => { args.flags.threads = v; }),
  'max-body-bytes': count((args, v) => { args.flags.maxBodyBytes = v; }),
  store: text((args, v) => { args.flags.store = v; }),
  ttl: count((args, v) => { args.flags.ttlSeconds = v; }),
  ...Object.fromEntries(['offset', 'limit', 'context', 'max-matches', 'skip']
    .map((name) => [name, count((args, v) => { args.reader[camel(name)] = v; })])),
  'ignore-case': toggle('reader', 'ignoreCase'),
  literal: toggle('reader', 'literal'),
  ...Object.fromEntries(['format', 'provider', 'model', 'session']
    .map((name) => [name, text((args, v) => { args.options[name] = v; })])),
  budget: count((args, v) => { args.options.budget = v; }),
  window: count((args, v) => { args.options.window = v; }),
  ratio: count((args, v) => { (args.options.optical ??= {}).ratio = v; }),
  only: text((args, only) => {
    if (!STAGES.includes(only)) fail(`--only takes one of ${STAGES.join(', ')}`);
    for (const s of STAGES) (args.options[s] ??= {}).enabled = s === only;
  }),
  options: text((args, v) => { deepMerge(args.options, parseOptions(v)); }),
  ...Object.fromEntries(STAGES.map((s) => [`no-${s}`, {
    type: 'boolean', read: (args) => { (args.options[s] ??= {}).enabled = false; },
  }])),
  help: { type: 'boolean', short: 'h', read: () => { process.stdout.write(USAGE + '\n'); process.exit(0); } },
  version: { type: 'boolean', short: 'v', read: printVersion },
};

/**
 * The command line as `{ positional, options, flags, reader }`, read by
 * `node:util` `parseArgs` (its tokens, in order); an unknown flag, or a value
 * given to one that takes none, is a usage error (exit 2).
 */
function parseArgs(argv) {
  const args = { positional: [], options: {}, flags: {}, reader: {} };
  const spec = Object.fromEntries(Object.entries(FLAGS)
    .map(([name, { type, short }]) => [name, short ? { type, short } : { type }]));
  const { tokens } = parseArgv({ args: argv, options: spec, strict: false, allowPositionals: true, tokens: true });
  for (const token of tokens) {
    if (token.kind === 'positional') args.positional.push(token.value);
    if (token.kind !== 'option') continue;
    const flag = Object.hasOwn(FLAGS, token.name) ? FLAGS[token.name] : undefined;
    if (!flag || (flag.type === 'boolean' && token.value !== undefined)) {
      const given = token.inlineValue ? `${token.rawName}=${token.value}` : token.rawName;
      fail(`unknown option ${given}\n${USAGE}`);
    }
    flag.read(args, token.value, token.name);
  }
  const tokenizer = args.flags.tokenizer ?? 'estimate';
  if (!['estimate', 'o200k'].includes(tokenizer)) fail('--tokenizer is estimate or o200k');
  args.flags.tokenizer = tokenizer;
  return args;
}

const camel = (name) => name.replace(/-(\w)/g, (_, c) => c.toUpperCase());

/** Keys that reach an object's prototype when assigned: never settings. */
const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

/**
 * `--options` JSON: an object, without `__proto__`, `constructor` or
 * `prototype` keys at any depth (merged into the settings they would reach
 * Object.prototype); what is merged is exactly what the core validates.
 */
function parseOptions(text) {
  let bad;
  let parsed;
  try {
    parsed = JSON.parse(text, (key, v) => {
      if (FORBIDDEN_KEYS.has(key)) bad ??= key;
      return v;
    });
  } catch (e) {
    fail(`--options must be JSON: ${e.message}`);
  }
  if (bad !== undefined) fail(`--options: "${bad}" is not a setting`);
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) fail('--options must be a JSON object');
  return parsed;
}

function deepMerge(into, from) {
  for (const [k, v] of Object.entries(from ?? {})) {
    if (FORBIDDEN_KEYS.has(k)) continue;
    const own = Object.hasOwn(into, k) ? into[k] : undefined;
    if (v && typeof v === 'object' && !Array.isArray(v) && own && typeof own === 'object') deepMerge(own, v);
    else into[k] = v;
  }
  return into;
}

/** The package's version (package.json beside this file), then exit 0. */
function printVersion() {
  const { version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
  process.stdout.write(`${version}\n`);
  process.exit(0);
}

/** An exact o200k counter with a cache (histories repeat the same texts every turn). */
async function o200kCounter() {
  let getEncoding;
  try {
    ({ getEncoding } = await import('js-tiktoken'));
  } catch {
    return fail('--tokenizer o200k needs the js-tiktoken package: npm install js-tiktoken (or use --tokenizer estimate)');
  }
  const enc = getEncoding('o200k_base');
  const cache = new Map();
  return (text) => {
    let n = cache.get(text);
    if (n === undefined) {
      n = enc.encode(text, 'all').length;
      cache.set(text, n);
    }
    return n;
  };
}

/** Replays one trajectory (pkg-config/core/replay.js), optionally dumping each compressed request. */
function replayOne(trajectory, options, { countTokens, dump, kept, explain } = {}) {
  const onStep = dump || kept || explain
    ? ({ t, output, outputText }) => {
      if (explain) process.stderr.write(`${formatReport(output.report, { label: `step ${t}` })}\n`);
      // The spills of every step, once each, for the file store.
      for (const s of kept ? output.spills ?? [] : []) kept.set(`${s.session}/${s.key}`, s);
      if (!dump) return;
      const dir = join(dump, sessionName(trajectory.id));
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, `${t}.json`), outputText);
    }
    : undefined;
  return replayTrajectory(trajectory, options, { countTokens, onStep });
}

/** The `--store DIR` file store (`--ttl`), or undefined without `--store`. */
function fileStore(flags, dir = flags.store) {
  return dir === undefined ? undefined : new FileStore({ root: dir, ttlSeconds: flags.ttlSeconds });
}

/** Settings whose pointers are the files of `files` (its root as `spill.pointerRoot`). */
function withFiles(options, files) {
  return files ? { ...options, spill: { ...options.spill, pointerRoot: files.root } } : options;
}

/** `read`, `grep` and `sweep` over the spills a `--store DIR` run kept. */
async function storeCommand(command, args) {
  const [dir, pointer, pattern] = args.positional;
  const want = { read: 2, grep: 3, sweep: 1 }[command];
  if (args.positional.length !== want) fail(USAGE);
  if (!isDirectory(dir)) fail(`${dir} is not a directory`);
  if (command === 'sweep') {
    const files = new FileStore({ root: dir, ttlSeconds: args.flags.ttlSeconds, sweepOnOpen: false });
    const removed = await files.sweep();
    process.stdout.write(`removed ${removed.blobs} expired spills (${removed.bytes} bytes), ${removed.temps} leftover temporary files, ${removed.sessions} empty sessions\n`);
    return;
  }
  const files = fileStore(args.flags, dir);
  const { session, key } = parsePointer(pointer);
  if (command === 'read') {
    const page = await files.read(session, key, args.reader.offset, args.reader.limit);
    process.stdout.write(page.text);
    const last = page.offset + page.count;
    const next = page.nextOffset === null ? 'the end' : `more with --offset ${page.nextOffset}`;
    process.stderr.write(`tracelite: lines ${page.offset + 1}-${last} of ${page.totalLines}; ${next}\n`);
    return;
  }
  const found = await files.grep(session, key, pattern, args.reader);
  if (found.text !== '') process.stdout.write(found.text.endsWith('\n') ? found.text : `${found.text}\n`);
  const more = found.nextSkip === null || found.nextSkip === undefined ? '' : `; more with --skip ${found.nextSkip}`;
  process.stderr.write(`tracelite: ${found.totalMatches} matching lines of ${found.totalLines}${more}\n`);
  if (found.totalMatches === 0) process.exitCode = 1;
}

function table(id, result) {
  const lines = [`${id}`, '   t   baseline  compressed   saved   bytes in  bytes out     ms'];
  for (const p of result.per_step) {
    const saved = p.baseline === 0 ? 0 : 1 - p.compressed / p.baseline;
    lines.push(`${String(p.t).padStart(4)} ${String(p.baseline).padStart(10)} ${String(p.compressed).padStart(11)} ${(saved * 100).toFixed(1).padStart(6)}% ` +
      `${String(p.bytes_before).padStart(10)} ${String(p.bytes_after).padStart(10)} ${p.ms.toFixed(2).padStart(6)}`);
  }
  lines.push(totalsLine(result));
  return lines.join('\n');
}

function totalsLine(r) {
  return `total: ${r.steps} steps, baseline ${r.baseline_tokens} tokens (${r.baseline_bytes} bytes), ` +
    `compressed ${r.compressed_tokens} tokens (${r.compressed_bytes} bytes), ` +
    `reduction ${(r.reduction * 100).toFixed(1)}%, prefix reuse ${(r.prefix_reuse * 100).toFixed(1)}%, ` +
    `latency p50 ${r.latency_ms.p50} ms p95 ${r.latency_ms.p95} ms\n` +
    `saved by stage: ${Object.entries(r.saved_by_stage)
      .map(([stage, s]) => `${stage} ${s.tokens} (${(s.share * 100).toFixed(1)}%)`).join(', ')}`;
}

/** Why a file could not be read, without a stack: `no such file or directory`, …. */
function fsReason(e) {
  switch (e?.code) {
    case 'ENOENT': return 'no such file or directory';
    case 'EACCES': case 'EPERM': return 'permission denied';
    case 'EISDIR': return 'is a directory';
    case 'ENOTDIR': return 'a part of the path is not a directory';
    default: return e?.code ?? String(e?.message ?? e);
  }
}

/** `-` is stdin. */
const STDIN = '-';
const shown = (path) => (path === STDIN ? 'stdin' : path);

/**
 * Standard input, whole, read as a stream: `readFileSync(0)` fails with EAGAIN when the
 * pipe is non-blocking and the writer has not caught up (issue 50, item 3).
 */
async function readStdin() {
  const chunks = [];
  for await (const chunk of process.stdin) chunks.push(chunk);
  return Buffer.concat(chunks);
}

/** The bytes of `path`, or of stdin for `-`. */
async function readBytes(path) {
  return path === STDIN ? readStdin() : readFileSync(path);
}

async function readText(path) {
  try {
    return (await readBytes(path)).toString('utf8');
  } catch (e) {
    return fail(`cannot read ${shown(path)}: ${fsReason(e)}`);
  }
}

function isDirectory(path) {
  if (path === STDIN) return false;
  try {
    return statSync(path).isDirectory();
  } catch (e) {
    return fail(`cannot read ${path}: ${fsReason(e)}`);
  }
}

const isObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);
/** A provider request of any format: chat/messages, responses `input`, Gemini `contents`. */
const looksLikeRequest = (v) => isObject(v) && ['messages', 'input', 'contents'].some((k) => k in v) && !('steps' in v);
const looksLikeTrajectory = (v) => isObject(v) && Array.isArray(v.steps);

/**
 * The progress line of a directory replay: rewritten in place on a TTY, one line per
 * trajectory otherwise (`--progress` into a pipe or file); cleared at the end on a TTY.
 */
function progress(enabled) {
  const tty = Boolean(process.stderr.isTTY);
  if (!enabled) return { clear() {}, step() {}, done() {} };
  return {
    // Before anything goes to stdout (which may be the same terminal).
    clear() {
      if (tty) process.stderr.write('\r\x1b[2K');
    },
    step(i, n, name) {
      const line = `tracelite: replaying ${i}/${n} ${name}`;
      process.stderr.write(tty ? `\r\x1b[2K${line}` : `${line}\n`);
    },
    done() {
      if (tty) process.stderr.write('\r\x1b[2K');
    },
  };
}

/** Why one file of a replay failed: its message and the exit code it would have alone. */
class ReplayFileError extends Error {
  constructor(message, exitCode = 2) {
    super(message);
    this.exitCode = exitCode;
  }
}

/** A `TraceLiteError` as the CLI prints it: `CODE: path: message` (its message names the path). */
const typedLine = (err) => `${err.code}: ${err.message}`;

/**
 * The trajectory in `path` (or stdin), parsed; a `ReplayFileError` says why not. The size
 * is checked (stat) before the file is read (stdin: before it is parsed), binary content
 * is refused without echoing it, and a JSON file that is not a trajectory gives `null`
 * in a directory (skipped) and an error when named alone.
 */
async function loadTrajectory(path, options, inDirectory) {
  let bytes;
  try {
    if (path !== STDIN) refuseOversizedTrajectory(statSync(path).size, options, path);
    bytes = await readBytes(path);
    if (path === STDIN) refuseOversizedTrajectory(bytes.length, options, 'stdin');
  } catch (e) {
    if (e instanceof TraceLiteError) throw new ReplayFileError(typedLine(e), 1);
    throw new ReplayFileError(`cannot read ${shown(path)}: ${fsReason(e)}`);
  }
  if (bytes.includes(0) || !isUtf8(bytes)) {
    throw new ReplayFileError(`${shown(path)} is not a text file: it holds binary data, not a JSON trajectory`);
  }
  let trajectory;
  try {
    trajectory = JSON.parse(bytes.toString('utf8'));
  } catch (e) {
    throw new ReplayFileError(`${shown(path)} is not JSON: ${e.message}`);
  }
  if (looksLikeTrajectory(trajectory)) return trajectory;
  // In a directory other JSON files are skipped; a file named alone must be a trajectory.
  if (inDirectory) return null;
  if (looksLikeRequest(trajectory)) {
    throw new ReplayFileError(`${shown(path)} is a provider request, not a trajectory: use \`tracelite compress ${path}\``);
  }
  throw new ReplayFileError(`${shown(path)} is not a trajectory: it has no "steps" array`);
}

/**
 * `replay` of a file, stdin or a directory. In a directory each file that fails is one
 * line on stderr and the others still replay; the exit code is then 1 (after the totals),
 * and a directory without any trajectory is an error (exit 2).
 */
async function replayCommand(args, countTokens) {
  if (args.positional.length !== 1) fail(USAGE);
  const path = args.positional[0];
  const directory = isDirectory(path);
  const files = directory
    ? readdirSync(path).filter((f) => f.endsWith('.json') && f !== 'package.json').sort().map((f) => join(path, f))
    : [path];
  const runs = [];
  const errors = [];
  const fractions = [];
  const bar = progress(directory && (args.flags.progress || Boolean(process.stderr.isTTY)));
  for (const [i, file] of files.entries()) {
    bar.step(i + 1, files.length, basename(file));
    try {
      const trajectory = await loadTrajectory(file, args.options, directory);
      if (trajectory === null) continue;
      const id = trajectory.id || (file === STDIN ? 'stdin' : basename(file, '.json'));
      const disk = fileStore(args.flags);
      const kept = new Map();
      const { result, prefixFractions } = replayOne(trajectory, withFiles(args.options, disk), { countTokens, dump: args.flags.dump, kept: disk && kept, explain: args.flags.explain });
      await disk?.persist([...kept.values()]);
      fractions.push(...prefixFractions);
      runs.push({ id, ...result });
      bar.clear();
      if (!args.flags.json) process.stdout.write(table(id, result) + '\n\n');
    } catch (e) {
      const failure = e instanceof ReplayFileError ? e
        : e instanceof TraceLiteError ? new ReplayFileError(typedLine(e), 1)
          : e;
      if (!(failure instanceof ReplayFileError)) throw e;
      if (!directory) fail(failure.message, failure.exitCode);
      bar.clear();
      const line = failure.message.startsWith(`${file} `) ? failure.message : `${file}: ${failure.message}`;
      process.stderr.write(`tracelite: ${line}\n`);
      errors.push({ file, ...(e instanceof TraceLiteError ? { code: e.code, path: e.path } : {}), message: failure.message });
    }
  }
  bar.done();
  if (!directory) {
    if (args.flags.json) {
      const { id, ...result } = runs[0];
      process.stdout.write(JSON.stringify(result) + '\n');
    }
    return;
  }
  if (runs.length === 0 && errors.length === 0) {
    fail(`${path} holds no trajectories (no .json file in it has a "steps" array)`);
  }
  const perStep = runs.flatMap((r) => r.per_step.map((p) => ({ id: r.id, ...p })));
  const total = summarizeReplay(perStep, fractions);
  if (args.flags.json) process.stdout.write(JSON.stringify({ runs, total, errors }) + '\n');
  else process.stdout.write(`${runs.length} trajectories\n${totalsLine(total)}\n`);
  if (errors.length > 0) fail(`${errors.length} of ${runs.length + errors.length} trajectories could not be replayed (above)`, 1);
}

/**
 * `proxy`: createThreadedProxy over cli/proxy-settings.mjs, served by
 * serveNode until SIGINT/SIGTERM. Bad settings are typed errors (exit 1).
 */
async function proxyCommand(args) {
  const { upstream, host = '127.0.0.1', port = 8787, threads, store, ttlSeconds, maxBodyBytes, explain } = args.flags;
  if (args.positional.length !== 0) fail(USAGE);
  if (upstream === undefined) fail("proxy needs --upstream URL (the provider's base URL, e.g. https://api.openai.com)");
  if (args.flags.tokenizer !== 'estimate') fail('proxy counts tokens with the built-in estimate (--tokenizer is for compress and replay)');
  const { createThreadedProxy, serveNode } = await import('../adapters/proxy/threads.js');
  const data = { upstream, options: args.options, store, ttlSeconds, maxBodyBytes, explain };
  const proxy = await createThreadedProxy(new URL('./proxy-settings.mjs', import.meta.url), { threads, data });
  let server;
  try {
    server = await serveNode(proxy, { port, host });
  } catch (err) {
    await proxy.close();
    fail(`cannot listen on ${host}:${port}: ${err.message}`, 1);
  }
  const where = `http://${host.includes(':') ? `[${host}]` : host}:${server.address().port}`;
  process.stderr.write(`tracelite proxy: ${where} -> ${upstream} (${proxy.threads} thread${proxy.threads === 1 ? '' : 's'}${store ? `, spills under ${store}` : ''})\n`);
  const stop = () => {
    server.close();
    server.closeAllConnections?.();
    proxy.close().then(() => process.exit(0));
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

async function main(argv) {
  const [command, ...rest] = argv;
  if (!command || command === '-h' || command === '--help') {
    process.stdout.write(USAGE + '\n');
    return;
  }
  if (command === '-v' || command === '--version') printVersion();
  const args = parseArgs(rest);
  const countTokens = args.flags.tokenizer === 'o200k' ? await o200kCounter() : undefined;
  if (command === 'compress') {
    if (args.positional.length !== 1) fail(USAGE);
    const path = args.positional[0];
    const request = await readText(path);
    let parsed;
    try { parsed = JSON.parse(request); } catch { /* the core reports bad JSON (INVALID_JSON) */ }
    if (looksLikeTrajectory(parsed) && !looksLikeRequest(parsed)) {
      fail(`${shown(path)} is a trajectory, not a provider request: use \`tracelite replay ${path}\``);
    }
    const disk = fileStore(args.flags);
    const out = compress(request, { ...withFiles(args.options, disk), countTokens });
    await disk?.persist(out);
    process.stdout.write(JSON.stringify(out.request) + '\n');
    if (args.flags.report) process.stderr.write(JSON.stringify(out.report, null, 2) + '\n');
    if (args.flags.explain) process.stderr.write(formatReport(out.report) + '\n');
    return;
  }
  if (command === 'replay') {
    await replayCommand(args, countTokens);
    return;
  }
  if (command === 'read' || command === 'grep' || command === 'sweep') return storeCommand(command, args);
  if (command === 'proxy') return proxyCommand(args);
  fail(`unknown command ${command}\n${USAGE}`);
}

main(process.argv.slice(2)).catch((err) => {
  if (err instanceof TraceLiteError) fail(typedLine(err), 1);
  fail(err?.stack ?? String(err), 1);
});
