// The TypeScript types against the code: the core's error codes (src/error.rs)
// and the host's table (core/errors.js) do not overlap and hold every code the
// JS (pkg-config/**/*.js) throws, each thrown as its group's class; every README snippet that
// imports 'tracelite/ai-sdk' type-checks under `tsc --strict` with ai 6 and ai 7
// and runs there (ai 7 on Node 22, as it declares), the provider's model replaced
// by the `ai` package's own mock (MockLanguageModelV3 / V4) behind a stand-in
// '@ai-sdk/openai'; the adapter's own suite runs on Node 22 too.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { pkgDir, root } from './support/hosts.mjs';
import { NODE_22, suiteSnippets } from './support/readme-snippets.mjs';
import { SpillStore } from '../../pkg/entries/node.js';
import { spillTools, traceliteMiddleware } from '../../pkg/adapters/ai-sdk/index.js';
import { CORE_CODES } from '../../pkg-config/core/types/codes.js';
import { HOST_CODES, groupOf } from '../../pkg-config/core/errors.js';

const TSC = join(root, 'node_modules/typescript/bin/tsc');
const AI = { 'ai 7': join(root, 'node_modules/ai'), 'ai 6': join(root, 'node_modules/ai-v6') };
/** The Node each ai runs on: ai 7 declares Node ≥ 22, ai 6 runs on this one (≥ 20). */
const NODE = { 'ai 7': NODE_22, 'ai 6': process.execPath };

/** Top-level arguments of the call whose "(" is at `open` in `src` (string-aware). */
function callArgs(src, open) {
  const args = [];
  let depth = 0;
  let quote;
  let start = open + 1;
  for (let i = open; i < src.length; i++) {
    const c = src[i];
    if (quote) {
      if (c === '\\') i++;
      else if (c === quote) quote = undefined;
      continue;
    }
    if (c === "'" || c === '"' || c === '`') quote = c;
    else if (c === '(' || c === '[' || c === '{') depth++;
    else if (c === ')' || c === ']' || c === '}') {
      depth--;
      if (depth === 0) {
        args.push(src.slice(start, i).trim());
        return args;
      }
    } else if (c === ',' && depth === 1) {
      args.push(src.slice(start, i).trim());
      start = i + 1;
    }
  }
  throw new Error(`unbalanced call at ${open}`);
}

/** The package's JS sources (pkg-config/{entries,core,adapters,internal,cli}/, not the tests nor the examples), relative to pkg-config/. */
function packageSources() {
  return ['entries', 'core', 'adapters', 'internal', 'cli']
    .flatMap((dir) => readdirSync(join(root, 'pkg-config', dir), { recursive: true }).map((f) => `${dir}/${f}`))
    .filter((f) => /\.m?js$/.test(f) && !/\.test\.m?js$/.test(f))
    .sort();
}

/** The error classes by group (pkg-config/core/errors.js). */
const CLASS_OF = {
  input: 'InputError', option: 'OptionError', limit: 'LimitError', store: 'StoreError',
  internal: 'InternalError', proxy: 'ProxyError', host: 'HostError',
};
const ERROR_CLASS = new RegExp(`new (TraceLiteError|${Object.values(CLASS_OF).join('|')})\\(`, 'g');

/**
 * Codes of the JS throw sites, each with the class thrown: the literal
 * second argument of each `new TraceLiteError(…)` or `new <Group>Error(…)`;
 * where it is a parameter of the enclosing helper (`fail(message, code,
 * path)`), the literals its callers pass. Only `TraceLiteError.from(err)`
 * (an error re-raised from the wasm or a Durable Object, src/error.rs) may
 * forward a code it did not name. Also the codes of the proxy's error
 * responses (`errorResponse(status, 'CODE', …)`), class `response`.
 */
function jsThrowCodes() {
  const codes = new Map();
  const add = (code, cls, where) => codes.set(code, [...(codes.get(code) ?? []), { cls, where }]);
  for (const file of packageSources()) {
    const src = readFileSync(join(root, 'pkg-config', file), 'utf8');
    for (const m of src.matchAll(ERROR_CLASS)) {
      const cls = m[1];
      const code = callArgs(src, m.index + m[0].length - 1)[1];
      const where = `${file}:${src.slice(0, m.index).split('\n').length}`;
      const literal = /^(['"])([A-Z_]+)\1$/.exec(code ?? '');
      if (literal) {
        add(literal[2], cls, where);
        continue;
      }
      // A helper forwarding its parameter: collect the literals at that position of its calls.
      const helpers = [...src.slice(0, m.index).matchAll(/function (\w+)\(([^)]*)\)/g)];
      const helper = helpers[helpers.length - 1];
      const position = helper?.[2].split(',').map((p) => p.trim()).indexOf(code);
      assert.ok(helper && position >= 0, `${where}: new ${cls} with code ${code}, not a literal nor a helper's parameter`);
      let calls = 0;
      for (const c of src.matchAll(new RegExp(`\\b${helper[1]}\\(`, 'g'))) {
        if (src.slice(c.index - 9, c.index) === 'function ') continue;
        const arg = callArgs(src, c.index + c[0].length - 1)[position];
        const lit = /^(['"])([A-Z_]+)\1$/.exec(arg ?? '');
        assert.ok(lit, `${file}: ${helper[1]}(…) called with code ${arg}`);
        add(lit[2], cls, `${file}:${src.slice(0, c.index).split('\n').length}`);
        calls++;
      }
      assert.ok(calls > 0, `${where}: helper ${helper[1]} is never called`);
    }
    for (const m of file === 'core/errors.js' ? [] : src.matchAll(/\bTraceLiteError\.from\(/g)) {
      const arg = callArgs(src, m.index + m[0].length - 1)[0];
      assert.ok(/^err$/.test(arg), `${file}:${src.slice(0, m.index).split('\n').length}: TraceLiteError.from(${arg}) with a code of its own: throw its class`);
    }
    for (const m of src.matchAll(/\berrorResponse\(/g)) {
      if (src.slice(m.index - 9, m.index) === 'function ') continue;
      const code = callArgs(src, m.index + m[0].length - 1)[1] ?? '';
      const where = `${file}:${src.slice(0, m.index).split('\n').length}`;
      for (const lit of code.matchAll(/'([A-Z_]+)'/g)) add(lit[1], 'response', where);
    }
  }
  return codes;
}

/** The core's codes as the Rust source spells them (`ErrorCode::as_str`). */
function rustCodes() {
  const rust = readFileSync(join(root, 'src/error.rs'), 'utf8');
  const asStr = /pub const fn as_str\(self\)[\s\S]*?\n {4}\}/.exec(rust);
  assert.ok(asStr, 'ErrorCode::as_str not found in src/error.rs');
  const core = [...asStr[0].matchAll(/Self::(\w+) => "([A-Z][A-Z0-9_]*)"/g)].map((m) => m[2]);
  const variants = /pub enum ErrorCode \{([\s\S]*?)\n\}/.exec(rust)[1].replace(/\/\/.*$/gm, '').match(/\b[A-Z]\w*(?=,)/g);
  assert.equal(core.length, variants.length, `as_str covers ${core.length} of ${variants.length} variants`);
  assert.ok(core.length >= 20, `only ${core.length} codes parsed from src/error.rs`);
  return core;
}

test('the core\'s codes (src/error.rs, generated into core/types/) and the host\'s table (core/errors.js) do not overlap, and together hold every code the JS throws or answers, each thrown as its group\'s class', () => {
  const core = rustCodes();
  const dtsCore = readFileSync(join(root, 'pkg-config/core/types/errors.d.ts'), 'utf8');
  const coreTypes = /export interface CoreErrorCodes \{([\s\S]*?)\n\}/.exec(dtsCore)[1].replace(/\/\*\*[\s\S]*?\*\//g, '');
  const generated = [...coreTypes.matchAll(/'([A-Z_]+)'/g)].map((m) => m[1]);
  assert.match(dtsCore, /export type CoreErrorCode = CoreErrorCodes\[keyof CoreErrorCodes\];/);
  assert.deepEqual([...generated].sort(), [...core].sort(), 'CoreErrorCode is not src/error.rs\'s codes');
  assert.deepEqual(Object.keys(CORE_CODES).sort(), [...core].sort(), 'core/types/codes.js is not src/error.rs\'s codes');
  const host = Object.keys(HOST_CODES);
  const both = host.filter((c) => core.includes(c));
  assert.deepEqual(both, [], `codes in both the core and the host table: ${both.join(', ')}`);
  // The host's codes as core/errors.d.ts types them, group by group.
  const dts = readFileSync(join(root, 'pkg-config/core/errors.d.ts'), 'utf8');
  const hostTypes = /export interface HostErrorCodes \{([\s\S]*?)\n\}/.exec(dts)[1].replace(/\/\*\*[\s\S]*?\*\//g, '');
  const typed = Object.fromEntries([...hostTypes.matchAll(/(\w+):([^;]*);/g)]
    .flatMap(([, group, union]) => [...union.matchAll(/'([A-Z_]+)'/g)].map((c) => [c[1], group])));
  assert.deepEqual(typed, { ...HOST_CODES }, 'HostErrorCodes in core/errors.d.ts differs from HOST_CODES');
  const js = jsThrowCodes();
  assert.ok(js.size >= 20, `only ${js.size} codes found at JS throw sites`);
  const unknown = [...js].filter(([c]) => groupOf(c) === undefined).map(([c, w]) => `${c} (${w.map((x) => x.where).join(', ')})`);
  assert.deepEqual(unknown, [], `JS codes in neither table: ${unknown.join('; ')}`);
  const misclassed = [...js].flatMap(([c, sites]) => sites
    .filter(({ cls }) => cls !== 'response' && cls !== CLASS_OF[groupOf(c)])
    .map(({ cls, where }) => `${where}: ${c} thrown as ${cls}, its class is ${CLASS_OF[groupOf(c)]}`));
  assert.deepEqual(misclassed, [], misclassed.join('\n'));
  // Every host code is used by the host (else it is not the host's).
  const sources = packageSources().filter((f) => f !== 'core/errors.js').map((f) => readFileSync(join(root, 'pkg-config', f), 'utf8')).join('\n');
  assert.deepEqual(host.filter((c) => !new RegExp(`\\b${c}\\b`).test(sources)), [], 'host codes the JS never uses');
});

test('grep_spill takes the schema\'s max_matches / ignore_case, and the camel-case spellings from direct calls', async () => {
  const store = new SpillStore();
  store.put('s', 'tool-1', Array.from({ length: 40 }, (_, i) => `line ${i} Error`).join('\n'));
  const { grep_spill } = spillTools(store);
  const count = async (args) => (await grep_spill.execute({ pointer: 'spill://s/tool-1', ...args })).split('\n').filter((l) => /^\s*\d+:/.test(l)).length;
  assert.equal(await count({ pattern: 'Error' }), 40);
  assert.equal(await count({ pattern: 'Error', max_matches: 2 }), 2);
  assert.equal(await count({ pattern: 'Error', maxMatches: 3 }), 3);
  assert.equal(await count({ pattern: 'Error', max_matches: 2, maxMatches: 3 }), 2, 'the schema\'s name wins');
  assert.equal(await count({ pattern: 'error' }), 0);
  assert.equal(await count({ pattern: 'error', ignore_case: true, max_matches: 5 }), 5);
  assert.equal(await count({ pattern: 'error', ignoreCase: true, max_matches: 5 }), 5);
  assert.throws(() => traceliteMiddleware({ specificationVersion: 'v5' }), { code: 'INVALID_OPTION' });
});

/** README code blocks (```js / ```ts) that import from 'tracelite/ai-sdk'. */
const SNIPPETS = suiteSnippets('ai-sdk');

/** A log of 6000 pytest lines, one FAILED among PASSED: what the snippets' bash tool prints for COMMAND. */
const LOG = Array.from({ length: 6000 }, (_, i) => (i === 4321
  ? 'FAILED tests/test_price.py::test_discount - KeyError: price'
  : `tests/test_mod_${i % 37}.py::test_case_${i} PASSED [${String(Math.floor((i * 100) / 6000)).padStart(3)}%]`)).join('\n');
/** The command the stand-in models run with a snippet's own bash tool (in the directory holding the log). */
const COMMAND = 'cat pytest.log';

// The stand-in provider: `openai(id)` is the installed ai's mock model, scripted
// like an agent: it runs the snippet's bash tool (COMMAND prints LOG), greps the
// spill its next prompt points to (max_matches 2), then answers.
const FAKE_OPENAI_JS = `
import * as mocks from 'ai/test';
const Mock = mocks.MockLanguageModelV4 ?? mocks.MockLanguageModelV3;
/** The models made, for the test to inspect. */
export const models = [];
const usage = { inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 5, text: 5, reasoning: 0 } };
/** The scripted step as a stream (for streamText). */
function streamOf(result) {
  return new ReadableStream({
    start(c) {
      c.enqueue({ type: 'stream-start', warnings: [] });
      for (const part of result.content) {
        if (part.type === 'text') {
          c.enqueue({ type: 'text-start', id: 't' });
          c.enqueue({ type: 'text-delta', id: 't', delta: part.text });
          c.enqueue({ type: 'text-end', id: 't' });
        } else c.enqueue(part);
      }
      c.enqueue({ type: 'finish', finishReason: result.finishReason, usage: result.usage });
      c.close();
    },
  });
}
export function openai(modelId) {
  const model = new Mock({
    modelId,
    doStream: async (options) => ({ stream: streamOf(await model.doGenerate(options)) }),
    doGenerate: async ({ prompt }) => {
      const results = prompt.filter((m) => m.role === 'tool').flatMap((m) => m.content).map((p) => p.toolName);
      if (!results.includes('bash')) {
        const input = JSON.stringify({ command: ${JSON.stringify(COMMAND)} });
        return { content: [{ type: 'tool-call', toolCallId: 'b1', toolName: 'bash', input }], finishReason: { unified: 'tool-calls', raw: 'tool_calls' }, usage, warnings: [] };
      }
      if (results.includes('grep_spill')) return { content: [{ type: 'text', text: 'done' }], finishReason: { unified: 'stop', raw: 'stop' }, usage, warnings: [] };
      // A spill:// pointer, or the path of a FileStore's file (pointer: 'path').
      const pointer = /spill:\\/\\/[A-Za-z0-9._-]+\\/[A-Za-z0-9._-]+|\\/[^\\s"'\\\\]+\\/[A-Za-z0-9._-]+\\.txt/.exec(JSON.stringify(prompt))?.[0];
      if (!pointer) return { content: [{ type: 'text', text: 'no pointer' }], finishReason: { unified: 'stop', raw: 'stop' }, usage, warnings: [] };
      const input = JSON.stringify({ pointer, pattern: 'PASSED', max_matches: 2 });
      return { content: [{ type: 'tool-call', toolCallId: 'g1', toolName: 'grep_spill', input }], finishReason: { unified: 'tool-calls', raw: 'tool_calls' }, usage, warnings: [] };
    },
  });
  models.push(model);
  return model;
}
`;
const FAKE_OPENAI_DTS = `
import type { wrapLanguageModel } from 'ai';
/** The installed ai's mock language model (a stand-in for @ai-sdk/openai). */
export declare function openai(modelId: string): Parameters<typeof wrapLanguageModel>[0]['model'];
export declare const models: unknown[];
`;
// Types the README does not show: the middleware is the installed ai's, the
// tool arguments are the schema's, transformParams is typed by the AI SDK.
const TYPES_TS = `
import { wrapLanguageModel, type LanguageModelMiddleware, type ToolSet } from 'ai';
import { openai } from '@ai-sdk/openai';
import { traceliteMiddleware, spillTools } from 'tracelite/ai-sdk';
const mw = traceliteMiddleware({ budget: 8000, session: (params) => String(params.prompt.length) });
const asAi: LanguageModelMiddleware = mw;
const wrapped = wrapLanguageModel({ model: openai('m'), middleware: [mw, asAi] });
const tools: ToolSet = spillTools(mw.store, { session: 's' });
const found: Promise<string> = spillTools(mw.store).grep_spill.execute({ pointer: 'spill://s/k', pattern: 'x', max_matches: 2, ignore_case: true });
// @ts-expect-error: not an argument of grep_spill
spillTools(mw.store).grep_spill.execute({ pointer: 'spill://s/k', pattern: 'x', max_match: 2 });
type Options = Parameters<typeof mw.transformParams>[0];
declare const options: Options;
const prompt: Options['params']['prompt'] = [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }];
// @ts-expect-error: params is the AI SDK's call options, not any
const notAny: number = options.params;
// @ts-expect-error: the result is the AI SDK's call options, not any
const out: PromiseLike<number> = mw.transformParams(options);
void [wrapped, tools, found, prompt, notAny, out];
`;

// The snippet runs as written (its bash tool runs COMMAND); what the stand-in model saw.
const RUN_MJS = (snippet) => `
await import(${JSON.stringify(`./${snippet}`)});
const { traceliteMiddleware } = await import('tracelite/ai-sdk');
const { models } = await import('@ai-sdk/openai');
const [model] = models;
// generateText steps, or streamText's (each also counted as a generate call by the stand-in).
const calls = model.doStreamCalls.length > 0 ? model.doStreamCalls : model.doGenerateCalls;
const second = JSON.stringify(calls[1]?.prompt);
const tool = calls[2]?.prompt.filter((m) => m.role === 'tool').flatMap((m) => m.content).find((p) => p.toolName === 'grep_spill');
console.log(JSON.stringify({
  node: Number(process.versions.node.split('.')[0]),
  models: models.length,
  spec: model.specificationVersion,
  middlewareSpec: traceliteMiddleware().specificationVersion,
  calls: calls.length,
  secondChars: second.length,
  pointer: /spill:\\/\\/|\\.txt —/.test(second),
  grep: tool?.output,
}));
`;

let work;

before(() => {
  work = mkdtempSync(join(tmpdir(), 'tracelite-types-'));
  for (const [version, ai] of Object.entries(AI)) {
    const dir = join(work, version.replace(' ', ''));
    const modules = join(dir, 'node_modules');
    mkdirSync(join(modules, '@ai-sdk', 'openai'), { recursive: true });
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'app', private: true, type: 'module' }));
    // The package as installed (its own 'ai' import resolves to this project's ai).
    cpSync(pkgDir, join(modules, 'tracelite'), { recursive: true, filter: (src) => !src.includes('node_modules') });
    symlinkSync(ai, join(modules, 'ai'), 'dir');
    symlinkSync(join(root, 'node_modules/zod'), join(modules, 'zod'), 'dir');
    // The type packages an AI SDK project has (ai's types name Node's http and Buffer, and json-schema).
    mkdirSync(join(modules, '@types'));
    for (const t of ['node', 'json-schema']) symlinkSync(join(root, 'node_modules/@types', t), join(modules, '@types', t), 'dir');
    const openai = join(modules, '@ai-sdk', 'openai');
    writeFileSync(join(openai, 'package.json'), JSON.stringify({ name: '@ai-sdk/openai', type: 'module', exports: { '.': { types: './index.d.ts', default: './index.js' } } }));
    writeFileSync(join(openai, 'index.js'), FAKE_OPENAI_JS);
    writeFileSync(join(openai, 'index.d.ts'), FAKE_OPENAI_DTS);
    writeFileSync(join(dir, 'types.ts'), TYPES_TS);
    writeFileSync(join(dir, 'pytest.log'), LOG);
    SNIPPETS.forEach((s, i) => {
      writeFileSync(join(dir, `snippet-${i}.ts`), s.code);
      writeFileSync(join(dir, `run-${i}.mjs`), RUN_MJS(s.lang === 'ts' ? `out/snippet-${i}.js` : `snippet-${i}.mjs`));
      if (s.lang === 'js') writeFileSync(join(dir, `snippet-${i}.mjs`), s.code);
    });
  }
});

after(() => {
  if (work) rmSync(work, { recursive: true, force: true });
});

const TSC_FLAGS = ['--strict', '--target', 'es2022', '--module', 'nodenext', '--moduleResolution', 'nodenext', '--lib', 'es2022,dom,esnext.disposable'];

function tsc(dir, files, emit = false) {
  try {
    execFileSync(process.execPath, [TSC, ...TSC_FLAGS, ...(emit ? ['--outDir', 'out'] : ['--noEmit']), ...files], { cwd: dir, encoding: 'utf8' });
    return '';
  } catch (err) {
    return `${err.stdout}${err.stderr}`;
  }
}

test('the README has AI SDK snippets to test', () => {
  assert.ok(SNIPPETS.length >= 1, 'no README code block imports tracelite/ai-sdk');
  for (const s of SNIPPETS) assert.match(s.code, /from ['"]ai['"]/, `${s.name} does not use the ai package`);
});

for (const version of Object.keys(AI)) {
  test(`${version}: the AI SDK types type-check under tsc --strict (middleware, tools, transformParams)`, () => {
    const dir = join(work, version.replace(' ', ''));
    assert.equal(tsc(dir, ['types.ts']), '');
  });

  for (const [i, s] of SNIPPETS.entries()) {
    test(`${version}: README snippet ${s.name} type-checks under tsc --strict and runs with a mock model`, () => {
      const dir = join(work, version.replace(' ', ''));
      assert.equal(tsc(dir, [`snippet-${i}.ts`]), '', `tsc --strict on ${s.name}`);
      if (s.lang === 'ts') assert.equal(tsc(dir, [`snippet-${i}.ts`], true), '');
      const got = JSON.parse(execFileSync(NODE[version], [`run-${i}.mjs`], { cwd: dir, encoding: 'utf8' }).trim().split('\n').pop());
      assert.equal(got.node, NODE[version] === NODE_22 ? 22 : Number(process.versions.node.split('.')[0]));
      assert.equal(got.models, 1, 'the snippet made one model');
      assert.equal(got.spec, version === 'ai 6' ? 'v3' : 'v4');
      // The middleware's spec is the installed ai's by default, as the types say.
      assert.equal(got.middlewareSpec, got.spec);
      assert.equal(got.calls, 3, 'a bash step, a grep_spill step, then the answer');
      assert.ok(got.pointer, 'the second prompt carries a spill:// or path pointer');
      assert.ok(got.secondChars < LOG.length / 2, `the bash output was compressed (${got.secondChars} chars, log ${LOG.length})`);
      assert.equal(got.grep?.type, 'text', JSON.stringify(got.grep));
      // max_matches: 2 (the schema's name, as the model sends it) is obeyed.
      const matches = got.grep.value.split('\n').filter((l) => /^\d+:/.test(l));
      assert.equal(matches.length, 2, got.grep.value);
      assert.match(got.grep.value, /:tests\/test_mod_0\.py::test_case_0 PASSED/);
    });
  }
}

// Issue 18 item 5: the README snippets that import 'tracelite/langchain' or
// 'tracelite/openai-agents' type-check under tsc --strict against the installed
// `langchain` / `@openai/agents` (with the package's own .d.ts) and run, the
// provider replaced: `@langchain/openai` by a stand-in whose ChatOpenAI is
// LangChain's fakeModel() scripted to call tools, the Agents SDK's default model
// provider by a fake Model. Each snippet runs as written: the model has the
// snippet's bash tool run COMMAND (LOG), greps the spill its next prompt points
// to (max_matches 2), then answers.
const FRAMEWORKS = {
  langchain: {
    spec: 'tracelite/langchain',
    peers: ['langchain', '@langchain/core', 'zod'],
    types: `
import { createAgent, fakeModel, type AgentMiddleware } from 'langchain';
import { spillTools, traceliteMiddleware, type TraceliteLangChainOptions } from 'tracelite/langchain';
const options: TraceliteLangChainOptions = { budget: 8000, session: (request) => String(request.messages.length), onReport: ({ session, report }) => void [session, report.tokensAfter], debug: (text) => void text.length };
const mw = traceliteMiddleware(options);
const asMiddleware: AgentMiddleware = mw;
const [read, grep] = spillTools(mw.store, { session: 's' });
const page: Promise<string> = read.invoke({ pointer: 'spill://s/k', offset: 10 });
const found: Promise<string> = grep.invoke({ pointer: 'spill://s/k', pattern: 'x', max_matches: 2, ignore_case: true });
const agent = createAgent({ model: fakeModel(), tools: [read, grep], middleware: [mw, traceliteMiddleware({ spillTools: false })] });
// @ts-expect-error: budget must be a number
traceliteMiddleware({ budget: 'big' });
void [asMiddleware, page, found, agent];
`,
    standIns: {
      '@langchain/openai': {
        js: `
import { AIMessage, fakeModel } from 'langchain';
const POINTER = /spill:\\/\\/[A-Za-z0-9._-]+\\/[A-Za-z0-9._-]+/;
/** The models made, for the test to inspect. */
export const models = [];
/** LangChain's fake chat model, scripted: bash, then grep_spill on the pointer it was shown, then an answer. */
export class ChatOpenAI {
  constructor() {
    const model = fakeModel()
      .respondWithTools([{ name: 'bash', args: { command: ${JSON.stringify(COMMAND)} }, id: 'call-1' }])
      .respond((messages) => new AIMessage({ content: '', tool_calls: [{ id: 'call-2', name: 'grep_spill', type: 'tool_call',
        args: { pointer: POINTER.exec(JSON.stringify(messages.map((m) => m.content)))?.[0], pattern: 'PASSED', max_matches: 2 } }] }))
      .respond(new AIMessage('done'));
    models.push(model);
    return model;
  }
}
`,
        dts: `
import type { FakeBuiltModel } from '@langchain/core/testing';
/** A stand-in for @langchain/openai's ChatOpenAI: LangChain's fake chat model. */
export declare class ChatOpenAI extends FakeBuiltModel {
  constructor(fields: { model: string });
}
export declare const models: FakeBuiltModel[];
`,
      },
    },
    run: (snippet) => `
import { models } from '@langchain/openai';
await import(${JSON.stringify(`./${snippet}`)});
const [model] = models;
const second = JSON.stringify(model.calls[1].messages.map((m) => m.content));
const reply = model.calls[2].messages.find((m) => m.tool_call_id === 'call-2');
console.log(JSON.stringify({ models: models.length, calls: model.callCount, pointer: /spill:\\/\\//.test(second), secondChars: second.length, grep: reply?.content }));
`,
  },
  'openai-agents': {
    spec: 'tracelite/openai-agents',
    peers: ['@openai/agents', 'zod'],
    types: `
import { Agent, Runner, run, type CallModelInputFilter, type ModelInputData } from '@openai/agents';
import { spillTools, traceliteInputFilter, type TraceliteInputFilterOptions } from 'tracelite/openai-agents';
const options: TraceliteInputFilterOptions = { budget: 8000, session: ({ context }) => String(context), onReport: ({ report }) => void report.tokensAfter, debug: (text) => void text.length };
const filter = traceliteInputFilter(options);
const asFilter: CallModelInputFilter = filter;
const out: Promise<ModelInputData> = filter({ modelData: { input: [], instructions: 'x' }, agent: new Agent({ name: 'a' }), context: undefined });
const agent = new Agent({ name: 'a', tools: spillTools(filter.store, { session: 's' }) });
const runner = new Runner({ callModelInputFilter: filter });
void [asFilter, out, runner, run(agent, 'x', { callModelInputFilter: filter })];
// @ts-expect-error: budget must be a number
traceliteInputFilter({ budget: 'big' });
`,
    standIns: {},
    run: (snippet) => `
import { setDefaultModelProvider, setTracingDisabled, Usage } from '@openai/agents';
setTracingDisabled(true);
const requests = [];
const usage = () => new Usage({ requests: 1, inputTokens: 1, outputTokens: 1, totalTokens: 2 });
const call = (callId, name, args) => ({ type: 'function_call', callId, name, arguments: JSON.stringify(args), status: 'completed' });
// A fake Model behind the default provider ('gpt-4.1' resolves to it): bash, grep_spill, an answer.
setDefaultModelProvider({ getModel: () => ({
  async getResponse(request) {
    requests.push(request);
    const pointer = /spill:\\/\\/[A-Za-z0-9._-]+\\/[A-Za-z0-9._-]+/.exec(JSON.stringify(request.input))?.[0];
    const output = [
      () => [call('call-1', 'bash', { command: ${JSON.stringify(COMMAND)} })],
      () => [call('call-2', 'grep_spill', { pointer, pattern: 'PASSED', max_matches: 2 })],
      () => [{ type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'done' }] }],
    ][requests.length - 1]();
    return { usage: usage(), output };
  },
  async *getStreamedResponse() { throw new Error('not used'); },
}) });
await import(${JSON.stringify(`./${snippet}`)});
const second = JSON.stringify(requests[1].input);
const reply = requests[2].input.find((i) => i.type === 'function_call_result' && i.callId === 'call-2');
console.log(JSON.stringify({ models: 1, calls: requests.length, pointer: /spill:\\/\\//.test(second), secondChars: second.length, grep: reply?.output?.text }));
`,
  },
};

/** README code blocks (```js / ```ts) of a framework (its suite is its name). */
const frameworkSnippets = (spec) => suiteSnippets(spec.replace('tracelite/', ''));

let frameworkWork;
const frameworkTsc = new Map();

before(() => {
  frameworkWork = mkdtempSync(join(tmpdir(), 'tracelite-frameworks-'));
  for (const [name, fw] of Object.entries(FRAMEWORKS)) {
    const dir = join(frameworkWork, name);
    const modules = join(dir, 'node_modules');
    mkdirSync(join(modules, '@types'), { recursive: true });
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'app', private: true, type: 'module' }));
    cpSync(pkgDir, join(modules, 'tracelite'), { recursive: true, filter: (src) => !src.includes('node_modules') });
    for (const peer of [...fw.peers, '@types/node']) {
      mkdirSync(dirname(join(modules, peer)), { recursive: true });
      symlinkSync(join(root, 'node_modules', peer), join(modules, peer), 'dir');
    }
    for (const [pkg, { js, dts }] of Object.entries(fw.standIns)) {
      const at = join(modules, pkg);
      mkdirSync(at, { recursive: true });
      writeFileSync(join(at, 'package.json'), JSON.stringify({ name: pkg, type: 'module', exports: { '.': { types: './index.d.ts', default: './index.js' } } }));
      writeFileSync(join(at, 'index.js'), js);
      writeFileSync(join(at, 'index.d.ts'), dts);
    }
    writeFileSync(join(dir, 'types.ts'), fw.types);
    writeFileSync(join(dir, 'pytest.log'), LOG);
    frameworkSnippets(fw.spec).forEach((s, i) => {
      writeFileSync(join(dir, `snippet-${i}.ts`), s.code);
      writeFileSync(join(dir, `snippet-${i}.mjs`), s.code);
      writeFileSync(join(dir, `run-${i}.mjs`), fw.run(`snippet-${i}.mjs`));
    });
  }
});

after(() => {
  if (frameworkWork) rmSync(frameworkWork, { recursive: true, force: true });
});

/** tsc --strict over a framework's types and snippets, once (the framework types are slow to load); its output. */
function frameworkTypeErrors(name) {
  if (!frameworkTsc.has(name)) {
    const dir = join(frameworkWork, name);
    const files = ['types.ts', ...frameworkSnippets(FRAMEWORKS[name].spec).map((_, i) => `snippet-${i}.ts`)];
    frameworkTsc.set(name, tsc(dir, files));
  }
  return frameworkTsc.get(name);
}

for (const [name, fw] of Object.entries(FRAMEWORKS)) {
  const snippets = frameworkSnippets(fw.spec);

  test(`${fw.spec}: the READMEs have snippets, and the types (middleware / filter, tools, options) type-check under tsc --strict`, () => {
    assert.ok(snippets.length >= 1, `no README code block imports ${fw.spec}`);
    const errors = frameworkTypeErrors(name);
    assert.equal(errors.split('\n').filter((l) => l.startsWith('types.ts')).join('\n'), '');
  });

  for (const [i, s] of snippets.entries()) {
    test(`${fw.spec}: README snippet ${s.name} type-checks under tsc --strict and runs with a fake model`, () => {
      const errors = frameworkTypeErrors(name).split('\n').filter((l) => l.startsWith(`snippet-${i}.ts`));
      assert.deepEqual(errors, [], `tsc --strict on ${s.name}`);
      const dir = join(frameworkWork, name);
      const got = JSON.parse(execFileSync(process.execPath, [`run-${i}.mjs`], { cwd: dir, encoding: 'utf8' }).trim().split('\n').pop());
      assert.equal(got.models, 1, 'the snippet made one model');
      assert.equal(got.calls, 3, 'bash, grep_spill, then the answer');
      assert.ok(got.pointer, 'the second call carries a spill:// pointer');
      assert.ok(got.secondChars < LOG.length / 2, `the tool output was compressed (${got.secondChars} chars, log ${LOG.length})`);
      const matches = (got.grep ?? '').split('\n').filter((l) => /^\d+:/.test(l));
      assert.equal(matches.length, 2, got.grep);
      assert.match(got.grep, /:tests\/test_mod_0\.py::test_case_0 PASSED/);
    });
  }
}

test('ai 7 on Node 22: the Node binary satisfies ai 7\'s engines, and the AI SDK adapter\'s suite passes on it', () => {
  const engines = JSON.parse(readFileSync(join(AI['ai 7'], 'package.json'), 'utf8')).engines.node;
  const major = Number(execFileSync(NODE_22, ['-p', 'process.versions.node'], { encoding: 'utf8' }).split('.')[0]);
  assert.equal(major, 22);
  assert.ok(major >= Number(/^>=\s*(\d+)/.exec(engines)?.[1]), `ai 7 wants node ${engines}`);
  // The adapter's tests (ai 7 in process, ai 6 in a child of the same binary).
  // Without NODE_TEST_CONTEXT, which would make the child report to this runner instead of stdout.
  const { NODE_TEST_CONTEXT: _, ...env } = process.env;
  const out = execFileSync(NODE_22, ['--test', '--test-reporter=tap', join(root, 'pkg-config/adapters/ai-sdk/ai-sdk.test.mjs')], { cwd: root, env, encoding: 'utf8' });
  const count = (what) => Number(new RegExp(`^# ${what} (\\d+)$`, 'm').exec(out)?.[1]);
  assert.ok(count('pass') >= 5, out.slice(-2000));
  assert.equal(count('fail'), 0, out.slice(-4000));
});
